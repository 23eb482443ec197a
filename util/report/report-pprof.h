/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_PPROF_H
#define MEMTRACK_REPORT_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "util/report/report-sites.h"

/*
 * report --pprof: the call sites as a pprof profile (util/report/profile.proto),
 * gzip-compressed, as pprof, Go, speedscope, Pyroscope and Parca read it.
 *
 * One sample per site of whole stacks (report_sites__resolve() with depth
 * 0), leaf first, with the values of REPORT_PPROF_TYPES.  A Location is a
 * frame of code (its ip): the functions inlined there are Lines of the same
 * Location before the function they were inlined into, as pprof puts them.
 * A Function is a name (demangled unless asked not to, the binary's spelling
 * as its system name) and a source file; a Mapping is a module.  Sites
 * without a stack are the one-frame stacks [no stack], [unknown stack] (its
 * Stack record is missing) and [empty stack].
 */

/* sample types: name, unit, and the site's figure */
#define REPORT_PPROF_TYPES(X)					\
	X(alloc_objects,	count,	calls)			\
	X(alloc_space,		bytes,	bytes)			\
	X(inuse_objects,	count,	peak_count)		\
	X(inuse_space,		bytes,	peak_bytes)		\
	X(leaked_objects,	count,	leaked_count)		\
	X(leaked_space,		bytes,	leaked_bytes)		\
	X(temporary_objects,	count,	temporary_count)	\
	X(temporary_space,	bytes,	temporary_bytes)

#define REPORT_PPROF_DEFAULT_TYPE	"inuse_space"
#define REPORT_PPROF_MAX_COMMENTS	8

struct report_pprof_info {
	uint64_t duration_ns;
	/* free text for people, shown by pprof -comments; NULL-terminated */
	const char *comments[REPORT_PPROF_MAX_COMMENTS + 1];
};

/*
 * The profile of the sites (whole stacks, REPORT_MATCH_FRAME), gzipped, in
 * *buf (malloc'd) of *len bytes; 0, -ENOMEM or -E2BIG (too many strings).
 */
int report_pprof__encode(const struct report_site_list *sites,
			 const struct report_pprof_info *info, void **buf, size_t *len);

#endif
