// SPDX-License-Identifier: GPL-2.0
/*
 * Streams a pipeline stats file: a fixed read buffer, one line at a time,
 * each line parsed with cJSON and handed to stats-derive.  Nothing is kept
 * per line.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cJSON.h"
#include "stats-read.h"
#include "usage.h"

#define READ_BLOCK	(1 << 20)

struct line_reader {
	int fd;
	char *block;
	size_t len, pos;
	bool eof;
	char *line;			/* a line that spans blocks */
	size_t line_len, line_alloc;
	bool too_long;
	unsigned long lineno;
};

static int line_reader__fill(struct line_reader *lr)
{
	ssize_t n;

	do
		n = read(lr->fd, lr->block, READ_BLOCK);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	lr->len = n;
	lr->pos = 0;
	lr->eof = n == 0;
	return 0;
}

static int line_reader__append(struct line_reader *lr, const char *s, size_t n)
{
	if (lr->too_long || lr->line_len + n > STATS_MAX_LINE) {
		lr->too_long = true;
		return 0;
	}
	if (lr->line_len + n + 1 > lr->line_alloc) {
		size_t alloc = lr->line_alloc ? lr->line_alloc : 4096;
		char *line;

		while (alloc < lr->line_len + n + 1)
			alloc *= 2;
		line = realloc(lr->line, alloc);
		if (!line)
			return -ENOMEM;
		lr->line = line;
		lr->line_alloc = alloc;
	}
	memcpy(lr->line + lr->line_len, s, n);
	lr->line_len += n;
	lr->line[lr->line_len] = '\0';
	return 0;
}

static int line_reader__carried(struct line_reader *lr, char **line, size_t *len)
{
	lr->lineno++;
	if (!lr->line && !lr->too_long && line_reader__append(lr, "", 0))
		return -ENOMEM;
	*line = lr->line;
	*len = lr->too_long ? 0 : lr->line_len;
	return 1;
}

/*
 * Returns 1 with the next line (without its newline, NUL-terminated), 0 at
 * the end of the file, -EIO on a read error (errno set) or -ENOMEM.  A line
 * longer than STATS_MAX_LINE comes back with lr->too_long set.
 */
static int line_reader__next(struct line_reader *lr, char **line, size_t *len)
{
	lr->line_len = 0;
	lr->too_long = false;

	for (;;) {
		char *start, *nl;
		size_t n;

		if (lr->pos == lr->len) {
			if (lr->eof)
				break;
			if (line_reader__fill(lr))
				return -EIO;
			continue;
		}
		start = lr->block + lr->pos;
		nl = memchr(start, '\n', lr->len - lr->pos);
		n = nl ? (size_t)(nl - start) : lr->len - lr->pos;

		if (nl && !lr->line_len && !lr->too_long) {
			/* the whole line is in the block */
			*nl = '\0';
			lr->pos += n + 1;
			lr->lineno++;
			*line = start;
			*len = n;
			return 1;
		}
		if (line_reader__append(lr, start, n))
			return -ENOMEM;
		lr->pos += n + (nl ? 1 : 0);
		if (nl)
			return line_reader__carried(lr, line, len);
	}
	if (lr->line_len || lr->too_long)
		return line_reader__carried(lr, line, len);
	return 0;
}

/* The fields of one row, and why it is malformed when it is. */
struct row {
	const cJSON *obj;
	const cJSON *next;		/* where the next lookup starts */
	const char *kind;
	char *why;
	size_t why_len;
};

/*
 * Like cJSON_GetObjectItemCaseSensitive(), but starting after the field
 * found last: asked for in the order memtrack writes them, each field is
 * found at the first comparison.
 */
static const cJSON *row__field(struct row *row, const char *key)
{
	const cJSON *item;

	for (item = row->next; item; item = item->next)
		if (item->string && !strcmp(item->string, key))
			goto found;
	for (item = row->obj->child; item != row->next; item = item->next)
		if (item->string && !strcmp(item->string, key))
			goto found;
	return NULL;
found:
	row->next = item->next;
	return item;
}

