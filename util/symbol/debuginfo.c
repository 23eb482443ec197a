// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/symbol/debuginfo.h"
#include "util/symbol/elf-syms.h"
#include "util/usage.h"
#include "util/util.h"

#define MAX_BUILD_ID	64

/* libdebuginfod, loaded when DEBUGINFOD_URLS asks for it */
struct debuginfod_lib {
	void *so;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
	__typeof__(debuginfod_set_user_data) *set_user_data;
	__typeof__(debuginfod_get_user_data) *get_user_data;
};

struct debuginfo {
	char **dirs;
	size_t nr_dirs;
	pthread_mutex_t lock;		/* the stats and everything debuginfod */
	struct debuginfo_stats st;
	bool debuginfod_tried;		/* loading it was tried */
	bool debuginfod_off;		/* not set, not loadable, or given up on */
	struct debuginfod_lib lib;
	debuginfod_client *client;
	uint64_t budget_ns;		/* what the run may still spend on it */
	uint64_t deadline_ns;		/* of the lookup under way */
};

static int split_dirs(struct debuginfo *d, const char *dirs)
{
	char *copy, *tok, *save = NULL;
	size_t cap = 0;

	if (!dirs || !*dirs)
		return 0;
	copy = strdup(dirs);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (grow_array((void **)&d->dirs, &cap, d->nr_dirs + 1, sizeof(*d->dirs)) ||
		    !(d->dirs[d->nr_dirs] = strdup(tok))) {
			free(copy);
			return -ENOMEM;
		}
		d->nr_dirs++;
	}
	free(copy);
	return 0;
}

struct debuginfo *debuginfo__new(const char *dirs)
{
	struct debuginfo *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	pthread_mutex_init(&d->lock, NULL);
	d->budget_ns = DEBUGINFOD_RUN_BUDGET_MS * NSEC_PER_MSEC;
	if (split_dirs(d, dirs)) {
		debuginfo__delete(d);
		return NULL;
	}
	return d;
}

