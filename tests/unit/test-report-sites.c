// SPDX-License-Identifier: GPL-2.0
/*
 * Call sites of memtrack report on synthetic artifacts with call stacks,
 * whose figures are worked out by hand: bytes, calls, the contribution to
 * the peak and the leaks of each site, merging by --stack-depth, folded
 * stacks for flame graphs, the sites that grew between two artifacts, the
 * Meta record's "attached", stacks without their Stack record.  Then the
 * contribution to the peak against a brute-force count on random events.
 *
 * `test-report-sites --write <dir>` writes the artifacts into <dir> for the
 * shell tests (tests/shell/report_sites.sh, report_flamegraph.sh):
 * stacks.msgpack, stacks-base.msgpack, stacks-truncated.msgpack,
 * attached.msgpack, nostacks.msgpack, temporary.msgpack.
 */
#include "util/artifact/artifact.h"
#include "util/report/report-sites.h"
#include "util/report/report-summary.h"
#include "test-artifact.h"

#define APP	"/usr/bin/app"
#define LIBC	"/lib/x86_64-linux-gnu/libc.so.6"
#define NO_STACK	UINT64_MAX	/* an event without a "stack" key */

struct ev {
	uint32_t kind;
	int32_t pid;
	uint64_t addr, size, old_addr;
	uint64_t stack;
};

struct frame {
	uint64_t id;
	const char *module, *symbol;
	uint64_t offset;
	const char *file;
	uint32_t line;
};

struct stack {
	uint64_t id;
	int32_t pid;
	uint32_t nr;
	uint64_t frames[6];
};

struct artifact_spec {
	const struct ev *ev;
	size_t nr_ev;
	const struct frame *frames;
	size_t nr_frames;
	const struct stack *stacks;
	size_t nr_stacks;
	bool attached;
	bool meta;
};

static struct mt_alloc_event alloc_event(const struct ev *e, uint64_t ts)
{
	return (struct mt_alloc_event){
		.kind = e->kind, .pid = e->pid, .tid = e->pid, .ts = ts,
		.addr = e->addr, .size = e->size, .old_addr = e->old_addr,
		.stack = e->stack == NO_STACK ? 0 : e->stack,
	};
}

static void pack_frame(msgpack_packer *pk, const struct frame *f)
{
	struct frame_record rec = {
		.id = f->id, .ip = 0x400000 + f->id * 0x100 + f->offset, .offset = f->offset,
		.module = f->module, .symbol = f->symbol, .file = f->file, .line = f->line,
	};

	pack_frame_record(pk, &rec);
}

static void pack_trailer(msgpack_packer *pk, void *arg)
{
	const struct artifact_spec *a = arg;
	size_t i;

	if (a->meta) {
		struct artifact_record run = { 0 };

		artifact_record__set_command(&run, "./app");
		artifact_record__set_root_pid(&run, 10);
		if (a->attached)
			artifact_record__set_attached(&run, true);
		artifact__pack_meta(pk, &run);
	}
	/* frames after the stacks that name them: any order must do */
	for (i = 0; i < a->nr_stacks; i++)
		pack_stack_record(pk, a->stacks[i].id, a->stacks[i].pid, a->stacks[i].frames,
				  a->stacks[i].nr);
	for (i = 0; i < a->nr_frames; i++)
		pack_frame(pk, &a->frames[i]);
}

/* the events in one zstd frame, the trailer in another */
static int write_spec(const char *path, const struct artifact_spec *a)
{
	struct mt_alloc_event *ev = calloc(a->nr_ev + 1, sizeof(*ev));
	size_t i;
	int err;

	if (!ev)
		return -ENOMEM;
	for (i = 0; i < a->nr_ev; i++)
		ev[i] = alloc_event(&a->ev[i], 1000 * (i + 1));
	err = test_write_artifact(path, ev, a->nr_ev, a->nr_ev, pack_trailer, (void *)a);
	free(ev);
	return err;
}

/* ---- the artifact with stacks --------------------------------------------- */

static const struct frame frames[] = {
	{ 1, APP, "make_buffer", 0x10, "app.c", 12 },
	{ 2, APP, "main", 0x40, "app.c", 40 },
	{ 3, LIBC, "__libc_start_main", 0x80, NULL, 0 },
	{ 4, APP, "make_list", 0x22, "list.c", 7 },
	{ 5, "/usr/lib/libweird.so", NULL, 0x1234, NULL, 0 },
	{ 6, APP, "parse;config", 0x8, "parse.c", 3 },
	{ 7, APP, "main", 0x58, "app.c", 44 },
};