/* fills in why; returns -EINVAL */
static int __printf(2, 3) row__malformed(struct row *row, const char *fmt, ...)
{
	int n = snprintf(row->why, row->why_len, "%s row: ", row->kind);
	va_list ap;

	if (n < 0 || (size_t)n >= row->why_len)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(row->why + n, row->why_len - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool number_to_u64(const cJSON *item, uint64_t *out)
{
	double v;

	if (!cJSON_IsNumber(item))
		return false;
	v = item->valuedouble;
	if (!isfinite(v) || v < 0 || v >= 18446744073709551616.0)
		return false;
	*out = (uint64_t)v;
	return true;
}

/* *present (when not NULL) makes the field optional */
static bool row__u64(struct row *row, const char *key, uint64_t *out,
		     bool *present)
{
	const cJSON *item = row__field(row, key);

	if (present) {
		*present = item != NULL;
		if (!item)
			return true;
	}
	if (number_to_u64(item, out))
		return true;
	row__malformed(row, "\"%s\" is %s", key,
		       item ? "not a non-negative number" : "missing");
	return false;
}

/* *out is NULL when an optional field is absent */
static bool row__string(struct row *row, const char *key, const char **out,
			bool optional)
{
	const cJSON *item = row__field(row, key);

	*out = NULL;
	if (cJSON_IsString(item)) {
		*out = item->valuestring;
		return true;
	}
	if (!item && optional)
		return true;
	row__malformed(row, "\"%s\" is %s", key, item ? "not a string" : "missing");
	return false;
}

static int parse_ring_open(struct stats_file *sf, struct row *row)
{
	const char *ring;
	uint64_t t = 0, size;
	bool has_t;

	if (!row__u64(row, "t", &t, &has_t) ||
	    !row__string(row, "ring", &ring, false) ||
	    !row__u64(row, "size", &size, NULL))
		return -EINVAL;
	return stats_file__add_ring_open(sf, ring, t, has_t, size);
}

static int parse_ring(struct stats_file *sf, struct row *row)
{
	struct stats_ring_row r = { 0 };

	if (!row__string(row, "ring", &r.ring, false) ||
	    !row__u64(row, "t0", &r.t0, NULL) ||
	    !row__u64(row, "prod0", &r.prod0, NULL) ||
	    !row__u64(row, "cons0", &r.cons0, NULL) ||
	    !row__u64(row, "t1", &r.t1, NULL) ||
	    !row__u64(row, "prod1", &r.prod1, NULL) ||
	    !row__u64(row, "cons1", &r.cons1, NULL) ||
	    !row__u64(row, "peak", &r.peak, &r.has_peak))
		return -EINVAL;
	if (r.t1 < r.t0)
		return row__malformed(row, "t1 is before t0");
	if (r.prod1 < r.prod0 || r.cons1 < r.cons0)
		return row__malformed(row, "positions go backwards");
	if (r.cons0 > r.prod0 || r.cons1 > r.prod1)
		return row__malformed(row, "consumer ahead of producer");
	return stats_file__add_ring(sf, &r);
}

static bool pause_from_json(const cJSON *pair, struct stats_pause *pause)
{
	const cJSON *pid;
	uint64_t v;

	if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
		return false;
	pid = cJSON_GetArrayItem(pair, 0);
	if (!number_to_u64(pid, &v) || v > INT_MAX)
		return false;
	pause->pid = (int)v;
	return number_to_u64(cJSON_GetArrayItem(pair, 1), &pause->stopped_at);
}

static int parse_pressure(struct stats_file *sf, struct row *row)
{
	const cJSON *pids, *pair;
	struct stats_pause *pauses;
	const char *ring;
	size_t nr = 0;
	uint64_t t;
	int err;

	if (!row__string(row, "ring", &ring, true) ||
	    !row__u64(row, "t", &t, NULL))
		return -EINVAL;
	pids = row__field(row, "pids");
	if (pids && !cJSON_IsArray(pids))
		return row__malformed(row, "\"pids\" is not an array");

	pauses = calloc(pids ? cJSON_GetArraySize(pids) + 1 : 1, sizeof(*pauses));
	if (!pauses)
		return -ENOMEM;
	cJSON_ArrayForEach(pair, pids) {
		if (!pause_from_json(pair, &pauses[nr])) {
			free(pauses);
			return row__malformed(row, "\"pids\" holds something other than [pid, stopped_at]");
		}
		nr++;
	}
	err = stats_file__add_pressure(sf, ring, t, pauses, nr);
	free(pauses);
	return err;
}

static int parse_backlog(struct stats_file *sf, struct row *row)
{
	uint64_t t, sent, received, rss = 0;
	bool has_rss;

	if (!row__u64(row, "t", &t, NULL) ||
	    !row__u64(row, "sent", &sent, NULL) ||
	    !row__u64(row, "received", &received, NULL) ||
	    !row__u64(row, "rss", &rss, &has_rss))
		return -EINVAL;
	return stats_file__add_backlog(sf, t, sent, received, rss);
}

static int parse_resolve(struct stats_file *sf, struct row *row)
{
	uint64_t t0, t1, n = 0;
	bool has_n;

	if (!row__u64(row, "t0", &t0, NULL) ||
	    !row__u64(row, "t1", &t1, NULL) ||
	    !row__u64(row, "n", &n, &has_n))
		return -EINVAL;
	if (t1 < t0)
		return row__malformed(row, "t1 is before t0");
	return stats_file__add_resolve(sf, t0, t1, n);
}

static int parse_encode(struct stats_file *sf, struct row *row)
{
	struct stats_encode_row e = { 0 };
	bool has_events, has_wait;

	if (!row__u64(row, "t", &e.t, NULL) ||
	    !row__u64(row, "events", &e.events, &has_events) ||
	    !row__u64(row, "wait_ns", &e.wait_ns, &has_wait) ||
	    !row__u64(row, "encode_ns", &e.encode_ns, NULL) ||
	    !row__u64(row, "write_ns", &e.write_ns, NULL) ||
	    !row__u64(row, "msgpack_bytes", &e.msgpack_bytes, NULL) ||
	    !row__u64(row, "zstd_bytes", &e.zstd_bytes, NULL))
		return -EINVAL;
	return stats_file__add_encode(sf, &e);
}

static int (*const row_parsers[STATS_KIND_MAX])(struct stats_file *, struct row *) = {
	[STATS_KIND_RING_OPEN]	= parse_ring_open,
	[STATS_KIND_RING]	= parse_ring,
	[STATS_KIND_PRESSURE]	= parse_pressure,
	[STATS_KIND_BACKLOG]	= parse_backlog,
	[STATS_KIND_RESOLVE]	= parse_resolve,
	[STATS_KIND_ENCODE]	= parse_encode,
};

static int parse_object(struct stats_file *sf, const cJSON *obj, char *why,
			size_t why_len)
{
	struct row row = { .obj = obj, .why = why, .why_len = why_len };
	const cJSON *k;
	int i;

	if (!cJSON_IsObject(obj)) {
		snprintf(why, why_len, "not a JSON object");
		return -EINVAL;
	}
	row.next = obj->child;
	k = row__field(&row, "k");
	if (!cJSON_IsString(k)) {
		snprintf(why, why_len, "no \"k\" string naming the kind of row");
		return -EINVAL;
	}
	for (i = 0; i < STATS_KIND_MAX; i++) {
		if (strcmp(k->valuestring, stats_kind_names[i]))
			continue;
		row.kind = stats_kind_names[i];
		return row_parsers[i](sf, &row);
	}
	sf->unknown++;
	pr_debug2("%s: skipping a row of unknown kind '%s'\n",
		  stats_file__name(sf), k->valuestring);
	return 1;
}

static bool is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

int stats_file__parse_line(struct stats_file *sf, char *line, size_t len,
			   char *why, size_t why_len)
{
	cJSON *obj;
	int ret;

	if (is_blank(line, len))
		return 1;
	sf->lines++;
	why[0] = '\0';
	/* counting the NUL makes cJSON reject anything after the object */
	obj = cJSON_ParseWithLengthOpts(line, len + 1, NULL, 1);
	if (!obj) {
		snprintf(why, why_len, "not valid JSON");
		ret = -EINVAL;
	} else {
		ret = parse_object(sf, obj, why, why_len);
		cJSON_Delete(obj);
	}
	if (ret == -EINVAL)
		sf->malformed++;
	return ret;
}

const char *stats_file__name(const struct stats_file *sf)
{
	return strcmp(sf->path, "-") ? sf->path : "<stdin>";
}

static int open_input(const struct stats_file *sf)
{
	int fd;

	if (!strcmp(sf->path, "-")) {
		fd = dup(STDIN_FILENO);
		if (fd < 0)
			return error_errno("cannot read the standard input");
		return fd;
	}
	fd = open(sf->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_errno("cannot open '%s'", sf->path);
	return fd;
}

static int report_malformed(struct stats_file *sf, const struct stats_read_opts *opts,
			    unsigned long lineno, const char *why)
{
	if (opts->strict)
		return error("%s:%lu: malformed line: %s", stats_file__name(sf),
			     lineno, why);
	if (sf->malformed <= opts->max_warnings)
		warning("%s:%lu: skipping malformed line: %s",
			stats_file__name(sf), lineno, why);
	return 0;
}

static int read_lines(struct stats_file *sf, struct line_reader *lr,
		      const struct stats_read_opts *opts)
{
	char why[256], *line;
	size_t len;
	int ret;

	while ((ret = line_reader__next(lr, &line, &len)) == 1) {
		if (lr->too_long) {
			sf->lines++;
			sf->malformed++;
			snprintf(why, sizeof(why), "longer than %d MiB",
				 STATS_MAX_LINE >> 20);
			ret = -EINVAL;
		} else {
			ret = stats_file__parse_line(sf, line, len, why, sizeof(why));
		}
		if (ret == -ENOMEM)
			return error("out of memory reading '%s'", stats_file__name(sf));
		if (ret == -EINVAL && report_malformed(sf, opts, lr->lineno, why))
			return -1;
	}
	if (ret == -EIO)
		return error_errno("cannot read '%s'", stats_file__name(sf));
	if (ret == -ENOMEM)
		return error("out of memory reading '%s'", stats_file__name(sf));
	return 0;
}

int stats_file__read(struct stats_file *sf, const struct stats_read_opts *opts)
{
	struct line_reader lr = { 0 };
	int ret;

	lr.fd = open_input(sf);
	if (lr.fd < 0)
		return -1;
	lr.block = malloc(READ_BLOCK);
	if (!lr.block) {
		close(lr.fd);
		return error("out of memory reading '%s'", stats_file__name(sf));
	}

	ret = read_lines(sf, &lr, opts);
	if (!ret && sf->malformed > opts->max_warnings)
		warning("%s: %lu more malformed lines skipped",
			stats_file__name(sf), sf->malformed - opts->max_warnings);
	if (!ret && sf->unknown)
		pr_debug("%s: skipped %lu rows of unknown kinds\n",
			 stats_file__name(sf), sf->unknown);

	free(lr.line);
	free(lr.block);
	close(lr.fd);
	return ret;
}

int stats_file__check(const struct stats_file *sf)
{
	const char *name = stats_file__name(sf);

	if (!sf->lines)
		return error("'%s' is empty; record one with 'memtrack track --stats <file>'",
			     name);
	if (!sf->rows[STATS_KIND_RING])
		return error("no ring rows in '%s' (%lu lines); was it written by 'memtrack track --stats'?",
			     name, sf->lines);
	return 0;
}
