// SPDX-License-Identifier: GPL-2.0
/*
 * An entry: a header (the key, the counts, the sets and flags), then each
 * function the file defines as its index in alloc_symbols and its alloc_fn,
 * by increasing index.  Named by the file's device and inode and memtrack's
 * inode: a file replaced in place replaces its entry, and two memtracks (a
 * build and the one installed, a bench's baseline) keep one each.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/probe/bpf_code_cache.h"
#include "util/probe/allocators.h"
#include "util/probe/bpf_offsets_cache.h"
#include "util/usage.h"
#include "util/util.h"

#define CACHE_SUBDIR	"alloc-code"

static const char magic[8] = "MTACODE";

struct entry_header {
	char magic[8];
	struct alloc_code_key key;
	int32_t found;
	uint32_t nfns;
	uint32_t nr_symbols;		/* the writer's nr_alloc_symbols */
	uint8_t interp, sanitizer, sanitizer_runtime, pad;
	struct alloc_set defined, imports;
};

struct entry_fn {
	uint32_t index;
	uint32_t pad;
	struct alloc_fn fn;
};

#define ENTRIES_MAX	512
#define FNS_MAX		(sizeof(((struct alloc_code *)0)->fns) / sizeof(struct alloc_fn))
#define ENTRY_MAX	(sizeof(struct entry_header) + FNS_MAX * sizeof(struct entry_fn))

static void entry_name(const struct alloc_code_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%016llx-%016llx-%016llx", (unsigned long long)k->dev,
		 (unsigned long long)k->ino, (unsigned long long)k->self_ino);
}

static int self_identity(struct alloc_code_key *k)
{
	struct stat self;

	if (stat("/proc/self/exe", &self))
		return -errno;
	k->self_dev = self.st_dev;
	k->self_ino = self.st_ino;
	k->self_ctime_sec = self.st_ctim.tv_sec;
	k->self_ctime_nsec = self.st_ctim.tv_nsec;
	return 0;
}

int alloc_code_cache__key(int fd, struct alloc_code_key *k)
{
	struct stat st;

	memset(k, 0, sizeof(*k));
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->size = st.st_size;
	k->mtime_sec = st.st_mtim.tv_sec;
	k->mtime_nsec = st.st_mtim.tv_nsec;
	k->ctime_sec = st.st_ctim.tv_sec;
	k->ctime_nsec = st.st_ctim.tv_nsec;
	return self_identity(k);
}

/* no index past alloc_symbols': a reader may look each one up there */
static bool set_is_sane(const struct alloc_set *set)
{
	unsigned int i;

	for (i = nr_alloc_symbols; i < ALLOC_SET_WORDS * 64; i++)
		if (alloc_set__has(set, i))
			return false;
	return true;
}

static bool fn_is_sane(const struct entry_fn *e, uint32_t prev_index, bool first)
{
	return e->index < nr_alloc_symbols && (first || e->index > prev_index) &&
	       e->fn.offset && e->fn.nrets >= -1 && e->fn.nrets <= ALLOC_FN_RETS_MAX;
}

/* the entry in buf (len bytes) checked whole, into ac: its found, or -ENOENT */
static int unpack(const uint8_t *buf, size_t len, const struct alloc_code_key *k,
		  struct alloc_code *ac)
{
	const struct entry_header *h = (const void *)buf;
	const struct entry_fn *fns = (const void *)(h + 1);
	uint32_t i;

	if (len < sizeof(*h) || memcmp(h->magic, magic, sizeof(magic)) ||
	    memcmp(&h->key, k, sizeof(*k)) || h->nr_symbols != nr_alloc_symbols ||
	    h->nfns > nr_alloc_symbols || len != sizeof(*h) + h->nfns * sizeof(*fns) ||
	    h->found <= 0 || h->found > (int32_t)nr_alloc_symbols ||
	    !set_is_sane(&h->defined) || !set_is_sane(&h->imports))
		return -ENOENT;
	for (i = 0; i < h->nfns; i++)
		if (!fn_is_sane(&fns[i], i ? fns[i - 1].index : 0, !i))
			return -ENOENT;
	memset(ac, 0, sizeof(*ac));
	for (i = 0; i < nr_alloc_symbols; i++)
		ac->fns[i].nrets = -1;
	for (i = 0; i < h->nfns; i++)
		ac->fns[fns[i].index] = fns[i].fn;
	ac->defined = h->defined;
	ac->imports = h->imports;
	ac->interp = h->interp;
	ac->sanitizer = h->sanitizer;
	ac->sanitizer_runtime = h->sanitizer_runtime;
	ac->code_read = true;
	return h->found;
}