static const struct stack stacks[] = {
	{ 10, 10, 3, { 1, 2, 3 } },
	{ 11, 10, 3, { 4, 2, 3 } },
	{ 12, 10, 3, { 1, 7, 3 } },	/* S10 but for its caller's offset */
	{ 13, 10, 4, { 5, 6, 2, 3 } },
	{ 14, 10, 2, { 99, 2 } },	/* frame 99 has no Frame record */
};

/*
 * live after each event, and the sites' live bytes; the peak is 1460 after
 * event 9: S10 400, S13 1050, S14 10
 */
static const struct ev events[] = {
	{ MT_MALLOC, 10, 0x1000, 100, 0, 10 },		/*  1:  100 */
	{ MT_MALLOC, 10, 0x2000, 200, 0, 11 },		/*  2:  300 */
	{ MT_MALLOC, 10, 0x3000, 300, 0, 12 },		/*  3:  600 */
	{ MT_FREE, 10, 0x1000, 0, 0, 10 },		/*  4:  500 */
	{ MT_CALLOC, 10, 0x4000, 50, 0, 13 },		/*  5:  550 */
	{ MT_MALLOC, 10, 0x5000, 400, 0, 10 },		/*  6:  950 */
	{ MT_FREE, 10, 0x3000, 0, 0, NO_STACK },	/*  7:  650 */
	{ MT_REALLOC, 10, 0x6000, 1000, 0x2000, 13 },	/*  8: 1450: S11's block moves to S13 */
	{ MT_MALLOC, 10, 0x7000, 10, 0, 14 },		/*  9: 1460, the peak */
	{ MT_FREE, 10, 0x5000, 0, 0, NO_STACK },	/* 10: 1060 */
	{ MT_MALLOC, 10, 0x8000, 5, 0, NO_STACK },	/* 11: 1065 */
	{ MT_FREE, 10, 0x7000, 0, 0, 12 },		/* 12: 1055: a Free's stack is not a site */
	{ MT_ALIGNED_ALLOC, 10, 0x9000, 64, 0, 12 },	/* 13: 1119 */
};

static const struct artifact_spec stacks_spec = {
	events, ARRAY_SIZE(events), frames, ARRAY_SIZE(frames),
	stacks, ARRAY_SIZE(stacks), false, true,
};

/* the base of a diff: other ids and offsets, the same names */
static const struct frame base_frames[] = {
	{ 101, APP, "make_buffer", 0x14, "app.c", 13 },
	{ 102, APP, "main", 0x44, "app.c", 41 },
	{ 103, LIBC, "__libc_start_main", 0x80, NULL, 0 },
	{ 104, APP, "make_list", 0x22, "list.c", 7 },
	{ 105, APP, "only_in_base", 0x2, NULL, 0 },
};

static const struct stack base_stacks[] = {
	{ 201, 10, 3, { 101, 102, 103 } },
	{ 202, 10, 3, { 104, 102, 103 } },
	{ 203, 10, 2, { 105, 102 } },
};

static const struct ev base_events[] = {
	{ MT_MALLOC, 10, 0x1000, 1000, 0, 201 },
	{ MT_MALLOC, 10, 0x2000, 50, 0, 202 },
	{ MT_MALLOC, 10, 0x3000, 300, 0, 203 },
};

static const struct artifact_spec base_spec = {
	base_events, ARRAY_SIZE(base_events), base_frames, ARRAY_SIZE(base_frames),
	base_stacks, ARRAY_SIZE(base_stacks), false, true,
};

/* attached to a running process: a free of a block from before */
static const struct ev attached_events[] = {
	{ MT_FREE, 10, 0xdead0, 0, 0, 10 },
	{ MT_MALLOC, 10, 0x1000, 100, 0, 10 },
};

static const struct artifact_spec attached_spec = {
	attached_events, ARRAY_SIZE(attached_events), frames, ARRAY_SIZE(frames),
	stacks, 1, true, true,
};

/*
 * temporary allocations: a block freed by the next allocator call of its
 * thread, of the size and stack of the allocation before (either rule)
 */
static const struct ev temporary_events[] = {
	{ MT_MALLOC, 10, 0x1000, 100, 0, 10 },		/* S10, freed next: temporary */
	{ MT_FREE, 10, 0x1000, 0, 0, NO_STACK },
	{ MT_MALLOC, 10, 0x2000, 200, 0, 11 },
	{ MT_MALLOC, 10, 0x3000, 300, 0, 11 },		/* S11, freed next: temporary */
	{ MT_FREE, 10, 0x3000, 0, 0, NO_STACK },
	{ MT_FREE, 10, 0x2000, 0, 0, NO_STACK },	/* not next: not temporary */
	{ MT_MALLOC, 10, 0x4000, 300, 0, 11 },		/* S11 again: temporary */
	{ MT_FREE, 10, 0x4000, 0, 0, NO_STACK },
};

