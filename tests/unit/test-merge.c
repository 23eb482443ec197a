// SPDX-License-Identifier: GPL-2.0
/*
 * The merge of the shim's per-thread rings (util/track/merge.c), with this test
 * as the shim writing records: per process, events leave in time order,
 * also across threads and in runs from one ring; a record reserved but not
 * yet written holds back its own process and no other; the producer
 * position is seen again once the consumer has caught up with it; a
 * corrupt ring ends its process's tracking and no one else's, and so does
 * a record stamped later than it could have been written; the threads a
 * shim counted in a ring header, not served, are told once each.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "util/track/merge.h"
#include "util/util.h"

#define RING_SIZE	(64U << 10)
#define MAX_OUT		64

struct out {
	struct mt_alloc_event ev[MAX_OUT];
	unsigned int n, corrupt;
	int32_t corrupt_pid;
	const char *why;
	unsigned int unserved_calls;
	uint32_t unserved;
	int32_t unserved_pid;
};

/* the producer's end of one ring, as preload/shim.c writes it */
struct producer {
	int fd;
	struct shim_ring_hdr *hdr;
	uint8_t *data;
};

static void emit(void *ctx, const struct mt_alloc_event *e)
{
	struct out *o = ctx;

	if (o->n < MAX_OUT)
		o->ev[o->n] = *e;
	o->n++;
}

static uint64_t no_stack(void *ctx, int32_t pid, const uint64_t *ips, uint32_t nr)
{
	(void)ctx, (void)pid, (void)ips, (void)nr;
	return 0;
}

static void corrupt(void *ctx, int32_t pid, int32_t tid, const char *why)
{
	struct out *o = ctx;

	(void)tid;
	o->corrupt++;
	o->corrupt_pid = pid;
	o->why = why;
}

static void waited(void *ctx, int32_t pid, uint64_t since)
{
	(void)ctx, (void)pid, (void)since;
}

static void unserved(void *ctx, int32_t pid, uint32_t n)
{
	struct out *o = ctx;

	o->unserved_calls++;
	o->unserved += n;
	o->unserved_pid = pid;
}

