// SPDX-License-Identifier: GPL-2.0
/*
 * A process's blocks live no longer than its image: the figures of memtrack
 * report around execs and exits, on synthetic artifacts worked out by hand,
 * with the trailer read ahead of the events (as report reads a file) and
 * after them (as it reads a pipe); and the reader of the trailer alone.
 */
#include <signal.h>

#include "util/artifact/artifact.h"
#include "util/report/report-sites.h"
#include "util/report/report-summary.h"
#include "util/report/report-timeline.h"
#include "test-artifact.h"

#define MS	1000000ULL
#define T0	(7 * 1000000000ULL)

/* a Process record with its lifetime: execs (n of them) and exit (0: none) */
struct proc_life {
	int32_t pid, ppid;
	uint64_t start, exit;
	const uint64_t *execs;
	uint32_t nr_execs;
};

struct trailer {
	const struct proc_life *procs;
	size_t n;
};

static void pack_trailer(msgpack_packer *pk, void *arg)
{
	const struct trailer *t = arg;
	struct artifact_record run = { 0 };
	size_t i;

	artifact_record__set_command(&run, "./lifetimes");
	artifact_record__set_start(&run, T0);
	artifact__pack_meta(pk, &run);
	for (i = 0; i < t->n; i++) {
		const struct proc_life *p = &t->procs[i];
		struct artifact_record r = { .type = ARTIFACT_PROCESS };

		artifact_record__set_pid(&r, p->pid);
		artifact_record__set_ppid(&r, p->ppid);
		artifact_record__set_comm(&r, "life");
		artifact_record__set_start(&r, p->start);
		if (p->nr_execs)
			artifact_record__set_execs(&r, (struct artifact_ids){ p->execs, p->nr_execs });
		if (p->exit) {
			artifact_record__set_exit(&r, p->exit);
			artifact_record__set_exit_code(&r, 0);
		}
		artifact_record__pack(pk, &r);
	}
}

static int write_life(const char *path, const struct mt_alloc_event *ev, size_t n,
		      const struct proc_life *procs, size_t nr_procs)
{
	struct trailer t = { procs, nr_procs };

	return test_write_artifact(path, ev, n, 2, pack_trailer, &t);
}

/* as report reads it: the trailer's Process records first, when asked */
static void summarize(const char *path, bool ahead, struct report_summary *s,
		      bool with_sites, bool with_timeline)
{
	const struct artifact_record *r;
	struct artifact *a;
	int ret;

	CHECK(!report_summary__init(s, NULL), "init");
	if (with_sites)
		s->sites = report_sites__new();
	if (with_timeline)
		s->timeline = report_timeline__new(64);
	if (ahead) {
		CHECK(!artifact__open_trailer(path, &a), "open the trailer of %s", path);
		CHECK(artifact__next(a, &r) == 1 && r->type == ARTIFACT_META, "Meta first");
		while ((ret = artifact__next(a, &r)) == 1 && r->type == ARTIFACT_PROCESS)
			CHECK(!report_summary__add_ahead(s, r), "add ahead");
		artifact__close(a);
	}
	CHECK(!artifact__open(path, &a), "open %s", path);
	while ((ret = artifact__next(a, &r)) == 1)
		CHECK(!report_summary__add(s, r), "add");
	CHECK(ret == 0, "read %s: %d", path, ret);
	report_summary__finish(s);
	artifact__close(a);
}

/* ---- exec ------------------------------------------------------------------ */

/*
 * pid 40 mallocs 100 and 200, frees the 100, execs; the new image mallocs
 * 50 and 70, frees the 70, and exits.  The 200 is gone with the old image:
 * 1 block of 50 live at exit, not 2 of 250.
 */
