/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_PREFETCH_H
#define MEMTRACK_PREFETCH_H

/*
 * Asks for the line at p in a state we may write, ahead of the store: a
 * store to a line another core holds waits for it, and the loads behind
 * that store wait too.  A hint: never faults, a no-op where unknown.
 */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

#endif
