// SPDX-License-Identifier: GPL-2.0
/*
 * report --json: the summary as one JSON document (the schema is
 * Documentation/memtrack-report.schema.json), and the pieces of it that --diff and
 * --html write too (see report.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "util/artifact/artifact.h"
#include "util/json-schema.h"
#include "util/quote.h"
#include "util/report/report.h"
#include "util/report/report-json.h"
#include "util/report/report-suppress.h"
#include "util/report/report-threads.h"
#include "util/usage.h"
#include "util/util.h"

/* ---- --json ------------------------------------------------------------ */

/* a u64 exactly: cJSON's numbers are doubles */
void report_json__u64(cJSON *obj, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	cJSON_AddItemToObject(obj, key, cJSON_CreateRaw(buf));
}

void report_json__i64(cJSON *obj, const char *key, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	cJSON_AddItemToObject(obj, key, cJSON_CreateRaw(buf));
}

/* v, or null where it is not known */
void report_json__u64_or_null(cJSON *obj, const char *key, uint64_t v, bool known)
{
	if (known)
		report_json__u64(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

void report_json__str_or_null(cJSON *obj, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(obj, key, s);
	else
		cJSON_AddNullToObject(obj, key);
}

static cJSON *json_counts(const uint64_t *counts)
{
	cJSON *o = cJSON_CreateObject();
	unsigned int k;

	for (k = MT_MALLOC; k <= MT_BRK; k++)
		report_json__u64(o, artifact__kind_name(k), counts[k]);
	return o;
}

/* the figures of a heap, in the order of the --json document */
struct heap_field {
	const char *key;
	size_t off;		/* in struct report_heap */
	bool rel;		/* a timestamp, written as ns after the first event */
};

#define HF(k, m)	{ k, offsetof(struct report_heap, m), false }

static const struct heap_field heap_fields[] = {
	HF("allocations", allocs), HF("frees", frees),
	HF("bytes_allocated", bytes_allocated), HF("bytes_freed", bytes_freed),
	HF("peak_bytes", peak_bytes), HF("peak_count", peak_count),
	{ "peak_time_ns", offsetof(struct report_heap, peak_ts), true },
	HF("leaked_count", leaked_count), HF("leaked_bytes", leaked_bytes),
	HF("suppressed_count", suppressed_count), HF("suppressed_bytes", suppressed_bytes),
	HF("discarded_count", discarded_count), HF("discarded_bytes", discarded_bytes),
	HF("unknown_frees", unknown_frees),
	HF("libc_freed_count", libc_freed_count), HF("libc_freed_bytes", libc_freed_bytes),
	HF("temporary_count", temporary_count), HF("temporary_bytes", temporary_bytes),
	HF("failed_allocations", failed_allocs), HF("overwritten", overwritten),
	HF("mmap_bytes", mmap_bytes), HF("munmap_bytes", munmap_bytes),
	HF("brk_growth", brk_growth),
};

static bool key_listed(const char *key, const char *const *keys)
{
	for (; *keys; keys++)
		if (!strcmp(key, *keys))
			return true;
	return false;
}

void report_json__heap(cJSON *o, const struct report_summary *s,
		       const struct report_heap *h, const char *const *only)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(heap_fields); i++) {
		const struct heap_field *f = &heap_fields[i];
		uint64_t v = *(const uint64_t *)((const char *)h + f->off);

		if (only && !key_listed(f->key, only))
			continue;
		report_json__u64(o, f->key, f->rel ? report_summary__rel_ns(s, v) : v);
	}
}

/* the figures that the whole tree and each process share */
static void json_heap(cJSON *o, const struct report_summary *s,
		      const struct report_heap *h)
{
	cJSON_AddItemToObject(o, "counts", json_counts(h->counts));
	report_json__heap(o, s, h, NULL);
}

void report_json__process_id(cJSON *o, const struct report_process *p)
{
	report_json__i64(o, "pid", p->pid);
	if (p->info_has & AR_HAS(AK_PPID))
		report_json__i64(o, "ppid", p->ppid);
	else
		cJSON_AddNullToObject(o, "ppid");
	report_json__str_or_null(o, "comm", p->comm);
	report_json__str_or_null(o, "exe", p->exe);
	report_json__str_or_null(o, "backend", p->backend);
	report_json__str_or_null(o, "bpf_why", p->bpf_why);
	if (p->info_has & AR_HAS(AK_EXIT_CODE))
		report_json__i64(o, "exit_code", p->exit_code);
	else
		cJSON_AddNullToObject(o, "exit_code");
}

static cJSON *json_process(const struct report_summary *s, const struct report_process *p)
{
	cJSON *o = cJSON_CreateObject();

	report_json__process_id(o, p);
	json_heap(o, s, &p->heap);
	return o;
}

