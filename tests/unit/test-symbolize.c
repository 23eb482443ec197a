// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer against live processes whose stacks are known: it builds
 * tests/workloads/stack_leaf.c and libstack_mid.c with cc (-O2 -g) in a
 * temporary directory as a PIE, a non-PIE and a stripped copy, runs them,
 * and checks the function, module and call line (the "@call:" markers of
 * the sources) of every return address they print: while they live, after
 * they exited and their files were deleted, through a forked pid, across an
 * exec; glibc's malloc from .dynsym only; addresses in no mapping; unknown
 * pids; the bound on exited pids.
 *
 * `test-symbolize --bench` prints the cost of resolving instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "util/symbol/symbolize.h"
#include "util/util.h"

static char tmpdir[512];
static char srcdir[1024];		/* tests/workloads */
static char leaf_src[PATH_MAX], mid_src[PATH_MAX];

/* ---- building the workloads ---------------------------------------------- */

static void skip(const char *why)
{
	printf("[Skip] %s\n", why);
	exit(2);
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st)
		printf("# failed (%d): %s\n", st, cmd);
	return st;
}

static const char *tpath(const char *rel)
{
	static char path[8][PATH_MAX];
	static int next;
	char *p = path[next++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", tmpdir, rel);
	return p;
}

#define WL_CFLAGS "-O2 -g -fno-omit-frame-pointer -Wall"

/*
 * pie/     stack_leaf, libstack_mid.so
 * nopie/   stack_leaf built -no-pie, libstack_mid.so
 * strip/   both of pie/ stripped (.dynsym only)
 * gone/    a copy of pie/, deleted while resolved
 */
static void build_workloads(void)
{
	const char *base = getenv("TMPDIR");
	char *slash, real[PATH_MAX];

	/* tests/unit/test-symbolize.c -> tests/workloads, from the build's cwd */
	snprintf(srcdir, sizeof(srcdir), "%s", __FILE__);
	slash = strrchr(srcdir, '/');
	if (!slash)
		skip("cannot locate tests/workloads");
	strcpy(slash, "/../workloads");
	snprintf(leaf_src, sizeof(leaf_src), "%s/stack_leaf.c", srcdir);
	snprintf(mid_src, sizeof(mid_src), "%s/libstack_mid.c", srcdir);
	if (access(leaf_src, R_OK) || access(mid_src, R_OK))
		skip("tests/workloads/stack_leaf.c not found: run from the top of the tree");
	if (run("cc --version >/dev/null 2>&1"))
		skip("no cc");
	snprintf(tmpdir, sizeof(tmpdir), "%s/memtrack-symbolize-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(tmpdir) || !realpath(tmpdir, real)) {
		perror("mkdtemp");
		exit(1);
	}
	/* module paths are the kernel's: no symbolic links */
	if (strlen(real) >= sizeof(tmpdir))
		skip("$TMPDIR is too long");
	strcpy(tmpdir, real);
	if (run("mkdir -p %s %s %s", tpath("pie"), tpath("nopie"), tpath("strip")) ||
	    run("cc " WL_CFLAGS " -fPIC -shared -o %s %s", tpath("pie/libstack_mid.so"), mid_src) ||
	    run("cc " WL_CFLAGS " -o %s %s -L%s -lstack_mid -Wl,-rpath,'$ORIGIN'",
		tpath("pie/stack_leaf"), leaf_src, tpath("pie")) ||
	    run("cp %s %s", tpath("pie/libstack_mid.so"), tpath("nopie/")) ||
	    run("cc " WL_CFLAGS " -fno-pie -no-pie -o %s %s -L%s -lstack_mid -Wl,-rpath,'$ORIGIN'",
		tpath("nopie/stack_leaf"), leaf_src, tpath("nopie")) ||
	    run("strip -o %s %s", tpath("strip/stack_leaf"), tpath("pie/stack_leaf")) ||
	    run("strip -o %s %s", tpath("strip/libstack_mid.so"), tpath("pie/libstack_mid.so")) ||
	    run("cp -r %s %s", tpath("pie"), tpath("gone"))) {
		printf("not ok - cannot build the workloads\n");
		exit(1);
	}
}

static void remove_tmpdir(void)
{
	if (tmpdir[0])
		run("rm -rf '%s'", tmpdir);
}

/* the line of "@call:<caller>" in src */
static uint32_t marker_line(const char *src, const char *caller)
{
	char want[64], buf[512];
	uint32_t n = 0;
	FILE *f = fopen(src, "r");

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "@call:%s ", caller);
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, want)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

