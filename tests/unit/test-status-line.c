// SPDX-License-Identifier: GPL-2.0
/* The live status line of track: its words, numbers, plurals and width; the live heap. */
#include "util/track/live-heap.h"
#include "util/track/status-line.h"
#include "check.h"

static void test_format(void)
{
	struct status_figures f = {
		.events = 1600042, .processes = 17, .live_bytes = 61 << 20, .episodes = 3,
	};
	char buf[256];

	status_line__format(buf, sizeof(buf), 0, 3210000000ULL, &f, 512345);
	CHECK_STR(buf, "memtrack: 3.2 s, 1.6M events (512.3k/s), 17 processes, heap 61.0 MiB "
		  "live, 3 pressure episodes", "a storm");
	f = (struct status_figures){ .events = 176, .processes = 1, .live_bytes = 40,
				     .episodes = 1 };
	status_line__format(buf, sizeof(buf), 0, 40000000, &f, 3903.4);
	CHECK_STR(buf, "memtrack: 0.0 s, 176 events (3903/s), 1 process, heap 40 B live, "
		  "1 pressure episode", "one of each");
	status_line__format(buf, sizeof(buf), 20, 40000000, &f, 3903.4);
	CHECK_STR(buf, "memtrack: 0.0 s, 176", "cut to the terminal's width");
	f.events = 12345678901ULL;
	status_line__format(buf, sizeof(buf), 0, 0, &f, 0);
	CHECK(strstr(buf, "12.3G events (0/s)"), "%s", buf);
}

static struct mt_alloc_event event(uint32_t kind, uint32_t pid, uint64_t addr, uint64_t size,
				   uint64_t old_addr)
{
	return (struct mt_alloc_event){ .kind = kind, .pid = pid, .addr = addr, .size = size,
					.old_addr = old_addr };
}

/* what is allocated and not freed, per process: the same address in two is two blocks */
static void test_live_heap(void)
{
	struct live_heap h;
	struct mt_alloc_event e;

	live_heap__init(&h);
	e = event(MT_MALLOC, 10, 0x1000, 100, 0);
	live_heap__add(&h, &e);
	e = event(MT_CALLOC, 11, 0x1000, 30, 0);
	live_heap__add(&h, &e);
	CHECK(live_heap__bytes(&h) == 130, "two processes, one address: %lu",
	      (unsigned long)live_heap__bytes(&h));
	e = event(MT_REALLOC, 10, 0x2000, 250, 0x1000);
	live_heap__add(&h, &e);
	CHECK(live_heap__bytes(&h) == 280, "a realloc that moved: %lu",
	      (unsigned long)live_heap__bytes(&h));
	e = event(MT_FREE, 11, 0x1000, 0, 0);
	live_heap__add(&h, &e);
	e = event(MT_FREE, 11, 0x9999, 0, 0);
	live_heap__add(&h, &e);
	CHECK(live_heap__bytes(&h) == 250, "frees, one of a block not seen: %lu",
	      (unsigned long)live_heap__bytes(&h));
	e = event(MT_REALLOC, 10, 0, 0, 0x2000);
	live_heap__add(&h, &e);
	e = event(MT_MMAP, 10, 0x7000, 4096, 0);
	live_heap__add(&h, &e);
	CHECK(live_heap__bytes(&h) == 0, "realloc(p, 0), and an mmap is no heap: %lu",
	      (unsigned long)live_heap__bytes(&h));
	live_heap__exit(&h);
}

int main(void)
{
	test_format();
	test_live_heap();
	return test_done("test-status-line");
}
