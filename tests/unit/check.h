/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checks of the unit tests: each test is a program that runs its checks,
 * prints the failed ones, and exits non-zero if any failed (test_done()).
 */
#ifndef MEMTRACK_UNIT_CHECK_H
#define MEMTRACK_UNIT_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int test_failures, test_count;

/* CHECK(cond) or CHECK(cond, "format", ...): what to say when it fails */
#define CHECK(cond, ...) do {						\
	test_count++;							\
	if (!(cond)) {							\
		test_failures++;					\
		printf("not ok %d - %s:%d: %s: %s", test_count,	\
		       __FILE__, __LINE__, __func__, #cond);		\
		printf(" " __VA_ARGS__);					\
		putchar('\n');						\
	}								\
} while (0)

#define CHECK_U64(a, b, what) do {					\
	uint64_t __a = (a), __b = (b);					\
	CHECK(__a == __b, "%s: %" PRIu64 " (%#" PRIx64 ") != %" PRIu64,	\
	      what, __a, __a, __b);					\
} while (0)

#define CHECK_STR(a, b, what) do {					\
	const char *__a = (a), *__b = (b);				\
	CHECK(__a && __b && !strcmp(__a, __b), "%s: '%s' != '%s'",	\
	      what, __a ? __a : "(null)", __b ? __b : "(null)");	\
} while (0)

/* equal to 1e-9 relative; NaN equals NaN */
#define CHECK_NUM(got, want) do {					\
	double __g = (got), __w = (want);				\
	CHECK((isnan(__g) && isnan(__w)) ||				\
	      fabs(__g - __w) <= 1e-9 * fmax(1.0, fabs(__w)),		\
	      "%s is %.12g, expected %.12g", #got, __g, __w);		\
} while (0)

/*
 * `<test> --write <dir>`: writes the test's sample artifacts (for the shell
 * tests) instead of testing.  Returns the exit status, or -1 when not asked.
 */
static inline int test_write_mode(int argc, char **argv, int (*write)(const char *dir))
{
	int err;

	if (argc != 3 || strcmp(argv[1], "--write"))
		return -1;
	err = write(argv[2]);
	if (err)
		fprintf(stderr, "cannot write the samples: %s\n", strerror(-err));
	return !!err;
}

static inline int test_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, test_count, test_failures);
	return test_failures ? 1 : 0;
}

#endif
