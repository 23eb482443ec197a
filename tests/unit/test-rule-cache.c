// SPDX-License-Identifier: GPL-2.0
/*
 * The shims' CFI rules kept from run to run: a table written is read back
 * slot for slot, into another table, by a run of the same user alone; a
 * table to which the run's shims added no rule, or fewer than are worth
 * the write, is not written again (the count after the slots, shim-abi.h);
 * one that is goes over the file it was read from, in place; a file that is not
 * one memtrack wrote for that user (its size, its header, its owner and
 * mode, a link, a directory) is not read, and is replaced by the next run
 * that has rules to keep.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "preload/shim-abi.h"
#include "util/track/rule-cache.h"

#define SLOTS		(SHIM_RULES_SIZE / sizeof(struct shim_rule_slot))
#define UID		4242

static char dir_path[] = "/tmp/memtrack-test-rule-cache.XXXXXX";
static int dir = -1;

/* a shared table as the shim host makes it, its slots mapped for the test */
static int new_table(struct shim_rule_slot **slots)
{
	int fd = memfd_create("test-cfi-rules", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, SHIM_RULES_MAP_SIZE))
		return -1;
	*slots = mmap(NULL, SHIM_RULES_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return *slots == MAP_FAILED ? -1 : fd;
}

static void drop_table(int fd, struct shim_rule_slot *slots)
{
	munmap(slots, SHIM_RULES_MAP_SIZE);
	close(fd);
}

/* a run: the table read from the cache, then written back if changed; what it read */
static uint64_t run(uid_t uid, int table)
{
	struct rule_cache c;
	uint64_t loaded;

	rule_cache__start(&c, dir, uid, table, true);
	rule_cache__finish(&c);
	loaded = rule_cache__loaded(&c);
	return loaded;
}

static const uint64_t some[] = { 0, 1, 255, 256, 4097, SLOTS / 2, SLOTS - 1 };

/* n rules stored, as the shims count them */
static void stored(struct shim_rule_slot *t, uint64_t n)
{
	((struct shim_rules_tail *)(t + SLOTS))->stored += n;
}

static void fill(struct shim_rule_slot *t)
{
	size_t i;

	for (i = 0; i < sizeof(some) / sizeof(*some); i++)
		t[some[i]] = (struct shim_rule_slot){ .key = 0x1000 + i, .val = 0xabc0 + i };
	stored(t, sizeof(some) / sizeof(*some));
}

#define MANY	100000		/* rules computed, as a compiler's first run computes them */

static ino_t inode_of(const char *name)
{
	struct stat st;

	return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) ? 0 : st.st_ino;
}

#define MARK_SLOT	(SLOTS - 2)
#define MARK		0x5a

/* the first byte of slot i in the file, -1 if it cannot be read */
static int file_byte(size_t i)
{
	int fd = openat(dir, "cfi-rules.4242", O_RDONLY);
	unsigned char b;
	ssize_t n = fd < 0 ? -1 : pread(fd, &b, 1, 4096 + i * sizeof(struct shim_rule_slot));

	if (fd >= 0)
		close(fd);
	return n == 1 ? b : -1;
}

static void mark_file(unsigned char b)
{
	int fd = openat(dir, "cfi-rules.4242", O_WRONLY);

	CHECK(fd >= 0 && pwrite(fd, &b, 1, 4096 + MARK_SLOT * sizeof(struct shim_rule_slot)) == 1,
	      "mark");
	if (fd >= 0)
		close(fd);
}

/*
 * A run whose shims, once the file is read, put `to` in slot i and count n
 * rules computed; the rules it read, in *counted those it counted, and in
 * *wrote whether it wrote the file (a mark put there once it was read is gone).
 */
static uint64_t run_storing(size_t i, struct shim_rule_slot to, uint64_t n, uint64_t *counted,
			    bool *wrote)
{
	struct shim_rule_slot *t;
	int fd = new_table(&t);
	struct rule_cache c;

	rule_cache__start(&c, dir, UID, fd, true);
	rule_cache__wait(&c);
	mark_file(MARK);
	t[i] = to;
	stored(t, n);
	rule_cache__finish(&c);
	if (counted)
		*counted = rule_cache__stored(&c);
	if (wrote)
		*wrote = file_byte(MARK_SLOT) != MARK;
	mark_file(0);	/* read as a rule by the next run, else */
	drop_table(fd, t);
	return rule_cache__loaded(&c);
}

