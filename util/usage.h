/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_USAGE_H
#define MEMTRACK_USAGE_H

#include <stdarg.h>
#include <stdbool.h>

#define MEMTRACK_EXIT_FATAL	128
#define MEMTRACK_EXIT_USAGE	129
#define MEMTRACK_EXIT_DETACHED	130	/* track stopped tracking when asked twice */

extern int verbose;

#define __noreturn	__attribute__((noreturn))
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __maybe_unused	__attribute__((unused))

/* git style: die() prints "fatal: ..." and exits 128; error() returns -1 */
void die(const char *fmt, ...) __noreturn __printf(1, 2);
void die_errno(const char *fmt, ...) __noreturn __printf(1, 2);
/*
 * fatal(): the message of die() for code outside the builtins, which
 * returns -1 and leaves the exit (128) to its caller
 */
int fatal(const char *fmt, ...) __printf(1, 2);
int fatal_errno(const char *fmt, ...) __printf(1, 2);
int error(const char *fmt, ...) __printf(1, 2);
int error_errno(const char *fmt, ...) __printf(1, 2);
void warning(const char *fmt, ...) __printf(1, 2);
int eprintf(int level, const char *fmt, ...) __printf(2, 3);

#define pr_debug(fmt, ...)	eprintf(1, fmt, ##__VA_ARGS__)
#define pr_debug2(fmt, ...)	eprintf(2, fmt, ##__VA_ARGS__)

#endif
