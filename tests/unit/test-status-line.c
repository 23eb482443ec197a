// SPDX-License-Identifier: GPL-2.0
/* The live status line of track: its words, numbers, plurals and width. */
#include "util/track/status-line.h"
#include "check.h"

static void test_format(void)
{
	struct status_figures f = { .events = 1600042, .processes = 17, .episodes = 3 };
	char buf[256];

	status_line__format(buf, sizeof(buf), 0, 3210000000ULL, &f, 512345, 61 << 20);
	CHECK_STR(buf, "memtrack: 3.2 s, 1.6M events (512.3k/s), 17 processes, 3 pressure "
		  "episodes, RSS 61.0 MiB", "a storm");
	f = (struct status_figures){ .events = 176, .processes = 1, .episodes = 1 };
	status_line__format(buf, sizeof(buf), 0, 40000000, &f, 3903.4, 40 << 20);
	CHECK_STR(buf, "memtrack: 0.0 s, 176 events (3903/s), 1 process, 1 pressure episode, "
		  "RSS 40.0 MiB", "one of each");
	status_line__format(buf, sizeof(buf), 20, 40000000, &f, 3903.4, 40 << 20);
	CHECK_STR(buf, "memtrack: 0.0 s, 176", "cut to the terminal's width");
	f.events = 12345678901ULL;
	status_line__format(buf, sizeof(buf), 0, 0, &f, 0, 0);
	CHECK(strstr(buf, "12.3G events (0/s)"), "%s", buf);
}

int main(void)
{
	test_format();
	return test_done("test-status-line");
}
