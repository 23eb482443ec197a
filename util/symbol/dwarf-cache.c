// SPDX-License-Identifier: GPL-2.0
/*
 * A file per build id, of lines:
 *
 *	memtrack-dwarf-cache 2 <build id, hex> <file hash, hex>
 *	<address, hex> <number of frames>
 *	<line>\t<function>\t<file>		one per frame, "" for none
 *
 * The file hash is SipHash-2-4 of the whole file the DWARF was read from,
 * keyed by the directory's secret (its file "key", the cache owner's):
 * a build id is the word of whoever linked the file, and another user's
 * program of a victim's build id must not answer for the victim.
 *
 * Beside it, <build id>.ident holds the hash with the file's identity
 * when it was hashed, "dev:ino:size:mtime:ctime" in hex, written only where
 * the identity can stand for the contents (see ident_of_image()):
 *
 *	memtrack-dwarf-ident 1 <file hash, hex> <file identity>
 *
 * A file found with the same identity is taken for hashed, as git takes an
 * index entry's stat data, without reading its megabytes again (libc6-dbg's
 * 4.2 MB took 4-8 ms a run).  A file of its own, so that the cache files
 * stay as memtrack versions before it read and write them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "util/proc-maps.h"
#include "util/symbol/dwarf-cache.h"
#include "util/u64-map.h"
#include "util/util.h"

#define CACHE_MAGIC		"memtrack-dwarf-cache 2 "
#define IDENT_MAGIC		"memtrack-dwarf-ident 1 "
#define IDENT_SUFFIX		".ident"
#define KEY_FILE		"key"
#define KEY_BYTES		16
#define MAX_FILE_BYTES		(64U << 20)
#define MAX_FRAMES		64
#define MAX_ID			64	/* bytes of build id */
#define IDENT_MAX		96
#define SETTLED_NS		(2 * NSEC_PER_SEC)

struct cache_entry {
	uint64_t addr;
	uint32_t first, n;	/* frames[first .. first + n) */
};

struct dwarf_cache {
	int dir;
	char name[2 * MAX_ID + 1];	/* the build id in hex: the file's name */
	uint64_t hash;			/* of the file the DWARF is read from */
	struct u64_map by_addr;		/* addr -> index in entries + 1 */
	struct cache_entry *entries;
	size_t nr, cap, loaded;
	struct src_frame *frames;
	size_t nr_frames, frames_cap;
	char **strs;
	size_t nr_strs, strs_cap;
	bool dirty;
	bool hashed;			/* the file was read for its hash, not taken by identity */
	char ident[IDENT_MAX];		/* of the file, when it can stand for its hash; or "" */
};

static int refuse_dir(int fd, char *why, size_t len, const char *path, const char *what)
{
	snprintf(why, len, "%s %s", path, what);
	if (fd >= 0)
		close(fd);
	return -1;
}

int dwarf_cache__open_dir(char *why, size_t len)
{
	const char *path = getenv(DWARF_CACHE_ENV);
	struct stat st;
	int fd;

	if (path && !*path)
		return refuse_dir(-1, why, len, DWARF_CACHE_ENV, "is empty: no cache");
	if (!path) {
		if (geteuid())
			return refuse_dir(-1, why, len, DWARF_CACHE_ROOT_DIR, "is root's");
		path = DWARF_CACHE_ROOT_DIR;
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return refuse_dir(-1, why, len, path, strerror(errno));
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return refuse_dir(-1, why, len, path, strerror(errno));
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return refuse_dir(fd, why, len, path, "may be written by another user");
	return fd;
}

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0]; v[0] = ROTL(v[0], 32);
	v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2]; v[2] = ROTL(v[2], 32);
}

static void sip_word(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

/* SipHash-2-4 (Aumasson and Bernstein), little-endian words */
static uint64_t siphash(const uint8_t key[KEY_BYTES], const uint8_t *p, size_t len)
{
	uint64_t k0, k1, v[4], m, last = (uint64_t)len << 56;
	size_t i, tail = len & 7;

	memcpy(&k0, key, 8);
	memcpy(&k1, key + 8, 8);
	v[0] = k0 ^ 0x736f6d6570736575ULL;
	v[1] = k1 ^ 0x646f72616e646f6dULL;
	v[2] = k0 ^ 0x6c7967656e657261ULL;
	v[3] = k1 ^ 0x7465646279746573ULL;
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8);
		sip_word(v, m);
	}
	for (i = 0; i < tail; i++)
		last |= (uint64_t)p[len - tail + i] << (8 * i);
	sip_word(v, last);
	v[2] ^= 0xff;
	sip_round(v);
	sip_round(v);
	sip_round(v);
	sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* file systems whose times only the kernel sets: not FUSE's or a network server's word */
