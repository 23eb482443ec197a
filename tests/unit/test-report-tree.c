// SPDX-License-Identifier: GPL-2.0
/*
 * The call tree of report --html: stacks merged by frame name, root first,
 * each node the sum of the sites below it for every cost type and side,
 * and which nodes are worth drawing.
 */
#include "util/report/report-tree.h"
#include "check.h"

static struct report_frame frame(const char *name)
{
	return (struct report_frame){ .known = true, .name = (char *)name };
}

/* the child of parent named name, 0 when none */
static uint32_t find(const struct report_tree *t, uint32_t parent, const char *name)
{
	uint32_t c;

	for (c = t->nodes[parent].first_child; c; c = t->nodes[c].next_sibling)
		if (!strcmp(t->names.v[t->nodes[c].name], name))
			return c;
	return 0;
}

int main(void)
{
	struct report_frame leaf = frame("leaf"), mid = frame("mid"), main_ = frame("main"),
			    other = frame("other"), tiny = frame("tiny");
	const struct report_frame *s1[] = { &leaf, &mid, &main_ };	/* innermost first */
	const struct report_frame *s2[] = { &other, &main_ };
	const struct report_frame *s3[] = { &tiny, &main_ };
	struct report_site sites[] = {
		{ .kind = REPORT_SITE_STACK, .bytes = 1000, .calls = 10, .peak_bytes = 600,
		  .leaked_bytes = 100, .temporary_count = 4, .nr_frames = 3, .frames = s1 },
		{ .kind = REPORT_SITE_STACK, .bytes = 500, .calls = 1, .nr_frames = 2, .frames = s2 },
		{ .kind = REPORT_SITE_STACK, .bytes = 1, .calls = 1, .nr_frames = 2, .frames = s3 },
		{ .kind = REPORT_SITE_NO_STACK, .bytes = 7, .calls = 7 },
	};
	struct report_site_list head = { .sites = sites, .nr = 4 }, base = { .sites = sites, .nr = 2 };
	struct report_tree t;
	uint32_t m, l, tn;

	CHECK(!report_tree__init(&t), "init");
	CHECK(!report_tree__add(&t, &head, REPORT_TREE_HEAD), "head");
	CHECK(!report_tree__add(&t, &base, REPORT_TREE_BASE), "base");
	CHECK_U64(t.nr, 7, "all, main, mid, leaf, other, tiny, [no stack]");
	CHECK_U64(t.nodes[0].value[REPORT_TREE_HEAD][REPORT_SITE_BYTES], 1508, "the root's bytes");
	CHECK_U64(t.nodes[0].value[REPORT_TREE_BASE][REPORT_SITE_BYTES], 1500, "base's");
	m = find(&t, 0, "main");
	CHECK(m && t.nodes[m].value[REPORT_TREE_HEAD][REPORT_SITE_CALLS] == 12, "main: three sites");
	l = find(&t, find(&t, m, "mid"), "leaf");
	CHECK(l && t.nodes[l].value[REPORT_TREE_HEAD][REPORT_SITE_TEMPORARY] == 4 &&
	      t.nodes[l].value[REPORT_TREE_HEAD][REPORT_SITE_PEAK] == 600 &&
	      t.nodes[l].frame == &leaf, "leaf, root first");
	CHECK(find(&t, 0, "[no stack]"), "allocations without a stack");
	tn = find(&t, m, "tiny");
	CHECK(tn && t.nodes[tn].value[REPORT_TREE_BASE][REPORT_SITE_BYTES] == 0, "tiny: not in base");
	/* 1 of 1508 bytes and 1 of 19 calls: kept at 1/100 by calls, not at 1/10 */
	CHECK(report_tree__keep(&t, tn, 100), "a node of 1/19 of the calls");
	CHECK(!report_tree__keep(&t, tn, 10), "below 1/10 of everything");
	CHECK(report_tree__keep(&t, 0, 1), "the root");
	report_tree__exit(&t);
	return test_done("test-report-tree");
}
