// SPDX-License-Identifier: GPL-2.0
/*
 * The shim's own mappings, made by syscall instructions in the shim's own
 * code: memtrack's BPF side leaves out the mmap, munmap and mremap calls
 * made from here, which are memtrack's and not the program's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "shim.h"

static long raw_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	ret = x0;
#else
#error "the shim's syscalls need this architecture's calling convention"
#endif
	return ret;
}

static long result(long ret)
{
	if ((unsigned long)ret > -4096UL) {
		errno = -ret;
		return -1;
	}
	return ret;
}

void *shim_mmap(void *addr, size_t len, int prot, int flags, int fd, long off)
{
	long ret = raw_syscall6(SYS_mmap, (long)addr, len, prot, flags, fd, off);

	return (unsigned long)ret > -4096UL ? (errno = -ret, MAP_FAILED) : (void *)ret;
}

int shim_munmap(void *addr, size_t len)
{
	return result(raw_syscall6(SYS_munmap, (long)addr, len, 0, 0, 0, 0));
}

void *shim_mremap(void *old, size_t old_len, size_t new_len, int flags)
{
	long ret = raw_syscall6(SYS_mremap, (long)old, old_len, new_len, flags, 0, 0);

	return (unsigned long)ret > -4096UL ? (errno = -ret, MAP_FAILED) : (void *)ret;
}
