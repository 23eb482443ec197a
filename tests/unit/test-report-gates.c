// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack report --fail-if: the expression language (quantities, scopes,
 * operators, numbers and units, growth forms, and the messages of what is
 * wrong), the values it compares, which limits a summary crosses, and the
 * line that says by how much.
 */
#include <errno.h>
#include <stdlib.h>

#include "util/report/report-gates.h"
#include "check.h"

static struct report_gate parsed(const char *expr)
{
	struct report_gate g;
	char why[256];

	CHECK(!report_gate__parse(expr, &g, why, sizeof(why)), "'%s': %s", expr, why);
	return g;
}

/* the message of a bad expression */
static const char *refused(const char *expr)
{
	static char why[256];
	struct report_gate g;

	CHECK(report_gate__parse(expr, &g, why, sizeof(why)) == -EINVAL, "'%s' parsed", expr);
	return why;
}

static void test_parse(void)
{
	struct report_gate g;

	g = parsed("peak>64MiB");
	CHECK_STR(report_gate__name(&g), "peak", "name");
	CHECK(g.op == GATE_GT && g.scope == GATE_TREE && !g.growth);
	CHECK_NUM(g.limit, 64.0 * 1024 * 1024);
	CHECK_STR(g.expr, "peak>64MiB", "expr kept");
	report_gate__exit(&g);

	g = parsed("leaked>0");
	CHECK(g.op == GATE_GT && g.limit == 0 && report_gate__unit(&g) == GATE_BYTES);
	report_gate__exit(&g);

	g = parsed("allocs>1e6");
	CHECK_NUM(g.limit, 1e6);
	CHECK(report_gate__unit(&g) == GATE_COUNT);
	report_gate__exit(&g);

	g = parsed("temporary%>50");
	CHECK(report_gate__unit(&g) == GATE_PERCENT);
	CHECK_NUM(g.limit, 50);
	report_gate__exit(&g);
	g = parsed("temporary% >= 50%");
	CHECK(g.op == GATE_GE);
	CHECK_NUM(g.limit, 50);
	report_gate__exit(&g);

	g = parsed("  peak <= 1.5 GB ");
	CHECK(g.op == GATE_LE);
	CHECK_NUM(g.limit, 1.5e9);
	report_gate__exit(&g);
	g = parsed("allocated<2k");
	CHECK(g.op == GATE_LT);
	CHECK_NUM(g.limit, 2048);
	report_gate__exit(&g);
	g = parsed("leaked-blocks>=3");
	CHECK_STR(report_gate__name(&g), "leaked-blocks", "name");
	report_gate__exit(&g);
}

static void test_parse_scope_growth(void)
{
	struct report_gate g;

	g = parsed("peak@each>1M");
	CHECK(g.scope == GATE_EACH);
	report_gate__exit(&g);
	g = parsed("leaked@1234>0");
	CHECK(g.scope == GATE_PID && g.pid == 1234);
	report_gate__exit(&g);
	g = parsed("peak@g++>1M");
	CHECK(g.scope == GATE_COMM && !g.growth);
	CHECK_STR(g.comm, "g++", "a name with '+'");
	report_gate__exit(&g);
	g = parsed("peak@cc1plus >1M");
	CHECK_STR(g.comm, "cc1plus", "spaces before the operator");
	report_gate__exit(&g);

	g = parsed("peak+>10%");
	CHECK(g.growth && g.relative);
	CHECK_NUM(g.limit, 10);
	report_gate__exit(&g);
	g = parsed("peak+>1MiB");
	CHECK(g.growth && !g.relative);
	CHECK_NUM(g.limit, 1 << 20);
	report_gate__exit(&g);
	g = parsed("allocs+<-5%");
	CHECK(g.growth && g.relative && g.op == GATE_LT);
	CHECK_NUM(g.limit, -5);
	report_gate__exit(&g);
}

static void test_parse_errors(void)
{
	CHECK(strstr(refused("peek>1"), "unknown quantity 'peek'"), "%s", refused("peek>1"));
	CHECK(strstr(refused(""), "empty"));
	CHECK(strstr(refused("peak"), "expected >, >=, < or <= after 'peak'"));
	CHECK(strstr(refused("peak=1"), "expected >"));
	CHECK(strstr(refused("peak>"), "a number is missing"));
	CHECK(strstr(refused("peak>lots"), "'lots' is not a number"));
	CHECK(strstr(refused("peak>0x10"), "'0x10' is not a number"), "%s",
	      refused("peak>0x10"));
	CHECK(strstr(refused("peak>inf"), "not a number"));
	CHECK(strstr(refused("peak>-1"), "not a number"), "a negative limit");
	CHECK(strstr(refused("peak>64XB"), "the unit 'XB'"));
	CHECK(strstr(refused("peak>10%"), "a percentage limits a growth: peak+"));
	CHECK(strstr(refused("allocs>1M"), "allocs is a count"));
	CHECK(strstr(refused("temporary%>50MiB"), "is a percentage"));
	CHECK(strstr(refused("peak@>1"), "'@' needs a scope"));
}

/* a summary of two processes, figures set by hand */
static struct report_process procs[2];
static struct report_summary sum;

