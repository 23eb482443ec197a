/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STRTAB_H
#define MEMTRACK_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "util/u64-map.h"

/*
 * A table of distinct strings, each with its index in the order added: the
 * string table of a pprof profile, the names of report --html.  Strings are
 * not copied: each must outlive the table.  Zero-filled is an empty table.
 */
struct strtab {
	const char **v;
	size_t nr, cap;
	struct u64_map index;		/* a hash of the string -> its index + 1 */
};

/* the index of s, added when new; -ENOMEM */
int64_t strtab__intern(struct strtab *t, const char *s);
void strtab__exit(struct strtab *t);

#endif
