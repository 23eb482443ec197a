/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_UNIT_FIFO_WRITER_H
#define MEMTRACK_UNIT_FIFO_WRITER_H

/*
 * A FIFO with a writer waiting in open() for a reader: what must never be
 * opened is tried on it, and the writer still waiting after shows it was not.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* the FIFO made at path and its writer's pid, or -1 */
static inline pid_t fifo_writer_start(const char *path)
{
	pid_t writer;

	if (mkfifo(path, 0600))
		return -1;
	writer = fork();
	if (writer == 0)
		_exit(open(path, O_WRONLY) < 0);
	usleep(20000);	/* the writer in its open(), or not yet: either way it waits */
	return writer;
}

/* whether the writer still waits, a while after what was tried; it is ended, the FIFO removed */
static inline bool fifo_writer_still_waits(pid_t writer, const char *path)
{
	int status;
	bool waits;

	usleep(100000);
	waits = waitpid(writer, &status, WNOHANG) == 0;
	kill(writer, SIGKILL);
	waitpid(writer, &status, 0);
	unlink(path);
	return waits;
}

#endif