/* ---- running them ------------------------------------------------------- */

#define MAX_VALUES 16

struct leaf {
	pid_t pid;
	int in;			/* its stdin */
	FILE *out;		/* its stdout */
	char exe[PATH_MAX];	/* realpath */
	struct {
		char key[48];
		uint64_t addr;
	} values[MAX_VALUES];
	int nr_values;
};

static int leaf_read(struct leaf *l)
{
	char line[256], kind[8], name[32];
	unsigned long long addr;

	l->nr_values = 0;
	while (fgets(line, sizeof(line), l->out)) {
		if (!strcmp(line, "ready\n"))
			return 0;
		if (sscanf(line, "%7s %31s %llx", kind, name, &addr) != 3 ||
		    l->nr_values == MAX_VALUES)
			continue;
		snprintf(l->values[l->nr_values].key, sizeof(l->values[0].key),
			 "%s %s", kind, name);
		l->values[l->nr_values++].addr = addr;
	}
	return -1;
}

static int leaf_start(struct leaf *l, const char *exe)
{
	int in[2], out[2];

	memset(l, 0, sizeof(*l));
	if (!realpath(exe, l->exe) || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	fflush(stdout);
	l->pid = fork();
	if (l->pid < 0)
		return -1;
	if (!l->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	l->in = in[1];
	l->out = fdopen(out[0], "r");
	return leaf_read(l);
}

static uint64_t leaf_value(const struct leaf *l, const char *key)
{
	int i;

	for (i = 0; i < l->nr_values; i++)
		if (!strcmp(l->values[i].key, key))
			return l->values[i].addr;
	printf("# no '%s' from the workload\n", key);
	return 0;
}

/* stdin closed: it exits; reaped unless keep_zombie */
static void leaf_stop(struct leaf *l, bool keep_zombie)
{
	if (l->in >= 0)
		close(l->in);
	l->in = -1;
	if (!keep_zombie) {
		waitpid(l->pid, NULL, 0);
		if (l->out)
			fclose(l->out);
		l->out = NULL;
	}
}

static void leaf_reap(struct leaf *l)
{
	leaf_stop(l, false);
}

/* the mapping of pid containing addr: its path and load bias (start - pgoff) */
static int find_mapping(pid_t pid, uint64_t addr, char *path, uint64_t *bias)
{
	char name[64], line[PATH_MAX + 128];
	int found = -1;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &pgoff, &pos) < 3 ||
		    addr < start || addr >= end)
			continue;
		line[strcspn(line, "\n")] = '\0';
		strcpy(path, line + pos);
		*bias = start - pgoff;
		found = 0;
		break;
	}
	fclose(f);
	return found;
}

