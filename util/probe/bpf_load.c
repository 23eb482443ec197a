// SPDX-License-Identifier: GPL-2.0
/*
 * The skeleton loaded on both CPUs.  Its maps are made ahead (the kernel
 * allocates, charges and maps every page of a ring buffer at creation,
 * about 2 ms for 8 MiB, and a hash map's buckets, 0.3 ms for 64K): a job
 * per map, the rings first, taken by a helper thread and by the caller
 * once it has read the kernel's offsets.
 * Then the verifier checks one instance's programs here and two others'
 * in turn on another thread, every instance sharing every map.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/probe/bpf_load.h"
#include "util/util.h"

/* a map as libbpf would make it at load (no BTF: none of ours needs it) */
static int create_like(struct bpf_map *map)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(map));
	char name[BPF_OBJ_NAME_LEN];
	int fd;

	snprintf(name, sizeof(name), "%s", bpf_map__name(map));
	fd = bpf_map_create(bpf_map__type(map), name, bpf_map__key_size(map),
			    bpf_map__value_size(map), bpf_map__max_entries(map), &opts);
	return fd < 0 ? -errno : fd;
}

/* a global data section's map, with the values the caller set; read-only ones frozen */
static int create_internal(struct bpf_map *map)
{
	size_t size = 0;
	const void *init = bpf_map__initial_value(map, &size);
	int zero = 0, fd = create_like(map);

	if (fd < 0)
		return fd;
	if ((init && size && bpf_map_update_elem(fd, &zero, init, 0)) ||
	    ((bpf_map__map_flags(map) & BPF_F_RDONLY_PROG) && bpf_map_freeze(fd))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static struct bpf_map *map_at(struct bpf_object *obj, unsigned int index)
{
	struct bpf_map *map;
	unsigned int i = 0;

	bpf_object__for_each_map(map, obj)
		if (i++ == index)
			return map;
	return NULL;
}

/* maps taken in turn by whoever is free, the helper or the caller */
static void *make_maps(void *arg)
{
	struct map_maker *m = arg;
	unsigned int job, i;

	while ((job = __atomic_fetch_add(&m->next_job, 1, __ATOMIC_RELAXED)) < m->njobs) {
		i = m->job[job];
		m->fd[i] = create_like(map_at(m->obj, i));
	}
	return NULL;
}

/*
 * Every map of obj but its global data, whose values the caller may still
 * set: the ring buffers first (each takes milliseconds), then the others.
 * 0, or -E2BIG for more maps than it can hold.
 */
int map_maker__start(struct map_maker *m, struct bpf_object *obj)
{
	unsigned int i = 0, rings = 0;
	struct bpf_map *map;

	memset(m, 0, sizeof(*m));
	m->obj = obj;
	bpf_object__for_each_map(map, obj) {
		if (i == MAPS_MAX)
			return -E2BIG;
		m->fd[i] = -ENOENT;
		if (bpf_map__type(map) == BPF_MAP_TYPE_RINGBUF) {
			memmove(m->job + rings + 1, m->job + rings,
				(m->njobs - rings) * sizeof(*m->job));
			m->job[rings++] = i;
			m->njobs++;
		} else if (!bpf_map__is_internal(map)) {
			m->job[m->njobs++] = i;
		}
		i++;
	}
	m->nmaps = i;
	m->helping = !pthread_create(&m->helper, NULL, make_maps, m);
	return 0;
}

/* the maps left made here: two CPUs, and the kernel does not yield in a ring's creation */
static void join_jobs(struct map_maker *m)
{
	make_maps(m);
	if (m->helping)
		pthread_join(m->helper, NULL);
	m->helping = false;
}

/*
 * The global data made too, and every map given to obj and to its twins
 * (other instances of the same object).  0 or the first -errno.
 */
int map_maker__finish(struct map_maker *m, struct bpf_object *obj,
		      struct bpf_object *const *twins, unsigned int ntwins)
{
	struct bpf_map *map, *twin_map[MAP_TWINS_MAX] = { NULL };
	unsigned int i = 0, j;
	int err = ntwins > MAP_TWINS_MAX ? -E2BIG : 0;

	join_jobs(m);
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map))
			m->fd[i] = create_internal(map);
		if (m->fd[i] < 0 || bpf_map__reuse_fd(map, m->fd[i]))
			err = err ? err : m->fd[i] < 0 ? m->fd[i] : -errno;
		for (j = 0; j < ntwins && j < MAP_TWINS_MAX; j++) {
			twin_map[j] = bpf_object__next_map(twins[j], twin_map[j]);
			if (!twin_map[j])
				err = err ? err : -EINVAL;
			else if (m->fd[i] >= 0 && bpf_map__reuse_fd(twin_map[j], m->fd[i]))
				err = err ? err : -errno;
		}
		/* each object holds its own copy: ours go now, not at the load's peak of descriptors */
		if (m->fd[i] >= 0)
			close(m->fd[i]);
		m->fd[i] = -ENOENT;
		i++;
	}
	return err;
}

