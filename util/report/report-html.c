// SPDX-License-Identifier: GPL-2.0
/*
 * report --html: see report-html.h.  The page is the template with its
 * marks replaced: the title (HTML text), the data (JSON, as a script
 * element's content), the script and the nonce that lets it run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cJSON.h"
#include "util/quote.h"
#include "util/report/report-html.h"
#include "util/report/report-json.h"
#include "util/report/report-threads.h"
#include "util/u64-map.h"
#include "util/util.h"

/* the page and its script, as files in util/, built in (see the Makefile) */
__asm__(".pushsection .rodata\n"
	".global report_html_page\n"
	"report_html_page:\n"
	".incbin \"util/report/report-html.html\"\n"
	".byte 0\n"
	".global report_html_script\n"
	"report_html_script:\n"
	".incbin \"util/report/report-html.js\"\n"
	".byte 0\n"
	".popsection\n");
extern const char report_html_page[], report_html_script[];

/* the template's marks: "@MEMTRACK_" NAME "@" */
#define MARK		"@MEMTRACK_"
#define NONCE_BYTES	16

/* the cost types in the order of REPORT_SITE_KEYS, as the page names them */
static const char *const key_titles[REPORT_SITE_KEYS][2] = {
	[REPORT_SITE_BYTES] = { "allocated", "bytes" },
	[REPORT_SITE_CALLS] = { "allocations", "count" },
	[REPORT_SITE_PEAK] = { "at peak", "bytes" },
	[REPORT_SITE_LEAKED] = { "leaked", "bytes" },
	[REPORT_SITE_TEMPORARY] = { "temporary", "count" },
};

static cJSON *str_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *json_keys(void)
{
	cJSON *a = cJSON_CreateArray();
	unsigned int k;

	for (k = 0; k < REPORT_SITE_KEYS; k++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", report_site_key__name(k));
		cJSON_AddStringToObject(o, "title", key_titles[k][0]);
		cJSON_AddStringToObject(o, "unit", key_titles[k][1]);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* a heap's figures by cost type, in the order of REPORT_SITE_KEYS */
static cJSON *heap_values(const struct report_heap *h)
{
	const double v[REPORT_SITE_KEYS] = {
		[REPORT_SITE_BYTES] = h->bytes_allocated,
		[REPORT_SITE_CALLS] = h->allocs,
		[REPORT_SITE_PEAK] = h->peak_bytes,
		[REPORT_SITE_LEAKED] = h->leaked_bytes,
		[REPORT_SITE_TEMPORARY] = h->temporary_count,
	};

	return cJSON_CreateDoubleArray(v, REPORT_SITE_KEYS);
}

static cJSON *json_totals(const struct report_summary *s)
{
	static const char *const keys[] = {
		"frees", "bytes_freed", "peak_count", "peak_time_ns", "leaked_count",
		"unknown_frees", "temporary_bytes", NULL,
	};
	const struct report_heap *h = &s->total;
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "v", heap_values(h));
	report_json__heap(o, s, h, keys);
	cJSON_AddNumberToObject(o, "events", s->events);
	cJSON_AddNumberToObject(o, "duration_ns", report_summary__rel_ns(s, s->last_ts));
	return o;
}

static cJSON *json_process(const struct report_process *p)
{
	cJSON *o = cJSON_CreateObject();

	report_json__process_id(o, p);
	cJSON_AddItemToObject(o, "v", heap_values(&p->heap));
	return o;
}

static cJSON *json_processes(const struct report_summary *s)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < s->nr_procs; i++)
		cJSON_AddItemToArray(a, json_process(&s->procs[i]));
	return a;
}

/* [pid, tid, allocations, bytes allocated, frees, bytes freed, peak, leaked blocks, leaked bytes] */
static cJSON *json_threads(const struct report_summary *s)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; s->threads && i < s->threads->nr; i++) {
		const struct report_thread *t = &s->threads->v[i];
		const double v[] = {
			t->pid, t->tid, t->allocs, t->bytes_allocated, t->frees, t->bytes_freed,
			t->peak_bytes, t->leaked_count, t->leaked_bytes,
		};

		cJSON_AddItemToArray(a, cJSON_CreateDoubleArray(v, ARRAY_SIZE(v)));
	}
	return a;
}

/* the allocation sizes: [lowest size, count] per bucket, from the first used to the last */
static cJSON *json_sizes(const struct report_summary *s)
{
	unsigned int i, first = REPORT_HIST_BUCKETS, last = 0;
	cJSON *a = cJSON_CreateArray();

	for (i = 0; i < REPORT_HIST_BUCKETS; i++) {
		if (!s->hist[i])
			continue;
		if (first == REPORT_HIST_BUCKETS)
			first = i;
		last = i;
	}
	for (i = first; i <= last && first < REPORT_HIST_BUCKETS; i++) {
		const double v[] = { report_hist__lower(i), s->hist[i] };

		cJSON_AddItemToArray(a, cJSON_CreateDoubleArray(v, 2));
	}
	return a;
}

