// SPDX-License-Identifier: GPL-2.0
/*
 * Call stacks in the traced process: frame pointers (fp), or the CFI of
 * .eh_frame (dwarf: right in code built without frame pointers, cfi.c).
 * Each thread numbers its distinct stacks 1, 2, ... and sends a stack's
 * frames once, before the first event that names it; equal stacks are told
 * apart by a 64-bit hash of their frames.
 *
 * Both walks start from the program's frame at its call, which the
 * exported function took from its own frame (struct shim_caller): the
 * shim's frames are not walked, and whatever the program keeps in rbp (a
 * program built without frame pointers keeps anything there) is a value
 * to check, never an address to follow unchecked.  Every word of the
 * stack they read lies in a span proven readable, stack_span() below.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "shim.h"
#include "util/hash-ips.h"

#define PAGE			4096UL
#define TABLE_FIRST_CAP		128	/* shares the walk page with the frames */
#define COPY_SIZE		(16UL << 10)
#define COPY_IOVS		(COPY_SIZE / PAGE + 1)
#define MAPS_RETRY		256	/* walks without bounds before maps are read again */
#define MAIN_STACK_REACH	(128UL << 20)	/* the kernel keeps this much below [stack] for it */

/*
 * What of the stack may be read.  Two ranges are known to stay mapped for
 * as long as a thread may use them, and only those are kept from walk to
 * walk, per thread:
 *
 * - the process's [stack]: never unmapped, and it only grows down, its top
 *   fixed, so [sp, top) is readable for any sp inside it, whichever thread
 *   runs there;
 * - this thread's own stack, below its TLS: glibc (and musl) put a
 *   thread's TLS at the top of the block they map for its stack, and unmap
 *   the block only after the thread has ended (a block they reuse comes
 *   with its TLS, this cache with it, set afresh).  It is taken only in a
 *   private anonymous mapping with a guard page below, as theirs have: a
 *   neighbour merged into it could be unmapped later.
 *
 * Anything else (a makecontext or coroutine stack, a sigaltstack, a stack
 * a thread was cloned onto, the heap) may be unmapped and its range
 * reused between two calls: its bounds are never cached.  A walk there
 * reads a copy of the stack above sp, which process_vm_readv() takes up to
 * the first unreadable page instead of faulting; when that fails (a
 * seccomp filter), the stack is the caller's return address alone, which
 * the exported function read from its own frame.
 */
struct stack_ranges {
	uintptr_t own_lo, own_hi;
	uintptr_t main_lo, main_hi;
	uint32_t known;		/* maps were read */
	uint32_t retry;		/* walks left until maps are read again */
	uint8_t *copy;		/* COPY_SIZE bytes, for foreign stacks */
};

static __thread struct stack_ranges ranges __attribute__((tls_model("initial-exec")));
static bool copy_refused;	/* said once: a sandbox's filter, most likely */

struct maps_line {
	uintptr_t lo, hi;
	char perms[4];
	uintptr_t inode;
	const char *path;	/* "" for an anonymous mapping */
};

static bool parse_hex(const char **p, uintptr_t *out)
{
	const char *s = *p;
	uintptr_t v = 0;
	int n = 0;

	for (;; s++, n++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')
			d = (*s | 0x20) - 'a' + 10;
		else
			break;
		if (n == 16)
			return false;
		v = v << 4 | d;
	}
	*p = s;
	*out = v;
	return n > 0;
}

static bool parse_dec(const char **p, uintptr_t *out)
{
	const char *s = *p;
	uintptr_t v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	*p = s;
	*out = v;
	return true;
}

/* "lo-hi perms offset dev inode   path" */
static bool parse_maps_line(const char *s, struct maps_line *m)
{
	uintptr_t ignored;

	if (!parse_hex(&s, &m->lo) || *s++ != '-' || !parse_hex(&s, &m->hi) || *s++ != ' ')
		return false;
	if (strnlen(s, 5) < 5 || s[4] != ' ')
		return false;
	memcpy(m->perms, s, 4);
	s += 5;
	if (!parse_hex(&s, &ignored) || *s++ != ' ' || !parse_hex(&s, &ignored) || *s++ != ':' ||
	    !parse_hex(&s, &ignored) || *s++ != ' ' || !parse_dec(&s, &m->inode))
		return false;
	while (*s == ' ')
		s++;
	m->path = s;
	return m->lo < m->hi;
}

