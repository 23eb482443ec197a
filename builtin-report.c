// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack report: reads an artifact (memtrack's or CodSpeed's) and prints
 * its heap figures, per event type, per process and per call site, as text
 * or JSON; or every record (--dump); or folded stacks for flame graphs
 * (--flamegraph); or compares two artifacts (--diff).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cJSON.h"
#include "builtin.h"
#include "util/artifact/artifact.h"
#include "util/symbol/demangle.h"
#include "util/gnuplot.h"
#include "util/json-schema.h"
#include "util/parse-options.h"
#include "util/quote.h"
#include "util/report/report-gates.h"
#include "util/report/report-hints.h"
#include "util/out-file.h"
#include "util/report/report-html.h"
#include "util/report/report-pprof.h"
#include "util/report/report-sites.h"
#include "util/report/report-summary.h"
#include "util/report/report-suppress.h"
#include "util/report/report-timeline.h"
#include "util/report/stdin-spool.h"
#include "util/usage.h"
#include "util/util.h"

#define TIMELINE_BINS		1000
#define TIMELINE_PROCESSES	8
#define PROGRESS_EVERY		65536	/* records between looks at the clock */
#define DEFAULT_TOP		10
#define HTML_DEFAULT_TOP	100	/* sites of --html's table, per cost type */
#define DEFAULT_STACK_DEPTH	5

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
	struct report_suppressions *sup;
};

/* ---- reading with progress -------------------------------------------- */

struct progress {
	bool on;
	uint64_t start, last;
	bool shown;
};

static void progress__init(struct progress *pg, bool quiet)
{
	pg->on = !quiet && isatty(STDERR_FILENO);
	pg->start = pg->last = now_ns();
	pg->shown = false;
}

static void progress__update(struct progress *pg, struct artifact *a)
{
	uint64_t now, size = artifact__size(a);

	if (!pg->on || artifact__records(a) % PROGRESS_EVERY)
		return;
	now = now_ns();
	if (now - pg->start < NSEC_PER_SEC / 2 || now - pg->last < NSEC_PER_SEC / 4)
		return;
	pg->last = now;
	pg->shown = true;
	if (size)
		fprintf(stderr, "\rreading '%s': %3.0f%% (%.1f of %.1f MB, %" PRIu64 " records)",
			quote_term(artifact__name(a)), 100.0 * artifact__offset(a) / size,
			artifact__offset(a) / 1e6, size / 1e6, artifact__records(a));
	else
		fprintf(stderr, "\rreading '%s': %" PRIu64 " records",
			quote_term(artifact__name(a)), artifact__records(a));
}

static void progress__done(struct progress *pg)
{
	if (pg->shown)
		fprintf(stderr, "\r\033[K");
}

/* path, or standard input for "-" */
static int open_artifact(const char *path, struct artifact **ap)
{
	int err;

	if (strcmp(path, "-"))
		err = artifact__open(path, ap);
	else if (!(err = stdin__rewind()))
		err = artifact__open_fd(STDIN_FILENO, STDIN_NAME, ap);
	if (err)
		return error("cannot open artifact '%s': %s",
			     strcmp(path, "-") ? path : STDIN_NAME, strerror(-err));
	return 0;
}

/* the line that closes the output of an artifact not read to its end */
static int report_read_error(struct artifact *a, int err)
{
	const char *name = artifact__name(a), *why = artifact__strerror(a);

	if (err == -EBADMSG)
		return error("'%s' is truncated after %" PRIu64 " records (byte %" PRIu64 "): %s",
			     name, artifact__records(a), artifact__error_offset(a), why);
	if (err == -ENOMSG)
		return error("'%s' is not a memtrack artifact: %s", name, why);
	if (err == -EPROTONOSUPPORT)
		return error("cannot read '%s': %s", name, why);
	return error("cannot read '%s' after %" PRIu64 " records: %s",
		     name, artifact__records(a), why);
}

/* nothing of it can be reported: not an artifact, or of a newer format */
static bool unreadable(int err)
{
	return err == -ENOMSG || err == -EPROTONOSUPPORT;
}

/* ---- --dump ----------------------------------------------------------- */

static int cmd_dump(const char *const *paths, struct report_opts *o)
{
	const char *path = paths[0];
	const struct artifact_record *r;
	struct progress pg;
	struct artifact *a;
	int ret;

	if (open_artifact(path, &a))
		return 1;
	progress__init(&pg, o->quiet);
	while ((ret = artifact__next(a, &r)) == 1) {
		artifact_record__dump(stdout, r);
		progress__update(&pg, a);
	}
	progress__done(&pg);
	if (ret < 0) {
		fflush(stdout);
		report_read_error(a, ret);
	}
	artifact__close(a);
	return ret < 0 ? 1 : 0;
}

/* ---- filters: which pids ------------------------------------------------ */

struct proc_info {
	int32_t pid, ppid;
	bool has_ppid;
	char *comm;
};

struct proc_list {
	struct proc_info *p;
	size_t n, cap;
};

static int proc_list__add(struct proc_list *l, const struct artifact_record *r)
{
	struct proc_info *pi;

	if (grow_array((void **)&l->p, &l->cap, l->n + 1, sizeof(*l->p)))
		return -ENOMEM;
	pi = &l->p[l->n++];
	pi->pid = r->pid;
	pi->ppid = r->ppid;
	pi->has_ppid = r->has & AR_HAS(AK_PPID);
	pi->comm = r->comm ? strdup(r->comm) : NULL;
	return 0;
}

static void proc_list__exit(struct proc_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->p[i].comm);
	free(l->p);
}

/* the Process records of the trailer: a first pass over the artifact */
static int read_processes(const char *path, struct proc_list *l, bool quiet)
{
	const struct artifact_record *r;
	struct progress pg;
	struct artifact *a;
	int ret;

	if (open_artifact(path, &a))
		return -1;
	progress__init(&pg, quiet);
	while ((ret = artifact__next(a, &r)) == 1) {
		progress__update(&pg, a);
		if (r->type == ARTIFACT_PROCESS && (r->has & AR_HAS(AK_PID)) &&
		    proc_list__add(l, r))
			ret = -ENOMEM;
	}
	progress__done(&pg);
	artifact__close(a);
	if (!l->n)
		warning("no Process records in '%s': --comm and --children need "
			"the trailer that 'memtrack track' writes", path);
	return ret == -ENOMEM ? error("out of memory") : 0;
}

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_selected(int32_t pid, void *arg)
{
	const struct report_opts *o = arg;

	return bsearch(&pid, o->selected, o->nr_selected, sizeof(pid), cmp_pid);
}

