// SPDX-License-Identifier: GPL-2.0
/*
 * The figures of memtrack report on synthetic artifacts whose answers are
 * worked out by hand: peak, leaks, unknown frees, realloc chains with
 * realloc(NULL, n) and realloc(p, 0), temporaries, failed calls, mappings,
 * several processes, the pid and time filters.
 *
 * `test-report --write <dir>` writes the same artifacts into <dir> for the
 * shell tests (tests/shell/report_*.sh): single.msgpack, tree.msgpack,
 * codspeed.msgpack (no header, no trailer), nothing.msgpack (a run without
 * events), truncated.msgpack (cut inside the trailer), killed.msgpack (cut
 * before it), garbage.msgpack, empty.msgpack (0 bytes), run.jsonl.
 */
#include "util/artifact/artifact.h"
#include "util/report/report-summary.h"
#include "util/report/report-timeline.h"
#include "test-artifact.h"

#define SEC	1000000000ULL
#define T0	(5 * SEC)

/* ---- one process: every kind of call ------------------------------------- */

static const struct mt_alloc_event single[] = {
	{ MT_MALLOC, 10, 10, 0, T0 + 1000, 0x1000, 100, 0 },
	{ MT_MALLOC, 10, 10, 0, T0 + 2000, 0x2000, 50, 0 },
	{ MT_FREE, 10, 10, 0, T0 + 3000, 0x1000, 0, 0 },
	{ MT_REALLOC, 10, 10, 0, T0 + 4000, 0x3000, 30, 0 },	/* realloc(NULL, 30) */
	{ MT_REALLOC, 10, 10, 0, T0 + 5000, 0x4000, 300, 0x3000 },	/* moves (peak 350): 0x3000 temporary */
	{ MT_REALLOC, 10, 10, 0, T0 + 6000, 0, 0, 0x4000 },	/* realloc(p, 0): temporary */
	{ MT_FREE, 10, 10, 0, T0 + 7000, 0x9999, 0, 0 },	/* unknown */
	{ MT_CALLOC, 10, 10, 0, T0 + 8000, 0x5000, 20, 0 },
	{ MT_FREE, 10, 10, 0, T0 + 9000, 0x5000, 0, 0 },	/* temporary */
	{ MT_ALIGNED_ALLOC, 10, 10, 0, T0 + 10000, 0x6000, 64, 0 },
	{ MT_REALLOC, 10, 10, 0, T0 + 11000, 0x2000, 80, 0x2000 },	/* in place */
	{ MT_MMAP, 10, 10, 0, T0 + 12000, 0x7f0000, 4096, 0 },
	{ MT_MMAP, 10, 10, 0, T0 + 12500, (uint64_t)-12, 8192, 0 },	/* ENOMEM */
	{ MT_MUNMAP, 10, 10, 0, T0 + 13000, 0x7f0000, 4096, 0 },
	{ MT_BRK, 10, 10, 0, T0 + 14000, 0x10000, 0, 0 },
	{ MT_BRK, 10, 10, 0, T0 + 15000, 0x12000, 0, 0 },
	{ MT_MALLOC, 10, 10, 0, T0 + 16000, 0, 10, 0 },		/* failed */
	{ MT_REALLOC, 10, 10, 0, T0 + 17000, 0, 1000, 0x6000 },	/* failed */
	{ MT_FREE, 10, 10, 0, T0 + 18000, 0, 0, 0 },		/* free(NULL) */
};

static void pack_single_trailer(msgpack_packer *pk, void *arg)
{
	(void)arg;
	test_pack_meta(pk, "./single", 10, T0, T0 + SEC, 0, 0);
	test_pack_process(pk, 10, 1, "single", "/usr/bin/single", 0);
}

static int write_single(const char *path)
{
	return test_write_artifact(path, single, ARRAY_SIZE(single), 4,
				   pack_single_trailer, NULL);
}

/* ---- a process tree ---------------------------------------------------- */