/* our copies: the objects hold their own */
void map_maker__exit(struct map_maker *m)
{
	unsigned int i;

	join_jobs(m);
	for (i = 0; i < m->nmaps; i++)
		if (m->fd[i] >= 0)
			close(m->fd[i]);
	m->nmaps = 0;
}

static void *load_in_turn(void *arg)
{
	struct bpf_loader *l = arg;
	int err = bpf_object__load_skeleton(l->job.b);
	bool load_c;

	pthread_mutex_lock(&l->lock);
	l->err[0] = err;
	l->stage = 1;
	pthread_cond_broadcast(&l->done);
	pthread_mutex_unlock(&l->lock);
	load_c = !l->job.c_now || l->job.c_now(l->job.arg);
	pthread_mutex_lock(&l->lock);
	while (load_c && l->job.c_gated && !l->gate_open)
		pthread_cond_wait(&l->done, &l->lock);
	/* a wait for c while the gate was shut loaded it; an exit before it opened wants none */
	load_c = load_c && l->stage < 2 && !l->abandoned;
	pthread_mutex_unlock(&l->lock);
	if (load_c)
		err = bpf_object__load_skeleton(l->job.c);
	pthread_mutex_lock(&l->lock);
	if (load_c) {
		l->err[1] = err;
		l->stage = 2;
	}
	l->thread_done = true;
	pthread_cond_broadcast(&l->done);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

void bpf_loader__start(struct bpf_loader *l, const struct bpf_loader_job *job)
{
	*l = (struct bpf_loader){ .job = *job };
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->done, NULL);
	l->started = !pthread_create(&l->thread, NULL, load_in_turn, l);
	if (!l->started) {
		l->job.c_gated = false;
		load_in_turn(l);	/* no thread: all of it here, at once */
	}
}

int bpf_loader__wait(struct bpf_loader *l, int stage)
{
	int err;

	pthread_mutex_lock(&l->lock);
	while (l->stage < stage && !(l->thread_done && stage > 1) &&
	       !(stage > 1 && l->job.c_gated && !l->gate_open))
		pthread_cond_wait(&l->done, &l->lock);
	if (l->stage < stage) {
		/* c left for its first use: loaded now, by this caller */
		l->err[1] = bpf_object__load_skeleton(l->job.c);
		l->stage = 2;
	}
	err = l->err[0] ? l->err[0] : stage > 1 ? l->err[1] : 0;
	pthread_mutex_unlock(&l->lock);
	return err;
}

int bpf_loader__finish(struct bpf_loader *l)
{
	int err;

	pthread_mutex_lock(&l->lock);
	while (!l->thread_done)
		pthread_cond_wait(&l->done, &l->lock);
	err = l->err[0] ? l->err[0] : l->err[1];
	pthread_mutex_unlock(&l->lock);
	return err;
}

void bpf_loader__open_gate(struct bpf_loader *l)
{
	pthread_mutex_lock(&l->lock);
	l->gate_open = true;
	pthread_cond_broadcast(&l->done);
	pthread_mutex_unlock(&l->lock);
}

void bpf_loader__exit(struct bpf_loader *l)
{
	pthread_mutex_lock(&l->lock);
	l->abandoned = !l->gate_open;	/* a command that never started */
	l->gate_open = true;
	pthread_cond_broadcast(&l->done);
	pthread_mutex_unlock(&l->lock);
	if (l->started)
		pthread_join(l->thread, NULL);
	l->started = false;
}
