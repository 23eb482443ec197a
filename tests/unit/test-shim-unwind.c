// SPDX-License-Identifier: GPL-2.0
/*
 * The preload shim's unwinders (preload/stack.c, preload/cfi.c), built in
 * here, fed what a program may leave them: frame pointers of 0, ~0, ~0 - 8,
 * ~0 - 15, misaligned, cycling, pointing at unmapped memory; return
 * addresses of 0 and ~0; CFI tables cut short or pointing out of their
 * module; and stacks the thread switched to (swapcontext, sigaltstack, a
 * stack unmapped and its range mapped again smaller, a thread on a stack
 * of its own).  Fake stacks and tables sit between PROT_NONE pages: a read
 * past what the unwinders may read faults, and fails the test.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "check.h"

#include "preload/sys.c"
#include "preload/cfi.c"
#include "preload/stack.c"

uint32_t shim_call_graph = MT_CALL_GRAPH_FP;

void shim_warn(const char *a, const char *b)
{
	printf("# shim_warn: %s%s\n", a, b ? b : "");
}

bool shim_write_stack(struct shim_thread *t, uint32_t id, const uint64_t *ips, uint32_t nr)
{
	(void)t, (void)id, (void)ips, (void)nr;
	return true;
}

static struct shim_rule_slot *test_rules;	/* the run's shared table, when a test sets one */

struct shim_rule_slot *shim_cfi_rules(void)
{
	return test_rules;
}

#define PG		4096UL
#define MAX		SHIM_MAX_FRAMES

/* functions whose CFI is known: a leaf (CFA rsp + 8), and a frame on rbp (CFA rbp + 16) */
__asm__(
	"	.text\n"
	"	.globl uw_rsp_fn\n"
	"	.type uw_rsp_fn, @function\n"
	"uw_rsp_fn:\n"
	"	.cfi_startproc\n"
	"	nop\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size uw_rsp_fn, .-uw_rsp_fn\n"
	"	.globl uw_rbp_fn\n"
	"	.type uw_rbp_fn, @function\n"
	"uw_rbp_fn:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	.globl uw_rbp_body\n"
	"uw_rbp_body:\n"
	"	nop\n"
	"	nop\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size uw_rbp_fn, .-uw_rbp_fn\n");
extern char uw_rsp_fn[], uw_rbp_body[];

/* a return address whose call lies in uw_rsp_fn, and one in uw_rbp_fn's body */
#define RSP_RA		((uintptr_t)uw_rsp_fn + 2)
#define RBP_RA		((uintptr_t)uw_rbp_body + 1)

static const uintptr_t hostile[] = {
	0, ~0UL, ~0UL - 7, ~0UL - 8, ~0UL - 15, ~0UL - 16, ~0UL - 23, 8, 0x7fffffffffffUL,
	0x800000000000UL,
};

/* the bounds themselves: near ~0, a sum would wrap to below hi */
static void test_span_bounds(void)
{
	struct shim_span s = { 0x1000, 0x2000, NULL };
	size_t i;

	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		CHECK(!shim_span_has(&s, hostile[i], 8), "span: %#lx, 8 bytes", hostile[i]);
		CHECK(!shim_span_has(&s, hostile[i], 16), "span: %#lx, 16 bytes", hostile[i]);
	}
	CHECK(shim_span_has(&s, 0x1ff8, 8) && !shim_span_has(&s, 0x1ff8, 16), "span: its last word");
	CHECK(shim_span_has(&s, 0x1000, 8) && !shim_span_has(&s, 0xff8, 8), "span: its first word");
	CHECK(!shim_span_has(&s, 0x1004, 8), "span: a misaligned word");
}

/* pages RW between two PROT_NONE ones: the middle, npages long */
static uint8_t *guarded(size_t npages)
{
	uint8_t *m = mmap(NULL, (npages + 2) * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || mprotect(m + PG, npages * PG, PROT_READ | PROT_WRITE)) {
		perror("mmap");
		exit(1);
	}
	return m + PG;
}

