// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack report: reads an artifact (memtrack's or CodSpeed's) and prints
 * its heap figures, per event type, per process and per call site, as text
 * or JSON; or every record (--dump); or folded stacks for flame graphs
 * (--flamegraph); or compares two artifacts (--diff).  This file reads the
 * options and picks a mode; util/report/report.h says where each lives.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cJSON.h"
#include "builtin.h"
#include "util/artifact/artifact.h"
#include "util/gnuplot.h"
#include "util/parse-options.h"
#include "util/quote.h"
#include "util/out-file.h"
#include "util/report/report-html.h"
#include "util/report/report-pprof.h"
#include "util/report/report.h"
#include "util/report/report-gates.h"
#include "util/report/report-sites.h"
#include "util/report/report-summary.h"
#include "util/report/report-suppress.h"
#include "util/report/report-timeline.h"
#include "util/report/stdin-spool.h"
#include "util/usage.h"
#include "util/util.h"

#define TIMELINE_PROCESSES	8
#define DEFAULT_TOP		10
#define HTML_DEFAULT_TOP	100	/* sites of --html's table, per cost type */
#define DEFAULT_STACK_DEPTH	5

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
		 "leaked_*: live at exit", report_summary__rel_ns(s, s->total.peak_ts) / 1e9);
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
		ret = report_json__print(report_json__limits(report_json__summary(&l, path, o),
							     o, NULL, &l.s));
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
	RO_SORT, RO_TOP, RO_DEPTH, RO_WEIGHT, RO_FAIL_IF, RO_SUPP, RO_NO_DEFAULT_SUPP, RO_THREADS,
	RO_MAX,
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
	[RO_NO_DEFAULT_SUPP] = "--no-default-suppressions", [RO_THREADS] = "--threads",
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
	  RO(JSON) | RO(TIMELINE) | RO(GNUPLOT) | RO_FILTERS | RO_SITES | RO_LEAKS | RO(THREADS),
	  cmd_summary },
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
		[RO_THREADS] = o->threads,
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

/* a directory given for an artifact (track -o <dir>) stands for its newest one */
static int resolve_dirs(int argc, const char **argv, char **owned)
{
	struct stat st;
	int i, err;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-") || stat(argv[i], &st) || !S_ISDIR(st.st_mode))
			continue;
		err = artifact__newest_in(argv[i], &owned[i]);
		if (err == -ENOENT)
			return error("no artifact in '%s': it has no *%s file", argv[i],
				     ARTIFACT_FILE_EXT);
		if (err)
			return error("cannot read the directory '%s': %s", argv[i], strerror(-err));
		argv[i] = owned[i];
	}
	return 0;
}

int cmd_report(int argc, const char **argv)
{
	struct report_opts o = { .sort_key = -1 };
	const char *const usage[] = {
		"memtrack report [<options>] <artifact>",
		"memtrack report --flamegraph [--weight=<key>] <artifact>",
		"memtrack report --diff <base> <head>",
		"memtrack report [--diff <base>] --fail-if=<limit>... <artifact>",
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
		OPT_BOOLEAN(0, "threads", &o.threads,
			    "a table of threads: what each allocated, freed and left live"),
		OPT_BOOLEAN(0, "show-libc-frees", &o.show_libc_frees,
			    "count the blocks glibc freed at exit (__libc_freeres) as live"),
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
	char **owned;
	int ret, i;

	argc = parse_options(argc, argv, options, usage, 0);
	if (check_options(&o, argc, argv, &mode))
		usage_with_options(usage, options);
	owned = calloc(argc + 1, sizeof(*owned));
	if (!owned) {
		error("out of memory");
		return 1;
	}
	if (resolve_dirs(argc, argv, owned))
		return 1;
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
	for (i = 0; i < argc; i++)
		free(owned[i]);
	free(owned);
	free(o.selected);
	free(o.pid_list);
	report_gates__exit(&o.gates);
	report_suppressions__delete(o.sup);
	return ret;
}
