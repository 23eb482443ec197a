// SPDX-License-Identifier: GPL-2.0
/*
 * Reading stats files: missing, empty and unreadable files, malformed lines
 * with and without --strict, lines across read blocks, too long a line.
 * What the reader says on stderr is captured and checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util/stats/stats-read.h"

#define CHECK_SAID(needle) do {						\
	if (!strstr(said, (needle))) {					\
		fprintf(stderr, "%s:%d: %s: stderr lacks '%s'; it was:\n%s\n", \
			__FILE__, __LINE__, __func__, (needle), said);	\
		test_failures++;						\
	}								\
} while (0)

static char dir[] = "/tmp/test-stats-read-XXXXXX";
static char said[65536];		/* stderr of the last capture */
static int saved_stderr = -1;
static FILE *capture;

static void capture_start(void)
{
	fflush(stderr);
	capture = tmpfile();
	saved_stderr = dup(STDERR_FILENO);
	dup2(fileno(capture), STDERR_FILENO);
}

static void capture_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	rewind(capture);
	n = fread(said, 1, sizeof(said) - 1, capture);
	said[n] = '\0';
	fclose(capture);
}

static char *path_of(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static char *write_file(const char *name, const char *text)
{
	char *path = path_of(name);
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	return path;
}

/* reads the file; returns what stats_file__read() did, stderr in said */
static int read_path(const char *path, bool strict, unsigned int max_warnings,
		     struct stats_file **out)
{
	struct stats_read_opts opts = { .strict = strict, .max_warnings = max_warnings };
	struct stats_file *sf = stats_file__new(path);
	int ret;

	capture_start();
	ret = stats_file__read(sf, &opts);
	if (!ret)
		ret = stats_file__check(sf) ? 1 : 0;
	capture_end();
	if (out)
		*out = sf;
	else
		stats_file__delete(sf);
	return ret;
}

#define RING_ROW "{\"k\":\"ring\",\"ring\":\"events\",\"t0\":1,\"prod0\":0,\"cons0\":0," \
		 "\"t1\":2,\"prod1\":10,\"cons1\":10}"

static void test_missing_file(void)
{
	CHECK(read_path(path_of("no-such-file.jsonl"), false, 10, NULL) == -1);
	CHECK_SAID("error: cannot open '");
	CHECK_SAID("no-such-file.jsonl': No such file or directory");
}

static void test_unreadable(void)
{
	/* a directory opens, then fails to read */
	CHECK(read_path(dir, false, 10, NULL) == -1);
	CHECK_SAID("error: cannot read '");
	CHECK_SAID("Is a directory");
}

static void test_empty_file(void)
{
	struct stats_file *sf;

	CHECK(read_path(write_file("empty.jsonl", ""), false, 10, &sf) == 1);
	CHECK(sf->lines == 0);
	CHECK_SAID("error: '");
	CHECK_SAID("empty.jsonl' is empty");
	stats_file__delete(sf);

	/* blank lines only are as empty */
	CHECK(read_path(write_file("blank.jsonl", "\n  \n\r\n"), false, 10, NULL) == 1);
	CHECK_SAID("is empty");
}

static void test_no_ring_rows(void)
{
	CHECK(read_path(write_file("noring.jsonl",
				   "{\"k\":\"backlog\",\"t\":1,\"sent\":1,\"received\":0,\"rss\":1}\n"),
			false, 10, NULL) == 1);
	CHECK_SAID("error: no ring rows in '");
}

static void test_good_file(void)
{
	struct stats_file *sf;

	/* CRLF line ends, no newline at the very end */
	CHECK(read_path(write_file("good.jsonl",
				   "{\"k\":\"ring_open\",\"t\":0,\"ring\":\"events\",\"size\":64}\r\n"
				   RING_ROW "\n\n"
				   "{\"k\":\"future\",\"x\":1}\n"
				   "{\"k\":\"backlog\",\"t\":3,\"sent\":5,\"received\":2,\"rss\":7}"),
			false, 10, &sf) == 0);
	CHECK(said[0] == '\0');
	CHECK(sf->lines == 4);
	CHECK(sf->rows[STATS_KIND_RING_OPEN] == 1);
	CHECK(sf->rows[STATS_KIND_RING] == 1);
	CHECK(sf->rows[STATS_KIND_BACKLOG] == 1);
	CHECK(sf->unknown == 1);
	CHECK(sf->in_flight_max == 3);
	stats_file__delete(sf);
}

static void test_malformed_reported(void)
{
	const char *path = write_file("bad.jsonl",
				      RING_ROW "\n"
				      "{\"k\":\"ring\",\"ring\":\"events\"\n"
				      RING_ROW "\n"
				      "{\"k\":\"backlog\",\"t\":1}\n");
	struct stats_file *sf;

	CHECK(read_path(path, false, 10, &sf) == 0);
	CHECK(sf->malformed == 2);
	CHECK(sf->rows[STATS_KIND_RING] == 2);
	CHECK_SAID("warning: ");
	CHECK_SAID("bad.jsonl:2: skipping malformed line: not valid JSON");
	CHECK_SAID("bad.jsonl:4: skipping malformed line: backlog row: \"sent\" is missing");
	stats_file__delete(sf);

	/* --strict: the first one is fatal */
	CHECK(read_path(path, true, 10, NULL) == -1);
	CHECK_SAID("error: ");
	CHECK_SAID("bad.jsonl:2: malformed line: not valid JSON");
	CHECK(!strstr(said, "bad.jsonl:4"));
}

static void test_malformed_flood(void)
{
	char *text = malloc(64 * 1024);
	size_t len = 0;
	int i;

	len += sprintf(text + len, "%s\n", RING_ROW);
	for (i = 0; i < 25; i++)
		len += sprintf(text + len, "garbage %d\n", i);
	CHECK(read_path(write_file("flood.jsonl", text), false, 10, NULL) == 0);
	CHECK_SAID("flood.jsonl:11:");
	CHECK(!strstr(said, "flood.jsonl:12:"));
	CHECK_SAID("flood.jsonl: 15 more malformed lines skipped");
	free(text);
}

/* lines that cross the 1 MiB read blocks, and one over the limit */
static void test_long_lines(void)
{
	size_t big = STATS_MAX_LINE + 100, len = 0;
	char *text = malloc(big + 4096);
	struct stats_file *sf;
	int pids = 0;

	/* a 1.5 MB pressure row */
	len += sprintf(text + len, "%s\n{\"k\":\"pressure\",\"ring\":\"stacks\",\"t\":100000000,\"pids\":[",
		       RING_ROW);
	while (len < 1500000) {
		len += sprintf(text + len, "%s[%d,%d]", pids ? "," : "", 1000 + pids,
			       pids);
		pids++;
	}
	len += sprintf(text + len, "]}\n%s\n", RING_ROW);
	text[len] = '\0';
	CHECK(read_path(write_file("long.jsonl", text), false, 10, &sf) == 0);
	CHECK(sf->malformed == 0);
	CHECK(sf->rows[STATS_KIND_PRESSURE] == 1);
	CHECK((int)sf->nr_pids == pids);
	CHECK(sf->rows[STATS_KIND_RING] == 2);
	stats_file__delete(sf);

	/* over STATS_MAX_LINE: skipped, and the next line still read */
	len = sprintf(text, "%s\n{\"k\":\"x\",\"pad\":\"", RING_ROW);
	memset(text + len, 'a', STATS_MAX_LINE);
	len += STATS_MAX_LINE;
	len += sprintf(text + len, "\"}\n%s\n", RING_ROW);
	CHECK(read_path(write_file("toolong.jsonl", text), false, 10, &sf) == 0);
	CHECK(sf->malformed == 1);
	CHECK(sf->rows[STATS_KIND_RING] == 2);
	CHECK_SAID("toolong.jsonl:2: skipping malformed line: longer than 16 MiB");
	stats_file__delete(sf);
	unlink(path_of("toolong.jsonl"));
	free(text);
}

static void cleanup(void)
{
	static const char *const names[] = {
		"empty.jsonl", "blank.jsonl", "noring.jsonl", "good.jsonl",
		"bad.jsonl", "flood.jsonl", "long.jsonl", "toolong.jsonl",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(path_of(names[i]));
	rmdir(dir);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_missing_file();
	test_unreadable();
	test_empty_file();
	test_no_ring_rows();
	test_good_file();
	test_malformed_reported();
	test_malformed_flood();
	test_long_lines();
	cleanup();

	if (test_failures) {
		fprintf(stderr, "test-stats-read: %d checks failed\n", test_failures);
		return 1;
	}
	printf("test-stats-read: ok\n");
	return 0;
}
