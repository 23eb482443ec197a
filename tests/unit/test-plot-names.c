// SPDX-License-Identifier: GPL-2.0
/*
 * Names from files never become gnuplot code: the scripts of stats --plot
 * and report --timeline, written for hostile ring, file and process names,
 * are the scripts written for plain names once the contents of their
 * single-quoted strings are set aside, line for line.
 *
 * `test-plot-names --write <dir>` writes artifacts for the shell tests: the
 * same events under plain and under hostile names (hostile-<n>.msgpack,
 * n = 0 .. HOSTILE_NAMES - 1) as command, comm, exe, module, symbol and
 * file, and one without heap events.
 */
#include <cJSON.h>
#include <stdlib.h>

#include "check.h"
#include "test-artifact.h"
#include "util/report/report-timeline.h"
#include "util/stats/stats-plot.h"
#include "util/stats/stats-read.h"

#define T0	1000000000ULL

static const char *const hostile[] = {
	"it's \"quoted\"",
	"a`touch PWNED_bq`b",
	"x\nEOD\n!touch PWNED_bang\nsystem('touch PWNED_sys')",
	"EOD",
	"system(\"touch PWNED_sys2\")",
	"back\\slash\\",
	"@macro `id` @x",
	"\r\nplot 1\r\n",
	"';system('touch PWNED_sq');'",
	"\x1b]0;title\x07\x1b[2J",
	"\xff\xfe not UTF-8",
	"\"; `touch PWNED_dq`; \"",
	/* HTML: a script element that ends early, markup with handlers, references */
	"</script><script>window.pwned=1</script><!--",
	"<img src=x onerror=\"window.pwned=2\"><svg onload=window.pwned=3> &amp; &lt;b&gt;",
};

#define HOSTILE_NAMES	((int)ARRAY_SIZE(hostile))

#define JOINER	"' . \"'\" . '"

/*
 * The script with each string of quote_gnuplot() made '': the "'" it joins
 * between the pieces of a name out first, then the contents of each '...'.
 */
static char *strip_literals(const char *text)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	bool in = false;

	for (; *text; text++) {
		if (!strncmp(text, JOINER, strlen(JOINER))) {
			text += strlen(JOINER) - 1;
			continue;
		}
		if (*text == '\'')
			in = !in;
		else if (in)
			continue;
		*o++ = *text;
	}
	*o = 0;
	return out;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static void check_same_shape(const char *plain, const char *evil, const char *what, int i)
{
	char *a = strip_literals(plain), *b = strip_literals(evil);

	CHECK(count_lines(plain) == count_lines(evil), "%s, name %d: %zu lines, not %zu",
	      what, i, count_lines(evil), count_lines(plain));
	CHECK(!strcmp(a, b), "%s, name %d: the script changed shape:\n%s", what, i, evil);
	free(a);
	free(b);
}

/* ---- stats --plot ---- */

static char *ring_row(const char *fmt_json, const char *ring)
{
	cJSON *row = cJSON_Parse(fmt_json);
	char *line;

	cJSON_AddStringToObject(row, "ring", ring);
	line = cJSON_PrintUnformatted(row);
	cJSON_Delete(row);
	return line;
}

static void add_line(struct stats_file *sf, char *line)
{
	char why[256];

	if (stats_file__parse_line(sf, line, strlen(line), why, sizeof(why)) < 0) {
		fprintf(stderr, "bad test line: %s: %s\n", line, why);
		test_failures++;
	}
	free(line);
}

static struct stats_file *stats_of(const char *path, const char *ring)
{
	struct stats_file *sf = stats_file__new(path);

	add_line(sf, ring_row("{\"k\":\"ring_open\",\"t\":0,\"size\":1000}", ring));
	add_line(sf, ring_row("{\"k\":\"ring\",\"t0\":10000000,\"prod0\":100,\"cons0\":0,"
			      "\"t1\":11000000,\"prod1\":200,\"cons1\":200,\"peak\":750}", ring));
	add_line(sf, ring_row("{\"k\":\"pressure\",\"t\":11000000,\"pids\":[[42,5000000]]}",
			      ring));
	add_line(sf, strdup("{\"k\":\"backlog\",\"t\":20000000,\"sent\":10,\"received\":4,"
			    "\"rss\":2000000}"));
	add_line(sf, strdup("{\"k\":\"encode\",\"t\":300000000,\"events\":10,\"wait_ns\":0,"
			    "\"encode_ns\":1000,\"write_ns\":1000,\"msgpack_bytes\":600,"
			    "\"zstd_bytes\":200}"));
	CHECK(!stats_file__finish(sf));
	return sf;
}

