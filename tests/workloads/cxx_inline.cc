/*
 * A known C++ call chain through a template and an inlined function:
 *
 *   7 x malloc(4242): main -> app::run(int) -> app::pool<app::item>::grow(unsigned long)
 *                     -> app::make_block(unsigned long) [inlined] -> malloc
 *
 * all freed.  Built -O2 -g without frame pointers; make_block is forced
 * inline, grow and run are kept out of line and unchanged (noipa: no clone
 * with a .constprop suffix).  With an argument N, also N allocations of
 * 1000 + i bytes at the bottom of recursions 1..N deep through
 * app::walk<int>(int): N distinct stacks, for measuring the resolver.
 */
#include <cstdlib>

namespace app {

struct item {
	long key, value;
};

__attribute__((always_inline)) inline void *make_block(unsigned long n)
{
	void *p = std::malloc(n);	/* CXX_INLINE_MALLOC_LINE */

	if (!p)
		std::abort();
	return p;
}

template <typename T> struct pool {
	__attribute__((noipa)) T *grow(unsigned long n);
};

template <typename T> T *pool<T>::grow(unsigned long n)
{
	return static_cast<T *>(make_block(n));	/* CXX_INLINE_GROW_LINE */
}

__attribute__((noipa)) int run(int rounds)
{
	pool<item> p;
	int made = 0;

	for (int i = 0; i < rounds; i++) {
		item *it = p.grow(4242);	/* CXX_INLINE_RUN_LINE */

		made += it != nullptr;
		std::free(it);
	}
	return made;
}

template <typename T> __attribute__((noipa)) T walk(T depth, T size)
{
	if (depth > 1) {
		T r = walk<T>(depth - 1, size);

		__asm__ volatile("" : "+r"(r) : : "memory");	/* a real call, not a loop */
		return r + 1;
	}
	void *p = std::malloc(size);

	std::free(p);
	return p != nullptr;
}

} // namespace app

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 0;

	for (int i = 1; i <= n; i++)
		app::walk<int>(i, 1000 + i);
	return app::run(7) == 7 ? 0 : 1;	/* CXX_INLINE_MAIN_LINE */
}
