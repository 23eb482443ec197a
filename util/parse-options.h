/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_PARSE_OPTIONS_H
#define MEMTRACK_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum parse_opt_type {
	OPTION_END,
	OPTION_GROUP,
	OPTION_BOOLEAN,
	OPTION_INCR,
	OPTION_STRING,
	OPTION_INTEGER,
	OPTION_UINTEGER,
	OPTION_CALLBACK,
};

enum parse_opt_flags {
	PARSE_OPT_KEEP_DASHDASH = 1 << 0,
	PARSE_OPT_STOP_AT_NON_OPTION = 1 << 1,
};

struct option;
/* returns 0 on success, -1 after printing an error (a usage error) */
typedef int parse_opt_cb(const struct option *opt, const char *arg);

struct option {
	enum parse_opt_type type;
	int short_name;
	const char *long_name;
	void *value;
	const char *argh;
	const char *help;
	parse_opt_cb *callback;
	const char *values;	/* the values it takes, space-separated, for completion */
};

#define check_vtype(v, type) \
	(__builtin_choose_expr(__builtin_types_compatible_p(typeof(v), type), v, (void)0))

#define OPT_END()	{ .type = OPTION_END }
#define OPT_GROUP(h)	{ .type = OPTION_GROUP, .help = (h) }
#define OPT_BOOLEAN(s, l, v, h) \
	{ .type = OPTION_BOOLEAN, .short_name = (s), .long_name = (l), \
	  .value = check_vtype(v, bool *), .help = (h) }
#define OPT_INCR(s, l, v, h) \
	{ .type = OPTION_INCR, .short_name = (s), .long_name = (l), \
	  .value = check_vtype(v, int *), .help = (h) }
#define OPT_STRING(s, l, v, a, h) \
	{ .type = OPTION_STRING, .short_name = (s), .long_name = (l), \
	  .value = check_vtype(v, const char **), .argh = (a), .help = (h) }
/* a string among values ("auto preload bpf"): --list-values gives them to completion */
#define OPT_STRING_OF(s, l, v, a, h, vals) \
	{ .type = OPTION_STRING, .short_name = (s), .long_name = (l), \
	  .value = check_vtype(v, const char **), .argh = (a), .help = (h), .values = (vals) }
#define OPT_INTEGER(s, l, v, a, h) \
	{ .type = OPTION_INTEGER, .short_name = (s), .long_name = (l), \
	  .value = check_vtype(v, int *), .argh = (a), .help = (h) }
#define OPT_UINTEGER(s, l, v, a, h) \
	{ .type = OPTION_UINTEGER, .short_name = (s), .long_name = (l), \
	  .value = check_vtype(v, unsigned int *), .argh = (a), .help = (h) }
#define OPT_CALLBACK(s, l, v, a, h, f) \
	{ .type = OPTION_CALLBACK, .short_name = (s), .long_name = (l), \
	  .value = (v), .argh = (a), .help = (h), .callback = (f) }

/*
 * Parses argv[1..] (argv[0] is the command name) and returns the number of
 * arguments left in argv, the non-options.  -h/--help prints the usage and
 * exits 129; so does an unknown option or a bad value.
 */
int parse_options(int argc, const char **argv, const struct option *options,
		  const char *const usagestr[], int flags);

/* the whole help, on stdout; exits 129 (-h, as git does) */
void help_with_options(const char *const usagestr[],
		       const struct option *options) __attribute__((noreturn));
/* after a usage error: the synopsis and a pointer to -h on stderr; exits 129 */
void usage_with_options(const char *const usagestr[],
			const struct option *options) __attribute__((noreturn));

/* "1K", "64M", "2G" -> bytes; returns -1 on malformed input */
int parse_size(const char *arg, uint64_t *bytes);

/* "1,2,3" -> *pids (malloc'ed); returns the count, or -1 on malformed input */
int parse_pid_list(const char *arg, pid_t **pids);

#endif
