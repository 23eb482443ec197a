// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack stats: how the pipeline of a 'memtrack track --stats' run
 * behaved.  Reads the JSON lines, prints per-ring and pipeline figures (and
 * a shard table for several files), and plots them with gnuplot.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "cJSON.h"
#include "util/gnuplot.h"
#include "util/json-schema.h"
#include "util/parse-options.h"
#include "util/quote.h"
#include "util/stats/stats-derive.h"
#include "util/stats/stats-plot.h"
#include "util/stats/stats-read.h"
#include "util/usage.h"

#define MB	1e6
#define GB	1e9
#define MAX_WARNINGS	10

struct stats_cmd {
	bool json, strict, quiet;
	const char *plot_path, *script_path;
	const char *shard_ring;
	unsigned int watermark;
	unsigned int width, height;
	struct stats_file **files;
	size_t nr_files;
};

static const char *const stats_usage[] = {
	"memtrack stats [<options>] <file>...",
	"",
	"Summarises and plots the pipeline stats of 'memtrack track --stats <file>'.",
	NULL
};

static int parse_plot_size(const struct option *opt, const char *arg)
{
	struct stats_cmd *cmd = opt->value;
	unsigned int w, h;
	char end;

	if (sscanf(arg, "%ux%u%c", &w, &h, &end) != 2 || w < 100 || h < 100 ||
	    w > 20000 || h > 20000)
		return error("--plot-size expects <width>x<height> in pixels (100 to 20000), not '%s'",
			     arg);
	cmd->width = w;
	cmd->height = h;
	return 0;
}

/* ---- text output ---- */

static void put_number(double v, int width, int precision)
{
	if (isnan(v))
		printf(" %*s", width, "-");
	else
		printf(" %*.*f", width, precision, v);
}

static void format_size(uint64_t size, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int i = -1;

	if (!size) {
		snprintf(buf, len, "-");
		return;
	}
	while (i < 3 && size % 1024 == 0) {
		size /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)size);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)size, units[i]);
}

static int ring_name_width(const struct stats_file *sf)
{
	int width = 4;
	size_t i;

	for (i = 0; i < sf->nr_rings; i++)
		if ((int)strlen(quote_term(sf->rings[i]->name)) > width)
			width = strlen(quote_term(sf->rings[i]->name));
	return width;
}

static void print_file_header(const struct stats_file *sf)
{
	struct stats_pipeline_summary pipe;
	const char *sep = "";
	int i;

	stats_file__summarize(sf, &pipe);
	printf("%s: span %.3f s, %lu rows (", quote_term(stats_file__name(sf)), pipe.span_s,
	       sf->lines - sf->malformed);
	for (i = 0; i < STATS_KIND_MAX; i++) {
		if (!sf->rows[i])
			continue;
		printf("%s%lu %s", sep, sf->rows[i], stats_kind_names[i]);
		sep = ", ";
	}
	if (sf->unknown)
		printf("%s%lu of unknown kinds", sep, sf->unknown);
	printf(")");
	if (sf->malformed)
		printf(", %lu malformed lines skipped", sf->malformed);
	if (sf->skipped_rows)
		printf(", %lu rows of rings past the first %d skipped", sf->skipped_rows,
		       STATS_MAX_RINGS);
	printf("\n\n");
}

static void print_ring_table(const struct stats_file *sf)
{
	int w = ring_name_width(sf);
	size_t i;

	printf("%-*s %6s %10s %19s %19s %7s %7s %8s %19s\n", w, "ring", "size",
	       "written", "write MB/s", "drain MB/s busy", "fill %", "busy %",
	       "episodes", "paused ms");
	printf("%-*s %6s %10s %9s %9s %9s %9s %7s %7s %8s %9s %9s\n", w, "", "",
	       "MB", "avg", "peak", "avg", "peak", "max", "", "", "sum", "max");
	for (i = 0; i < sf->nr_rings; i++) {
		struct stats_ring_summary s;
		char size[32];

		stats_ring__summarize(sf, sf->rings[i], &s);
		format_size(s.size, size, sizeof(size));
		printf("%-*s %6s", w, quote_term(s.name), size);
		put_number(s.written / MB, 10, 1);
		put_number(s.write_avg / MB, 9, 1);
		put_number(s.write_peak / MB, 9, 1);
		put_number(s.drain_avg / MB, 9, 1);
		put_number(s.drain_peak / MB, 9, 1);
		put_number(s.fill_max_pct, 7, 1);
		put_number(s.busy_pct, 7, 1);
		printf(" %8lu", s.episodes);
		put_number(s.paused_ms_sum, 9, 1);
		put_number(s.paused_ms_max, 9, 1);
		putchar('\n');
	}
}

