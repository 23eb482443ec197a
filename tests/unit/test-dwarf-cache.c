// SPDX-License-Identifier: GPL-2.0
/*
 * The DWARF cache: answers written by one run are found by the next, as
 * they were; a file that breaks a rule anywhere is ignored whole; strings
 * that cannot stand in a line are not kept; the directory must be ours; a
 * source file's identity stands for its hash only where it can.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util/symbol/dwarf-cache.h"

static const unsigned char id[] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };
#define ID_HEX	"deadbeef01"

static const char image[] = "the file the DWARF is read from";
static char head[256];		/* the first line of a file for id and image */

static char dir_path[] = "/tmp/memtrack-test-dwarf-cache-XXXXXX";
static int dir;

static void write_file(const char *text)
{
	int fd = openat(dir, ID_HEX, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

static size_t loaded_from(const char *text)
{
	struct dwarf_cache *c;
	size_t n;

	write_file(text);
	c = dwarf_cache__open(dir, id, sizeof(id), image, sizeof(image));
	n = dwarf_cache__loaded(c);
	dwarf_cache__close(c);
	return n;
}

static void test_round_trip(void)
{
	const struct src_frame two[] = {
		{ "inlined_fn", "a/inl.h", 12 }, { NULL, "a/main.c", 40 },
	};
	const struct src_frame bad[] = { { "tab\there", "x.c", 1 } };
	struct src_frame out[4];
	struct dwarf_cache *c;
	int n = -1;

	unlinkat(dir, ID_HEX, 0);
	c = dwarf_cache__open(dir, id, sizeof(id), image, sizeof(image));
	CHECK(c && dwarf_cache__loaded(c) == 0, "no file yet");
	CHECK(!dwarf_cache__find(c, 0x1000, out, 4, &n), "nothing kept yet");
	dwarf_cache__add(c, 0x1000, two, 2);
	dwarf_cache__add(c, 0x2000, NULL, 0);
	dwarf_cache__add(c, 0x3000, bad, 1);
	dwarf_cache__close(c);

	c = dwarf_cache__open(dir, id, sizeof(id), image, sizeof(image));
	CHECK_U64(dwarf_cache__loaded(c), 2, "addresses read back (the tab is not kept)");
	CHECK(dwarf_cache__find(c, 0x1000, out, 4, &n) && n == 2);
	CHECK_STR(out[0].function, "inlined_fn", "inlined function");
	CHECK_STR(out[0].file, "a/inl.h", "its file");
	CHECK_U64(out[0].line, 12, "its line");
	CHECK(out[1].function == NULL, "the outer frame has no function of DWARF's");
	CHECK_STR(out[1].file, "a/main.c", "outer file");
	CHECK_U64(out[1].line, 40, "outer line");
	CHECK(dwarf_cache__find(c, 0x1000, out, 1, &n) && n == 1, "cut to max");
	CHECK(dwarf_cache__find(c, 0x2000, out, 4, &n) && n == 0, "no unit covers it: kept too");
	CHECK(!dwarf_cache__find(c, 0x3000, out, 4, &n), "a string with a tab is not kept");
	dwarf_cache__close(c);
}

/* the first line memtrack writes for id and image, with the directory's key */
static void read_head(void)
{
	struct dwarf_cache *c = dwarf_cache__open(dir, id, sizeof(id), image, sizeof(image));
	int fd;
	ssize_t n;
	char *nl;

	dwarf_cache__add(c, 0x1000, NULL, 0);
	dwarf_cache__close(c);
	fd = openat(dir, ID_HEX, O_RDONLY);
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	head[n > 0 ? n : 0] = 0;
	nl = strchr(head, '\n');
	CHECK(nl != NULL && !strncmp(head, "memtrack-dwarf-cache 2 " ID_HEX " ", 34),
	      "the head names the version, the build id and a hash");
	if (nl)
		nl[1] = 0;
}

/* another file of the same build id: what was kept for the first is not its answer */
static void test_other_file(void)
{
	static const char other[] = "another file, the same build id";
	struct src_frame out[4];
	struct dwarf_cache *c;
	int n;

	c = dwarf_cache__open(dir, id, sizeof(id), other, sizeof(other));
	CHECK_U64(dwarf_cache__loaded(c), 0, "another file of the build id: nothing kept is its");
	CHECK(!dwarf_cache__find(c, 0x1000, out, 4, &n), "another file: no answer of the first's");
	dwarf_cache__add(c, 0x4000, NULL, 0);
	dwarf_cache__close(c);
	c = dwarf_cache__open(dir, id, sizeof(id), image, sizeof(image));
	CHECK(!dwarf_cache__find(c, 0x4000, out, 4, &n), "and the first file none of the other's");
	dwarf_cache__close(c);
}

static void test_hostile_files(void)
{
	char text[512];

	read_head();
	snprintf(text, sizeof(text), "%s1000 1\n5\tf\tx.c\n", head);
	CHECK_U64(loaded_from(text), 1, "a good file");
#define REFUSED(body, what) do {					\
	snprintf(text, sizeof(text), "%s%s", head, body);		\
	CHECK_U64(loaded_from(text), 0, what);				\
} while (0)
	CHECK_U64(loaded_from("memtrack-dwarf-cache 1 " ID_HEX "\n"), 0, "another version");
	CHECK_U64(loaded_from("memtrack-dwarf-cache 2 00\n1000 0\n"), 0, "another build id");
	CHECK_U64(loaded_from("memtrack-dwarf-cache 2 " ID_HEX " 0123456789abcdef\n1000 0\n"), 0,
		  "another hash");
	REFUSED("1000 1\n5\tf\tx.c", "the last line cut");
	REFUSED("1000 2\n5\tf\tx.c\n", "fewer frames than said");
	REFUSED("1000 65\n", "too many frames");
	REFUSED("1000 -1\n", "a negative count");
	REFUSED("zz 1\n5\tf\tx.c\n", "an address not in hex");
	REFUSED("1000 1\n5\tf\tx.c\textra\n", "a frame of four fields");
	REFUSED("1000 1\n5\tf\n", "a frame of two fields");
	REFUSED("1000 1\n99999999999\tf\tx.c\n", "a line past 32 bits");
	REFUSED("1000 0\n1000 0\n", "an address twice");
	REFUSED("1000\n", "no count");
#undef REFUSED
	memcpy(text, head, strlen(head));
	memcpy(text + strlen(head), "1000 0\n\0\n", 9);
	write_file("");
	{
		int fd = openat(dir, ID_HEX, O_WRONLY | O_TRUNC);

		CHECK(write(fd, text, strlen(head) + 9) == (ssize_t)(strlen(head) + 9));
		close(fd);
	}
	{
		struct dwarf_cache *c = dwarf_cache__open(dir, id, sizeof(id), image, sizeof(image));

		CHECK_U64(dwarf_cache__loaded(c), 0, "a NUL in the file");
		dwarf_cache__close(c);
	}
	CHECK(fchownat(dir, ID_HEX, 65534, 65534, 0) == 0);
	{
		struct dwarf_cache *c = dwarf_cache__open(dir, id, sizeof(id), image, sizeof(image));

		CHECK_U64(dwarf_cache__loaded(c), 0, "a file of another user");
		dwarf_cache__close(c);
	}
	unlinkat(dir, ID_HEX, 0);
}

/* the first line of a file of the directory */
static void first_line(const char *name, char *out, size_t len)
{
	int fd = openat(dir, name, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, out, len - 1);
	char *nl;

	if (fd >= 0)
		close(fd);
	out[n > 0 ? n : 0] = 0;
	nl = strchr(out, '\n');
	if (nl)
		*nl = 0;
}

/*
 * A file as it was when hashed is taken for hashed: libc, root's and old,
 * mapped as libelf maps a debug file.  Another identity, a copy of the
 * image in memory: hashed.  The answers' file stays as before (older
 * memtracks read it): the identity is in a file beside it.
 */
static void test_identity(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	char ident[512], cache[512], again[512];
	int fd = open(libc, O_RDONLY | O_CLOEXEC);
	struct dwarf_cache *c;
	struct stat st;
	void *img;

	if (fd < 0 || fstat(fd, &st)) {
		printf("# dwarf-cache: no %s, identity not tested\n", libc);
		return;
	}
	img = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(img != MAP_FAILED);
	if (img == MAP_FAILED)
		return;
	unlinkat(dir, ID_HEX, 0);
	unlinkat(dir, ID_HEX ".ident", 0);
	c = dwarf_cache__open(dir, id, sizeof(id), img, st.st_size);
	CHECK(dwarf_cache__hashed(c), "identity: a file not kept yet is hashed");
	dwarf_cache__add(c, 0x1000, NULL, 0);
	dwarf_cache__close(c);
	first_line(ID_HEX ".ident", ident, sizeof(ident));
	first_line(ID_HEX, cache, sizeof(cache));
	CHECK(!strncmp(ident, "memtrack-dwarf-ident 1 ", 23) && strlen(ident) > 23 + 17 &&
	      !strncmp(ident + 23, cache + 34, 16), "identity: kept beside, with the hash: '%s'", ident);
	CHECK(strlen(cache) == 34 + 16, "identity: the answers' first line as before: '%s'", cache);

	c = dwarf_cache__open(dir, id, sizeof(id), img, st.st_size);
	CHECK(!dwarf_cache__hashed(c) && dwarf_cache__loaded(c) == 1,
	      "identity: the same file is not read again, and what was kept is found");
	dwarf_cache__close(c);

	/* another identity (another inode, say): hashed, and what was kept still found */
	fd = openat(dir, ID_HEX ".ident", O_WRONLY | O_TRUNC);
	snprintf(again, sizeof(again), "%.39s 1:2:3:4.5:6.7\n", ident);
	CHECK(fd >= 0 && write(fd, again, strlen(again)) == (ssize_t)strlen(again));
	close(fd);
	c = dwarf_cache__open(dir, id, sizeof(id), img, st.st_size);
	CHECK(dwarf_cache__hashed(c) && dwarf_cache__loaded(c) == 1,
	      "identity: another one is not taken, the hash still is");
	dwarf_cache__close(c);
	first_line(ID_HEX ".ident", again, sizeof(again));
	CHECK_STR(again, ident, "identity: kept again, the right one");

	/* the same bytes in memory: no file to stand for them */
	{
		void *copy = malloc(st.st_size);

		if (copy) {
			memcpy(copy, img, st.st_size);
			c = dwarf_cache__open(dir, id, sizeof(id), copy, st.st_size);
			CHECK(dwarf_cache__hashed(c) && dwarf_cache__loaded(c) == 1,
			      "identity: an image in memory is hashed, and matches");
			dwarf_cache__close(c);
			free(copy);
		}
	}
	munmap(img, st.st_size);
	unlinkat(dir, ID_HEX, 0);
	unlinkat(dir, ID_HEX ".ident", 0);
}

/* a file another user could have written, or one changed just now: hashed every time */
static void test_identity_refused(void)
{
	char path[sizeof(dir_path) + 16];
	struct dwarf_cache *c;
	void *img;
	int fd, i;

	snprintf(path, sizeof(path), "%s/src", dir_path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write(fd, image, sizeof(image)) == sizeof(image));
	img = mmap(NULL, sizeof(image), PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(img != MAP_FAILED);
	if (img == MAP_FAILED) {
		close(fd);
		return;
	}
	unlinkat(dir, ID_HEX, 0);
	for (i = 0; i < 2; i++) {
		c = dwarf_cache__open(dir, id, sizeof(id), img, sizeof(image));
		CHECK(dwarf_cache__hashed(c), "changed just now: hashed (run %d)", i);
		dwarf_cache__add(c, 0x1000 + i, NULL, 0);
		dwarf_cache__close(c);
	}
	CHECK(fchown(fd, 65534, 65534) == 0);
	c = dwarf_cache__open(dir, id, sizeof(id), img, sizeof(image));
	CHECK(dwarf_cache__hashed(c) && dwarf_cache__loaded(c) == 2,
	      "another user's file: hashed, and matches");
	dwarf_cache__close(c);
	munmap(img, sizeof(image));
	close(fd);
	unlink(path);
	unlinkat(dir, ID_HEX, 0);
	CHECK(faccessat(dir, ID_HEX ".ident", F_OK, 0) != 0, "no identity kept for any of them");
}

static void test_dir(void)
{
	char why[256], path[sizeof(dir_path) + 16];
	int fd;

	setenv(DWARF_CACHE_ENV, "", 1);
	CHECK(dwarf_cache__open_dir(why, sizeof(why)) == -1, "empty: off");
	snprintf(path, sizeof(path), "%s/sub", dir_path);
	setenv(DWARF_CACHE_ENV, path, 1);
	fd = dwarf_cache__open_dir(why, sizeof(why));
	CHECK(fd >= 0, "created: %s", why);
	close(fd);
	chmod(path, 0770);
	CHECK(dwarf_cache__open_dir(why, sizeof(why)) == -1 && strstr(why, "another user"),
	      "group-writable: %s", why);
	rmdir(path);
	CHECK(symlinkat(dir_path, dir, "sub") == 0);
	CHECK(dwarf_cache__open_dir(why, sizeof(why)) == -1, "a symlink: %s", why);
	unlinkat(dir, "sub", 0);
	unsetenv(DWARF_CACHE_ENV);
}

int main(void)
{
	if (geteuid()) {
		printf("dwarf-cache: skipped, needs root\n");
		return 0;
	}
	CHECK(mkdtemp(dir_path) != NULL);
	dir = open(dir_path, O_RDONLY | O_DIRECTORY);
	test_round_trip();
	test_hostile_files();
	test_other_file();
	test_identity();
	test_identity_refused();
	test_dir();
	unlinkat(dir, "key", 0);
	close(dir);
	rmdir(dir_path);
	return test_done("dwarf-cache");
}
