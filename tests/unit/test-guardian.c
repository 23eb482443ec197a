// SPDX-License-Identifier: GPL-2.0
/*
 * The guardian's two ways of taking links (util/probe/pressure.c): those
 * handed over are kept until memtrack is gone, those given to close are
 * released at once, by the guardian.  Pipes stand for the links: a pipe's
 * reader sees EOF once the guardian has closed the last writer.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <unistd.h>

#include "check.h"
#include "util/probe/pressure.h"

static bool eof_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 0;
}

static void test_kept_and_closed(void)
{
	int kept[2], closed[2], null_fd, guardian;

	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(null_fd >= 0 && !pipe2(kept, O_CLOEXEC) && !pipe2(closed, O_CLOEXEC));
	/* /dev/null stands for the map: the guardian's resumes fail on it, harmlessly */
	guardian = pressure__start_guardian(null_fd);
	CHECK(guardian >= 0, "%d", guardian);
	if (guardian < 0)
		return;
	CHECK(!pressure__hand_over(guardian, &kept[1], 1));
	close(kept[1]);
	CHECK(!pressure__close_by_guardian(guardian, &closed[1], 1));
	CHECK(eof_within(closed[0], 10000), "a link given to close is released at once");
	CHECK(!eof_within(kept[0], 0), "a link handed over is kept while memtrack runs");
	close(guardian);
	CHECK(eof_within(kept[0], 10000), "and released once memtrack's end is closed");
	close(kept[0]);
	close(closed[0]);
	close(null_fd);
}

int main(void)
{
	test_kept_and_closed();
	return test_done("test-guardian");
}
