// SPDX-License-Identifier: GPL-2.0
/*
 * The dwarf unwinder on hand-made stacks and rules, and the seq -> stack id
 * table the encoder takes ids from.
 */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "util/track/resolver.h"
#include "util/track/stack-ids.h"
#include "util/symbol/symbolize.h"
#include "util/symbol/unwind.h"

#define SP	0x7ffd0000ULL
#define ENTRY	0x401000ULL	/* the probed allocator */
#define IN_A	0x402010ULL	/* return address into a: CFA rsp+16, rbp saved at CFA-16 */
#define IN_B	0x403020ULL	/* into b: frame pointer based, CFA rbp+16 */
#define IN_C	0x404030ULL	/* into c: CFA rsp+8, the return address undefined after */
#define IN_NONE	0x405040ULL	/* no CFI */

struct fake_stack {
	struct mt_raw_stack rec;
	uint64_t words[32];
};

static int fake_rules(void *ctx, int32_t pid, uint64_t ip, bool ret_addr,
		      struct unwind_rule *r)
{
	int *calls = ctx;

	(*calls)++;
	CHECK(pid == 42, "pid %d", pid);
	if (ip != IN_NONE)
		CHECK(ret_addr == (ip != ENTRY), "ret_addr %d at %#lx", ret_addr, (unsigned long)ip);
	switch (ip) {
	case ENTRY:
		*r = (struct unwind_rule){ UNW_REG_RSP, UNW_AT_CFA, UNW_SAME, 8, -8, 0 };
		return 0;
	case IN_A:
		*r = (struct unwind_rule){ UNW_REG_RSP, UNW_AT_CFA, UNW_AT_CFA, 16, -8, -16 };
		return 0;
	case IN_B:
		*r = (struct unwind_rule){ UNW_REG_RBP, UNW_AT_CFA, UNW_AT_CFA, 16, -8, -16 };
		return 0;
	case IN_C:
		*r = (struct unwind_rule){ UNW_REG_RSP, UNW_UNDEFINED, UNW_SAME, 8, 0, 0 };
		return 0;
	}
	return -ENOENT;
}

/*
 * The stack at the allocator's entry, word by word from sp:
 *   [0] IN_A            allocator's return address       CFA(entry) = sp+8
 *   [1] saved rbp 0x55  a pushed rbp                     CFA(a) = sp+8+16 = sp+24
 *   [2] IN_B            a's return address (CFA(a)-8)
 *   [3..4] b's locals; b's rbp points at [5]
 *   [5] saved rbp       b's caller's rbp                 CFA(b) = rbp+16 = &[7]
 *   [6] IN_C            b's return address
 *   [7..]               c: CFA = &[7] + 8, return address undefined: the end
 */
static void make_stack(struct fake_stack *st)
{
	memset(st, 0, sizeof(*st));
	st->rec.kind = MT_RAW_STACK;
	st->rec.pid = 42;
	st->rec.seq = 1;
	st->rec.ip = ENTRY;
	st->rec.sp = SP;
	st->rec.bp = 0x1234;	/* whatever the allocator's caller had */
	st->rec.size = sizeof(st->words);
	st->words[0] = IN_A;
	st->words[1] = SP + 5 * 8;	/* a saved b's frame pointer */
	st->words[2] = IN_B;
	st->words[5] = 0x99;
	st->words[6] = IN_C;
}

static uint64_t outer_cfa;

static unsigned int unwind(struct fake_stack *st, uint64_t *ips, int *calls)
{
	__u64 out[8];
	unsigned int n, i;

	*calls = 0;
	n = unwind_raw_stack(&st->rec, (const uint8_t *)st->words, fake_rules, calls, out, 8,
			     &outer_cfa);
	for (i = 0; i < n; i++)
		ips[i] = out[i];
	return n;
}

static void test_three_kinds_of_frames(void)
{
	struct fake_stack st;
	uint64_t ips[8];
	int calls;
	unsigned int n;

	make_stack(&st);
	n = unwind(&st, ips, &calls);
	CHECK_U64(n, 3, "frames");
	CHECK_U64(ips[0], IN_A, "the allocator's caller");
	CHECK_U64(ips[1], IN_B, "through a pushed rbp");
	CHECK_U64(ips[2], IN_C, "through a frame pointer");
	CHECK_U64(calls, 4, "one rule per frame, the last one ending it");
	CHECK_U64(outer_cfa, SP + 7 * 8 + 8, "the outermost frame's CFA: what a copy needs");
}

