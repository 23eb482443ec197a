/*
 * malloc(777) and free, eight times, each malloc called with rbp holding what
 * a program built without frame pointers may hold there: an address at the
 * top of the address space (0xfffffffffffffff0, ~0 - 7, ~0), 0, an odd
 * value, a frame that points at itself, an unmapped page, the middle of the
 * stack.  Prints "8 calls with a hostile rbp" and exits 0; on another
 * architecture than x86-64 it makes the same calls without the asm.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void *malloc_with_rbp(size_t size, uintptr_t rbp);

#ifdef __x86_64__
/* its own function, with CFI that is right: rbp is saved, then clobbered */
__asm__(".text\n"
	".globl malloc_with_rbp\n"
	".type malloc_with_rbp, @function\n"
	"malloc_with_rbp:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsi, %rbp\n"
	"	call malloc@PLT\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size malloc_with_rbp, .-malloc_with_rbp\n");
#else
void *malloc_with_rbp(size_t size, uintptr_t rbp)
{
	(void)rbp;
	return malloc(size);
}
#endif

int main(void)
{
	static uintptr_t cycle[2];
	uintptr_t hostile[8], on_stack[4] = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	void *unmapped;
	int i, n = 0;

	unmapped = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (unmapped == MAP_FAILED || munmap(unmapped, page))
		return 1;
	cycle[0] = (uintptr_t)cycle;
	cycle[1] = 1;
	hostile[n++] = 0xfffffffffffffff0ULL;
	hostile[n++] = 0xfffffffffffffff8ULL;
	hostile[n++] = ~(uintptr_t)0;
	hostile[n++] = 0;
	hostile[n++] = 0x1235;
	hostile[n++] = (uintptr_t)cycle;
	hostile[n++] = (uintptr_t)unmapped;
	hostile[n++] = (uintptr_t)&on_stack[1] + 3;
	for (i = 0; i < n; i++) {
		void *volatile p = malloc_with_rbp(777, hostile[i]);

		if (!p)
			return 1;
		free(p);
	}
	printf("%d calls with a hostile rbp\n", n);
	return 0;
}
