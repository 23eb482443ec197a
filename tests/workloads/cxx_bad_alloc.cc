// A bad_alloc through operator new, caught: then 10 new char[3333] from
// make_after, deleted.  Prints "caught 2" and exits 0 when both throws
// (new char[] and new of a huge object through operator new) were caught.
#include <cstdio>
#include <new>

struct huge {
	char bytes[1ULL << 46];
};

__attribute__((noinline)) static char *make_after()
{
	return new char[3333];
}

int main()
{
	char *volatile p[10];
	int caught = 0, i;

	try {
		p[0] = new char[1ULL << 46];
	} catch (std::bad_alloc &) {
		caught++;
	}
	try {
		delete new huge;
	} catch (std::bad_alloc &) {
		caught++;
	}
	for (i = 0; i < 10; i++)
		p[i] = make_after();
	for (i = 0; i < 10; i++)
		delete[] p[i];
	std::printf("caught %d\n", caught);
	return caught == 2 ? 0 : 1;
}