static cJSON *json_series(struct report_summary *s, const struct report_timeline_series *ts)
{
	struct report_process *p = ts->key == REPORT_TIMELINE_TOTAL ? NULL :
				   report_summary__process(s, ts->key);
	cJSON *o = cJSON_CreateObject();

	if (ts->key == REPORT_TIMELINE_TOTAL)
		cJSON_AddNullToObject(o, "pid");
	else
		cJSON_AddNumberToObject(o, "pid", ts->key);
	report_json__str_or_null(o, "comm", p ? p->comm : NULL);
	cJSON_AddNumberToObject(o, "peak", ts->peak);
	cJSON_AddItemToObject(o, "t", cJSON_CreateDoubleArray(ts->t_ns, ts->n));
	cJSON_AddItemToObject(o, "v", cJSON_CreateDoubleArray(ts->bytes, ts->n));
	return o;
}

static cJSON *json_timeline(struct report_summary *s)
{
	struct report_timeline_series *v;
	cJSON *a;
	size_t i, n;

	if (!s->timeline || report_timeline__export(s->timeline, REPORT_HTML_PROCESSES, &v, &n))
		return NULL;
	a = cJSON_CreateArray();
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, json_series(s, &v[i]));
	report_timeline_series__free(v, n);
	return a;
}

/* a frame: [name, module, file, line, inlined] */
static cJSON *json_frame(const struct report_frame *f)
{
	cJSON *a = cJSON_CreateArray();

	cJSON_AddItemToArray(a, cJSON_CreateString(f->name ? f->name : "[unknown]"));
	cJSON_AddItemToArray(a, str_or_null(f->module));
	cJSON_AddItemToArray(a, str_or_null(f->file));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(f->line));
	cJSON_AddItemToArray(a, cJSON_CreateBool(f->inlined));
	return a;
}

static cJSON *json_site(const struct report_site *site)
{
	static const char *const no_frames[] = {
		[REPORT_SITE_STACK] = "[empty stack]",
		[REPORT_SITE_UNRESOLVED] = "[unknown stack]",
		[REPORT_SITE_NO_STACK] = "[no stack]",
	};
	double v[REPORT_SITE_KEYS];
	cJSON *o = cJSON_CreateObject(), *frames;
	unsigned int k;
	uint32_t i;

	for (k = 0; k < REPORT_SITE_KEYS; k++)
		v[k] = report_site__value(site, k);
	cJSON_AddItemToObject(o, "v", cJSON_CreateDoubleArray(v, REPORT_SITE_KEYS));
	cJSON_AddNumberToObject(o, "leaked_count", site->leaked_count);
	frames = cJSON_AddArrayToObject(o, "frames");
	if (site->kind != REPORT_SITE_STACK || !site->nr_frames) {
		cJSON *f = cJSON_CreateArray();

		cJSON_AddItemToArray(f, cJSON_CreateString(no_frames[site->kind]));
		cJSON_AddItemToArray(frames, f);
	}
	for (i = 0; site->kind == REPORT_SITE_STACK && i < site->nr_frames; i++)
		cJSON_AddItemToArray(frames, json_frame(site->frames[i]));
	return o;
}

static cJSON *json_run(const struct report_html_run *r)
{
	cJSON *o = cJSON_CreateObject(), *sites, *tl;
	size_t i;

	cJSON_AddStringToObject(o, "artifact", r->path);
	report_json__str_or_null(o, "command", r->s->has_meta ? r->s->meta.command : NULL);
	cJSON_AddBoolToObject(o, "truncated", r->truncated);
	cJSON_AddBoolToObject(o, "has_stacks", r->has_stacks);
	cJSON_AddItemToObject(o, "totals", json_totals(r->s));
	cJSON_AddItemToObject(o, "processes", json_processes(r->s));
	cJSON_AddItemToObject(o, "threads", json_threads(r->s));
	cJSON_AddItemToObject(o, "sizes", json_sizes(r->s));
	tl = json_timeline(r->s);
	cJSON_AddItemToObject(o, "timeline", tl ? tl : cJSON_CreateArray());
	cJSON_AddNumberToObject(o, "depth", r->depth);
	sites = cJSON_AddArrayToObject(o, "sites");
	for (i = 0; r->sites && i < r->nr_sites; i++)
		cJSON_AddItemToArray(sites, json_site(r->sites[i]));
	return o;
}

/* ---- the flame graph's tree --------------------------------------------------- */

struct tree_out {
	const struct report_tree *t;
	bool diff;
	uint32_t *index;		/* node -> index in the page, 0 when not kept */
	uint32_t *todo;			/* nodes to visit */
	struct u64_map frame_index;	/* frame pointer -> index in frames + 1 */
	cJSON *nodes, *frames;
};