static void test_stops_at_the_copy_end(void)
{
	struct fake_stack st;
	uint64_t ips[8];
	int calls;

	make_stack(&st);
	st.rec.size = 6 * 8;	/* b's return address, at [6], was not copied */
	CHECK_U64(unwind(&st, ips, &calls), 2, "frames of a short copy");
	CHECK_U64(outer_cfa, 0, "a short copy tells no outermost frame");
	st.rec.size = 0;
	CHECK_U64(unwind(&st, ips, &calls), 0, "frames of an empty copy");
}

static void test_stops_without_cfi(void)
{
	struct fake_stack st;
	uint64_t ips[8];
	int calls;

	make_stack(&st);
	st.words[2] = IN_NONE;
	CHECK_U64(unwind(&st, ips, &calls), 2, "frames up to one without CFI");
	CHECK_U64(ips[1], IN_NONE, "the frame without CFI is still reported");
}

static void test_entry_rule_defaults(void)
{
	struct fake_stack st;
	uint64_t ips[8];
	int calls;

	/* an allocator without CFI: at its entry the return address is at sp */
	make_stack(&st);
	st.rec.ip = IN_NONE;
	CHECK_U64(unwind(&st, ips, &calls), 3, "frames from an allocator without CFI");
	CHECK_U64(ips[0], IN_A, "its caller");
}

static void test_refuses_a_stack_going_down(void)
{
	struct fake_stack st;
	uint64_t ips[8];
	int calls;

	make_stack(&st);
	st.words[1] = SP + 8;	/* a corrupt saved rbp: b's CFA not above its sp */
	CHECK_U64(unwind(&st, ips, &calls), 2, "stops where the CFA would go down");
}

/* many seqs in and out of order: every one taken once, with its own id */
static void test_seq_table(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct resolver *res = resolver__new(sym, NULL);
	struct stack_ids *t = stack_ids__new(fake_rules, &(int){ 0 }, res);
	struct stack_ids_stats stats;
	struct fake_stack st;
	uint64_t seq, id_a = 0, id_b = 0, bad = 0;

	make_stack(&st);
	for (seq = 1; seq <= 20000; seq++) {
		st.rec.seq = seq;
		st.words[6] = seq % 3 ? IN_C : IN_NONE;	/* two distinct stacks */
		CHECK(!stack_ids__add_raw(t, &st.rec, sizeof(st)), "add %lu", (unsigned long)seq);
		/* take them 7 behind, odd ones first */
		if (seq > 7 && seq % 2) {
			uint64_t id = stack_ids__take(t, seq - 7);
			uint64_t *want = (seq - 7) % 3 ? &id_a : &id_b;

			if (!*want)
				*want = id;
			bad += id != *want || !id;
		}
	}
	for (seq = 1; seq <= 20000; seq++) {
		uint64_t id;

		if (seq + 7 <= 20000 && (seq + 7) % 2)
			continue;	/* taken above */
		id = stack_ids__take(t, seq);
		bad += id != (seq % 3 ? id_a : id_b);
	}
	CHECK_U64(bad, 0, "seqs with the wrong id");
	CHECK(id_a && id_b && id_a != id_b, "ids %lu %lu", (unsigned long)id_a, (unsigned long)id_b);
	stack_ids__stats(t, &stats);
	CHECK_U64(stats.raw, 20000, "raw stacks");
	CHECK_U64(stats.stacks, 2, "distinct stacks");
	stack_ids__close(t);
	CHECK_U64(stack_ids__take(t, 1), 0, "a seq taken twice, after close");
	stack_ids__delete(t);
	resolver__finish(res);
	resolver__delete(res);
	symbolizer__delete(sym);
}

int main(void)
{
	test_three_kinds_of_frames();
	test_stops_at_the_copy_end();
	test_stops_without_cfi();
	test_entry_rule_defaults();
	test_refuses_a_stack_going_down();
	test_seq_table();
	return test_done("unwind");
}
