// SPDX-License-Identifier: GPL-2.0
/*
 * A table file: a header page, then the table's 2 MiB at the same offsets
 * as in the memfd, its untouched pages left as holes: it is written, and
 * counted, by extents (SEEK_DATA), and copied whole into a run's table by
 * the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/shim-abi.h"
#include "util/track/rule-cache.h"
#include "util/util.h"

#define HEADER_BYTES	4096
#define CHUNK_BYTES	(64U << 10)
#define RULES_MAGIC	"memtrack-cfi-rules 1\n"
#define RULES_WORTH_KEEPING	256	/* computed in a run: 0.2-0.5 ms, as much as the write */

struct rules_header {
	char magic[sizeof(RULES_MAGIC)];
	uint32_t order;			/* SHIM_RULES_ORDER */
	uint32_t slot_bytes;
};

_Static_assert(SHIM_RULES_SIZE % CHUNK_BYTES == 0, "chunks tile the table");

typedef int extent_fn(const uint8_t *buf, size_t len, off_t at, void *arg);

/* each stretch of data of fd in [from, from + size), in chunks, at its offset from `from` */
static int for_each_extent(int fd, off_t from, size_t size, extent_fn *fn, void *arg)
{
	uint8_t *buf = malloc(CHUNK_BYTES);
	off_t at = from, end = from + (off_t)size, hole;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && at < end) {
		at = lseek(fd, at, SEEK_DATA);
		if (at < 0 || at >= end) {
			err = at < 0 && errno != ENXIO ? -errno : 0;
			break;
		}
		hole = lseek(fd, at, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		while (!err && at < hole) {
			size_t len = hole - at < CHUNK_BYTES ? (size_t)(hole - at) : CHUNK_BYTES;
			ssize_t n = pread(fd, buf, len, at);

			if (n <= 0) {
				err = n < 0 ? -errno : -EIO;
				break;
			}
			err = fn(buf, n, at - from, arg);
			at += n;
		}
	}
	free(buf);
	return err;
}

static uint64_t used_slots(const uint8_t *buf, size_t len)
{
	const struct shim_rule_slot *s = (const void *)buf;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < len / sizeof(*s); i++)
		n += !!s[i].key;
	return n;
}

static int count_extent(const uint8_t *buf, size_t len, off_t at, void *arg)
{
	(void)at;
	*(uint64_t *)arg += used_slots(buf, len);
	return 0;
}

int64_t rule_table__count(int fd)
{
	uint64_t n = 0;

	return for_each_extent(fd, 0, SHIM_RULES_SIZE, count_extent, &n) ? -1 : (int64_t)n;
}

struct copy {
	int to;
	off_t base;		/* where the table starts in the file written */
	uint64_t used;		/* rules copied */
};

static int copy_extent(const uint8_t *buf, size_t len, off_t at, void *arg)
{
	struct copy *c = arg;

	/* a torn slot, half another shim's, fails its check where it is read */
	if (pwrite(c->to, buf, len, c->base + at) != (ssize_t)len)
		return -EIO;
	c->used += used_slots(buf, len);
	return 0;
}

static void file_name(const struct rule_cache *c, char *name, size_t len, const char *suffix)
{
	snprintf(name, len, "cfi-rules.%u%s", (unsigned int)c->uid, suffix);
}

