/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STDIN_SPOOL_H
#define MEMTRACK_STDIN_SPOOL_H

/*
 * Standard input read more than once (report's --comm and --children read
 * the artifact's trailer first): a pipe cannot be read again, so its content
 * is copied to an unnamed temporary file (O_TMPFILE in $TMPDIR or /tmp, or a
 * memfd where that fails), which takes fd 0's place.  A regular file stays
 * as it is.
 */

/* 0 or -errno */
int stdin__make_rereadable(void);
/* back to where standard input started, before each read after the first; 0 or -errno */
int stdin__rewind(void);

#endif