static bool wait_zombie(pid_t pid)
{
	char name[64], buf[512], *p;
	int i;

	snprintf(name, sizeof(name), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(name, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			return true;
		usleep(2000);
	}
	return false;
}

/* ---- what the frames must be -------------------------------------------- */

struct expect {
	const char *key;	/* "ret <caller>" */
	const char *symbol;
	const char *module;	/* realpath */
	const char *src;	/* NULL: no line info expected */
};

static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return a && b && realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static void check_frame(struct symbolizer *s, pid_t pid, const struct leaf *l,
			const struct expect *e, const char *when)
{
	uint64_t ip = leaf_value(l, e->key);
	struct sym_frame f;
	char what[128];
	int err;

	err = symbolizer__resolve(s, pid, ip, &f);
	snprintf(what, sizeof(what), "%s: %s %#" PRIx64, when, e->key, ip);
	CHECK(!err, "%s: resolve: %d", what, err);
	CHECK_STR(f.symbol, e->symbol, what);
	CHECK_STR(f.module, e->module, what);
	if (e->src) {
		CHECK(same_file(f.file, e->src), "%s: file '%s', want '%s'", what,
		      f.file ? f.file : "(null)", e->src);
		CHECK_U64(f.line, marker_line(e->src, e->symbol), what);
	} else {
		CHECK(!f.file && !f.line, "%s: line info %s:%u without debug info",
		      what, f.file, f.line);
	}
	/* offset from the symbol start: the return address is past it */
	if (strcmp(e->symbol, SYM_UNKNOWN))
		CHECK(f.offset > 0 && f.offset < 0x1000, "%s: offset %#" PRIx64, what, f.offset);
}

/* the four frames of the call chain as built in dir (pie, nopie, gone) */
static void check_chain(struct symbolizer *s, pid_t pid, const struct leaf *l,
			const char *dir, const char *when)
{
	char lib[PATH_MAX];
	struct expect chain[] = {
		{ "ret main", "main", l->exe, leaf_src },
		{ "ret alloc_outer", "alloc_outer", l->exe, leaf_src },
		{ "ret lib_middle", "lib_middle", lib, mid_src },
		{ "ret lib_inner", "lib_inner", lib, mid_src },
	};
	size_t i;

	snprintf(lib, sizeof(lib), "%s/%s/libstack_mid.so", tmpdir, dir);
	for (i = 0; i < sizeof(chain) / sizeof(chain[0]); i++)
		check_frame(s, pid, l, &chain[i], when);
}

/*
 * glibc's malloc: .dynsym only on Debian; with debug_files, libc6-dbg's
 * .symtab and lines if installed
 */
static void check_malloc(struct symbolizer *s, pid_t pid, const struct leaf *l,
			 const char *libc, bool debug_files, const char *when)
{
	uint64_t ip = leaf_value(l, "fn malloc");
	struct sym_frame f;

	symbolizer__resolve_pc(s, pid, ip, &f);
	CHECK_STR(f.symbol, "malloc", when);
	CHECK_U64(f.offset, 0, when);
	CHECK_STR(f.module, libc, when);
	symbolizer__resolve(s, pid, ip + 0x10, &f);
	CHECK_STR(f.symbol, "malloc", when);
	CHECK_U64(f.offset, 0x10, when);
	if (!debug_files)
		CHECK(!f.file && !f.line, "%s: malloc has line info %s:%u", when, f.file, f.line);
	else if (f.file)
		CHECK(strstr(f.file, "malloc.c") && f.line, "%s: malloc at %s:%u", when,
		      f.file, f.line);
}

/* ---- the tests ---------------------------------------------------------- */

static void test_live_and_exited(void)
{
	struct symbolizer *s = symbolizer__new();
	char libc[PATH_MAX], cmd[PATH_MAX];
	uint64_t libc_bias, ip, pc;
	struct sym_frame f, f2;
	struct leaf l;
	pid_t fake;

	CHECK(s, "symbolizer__new");
	if (leaf_start(&l, tpath("pie/stack_leaf"))) {
		CHECK(0, "cannot run pie/stack_leaf");
		symbolizer__delete(s);
		return;
	}
	CHECK(!symbolizer__snapshot(s, l.pid), "snapshot");
	CHECK(!find_mapping(l.pid, leaf_value(&l, "ret libc"), libc, &libc_bias),
	      "no mapping of libc");
	check_chain(s, l.pid, &l, "pie", "live");
	check_malloc(s, l.pid, &l, libc, true, "live malloc");

	/* the first frame: the instruction itself, not a return address */
	pc = leaf_value(&l, "fn alloc_outer");
	symbolizer__resolve_pc(s, l.pid, pc, &f);
	CHECK_STR(f.symbol, "alloc_outer", "pc of alloc_outer");
	CHECK_U64(f.offset, 0, "pc of alloc_outer");
	CHECK(same_file(f.file, leaf_src) && f.line > 0, "pc of alloc_outer: %s:%u",
	      f.file, f.line);
	/* as a return address its entry is the call before it: not alloc_outer */
	symbolizer__resolve(s, l.pid, pc, &f);
	CHECK(strcmp(f.symbol, "alloc_outer"), "return address at a function start: %s",
	      f.symbol);

	/* main's caller in libc: a local symbol, known with libc6-dbg only */
	ip = leaf_value(&l, "ret libc");
	symbolizer__resolve(s, l.pid, ip, &f);
	CHECK_STR(f.module, libc, "ret libc");
	if (!strcmp(f.symbol, SYM_UNKNOWN))
		CHECK_U64(f.offset, ip - libc_bias, "ret libc without a symbol");

	/* an address in no mapping */
	symbolizer__resolve(s, l.pid, 0x1000, &f);
	CHECK_STR(f.module, SYM_UNKNOWN, "unmapped");
	CHECK_STR(f.symbol, SYM_UNKNOWN, "unmapped");
	CHECK_U64(f.offset, 0x1000, "unmapped");
	CHECK(!f.file && !f.line, "unmapped: line info");

	/* a fork shares the mappings: a pid that is no process now */
	fflush(stdout);
	fake = fork();
	if (!fake)
		_exit(0);
	waitpid(fake, NULL, 0);
	CHECK(!symbolizer__fork(s, l.pid, fake), "fork");
	check_chain(s, fake, &l, "pie", "forked");
	CHECK_U64(symbolizer__fork(s, 1 << 30, fake), (uint64_t)-ESRCH, "fork of unknown");

	/* a zombie has no maps: its snapshot fails and keeps the old one */
	leaf_stop(&l, true);
	CHECK(wait_zombie(l.pid), "no zombie");
	CHECK_U64(symbolizer__snapshot(s, l.pid), (uint64_t)-ESRCH, "snapshot of a zombie");
	leaf_reap(&l);
	CHECK_U64(symbolizer__snapshot(s, l.pid), (uint64_t)-ESRCH, "snapshot of a reaped pid");
	symbolizer__exit(s, l.pid);
	check_chain(s, l.pid, &l, "pie", "exited");
	check_malloc(s, l.pid, &l, libc, true, "exited malloc");
	symbolizer__exit(s, fake);
	check_chain(s, fake, &l, "pie", "forked, exited");

	/* the same strings every time */
	symbolizer__resolve(s, l.pid, leaf_value(&l, "ret lib_inner"), &f);
	symbolizer__resolve(s, l.pid, leaf_value(&l, "ret lib_inner"), &f2);
	CHECK(f.symbol == f2.symbol && f.module == f2.module && f.file == f2.file,
	      "strings are cached");
	symbolizer__delete(s);

	/* a pid never snapshotted, alive: read on the first miss */
	s = symbolizer__new();
	if (leaf_start(&l, tpath("pie/stack_leaf"))) {
		CHECK(0, "cannot run pie/stack_leaf");
		symbolizer__delete(s);
		return;
	}
	check_chain(s, l.pid, &l, "pie", "without snapshot");
	leaf_reap(&l);
	symbolizer__delete(s);

	/* only the snapshot: resolved after exit, the files deleted */
	s = symbolizer__new();
	if (leaf_start(&l, tpath("gone/stack_leaf"))) {
		CHECK(0, "cannot run gone/stack_leaf");
		symbolizer__delete(s);
		return;
	}
	CHECK(!symbolizer__snapshot(s, l.pid), "snapshot");
	leaf_reap(&l);
	symbolizer__exit(s, l.pid);
	snprintf(cmd, sizeof(cmd), "%s/gone", tmpdir);
	run("rm -rf '%s'", cmd);
	CHECK(access(cmd, F_OK), "gone/ still there");
	check_chain(s, l.pid, &l, "gone", "exited, deleted");
	symbolizer__delete(s);
}

static void test_nopie(void)
{
	struct symbolizer *s = symbolizer__new();
	char path[PATH_MAX];
	struct sym_frame f;
	uint64_t bias, pc;
	struct leaf l;

	if (leaf_start(&l, tpath("nopie/stack_leaf"))) {
		CHECK(0, "cannot run nopie/stack_leaf");
		symbolizer__delete(s);
		return;
	}
	CHECK(!symbolizer__snapshot(s, l.pid), "snapshot");
	/* ET_EXEC: mapped at its link-time address (bias 0 for the first segment) */
	pc = leaf_value(&l, "fn alloc_outer");
	CHECK(!find_mapping(l.pid, pc, path, &bias), "no mapping of the exe");
	CHECK(pc < 0x1000000, "not a non-PIE address: %#" PRIx64, pc);
	check_chain(s, l.pid, &l, "nopie", "non-PIE");
	symbolizer__resolve_pc(s, l.pid, pc, &f);
	CHECK_STR(f.symbol, "alloc_outer", "non-PIE pc");
	CHECK_U64(f.offset, 0, "non-PIE pc");
	leaf_reap(&l);
	symbolizer__exit(s, l.pid);
	check_chain(s, l.pid, &l, "nopie", "non-PIE exited");
	symbolizer__delete(s);
}

static void test_stripped(void)
{
	struct symbolizer *s = symbolizer__new();
	char lib[PATH_MAX], libc[PATH_MAX], path[PATH_MAX];
	struct expect chain[] = {
		{ "ret lib_middle", "lib_middle", lib, NULL },
		{ "ret lib_inner", "lib_inner", lib, NULL },
	};
	const char *keys[] = { "ret main", "ret alloc_outer", "fn alloc_outer", "ret libc" };
	uint64_t bias, libc_bias;
	struct leaf l;
	size_t i;

	if (leaf_start(&l, tpath("strip/stack_leaf"))) {
		CHECK(0, "cannot run strip/stack_leaf");
		symbolizer__delete(s);
		return;
	}
	snprintf(lib, sizeof(lib), "%s/strip/libstack_mid.so", tmpdir);
	/* not even libc6-dbg's debug file */
	CHECK(!symbolizer__set_debug_dir(s, NULL), "set_debug_dir");
	CHECK(!symbolizer__snapshot(s, l.pid), "snapshot");
	CHECK(!find_mapping(l.pid, leaf_value(&l, "fn malloc"), libc, &libc_bias), "libc");
	/* exported by the library: in .dynsym */
	for (i = 0; i < 2; i++)
		check_frame(s, l.pid, &l, &chain[i], "stripped lib");
	check_malloc(s, l.pid, &l, libc, false, "stripped malloc");
	/* not exported: no symbol, the offset in the file (PT_LOAD 0 at 0) */
	for (i = 0; i < 4; i++) {
		uint64_t ip = leaf_value(&l, keys[i]);
		struct sym_frame f;

		CHECK(!find_mapping(l.pid, ip, path, &bias), "no mapping");
		symbolizer__resolve_pc(s, l.pid, ip, &f);
		CHECK_STR(f.symbol, SYM_UNKNOWN, keys[i]);
		CHECK_STR(f.module, i < 3 ? l.exe : libc, keys[i]);
		CHECK_U64(f.offset, ip - bias, keys[i]);
		CHECK(!f.file && !f.line, "%s: line info", keys[i]);
	}
	leaf_reap(&l);
	symbolizer__delete(s);
}

/* stacks of the image before an exec still resolve, through the old set */
static void test_exec(void)
{
	struct symbolizer *s = symbolizer__new();
	struct leaf before, after;
	char line[PATH_MAX + 8];
	struct sym_map_info info;
	struct sym_frame f[SYM_MAX_FRAMES];
	uint64_t gen;

	if (leaf_start(&before, tpath("pie/stack_leaf"))) {
		CHECK(0, "cannot run pie/stack_leaf");
		symbolizer__delete(s);
		return;
	}
	CHECK_U64(symbolizer__maps_gen(s, before.pid), 0, "generation: none before a snapshot");
	CHECK(!symbolizer__snapshot(s, before.pid), "snapshot");
	gen = symbolizer__maps_gen(s, before.pid);
	CHECK(gen, "generation: one with the snapshot");
	symbolizer__resolve_frames(s, before.pid, leaf_value(&before, "ret alloc_outer"), true, f,
				   SYM_MAX_FRAMES, &info);
	CHECK_U64(info.maps_gen, gen, "generation: an address found in the current mappings");
	after = before;
	snprintf(line, sizeof(line), "exec %s\n", tpath("nopie/stack_leaf"));
	CHECK(write(before.in, line, strlen(line)) == (ssize_t)strlen(line), "write");
	CHECK(!leaf_read(&after), "no output after exec");
	CHECK(!symbolizer__exec(s, after.pid), "exec snapshot");
	CHECK(symbolizer__maps_gen(s, after.pid) > gen, "generation: a new one at exec");
	symbolizer__resolve_frames(s, before.pid, leaf_value(&before, "ret alloc_outer"), true, f,
				   SYM_MAX_FRAMES, &info);
	CHECK(info.maps_gen != symbolizer__maps_gen(s, before.pid),
	      "generation: an address of the image before the exec is not the current one's");
	realpath(tpath("nopie/stack_leaf"), after.exe);
	check_chain(s, after.pid, &after, "nopie", "after exec");
	check_chain(s, before.pid, &before, "pie", "before exec");
	leaf_reap(&after);
	symbolizer__exit(s, after.pid);
	check_chain(s, after.pid, &after, "nopie", "after exec, exited");
	check_chain(s, before.pid, &before, "pie", "before exec, exited");
	symbolizer__delete(s);
}

/* exited pids are kept, the last n of them */
static void test_exit_bound(void)
{
	struct symbolizer *s = symbolizer__new();
	struct leaf a, b;
	struct sym_frame f;
	uint64_t ip;

	symbolizer__set_keep_exited(s, 1);
	if (leaf_start(&a, tpath("pie/stack_leaf")) || leaf_start(&b, tpath("pie/stack_leaf"))) {
		CHECK(0, "cannot run pie/stack_leaf");
		symbolizer__delete(s);
		return;
	}
	CHECK(!symbolizer__snapshot(s, a.pid), "snapshot a");
	CHECK(!symbolizer__snapshot(s, b.pid), "snapshot b");
	leaf_reap(&a);
	leaf_reap(&b);
	symbolizer__exit(s, a.pid);
	check_chain(s, a.pid, &a, "pie", "a kept");
	symbolizer__exit(s, b.pid);
	ip = leaf_value(&a, "ret alloc_outer");
	symbolizer__resolve(s, a.pid, ip, &f);
	CHECK_STR(f.module, SYM_UNKNOWN, "a dropped");
	CHECK_STR(f.symbol, SYM_UNKNOWN, "a dropped");
	check_chain(s, b.pid, &b, "pie", "b kept");
	symbolizer__set_keep_exited(s, 0);
	symbolizer__resolve(s, b.pid, leaf_value(&b, "ret alloc_outer"), &f);
	CHECK_STR(f.symbol, SYM_UNKNOWN, "b dropped");
	symbolizer__delete(s);
}

/* mappings from elsewhere than /proc (mmap events), for a process gone */
static void test_add_mapping(void)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_mapping m[8], wrong;
	char line[PATH_MAX + 128], paths[8][PATH_MAX], name[64];
	struct sym_frame f;
	struct leaf l;
	int i, n = 0;
	FILE *maps;

	if (leaf_start(&l, tpath("pie/stack_leaf"))) {
		CHECK(0, "cannot run pie/stack_leaf");
		symbolizer__delete(s);
		return;
	}
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)l.pid);
	maps = fopen(name, "r");
	while (maps && n < 8 && fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
			   &pgoff, &maj, &min, &ino, &pos) < 7 || perms[2] != 'x' ||
		    line[pos] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		strcpy(paths[n], line + pos);
		m[n] = (struct sym_mapping){ start, end, pgoff, maj, min, ino, paths[n] };
		n++;
	}
	if (maps)
		fclose(maps);
	leaf_reap(&l);
	CHECK(n >= 3, "%d executable mappings", n);
	/* the same text under a wrong inode: not opened, no symbols */
	wrong = m[0];
	wrong.ino++;
	wrong.start = wrong.end;
	wrong.end += 0x1000;
	CHECK(!symbolizer__add_mapping(s, l.pid, &wrong), "add_mapping");
	for (i = 0; i < n; i++)
		CHECK(!symbolizer__add_mapping(s, l.pid, &m[i]), "add_mapping");
	CHECK_U64(symbolizer__add_mapping(s, l.pid, NULL), (uint64_t)-EINVAL, "add NULL");
	symbolizer__exit(s, l.pid);
	check_chain(s, l.pid, &l, "pie", "added mappings");
	symbolizer__resolve_pc(s, l.pid, wrong.start, &f);
	CHECK_STR(f.symbol, SYM_UNKNOWN, "wrong inode");
	CHECK_STR(f.module, m[0].path, "wrong inode");
	symbolizer__delete(s);
}