struct maps_scan {
	uintptr_t tls;		/* an address in this thread's TLS; 0: not looked for */
	uintptr_t prev_hi;	/* the line before: where it ends, and whether a guard */
	bool prev_guard;
	bool found_own, found_main;
};

static void scan_line(struct maps_scan *sc, const struct maps_line *m)
{
	bool anon = !m->inode && !m->path[0], readable = m->perms[0] == 'r';

	if (sc->tls && sc->tls >= m->lo && sc->tls < m->hi && anon && readable &&
	    m->perms[3] == 'p' && sc->prev_guard && sc->prev_hi == m->lo) {
		ranges.own_lo = m->lo;
		ranges.own_hi = sc->tls & ~(uintptr_t)7;
		sc->found_own = true;
	}
	if (readable && !strcmp(m->path, "[stack]")) {
		ranges.main_lo = m->lo;
		ranges.main_hi = m->hi;
		sc->found_main = true;
	}
	sc->prev_hi = m->hi;
	sc->prev_guard = !memcmp(m->perms, "---p", 4);
}

/* the two ranges, from the kernel's list of mappings; false when it cannot be read */
static bool read_ranges(void)
{
	struct maps_scan sc = { 0 };
	char buf[1024];		/* no bigger: on the thread's stack, a page more of its memory */
	size_t have = 0;
	bool skipping = false;
	ssize_t n;
	int fd;

	/* the main thread's TLS is not in a stack; a raw clone may share another's */
	if (syscall(SYS_gettid) != getpid())
		sc.tls = (uintptr_t)&ranges;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ranges.own_lo = ranges.own_hi = ranges.main_lo = ranges.main_hi = 0;
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *line = buf, *nl;

		have += n;
		buf[have] = 0;
		while ((nl = memchr(line, '\n', buf + have - line))) {
			struct maps_line m;

			*nl = 0;
			if (!skipping && parse_maps_line(line, &m))
				scan_line(&sc, &m);
			skipping = false;
			line = nl + 1;
		}
		have = buf + have - line;
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1) {
			/* a line longer than the buffer: its mapping is not one we look for */
			skipping = true;
			have = 0;
		}
	}
	close(fd);
	return n == 0;
}

static bool in_range(uintptr_t a, uintptr_t lo, uintptr_t hi)
{
	return a >= lo && a < hi;
}

/* may a cached range have grown to hold sp: the main stack below its old start */
static bool main_stack_grew(uintptr_t sp)
{
	return ranges.main_hi && sp < ranges.main_lo && ranges.main_hi - sp <= MAIN_STACK_REACH;
}

static inline bool cached_span(uintptr_t sp, struct shim_span *s)
{
	if (in_range(sp, ranges.own_lo, ranges.own_hi)) {
		*s = (struct shim_span){ .lo = sp, .hi = ranges.own_hi };
		return true;
	}
	if (in_range(sp, ranges.main_lo, ranges.main_hi)) {
		*s = (struct shim_span){ .lo = sp, .hi = ranges.main_hi };
		return true;
	}
	return false;
}

/* the stack above sp as far as it can be read, in page-sized pieces: none splits a page */
static bool copy_span(uintptr_t sp, struct shim_span *s)
{
	struct iovec local, remote[COPY_IOVS];
	uintptr_t a = sp, end;
	unsigned int n = 0;
	ssize_t got;

	if (!ranges.copy) {
		void *m = shim_mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return false;
		ranges.copy = m;
	}
	end = sp + COPY_SIZE < sp ? UINTPTR_MAX : sp + COPY_SIZE;
	while (a < end && n < COPY_IOVS) {
		uintptr_t next = (a | (PAGE - 1)) + 1;

		if (!next || next > end)
			next = end;
		remote[n++] = (struct iovec){ (void *)a, next - a };
		a = next;
	}
	local = (struct iovec){ ranges.copy, end - sp };
	got = syscall(SYS_process_vm_readv, getpid(), &local, 1UL, remote, (unsigned long)n, 0UL);
	if (got < 0 && (errno == EPERM || errno == ENOSYS) &&
	    !__atomic_exchange_n(&copy_refused, true, __ATOMIC_RELAXED))
		shim_warn("call stacks on a stack of unknown bounds (a coroutine's, a signal's) "
			  "are cut to their first frame: process_vm_readv: ",
			  strerrordesc_np(errno));
	if (got <= 0)
		return false;
	*s = (struct shim_span){ .lo = sp, .hi = sp + got, .copy = ranges.copy };
	return true;
}

