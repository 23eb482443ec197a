/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_NEEDED_LIBS_H
#define MEMTRACK_NEEDED_LIBS_H

/*
 * The libraries an executable needs (DT_NEEDED), found where the dynamic
 * linker looks first: its DT_RPATH (when it has no DT_RUNPATH),
 * LD_LIBRARY_PATH, its DT_RUNPATH, then the system's directories, $ORIGIN
 * being the executable's directory.  Not ld.so.cache, nor what the
 * libraries need in turn: a guess, before it runs, at what a program maps
 * as it starts.
 *
 * fn gets each library found, as a regular file open for reading (closed
 * after fn returns), and its path; fn's nonzero value stops the walk.
 * Returns 0, fn's value, or -errno when exe_fd is no ELF file.
 */
typedef int needed_lib_fn(int fd, const char *path, void *arg);

int needed_libs__each(int exe_fd, const char *exe_path, needed_lib_fn *fn, void *arg);

#endif
