/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_HINTS_H
#define MEMTRACK_REPORT_HINTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/report/report-summary.h"

/*
 * Hints for a reader of the report, about what the figures cannot show.
 *
 * Python: pymalloc serves objects of up to 512 bytes from arenas it maps
 * itself, so a Python program shows a small heap of a few large blocks
 * unless run with PYTHONMALLOC=malloc.  Python is told by a process whose
 * executable is python* or by a frame in libpython; a process whose shim
 * saw PYTHONMALLOC=malloc is not one (BPF processes cannot say).
 */

struct python_hint {
	bool found;
	const struct report_process *proc;	/* by its executable, or NULL */
	char module[256];			/* else the libpython module of a frame */
	bool pymalloc_off;			/* a process ran with PYTHONMALLOC=malloc */
};

/* a Python process or module in s (its sites' stacks too, when it has them) */
void report_hint__python(struct report_summary *s, struct python_hint *h);
/* true for the name of a Python interpreter: python, python3, python3.11 */
bool python_exe_name(const char *path);

/* the hints that apply to s, each a "# hint: ..." line */
void report_hints__print(struct report_summary *s, FILE *out);

#endif
