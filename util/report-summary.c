// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report-sites.h"
#include "report-summary.h"
#include "report-timeline.h"
#include "util.h"

#define TABLE_MIN_BITS	10
#define GOLDEN		0x9e3779b97f4a7c15ULL

/* a failed mmap returns -errno, which lands in the last page */
#define MMAP_FAILED(addr)	((addr) >= (uint64_t)-4095)

/* ---- live allocations: (pid, addr) -> size ------------------------------ */

struct live_entry {
	uint64_t addr;			/* 0: an empty slot */
	uint64_t size;
	uint64_t stack;			/* its allocation's call stack, 0: none */
	int32_t pid;
	uint32_t counted:1;		/* allocated inside the time filter */
	uint32_t site:31;		/* its call site (report_sites), 0: none */
};

struct report_live_table {
	struct live_entry *slots;
	unsigned int bits;
	size_t used;
};

static size_t live_slot(const struct report_live_table *t, int32_t pid, uint64_t addr)
{
	uint64_t h = (addr ^ ((uint64_t)(uint32_t)pid * GOLDEN)) * 0xbf58476d1ce4e5b9ULL;

	return h >> (64 - t->bits);
}

static int live_table__init(struct report_live_table *t, unsigned int bits)
{
	t->slots = calloc((size_t)1 << bits, sizeof(*t->slots));
	t->bits = bits;
	t->used = 0;
	return t->slots ? 0 : -ENOMEM;
}

static struct live_entry *live_table__find(struct report_live_table *t,
					   int32_t pid, uint64_t addr)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i = live_slot(t, pid, addr);

	for (;; i = (i + 1) & mask) {
		struct live_entry *e = &t->slots[i];

		if (!e->addr)
			return NULL;
		if (e->addr == addr && e->pid == pid)
			return e;
	}
}

static void live_table__put(struct report_live_table *t, const struct live_entry *n)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i = live_slot(t, n->pid, n->addr);

	while (t->slots[i].addr)
		i = (i + 1) & mask;
	t->slots[i] = *n;
	t->used++;
}

static int live_table__grow(struct report_live_table *t)
{
	struct report_live_table bigger;
	size_t i, n = (size_t)1 << t->bits;

	if (live_table__init(&bigger, t->bits + 1))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (t->slots[i].addr)
			live_table__put(&bigger, &t->slots[i]);
	free(t->slots);
	*t = bigger;
	return 0;
}

/* adds an entry not in the table; keeps the load under 3/4 */
static int live_table__add(struct report_live_table *t, const struct live_entry *n)
{
	if ((t->used + 1) * 4 > ((size_t)3 << t->bits) && live_table__grow(t))
		return -ENOMEM;
	live_table__put(t, n);
	return 0;
}

/* linear probing without tombstones: pull later entries of the run back */
static void live_table__remove(struct report_live_table *t, struct live_entry *e)
{
	size_t mask = ((size_t)1 << t->bits) - 1;
	size_t hole = e - t->slots, i = hole;

	for (;;) {
		size_t home;

		i = (i + 1) & mask;
		if (!t->slots[i].addr)
			break;
		home = live_slot(t, t->slots[i].pid, t->slots[i].addr);
		/* move it if its home is not in (hole, i] (cyclically) */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			t->slots[hole] = t->slots[i];
			hole = i;
		}
	}
	t->slots[hole].addr = 0;
	t->used--;
}

/* ---- processes ------------------------------------------------------------ */

static struct report_process *find_process(struct report_summary *s, int32_t pid)
{
	const uint64_t *idx = u64_map__find(&s->proc_index, (uint32_t)pid);

	return idx ? &s->procs[*idx] : NULL;
}

struct report_process *report_summary__process(struct report_summary *s, int32_t pid)
{
	return find_process(s, pid);
}

static struct report_process *get_process(struct report_summary *s, int32_t pid)
{
	struct report_process *p;
	bool added;

	p = u64_map__element(&s->proc_index, (uint32_t)pid, (void **)&s->procs, &s->nr_procs,
			     &s->procs_cap, sizeof(*p), &added);
	if (p && added)
		p->pid = pid;
	return p;
}

