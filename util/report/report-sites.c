// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/symbol/demangle.h"
#include "util/report/report-sites.h"
#include "util/u64-map.h"
#include "util/util.h"

#define SITE_MAX	((1u << 31) - 1)	/* a site index fits 31 bits */

/* the figures of one stack id (or of the events without one) */
struct site_acc {
	uint64_t stack;
	bool has_stack;
	uint64_t bytes, calls;
	uint64_t live, live_count;
	uint64_t at_peak, at_peak_count;	/* live at the peak, when changed since */
	uint64_t last_change;		/* seq of the last change of live */
	uint64_t leaked_bytes, leaked_count;
	uint64_t temporary_count, temporary_bytes;
};

struct stack_rec {
	uint64_t id;
	size_t first;			/* in frame_ids[] */
	uint32_t nr;
};

struct report_sites {
	struct site_acc *acc;		/* [0] is not a site */
	size_t nr_acc, cap_acc;
	struct u64_map by_stack;	/* stack id -> acc index */
	uint32_t no_stack;		/* acc index of events without a stack */
	uint64_t peak_seq;		/* the event of the whole tree's peak */
	bool seen_stack;

	struct report_frame *frames;
	size_t nr_frames, cap_frames;
	struct u64_map frame_index;	/* frame id -> frames[] index */
	struct stack_rec *stacks;
	size_t nr_stacks, cap_stacks;
	struct u64_map stack_index;	/* stack id -> stacks[] index */
	uint64_t *frame_ids;
	size_t nr_ids, cap_ids;
	struct report_module *modules;	/* sorted by path by prepare_frames() */
	size_t nr_modules, cap_modules;
	bool raw_names;			/* symbols as in the binaries, not demangled */
};

struct report_sites *report_sites__new(void)
{
	struct report_sites *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->nr_acc = 1;
	if (grow_array((void **)&ss->acc, &ss->cap_acc, 1, sizeof(*ss->acc))) {
		report_sites__delete(ss);
		return NULL;
	}
	memset(&ss->acc[0], 0, sizeof(ss->acc[0]));
	return ss;
}

static void frame__exit(struct report_frame *f)
{
	free(f->module);
	free(f->symbol);
	free(f->raw_symbol);
	free(f->file);
	free(f->name);
}

static void module__exit(struct report_module *m)
{
	free(m->path);
	free(m->build_id);
}

void report_sites__set_demangle(struct report_sites *ss, bool demangle)
{
	ss->raw_names = !demangle;
}

void report_sites__delete(struct report_sites *ss)
{
	size_t i;

	if (!ss)
		return;
	for (i = 0; i < ss->nr_frames; i++)
		frame__exit(&ss->frames[i]);
	free(ss->frames);
	for (i = 0; i < ss->nr_modules; i++)
		module__exit(&ss->modules[i]);
	free(ss->modules);
	free(ss->stacks);
	free(ss->frame_ids);
	free(ss->acc);
	u64_map__exit(&ss->by_stack);
	u64_map__exit(&ss->frame_index);
	u64_map__exit(&ss->stack_index);
	free(ss);
}

/* ---- the trailer: Frame and Stack records --------------------------------- */

