// SPDX-License-Identifier: GPL-2.0
/*
 * The string table: each distinct string once, by its index in the order
 * added, whatever the number of strings (the map grows under it), and the
 * strings are the caller's.
 */
#include <stdlib.h>

#include "util/report/strtab.h"
#include "check.h"

#define NR	20000

int main(void)
{
	static char names[NR][16];
	struct strtab t = { 0 };
	char again[16];
	int i, wrong = 0;

	CHECK(strtab__intern(&t, "") == 0, "the first string is 0");
	for (i = 0; i < NR; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		wrong += strtab__intern(&t, names[i]) != i + 1;
	}
	CHECK(wrong == 0, "%d new strings out of order", wrong);
	CHECK_U64(t.nr, NR + 1, "distinct strings");
	for (i = NR - 1, wrong = 0; i >= 0; i--) {
		/* an equal string at another address is the same string */
		snprintf(again, sizeof(again), "f%d", i);
		wrong += strtab__intern(&t, again) != i + 1;
	}
	CHECK(wrong == 0, "%d strings found again at the wrong index", wrong);
	CHECK_U64(t.nr, NR + 1, "nothing added by the second pass");
	CHECK(t.v[7] == names[6], "strings are not copied");
	CHECK(strtab__intern(&t, "") == 0, "and the empty one");
	strtab__exit(&t);
	CHECK(t.nr == 0 && !t.v, "exit empties");
	return test_done("test-strtab");
}