struct poller_arg {
	struct symbolizer *s;
	pid_t pid;
	bool stop;
	int errors;
};

/* what the poller thread does: snapshots, forks and exits of fake children */
static void *poller(void *arg)
{
	struct poller_arg *p = arg;
	pid_t child = 1 << 29;

	while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		p->errors += symbolizer__snapshot(p->s, p->pid) != 0;
		p->errors += symbolizer__fork(p->s, p->pid, child) != 0;
		symbolizer__exit(p->s, child);
		child++;
	}
	return NULL;
}

/* resolving while another thread snapshots: right answers, no races (TSan) */
static void test_threads(void)
{
	struct poller_arg arg = { 0 };
	const char *want[] = { "main", "alloc_outer", "lib_middle", "lib_inner" };
	const char *keys[] = { "ret main", "ret alloc_outer", "ret lib_middle", "ret lib_inner" };
	struct leaf l;
	pthread_t th;
	int i, wrong = 0;

	if (leaf_start(&l, tpath("pie/stack_leaf"))) {
		CHECK(0, "cannot run pie/stack_leaf");
		return;
	}
	arg.s = symbolizer__new();
	arg.pid = l.pid;
	symbolizer__set_keep_exited(arg.s, 64);
	CHECK(!pthread_create(&th, NULL, poller, &arg), "pthread_create");
	for (i = 0; i < 20000; i++) {
		struct sym_frame f;

		symbolizer__resolve(arg.s, l.pid, leaf_value(&l, keys[i & 3]), &f);
		wrong += strcmp(f.symbol, want[i & 3]) != 0;
		if (i % 1000 == 999)
			usleep(1000);
	}
	__atomic_store_n(&arg.stop, true, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	CHECK(!wrong, "%d wrong while snapshotting", wrong);
	CHECK(!arg.errors, "%d poller errors", arg.errors);
	leaf_reap(&l);
	symbolizer__delete(arg.s);
}

/* the kernel's vdso, from our own copy */
static void test_vdso(void)
{
	struct symbolizer *s = symbolizer__new();
	unsigned long long start = 0, end = 0, ip;
	char line[PATH_MAX + 128];
	int others = 0, gettime = 0;
	FILE *maps = fopen("/proc/self/maps", "r");
	struct sym_frame f;

	while (maps && fgets(line, sizeof(line), maps)) {
		if (strstr(line, "[vdso]")) {
			sscanf(line, "%llx-%llx", &start, &end);
			break;
		}
	}
	if (maps)
		fclose(maps);
	if (!start) {
		printf("# no [vdso]\n");
		symbolizer__delete(s);
		return;
	}
	CHECK(!symbolizer__snapshot(s, getpid()), "snapshot of self");
	for (ip = start; ip < end; ip += 4) {
		symbolizer__resolve_pc(s, getpid(), ip, &f);
		others += strcmp(f.module, "[vdso]") != 0;
		gettime += !strcmp(f.symbol, "__vdso_clock_gettime") ||
			   !strcmp(f.symbol, "clock_gettime");
	}
	CHECK(!others, "%d addresses of the vdso not in [vdso]", others);
	CHECK(gettime, "no clock_gettime in the vdso");
	symbolizer__delete(s);
}

static void test_errors(void)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_frame f;
	pid_t gone;

	fflush(stdout);
	gone = fork();
	if (!gone)
		_exit(0);
	waitpid(gone, NULL, 0);
	CHECK_U64(symbolizer__resolve(NULL, 1, 0x1000, &f), (uint64_t)-EINVAL, "NULL");
	CHECK_STR(f.symbol, SYM_UNKNOWN, "NULL");
	CHECK_U64(symbolizer__resolve(s, 1, 0x1000, NULL), (uint64_t)-EINVAL, "NULL out");
	CHECK_U64(symbolizer__snapshot(s, gone), (uint64_t)-ESRCH, "snapshot of no process");
	CHECK_U64(symbolizer__resolve(s, gone, 0x400000, &f), 0, "unknown pid");
	CHECK_STR(f.module, SYM_UNKNOWN, "unknown pid");
	CHECK_STR(f.symbol, SYM_UNKNOWN, "unknown pid");
	symbolizer__exit(s, gone);
	symbolizer__delete(s);
	symbolizer__delete(NULL);
}