static const struct mt_alloc_event exec_events[] = {
	{ MT_MALLOC, 40, 40, 0, T0 + 1 * MS, 0x1000, 100, 0, 1 },
	{ MT_MALLOC, 40, 40, 0, T0 + 2 * MS, 0x2000, 200, 0, 2 },
	{ MT_FREE, 40, 40, 0, T0 + 3 * MS, 0x1000, 0, 0, 0 },
	/* exec at 4 ms */
	{ MT_MALLOC, 40, 40, 0, T0 + 5 * MS, 0x3000, 50, 0, 3 },
	{ MT_MALLOC, 40, 40, 0, T0 + 6 * MS, 0x4000, 70, 0, 3 },
	{ MT_FREE, 40, 40, 0, T0 + 7 * MS, 0x4000, 0, 0, 0 },
};
static const uint64_t exec_times[] = { T0, T0 + 4 * MS };
static const struct proc_life exec_procs[] = {
	{ 40, 1, T0, T0 + 8 * MS, exec_times, ARRAY_SIZE(exec_times) },
};

static void test_exec(bool ahead)
{
	const char *path = test_path("exec");
	struct report_summary s;
	const struct report_heap *h = &s.total;
	struct report_process *p;

	CHECK(!write_life(path, exec_events, ARRAY_SIZE(exec_events), exec_procs,
			  ARRAY_SIZE(exec_procs)), "write");
	summarize(path, ahead, &s, false, false);
	CHECK_U64(s.lifetimes, ahead ? REPORT_LIFETIMES_AHEAD : REPORT_LIFETIMES_LATE, "lifetimes");
	CHECK_U64(h->allocs, 4, "allocations");
	CHECK_U64(h->frees, 2, "frees: the exec frees nothing");
	CHECK_U64(h->leaked_count, 1, "live at exit: the new image's");
	CHECK_U64(h->leaked_bytes, 50, "bytes live at exit");
	CHECK_U64(h->discarded_count, 1, "discarded by the exec");
	CHECK_U64(h->discarded_bytes, 200, "bytes discarded by the exec");
	CHECK_U64(h->unknown_frees, 0, "unknown frees");
	/* ahead, the peak is the old image's 300; late, 200 + 50 + 70 is counted */
	CHECK_U64(h->peak_bytes, ahead ? 300 : 320, "peak");
	p = report_summary__process(&s, 40);
	CHECK(p && p->heap.leaked_count == 1 && p->heap.leaked_bytes == 50 &&
	      p->heap.discarded_bytes == 200, "the process's figures");
	report_summary__exit(&s);
}

/*
 * The new image's malloc returns the address of a block of the old one:
 * the block is not "overwritten" (a missed free) when the exec is known in
 * time.  Read late, the same address looks like a missed free, and the
 * leaks are right all the same.
 */
static void test_exec_same_address(void)
{
	const struct mt_alloc_event ev[] = {
		{ MT_MALLOC, 41, 41, 0, T0 + 1 * MS, 0x1000, 100, 0, 0 },
		{ MT_MALLOC, 41, 41, 0, T0 + 5 * MS, 0x1000, 30, 0, 0 },
		{ MT_FREE, 41, 41, 0, T0 + 6 * MS, 0x1000, 0, 0, 0 },
	};
	const uint64_t execs[] = { T0 + 4 * MS };
	const struct proc_life procs[] = { { 41, 1, T0, 0, execs, 1 } };
	const char *path = test_path("exec-same");
	struct report_summary s;

	CHECK(!write_life(path, ev, ARRAY_SIZE(ev), procs, ARRAY_SIZE(procs)), "write");
	summarize(path, true, &s, false, false);
	CHECK_U64(s.total.overwritten, 0, "ahead: not overwritten");
	CHECK_U64(s.total.discarded_count, 1, "ahead: discarded");
	CHECK_U64(s.total.leaked_count, 0, "ahead: nothing live at exit");
	CHECK_U64(s.total.frees, 1, "ahead: the new block's free");
	report_summary__exit(&s);
	summarize(path, false, &s, false, false);
	CHECK_U64(s.total.overwritten, 1, "late: the old block taken for a missed free");
	CHECK_U64(s.total.leaked_count, 0, "late: nothing live at exit");
	report_summary__exit(&s);
}