static cJSON *json_meta(const struct report_summary *s)
{
	const struct report_meta *m = &s->meta;
	cJSON *o, *drops;

	if (!s->has_meta)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (m->has & AR_HAS(AK_FORMAT))
		report_json__u64(o, "format", m->format);
	if (m->tool)
		cJSON_AddStringToObject(o, "tool", m->tool);
	if (m->version)
		cJSON_AddStringToObject(o, "version", m->version);
	if (m->command)
		cJSON_AddStringToObject(o, "command", m->command);
	if (m->has & AR_HAS(AK_ROOT_PID))
		report_json__i64(o, "root_pid", m->root_pid);
	if (m->has & AR_HAS(AK_START))
		report_json__u64(o, "start", m->start);
	if (m->has & AR_HAS(AK_END))
		report_json__u64(o, "end", m->end);
	if (m->has & AR_HAS(AK_DROPS)) {
		drops = cJSON_AddObjectToObject(o, "drops");
		report_json__u64(drops, "events", m->drops_events);
		report_json__u64(drops, "stacks", m->drops_total - m->drops_events);
	}
	if (m->has & AR_HAS(AK_EXIT_CODE))
		report_json__i64(o, "exit_code", m->exit_code);
	cJSON_AddBoolToObject(o, "attached", m->attached);
	report_json__u64(o, "running", m->running);
	report_json__u64(o, "blind", m->blind);
	return o;
}

static cJSON *json_histogram(const struct report_summary *s)
{
	cJSON *a = cJSON_CreateArray();
	unsigned int i;

	for (i = 0; i < REPORT_HIST_BUCKETS; i++) {
		cJSON *b;

		if (!s->hist[i])
			continue;
		b = cJSON_CreateObject();
		report_json__u64(b, "min", report_hist__lower(i));
		report_json__u64(b, "max", hist_upper(i));
		report_json__u64(b, "count", s->hist[i]);
		cJSON_AddItemToArray(a, b);
	}
	return a;
}

static cJSON *json_frame(const struct report_frame *f)
{
	cJSON *o = cJSON_CreateObject();

	report_json__str_or_null(o, "symbol", f->symbol);
	report_json__str_or_null(o, "module", f->module);
	report_json__u64_or_null(o, "offset", f->offset, f->known);
	report_json__str_or_null(o, "file", f->file);
	report_json__u64_or_null(o, "line", f->line, f->line);
	cJSON_AddBoolToObject(o, "inlined", f->inlined);
	return o;
}

cJSON *report_json__site_frames(const struct report_site *site)
{
	cJSON *a = cJSON_CreateArray();
	uint32_t i;

	for (i = 0; i < site->nr_frames; i++)
		cJSON_AddItemToArray(a, json_frame(site->frames[i]));
	return a;
}

/* a site's figures, and its frames when asked */
cJSON *report_json__site(const struct report_site *site, bool frames)
{
	cJSON *o = cJSON_CreateObject();

	if (site->kind == REPORT_SITE_NO_STACK)
		cJSON_AddNullToObject(o, "stack");
	else
		report_json__u64(o, "stack", site->stack);
	report_json__u64(o, "bytes", site->bytes);
	report_json__u64(o, "calls", site->calls);
	report_json__u64(o, "peak_bytes", site->peak_bytes);
	report_json__u64(o, "peak_count", site->peak_count);
	report_json__u64(o, "leaked_bytes", site->leaked_bytes);
	report_json__u64(o, "leaked_count", site->leaked_count);
	report_json__u64(o, "temporary_count", site->temporary_count);
	report_json__u64(o, "temporary_bytes", site->temporary_bytes);
	if (frames)
		cJSON_AddItemToObject(o, "frames", report_json__site_frames(site));
	return o;
}

/*
 * "sites": every site a text section would show (the top of each key, or
 * of --sort's), ordered by --sort's key (bytes by default); null without
 * call stacks
 */
static int json_add_sites(cJSON *o, struct loaded *l, const struct report_opts *opts)
{
	enum report_site_key order = opts->sort_key < 0 ? REPORT_SITE_BYTES : opts->sort_key;
	const struct report_site **all;
	struct report_site_list list;
	size_t i, nr;
	cJSON *a;

	if (!report_sites__has_stacks(l->s.sites)) {
		cJSON_AddNullToObject(o, "sites");
		return 0;
	}
	if (resolve_sites(&l->s, opts, REPORT_MATCH_FRAME, &list))
		return -1;
	all = malloc((list.nr ? list.nr : 1) * sizeof(*all));
	nr = all ? report_site_list__tops(&list, opts->top, opts->sort_key < 0 ?
					  REPORT_SITE_KEYS : (enum report_site_key)opts->sort_key,
					  all) : SIZE_MAX;
	if (nr == SIZE_MAX) {
		free(all);
		report_site_list__exit(&list);
		return error("out of memory");
	}
	report_site_ptrs__sort(all, nr, order);
	a = cJSON_AddArrayToObject(o, "sites");
	for (i = 0; i < nr; i++)
		cJSON_AddItemToArray(a, report_json__site(all[i], true));
	free(all);
	report_site_list__exit(&list);
	return 0;
}

