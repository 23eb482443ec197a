// SPDX-License-Identifier: GPL-2.0
/*
 * The gnuplot script of memtrack stats: which panels a file can have, what
 * is said about the others, and the data written inline.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util/stats/stats-plot.h"
#include "util/stats/stats-read.h"

#define CHECK_HAS(text, needle) do {					\
	if (!strstr((text), (needle))) {				\
		fprintf(stderr, "%s:%d: %s: no '%s' in:\n%.4000s\n",	\
			__FILE__, __LINE__, __func__, (needle), (text)); \
		test_failures++;						\
	}								\
} while (0)

#define CHECK_LACKS(text, needle) do {					\
	if (strstr((text), (needle))) {					\
		fprintf(stderr, "%s:%d: %s: unexpected '%s'\n",		\
			__FILE__, __LINE__, __func__, (needle));	\
		test_failures++;						\
	}								\
} while (0)

#define MS 1000000ULL

static struct stats_file *file_of(const char *name, const char *const *lines)
{
	struct stats_file *sf = stats_file__new(name);
	char why[256];

	for (; *lines; lines++) {
		char *line = strdup(*lines);

		if (stats_file__parse_line(sf, line, strlen(line), why, sizeof(why)) < 0) {
			fprintf(stderr, "bad test line: %s: %s\n", *lines, why);
			test_failures++;
		}
		free(line);
	}
	CHECK(!stats_file__finish(sf));
	return sf;
}

/* the script, and what was said on stderr while writing it */
static char *script_of(struct stats_file **files, size_t nr,
		       const struct stats_plot_opts *opts, char **said, int *ret)
{
	FILE *err = tmpfile(), *out;
	int saved = dup(STDERR_FILENO);
	char *text = NULL;
	size_t len = 0, n;

	fflush(stderr);
	dup2(fileno(err), STDERR_FILENO);
	out = open_memstream(&text, &len);
	*ret = stats_plot__write(out, files, nr, opts);
	fclose(out);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);

	*said = calloc(1, 65536);
	rewind(err);
	n = fread(*said, 1, 65535, err);
	(*said)[n] = '\0';
	fclose(err);
	return text;
}

static const char *const full_run[] = {
	"{\"k\":\"ring_open\",\"t\":0,\"ring\":\"events\",\"size\":1000}",
	"{\"k\":\"ring\",\"ring\":\"events\",\"t0\":10000000,\"prod0\":100,\"cons0\":0,"
	"\"t1\":11000000,\"prod1\":200,\"cons1\":200,\"peak\":750}",
	"{\"k\":\"ring\",\"ring\":\"events\",\"t0\":250000000,\"prod0\":300,\"cons0\":200,"
	"\"t1\":251000000,\"prod1\":300,\"cons1\":300,\"peak\":100}",
	"{\"k\":\"pressure\",\"ring\":\"events\",\"t\":11000000,\"pids\":[[42,5000000],[43,6000000]]}",
	"{\"k\":\"backlog\",\"t\":20000000,\"sent\":10,\"received\":4,\"rss\":2000000}",
	"{\"k\":\"resolve\",\"t0\":12000000,\"t1\":13000000,\"n\":3}",
	"{\"k\":\"encode\",\"t\":300000000,\"events\":10,\"wait_ns\":0,\"encode_ns\":1000,"
	"\"write_ns\":1000,\"msgpack_bytes\":600,\"zstd_bytes\":200}",
	NULL
};