static const struct artifact_spec temporary_spec = {
	temporary_events, ARRAY_SIZE(temporary_events), frames, ARRAY_SIZE(frames),
	stacks, 2, false, true,
};

static const struct ev plain_events[] = {
	{ MT_MALLOC, 10, 0x1000, 100, 0, NO_STACK },
	{ MT_MALLOC, 10, 0x2000, 50, 0, NO_STACK },
	{ MT_FREE, 10, 0x1000, 0, 0, NO_STACK },
};

static const struct artifact_spec plain_spec = {
	plain_events, ARRAY_SIZE(plain_events), NULL, 0, NULL, 0, false, true,
};

/* ---- reading ---------------------------------------------------------- */

static int summarize_filtered(const char *path, const struct report_filter *f,
			      struct report_summary *s)
{
	const struct artifact_record *r;
	struct artifact *a;
	int ret;

	CHECK(!report_summary__init(s, f), "init");
	s->sites = report_sites__new();
	CHECK(s->sites != NULL, "sites");
	ret = artifact__open(path, &a);
	CHECK(!ret, "open %s: %d", path, ret);
	if (ret)
		return ret;
	while ((ret = artifact__next(a, &r)) == 1)
		CHECK(!report_summary__add(s, r), "add");
	report_summary__finish(s);
	artifact__close(a);
	return ret;
}

static int summarize(const char *path, struct report_summary *s)
{
	return summarize_filtered(path, NULL, s);
}

/* the site whose first frame is named name (NULL: the one without a stack) */
static const struct report_site *site_named(const struct report_site_list *l,
					    const char *name, uint64_t stack)
{
	size_t i;

	for (i = 0; i < l->nr; i++) {
		const struct report_site *s = &l->sites[i];

		if (!name && s->kind == REPORT_SITE_NO_STACK)
			return s;
		if (name && s->nr_frames && !strcmp(s->frames[0]->name, name) &&
		    (!stack || s->stack == stack))
			return s;
	}
	return NULL;
}

static void check_site(const struct report_site *s, const char *what, uint64_t bytes,
		       uint64_t calls, uint64_t peak, uint64_t leaked, uint64_t leaked_count)
{
	CHECK(s != NULL, "%s: no such site", what);
	if (!s)
		return;
	CHECK(s->bytes == bytes, "%s bytes: %" PRIu64, what, s->bytes);
	CHECK(s->calls == calls, "%s calls: %" PRIu64, what, s->calls);
	CHECK(s->peak_bytes == peak, "%s peak: %" PRIu64, what, s->peak_bytes);
	CHECK(s->leaked_bytes == leaked, "%s leaked: %" PRIu64, what, s->leaked_bytes);
	CHECK(s->leaked_count == leaked_count, "%s leaked count: %" PRIu64, what,
	      s->leaked_count);
}

