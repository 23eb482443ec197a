// SPDX-License-Identifier: GPL-2.0
/*
 * What alloc_code__read() found, kept for the boot (bpf_code_cache.h): libc's
 * read, saved and loaded back is what was read; another key (the file
 * changed, or memtrack) reads nothing; an entry that root alone could not
 * have written, that is cut short or longer, or whose indices or counts
 * are out of their bounds is not read, and the next save replaces it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache-file.h"
#include "check.h"

#ifdef NO_BPF_SKEL
int main(void)
{
	printf("code-cache: skipped, built without BPF\n");
	return 0;
}
#else
#include "util/probe/allocators.h"
#include "util/probe/bpf_code_cache.h"

static char dir_path[] = "/tmp/memtrack-test-code-cache.XXXXXX";
static int dir = -1;
static char libc_path[4096];
static struct alloc_code_key libc_key;
static struct alloc_code libc_code;
static int libc_found;

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	(void)data;
	if (!base || strncmp(base + 1, "libc.so", 7))
		return 0;
	snprintf(libc_path, sizeof(libc_path), "%s", info->dlpi_name);
	return 1;
}

/* the file of the entry for libc's key: its name, the device and inodes */
static char entry[80];

static void read_libc(void)
{
	int fd;

	dl_iterate_phdr(find_libc, NULL);
	CHECK(libc_path[0], "our libc: %s", libc_path);
	fd = open(libc_path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && !alloc_code_cache__key(fd, &libc_key), "libc's key");
	libc_found = alloc_code__read_fd(fd, &libc_code);
	CHECK(libc_found > 0 && libc_code.code_read, "libc defines allocator functions: %d",
	      libc_found);
	snprintf(entry, sizeof(entry), "%016llx-%016llx-%016llx", (unsigned long long)libc_key.dev,
		 (unsigned long long)libc_key.ino, (unsigned long long)libc_key.self_ino);
}

static bool loads_libc(void)
{
	struct alloc_code got;

	memset(&got, 0xa5, sizeof(got));
	return alloc_code_cache__load(dir, &libc_key, &got) == libc_found &&
	       !memcmp(&got, &libc_code, sizeof(got));
}

static void test_round_trip(void)
{
	struct alloc_code got, by_path;
	struct alloc_code_key other;

	CHECK(alloc_code__read(libc_path, &by_path) == libc_found &&
	      !memcmp(&by_path, &libc_code, sizeof(by_path)), "read by fd as by path");
	CHECK(alloc_code_cache__load(dir, &libc_key, &got) == -ENOENT, "nothing kept: nothing read");
	alloc_code_cache__save(dir, &libc_key, &libc_code, libc_found);
	CHECK(loads_libc(), "libc's functions kept, read back whole");
	other = libc_key;
	other.size++;
	CHECK(alloc_code_cache__load(dir, &other, &got) == -ENOENT, "another size reads nothing");
	other = libc_key;
	other.ctime_nsec++;
	CHECK(alloc_code_cache__load(dir, &other, &got) == -ENOENT, "a change since reads nothing");
	other = libc_key;
	other.self_ino++;
	CHECK(alloc_code_cache__load(dir, &other, &got) == -ENOENT,
	      "another memtrack reads nothing");
	other = libc_key;
	other.self_ctime_nsec++;
	CHECK(alloc_code_cache__load(dir, &other, &got) == -ENOENT,
	      "memtrack rebuilt in place reads nothing");
}

static void test_not_kept(void)
{
	struct alloc_code none, got;
	struct alloc_code_key k = libc_key;

	k.ino++;
	memset(&none, 0, sizeof(none));
	alloc_code_cache__save(dir, &k, &none, 0);
	CHECK(alloc_code_cache__load(dir, &k, &got) == -ENOENT, "a file of no allocator: not kept");
	none = libc_code;
	none.code_read = false;
	alloc_code_cache__save(dir, &k, &none, libc_found);
	CHECK(alloc_code_cache__load(dir, &k, &got) == -ENOENT, "a file not decoded: not kept");
}

static void refused(const char *what, void (*make)(void))
{
	struct alloc_code got;

	alloc_code_cache__save(dir, &libc_key, &libc_code, libc_found);
	make();
	CHECK(alloc_code_cache__load(dir, &libc_key, &got) == -ENOENT, "%s: not read", what);
	alloc_code_cache__save(dir, &libc_key, &libc_code, libc_found);
	CHECK(loads_libc(), "%s: replaced by the next save", what);
}

static void others_may_read(void)
{
	CHECK(cache_file_chmod(dir, entry, 0644), "read by others");
}