/* a copy of s, NULL for NULL or "" (or no memory: the name is then unknown) */
static char *dup_nonempty(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

/* a name the symbolizer did not know: absent (artifacts before 0.2 say "[unknown]") */
static char *dup_known(const char *s)
{
	return s && strcmp(s, "[unknown]") ? dup_nonempty(s) : NULL;
}

/* the frame of id, added unknown when absent; NULL when out of memory */
static struct report_frame *get_frame(struct report_sites *ss, uint64_t id)
{
	struct report_frame *f;
	bool added;

	f = u64_map__element(&ss->frame_index, id, (void **)&ss->frames, &ss->nr_frames,
			     &ss->cap_frames, sizeof(*f), &added);
	if (f && added)
		f->id = id;
	return f;
}

static int take_frame(struct report_sites *ss, const struct artifact_record *rec)
{
	struct report_frame *f = get_frame(ss, rec->id);

	if (!f)
		return -ENOMEM;
	frame__exit(f);
	memset(f, 0, sizeof(*f));
	f->id = rec->id;
	f->known = true;
	f->ip = rec->ip;
	f->offset = rec->offset;
	f->line = rec->line;
	f->inlined = rec->inlined;
	f->module = dup_known(rec->module);
	if (rec->symbol && *rec->symbol && strcmp(rec->symbol, "[unknown]")) {
		f->symbol = symbol_name__display(rec->symbol, !ss->raw_names);
		f->raw_symbol = symbol_name__display(rec->symbol, false);
	}
	f->file = dup_nonempty(rec->file);
	return 0;
}

static int take_module(struct report_sites *ss, const struct artifact_record *rec)
{
	struct report_module *m;

	if (!rec->module || !*rec->module || rec->end <= rec->start)
		return 0;
	if (grow_array((void **)&ss->modules, &ss->cap_modules, ss->nr_modules + 1,
		       sizeof(*ss->modules)))
		return -ENOMEM;
	m = &ss->modules[ss->nr_modules];
	memset(m, 0, sizeof(*m));
	m->path = strdup(rec->module);
	m->build_id = dup_nonempty(rec->build_id);
	m->start = rec->start;
	m->end = rec->end;
	m->offset = rec->offset;
	if (!m->path) {
		module__exit(m);
		return -ENOMEM;
	}
	ss->nr_modules++;
	return 0;
}

static int take_stack(struct report_sites *ss, const struct artifact_record *rec)
{
	struct stack_rec *st;
	uint64_t *slot;

	if (grow_array((void **)&ss->stacks, &ss->cap_stacks, ss->nr_stacks + 1,
		       sizeof(*ss->stacks)) ||
	    grow_array((void **)&ss->frame_ids, &ss->cap_ids, ss->nr_ids + rec->frames.n,
		       sizeof(*ss->frame_ids)))
		return -ENOMEM;
	slot = u64_map__get(&ss->stack_index, rec->id);
	if (!slot)
		return -ENOMEM;
	/* a second record of the same id replaces the first */
	*slot = ss->nr_stacks;
	st = &ss->stacks[ss->nr_stacks++];
	st->id = rec->id;
	st->first = ss->nr_ids;
	st->nr = rec->frames.n;
	if (rec->frames.n)
		memcpy(&ss->frame_ids[ss->nr_ids], rec->frames.v,
		       rec->frames.n * sizeof(*rec->frames.v));
	ss->nr_ids += rec->frames.n;
	return 0;
}

int report_sites__record(struct report_sites *ss, const struct artifact_record *rec)
{
	switch (rec->type) {
	case ARTIFACT_EVENT:
		if (rec->has & AR_HAS(AK_STACK))
			ss->seen_stack = true;
		return 0;
	case ARTIFACT_FRAME:
		return rec->has & AR_HAS(AK_ID) ? take_frame(ss, rec) : 0;
	case ARTIFACT_STACK:
		return rec->has & AR_HAS(AK_ID) ? take_stack(ss, rec) : 0;
	case ARTIFACT_MODULE:
		return take_module(ss, rec);
	default:
		return 0;
	}
}

bool report_sites__has_stacks(const struct report_sites *ss)
{
	return ss->seen_stack || ss->nr_stacks;
}

/* ---- streaming: figures per stack id ------------------------------------ */

static int new_acc(struct report_sites *ss, uint64_t stack, bool has_stack,
		   uint32_t *site)
{
	struct site_acc *a;

	if (ss->nr_acc > SITE_MAX)
		return -E2BIG;
	if (grow_array((void **)&ss->acc, &ss->cap_acc, ss->nr_acc + 1, sizeof(*ss->acc)))
		return -ENOMEM;
	a = &ss->acc[ss->nr_acc];
	memset(a, 0, sizeof(*a));
	a->stack = stack;
	a->has_stack = has_stack;
	*site = ss->nr_acc++;
	return 0;
}

int report_sites__site(struct report_sites *ss, const struct artifact_record *rec,
		       uint32_t *site)
{
	uint64_t *idx;
	int err;

	if (!(rec->has & AR_HAS(AK_STACK))) {
		if (!ss->no_stack && (err = new_acc(ss, 0, false, &ss->no_stack)))
			return err;
		*site = ss->no_stack;
		return 0;
	}
	idx = u64_map__get(&ss->by_stack, rec->stack);
	if (!idx)
		return -ENOMEM;
	if (!*idx) {
		err = new_acc(ss, rec->stack, true, site);
		if (err)
			return err;
		*idx = *site;
	}
	*site = *idx;
	return 0;
}

/* before live changes: keep its value at the peak if this is its first
 * change since the peak */
static struct site_acc *touch(struct report_sites *ss, uint32_t site, uint64_t seq)
{
	struct site_acc *a;

	if (!site || site >= ss->nr_acc)
		return NULL;
	a = &ss->acc[site];
	if (a->last_change <= ss->peak_seq) {
		a->at_peak = a->live;
		a->at_peak_count = a->live_count;
	}
	a->last_change = seq;
	return a;
}

void report_sites__alloc(struct report_sites *ss, uint32_t site, uint64_t size,
			 bool counted, uint64_t seq)
{
	struct site_acc *a = touch(ss, site, seq);

	if (!a)
		return;
	a->live += size;
	a->live_count++;
	if (counted) {
		a->bytes += size;
		a->calls++;
	}
}

void report_sites__free(struct report_sites *ss, uint32_t site, uint64_t size,
			uint64_t seq)
{
	struct site_acc *a = touch(ss, site, seq);

	if (a) {
		a->live -= size;
		a->live_count--;
	}
}

void report_sites__peak(struct report_sites *ss, uint64_t seq)
{
	ss->peak_seq = seq;
}

void report_sites__leak(struct report_sites *ss, uint32_t site, uint64_t size)
{
	if (!site || site >= ss->nr_acc)
		return;
	ss->acc[site].leaked_bytes += size;
	ss->acc[site].leaked_count++;
}

void report_sites__temporary(struct report_sites *ss, uint32_t site, uint64_t size)
{
	if (!site || site >= ss->nr_acc)
		return;
	ss->acc[site].temporary_count++;
	ss->acc[site].temporary_bytes += size;
}

static uint64_t acc_peak(const struct report_sites *ss, const struct site_acc *a)
{
	return a->last_change <= ss->peak_seq ? a->live : a->at_peak;
}

static uint64_t acc_peak_count(const struct report_sites *ss, const struct site_acc *a)
{
	return a->last_change <= ss->peak_seq ? a->live_count : a->at_peak_count;
}

/* ---- the join ------------------------------------------------------------ */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* the frame's name: its symbol, module+0xoffset, or [unknown] */
static int name_frame(struct report_frame *f)
{
	char buf[64];

	if (f->name)
		return 0;
	if (f->symbol) {
		f->name = strdup(f->symbol);
	} else if (f->module) {
		size_t len = strlen(base_name(f->module)) + sizeof(buf);

		f->name = malloc(len);
		if (f->name)
			snprintf(f->name, len, "%s+0x%" PRIx64, base_name(f->module),
				 f->offset);
	} else {
		f->name = strdup("[unknown]");
	}
	return f->name ? 0 : -ENOMEM;
}

/* a stack of one site as read, before merging */
struct raw_site {
	const struct site_acc *acc;
	enum report_site_kind kind;
	uint32_t nr;
	const struct report_frame **frames;
};

struct match_ctx {
	unsigned int depth;
	enum report_site_match match;
};

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_frame(const struct report_frame *a, const struct report_frame *b,
		     enum report_site_match match)
{
	int r;

	if (a == b)
		return 0;
	if (match == REPORT_MATCH_NAME)
		return strcmp(a->name, b->name);
	if (a->known != b->known)
		return a->known ? -1 : 1;
	if (!a->known)
		return cmp_u64(a->id, b->id);
	r = cmp_str(a->symbol, b->symbol);
	if (!r)
		r = cmp_str(a->module, b->module);
	if (!r)
		r = cmp_u64(a->offset, b->offset);
	/* an inlined function has no offset: its line tells where in it */
	if (!r && (a->inlined || b->inlined))
		r = a->inlined != b->inlined ? (a->inlined ? -1 : 1) :
		    a->line != b->line ? cmp_u64(a->line, b->line) : cmp_str(a->file, b->file);
	return r;
}

static uint32_t depth_of(uint32_t nr, unsigned int depth)
{
	return depth && depth < nr ? depth : nr;
}

/* 0 when the two are the same site */
static int cmp_site_frames(enum report_site_kind kind_a, uint64_t stack_a,
			   const struct report_frame *const *fa, uint32_t na,
			   enum report_site_kind kind_b, uint64_t stack_b,
			   const struct report_frame *const *fb, uint32_t nb,
			   const struct match_ctx *m)
{
	uint32_t i;
	int r;

	if (kind_a != kind_b)
		return kind_a < kind_b ? -1 : 1;
	if (kind_a == REPORT_SITE_NO_STACK)
		return 0;
	if (kind_a == REPORT_SITE_UNRESOLVED)
		return cmp_u64(stack_a, stack_b);
	na = depth_of(na, m->depth);
	nb = depth_of(nb, m->depth);
	for (i = 0; i < na && i < nb; i++) {
		r = cmp_frame(fa[i], fb[i], m->match);
		if (r)
			return r;
	}
	return na < nb ? -1 : na > nb;
}

static int cmp_raw(const void *x, const void *y, void *arg)
{
	const struct raw_site *a = x, *b = y;
	int r = cmp_site_frames(a->kind, a->acc->stack, a->frames, a->nr,
				b->kind, b->acc->stack, b->frames, b->nr, arg);

	return r ? r : cmp_u64(a->acc->stack, b->acc->stack);
}

static int cmp_module(const void *x, const void *y)
{
	const struct report_module *a = x, *b = y;

	return strcmp(a->path, b->path);
}

/* the modules by path, each once (a run's side records and trailer say the same) */
static void sort_modules(struct report_sites *ss)
{
	size_t i, kept = 0;

	if (!ss->nr_modules)
		return;
	qsort(ss->modules, ss->nr_modules, sizeof(*ss->modules), cmp_module);
	for (i = 1; i < ss->nr_modules; i++) {
		if (!strcmp(ss->modules[i].path, ss->modules[kept].path)) {
			module__exit(&ss->modules[i]);
			continue;
		}
		ss->modules[++kept] = ss->modules[i];
	}
	ss->nr_modules = kept + 1;
}

static const struct report_module *find_module(const struct report_sites *ss,
					       const char *path)
{
	struct report_module key = { .path = (char *)path };

	if (!path || !ss->nr_modules)
		return NULL;
	return bsearch(&key, ss->modules, ss->nr_modules, sizeof(key), cmp_module);
}

/* every frame id the stacks name has a frame, and every frame a name and its module */
static int prepare_frames(struct report_sites *ss)
{
	size_t i;

	for (i = 0; i < ss->nr_ids; i++)
		if (!get_frame(ss, ss->frame_ids[i]))
			return -ENOMEM;
	sort_modules(ss);
	for (i = 0; i < ss->nr_frames; i++) {
		if (name_frame(&ss->frames[i]))
			return -ENOMEM;
		ss->frames[i].map = find_module(ss, ss->frames[i].module);
	}
	return 0;
}

static const struct stack_rec *find_stack(struct report_sites *ss, uint64_t id)
{
	const uint64_t *idx = u64_map__find(&ss->stack_index, id);

	return idx ? &ss->stacks[*idx] : NULL;
}

/* one raw site per stack id seen, frames looked up; 0 or -ENOMEM */
static int raw_sites(struct report_sites *ss, struct raw_site **rawp,
		     const struct report_frame ***storep)
{
	const struct report_frame **store = NULL;
	struct raw_site *raw;
	size_t i, total = 0, used = 0;

	raw = calloc(ss->nr_acc, sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	for (i = 1; i < ss->nr_acc; i++) {
		const struct stack_rec *st = ss->acc[i].has_stack ?
					     find_stack(ss, ss->acc[i].stack) : NULL;

		if (st)
			total += st->nr;
	}
	store = malloc((total ? total : 1) * sizeof(*store));
	if (!store) {
		free(raw);
		return -ENOMEM;
	}
	for (i = 1; i < ss->nr_acc; i++) {
		struct raw_site *r = &raw[i - 1];
		const struct site_acc *a = &ss->acc[i];
		const struct stack_rec *st = a->has_stack ? find_stack(ss, a->stack) : NULL;
		uint32_t k;

		r->acc = a;
		r->frames = &store[used];
		if (!a->has_stack) {
			r->kind = REPORT_SITE_NO_STACK;
			continue;
		}
		if (!st) {
			r->kind = REPORT_SITE_UNRESOLVED;
			continue;
		}
		r->kind = REPORT_SITE_STACK;
		r->nr = st->nr;
		for (k = 0; k < st->nr; k++) {
			const uint64_t *idx = u64_map__find(&ss->frame_index,
								  ss->frame_ids[st->first + k]);

			store[used++] = &ss->frames[*idx];
		}
	}
	*rawp = raw;
	*storep = store;
	return 0;
}

int report_sites__each_stack(struct report_sites *ss, report_stack_fn *fn, void *arg)
{
	const struct report_frame **frames = NULL;
	size_t i, cap = 0;
	uint32_t k;
	int ret = prepare_frames(ss);

	for (i = 1; !ret && i < ss->nr_acc; i++) {
		const struct site_acc *a = &ss->acc[i];
		const struct stack_rec *st = a->has_stack ? find_stack(ss, a->stack) : NULL;

		if (!st)
			continue;
		if (grow_array((void **)&frames, &cap, st->nr + 1, sizeof(*frames))) {
			ret = -ENOMEM;
			break;
		}
		for (k = 0; k < st->nr; k++)
			frames[k] = &ss->frames[*u64_map__find(&ss->frame_index,
							      ss->frame_ids[st->first + k])];
		ret = fn(i, frames, st->nr, arg);
	}
	free(frames);
	return ret;
}

int report_sites__resolve(struct report_sites *ss, unsigned int depth,
			  enum report_site_match match, struct report_site_list *out)
{
	struct match_ctx m = { .depth = depth, .match = match };
	const struct report_frame **store;
	size_t i, n = ss->nr_acc - 1;
	struct raw_site *raw;
	int err;

	memset(out, 0, sizeof(*out));
	err = prepare_frames(ss);
	if (!err)
		err = raw_sites(ss, &raw, &store);
	if (err)
		return err;
	qsort_r(raw, n, sizeof(*raw), cmp_raw, &m);
	out->sites = calloc(n ? n : 1, sizeof(*out->sites));
	if (!out->sites) {
		free(raw);
		free(store);
		return -ENOMEM;
	}
	out->frame_store = store;
	for (i = 0; i < n; i++) {
		const struct raw_site *r = &raw[i];
		struct report_site *s = out->nr ? &out->sites[out->nr - 1] : NULL;

		if (!s || cmp_site_frames(r->kind, r->acc->stack, r->frames, r->nr,
					  s->kind, s->stack, s->frames, s->nr_frames, &m)) {
			/* the first stack of a site: the smallest id */
			s = &out->sites[out->nr++];
			s->kind = r->kind;
			s->stack = r->acc->stack;
			s->nr_frames = depth_of(r->nr, depth);
			s->frames = r->frames;
		}
		s->nr_stacks++;
		s->bytes += r->acc->bytes;
		s->calls += r->acc->calls;
		s->peak_bytes += acc_peak(ss, r->acc);
		s->peak_count += acc_peak_count(ss, r->acc);
		s->leaked_bytes += r->acc->leaked_bytes;
		s->leaked_count += r->acc->leaked_count;
		s->temporary_count += r->acc->temporary_count;
		s->temporary_bytes += r->acc->temporary_bytes;
	}
	free(raw);
	return 0;
}

void report_site_list__exit(struct report_site_list *l)
{
	free(l->sites);
	free(l->frame_store);
	memset(l, 0, sizeof(*l));
}

uint64_t report_site__value(const struct report_site *s, enum report_site_key key)
{
	switch (key) {
	case REPORT_SITE_BYTES: return s->bytes;
	case REPORT_SITE_CALLS: return s->calls;
	case REPORT_SITE_PEAK: return s->peak_bytes;
	case REPORT_SITE_LEAKED: return s->leaked_bytes;
	case REPORT_SITE_TEMPORARY: return s->temporary_count;
	default: return 0;
	}
}

static int cmp_by_key(const void *x, const void *y, void *arg)
{
	const struct report_site *a = x, *b = y;
	enum report_site_key key = *(const enum report_site_key *)arg;
	int r = cmp_u64(report_site__value(b, key), report_site__value(a, key));

	if (!r)
		r = cmp_u64(b->bytes, a->bytes);
	if (!r)
		r = cmp_u64(b->calls, a->calls);
	if (!r && a->kind != b->kind)
		r = a->kind < b->kind ? -1 : 1;
	return r ? r : cmp_u64(a->stack, b->stack);
}

void report_site_list__sort(struct report_site_list *l, enum report_site_key key)
{
	qsort_r(l->sites, l->nr, sizeof(*l->sites), cmp_by_key, &key);
}

static int cmp_ptr_by_key(const void *x, const void *y, void *arg)
{
	return cmp_by_key(*(const struct report_site *const *)x,
			  *(const struct report_site *const *)y, arg);
}

void report_site_ptrs__sort(const struct report_site **v, size_t n,
			    enum report_site_key key)
{
	qsort_r(v, n, sizeof(*v), cmp_ptr_by_key, &key);
}

size_t report_site_list__top(const struct report_site_list *l, enum report_site_key key,
			     size_t n, const struct report_site **out, size_t *nonzero)
{
	size_t i, k = 0;

	for (i = 0; i < l->nr; i++)
		if (report_site__value(&l->sites[i], key))
			out[k++] = &l->sites[i];
	qsort_r(out, k, sizeof(*out), cmp_ptr_by_key, &key);
	*nonzero = k;
	return n && n < k ? n : k;
}

static bool site_listed(const struct report_site **v, size_t n, const struct report_site *p)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == p)
			return true;
	return false;
}

