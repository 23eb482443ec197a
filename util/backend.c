// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "usage.h"

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

/* a sanitizer runtime checks it comes first in the library list, and dies otherwise */
static bool needs_sanitizer_first(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Dyn dyn;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && gelf_getdyn(data, i, &dyn); i++) {
			const char *lib;

			if (dyn.d_tag != DT_NEEDED)
				continue;
			lib = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (lib && (strstr(lib, "libasan") || strstr(lib, "libhwasan") ||
				    strstr(lib, "libtsan") || strstr(lib, "clang_rt.")))
				return true;
		}
	}
	return false;
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
