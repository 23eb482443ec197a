// SPDX-License-Identifier: GPL-2.0
/*
 * The poller's release step and the stopped-pids bookkeeping, without BPF:
 * the ring is in memory (fake-ring.h), the pressure_stopped map is an array
 * behind struct pressure_ops, and the resumes are recorded instead of sent.
 * The test plays BPF: it stops a pid by adding (pid | ring flag) ->
 * stopped_at if absent (BPF_NOEXIST) and bumping the stop count.  Each
 * cycle runs the real poller thread (poller__start(), poller__stop()), which
 * drains, then releases, and writes its `pressure` rows to a stats file
 * that the test reads back.
 *
 * Pinned: nothing is released, and no episode counted, while the ring is
 * at or above the watermark, even with a reserved record at the consumer
 * position that no drain can pass; a release resumes only the pids stopped
 * since the previous one, deletes their entries (so that a pid's next stop
 * records its new time), and each (pid, stopped_at) pair is in exactly one
 * row; each ring's poller resumes only its own ring's stops; a release of
 * more pids than one pass of keys collects; a stop someone else made too is
 * deleted but not resumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cJSON.h"
#include "check.h"
#include "fake-ring.h"
#include "util/track/pipeline-stats.h"
#include "util/track/poller.h"

/* ---- pressure_stopped, as an array ------------------------------------- */

#define MAP_MAX 4096

static struct { uint32_t key; uint64_t stopped_at; } map[MAP_MAX];
static int map_n;
static unsigned long map_calls;
static uint32_t refuse_delete;		/* a key someone else deletes first; 0: none */
static pid_t resumed[MAP_MAX];
static int nresumed;
static uint64_t stops;			/* BPF's pressure_stops */

static int map_find(uint32_t key)
{
	int i;

	for (i = 0; i < map_n; i++)
		if (map[i].key == key)
			return i;
	return -1;
}

/* as a BPF hash map: an unknown key's next is the first key */
static int fake_map_call(int cmd, int map_fd, const void *key, void *value)
{
	int i = key ? map_find(*(const uint32_t *)key) : -1;

	(void)map_fd;
	/* a release that never ends fails the test instead of hanging it */
	if (++map_calls > 1000000)
		return -ELOOP;
	switch (cmd) {
	case BPF_MAP_GET_NEXT_KEY:
		i = i < 0 ? 0 : i + 1;
		if (i >= map_n)
			return -ENOENT;
		*(uint32_t *)value = map[i].key;
		return 0;
	case BPF_MAP_LOOKUP_ELEM:
		if (i < 0)
			return -ENOENT;
		*(uint64_t *)value = map[i].stopped_at;
		return 0;
	case BPF_MAP_DELETE_ELEM:
		if (i < 0 || map[i].key == refuse_delete)
			return -ENOENT;
		memmove(&map[i], &map[i + 1], (map_n - i - 1) * sizeof(map[0]));
		map_n--;
		return 0;
	}
	return -EINVAL;
}

static void fake_resume(pid_t pid)
{
	if (nresumed < MAP_MAX)
		resumed[nresumed] = pid;
	nresumed++;
}

static const struct pressure_ops fake_ops = {
	.map_call = fake_map_call,
	.resume = fake_resume,
};

/* what BPF does at the watermark: record the stop unless one is recorded */
static void bpf_stop(uint32_t key, uint64_t stopped_at)
{
	if (map_find(key) < 0 && map_n < MAP_MAX) {
		map[map_n].key = key;
		map[map_n].stopped_at = stopped_at;
		map_n++;
	}
	__atomic_fetch_add(&stops, 1, __ATOMIC_RELEASE);
}

static void reset_bookkeeping(void)
{
	map_n = 0;
	map_calls = 0;
	nresumed = 0;
	refuse_delete = 0;
	stops = 0;
}

static bool was_resumed(pid_t pid)
{
	int i;

	for (i = 0; i < nresumed && i < MAP_MAX; i++)
		if (resumed[i] == pid)
			return true;
	return false;
}

/* ---- pollers over a ring in memory ------------------------------------ */