size_t report_site_list__tops(const struct report_site_list *l, size_t n,
			      enum report_site_key only, const struct report_site **out)
{
	const struct report_site **top = malloc((l->nr ? l->nr : 1) * sizeof(*top));
	size_t i, j, k, nr = 0, nonzero;

	if (!top)
		return SIZE_MAX;
	for (k = 0; k < REPORT_SITE_KEYS; k++) {
		if (only < REPORT_SITE_KEYS && only != k)
			continue;
		j = report_site_list__top(l, k, n, top, &nonzero);
		for (i = 0; i < j; i++)
			if (!site_listed(out, nr, top[i]))
				out[nr++] = top[i];
	}
	free(top);
	return nr;
}

static const char *const key_names[REPORT_SITE_KEYS] = {
	[REPORT_SITE_BYTES] = "bytes",
	[REPORT_SITE_CALLS] = "calls",
	[REPORT_SITE_PEAK] = "peak",
	[REPORT_SITE_LEAKED] = "leaked",
	[REPORT_SITE_TEMPORARY] = "temporary",
};

int report_site_key__parse(const char *name)
{
	int k;

	for (k = 0; k < REPORT_SITE_KEYS; k++)
		if (!strcmp(name, key_names[k]))
			return k;
	return -1;
}

const char *report_site_key__name(enum report_site_key key)
{
	return key < REPORT_SITE_KEYS ? key_names[key] : "?";
}