static void test_all_panels(void)
{
	struct stats_plot_opts opts = { .output = "it's.png", .watermark = 75 };
	struct stats_file *sf = file_of("run.jsonl", full_run);
	const char *why[STATS_PANEL_MAX];
	char *text, *said;
	int ret;

	CHECK(stats_plot__panels(&sf, 1, why) == (1u << STATS_PANEL_MAX) - 1);
	text = script_of(&sf, 1, &opts, &said, &ret);
	CHECK(ret == 0);
	CHECK(said[0] == '\0');
	CHECK_HAS(text, "set output 'it' . \"'\" . 's.png'");
	CHECK_HAS(text, "pngcairo size 1280,1400");
	CHECK_HAS(text, "set multiplot layout 5,1");
	CHECK_HAS(text, "$f0_r0 << EOD");
	CHECK_HAS(text, "$f0_pipe << EOD");
	/* from the first stop (5 ms) to the release (11 ms) */
	CHECK_HAS(text, "$f0_episodes << EOD\n# start_s end_s\n0.005000 0.011000\n");
	CHECK_HAS(text, "$lanes << EOD\n# lane start_s end_s\n0 0.005000 0.011000\n1 0.006000 0.011000\n");
	CHECK_HAS(text, "set ytics ('42' 0, '43' 1)");
	CHECK_HAS(text, "75 with lines dt 2");
	CHECK_HAS(text, "set logscale y");
	/*
	 * bin 0 (0-100 ms): peak 75%, drained 20%, 1% busy; written: 100 B
	 * in the first tick and 89 ms of the 100 B spread over the 240 ms to
	 * the next t1; drained: 200 B.
	 */
	CHECK_HAS(text, "\n0.000000 75 20 0.00137083 0.002 1\n");
	/* bin 1: no tick; the fill stays at the last one's t1 (0) */
	CHECK_HAS(text, "\n0.100000 0 0 0.000416667 0 0\n");
	CHECK_HAS(text, "\n0.100000 0 0 0 0 NaN NaN\n");
	/* bins are drawn as steps: the last one's values again at its end */
	CHECK_HAS(text, "\n0.200000 10 10 0.0002125 0.001 1\n0.300000 10 10 0.0002125 0.001 1\nEOD\n");
	/* the time axis is labelled under the last panel only */
	CHECK(strstr(text, "set xlabel") > strstr(text, "axes x1y2"));
	CHECK(strstr(text, "set xlabel") < strstr(text, "set ytics ('42'"));
	free(text);
	free(said);
	stats_file__delete(sf);
}

static void test_some_panels(void)
{
	static const char *const rings_only[] = {
		"{\"k\":\"ring\",\"ring\":\"events\",\"t0\":0,\"prod0\":0,\"cons0\":0,"
		"\"t1\":1000,\"prod1\":100,\"cons1\":100}",
		NULL
	};
	struct stats_plot_opts opts = { .output = "x.png", .watermark = 75 };
	struct stats_file *sf = file_of("rings.jsonl", rings_only);
	char *text, *said;
	int ret;

	text = script_of(&sf, 1, &opts, &said, &ret);
	CHECK(ret == 0);
	CHECK_HAS(said, "warning: plot: skipping the ring fill panel: no ring_open rows give the ring sizes");
	CHECK_HAS(said, "warning: plot: skipping the events in flight and RSS panel: no backlog rows");
	CHECK_LACKS(said, "swimlane");
	CHECK_HAS(text, "set multiplot layout 2,1");
	CHECK_HAS(text, "size 1280,560");
	CHECK_LACKS(text, "$lanes");
	CHECK_LACKS(text, "fill %");
	free(text);
	free(said);
	stats_file__delete(sf);
}

static void test_several_files(void)
{
	struct stats_plot_opts opts = {
		.output = "x.png", .watermark = 80, .width = 800, .height = 600,
	};
	struct stats_file *files[2];
	char *text, *said;
	int ret;

	files[0] = file_of("dir/shard-0.jsonl", full_run);
	files[1] = file_of("shard-1.jsonl", full_run);
	text = script_of(files, 2, &opts, &said, &ret);
	CHECK(ret == 0);
	CHECK_HAS(text, "size 800,600");
	CHECK_HAS(text, "$f1_r0 << EOD");
	CHECK_HAS(text, "'shard-0:events peak'");
	CHECK_HAS(text, "'shard-1:events peak'");
	CHECK_HAS(text, "'shard-1:43' 3");
	CHECK_HAS(text, "80 with lines dt 2");
	free(text);
	free(said);
	stats_file__delete(files[0]);
	stats_file__delete(files[1]);
}