/* the file, if it is one a run of ours wrote for this user: its fd (O_RDONLY or O_RDWR), else -1 */
static int open_trusted(const struct rule_cache *c, int flags)
{
	struct rules_header h;
	char name[64];
	struct stat st;
	int fd;

	file_name(c, name, sizeof(name), "");
	fd = openat(c->dir, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size != HEADER_BYTES + (off_t)SHIM_RULES_SIZE ||
	    pread(fd, &h, sizeof(h), 0) != sizeof(h) || memcmp(h.magic, RULES_MAGIC, sizeof(h.magic)) ||
	    h.order != SHIM_RULES_ORDER || h.slot_bytes != sizeof(struct shim_rule_slot)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* the file's table into the shared one, the kernel copying page to page */
static bool copy_table(int from, int to)
{
	off_t at = HEADER_BYTES;
	size_t left = SHIM_RULES_SIZE;
	ssize_t n;

	if (lseek(to, 0, SEEK_SET))
		return false;
	while (left && (n = sendfile(to, from, &at, left)) > 0)
		left -= n;
	return !left;
}

static void *load_rules(void *arg)
{
	struct rule_cache *c = arg;
	int fd = open_trusted(c, O_RDONLY);
	uint64_t n = 0;

	name_thread("rule-cache");
	if (fd < 0)
		return NULL;
	c->had_file = true;
	/* the count is -v's alone: a second pass over the file, only then */
	if (copy_table(fd, c->table) && c->count &&
	    !for_each_extent(fd, HEADER_BYTES, SHIM_RULES_SIZE, count_extent, &n))
		c->loaded = n;
	close(fd);
	return NULL;
}

void rule_cache__start(struct rule_cache *c, int dir, uid_t uid, int table_fd, bool count)
{
	*c = (struct rule_cache){ .dir = -1, .uid = uid, .table = -1, .count = count };
	if (dir < 0 || table_fd < 0)
		return;
	c->dir = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	c->table = fcntl(table_fd, F_DUPFD_CLOEXEC, 3);
	if (c->dir < 0 || c->table < 0)
		return;
	c->loading = !pthread_create(&c->loader, NULL, load_rules, c);
}

/*
 * Over the file read at the start, in place: its pages are in the page
 * cache already, and a new file put in its place cost every save 2.7-2.9 ms
 * (pages allocated and charged again, and ext4 flushes a file renamed over
 * another).  A run reading it meanwhile may find a slot torn between two
 * writers: the shim's check of the slot refuses it, and the rule is
 * computed again.  0, or -1 when it is not the file read (then replaced).
 */
static int save_in_place(struct rule_cache *c)
{
	struct copy cp = { .base = HEADER_BYTES };
	int err;

	if (!c->had_file || (cp.to = open_trusted(c, O_RDWR)) < 0)
		return -1;
	err = for_each_extent(c->table, 0, SHIM_RULES_SIZE, copy_extent, &cp);
	return close(cp.to) || err ? -1 : 0;
}

/* the table written whole to a file of its own, then put in the old one's place */
static void save_rules(struct rule_cache *c)
{
	struct rules_header h = { .magic = RULES_MAGIC, .order = SHIM_RULES_ORDER,
				  .slot_bytes = sizeof(struct shim_rule_slot) };
	char suffix[32], tmp[64], name[64];
	struct copy cp = { .base = HEADER_BYTES };
	bool ok;

	if (!save_in_place(c))
		return;
	snprintf(suffix, sizeof(suffix), ".%d.tmp", (int)getpid());
	file_name(c, tmp, sizeof(tmp), suffix);
	file_name(c, name, sizeof(name), "");
	cp.to = openat(c->dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (cp.to < 0)
		return;
	ok = pwrite(cp.to, &h, sizeof(h), 0) == sizeof(h) &&
	     !for_each_extent(c->table, 0, SHIM_RULES_SIZE, copy_extent, &cp) &&
	     !ftruncate(cp.to, HEADER_BYTES + (off_t)SHIM_RULES_SIZE);
	if (close(cp.to) || !ok || renameat(c->dir, tmp, c->dir, name))
		unlinkat(c->dir, tmp, 0);
}

void rule_cache__wait(struct rule_cache *c)
{
	if (c->loading)
		pthread_join(c->loader, NULL);
	c->loading = false;
}

/* how many rules the run's shims computed and put in the table; 0 when it cannot be read */
static uint64_t rules_stored(int table)
{
	struct shim_rules_tail tail;

	return pread(table, &tail, sizeof(tail), SHIM_RULES_SIZE) == sizeof(tail) ? tail.stored : 0;
}

/*
 * Written back when the run's shims computed rules and there was no file,
 * or more rules than the writing costs to keep: a rule takes 0.7-1.8 us
 * to compute, the table 0.5-0.7 ms to write in place.  The table keeps one
 * rule a slot, and the runs of different programs evict each other's (a
 * clang after a gcc computes hundreds again): written after every such
 * run, it costs each of them the write.
 */
void rule_cache__finish(struct rule_cache *c)
{
	rule_cache__wait(c);
	if (c->table >= 0)
		c->stored = rules_stored(c->table);
	if (c->dir >= 0 && c->stored && (!c->had_file || c->stored >= RULES_WORTH_KEEPING))
		save_rules(c);
	if (c->table >= 0)
		close(c->table);
	if (c->dir >= 0)
		close(c->dir);
	c->table = c->dir = -1;
}

uint64_t rule_cache__loaded(const struct rule_cache *c)
{
	return c->loaded;
}

uint64_t rule_cache__stored(const struct rule_cache *c)
{
	return c->stored;
}
