/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_DEBUGINFO_H
#define MEMTRACK_DEBUGINFO_H

#include <libelf.h>
#include <stdint.h>

/*
 * Where the separate debug file of a stripped binary is found, as gdb and
 * elfutils look for it, in this order:
 *
 *   1. by build id: <dir>/.build-id/xx/yyyy.debug in each debug directory;
 *   2. by .gnu_debuglink: <name> beside the binary, in .debug/ beside it,
 *      and <dir>/<the binary's directory>/<name> in each debug directory;
 *      taken only when its CRC is the one the link names;
 *   3. from the debuginfod servers of DEBUGINFOD_URLS, when it is set:
 *      libdebuginfod is loaded then (not otherwise), its cache makes a
 *      second run local, and each run spends at most
 *      DEBUGINFOD_RUN_BUDGET_MS on it (a lookup is cut short at the end of
 *      what remains); after a failure other than "not found" (no server,
 *      timeout) the run asks no more.
 *
 * The debug directories are a colon-separated list: MEMTRACK_DEBUG_DIRS, else
 * /usr/lib/debug.  Thread-safe: lookups of different modules may run at once.
 */
#define DEBUGINFO_DEFAULT_DIRS	"/usr/lib/debug"
#define DEBUGINFOD_RUN_BUDGET_MS	10000

struct debuginfo;

struct debuginfo_stats {
	uint64_t build_id, debuglink, debuginfod;	/* files found each way */
	uint64_t crc_mismatch;		/* debuglink candidates rejected */
	uint64_t debuginfod_queries;
	uint64_t debuginfod_ns;		/* time spent asking */
};

/* dirs: colon-separated debug directories, NULL or "" for none */
struct debuginfo *debuginfo__new(const char *dirs);
void debuginfo__delete(struct debuginfo *d);

/*
 * The separate debug file of elf, whose file is at path (for the
 * debuglink's directories), mapped; NULL when none is found.
 */
Elf *debuginfo__find(struct debuginfo *d, Elf *elf, const char *path);

void debuginfo__stats(struct debuginfo *d, struct debuginfo_stats *st);

#endif
