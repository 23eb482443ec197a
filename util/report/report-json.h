/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_JSON_H
#define MEMTRACK_REPORT_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "cJSON.h"
#include "util/report/report-sites.h"
#include "util/report/report-summary.h"

/*
 * The JSON writer of report (report-json.c): the pieces of the --json
 * document that --diff and --html write too, so that each object has one
 * writer.  The documents that need the options are in report.h.
 */

/* a u64 or an i64 exactly: cJSON's numbers are doubles */
void report_json__u64(cJSON *obj, const char *key, uint64_t v);
void report_json__i64(cJSON *obj, const char *key, int64_t v);
void report_json__u64_or_null(cJSON *obj, const char *key, uint64_t v, bool known);
/* s, or null */
void report_json__str_or_null(cJSON *obj, const char *key, const char *s);
/* the figures of h under their --json keys; only: the keys to write, NULL-ended, or NULL for all */
void report_json__heap(cJSON *o, const struct report_summary *s,
		       const struct report_heap *h, const char *const *only);
/* who a process is: pid, ppid, comm, exe, backend, bpf_why, exit_code */
void report_json__process_id(cJSON *o, const struct report_process *p);
cJSON *report_json__site_frames(const struct report_site *site);
/* a site's figures, and its frames when asked */
cJSON *report_json__site(const struct report_site *site, bool frames);
/* prints o and frees it; 0, or -1 (also for a NULL o) */
int report_json__print(cJSON *o);

#endif
