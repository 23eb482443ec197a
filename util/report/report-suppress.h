/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_SUPPRESS_H
#define MEMTRACK_REPORT_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/report/report-sites.h"

/*
 * Leak suppressions: blocks live at exit that are not leaks worth a look,
 * told by the call stack that allocated them.
 *
 * Files in LeakSanitizer's syntax: one `leak:<pattern>` a line, `#`
 * comments and blank lines ignored.  A pattern matches a stack when it
 * matches the symbol, the module (the path as recorded) or the source file
 * of any of its frames: a substring, `*` for any characters, `^` at the
 * start and `$` at the end to anchor it.
 *
 * And a few rules built in, for well-known allocations made once and kept
 * for the whole run, on unless asked otherwise (see defaults[] in
 * report-suppress.c).
 *
 * Pure logic but for report_suppressions__read() (a file) and
 * report_suppressions__print() (a table).
 */

struct report_suppressions;

struct report_suppression_rule {
	const char *text;		/* the pattern, or the built-in rule's name */
	const char *source;		/* "built in", or the file */
	unsigned int line;		/* in the file */
	uint64_t count, bytes;		/* what it suppressed in the last summary */
};

/* the built-in rules, or none; NULL when out of memory */
struct report_suppressions *report_suppressions__new(bool defaults);
void report_suppressions__delete(struct report_suppressions *sup);

/*
 * Adds the rules of text, read from source (a file name for messages): 0,
 * or -EINVAL with the line that is wrong and why in err, or -ENOMEM.
 */
int report_suppressions__parse(struct report_suppressions *sup, const char *text,
			       const char *source, char *err, size_t errlen);
/* the same from a file; -errno when it cannot be read (err says why) */
int report_suppressions__read(struct report_suppressions *sup, const char *path,
			      char *err, size_t errlen);

/* a pattern against a string as LeakSanitizer matches them (NULL, "": false) */
bool suppression_pattern__match(const char *pattern, const char *s);

/* the rule that suppresses a stack (frames innermost first), or -1 */
int report_suppressions__match(const struct report_suppressions *sup,
			       const struct report_frame *const *frames, uint32_t nr);

/*
 * Before report_summary__finish(): decides which call sites of ss are
 * suppressed and sets the counts of every rule to 0.  0 or -ENOMEM.
 */
int report_suppressions__prepare(struct report_suppressions *sup, struct report_sites *ss);
/* report_summary's suppressed(): true for a block of a suppressed site, counted */
bool report_suppressions__take(void *sup, uint32_t site, uint64_t size);

size_t report_suppressions__nr_rules(const struct report_suppressions *sup);
const struct report_suppression_rule *
report_suppressions__rule(const struct report_suppressions *sup, size_t i);

/* the rules that suppressed something, a row each: blocks, bytes, rule */
void report_suppressions__print(const struct report_suppressions *sup, FILE *out);

#endif