void debuginfo__delete(struct debuginfo *d)
{
	size_t i;

	if (!d)
		return;
	if (d->client)
		d->lib.end(d->client);
	/* libdebuginfod stays loaded: libcurl does not like to be unloaded */
	for (i = 0; i < d->nr_dirs; i++)
		free(d->dirs[i]);
	free(d->dirs);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* found locally: not under d->lock, which a debuginfod lookup may hold for seconds */
static void count(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static Elf *open_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? NULL : elf__from_fd(fd);
}

/* ---- by build id ---------------------------------------------------------- */

static Elf *find_by_build_id(struct debuginfo *d, const unsigned char *id, ssize_t len)
{
	char path[PATH_MAX], hex[2 * MAX_BUILD_ID + 1];
	ssize_t i;
	size_t k;
	Elf *dbg;

	if (len < 2)
		return NULL;
	for (i = 1; i < len; i++)
		sprintf(hex + 2 * (i - 1), "%02x", id[i]);
	for (k = 0; k < d->nr_dirs; k++) {
		if (snprintf(path, sizeof(path), "%s/.build-id/%02x/%s.debug", d->dirs[k],
			     id[0], hex) >= (int)sizeof(path))
			continue;
		dbg = open_elf(path);
		if (dbg) {
			count(&d->st.build_id);
			return dbg;
		}
	}
	return NULL;
}

/* ---- by .gnu_debuglink ------------------------------------------------------ */

/* the CRC-32 that .gnu_debuglink names: zlib's, of the whole file */
static bool crc_matches(Elf *dbg, GElf_Word crc)
{
	size_t size;
	const char *image = elf_rawfile(dbg, &size);
	uLong sum = crc32(0L, Z_NULL, 0);

	if (!image)
		return false;
	while (size) {
		uInt n = size > (1u << 30) ? 1u << 30 : (uInt)size;

		sum = crc32(sum, (const Bytef *)image, n);
		image += n;
		size -= n;
	}
	return (GElf_Word)sum == crc;
}

static Elf *try_debuglink(struct debuginfo *d, const char *path, GElf_Word crc)
{
	Elf *dbg = open_elf(path);

	if (!dbg || crc_matches(dbg, crc))
		return dbg;
	pr_debug("symbolize: '%s' is not the debug file it should be (CRC)\n", path);
	count(&d->st.crc_mismatch);
	elf_end(dbg);
	return NULL;
}

static Elf *find_by_debuglink(struct debuginfo *d, Elf *elf, const char *bin)
{
	const char *slash = strrchr(bin, '/'), *name;
	char path[PATH_MAX];
	GElf_Word crc;
	int dirlen;
	size_t k;
	Elf *dbg;

	name = dwelf_elf_gnu_debuglink(elf, &crc);
	/* a link is a file name: no directory part, no way out of the directories */
	if (!name || !*name || strchr(name, '/') || !slash || bin[0] != '/')
		return NULL;
	dirlen = slash - bin;
	if (snprintf(path, sizeof(path), "%.*s/%s", dirlen, bin, name) < (int)sizeof(path) &&
	    (dbg = try_debuglink(d, path, crc)))
		goto found;
	if (snprintf(path, sizeof(path), "%.*s/.debug/%s", dirlen, bin, name) < (int)sizeof(path) &&
	    (dbg = try_debuglink(d, path, crc)))
		goto found;
	for (k = 0; k < d->nr_dirs; k++) {
		if (snprintf(path, sizeof(path), "%s%.*s/%s", d->dirs[k], dirlen, bin,
			     name) < (int)sizeof(path) &&
		    (dbg = try_debuglink(d, path, crc)))
			goto found;
	}
	return NULL;
found:
	count(&d->st.debuglink);
	return dbg;
}

/* ---- from debuginfod --------------------------------------------------------- */

static bool load_debuginfod(struct debuginfod_lib *lib)
{
	lib->so = dlopen(DEBUGINFOD_SONAME, RTLD_LAZY | RTLD_LOCAL);
	if (!lib->so)
		return false;
	lib->begin = dlsym(lib->so, "debuginfod_begin");
	lib->end = dlsym(lib->so, "debuginfod_end");
	lib->find_debuginfo = dlsym(lib->so, "debuginfod_find_debuginfo");
	lib->set_progressfn = dlsym(lib->so, "debuginfod_set_progressfn");
	lib->set_user_data = dlsym(lib->so, "debuginfod_set_user_data");
	lib->get_user_data = dlsym(lib->so, "debuginfod_get_user_data");
	return lib->begin && lib->end && lib->find_debuginfo && lib->set_progressfn &&
	       lib->set_user_data && lib->get_user_data;
}

/*
 * libdebuginfod writes its cache where the environment says, as root: only
 * into a directory of ours, never one another user could link elsewhere.
 */
static bool cache_is_ours(char *why, size_t len)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *base;
	char dir[PATH_MAX], *slash;
	struct stat st;

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else if ((base = getenv("XDG_CACHE_HOME")) && *base)
		snprintf(dir, sizeof(dir), "%s/debuginfod_client", base);
	else if ((base = getenv("HOME")) && *base)
		snprintf(dir, sizeof(dir), "%s/.cache/debuginfod_client", base);
	else
		snprintf(dir, sizeof(dir), "/");
	/*
	 * The deepest part that exists must be ours, not a link, and not
	 * writable by others (sticky or not: in /tmp another user could make
	 * the missing parts first)
	 */
	while (lstat(dir, &st) && (slash = strrchr(dir, '/')) && slash != dir)
		*slash = '\0';
	if (!lstat(dir, &st) && st.st_uid == geteuid() && !S_ISLNK(st.st_mode) &&
	    !(st.st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	snprintf(why, len, "its cache '%s' is not a directory of memtrack's user's alone; "
		 "set DEBUGINFOD_CACHE_PATH", dir);
	return false;
}

/* under d->lock: the client, loaded and made the first time */
static debuginfod_client *debuginfod_client_of(struct debuginfo *d)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char why[PATH_MAX + 128] = "";

	if (d->debuginfod_tried)
		return d->client;
	d->debuginfod_tried = true;
	d->debuginfod_off = true;
	if (!urls || !*urls)
		return NULL;
	if (!cache_is_ours(why, sizeof(why)))
		;
	else if (!load_debuginfod(&d->lib))
		snprintf(why, sizeof(why), "cannot load %s", DEBUGINFOD_SONAME);
	else if (!(d->client = d->lib.begin()))
		snprintf(why, sizeof(why), "cannot start a client");
	if (!d->client) {
		warning("debuginfod: not asked for debug files: %s", why);
		return NULL;
	}
	d->debuginfod_off = false;
	return d->client;
}

/*
 * The end of the lookup under way on this thread: libdebuginfod calls
 * progress() on the thread that asks, about once a second when no data
 * comes, and stops the transfer when it returns non-zero.
 */
static __thread uint64_t lookup_deadline_ns;

static int progress(debuginfod_client *c __maybe_unused, long done __maybe_unused,
		    long total __maybe_unused)
{
	return now_ns() >= lookup_deadline_ns;
}

static Elf *find_by_debuginfod(struct debuginfo *d, const unsigned char *id, ssize_t len)
{
	debuginfod_client *client;
	uint64_t t0, spent;
	char *path = NULL;
	Elf *dbg = NULL;
	int fd;

	if (len < 1)
		return NULL;
	pthread_mutex_lock(&d->lock);
	client = d->debuginfod_off ? NULL : debuginfod_client_of(d);
	if (!client || !d->budget_ns)
		goto out;
	t0 = now_ns();
	lookup_deadline_ns = t0 + d->budget_ns;
	d->lib.set_progressfn(client, progress);
	fd = d->lib.find_debuginfo(client, id, len, &path);
	spent = now_ns() - t0;
	d->budget_ns -= spent < d->budget_ns ? spent : d->budget_ns;
	d->st.debuginfod_queries++;
	d->st.debuginfod_ns += spent;
	if (fd >= 0) {
		dbg = elf__from_fd(fd);
		if (dbg)
			count(&d->st.debuginfod);
		pr_debug("debuginfod: '%s' in %.3f s\n", path, spent / 1e9);
	} else if (fd != -ENOENT || !d->budget_ns) {
		/* no server, or a lookup cut short (it may say "not found" then) */
		d->debuginfod_off = true;
		warning("debuginfod: no more questions this run: %s after %.1f s",
			!d->budget_ns ? "out of time" : strerror(-fd), spent / 1e9);
	}
	free(path);
out:
	pthread_mutex_unlock(&d->lock);
	return dbg;
}

/* ---- the search ------------------------------------------------------------- */

Elf *debuginfo__find(struct debuginfo *d, Elf *elf, const char *path)
{
	const unsigned char *id = NULL;
	ssize_t len;
	Elf *dbg;

	if (!d || !elf)
		return NULL;
	len = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (len > MAX_BUILD_ID)
		len = 0;
	dbg = find_by_build_id(d, id, len);
	if (!dbg && path)
		dbg = find_by_debuglink(d, elf, path);
	if (!dbg)
		dbg = find_by_debuginfod(d, id, len);
	return dbg;
}

void debuginfo__stats(struct debuginfo *d, struct debuginfo_stats *st)
{
	pthread_mutex_lock(&d->lock);
	*st = d->st;
	st->build_id = __atomic_load_n(&d->st.build_id, __ATOMIC_RELAXED);
	st->debuglink = __atomic_load_n(&d->st.debuglink, __ATOMIC_RELAXED);
	st->crc_mismatch = __atomic_load_n(&d->st.crc_mismatch, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
}
