/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_H
#define MEMTRACK_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cJSON.h"
#include "util/artifact/artifact.h"
#include "util/report/report-gates.h"
#include "util/report/report-json.h"
#include "util/report/report-sites.h"
#include "util/report/report-summary.h"
#include "util/report/report-suppress.h"

/*
 * The modes of `memtrack report` share these: the options as parsed
 * (builtin-report.c), an artifact read into a summary (report-load.c), the
 * summary as text (report-text.c) or JSON (report-json.c), and two
 * artifacts compared (report-diff.c).
 */

#define STDIN_NAME		"<stdin>"	/* the artifact "-" in messages */
#define NO_STACKS_HINT		"record with 'memtrack track --call-graph fp'"

struct report_opts {
	bool dump, json, diff, children, quiet, flamegraph;
	bool no_demangle;		/* symbols as in the binaries */
	const char *pids, *time, *comm, *timeline, *gnuplot;
	const char *sort, *top_arg, *depth_arg, *weight;
	const char *pprof, *html;	/* --pprof, --html: the file to write */
	int sort_key;			/* --sort, -1 when not given */
	unsigned int top;		/* sites per section, 0: all */
	unsigned int depth;		/* frames per site, 0: all */
	enum report_site_key weight_key;	/* --weight */
	struct report_filter filter;
	pid_t *pid_list;		/* --pid */
	size_t nr_pid_list;
	/* the pids --pid, --comm and --children select, sorted */
	int32_t *selected;
	size_t nr_selected;
	struct report_gates gates;	/* --fail-if */
	const char *suppressions;	/* --suppressions */
	bool no_default_suppressions;
	bool show_libc_frees;		/* --show-libc-frees */
	bool threads;			/* --threads */
	struct report_suppressions *sup;
};

/* ---- report-load.c ---------------------------------------------------------- */

/* the progress line on stderr while an artifact is read */
struct progress {
	bool on;
	uint64_t start, last;
	bool shown;
};

void progress__init(struct progress *pg, bool quiet);
void progress__update(struct progress *pg, struct artifact *a);
void progress__done(struct progress *pg);

/* path, or standard input for "-"; 0, or -1 after a message */
int open_artifact(const char *path, struct artifact **ap);
/* the line that closes the output of an artifact not read to its end */
int report_read_error(struct artifact *a, int err);
/* --pid into o->pid_list; 0, or -1 after a message */
int parse_report_pids(struct report_opts *o);

/* an artifact read: its summary, and where the reading stopped */
struct loaded {
	struct report_summary s;
	bool truncated;
	uint64_t error_offset, error_records;
	char reason[256];
};

/* reads path into l->s; 0, or -1 when it could not be opened or read at all */
int load_summary(const char *path, struct report_opts *o, struct loaded *l);

/* ---- report-text.c ---------------------------------------------------------- */

/* the cost types of the call sites in words, in the order of REPORT_SITE_KEYS */
extern const char *const site_titles[REPORT_SITE_KEYS];

/* the largest size of a bucket of the histogram */
uint64_t hist_upper(unsigned int bucket);
/* the processes of s by pid; NULL when out of memory */
const struct report_process **sorted_processes(const struct report_summary *s);
/* the call sites of s by their frames, --stack-depth deep; 0 or -1 */
int resolve_sites(struct report_summary *s, const struct report_opts *o,
		  enum report_site_match match, struct report_site_list *list);
/* a site's frames, one a line after indent */
void print_site_frames(const struct report_site *site, const char *indent, bool raw_names);
/* the summary of one artifact; 0 or -1 */
int print_summary(struct loaded *l, const char *path, const struct report_opts *o);

/* ---- report-json.c ---------------------------------------------------------- */

/* the document of one artifact; NULL when out of memory */
cJSON *report_json__summary(struct loaded *l, const char *path,
			   const struct report_opts *opts);
/* doc with "limits_crossed" when --fail-if is given */
cJSON *report_json__limits(cJSON *doc, const struct report_opts *o,
			  const struct report_summary *base, const struct report_summary *s);

/* ---- report-diff.c ---------------------------------------------------------- */

/* the modes --diff and --diff --flamegraph: their exit status */
int cmd_diff(const char *const *paths, struct report_opts *o);
int cmd_flamegraph_diff(const char *const *paths, struct report_opts *o);

#endif
