/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_TREE_H
#define MEMTRACK_REPORT_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "util/report/report-sites.h"
#include "util/report/strtab.h"
#include "util/u64-map.h"

/*
 * The call tree of report --html's flame graph: the whole stacks of the
 * sites merged by frame name, root first (as --flamegraph's lines are), a
 * node's figures the sums of the sites below it, for every cost type
 * (REPORT_SITE_KEYS) and for one or two artifacts (a diff's head and base).
 * Memory grows with the distinct stacks, not the events.
 */

enum report_tree_side {
	REPORT_TREE_HEAD,		/* the artifact, or a diff's <head> */
	REPORT_TREE_BASE,		/* a diff's <base> */
	REPORT_TREE_SIDES,
};

struct report_tree_node {
	uint32_t parent;		/* the root (0) is its own parent */
	uint32_t name;			/* in the tree's names */
	uint32_t first_child, next_sibling;	/* 0: none (the root is nobody's child) */
	const struct report_frame *frame;	/* the first frame met here; NULL: none */
	uint64_t value[REPORT_TREE_SIDES][REPORT_SITE_KEYS];
};

struct report_tree {
	struct report_tree_node *nodes;	/* [0] is the root, "all" */
	size_t nr, cap;
	struct strtab names;
	struct u64_map children;	/* parent << 32 | name -> node */
};

/* 0 or -ENOMEM */
int report_tree__init(struct report_tree *t);
void report_tree__exit(struct report_tree *t);

/*
 * Adds the sites of one side; their frames must outlive the tree (they are
 * the report_sites' whose list it is).  0, -ENOMEM, or -E2BIG past 2^32 nodes.
 */
int report_tree__add(struct report_tree *t, const struct report_site_list *sites,
		     enum report_tree_side side);

/*
 * Whether a node is worth drawing: some figure of it, on some side, is at
 * least 1/min_share of the root's.  Children never have more than their
 * parent, so the nodes kept are whole subtrees' tops.
 */
int report_tree__keep(const struct report_tree *t, uint32_t node, uint64_t min_share);

#endif