static void take_process_record(struct report_process *p,
				const struct artifact_record *rec)
{
	p->has_info = true;
	p->info_has = rec->has;
	p->ppid = rec->ppid;
	p->exit_code = rec->exit_code;
	p->start = rec->start;
	p->exit = rec->exit;
	free(p->comm);
	free(p->exe);
	free(p->backend);
	p->comm = rec->comm ? strdup(rec->comm) : NULL;
	p->exe = rec->exe ? strdup(rec->exe) : NULL;
	p->backend = rec->backend ? strdup(rec->backend) : NULL;
}

static void take_meta_record(struct report_summary *s, const struct artifact_record *rec)
{
	struct report_meta *m = &s->meta;

	free(m->tool);
	free(m->version);
	free(m->command);
	s->has_meta = true;
	m->has = rec->has;
	m->format = rec->format;
	m->tool = rec->tool ? strdup(rec->tool) : NULL;
	m->version = rec->version ? strdup(rec->version) : NULL;
	m->command = rec->command ? strdup(rec->command) : NULL;
	m->root_pid = rec->root_pid;
	m->exit_code = rec->exit_code;
	m->start = rec->start;
	m->end = rec->end;
	m->drops_events = rec->drops.events;
	m->drops_total = rec->drops.events + rec->drops.stacks + rec->drops.other;
	m->attached = rec->attached;
	m->running = rec->running;
	m->blind = rec->blind;
}

/* ---- heap events -------------------------------------------------------- */

unsigned int report_hist__bucket(uint64_t size)
{
	return size ? 64 - __builtin_clzll(size) : 0;
}

uint64_t report_hist__lower(unsigned int bucket)
{
	return bucket ? 1ULL << (bucket - 1) : 0;
}

uint64_t report_summary__rel_ns(const struct report_summary *s, uint64_t ts)
{
	return s->has_origin && ts > s->origin_ts ? ts - s->origin_ts : 0;
}

/* what one event is about, and where its figures go */
struct event_ctx {
	struct report_summary *s;
	struct report_process *p;
	const struct artifact_record *rec;
	bool counted;			/* inside the time filter */
};

/* true when this is a new peak */
static bool heap_check_peak(struct report_heap *h, uint64_t ts)
{
	if (h->live_bytes <= h->peak_bytes)
		return false;
	h->peak_bytes = h->live_bytes;
	h->peak_count = h->live_count;
	h->peak_ts = ts;
	return true;
}

static void timeline_note(struct event_ctx *c)
{
	struct report_summary *s = c->s;
	uint64_t t = report_summary__rel_ns(s, c->rec->timestamp);

	if (!s->timeline)
		return;
	report_timeline__add(s->timeline, REPORT_TIMELINE_TOTAL, t, s->total.live_bytes);
	report_timeline__add(s->timeline, c->p->pid, t, c->p->heap.live_bytes);
}

/*
 * Temporary allocations, counted as heaptrack counts them (its
 * accumulatedtracedata.cpp, which heaptrack_print and heaptrack_gui show):
 * a free is temporary when the last allocator event of its process before
 * it allocated a block of the same size with the same call stack.  Every
 * free of a known block ends the match; frees of unknown blocks and failed
 * calls take no part, as they never reach heaptrack's analysis.
 */
static void temporary_note_alloc(struct event_ctx *c, uint64_t size)
{
	c->p->last_alloc.set = true;
	c->p->last_alloc.size = size;
	c->p->last_alloc.stack = c->rec->stack;
}

static bool temporary_take_free(struct event_ctx *c, const struct live_entry *e)
{
	bool temporary = c->p->last_alloc.set && c->p->last_alloc.size == e->size &&
			 c->p->last_alloc.stack == e->stack;

	c->p->last_alloc.set = false;
	return temporary;
}

static void heap_sub_live(struct report_heap *h, uint64_t size)
{
	h->live_bytes -= size;
	h->live_count--;
}

