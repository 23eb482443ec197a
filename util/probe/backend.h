/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BACKEND_H
#define MEMTRACK_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Which way a process is traced (Documentation/technical/design.md, 4): through the
 * preload shim when its image will load it, through BPF uprobes when not.
 */
enum backend {
	BACKEND_AUTO,
	BACKEND_PRELOAD,
	BACKEND_BPF,
};

/* "auto", "preload", "bpf"; -1 for anything else */
int backend__parse(const char *s);
const char *backend__name(enum backend b);

/* the shim as memtrack put it in the command's environment */
struct shim_env {
	char path[4096];	/* libmemtrack-preload.so, absolute */
	uint64_t dev, ino;	/* as stat() gives them */
	const char *name_var;	/* "MEMTRACK_SHIM=<socket name>" */
};

/* the shim next to memtrack's binary, else in ../lib/memtrack from it (an
 * installed tree), else in libdir; -ENOENT */
int backend__find_shim(struct shim_env *env, const char *libdir);

/*
 * Why pid's new image (stopped at its exec) will not load the shim, NULL
 * when it will: its environment lost the shim, it is a secure exec
 * (setuid, setgid, file capabilities), a static or foreign ELF, linked
 * with a sanitizer runtime that refuses preloads, or the shim's file is not
 * there in its root.  *tag says it in a word or two.
 */
const char *backend__refusal(pid_t pid, const struct shim_env *env, const char **tag);
/*
 * Takes the shim out of the environment of pid's new image, held at its
 * exec before its dynamic linker ran: LD_PRELOAD loses the shim (and goes
 * when it named nothing else), MEMTRACK_SHIM goes, so that the program
 * sees the environment it would have had bare (a sanitizer runtime aborts
 * when a library is preloaded before it; under a root without the shim,
 * ld.so says it cannot preload it).  0, or -errno.
 */
int backend__unpreload(pid_t pid, const struct shim_env *env);
/* pid's image was a secure exec (AT_SECURE: setuid, setgid, file capabilities) */
bool backend__secure_exec(pid_t pid);
/* pid's executable is static (no PT_INTERP) */
bool backend__static_exe(pid_t pid);
/*
 * Whether the program name runs (found as execvp() finds it) will have
 * allocator probes linked as it starts, guessed before it runs: its
 * executable is static or defines malloc or free, or it or a library it
 * needs (util/symbol/needed-libs.h) defines allocator functions the shim
 * does not interpose.  Names only, no code decoded: a function that merely
 * wraps libc's counts too.  The reason, or NULL.
 */
const char *backend__guess_links(const char *name);

#endif