/* ---- exit ------------------------------------------------------------------ */

/*
 * Three children of pid 50, one block each, never freed: 3000, 5000, 4000
 * bytes.  Sequential, each exits before the next allocates: the peak is
 * 5000.  With overlap, 52 allocates while 51 lives: the peak is 8000.
 */
static void tree_events(struct mt_alloc_event *ev, bool overlap)
{
	ev[0] = test_event(MT_MALLOC, 51, T0 + 10 * MS, 0x1000, 3000, 0);
	ev[1] = test_event(MT_MALLOC, 52, T0 + (overlap ? 15 : 30) * MS, 0x1000, 5000, 0);
	ev[2] = test_event(MT_MALLOC, 53, T0 + 50 * MS, 0x1000, 4000, 0);
	ev[0].stack = 1;
	ev[1].stack = 2;
	ev[2].stack = 3;
}

static const struct proc_life tree_procs[] = {
	{ 50, 1, T0, T0 + 70 * MS, NULL, 0 },
	{ 51, 50, T0 + 5 * MS, T0 + 20 * MS, NULL, 0 },
	{ 52, 50, T0 + 12 * MS, T0 + 40 * MS, NULL, 0 },
	{ 53, 50, T0 + 45 * MS, T0 + 60 * MS, NULL, 0 },
};

/* the live bytes at the peak of each site (stack id 1..3) */
static void site_peaks(struct report_summary *s, uint64_t peaks[4])
{
	struct report_site_list list;
	size_t i;

	memset(peaks, 0, 4 * sizeof(*peaks));
	CHECK(!report_sites__resolve(s->sites, 0, REPORT_MATCH_FRAME, &list), "resolve");
	for (i = 0; i < list.nr; i++)
		if (list.sites[i].stack < 4)
			peaks[list.sites[i].stack] = list.sites[i].peak_bytes;
	report_site_list__exit(&list);
}

static void test_tree(bool overlap, bool ahead)
{
	const char *path = test_path("tree");
	struct mt_alloc_event ev[3];
	struct report_summary s;
	uint64_t peaks[4];
	uint64_t want = overlap ? 8000 : 5000;

	tree_events(ev, overlap);
	CHECK(!write_life(path, ev, ARRAY_SIZE(ev), tree_procs, ARRAY_SIZE(tree_procs)), "write");
	summarize(path, ahead, &s, true, false);
	if (!ahead)
		want = 12000;	/* late: the blocks of exited processes counted */
	CHECK_U64(s.total.peak_bytes, want, overlap ? "peak, overlapping" : "peak, sequential");
	CHECK_U64(report_summary__rel_ns(&s, s.total.peak_ts),
		  ahead ? (overlap ? 5 : 20) * MS : 40 * MS, "peak time");
	CHECK_U64(s.total.leaked_count, 3, "each child's block live at its exit");
	CHECK_U64(s.total.leaked_bytes, 12000, "bytes live at exit");
	CHECK(report_summary__process(&s, 52) &&
	      report_summary__process(&s, 52)->heap.leaked_bytes == 5000 &&
	      report_summary__process(&s, 52)->heap.peak_bytes == 5000, "child 52's figures");
	site_peaks(&s, peaks);
	if (ahead)
		CHECK(peaks[1] == (overlap ? 3000 : 0) && peaks[2] == 5000 && peaks[3] == 0,
		      "the sites add up to the peak: %" PRIu64 " %" PRIu64 " %" PRIu64,
		      peaks[1], peaks[2], peaks[3]);
	else
		CHECK(peaks[1] + peaks[2] + peaks[3] == 12000, "late: the sites add up to it");
	report_summary__exit(&s);
}

static void name_pid(int32_t pid, char *buf, size_t len, void *arg)
{
	(void)arg;
	snprintf(buf, len, "p%d", pid);
}