static int on_alloc(struct event_ctx *c, uint64_t addr, uint64_t size)
{
	struct live_entry n = { .addr = addr, .size = size, .stack = c->rec->stack,
				.pid = c->rec->pid, .counted = c->counted };
	struct report_heap *heaps[] = { &c->s->total, &c->p->heap };
	struct report_sites *sites = c->s->sites;
	struct live_entry *old = live_table__find(c->s->live, n.pid, addr);
	uint32_t site = 0;
	unsigned int i;
	int err;

	if (sites) {
		err = report_sites__site(sites, c->rec, &site);
		if (err)
			return err;
	}
	if (old) {
		/* its free was never seen: let the new block take its place */
		for (i = 0; i < 2; i++) {
			heap_sub_live(heaps[i], old->size);
			heaps[i]->overwritten++;
		}
		if (sites)
			report_sites__free(sites, old->site, old->size, c->s->records);
		old->size = size;
		old->stack = n.stack;
		old->counted = c->counted;
		old->site = site;
	} else {
		n.site = site;
		if (live_table__add(c->s->live, &n))
			return -ENOMEM;
	}
	if (sites)
		report_sites__alloc(sites, site, size, c->counted, c->s->records);
	for (i = 0; i < 2; i++) {
		struct report_heap *h = heaps[i];

		h->live_bytes += size;
		h->live_count++;
		if (!c->counted)
			continue;
		h->allocs++;
		h->bytes_allocated += size;
	}
	if (c->counted) {
		c->s->hist[report_hist__bucket(size)]++;
		temporary_note_alloc(c, size);
	}
	return 0;
}

/* frees addr: a Free, or the old block of a Realloc */
static void on_free(struct event_ctx *c, uint64_t addr)
{
	struct report_heap *heaps[] = { &c->s->total, &c->p->heap };
	struct live_entry *e = live_table__find(c->s->live, c->rec->pid, addr);
	bool temporary = e && c->counted && temporary_take_free(c, e);
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct report_heap *h = heaps[i];

		if (!e) {
			h->unknown_frees += c->counted;
			continue;
		}
		heap_sub_live(h, e->size);
		if (!c->counted)
			continue;
		h->frees++;
		h->bytes_freed += e->size;
		if (temporary) {
			h->temporary_count++;
			h->temporary_bytes += e->size;
		}
	}
	if (!e)
		return;
	if (c->s->sites && temporary && c->counted)
		report_sites__temporary(c->s->sites, e->site, e->size);
	if (c->s->sites)
		report_sites__free(c->s->sites, e->site, e->size, c->s->records);
	live_table__remove(c->s->live, e);
}

static int on_realloc(struct event_ctx *c)
{
	const struct artifact_record *rec = c->rec;

	if (!rec->addr && rec->size) {
		/* realloc failed: the old block stays */
		c->s->total.failed_allocs += c->counted;
		c->p->heap.failed_allocs += c->counted;
		return 0;
	}
	if (rec->old_addr)
		on_free(c, rec->old_addr);
	if (rec->addr)
		return on_alloc(c, rec->addr, rec->size);
	return 0;
}

static void on_mapping(struct event_ctx *c)
{
	const struct artifact_record *rec = c->rec;
	struct report_process *p = c->p;
	uint64_t growth;

	if (!c->counted)
		return;
	if (rec->kind == MT_MMAP && !MMAP_FAILED(rec->addr)) {
		c->s->total.mmap_bytes += rec->size;
		p->heap.mmap_bytes += rec->size;
	} else if (rec->kind == MT_MUNMAP) {
		c->s->total.munmap_bytes += rec->size;
		p->heap.munmap_bytes += rec->size;
	} else if (rec->kind == MT_BRK && !MMAP_FAILED(rec->addr) && rec->addr) {
		if (!p->has_brk) {
			p->has_brk = true;
			p->brk_first = p->brk_max = rec->addr;
		}
		if (rec->addr <= p->brk_max)
			return;
		growth = rec->addr - p->brk_max;
		p->brk_max = rec->addr;
		p->heap.brk_growth += growth;
		c->s->total.brk_growth += growth;
	}
}

static bool in_time_window(struct report_summary *s, uint64_t ts)
{
	uint64_t t = report_summary__rel_ns(s, ts);

	return !s->filter.has_time || (t >= s->filter.from_ns && t <= s->filter.to_ns);
}

static bool pid_selected(struct report_summary *s, int32_t pid)
{
	return !s->filter.pid_selected || s->filter.pid_selected(pid, s->filter.pid_arg);
}