static void print_pipeline(const struct stats_file *sf)
{
	struct stats_pipeline_summary p;

	stats_file__summarize(sf, &p);
	printf("\npipeline\n");
	printf("  %-22s", "resolver busy %");
	put_number(p.resolver_busy_pct, 10, 1);
	printf("\n  %-22s", "encoder busy %");
	put_number(p.encoder_busy_pct, 10, 1);
	printf("\n  %-22s", "encoder in -> out MB");
	if (sf->rows[STATS_KIND_ENCODE]) {
		put_number(p.encoder_in / MB, 10, 1);
		printf(" ->");
		put_number(p.encoder_out / MB, 0, 1);
		printf(" (ratio");
		put_number(p.encoder_ratio, 0, 2);
		printf(")");
	} else {
		printf(" %10s", "-");
	}
	printf("\n  %-22s", "events in flight max");
	if (p.has_backlog)
		printf(" %10lld", (long long)p.in_flight_max);
	else
		printf(" %10s", "-");
	printf("\n  %-22s", "peak RSS MB");
	put_number(p.has_backlog ? p.rss_peak / MB : NAN, 10, 1);
	putchar('\n');
}

struct shard_row {
	const char *file;
	struct stats_ring_summary ring;	/* zero with name NULL: no such ring */
	struct stats_pipeline_summary pipe;
	bool has_encode;
};

static void shard_row__fill(struct shard_row *row, const struct stats_file *sf,
			    const char *ring_name)
{
	const struct stats_ring *ring = stats_file__find_ring(sf, ring_name);

	memset(row, 0, sizeof(*row));
	row->file = stats_file__name(sf);
	if (ring) {
		stats_ring__summarize(sf, ring, &row->ring);
	} else {
		row->ring.write_avg = NAN;
		row->ring.busy_pct = NAN;
	}
	stats_file__summarize(sf, &row->pipe);
	row->has_encode = sf->rows[STATS_KIND_ENCODE] > 0;
}

static void print_shard_table(const struct stats_cmd *cmd)
{
	char written[64], rate[64];
	int w = 4;
	size_t i;

	for (i = 0; i < cmd->nr_files; i++)
		if ((int)strlen(quote_term(stats_file__name(cmd->files[i]))) > w)
			w = strlen(quote_term(stats_file__name(cmd->files[i])));
	snprintf(written, sizeof(written), "%s GB", quote_term(cmd->shard_ring));
	snprintf(rate, sizeof(rate), "%s MB/s", quote_term(cmd->shard_ring));

	printf("\nshards\n");
	printf("%-*s %10s %12s %8s %8s %19s %19s %7s %9s\n", w, "file", written,
	       rate, "poller", "episodes", "paused ms", "encoder in -> out",
	       "ratio", "peak RSS");
	printf("%-*s %10s %12s %8s %8s %9s %9s %19s %7s %9s\n", w, "", "", "avg",
	       "busy %", "", "sum", "max", "GB", "", "MB");
	for (i = 0; i < cmd->nr_files; i++) {
		const struct stats_file *sf = cmd->files[i];
		struct shard_row row;

		shard_row__fill(&row, sf, cmd->shard_ring);
		printf("%-*s", w, quote_term(row.file));
		put_number(row.ring.name ? row.ring.written / GB : NAN, 10, 3);
		put_number(row.ring.write_avg / MB, 12, 1);
		put_number(row.ring.busy_pct, 8, 1);
		printf(" %8lu", row.pipe.episodes);
		put_number(row.pipe.paused_ms_sum, 9, 1);
		put_number(row.pipe.paused_ms_max, 9, 1);
		if (row.has_encode) {
			printf(" %8.3f -> %7.3f", row.pipe.encoder_in / GB,
			       row.pipe.encoder_out / GB);
		} else {
			printf(" %19s", "-");
		}
		put_number(row.pipe.encoder_ratio, 7, 2);
		put_number(row.pipe.has_backlog ? row.pipe.rss_peak / MB : NAN, 9, 1);
		putchar('\n');
	}
}