static bool local_fs(long type)
{
	switch (type) {
	case EXT4_SUPER_MAGIC: case XFS_SUPER_MAGIC: case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC: case OVERLAYFS_SUPER_MAGIC: case SQUASHFS_MAGIC: case F2FS_SUPER_MAGIC:
		return true;
	}
	return false;
}

static bool settled(const struct timespec *ctime)
{
	struct timespec now;
	uint64_t c = ctime->tv_sec * NSEC_PER_SEC + ctime->tv_nsec;

	clock_gettime(CLOCK_REALTIME, &now);
	return c + SETTLED_NS < now.tv_sec * NSEC_PER_SEC + (uint64_t)now.tv_nsec;
}

/* the mapping of ours that image starts, the whole of a file's size */
static bool mapping_of(const void *image, size_t size, struct proc_map *out)
{
	struct proc_maps it;
	struct proc_map m;
	bool found = false;

	if (proc_maps__open(&it, getpid()))
		return false;
	while (!found && proc_maps__next(&it, &m) > 0)
		found = m.start == (uintptr_t)image && !m.pgoff && m.ino && m.end - m.start >= size;
	proc_maps__close(&it);
	if (found)
		*out = m;
	return found;
}

/*
 * The identity of the file mapped at image, when it can stand for a hash
 * of its contents: a regular file only root can have written (root's, not
 * writable by group or others), on a file system whose times the kernel
 * keeps, changed more than 2 s ago (a write in the same clock tick as the
 * hash would keep its times: git's racy entries).  False: hash it.
 */
