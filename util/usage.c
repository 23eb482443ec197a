// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/quote.h"
#include "util/usage.h"

int verbose;

/* one write per message: a status line drawn meanwhile cannot cut it */
static void put_message(const char *prefix, const char *msg, const char *suffix,
			const char *end)
{
	char line[8192];

	snprintf(line, sizeof(line), "%s%s%s%s%s", prefix, msg,
		 suffix ? ": " : "", suffix ? suffix : "", end);
	fputs(line, stderr);
}

static void vreport(const char *prefix, const char *fmt, va_list ap,
		    const char *suffix)
{
	char raw[4096], msg[4096];

	/* names from files go into messages: nothing reaches the terminal raw */
	vsnprintf(raw, sizeof(raw), fmt, ap);
	quote_term_escape(msg, sizeof(msg), raw);
	put_message(prefix, msg, suffix, "\n");
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap, NULL);
	va_end(ap);
	exit(MEMTRACK_EXIT_FATAL);
}

void die_errno(const char *fmt, ...)
{
	const char *reason = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap, reason);
	va_end(ap);
	exit(MEMTRACK_EXIT_FATAL);
}

int fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap, NULL);
	va_end(ap);
	return -1;
}

int fatal_errno(const char *fmt, ...)
{
	const char *reason = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap, reason);
	va_end(ap);
	return -1;
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap, NULL);
	va_end(ap);
	return -1;
}

int error_errno(const char *fmt, ...)
{
	const char *reason = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap, reason);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap, NULL);
	va_end(ap);
}

int eprintf(int level, const char *fmt, ...)
{
	char raw[4096], msg[4096];
	bool newline;
	va_list ap;
	size_t len;

	if (verbose < level)
		return 0;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* one line each: only the final newline is ours */
	len = strlen(raw);
	newline = len && raw[len - 1] == '\n';
	if (newline)
		raw[len - 1] = '\0';
	quote_term_escape(msg, sizeof(msg), raw);
	put_message("", msg, NULL, newline ? "\n" : "");
	return 0;
}
