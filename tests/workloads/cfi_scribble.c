/*
 * A process of the tree that rewrites the run's shared CFI rules
 * (preload/shim-abi.h) as a hostile neighbour would: every rule in the
 * table gets a check that passes and offsets that point anywhere.  Then
 * it execs itself <children> times, one after another; each child makes
 * <allocs> malloc(4321) through a call chain, frees them and exits 0, its
 * unwinder reading the rules the parent rewrote.
 *
 *   parent: 10 malloc(1234), freed; prints "rewrote N rules" (0 outside a
 *           run with dwarf stacks); exits 0 when every child did
 *   child:  <allocs> malloc(4321), freed
 *
 * Usage: cfi_scribble <children> <allocs>
 *        (cfi_scribble child <allocs>, as the parent runs it)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* preload/shim-abi.h's table of rules, as a hostile process would read it */
struct shim_rule_slot {
	uint64_t key;
	uint64_t val;
};

#define SHIM_RULES_ORDER	17

__attribute__((noinline)) static void *inner(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *outer(size_t size)
{
	void *p = inner(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void alloc_and_free(int n, size_t size)
{
	void *p[64];
	int i, k;

	for (i = 0; i < n; i += k) {
		for (k = 0; k < 64 && i + k < n; k++)
			p[k] = outer(size);
		while (k--)
			free(p[k]);
		k = 64;
	}
}

/* the shared table's mapping, from /proc/self/maps read without stdio (no malloc) */
static struct shim_rule_slot *find_table(void)
{
	static char buf[1 << 16];
	ssize_t n, len = 0;
	char *line;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return NULL;
	while (len < (ssize_t)sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (strstr(line, "memtrack-cfi-rules") && strstr(line, "rw-s"))
			return (struct shim_rule_slot *)strtoull(line, NULL, 16);
	return NULL;
}

/* every rule: a check that passes (the shim's own formula), offsets anywhere */
static unsigned long rewrite(struct shim_rule_slot *t)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned long i, n = 0;

	for (i = 0; i < (1UL << SHIM_RULES_ORDER); i++) {
		uint64_t key = t[i].key;

		if (!key)
			continue;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t[i].val = ((key * 0xc2b2ae3d27d4eb4fULL) >> 44 << 44) | (x & ((1ULL << 44) - 1));
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct shim_rule_slot *table;
	int children, allocs, i, ok = 1;
	char count[16];

	if (argc == 3 && !strcmp(argv[1], "child")) {
		alloc_and_free(atoi(argv[2]), 4321);
		return 0;
	}
	if (argc != 3)
		return 2;
	children = atoi(argv[1]);
	allocs = atoi(argv[2]);
	alloc_and_free(10, 1234);
	table = find_table();
	printf("rewrote %lu rules\n", table ? rewrite(table) : 0UL);
	fflush(stdout);
	snprintf(count, sizeof(count), "%d", allocs);
	for (i = 0; i < children; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "child", count, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			ok = 0;
	}
	return ok ? 0 : 1;
}