static int select_pid(struct report_opts *o, int32_t pid)
{
	size_t i;
	int32_t *p;

	for (i = 0; i < o->nr_selected; i++)
		if (o->selected[i] == pid)
			return 0;
	p = realloc(o->selected, (o->nr_selected + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	o->selected = p;
	o->selected[o->nr_selected++] = pid;
	return 1;
}

static int parse_report_pids(struct report_opts *o)
{
	int n = parse_pid_list(o->pids, &o->pid_list);

	if (n < 0)
		return error("--pid expects a list of process ids, not '%s'", o->pids);
	o->nr_pid_list = n;
	qsort(o->pid_list, n, sizeof(*o->pid_list), cmp_pid);
	return 0;
}

static int cmp_ppid(const void *a, const void *b)
{
	const struct proc_info *x = a, *y = b;

	return x->ppid < y->ppid ? -1 : x->ppid > y->ppid;
}

/* adds the descendants of what is selected: a walk down the ppid links */
static int select_children(struct report_opts *o, struct proc_list *l)
{
	size_t i, j;
	int ret;

	qsort(l->p, l->n, sizeof(*l->p), cmp_ppid);
	for (i = 0; i < o->nr_selected; i++) {
		struct proc_info key = { .ppid = o->selected[i] };
		struct proc_info *c = bsearch(&key, l->p, l->n, sizeof(*l->p), cmp_ppid);

		if (!c)
			continue;
		while (c > l->p && c[-1].ppid == key.ppid)
			c--;
		for (j = c - l->p; j < l->n && l->p[j].ppid == key.ppid; j++) {
			if (!l->p[j].has_ppid || l->p[j].pid == key.ppid)
				continue;
			ret = select_pid(o, l->p[j].pid);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int build_selection(const char *path, struct report_opts *o)
{
	const pid_t *pids = o->pid_list;
	size_t npids = o->nr_pid_list, i;
	struct proc_list l = { 0 };
	int err = 0;

	o->nr_selected = 0;
	if (!o->pids && !o->comm)
		return 0;
	if ((o->children || o->comm) && read_processes(path, &l, o->quiet))
		err = -1;
	for (i = 0; !err && o->comm && i < l.n; i++)
		if (l.p[i].comm && !strcmp(l.p[i].comm, o->comm) &&
		    (!pids || bsearch(&l.p[i].pid, pids, npids, sizeof(*pids), cmp_pid)))
			err = select_pid(o, l.p[i].pid) < 0;
	for (i = 0; !err && !o->comm && i < npids; i++)
		err = select_pid(o, pids[i]) < 0;
	if (!err && o->children)
		err = select_children(o, &l) < 0;
	proc_list__exit(&l);
	if (err)
		return error("out of memory");
	qsort(o->selected, o->nr_selected, sizeof(*o->selected), cmp_pid);
	o->filter.pid_selected = is_selected;
	o->filter.pid_arg = o;
	if (!o->nr_selected)
		warning("no process of '%s' matches the --pid and --comm filters", path);
	return 0;
}

static int parse_seconds(const char *s, const char *end, uint64_t *ns)
{
	char buf[64], *stop;
	double v;

	if (end - s <= 0 || end - s >= (long)sizeof(buf))
		return -1;
	memcpy(buf, s, end - s);
	buf[end - s] = 0;
	errno = 0;
	v = strtod(buf, &stop);
	if (errno || *stop || v < 0 || v > 1e9)
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* "FROM,TO" in seconds after the first event; either may be left out */
static int parse_time_range(const char *arg, struct report_filter *f)
{
	const char *comma = strchr(arg, ',');
	const char *end = arg + strlen(arg);

	f->has_time = true;
	f->from_ns = 0;
	f->to_ns = UINT64_MAX;
	if (!comma)
		goto bad;
	if (comma > arg && parse_seconds(arg, comma, &f->from_ns))
		goto bad;
	if (comma + 1 < end && parse_seconds(comma + 1, end, &f->to_ns))
		goto bad;
	if (f->from_ns > f->to_ns)
		return error("--time: the start %s is after the end", arg);
	return 0;
bad:
	return error("--time expects <from>,<to> in seconds (e.g. 0.5,2), not '%s'", arg);
}

/* ---- the summary ---------------------------------------------------------- */

struct loaded {
	struct report_summary s;
	bool truncated;
	uint64_t error_offset, error_records;
	char reason[256];
};

/*
 * The Process records of the trailer before the events, so that each
 * process's blocks go with its exec and its exit as the events stream by.
 * A file that cannot seek, or has no trailer, is left to the end.
 */
static void read_lifetimes(const char *path, struct report_summary *s)
{
	const struct artifact_record *r;
	struct artifact *a;
	int ret;

	ret = artifact__open_trailer(path, &a);
	if (ret) {
		pr_debug("the trailer of '%s' is not read first: %s\n", path, strerror(-ret));
		return;
	}
	ret = artifact__next(a, &r);
	if (ret == 1 && r->type == ARTIFACT_META) {
		while ((ret = artifact__next(a, &r)) == 1 && r->type == ARTIFACT_PROCESS)
			if (report_summary__add_ahead(s, r))
				break;
	}
	artifact__close(a);
}

/* reads path into l->s; 0, or -1 when it could not be opened or read at all */
static int load_summary(const char *path, struct report_opts *o, struct loaded *l)
{
	const struct artifact_record *r;
	struct progress pg;
	struct artifact *a;
	int ret;

	memset(l, 0, sizeof(*l));
	if (build_selection(path, o))
		return -1;
	if (report_summary__init(&l->s, &o->filter))
		return error("out of memory");
	if (o->timeline || o->gnuplot || o->html)
		l->s.timeline = report_timeline__new(TIMELINE_BINS);
	l->s.sites = report_sites__new();
	if ((o->timeline || o->gnuplot || o->html) && !l->s.timeline) {
		report_summary__exit(&l->s);
		return error("out of memory");
	}
	if (!l->s.sites) {
		report_summary__exit(&l->s);
		return error("out of memory");
	}
	report_sites__set_demangle(l->s.sites, !o->no_demangle);
	l->s.suppressed = report_suppressions__take;
	l->s.suppressed_arg = o->sup;
	read_lifetimes(path, &l->s);
	if (open_artifact(path, &a)) {
		report_summary__exit(&l->s);
		return -1;
	}
	progress__init(&pg, o->quiet);
	while ((ret = artifact__next(a, &r)) == 1) {
		if (report_summary__add(&l->s, r)) {
			ret = 0;
			error("out of memory after %" PRIu64 " records", artifact__records(a));
			l->truncated = true;
			break;
		}
		progress__update(&pg, a);
	}
	progress__done(&pg);
	if (unreadable(ret)) {
		report_read_error(a, ret);
		artifact__close(a);
		report_summary__exit(&l->s);
		return -1;
	}
	if (report_suppressions__prepare(o->sup, l->s.sites))
		l->s.suppressed = NULL;		/* out of memory: every block leaks */
	report_summary__finish(&l->s);
	l->s.records = artifact__records(a);
	if (ret < 0) {
		l->truncated = true;
		l->error_offset = artifact__error_offset(a);
		l->error_records = artifact__records(a);
		snprintf(l->reason, sizeof(l->reason), "%s", artifact__strerror(a));
		report_read_error(a, ret);
	}
	pr_debug("read %" PRIu64 " records, %" PRIu64 " skipped, of '%s'\n",
		 artifact__records(a), artifact__skipped(a), path);
	artifact__close(a);
	return 0;
}

#define HB(v)	human_bytes((v), (char[32]){ 0 }, 32)

/* a wait status in words: "exit 3", "signal 9" */
static const char *exit_words(int32_t status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	return buf;
}

static double seconds(uint64_t ns)
{
	return ns / 1e9;
}

static void print_header(const struct report_summary *s, const char *path)
{
	const struct report_meta *m = &s->meta;
	char ex[32];

	printf("# artifact: %s\n", quote_term(path));
	if (s->has_meta) {
		if (m->has & AR_HAS(AK_COMMAND))
			printf("# command: %s\n", quote_term(m->command));
		printf("# recorded by %s %s (format %u), root pid %d",
		       m->tool ? quote_term(m->tool) : "?", m->version ? quote_term(m->version) : "?",
		       m->format, m->root_pid);
		if (m->has & AR_HAS(AK_EXIT_CODE))
			printf(", %s", exit_words(m->exit_code, ex, sizeof(ex)));
		if (m->has & AR_HAS(AK_DROPS))
			printf(", %" PRIu64 " events and %" PRIu64 " call stacks dropped",
			       m->drops_events, m->drops_total - m->drops_events);
		putchar('\n');
		if (m->running)
			printf("# the run stopped with %u process%s of the tree still running: "
			       "what they did after it is not here\n", m->running,
			       m->running == 1 ? "" : "es");
		if (m->blind)
			printf("# %u static stripped process%s: their allocations are not here\n",
			       m->blind, m->blind == 1 ? "" : "es");
		if (m->attached)
			printf("# attached to running processes: allocations made before "
			       "attaching are unknown; frees of their blocks are counted "
			       "apart as unknown frees (%" PRIu64 ")\n",
			       s->total.unknown_frees);
	} else {
		printf("# no Meta record: events only (CodSpeed), or a run that was killed\n");
	}
	printf("# %" PRIu64 " records, %" PRIu64 " events, %zu process%s, %.3f s\n",
	       s->records, s->events, s->nr_procs, s->nr_procs == 1 ? "" : "es",
	       seconds(report_summary__rel_ns(s, s->last_ts)));
}

static void print_counts(const uint64_t *counts)
{
	unsigned int k;

	printf("\nEvents\n");
	for (k = MT_MALLOC; k <= MT_BRK; k++)
		printf("  %-14s %14" PRIu64 "\n", artifact__kind_name(k), counts[k]);
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

static void print_heap(const struct report_summary *s)
{
	const struct report_heap *h = &s->total;

	printf("\nHeap\n");
	printf("  %-20s %s in %" PRIu64 " blocks (%" PRIu64 " bytes)\n", "allocated",
	       HB(h->bytes_allocated), h->allocs, h->bytes_allocated);
	printf("  %-20s %s in %" PRIu64 " blocks (%" PRIu64 " bytes)\n", "freed",
	       HB(h->bytes_freed), h->frees, h->bytes_freed);
	printf("  %-20s %s (%" PRIu64 " bytes) at %.6f s\n", "peak live heap",
	       HB(h->peak_bytes), h->peak_bytes,
	       seconds(report_summary__rel_ns(s, h->peak_ts)));
	if (s->lifetimes == REPORT_LIFETIMES_LATE)
		printf("  %-20s (with the blocks of exited processes and replaced images: "
		       "the trailer was not read first)\n", "");
	printf("  %-20s %" PRIu64 " blocks, %s (%" PRIu64 " bytes)\n", "live at exit",
	       h->leaked_count, HB(h->leaked_bytes), h->leaked_bytes);
	if (h->suppressed_count)
		printf("  %-20s %" PRIu64 " blocks, %s (%" PRIu64 " bytes) also live at exit, "
		       "not counted (see Suppressed leaks)\n", "suppressed",
		       h->suppressed_count, HB(h->suppressed_bytes), h->suppressed_bytes);
	if (h->discarded_count)
		printf("  %-20s %" PRIu64 " blocks, %s (live when their process exec'd)\n",
		       "gone with an exec", h->discarded_count, HB(h->discarded_bytes));
	printf("  %-20s %" PRIu64 " (not allocated while tracked)\n", "unknown frees",
	       h->unknown_frees);
	printf("  %-20s %" PRIu64 " blocks (%.1f%%), %s\n", "temporary",
	       h->temporary_count, percent(h->temporary_count, h->allocs),
	       HB(h->temporary_bytes));
	if (h->failed_allocs)
		printf("  %-20s %" PRIu64 "\n", "failed allocations", h->failed_allocs);
	if (h->overwritten)
		printf("  %-20s %" PRIu64 " (allocated again while live: frees missed)\n",
		       "overwritten", h->overwritten);

	printf("\nOutside the heap\n");
	printf("  %-20s %" PRIu64 " calls, %s mapped\n", "mmap",
	       h->counts[MT_MMAP], HB(h->mmap_bytes));
	printf("  %-20s %" PRIu64 " calls, %s unmapped\n", "munmap",
	       h->counts[MT_MUNMAP], HB(h->munmap_bytes));
	printf("  %-20s %" PRIu64 " calls, the break grew by %s\n", "brk",
	       h->counts[MT_BRK], HB(h->brk_growth));
}

/* the largest size in a bucket */
static uint64_t hist_upper(unsigned int bucket)
{
	if (!bucket)
		return 0;
	return bucket == 64 ? UINT64_MAX : (1ULL << bucket) - 1;
}

static void print_histogram(const struct report_summary *s)
{
	unsigned int i, first = REPORT_HIST_BUCKETS, last = 0;
	uint64_t most = 0;

	for (i = 0; i < REPORT_HIST_BUCKETS; i++) {
		if (!s->hist[i])
			continue;
		if (first == REPORT_HIST_BUCKETS)
			first = i;
		last = i;
		if (s->hist[i] > most)
			most = s->hist[i];
	}
	if (!most)
		return;
	printf("\nAllocation sizes\n");
	for (i = first; i <= last; i++) {
		char lo[32], hi[32];
		int stars = (int)(40 * s->hist[i] / most);

		human_bytes(report_hist__lower(i), lo, sizeof(lo));
		human_bytes(hist_upper(i), hi, sizeof(hi));
		printf("  %10s .. %-10s %12" PRIu64 " |%-40.*s|\n", lo, hi, s->hist[i],
		       stars, "****************************************");
	}
}

static int cmp_proc_pid(const void *a, const void *b)
{
	const struct report_process *x = *(const struct report_process *const *)a;
	const struct report_process *y = *(const struct report_process *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* the processes by pid; NULL when there are none or no memory */
static const struct report_process **sorted_processes(const struct report_summary *s)
{
	const struct report_process **v = malloc((s->nr_procs + 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < s->nr_procs; i++)
		v[i] = &s->procs[i];
	qsort(v, s->nr_procs, sizeof(*v), cmp_proc_pid);
	return v;
}

static void print_processes(const struct report_summary *s)
{
	const struct report_process **procs = sorted_processes(s);
	size_t i;

	if (!s->nr_procs || !procs) {
		free(procs);
		return;
	}
	printf("\nProcesses\n");
	printf("  %8s %8s %-16s %-10s %-7s %10s %11s %11s %11s %8s %s\n", "PID", "PPID",
	       "COMM", "EXIT", "TRACED", "ALLOCS", "ALLOCATED", "PEAK", "LIVE@EXIT", "UNKNOWN",
	       "EXE");
	for (i = 0; i < s->nr_procs; i++) {
		const struct report_process *p = procs[i];
		char ppid[16] = "-", ex[32] = "-", why[48] = "";

		if (p->info_has & AR_HAS(AK_PPID))
			snprintf(ppid, sizeof(ppid), "%d", p->ppid);
		if (p->info_has & AR_HAS(AK_EXIT_CODE))
			exit_words(p->exit_code, ex, sizeof(ex));
		/* after the executable: a few words that would not fit the column */
		if (p->backend && !strcmp(p->backend, "bpf") && p->bpf_why)
			snprintf(why, sizeof(why), " (bpf: %s)", quote_term(p->bpf_why));
		printf("  %8d %8s %-16s %-10s %-7s %10" PRIu64 " %11s %11s %11s %8" PRIu64 " %s%s\n",
		       p->pid, ppid, p->comm ? quote_term(p->comm) : "-", ex,
		       p->backend && !strcmp(p->backend, "bpf") ? "bpf" :
		       p->backend ? "preload" : "-", p->heap.allocs,
		       HB(p->heap.bytes_allocated), HB(p->heap.peak_bytes),
		       HB(p->heap.leaked_bytes), p->heap.unknown_frees,
		       p->exe ? quote_term(p->exe) : "-", why);
	}
	free(procs);
}

/* ---- call sites ------------------------------------------------------------ */

static const char *const site_titles[REPORT_SITE_KEYS] = {
	[REPORT_SITE_BYTES] = "bytes allocated",
	[REPORT_SITE_CALLS] = "calls",
	[REPORT_SITE_PEAK] = "contribution to the peak",
	[REPORT_SITE_LEAKED] = "bytes leaked (live at exit)",
	[REPORT_SITE_TEMPORARY] = "temporary allocations",
};

/*
 * `symbol+0xoff (module) file:line`, or `symbol (inlined) (module)
 * file:line`; templates without their arguments unless names are raw
 */
static void print_frame(const struct report_frame *f, bool raw_names)
{
	const char *module = f->module ? strrchr(f->module, '/') : NULL;
	char name[512];

	module = module && module[1] ? module + 1 : f->module;
	if (!f->known) {
		printf("[unknown] (frame %" PRIu64 " has no Frame record)", f->id);
		return;
	}
	if (f->symbol) {
		fputs(quote_term(raw_names ? f->symbol :
				 symbol_name__shorten(f->symbol, name, sizeof(name))), stdout);
		if (f->inlined)
			fputs(" (inlined)", stdout);
		else
			printf("+0x%" PRIx64, f->offset);
		if (module)
			printf(" (%s)", quote_term(module));
	} else {
		fputs(quote_term(f->name), stdout);
	}
	if (f->file) {
		printf(" %s", quote_term(f->file));
		if (f->line)
			printf(":%" PRIu32, f->line);
	}
}

static void print_site_frames(const struct report_site *site, const char *indent,
			      bool raw_names)
{
	uint32_t i;

	switch (site->kind) {
	case REPORT_SITE_NO_STACK:
		printf("%s[no call stack]\n", indent);
		return;
	case REPORT_SITE_UNRESOLVED:
		printf("%s[stack %" PRIu64 " has no Stack record]\n", indent, site->stack);
		return;
	case REPORT_SITE_STACK:
		break;
	}
	if (!site->nr_frames)
		printf("%s[empty stack]\n", indent);
	for (i = 0; i < site->nr_frames; i++) {
		fputs(indent, stdout);
		print_frame(site->frames[i], raw_names);
		putchar('\n');
	}
}

static void print_site_section(const struct report_summary *s,
			       const struct report_site_list *list,
			       enum report_site_key key, const struct report_opts *o,
			       const struct report_site **top)
{
	size_t i, n, nonzero;

	n = report_site_list__top(list, key, o->top, top, &nonzero);
	printf("\nCall sites by %s", site_titles[key]);
	if (key == REPORT_SITE_PEAK)
		printf(" (%s at %.6f s)", HB(s->total.peak_bytes),
		       seconds(report_summary__rel_ns(s, s->total.peak_ts)));
	if (!nonzero) {
		printf("\n  none\n");
		return;
	}
	printf(", top %zu of %zu\n", n, nonzero);
	printf("  %4s %11s %10s %11s %11s %8s %10s\n", "#", "ALLOCATED", "CALLS", "AT PEAK",
	       "LEAKED", "BLOCKS", "TEMPORARY");
	for (i = 0; i < n; i++) {
		const struct report_site *site = top[i];

		printf("  %4zu %11s %10" PRIu64 " %11s %11s %8" PRIu64 " %10" PRIu64 "\n",
		       i + 1, HB(site->bytes), site->calls, HB(site->peak_bytes),
		       HB(site->leaked_bytes), site->leaked_count, site->temporary_count);
		print_site_frames(site, "         ", o->no_demangle);
	}
}

/* the call sites of s by their frames, --stack-depth deep; 0 or -1 */
static int resolve_sites(struct report_summary *s, const struct report_opts *o,
			 enum report_site_match match, struct report_site_list *list)
{
	if (report_sites__resolve(s->sites, o->depth, match, list))
		return error("out of memory");
	return 0;
}

static int print_sites(struct loaded *l, const struct report_opts *o)
{
	struct report_site_list list;
	const struct report_site **top;
	unsigned int k;

	if (!report_sites__has_stacks(l->s.sites)) {
		printf("\nCall sites\n  no call stacks: %s\n", NO_STACKS_HINT);
		return 0;
	}
	if (resolve_sites(&l->s, o, REPORT_MATCH_FRAME, &list))
		return -1;
	top = malloc((list.nr ? list.nr : 1) * sizeof(*top));
	if (!top) {
		report_site_list__exit(&list);
		return error("out of memory");
	}
	for (k = 0; k < REPORT_SITE_KEYS; k++)
		if (o->sort_key < 0 || o->sort_key == (int)k)
			print_site_section(&l->s, &list, k, o, top);
	free(top);
	report_site_list__exit(&list);
	return 0;
}

static int print_summary(struct loaded *l, const char *path, const struct report_opts *o)
{
	print_header(&l->s, path);
	report_hints__print(&l->s, stdout);
	if (l->truncated)
		printf("# TRUNCATED: only the records before the error below\n");
	print_counts(l->s.total.counts);
	print_heap(&l->s);
	print_histogram(&l->s);
	print_processes(&l->s);
	if (l->s.total.suppressed_count) {
		printf("\nSuppressed leaks (--no-default-suppressions counts the built-in ones)\n");
		report_suppressions__print(o->sup, stdout);
	}
	return print_sites(l, o);
}

/* ---- --json ------------------------------------------------------------ */

/* a u64 exactly: cJSON's numbers are doubles */
static void json_u64(cJSON *obj, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	cJSON_AddItemToObject(obj, key, cJSON_CreateRaw(buf));
}

static void json_i64(cJSON *obj, const char *key, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	cJSON_AddItemToObject(obj, key, cJSON_CreateRaw(buf));
}

static void json_str_or_null(cJSON *obj, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(obj, key, s);
	else
		cJSON_AddNullToObject(obj, key);
}

static cJSON *json_counts(const uint64_t *counts)
{
	cJSON *o = cJSON_CreateObject();
	unsigned int k;

	for (k = MT_MALLOC; k <= MT_BRK; k++)
		json_u64(o, artifact__kind_name(k), counts[k]);
	return o;
}

/* the figures that the whole tree and each process share */
static void json_heap(cJSON *o, const struct report_summary *s,
		      const struct report_heap *h)
{
	cJSON_AddItemToObject(o, "counts", json_counts(h->counts));
	json_u64(o, "allocations", h->allocs);
	json_u64(o, "frees", h->frees);
	json_u64(o, "bytes_allocated", h->bytes_allocated);
	json_u64(o, "bytes_freed", h->bytes_freed);
	json_u64(o, "peak_bytes", h->peak_bytes);
	json_u64(o, "peak_count", h->peak_count);
	json_u64(o, "peak_time_ns", report_summary__rel_ns(s, h->peak_ts));
	json_u64(o, "leaked_count", h->leaked_count);
	json_u64(o, "leaked_bytes", h->leaked_bytes);
	json_u64(o, "suppressed_count", h->suppressed_count);
	json_u64(o, "suppressed_bytes", h->suppressed_bytes);
	json_u64(o, "discarded_count", h->discarded_count);
	json_u64(o, "discarded_bytes", h->discarded_bytes);
	json_u64(o, "unknown_frees", h->unknown_frees);
	json_u64(o, "temporary_count", h->temporary_count);
	json_u64(o, "temporary_bytes", h->temporary_bytes);
	json_u64(o, "failed_allocations", h->failed_allocs);
	json_u64(o, "overwritten", h->overwritten);
	json_u64(o, "mmap_bytes", h->mmap_bytes);
	json_u64(o, "munmap_bytes", h->munmap_bytes);
	json_u64(o, "brk_growth", h->brk_growth);
}

static cJSON *json_process(const struct report_summary *s, const struct report_process *p)
{
	cJSON *o = cJSON_CreateObject();

	json_i64(o, "pid", p->pid);
	if (p->info_has & AR_HAS(AK_PPID))
		json_i64(o, "ppid", p->ppid);
	else
		cJSON_AddNullToObject(o, "ppid");
	json_str_or_null(o, "comm", p->comm);
	json_str_or_null(o, "exe", p->exe);
	json_str_or_null(o, "backend", p->backend);
	json_str_or_null(o, "bpf_why", p->bpf_why);
	if (p->info_has & AR_HAS(AK_EXIT_CODE))
		json_i64(o, "exit_code", p->exit_code);
	else
		cJSON_AddNullToObject(o, "exit_code");
	json_heap(o, s, &p->heap);
	return o;
}

static cJSON *json_meta(const struct report_summary *s)
{
	const struct report_meta *m = &s->meta;
	cJSON *o, *drops;

	if (!s->has_meta)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (m->has & AR_HAS(AK_FORMAT))
		json_u64(o, "format", m->format);
	if (m->tool)
		cJSON_AddStringToObject(o, "tool", m->tool);
	if (m->version)
		cJSON_AddStringToObject(o, "version", m->version);
	if (m->command)
		cJSON_AddStringToObject(o, "command", m->command);
	if (m->has & AR_HAS(AK_ROOT_PID))
		json_i64(o, "root_pid", m->root_pid);
	if (m->has & AR_HAS(AK_START))
		json_u64(o, "start", m->start);
	if (m->has & AR_HAS(AK_END))
		json_u64(o, "end", m->end);
	if (m->has & AR_HAS(AK_DROPS)) {
		drops = cJSON_AddObjectToObject(o, "drops");
		json_u64(drops, "events", m->drops_events);
		json_u64(drops, "stacks", m->drops_total - m->drops_events);
	}
	if (m->has & AR_HAS(AK_EXIT_CODE))
		json_i64(o, "exit_code", m->exit_code);
	cJSON_AddBoolToObject(o, "attached", m->attached);
	json_u64(o, "running", m->running);
	json_u64(o, "blind", m->blind);
	return o;
}

static cJSON *json_histogram(const struct report_summary *s)
{
	cJSON *a = cJSON_CreateArray();
	unsigned int i;

	for (i = 0; i < REPORT_HIST_BUCKETS; i++) {
		cJSON *b;

		if (!s->hist[i])
			continue;
		b = cJSON_CreateObject();
		json_u64(b, "min", report_hist__lower(i));
		json_u64(b, "max", hist_upper(i));
		json_u64(b, "count", s->hist[i]);
		cJSON_AddItemToArray(a, b);
	}
	return a;
}

static cJSON *json_frame(const struct report_frame *f)
{
	cJSON *o = cJSON_CreateObject();

	json_str_or_null(o, "symbol", f->symbol);
	json_str_or_null(o, "module", f->module);
	if (f->known)
		json_u64(o, "offset", f->offset);
	else
		cJSON_AddNullToObject(o, "offset");
	json_str_or_null(o, "file", f->file);
	if (f->line)
		json_u64(o, "line", f->line);
	else
		cJSON_AddNullToObject(o, "line");
	cJSON_AddBoolToObject(o, "inlined", f->inlined);
	return o;
}

static cJSON *json_site_frames(const struct report_site *site)
{
	cJSON *a = cJSON_CreateArray();
	uint32_t i;

	for (i = 0; i < site->nr_frames; i++)
		cJSON_AddItemToArray(a, json_frame(site->frames[i]));
	return a;
}

/* a site's figures, and its frames when asked */
static cJSON *json_site(const struct report_site *site, bool frames)
{
	cJSON *o = cJSON_CreateObject();

	if (site->kind == REPORT_SITE_NO_STACK)
		cJSON_AddNullToObject(o, "stack");
	else
		json_u64(o, "stack", site->stack);
	json_u64(o, "bytes", site->bytes);
	json_u64(o, "calls", site->calls);
	json_u64(o, "peak_bytes", site->peak_bytes);
	json_u64(o, "peak_count", site->peak_count);
	json_u64(o, "leaked_bytes", site->leaked_bytes);
	json_u64(o, "leaked_count", site->leaked_count);
	json_u64(o, "temporary_count", site->temporary_count);
	json_u64(o, "temporary_bytes", site->temporary_bytes);
	if (frames)
		cJSON_AddItemToObject(o, "frames", json_site_frames(site));
	return o;
}

/*
 * "sites": every site a text section would show (the top of each key, or
 * of --sort's), ordered by --sort's key (bytes by default); null without
 * call stacks
 */
static int json_add_sites(cJSON *o, struct loaded *l, const struct report_opts *opts)
{
	enum report_site_key order = opts->sort_key < 0 ? REPORT_SITE_BYTES : opts->sort_key;
	const struct report_site **all;
	struct report_site_list list;
	size_t i, nr;
	cJSON *a;

	if (!report_sites__has_stacks(l->s.sites)) {
		cJSON_AddNullToObject(o, "sites");
		return 0;
	}
	if (resolve_sites(&l->s, opts, REPORT_MATCH_FRAME, &list))
		return -1;
	all = malloc((list.nr ? list.nr : 1) * sizeof(*all));
	nr = all ? report_site_list__tops(&list, opts->top, opts->sort_key < 0 ?
					  REPORT_SITE_KEYS : (enum report_site_key)opts->sort_key,
					  all) : SIZE_MAX;
	if (nr == SIZE_MAX) {
		free(all);
		report_site_list__exit(&list);
		return error("out of memory");
	}
	report_site_ptrs__sort(all, nr, order);
	a = cJSON_AddArrayToObject(o, "sites");
	for (i = 0; i < nr; i++)
		cJSON_AddItemToArray(a, json_site(all[i], true));
	free(all);
	report_site_list__exit(&list);
	return 0;
}

/* the rules of leak suppressions, and what each suppressed */
static cJSON *json_suppressions(const struct report_suppressions *sup)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < report_suppressions__nr_rules(sup); i++) {
		const struct report_suppression_rule *r = report_suppressions__rule(sup, i);
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "rule", r->text);
		cJSON_AddStringToObject(e, "source", r->source);
		if (r->line)
			json_u64(e, "line", r->line);
		else
			cJSON_AddNullToObject(e, "line");
		json_u64(e, "count", r->count);
		json_u64(e, "bytes", r->bytes);
		cJSON_AddItemToArray(a, e);
	}
	return a;
}

static cJSON *json_summary(struct loaded *l, const char *path,
			   const struct report_opts *opts)
{
	struct report_summary *s = &l->s;
	cJSON *o = cJSON_CreateObject(), *procs, *err;
	const struct report_process **sorted;
	size_t i;

	cJSON_AddStringToObject(o, "schema", JSON_SCHEMA_REPORT);
	cJSON_AddStringToObject(o, "artifact", path);
	json_heap(o, s, &s->total);
	cJSON_AddBoolToObject(o, "truncated", l->truncated);
	if (l->truncated) {
		err = cJSON_AddObjectToObject(o, "error");
		json_u64(err, "offset", l->error_offset);
		json_u64(err, "records", l->error_records);
		cJSON_AddStringToObject(err, "reason", l->reason);
	} else {
		cJSON_AddNullToObject(o, "error");
	}
	json_u64(o, "records", s->records);
	json_u64(o, "events", s->events);
	json_u64(o, "first_timestamp", s->origin_ts);
	json_u64(o, "duration_ns", report_summary__rel_ns(s, s->last_ts));
	cJSON_AddStringToObject(o, "lifetimes", s->lifetimes == REPORT_LIFETIMES_AHEAD ? "ahead" :
				s->lifetimes == REPORT_LIFETIMES_LATE ? "late" : "none");
	cJSON_AddItemToObject(o, "histogram", json_histogram(s));
	sorted = sorted_processes(s);
	procs = cJSON_AddArrayToObject(o, "processes");
	for (i = 0; sorted && i < s->nr_procs; i++)
		cJSON_AddItemToArray(procs, json_process(s, sorted[i]));
	free(sorted);
	cJSON_AddItemToObject(o, "meta", json_meta(s));
	cJSON_AddItemToObject(o, "suppressions", json_suppressions(opts->sup));
	if (json_add_sites(o, l, opts)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* one --fail-if limit crossed, as an element of "limits_crossed" */
static void json_crossing(const struct report_gate_crossing *c, void *arg)
{
	cJSON *a = arg, *e = cJSON_CreateObject();
	char line[512];

	if (!e)
		return;
	report_gate_crossing__format(c, line, sizeof(line));
	cJSON_AddStringToObject(e, "limit", c->gate->expr);
	if (c->proc)
		cJSON_AddNumberToObject(e, "pid", c->proc->pid);
	else
		cJSON_AddNullToObject(e, "pid");
	cJSON_AddNumberToObject(e, "value", c->value);
	cJSON_AddStringToObject(e, "message", line);
	cJSON_AddItemToArray(a, e);
}

/* with --fail-if: the limits crossed, [] for none (stderr says them too) */
static cJSON *json_limits(cJSON *doc, const struct report_opts *o,
			  const struct report_summary *base, const struct report_summary *s)
{
	cJSON *a;

	if (!doc || !o->gates.n)
		return doc;
	a = cJSON_AddArrayToObject(doc, "limits_crossed");
	if (a)
		report_gates__check(&o->gates, base, s, json_crossing, a, NULL);
	return doc;
}

/* valid UTF-8 whatever the artifact's strings hold: cJSON passes their bytes on */
static int print_json(cJSON *o)
{
	char *text, *fixed;

	if (!o)
		return -1;
	text = cJSON_Print(o);

	cJSON_Delete(o);
	if (!text)
		return error("out of memory");
	fixed = utf8_repair(text);
	if (!fixed && errno) {
		free(text);
		return error("out of memory");
	}
	puts(fixed ? fixed : text);
	free(fixed);
	free(text);
	return 0;
}

/* ---- --timeline ------------------------------------------------------- */

static void process_name(int32_t pid, char *buf, size_t len, void *arg)
{
	struct report_process *p = report_summary__process(arg, pid);

	if (p && p->comm)
		snprintf(buf, len, "%d %s", pid, p->comm);
	else
		snprintf(buf, len, "pid %d", pid);
}

static int write_timeline(FILE *out, const char *output, void *arg)
{
	struct report_summary *s = arg;
	int err = report_timeline__write_gnuplot(s->timeline, out, output,
						 TIMELINE_PROCESSES, process_name, s);

	return err ? error("cannot write the timeline script: %s", strerror(-err)) : 0;
}

/* ---- --diff ------------------------------------------------------------- */

struct diff_row {
	const char *name;
	const char *key;
	bool bytes;
	size_t off;		/* in struct report_heap */
};

#define DR(n, k, b, m)	{ n, k, b, offsetof(struct report_heap, m) }

static const struct diff_row diff_rows[] = {
	DR("peak live heap", "peak_bytes", true, peak_bytes),
	DR("bytes allocated", "bytes_allocated", true, bytes_allocated),
	DR("allocations", "allocations", false, allocs),
	DR("live at exit", "leaked_bytes", true, leaked_bytes),
	DR("blocks live at exit", "leaked_count", false, leaked_count),
	DR("suppressed at exit", "suppressed_bytes", true, suppressed_bytes),
	DR("temporary allocations", "temporary_count", false, temporary_count),
	DR("unknown frees", "unknown_frees", false, unknown_frees),
};

static uint64_t diff_value(const struct loaded *l, const struct diff_row *r)
{
	return *(const uint64_t *)((const char *)&l->s.total + r->off);
}

/* the change from base to head in percent; false when base is 0 */
static bool change_pct(uint64_t base, uint64_t head, double *pct)
{
	if (!base)
		return false;
	*pct = 100.0 * ((double)head - (double)base) / (double)base;
	return true;
}

static void print_diff(const struct loaded *base, const struct loaded *head,
		       const char *bpath, const char *hpath)
{
	size_t i;

	printf("# base: %s\n# head: %s\n\n", quote_term(bpath), quote_term(hpath));
	printf("  %-22s %16s %16s %10s\n", "", "base", "head", "change");
	for (i = 0; i < ARRAY_SIZE(diff_rows); i++) {
		const struct diff_row *r = &diff_rows[i];
		uint64_t b = diff_value(base, r), h = diff_value(head, r);
		char bs[32], hs[32], cs[32] = "n/a";
		double pct;

		if (r->bytes) {
			human_bytes(b, bs, sizeof(bs));
			human_bytes(h, hs, sizeof(hs));
		} else {
			snprintf(bs, sizeof(bs), "%" PRIu64, b);
			snprintf(hs, sizeof(hs), "%" PRIu64, h);
		}
		if (change_pct(b, h, &pct))
			snprintf(cs, sizeof(cs), "%+.1f%%", pct);
		else if (!h)
			snprintf(cs, sizeof(cs), "=");
		printf("  %-22s %16s %16s %10s\n", r->name, bs, hs, cs);
	}
}

/* the call sites that grew most from base to head */
struct site_diff {
	const char *no_stacks;		/* the artifact without call stacks, or NULL */
	enum report_site_key key;
	struct report_site_list base, head;
	struct report_site_change *changes;
	size_t nr;
};

static int site_diff__init(struct site_diff *d, struct loaded *base, struct loaded *head,
			   const char *bpath, const char *hpath,
			   const struct report_opts *o)
{
	memset(d, 0, sizeof(*d));
	d->key = o->sort_key < 0 ? REPORT_SITE_BYTES : o->sort_key;
	if (!report_sites__has_stacks(base->s.sites))
		d->no_stacks = bpath;
	else if (!report_sites__has_stacks(head->s.sites))
		d->no_stacks = hpath;
	if (d->no_stacks)
		return 0;
	if (resolve_sites(&base->s, o, REPORT_MATCH_NAME, &d->base) ||
	    resolve_sites(&head->s, o, REPORT_MATCH_NAME, &d->head) ||
	    report_site_list__diff(&d->base, &d->head, o->depth, d->key,
				   &d->changes, &d->nr)) {
		report_site_list__exit(&d->base);
		report_site_list__exit(&d->head);
		return error("out of memory");
	}
	return 0;
}

static void site_diff__exit(struct site_diff *d)
{
	report_site_list__exit(&d->base);
	report_site_list__exit(&d->head);
	free(d->changes);
}

static const char *site_value_str(enum report_site_key key, uint64_t v, char *buf,
				  size_t len)
{
	if (key == REPORT_SITE_CALLS || key == REPORT_SITE_TEMPORARY)
		snprintf(buf, len, "%" PRIu64, v);
	else
		human_bytes(v, buf, len);
	return buf;
}

static void print_site_diff(const struct site_diff *d, const struct report_opts *o)
{
	size_t i, n = o->top && o->top < d->nr ? o->top : d->nr;

	printf("\nCall sites that grew most, by %s", site_titles[d->key]);
	if (d->no_stacks) {
		printf("\n  no call stacks in '%s': %s\n", quote_term(d->no_stacks), NO_STACKS_HINT);
		return;
	}
	if (!d->nr) {
		printf("\n  none grew\n");
		return;
	}
	printf(", top %zu of %zu\n", n, d->nr);
	printf("  %4s %11s %11s %12s %9s\n", "#", "BASE", "HEAD", "CHANGE", "%");
	for (i = 0; i < n; i++) {
		const struct report_site_change *c = &d->changes[i];
		uint64_t bv = c->base ? report_site__value(c->base, d->key) : 0;
		uint64_t hv = report_site__value(c->head, d->key);
		char bs[32], hs[32], gs[32], cs[32] = "new";
		double pct;

		site_value_str(d->key, bv, bs, sizeof(bs));
		site_value_str(d->key, hv, hs, sizeof(hs));
		site_value_str(d->key, c->growth, gs + 1, sizeof(gs) - 1);
		gs[0] = '+';
		if (change_pct(bv, hv, &pct))
			snprintf(cs, sizeof(cs), "%+.1f%%", pct);
		printf("  %4zu %11s %11s %12s %9s\n", i + 1, bs, hs, gs, cs);
		print_site_frames(c->head, "         ", o->no_demangle);
	}
}

static cJSON *json_site_diff(const struct site_diff *d, const struct report_opts *o)
{
	size_t i, n = o->top && o->top < d->nr ? o->top : d->nr;
	cJSON *a;

	if (d->no_stacks)
		return cJSON_CreateNull();
	a = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		const struct report_site_change *c = &d->changes[i];
		cJSON *e = cJSON_CreateObject();

		cJSON_AddItemToObject(e, "frames", json_site_frames(c->head));
		if (c->base)
			cJSON_AddItemToObject(e, "base", json_site(c->base, false));
		else
			cJSON_AddNullToObject(e, "base");
		cJSON_AddItemToObject(e, "head", json_site(c->head, false));
		json_i64(e, "growth", c->growth);
		cJSON_AddItemToArray(a, e);
	}
	return a;
}

static cJSON *json_diff(const struct loaded *base, const struct loaded *head,
			const char *bpath, const char *hpath,
			const struct site_diff *sd, const struct report_opts *opts)
{
	cJSON *o = cJSON_CreateObject(), *b, *h, *c;
	size_t i;

	cJSON_AddStringToObject(o, "schema", JSON_SCHEMA_REPORT_DIFF);
	b = cJSON_AddObjectToObject(o, "base");
	h = cJSON_AddObjectToObject(o, "head");
	c = cJSON_AddObjectToObject(o, "change_pct");
	cJSON_AddStringToObject(b, "artifact", bpath);
	cJSON_AddStringToObject(h, "artifact", hpath);
	cJSON_AddBoolToObject(b, "truncated", base->truncated);
	cJSON_AddBoolToObject(h, "truncated", head->truncated);
	for (i = 0; i < ARRAY_SIZE(diff_rows); i++) {
		const struct diff_row *r = &diff_rows[i];
		uint64_t bv = diff_value(base, r), hv = diff_value(head, r);
		double pct;

		json_u64(b, r->key, bv);
		json_u64(h, r->key, hv);
		if (change_pct(bv, hv, &pct))
			cJSON_AddNumberToObject(c, r->key, pct);
		else
			cJSON_AddNullToObject(c, r->key);
	}
	cJSON_AddStringToObject(o, "sites_key", report_site_key__name(sd->key));
	cJSON_AddItemToObject(o, "sites", json_site_diff(sd, opts));
	return o;
}

static int cmd_diff(const char *const *paths, struct report_opts *o)
{
	const char *bpath = paths[0], *hpath = paths[1];
	struct loaded base, head;
	struct site_diff sd;
	size_t crossed;
	int ret = 0;

	if (load_summary(bpath, o, &base))
		return 1;
	if (load_summary(hpath, o, &head)) {
		report_summary__exit(&base.s);
		return 1;
	}
	ret = site_diff__init(&sd, &base, &head, bpath, hpath, o);
	if (!ret && o->json) {
		ret = print_json(json_limits(json_diff(&base, &head, bpath, hpath, &sd, o), o,
					     &base.s, &head.s));
	} else if (!ret) {
		print_diff(&base, &head, bpath, hpath);
		print_site_diff(&sd, o);
	}
	if (!ret)
		site_diff__exit(&sd);
	crossed = report_gates__run(&o->gates, &base.s, &head.s);
	if (base.truncated || head.truncated)
		ret = -1;
	report_summary__exit(&base.s);
	report_summary__exit(&head.s);
	return ret ? 1 : crossed ? REPORT_EXIT_LIMIT : 0;
}

/* ---- --flamegraph ----------------------------------------------------------- */

static int cmd_flamegraph(const char *const *paths, struct report_opts *o)
{
	const char *path = paths[0];
	struct report_folded *f = NULL;
	struct loaded l;
	size_t i, n = 0;
	int ret = 0;

	if (load_summary(path, o, &l))
		return 1;
	if (!report_sites__has_stacks(l.s.sites)) {
		ret = error("no call stacks in '%s': %s", path, NO_STACKS_HINT);
	} else if (report_sites__folded(l.s.sites, o->depth, o->weight_key, &f, &n)) {
		ret = error("out of memory");
	} else {
		for (i = 0; i < n; i++) {
			/* a newline in a name would make a stack of its own */
			quote_term_fputs(f[i].line, stdout);
			printf(" %" PRIu64 "\n", f[i].weight);
		}
		report_folded__free(f, n);
	}
	if (l.truncated)
		ret = -1;
	report_summary__exit(&l.s);
	return ret ? 1 : 0;
}

/* --diff --flamegraph: "stack base head" lines, as difffolded.pl writes them */
static int print_folded_diff(struct loaded *base, struct loaded *head,
			     const char *bpath, const char *hpath, struct report_opts *o)
{
	struct report_folded *f;
	size_t i, n;

	if (!report_sites__has_stacks(base->s.sites) || !report_sites__has_stacks(head->s.sites))
		return error("no call stacks in '%s': %s",
			     report_sites__has_stacks(base->s.sites) ? hpath : bpath,
			     NO_STACKS_HINT);
	if (report_sites__folded_diff(base->s.sites, head->s.sites, o->depth, o->weight_key,
				      &f, &n))
		return error("out of memory");
	for (i = 0; i < n; i++) {
		quote_term_fputs(f[i].line, stdout);
		printf(" %" PRIu64 " %" PRIu64 "\n", f[i].base, f[i].weight);
	}
	report_folded__free(f, n);
	return 0;
}

static int cmd_flamegraph_diff(const char *const *paths, struct report_opts *o)
{
	struct loaded base, head;
	int ret;

	if (load_summary(paths[0], o, &base))
		return 1;
	if (load_summary(paths[1], o, &head)) {
		report_summary__exit(&base.s);
		return 1;
	}
	ret = print_folded_diff(&base, &head, paths[0], paths[1], o);
	if (base.truncated || head.truncated)
		ret = -1;
	report_summary__exit(&base.s);
	report_summary__exit(&head.s);
	return ret ? 1 : 0;
}

/* ---- --pprof -------------------------------------------------------------- */

/* a file made at once ('-': standard output); 0 or -1 after a message */
static int write_output(const char *path, const char *what, const void *data, size_t len)
{
	char why[OUT_WHY_MAX];
	int err;

	if (!strcmp(path, "-")) {
		err = write_all(STDOUT_FILENO, data, len);
		return err ? error("cannot write %s to standard output: %s", what,
				   strerror(-err)) : 0;
	}
	if (out_file__write_path(path, data, len, why))
		return error("cannot write %s '%s': %s", what, quote_term(path), why);
	return 0;
}

static void pprof_info(const struct loaded *l, const char *path,
		       struct report_pprof_info *info, char buf[][256])
{
	const struct report_summary *s = &l->s;
	int n = 0;

	memset(info, 0, sizeof(*info));
	info->duration_ns = report_summary__rel_ns(s, s->last_ts);
	snprintf(buf[n], 256, "memtrack %s report of %s", MEMTRACK_VERSION, path);
	info->comments[n] = buf[n];
	n++;
	if (s->has_meta && s->meta.command) {
		snprintf(buf[n], 256, "command: %s", s->meta.command);
		info->comments[n] = buf[n];
		n++;
	}
	snprintf(buf[n], 256, "inuse_*: live at the peak, %.6f s after the first event; "
		 "leaked_*: live at exit", seconds(report_summary__rel_ns(s, s->total.peak_ts)));
	info->comments[n] = buf[n];
	n++;
	if (l->truncated) {
		snprintf(buf[n], 256, "truncated: only the records before byte %" PRIu64,
			 l->error_offset);
		info->comments[n] = buf[n];
	}
}

static int write_pprof(struct loaded *l, const char *path, struct report_opts *o)
{
	struct report_pprof_info info;
	struct report_site_list list;
	char comments[4][256];
	size_t len;
	void *buf;
	int err;

	if (report_sites__resolve(l->s.sites, 0, REPORT_MATCH_FRAME, &list))
		return error("out of memory");
	pprof_info(l, path, &info, comments);
	err = report_pprof__encode(&list, &info, &buf, &len);
	report_site_list__exit(&list);
	if (err)
		return error("cannot make the pprof profile: %s", strerror(-err));
	err = write_output(o->pprof, "the pprof profile", buf, len);
	free(buf);
	return err;
}

static int cmd_pprof(const char *const *paths, struct report_opts *o)
{
	const char *path = paths[0];
	struct loaded l;
	int ret;

	if (load_summary(path, o, &l))
		return 1;
	if (!report_sites__has_stacks(l.s.sites))
		ret = error("no call stacks in '%s': %s", path, NO_STACKS_HINT);
	else
		ret = write_pprof(&l, path, o);
	if (l.truncated)
		ret = -1;
	report_summary__exit(&l.s);
	return ret ? 1 : 0;
}

/* ---- --html ------------------------------------------------------------------ */

/* what the page shows of one artifact */
struct html_run {
	struct loaded l;
	struct report_site_list list;	/* the sites, --stack-depth deep */
	const struct report_site **tops;
};

static void html_run__exit(struct html_run *r)
{
	free(r->tops);
	report_site_list__exit(&r->list);
	report_summary__exit(&r->l.s);
}

/* the sites of the tables and the tree's stacks; 0 or -1 after a message */
static int html_run__init(struct html_run *r, const char *path, struct report_opts *o,
			  enum report_site_match match, struct report_tree *tree,
			  enum report_tree_side side, struct report_html_run *out)
{
	struct report_site_list whole;
	size_t nr;

	memset(out, 0, sizeof(*out));
	out->path = path;
	out->s = &r->l.s;
	out->truncated = r->l.truncated;
	out->depth = o->depth;
	out->has_stacks = report_sites__has_stacks(r->l.s.sites);
	if (!out->has_stacks)
		return 0;
	if (report_sites__resolve(r->l.s.sites, o->depth, match, &r->list) ||
	    !(r->tops = malloc((r->list.nr + 1) * sizeof(*r->tops))))
		return error("out of memory");
	nr = report_site_list__tops(&r->list, o->top, REPORT_SITE_KEYS, r->tops);
	if (nr == SIZE_MAX || report_sites__resolve(r->l.s.sites, 0, REPORT_MATCH_NAME, &whole))
		return error("out of memory");
	report_site_ptrs__sort(r->tops, nr, REPORT_SITE_BYTES);
	out->sites = r->tops;
	out->nr_sites = nr;
	if (report_tree__add(tree, &whole, side)) {
		report_site_list__exit(&whole);
		return error("out of memory");
	}
	report_site_list__exit(&whole);
	return 0;
}

static int write_html(struct report_html *h, struct report_tree *tree, const char *file)
{
	char *page = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&page, &len);
	int err;

	if (!f)
		return error("out of memory");
	h->version = MEMTRACK_VERSION;
	h->tree = h->run[0].has_stacks && (!h->diff || h->run[1].has_stacks) ? tree : NULL;
	err = report_html__write(f, h);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err)
		err = error("cannot make the page: %s", strerror(-err));
	else
		err = write_output(file, "the page", page, len);
	free(page);
	return err;
}

/* --html, and --diff --html: paths[0] the artifact or the base, paths[1] the head */
static int run_html(const char *const *paths, int n, struct report_opts *o)
{
	struct html_run runs[2] = { 0 };
	struct report_html h = { .diff = n == 2 };
	struct report_tree tree;
	int i, loaded = 0, ret = 0;

	if (report_tree__init(&tree))
		return error("out of memory");
	for (i = 0; !ret && i < n; i++) {
		ret = load_summary(paths[i], o, &runs[i].l);
		if (!ret) {
			loaded++;
			ret = html_run__init(&runs[i], paths[i], o, h.diff ? REPORT_MATCH_NAME :
					     REPORT_MATCH_FRAME, &tree, h.diff && !i ? REPORT_TREE_BASE :
					     REPORT_TREE_HEAD, &h.run[i]);
		}
	}
	if (!ret)
		ret = write_html(&h, &tree, o->html);
	for (i = 0; i < loaded; i++) {
		if (runs[i].l.truncated)
			ret = -1;
		html_run__exit(&runs[i]);
	}
	report_tree__exit(&tree);
	return ret ? 1 : 0;
}

static int cmd_html(const char *const *paths, struct report_opts *o)
{
	return run_html(paths, 1, o);
}

static int cmd_html_diff(const char *const *paths, struct report_opts *o)
{
	return run_html(paths, 2, o);
}

/* ---- the command -------------------------------------------------------- */

static int cmd_summary(const char *const *paths, struct report_opts *o)
{
	const char *path = paths[0];
	struct loaded l;
	size_t crossed;
	int ret = 0;

	if (load_summary(path, o, &l))
		return 1;
	if (o->json)
		ret = print_json(json_limits(json_summary(&l, path, o), o, NULL, &l.s));
	else
		ret = print_summary(&l, path, o);
	if (!ret && (o->timeline || o->gnuplot))
		ret = gnuplot__plot(o->timeline, o->gnuplot, write_timeline, &l.s);
	crossed = report_gates__run(&o->gates, NULL, &l.s);
	if (l.truncated)
		ret = -1;
	report_summary__exit(&l.s);
	return ret ? 1 : crossed ? REPORT_EXIT_LIMIT : 0;
}

/* ---- modes: what report prints, and the options that go with each ---------- */

/* the options that some modes take and others do not */
enum report_opt {
	RO_JSON, RO_TIMELINE, RO_GNUPLOT, RO_PID, RO_COMM, RO_CHILDREN, RO_TIME,
	RO_SORT, RO_TOP, RO_DEPTH, RO_WEIGHT, RO_FAIL_IF, RO_SUPP, RO_NO_DEFAULT_SUPP, RO_MAX,
};

#define RO(o)		(1u << RO_##o)
#define RO_FILTERS	(RO(PID) | RO(COMM) | RO(CHILDREN) | RO(TIME))
#define RO_SITES	(RO(SORT) | RO(TOP) | RO(DEPTH))
#define RO_SUPPRESSIONS	(RO(SUPP) | RO(NO_DEFAULT_SUPP))
#define RO_LEAKS	(RO(FAIL_IF) | RO_SUPPRESSIONS)

static const char *const report_opt_names[RO_MAX] = {
	[RO_JSON] = "--json", [RO_TIMELINE] = "--timeline", [RO_GNUPLOT] = "--gnuplot",
	[RO_PID] = "--pid",
	[RO_COMM] = "--comm", [RO_CHILDREN] = "--children", [RO_TIME] = "--time",
	[RO_SORT] = "--sort", [RO_TOP] = "--top", [RO_DEPTH] = "--stack-depth",
	[RO_WEIGHT] = "--weight", [RO_FAIL_IF] = "--fail-if", [RO_SUPP] = "--suppressions",
	[RO_NO_DEFAULT_SUPP] = "--no-default-suppressions",
};

/* the options that pick a mode, alone or together */
enum report_pick {
	RP_DUMP, RP_DIFF, RP_FLAMEGRAPH, RP_PPROF, RP_HTML, RP_MAX,
};

#define RP(p)		(1u << RP_##p)

static const char *const report_pick_names[RP_MAX] = {
	[RP_DUMP] = "--dump", [RP_DIFF] = "--diff", [RP_FLAMEGRAPH] = "--flamegraph",
	[RP_PPROF] = "--pprof", [RP_HTML] = "--html",
};

struct report_mode {
	const char *option;		/* that pick it; NULL: the default */
	unsigned int picks;		/* RP() of the options that pick it */
	const char *does;		/* for messages: "--dump <does>" */
	int artifacts;			/* how many it reads */
	unsigned int takes;		/* RO() of the options it takes */
	int (*run)(const char *const *paths, struct report_opts *o);
};

static const struct report_mode report_modes[] = {
	{ NULL, 0, "prints the summary", 1,
	  RO(JSON) | RO(TIMELINE) | RO(GNUPLOT) | RO_FILTERS | RO_SITES | RO_LEAKS, cmd_summary },
	{ "--dump", RP(DUMP), "prints every record", 1, 0, cmd_dump },
	{ "--diff", RP(DIFF), "compares two artifacts", 2,
	  RO(JSON) | RO(COMM) | RO(TIME) | RO_SITES | RO_LEAKS, cmd_diff },
	{ "--flamegraph", RP(FLAMEGRAPH), "prints every stack", 1,
	  RO_FILTERS | RO(DEPTH) | RO(WEIGHT), cmd_flamegraph },
	{ "--diff --flamegraph", RP(DIFF) | RP(FLAMEGRAPH), "prints every stack of two", 2,
	  RO(COMM) | RO(TIME) | RO(DEPTH) | RO(WEIGHT), cmd_flamegraph_diff },
	{ "--pprof", RP(PPROF), "writes a pprof profile", 1, RO_FILTERS | RO_SUPPRESSIONS, cmd_pprof },
	{ "--html", RP(HTML), "writes a page", 1,
	  RO_FILTERS | RO(TOP) | RO(DEPTH) | RO_SUPPRESSIONS, cmd_html },
	{ "--diff --html", RP(DIFF) | RP(HTML), "writes the page of two", 2,
	  RO(COMM) | RO(TIME) | RO(TOP) | RO(DEPTH), cmd_html_diff },
};

static unsigned int given_picks(const struct report_opts *o)
{
	return (o->dump ? RP(DUMP) : 0) | (o->diff ? RP(DIFF) : 0) |
	       (o->flamegraph ? RP(FLAMEGRAPH) : 0) | (o->pprof ? RP(PPROF) : 0) |
	       (o->html ? RP(HTML) : 0);
}

/* the mode the options pick: 0, or -1 after an error when no mode has them all */
static int pick_mode(const struct report_opts *o, const struct report_mode **modep)
{
	unsigned int given = given_picks(o), i, first = RP_MAX;
	const struct report_mode *m;

	for (m = report_modes; m < report_modes + ARRAY_SIZE(report_modes); m++) {
		if (m->picks == given) {
			*modep = m;
			return 0;
		}
	}
	for (i = 0; i < RP_MAX; i++) {
		if (!(given & (1u << i)))
			continue;
		if (first < RP_MAX)
			break;
		first = i;
	}
	return error("%s and %s cannot be used together", report_pick_names[first],
		     report_pick_names[i]);
}

/* an option given that the mode does not take */
static int option_not_taken(const struct report_mode *mode, enum report_opt opt)
{
	const struct report_mode *m = report_modes;

	if (mode->option)
		return error("%s %s: %s does not apply", mode->option, mode->does,
			     report_opt_names[opt]);
	while (!(m->takes & (1u << opt)))
		m++;
	return error("%s needs %s", report_opt_names[opt], m->option);
}

static int count_stdin(int argc, const char **argv)
{
	int i, n = 0;

	for (i = 0; i < argc; i++)
		n += !strcmp(argv[i], "-");
	return n;
}

/* standard input ("-") as an artifact that --comm and --children read twice */
static int prepare_stdin(const struct report_opts *o, int argc, const char **argv)
{
	int err;

	if (!count_stdin(argc, argv) || (!o->comm && !o->children))
		return 0;
	err = stdin__make_rereadable();
	if (err)
		return error("cannot keep standard input to read it twice: %s", strerror(-err));
	return 0;
}

/* the mode of the options: 0, or -1 after an error in their combination */
static int check_options(const struct report_opts *o, int argc, const char **argv,
			 const struct report_mode **modep)
{
	const bool given[RO_MAX] = {
		[RO_JSON] = o->json, [RO_TIMELINE] = o->timeline, [RO_GNUPLOT] = o->gnuplot,
		[RO_PID] = o->pids,
		[RO_COMM] = o->comm, [RO_CHILDREN] = o->children, [RO_TIME] = o->time,
		[RO_SORT] = o->sort, [RO_TOP] = o->top_arg, [RO_DEPTH] = o->depth_arg,
		[RO_WEIGHT] = o->weight, [RO_FAIL_IF] = o->gates.n > 0,
		[RO_SUPP] = o->suppressions, [RO_NO_DEFAULT_SUPP] = o->no_default_suppressions,
	};
	const struct report_mode *mode = report_modes;
	unsigned int i;

	if (pick_mode(o, &mode))
		return -1;
	for (i = 0; i < RO_MAX; i++)
		if (given[i] && !(mode->takes & (1u << i)))
			return option_not_taken(mode, i);
	if (o->children && !o->pids && !o->comm)
		return error("--children needs --pid or --comm");
	if (mode->artifacts == 2 && argc != 2)
		return error("%s needs two artifacts: <base> <head>", mode->option);
	if (mode->artifacts == 1 && argc != 1)
		return error(argc ? "one artifact at a time (or --diff <base> <head>)" :
			     "which artifact? e.g. memtrack report 1234.MemtrackArtifact.msgpack");
	if (count_stdin(argc, argv) > 1)
		return error("standard input ('-') can be one of the artifacts, not both");
	*modep = mode;
	return 0;
}

/* a count for --top or --stack-depth */
static int parse_count(const char *opt, const char *arg, unsigned int *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || n > INT_MAX)
		return error("%s expects a number (0 for all), not '%s'", opt, arg);
	*v = n;
	return 0;
}

/* --sort, --top, --stack-depth and --weight */
static int parse_site_options(struct report_opts *o)
{
	o->top = o->html ? HTML_DEFAULT_TOP : DEFAULT_TOP;
	/* a flame graph has whole stacks unless asked otherwise */
	o->depth = o->flamegraph ? 0 : DEFAULT_STACK_DEPTH;
	if (o->sort) {
		o->sort_key = report_site_key__parse(o->sort);
		if (o->sort_key < 0)
			return error("--sort expects bytes, calls, peak, leaked or temporary, not '%s'",
				     o->sort);
	}
	if (o->top_arg && parse_count("--top", o->top_arg, &o->top))
		return -1;
	if (o->depth_arg && parse_count("--stack-depth", o->depth_arg, &o->depth))
		return -1;
	if (o->weight) {
		/* "count", the name --weight had before it took every key */
		int k = strcmp(o->weight, "count") ? report_site_key__parse(o->weight) :
			REPORT_SITE_CALLS;

		if (k < 0)
			return error("--weight expects bytes, calls, peak, leaked or temporary, "
				     "not '%s'", o->weight);
		o->weight_key = k;
	}
	return 0;
}

/* the built-in rules unless turned off, and --suppressions */
static int read_suppressions(struct report_opts *o)
{
	char why[512];

	o->sup = report_suppressions__new(!o->no_default_suppressions);
	if (!o->sup)
		return error("out of memory");
	if (o->suppressions && report_suppressions__read(o->sup, o->suppressions, why,
							 sizeof(why)))
		return error("--suppressions: %s", why);
	return 0;
}

int cmd_report(int argc, const char **argv)
{
	struct report_opts o = { .sort_key = -1 };
	const char *const usage[] = {
		"memtrack report [<options>] <artifact>",
		"memtrack report --flamegraph [--weight=<key>] <artifact>",
		"memtrack report --diff <base> <head>",
		"memtrack report [--diff] --fail-if=<limit>... <artifact>...",
		"memtrack report --pprof <file> <artifact>",
		"memtrack report --html <file> [--diff <base>] <artifact>",
		NULL
	};
	struct option options[] = {
		OPT_BOOLEAN(0, "json", &o.json, "print the figures as one JSON document"),
		OPT_BOOLEAN(0, "dump", &o.dump, "print every record, one JSON object per line"),
		OPT_BOOLEAN(0, "diff", &o.diff, "compare two artifacts: <base> <head>"),
		OPT_BOOLEAN(0, "flamegraph", &o.flamegraph,
			    "print folded stacks for flame graphs"),
		OPT_STRING(0, "pprof", &o.pprof, "file",
			   "write a gzipped pprof profile of every stack ('-': stdout)"),
		OPT_STRING(0, "html", &o.html, "file",
			   "write a page: flame graph, timeline, tables ('-': stdout)"),
		OPT_STRING(0, "weight", &o.weight, "key",
			   "--flamegraph: weigh stacks by a --sort key (default: bytes)"),
		OPT_STRING(0, "sort", &o.sort, "bytes|calls|peak|leaked|temporary",
			   "one table of call sites, by this key (default: all five)"),
		OPT_STRING(0, "top", &o.top_arg, "n", "call sites per table (default 10, 0: all)"),
		OPT_STRING(0, "stack-depth", &o.depth_arg, "n",
			   "frames per call site, deeper ones merged (default 5, 0: all)"),
		OPT_STRING('p', "pid", &o.pids, "pid[,pid...]", "only these processes"),
		OPT_BOOLEAN(0, "children", &o.children,
			    "with --pid or --comm: their descendants too"),
		OPT_STRING(0, "comm", &o.comm, "name", "only processes of this command name"),
		OPT_STRING(0, "time", &o.time, "from,to",
			   "only events from..to seconds after the first event"),
		OPT_STRING(0, "timeline", &o.timeline, "file",
			   "draw the live heap over time into a PNG (gnuplot)"),
		OPT_STRING(0, "gnuplot", &o.gnuplot, "file",
			   "write the timeline's gnuplot script, data inline, to <file>"),
		OPT_BOOLEAN(0, "no-demangle", &o.no_demangle,
			    "symbol names as in the binaries, not demangled"),
		OPT_STRING(0, "suppressions", &o.suppressions, "file",
			   "blocks live at exit that are not leaks: leak:<pattern> lines (LSan's)"),
		OPT_BOOLEAN(0, "no-default-suppressions", &o.no_default_suppressions,
			    "count libstdc++'s emergency pool and the like as leaks"),
		OPT_CALLBACK(0, "fail-if", &o.gates, "limit",
			     "exit 3 when the limit is crossed, e.g. peak>64MiB (repeatable)",
			     report_gates__option),
		OPT_BOOLEAN('q', "quiet", &o.quiet, "no progress line on stderr"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END(),
	};
	const struct report_mode *mode = report_modes;
	int ret;

	argc = parse_options(argc, argv, options, usage, 0);
	if (check_options(&o, argc, argv, &mode))
		usage_with_options(usage, options);
	if (prepare_stdin(&o, argc, argv))
		return 1;
	if (o.time && parse_time_range(o.time, &o.filter))
		usage_with_options(usage, options);
	if (o.pids && parse_report_pids(&o))
		usage_with_options(usage, options);
	if (parse_site_options(&o))
		usage_with_options(usage, options);
	if (report_gates__check_mode(&o.gates, o.diff))
		usage_with_options(usage, options);
	/* do not read a large artifact only to find gnuplot missing */
	if (o.timeline && !o.gnuplot && gnuplot__check())
		return 1;

	ret = read_suppressions(&o) ? 1 : mode->run(argv, &o);
	free(o.selected);
	free(o.pid_list);
	report_gates__exit(&o.gates);
	report_suppressions__delete(o.sup);
	return ret;
}
