// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse-options.h"
#include "util/report/report-gates.h"
#include "util/usage.h"
#include "util/util.h"

struct quantity {
	const char *name;
	enum report_gate_unit unit;
	size_t off;			/* in struct report_heap */
	size_t of;			/* GATE_PERCENT: of this figure */
};

#define Q(n, u, f)	{ n, u, offsetof(struct report_heap, f), 0 }

static const struct quantity quantities[] = {
	Q("peak", GATE_BYTES, peak_bytes),
	Q("leaked", GATE_BYTES, leaked_bytes),
	Q("leaked-blocks", GATE_COUNT, leaked_count),
	Q("allocated", GATE_BYTES, bytes_allocated),
	Q("allocs", GATE_COUNT, allocs),
	Q("temporary", GATE_COUNT, temporary_count),
	{ "temporary%", GATE_PERCENT, offsetof(struct report_heap, temporary_count),
	  offsetof(struct report_heap, allocs) },
	Q("unknown-frees", GATE_COUNT, unknown_frees),
};

struct unit {
	const char *name;
	double factor;
};

static const struct unit byte_units[] = {
	{ "", 1 }, { "B", 1 },
	{ "K", 0x1p10 }, { "k", 0x1p10 }, { "KiB", 0x1p10 },
	{ "M", 0x1p20 }, { "m", 0x1p20 }, { "MiB", 0x1p20 },
	{ "G", 0x1p30 }, { "g", 0x1p30 }, { "GiB", 0x1p30 },
	{ "T", 0x1p40 }, { "t", 0x1p40 }, { "TiB", 0x1p40 },
	{ "kB", 1e3 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
};

static const char *const op_names[] = {
	[GATE_GT] = ">", [GATE_GE] = ">=", [GATE_LT] = "<", [GATE_LE] = "<=",
};

const char *report_gate__name(const struct report_gate *g)
{
	return quantities[g->quantity].name;
}

enum report_gate_unit report_gate__unit(const struct report_gate *g)
{
	return quantities[g->quantity].unit;
}

static uint64_t heap_field(const struct report_heap *h, size_t off)
{
	return *(const uint64_t *)((const char *)h + off);
}

double report_gate__value(const struct report_gate *g, const struct report_heap *h)
{
	const struct quantity *q = &quantities[g->quantity];
	uint64_t v = heap_field(h, q->off), of;

	if (q->unit != GATE_PERCENT)
		return v;
	of = heap_field(h, q->of);
	return of ? 100.0 * v / of : 0;
}

bool report_gate__crossed(const struct report_gate *g, double value)
{
	switch (g->op) {
	case GATE_GT: return value > g->limit;
	case GATE_GE: return value >= g->limit;
	case GATE_LT: return value < g->limit;
	case GATE_LE: return value <= g->limit;
	}
	return false;
}

/* ---- parsing ----------------------------------------------------------------- */

struct parser {
	const char *p;
	char *err;
	size_t errlen;
};

static int parse_error(struct parser *ps, const char *fmt, ...) __printf(2, 3);

static int parse_error(struct parser *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ps->err, ps->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void skip_spaces(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static int parse_quantity(struct parser *ps, struct report_gate *g)
{
	size_t len = strcspn(ps->p, "+@<>= \t"), i;

	for (i = 0; i < ARRAY_SIZE(quantities); i++) {
		if (strlen(quantities[i].name) == len && !strncmp(ps->p, quantities[i].name, len)) {
			g->quantity = i;
			ps->p += len;
			return 0;
		}
	}
	return parse_error(ps, "unknown quantity '%.*s' (peak, leaked, leaked-blocks, "
			   "allocated, allocs, temporary, temporary%%, unknown-frees)",
			   (int)len, ps->p);
}

/* "@each", "@1234" or "@<command name>", up to the operator */
static int parse_scope(struct parser *ps, struct report_gate *g)
{
	size_t len = strcspn(ps->p, "<>=");
	char *end;
	long pid;

	while (len && isspace((unsigned char)ps->p[len - 1]))
		len--;
	if (!len)
		return parse_error(ps, "'@' needs a scope: each, a pid or a command name");
	if (len == 4 && !strncmp(ps->p, "each", 4)) {
		g->scope = GATE_EACH;
	} else if (isdigit((unsigned char)*ps->p) &&
		   (pid = strtol(ps->p, &end, 10)) > 0 && pid <= INT32_MAX &&
		   end == ps->p + len) {
		g->scope = GATE_PID;
		g->pid = pid;
	} else {
		g->scope = GATE_COMM;
		g->comm = strndup(ps->p, len);
		if (!g->comm)
			return -ENOMEM;
	}
	ps->p += len;
	return 0;
}

static int parse_op(struct parser *ps, struct report_gate *g)
{
	const char *p = ps->p;

	if (p[0] == '>' || p[0] == '<') {
		bool eq = p[1] == '=';

		g->op = p[0] == '>' ? (eq ? GATE_GE : GATE_GT) : (eq ? GATE_LE : GATE_LT);
		ps->p += 1 + eq;
		return 0;
	}
	return parse_error(ps, "expected >, >=, < or <= after '%s%s'",
			   report_gate__name(g), g->growth ? "+" : "");
}

/* a decimal number, with an exponent maybe; a sign only for a growth */
static int parse_number(struct parser *ps, const struct report_gate *g, double *v)
{
	const char *s = ps->p;
	char *end;

	if (!*s)
		return parse_error(ps, "a number is missing after '%s'", op_names[g->op]);
	if (!(isdigit((unsigned char)*s) || *s == '.' ||
	      (g->growth && (*s == '-' || *s == '+'))))
		return parse_error(ps, "'%s' is not a number", s);
	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || strspn(s, "0123456789.eE+-") < (size_t)(end - s) ||
	    !isfinite(*v))
		return parse_error(ps, "'%s' is not a number", s);
	ps->p = end;
	return 0;
}

static int parse_unit(struct parser *ps, struct report_gate *g, double v)
{
	const char *u = ps->p, *name = report_gate__name(g);
	size_t i;

	if (g->growth && !strcmp(u, "%")) {
		g->relative = true;
		g->limit = v;
		return 0;
	}
	switch (report_gate__unit(g)) {
	case GATE_BYTES:
		for (i = 0; i < ARRAY_SIZE(byte_units); i++) {
			if (!strcmp(u, byte_units[i].name)) {
				g->limit = v * byte_units[i].factor;
				return 0;
			}
		}
		if (!strcmp(u, "%"))
			return parse_error(ps, "a percentage limits a growth: %s+ with --diff",
					   name);
		return parse_error(ps, "%s is in bytes: the unit '%s' is not B, K/KiB, "
				   "M/MiB, G/GiB, T/TiB (powers of 1024) or kB, MB, GB, "
				   "TB (powers of 1000)", name, u);
	case GATE_PERCENT:
		if (!*u || !strcmp(u, "%")) {
			g->limit = v;
			return 0;
		}
		return parse_error(ps, "%s is a percentage: no unit but '%%', not '%s'",
				   name, u);
	case GATE_COUNT:
		if (!*u) {
			g->limit = v;
			return 0;
		}
		if (!strcmp(u, "%"))
			return parse_error(ps, "a percentage limits a growth: %s+ with --diff",
					   name);
		return parse_error(ps, "%s is a count: no unit, not '%s' (1e6 is a million)",
				   name, u);
	}
	return -EINVAL;
}

static int parse_gate(struct parser *ps, struct report_gate *g)
{
	char *copy;
	size_t len;
	double v = 0;
	int err;

	skip_spaces(ps);
	if (!*ps->p)
		return parse_error(ps, "an empty limit");
	err = parse_quantity(ps, g);
	if (err)
		return err;
	if (*ps->p == '+') {
		g->growth = true;
		ps->p++;
	}
	if (*ps->p == '@') {
		ps->p++;
		err = parse_scope(ps, g);
		if (err)
			return err;
	}
	skip_spaces(ps);
	err = parse_op(ps, g);
	if (err)
		return err;
	skip_spaces(ps);
	/* the number and its unit, without the spaces at the end */
	len = strlen(ps->p);
	while (len && isspace((unsigned char)ps->p[len - 1]))
		len--;
	copy = strndup(ps->p, len);
	if (!copy)
		return -ENOMEM;
	ps->p = copy;
	err = parse_number(ps, g, &v);
	if (!err) {
		skip_spaces(ps);
		err = parse_unit(ps, g, v);
	}
	free(copy);
	return err;
}

int report_gate__parse(const char *expr, struct report_gate *g, char *err, size_t errlen)
{
	struct parser ps = { .p = expr, .err = err, .errlen = errlen };
	int ret;

	memset(g, 0, sizeof(*g));
	if (errlen)
		err[0] = 0;
	ret = parse_gate(&ps, g);
	if (!ret) {
		g->expr = strdup(expr);
		if (!g->expr)
			ret = -ENOMEM;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (ret)
		report_gate__exit(g);
	return ret;
}

void report_gate__exit(struct report_gate *g)
{
	free(g->expr);
	free(g->comm);
	memset(g, 0, sizeof(*g));
}

int report_gates__add(struct report_gates *gs, const char *expr, char *err, size_t errlen)
{
	struct report_gate g;
	int ret = report_gate__parse(expr, &g, err, errlen);

	if (ret)
		return ret;
	if (grow_array((void **)&gs->v, &gs->cap, gs->n + 1, sizeof(*gs->v))) {
		report_gate__exit(&g);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	gs->v[gs->n++] = g;
	return 0;
}

void report_gates__exit(struct report_gates *gs)
{
	size_t i;

	for (i = 0; i < gs->n; i++)
		report_gate__exit(&gs->v[i]);
	free(gs->v);
	memset(gs, 0, sizeof(*gs));
}

/* ---- checking ---------------------------------------------------------------- */

static bool scope_matches(const struct report_gate *g, const struct report_process *p)
{
	switch (g->scope) {
	case GATE_EACH: return true;
	case GATE_PID: return p->pid == g->pid;
	case GATE_COMM: return p->comm && !strcmp(p->comm, g->comm);
	default: return false;
	}
}

static int cmp_proc_ptr(const void *a, const void *b)
{
	const struct report_process *x = *(const struct report_process *const *)a;
	const struct report_process *y = *(const struct report_process *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* the processes of a scope, by pid: how many crossed; *matched: how many matched */
static size_t check_processes(const struct report_gate *g, const struct report_summary *s,
			      report_gate_crossed_fn *crossed, void *arg, size_t *matched)
{
	const struct report_process **v = malloc((s->nr_procs + 1) * sizeof(*v));
	size_t i, n = 0, count = 0;

	*matched = 0;
	for (i = 0; i < s->nr_procs; i++)
		if (scope_matches(g, &s->procs[i]) && v)
			v[n++] = &s->procs[i];
	if (!v)
		return 0;
	qsort(v, n, sizeof(*v), cmp_proc_ptr);
	for (i = 0; i < n; i++) {
		struct report_gate_crossing c = { .gate = g, .proc = v[i] };

		c.value = report_gate__value(g, &v[i]->heap);
		if (report_gate__crossed(g, c.value)) {
			crossed(&c, arg);
			count++;
		}
	}
	free(v);
	*matched = n;
	return count;
}

static double growth(const struct report_gate *g, double base, double head)
{
	if (!g->relative)
		return head - base;
	if (base)
		return 100.0 * (head - base) / base;
	return head > 0 ? INFINITY : 0;
}

size_t report_gates__check(const struct report_gates *gs, const struct report_summary *base,
			   const struct report_summary *s, report_gate_crossed_fn *crossed,
			   void *arg, size_t *unmatched)
{
	size_t i, count = 0, none = 0, matched;

	for (i = 0; i < gs->n; i++) {
		const struct report_gate *g = &gs->v[i];
		struct report_gate_crossing c = { .gate = g };

		if (g->scope != GATE_TREE) {
			count += check_processes(g, s, crossed, arg, &matched);
			none += !matched && g->scope != GATE_EACH;
			continue;
		}
		if (g->growth && !base)
			continue;
		c.head = report_gate__value(g, &s->total);
		c.value = c.head;
		if (g->growth) {
			c.base = report_gate__value(g, &base->total);
			c.value = growth(g, c.base, c.head);
		}
		if (report_gate__crossed(g, c.value)) {
			crossed(&c, arg);
			count++;
		}
	}
	if (unmatched)
		*unmatched = none;
	return count;
}

/* ---- messages ---------------------------------------------------------------- */

static void print_amount(FILE *out, enum report_gate_unit unit, double v, bool exact)
{
	char buf[32];

	switch (unit) {
	case GATE_BYTES:
		if (v < 0)
			fputc('-', out);
		fputs(human_bytes(fabs(v), buf, sizeof(buf)), out);
		if (exact && fabs(v) >= 1024)
			fprintf(out, " (%.0f bytes)", fabs(v));
		break;
	case GATE_COUNT:
		fprintf(out, "%.0f", v);
		break;
	case GATE_PERCENT:
		fprintf(out, "%.1f%%", v);
		break;
	}
}

static void print_crossing(const struct report_gate_crossing *c, FILE *out)
{
	const struct report_gate *g = c->gate;
	enum report_gate_unit unit = report_gate__unit(g);
	double by = g->op == GATE_GT || g->op == GATE_GE ? c->value - g->limit :
		    g->limit - c->value;
	const char *side = g->op == GATE_GT || g->op == GATE_GE ? "over" : "under";

	fprintf(out, "%s: ", g->expr);
	if (c->proc) {
		fprintf(out, "pid %d", c->proc->pid);
		/* raw: error() escapes the whole line for the terminal */
		if (c->proc->comm)
			fprintf(out, " (%s)", c->proc->comm);
		fputs(": ", out);
	}
	fprintf(out, "%s ", report_gate__name(g));
	if (!g->growth) {
		fputs("is ", out);
		print_amount(out, unit, c->value, true);
	} else {
		fputs(c->value < 0 ? "shrank by " : "grew by ", out);
		if (g->relative && isinf(c->value))
			fputs("all of it", out);
		else if (g->relative)
			fprintf(out, "%.1f%%", fabs(c->value));
		else if (unit == GATE_PERCENT)
			fprintf(out, "%.1f points", fabs(c->value));
		else
			print_amount(out, unit, fabs(c->value), false);
		fputs(" (", out);
		print_amount(out, unit, c->base, false);
		fputs(" to ", out);
		print_amount(out, unit, c->head, false);
		fputc(')', out);
	}
	if (isinf(by))
		return;
	fputs(", ", out);
	if (g->relative || unit == GATE_PERCENT)
		fprintf(out, "%.1f points", by);
	else
		print_amount(out, unit, by, false);
	fprintf(out, " %s the limit", side);
}

void report_gate_crossing__format(const struct report_gate_crossing *c, char *buf,
				  size_t len)
{
	char *line = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&line, &size);

	if (!len)
		return;
	buf[0] = 0;
	if (!out)
		return;
	print_crossing(c, out);
	if (!fclose(out))
		snprintf(buf, len, "%s", line);
	free(line);
}

int report_gates__check_mode(const struct report_gates *gs, bool diff)
{
	size_t i;

	for (i = 0; i < gs->n; i++) {
		const struct report_gate *g = &gs->v[i];

		if (g->growth && !diff)
			return error("--fail-if '%s': a growth (%s+) needs --diff <base> <head>",
				     g->expr, report_gate__name(g));
		if (g->scope != GATE_TREE && diff)
			return error("--fail-if '%s': --diff compares whole trees: no '@' "
				     "scope", g->expr);
	}
	return 0;
}

int report_gates__option(const struct option *opt, const char *arg)
{
	char why[256];

	if (report_gates__add(opt->value, arg, why, sizeof(why)))
		return error("--fail-if '%s': %s", arg, why);
	return 0;
}

static void print_crossed(const struct report_gate_crossing *c, void *arg __maybe_unused)
{
	char line[1024];

	report_gate_crossing__format(c, line, sizeof(line));
	error("limit crossed: %s", line);
}

size_t report_gates__run(const struct report_gates *gs, const struct report_summary *base,
			 const struct report_summary *s)
{
	size_t unmatched, i, n = report_gates__check(gs, base, s, print_crossed, NULL, &unmatched);

	for (i = 0; unmatched && i < gs->n; i++) {
		const struct report_gate *g = &gs->v[i];
		size_t matched = 0, k;

		if (g->scope != GATE_PID && g->scope != GATE_COMM)
			continue;
		for (k = 0; k < s->nr_procs; k++)
			matched += scope_matches(g, &s->procs[k]);
		if (!matched)
			warning("--fail-if '%s': no such process", g->expr);
	}
	return n;
}