static void unguard(uint8_t *p, size_t npages)
{
	munmap(p - PG, (npages + 2) * PG);
}

/* an address in no mapping: a page mapped, then unmapped */
static uintptr_t unmapped_page(void)
{
	void *p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	munmap(p, PG);
	return (uintptr_t)p;
}

static void put(uint8_t *base, size_t off, uintptr_t v)
{
	memcpy(base + off, &v, 8);
}

static void test_fp_hostile(void)
{
	uint8_t *s = guarded(1);
	struct shim_span span = { (uintptr_t)s, (uintptr_t)s + PG, NULL };
	uintptr_t more[] = {
		(uintptr_t)s + PG - 8, (uintptr_t)s + PG - 15, (uintptr_t)s + 3, (uintptr_t)s - 16,
		(uintptr_t)s + PG, unmapped_page(),
	};
	uint64_t ips[MAX];
	size_t i;

	memset(s, 0x41, PG);
	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		struct shim_caller c = { 0x1234, (uintptr_t)s, hostile[i] };

		CHECK_U64(fp_walk(&span, &c, ips, MAX), 1, "fp: a hostile rbp is the caller alone");
	}
	for (i = 0; i < sizeof(more) / sizeof(*more); i++) {
		struct shim_caller c = { 0x1234, (uintptr_t)s, more[i] };

		CHECK_U64(fp_walk(&span, &c, ips, MAX), 1, "fp: an rbp past the span's ends");
	}
	/* the last whole frame of the span is read, its word after is not */
	put(s, PG - 16, 0);
	put(s, PG - 8, 0x5678);
	{
		struct shim_caller c = { 0x1234, (uintptr_t)s, (uintptr_t)s + PG - 16 };

		CHECK_U64(fp_walk(&span, &c, ips, MAX), 2, "fp: the span's last frame");
		CHECK_U64(ips[1], 0x5678, "fp: its return address");
	}
	{
		struct shim_caller c = { 0, (uintptr_t)s, (uintptr_t)s };

		CHECK_U64(fp_walk(&span, &c, ips, MAX), 0, "fp: no caller, no stack");
	}
	unguard(s, 1);
}

static void test_fp_chains(void)
{
	uint8_t *s = guarded(1);
	struct shim_span span = { (uintptr_t)s, (uintptr_t)s + PG, NULL };
	uintptr_t b = (uintptr_t)s;
	uint64_t ips[MAX];
	struct shim_caller c = { 0x1000, b, b + 64 };
	int i;

	/* five frames at 64, 128, ... 320, then a saved rbp of 0 */
	for (i = 1; i <= 5; i++) {
		put(s, 64 * i, i < 5 ? b + 64 * (i + 1) : 0);
		put(s, 64 * i + 8, 0x1000 + i);
	}
	CHECK_U64(fp_walk(&span, &c, ips, MAX), 6, "fp: a chain of five frames");
	for (i = 0; i < 6; i++)
		CHECK_U64(ips[i], 0x1000 + i, "fp: each return address");
	CHECK_U64(fp_walk(&span, &c, ips, 3), 3, "fp: no more than max");

	/* a frame that names itself, and two that name each other */
	put(s, 64, b + 64);
	CHECK_U64(fp_walk(&span, &c, ips, MAX), 2, "fp: a frame cycling to itself");
	put(s, 64, b + 128);
	put(s, 128, b + 64);
	CHECK_U64(fp_walk(&span, &c, ips, MAX), 3, "fp: two frames cycling");
	/* return addresses 0 and ~0: the one ends the stack, the other is a frame */
	put(s, 64, b + 128);
	put(s, 72, 0);
	CHECK_U64(fp_walk(&span, &c, ips, MAX), 1, "fp: a return address of 0");
	put(s, 72, ~0UL);
	put(s, 128, ~0UL - 8);
	CHECK_U64(fp_walk(&span, &c, ips, MAX), 3, "fp: a return address of ~0");
	CHECK_U64(ips[1], ~0ULL, "fp: ~0 as it was read");
	/* misaligned, and below the span */
	put(s, 128, b + 131);
	CHECK_U64(fp_walk(&span, &c, ips, MAX), 3, "fp: a misaligned saved rbp");
	c.bp = b - 64;
	CHECK_U64(fp_walk(&span, &c, ips, MAX), 1, "fp: an rbp below sp");
	unguard(s, 1);
}

