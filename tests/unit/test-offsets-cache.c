// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's offsets kept for the boot (bpf_offsets_cache.h): what is
 * saved is loaded back whole, under the same key alone (another boot id,
 * BTF size or field list reads nothing); a file that root alone could not
 * have written (its mode), that is not a regular file (a link, a directory)
 * or that has another size or magic is not read, and a save replaces it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache-file.h"
#include "check.h"

#ifdef NO_BPF_SKEL
int main(void)
{
	printf("offsets-cache: skipped, built without BPF\n");
	return 0;
}
#else
#include "util/probe/bpf_kernel_offsets.h"
#include "util/probe/bpf_offsets_cache.h"

#define FILE_NAME	"kernel-offsets"

static char dir_path[] = "/tmp/memtrack-test-offsets-cache.XXXXXX";
static int dir = -1;

static struct offsets_key some_key(void)
{
	struct offsets_key k = { .btf_size = 5861234, .layout = kernel_offsets__layout() };

	strcpy(k.boot_id, "0b7c2f3e-1d0a-4c8e-9f3a-5e6d7c8b9a01");
	return k;
}

static struct mt_kernel_offsets some_offsets(void)
{
	struct mt_kernel_offsets ko;
	unsigned int i;

	for (i = 0; i < sizeof(ko) / sizeof(__u32); i++)
		((__u32 *)&ko)[i] = 8 * i + 3;
	return ko;
}

static bool loads(const struct offsets_key *k, const struct mt_kernel_offsets *want)
{
	struct mt_kernel_offsets ko;

	memset(&ko, 0xa5, sizeof(ko));
	return !offsets_cache__load(dir, k, &ko) && !memcmp(&ko, want, sizeof(ko));
}

static void test_round_trip(void)
{
	struct offsets_key k = some_key(), other;
	struct mt_kernel_offsets ko = some_offsets(), got;

	CHECK(offsets_cache__load(dir, &k, &got) == -ENOENT, "nothing kept: nothing read");
	offsets_cache__save(dir, &k, &ko);
	CHECK(loads(&k, &ko), "the offsets kept, read back whole");
	other = k;
	other.boot_id[0] = '1';
	CHECK(offsets_cache__load(dir, &other, &got) == -ENOENT, "another boot reads nothing");
	other = k;
	other.btf_size++;
	CHECK(offsets_cache__load(dir, &other, &got) == -ENOENT, "another BTF reads nothing");
	other = k;
	other.layout++;
	CHECK(offsets_cache__load(dir, &other, &got) == -ENOENT,
	      "another memtrack's fields read nothing");
	CHECK(kernel_offsets__layout() == k.layout && k.layout, "the field list's hash, stable");
}

/* how a refused file is made, and that a save puts a good one in its place */
static void refused(const char *what, void (*make)(void))
{
	struct offsets_key k = some_key();
	struct mt_kernel_offsets ko = some_offsets(), got;

	offsets_cache__save(dir, &k, &ko);
	make();
	CHECK(offsets_cache__load(dir, &k, &got) == -ENOENT, "%s: not read", what);
	offsets_cache__save(dir, &k, &ko);
	CHECK(loads(&k, &ko), "%s: replaced by the next save", what);
}

static void others_may_read(void)
{
	CHECK(cache_file_chmod(dir, FILE_NAME, 0644), "read by others");
}

static void others_may_write(void)
{
	CHECK(cache_file_chmod(dir, FILE_NAME, 0622), "written by others");
}

static void cut_short(void)
{
	CHECK(cache_file_truncate(dir, FILE_NAME, 100), "cut short");
}

static void longer(void)
{
	CHECK(cache_file_append_byte(dir, FILE_NAME), "a byte more");
}

static void other_magic(void)
{
	CHECK(cache_file_write_at(dir, FILE_NAME, 0, "MTKOFF9", 7), "another magic");
}

static void a_link(void)
{
	unlinkat(dir, FILE_NAME, 0);
	CHECK(!symlinkat("/etc/passwd", dir, FILE_NAME), "a link");
}

static void a_directory(void)
{
	unlinkat(dir, FILE_NAME, 0);
	CHECK(!mkdirat(dir, FILE_NAME, 0700), "a directory");
}

static void test_refusals(void)
{
	refused("read by others", others_may_read);
	refused("written by others", others_may_write);
	refused("cut short", cut_short);
	refused("a byte longer", longer);
	refused("another magic", other_magic);
	refused("a link to another file", a_link);
	/* a directory in the way: no save replaces it, none is read */
	{
		struct offsets_key k = some_key();
		struct mt_kernel_offsets got;

		a_directory();
		CHECK(offsets_cache__load(dir, &k, &got) == -ENOENT, "a directory: not read");
		unlinkat(dir, FILE_NAME, AT_REMOVEDIR);
	}
}

static void test_this_boot(void)
{
	struct offsets_key k;

	CHECK(offsets_cache__key(&k) == 0, "this boot's key");
	CHECK(strlen(k.boot_id) == 36 && k.boot_id[8] == '-', "a boot id: %s", k.boot_id);
	CHECK(k.btf_size > 0, "the kernel's BTF has a size");
}

int main(void)
{
	dir = scratch_dir_make(dir_path);
	if (dir < 0)
		return 1;
	test_round_trip();
	test_refusals();
	test_this_boot();
	if (!scratch_dir_remove(dir_path, dir))
		return 1;
	return test_done("offsets-cache");
}
#endif
