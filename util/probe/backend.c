// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/probe/alloc-code.h"
#include "util/probe/allocators.h"
#include "util/probe/backend.h"
#include "util/symbol/elf-syms.h"
#include "util/symbol/needed-libs.h"
#include "util/usage.h"
#include "util/util.h"

#define SHIM_FILE	"libmemtrack-preload.so"
#define ENVIRON_MAX	(1 << 20)

static const char *const names[] = {
	[BACKEND_AUTO] = "auto",
	[BACKEND_PRELOAD] = "preload",
	[BACKEND_BPF] = "bpf",
};

int backend__parse(const char *s)
{
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

const char *backend__name(enum backend b)
{
	return names[b];
}

static int stat_shim(struct shim_env *env)
{
	struct stat st;

	if (stat(env->path, &st) || !S_ISREG(st.st_mode))
		return -ENOENT;
	env->dev = st.st_dev;
	env->ino = st.st_ino;
	return 0;
}

/* env->path = <dir>/<rel>/SHIM_FILE, and its file is there */
static bool shim_in(struct shim_env *env, const char *dir, const char *rel)
{
	char *real;

	snprintf(env->path, sizeof(env->path), "%s%s/%s", dir, rel, SHIM_FILE);
	if (stat_shim(env))
		return false;
	/* without "..": the path goes into the environment of the processes */
	real = realpath(env->path, NULL);
	if (real && strlen(real) < sizeof(env->path))
		strcpy(env->path, real);
	free(real);
	pr_debug("the preload shim: %s\n", env->path);
	return true;
}

int backend__find_shim(struct shim_env *env, const char *libdir)
{
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			/* the build tree, then an installed tree: <prefix>/bin, <prefix>/lib/memtrack */
			if (shim_in(env, self, "") || shim_in(env, self, "/../lib/memtrack"))
				return 0;
		}
	}
	return shim_in(env, libdir, "") ? 0 : -ENOENT;
}

/* the whole of a /proc file, NUL-terminated; NULL if unreadable */
static char *read_proc(pid_t pid, const char *what, size_t *len)
{
	char path[64], *buf = NULL;
	size_t have = 0, cap = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	do {
		if (have + 4096 + 1 > cap) {
			char *p = cap >= ENVIRON_MAX ? NULL : realloc(buf, cap = 2 * cap + 8192);

			if (!p) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = p;
		}
		n = read(fd, buf + have, cap - have - 1);
		if (n > 0)
			have += n;
	} while (n > 0);
	close(fd);
	buf[have] = 0;
	*len = have;
	return buf;
}

/* LD_PRELOAD lists the shim, and MEMTRACK_SHIM names our socket */
static bool environ_has_shim(pid_t pid, const struct shim_env *env)
{
	size_t len, name_len = strlen(env->name_var), off;
	char *buf = read_proc(pid, "environ", &len);
	bool preload = false, name = false;

	if (!buf)
		return false;
	for (off = 0; off < len; off += strlen(buf + off) + 1) {
		const char *var = buf + off;

		if (!strncmp(var, "LD_PRELOAD=", 11)) {
			char *list = strdup(var + 11), *save, *tok;

			for (tok = list ? strtok_r(list, ": ", &save) : NULL; tok;
			     tok = strtok_r(NULL, ": ", &save))
				preload |= !strcmp(tok, env->path);
			free(list);
		} else if (!strncmp(var, env->name_var, name_len) && !var[name_len]) {
			name = true;
		}
	}
	free(buf);
	return preload && name;
}

bool backend__secure_exec(pid_t pid)
{
	size_t len, i;
	Elf64_auxv_t *auxv = (Elf64_auxv_t *)read_proc(pid, "auxv", &len);
	bool secure = true;	/* unreadable: assume the worst */

	if (!auxv)
		return true;
	for (i = 0; i < len / sizeof(*auxv) && auxv[i].a_type != AT_NULL; i++)
		if (auxv[i].a_type == AT_SECURE)
			secure = auxv[i].a_un.a_val != 0;
	free(auxv);
	return secure;
}

static int needs_sanitizer(GElf_Sxword tag, const char *lib, void *arg __maybe_unused)
{
	return tag == DT_NEEDED && alloc_code__is_sanitizer(lib);
}

