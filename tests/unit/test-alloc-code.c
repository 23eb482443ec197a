// SPDX-License-Identifier: GPL-2.0
/*
 * What an allocator function calls, from its bytes: each call and jump
 * form found whatever precedes it, and its target computed from where the
 * instruction ends; a target not listed, or of the wrong kind, is no hit.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fifo-writer.h"
#include "util/probe/alloc-code.h"
#include "util/probe/allocators.h"

#define BASE	0x401000ULL

/* hits of code (at BASE) against targets, as a string of 0 and 1 */
static const char *hits(const uint8_t *code, size_t len, const struct alloc_target *t,
			unsigned int nt)
{
	static char out[16];
	bool hit[8] = { 0 };
	unsigned int i;

	alloc_code__calls(code, BASE, len, t, nt, hit);
	for (i = 0; i < nt; i++)
		out[i] = hit[i] ? '1' : '0';
	out[nt] = 0;
	return out;
}

/* operator new as a static libstdc++ has it: call malloc@plt */
static void test_call_rel32(void)
{
	/* endbr64; push %rbx; call .+0x100 (to BASE + 5 + 5 + 0x100); pop; ret */
	const uint8_t code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x53, 0xe8, 0x00, 0x01, 0x00, 0x00,
				 0x5b, 0xc3 };
	struct alloc_target t[] = {
		{ BASE + 10 + 0x100, 0, false, true },	/* malloc's PLT entry */
		{ BASE + 10 + 0x100, 1, true, true },	/* a GOT slot at the same address */
		{ BASE + 10 + 0x104, 2, false, true },	/* 4 bytes off */
	};

	CHECK_STR(hits(code, sizeof(code), t, 3), "100", "call rel32");
}

/* operator delete: a tail jump to free@plt, backwards */
static void test_jmp_rel32_back(void)
{
	const uint8_t code[] = { 0xe9, 0xf0, 0xff, 0xff, 0xff };	/* jmp .-0x10 */
	struct alloc_target t[] = { { BASE + 5 - 0x10, 0, false, true } };

	CHECK_STR(hits(code, sizeof(code), t, 1), "1", "jmp rel32 backwards");
}

/* -fno-plt: call *disp32(%rip) and jmp *disp32(%rip) reach GOT slots, not code */
static void test_got_slot(void)
{
	const uint8_t code[] = { 0xff, 0x15, 0x10, 0x00, 0x00, 0x00,	/* call *0x10(%rip) */
				 0xff, 0x25, 0x20, 0x00, 0x00, 0x00 };	/* jmp *0x20(%rip) */
	struct alloc_target t[] = {
		{ BASE + 6 + 0x10, 0, true, true },
		{ BASE + 12 + 0x20, 1, true, true },
		{ BASE + 6 + 0x10, 2, false, true },	/* code there: not what is called */
	};

	CHECK_STR(hits(code, sizeof(code), t, 3), "110", "calls through GOT slots");
}

/* a conditional tail call, and a short jump to a neighbour */
static void test_jcc_and_short(void)
{
	const uint8_t code[] = { 0x0f, 0x85, 0x00, 0x02, 0x00, 0x00,	/* jne .+0x200 */
				 0xeb, 0x10 };				/* jmp .+0x10 */
	struct alloc_target t[] = {
		{ BASE + 6 + 0x200, 0, false, false },
		{ BASE + 8 + 0x10, 1, false, false },
	};

	CHECK_STR(hits(code, sizeof(code), t, 2), "11", "jcc rel32, jmp rel8");
}

/* a call cut by the end of the function is no call of the function's */
static void test_cut_at_end(void)
{
	const uint8_t code[] = { 0x90, 0xe8, 0x00, 0x01, 0x00 };	/* call, one byte short */
	struct alloc_target t[] = { { BASE + 6 + 0x100, 0, false, true } };

	CHECK_STR(hits(code, sizeof(code), t, 1), "0", "a call past the end");
}

/* a bump allocator calls nothing listed */
static void test_own_allocator(void)
{
	/* mov used(%rip),%rax; add %rdi,...; ret: no call */
	const uint8_t code[] = { 0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x48, 0x01, 0x3d,
				 0xf9, 0x0f, 0x00, 0x00, 0xc3 };
	struct alloc_target t[] = { { BASE + 0x2000, 0, false, true } };

	CHECK_STR(hits(code, sizeof(code), t, 1), "0", "no call");
}