/* the watermark each ring was run with, unless --watermark overrides it */
static void test_watermarks(void)
{
	static const char *const half[] = {
		"{\"k\":\"ring_open\",\"t\":0,\"ring\":\"events\",\"size\":1000,\"watermark\":500}",
		"{\"k\":\"ring_open\",\"t\":0,\"ring\":\"stacks\",\"size\":4000,\"watermark\":3600}",
		"{\"k\":\"ring\",\"ring\":\"events\",\"t0\":0,\"prod0\":0,\"cons0\":0,"
		"\"t1\":1000,\"prod1\":100,\"cons1\":100}",
		"{\"k\":\"ring\",\"ring\":\"stacks\",\"t0\":0,\"prod0\":0,\"cons0\":0,"
		"\"t1\":1000,\"prod1\":100,\"cons1\":100}",
		NULL
	};
	struct stats_plot_opts opts = { .output = "x.png" };
	struct stats_file *sf = file_of("half.jsonl", half), *old = file_of("old.jsonl", full_run);
	char *text, *said;
	int ret;

	text = script_of(&sf, 1, &opts, &said, &ret);
	CHECK_HAS(text, "50 with lines dt 2 lw 1.5 lc rgb 'red' title 'watermark 50%'");
	CHECK_HAS(text, "90 with lines dt 2 lw 1.5 lc rgb 'red' title 'watermark 90%'");
	CHECK_LACKS(text, "'watermark 75%'");
	free(text);
	free(said);
	opts.watermark = 60;
	text = script_of(&sf, 1, &opts, &said, &ret);
	CHECK_HAS(text, "60 with lines dt 2 lw 1.5 lc rgb 'red' title 'watermark 60%'");
	CHECK_LACKS(text, "'watermark 50%'");
	free(text);
	free(said);
	/* a file that does not say (CodSpeed's, older ones): track's default */
	opts.watermark = 0;
	text = script_of(&old, 1, &opts, &said, &ret);
	CHECK_HAS(text, "75 with lines dt 2 lw 1.5 lc rgb 'red' title 'watermark 75%'");
	free(text);
	free(said);
	stats_file__delete(sf);
	stats_file__delete(old);
}

/* a run shorter than one 100 ms bin: its bin is drawn, and inside the x range */
static void test_one_bin(void)
{
	static const char *const short_run[] = {
		"{\"k\":\"ring_open\",\"t\":1030000000,\"ring\":\"events\",\"size\":1000}",
		"{\"k\":\"ring\",\"ring\":\"events\",\"t0\":1031000000,\"prod0\":100,\"cons0\":0,"
		"\"t1\":1032000000,\"prod1\":200,\"cons1\":200,\"peak\":300}",
		"{\"k\":\"backlog\",\"t\":1040000000,\"sent\":10,\"received\":4,\"rss\":2000000}",
		NULL
	};
	struct stats_plot_opts opts = { .output = "x.png" };
	struct stats_file *sf = file_of("short.jsonl", short_run);
	char *text, *said;
	int ret;

	text = script_of(&sf, 1, &opts, &said, &ret);
	CHECK(ret == 0);
	/* the bin is 1.0-1.1 s, the records 1.03-1.04 s */
	CHECK_HAS(text, "set xrange [-0.03:0.07]");
	CHECK_HAS(text, "\n-0.030000 30 20 0.001 0.002 1\n0.070000 30 20 0.001 0.002 1\nEOD\n");
	free(text);
	free(said);
	stats_file__delete(sf);
}

int main(void)
{
	test_one_bin();
	test_watermarks();
	test_all_panels();
	test_some_panels();
	test_several_files();

	if (test_failures) {
		fprintf(stderr, "test-stats-plot: %d checks failed\n", test_failures);
		return 1;
	}
	printf("test-stats-plot: ok\n");
	return 0;
}