static int add_event(struct report_summary *s, const struct artifact_record *rec)
{
	struct event_ctx c = { .s = s, .rec = rec };
	int err = 0;

	if (!s->has_origin) {
		s->has_origin = true;
		s->origin_ts = rec->timestamp;
	}
	if (!pid_selected(s, rec->pid))
		return 0;
	c.p = get_process(s, rec->pid);
	if (!c.p)
		return -ENOMEM;
	c.counted = in_time_window(s, rec->timestamp);
	if (rec->timestamp > s->last_ts)
		s->last_ts = rec->timestamp;
	if (!c.p->has_events)
		c.p->first_ts = rec->timestamp;
	c.p->has_events = true;
	if (rec->timestamp > c.p->last_ts)
		c.p->last_ts = rec->timestamp;
	if (c.counted) {
		s->events++;
		s->total.counts[rec->kind]++;
		c.p->heap.counts[rec->kind]++;
	}

	switch (rec->kind) {
	case MT_MALLOC:
	case MT_CALLOC:
	case MT_ALIGNED_ALLOC:
		if (rec->addr) {
			err = on_alloc(&c, rec->addr, rec->size);
		} else {
			s->total.failed_allocs += c.counted;
			c.p->heap.failed_allocs += c.counted;
		}
		break;
	case MT_FREE:
		if (!rec->addr)
			break;	/* free(NULL) */
		on_free(&c, rec->addr);
		break;
	case MT_REALLOC:
		err = on_realloc(&c);
		break;
	default:
		on_mapping(&c);
		return 0;
	}
	if (c.counted) {
		if (heap_check_peak(&s->total, rec->timestamp) && s->sites)
			report_sites__peak(s->sites, s->records);
		heap_check_peak(&c.p->heap, rec->timestamp);
	}
	timeline_note(&c);
	return err;
}

int report_summary__add(struct report_summary *s, const struct artifact_record *rec)
{
	struct report_process *p;

	s->records++;
	if (s->sites && report_sites__record(s->sites, rec))
		return -ENOMEM;
	switch (rec->type) {
	case ARTIFACT_EVENT:
		if (rec->kind > 0 && rec->kind < MT_KIND_MAX)
			return add_event(s, rec);
		return 0;
	case ARTIFACT_PROCESS:
		if (!(rec->has & AR_HAS(AK_PID)) || !pid_selected(s, rec->pid))
			return 0;
		p = get_process(s, rec->pid);
		if (!p)
			return -ENOMEM;
		take_process_record(p, rec);
		return 0;
	case ARTIFACT_META:
		take_meta_record(s, rec);
		return 0;
	default:
		return 0;
	}
}

void report_summary__finish(struct report_summary *s)
{
	struct report_live_table *t = s->live;
	size_t i, n = (size_t)1 << t->bits;

	for (i = 0; i < n; i++) {
		const struct live_entry *e = &t->slots[i];
		struct report_process *p;

		if (!e->addr || !e->counted)
			continue;
		p = find_process(s, e->pid);
		if (s->suppressed && s->suppressed(s->suppressed_arg, e->site, e->size)) {
			s->total.suppressed_count++;
			s->total.suppressed_bytes += e->size;
			if (p) {
				p->heap.suppressed_count++;
				p->heap.suppressed_bytes += e->size;
			}
			continue;
		}
		s->total.leaked_count++;
		s->total.leaked_bytes += e->size;
		if (s->sites)
			report_sites__leak(s->sites, e->site, e->size);
		if (p) {
			p->heap.leaked_count++;
			p->heap.leaked_bytes += e->size;
		}
	}
}

int report_summary__init(struct report_summary *s, const struct report_filter *f)
{
	memset(s, 0, sizeof(*s));
	if (f)
		s->filter = *f;
	s->live = calloc(1, sizeof(*s->live));
	if (!s->live || live_table__init(s->live, TABLE_MIN_BITS)) {
		report_summary__exit(s);
		return -ENOMEM;
	}
	return 0;
}

void report_summary__exit(struct report_summary *s)
{
	size_t i;

	for (i = 0; i < s->nr_procs; i++) {
		free(s->procs[i].comm);
		free(s->procs[i].backend);
		free(s->procs[i].exe);
	}
	free(s->procs);
	free(s->meta.tool);
	free(s->meta.version);
	free(s->meta.command);
	if (s->live)
		free(s->live->slots);
	free(s->live);
	u64_map__exit(&s->proc_index);
	report_timeline__delete(s->timeline);
	report_sites__delete(s->sites);
	memset(s, 0, sizeof(*s));
}