/* ---- diff ------------------------------------------------------------------ */

static int cmp_site_ptr(const void *x, const void *y, void *arg)
{
	const struct report_site *a = *(const struct report_site *const *)x;
	const struct report_site *b = *(const struct report_site *const *)y;

	return cmp_site_frames(a->kind, a->stack, a->frames, a->nr_frames,
			       b->kind, b->stack, b->frames, b->nr_frames, arg);
}

static const struct report_site **site_ptrs(const struct report_site_list *l,
					    struct match_ctx *m)
{
	const struct report_site **v = malloc((l->nr ? l->nr : 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < l->nr; i++)
		v[i] = &l->sites[i];
	qsort_r(v, l->nr, sizeof(*v), cmp_site_ptr, m);
	return v;
}

static int cmp_change(const void *x, const void *y, void *arg)
{
	const struct report_site_change *a = x, *b = y;

	if (a->growth != b->growth)
		return a->growth > b->growth ? -1 : 1;
	return cmp_by_key(a->head, b->head, arg);
}

int report_site_list__diff(const struct report_site_list *base,
			   const struct report_site_list *head, unsigned int depth,
			   enum report_site_key key,
			   struct report_site_change **out, size_t *nr)
{
	struct match_ctx m = { .depth = depth, .match = REPORT_MATCH_NAME };
	const struct report_site **b = site_ptrs(base, &m), **h = site_ptrs(head, &m);
	struct report_site_change *c = calloc(head->nr ? head->nr : 1, sizeof(*c));
	size_t i, j = 0, n = 0;