/* the CFI walk over s, a span of n words at its end */
static uint32_t cfi_walk_at(uint8_t *s, size_t words, uintptr_t ip, uintptr_t sp_off,
			    uintptr_t bp, uint64_t *ips)
{
	struct shim_span span = { (uintptr_t)s + PG - 8 * words, (uintptr_t)s + PG, NULL };
	struct shim_caller c = { ip, span.lo + sp_off, bp };

	return shim_cfi_walk(&span, &c, ips, MAX);
}

static void test_cfi_stacks(void)
{
	uint8_t *s = guarded(1);
	uintptr_t b = (uintptr_t)s, top = b + PG, unmapped = unmapped_page();
	uint64_t ips[MAX];
	size_t i;

	/* leaf frames all the way up: the walk ends at the span's end */
	for (i = 0; i < PG / 8; i++)
		put(s, 8 * i, RSP_RA);
	CHECK_U64(cfi_walk_at(s, 16, RSP_RA, 0, 0, ips), 17, "cfi: frames up to the span's end");
	CHECK_U64(cfi_walk_at(s, PG / 8, RSP_RA, 0, 0, ips), MAX, "cfi: no more than max");
	put(s, PG - 16 * 8, 0);
	CHECK_U64(cfi_walk_at(s, 16, RSP_RA, 0, 0, ips), 1, "cfi: a return address of 0");
	put(s, PG - 16 * 8, ~0UL);
	CHECK_U64(cfi_walk_at(s, 16, RSP_RA, 0, 0, ips), 2, "cfi: a return address of ~0");

	/* a CFA on rbp: hostile rbps end the walk at the caller */
	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++)
		CHECK_U64(cfi_walk_at(s, 64, RBP_RA, 0, hostile[i], ips), 1, "cfi: a hostile rbp");
	CHECK_U64(cfi_walk_at(s, 64, RBP_RA, 0, top - 8, ips), 1, "cfi: rbp at the last word");
	CHECK_U64(cfi_walk_at(s, 64, RBP_RA, 0, top - 15, ips), 1, "cfi: rbp misaligned");
	CHECK_U64(cfi_walk_at(s, 64, RBP_RA, 0, unmapped, ips), 1, "cfi: rbp unmapped");
	CHECK_U64(cfi_walk_at(s, 64, RBP_RA, 0, top - 64 * 8 - 16, ips), 1,
		  "cfi: a CFA not above sp");

	/* rbp's frame: the saved rbp, then a leaf's return address, then 0 */
	put(s, PG - 32, 0x77);
	put(s, PG - 24, RSP_RA);
	put(s, PG - 16, 0);
	CHECK_U64(cfi_walk_at(s, 64, RBP_RA, 0, top - 32, ips), 2, "cfi: rbp's frame");
	CHECK_U64(ips[1], RSP_RA, "cfi: its return address");
	/* a frame on rbp whose saved rbp is itself: the CFA does not rise */
	put(s, PG - 32, top - 32);
	put(s, PG - 24, RBP_RA);
	CHECK_U64(cfi_walk_at(s, 64, RBP_RA, 0, top - 32, ips), 2, "cfi: rbp cycling");
	unguard(s, 1);
}

