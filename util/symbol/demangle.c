// SPDX-License-Identifier: GPL-2.0
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "util/symbol/demangle.h"
#include "util/symbol/elf-syms.h"

#define DEMANGLE_OPTS	(DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO)

static bool is_mangled(const char *name)
{
	/* C++ (_Z, and __Z on some targets), Rust v0 (_R), D (_D) */
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R' || name[1] == 'D' ||
				  (name[1] == '_' && name[2] == 'Z'));
}

char *symbol_name__display(const char *name, bool demangle)
{
	size_t len = elf_symbol__name_len(name);
	char *bare = strndup(name, len), *pretty;

	if (!bare || !demangle || !is_mangled(bare))
		return bare;
	pretty = cplus_demangle(bare, DEMANGLE_OPTS);
	if (!pretty)
		return bare;
	free(bare);
	return pretty;
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* at "operator" followed by an operator made of < and > (or ->): its length */
static size_t angle_operator(const char *name, const char *p)
{
	static const char *const ops[] = { "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=",
					   ">=", "->", "<", ">" };
	const char *q = p + strlen("operator");
	size_t i;

	if (strncmp(p, "operator", strlen("operator")) || (p > name && is_ident(p[-1])))
		return 0;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(q, ops[i], strlen(ops[i])))
			return q - p + strlen(ops[i]);
	return 0;
}

char *symbol_name__shorten(const char *name, char *buf, size_t size)
{
	size_t n = 0, op;
	const char *p;
	int depth = 0;

	for (p = name; *p && n + 1 < size; p++) {
		if (!depth && (op = angle_operator(name, p))) {
			if (n + op >= size)
				break;
			memcpy(buf + n, p, op);
			n += op;
			p += op - 1;
		} else if (*p == '<') {
			if (!depth++)
				buf[n++] = '<';
		} else if (*p == '>') {
			if (--depth < 0)
				goto unpaired;
			if (!depth)
				buf[n++] = '>';
		} else if (!depth) {
			buf[n++] = *p;
		}
	}
	if (depth && !*p)
		goto unpaired;
	buf[n] = '\0';		/* cut when longer than buf */
	return buf;
unpaired:
	strncpy(buf, name, size - 1);
	buf[size - 1] = '\0';
	return buf;
}
