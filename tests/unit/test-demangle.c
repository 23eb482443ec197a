// SPDX-License-Identifier: GPL-2.0
/* symbol names for display (demangle.c) and the /proc/PID/maps iterator (proc-maps.c) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "util/symbol/demangle.h"
#include "util/proc-maps.h"

static void check_display(const char *raw, bool demangle, const char *want)
{
	char *got = symbol_name__display(raw, demangle);

	CHECK_STR(got, want, raw);
	free(got);
}

static void test_display(void)
{
	check_display("_ZN3app4poolINS_4itemEE4growEm", true,
		      "app::pool<app::item>::grow(unsigned long)");
	check_display("_ZN3app4poolINS_4itemEE4growEm", false, "_ZN3app4poolINS_4itemEE4growEm");
	check_display("_Znwm", true, "operator new(unsigned long)");
	check_display("__libc_start_main@@GLIBC_2.34", true, "__libc_start_main");
	check_display("memcpy@GLIBC_2.2.5", false, "memcpy");
	check_display("_ZNSt6vectorIiSaIiEE9push_backERKi@@GLIBCXX_3.4", true,
		      "std::vector<int, std::allocator<int> >::push_back(int const&)");
	check_display("_ZN3app4walkIiEET_S1_S1_.constprop.0", true,
		      "int app::walk<int>(int, int) [clone .constprop.0]");
	/* Rust: legacy (the hash dropped) and v0 */
	check_display("_ZN4core3fmt5write17h0123456789abcdefE", true, "core::fmt::write");
	check_display("_RNvCs15kBYyAo9fc_7mycrate7example", true, "mycrate::example");
	check_display("main", true, "main");
	check_display("_Zbogus", true, "_Zbogus");
	check_display("@", true, "@");
}

static void check_shorten(const char *name, const char *want)
{
	char buf[128];

	CHECK_STR(symbol_name__shorten(name, buf, sizeof(buf)), want, name);
}

static void test_shorten(void)
{
	char small[8];

	check_shorten("std::vector<int, std::allocator<int> >::push_back(int const&)",
		      "std::vector<>::push_back(int const&)");
	check_shorten("int app::walk<int>(int, int)", "int app::walk<>(int, int)");
	check_shorten("std::map<int, std::pair<int, int> >::operator[](int const&)",
		      "std::map<>::operator[](int const&)");
	check_shorten("bool operator< <int>(a<int> const&, a<int> const&)",
		      "bool operator< <>(a<> const&, a<> const&)");
	check_shorten("std::ostream::operator<<(int)", "std::ostream::operator<<(int)");
	check_shorten("x::operator->() const", "x::operator->() const");
	check_shorten("y<z>::operator>>=(int)", "y<>::operator>>=(int)");
	check_shorten("cooperator<int>::f()", "cooperator<>::f()");
	check_shorten("plain_c_function", "plain_c_function");
	/* brackets that do not pair: as it is */
	check_shorten("a>b", "a>b");
	check_shorten("f<int", "f<int");
	CHECK_STR(symbol_name__shorten("abcdefghijk<int>", small, sizeof(small)), "abcdefg",
		  "cut to the buffer");
}

static void test_proc_maps(void)
{
	size_t page = sysconf(_SC_PAGESIZE);
	void *anon = mmap(NULL, 3 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool seen_anon = false, seen_self = false, seen_vdso = false;
	struct proc_maps it;
	struct proc_map m;
	int n = 0, err;

	CHECK(anon != MAP_FAILED, "mmap");
	CHECK(!proc_maps__open(&it, getpid()), "open self");
	while ((err = proc_maps__next(&it, &m)) > 0) {
		n++;
		if (m.start == (uintptr_t)anon) {
			seen_anon = m.end - m.start == 3 * page && !strcmp(m.perms, "r-xp") &&
				    !*m.path && !m.ino && proc_map__exec(&m);
		}
		if (strstr(m.path, "test-demangle") && proc_map__exec(&m))
			seen_self = m.ino && m.path[0] == '/' && !m.deleted;
		if (!strcmp(m.path, "[vdso]"))
			seen_vdso = proc_map__exec(&m);
	}
	CHECK(!err, "read to the end: %d", err);
	CHECK(n > 5, "%d mappings", n);
	CHECK(seen_anon, "the anonymous r-x mapping");
	CHECK(seen_self, "the program's own code");
	CHECK(seen_vdso, "[vdso]");
	proc_maps__close(&it);
	CHECK(proc_maps__open(&it, 1 << 30) == -ESRCH, "no such pid");
	munmap(anon, 3 * page);
}

int main(void)
{
	test_display();
	test_shorten();
	test_proc_maps();
	printf("test-demangle: %d checks, %d failed\n", test_count, test_failures);
	return test_failures ? 1 : 0;
}