static void test_sites(void)
{
	const char *path = test_path("stacks");
	const struct report_site *top[8], *s;
	struct report_site_list l;
	struct report_summary sum;
	size_t n, nonzero;

	CHECK(!write_spec(path, &stacks_spec), "write");
	CHECK(summarize(path, &sum) == 0, "read");
	CHECK_U64(sum.total.peak_bytes, 1460, "peak");
	CHECK(report_sites__has_stacks(sum.sites), "has stacks");
	CHECK(!report_sites__resolve(sum.sites, 5, REPORT_MATCH_FRAME, &l), "resolve");
	CHECK_U64(l.nr, 6, "six sites");

	check_site(site_named(&l, "make_buffer", 10), "S10", 500, 2, 400, 0, 0);
	check_site(site_named(&l, "make_list", 11), "S11", 200, 1, 0, 0, 0);
	check_site(site_named(&l, "make_buffer", 12), "S12", 364, 2, 0, 64, 1);
	check_site(site_named(&l, "libweird.so+0x1234", 13), "S13", 1050, 2, 1050, 1050, 2);
	check_site(site_named(&l, "[unknown]", 14), "S14", 10, 1, 10, 0, 0);
	check_site(site_named(&l, NULL, 0), "no stack", 5, 1, 0, 5, 1);

	s = site_named(&l, "libweird.so+0x1234", 13);
	CHECK(s && s->nr_frames == 4 && !strcmp(s->frames[1]->symbol, "parse;config") &&
	      !strcmp(s->frames[3]->module, LIBC) && !s->frames[3]->file &&
	      s->frames[2]->line == 40 && !strcmp(s->frames[2]->file, "app.c") &&
	      s->frames[2]->offset == 0x40 && !s->frames[0]->symbol,
	      "S13's frames");
	s = site_named(&l, "[unknown]", 14);
	CHECK(s && s->nr_frames == 2 && !s->frames[0]->known && s->frames[0]->id == 99,
	      "a frame without its record");

	/* the rankings */
	n = report_site_list__top(&l, REPORT_SITE_BYTES, 10, top, &nonzero);
	CHECK(n == 6 && nonzero == 6 && top[0]->stack == 13 && top[1]->stack == 10 &&
	      top[2]->stack == 12 && top[3]->stack == 11 && top[4]->stack == 14 &&
	      top[5]->kind == REPORT_SITE_NO_STACK, "by bytes");
	n = report_site_list__top(&l, REPORT_SITE_CALLS, 4, top, &nonzero);
	CHECK(n == 4 && nonzero == 6 && top[0]->stack == 13 && top[1]->stack == 10 &&
	      top[2]->stack == 12 && top[3]->stack == 11, "by calls: ties by bytes");
	n = report_site_list__top(&l, REPORT_SITE_PEAK, 0, top, &nonzero);
	CHECK(n == 3 && top[0]->stack == 13 && top[1]->stack == 10 && top[2]->stack == 14,
	      "by peak: only the sites live at the peak");
	CHECK_U64(top[0]->peak_bytes + top[1]->peak_bytes + top[2]->peak_bytes,
		  sum.total.peak_bytes, "the peak is the sum of the sites'");
	n = report_site_list__top(&l, REPORT_SITE_LEAKED, 2, top, &nonzero);
	CHECK(n == 2 && nonzero == 3 && top[0]->stack == 13 && top[1]->stack == 12,
	      "by leaked");
	report_site_list__exit(&l);
	report_summary__exit(&sum);
}

static void test_depth(void)
{
	const char *path = test_path("stacks");
	struct report_site_list l;
	struct report_summary sum;
	const struct report_site *s;

	CHECK(!write_spec(path, &stacks_spec), "write");
	summarize(path, &sum);

	/* one frame: S10 and S12 are both make_buffer+0x10 */
	CHECK(!report_sites__resolve(sum.sites, 1, REPORT_MATCH_FRAME, &l), "resolve 1");
	CHECK_U64(l.nr, 5, "five sites at depth 1");
	s = site_named(&l, "make_buffer", 0);
	check_site(s, "make_buffer at depth 1", 864, 4, 400, 64, 1);
	CHECK(s && s->stack == 10 && s->nr_stacks == 2 && s->nr_frames == 1,
	      "the smallest id, two stacks, one frame");
	report_site_list__exit(&l);

	CHECK(!report_sites__resolve(sum.sites, 2, REPORT_MATCH_FRAME, &l), "resolve 2");
	CHECK_U64(l.nr, 6, "six sites at depth 2: main+0x40 and main+0x58");
	report_site_list__exit(&l);

	/* by name, main+0x40 and main+0x58 are both main */
	CHECK(!report_sites__resolve(sum.sites, 0, REPORT_MATCH_NAME, &l), "resolve by name");
	CHECK_U64(l.nr, 5, "five sites by name");
	s = site_named(&l, "make_buffer", 0);
	check_site(s, "make_buffer by name", 864, 4, 400, 64, 1);
	CHECK(s && s->nr_frames == 3, "whole stacks");
	report_site_list__exit(&l);
	report_summary__exit(&sum);
}

static void check_folded(struct report_sites *ss, unsigned int depth,
			 enum report_site_key key, const char *const *want, size_t nr_want)
{
	struct report_folded *f;
	size_t n, i;
	char line[256];

	CHECK(!report_sites__folded(ss, depth, key, &f, &n), "folded");
	CHECK(n == nr_want, "%zu lines, not %zu", n, nr_want);
	for (i = 0; i < n && i < nr_want; i++) {
		snprintf(line, sizeof(line), "%s %" PRIu64, f[i].line, f[i].weight);
		CHECK(!strcmp(line, want[i]), "line %zu: '%s' != '%s'", i, line, want[i]);
	}
	report_folded__free(f, n);
}

