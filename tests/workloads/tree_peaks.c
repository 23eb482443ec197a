/*
 * Children whose blocks die with them: each child mallocs one block at
 * once and exits without freeing it.
 *
 *   tree_peaks         three children one after the other, of 3, 5 and
 *                      4 MB (3000000, 5000000, 4000000 bytes): the tree's
 *                      peak is 5 MB, the largest child's, not 12 MB
 *   tree_peaks overlap the 3 MB child still lives while the 5 MB one
 *                      allocates, then the 4 MB one runs alone: the peak
 *                      is 8 MB, the sum of the two that overlap
 *
 * Each child leaves its block live at exit: 12 MB in all.  The parent
 * allocates nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const size_t sizes[] = { 3000000, 5000000, 4000000 };

/* a child that mallocs size and exits when it reads a byte from fd (-1: at once) */
static pid_t child(size_t size, int ready, int hold)
{
	pid_t pid = fork();
	char c = 0;

	if (pid)
		return pid;
	if (!malloc(size))
		_exit(1);
	if (ready >= 0 && write(ready, &c, 1) != 1)
		_exit(1);
	if (hold >= 0 && read(hold, &c, 1) != 1)
		_exit(1);
	_exit(0);
}

static int reap(pid_t pid)
{
	int status;

	return pid > 0 && waitpid(pid, &status, 0) == pid && !status ? 0 : 1;
}

int main(int argc, char **argv)
{
	int ready[2], hold[2], err = 0;
	pid_t first;
	char c;

	if (argc < 2 || strcmp(argv[1], "overlap")) {
		err |= reap(child(sizes[0], -1, -1));
		err |= reap(child(sizes[1], -1, -1));
		err |= reap(child(sizes[2], -1, -1));
		return err;
	}
	if (pipe(ready) || pipe(hold))
		return 1;
	/* the first has allocated before the second starts, and exits after it */
	first = child(sizes[0], ready[1], hold[0]);
	if (read(ready[0], &c, 1) != 1)
		return 1;
	err |= reap(child(sizes[1], -1, -1));
	if (write(hold[1], &c, 1) != 1)
		return 1;
	err |= reap(first);
	err |= reap(child(sizes[2], -1, -1));
	return err;
}
