/*
 * dlopens libdl_alloc.so (next to this program) and makes 10 je_malloc(5000)
 * and 10 je_free through it: 10 Malloc and 10 Free, all from code that was
 * not mapped when the program started.
 *
 * dlopen itself mallocs copies of the library's path, whose size depends on
 * where the tree is checked out; 5000 is above PATH_MAX, so no copy has it.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	char self[PATH_MAX], lib[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *(*je_malloc)(size_t);
	void (*je_free)(void *);
	void *h, *volatile p;
	int i;

	if (n < 0)
		return 1;
	self[n] = 0;
	snprintf(lib, sizeof(lib), "%s/libdl_alloc.so", dirname(self));
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		return 1;
	je_malloc = (void *(*)(size_t))dlsym(h, "je_malloc");
	je_free = (void (*)(void *))dlsym(h, "je_free");
	if (!je_malloc || !je_free)
		return 1;
	for (i = 0; i < 10; i++) {
		p = je_malloc(5000);
		je_free(p);
	}
	return 0;
}