/*
 * A module of one page between guards: .eh_frame's CIE at 0 and FDE at
 * 0x40, .eh_frame_hdr at 0x100, for code at 0x800..0x900 of the page:
 * 0x800 CFA rsp+8; 0x801 rsp+16, rbp at -16; 0x804 rbp+16.
 */
static const uint8_t cie_bytes[] = {
	20, 0, 0, 0,  0, 0, 0, 0,  1, 'z', 'R', 0,  1, 0x78, 16,  1, 0x1b,
	0x0c, 7, 8,  0x90, 1,  0, 0,
};

static void make_module(uint8_t *p, struct module *m)
{
	uint8_t fde[28] = { 24, 0, 0, 0, 0x44, 0, 0, 0 };
	uint8_t insns[] = { 0, 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6 };
	uint8_t hdr[20] = { 1, 0x1b, 0x03, 0x3b };
	int32_t v;

	memset(p, 0, PG);
	memcpy(p, cie_bytes, sizeof(cie_bytes));
	v = 0x800 - 0x48;
	memcpy(fde + 8, &v, 4);
	v = 0x100;
	memcpy(fde + 12, &v, 4);
	memcpy(fde + 16, insns, sizeof(insns));	/* aug length 0, then the instructions */
	memcpy(p + 0x40, fde, sizeof(fde));
	v = -0x104;
	memcpy(hdr + 4, &v, 4);
	v = 1;
	memcpy(hdr + 8, &v, 4);
	v = 0x700;
	memcpy(hdr + 12, &v, 4);
	v = -0xc0;
	memcpy(hdr + 16, &v, 4);
	memcpy(p + 0x100, hdr, sizeof(hdr));
	*m = (struct module){
		.lo = (uintptr_t)p + 0x800, .hi = (uintptr_t)p + 0x900, .hdr = (uintptr_t)p + 0x100,
		.nr_ext = 1, .ext = { { (uintptr_t)p, (uintptr_t)p + PG } },
	};
}

static bool rule_at(const struct module *m, uintptr_t off, struct rule *r)
{
	return rule_from(m, (m->lo - 0x800) + off, r);
}

static void set32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

static void test_cfi_tables(void)
{
	uint8_t *p = guarded(1);
	struct module m;
	struct rule r;
	int i;

	make_module(p, &m);
	CHECK(rule_at(&m, 0x800, &r) && r.cfa_reg == DW_RSP && r.cfa_off == 8 &&
	      r.ra_off == -8 && !r.bp_off, "cfi tables: the entry's rule");
	CHECK(rule_at(&m, 0x802, &r) && r.cfa_reg == DW_RSP && r.cfa_off == 16 &&
	      r.bp_off == -16, "cfi tables: after push %%rbp");
	CHECK(rule_at(&m, 0x805, &r) && r.cfa_reg == DW_RBP && r.cfa_off == 16,
	      "cfi tables: on rbp");
	CHECK(!rule_at(&m, 0x900, &r), "cfi tables: past the FDE's range");

	p[0x100] = 2;
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: a header of another version");
	make_module(p, &m);
	set32(p + 0x108, 0x10000000);
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: more FDEs than the segment holds");
	make_module(p, &m);
	set32(p + 0x110, PG - 2 - 0x100);
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: an FDE cut by the segment's end");
	set32(p + 0x110, -0x2000);
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: an FDE out of the module");
	set32(p + 0x110, INT32_MAX);
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: an FDE far out");
	make_module(p, &m);
	set32(p + 0x40, 0x10000);
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: an FDE longer than its segment");
	make_module(p, &m);
	set32(p + 0x44, 0x44 + 0x3000);
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: a CIE out of the module");
	set32(p + 0x44, 0x44 + 2 - (int32_t)PG);
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: a CIE at the segment's last bytes");
	make_module(p, &m);
	memset(p + 9, 'R', 14);
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: an augmentation without its end");
	make_module(p, &m);
	memset(p + 0x40 + 16, 0x80, 12);	/* a uleb running to the record's end */
	p[0x40 + 16] = 0;
	p[0x40 + 17] = 0x0e;
	CHECK(!rule_at(&m, 0x805, &r), "cfi tables: a number cut by the record's end");
	make_module(p, &m);
	for (i = 0; i < 9; i++)
		p[0x40 + 17 + i] = 0x0a;	/* remember_state past its depth */
	CHECK(!rule_at(&m, 0x805, &r), "cfi tables: states remembered too deep");
	make_module(p, &m);
	p[13] = 0x7d;				/* data alignment -3: slots off their words */
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: a return address off its word");
	make_module(p, &m);
	m.hdr = (uintptr_t)p + PG - 2;
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: a header cut by the segment's end");
	m.hdr = (uintptr_t)p + PG;
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: a header past the segment");
	make_module(p, &m);
	m.nr_ext = 0;
	CHECK(!rule_at(&m, 0x800, &r), "cfi tables: nothing readable");

	/* the whole page as anything: no fault whatever the bytes */
	srandom(27);
	for (i = 0; i < 2000; i++) {
		size_t j;

		make_module(p, &m);
		for (j = 0; j < 8; j++)
			p[random() % 0x120] = random();
		rule_at(&m, 0x800 + random() % 0x100, &r);
	}
	CHECK(true, "cfi tables: 2000 scrambled tables read without a fault");
	unguard(p, 1);
}

