// SPDX-License-Identifier: GPL-2.0
/*
 * floor [--link multi|perf] [--free-past-test] [-o <file>] -- <program> [<args>...]
 *
 * Runs a command under empty BPF programs attached where memtrack attaches
 * its probes: an entry uprobe on libc's malloc, calloc, realloc,
 * reallocarray, free, aligned_alloc, memalign, posix_memalign, valloc and
 * pvalloc, and a return uprobe on all of them but free, for every process on
 * the machine (as memtrack does).  What the command then loses is the cost of
 * the uprobe machinery alone: the floor under memtrack's per-event overhead.
 *
 * --link multi (default): one BPF_TRACE_UPROBE_MULTI link for the entries
 * and one for the returns, made with a raw BPF_LINK_CREATE because Debian's
 * libbpf 1.1 has no API for it; the link type memtrack uses.
 * --link perf: one perf-event uprobe per function and direction, through
 * bpf_program__attach_uprobe_opts().
 *
 * --free-past-test: free's entry probe goes on its second instruction when
 * the first is `test %rdi,%rdi` (glibc on x86-64).  uprobes cannot emulate
 * `test`, so a probe on it is single-stepped (a second trap, #DB); the `je`
 * after it is emulated and still sees the pointer in %rdi.  This measures
 * what moving memtrack's probe there would save.
 *
 * Prints one line of key=value pairs (to <file> with -o): the time to load,
 * attach, run the command and detach, in ns, and the command's wait status.
 * Exits with the command's status, or 1 on a failure of its own.
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/floor.skel.h"
#include "util/symbol/elf-syms.h"
#include "util/probe/uprobe-multi.h"
#include "util/util.h"

#define MAX_FUNCS			16

static const char *const funcs[] = {
	"malloc", "calloc", "realloc", "reallocarray", "free",
	"aligned_alloc", "memalign", "posix_memalign", "valloc", "pvalloc",
};

struct probe_set {
	char libc[PATH_MAX];
	uint64_t offsets[MAX_FUNCS];
	bool is_free[MAX_FUNCS];
	unsigned int n;
};

struct attached {
	int fds[2];			/* --link multi */
	struct bpf_link *links[2 * MAX_FUNCS];	/* --link perf */
	unsigned int nlinks;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	if (base && !strncmp(base + 1, "libc.so", 7)) {
		*(const char **)data = info->dlpi_name;
		return 1;
	}
	return 0;
}

/* moves free's probe past a leading `test %rdi,%rdi` (48 85 ff) */
static int skip_free_test(const char *path, uint64_t *offset)
{
	unsigned char insn[3];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, insn, sizeof(insn), *offset);
	close(fd);
	if (n != sizeof(insn) || insn[0] != 0x48 || insn[1] != 0x85 || insn[2] != 0xff)
		return -ENOEXEC;
	*offset += sizeof(insn);
	return 0;
}

/* libc's path and the distinct offsets of the functions (aliases once) */
static int resolve_probes(struct probe_set *ps, bool free_past_test)
{
	struct elf_sym_req reqs[ARRAY_SIZE(funcs)];
	const char *name = NULL;
	unsigned int i, j;
	int err;

	dl_iterate_phdr(find_libc, &name);
	if (!name || !realpath(name, ps->libc))
		return -ENOENT;
	for (i = 0; i < ARRAY_SIZE(funcs); i++)
		reqs[i].name = funcs[i];
	err = elf__resolve_offsets(ps->libc, reqs, ARRAY_SIZE(reqs));
	if (err <= 0)
		return err ? err : -ENOENT;
	for (i = 0; i < ARRAY_SIZE(funcs); i++) {
		bool seen = false;

		if (!reqs[i].offset)
			continue;
		for (j = 0; j < ps->n; j++)
			seen |= ps->offsets[j] == reqs[i].offset;
		if (seen)
			continue;
		ps->is_free[ps->n] = !strcmp(funcs[i], "free");
		ps->offsets[ps->n] = reqs[i].offset;
		if (ps->is_free[ps->n] && free_past_test) {
			err = skip_free_test(ps->libc, &ps->offsets[ps->n]);
			if (err)
				return err;
		}
		ps->n++;
	}
	return 0;
}

static int link_multi(int prog_fd, const struct probe_set *ps, bool ret)
{
	uint64_t offs[MAX_FUNCS];
	unsigned int i, n = 0;

	for (i = 0; i < ps->n; i++)
		if (!(ret && ps->is_free[i]))
			offs[n++] = ps->offsets[i];
	return uprobe_multi__link(prog_fd, ps->libc, offs, NULL, n, ret, 0);
}

