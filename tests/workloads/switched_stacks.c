/*
 * malloc on stacks a program made itself: a coroutine (makecontext and
 * swapcontext) on a stack that is a malloc'd block and one that is an mmap'd
 * region, each 100 malloc(3131) and free, and a signal handler on a
 * sigaltstack, raised from main, 100 malloc(3232) and free.  Prints
 * "3 stacks switched" and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#define STACK (256 * 1024)

static ucontext_t main_ctx, co_ctx;

static void allocate(size_t size)
{
	void *volatile p;
	int i;

	for (i = 0; i < 100; i++) {
		p = malloc(size);
		free(p);
	}
}

static void coroutine(void)
{
	allocate(3131);
}

static int run_on(void *stack)
{
	if (getcontext(&co_ctx))
		return -1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	return swapcontext(&main_ctx, &co_ctx);
}

static void on_signal(int sig)
{
	(void)sig;
	allocate(3232);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_ONSTACK };
	stack_t alt = { .ss_size = STACK };
	void *heap_stack = malloc(STACK), *mapped_stack;

	mapped_stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	alt.ss_sp = malloc(STACK);
	if (!heap_stack || mapped_stack == MAP_FAILED || !alt.ss_sp)
		return 1;
	if (run_on(heap_stack) || run_on(mapped_stack))
		return 1;
	if (sigaltstack(&alt, NULL) || sigaction(SIGUSR1, &sa, NULL) || raise(SIGUSR1))
		return 1;
	printf("3 stacks switched\n");
	return 0;
}