static void test_folded(void)
{
	static const char *const bytes[] = {
		"[no stack] 5",
		"__libc_start_main;main;make_buffer 864",
		"__libc_start_main;main;make_list 200",
		"__libc_start_main;main;parse:config;libweird.so+0x1234 1050",
		"main;[unknown] 10",
	};
	static const char *const count[] = {
		"[no stack] 1",
		"__libc_start_main;main;make_buffer 4",
		"__libc_start_main;main;make_list 1",
		"__libc_start_main;main;parse:config;libweird.so+0x1234 2",
		"main;[unknown] 1",
	};
	static const char *const peak[] = {
		"__libc_start_main;main;make_buffer 400",
		"__libc_start_main;main;parse:config;libweird.so+0x1234 1050",
		"main;[unknown] 10",
	};
	static const char *const leaked[] = {
		"[no stack] 5",
		"__libc_start_main;main;make_buffer 64",
		"__libc_start_main;main;parse:config;libweird.so+0x1234 1050",
	};
	static const char *const shallow[] = {
		"[no stack] 5",
		"main;[unknown] 10",
		"main;make_buffer 864",
		"main;make_list 200",
		"parse:config;libweird.so+0x1234 1050",
	};
	const char *path = test_path("stacks");
	struct report_summary sum;

	CHECK(!write_spec(path, &stacks_spec), "write");
	summarize(path, &sum);
	check_folded(sum.sites, 0, REPORT_SITE_BYTES, bytes, ARRAY_SIZE(bytes));
	check_folded(sum.sites, 0, REPORT_SITE_CALLS, count, ARRAY_SIZE(count));
	check_folded(sum.sites, 2, REPORT_SITE_BYTES, shallow, ARRAY_SIZE(shallow));
	check_folded(sum.sites, 0, REPORT_SITE_PEAK, peak, ARRAY_SIZE(peak));
	check_folded(sum.sites, 0, REPORT_SITE_LEAKED, leaked, ARRAY_SIZE(leaked));
	report_summary__exit(&sum);
}

/* base and head paired by line, as difffolded.pl pairs them */
static void test_folded_diff(void)
{
	static const struct { const char *line; uint64_t base, head; } want[] = {
		{ "[no stack]", 0, 5 },
		{ "__libc_start_main;main;make_buffer", 1000, 864 },
		{ "__libc_start_main;main;make_list", 50, 200 },
		{ "__libc_start_main;main;parse:config;libweird.so+0x1234", 0, 1050 },
		{ "main;[unknown]", 0, 10 },
		{ "main;only_in_base", 300, 0 },
	};
	const char *bpath = test_path("base"), *hpath = test_path("head");
	struct report_summary base, head;
	struct report_folded *f;
	size_t n, i;

	CHECK(!write_spec(bpath, &base_spec), "write base");
	CHECK(!write_spec(hpath, &stacks_spec), "write head");
	summarize(bpath, &base);
	summarize(hpath, &head);
	CHECK(!report_sites__folded_diff(base.sites, head.sites, 0, REPORT_SITE_BYTES, &f, &n),
	      "folded diff");
	CHECK_U64(n, ARRAY_SIZE(want), "lines of either");
	for (i = 0; i < n && i < ARRAY_SIZE(want); i++)
		CHECK(!strcmp(f[i].line, want[i].line) && f[i].base == want[i].base &&
		      f[i].weight == want[i].head, "line %zu: '%s' %" PRIu64 " %" PRIu64,
		      i, f[i].line, f[i].base, f[i].weight);
	report_folded__free(f, n);
	report_summary__exit(&base);
	report_summary__exit(&head);
}

/* temporary allocations and the blocks live at the peak, per site */
static void test_temporary_and_peak_count(void)
{
	static const char *const temporary[] = {
		"__libc_start_main;main;make_buffer 1",
		"__libc_start_main;main;make_list 2",
	};
	const char *path = test_path("temporary");
	struct report_site_list l;
	struct report_summary sum;
	const struct report_site *s10, *s11;

	CHECK(!write_spec(path, &temporary_spec), "write");
	summarize(path, &sum);
	CHECK_U64(sum.total.temporary_count, 3, "three temporary");
	CHECK(!report_sites__resolve(sum.sites, 5, REPORT_MATCH_FRAME, &l), "resolve");
	s10 = site_named(&l, "make_buffer", 10);
	s11 = site_named(&l, "make_list", 11);
	CHECK(s10 && s10->temporary_count == 1 && s10->temporary_bytes == 100, "S10 temporary");
	CHECK(s11 && s11->temporary_count == 2 && s11->temporary_bytes == 600, "S11 temporary");
	CHECK(s11 && report_site__value(s11, REPORT_SITE_TEMPORARY) == 2, "the temporary key");
	CHECK(report_site_key__parse("temporary") == REPORT_SITE_TEMPORARY, "its name");
	report_site_list__exit(&l);
	check_folded(sum.sites, 0, REPORT_SITE_TEMPORARY, temporary, ARRAY_SIZE(temporary));
	report_summary__exit(&sum);

	/* at the peak of stacks_spec: S10's 0x5000, S13's 0x4000 and 0x6000, S14's 0x7000 */
	path = test_path("stacks");
	CHECK(!write_spec(path, &stacks_spec), "write");
	summarize(path, &sum);
	CHECK_U64(sum.total.peak_count, 4, "blocks live at the peak");
	CHECK(!report_sites__resolve(sum.sites, 5, REPORT_MATCH_FRAME, &l), "resolve");
	CHECK_U64(site_named(&l, "libweird.so+0x1234", 13)->peak_count, 2, "S13's two");
	CHECK_U64(site_named(&l, "make_buffer", 10)->peak_count, 1, "S10's one");
	CHECK_U64(site_named(&l, "make_buffer", 12)->peak_count, 0, "S12's none");
	report_site_list__exit(&l);
	report_summary__exit(&sum);
}

