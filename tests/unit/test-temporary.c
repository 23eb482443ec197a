// SPDX-License-Identifier: GPL-2.0
/*
 * The "temporary" rule of memtrack report, heaptrack's (its
 * accumulatedtracedata.cpp): a free is temporary when the last allocator
 * event of its process before it allocated a block of the same size with
 * the same call stack; every free of a known block ends the match.  Pinned
 * on interleavings: two blocks freed in order, blocks of one size and
 * stack, a realloc in between (a realloc frees its old block, then
 * allocates), realloc in place and realloc(p, 0), failed calls, an unknown
 * free, two threads of one process, two processes.
 */
#include "check.h"
#include "util/report/report-summary.h"
#include "util/util.h"

#define S1	11	/* call stack ids */
#define S2	12

struct ev {
	enum mt_kind kind;
	int32_t pid, tid;
	uint64_t addr, size, old_addr, stack;
};

#define MALLOC(a, n, st)	{ MT_MALLOC, 1, 1, a, n, 0, st }
#define FREE(a)			{ MT_FREE, 1, 1, a, 0, 0, 0 }
#define REALLOC(old, a, n, st)	{ MT_REALLOC, 1, 1, a, n, old, st }

struct figures {
	uint64_t count, bytes;
	uint64_t count1;	/* of pid 1 */
};

static struct figures run(const struct ev *ev, size_t n)
{
	struct report_summary s;
	struct figures f = { 0 };
	struct report_process *p;
	size_t i;

	CHECK(!report_summary__init(&s, NULL), "init");
	for (i = 0; i < n; i++) {
		struct artifact_record r = {
			.type = ARTIFACT_EVENT, .kind = ev[i].kind, .pid = ev[i].pid,
			.tid = ev[i].tid, .timestamp = 1000 + i, .addr = ev[i].addr,
			.size = ev[i].size, .old_addr = ev[i].old_addr, .stack = ev[i].stack,
		};

		CHECK(!report_summary__add(&s, &r), "add %zu", i);
	}
	report_summary__finish(&s);
	f.count = s.total.temporary_count;
	f.bytes = s.total.temporary_bytes;
	p = report_summary__process(&s, 1);
	f.count1 = p ? p->heap.temporary_count : 0;
	report_summary__exit(&s);
	return f;
}

#define EXPECT(events, n, b, what) do {					\
	struct figures __f = run(events, ARRAY_SIZE(events));		\
	CHECK_U64(__f.count, n, what ": temporaries");			\
	CHECK_U64(__f.bytes, b, what ": temporary bytes");		\
} while (0)

static void test_two_blocks(void)
{
	static const struct ev alone[] = { MALLOC(0xa0, 16, S1), FREE(0xa0) };
	/* A's free follows B's allocation, B's free follows a free */
	static const struct ev in_order[] = {
		MALLOC(0xa0, 16, S1), MALLOC(0xb0, 32, S1), FREE(0xa0), FREE(0xb0),
	};
	/* the same size and stack: A's free matches B's allocation, once */
	static const struct ev alike[] = {
		MALLOC(0xa0, 16, S1), MALLOC(0xb0, 16, S1), FREE(0xa0), FREE(0xb0),
	};
	static const struct ev other_stack[] = {
		MALLOC(0xa0, 16, S1), MALLOC(0xb0, 16, S2), FREE(0xa0), FREE(0xb0),
	};
	/* freed in the other order: B's free follows B's allocation */
	static const struct ev reversed[] = {
		MALLOC(0xa0, 16, S1), MALLOC(0xb0, 32, S1), FREE(0xb0), FREE(0xa0),
	};

	EXPECT(alone, 1, 16, "malloc A, free A");
	EXPECT(in_order, 0, 0, "malloc A, malloc B, free A, free B");
	EXPECT(alike, 1, 16, "A and B alike, freed in order");
	EXPECT(other_stack, 0, 0, "A and B of two stacks");
	EXPECT(reversed, 1, 32, "malloc A, malloc B, free B, free A");
}

static void test_realloc_between(void)
{
	/* the realloc frees A right after A's allocation, then A2 is freed right after its own */
	static const struct ev grow[] = {
		MALLOC(0xa0, 16, S1), REALLOC(0xa0, 0xc0, 32, S2), FREE(0xc0),
	};
	static const struct ev in_place[] = {
		MALLOC(0xa0, 16, S1), REALLOC(0xa0, 0xa0, 32, S1), FREE(0xa0),
	};
	/* B's realloc follows B's allocation; A's free follows B2's allocation */
	static const struct ev between[] = {
		MALLOC(0xa0, 16, S1), MALLOC(0xb0, 48, S1), REALLOC(0xb0, 0xd0, 64, S1),
		FREE(0xa0), FREE(0xd0),
	};
	static const struct ev to_zero[] = { MALLOC(0xa0, 16, S1), REALLOC(0xa0, 0, 0, S1) };
	static const struct ev from_null[] = { REALLOC(0, 0xa0, 16, S1), FREE(0xa0) };
	/* a failed realloc (NULL back, the block stays) takes no part */
	static const struct ev failed[] = {
		MALLOC(0xa0, 16, S1), REALLOC(0xa0, 0, 1ULL << 40, S1), FREE(0xa0),
	};

	EXPECT(grow, 2, 16 + 32, "malloc A, realloc A -> A2, free A2");
	EXPECT(in_place, 2, 16 + 32, "realloc in place");
	EXPECT(between, 1, 48, "a realloc of B between A's malloc and free");
	EXPECT(to_zero, 1, 16, "realloc(p, 0)");
	EXPECT(from_null, 1, 16, "realloc(NULL, n)");
	EXPECT(failed, 1, 16, "a failed realloc between");
}

static void test_calls_that_take_no_part(void)
{
	static const struct ev ev[] = {
		MALLOC(0xa0, 16, S1),
		{ MT_MALLOC, 1, 1, 0, 64, 0, S1 },	/* failed */
		FREE(0),				/* free(NULL) */
		FREE(0xeee0),				/* unknown: allocated before the trace */
		{ MT_MMAP, 1, 1, 0x7f0000, 4096, 0, 0 },
		FREE(0xa0),
	};

	EXPECT(ev, 1, 16, "failed calls, free(NULL), an unknown free, mmap between");
}

static void test_threads_and_processes(void)
{
	/* one process's order, whatever the threads: A's free follows B's allocation */
	static const struct ev threads[] = {
		{ MT_MALLOC, 1, 1, 0xa0, 16, 0, S1 },
		{ MT_MALLOC, 1, 2, 0xb0, 32, 0, S2 },
		{ MT_FREE, 1, 1, 0xa0, 0, 0, 0 },
		{ MT_FREE, 1, 2, 0xb0, 0, 0, 0 },
	};
	/* each process its own order */
	static const struct ev procs[] = {
		{ MT_MALLOC, 1, 1, 0xa0, 16, 0, S1 },
		{ MT_MALLOC, 2, 2, 0xb0, 32, 0, S2 },
		{ MT_FREE, 1, 1, 0xa0, 0, 0, 0 },
		{ MT_FREE, 2, 2, 0xb0, 0, 0, 0 },
	};
	struct figures f;

	EXPECT(threads, 0, 0, "two threads of one process interleaved");
	EXPECT(procs, 2, 16 + 32, "two processes interleaved");
	f = run(procs, ARRAY_SIZE(procs));
	CHECK_U64(f.count1, 1, "two processes: one is pid 1's");
}

int main(void)
{
	test_two_blocks();
	test_realloc_between();
	test_calls_that_take_no_part();
	test_threads_and_processes();
	return test_done("test-temporary");
}
