// SPDX-License-Identifier: GPL-2.0
/*
 * Call stacks in the traced process: frame pointers (fp), or the CFI of
 * .eh_frame (dwarf: right in code built without frame pointers, cfi.c).
 * Each thread numbers its distinct stacks 1, 2, ... and sends a stack's
 * frames once, before the first event that names it; equal stacks are told
 * apart by a 64-bit hash of their frames.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "shim.h"

#define TABLE_FIRST_CAP		1024

struct text_range {
	uintptr_t lo, hi;
};

/* the shim's code: its own frames, to skip */
static struct text_range shim_text;

static void add_range(struct text_range *r, const struct dl_phdr_info *info)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!r->lo || lo < r->lo)
			r->lo = lo;
		if (hi > r->hi)
			r->hi = hi;
	}
}

static bool in_range(const struct text_range *r, uintptr_t a)
{
	return a >= r->lo && a < r->hi;
}

static int find_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_range probe = { 0 };

	(void)size;
	(void)arg;
	add_range(&probe, info);
	if (in_range(&probe, (uintptr_t)shim_stack_init))
		shim_text = probe;
	return 0;
}

void shim_stack_init(void)
{
	dl_iterate_phdr(find_ranges, NULL);
}

/* the thread's stack, for bounding a frame pointer walk: the mapping around sp */
static bool stack_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	char buf[4096], *line, *nl;
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	bool found = false;
	ssize_t n;

	if (fd < 0)
		return false;
	while (!found && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += n;
		buf[have] = 0;
		for (line = buf; !found && (nl = strchr(line, '\n')); line = nl + 1) {
			unsigned long a = 0, b = 0;
			char *p = line;

			while (*p != '-')
				a = a * 16 + (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10), p++;
			for (p++; *p != ' '; p++)
				b = b * 16 + (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
			if (sp >= a && sp < b) {
				*lo = a;
				*hi = b;
				found = true;
			}
		}
		have = buf + have - line;
		memmove(buf, line, have);
	}
	close(fd);
	return found;
}

static __thread uintptr_t stack_lo, stack_hi __attribute__((tls_model("initial-exec")));

static bool frame_ok(const uintptr_t *fp, uintptr_t sp)
{
	return (uintptr_t)fp >= sp && (uintptr_t)fp + 16 <= stack_hi && !((uintptr_t)fp & 7);
}

/*
 * The frame of the exported function the program called: the shim's own
 * frames all keep frame pointers; the first return address out of the
 * shim's code is the program's.  NULL when the stack is not known.
 */
static const uintptr_t *program_caller_frame(void)
{
	const uintptr_t *fp = __builtin_frame_address(0);
	uintptr_t sp = (uintptr_t)fp;

	if (!stack_hi || sp < stack_lo || sp >= stack_hi)
		if (!stack_bounds(sp, &stack_lo, &stack_hi))
			return NULL;
	while (frame_ok(fp, sp) && in_range(&shim_text, fp[1])) {
		if ((const uintptr_t *)fp[0] <= fp)
			return NULL;
		fp = (const uintptr_t *)fp[0];
	}
	return frame_ok(fp, sp) ? fp : NULL;
}

static uint32_t fp_walk(uint64_t *ips, uint32_t max)
{
	const uintptr_t *fp = program_caller_frame(), *next;
	uintptr_t sp = (uintptr_t)fp;
	uint32_t nr = 0;

	while (fp && nr < max && frame_ok(fp, sp) && fp[1]) {
		ips[nr++] = fp[1];
		next = (const uintptr_t *)fp[0];
		if (next <= fp)
			break;
		fp = next;
	}
	return nr;
}

/* from the program's caller on by CFI: its sp is above the return address, its rbp saved below */
static uint32_t dwarf_walk(uint64_t *ips, uint32_t max)
{
	const uintptr_t *fp = program_caller_frame();

	if (!fp)
		return 0;
	return shim_cfi_walk(fp[1], (uintptr_t)(fp + 2), fp[0], stack_hi, ips, max);
}

static uint64_t hash_ips(const uint64_t *ips, uint32_t nr)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t i;

	for (i = 0; i < nr; i++) {
		h = (h ^ ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static bool table_grow(struct shim_stack_table *tb)
{
	uint32_t cap = tb->cap ? 2 * tb->cap : TABLE_FIRST_CAP, i;
	size_t bytes = (size_t)cap * (sizeof(uint64_t) + sizeof(uint32_t));
	uint8_t *mem = shim_mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	uint64_t *hashes;
	uint32_t *ids;

	if (mem == MAP_FAILED)
		return false;
	hashes = (uint64_t *)mem;
	ids = (uint32_t *)(mem + (size_t)cap * sizeof(uint64_t));
	for (i = 0; i < tb->cap; i++) {
		uint32_t j;

		if (!tb->hashes[i])
			continue;
		for (j = tb->hashes[i] & (cap - 1); hashes[j]; j = (j + 1) & (cap - 1))
			;
		hashes[j] = tb->hashes[i];
		ids[j] = tb->ids[i];
	}
	if (tb->cap)
		shim_munmap(tb->hashes, (size_t)tb->cap * (sizeof(uint64_t) + sizeof(uint32_t)));
	tb->hashes = hashes;
	tb->ids = ids;
	tb->cap = cap;
	return true;
}

void shim_stack_reset(struct shim_thread *t)
{
	struct shim_stack_table *tb = &t->stacks;

	if (tb->cap)
		memset(tb->hashes, 0, (size_t)tb->cap * sizeof(uint64_t));
	tb->n = 0;
	t->next_stack_id = 0;
}

/* the id of this stack in the thread's table, a new one (sent first) if unseen */
static uint32_t intern(struct shim_thread *t, const uint64_t *ips, uint32_t nr)
{
	struct shim_stack_table *tb = &t->stacks;
	uint64_t h = hash_ips(ips, nr);
	uint32_t i, id;

	if ((tb->n + 1) * 2 > tb->cap && !table_grow(tb))
		return 0;
	for (i = h & (tb->cap - 1); tb->hashes[i]; i = (i + 1) & (tb->cap - 1))
		if (tb->hashes[i] == h)
			return tb->ids[i];
	id = t->next_stack_id + 1;
	if (!shim_write_stack(t, id, ips, nr))
		return 0;
	t->next_stack_id = id;
	tb->hashes[i] = h;
	tb->ids[i] = id;
	tb->n++;
	return id;
}

uint32_t shim_stack_id(struct shim_thread *t)
{
	uint64_t ips[SHIM_MAX_FRAMES];
	uint32_t nr, id;

	if (shim_call_graph == MT_CALL_GRAPH_NO || t->unwinding)
		return 0;
	t->unwinding++;
	nr = shim_call_graph == MT_CALL_GRAPH_FP ? fp_walk(ips, SHIM_MAX_FRAMES) :
						   dwarf_walk(ips, SHIM_MAX_FRAMES);
	id = nr ? intern(t, ips, nr) : 0;
	t->unwinding--;
	return id;
}
