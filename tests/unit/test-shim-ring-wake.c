// SPDX-License-Identifier: GPL-2.0
/*
 * The consumer's release of a shim ring (util/track/shim-ring.c) wakes a
 * producer that sleeps on the ring's futex, once room is made, and says
 * since when it waited.  Without the wake-up the producer would still run
 * on after its wait slice (100 ms in the shim), so every count stays exact
 * and only the bench would notice: here a waiter with a 5 s slice must be
 * woken, not time out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "util/track/shim-ring.h"

#define RING_SIZE	(64U << 10)
#define WAIT_START	123456789ULL

struct waiter {
	struct shim_ring_hdr *h;
	int err;		/* of the futex wait: 0 or EAGAIN woken, ETIMEDOUT not */
};

/* the shim's side: a full ring, a wait on cons_gen */
static void *producer(void *arg)
{
	struct waiter *w = arg;
	struct timespec slice = { .tv_sec = 5 };
	uint32_t gen = __atomic_load_n(&w->h->cons_gen, __ATOMIC_ACQUIRE);

	__atomic_store_n(&w->h->prod, RING_SIZE, __ATOMIC_RELEASE);
	__atomic_store_n(&w->h->wait_start, WAIT_START, __ATOMIC_RELAXED);
	__atomic_store_n(&w->h->waiting, 1, __ATOMIC_SEQ_CST);
	w->err = syscall(SYS_futex, &w->h->cons_gen, FUTEX_WAIT, gen, &slice, NULL, 0) ? errno : 0;
	return NULL;
}

static void test_release_wakes_waiter(void)
{
	int fd = memfd_create("test-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct waiter w = { .err = -1 };
	struct timespec settle = { .tv_nsec = 50 * 1000 * 1000 };
	struct shim_ring r;
	uint64_t since = 0;
	pthread_t t;

	CHECK(fd >= 0 && !ftruncate(fd, SHIM_HDR_SIZE + RING_SIZE) &&
	      !fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
	CHECK(!shim_ring__map(&r, fd, RING_SIZE, getpid(), 1), "the ring maps");
	close(fd);
	if (!r.hdr)
		return;
	w.h = r.hdr;
	CHECK(!pthread_create(&t, NULL, producer, &w));
	while (!__atomic_load_n(&r.hdr->waiting, __ATOMIC_ACQUIRE))
		sched_yield();
	nanosleep(&settle, NULL);	/* into its futex wait */

	r.cons = RING_SIZE;		/* the poller read all of it */
	shim_ring__release(&r, false, &since);
	pthread_join(t, NULL);
	CHECK(w.err == 0 || w.err == EAGAIN, "the waiter is woken, not timed out (errno %d)", w.err);
	CHECK_U64(since, WAIT_START, "the release says since when it waited");
	CHECK_U64(r.hdr->cons, RING_SIZE, "the room is given back");
	shim_ring__unmap(&r);
}

int main(void)
{
	test_release_wakes_waiter();
	return test_done("test-shim-ring-wake");
}