static void test_diff(void)
{
	const char *bpath = test_path("base"), *hpath = test_path("head");
	struct report_summary base, head;
	struct report_site_list bl, hl;
	struct report_site_change *c;
	size_t n;

	CHECK(!write_spec(bpath, &base_spec), "write base");
	CHECK(!write_spec(hpath, &stacks_spec), "write head");
	summarize(bpath, &base);
	summarize(hpath, &head);
	CHECK(!report_sites__resolve(base.sites, 5, REPORT_MATCH_NAME, &bl), "base");
	CHECK(!report_sites__resolve(head.sites, 5, REPORT_MATCH_NAME, &hl), "head");

	/* bytes: make_buffer shrank 1000 -> 864, only_in_base went */
	CHECK(!report_site_list__diff(&bl, &hl, 5, REPORT_SITE_BYTES, &c, &n), "diff bytes");
	CHECK_U64(n, 4, "four grew");
	if (n == 4) {
		CHECK(!c[0].base && c[0].head->stack == 13 && c[0].growth == 1050,
		      "S13 is new");
		CHECK(c[1].base && c[1].base->stack == 202 && c[1].head->stack == 11 &&
		      c[1].growth == 150 && c[1].base->bytes == 50, "make_list: 50 -> 200");
		CHECK(!c[2].base && c[2].head->stack == 14 && c[2].growth == 10, "S14");
		CHECK(!c[3].base && c[3].head->kind == REPORT_SITE_NO_STACK &&
		      c[3].growth == 5, "no stack");
	}
	free(c);

	/* calls: make_buffer 1 -> 4 (S10 and S12 by name) */
	CHECK(!report_site_list__diff(&bl, &hl, 5, REPORT_SITE_CALLS, &c, &n), "diff calls");
	CHECK_U64(n, 4, "four grew in calls");
	if (n == 4) {
		CHECK(c[0].base && c[0].base->stack == 201 && c[0].head->stack == 10 &&
		      c[0].growth == 3, "make_buffer: 1 -> 4 calls");
		CHECK(!c[1].base && c[1].head->stack == 13 && c[1].growth == 2, "S13 calls");
		CHECK(c[2].head->stack == 14 && c[3].head->kind == REPORT_SITE_NO_STACK,
		      "ties by bytes");
	}
	free(c);
	report_site_list__exit(&bl);
	report_site_list__exit(&hl);

	/* one frame deep: make_buffer leaked 1000 in base, 64 in head */
	CHECK(!report_sites__resolve(base.sites, 1, REPORT_MATCH_NAME, &bl), "base 1");
	CHECK(!report_sites__resolve(head.sites, 1, REPORT_MATCH_NAME, &hl), "head 1");
	CHECK(!report_site_list__diff(&bl, &hl, 1, REPORT_SITE_LEAKED, &c, &n), "diff leaked");
	CHECK(n == 2 && c[0].head->stack == 13 && c[0].growth == 1050 && !c[0].base &&
	      c[1].head->kind == REPORT_SITE_NO_STACK && c[1].growth == 5,
	      "leaks at depth 1");
	free(c);
	report_site_list__exit(&bl);
	report_site_list__exit(&hl);
	report_summary__exit(&base);
	report_summary__exit(&head);
}

static void test_attached_and_plain(void)
{
	const char *path = test_path("attached");
	struct report_summary s;

	CHECK(!write_spec(path, &attached_spec), "write attached");
	summarize(path, &s);
	CHECK(s.has_meta && s.meta.attached, "attached");
	CHECK_U64(s.total.unknown_frees, 1, "the free of a block from before");
	report_summary__exit(&s);

	path = test_path("plain");
	CHECK(!write_spec(path, &plain_spec), "write plain");
	summarize(path, &s);
	CHECK(s.has_meta && !s.meta.attached, "not attached");
	CHECK(!report_sites__has_stacks(s.sites), "no stacks");
	report_summary__exit(&s);
}