/* a sanitizer runtime checks it comes first in the library list, and dies otherwise */
static bool needs_sanitizer_first(Elf *elf)
{
	return elf__each_dyn_string(elf, needs_sanitizer, NULL);
}

/* an executable without PT_INTERP: no dynamic linker, no library */
static bool has_interp(Elf *elf)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

bool backend__static_exe(pid_t pid)
{
	char path[64];
	bool is_static = false;
	Elf *elf;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		is_static = !has_interp(elf);
	if (elf)
		elf_end(elf);
	close(fd);
	return is_static;
}

static const char *image_refusal(pid_t pid, const char **tag)
{
	char path[64];
	const char *why = NULL;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*tag = "unreadable";
		return "its executable cannot be read";
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || gelf_getclass(elf) != ELFCLASS64 ||
#if defined(__x86_64__)
	    eh.e_machine != EM_X86_64 ||
#elif defined(__aarch64__)
	    eh.e_machine != EM_AARCH64 ||
#endif
	    0) {
		why = "not an ELF executable of this machine";
		*tag = "foreign ELF";
		goto out;
	}
	if (!has_interp(elf)) {
		why = "a static executable";
		*tag = "static";
	} else if (needs_sanitizer_first(elf)) {
		why = "linked with a sanitizer runtime that refuses preloads";
		*tag = "sanitizer";
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return why;
}

/* the shim at its path in the process's root is our file */
static bool shim_visible(pid_t pid, const struct shim_env *env)
{
	char path[sizeof(env->path) + 64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, env->path);
	return !stat(path, &st) && st.st_dev == env->dev && st.st_ino == env->ino;
}

const char *backend__refusal(pid_t pid, const struct shim_env *env, const char **tag)
{
	const char *why = image_refusal(pid, tag);

	if (why)
		return why;
	if (!environ_has_shim(pid, env)) {
		*tag = "no shim in env";
		return "its environment does not carry the preload shim";
	}
	if (backend__secure_exec(pid)) {
		*tag = "secure exec";
		return "a secure exec (setuid, setgid or file capabilities)";
	}
	if (!shim_visible(pid, env)) {
		*tag = "chroot";
		return "the preload shim is not in its root";
	}
	return NULL;
}

#define ENVP_MAX	(1 << 16)	/* entries of envp and auxv words looked at */
#define VAR_MAX		(sizeof(((struct shim_env *)0)->path) + 4096)

/* field 28 of /proc/pid/stat: where argc is on the new image's stack */
static uint64_t start_stack(pid_t pid)
{
	size_t len;
	char *buf = read_proc(pid, "stat", &len), *p;
	unsigned long long v = 0;
	int field;

	if (!buf)
		return 0;
	p = strrchr(buf, ')');
	/* after the comm: field 3 onwards */
	for (field = 3; p && field <= 28; field++) {
		p = strchr(p + 1, ' ');
		if (p && field == 28)
			v = strtoull(p + 1, NULL, 10);
	}
	free(buf);
	return v;
}

