// SPDX-License-Identifier: GPL-2.0
/*
 * report --diff: two artifacts side by side (see report.h): the figures of
 * the whole tree with their change, the call sites that grew most, as text
 * or JSON; and, with --flamegraph, the folded stacks of both.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "util/json-schema.h"
#include "util/quote.h"
#include "util/report/report.h"
#include "util/usage.h"
#include "util/util.h"

/* ---- --diff ------------------------------------------------------------- */

struct diff_row {
	const char *name;
	const char *key;
	bool bytes;
	size_t off;		/* in struct report_heap */
};

#define DR(n, k, b, m)	{ n, k, b, offsetof(struct report_heap, m) }

static const struct diff_row diff_rows[] = {
	DR("peak live heap", "peak_bytes", true, peak_bytes),
	DR("bytes allocated", "bytes_allocated", true, bytes_allocated),
	DR("allocations", "allocations", false, allocs),
	DR("live at exit", "leaked_bytes", true, leaked_bytes),
	DR("blocks live at exit", "leaked_count", false, leaked_count),
	DR("suppressed at exit", "suppressed_bytes", true, suppressed_bytes),
	DR("temporary allocations", "temporary_count", false, temporary_count),
	DR("unknown frees", "unknown_frees", false, unknown_frees),
};

static uint64_t diff_value(const struct loaded *l, const struct diff_row *r)
{
	return *(const uint64_t *)((const char *)&l->s.total + r->off);
}

/* the change from base to head in percent; false when base is 0 */
static bool change_pct(uint64_t base, uint64_t head, double *pct)
{
	if (!base)
		return false;
	*pct = 100.0 * ((double)head - (double)base) / (double)base;
	return true;
}

static void print_diff(const struct loaded *base, const struct loaded *head,
		       const char *bpath, const char *hpath)
{
	size_t i;

	printf("# base: %s\n# head: %s\n\n", quote_term(bpath), quote_term(hpath));
	printf("  %-22s %16s %16s %10s\n", "", "base", "head", "change");
	for (i = 0; i < ARRAY_SIZE(diff_rows); i++) {
		const struct diff_row *r = &diff_rows[i];
		uint64_t b = diff_value(base, r), h = diff_value(head, r);
		char bs[32], hs[32], cs[32] = "n/a";
		double pct;

		if (r->bytes) {
			human_bytes(b, bs, sizeof(bs));
			human_bytes(h, hs, sizeof(hs));
		} else {
			snprintf(bs, sizeof(bs), "%" PRIu64, b);
			snprintf(hs, sizeof(hs), "%" PRIu64, h);
		}
		if (change_pct(b, h, &pct))
			snprintf(cs, sizeof(cs), "%+.1f%%", pct);
		else if (!h)
			snprintf(cs, sizeof(cs), "=");
		printf("  %-22s %16s %16s %10s\n", r->name, bs, hs, cs);
	}
}

/* the call sites that grew most from base to head */
struct site_diff {
	const char *no_stacks;		/* the artifact without call stacks, or NULL */
	enum report_site_key key;
	struct report_site_list base, head;
	struct report_site_change *changes;
	size_t nr;
};

static int site_diff__init(struct site_diff *d, struct loaded *base, struct loaded *head,
			   const char *bpath, const char *hpath,
			   const struct report_opts *o)
{
	memset(d, 0, sizeof(*d));
	d->key = o->sort_key < 0 ? REPORT_SITE_BYTES : o->sort_key;
	if (!report_sites__has_stacks(base->s.sites))
		d->no_stacks = bpath;
	else if (!report_sites__has_stacks(head->s.sites))
		d->no_stacks = hpath;
	if (d->no_stacks)
		return 0;
	if (resolve_sites(&base->s, o, REPORT_MATCH_NAME, &d->base) ||
	    resolve_sites(&head->s, o, REPORT_MATCH_NAME, &d->head) ||
	    report_site_list__diff(&d->base, &d->head, o->depth, d->key,
				   &d->changes, &d->nr)) {
		report_site_list__exit(&d->base);
		report_site_list__exit(&d->head);
		return error("out of memory");
	}
	return 0;
}

static void site_diff__exit(struct site_diff *d)
{
	report_site_list__exit(&d->base);
	report_site_list__exit(&d->head);
	free(d->changes);
}

static const char *site_value_str(enum report_site_key key, uint64_t v, char *buf,
				  size_t len)
{
	if (key == REPORT_SITE_CALLS || key == REPORT_SITE_TEMPORARY)
		snprintf(buf, len, "%" PRIu64, v);
	else
		human_bytes(v, buf, len);
	return buf;
}

static void print_site_diff(const struct site_diff *d, const struct report_opts *o)
{
	size_t i, n = o->top && o->top < d->nr ? o->top : d->nr;

	printf("\nCall sites that grew most, by %s", site_titles[d->key]);
	if (d->no_stacks) {
		printf("\n  no call stacks in '%s': %s\n", quote_term(d->no_stacks), NO_STACKS_HINT);
		return;
	}
	if (!d->nr) {
		printf("\n  none grew\n");
		return;
	}
	printf(", top %zu of %zu\n", n, d->nr);
	printf("  %4s %11s %11s %12s %9s\n", "#", "BASE", "HEAD", "CHANGE", "%");
	for (i = 0; i < n; i++) {
		const struct report_site_change *c = &d->changes[i];
		uint64_t bv = c->base ? report_site__value(c->base, d->key) : 0;
		uint64_t hv = report_site__value(c->head, d->key);
		char bs[32], hs[32], gs[32], cs[32] = "new";
		double pct;

		site_value_str(d->key, bv, bs, sizeof(bs));
		site_value_str(d->key, hv, hs, sizeof(hs));
		site_value_str(d->key, c->growth, gs + 1, sizeof(gs) - 1);
		gs[0] = '+';
		if (change_pct(bv, hv, &pct))
			snprintf(cs, sizeof(cs), "%+.1f%%", pct);
		printf("  %4zu %11s %11s %12s %9s\n", i + 1, bs, hs, gs, cs);
		print_site_frames(c->head, "         ", o->no_demangle);
	}
}

