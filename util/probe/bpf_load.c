// SPDX-License-Identifier: GPL-2.0
/*
 * The skeleton loaded on both CPUs.  Its maps are made ahead (the kernel
 * allocates, charges and maps every page of a ring buffer at creation,
 * about 2 ms for 8 MiB, and a hash map's buckets, 0.3 ms for 64K): a job
 * per map, the rings first, taken by a helper thread and by the caller
 * once it has read the kernel's offsets.
 * Then the verifier checks one instance's programs here and the other's
 * on another thread, both instances sharing every map.
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
 * The global data made too, and every map given to obj and to its twin
 * (another instance of the same object).  0 or the first -errno.
 */
int map_maker__finish(struct map_maker *m, struct bpf_object *obj, struct bpf_object *twin)
{
	struct bpf_map *map, *twin_map = NULL;
	unsigned int i = 0;
	int err = 0;

	join_jobs(m);
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map))
			m->fd[i] = create_internal(map);
		twin_map = bpf_object__next_map(twin, twin_map);
		if (m->fd[i] < 0 || !twin_map)
			err = err ? err : m->fd[i] < 0 ? m->fd[i] : -EINVAL;
		else if (bpf_map__reuse_fd(map, m->fd[i]) || bpf_map__reuse_fd(twin_map, m->fd[i]))
			err = err ? err : -errno;
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

struct load_job {
	struct bpf_object_skeleton *s;
	void (*then)(void);
	int err;
};

static void *load_skeleton(void *arg)
{
	struct load_job *j = arg;

	j->err = bpf_object__load_skeleton(j->s);
	if (j->then)
		j->then();
	return NULL;
}

/* a here, b on another thread: the verifier takes milliseconds a program */
int bpf_load__both(struct bpf_object_skeleton *a, struct bpf_object_skeleton *b,
		   void (*then)(void))
{
	struct load_job jb = { .s = b, .then = then };
	pthread_t thread;
	bool started = !pthread_create(&thread, NULL, load_skeleton, &jb);
	int err;

	if (!started)
		load_skeleton(&jb);
	err = bpf_object__load_skeleton(a);
	if (started)
		pthread_join(thread, NULL);
	return err ? err : jb.err;
}