static int frame_ref(struct tree_out *o, const struct report_frame *f)
{
	uint64_t *slot;

	if (!f)
		return -1;
	slot = u64_map__get(&o->frame_index, (uintptr_t)f);
	if (!slot)
		return -1;
	if (!*slot) {
		cJSON_AddItemToArray(o->frames, json_frame(f));
		*slot = cJSON_GetArraySize(o->frames);
	}
	return *slot - 1;
}

/* [parent, name, frame, values...]: head's then, in a diff, base's */
static void add_node(struct tree_out *o, uint32_t node, uint32_t at)
{
	const struct report_tree_node *n = &o->t->nodes[node];
	cJSON *a = cJSON_CreateArray();
	unsigned int side, k;

	o->index[node] = at;
	cJSON_AddItemToArray(a, cJSON_CreateNumber(node ? (double)o->index[n->parent] : -1));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(n->name));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(frame_ref(o, n->frame)));
	for (side = 0; side < (o->diff ? 2u : 1u); side++)
		for (k = 0; k < REPORT_SITE_KEYS; k++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(n->value[side][k]));
	cJSON_AddItemToArray(o->nodes, a);
}

/* the nodes kept, parents before their children */
static void walk_tree(struct tree_out *o)
{
	size_t todo = 0, at = 0;
	uint32_t node, c;

	o->todo[todo++] = 0;
	while (todo) {
		node = o->todo[--todo];
		add_node(o, node, at++);
		for (c = o->t->nodes[node].first_child; c; c = o->t->nodes[c].next_sibling)
			if (report_tree__keep(o->t, c, REPORT_HTML_MIN_SHARE))
				o->todo[todo++] = c;
	}
}

static cJSON *json_tree(const struct report_tree *t, bool diff)
{
	struct tree_out o = { .t = t, .diff = diff };
	cJSON *tree, *names;
	size_t i;

	o.index = calloc(t->nr, sizeof(*o.index));
	o.todo = calloc(t->nr, sizeof(*o.todo));
	if (!o.index || !o.todo) {
		free(o.index);
		free(o.todo);
		return NULL;
	}
	tree = cJSON_CreateObject();
	names = cJSON_AddArrayToObject(tree, "names");
	for (i = 0; i < t->names.nr; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(t->names.v[i]));
	o.frames = cJSON_AddArrayToObject(tree, "frames");
	o.nodes = cJSON_AddArrayToObject(tree, "nodes");
	walk_tree(&o);
	free(o.index);
	free(o.todo);
	u64_map__exit(&o.frame_index);
	return tree;
}

static char *page_data(const struct report_html *h)
{
	cJSON *o = cJSON_CreateObject(), *runs, *tree = NULL;
	char *text;
	int i;

	cJSON_AddStringToObject(o, "version", h->version);
	cJSON_AddBoolToObject(o, "diff", h->diff);
	cJSON_AddItemToObject(o, "keys", json_keys());
	runs = cJSON_AddArrayToObject(o, "runs");
	for (i = 0; i < (h->diff ? 2 : 1); i++)
		cJSON_AddItemToArray(runs, json_run(&h->run[i]));
	if (h->tree) {
		tree = json_tree(h->tree, h->diff);
		if (!tree) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	cJSON_AddItemToObject(o, "tree", tree ? tree : cJSON_CreateNull());
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

static const char *page_title(const struct report_html *h)
{
	const struct report_html_run *r = &h->run[h->diff ? 1 : 0];

	if (r->s->has_meta && r->s->meta.command)
		return r->s->meta.command;
	return r->path;
}

/*
 * The nonce of the page's Content-Security-Policy: only the script element
 * that carries it runs, and no inline event handler does, whatever markup
 * a bug might let through.
 */
static int make_nonce(char hex[2 * NONCE_BYTES + 1])
{
	unsigned char b[NONCE_BYTES];
	size_t i;

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return -errno;
	for (i = 0; i < sizeof(b); i++)
		sprintf(hex + 2 * i, "%02x", b[i]);
	return 0;
}

int report_html__write(FILE *out, const struct report_html *h)
{
	char nonce[2 * NONCE_BYTES + 1], *data;
	const char *p = report_html_page, *at, *end;
	int err = make_nonce(nonce);

	if (err)
		return err;
	data = page_data(h);
	if (!data)
		return -ENOMEM;
	while ((at = strstr(p, MARK)) && (end = strchr(at + strlen(MARK), '@'))) {
		size_t len = end - at - strlen(MARK);
		const char *name = at + strlen(MARK);

		fwrite(p, 1, at - p, out);
		if (len == 5 && !strncmp(name, "TITLE", len)) {
			fputs(h->diff ? "diff: " : "", out);
			quote_html(out, page_title(h));
		} else if (len == 4 && !strncmp(name, "DATA", len)) {
			quote_html_script(out, data);
		} else if (len == 5 && !strncmp(name, "NONCE", len)) {
			fputs(nonce, out);
		} else if (len == 6 && !strncmp(name, "SCRIPT", len)) {
			fputs(report_html_script, out);
		}
		p = end + 1;
	}
	fputs(p, out);
	free(data);
	return ferror(out) ? -EIO : 0;
}