static void make_summary(void)
{
	memset(&sum, 0, sizeof(sum));
	memset(procs, 0, sizeof(procs));
	sum.total.peak_bytes = 72 << 20;
	sum.total.leaked_bytes = 72704;
	sum.total.leaked_count = 1;
	sum.total.allocs = 1000;
	sum.total.temporary_count = 989;
	procs[0].pid = 20;
	procs[0].comm = "worker";
	procs[0].heap.peak_bytes = 2 << 20;
	procs[1].pid = 10;
	procs[1].comm = "main";
	procs[1].heap.peak_bytes = 512;
	sum.procs = procs;
	sum.nr_procs = 2;
}

static char lines[8][256];
static size_t nr_lines;

static void keep_line(const struct report_gate_crossing *c, void *arg)
{
	(void)arg;
	if (nr_lines < 8)
		report_gate_crossing__format(c, lines[nr_lines++], sizeof(lines[0]));
}

/* how many of exprs the summary crosses, against base when not NULL */
static size_t check(const struct report_summary *base, const char *const *exprs,
		    size_t *unmatched)
{
	struct report_gates gs = { 0 };
	char why[256];
	size_t n;

	for (; *exprs; exprs++)
		CHECK(!report_gates__add(&gs, *exprs, why, sizeof(why)), "%s", why);
	nr_lines = 0;
	n = report_gates__check(&gs, base, &sum, keep_line, NULL, unmatched);
	report_gates__exit(&gs);
	return n;
}

static void test_check(void)
{
	const char *none[] = { "peak>72MiB", "leaked>71KiB", "allocs>=1001",
			       "temporary%>99", "peak@each>2MiB", "leaked-blocks<1", NULL };
	const char *some[] = { "peak>64MiB", "leaked>0", "temporary%>50", "allocs<=1000",
			       NULL };
	const char *each[] = { "peak@each>1KiB", "peak@main>256", "peak@10>1KiB",
			       "peak@nobody>0", NULL };
	size_t unmatched;

	make_summary();
	CHECK_U64(check(NULL, none, &unmatched), 0, "limits not crossed");
	CHECK_U64(check(NULL, some, &unmatched), 4, "limits crossed");
	CHECK_STR(lines[0], "peak>64MiB: peak is 72.0 MiB (75497472 bytes), 8.0 MiB over the limit",
		  "bytes");
	CHECK_STR(lines[1], "leaked>0: leaked is 71.0 KiB (72704 bytes), 71.0 KiB over the limit",
		  "from 0");
	CHECK_STR(lines[2], "temporary%>50: temporary% is 98.9%, 48.9 points over the limit",
		  "percent");
	CHECK_STR(lines[3], "allocs<=1000: allocs is 1000, 0 under the limit", "count");

	CHECK_U64(check(NULL, each, &unmatched), 2, "per process");
	CHECK_STR(lines[0], "peak@each>1KiB: pid 20 (worker): peak is 2.0 MiB (2097152 bytes), "
		  "2.0 MiB over the limit", "each: only the process over it");
	CHECK_STR(lines[1], "peak@main>256: pid 10 (main): peak is 512 B, 256 B over the limit",
		  "by name");
	CHECK_U64(unmatched, 1, "a name no process has");
}

static void test_growth(void)
{
	const char *grew[] = { "peak+>10%", "peak+>1MiB", "leaked+>0", "allocs+<-5%",
			       "temporary%+>1", NULL };
	const char *flat[] = { "peak+>100%", "allocs+<-50%", "unknown-frees+>0%", NULL };
	struct report_summary base;
	size_t unmatched;

	make_summary();
	memset(&base, 0, sizeof(base));
	base.total.peak_bytes = 64 << 20;
	base.total.leaked_bytes = 0;
	base.total.allocs = 1100;
	base.total.temporary_count = 550;
	CHECK_U64(check(&base, grew, &unmatched), 5, "growths");
	CHECK_STR(lines[0], "peak+>10%: peak grew by 12.5% (64.0 MiB to 72.0 MiB), "
		  "2.5 points over the limit", "relative");
	CHECK_STR(lines[1], "peak+>1MiB: peak grew by 8.0 MiB (64.0 MiB to 72.0 MiB), "
		  "7.0 MiB over the limit", "absolute");
	CHECK_STR(lines[2], "leaked+>0: leaked grew by 71.0 KiB (0 B to 71.0 KiB), "
		  "71.0 KiB over the limit", "from 0");
	CHECK_STR(lines[3], "allocs+<-5%: allocs shrank by 9.1% (1100 to 1000), "
		  "4.1 points under the limit", "shrank");
	CHECK_STR(lines[4], "temporary%+>1: temporary% grew by 48.9 points (50.0% to 98.9%), "
		  "47.9 points over the limit", "a percentage's growth in points");
	CHECK_U64(check(&base, flat, &unmatched), 0, "growths within the limits");
	CHECK_U64(check(NULL, grew, &unmatched), 0, "no growth without a base");
}

int main(void)
{
	test_parse();
	test_parse_scope_growth();
	test_parse_errors();
	test_check();
	test_growth();
	return test_done("test-report-gates");
}
