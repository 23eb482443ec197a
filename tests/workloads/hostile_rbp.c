/*
 * hostile_rbp top|unmapped|misaligned: calls malloc as code built without
 * frame pointers may, with anything in rbp: 100 malloc(1234) + free, each
 * called with rbp = 0xfffffffffffffff0 (top), or the address of a page
 * just unmapped (unmapped); misaligned calls with rbp = 0xfffffffffffffff0
 * and the stack 8 bytes off the 16 the ABI asks for, which glibc's malloc
 * does not mind.  Prints "done 100" and exits 0; 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CALLS	100
#define SIZE	1234

/*
 * malloc(size) with rbp = bp, below the red zone, the stack aligned to 16
 * then moved by skew (0 or 8) bytes.
 */
static void *malloc_with_rbp(size_t size, uintptr_t bp, uintptr_t skew)
{
	void *ret;

	__asm__ volatile(
		"mov %%rsp, %%rbx\n\t"
		"lea -128(%%rsp), %%rsp\n\t"
		"and $-16, %%rsp\n\t"
		"sub %[skew], %%rsp\n\t"
		"push %%rbp\n\t"
		"push %%rbp\n\t"
		"mov %[bp], %%rbp\n\t"
		"call malloc@PLT\n\t"
		"pop %%rbp\n\t"
		"pop %%rbp\n\t"
		"mov %%rbx, %%rsp\n\t"
		: "=a"(ret), "+D"(size)
		: [bp] "r"(bp), [skew] "r"(skew)
		: "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc",
		  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
		  "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	return ret;
}

int main(int argc, char **argv)
{
	uintptr_t bp = 0xfffffffffffffff0UL, skew = 0;
	int i;

	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "unmapped")) {
		void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (page == MAP_FAILED)
			return 1;
		munmap(page, 4096);
		bp = (uintptr_t)page;
	} else if (!strcmp(argv[1], "misaligned")) {
		skew = 8;
	} else if (strcmp(argv[1], "top")) {
		return 2;
	}
	for (i = 0; i < CALLS; i++)
		free(malloc_with_rbp(SIZE, bp, skew));
	printf("done %d\n", i);
	return 0;
}