static bool foreign_span(uintptr_t sp, struct shim_span *s)
{
	if ((!ranges.known && !ranges.retry) || main_stack_grew(sp)) {
		ranges.known = read_ranges();
		ranges.retry = ranges.known ? 0 : MAPS_RETRY;
		if (cached_span(sp, s))
			return true;
	} else if (ranges.retry) {
		ranges.retry--;
	}
	return copy_span(sp, s);
}

/* what of the stack above sp a walk may read (see struct stack_ranges) */
static bool stack_span(uintptr_t sp, struct shim_span *s)
{
	int saved_errno;
	bool ok;

	if (likely(cached_span(sp, s)))
		return true;
	/* maps, a copy of the stack: their system calls' errno is not the program's */
	saved_errno = errno;
	ok = foreign_span(sp, s);
	errno = saved_errno;
	return ok;
}

static uint32_t fp_walk(const struct shim_span *stack, const struct shim_caller *c,
			uint64_t *ips, uint32_t max)
{
	uintptr_t fp = c->bp, next, ra;
	uint32_t nr = 0;

	if (!c->ip)
		return 0;
	ips[nr++] = c->ip;
	/* each frame above the last: no cycle, and no walk longer than the span */
	while (nr < max && shim_span_word(stack, fp, &next) && shim_span_word(stack, fp + 8, &ra)) {
		if (!ra)
			break;
		ips[nr++] = ra;
		if (next <= fp)
			break;
		fp = next;
	}
	return nr;
}

static size_t table_bytes(uint32_t cap)
{
	return (size_t)cap * (sizeof(uint64_t) + sizeof(uint32_t));
}

/*
 * The thread's walk page: the frames of a walk, then the first table.  A
 * thread that makes a few stacks costs this one page.
 */
static bool walk_page(struct shim_stack_table *tb)
{
	int saved_errno = errno;
	uint8_t *mem;

	if (likely(tb->ips))
		return true;
	mem = shim_mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = saved_errno;
	if (mem == MAP_FAILED)
		return false;
	tb->ips = (uint64_t *)mem;
	tb->hashes = (uint64_t *)(mem + SHIM_MAX_FRAMES * sizeof(uint64_t) + sizeof(uint64_t));
	tb->ids = (uint32_t *)(tb->hashes + TABLE_FIRST_CAP);
	tb->cap = TABLE_FIRST_CAP;
	tb->n = 0;
	return true;
}

_Static_assert((SHIM_MAX_FRAMES + 1) * sizeof(uint64_t) +
	       TABLE_FIRST_CAP * (sizeof(uint64_t) + sizeof(uint32_t)) <= PAGE,
	       "the walk page holds the frames and the first table");

static bool table_grow(struct shim_stack_table *tb)
{
	uint32_t cap = 2 * tb->cap, i;
	int saved_errno = errno;
	uint8_t *mem = shim_mmap(NULL, table_bytes(cap), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *hashes;
	uint32_t *ids;

	errno = saved_errno;
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
	/* the first table lies in the walk page, which stays */
	if (tb->cap > TABLE_FIRST_CAP)
		shim_munmap(tb->hashes, table_bytes(tb->cap));
	errno = saved_errno;
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
	uint64_t h = hash_ips(0, ips, nr);
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

/* the caller's frames; its return address alone when nothing of its stack can be read */
static uint32_t walk(const struct shim_caller *c, uint64_t *ips)
{
	struct shim_span stack;

	if (!stack_span(c->sp, &stack)) {
		if (!c->ip)
			return 0;
		ips[0] = c->ip;
		return 1;
	}
	if (shim_call_graph == MT_CALL_GRAPH_FP)
		return fp_walk(&stack, c, ips, SHIM_MAX_FRAMES);
	return shim_cfi_walk(&stack, c, ips, SHIM_MAX_FRAMES);
}

uint32_t shim_stack_id(struct shim_thread *t, const struct shim_caller *c)
{
	uint32_t nr, id = 0;

	if (shim_call_graph == MT_CALL_GRAPH_NO || t->unwinding)
		return 0;
	t->unwinding++;
	if (walk_page(&t->stacks)) {
		nr = walk(c, t->stacks.ips);
		id = nr ? intern(t, t->stacks.ips, nr) : 0;
	}
	t->unwinding--;
	return id;
}
