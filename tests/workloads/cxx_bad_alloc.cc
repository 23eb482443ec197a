/*
 * new char[1ULL << 46] (64 TiB) throws std::bad_alloc, which main catches;
 * then a new char[64] that succeeds.  Prints "caught std::bad_alloc" and
 * exits 0; exits 1 if nothing was thrown.
 */
#include <cstdio>
#include <new>

int main()
{
	volatile unsigned long long huge = 1ULL << 46;

	try {
		char *volatile p = new char[huge];

		delete[] p;
		std::puts("no std::bad_alloc");
		return 1;
	} catch (const std::bad_alloc &) {
		std::puts("caught std::bad_alloc");
	}
	char *volatile q = new char[64];
	delete[] q;
	return 0;
}
