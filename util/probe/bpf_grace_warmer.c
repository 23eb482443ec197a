// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <unistd.h>

#include "util/probe/backend.h"
#include "util/probe/bpf_grace_warmer.h"
#include "util/probe/uprobe-multi.h"
#include "util/usage.h"

/* where the warmer's uprobe sits: called by nothing */
static __attribute__((noinline, used)) void warm_target(void)
{
	__asm__ volatile("");
}

struct target_search {
	uintptr_t addr;
	uint64_t off;
	bool found;
};

/* the target's segment of memtrack's executable, the first object listed */
static int find_target(struct dl_phdr_info *info, size_t size __maybe_unused, void *arg)
{
	struct target_search *t = arg;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || t->addr < start ||
		    t->addr >= start + ph->p_memsz)
			continue;
		t->off = t->addr - start + ph->p_offset;
		t->found = true;
	}
	return 1;
}

/* the file offset of the target in memtrack's executable */
static int target_offset(uint64_t *off)
{
	struct target_search t = { .addr = (uintptr_t)warm_target };

	dl_iterate_phdr(find_target, &t);
	*off = t.off;
	return t.found ? 0 : -ENOENT;
}

static int returns_zero(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = UPROBE_MULTI_ATTACH_TYPE);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "mt_grace", "GPL", insns, 2, &opts);

	return fd < 0 ? -errno : fd;
}

static void *warm(void *arg)
{
	struct grace_warmer *w = arg;
	const char *why = NULL;
	uint64_t off;
	int prog, err;

	if (w->program)
		why = backend__guess_links(w->program);
	pthread_mutex_lock(&w->lock);
	w->why = why;
	w->guessed = true;
	pthread_cond_broadcast(&w->guessed_cond);
	pthread_mutex_unlock(&w->lock);
	if (w->program && !why)
		return NULL;
	if (why)
		pr_debug("warming the kernel's uprobe lock: %s is %s\n", w->program, why);
	err = target_offset(&off);
	if (err) {
		w->link_fd = err;
		return NULL;
	}
	prog = returns_zero();
	if (prog < 0) {
		w->link_fd = prog;
		return NULL;
	}
	w->link_fd = uprobe_multi__link(prog, "/proc/self/exe", &off, NULL, 1, false, getpid());
	close(prog);
	return NULL;
}

void grace_warmer__start(struct grace_warmer *w, const char *program)
{
	w->program = program;
	w->link_fd = -1;
	w->guessed = false;
	w->why = NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->guessed_cond, NULL);
	w->started = !pthread_create(&w->thread, NULL, warm, w);
}

bool grace_warmer__links_soon(struct grace_warmer *w)
{
	bool soon;

	if (!w->started)
		return true;	/* no guess: as if it said so */
	pthread_mutex_lock(&w->lock);
	while (!w->guessed)
		pthread_cond_wait(&w->guessed_cond, &w->lock);
	soon = !w->program || w->why;
	pthread_mutex_unlock(&w->lock);
	return soon;
}

bool grace_warmer__guesses(const struct grace_warmer *w)
{
	return w->started && w->program;
}

int grace_warmer__finish(struct grace_warmer *w)
{
	if (!w->started)
		return -1;
	pthread_join(w->thread, NULL);
	w->started = false;
	return w->link_fd;
}
