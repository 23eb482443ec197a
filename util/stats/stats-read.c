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
#include "util/stats/stats-read.h"
#include "util/usage.h"

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

/* "pids": [[pid, stopped_at], ...], into pauses (freed by the caller) */
static int row__pauses(struct row *row, const char *key, bool optional,
		       struct stats_values *v, struct stats_pause **pauses)
{
	const cJSON *pids = row__field(row, key), *pair;
	size_t nr = 0;

	if (!pids && optional)
		return 0;
	if (!cJSON_IsArray(pids))
		return row__malformed(row, "\"%s\" is %s", key, pids ? "not an array" : "missing");
	*pauses = calloc(cJSON_GetArraySize(pids) + 1, sizeof(**pauses));
	if (!*pauses)
		return -ENOMEM;
	cJSON_ArrayForEach(pair, pids) {
		if (!pause_from_json(pair, &(*pauses)[nr]))
			return row__malformed(row, "\"%s\" holds something other than "
					      "[pid, stopped_at]", key);
		nr++;
	}
	v->pauses = *pauses;
	v->nr_pauses = nr;
	return 0;
}

/* the keys of the row's kind, as stats-format.h lists them */
static int row__values(struct row *row, enum stats_kind kind, struct stats_values *v,
		       struct stats_pause **pauses)
{
	const struct stats_row_format *fmt = &stats_row_formats[kind];
	unsigned int i;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < fmt->nr; i++) {
		enum stats_key key = fmt->fields[i].key;
		bool optional = fmt->fields[i].optional, present = true;
		const char *name = stats_key_names[key];
		int err;

		switch (stats_key_types[key]) {
		case STATS_U64:
			if (!row__u64(row, name, &v->u[key], optional ? &present : NULL))
				return -EINVAL;
			break;
		case STATS_STRING:
			if (!row__string(row, name, &v->ring, optional))
				return -EINVAL;
			present = v->ring != NULL;
			break;
		case STATS_PAUSES:
			err = row__pauses(row, name, optional, v, pauses);
			if (err)
				return err;
			present = v->pauses != NULL;
			break;
		}
		if (present)
			v->has |= 1u << key;
	}
	return 0;
}

/* what the derivations rely on beyond the types */
static int row__check(struct row *row, enum stats_kind kind, const struct stats_values *v)
{
	const uint64_t *u = v->u;

	if ((kind == STATS_KIND_RING || kind == STATS_KIND_RESOLVE) &&
	    u[STATS_KEY_T1] < u[STATS_KEY_T0])
		return row__malformed(row, "t1 is before t0");
	if (kind != STATS_KIND_RING)
		return 0;
	if (u[STATS_KEY_PROD1] < u[STATS_KEY_PROD0] || u[STATS_KEY_CONS1] < u[STATS_KEY_CONS0])
		return row__malformed(row, "positions go backwards");
	if (u[STATS_KEY_CONS0] > u[STATS_KEY_PROD0] || u[STATS_KEY_CONS1] > u[STATS_KEY_PROD1])
		return row__malformed(row, "consumer ahead of producer");
	return 0;
}

/* the kind named by "k": 0, 1 for a kind we do not know, or -EINVAL */
static int row__kind(struct row *row, struct stats_line *l, const char **unknown)
{
	const cJSON *k;
	int i;

	if (!cJSON_IsObject(row->obj)) {
		snprintf(row->why, row->why_len, "not a JSON object");
		return -EINVAL;
	}
	row->next = row->obj->child;
	k = row__field(row, "k");
	if (!cJSON_IsString(k)) {
		snprintf(row->why, row->why_len, "no \"k\" string naming the kind of row");
		return -EINVAL;
	}
	for (i = 0; i < STATS_KIND_MAX; i++) {
		if (!strcmp(k->valuestring, stats_kind_names[i])) {
			row->kind = stats_kind_names[i];
			l->kind = i;
			return 0;
		}
	}
	*unknown = k->valuestring;
	return 1;
}

int stats_line__parse(struct stats_line *l, char *line, size_t len, char *why,
		      size_t why_len, const char **unknown)
{
	struct row row = { .why = why, .why_len = why_len };
	int ret;

	memset(l, 0, sizeof(*l));
	why[0] = '\0';
	/* counting the NUL makes cJSON reject anything after the object */
	l->obj = cJSON_ParseWithLengthOpts(line, len + 1, NULL, 1);
	if (!l->obj) {
		snprintf(why, why_len, "not valid JSON");
		return -EINVAL;
	}
	row.obj = l->obj;
	ret = row__kind(&row, l, unknown);
	if (!ret)
		ret = row__values(&row, l->kind, &l->v, &l->pauses);
	if (!ret)
		ret = row__check(&row, l->kind, &l->v);
	return ret;
}

void stats_line__exit(struct stats_line *l)
{
	cJSON_Delete(l->obj);
	free(l->pauses);
	memset(l, 0, sizeof(*l));
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
	const char *unknown = NULL;
	struct stats_line l;
	int ret;

	if (is_blank(line, len))
		return 1;
	sf->lines++;
	ret = stats_line__parse(&l, line, len, why, why_len, &unknown);
	if (ret == 1) {
		sf->unknown++;
		pr_debug2("%s: skipping a row of unknown kind '%s'\n",
			  stats_file__name(sf), unknown);
	} else if (!ret) {
		ret = stats_file__add_row(sf, l.kind, &l.v);
	}
	stats_line__exit(&l);
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

static void warn_late_rows(const struct stats_file *sf)
{
	size_t i;

	for (i = 0; i < sf->nr_rings; i++)
		if (sf->rings[i]->late_rows)
			warning("%s: %lu rows of ring '%s' came more than %d rows out of time "
				"order: its write and drain peaks are not given",
				stats_file__name(sf), sf->rings[i]->late_rows,
				sf->rings[i]->name, STATS_REORDER_ROWS);
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
	if (!ret && stats_file__finish(sf))
		ret = error("out of memory reading '%s'", stats_file__name(sf));
	if (!ret && sf->malformed > opts->max_warnings)
		warning("%s: %lu more malformed lines skipped",
			stats_file__name(sf), sf->malformed - opts->max_warnings);
	if (!ret && sf->unknown)
		pr_debug("%s: skipped %lu rows of unknown kinds\n",
			 stats_file__name(sf), sf->unknown);
	if (!ret)
		warn_late_rows(sf);
	if (!ret && sf->skipped_rows)
		warning("%s: more than %d ring names; %lu rows of the others skipped",
			stats_file__name(sf), STATS_MAX_RINGS, sf->skipped_rows);

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
