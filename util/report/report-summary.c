// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/report/report-sites.h"
#include "util/report/report-summary.h"
#include "util/report/report-threads.h"
#include "util/report/report-timeline.h"
#include "util/util.h"

#define TABLE_MIN_BITS	4
#define GOLDEN		0x9e3779b97f4a7c15ULL
/* a block's time in its process, in units of 2.048 us (see block_tick()) */
#define TICK_SHIFT	11
#define TICK_MAX	((1u << 31) - 1)

/* a failed mmap returns -errno, which lands in the last page */
#define MMAP_FAILED(addr)	((addr) >= (uint64_t)-4095)

/* ---- live allocations: a table per process, addr -> block ---------------- */

struct live_entry {
	uint64_t addr;			/* 0: an empty slot */
	uint64_t size;
	uint64_t stack;			/* its allocation's call stack, 0: none */
	uint32_t counted:1;		/* allocated inside the time filter */
	uint32_t site:31;		/* its call site (report_sites), 0: none */
	uint32_t dead:1;		/* its process has exited: out of the tree's live heap */
	uint32_t tick:31;		/* when it was allocated: block_tick() */
};

_Static_assert(sizeof(struct live_entry) == 32, "a live block takes 32 bytes");

static size_t live_slot(const struct report_live_table *t, uint64_t addr)
{
	return (addr * GOLDEN) >> (64 - t->bits);
}

static int live_table__init(struct report_live_table *t, unsigned int bits)
{
	t->slots = calloc((size_t)1 << bits, sizeof(*t->slots));
	t->bits = bits;
	t->used = 0;
	return t->slots ? 0 : -ENOMEM;
}

static void live_table__exit(struct report_live_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static size_t live_table__slots(const struct report_live_table *t)
{
	return t->slots ? (size_t)1 << t->bits : 0;
}

static struct live_entry *live_table__find(struct report_live_table *t, uint64_t addr)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i;

	if (!t->slots)
		return NULL;
	for (i = live_slot(t, addr);; i = (i + 1) & mask) {
		struct live_entry *e = &t->slots[i];

		if (!e->addr)
			return NULL;
		if (e->addr == addr)
			return e;
	}
}

static void live_table__put(struct report_live_table *t, const struct live_entry *n)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i = live_slot(t, n->addr);

	while (t->slots[i].addr)
		i = (i + 1) & mask;
	t->slots[i] = *n;
	t->used++;
}

/* a table of 2^bits slots with the entries of t that are not 0 */
static int live_table__rebuild(struct report_live_table *t, unsigned int bits)
{
	struct report_live_table bigger;
	size_t i, n = live_table__slots(t);

	if (live_table__init(&bigger, bits))
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
	if (!t->slots && live_table__init(t, TABLE_MIN_BITS))
		return -ENOMEM;
	if ((t->used + 1) * 4 > ((size_t)3 << t->bits) && live_table__rebuild(t, t->bits + 1))
		return -ENOMEM;
	live_table__put(t, n);
	return 0;
}

/*
 * Smaller when a quarter of it or less is used (after an exit or an exec):
 * the memory of the report follows the live blocks of the processes alive.
 */