/* the trailer cut off: the stack ids stay apart, without frames */
static void test_unresolved(void)
{
	static const char *const want[] = {
		"[no stack] 5",
		"[unknown stack] 2124",
	};
	struct artifact_spec spec = stacks_spec;
	const char *path = test_path("unresolved");
	struct report_site_list l;
	struct report_summary s;

	spec.nr_stacks = 0;
	spec.nr_frames = 0;
	CHECK(!write_spec(path, &spec), "write");
	summarize(path, &s);
	CHECK(report_sites__has_stacks(s.sites), "events have stacks");
	CHECK(!report_sites__resolve(s.sites, 1, REPORT_MATCH_FRAME, &l), "resolve");
	CHECK_U64(l.nr, 6, "every stack id apart");
	CHECK(l.sites[0].kind == REPORT_SITE_UNRESOLVED && l.sites[0].stack == 10 &&
	      l.sites[0].nr_frames == 0 && l.sites[0].bytes == 500, "S10 unresolved");
	report_site_list__exit(&l);
	check_folded(s.sites, 0, false, want, ARRAY_SIZE(want));
	report_summary__exit(&s);
}

/* with the time filter too, the sites add up to the whole tree */
static void check_sums(const struct report_summary *s, struct report_sites *ss,
		       const char *what)
{
	uint64_t bytes = 0, calls = 0, peak = 0, leaked = 0, leaked_count = 0;
	struct report_site_list l;
	size_t i;

	CHECK(!report_sites__resolve(ss, 2, REPORT_MATCH_FRAME, &l), "resolve");
	for (i = 0; i < l.nr; i++) {
		bytes += l.sites[i].bytes;
		calls += l.sites[i].calls;
		peak += l.sites[i].peak_bytes;
		leaked += l.sites[i].leaked_bytes;
		leaked_count += l.sites[i].leaked_count;
	}
	CHECK(bytes == s->total.bytes_allocated, "%s: bytes %" PRIu64, what, bytes);
	CHECK(calls == s->total.allocs, "%s: calls %" PRIu64, what, calls);
	CHECK(peak == s->total.peak_bytes, "%s: peak %" PRIu64, what, peak);
	CHECK(leaked == s->total.leaked_bytes, "%s: leaked %" PRIu64, what, leaked);
	CHECK(leaked_count == s->total.leaked_count, "%s: leaked count", what);
	report_site_list__exit(&l);
}

static void test_time_window(void)
{
	const char *path = test_path("stacks");
	struct report_filter f = { .has_time = true, .from_ns = 3500, .to_ns = 8500 };
	struct report_site_list l;
	struct report_summary s;

	CHECK(!write_spec(path, &stacks_spec), "write");
	summarize(path, &s);
	check_sums(&s, s.sites, "whole");
	report_summary__exit(&s);

	/* events 5..9: S13's calloc and realloc, S10's 400, S14's 10 */
	summarize_filtered(path, &f, &s);
	check_sums(&s, s.sites, "window");
	CHECK_U64(s.total.peak_bytes, 1460, "window peak");
	CHECK(!report_sites__resolve(s.sites, 5, REPORT_MATCH_FRAME, &l), "resolve");
	check_site(site_named(&l, "make_buffer", 10), "S10 in the window", 400, 1, 400, 0, 0);
	check_site(site_named(&l, "make_buffer", 12), "S12 in the window", 0, 0, 0, 0, 0);
	check_site(site_named(&l, "libweird.so+0x1234", 13), "S13 in the window",
		   1050, 2, 1050, 1050, 2);
	check_site(site_named(&l, "[unknown]", 14), "S14 in the window", 10, 1, 10, 0, 0);
	report_site_list__exit(&l);
	report_summary__exit(&s);
}

/* ---- the peak, lazily, against a brute-force count ---------------------- */