static const struct mt_alloc_event tree[] = {
	{ MT_MALLOC, 20, 20, 0, T0, 0x1000, 1000, 0 },
	{ MT_MALLOC, 21, 21, 0, T0 + 1 * SEC, 0x1000, 500, 0 },	/* same address, other pid */
	{ MT_FREE, 21, 21, 0, T0 + 1 * SEC + 1, 0x2000, 0, 0 },	/* the parent's block */
	{ MT_MALLOC, 22, 23, 0, T0 + 2 * SEC, 0x5000, 2000, 0 },
	{ MT_FREE, 20, 20, 0, T0 + 3 * SEC, 0x1000, 0, 0 },
	{ MT_MALLOC, 30, 30, 0, T0 + 4 * SEC, 0x1000, 4000, 0 },
	{ MT_FREE, 30, 30, 0, T0 + 5 * SEC, 0x1000, 0, 0 },
};

static void pack_tree_trailer(msgpack_packer *pk, void *arg)
{
	(void)arg;
	test_pack_meta(pk, "./parent", 20, T0, T0 + 6 * SEC, 0, 0);
	test_pack_process(pk, 20, 1, "parent", "/bin/parent", 0);
	test_pack_process(pk, 21, 20, "child", "/bin/child", 9);
	test_pack_process(pk, 22, 21, "grandchild", NULL, 1 << 8);
	test_pack_process(pk, 30, 1, "other", "/bin/other", 0);
}

static int write_tree(const char *path)
{
	return test_write_artifact(path, tree, ARRAY_SIZE(tree), 3,
				   pack_tree_trailer, NULL);
}

/* ---- reading ---------------------------------------------------------- */

static const int32_t *selected_pids;
static size_t nr_selected_pids;

static bool select_listed(int32_t pid, void *arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < nr_selected_pids; i++)
		if (selected_pids[i] == pid)
			return true;
	return false;
}

/* reads path into s; returns artifact__next()'s last answer */
static int summarize(const char *path, const struct report_filter *f,
		     struct report_summary *s)
{
	const struct artifact_record *r;
	struct artifact *a;
	int ret;