/* every byte of [lo, hi) in a readable mapping, by the kernel's list */
static bool readable(uintptr_t lo, uintptr_t hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t at = lo;

	while (f && at < hi && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3 && at >= a && at < b &&
		    perms[0] == 'r')
			at = b;
	}
	if (f)
		fclose(f);
	return at >= hi;
}

struct span_seen {
	bool ok, in_place, readable;
	uintptr_t lo, hi;
	uint32_t fp_frames, cfi_frames;
};

/* the span at the caller's sp, and both walks from it with a hostile rbp */
static __attribute__((noinline)) void look(struct span_seen *seen, uintptr_t bp)
{
	struct shim_caller c = SHIM_CALLER();
	struct shim_span s;
	uint64_t ips[MAX];

	c.bp = bp;
	seen->ok = stack_span(c.sp, &s);
	if (!seen->ok)
		return;
	seen->in_place = !s.copy;
	seen->lo = s.lo;
	seen->hi = s.hi;
	seen->readable = s.copy || readable(s.lo, s.hi);
	seen->fp_frames = fp_walk(&s, &c, ips, MAX);
	seen->cfi_frames = shim_cfi_walk(&s, &c, ips, MAX);
}

static bool same_rule(const struct rule *a, const struct rule *b)
{
	return a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->bp_off == b->bp_off;
}

/* a rule through a slot of the shared table: itself under its key, nothing under another */
static void test_rule_slots(void)
{
	static const struct rule rules[] = {
		{ .cfa_reg = DW_RSP, .cfa_off = 8, .ra_off = -8 },
		{ .cfa_reg = DW_RBP, .cfa_off = 16, .ra_off = -8, .bp_off = -16 },
		{ .cfa_reg = DW_RSP, .cfa_off = -(1 << 23), .ra_off = -128, .bp_off = -32768 },
		{ .cfa_reg = DW_RBP, .cfa_off = (1 << 23) - 1, .ra_off = 120, .bp_off = 32760 },
		{ .cfa_reg = DW_RSP },	/* no rule: the stack ends there */
	};
	struct rule out, wide = { .cfa_reg = DW_RSP, .cfa_off = 1 << 23, .ra_off = -8 };
	uint64_t key = 0x1234567800abcdefULL, val;
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(*rules); i++) {
		CHECK(rule_pack(&rules[i], key, &val), "rule %zu: packed", i);
		CHECK(rule_unpack(val, key, &out) && same_rule(&out, &rules[i]),
		      "rule %zu: unpacked as it was", i);
		CHECK(!rule_unpack(val, key + 1, &out), "rule %zu: not under another key", i);
	}
	CHECK(!rule_pack(&wide, key, &val), "a CFA offset past 24 bits is not shared");
}

