/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BPF_GRACE_WARMER_H
#define MEMTRACK_BPF_GRACE_WARMER_H

#include <pthread.h>
#include <stdbool.h>

/*
 * Every uprobe registration takes the kernel's dup_mmap_sem for writing,
 * and the first after a quiet spell waits for an RCU grace period there
 * (8-12 ms here); one that comes within a grace period of the last does
 * not wait.  The warmer registers one uprobe, in memtrack's own code that
 * never runs and for memtrack's pid alone, on a thread of its own while
 * the BPF programs load: the first process's probes are then linked
 * inside that window.  Its link stays until the run ends.  Where the shim
 * serves the tree, few runs link probes at all: the warmer links only
 * when the command's program looks like one that will as it starts
 * (backend__guess_links()).
 */
struct grace_warmer {
	pthread_t thread;
	bool started;
	const char *program;	/* to guess from; NULL: it links whatever */
	pthread_mutex_t lock;
	pthread_cond_t guessed_cond;
	bool guessed;
	const char *why;	/* the guess: why links come soon, or NULL */
	int link_fd;		/* -errno if the link could not be made, -1 if not tried */
};

/* program (kept until finish) is the command's, or NULL when its first links are sure */
void grace_warmer__start(struct grace_warmer *w, const char *program);
/* whether the command's first process links probes soon: the guess, once made */
bool grace_warmer__links_soon(struct grace_warmer *w);
/* whether it guesses from the command's program (not where every process links at once) */
bool grace_warmer__guesses(const struct grace_warmer *w);
/* the link's fd (the caller closes it), or -1 */
int grace_warmer__finish(struct grace_warmer *w);

#endif