static char dir[] = "/tmp/test-poller-XXXXXX";
static unsigned long records;

static int count_record(void *ctx, const void *data, uint32_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	records++;
	return 0;
}

static void poller_setup(struct poller *p, struct fake_ring *f, uint32_t flag,
			 struct pstats *ps)
{
	memset(p, 0, sizeof(*p));
	fake_ring__init(f, &p->ring, flag ? "stacks" : "events",
			eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	p->interval_ms = 60000;	/* no tick but the ones poller__stop() asks for */
	p->pressure_fd = 0;	/* the fake map takes any */
	p->pressure_ops = &fake_ops;
	p->pressure_flag = flag;
	p->watermark = FAKE_RING_SIZE * 3 / 4;
	p->pressure_stops = &stops;
	p->stats = ps;
	p->on_record = count_record;
}

/* the poller thread from start to stop: a drain and a release, after the setup */
static void cycle(struct poller *p)
{
	int err = poller__start(p);

	CHECK(!err, "poller__start: %s", strerror(-err));
	if (!err)
		CHECK(poller__stop(p) == 0, "poller__stop");
}

static void poller_done(struct poller *p)
{
	close(p->ring.map_fd);
}

static const char *path_of(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void remove_file(const char *name)
{
	unlink(path_of(name));
}

static struct pstats *stats_open(const char *name)
{
	const char *path = path_of(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct pstats *ps;

	CHECK(fd >= 0, "create %s", path);
	ps = pstats__create(fd, path);
	CHECK(ps != NULL, "pstats__create %s", path);
	return ps;
}

/* ---- the pressure rows written ----------------------------------------- */

#define MAX_ROWS 16
#define MAX_PAIRS 64

struct row {
	char ring[16];
	int n;
	uint32_t pid[MAX_PAIRS];
	uint64_t stopped_at[MAX_PAIRS];
};

/* reads the pressure rows of a stats file; returns how many */
static int read_rows(const char *name, struct row *rows)
{
	const char *path = path_of(name);
	char line[4096];
	FILE *f;
	int n = 0;

	f = fopen(path, "r");
	CHECK(f != NULL, "open %s", path);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < MAX_ROWS) {
		cJSON *o = cJSON_Parse(line), *k = cJSON_GetObjectItem(o, "k"), *pair;
		cJSON *pids = cJSON_GetObjectItem(o, "pids");
		struct row *r = &rows[n];

		CHECK(o != NULL, "a JSON line: %s", line);
		if (!cJSON_IsString(k) || strcmp(k->valuestring, "pressure")) {
			cJSON_Delete(o);
			continue;
		}
		memset(r, 0, sizeof(*r));
		snprintf(r->ring, sizeof(r->ring), "%s",
			 cJSON_GetStringValue(cJSON_GetObjectItem(o, "ring")));
		cJSON_ArrayForEach(pair, pids) {
			if (r->n == MAX_PAIRS)
				break;
			r->pid[r->n] = cJSON_GetArrayItem(pair, 0)->valuedouble;
			r->stopped_at[r->n] = cJSON_GetArrayItem(pair, 1)->valuedouble;
			r->n++;
		}
		cJSON_Delete(o);
		n++;
	}
	fclose(f);
	return n;
}

/* how many rows list (pid, stopped_at) */
static int rows_with(const struct row *rows, int nrows, uint32_t pid, uint64_t stopped_at)
{
	int i, j, n = 0;

	for (i = 0; i < nrows; i++)
		for (j = 0; j < rows[i].n; j++)
			n += rows[i].pid[j] == pid && rows[i].stopped_at[j] == stopped_at;
	return n;
}

/* ---- the tests ----------------------------------------------------------- */

static void put_records(struct fake_ring *f, int n, uint32_t flags)
{
	static const uint8_t payload[56];
	int i;

	for (i = 0; i < n; i++)
		fake_ring__put(f, payload, sizeof(payload), i ? 0 : flags);
}

/*
 * A record reserved but not committed at the consumer position: no drain
 * passes it, so the ring stays as full as it is.  At the watermark (3 KiB
 * of 4 KiB) nothing is released; just below it, the stop is released.
 */
static void test_held_at_watermark(void)
{
	struct fake_ring f;
	struct poller p;
	struct pstats *ps = stats_open("held.jsonl");
	struct row rows[MAX_ROWS];

	reset_bookkeeping();
	records = 0;
	poller_setup(&p, &f, 0, ps);
	put_records(&f, 48, BPF_RINGBUF_BUSY_BIT);	/* 48 * 64 bytes: the watermark */
	bpf_stop(101, 1000);
	cycle(&p);
	CHECK_U64(records, 0, "held: nothing drained past the reserved record");
	CHECK_U64(ring__producer(&p.ring) - ring__consumer(&p.ring), p.watermark,
		  "held: the ring at the watermark");
	CHECK_U64(nresumed, 0, "held: nobody resumed at the watermark");
	CHECK(map_find(101) >= 0, "held: the stop still recorded");
	CHECK_U64(p.episodes, 0, "held: no episode");
	CHECK_U64(p.resumed, 0, "held: none resumed");

	/* the producer commits: the drain empties the ring, then the release */
	fake_ring__commit(&f, 0);
	cycle(&p);
	CHECK_U64(records, 48, "committed: every record drained");
	CHECK_U64(ring__consumer(&p.ring), ring__producer(&p.ring), "committed: empty");
	CHECK(nresumed == 1 && resumed[0] == 101, "committed: 101 resumed once (%d)", nresumed);
	CHECK_U64(map_n, 0, "committed: its entry deleted");
	CHECK_U64(p.episodes, 1, "committed: one episode");
	pstats__close(ps);
	CHECK(read_rows("held.jsonl", rows) == 1 && rows[0].n == 1 &&
	      rows[0].pid[0] == 101 && rows[0].stopped_at[0] == 1000 &&
	      !strcmp(rows[0].ring, "events"), "committed: one row, [[101,1000]]");
	poller_done(&p);

	/* one record (64 bytes) less: below the watermark, released though reserved */
	reset_bookkeeping();
	poller_setup(&p, &f, 0, NULL);
	put_records(&f, 47, BPF_RINGBUF_BUSY_BIT);
	bpf_stop(102, 2000);
	cycle(&p);
	CHECK_U64(ring__producer(&p.ring) - ring__consumer(&p.ring), p.watermark - 64,
		  "below: the ring one record under the watermark");
	CHECK(nresumed == 1 && resumed[0] == 102, "below: 102 resumed");
	CHECK_U64(p.episodes, 1, "below: one episode");
	poller_done(&p);
}

/*
 * Each release resumes the pids stopped since the previous one, and only
 * those; a pid stopped again after its release records its new stop time.
 */
static void test_release_only_new_stops(void)
{
	struct fake_ring f;
	struct poller p;
	struct pstats *ps = stats_open("new.jsonl");
	struct row rows[MAX_ROWS];
	unsigned long calls;
	int n;

	reset_bookkeeping();
	poller_setup(&p, &f, 0, ps);
	bpf_stop(101, 1000);
	cycle(&p);
	CHECK(nresumed == 1 && resumed[0] == 101, "first: 101 (%d resumed)", nresumed);

	nresumed = 0;
	bpf_stop(102, 2000);
	bpf_stop(103, 2100);
	cycle(&p);
	CHECK(nresumed == 2 && was_resumed(102) && was_resumed(103),
	      "second: 102 and 103 only (%d resumed)", nresumed);

	nresumed = 0;
	bpf_stop(101, 3000);
	cycle(&p);
	CHECK(nresumed == 1 && resumed[0] == 101, "third: 101 again, only (%d resumed)",
	      nresumed);
	CHECK_U64(map_n, 0, "every entry deleted");

	/* no stop since: the map is not even read */
	nresumed = 0;
	calls = map_calls;
	cycle(&p);
	CHECK_U64(nresumed, 0, "no stop, no resume");
	CHECK_U64(map_calls, calls, "no stop, no scan of the map");
	CHECK_U64(p.episodes, 3, "three episodes");
	CHECK_U64(p.resumed, 4, "four resumes");
	pstats__close(ps);

	n = read_rows("new.jsonl", rows);
	CHECK_U64(n, 3, "one row per release");
	CHECK(n == 3 && rows[0].n == 1 && rows[1].n == 2 && rows[2].n == 1,
	      "rows of 1, 2 and 1 pids");
	CHECK(rows_with(rows, n, 101, 1000) == 1 && rows_with(rows, n, 102, 2000) == 1 &&
	      rows_with(rows, n, 103, 2100) == 1 && rows_with(rows, n, 101, 3000) == 1,
	      "each (pid, stopped_at) in exactly one row");
	poller_done(&p);
}

/* each ring's poller resumes its own ring's stops; attach stops are not theirs */
static void test_ring_flags(void)
{
	struct fake_ring fe, fs;
	struct poller events, stacks;

	reset_bookkeeping();
	poller_setup(&events, &fe, 0, NULL);
	poller_setup(&stacks, &fs, MT_STOPPED_BY_STACKS, NULL);
	bpf_stop(201, 1);
	bpf_stop(202 | MT_STOPPED_BY_STACKS, 2);
	bpf_stop(203 | MT_STOPPED_FOR_ATTACH, 3);
	cycle(&events);
	CHECK(nresumed == 1 && resumed[0] == 201, "events: 201 only (%d)", nresumed);
	nresumed = 0;
	cycle(&stacks);
	CHECK(nresumed == 1 && resumed[0] == 202, "stacks: 202 only (%d)", nresumed);
	CHECK(map_n == 1 && map[0].key == (203 | MT_STOPPED_FOR_ATTACH),
	      "the attach stop is left to its own release");
	poller_done(&events);
	poller_done(&stacks);
}

/* more stops than one pass of keys (1024) collects, the other ring's among them */
static void test_release_many(void)
{
	struct stopped_pid out[100];
	int i, n;

	reset_bookkeeping();
	for (i = 0; i < 3000; i++) {
		bpf_stop(10000 + i, 5000 + i);
		if (i % 300 == 0)
			bpf_stop((20000 + i) | MT_STOPPED_BY_STACKS, 1);
	}
	n = pressure__release(&fake_ops, 0, 0, out, 100);
	CHECK_U64(n, 3000, "every events stop released");
	CHECK_U64(nresumed, 3000, "3000 resumes");
	CHECK_U64(map_n, 10, "the stacks stops left");
	CHECK(out[0].pid == 10000 && out[0].stopped_at == 5000 &&
	      out[99].pid == 10099 && out[99].stopped_at == 5099, "the first 100 kept");

	/* an entry deleted by someone else meanwhile is not resumed twice */
	reset_bookkeeping();
	bpf_stop(301, 1);
	bpf_stop(302, 2);
	refuse_delete = 301;
	n = pressure__release(&fake_ops, 0, 0, out, 100);
	CHECK(n == 1 && nresumed == 1 && resumed[0] == 302 && out[0].pid == 302,
	      "only the entry this release deleted");
}

/* a process someone else stopped too: its entry goes, the stop is theirs to end */
static void test_their_stop(void)
{
	struct stopped_pid out[4];
	int n;

	reset_bookkeeping();
	bpf_stop(401, 500 | MT_STOPPED_THEIRS);
	bpf_stop(402, 600);
	n = pressure__release(&fake_ops, 0, 0, out, 4);
	CHECK_U64(n, 2, "both entries released");
	CHECK_U64(map_n, 0, "both deleted");
	CHECK(nresumed == 1 && resumed[0] == 402, "only 402 resumed (%d)", nresumed);
	CHECK(out[0].pid == 401 && out[0].stopped_at == 500, "401's stop time without the flag");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_held_at_watermark();
	test_release_only_new_stops();
	test_ring_flags();
	test_release_many();
	test_their_stop();
	remove_file("held.jsonl");
	remove_file("new.jsonl");
	rmdir(dir);
	return test_done("test-poller");
}