static void others_may_write(void)
{
	CHECK(cache_file_chmod(dir, entry, 0622), "written by others");
}

static void cut_short(void)
{
	CHECK(cache_file_truncate(dir, entry, -1), "cut short");
}

static void longer(void)
{
	CHECK(cache_file_append_byte(dir, entry), "a byte more");
}

/* a function's record: its index, a pad, its alloc_fn (bpf_code_cache.c) */
#define RECORD_BYTES	(sizeof(uint32_t) * 2 + sizeof(struct alloc_fn))

static void poke_u32(off_t at, uint32_t v)
{
	CHECK(cache_file_write_at(dir, entry, at, &v, sizeof(v)), "a word changed at %lld",
	      (long long)at);
}

/* where the records start: they end the entry */
static off_t fns_at(void)
{
	struct stat st;
	unsigned int n = 0, i;

	for (i = 0; i < nr_alloc_symbols; i++)
		n += libc_code.fns[i].offset != 0;
	CHECK(!fstatat(dir, entry, &st, 0) && n > 1, "the entry's size, %u records", n);
	return st.st_size - (off_t)(n * RECORD_BYTES);
}

static void index_out_of_bounds(void)
{
	poke_u32(fns_at(), 100000);
}

static void indices_out_of_order(void)
{
	poke_u32(fns_at() + RECORD_BYTES, 0);
}

static void too_many_returns(void)
{
	poke_u32(fns_at() + sizeof(uint32_t) * 2 + offsetof(struct alloc_fn, nrets),
		 ALLOC_FN_RETS_MAX + 1);
}

/* the header ends with the sets of functions defined and imported: bit 127 of the last */
static void import_past_the_symbols(void)
{
	uint8_t top = 0x80;

	CHECK(nr_alloc_symbols <= 120, "bit 127 names no symbol (%zu)", nr_alloc_symbols);
	CHECK(cache_file_write_at(dir, entry, fns_at() - 1, &top, 1), "an import past the symbols");
}

static void other_magic(void)
{
	CHECK(cache_file_write_at(dir, entry, 0, "MTACODX", 7), "another magic");
}

static void a_link(void)
{
	char target[4200];

	snprintf(target, sizeof(target), "%s/%s.saved", dir_path, entry);
	CHECK(!renameat(dir, entry, dir, target), "the entry moved aside");
	CHECK(!symlinkat(target, dir, entry), "a link to it");
}

static void test_refusals(void)
{
	refused("read by others", others_may_read);
	refused("written by others", others_may_write);
	refused("cut short", cut_short);
	refused("a byte longer", longer);
	refused("another magic", other_magic);
	refused("an index out of bounds", index_out_of_bounds);
	refused("indices out of order", indices_out_of_order);
	refused("more returns than can be", too_many_returns);
	refused("an import past the symbols", import_past_the_symbols);
	refused("a link to a good entry", a_link);
}

static bool exists(const char *name)
{
	return !faccessat(dir, name, F_OK, AT_SYMLINK_NOFOLLOW);
}

/*
 * 600 entries of other files and memtracks, the first the oldest: a save
 * leaves three quarters of 512, the newest, its own among them
 */
static void test_pruned(void)
{
	struct timespec times[2] = { { 0 } };
	char name[96];
	int i, fd, left = 0;

	/* libc's entry alone to begin with: a_link() set the good one aside */
	snprintf(name, sizeof(name), "%s.saved", entry);
	unlinkat(dir, name, 0);
	for (i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "%016x-%016x-%016x", 1, i, 2);
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		times[0].tv_sec = times[1].tv_sec = 1000000 + i;
		CHECK(fd >= 0 && !futimens(fd, times), "an old entry %d", i);
		close(fd);
	}
	alloc_code_cache__save(dir, &libc_key, &libc_code, libc_found);
	CHECK(loads_libc(), "pruned: the entry saved is kept");
	for (i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "%016x-%016x-%016x", 1, i, 2);
		left += exists(name);
	}
	CHECK_NUM(left, 383);
	snprintf(name, sizeof(name), "%016x-%016x-%016x", 1, 216, 2);
	CHECK(!exists(name), "pruned: the oldest go");
	snprintf(name, sizeof(name), "%016x-%016x-%016x", 1, 217, 2);
	CHECK(exists(name), "pruned: the newest stay");
}

int main(void)
{
	dir = scratch_dir_make(dir_path);
	if (dir < 0)
		return 1;
	read_libc();
	test_round_trip();
	test_not_kept();
	test_refusals();
	test_pruned();
	if (!scratch_dir_remove(dir_path, dir))
		return 1;
	return test_done("code-cache");
}
#endif
