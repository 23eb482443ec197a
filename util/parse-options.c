// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse-options.h"
#include "util/usage.h"
#include "util/util.h"

#define USAGE_OPTS_WIDTH 24
#define USAGE_GAP 2

static bool option_takes_arg(const struct option *opt)
{
	return opt->type == OPTION_STRING || opt->type == OPTION_INTEGER ||
	       opt->type == OPTION_UINTEGER ||
	       (opt->type == OPTION_CALLBACK && opt->argh);
}

static int print_option_names(FILE *out, const struct option *opt)
{
	int pos = fprintf(out, "    ");

	if (opt->short_name)
		pos += fprintf(out, "-%c", opt->short_name);
	if (opt->short_name && opt->long_name)
		pos += fprintf(out, ", ");
	if (opt->long_name)
		pos += fprintf(out, "--%s", opt->long_name);
	if (option_takes_arg(opt))
		pos += fprintf(out, " <%s>", opt->argh ? opt->argh : "n");
	return pos;
}

/* "usage: ..." and "   or: ..." lines; returns what follows them */
static const char *const *print_synopsis(FILE *out, const char *const *usagestr)
{
	fprintf(out, "usage: %s\n", *usagestr++);
	while (*usagestr && **usagestr)
		fprintf(out, "   or: %s\n", *usagestr++);
	return usagestr;
}

/* -h: the synopsis, the text under it and every option, on stdout (git's way) */
void help_with_options(const char *const usagestr[], const struct option *options)
{
	const struct option *opt;

	usagestr = print_synopsis(stdout, usagestr);
	while (*usagestr) {
		printf("%s%s\n", **usagestr ? "    " : "", *usagestr);
		usagestr++;
	}
	putchar('\n');

	for (opt = options; opt->type != OPTION_END; opt++) {
		int pos;

		if (opt->type == OPTION_GROUP) {
			printf("\n%s\n", opt->help);
			continue;
		}
		pos = print_option_names(stdout, opt);
		if (pos <= USAGE_OPTS_WIDTH)
			printf("%*s", USAGE_OPTS_WIDTH + USAGE_GAP - pos, "");
		else
			printf("\n%*s", USAGE_OPTS_WIDTH + USAGE_GAP, "");
		printf("%s\n", opt->help);
	}
	putchar('\n');
	fflush(stdout);
	exit(MEMTRACK_EXIT_USAGE);
}

/*
 * After a usage error (its line said already): the synopsis and where the
 * options are, on stderr, not every option again.
 */
void usage_with_options(const char *const usagestr[],
			const struct option *options __maybe_unused)
{
	const char *cmd = usagestr[0];
	size_t len = strcspn(cmd, " ");

	/* "memtrack track [<options>]...": the command is the first two words */
	if (cmd[len])
		len += 1 + strcspn(cmd + len + 1, " ");
	print_synopsis(stderr, usagestr);
	fprintf(stderr, "Run '%.*s -h' for the options.\n", (int)len, cmd);
	exit(MEMTRACK_EXIT_USAGE);
}

static void list_long_options(const struct option *options)
{
	for (; options->type != OPTION_END; options++)
		if (options->long_name)
			printf("--%s ", options->long_name);
	putchar('\n');
	exit(0);
}

/* a line per option that takes one of a few values: "--backend auto preload bpf" */
static void list_option_values(const struct option *options)
{
	for (; options->type != OPTION_END; options++)
		if (options->long_name && options->values)
			printf("--%s %s\n", options->long_name, options->values);
	exit(0);
}

static int parse_long_long(const char *arg, long long min, long long max,
			   long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(arg, &end, 0);
	if (errno || end == arg || *end || *out < min || *out > max)
		return -1;
	return 0;
}

static int get_value(const struct option *opt, const char *arg,
		     const char *name)
{
	long long v;

	switch (opt->type) {
	case OPTION_BOOLEAN:
		*(bool *)opt->value = true;
		return 0;
	case OPTION_INCR:
		(*(int *)opt->value)++;
		return 0;
	case OPTION_STRING:
		*(const char **)opt->value = arg;
		return 0;
	case OPTION_INTEGER:
		if (parse_long_long(arg, INT_MIN, INT_MAX, &v))
			return error("option `%s' expects a number, not '%s'", name, arg);
		*(int *)opt->value = v;
		return 0;
	case OPTION_UINTEGER:
		if (parse_long_long(arg, 0, UINT_MAX, &v))
			return error("option `%s' expects a non-negative number, not '%s'",
				     name, arg);
		*(unsigned int *)opt->value = v;
		return 0;
	case OPTION_CALLBACK:
		return opt->callback(opt, arg);
	default:
		return error("BUG: option `%s' has no type", name);
	}
}