/* ---- --bench ------------------------------------------------------------ */

static double elapsed_us(uint64_t t0)
{
	return (now_ns() - t0) / 1e3;
}

/* in use: small blocks and mmap()ed ones */
static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static __attribute__((noinline)) uint64_t self_ip(void)
{
	return (uint64_t)__builtin_return_address(0);
}

/* the first resolve in a module: reading its symbols (and DWARF) */
static void bench_first(struct symbolizer *s, pid_t pid, uint64_t ip, const char *what)
{
	size_t heap0 = heap_bytes();
	uint64_t rss0 = self_rss_bytes(), t0 = now_ns();
	struct symbolizer_stats st0, st1;
	struct sym_frame f;
	double us;

	symbolizer__stats(s, &st0);
	symbolizer__resolve(s, pid, ip, &f);
	us = elapsed_us(t0);
	symbolizer__stats(s, &st1);
	printf("first resolve in %-28s %9.1f us  heap %+8zd B  rss %+8" PRId64 " kB"
	       "  symbols %" PRIu64 "  cu ranges %" PRIu64 "  -> %s %s:%u\n",
	       what, us, (ssize_t)(heap_bytes() - heap0),
	       (int64_t)(self_rss_bytes() - rss0) / 1024,
	       st1.symbols - st0.symbols, st1.cu_ranges - st0.cu_ranges, f.symbol,
	       f.file ? strrchr(f.file, '/') + 1 : "-", f.line);
}