/* the returns of a function, as the probes in place of a return probe need them */
static void test_returns(void)
{
	/* push %rbx; test %rdi,%rdi; je 1f; call .+0x100; pop %rbx; ret; 1: xor %eax,%eax; pop %rbx; ret */
	const uint8_t two[] = { 0x53, 0x48, 0x85, 0xff, 0x74, 0x07, 0xe8, 0x00, 0x01, 0x00, 0x00,
				0x5b, 0xc3, 0x31, 0xc0, 0x5b, 0xc3 };
	/* push %rbx; pop %rbx; jmp .+0x100: a tail call */
	const uint8_t tail[] = { 0x53, 0x5b, 0xe9, 0x00, 0x01, 0x00, 0x00 };
	/* jmp *%rax: a jump table */
	const uint8_t table[] = { 0xff, 0xe0, 0xc3 };
	/* a ret cut in two by the end of the function: it does not decode to its end */
	const uint8_t cut[] = { 0xc3, 0xc2, 0x08 };
	uint64_t rets[4];

	CHECK(alloc_code__returns(two, BASE, sizeof(two), rets, 4) == 2);
	CHECK_U64(rets[0], BASE + 12, "the first ret");
	CHECK_U64(rets[1], BASE + 16, "the second ret");
	CHECK(alloc_code__returns(tail, BASE, sizeof(tail), rets, 4) == -1, "a tail call");
	CHECK(alloc_code__returns(table, BASE, sizeof(table), rets, 4) == -1, "a jump table");
	CHECK(alloc_code__returns(cut, BASE, sizeof(cut), rets, 4) == -1, "cut");
	CHECK(alloc_code__returns(two, BASE, sizeof(two), rets, 1) == -1, "more rets than room");
}

/* a free that forwards to the next one found with dlsym jumps or calls through a pointer */
static void test_through_pointer(void)
{
	/* mov 0x10(%rip),%rax; jmp *%rax */
	const uint8_t reg[] = { 0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, 0xff, 0xe0 };
	/* call *0x10(%rip); ret */
	const uint8_t mem[] = { 0xff, 0x15, 0x10, 0x00, 0x00, 0x00, 0xc3 };
	/* push %rbx; call .+0x100; pop %rbx; ret: a direct call only */
	const uint8_t direct[] = { 0x53, 0xe8, 0x00, 0x01, 0x00, 0x00, 0x5b, 0xc3 };
	/* mov $0xe0ff,%eax; ret: the bytes of jmp *%rax inside an immediate */
	const uint8_t hidden[] = { 0xb8, 0xff, 0xe0, 0x00, 0x00, 0xc3 };

	CHECK(alloc_code__calls_through_pointer(reg, BASE, sizeof(reg)), "jmp *%%rax");
	CHECK(alloc_code__calls_through_pointer(mem, BASE, sizeof(mem)), "call *disp(%%rip)");
	CHECK(!alloc_code__calls_through_pointer(direct, BASE, sizeof(direct)), "call rel32");
	CHECK(!alloc_code__calls_through_pointer(hidden, BASE, sizeof(hidden)),
	      "jmp *%%rax's bytes in an immediate");
}

/* every listed name is found at its own place; names that only look alike are not */
static void test_symbol_names(void)
{
	static const char *strangers[] = {
		"", "m", "mallo", "mallocy", "_Zn", "_Znwmm", "free ", "_ZdlPvmSt11align_val_tXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
	};
	size_t i;

	for (i = 0; i < nr_alloc_symbols; i++) {
		int k = alloc_symbol__find(alloc_symbols[i].name);

		CHECK(k >= 0 && !strcmp(alloc_symbols[k].name, alloc_symbols[i].name) &&
		      (size_t)k <= i, "%s: found at %d", alloc_symbols[i].name, k);
	}
	for (i = 0; i < sizeof(strangers) / sizeof(*strangers); i++)
		CHECK(alloc_symbol__find(strangers[i]) < 0, "'%s': not an allocator", strangers[i]);
}

/* what the GNU hash lookup finds is what reading every symbol finds */
static bool same_as_scanning(const char *path, int *found)
{
	struct alloc_code *hashed = calloc(1, sizeof(*hashed)), *scanned = calloc(1, sizeof(*scanned));
	int n;
	bool same;

	if (!hashed || !scanned)
		return false;
	*found = alloc_code__read(path, hashed);
	n = alloc_code__read_scanning(path, scanned);
	same = *found == n && !memcmp(hashed, scanned, sizeof(*hashed));
	free(hashed);
	free(scanned);
	return same;
}

