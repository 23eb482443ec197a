// SPDX-License-Identifier: GPL-2.0
/*
 * A known call stack for the symbolizer's tests:
 *
 *   main -> alloc_outer -> lib_middle -> lib_inner -> malloc
 *                          (libstack_mid.so)
 *
 * Every callee records its return address, that is an address in its
 * caller; malloc() here records the one in lib_inner and hands over to
 * glibc's.  The program prints them ("ret <caller> <addr>"), the entry of
 * alloc_outer and of glibc's malloc ("fn <name> <addr>"), then "ready",
 * and reads stdin: "exec <path>" execs path (same stdin and stdout), end of
 * file exits.  So a test can read /proc/<pid>/maps while it lives.  The call
 * lines carry "@call:<caller>" markers for tests/unit/test-symbolize.c.
 *
 *   cc -O2 -g -fno-omit-frame-pointer -o stack_leaf stack_leaf.c \
 *      -L<dir> -lstack_mid -Wl,-rpath,'$ORIGIN'
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __clang__
#define STACK_NOIPA	__attribute__((noinline))
#else
#define STACK_NOIPA	__attribute__((noipa))
#endif

void *lib_middle(size_t n, void **ret);
void *__libc_malloc(size_t n);

static void *volatile malloc_ret;
static volatile int recording;

/* interposes glibc's malloc: notes the caller of the next call */
void *malloc(size_t n)
{
	if (recording) {
		recording = 0;
		malloc_ret = __builtin_return_address(0);
	}
	return __libc_malloc(n);
}

STACK_NOIPA void *alloc_outer(size_t n, void **ret)
{
	void *p;

	ret[0] = __builtin_return_address(0);
	p = lib_middle(n, ret + 1);	/* @call:alloc_outer */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	void *ret[3], *p;
	char line[4096];

	recording = 1;
	p = alloc_outer(24, ret);	/* @call:main */
	printf("ret main %p\n", ret[0]);
	printf("ret alloc_outer %p\n", ret[1]);
	printf("ret lib_middle %p\n", ret[2]);
	printf("ret lib_inner %p\n", malloc_ret);
	printf("ret libc %p\n", __builtin_return_address(0));
	printf("fn alloc_outer %p\n", (void *)alloc_outer);
	printf("fn malloc %p\n", dlsym(RTLD_NEXT, "malloc"));
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "exec ", 5)) {
			line[strcspn(line, "\n")] = '\0';
			execl(line + 5, line + 5, (char *)NULL);
			perror("exec");
			return 1;
		}
	}
	free(p);
	return 0;
}