static void test_round_trip(void)
{
	struct shim_rule_slot *a, *b, replaced = { 0x1002, 0xabc2 ^ 1 };
	uint64_t counted = 0;
	int ta = new_table(&a), tb = new_table(&b);
	bool wrote = false;
	struct stat st;
	ino_t ino;

	CHECK(ta >= 0 && tb >= 0, "tables");
	fill(a);
	CHECK_U64(rule_table__count(ta), sizeof(some) / sizeof(*some), "count");
	CHECK_U64(run(UID, ta), 0, "first run: nothing to read");
	CHECK(!fstatat(dir, "cfi-rules.4242", &st, 0) && (st.st_mode & 0777) == 0600 &&
	      st.st_size == 4096 + (off_t)SHIM_RULES_SIZE, "written, its user's alone");
	ino = inode_of("cfi-rules.4242");
	CHECK_U64(run_storing(some[0], (struct shim_rule_slot){ 0x1000, 0xabc0 }, 0, NULL, &wrote),
		  sizeof(some) / sizeof(*some), "second run: every rule read");
	CHECK(!wrote, "unchanged: not written again");
	CHECK_U64(run(UID, tb), sizeof(some) / sizeof(*some), "third run: every rule read");
	CHECK(!memcmp(a, b, SHIM_RULES_SIZE), "third run: slot for slot");
	CHECK(((struct shim_rules_tail *)(b + SLOTS))->stored == 0, "third run: nothing stored");
	drop_table(tb, b);
	/* a rule a shim adds once the file is read */
	CHECK_U64(run_storing(SLOTS - 300, (struct shim_rule_slot){ 7, 8 }, MANY, NULL, &wrote),
		  sizeof(some) / sizeof(*some), "fourth run: read");
	CHECK(wrote, "a rule added: written again");
	CHECK(inode_of("cfi-rules.4242") == ino, "written in place, over the file read");
	tb = new_table(&b);
	CHECK_U64(run(UID, tb), sizeof(some) / sizeof(*some) + 1, "fifth run: the added rule too");
	CHECK(b[SLOTS - 300].key == 7 && b[SLOTS - 300].val == 8, "fifth run: in its slot");
	drop_table(tb, b);
	/* a rule in the place of another: as many, but not the same */
	run_storing(some[2], replaced, 255, NULL, &wrote);
	CHECK(!wrote, "a rule replaced, 255 computed: not worth the write");
	run_storing(some[2], replaced, 256, &counted, &wrote);
	CHECK(wrote, "a rule replaced, 256 computed: written again");
	CHECK_U64(counted, 256, "the rules computed, counted");
	CHECK(file_byte(some[2]) == (int)(replaced.key & 0xff), "the replaced rule in the file");
	/* slots rewritten, and no rule stored: not written */
	run_storing(some[3], (struct shim_rule_slot){ 0x1003, 0xabc3 ^ 1 }, 0, NULL, &wrote);
	CHECK(!wrote, "slots rewritten, none stored: not written");
	tb = new_table(&b);
	CHECK_U64(run(UID + 1, tb), 0, "another user's runs: not read");
	CHECK(b[0].key == 0, "another user's runs: the table left empty");
	drop_table(ta, a);
	drop_table(tb, b);
}

/* rewrites byte off of the file with v */
static void poke(const char *name, off_t off, char v)
{
	int fd = openat(dir, name, O_WRONLY);

	CHECK(fd >= 0 && pwrite(fd, &v, 1, off) == 1, "poke %s", name);
	close(fd);
}

static void check_refused(const char *what)
{
	struct shim_rule_slot *t;
	int fd = new_table(&t);

	CHECK_U64(run(UID, fd), 0, what);
	CHECK(t[0].key == 0, "%s: the table left empty", what);
	drop_table(fd, t);
}

/* the file of UID written anew from a full table */
static void write_good_file(void)
{
	struct shim_rule_slot *t;
	int fd = new_table(&t);

	unlinkat(dir, "cfi-rules.4242", 0);
	unlinkat(dir, "cfi-rules.4242", AT_REMOVEDIR);
	fill(t);
	run(UID, fd);
	drop_table(fd, t);
}

static void test_hostile_files(void)
{
	struct shim_rule_slot *t;
	struct stat st;
	int fd;

	write_good_file();
	poke("cfi-rules.4242", 0, 'X');
	check_refused("another header");
	write_good_file();
	fd = openat(dir, "cfi-rules.4242", O_WRONLY);
	CHECK(fd >= 0 && !ftruncate(fd, 4096 + SHIM_RULES_SIZE - 1), "truncate");
	close(fd);
	check_refused("a byte short");
	write_good_file();
	CHECK(!fchmodat(dir, "cfi-rules.4242", 0640, 0), "chmod");
	check_refused("group-readable");
	write_good_file();
	CHECK(!renameat(dir, "cfi-rules.4242", dir, "elsewhere") &&
	      !symlinkat("elsewhere", dir, "cfi-rules.4242"), "symlink");
	check_refused("a symbolic link");
	unlinkat(dir, "elsewhere", 0);
	if (!geteuid()) {
		write_good_file();
		CHECK(!fchownat(dir, "cfi-rules.4242", 65534, 65534, 0), "chown");
		check_refused("another user's file");
	}
	unlinkat(dir, "cfi-rules.4242", 0);
	CHECK(!mkdirat(dir, "cfi-rules.4242", 0700), "mkdir");
	check_refused("a directory");
	/* a run with rules replaces a refused file, and a directory stays as it is */
	fd = new_table(&t);
	fill(t);
	run(UID, fd);
	drop_table(fd, t);
	check_refused("a directory, after a run");
	unlinkat(dir, "cfi-rules.4242", AT_REMOVEDIR);
	fd = new_table(&t);
	fill(t);
	CHECK(!symlinkat("/etc/passwd", dir, "cfi-rules.4242"), "symlink");
	run(UID, fd);
	drop_table(fd, t);
	CHECK(!fstatat(dir, "cfi-rules.4242", &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode),
	      "a link replaced by a file, what it pointed to untouched");
	fd = new_table(&t);
	CHECK_U64(run(UID, fd), sizeof(some) / sizeof(*some), "read again after the link");
	drop_table(fd, t);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir_path) || (dir = open(dir_path, O_RDONLY | O_DIRECTORY)) < 0)
		return 1;
	test_round_trip();
	test_hostile_files();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir_path);
	if (system(cmd))
		return 1;
	return test_done("rule-cache");
}