	if (!b || !h || !c) {
		free(b);
		free(h);
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < head->nr; i++) {
		const struct report_site *match = NULL;
		uint64_t hv = report_site__value(h[i], key), bv = 0;
		int r = 1;

		while (j < base->nr &&
		       (r = cmp_site_ptr(&b[j], &h[i], &m)) < 0)
			j++;
		/* a stack without its record has no names to match */
		if (j < base->nr && !r && h[i]->kind != REPORT_SITE_UNRESOLVED) {
			match = b[j];
			bv = report_site__value(match, key);
		}
		if (hv <= bv)
			continue;
		c[n].base = match;
		c[n].head = h[i];
		c[n].growth = (int64_t)(hv - bv);
		n++;
	}
	free(b);
	free(h);
	qsort_r(c, n, sizeof(*c), cmp_change, &key);
	*out = c;
	*nr = n;
	return 0;
}

/* ---- folded stacks ------------------------------------------------------- */

/* appends name to buf at *len, with ';' and control characters replaced */
static void put_name(char *buf, size_t *len, const char *name)
{
	for (; *name; name++) {
		unsigned char ch = *name;

		buf[(*len)++] = ch == ';' ? ':' : ch < 0x20 || ch == 0x7f ? '?' : ch;
	}
}

static char *folded_line(const struct report_site *s)
{
	const char *whole = s->kind == REPORT_SITE_NO_STACK ? "[no stack]" :
			    s->kind == REPORT_SITE_UNRESOLVED ? "[unknown stack]" :
			    !s->nr_frames ? "[empty stack]" : NULL;
	size_t len = 1, used = 0;
	uint32_t i;
	char *buf;

	if (whole)
		return strdup(whole);
	for (i = 0; i < s->nr_frames; i++)
		len += strlen(s->frames[i]->name) + 1;
	buf = malloc(len);
	if (!buf)
		return NULL;
	for (i = s->nr_frames; i-- > 0;) {	/* root first */
		put_name(buf, &used, s->frames[i]->name);
		if (i)
			buf[used++] = ';';
	}
	buf[used] = 0;
	return buf;
}

static int cmp_folded(const void *x, const void *y)
{
	const struct report_folded *a = x, *b = y;

	return strcmp(a->line, b->line);
}

int report_sites__folded(struct report_sites *ss, unsigned int depth,
			 enum report_site_key key, struct report_folded **out, size_t *nr)
{
	struct report_site_list l;
	struct report_folded *f;
	size_t i, n = 0, k;
	int err;

