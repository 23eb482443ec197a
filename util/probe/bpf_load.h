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
 * then handed to the object and to its twins, other instances of it that
 * load other programs (struct bpf_loader).
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
#define MAP_TWINS_MAX	2
int map_maker__finish(struct map_maker *m, struct bpf_object *obj,
		      struct bpf_object *const *twins, unsigned int ntwins);
void map_maker__exit(struct map_maker *m);
/*
 * Three instances' programs loaded on both CPUs: the caller loads its own,
 * while a thread loads b, and then c unless c_now() says not yet: then the
 * first wait for c loads it, in its caller.  A gated c waits, on the
 * thread, until the gate opens (or the first wait for it).
 */
struct bpf_loader_job {
	struct bpf_object_skeleton *b, *c;
	bool (*c_now)(void *arg);	/* NULL: c now */
	void *arg;
	bool c_gated;
};

struct bpf_loader {
	pthread_t thread;
	bool started;
	struct bpf_loader_job job;
	pthread_mutex_t lock;
	pthread_cond_t done;
	int stage;		/* 1: b loaded, 2: c loaded too */
	bool thread_done;
	bool gate_open, abandoned;
	int err[2];
};

void bpf_loader__start(struct bpf_loader *l, const struct bpf_loader_job *job);
/* stage 1: b in; stage 2: c in, loaded here if the thread left it.  0 or the first -errno */
int bpf_loader__wait(struct bpf_loader *l, int stage);
/* the thread's work done (c, or not); 0 or the first -errno of what it loaded */
int bpf_loader__finish(struct bpf_loader *l);
/* a gated c may load now */
void bpf_loader__open_gate(struct bpf_loader *l);
/* the thread joined; c, if never loaded, stays so */
void bpf_loader__exit(struct bpf_loader *l);

#endif