/* the tree's line goes down at each exit, and a child's line to 0 */
static void test_timeline(void)
{
	const char *path = test_path("timeline");
	struct mt_alloc_event ev[3];
	struct report_summary s;
	char *text = NULL, *total;
	size_t len = 0;
	FILE *f;

	tree_events(ev, false);
	CHECK(!write_life(path, ev, ARRAY_SIZE(ev), tree_procs, ARRAY_SIZE(tree_procs)), "write");
	summarize(path, true, &s, false, true);
	f = open_memstream(&text, &len);
	CHECK(!report_timeline__write_gnuplot(s.timeline, f, "t.png", 8, name_pid, NULL),
	      "script");
	fclose(f);
	/* the last data block is the tree's; 64 bins of 1.024 ms (after merges) */
	for (total = text ? strstr(text, " << EOD\n") : NULL; total && strstr(total + 1, " << EOD\n");)
		total = strstr(total + 1, " << EOD\n");
	CHECK(total && strstr(total, " 5000\n"), "the tree reaches 5000: %s", text);
	CHECK(total && !strstr(total, " 8000\n") && !strstr(total, " 12000\n"),
	      "never the sum: %s", text);
	CHECK(total && strstr(total, "\n0.059392000 0\n"),
	      "the tree at 0 after the last exit: %s", text);
	free(text);
	report_summary__exit(&s);
}

/*
 * An event of a process after its exit, as a disordered artifact may have
 * one: the process's own figures take it, the tree's live heap does not.
 */
static void test_after_exit(void)
{
	const struct mt_alloc_event ev[] = {
		{ MT_MALLOC, 60, 60, 0, T0 + 1 * MS, 0x1000, 100, 0, 0 },
		{ MT_MALLOC, 61, 61, 0, T0 + 3 * MS, 0x1000, 10, 0, 0 },
		{ MT_MALLOC, 60, 60, 0, T0 + 2 * MS, 0x2000, 1000, 0, 0 },	/* late */
		{ MT_FREE, 60, 60, 0, T0 + 2 * MS + 1, 0x2000, 0, 0, 0 },
		{ MT_MALLOC, 61, 61, 0, T0 + 4 * MS, 0x2000, 20, 0, 0 },
	};
	const struct proc_life procs[] = {
		{ 60, 1, T0, T0 + 2 * MS + 500, NULL, 0 },
		{ 61, 1, T0, T0 + 5 * MS, NULL, 0 },
	};
	const char *path = test_path("after-exit");
	struct report_summary s;
	struct report_process *p;

	CHECK(!write_life(path, ev, ARRAY_SIZE(ev), procs, ARRAY_SIZE(procs)), "write");
	summarize(path, true, &s, true, false);
	CHECK_U64(s.total.peak_bytes, 100, "the late block is not the tree's");
	CHECK_U64(s.total.live_bytes, 0, "nothing live after the last exit");
	p = report_summary__process(&s, 60);
	CHECK(p && p->heap.peak_bytes == 1100 && p->heap.frees == 1 &&
	      p->heap.leaked_bytes == 100, "the process's own figures take it");
	CHECK_U64(s.total.leaked_bytes, 130, "live at exit");
	report_summary__exit(&s);
}

/* ---- the trailer read alone ----------------------------------------------- */