	CHECK(!report_summary__init(s, f), "init");
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

static void test_single(void)
{
	const char *path = test_path("single");
	struct report_summary s;
	const struct report_heap *h = &s.total;
	struct report_process *p;

	CHECK(!write_single(path), "write");
	CHECK(summarize(path, NULL, &s) == 0, "read");
	CHECK_U64(h->counts[MT_MALLOC], 3, "Malloc");
	CHECK_U64(h->counts[MT_CALLOC], 1, "Calloc");
	CHECK_U64(h->counts[MT_ALIGNED_ALLOC], 1, "AlignedAlloc");
	CHECK_U64(h->counts[MT_REALLOC], 5, "Realloc");
	CHECK_U64(h->counts[MT_FREE], 4, "Free");
	CHECK_U64(h->counts[MT_MMAP], 2, "Mmap");
	CHECK_U64(h->counts[MT_MUNMAP], 1, "Munmap");
	CHECK_U64(h->counts[MT_BRK], 2, "Brk");
	CHECK_U64(h->allocs, 7, "allocations");
	CHECK_U64(h->frees, 5, "frees");
	CHECK_U64(h->bytes_allocated, 100 + 50 + 30 + 300 + 20 + 64 + 80, "bytes allocated");
	CHECK_U64(h->bytes_freed, 100 + 30 + 300 + 20 + 50, "bytes freed");
	CHECK_U64(h->peak_bytes, 350, "peak");
	CHECK_U64(report_summary__rel_ns(&s, h->peak_ts), 4000, "peak time");
	CHECK_U64(h->leaked_count, 2, "leaked count");
	CHECK_U64(h->leaked_bytes, 64 + 80, "leaked bytes");
	CHECK_U64(h->live_bytes, 144, "live bytes");
	CHECK_U64(h->unknown_frees, 1, "unknown frees");
	CHECK_U64(h->temporary_count, 3, "temporaries");
	CHECK_U64(h->temporary_bytes, 30 + 300 + 20, "temporary bytes");
	CHECK_U64(h->failed_allocs, 2, "failed allocations");
	CHECK_U64(h->mmap_bytes, 4096, "mmap bytes");
	CHECK_U64(h->munmap_bytes, 4096, "munmap bytes");
	CHECK_U64(h->brk_growth, 0x2000, "brk growth");
	CHECK_U64(h->overwritten, 0, "overwritten");
	CHECK_U64(report_hist__bucket(64), 7, "bucket of 64");
	CHECK_U64(report_hist__bucket(63), 6, "bucket of 63");
	CHECK_U64(report_hist__bucket(0), 0, "bucket of 0");
	CHECK_U64(s.hist[7], 3, "[64,128): 100, 64, 80");
	CHECK_U64(s.hist[report_hist__bucket(300)], 1, "[256,512)");
	CHECK_U64(s.records, ARRAY_SIZE(single) + 2, "records");
	CHECK(s.has_meta && !strcmp(s.meta.command, "./single"), "meta");
	CHECK_U64(s.nr_procs, 1, "processes");
	p = report_summary__process(&s, 10);
	CHECK(p && p->has_info && !strcmp(p->comm, "single") && p->ppid == 1, "process info");
	CHECK(p && p->heap.peak_bytes == 350 && p->heap.leaked_bytes == 144 &&
	      p->heap.unknown_frees == 1 && p->heap.temporary_count == 3,
	      "per-process figures");
	report_summary__exit(&s);
}

static void test_tree(void)
{
	const char *path = test_path("tree");
	struct report_summary s;
	struct report_process *p;

	CHECK(!write_tree(path), "write");
	CHECK(summarize(path, NULL, &s) == 0, "read");
	CHECK_U64(s.total.peak_bytes, 6500, "tree peak");
	CHECK_U64(report_summary__rel_ns(&s, s.total.peak_ts), 4 * SEC, "tree peak time");
	CHECK_U64(s.total.leaked_count, 2, "tree leaks");
	CHECK_U64(s.total.leaked_bytes, 2500, "tree leaked bytes");
	CHECK_U64(s.total.unknown_frees, 1, "tree unknown frees");
	CHECK_U64(s.nr_procs, 4, "tree processes");
	p = report_summary__process(&s, 21);
	CHECK(p && p->heap.peak_bytes == 500 && p->heap.unknown_frees == 1 &&
	      p->heap.leaked_bytes == 500 && p->exit_code == 9 && p->ppid == 20,
	      "child figures");
	p = report_summary__process(&s, 22);
	CHECK(p && p->heap.peak_bytes == 2000 && !p->exe && p->exit_code == 256,
	      "grandchild figures");
	p = report_summary__process(&s, 30);
	CHECK(p && p->heap.peak_bytes == 4000 && p->heap.leaked_count == 0, "other figures");
	report_summary__exit(&s);
}

static void test_filters(void)
{
	const char *path = test_path("tree");
	static const int32_t family[] = { 20, 21, 22 }, child[] = { 21 };
	struct report_filter f = { .pid_selected = select_listed };
	struct report_summary s;

	CHECK(!write_tree(path), "write");
	selected_pids = family;
	nr_selected_pids = ARRAY_SIZE(family);
	summarize(path, &f, &s);
	CHECK_U64(s.total.peak_bytes, 3500, "family peak");
	CHECK_U64(report_summary__rel_ns(&s, s.total.peak_ts), 2 * SEC, "family peak time");
	CHECK_U64(s.total.leaked_bytes, 2500, "family leaks");
	CHECK_U64(s.nr_procs, 3, "family processes");
	CHECK(!report_summary__process(&s, 30), "pid 30 left out");
	report_summary__exit(&s);

	selected_pids = child;
	nr_selected_pids = 1;
	summarize(path, &f, &s);
	CHECK_U64(s.total.peak_bytes, 500, "child peak");
	CHECK_U64(s.total.counts[MT_MALLOC], 1, "child mallocs");
	CHECK_U64(s.total.unknown_frees, 1, "child unknown frees");
	report_summary__exit(&s);

	/* 2.5 s .. 4.5 s: the parent's free and pid 30's malloc */
	memset(&f, 0, sizeof(f));
	f.has_time = true;
	f.from_ns = 2500000000ULL;
	f.to_ns = 4500000000ULL;
	summarize(path, &f, &s);
	CHECK_U64(s.total.counts[MT_FREE], 1, "window frees");
	CHECK_U64(s.total.counts[MT_MALLOC], 1, "window mallocs");
	CHECK_U64(s.total.bytes_allocated, 4000, "window bytes allocated");
	CHECK_U64(s.total.bytes_freed, 1000, "window bytes freed");
	CHECK_U64(s.total.peak_bytes, 6500, "window peak (earlier blocks count)");
	CHECK_U64(s.total.leaked_count, 0, "window leaks");
	CHECK_U64(s.events, 2, "window events");
	report_summary__exit(&s);
}

static void test_overwritten(void)
{
	const struct mt_alloc_event ev[] = {
		{ MT_MALLOC, 1, 1, 0, 1, 0x100, 10, 0 },
		{ MT_MALLOC, 1, 1, 0, 2, 0x100, 30, 0 },	/* its free was missed */
		{ MT_FREE, 1, 1, 0, 3, 0x100, 0, 0 },
	};
	const char *path = test_path("overwritten");
	struct report_summary s;

	CHECK(!test_write_artifact(path, ev, ARRAY_SIZE(ev), 0, NULL, NULL), "write");
	summarize(path, NULL, &s);
	CHECK_U64(s.total.overwritten, 1, "overwritten");
	CHECK_U64(s.total.peak_bytes, 30, "peak without the lost block");
	CHECK_U64(s.total.live_bytes, 0, "nothing live");
	CHECK_U64(s.total.leaked_count, 0, "no leak");
	CHECK(!s.has_meta, "no meta");
	report_summary__exit(&s);
}

/* many blocks: the live table grows, shrinks and stays consistent */
static void test_many(void)
{
	const char *path = test_path("many");
	size_t n = 200000, i, k = 0;
	struct mt_alloc_event *ev = calloc(2 * n, sizeof(*ev));
	struct report_summary s;
	uint64_t live = 0;

	for (i = 0; i < n; i++)
		ev[k++] = test_event(MT_MALLOC, 1 + i % 2, i, 0x10000 + 16 * i, 1 + i % 7, 0);
	for (i = 0; i < n; i += 2)	/* free every other block, leave the rest */
		ev[k++] = test_event(MT_FREE, 1 + i % 2, n + i, 0x10000 + 16 * i, 0, 0);
	for (i = 1; i < n; i += 2)
		live += 1 + i % 7;
	CHECK(!test_write_artifact(path, ev, k, 0, NULL, NULL), "write");
	summarize(path, NULL, &s);
	CHECK_U64(s.total.leaked_count, n / 2, "leaked count");
	CHECK_U64(s.total.leaked_bytes, live, "leaked bytes");
	CHECK_U64(s.total.frees, n / 2, "frees");
	CHECK_U64(s.total.unknown_frees, 0, "unknown frees");
	report_summary__exit(&s);
	free(ev);
}

static void name_pid(int32_t pid, char *buf, size_t len, void *arg)
{
	(void)arg;
	snprintf(buf, len, "proc '%d'", pid);
}

/* bins merge as time runs on, and a short peak survives them */
static void test_timeline(void)
{
	struct report_timeline *tl = report_timeline__new(16);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(tl != NULL, "timeline");
	if (!tl)
		return;
	report_timeline__add(tl, REPORT_TIMELINE_TOTAL, 0, 5);
	report_timeline__add(tl, 7, 1500, 123456);	/* a spike */
	report_timeline__add(tl, 7, 1600, 1);
	report_timeline__add(tl, REPORT_TIMELINE_TOTAL, 1600, 6);
	report_timeline__add(tl, 7, SEC, 2);		/* far later: many merges */
	report_timeline__add(tl, 8, SEC / 2, 9);
	f = open_memstream(&text, &len);
	CHECK(!report_timeline__write_gnuplot(tl, f, "out 'x'.png", 1, name_pid, NULL),
	      "write script");
	fclose(f);
	CHECK(strstr(text, "set output 'out ' . \"'\" . 'x' . \"'\" . '.png'") != NULL, "quoted output");
	CHECK(strstr(text, "\n0.000000000 123456\n") != NULL, "the spike survives: %s", text);
	CHECK(strstr(text, "title 'proc ' . \"'\" . '7' . \"'\" . ''") != NULL, "process 7 plotted");
	CHECK(strstr(text, "'proc ' . \"'\" . '8") == NULL, "only the highest peak");
	CHECK(strstr(text, "all processes") != NULL, "the total");
	free(text);
	report_timeline__delete(tl);
}

/* ---- artifacts for the shell tests -------------------------------------- */

static void pack_nothing_trailer(msgpack_packer *pk, void *arg)
{
	(void)arg;
	test_pack_meta(pk, "true", 40, T0, T0 + SEC, 0, 0);
}

/* the tree cut in the middle of its last frame, the trailer, and before it */
static int write_cut_trees(const char *dir, const char *tree)
{
	static const char jsonl[] = "{\"k\":\"ring_open\",\"t\":1,\"ring\":\"events\"}\n";
	size_t len, trailer;
	unsigned char *buf = test_read_file(tree, &len);
	char path[1024];
	int err;

	if (!buf)
		return -EIO;
	/* the trailer is the last frame: the first one that holds no event */
	for (trailer = 0; trailer < len; ) {
		size_t n = ZSTD_findFrameCompressedSize(buf + trailer, len - trailer);

		if (ZSTD_isError(n) || trailer + n == len)
			break;
		trailer += n;
	}
	snprintf(path, sizeof(path), "%s/truncated.msgpack", dir);
	err = test_write_bytes(path, buf, len - 10);
	snprintf(path, sizeof(path), "%s/killed.msgpack", dir);
	err = err ?: test_write_bytes(path, buf, trailer);
	snprintf(path, sizeof(path), "%s/run.jsonl", dir);
	err = err ?: test_write_bytes(path, jsonl, sizeof(jsonl) - 1);
	free(buf);
	return err;
}

static int write_all_samples(const char *dir)
{
	char path[1024];
	int err;

	snprintf(path, sizeof(path), "%s/single.msgpack", dir);
	err = write_single(path);
	snprintf(path, sizeof(path), "%s/codspeed.msgpack", dir);
	err = err ?: test_write_codspeed(path, single, ARRAY_SIZE(single));
	snprintf(path, sizeof(path), "%s/nothing.msgpack", dir);
	err = err ?: test_write_artifact(path, NULL, 0, 0, pack_nothing_trailer, NULL);
	snprintf(path, sizeof(path), "%s/empty.msgpack", dir);
	err = err ?: test_write_bytes(path, "", 0);
	snprintf(path, sizeof(path), "%s/garbage.msgpack", dir);
	err = err ?: test_write_bytes(path, "this is not an artifact\n", 24);
	snprintf(path, sizeof(path), "%s/tree.msgpack", dir);
	err = err ?: write_tree(path);
	return err ?: write_cut_trees(dir, path);
}

int main(int argc, char **argv)
{
	int written = test_write_mode(argc, argv, write_all_samples);

	if (written >= 0)
		return written;
	test_single();
	test_tree();
	test_filters();
	test_overwritten();
	test_many();
	test_timeline();
	test_tmpdir_remove();
	return test_done("test-report");
}
