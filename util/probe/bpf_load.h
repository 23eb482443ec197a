/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BPF_LOAD_H
#define MEMTRACK_BPF_LOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bpf_object;
struct bpf_object_skeleton;

#define MAPS_MAX	64

/*
 * The maps of an object made ahead of its load, by a helper thread and by
 * the caller once its own work is done, while the caller does other work;
 * then handed to the object and to its twin, a second instance of it that
 * loads other programs (bpf_load__both).
 */
struct map_maker {
	pthread_t helper;
	bool helping;
	struct bpf_object *obj;
	unsigned int job[MAPS_MAX];	/* the maps' indexes, in the order made */
	unsigned int njobs, next_job, nmaps;
	int fd[MAPS_MAX];	/* a map's, or -errno */
};

int map_maker__start(struct map_maker *m, struct bpf_object *obj);
int map_maker__finish(struct map_maker *m, struct bpf_object *obj, struct bpf_object *twin);
void map_maker__exit(struct map_maker *m);
/* then(), if any, runs after b's load on b's thread: a's is mostly the longer */
int bpf_load__both(struct bpf_object_skeleton *a, struct bpf_object_skeleton *b,
		   void (*then)(void));

#endif
