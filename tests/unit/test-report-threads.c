// SPDX-License-Identifier: GPL-2.0
/*
 * report --threads' figures: a thread's calls are its own, the live, peak
 * and leaked bytes are those of the blocks it allocated, whoever freed
 * them; a block forgotten (an exec) leaves its thread's live bytes; two
 * processes' same addresses are apart; the sort puts the largest first.
 */
#include "util/report/report-threads.h"
#include "check.h"

static const struct report_thread *thread(const struct report_threads *t, int pid, int tid)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (t->v[i].pid == pid && t->v[i].tid == tid)
			return &t->v[i];
	return NULL;
}

static void test_handoff(void)
{
	struct report_threads *t = report_threads__new();
	const struct report_thread *a, *b, *c;

	CHECK(t != NULL, "new");
	/* pid 10: thread 11 allocates 3 blocks, thread 12 frees two of them */
	CHECK(!report_threads__alloc(t, 10, 11, 0x1000, 100), "alloc");
	CHECK(!report_threads__alloc(t, 10, 11, 0x2000, 200), "alloc");
	CHECK(!report_threads__alloc(t, 10, 11, 0x3000, 300), "alloc");
	CHECK(!report_threads__free(t, 10, 12, 0x1000, 100), "free");
	CHECK(!report_threads__free(t, 10, 12, 0x2000, 200), "free");
	/* pid 20 uses the same address: its own block */
	CHECK(!report_threads__alloc(t, 20, 20, 0x3000, 5000), "alloc");
	CHECK(!report_threads__alloc(t, 10, 11, 0x4000, 50), "alloc");
	report_threads__forget(t, 10, 0x4000, 50);
	report_threads__leak(t, 10, 0x3000, 300);
	report_threads__leak(t, 20, 0x3000, 5000);
	a = thread(t, 10, 11);
	b = thread(t, 10, 12);
	CHECK(a && b, "both threads of pid 10");
	if (!a || !b)
		return;
	CHECK_U64(a->allocs, 4, "allocator's calls");
	CHECK_U64(a->bytes_allocated, 650, "allocator's bytes");
	CHECK_U64(a->frees, 0, "allocator's frees");
	CHECK_U64(a->peak_bytes, 600, "its blocks at their most");
	CHECK_U64(a->live_bytes, 300, "its block still live, the forgotten one gone");
	CHECK_U64(a->leaked_count, 1, "its block at exit");
	CHECK_U64(a->leaked_bytes, 300, "its bytes at exit");
	CHECK_U64(b->allocs, 0, "freeing thread's calls");
	CHECK_U64(b->frees, 2, "freeing thread's frees");
	CHECK_U64(b->bytes_freed, 300, "freeing thread's bytes");
	CHECK_U64(b->leaked_bytes, 0, "freeing thread leaks nothing");
	report_threads__sort(t);
	CHECK_U64(t->nr, 3, "threads");
	c = &t->v[0];
	CHECK(c->pid == 20 && c->leaked_bytes == 5000, "largest first: pid 20's, its leak its own");
	CHECK(t->v[1].tid == 11 && t->v[2].tid == 12, "then by bytes allocated");
	report_threads__delete(t);
}

int main(void)
{
	test_handoff();
	return test_done("report-threads");
}
