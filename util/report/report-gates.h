/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_GATES_H
#define MEMTRACK_REPORT_GATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/report/report-summary.h"

/*
 * Limits for CI: `memtrack report --fail-if EXPR`, where EXPR is
 *
 *	<quantity>[+][@<scope>]<op><number>[<unit>]
 *
 * quantity: peak, leaked, leaked-blocks, allocated, allocs, temporary,
 * temporary%, unknown-frees (the figures of the summary); '+': its growth
 * from base to head (--diff only), in the quantity's unit, or in percent of
 * base with a '%' after the number; scope: each (every process), a pid, or
 * a command name (every process of that name), else the whole tree; op:
 * >, >=, <, <=; unit: for bytes B, K/KiB, M/MiB, G/GiB, T/TiB (powers of
 * 1024), kB/KB, MB, GB, TB (powers of 1000); for a percentage an optional
 * '%'; counts have none.  The limit is crossed when `value op number` holds.
 *
 * Parsing and checking are pure logic; report_gates__run() prints.
 */

#define REPORT_EXIT_LIMIT	3	/* memtrack report: a --fail-if limit was crossed */

enum report_gate_unit {
	GATE_BYTES,
	GATE_COUNT,
	GATE_PERCENT,
};

enum report_gate_op {
	GATE_GT,
	GATE_GE,
	GATE_LT,
	GATE_LE,
};

enum report_gate_scope {
	GATE_TREE,			/* the whole tree: the summary's totals */
	GATE_EACH,			/* every process on its own */
	GATE_PID,			/* one process */
	GATE_COMM,			/* every process of one command name */
};

struct report_gate {
	char *expr;			/* as given, for messages */
	unsigned int quantity;		/* index in the table of quantities */
	bool growth;			/* '+': head - base (--diff) */
	bool relative;			/* growth in percent of base */
	enum report_gate_scope scope;
	int32_t pid;			/* GATE_PID */
	char *comm;			/* GATE_COMM */
	enum report_gate_op op;
	double limit;			/* in bytes, a count or percent */
};

struct report_gates {
	struct report_gate *v;
	size_t n, cap;
};

/*
 * Parses expr into *g: 0, or -EINVAL with why (for the message that follows
 * "--fail-if '<expr>': ") in err, or -ENOMEM.
 */
int report_gate__parse(const char *expr, struct report_gate *g, char *err, size_t errlen);
void report_gate__exit(struct report_gate *g);

/* adds a parsed copy of expr; as report_gate__parse() */
int report_gates__add(struct report_gates *gs, const char *expr, char *err, size_t errlen);
void report_gates__exit(struct report_gates *gs);

/* the quantity's name ("peak"), its unit, and its value in a heap's figures */
const char *report_gate__name(const struct report_gate *g);
enum report_gate_unit report_gate__unit(const struct report_gate *g);
double report_gate__value(const struct report_gate *g, const struct report_heap *h);

/* the comparison holds: the limit is crossed */
bool report_gate__crossed(const struct report_gate *g, double value);

/* one limit crossed: by the tree (proc NULL) or by one process */
struct report_gate_crossing {
	const struct report_gate *gate;
	const struct report_process *proc;
	double value;			/* what was compared with the limit */
	double base, head;		/* growth: the two figures */
};

typedef void report_gate_crossed_fn(const struct report_gate_crossing *c, void *arg);

/*
 * Checks every limit against s (for growth limits, the change from base
 * to s; base NULL: no growth limit may be given).  Calls crossed() once for
 * each crossing and returns how many there were.  *unmatched: the limits
 * scoped to a pid or a name that no process of s has (may be NULL).
 */
size_t report_gates__check(const struct report_gates *gs, const struct report_summary *base,
			   const struct report_summary *s, report_gate_crossed_fn *crossed,
			   void *arg, size_t *unmatched);

/* one line saying which limit and by how much: "peak>64MiB: the peak ... over" */
void report_gate_crossing__format(const struct report_gate_crossing *c, char *buf,
				  size_t len);

/*
 * The limits that cannot apply: growth limits without --diff, scopes with
 * it.  0, or -1 after printing why.
 */
int report_gates__check_mode(const struct report_gates *gs, bool diff);

/* the parse-options callback of --fail-if: opt->value is a struct report_gates */
struct option;
int report_gates__option(const struct option *opt, const char *arg);

/*
 * Checks the limits and prints a line on stderr for each crossing (and a
 * warning for a scope that matched nothing); returns how many were crossed.
 */
size_t report_gates__run(const struct report_gates *gs, const struct report_summary *base,
			 const struct report_summary *s);

#endif
