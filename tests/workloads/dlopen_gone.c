/*
 * Copies libstack_alloc.so (next to this program) to argv[1], dlopens the
 * copy, makes 10 lib_mid_alloc(5555) there (never freed), dlcloses it and
 * deletes the copy, then makes 3 malloc(3333) of its own: the library's
 * mapping and its file are gone before the run ends.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	return close(out);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], lib[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *(*mid)(size_t);
	void *volatile p;
	void *h;
	int i;

	if (n < 0 || argc != 2)
		return 2;
	self[n] = 0;
	snprintf(lib, sizeof(lib), "%s/libstack_alloc.so", dirname(self));
	if (copy(lib, argv[1]))
		return 1;
	h = dlopen(argv[1], RTLD_NOW);
	mid = h ? (void *(*)(size_t))dlsym(h, "lib_mid_alloc") : NULL;
	if (!mid)
		return 1;
	for (i = 0; i < 10; i++)
		p = mid(5555);
	dlclose(h);
	if (unlink(argv[1]))
		return 1;
	for (i = 0; i < 3; i++)
		p = malloc(3333);
	(void)p;
	return 0;
}
