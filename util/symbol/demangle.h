/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_DEMANGLE_H
#define MEMTRACK_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Symbol names as people read them.  Demangling is libiberty's
 * cplus_demangle() (binutils, gdb and perf use it): C++, Rust (legacy and
 * v0) and D, in C, without the C++ runtime that __cxa_demangle would link
 * in, which knows no Rust.
 */

/*
 * The name to show for a symbol: without its version suffix
 * ("@@GLIBC_2.34"), and demangled when demangle is set and it is a mangled
 * name.  Returns a malloc'd string, NULL only when out of memory.
 */
char *symbol_name__display(const char *name, bool demangle);

/*
 * name with the arguments of every template dropped, as heaptrack shows
 * them: "std::vector<int, std::allocator<int> >::push_back(int const&)"
 * becomes "std::vector<>::push_back(int const&)"; operator<, operator<<,
 * operator-> and the like are kept.  Writes into buf (size > 0) and returns
 * it; a name whose brackets do not pair is copied as it is (cut to size).
 */
char *symbol_name__shorten(const char *name, char *buf, size_t size);

#endif