static bool ident_of_image(const void *image, size_t size, char *out, size_t len)
{
	char path[64];
	struct proc_map m;
	struct statfs sf;
	struct stat st;

	if (!mapping_of(image, size, &m))
		return false;
	snprintf(path, sizeof(path), "/proc/self/map_files/%" PRIx64 "-%" PRIx64, m.start, m.end);
	if (stat(path, &st) || statfs(path, &sf) || !S_ISREG(st.st_mode) || st.st_ino != m.ino ||
	    (uint64_t)st.st_size != size || st.st_uid || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    !local_fs(sf.f_type) || !settled(&st.st_ctim))
		return false;
	snprintf(out, len, "%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64 ".%lx:%" PRIx64 ".%lx",
		 (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
		 (uint64_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (uint64_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	return true;
}

static bool read_old_key(int dir, uint8_t key[KEY_BYTES])
{
	int fd = openat(dir, KEY_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	bool ok;

	if (fd < 0)
		return false;
	ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	     !(st.st_mode & 077) && read(fd, key, KEY_BYTES) == KEY_BYTES;
	close(fd);
	return ok;
}

/* the directory's secret: read, or made by the first run */
static bool read_key(int dir, uint8_t key[KEY_BYTES])
{
	char tmp[32];
	bool ok;
	int fd;

	if (read_old_key(dir, key))
		return true;
	if (getrandom(key, KEY_BYTES, 0) != KEY_BYTES)
		return false;
	snprintf(tmp, sizeof(tmp), KEY_FILE ".%d.tmp", (int)getpid());
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	ok = write(fd, key, KEY_BYTES) == KEY_BYTES;
	close(fd);
	/* linked, not renamed: of two first runs at once, both keep the winner's */
	ok = ok && !linkat(dir, tmp, dir, KEY_FILE, 0);
	unlinkat(dir, tmp, 0);
	return ok || read_old_key(dir, key);
}

static const char *keep_string(struct dwarf_cache *c, const char *s, size_t len)
{
	char *copy;

	if (!len || grow_array((void **)&c->strs, &c->strs_cap, c->nr_strs + 1, sizeof(char *)))
		return NULL;
	copy = strndup(s, len);
	if (copy)
		c->strs[c->nr_strs++] = copy;
	return copy;
}

/* a string that can stand in a line of the file */
static bool plain(const char *s)
{
	return !s || !s[strcspn(s, "\t\n\r")];
}

static int add_entry(struct dwarf_cache *c, uint64_t addr, uint32_t n)
{
	struct cache_entry *e;
	bool added;

	if (grow_array((void **)&c->frames, &c->frames_cap, c->nr_frames + n, sizeof(*c->frames)))
		return -ENOMEM;
	e = u64_map__element(&c->by_addr, addr, (void **)&c->entries, &c->nr, &c->cap,
			     sizeof(*c->entries), &added);
	if (!e)
		return -ENOMEM;
	if (!added)
		return -EEXIST;
	*e = (struct cache_entry){ .addr = addr, .first = c->nr_frames, .n = n };
	return 0;
}

void dwarf_cache__add(struct dwarf_cache *c, uint64_t addr, const struct src_frame *src, int n)
{
	int i;

	if (!c || n < 0 || n > MAX_FRAMES)
		return;
	for (i = 0; i < n; i++)
		if (!plain(src[i].function) || !plain(src[i].file))
			return;
	if (add_entry(c, addr, n))
		return;
	for (i = 0; i < n; i++) {
		struct src_frame *f = &c->frames[c->nr_frames++];

		f->function = src[i].function ?
			      keep_string(c, src[i].function, strlen(src[i].function)) : NULL;
		f->file = src[i].file ? keep_string(c, src[i].file, strlen(src[i].file)) : NULL;
		f->line = src[i].line;
	}
	c->dirty = true;
}

bool dwarf_cache__find(const struct dwarf_cache *c, uint64_t addr, struct src_frame *out,
		       int max, int *n)
{
	const uint64_t *i = c ? u64_map__find(&c->by_addr, addr) : NULL;
	const struct cache_entry *e;

	if (!i)
		return false;
	e = &c->entries[*i];
	*n = (int)e->n < max ? (int)e->n : max;
	memcpy(out, c->frames + e->first, *n * sizeof(*out));
	return true;
}

/* ---- the file ---------------------------------------------------------- */

/* the next line of [*p, end) without its '\n'; NULL when none is whole */
static char *next_line(char **p, char *end, size_t *len)
{
	char *line = *p, *nl;

	if (line >= end || !(nl = memchr(line, '\n', end - line)))
		return NULL;
	*len = nl - line;
	*nl = 0;
	*p = nl + 1;
	return line;
}

static bool parse_u64(const char *s, int base, uint64_t max, uint64_t *v)
{
	char *e;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	*v = strtoull(s, &e, base);
	return !errno && !*e && *v <= max;
}

/* "<line>\t<function>\t<file>" */
static bool parse_frame(struct dwarf_cache *c, char *line, size_t len)
{
	char *tab1 = memchr(line, '\t', len), *tab2;
	struct src_frame *f = &c->frames[c->nr_frames];
	uint64_t lineno;

	if (!tab1 || !(tab2 = memchr(tab1 + 1, '\t', line + len - tab1 - 1)) ||
	    memchr(tab2 + 1, '\t', line + len - tab2 - 1))
		return false;
	*tab1 = 0;
	if (!parse_u64(line, 10, UINT32_MAX, &lineno))
		return false;
	f->line = lineno;
	f->function = keep_string(c, tab1 + 1, tab2 - tab1 - 1);
	f->file = keep_string(c, tab2 + 1, line + len - tab2 - 1);
	if ((tab2 - tab1 > 1 && !f->function) || (line + len - tab2 > 1 && !f->file))
		return false;
	c->nr_frames++;
	return true;
}

/* "<addr> <n>", then its n frames */
static bool parse_entry(struct dwarf_cache *c, char *line, char **p, char *end)
{
	char *space = strchr(line, ' ');
	uint64_t addr, n, i;
	size_t len;

	if (!space)
		return false;
	*space = 0;
	if (!parse_u64(line, 16, UINT64_MAX, &addr) ||
	    !parse_u64(space + 1, 10, MAX_FRAMES, &n) || add_entry(c, addr, n))
		return false;
	for (i = 0; i < n; i++)
		if (!(line = next_line(p, end, &len)) || !parse_frame(c, line, len))
			return false;
	return true;
}

static void forget(struct dwarf_cache *c)
{
	size_t i;

	for (i = 0; i < c->nr_strs; i++)
		free(c->strs[i]);
	c->nr_strs = c->nr = c->nr_frames = 0;
	u64_map__exit(&c->by_addr);
	u64_map__init(&c->by_addr);
}

static bool parse(struct dwarf_cache *c, char *buf, size_t size)
{
	char *p = buf, *end = buf + size, *line;
	char header[sizeof(CACHE_MAGIC) + sizeof(c->name) + 17];
	size_t len;

	snprintf(header, sizeof(header), CACHE_MAGIC "%s %016" PRIx64, c->name, c->hash);
	line = next_line(&p, end, &len);
	if (!line || strcmp(line, header))
		return false;
	while (p < end) {
		line = next_line(&p, end, &len);
		if (!line || memchr(line, 0, len) || !parse_entry(c, line, &p, end))
			return false;
	}
	return true;
}

static void load(struct dwarf_cache *c)
{
	int fd = openat(c->dir, c->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	ssize_t got = 0, n;
	char *buf;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size <= 0 || st.st_size > MAX_FILE_BYTES || !(buf = malloc(st.st_size))) {
		close(fd);
		return;
	}
	while (got < st.st_size && ((n = read(fd, buf + got, st.st_size - got)) > 0 ||
				    (n < 0 && errno == EINTR)))
		got += n > 0 ? n : 0;
	close(fd);
	if (got == st.st_size && parse(c, buf, got))
		c->loaded = c->nr;
	else
		forget(c);
	free(buf);
}

/* "<build id>.ident" */
static void ident_name(const struct dwarf_cache *c, char *name, size_t len)
{
	snprintf(name, len, "%s" IDENT_SUFFIX, c->name);
}

/* the hash kept for the file's identity, from its .ident file: false when none */
static bool hash_of_ident(const struct dwarf_cache *c, uint64_t *hash)
{
	char name[sizeof(c->name) + sizeof(IDENT_SUFFIX)], want[sizeof(IDENT_MAGIC) + 17 + IDENT_MAX + 1];
	char line[sizeof(want) + 1];
	uint64_t h = 0;
	struct stat st;
	ssize_t n;
	int fd;

	ident_name(c, name, sizeof(name));
	fd = openat(c->dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ? -1 :
	    read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return false;
	line[n] = 0;
	if (strncmp(line, IDENT_MAGIC, strlen(IDENT_MAGIC)) ||
	    strspn(line + strlen(IDENT_MAGIC), "0123456789abcdef") != 16 ||
	    sscanf(line + strlen(IDENT_MAGIC), "%16" SCNx64, &h) != 1)
		return false;
	snprintf(want, sizeof(want), IDENT_MAGIC "%016" PRIx64 " %s\n", h, c->ident);
	if (strcmp(line, want))
		return false;
	*hash = h;
	return true;
}

/* the hash just taken, kept with the file's identity: a file of our own, renamed over the old */
static void save_ident(const struct dwarf_cache *c)
{
	char name[sizeof(c->name) + sizeof(IDENT_SUFFIX)], tmp[sizeof(name) + 32];
	char line[sizeof(IDENT_MAGIC) + 17 + IDENT_MAX + 1];
	int fd, len;
	bool written;

	ident_name(c, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", name, (int)getpid());
	len = snprintf(line, sizeof(line), IDENT_MAGIC "%016" PRIx64 " %s\n", c->hash, c->ident);
	fd = openat(c->dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	written = write(fd, line, len) == len;
	if (close(fd) || !written || renameat(c->dir, tmp, c->dir, name))
		unlinkat(c->dir, tmp, 0);
}

struct dwarf_cache *dwarf_cache__open(int dir, const unsigned char *id, size_t len,
				      const void *image, size_t size)
{
	uint8_t key[KEY_BYTES];
	struct dwarf_cache *c;
	size_t i;

	if (dir < 0 || !len || len > MAX_ID || !image || !read_key(dir, key))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->dir = dir;
	u64_map__init(&c->by_addr);
	for (i = 0; i < len; i++)
		snprintf(c->name + 2 * i, 3, "%02x", id[i]);
	/* a file as it was when hashed is taken for hashed */
	if (!ident_of_image(image, size, c->ident, sizeof(c->ident)) || !hash_of_ident(c, &c->hash)) {
		c->hash = siphash(key, image, size);
		c->hashed = true;
		if (c->ident[0])
			save_ident(c);
	}
	load(c);
	return c;
}

bool dwarf_cache__hashed(const struct dwarf_cache *c)
{
	return c && c->hashed;
}

size_t dwarf_cache__loaded(const struct dwarf_cache *c)
{
	return c ? c->loaded : 0;
}

static void write_entries(const struct dwarf_cache *c, FILE *f)
{
	size_t i;
	uint32_t k;

	fprintf(f, CACHE_MAGIC "%s %016" PRIx64 "\n", c->name, c->hash);
	for (i = 0; i < c->nr; i++) {
		const struct cache_entry *e = &c->entries[i];

		fprintf(f, "%" PRIx64 " %u\n", e->addr, e->n);
		for (k = 0; k < e->n; k++) {
			const struct src_frame *fr = &c->frames[e->first + k];

			fprintf(f, "%u\t%s\t%s\n", fr->line, fr->function ? fr->function : "",
				fr->file ? fr->file : "");
		}
	}
}

/* a file of our own, then renamed over the old one: a reader sees either whole */
static void save(const struct dwarf_cache *c)
{
	char tmp[sizeof(c->name) + 32];
	FILE *f;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", c->name, (int)getpid());
	fd = openat(c->dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlinkat(c->dir, tmp, 0);
		return;
	}
	write_entries(c, f);
	if (ferror(f) | fclose(f) || renameat(c->dir, tmp, c->dir, c->name))
		unlinkat(c->dir, tmp, 0);
}

void dwarf_cache__save(struct dwarf_cache *c)
{
	if (!c || !c->dirty)
		return;
	save(c);
	c->dirty = false;
}

void dwarf_cache__close(struct dwarf_cache *c)
{
	if (!c)
		return;
	dwarf_cache__save(c);
	forget(c);
	u64_map__exit(&c->by_addr);
	free(c->entries);
	free(c->frames);
	free(c->strs);
	free(c);
}
