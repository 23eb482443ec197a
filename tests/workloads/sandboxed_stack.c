/*
 * sandboxed_stack: a program in a seccomp sandbox that refuses
 * process_vm_readv() (EPERM), allocating on a stack of its own: a
 * makecontext() coroutine makes 100 malloc(3333) + free.  The preload
 * shim cannot copy such a stack to unwind it, and says so, once.  Prints
 * "done 100", exits 0; 1 when the sandbox cannot be set up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>

#define STACK_SIZE	(64 << 10)

static ucontext_t main_ctx, co_ctx;
static int done;

static void allocate(void)
{
	void *volatile p;

	for (done = 0; done < 100; done++) {
		p = malloc(3333);
		free(p);
	}
}

static int sandbox(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(*filter), .filter = filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(void)
{
	void *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);

	if (stack == MAP_FAILED || sandbox() || getcontext(&co_ctx))
		return 1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = STACK_SIZE;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, allocate, 0);
	if (swapcontext(&main_ctx, &co_ctx))
		return 1;
	printf("done %d\n", done);
	return 0;
}