static void print_text(const struct stats_cmd *cmd)
{
	size_t i;

	for (i = 0; i < cmd->nr_files; i++) {
		if (i)
			putchar('\n');
		print_file_header(cmd->files[i]);
		print_ring_table(cmd->files[i]);
		print_pipeline(cmd->files[i]);
	}
	if (cmd->nr_files > 1)
		print_shard_table(cmd);
}

/* ---- JSON output ---- */

/* six significant digits: no float noise such as 10.000000000000002 */
static void add_number(cJSON *obj, const char *key, double v)
{
	char buf[32];

	if (isnan(v) || isinf(v)) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	snprintf(buf, sizeof(buf), "%.6g", v);
	cJSON_AddNumberToObject(obj, key, strtod(buf, NULL));
}

/* counts and bytes, exact */
static void add_count(cJSON *obj, const char *key, uint64_t v)
{
	cJSON_AddNumberToObject(obj, key, (double)v);
}

static void add_count_or_null(cJSON *obj, const char *key, uint64_t v, bool known)
{
	if (known)
		add_count(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

static cJSON *ring_to_json(const struct stats_file *sf, const struct stats_ring *ring)
{
	cJSON *obj = cJSON_CreateObject();
	struct stats_ring_summary s;

	stats_ring__summarize(sf, ring, &s);
	cJSON_AddStringToObject(obj, "ring", s.name);
	add_count_or_null(obj, "size", s.size, s.size);
	add_count(obj, "rows", s.rows);
	add_count(obj, "written_bytes", s.written);
	add_number(obj, "written_mb", s.written / MB);
	add_number(obj, "write_mb_s_avg", s.write_avg / MB);
	add_number(obj, "write_mb_s_peak", s.write_peak / MB);
	add_number(obj, "drain_mb_s_avg", s.drain_avg / MB);
	add_number(obj, "drain_mb_s_peak", s.drain_peak / MB);
	add_number(obj, "fill_pct_max", s.fill_max_pct);
	add_number(obj, "watermark_pct", s.watermark_pct);
	add_number(obj, "busy_pct", s.busy_pct);
	add_count(obj, "episodes", s.episodes);
	add_number(obj, "paused_ms_sum", s.paused_ms_sum);
	add_number(obj, "paused_ms_max", s.paused_ms_max);
	add_count(obj, "late_rows", s.late_rows);
	return obj;
}

static cJSON *pipeline_to_json(const struct stats_file *sf)
{
	cJSON *obj = cJSON_CreateObject();
	struct stats_pipeline_summary p;
	bool enc = sf->rows[STATS_KIND_ENCODE] > 0;

	stats_file__summarize(sf, &p);
	add_number(obj, "resolver_busy_pct", p.resolver_busy_pct);
	add_number(obj, "encoder_busy_pct", p.encoder_busy_pct);
	add_count_or_null(obj, "encoder_in_bytes", p.encoder_in, enc);
	add_count_or_null(obj, "encoder_out_bytes", p.encoder_out, enc);
	add_number(obj, "encoder_in_mb", enc ? p.encoder_in / MB : NAN);
	add_number(obj, "encoder_out_mb", enc ? p.encoder_out / MB : NAN);
	add_number(obj, "encoder_ratio", p.encoder_ratio);
	if (p.has_backlog)
		cJSON_AddNumberToObject(obj, "events_in_flight_max", (double)p.in_flight_max);
	else
		cJSON_AddNullToObject(obj, "events_in_flight_max");
	add_count_or_null(obj, "rss_peak_bytes", p.rss_peak, p.has_backlog);
	add_number(obj, "rss_peak_mb", p.has_backlog ? p.rss_peak / MB : NAN);
	add_count(obj, "episodes", p.episodes);
	add_number(obj, "paused_ms_sum", p.paused_ms_sum);
	add_number(obj, "paused_ms_max", p.paused_ms_max);
	return obj;
}

static cJSON *file_to_json(const struct stats_file *sf)
{
	cJSON *obj = cJSON_CreateObject(), *rows, *rings;
	int i;

	cJSON_AddStringToObject(obj, "file", stats_file__name(sf));
	add_number(obj, "span_s", stats_file__span_ns(sf) / 1e9);
	rows = cJSON_AddObjectToObject(obj, "rows");
	for (i = 0; i < STATS_KIND_MAX; i++)
		add_count(rows, stats_kind_names[i], sf->rows[i]);
	add_count(rows, "unknown", sf->unknown);
	add_count(rows, "malformed", sf->malformed);
	add_count(rows, "skipped", sf->skipped_rows);

	rings = cJSON_AddArrayToObject(obj, "rings");
	for (i = 0; i < (int)sf->nr_rings; i++)
		cJSON_AddItemToArray(rings, ring_to_json(sf, sf->rings[i]));
	cJSON_AddItemToObject(obj, "pipeline", pipeline_to_json(sf));
	return obj;
}

static cJSON *shard_to_json(const struct stats_file *sf, const char *ring_name)
{
	cJSON *obj = cJSON_CreateObject();
	struct shard_row row;

	shard_row__fill(&row, sf, ring_name);
	cJSON_AddStringToObject(obj, "file", row.file);
	cJSON_AddStringToObject(obj, "ring", ring_name);
	add_number(obj, "written_gb", row.ring.name ? row.ring.written / GB : NAN);
	add_number(obj, "write_mb_s_avg", row.ring.write_avg / MB);
	add_number(obj, "poller_busy_pct", row.ring.busy_pct);
	add_count(obj, "episodes", row.pipe.episodes);
	add_number(obj, "paused_ms_sum", row.pipe.paused_ms_sum);
	add_number(obj, "paused_ms_max", row.pipe.paused_ms_max);
	add_number(obj, "encoder_in_gb", row.has_encode ? row.pipe.encoder_in / GB : NAN);
	add_number(obj, "encoder_out_gb", row.has_encode ? row.pipe.encoder_out / GB : NAN);
	add_number(obj, "encoder_ratio", row.pipe.encoder_ratio);
	add_number(obj, "rss_peak_mb", row.pipe.has_backlog ? row.pipe.rss_peak / MB : NAN);
	return obj;
}

static int print_json(const struct stats_cmd *cmd)
{
	cJSON *doc = cJSON_CreateObject(), *files;
	char *text, *fixed;
	size_t i;

	if (!doc)
		return error("out of memory printing JSON");
	cJSON_AddStringToObject(doc, "schema", JSON_SCHEMA_STATS);
	files = cJSON_AddArrayToObject(doc, "files");
	for (i = 0; i < cmd->nr_files; i++)
		cJSON_AddItemToArray(files, file_to_json(cmd->files[i]));
	if (cmd->nr_files > 1) {
		cJSON *shards = cJSON_AddArrayToObject(doc, "shards");

		for (i = 0; i < cmd->nr_files; i++)
			cJSON_AddItemToArray(shards, shard_to_json(cmd->files[i],
								   cmd->shard_ring));
	}
	text = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!text)
		return error("out of memory printing JSON");
	/* valid UTF-8 whatever the names hold: cJSON passes their bytes on */
	fixed = utf8_repair(text);
	if (!fixed && errno) {
		cJSON_free(text);
		return error("out of memory printing JSON");
	}
	puts(fixed ? fixed : text);
	free(fixed);
	cJSON_free(text);
	return 0;
}

/* ---- plots ---- */

static int write_plot(FILE *out, const char *output, void *arg)
{
	const struct stats_cmd *cmd = arg;
	struct stats_plot_opts opts = {
		.output = output,
		.width = cmd->width,
		.height = cmd->height,
		.watermark = cmd->watermark,
	};

	return stats_plot__write(out, cmd->files, cmd->nr_files, &opts);
}

/* ---- reading ---- */

static int read_files(struct stats_cmd *cmd, int argc, const char **argv)
{
	struct stats_read_opts opts = {
		.strict = cmd->strict,
		.max_warnings = verbose ? ~0u : MAX_WARNINGS,
	};
	int i, ret = 0;

	cmd->files = calloc(argc, sizeof(*cmd->files));
	if (!cmd->files)
		return error("out of memory");
	for (i = 0; i < argc; i++) {
		struct stats_file *sf = stats_file__new(argv[i]);

		if (!sf)
			return error("out of memory");
		cmd->files[cmd->nr_files++] = sf;
		if (stats_file__read(sf, &opts) || stats_file__check(sf))
			ret = -1;
	}
	return ret;
}

static void free_files(struct stats_cmd *cmd)
{
	size_t i;

	for (i = 0; i < cmd->nr_files; i++)
		stats_file__delete(cmd->files[i]);
	free(cmd->files);
}

int cmd_stats(int argc, const char **argv)
{
	struct stats_cmd cmd = { .watermark = UINT_MAX, .shard_ring = "stacks" };
	const struct option options[] = {
		OPT_BOOLEAN(0, "json", &cmd.json, "print the figures as one JSON document"),
		OPT_STRING(0, "plot", &cmd.plot_path, "file",
			   "render the plots into a PNG file with gnuplot"),
		OPT_STRING(0, "gnuplot", &cmd.script_path, "file",
			   "write the gnuplot script, with its data inline, to <file>"),
		OPT_CALLBACK(0, "plot-size", &cmd, "size",
			     "<width>x<height> of the PNG in pixels (default 1280 wide, 280 per panel)",
			     parse_plot_size),
		OPT_UINTEGER(0, "watermark", &cmd.watermark, "pct",
			     "watermark drawn on the fill panel (default: each ring's own)"),
		OPT_STRING(0, "shard-ring", &cmd.shard_ring, "ring",
			   "ring shown in the shard table (default stacks)"),
		OPT_BOOLEAN(0, "strict", &cmd.strict, "stop at the first malformed line"),
		OPT_BOOLEAN('q', "quiet", &cmd.quiet, "print no summary, only plot"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END(),
	};
	int ret = 0;

	argc = parse_options(argc, argv, options, stats_usage, 0);
	if (argc < 1) {
		error("no stats file given");
		usage_with_options(stats_usage, options);
	}
	if (cmd.watermark == UINT_MAX)
		cmd.watermark = 0;	/* each ring's own, from its ring_open row */
	else if (!cmd.watermark || cmd.watermark > 100) {
		error("--watermark must be between 1 and 100");
		usage_with_options(stats_usage, options);
	}
	if (cmd.quiet && cmd.json) {
		error("--quiet and --json cannot be used together");
		usage_with_options(stats_usage, options);
	}
	/* do not read a large file only to find gnuplot missing */
	if (cmd.plot_path && !cmd.script_path && gnuplot__check())
		return 1;

	if (read_files(&cmd, argc, argv)) {
		ret = 1;
		goto out;
	}
	if (cmd.json)
		ret = print_json(&cmd);
	else if (!cmd.quiet)
		print_text(&cmd);
	if (!ret && (cmd.plot_path || cmd.script_path))
		ret = gnuplot__plot(cmd.plot_path, cmd.script_path, write_plot, &cmd);
	ret = ret ? 1 : 0;
out:
	free_files(&cmd);
	return ret;
}