int alloc_code_cache__load(int dir, const struct alloc_code_key *k, struct alloc_code *ac)
{
	char name[64];
	uint8_t *buf;
	struct stat st;
	ssize_t n = -1;
	int fd, found = -ENOENT;

	entry_name(k, name, sizeof(name));
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	buf = malloc(ENTRY_MAX + 1);
	if (buf && !fstat(fd, &st) && stat_ours_alone(&st, S_IFREG, 077) &&
	    (size_t)st.st_size <= ENTRY_MAX)
		n = pread(fd, buf, ENTRY_MAX + 1, 0);
	if (n >= 0 && n == st.st_size)
		found = unpack(buf, n, k, ac);
	free(buf);
	close(fd);
	return found;
}

static size_t pack(uint8_t *buf, const struct alloc_code_key *k, const struct alloc_code *ac,
		   int found)
{
	struct entry_header *h = (void *)buf;
	struct entry_fn *fns = (void *)(h + 1);
	uint32_t i;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, magic, sizeof(magic));
	h->key = *k;
	h->found = found;
	h->nr_symbols = nr_alloc_symbols;
	h->interp = ac->interp;
	h->sanitizer = ac->sanitizer;
	h->sanitizer_runtime = ac->sanitizer_runtime;
	h->defined = ac->defined;
	h->imports = ac->imports;
	for (i = 0; i < nr_alloc_symbols; i++) {
		if (!ac->fns[i].offset)
			continue;
		memset(&fns[h->nfns], 0, sizeof(fns[h->nfns]));
		fns[h->nfns].index = i;
		fns[h->nfns++].fn = ac->fns[i];
	}
	return sizeof(*h) + h->nfns * sizeof(*fns);
}

struct aged_entry {
	char name[64];
	struct timespec mtime;
};

static int oldest_first(const void *a, const void *b)
{
	const struct timespec *x = &((const struct aged_entry *)a)->mtime;
	const struct timespec *y = &((const struct aged_entry *)b)->mtime;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/* the directory's entries with their times, in *v; how many, or -1 */
static int list_entries(int dir, struct aged_entry **v)
{
	int fd = dup(dir), n = 0;
	size_t cap = 0;
	struct dirent *d;
	struct stat st;
	DIR *dp;

	*v = NULL;
	if (fd < 0 || !(dp = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(dp);
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.' || strlen(d->d_name) >= sizeof((*v)->name) ||
		    fstatat(dir, d->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    grow_array((void **)v, &cap, n + 1, sizeof(**v)))
			continue;
		strcpy((*v)[n].name, d->d_name);
		(*v)[n++].mtime = st.st_mtim;
	}
	closedir(dp);
	return n;
}

/*
 * Past ENTRIES_MAX entries, the oldest go until three quarters are left:
 * each memtrack executable keeps its own, and builds come and go before
 * the next boot empties /run.
 */
static void prune(int dir)
{
	struct aged_entry *v;
	int n = list_entries(dir, &v), i;

	if (n > ENTRIES_MAX) {
		qsort(v, n, sizeof(*v), oldest_first);
		for (i = 0; i < n - ENTRIES_MAX * 3 / 4; i++)
			unlinkat(dir, v[i].name, 0);
	}
	free(v);
}

void alloc_code_cache__save(int dir, const struct alloc_code_key *k, const struct alloc_code *ac,
			    int found)
{
	char name[64], tmp[96];
	uint8_t *buf;
	size_t len;
	int fd;
	bool ok;

	/* what a run without the decoder (capstone) found is less than what it knows */
	if (found <= 0 || !ac->code_read || !(buf = malloc(ENTRY_MAX)))
		return;
	len = pack(buf, k, ac, found);
	entry_name(k, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", name, (int)getpid());
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ok = write(fd, buf, len) == (ssize_t)len;
		if (close(fd) || !ok || renameat(dir, tmp, dir, name))
			unlinkat(dir, tmp, 0);
	}
	free(buf);
	prune(dir);
}

int alloc_code_cache__open_dir(void)
{
	int run = offsets_cache__open_dir(), fd;
	struct stat st;

	if (run < 0)
		return -1;
	if (mkdirat(run, CACHE_SUBDIR, 0700) && errno != EEXIST) {
		close(run);
		return -1;
	}
	fd = openat(run, CACHE_SUBDIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(run);
	if (fd >= 0 && (fstat(fd, &st) || !stat_ours_alone(&st, S_IFDIR, 022))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int alloc_code__read_cached(const char *path, struct alloc_code *ac)
{
	int fd = open_regular(path), dir, found;
	struct alloc_code_key k;

	if (fd < 0)
		return alloc_code__read_fd(fd, ac);
	dir = alloc_code_cache__open_dir();
	if (dir < 0 || alloc_code_cache__key(fd, &k)) {
		if (dir >= 0)
			close(dir);
		return alloc_code__read_fd(fd, ac);
	}
	found = alloc_code_cache__load(dir, &k, ac);
	if (found > 0) {
		pr_debug("the allocator functions of %s, from /run/memtrack/" CACHE_SUBDIR "\n",
			 path);
		close(fd);
	} else {
		found = alloc_code__read_fd(fd, ac);
		alloc_code_cache__save(dir, &k, ac, found);
	}
	close(dir);
	return found;
}