static void producer_open(struct producer *pr)
{
	void *base;

	pr->fd = memfd_create("test-merge", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(pr->fd >= 0 && !ftruncate(pr->fd, SHIM_HDR_SIZE + RING_SIZE) &&
	      !fcntl(pr->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
	base = mmap(NULL, SHIM_HDR_SIZE + RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    pr->fd, 0);
	CHECK(base != MAP_FAILED);
	pr->hdr = base;
	pr->data = (uint8_t *)base + SHIM_HDR_SIZE;
}

static void producer_close(struct producer *pr)
{
	munmap(pr->hdr, SHIM_HDR_SIZE + RING_SIZE);
	close(pr->fd);
}

/* reserves len bytes; the record is written by commit() */
static uint8_t *reserve(struct producer *pr, uint32_t len, uint64_t *pos)
{
	*pos = pr->hdr->prod;
	pr->hdr->prod += len;
	return pr->data + (*pos & (RING_SIZE - 1));
}

static void commit(uint8_t *rec, uint64_t pos, uint32_t len, uint32_t kind)
{
	__atomic_store_n((uint64_t *)rec, SHIM_REC_WORD(pos, len, kind), __ATOMIC_RELEASE);
}

static void put_malloc(struct producer *pr, uint64_t ts, uint64_t addr)
{
	struct shim_alloc_rec r = { .ts = ts, .addr = addr, .size = 16, .kind = MT_MALLOC };
	uint64_t pos;
	uint8_t *p = reserve(pr, sizeof(r), &pos);

	memcpy(p + 8, (uint8_t *)&r + 8, sizeof(r) - 8);
	commit(p, pos, sizeof(r), SHIM_REC_ALLOC);
}

static void put_free(struct producer *pr, uint64_t ts, uint64_t addr)
{
	struct shim_free_rec r = { .ts = ts, .addr = addr };
	uint64_t pos;
	uint8_t *p = reserve(pr, sizeof(r), &pos);

	memcpy(p + 8, (uint8_t *)&r + 8, sizeof(r) - 8);
	commit(p, pos, sizeof(r), SHIM_REC_FREE);
}

static void add_ring(struct merger *m, int32_t pid, int32_t tid, struct producer *pr)
{
	struct shim_ring r;

	CHECK(!shim_ring__map(&r, pr->fd, RING_SIZE, pid, tid));
	CHECK(!merger__add_ring(m, merger__proc(m, pid), &r));
}

static struct merger *new_merger(struct out *o)
{
	struct merge_ops ops = {
		.emit = emit, .stack = no_stack, .corrupt = corrupt, .waited = waited,
		.unserved = unserved, .ctx = o,
	};

	struct merger *m;

	memset(o, 0, sizeof(*o));
	m = merger__new(&ops);
	CHECK(m != NULL);
	/* no BPF event is pending: the BPF ring was drained after every time used here */
	merger__set_bpf_bound(m, 1000);
	return m;
}

/* the emitted timestamps, "10 20 30" */
static const char *times(const struct out *o)
{
	static char buf[512];
	size_t len = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < o->n && i < MAX_OUT; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%" PRIu64, i ? " " : "",
				(uint64_t)o->ev[i].ts);
	return buf;
}

static void test_across_threads(void)
{
	struct producer a, b;
	struct out o;
	struct merger *m = new_merger(&o);

	producer_open(&a);
	producer_open(&b);
	add_ring(m, 100, 100, &a);
	add_ring(m, 100, 101, &b);
	/* thread a allocates, b frees what a allocated: each free after its malloc */
	put_malloc(&a, 10, 0x1000);
	put_malloc(&a, 30, 0x2000);
	put_free(&b, 20, 0x1000);
	put_free(&b, 40, 0x2000);
	/* a run: a's 41 42 43 go before b's 44 45, then a's 50 */
	put_malloc(&a, 41, 0x3000);
	put_malloc(&a, 42, 0x4000);
	put_malloc(&a, 43, 0x5000);
	put_free(&b, 44, 0x3000);
	put_free(&b, 45, 0x4000);
	put_free(&a, 50, 0x5000);
	/* at one time, the free first: the address is free again before its reuse */
	put_malloc(&a, 60, 0x6000);
	put_free(&b, 60, 0x7000);

	CHECK_U64(merger__pass(m, false), 12, "every record of both threads leaves");
	CHECK_STR(times(&o), "10 20 30 40 41 42 43 44 45 50 60 60", "in time order");
	CHECK_U64(o.ev[10].kind, MT_FREE, "at equal times the free leaves first");
	CHECK_U64(o.ev[1].tid, 101, "the free carries its thread");
	CHECK_U64(o.ev[1].pid, 100, "and its process");

	/* the producer goes on after the consumer caught up: its position is read again */
	put_malloc(&a, 70, 0x8000);
	put_free(&b, 80, 0x8000);
	o.n = 0;
	CHECK_U64(merger__pass(m, false), 2, "records written after a pass leave in the next");
	CHECK_STR(times(&o), "70 80", "also in order");
	merger__delete(m);
	producer_close(&a);
	producer_close(&b);
}

/* a record reserved and not yet written holds back its process, and only it */
static void test_pending_holds_its_process(void)
{
	struct producer a, b, c;
	struct out o;
	struct merger *m = new_merger(&o);
	uint64_t pos;
	uint8_t *slot;

	producer_open(&a);
	producer_open(&b);
	producer_open(&c);
	add_ring(m, 200, 200, &a);
	add_ring(m, 200, 201, &b);
	add_ring(m, 300, 300, &c);
	put_malloc(&a, 10, 0x1000);
	put_malloc(&a, 30, 0x2000);
	slot = reserve(&b, sizeof(struct shim_free_rec), &pos);
	put_malloc(&c, 5, 0x9000);
	put_malloc(&c, 35, 0xa000);

	CHECK_U64(merger__pass(m, false), 2, "pending: only the other process's events leave");
	CHECK_STR(times(&o), "5 35", "pending: the other process, in order");

	/* the free b reserved before a's second malloc is written now */
	{
		struct shim_free_rec r = { .ts = 20, .addr = 0x1000 };

		memcpy(slot + 8, (uint8_t *)&r + 8, sizeof(r) - 8);
		commit(slot, pos, sizeof(r), SHIM_REC_FREE);
	}
	o.n = 0;
	CHECK_U64(merger__pass(m, false), 3, "pending: once written, the process goes on");
	CHECK_STR(times(&o), "10 20 30", "pending: the written free in its place");
	merger__delete(m);
	producer_close(&a);
	producer_close(&b);
	producer_close(&c);
}

static void test_corrupt_ring(void)
{
	struct producer a, c;
	struct out o;
	struct merger *m = new_merger(&o);
	uint64_t pos;
	uint8_t *p;

	producer_open(&a);
	producer_open(&c);
	add_ring(m, 400, 400, &a);
	add_ring(m, 500, 500, &c);
	put_malloc(&a, 10, 0x1000);
	/* a record that claims more bytes than were reserved */
	p = reserve(&a, 24, &pos);
	commit(p, pos, 4096, SHIM_REC_FREE);
	put_malloc(&c, 15, 0x2000);
	put_free(&c, 25, 0x2000);

	merger__pass(m, false);
	CHECK_U64(o.corrupt, 1, "corrupt: said once");
	CHECK_U64(o.corrupt_pid, 400, "corrupt: of its process");
	CHECK_STR(times(&o), "10 15 25", "corrupt: what came before it is kept, the other process not touched");
	merger__delete(m);
	producer_close(&a);
	producer_close(&c);
}

/* left in the ring, it would hold its process's events until the end of the run */
static void test_stamped_in_future(void)
{
	struct producer a, c;
	struct out o;
	struct merger *m = new_merger(&o);
	uint64_t hour = 3600ULL * 1000000000ULL;

	producer_open(&a);
	producer_open(&c);
	add_ring(m, 600, 600, &a);
	add_ring(m, 700, 700, &c);
	put_malloc(&a, 10, 0x1000);
	put_free(&a, now_ns() + hour, 0x1000);
	put_malloc(&a, 30, 0x2000);
	put_malloc(&c, 15, 0x3000);
	put_free(&c, 25, 0x3000);

	merger__pass(m, false);
	CHECK_U64(o.corrupt, 1, "future: said once");
	CHECK_U64(o.corrupt_pid, 600, "future: of its process");
	CHECK_STR(o.why ? o.why : "", "a timestamp from the future", "future: and why");
	CHECK_STR(times(&o), "10 15 25", "future: what came before it is kept, the other process not touched");

	/* a record written after the pass began, stamped now, is not from the future */
	put_malloc(&c, now_ns(), 0x4000);
	merger__set_bpf_bound(m, now_ns());
	o.n = 0;
	CHECK_U64(merger__pass(m, false), 1, "now: the next pass takes a record stamped now");
	CHECK_U64(o.corrupt, 1, "now: and says nothing of it");
	merger__delete(m);
	producer_close(&a);
	producer_close(&c);
}

/* the header's count of threads not served: told as it grows, never twice, never back */
static void test_unserved(void)
{
	struct producer a;
	struct out o;
	struct merger *m = new_merger(&o);

	producer_open(&a);
	add_ring(m, 800, 800, &a);
	merger__read_unserved(m);
	CHECK_U64(o.unserved_calls, 0, "unserved: none, nothing told");
	__atomic_store_n(&a.hdr->unserved, 2, __ATOMIC_RELEASE);
	merger__read_unserved(m);
	CHECK(o.unserved_calls == 1 && o.unserved == 2 && o.unserved_pid == 800,
	      "unserved: two, of their process: %u calls, %u", o.unserved_calls, o.unserved);
	merger__read_unserved(m);
	CHECK_U64(o.unserved, 2, "unserved: not told twice");
	__atomic_store_n(&a.hdr->unserved, 1, __ATOMIC_RELEASE);
	merger__read_unserved(m);
	CHECK_U64(o.unserved, 2, "unserved: a count gone back adds nothing");
	__atomic_store_n(&a.hdr->unserved, 5, __ATOMIC_RELEASE);
	/* the process exits and its drained ring goes: read before it is unmapped */
	merger__exited(m, 800);
	merger__pass(m, false);
	CHECK_U64(o.unserved, 5, "unserved: the rest, when its ring goes");
	merger__delete(m);
	producer_close(&a);
}

int main(void)
{
	test_across_threads();
	test_pending_holds_its_process();
	test_corrupt_ring();
	test_stamped_in_future();
	test_unserved();
	return test_done("test-merge");
}