static void test_open_trailer(void)
{
	const char *path = test_path("trailer"), *cut = test_path("trailer-cut");
	const char *killed = test_path("trailer-killed");
	const struct artifact_record *r;
	struct artifact *a;
	unsigned char *buf;
	size_t len, off, last = 0;
	int fds[2], ret, n = 0;

	CHECK(!write_life(path, exec_events, ARRAY_SIZE(exec_events), exec_procs,
			  ARRAY_SIZE(exec_procs)), "write");
	CHECK(!artifact__open_trailer(path, &a), "open");
	while ((ret = artifact__next(a, &r)) == 1) {
		CHECK(r->type == (n ? ARTIFACT_PROCESS : ARTIFACT_META), "record %d: type %d",
		      n, r->type);
		n++;
	}
	CHECK(ret == 0 && n == 2, "the trailer's 2 records and nothing else: %d, %d", ret, n);
	artifact__close(a);

	/* cut inside the trailer: no frame at the end to read */
	buf = test_read_file(path, &len);
	CHECK(buf != NULL, "read back");
	if (!buf)
		return;
	CHECK(!test_write_bytes(cut, buf, len - 3), "write cut");
	CHECK_U64(artifact__open_trailer(cut, &a), -ENOMSG, "cut: no trailer");
	/* killed before the trailer: the last frame is events, not Meta */
	for (off = 0; off < len; off += ZSTD_findFrameCompressedSize(buf + off, len - off))
		last = off;
	CHECK(!test_write_bytes(killed, buf, last), "write killed");
	CHECK(!artifact__open_trailer(killed, &a), "killed: its last frame");
	CHECK(artifact__next(a, &r) == 1 && r->type == ARTIFACT_EVENT, "killed: an event");
	artifact__close(a);
	free(buf);

	CHECK_U64(artifact__open_trailer(test_tmpdir(), &a), -ESPIPE, "a directory");
	CHECK(!pipe(fds), "pipe");
	{
		char fdpath[64];

		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fds[0]);
		CHECK_U64(artifact__open_trailer(fdpath, &a), -ESPIPE, "a pipe");
	}
	close(fds[0]);
	close(fds[1]);
}

/* appends buf compressed as one frame to the file at fd */
static int append_frame(int fd, const void *buf, size_t len)
{
	size_t cap = ZSTD_compressBound(len), n;
	void *z = malloc(cap);
	int err;

	if (!z)
		return -ENOMEM;
	n = ZSTD_compress(z, cap, buf, len, 1);
	err = ZSTD_isError(n) ? -EINVAL : write_all(fd, z, n);
	free(z);
	return err;
}

/*
 * Frames larger than the window the walk maps at a time (8 MiB), and frames
 * across its edges: incompressible ones of 3 MiB, one of 20 MiB, then the
 * trailer's.
 */
static void test_open_trailer_large(void)
{
	static const size_t sizes[] = { 3 << 20, 3 << 20, 3 << 20, 20 << 20, 3 << 20 };
	const char *path = test_path("trailer-large");
	const struct artifact_record *r;
	size_t i, j, max = 20 << 20;
	unsigned char *noise = malloc(max);
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct artifact *a;
	uint64_t x = 88172645463325252ULL;
	int fd, err = 0;

	CHECK(noise != NULL, "memory");
	if (!noise)
		return;
	for (j = 0; j < max; j++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		noise[j] = x;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "create");
	for (i = 0; fd >= 0 && !err && i < ARRAY_SIZE(sizes); i++)
		err = append_frame(fd, noise, sizes[i]);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	pack_trailer(&pk, &(struct trailer){ exec_procs, ARRAY_SIZE(exec_procs) });
	err = err ?: append_frame(fd, sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	CHECK(!err && fd >= 0 && !close(fd), "write");
	free(noise);
	CHECK(!artifact__open_trailer(path, &a), "open");
	CHECK(artifact__next(a, &r) == 1 && r->type == ARTIFACT_META, "the trailer's Meta");
	CHECK(artifact__next(a, &r) == 1 && r->type == ARTIFACT_PROCESS && r->pid == 40,
	      "its Process");
	artifact__close(a);
}

int main(void)
{
	test_exec(true);
	test_exec(false);
	test_exec_same_address();
	test_tree(false, true);
	test_tree(true, true);
	test_tree(false, false);
	test_tree(true, false);
	test_timeline();
	test_after_exit();
	test_open_trailer();
	test_open_trailer_large();
	test_tmpdir_remove();
	return test_done("test-report-lifetimes");
}