static const char *const system_files[] = {
	"/lib/x86_64-linux-gnu/libc.so.6",		/* malloc and its family */
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",	/* operator new and delete */
	"/usr/lib/x86_64-linux-gnu/libbsd.so.0",	/* reallocarray */
	"/usr/lib/gcc/x86_64-linux-gnu/12/cc1",		/* a static libstdc++'s operator new */
	"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",	/* 40,000 names, no allocator */
};

static void test_hash_lookup(void)
{
	size_t i, read = 0;
	int found;

	for (i = 0; i < sizeof(system_files) / sizeof(*system_files); i++) {
		if (access(system_files[i], R_OK))
			continue;
		CHECK(same_as_scanning(system_files[i], &found), "%s", system_files[i]);
		CHECK(found >= 0, "%s: %d", system_files[i], found);
		read++;
	}
	/* libc and libstdc++ at least: a test that read nothing could not fail */
	CHECK(read >= 2, "%zu files read", read);
	CHECK(same_as_scanning(system_files[0], &found) && found > 5, "libc: %d found", found);
}

/* the file offset of path's .gnu.hash, 0 without one */
static off_t gnu_hash_offset(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	off_t off = 0;
	GElf_Shdr sh;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH)
			off = sh.sh_offset;
	elf_end(elf);
	close(fd);
	return off;
}

static bool copy_file(const char *src, int to)
{
	char buf[65536];
	int from = open(src, O_RDONLY);
	ssize_t n;
	bool ok = from >= 0;

	while (ok && (n = read(from, buf, sizeof(buf))) > 0)
		ok = write(to, buf, n) == n;
	if (from >= 0)
		close(from);
	return ok;
}

/* a copy of libstdc++ whose hash header lies: read as if it had none */
static void test_hostile_hash_header(void)
{
	static const struct {
		unsigned int field;
		uint32_t value;
		const char *what;
	} lies[] = {
		{ 0, 0xffffffff, "buckets past the section" },
		{ 0, 0, "no bucket" },
		{ 1, 0xfffffff0, "hashed symbols past the table" },
		{ 2, 3, "a bloom filter not a power of two" },
		{ 2, 0x40000000, "a bloom filter past the section" },
	};
	const char *src = system_files[1];
	off_t off = gnu_hash_offset(src);
	size_t i;
	int found;

	CHECK(off > 0, "%s has a .gnu.hash", src);
	for (i = 0; off > 0 && i < sizeof(lies) / sizeof(*lies); i++) {
		char path[] = "/tmp/memtrack-test-gnu-hash.XXXXXX";
		int fd = mkstemp(path);

		CHECK(fd >= 0 && copy_file(src, fd), "copy of %s", src);
		CHECK(pwrite(fd, &lies[i].value, 4, off + 4 * lies[i].field) == 4, "%s", lies[i].what);
		CHECK(same_as_scanning(path, &found) && found > 0, "%s: %d found", lies[i].what, found);
		close(fd);
		unlink(path);
	}
}

/* root reads what a tracked process mapped: a FIFO (or a device) is never opened, only refused */
static void test_not_regular_never_opened(void)
{
	char path[] = "/tmp/memtrack-test-alloc-code-fifo.XXXXXX";
	struct alloc_code *ac = calloc(1, sizeof(*ac));
	pid_t writer;
	int fd = mkstemp(path);

	CHECK(fd >= 0 && ac, "a scratch name");
	close(fd);
	unlink(path);
	writer = fifo_writer_start(path);
	CHECK(writer > 0, "a FIFO and its writer");
	CHECK(alloc_code__read(path, ac) == -EINVAL && ac->fns[0].nrets == -1,
	      "a FIFO: not a regular file, and nothing found");
	CHECK(fifo_writer_still_waits(writer, path), "the FIFO's writer still waits for a reader");
	free(ac);
}

int main(void)
{
	test_symbol_names();
	test_not_regular_never_opened();
	test_hash_lookup();
	test_hostile_hash_header();
	test_call_rel32();
	test_jmp_rel32_back();
	test_got_slot();
	test_jcc_and_short();
	test_cut_at_end();
	test_own_allocator();
	test_returns();
	test_through_pointer();
	return test_done("alloc-code");
}