static int attach_multi(struct floor_bpf *skel, const struct probe_set *ps,
			struct attached *at)
{
	int fd;

	fd = link_multi(bpf_program__fd(skel->progs.floor_enter), ps, false);
	if (fd < 0)
		return fd;
	at->fds[0] = fd;
	fd = link_multi(bpf_program__fd(skel->progs.floor_exit), ps, true);
	if (fd < 0)
		return fd;
	at->fds[1] = fd;
	return 0;
}

static int attach_perf(struct floor_bpf *skel, const struct probe_set *ps,
		       struct attached *at)
{
	unsigned int i;
	int dir;

	for (i = 0; i < ps->n; i++) {
		for (dir = 0; dir < 2; dir++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = dir);
			struct bpf_program *prog = dir ? skel->progs.floor_exit
						       : skel->progs.floor_enter;
			struct bpf_link *l;

			if (dir && ps->is_free[i])
				continue;
			/* pid -1: every process, as memtrack's probes */
			l = bpf_program__attach_uprobe_opts(prog, -1, ps->libc,
							    ps->offsets[i], &o);
			if (!l)
				return -errno;
			at->links[at->nlinks++] = l;
		}
	}
	return 0;
}

static void detach(struct attached *at)
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (at->fds[i] >= 0)
			close(at->fds[i]);
	for (i = 0; i < at->nlinks; i++)
		bpf_link__destroy(at->links[i]);
}

/* the command starts only once the parent writes to the pipe */
static pid_t spawn_held(char **argv, int *go)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		close(p[0]);
		execvp(argv[0], argv);
		perror("floor: exec");
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static int usage(void)
{
	fprintf(stderr, "usage: floor [--link multi|perf] [--free-past-test] [-o <file>] -- <program> [<args>...]\n");
	return 129;
}

int main(int argc, char **argv)
{
	struct attached at = { .fds = { -1, -1 } };
	const char *link = "multi", *out_path = NULL;
	uint64_t t0, t1, t2, ts, t3, t4;
	struct probe_set ps = { 0 };
	struct floor_bpf *skel;
	int i, err, go, status;
	bool multi, free_past_test = false;
	FILE *out;
	pid_t pid;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--link") && i + 1 < argc)
			link = argv[++i];
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "--free-past-test"))
			free_past_test = true;
		else
			return usage();
	}
	if (i + 1 >= argc || (strcmp(link, "multi") && strcmp(link, "perf")))
		return usage();
	multi = !strcmp(link, "multi");
	err = resolve_probes(&ps, free_past_test);
	if (err) {
		fprintf(stderr, "floor: cannot find libc's allocator functions: %s\n",
			strerror(-err));
		return 1;
	}

	t0 = now_ns();
	skel = floor_bpf__open();
	if (!skel) {
		perror("floor: cannot open the BPF object");
		return 1;
	}
	if (multi) {
		bpf_program__set_expected_attach_type(skel->progs.floor_enter,
						      UPROBE_MULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(skel->progs.floor_exit,
						      UPROBE_MULTI_ATTACH_TYPE);
	}
	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "floor: cannot load the BPF programs: %s\n", strerror(-err));
		return 1;
	}
	t1 = now_ns();
	err = multi ? attach_multi(skel, &ps, &at) : attach_perf(skel, &ps, &at);
	if (err) {
		fprintf(stderr, "floor: cannot attach the uprobes (--link %s): %s\n",
			link, strerror(-err));
		detach(&at);
		floor_bpf__destroy(skel);
		return 1;
	}
	t2 = now_ns();

	pid = spawn_held(argv + i + 1, &go);
	if (pid < 0) {
		perror("floor: cannot start the command");
		return 1;
	}
	ts = now_ns();
	if (write(go, "g", 1) != 1)
		return 1;
	close(go);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	t3 = now_ns();
	detach(&at);
	floor_bpf__destroy(skel);
	t4 = now_ns();

	out = out_path ? fopen(out_path, "w") : stderr;
	if (!out) {
		perror("floor: cannot write the result");
		return 1;
	}
	fprintf(out, "link=%s probes=%u load_ns=%lu attach_ns=%lu run_ns=%lu "
		"detach_ns=%lu status=%d\n", link, ps.n, t1 - t0, t2 - t1, t3 - ts,
		t4 - t3, status);
	if (out != stderr)
		fclose(out);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