#define RANDOM_STACKS	23
#define RANDOM_BLOCKS	64
#define RANDOM_EVENTS	5000

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void test_random_peak(void)
{
	static struct ev ev[RANDOM_EVENTS];
	static struct stack st[RANDOM_STACKS];
	static struct frame fr[RANDOM_STACKS];
	static char names[RANDOM_STACKS][16];
	uint64_t block_size[RANDOM_BLOCKS] = { 0 }, block_stack[RANDOM_BLOCKS];
	uint64_t live[RANDOM_STACKS + 1] = { 0 }, at_peak[RANDOM_STACKS + 1] = { 0 };
	uint64_t total = 0, peak = 0;
	struct artifact_spec spec = { ev, RANDOM_EVENTS, fr, RANDOM_STACKS,
				      st, RANDOM_STACKS, false, true };
	const char *path = test_path("random");
	struct report_site_list l;
	struct report_summary s;
	size_t i, k, bad = 0;

	for (i = 0; i < RANDOM_STACKS; i++) {
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
		fr[i] = (struct frame){ i + 1, APP, names[i], i, NULL, 0 };
		st[i] = (struct stack){ 1000 + i, 1, 1, { i + 1 } };
	}
	for (i = 0; i < RANDOM_EVENTS; i++) {
		size_t b = rnd() % RANDOM_BLOCKS, sid = rnd() % (RANDOM_STACKS + 1);
		uint64_t stack = sid == RANDOM_STACKS ? NO_STACK : 1000 + sid;

		if (block_size[b] && rnd() % 3) {
			ev[i] = (struct ev){ MT_FREE, 1, 0x1000 + b * 16, 0, 0, NO_STACK };
			live[block_stack[b]] -= block_size[b];
			total -= block_size[b];
			block_size[b] = 0;
		} else {
			uint64_t size = 1 + rnd() % 1000;

			if (block_size[b]) {	/* realloc in place */
				ev[i] = (struct ev){ MT_REALLOC, 1, 0x1000 + b * 16, size,
						     0x1000 + b * 16, stack };
				live[block_stack[b]] -= block_size[b];
				total -= block_size[b];
			} else {
				ev[i] = (struct ev){ MT_MALLOC, 1, 0x1000 + b * 16, size,
						     0, stack };
			}
			block_size[b] = size;
			block_stack[b] = sid;
			live[sid] += size;
			total += size;
		}
		if (total > peak) {
			peak = total;
			memcpy(at_peak, live, sizeof(live));
		}
	}
	CHECK(!write_spec(path, &spec), "write");
	summarize(path, &s);
	CHECK_U64(s.total.peak_bytes, peak, "random peak");
	CHECK(!report_sites__resolve(s.sites, 5, REPORT_MATCH_FRAME, &l), "resolve");
	for (i = 0; i < l.nr; i++) {
		const struct report_site *site = &l.sites[i];

		k = site->kind == REPORT_SITE_NO_STACK ? RANDOM_STACKS : site->stack - 1000;
		if (site->peak_bytes != at_peak[k] || live[k] != site->leaked_bytes)
			bad++;
	}
	CHECK(bad == 0, "%zu of %zu sites have another peak or leak", bad, l.nr);
	report_site_list__exit(&l);
	report_summary__exit(&s);
}

/* ---- artifacts for the shell tests -------------------------------------- */

static int write_samples(const char *dir)
{
	static const struct { const char *name; const struct artifact_spec *spec; } files[] = {
		{ "stacks.msgpack", &stacks_spec },
		{ "stacks-base.msgpack", &base_spec },
		{ "attached.msgpack", &attached_spec },
		{ "nostacks.msgpack", &plain_spec },
		{ "temporary.msgpack", &temporary_spec },
	};
	struct artifact_spec events_only = stacks_spec;
	char path[1024], cut[1024];
	unsigned char *buf;
	size_t i, len, events_len;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(files) && !err; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		err = write_spec(path, files[i].spec);
	}
	if (err)
		return err;
	/* stacks.msgpack cut inside its trailer frame */
	events_only.nr_stacks = events_only.nr_frames = 0;
	events_only.meta = false;
	snprintf(cut, sizeof(cut), "%s/stacks-truncated.msgpack", dir);
	err = write_spec(cut, &events_only);
	buf = err ? NULL : test_read_file(cut, &len);
	if (!buf)
		return err ? err : -EIO;
	free(buf);
	events_len = len;
	snprintf(path, sizeof(path), "%s/stacks.msgpack", dir);
	buf = test_read_file(path, &len);
	if (!buf)
		return -EIO;
	/* the same events frame, then 4 bytes of the trailer's */
	err = test_write_bytes(cut, buf, events_len + 4 < len ? events_len + 4 : len - 1);
	free(buf);
	return err;
}

int main(int argc, char **argv)
{
	int written = test_write_mode(argc, argv, write_samples);

	if (written >= 0)
		return written;
	test_sites();
	test_depth();
	test_folded();
	test_folded_diff();
	test_temporary_and_peak_count();
	test_diff();
	test_time_window();
	test_attached_and_plain();
	test_unresolved();
	test_random_peak();
	test_tmpdir_remove();
	return test_done("test-report-sites");
}