/* a new rule takes the empty slot of its pair, or its own key's, else one by its key */
static void test_slot_pairs(void)
{
	struct shim_rule_slot pair[2] = { { 0 } };
	struct rule r = { .cfa_reg = DW_RSP, .cfa_off = 8, .ra_off = -8 }, out;
	uint64_t a = 0x100000000ULL, b = 0x200000000ULL, c = a | 0x80, val;

	CHECK(slot_for(pair, a) == &pair[0], "pairs: the first slot when both are empty");
	pair[0].key = b;
	CHECK(slot_for(pair, a) == &pair[1], "pairs: the other slot when one is another key's");
	pair[1].key = a;
	CHECK(slot_for(pair, a) == &pair[1], "pairs: its own key's slot");
	CHECK(slot_for(pair, c) == &pair[1] && slot_for(pair, b | 0x100) == &pair[0],
	      "pairs: both taken by others, one by the key");
	CHECK(rule_pack(&r, a, &val), "pairs: packed");
	pair[1].val = val;
	CHECK(slot_rule(&pair[1], a, &out) && same_rule(&out, &r) && !slot_rule(&pair[0], a, &out),
	      "pairs: found in the second slot");
}

/* walks through the shared table: the frames of the thread's own rules, garbage never a fault */
static void test_shared_walks(void)
{
	struct span_seen own = { 0 }, shared = { 0 }, rewritten = { 0 };
	size_t i, used = 0;

	test_rules = calloc(1, SHIM_RULES_MAP_SIZE);
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);	/* the thread's cache is void */
	look(&own, (uintptr_t)__builtin_frame_address(0));
	for (i = 0; i < (1UL << SHIM_RULES_ORDER); i++)
		used += !!test_rules[i].key;
	CHECK(used > 0, "shared: the walk left its rules in the table (%zu)", used);
	CHECK(((struct shim_rules_tail *)(test_rules + i))->stored >= used,
	      "shared: the rules stored counted after the slots");
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
	look(&shared, (uintptr_t)__builtin_frame_address(0));
	CHECK(shared.cfi_frames == own.cfi_frames && own.cfi_frames > 1,
	      "shared: %u frames from the table, %u computed", shared.cfi_frames, own.cfi_frames);
	for (i = 0; i < (1UL << SHIM_RULES_ORDER); i++)
		if (test_rules[i].key)
			test_rules[i].val = rule_check(test_rules[i].key) | (0x5a5a5a5a5a5ULL * i &
									   ((1ULL << 44) - 1));
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
	look(&rewritten, (uintptr_t)__builtin_frame_address(0));
	CHECK(rewritten.cfi_frames >= 1, "shared: rewritten rules, %u frames and no fault",
	      rewritten.cfi_frames);
	free(test_rules);
	test_rules = NULL;
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
}

static void check_seen(const struct span_seen *s, bool in_place, const char *what)
{
	CHECK(s->ok, "%s: a span", what);
	CHECK(s->in_place == in_place, "%s: %s", what, in_place ? "in place" : "a copy");
	CHECK(s->readable, "%s: [%#lx, %#lx) readable", what, s->lo, s->hi);
	CHECK(s->fp_frames >= 1 && s->fp_frames <= 2, "%s: fp: %u frames", what, s->fp_frames);
	CHECK(s->cfi_frames >= 1, "%s: cfi: %u frames", what, s->cfi_frames);
}