/* returns how many argv entries were used, or -1 */
static int parse_long_opt(const char **argv, int left,
			  const struct option *options)
{
	const char *name = argv[0] + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct option *opt;

	for (opt = options; opt->type != OPTION_END; opt++) {
		if (!opt->long_name || strlen(opt->long_name) != len ||
		    strncmp(opt->long_name, name, len))
			continue;
		if (!option_takes_arg(opt)) {
			if (eq)
				return error("option `%s' takes no value", opt->long_name);
			return get_value(opt, NULL, opt->long_name) ? -1 : 1;
		}
		if (eq)
			return get_value(opt, eq + 1, opt->long_name) ? -1 : 1;
		if (left < 2)
			return error("option `%s' requires a value", opt->long_name);
		return get_value(opt, argv[1], opt->long_name) ? -1 : 2;
	}
	return error("unknown option `%.*s'", (int)len, name);
}

static const struct option *find_short(const struct option *options, char c)
{
	for (; options->type != OPTION_END; options++)
		if (options->short_name == c)
			return options;
	return NULL;
}

/* -abc: switches without a value may be bundled; one taking a value ends it */
static int parse_short_opt(const char **argv, int left,
			   const struct option *options)
{
	const char *p = argv[0] + 1;

	for (; *p; p++) {
		const struct option *opt = find_short(options, *p);
		char name[2] = { *p, 0 };

		if (!opt)
			return error("unknown switch `%c'", *p);
		if (!option_takes_arg(opt)) {
			if (get_value(opt, NULL, name))
				return -1;
			continue;
		}
		if (p[1])
			return get_value(opt, p + 1, name) ? -1 : 1;
		if (left < 2)
			return error("switch `%c' requires a value", *p);
		return get_value(opt, argv[1], name) ? -1 : 2;
	}
	return 1;
}

int parse_options(int argc, const char **argv, const struct option *options,
		  const char *const usagestr[], int flags)
{
	int i = 1, kept = 0;

	while (i < argc) {
		const char *arg = argv[i];
		int used;

		if (arg[0] != '-' || !arg[1]) {
			if (flags & PARSE_OPT_STOP_AT_NON_OPTION)
				break;
			argv[kept++] = arg;
			i++;
			continue;
		}
		if (!strcmp(arg, "--")) {
			if (!(flags & PARSE_OPT_KEEP_DASHDASH))
				i++;
			break;
		}
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
			help_with_options(usagestr, options);
		if (!strcmp(arg, "--list-opts"))
			list_long_options(options);
		if (!strcmp(arg, "--list-values"))
			list_option_values(options);

		if (arg[1] == '-')
			used = parse_long_opt(argv + i, argc - i, options);
		else
			used = parse_short_opt(argv + i, argc - i, options);
		if (used < 0)
			usage_with_options(usagestr, options);
		i += used;
	}
	while (i < argc)
		argv[kept++] = argv[i++];
	argv[kept] = NULL;
	return kept;
}

int parse_size(const char *arg, uint64_t *bytes)
{
	unsigned long long v;
	char *end;

	if (!arg || !*arg || *arg == '-')
		return -1;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg)
		return -1;
	switch (*end) {
	case 'G': case 'g':
		v <<= 10;
		/* fallthrough */
	case 'M': case 'm':
		v <<= 10;
		/* fallthrough */
	case 'K': case 'k':
		v <<= 10;
		end++;
		break;
	}
	if (*end)
		return -1;
	*bytes = v;
	return 0;
}

int parse_pid_list(const char *arg, pid_t **pids)
{
	const char *s = arg;
	pid_t *v = NULL;
	size_t n = 0, cap = 0;

	while (*s) {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(s, &end, 10);
		if (errno || end == s || pid <= 0 || pid > INT_MAX || (*end && *end != ','))
			goto bad;
		if (grow_array((void **)&v, &cap, n + 1, sizeof(*v)))
			goto bad;
		v[n++] = pid;
		s = *end ? end + 1 : end;
	}
	if (!n || n > INT_MAX)
		goto bad;
	*pids = v;
	return n;
bad:
	free(v);
	return -1;
}
