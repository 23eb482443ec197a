// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/report/report-threads.h"
#include "util/util.h"

struct report_threads *report_threads__new(void)
{
	return calloc(1, sizeof(struct report_threads));
}

void report_threads__delete(struct report_threads *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr_owners; i++)
		u64_map__exit(&t->owners[i]);
	free(t->owners);
	free(t->v);
	u64_map__exit(&t->index);
	u64_map__exit(&t->owner_index);
	free(t);
}

static struct report_thread *get_thread(struct report_threads *t, int32_t pid, int32_t tid,
					size_t *idx)
{
	struct report_thread *th;
	bool added;

	th = u64_map__element(&t->index, (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid,
			      (void **)&t->v, &t->nr, &t->cap, sizeof(*th), &added);
	if (!th)
		return NULL;
	if (added) {
		th->pid = pid;
		th->tid = tid;
	}
	*idx = th - t->v;
	return th;
}

/* pid's map of live blocks to the thread that allocated them; NULL without memory */
static struct u64_map *owners_of(struct report_threads *t, int32_t pid, bool add)
{
	bool added;

	if (!add) {
		const uint64_t *i = u64_map__find(&t->owner_index, (uint32_t)pid);

		return i ? &t->owners[*i] : NULL;
	}
	return u64_map__element(&t->owner_index, (uint32_t)pid, (void **)&t->owners,
				&t->nr_owners, &t->cap_owners, sizeof(*t->owners), &added);
}

int report_threads__alloc(struct report_threads *t, int32_t pid, int32_t tid, uint64_t addr,
			  uint64_t size)
{
	struct u64_map *owners = owners_of(t, pid, true);
	struct report_thread *th;
	uint64_t *slot;
	size_t idx;

	th = owners ? get_thread(t, pid, tid, &idx) : NULL;
	slot = th ? u64_map__get(owners, addr) : NULL;
	if (!slot)
		return -ENOMEM;
	*slot = idx;
	th->allocs++;
	th->bytes_allocated += size;
	th->live_bytes += size;
	th->live_count++;
	if (th->live_bytes > th->peak_bytes)
		th->peak_bytes = th->live_bytes;
	return 0;
}

/* the thread that allocated the live block, taken out of pid's map; NULL when unknown */
static struct report_thread *take_owner(struct report_threads *t, int32_t pid, uint64_t addr,
					uint64_t size)
{
	struct u64_map *owners = owners_of(t, pid, false);
	struct report_thread *th;
	uint64_t idx;

	if (!owners || !u64_map__take(owners, addr, &idx) || idx >= t->nr)
		return NULL;
	th = &t->v[idx];
	th->live_bytes -= size < th->live_bytes ? size : th->live_bytes;
	if (th->live_count)
		th->live_count--;
	return th;
}

int report_threads__free(struct report_threads *t, int32_t pid, int32_t tid, uint64_t addr,
			 uint64_t size)
{
	struct report_thread *th;
	size_t idx;

	take_owner(t, pid, addr, size);
	th = get_thread(t, pid, tid, &idx);
	if (!th)
		return -ENOMEM;
	th->frees++;
	th->bytes_freed += size;
	return 0;
}

void report_threads__forget(struct report_threads *t, int32_t pid, uint64_t addr,
			    uint64_t size)
{
	take_owner(t, pid, addr, size);
}

void report_threads__leak(struct report_threads *t, int32_t pid, uint64_t addr, uint64_t size)
{
	struct u64_map *owners = owners_of(t, pid, false);
	const uint64_t *idx = owners ? u64_map__find(owners, addr) : NULL;

	if (!idx || *idx >= t->nr)
		return;
	t->v[*idx].leaked_count++;
	t->v[*idx].leaked_bytes += size;
}

static int cmp_thread(const void *x, const void *y)
{
	const struct report_thread *a = x, *b = y;

	if (a->bytes_allocated != b->bytes_allocated)
		return a->bytes_allocated > b->bytes_allocated ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

void report_threads__sort(struct report_threads *t)
{
	size_t i;

	if (!t->nr)
		return;
	qsort(t->v, t->nr, sizeof(*t->v), cmp_thread);
	/* the indexes follow: every live block's owner is one of the moved */
	u64_map__exit(&t->index);
	for (i = 0; i < t->nr; i++) {
		uint64_t *slot = u64_map__get(&t->index, (uint64_t)(uint32_t)t->v[i].pid << 32 |
						     (uint32_t)t->v[i].tid);

		if (slot)
			*slot = i;
	}
	for (i = 0; i < t->nr_owners; i++)
		u64_map__exit(&t->owners[i]);
	t->nr_owners = 0;
	u64_map__exit(&t->owner_index);
}