static void bench(void)
{
	struct symbolizer *s = symbolizer__new(), *nodebug;
	uint64_t ips[8], t0;
	struct sym_frame f;
	struct leaf l;
	double us;
	long i, n;

	if (leaf_start(&l, tpath("pie/stack_leaf")))
		exit(1);
	t0 = now_ns();
	symbolizer__snapshot(s, l.pid);
	printf("snapshot of stack_leaf (4 modules)         %9.1f us\n", elapsed_us(t0));
	t0 = now_ns();
	symbolizer__snapshot(s, l.pid);
	printf("snapshot again (modules known)             %9.1f us\n", elapsed_us(t0));
	t0 = now_ns();
	symbolizer__snapshot(s, getpid());
	printf("snapshot of self                           %9.1f us\n", elapsed_us(t0));

	/* libc's .dynsym alone, then with libc6-dbg's .symtab and DWARF if installed */
	nodebug = symbolizer__new();
	symbolizer__set_debug_dir(nodebug, NULL);
	symbolizer__snapshot(nodebug, l.pid);
	bench_first(nodebug, l.pid, leaf_value(&l, "fn malloc") + 1, "libc.so.6 (.dynsym)");
	t0 = now_ns();
	for (i = 0; i < 1000000; i++)
		symbolizer__resolve(nodebug, l.pid, leaf_value(&l, "fn malloc") + (i & 255), &f);
	us = elapsed_us(t0);
	printf("cached resolve, libc .dynsym only           %9.0f calls/s (%.0f ns each)\n",
	       1e6 / us * 1e6, us * 1e3 / 1e6);
	symbolizer__delete(nodebug);
	bench_first(s, l.pid, leaf_value(&l, "fn malloc") + 1, "libc.so.6 (+ debug file)");
	bench_first(s, l.pid, leaf_value(&l, "ret alloc_outer"), "stack_leaf (-g, tiny)");
	bench_first(s, l.pid, leaf_value(&l, "ret lib_inner"), "libstack_mid.so (-g, tiny)");
	bench_first(s, getpid(), self_ip(), "test-symbolize (-g)");

	ips[0] = leaf_value(&l, "ret main");
	ips[1] = leaf_value(&l, "ret alloc_outer");
	ips[2] = leaf_value(&l, "ret lib_middle");
	ips[3] = leaf_value(&l, "ret lib_inner");
	ips[4] = leaf_value(&l, "ret libc");
	ips[5] = leaf_value(&l, "fn malloc") + 0x20;
	ips[6] = leaf_value(&l, "ret alloc_outer");
	ips[7] = leaf_value(&l, "ret lib_middle");
	n = 2000000;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		symbolizer__resolve(s, l.pid, ips[i & 7], &f);
	us = elapsed_us(t0);
	printf("cached resolve, 8 ips in 3 modules          %9.0f calls/s (%.0f ns each)\n",
	       n / us * 1e6, us * 1e3 / n);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		symbolizer__resolve(s, l.pid, ips[4 + (i & 1)], &f);
	us = elapsed_us(t0);
	printf("cached resolve, libc (+ debug file)         %9.0f calls/s (%.0f ns each)\n",
	       n / us * 1e6, us * 1e3 / n);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		symbolizer__resolve(s, getpid(), self_ip() + (i & 255), &f);
	us = elapsed_us(t0);
	printf("cached resolve, self (-g), 256 ips          %9.0f calls/s (%.0f ns each)\n",
	       n / us * 1e6, us * 1e3 / n);
	leaf_reap(&l);
	symbolizer__delete(s);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	build_workloads();
	if (argc > 1 && !strcmp(argv[1], "--bench")) {
		bench();
		remove_tmpdir();
		return 0;
	}
	test_live_and_exited();
	test_nopie();
	test_stripped();
	test_exec();
	test_exit_bound();
	test_add_mapping();
	test_threads();
	test_vdso();
	test_errors();
	remove_tmpdir();
	printf("test-symbolize: %d checks, %d failed\n", test_count, test_failures);
	return test_failures ? 1 : 0;
}
