// SPDX-License-Identifier: GPL-2.0
/*
 * report: reading an artifact for a mode (see report.h): the progress line,
 * the processes --pid, --comm and --children select, and the summary of
 * all the records that pass the filters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/artifact/artifact.h"
#include "util/parse-options.h"
#include "util/quote.h"
#include "util/report/report.h"
#include "util/report/report-suppress.h"
#include "util/report/report-threads.h"
#include "util/report/report-timeline.h"
#include "util/report/stdin-spool.h"
#include "util/usage.h"
#include "util/util.h"

#define PROGRESS_EVERY		65536	/* records between looks at the clock */
#define TIMELINE_BINS		1000

/* ---- reading with progress -------------------------------------------- */

void progress__init(struct progress *pg, bool quiet)
{
	pg->on = !quiet && isatty(STDERR_FILENO);
	pg->start = pg->last = now_ns();
	pg->shown = false;
}

void progress__update(struct progress *pg, struct artifact *a)
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

void progress__done(struct progress *pg)
{
	if (pg->shown)
		fprintf(stderr, "\r\033[K");
}

/* path, or standard input for "-" */
int open_artifact(const char *path, struct artifact **ap)
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
int report_read_error(struct artifact *a, int err)
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

int parse_report_pids(struct report_opts *o)
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

	if (!l->n)
		return 0;	/* no Process records: nobody's children (and no NULL to qsort) */
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


/* ---- the summary ---------------------------------------------------------- */

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

/* a --time window past the last event holds nothing: an empty report would not say why */
static int check_time_window(struct loaded *l, const struct report_opts *o, const char *path)
{
	const struct report_summary *s = &l->s;
	uint64_t end = report_summary__rel_ns(s, s->last_ts);

	if (!o->filter.has_time || !s->has_origin || o->filter.from_ns <= end)
		return 0;
	error("--time %s starts after the last event of '%s', at %.6f s: nothing in it",
	      o->time, path, end / 1e9);
	report_summary__exit(&l->s);
	return -1;
}

/* reads path into l->s; 0, or -1 when it could not be opened or read at all, or
 * when a --time window holds nothing */
int load_summary(const char *path, struct report_opts *o, struct loaded *l)
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
	if (o->threads || o->html)
		l->s.threads = report_threads__new();
	if ((o->threads || o->html) && !l->s.threads) {
		report_summary__exit(&l->s);
		return error("out of memory");
	}
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
	l->s.show_libc_frees = o->show_libc_frees;
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
	return check_time_window(l, o, path);
}
