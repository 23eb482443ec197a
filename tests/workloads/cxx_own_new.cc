// An executable whose operator new and delete are its own, calling malloc
// and free (as a static libstdc++ has them): 25 new char[1111], 15 new
// of a 2222-byte object, each deleted; the sites are make_array and
// make_object.
#include <cstdio>
#include <cstdlib>
#include <new>

void *operator new(std::size_t n)
{
	void *p = std::malloc(n ? n : 1);

	if (!p)
		throw std::bad_alloc();
	return p;
}

void *operator new[](std::size_t n)
{
	return operator new(n);
}

void operator delete(void *p) noexcept
{
	std::free(p);
}

void operator delete(void *p, std::size_t) noexcept
{
	std::free(p);
}

void operator delete[](void *p) noexcept
{
	operator delete(p);
}

void operator delete[](void *p, std::size_t) noexcept
{
	operator delete(p);
}

struct object {
	char bytes[2222];
};

__attribute__((noinline)) static char *make_array()
{
	return new char[1111];
}

__attribute__((noinline)) static object *make_object()
{
	return new object;
}

int main()
{
	char *volatile a[25];
	object *volatile o[15];
	int i;

	for (i = 0; i < 25; i++)
		a[i] = make_array();
	for (i = 0; i < 15; i++)
		o[i] = make_object();
	for (i = 0; i < 25; i++)
		delete[] a[i];
	for (i = 0; i < 15; i++)
		delete o[i];
	std::puts("ok");
	return 0;
}