	*out = NULL;
	*nr = 0;
	err = report_sites__resolve(ss, depth, REPORT_MATCH_NAME, &l);
	if (err)
		return err;
	f = calloc(l.nr ? l.nr : 1, sizeof(*f));
	if (!f) {
		report_site_list__exit(&l);
		return -ENOMEM;
	}
	for (i = 0; i < l.nr; i++) {
		uint64_t w = report_site__value(&l.sites[i], key);

		if (!w)
			continue;
		f[n].line = folded_line(&l.sites[i]);
		f[n].weight = w;
		if (!f[n++].line) {
			report_folded__free(f, n);
			report_site_list__exit(&l);
			return -ENOMEM;
		}
	}
	report_site_list__exit(&l);
	qsort(f, n, sizeof(*f), cmp_folded);
	/* names that differ only by a replaced ';' make the same line */
	for (i = 0, k = 0; i < n; i++) {
		if (k && !strcmp(f[k - 1].line, f[i].line)) {
			f[k - 1].weight += f[i].weight;
			free(f[i].line);
			continue;
		}
		f[k++] = f[i];
	}
	*out = f;
	*nr = k;
	return 0;
}

/* the lines of b and h merged by line: a line's base weight from b */
static struct report_folded *folded_join(struct report_folded *b, size_t nb,
					 struct report_folded *h, size_t nh, size_t *nr)
{
	struct report_folded *f = calloc(nb + nh + 1, sizeof(*f));
	size_t i = 0, j = 0, n = 0;