static cJSON *json_site_diff(const struct site_diff *d, const struct report_opts *o)
{
	size_t i, n = o->top && o->top < d->nr ? o->top : d->nr;
	cJSON *a;

	if (d->no_stacks)
		return cJSON_CreateNull();
	a = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		const struct report_site_change *c = &d->changes[i];
		cJSON *e = cJSON_CreateObject();

		cJSON_AddItemToObject(e, "frames", report_json__site_frames(c->head));
		if (c->base)
			cJSON_AddItemToObject(e, "base", report_json__site(c->base, false));
		else
			cJSON_AddNullToObject(e, "base");
		cJSON_AddItemToObject(e, "head", report_json__site(c->head, false));
		report_json__i64(e, "growth", c->growth);
		cJSON_AddItemToArray(a, e);
	}
	return a;
}

static cJSON *json_diff(const struct loaded *base, const struct loaded *head,
			const char *bpath, const char *hpath,
			const struct site_diff *sd, const struct report_opts *opts)
{
	cJSON *o = cJSON_CreateObject(), *b, *h, *c;
	size_t i;

	cJSON_AddStringToObject(o, "schema", JSON_SCHEMA_REPORT_DIFF);
	b = cJSON_AddObjectToObject(o, "base");
	h = cJSON_AddObjectToObject(o, "head");
	c = cJSON_AddObjectToObject(o, "change_pct");
	cJSON_AddStringToObject(b, "artifact", bpath);
	cJSON_AddStringToObject(h, "artifact", hpath);
	cJSON_AddBoolToObject(b, "truncated", base->truncated);
	cJSON_AddBoolToObject(h, "truncated", head->truncated);
	for (i = 0; i < ARRAY_SIZE(diff_rows); i++) {
		const struct diff_row *r = &diff_rows[i];
		uint64_t bv = diff_value(base, r), hv = diff_value(head, r);
		double pct;

		report_json__u64(b, r->key, bv);
		report_json__u64(h, r->key, hv);
		if (change_pct(bv, hv, &pct))
			cJSON_AddNumberToObject(c, r->key, pct);
		else
			cJSON_AddNullToObject(c, r->key);
	}
	cJSON_AddStringToObject(o, "sites_key", report_site_key__name(sd->key));
	cJSON_AddItemToObject(o, "sites", json_site_diff(sd, opts));
	return o;
}

int cmd_diff(const char *const *paths, struct report_opts *o)
{
	const char *bpath = paths[0], *hpath = paths[1];
	struct loaded base, head;
	struct site_diff sd;
	size_t crossed;
	int ret = 0;

	if (load_summary(bpath, o, &base))
		return 1;
	if (load_summary(hpath, o, &head)) {
		report_summary__exit(&base.s);
		return 1;
	}
	ret = site_diff__init(&sd, &base, &head, bpath, hpath, o);
	if (!ret && o->json) {
		ret = report_json__print(report_json__limits(json_diff(&base, &head, bpath, hpath,
								       &sd, o),
							     o, &base.s, &head.s));
	} else if (!ret) {
		print_diff(&base, &head, bpath, hpath);
		print_site_diff(&sd, o);
	}
	if (!ret)
		site_diff__exit(&sd);
	crossed = report_gates__run(&o->gates, &base.s, &head.s);
	if (base.truncated || head.truncated)
		ret = -1;
	report_summary__exit(&base.s);
	report_summary__exit(&head.s);
	return ret ? 1 : crossed ? REPORT_EXIT_LIMIT : 0;
}


/* --diff --flamegraph: "stack base head" lines, as difffolded.pl writes them */
static int print_folded_diff(struct loaded *base, struct loaded *head,
			     const char *bpath, const char *hpath, struct report_opts *o)
{
	struct report_folded *f;
	size_t i, n;

	if (!report_sites__has_stacks(base->s.sites) || !report_sites__has_stacks(head->s.sites))
		return error("no call stacks in '%s': %s",
			     report_sites__has_stacks(base->s.sites) ? hpath : bpath,
			     NO_STACKS_HINT);
	if (report_sites__folded_diff(base->s.sites, head->s.sites, o->depth, o->weight_key,
				      &f, &n))
		return error("out of memory");
	for (i = 0; i < n; i++) {
		quote_term_fputs(f[i].line, stdout);
		printf(" %" PRIu64 " %" PRIu64 "\n", f[i].base, f[i].weight);
	}
	report_folded__free(f, n);
	return 0;
}

int cmd_flamegraph_diff(const char *const *paths, struct report_opts *o)
{
	struct loaded base, head;
	int ret;

	if (load_summary(paths[0], o, &base))
		return 1;
	if (load_summary(paths[1], o, &head)) {
		report_summary__exit(&base.s);
		return 1;
	}
	ret = print_folded_diff(&base, &head, paths[0], paths[1], o);
	if (base.truncated || head.truncated)
		ret = -1;
	report_summary__exit(&base.s);
	report_summary__exit(&head.s);
	return ret ? 1 : 0;
}