static void live_table__fit(struct report_live_table *t)
{
	unsigned int bits = TABLE_MIN_BITS;

	if (!t->used) {
		live_table__exit(t);
		return;
	}
	while (t->used * 4 > ((size_t)3 << bits))
		bits++;
	if (bits + 1 < t->bits)
		live_table__rebuild(t, bits);	/* out of memory: it stays as it is */
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
		home = live_slot(t, t->slots[i].addr);
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

/* ---- exec and exit: a process's blocks go with its image ---------------- */

/*
 * An exec or an exit of a process, from its Process record.  They are
 * applied in time order as the events pass their time: an exec drops the
 * process's live blocks (the old image's heap is gone with its address
 * space: not freed, not leaked: discarded), an exit takes them out of the
 * tree's live heap (they stay the process's live at exit).  A moment that
 * comes after the events passed its time (the Process record was not read
 * ahead of them) is "late": applied at once, it leaves the peak and the
 * timeline as they were, and its exec tells the old image's blocks by
 * their tick.
 *
 * Events are in time order per process, not quite across processes (the
 * merge of track's rings takes what is ready): a moment is applied when an
 * event of any process passes it, so an event of the process's old image
 * that comes after another's later one would be taken for the new image's.
 */
struct report_moment {
	uint64_t ts;
	int32_t pid;
	bool exit;			/* an exit; otherwise an exec */
	bool late;
};

static int cmp_moment(const void *a, const void *b)
{
	const struct report_moment *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int add_moment(struct report_summary *s, int32_t pid, uint64_t ts, bool exit)
{
	struct report_moment *m;

	if (grow_array((void **)&s->moments, &s->moments_cap, s->nr_moments + 1,
		       sizeof(*s->moments)))
		return -ENOMEM;
	m = &s->moments[s->nr_moments++];
	m->ts = ts;
	m->pid = pid;
	m->exit = exit;
	m->late = ts < s->last_ts;
	s->lifetimes = m->late ? REPORT_LIFETIMES_LATE :
		       s->lifetimes ? s->lifetimes : REPORT_LIFETIMES_AHEAD;
	s->moments_sorted = false;
	return 0;
}

/* the exec and exit times of a Process record */
static int add_moments(struct report_summary *s, const struct artifact_record *rec)
{
	uint32_t i;

	for (i = 0; (rec->has & AR_HAS(AK_EXECS)) && i < rec->execs.n; i++)
		if (add_moment(s, rec->pid, rec->execs.v[i], false))
			return -ENOMEM;
	if ((rec->has & AR_HAS(AK_EXIT)) && add_moment(s, rec->pid, rec->exit, true))
		return -ENOMEM;
	return 0;
}

/*
 * When a block was allocated, for a late exec to tell the old image's blocks
 * from the new one's: ticks of 2.048 us from its process's first event, up
 * to 73 minutes (later ones are all the last tick, and taken for the new
 * image's).  An exec takes longer than a tick, and the new image's loader
 * too before its first allocation.
 */
static uint32_t block_tick(const struct report_process *p, uint64_t ts)
{
	uint64_t t = ts > p->first_ts ? (ts - p->first_ts) >> TICK_SHIFT : 0;

	return t < TICK_MAX ? t : TICK_MAX;
}

static void timeline_moment(struct report_summary *s, const struct report_process *p,
			    const struct report_moment *m)
{
	uint64_t t = report_summary__rel_ns(s, m->ts);

	if (!s->timeline || m->late)
		return;
	report_timeline__add(s->timeline, REPORT_TIMELINE_TOTAL, t, s->total.live_bytes);
	if (p->has_events)
		report_timeline__add(s->timeline, p->pid, t, m->exit ? 0 : p->heap.live_bytes);
}

static void heap_sub_live(struct report_heap *h, uint64_t size)
{
	h->live_bytes -= size;
	h->live_count--;
}

/* the block leaves the tree's live heap (and its site's live bytes) */
static void block_dies(struct report_summary *s, struct live_entry *e)
{
	if (e->dead)
		return;
	e->dead = 1;
	heap_sub_live(&s->total, e->size);
	if (s->sites)
		report_sites__free(s->sites, e->site, e->size, s->records);
}

/* an exec: the blocks of the old image are gone, neither freed nor leaked */
static void apply_exec(struct report_summary *s, struct report_process *p,
		       const struct report_moment *m)
{
	struct report_live_table *t = &p->live;
	uint32_t tick = block_tick(p, m->ts);
	size_t i = 0;

	/* a removal may pull an entry back into slot i: look at it again */
	while (i < live_table__slots(t)) {
		struct live_entry *e = &t->slots[i];

		if (!e->addr || (m->late && e->tick >= tick)) {
			i++;
			continue;
		}
		block_dies(s, e);
		heap_sub_live(&p->heap, e->size);
		if (e->counted) {
			p->heap.discarded_count++;
			p->heap.discarded_bytes += e->size;
			s->total.discarded_count++;
			s->total.discarded_bytes += e->size;
		}
		if (s->threads)
			report_threads__forget(s->threads, p->pid, e->addr, e->size);
		live_table__remove(t, e);
	}
	live_table__fit(t);
	if (!m->late) {
		/* the new image has a break of its own, anywhere in the address space */
		p->has_brk = false;
		p->last_alloc.set = false;
	}
}

/* an exit: its blocks leave the tree's live heap, and stay its live at exit */
static void apply_exit(struct report_summary *s, struct report_process *p)
{
	size_t i, n = live_table__slots(&p->live);

	for (i = 0; i < n; i++)
		if (p->live.slots[i].addr)
			block_dies(s, &p->live.slots[i]);
	p->ended = true;
	live_table__fit(&p->live);
}

/* applies the moments up to ts */
static void apply_moments(struct report_summary *s, uint64_t ts)
{
	while (s->next_moment < s->nr_moments) {
		const struct report_moment *m;
		struct report_process *p;

		if (!s->moments_sorted) {
			qsort(s->moments + s->next_moment, s->nr_moments - s->next_moment,
			      sizeof(*s->moments), cmp_moment);
			s->moments_sorted = true;
		}
		m = &s->moments[s->next_moment];
		if (m->ts > ts && !m->late)
			return;
		s->next_moment++;
		p = find_process(s, m->pid);
		if (!p)
			continue;
		if (m->exit)
			apply_exit(s, p);
		else
			apply_exec(s, p, m);
		timeline_moment(s, p, m);
	}
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
	free(p->bpf_why);
	p->comm = rec->comm ? strdup(rec->comm) : NULL;
	p->exe = rec->exe ? strdup(rec->exe) : NULL;
	p->backend = rec->backend ? strdup(rec->backend) : NULL;
	p->bpf_why = rec->bpf_why ? strdup(rec->bpf_why) : NULL;
	p->pymalloc_off = rec->pymalloc_off;
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

static int on_alloc(struct event_ctx *c, uint64_t addr, uint64_t size)
{
	struct report_process *p = c->p;
	struct live_entry n = { .addr = addr, .size = size, .stack = c->rec->stack,
				.counted = c->counted, .dead = p->ended,
				.tick = block_tick(p, c->rec->timestamp) };
	struct report_sites *sites = c->s->sites;
	struct live_entry *old = live_table__find(&p->live, addr);
	uint32_t site = 0;
	int err;

	if (sites) {
		err = report_sites__site(sites, c->rec, &site);
		if (err)
			return err;
	}
	if (old && c->s->threads)
		report_threads__forget(c->s->threads, p->pid, addr, old->size);
	if (c->counted && c->s->threads &&
	    report_threads__alloc(c->s->threads, p->pid, c->rec->tid, addr, size))
		return -ENOMEM;
	if (old) {
		/* its free was never seen: let the new block take its place */
		block_dies(c->s, old);
		heap_sub_live(&p->heap, old->size);
		c->s->total.overwritten++;
		p->heap.overwritten++;
		old->size = size;
		old->stack = n.stack;
		old->counted = c->counted;
		old->dead = n.dead;
		old->site = site;
		old->tick = n.tick;
	} else {
		n.site = site;
		if (live_table__add(&p->live, &n))
			return -ENOMEM;
	}
	if (sites)
		report_sites__alloc(sites, site, size, c->counted, c->s->records);
	p->heap.live_bytes += size;
	p->heap.live_count++;
	if (!n.dead) {
		c->s->total.live_bytes += size;
		c->s->total.live_count++;
	} else if (sites) {
		/* after its process's exit: only a disordered artifact has one */
		report_sites__free(sites, site, size, c->s->records);
	}
	if (c->counted) {
		p->heap.allocs++;
		p->heap.bytes_allocated += size;
		c->s->total.allocs++;
		c->s->total.bytes_allocated += size;
		c->s->hist[report_hist__bucket(size)]++;
		temporary_note_alloc(c, size);
	}
	return 0;
}

/* frees addr: a Free, or the old block of a Realloc */
static void on_free(struct event_ctx *c, uint64_t addr)
{
	struct report_heap *heaps[] = { &c->s->total, &c->p->heap };
	struct live_entry *e = live_table__find(&c->p->live, addr);
	bool temporary;
	unsigned int i;

	if (!e) {
		c->s->total.unknown_frees += c->counted;
		c->p->heap.unknown_frees += c->counted;
		return;
	}
	temporary = c->counted && temporary_take_free(c, e);
	if (c->s->threads && c->counted)
		report_threads__free(c->s->threads, c->p->pid, c->rec->tid, addr, e->size);
	else if (c->s->threads)
		report_threads__forget(c->s->threads, c->p->pid, addr, e->size);
	block_dies(c->s, e);
	heap_sub_live(&c->p->heap, e->size);
	for (i = 0; c->counted && i < 2; i++) {
		struct report_heap *h = heaps[i];

		h->frees++;
		h->bytes_freed += e->size;
		if (temporary) {
			h->temporary_count++;
			h->temporary_bytes += e->size;
		}
	}
	if (c->s->sites && temporary)
		report_sites__temporary(c->s->sites, e->site, e->size);
	live_table__remove(&c->p->live, e);
}

/* a free of glibc's at exit: counted, and made unless asked to show what it freed */
static void on_libc_free(struct event_ctx *c, uint64_t addr)
{
	struct live_entry *e = live_table__find(&c->p->live, addr);

	if (e && c->counted) {
		c->s->total.libc_freed_count++;
		c->s->total.libc_freed_bytes += e->size;
		c->p->heap.libc_freed_count++;
		c->p->heap.libc_freed_bytes += e->size;
	}
	if (!e || !c->s->show_libc_frees)
		on_free(c, addr);
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
	apply_moments(s, rec->timestamp);
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
		if (rec->freeres)
			on_libc_free(&c, rec->addr);
		else
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
		return p->lifetime_ahead ? 0 : add_moments(s, rec);
	case ARTIFACT_META:
		take_meta_record(s, rec);
		return 0;
	default:
		return 0;
	}
}

int report_summary__add_ahead(struct report_summary *s, const struct artifact_record *rec)
{
	struct report_process *p;

	if (rec->type != ARTIFACT_PROCESS || !(rec->has & AR_HAS(AK_PID)) ||
	    !pid_selected(s, rec->pid))
		return 0;
	p = get_process(s, rec->pid);
	if (!p)
		return -ENOMEM;
	take_process_record(p, rec);
	if (p->lifetime_ahead)
		return 0;
	p->lifetime_ahead = true;
	return add_moments(s, rec);
}

/* a block live at its process's exit: a leak, unless a suppression matches it */
static void count_leak(struct report_summary *s, struct report_process *p,
		       const struct live_entry *e)
{
	if (s->suppressed && s->suppressed(s->suppressed_arg, e->site, e->size)) {
		s->total.suppressed_count++;
		s->total.suppressed_bytes += e->size;
		p->heap.suppressed_count++;
		p->heap.suppressed_bytes += e->size;
		return;
	}
	s->total.leaked_count++;
	s->total.leaked_bytes += e->size;
	if (s->sites)
		report_sites__leak(s->sites, e->site, e->size);
	if (s->threads)
		report_threads__leak(s->threads, p->pid, e->addr, e->size);
	p->heap.leaked_count++;
	p->heap.leaked_bytes += e->size;
}

void report_summary__finish(struct report_summary *s)
{
	size_t i, j;

	apply_moments(s, UINT64_MAX);
	for (i = 0; i < s->nr_procs; i++) {
		struct report_process *p = &s->procs[i];

		for (j = 0; j < live_table__slots(&p->live); j++)
			if (p->live.slots[j].addr && p->live.slots[j].counted)
				count_leak(s, p, &p->live.slots[j]);
	}
	if (s->threads)
		report_threads__sort(s->threads);
}

int report_summary__init(struct report_summary *s, const struct report_filter *f)
{
	memset(s, 0, sizeof(*s));
	if (f)
		s->filter = *f;
	return 0;
}

void report_summary__exit(struct report_summary *s)
{
	size_t i;

	for (i = 0; i < s->nr_procs; i++) {
		free(s->procs[i].comm);
		free(s->procs[i].backend);
		free(s->procs[i].bpf_why);
		free(s->procs[i].exe);
		live_table__exit(&s->procs[i].live);
	}
	free(s->procs);
	free(s->moments);
	free(s->meta.tool);
	free(s->meta.version);
	free(s->meta.command);
	u64_map__exit(&s->proc_index);
	report_timeline__delete(s->timeline);
	report_sites__delete(s->sites);
	report_threads__delete(s->threads);
	memset(s, 0, sizeof(*s));
}