static void test_main_stack(void)
{
	struct span_seen s = { 0 };
	size_t i;

	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		look(&s, hostile[i]);
		check_seen(&s, true, "main stack");
	}
	look(&s, s.hi - 8);
	check_seen(&s, true, "main stack, rbp at its last word");
	CHECK(ranges.main_hi == s.hi, "main stack: up to [stack]'s top");
}

static void *thread_look(void *arg)
{
	struct span_seen *s = arg;

	look(s, ~0UL - 8);
	return NULL;
}

static void test_thread_stacks(void)
{
	struct span_seen s = { 0 };
	pthread_attr_t attr;
	pthread_t t;
	uint8_t *own;

	pthread_create(&t, NULL, thread_look, &s);
	pthread_join(t, NULL);
	check_seen(&s, true, "a thread's stack");

	/* a stack of the program's, with a guard below as glibc's own */
	own = guarded(64);
	mprotect(own + 63 * PG, PG, PROT_NONE);		/* and an unmapped hole above it */
	munmap(own + 63 * PG, PG);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, own, 63 * PG);
	memset(&s, 0, sizeof(s));
	pthread_create(&t, &attr, thread_look, &s);
	pthread_join(t, NULL);
	CHECK(s.ok && s.readable && s.fp_frames == 1, "a thread on its own stack: %d %d %u",
	      s.ok, s.readable, s.fp_frames);
	pthread_attr_destroy(&attr);
	unguard(own, 64);
}

static ucontext_t main_ctx, co_ctx;
static struct span_seen co_seen;

static void co_run(void)
{
	look(&co_seen, ~0UL - 15);
}

/* a coroutine on [base, base + size): it sees its span, hostile rbp given */
static void run_coroutine(uint8_t *base, size_t size)
{
	memset(&co_seen, 0, sizeof(co_seen));
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = base;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_run, 0);
	swapcontext(&main_ctx, &co_ctx);
}

static void test_switched_stacks(void)
{
	/* guard pages: a mapping next to it would merge with it, and its top be another's */
	uint8_t *co = guarded(64);

	run_coroutine(co, 64 * PG);
	check_seen(&co_seen, false, "swapcontext stack");
	CHECK(co_seen.hi <= (uintptr_t)co + 64 * PG, "swapcontext stack: within it");

	/* unmapped, and its range mapped again smaller: no bounds are kept from before */
	unguard(co, 64);
	co = mmap(co, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		  MAP_FIXED_NOREPLACE, -1, 0);
	if (co == MAP_FAILED) {
		CHECK(false, "cannot map the coroutine's range again");
		return;
	}
	run_coroutine(co, 8 * PG);
	check_seen(&co_seen, false, "a stack unmapped and its range reused");
	CHECK(co_seen.hi <= (uintptr_t)co + 8 * PG, "reused range: within what is mapped now");
	munmap(co, 8 * PG);
}

static struct span_seen sig_seen;

static void on_signal(int sig)
{
	(void)sig;
	look(&sig_seen, ~0UL);
}

static void test_sigaltstack(void)
{
	uint8_t *alt = guarded(16);
	stack_t ss = { .ss_sp = alt, .ss_size = 16 * PG }, old;
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_ONSTACK }, old_sa;

	sigaltstack(&ss, &old);
	sigaction(SIGUSR1, &sa, &old_sa);
	raise(SIGUSR1);
	sigaction(SIGUSR1, &old_sa, NULL);
	sigaltstack(&old, NULL);
	check_seen(&sig_seen, false, "sigaltstack");
	CHECK(sig_seen.hi <= (uintptr_t)alt + 16 * PG, "sigaltstack: within it");
	unguard(alt, 16);
}

int main(void)
{
	test_span_bounds();
	test_fp_hostile();
	test_fp_chains();
	test_cfi_stacks();
	test_cfi_tables();
	test_main_stack();
	test_rule_slots();
	test_slot_pairs();
	test_shared_walks();
	test_thread_stacks();
	test_switched_stacks();
	test_sigaltstack();
	return test_done("shim-unwind");
}
