/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_OUT_FILE_H
#define MEMTRACK_OUT_FILE_H

/*
 * How memtrack creates the files it writes, as root or not
 * (Documentation/memtrack-track.txt, "FILES AND PRIVILEGES"):
 *
 * - Under sudo (struct run_as set), a child process that has become the
 *   invoking user resolves the path and creates the file, and passes the
 *   fd back: the kernel checks the user's rights, the user owns the file.
 *   Nothing is chowned.
 * - A path is resolved one component at a time; a symbolic link is
 *   followed only when it belongs to root or to the creating user, so no
 *   other user's link leads anywhere.  The last component is never
 *   followed.
 * - When root creates (no sudo), the directory must belong to root and
 *   must not be writable by group or others unless it is sticky (/tmp).
 * - OUT_NEW creates with O_EXCL (an artifact never replaces a file);
 *   OUT_REPLACE empties an existing regular file only when the creating
 *   user owns it and it has no other hard link.
 */

#include <stdbool.h>
#include <stddef.h>

struct run_as;

enum out_mode {
	OUT_NEW,
	OUT_REPLACE,
};

#define OUT_WHY_MAX	256

/*
 * The directory at path, opened (O_RDONLY | O_DIRECTORY) for
 * out_file__create(); with create, its missing components are made (mode
 * 0755 less the umask) and it must be writable.  Returns the fd, or -errno
 * with why filled in.
 */
int out_dir__open(const struct run_as *as, const char *path, bool create,
		  char why[OUT_WHY_MAX]);

/* the directory of path, opened as above (not created); *name is the rest */
int out_dir__open_parent(const struct run_as *as, const char *path, const char **name,
			 char why[OUT_WHY_MAX]);

/*
 * Creates name (no '/') in the directory dirfd, mode 0644 less the umask,
 * O_WRONLY | O_CLOEXEC.  Returns the fd, or -errno with why filled in.
 */
int out_file__create(const struct run_as *as, int dirfd, const char *name,
		     enum out_mode mode, char why[OUT_WHY_MAX]);

/* the same for a path whose directory exists */
int out_file__create_path(const struct run_as *as, const char *path,
			  enum out_mode mode, char why[OUT_WHY_MAX]);

/*
 * A whole file written at once, as the invoking user under sudo: path
 * created as above (OUT_REPLACE) and data written.  0, or -errno with why
 * filled in.
 */
int out_file__write_path(const char *path, const void *data, size_t len,
			 char why[OUT_WHY_MAX]);

#endif
