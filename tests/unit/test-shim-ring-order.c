// SPDX-License-Identifier: GPL-2.0
/*
 * The shim's records (preload/shim.c, built in here) as memtrack's side
 * (util/track/shim-ring.c) reads them, the two on threads of their own: a
 * consumer that sees a record committed sees all of its fields.  A producer
 * that published a record before writing it (its word stored first, or
 * stored without release) would hand the consumer stale fields: zeros on
 * the first lap, an older record's on the next; each record here says by
 * its fields which it is.  The ring fills and the producer waits for room,
 * as a traced program does, however slow the consumer is.
 * timeout: 120
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>

#include "preload/sys.c"
#include "preload/shim.c"

#include "check.h"
#include "util/track/shim-ring.h"

#define RING_SIZE	(256U << 10)
#define RECORDS		(1U << 20)

/* what a test of the records alone does not use: no stacks, no memtrack to say hello to */
uint32_t shim_hello_flags(void)
{
	return 0;
}

void shim_stack_reset(struct shim_thread *t)
{
	(void)t;
}

/* the nth record: malloc, malloc, free of the one before, realloc of the one three before */
static void nth(uint64_t i, struct mt_alloc_event *e)
{
	*e = (struct mt_alloc_event){ .addr = 0x10000 + 16 * i, .size = 1 + i % 100000 };
	switch (i % 4) {
	case 2:
		e->kind = MT_FREE;
		e->addr -= 16;
		e->size = 0;
		break;
	case 3:
		e->kind = MT_REALLOC;
		e->old_addr = e->addr - 3 * 16;
		break;
	default:
		e->kind = MT_MALLOC;
	}
}

struct producer {
	struct shim_thread t;
	bool done;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct shim_pending pend;
	struct mt_alloc_event e;
	uint64_t i;

	for (i = 0; i < RECORDS; i++) {
		nth(i, &e);
		switch (e.kind) {
		case MT_FREE:
			shim_record_free(&p->t, (void *)e.addr);
			break;
		case MT_REALLOC:
			shim_realloc_begin(&p->t, &pend, (void *)e.old_addr, 0);
			shim_realloc_end(&pend, (void *)e.addr, e.size);
			break;
		default:
			shim_record_alloc(&p->t, e.kind, (void *)e.addr, e.size, 0);
		}
	}
	__atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void test_publish_order(void)
{
	static struct shim_control ctl;		/* no poller asleep: nothing to kick */
	static struct shim_proc test_proc;
	struct producer p = { 0 };
	struct mt_alloc_event ev, want;
	struct shim_stack st;
	uint64_t seen = 0, wrong = 0, since;
	enum shim_head h = SHIM_HEAD_EMPTY;
	struct shim_ring r;
	pthread_t thread;
	uint32_t len;
	int sv[2], fd;

	/* a connection that never hangs up: a producer waiting for room waits on */
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	test_proc.sock = sv[0];
	test_proc.sock_ino = fd_ino(sv[0]);
	test_proc.ctl = &ctl;
	test_proc.state = PROC_ACTIVE;
	proc = &test_proc;

	fd = create_ring_fd(RING_SIZE);
	CHECK(fd >= 0, "the ring's memfd");
	p.t.hdr = fd < 0 ? NULL : map_ring(fd, RING_SIZE);
	CHECK(p.t.hdr, "the shim maps the ring");
	CHECK(!shim_ring__map(&r, fd, RING_SIZE, getpid(), 1), "memtrack maps the ring");
	close(fd);
	if (!p.t.hdr || !r.hdr)
		return;
	p.t.data = (uint8_t *)p.t.hdr + SHIM_HDR_SIZE;
	p.t.size = RING_SIZE;
	p.t.populated = UINT64_MAX;
	CHECK(!pthread_create(&thread, NULL, produce, &p));

	while (seen < RECORDS) {
		h = shim_ring__head(&r, &ev, &st, &len);
		if (h == SHIM_HEAD_CORRUPT)
			break;
		if (h == SHIM_HEAD_EMPTY || h == SHIM_HEAD_PENDING) {
			shim_ring__release(&r, true, &since);
			if (h == SHIM_HEAD_EMPTY && __atomic_load_n(&p.done, __ATOMIC_ACQUIRE) &&
			    shim_ring__head(&r, &ev, &st, &len) == SHIM_HEAD_EMPTY)
				break;
			continue;
		}
		nth(seen, &want);
		if (h != SHIM_HEAD_EVENT || ev.kind != want.kind || ev.addr != want.addr ||
		    ev.size != want.size || ev.old_addr != want.old_addr) {
			if (!wrong)
				printf("# record %" PRIu64 ": head %d kind %u addr %#" PRIx64 " size %" PRIu64
				       " old %#" PRIx64 ", written as kind %u addr %#" PRIx64 " size %" PRIu64
				       " old %#" PRIx64 "\n", seen, h, ev.kind, (uint64_t)ev.addr,
				       (uint64_t)ev.size, (uint64_t)ev.old_addr, want.kind,
				       (uint64_t)want.addr, (uint64_t)want.size, (uint64_t)want.old_addr);
			wrong++;
		}
		seen++;
		shim_ring__consume(&r, len);
		shim_ring__release(&r, false, &since);
	}
	CHECK(h != SHIM_HEAD_CORRUPT, "the ring broke a rule: %s after %" PRIu64 " records",
	      r.corrupt ? r.corrupt : "?", seen);
	if (h == SHIM_HEAD_CORRUPT) {
		/* let the producer finish: it waits for room otherwise */
		while (!__atomic_load_n(&p.done, __ATOMIC_ACQUIRE)) {
			r.cons = shim_ring__prod(&r);
			r.corrupt = NULL;
			shim_ring__release(&r, true, &since);
			sched_yield();
		}
	}
	pthread_join(thread, NULL);
	CHECK(seen == RECORDS && !wrong, "%" PRIu64 " records read of %u, %" PRIu64
	      " of them not as written", seen, RECORDS, wrong);
	shim_ring__unmap(&r);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	test_publish_order();
	return test_done("shim-ring-order");
}