/* the rules of leak suppressions, and what each suppressed */
static cJSON *json_suppressions(const struct report_suppressions *sup)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < report_suppressions__nr_rules(sup); i++) {
		const struct report_suppression_rule *r = report_suppressions__rule(sup, i);
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "rule", r->text);
		cJSON_AddStringToObject(e, "source", r->source);
		report_json__u64_or_null(e, "line", r->line, r->line);
		report_json__u64(e, "count", r->count);
		report_json__u64(e, "bytes", r->bytes);
		cJSON_AddItemToArray(a, e);
	}
	return a;
}

/* --threads: every thread, largest bytes allocated first */
static cJSON *json_threads(const struct report_threads *t)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < t->nr; i++) {
		const struct report_thread *th = &t->v[i];
		cJSON *e = cJSON_CreateObject();

		report_json__i64(e, "pid", th->pid);
		report_json__i64(e, "tid", th->tid);
		report_json__u64(e, "allocations", th->allocs);
		report_json__u64(e, "bytes_allocated", th->bytes_allocated);
		report_json__u64(e, "frees", th->frees);
		report_json__u64(e, "bytes_freed", th->bytes_freed);
		report_json__u64(e, "peak_bytes", th->peak_bytes);
		report_json__u64(e, "leaked_count", th->leaked_count);
		report_json__u64(e, "leaked_bytes", th->leaked_bytes);
		cJSON_AddItemToArray(a, e);
	}
	return a;
}

cJSON *report_json__summary(struct loaded *l, const char *path,
				  const struct report_opts *opts)
{
	struct report_summary *s = &l->s;
	cJSON *o = cJSON_CreateObject(), *procs, *err;
	const struct report_process **sorted;
	size_t i;

	cJSON_AddStringToObject(o, "schema", JSON_SCHEMA_REPORT);
	cJSON_AddStringToObject(o, "artifact", path);
	json_heap(o, s, &s->total);
	cJSON_AddBoolToObject(o, "truncated", l->truncated);
	if (l->truncated) {
		err = cJSON_AddObjectToObject(o, "error");
		report_json__u64(err, "offset", l->error_offset);
		report_json__u64(err, "records", l->error_records);
		cJSON_AddStringToObject(err, "reason", l->reason);
	} else {
		cJSON_AddNullToObject(o, "error");
	}
	report_json__u64(o, "records", s->records);
	report_json__u64(o, "events", s->events);
	report_json__u64(o, "first_timestamp", s->origin_ts);
	report_json__u64(o, "duration_ns", report_summary__rel_ns(s, s->last_ts));
	cJSON_AddStringToObject(o, "lifetimes", s->lifetimes == REPORT_LIFETIMES_AHEAD ? "ahead" :
				s->lifetimes == REPORT_LIFETIMES_LATE ? "late" : "none");
	cJSON_AddItemToObject(o, "histogram", json_histogram(s));
	sorted = sorted_processes(s);
	procs = cJSON_AddArrayToObject(o, "processes");
	for (i = 0; sorted && i < s->nr_procs; i++)
		cJSON_AddItemToArray(procs, json_process(s, sorted[i]));
	free(sorted);
	cJSON_AddItemToObject(o, "meta", json_meta(s));
	cJSON_AddItemToObject(o, "suppressions", json_suppressions(opts->sup));
	if (opts->threads && s->threads)
		cJSON_AddItemToObject(o, "threads", json_threads(s->threads));
	if (json_add_sites(o, l, opts)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* one --fail-if limit crossed, as an element of "limits_crossed" */
static void json_crossing(const struct report_gate_crossing *c, void *arg)
{
	cJSON *a = arg, *e = cJSON_CreateObject();
	char line[512];

	if (!e)
		return;
	report_gate_crossing__format(c, line, sizeof(line));
	cJSON_AddStringToObject(e, "limit", c->gate->expr);
	if (c->proc)
		cJSON_AddNumberToObject(e, "pid", c->proc->pid);
	else
		cJSON_AddNullToObject(e, "pid");
	cJSON_AddNumberToObject(e, "value", c->value);
	cJSON_AddStringToObject(e, "message", line);
	cJSON_AddItemToArray(a, e);
}

/* with --fail-if: the limits crossed, [] for none (stderr says them too) */
cJSON *report_json__limits(cJSON *doc, const struct report_opts *o,
				 const struct report_summary *base, const struct report_summary *s)
{
	cJSON *a;

	if (!doc || !o->gates.n)
		return doc;
	a = cJSON_AddArrayToObject(doc, "limits_crossed");
	if (a)
		report_gates__check(&o->gates, base, s, json_crossing, a, NULL);
	return doc;
}

/* valid UTF-8 whatever the artifact's strings hold: cJSON passes their bytes on */
int report_json__print(cJSON *o)
{
	char *text, *fixed;

	if (!o)
		return -1;
	text = cJSON_Print(o);

	cJSON_Delete(o);
	if (!text)
		return error("out of memory");
	fixed = utf8_repair(text);
	if (!fixed && errno) {
		free(text);
		return error("out of memory");
	}
	puts(fixed ? fixed : text);
	free(fixed);
	free(text);
	return 0;
}