/* the shim's path taken out of an LD_PRELOAD list; false when nothing is left */
static bool drop_from_list(char *list, const char *shim)
{
	char out[VAR_MAX], *save, *tok;
	size_t at = 0;

	out[0] = 0;
	for (tok = strtok_r(list, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		if (!strcmp(tok, shim))
			continue;
		at += snprintf(out + at, sizeof(out) - at, "%s%s", at ? ":" : "", tok);
		if (at >= sizeof(out))
			return true;	/* cannot happen: it was longer */
	}
	strcpy(list, out);
	return at > 0;
}

/*
 * What to do with one variable of the environment (its text at var): 1 to
 * drop it, 0 to keep it as it is, 2 when var was rewritten shorter in place.
 */
static int unpreload_var(char *var, const struct shim_env *env)
{
	size_t len = strlen(var);

	if (!strncmp(var, env->name_var, strlen(env->name_var)) && !var[strlen(env->name_var)])
		return 1;
	if (strncmp(var, "LD_PRELOAD=", 11) || !strstr(var, env->path))
		return 0;
	if (!drop_from_list(var + 11, env->path))
		return 1;
	return strlen(var) < len ? 2 : 0;
}

int backend__unpreload(pid_t pid, const struct shim_env *env)
{
	uint64_t sp = start_stack(pid), argc, *words = NULL, first, i, n, nenv = 0, kept;
	char path[64], var[VAR_MAX];
	int fd, err = 0;
	ssize_t got;

	if (!sp)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &argc, sizeof(argc), sp) != sizeof(argc) || argc > ENVP_MAX) {
		err = -EIO;
		goto out;
	}
	/* argc, argv[] and its NULL, then envp[], its NULL and the auxv pairs to AT_NULL */
	first = sp + (argc + 2) * sizeof(uint64_t);
	words = calloc(ENVP_MAX, sizeof(*words));
	if (!words) {
		err = -ENOMEM;
		goto out;
	}
	got = pread(fd, words, ENVP_MAX * sizeof(*words), first);
	n = got > 0 ? got / sizeof(*words) : 0;
	while (nenv < n && words[nenv])
		nenv++;
	for (i = nenv + 1; i + 1 < n && words[i] != AT_NULL; i += 2)
		;
	if (nenv >= n || i + 1 >= n) {
		err = -EIO;
		goto out;
	}
	n = i + 2;	/* to the end of AT_NULL's pair */
	for (i = kept = 0; i < nenv; i++) {
		int what = 0;

		got = pread(fd, var, sizeof(var) - 1, words[i]);
		if (got > 0) {
			var[got] = 0;
			if (strlen(var) < (size_t)got)
				what = unpreload_var(var, env);
		}
		if (what == 2 && pwrite(fd, var, strlen(var) + 1, words[i]) != (ssize_t)strlen(var) + 1)
			err = -EIO;
		if (what != 1)
			words[kept++] = words[i];
	}
	if (kept == nenv || err)
		goto out;
	/* envp[] closes up over what went, and the auxv with it: ld.so finds it after envp's NULL */
	memmove(words + kept, words + nenv, (n - nenv) * sizeof(*words));
	memset(words + n - (nenv - kept), 0, (nenv - kept) * sizeof(*words));
	if (pwrite(fd, words, n * sizeof(*words), first) != (ssize_t)(n * sizeof(*words)))
		err = -EIO;
out:
	free(words);
	close(fd);
	return err;
}

/* defines an allocator function the shim does not interpose, under a name of its own */
static bool defines_foreign(const struct alloc_code *ac)
{
	unsigned int i;

	for (i = 0; i < nr_alloc_symbols; i++)
		if (ac->fns[i].offset && !(alloc_symbols[i].flags & ALLOC_SYM_INTERPOSED) &&
		    !(ac->fns[i].flags & ALLOC_FN_ALIAS))
			return true;
	return false;
}

static bool defines(const struct alloc_code *ac, const char *name)
{
	int i = alloc_symbol__find(name);

	return i >= 0 && ac->fns[i].offset;
}

/* the names fd's file defines, read through /proc: fd is a regular file, the path may not be */
static int read_names(int fd, struct alloc_code *ac)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return alloc_code__read_names(path, ac);
}

static int lib_guess(int fd, const char *path __maybe_unused, void *arg)
{
	struct alloc_code *ac = arg;

	return read_names(fd, ac) > 0 && defines_foreign(ac);
}

const char *backend__guess_links(const char *name)
{
	struct alloc_code *ac = malloc(sizeof(*ac));
	const char *why = NULL;
	char path[PATH_MAX];
	int fd = -1;

	if (ac)
		fd = open_program(name, path, sizeof(path));
	if (fd < 0) {
		free(ac);
		return NULL;
	}
	if (read_names(fd, ac) < 0)
		;	/* not an ELF file: a script, whose interpreter is not looked at */
	else if (!ac->interp)
		why = "a static executable";
	else if (defines(ac, "malloc") || defines(ac, "free"))
		why = "an executable with an allocator of its own";
	else if (defines_foreign(ac))
		why = "an executable with allocator functions the shim does not see";
	else if (needed_libs__each(fd, path, lib_guess, ac) > 0)
		why = "a library with allocator functions the shim does not see";
	close(fd);
	free(ac);
	return why;
}