	if (!f)
		return NULL;
	while (i < nb || j < nh) {
		int r = i == nb ? 1 : j == nh ? -1 : strcmp(b[i].line, h[j].line);

		if (r < 0) {
			f[n] = (struct report_folded){ b[i].line, 0, b[i].weight };
			i++;
		} else if (r > 0) {
			f[n] = (struct report_folded){ h[j].line, h[j].weight, 0 };
			j++;
		} else {
			f[n] = (struct report_folded){ h[j].line, h[j].weight, b[i].weight };
			free(b[i].line);
			i++;
			j++;
		}
		n++;
	}
	*nr = n;
	return f;
}

int report_sites__folded_diff(struct report_sites *base, struct report_sites *head,
			      unsigned int depth, enum report_site_key key,
			      struct report_folded **out, size_t *nr)
{
	struct report_folded *b = NULL, *h = NULL;
	size_t nb = 0, nh = 0;
	int err;

	*out = NULL;
	*nr = 0;
	err = report_sites__folded(base, depth, key, &b, &nb);
	if (!err)
		err = report_sites__folded(head, depth, key, &h, &nh);
	if (!err) {
		*out = folded_join(b, nb, h, nh, nr);
		if (*out) {
			/* the lines moved to *out */
			free(b);
			free(h);
			return 0;
		}
		err = -ENOMEM;
	}
	report_folded__free(b, nb);
	report_folded__free(h, nh);
	return err;
}

void report_folded__free(struct report_folded *f, size_t nr)
{
	size_t i;

	for (i = 0; f && i < nr; i++)
		free(f[i].line);
	free(f);
}
