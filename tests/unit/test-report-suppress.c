// SPDX-License-Identifier: GPL-2.0
/*
 * Leak suppressions: LeakSanitizer's patterns (substring, '*', '^', '$'),
 * its file syntax and the messages of a bad line, which stacks a rule
 * matches (symbol, module or file of any frame), and the built-in rule of
 * libstdc++'s emergency pool on the stacks each unwinder gives it, and not
 * on other allocations of libstdc++.
 */
#include <errno.h>
#include <stdlib.h>

#include "util/report/report-suppress.h"
#include "check.h"

#define LIBSTDCXX	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30"
#define LDSO		"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
#define APP		"/usr/bin/app"

static void test_patterns(void)
{
	CHECK(suppression_pattern__match("foo", "xfoox"), "a substring");
	CHECK(!suppression_pattern__match("foo", "fo"));
	CHECK(suppression_pattern__match("^foo", "foobar"));
	CHECK(!suppression_pattern__match("^foo", "xfoo"), "^ anchors the start");
	CHECK(suppression_pattern__match("bar$", "foobar"));
	CHECK(!suppression_pattern__match("bar$", "barx"), "$ anchors the end");
	CHECK(suppression_pattern__match("^main$", "main"));
	CHECK(!suppression_pattern__match("^main$", "domain"));
	CHECK(suppression_pattern__match("a*b$", "abxb"), "'*' takes what it must");
	CHECK(suppression_pattern__match("std::*::push_back",
					 "std::vector<int>::push_back(int const&)"));
	CHECK(suppression_pattern__match("*", "x"));
	CHECK(suppression_pattern__match("^*$", "anything"));
	CHECK(!suppression_pattern__match("x", ""), "an empty string matches nothing");
	CHECK(!suppression_pattern__match("x", NULL));
	CHECK(suppression_pattern__match("libstdc++", LIBSTDCXX), "'+' is no operator");
}

static void test_parse(void)
{
	struct report_suppressions *sup = report_suppressions__new(false);
	char err[256];

	CHECK(!report_suppressions__parse(sup, "# comment\n\n  leak:foo  \nleak: ^bar$\n",
					  "a.supp", err, sizeof(err)), "%s", err);
	CHECK_U64(report_suppressions__nr_rules(sup), 2, "two rules");
	CHECK_STR(report_suppressions__rule(sup, 0)->text, "foo", "trimmed");
	CHECK_U64(report_suppressions__rule(sup, 0)->line, 3, "its line");
	CHECK_STR(report_suppressions__rule(sup, 1)->text, "^bar$", "anchors kept");
	CHECK_STR(report_suppressions__rule(sup, 1)->source, "a.supp", "its file");

	CHECK(report_suppressions__parse(sup, "leak:x\nrace:foo\n", "b.supp", err,
					 sizeof(err)) == -EINVAL);
	CHECK_STR(err, "b.supp:2: unknown suppression type 'race' (only leak: suppressions "
		  "apply to memtrack)", "another sanitizer's type");
	CHECK(report_suppressions__parse(sup, "foo\n", "c.supp", err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "c.supp:1: expected leak:<pattern>, not 'foo'", "no type");
	CHECK(report_suppressions__parse(sup, "leak:  \n", "d.supp", err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "d.supp:1: leak: without a pattern", "an empty pattern");
	report_suppressions__delete(sup);
}

static struct report_frame frame(const char *symbol, const char *module, const char *file)
{
	struct report_frame f = { .known = true };

	f.symbol = (char *)symbol;
	f.module = (char *)module;
	f.file = (char *)file;
	return f;
}

/* the rule that matches a stack of n frames, -1 for none */
static int match(const struct report_suppressions *sup, const struct report_frame *v,
		 uint32_t n)
{
	const struct report_frame *p[8];
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = &v[i];
	return report_suppressions__match(sup, p, n);
}

static void test_match_patterns(void)
{
	struct report_suppressions *sup = report_suppressions__new(false);
	const struct report_frame app[] = {
		frame("parse_config", APP, "src/config.c"),
		frame("main", APP, "src/main.c"),
	};
	const struct report_frame unknown[] = { frame("[unknown]", NULL, NULL) };
	char err[256];

	CHECK(!report_suppressions__parse(sup, "leak:^main$\nleak:/usr/bin/\nleak:config.c\n"
					  "leak:unknown\n", "t", err, sizeof(err)), "%s", err);
	CHECK(match(sup, app, 2) == 0, "a symbol of a frame further out");
	CHECK(match(sup, app, 1) == 1, "a module");
	report_suppressions__delete(sup);

	sup = report_suppressions__new(false);
	CHECK(!report_suppressions__parse(sup, "leak:config.c\nleak:unknown\n", "t", err,
					  sizeof(err)), "%s", err);
	CHECK(match(sup, app, 2) == 0, "a source file");
	CHECK(match(sup, unknown, 1) == -1, "an unknown symbol is no name");
	report_suppressions__delete(sup);
}

static void test_builtin(void)
{
	struct report_suppressions *sup = report_suppressions__new(true);
	struct report_suppressions *none = report_suppressions__new(false);
	const struct report_frame dwarf[] = {
		frame("[unknown]", LIBSTDCXX, NULL),
		frame("call_init", LDSO, "./elf/dl-init.c"),
		frame("_dl_init", LDSO, "./elf/dl-init.c"),
	};
	const struct report_frame fp[] = { frame(NULL, LIBSTDCXX, NULL) };
	const struct report_frame debug[] = {
		frame("(anonymous namespace)::pool::pool()", LIBSTDCXX,
		      "../../../../src/libstdc++-v3/libsupc++/eh_alloc.cc"),
		frame("__static_initialization_and_destruction_0", LIBSTDCXX, NULL),
	};
	const struct report_frame string[] = {
		frame("std::__cxx11::basic_string<char>::_M_create(unsigned long&, unsigned long)",
		      LIBSTDCXX, NULL),
		frame("main", APP, NULL),
	};
	const struct report_frame static_ctor[] = {
		frame("[unknown]", LIBSTDCXX, NULL),
		frame("init_globals", "/usr/lib/libapp.so", NULL),
		frame("call_init", LDSO, NULL),
	};
	const struct report_frame app[] = { frame("main", APP, NULL) };

	CHECK(report_suppressions__nr_rules(sup) == 1);
	CHECK_STR(report_suppressions__rule(sup, 0)->source, "built in", "source");
	CHECK(match(sup, dwarf, 3) == 0, "dwarf: libstdc++ called by the loader's init");
	CHECK(match(sup, fp, 1) == 0, "fp: a walk that ends in libstdc++");
	CHECK(match(sup, debug, 2) == 0, "with debug info: eh_alloc.cc");
	CHECK(match(sup, string, 2) == -1, "a named function of libstdc++");
	CHECK(match(sup, static_ctor, 3) == -1, "libstdc++ called by another library");
	CHECK(match(sup, app, 1) == -1, "the program's own");
	CHECK(match(none, dwarf, 3) == -1, "without the built-in rules");
	report_suppressions__delete(sup);
	report_suppressions__delete(none);
}

int main(void)
{
	test_patterns();
	test_parse();
	test_match_patterns();
	test_builtin();
	return test_done("test-report-suppress");
}