/* two files, so that file names become labels of every series */
static char *stats_script(const char *name, const char *output)
{
	struct stats_plot_opts opts = { .output = output, .watermark = 75 };
	struct stats_file *files[2];
	char path[512], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	snprintf(path, sizeof(path), "a/%s.jsonl", name);
	files[0] = stats_of(path, name);
	snprintf(path, sizeof(path), "%s2", name);
	files[1] = stats_of(path, "stacks");
	CHECK(!stats_plot__write(f, files, 2, &opts));
	fclose(f);
	stats_file__delete(files[0]);
	stats_file__delete(files[1]);
	return text;
}

static void test_stats_plot(void)
{
	char *plain = stats_script("events", "run.png");
	int i;

	for (i = 0; i < HOSTILE_NAMES; i++) {
		char *evil = stats_script(hostile[i], hostile[i]);

		check_same_shape(plain, evil, "stats", i);
		free(evil);
	}
	free(plain);
}

/* ---- report --timeline ---- */

struct names {
	const char *name;
};

static void name_of(int32_t pid, char *buf, size_t len, void *arg)
{
	const struct names *n = arg;

	snprintf(buf, len, "%d %s", pid, n->name);
}

static char *timeline_script(const char *name, const char *output)
{
	struct report_timeline *tl = report_timeline__new(64);
	struct names n = { name };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	report_timeline__add(tl, REPORT_TIMELINE_TOTAL, 0, 100);
	report_timeline__add(tl, 7, 0, 100);
	report_timeline__add(tl, 8, 5000, 300);
	report_timeline__add(tl, REPORT_TIMELINE_TOTAL, 5000, 400);
	CHECK(!report_timeline__write_gnuplot(tl, f, output, 8, name_of, &n));
	fclose(f);
	report_timeline__delete(tl);
	return text;
}

static void test_timeline(void)
{
	char *plain = timeline_script("sort", "heap.png");
	int i;

	for (i = 0; i < HOSTILE_NAMES; i++) {
		char *evil = timeline_script(hostile[i], hostile[i]);

		check_same_shape(plain, evil, "timeline", i);
		free(evil);
	}
	free(plain);
}

/* ---- artifacts for the shell tests ---- */

static const struct mt_alloc_event events[] = {
	{ MT_MALLOC, 20, 20, 0, T0, 0x1000, 1000, 0, 1 },
	{ MT_MALLOC, 21, 21, 0, T0 + 1000000, 0x2000, 500, 0, 0 },
	{ MT_MALLOC, 22, 22, 0, T0 + 2000000, 0x3000, 2000, 0, 0 },
	{ MT_FREE, 20, 20, 0, T0 + 3000000, 0x1000, 0, 0, 0 },
};

/* the name everywhere a string goes: command, comm, exe, module, symbol, file */
static void pack_names(msgpack_packer *pk, void *arg)
{
	const char *name = arg;
	struct frame_record f = {
		.id = 1, .ip = 0x401000, .offset = 0x10,
		.module = name, .symbol = name, .file = name, .line = 7,
	};
	uint64_t frames[] = { 1 };

	test_pack_meta(pk, name, 20, T0, T0 + 4000000, 0, 0);
	test_pack_process(pk, 20, 1, name, name, 0);
	test_pack_process(pk, 21, 20, name, name, 0);
	test_pack_process(pk, 22, 20, name, NULL, 0);
	pack_frame_record(pk, &f);
	pack_stack_record(pk, 1, 20, frames, 1);
}

static const struct mt_alloc_event no_heap[] = {
	{ MT_MMAP, 30, 30, 0, T0, 0x7f0000, 4096, 0 },
	{ MT_BRK, 30, 30, 0, T0 + 1000, 0x10000, 0, 0 },
};

static void pack_no_heap(msgpack_packer *pk, void *arg)
{
	(void)arg;
	test_pack_meta(pk, "./static", 30, T0, T0 + 1000000, 0, 0);
	test_pack_process(pk, 30, 1, "static", "/sbin/static", 0);
}

static int write_samples(const char *dir)
{
	char path[1024];
	int i, err;

	snprintf(path, sizeof(path), "%s/plain.msgpack", dir);
	err = test_write_artifact(path, events, ARRAY_SIZE(events), 2, pack_names, "sort");
	for (i = 0; i < HOSTILE_NAMES && !err; i++) {
		snprintf(path, sizeof(path), "%s/hostile-%d.msgpack", dir, i);
		err = test_write_artifact(path, events, ARRAY_SIZE(events), 2, pack_names,
					  (void *)hostile[i]);
	}
	snprintf(path, sizeof(path), "%s/no-heap.msgpack", dir);
	return err ?: test_write_artifact(path, no_heap, ARRAY_SIZE(no_heap), 2,
					  pack_no_heap, NULL);
}

int main(int argc, char **argv)
{
	int ret = test_write_mode(argc, argv, write_samples);

	if (ret >= 0)
		return ret;
	test_stats_plot();
	test_timeline();
	return test_done("test-plot-names");
}
