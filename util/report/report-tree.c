// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/report/report-tree.h"
#include "util/util.h"

static const char *const no_frames[] = {
	[REPORT_SITE_STACK] = "[empty stack]",
	[REPORT_SITE_UNRESOLVED] = "[unknown stack]",
	[REPORT_SITE_NO_STACK] = "[no stack]",
};

int report_tree__init(struct report_tree *t)
{
	int64_t root;

	memset(t, 0, sizeof(*t));
	root = strtab__intern(&t->names, "all");
	if (root < 0 || grow_array((void **)&t->nodes, &t->cap, 1, sizeof(*t->nodes))) {
		report_tree__exit(t);
		return -ENOMEM;
	}
	memset(&t->nodes[0], 0, sizeof(t->nodes[0]));
	t->nr = 1;
	return 0;
}

void report_tree__exit(struct report_tree *t)
{
	free(t->nodes);
	strtab__exit(&t->names);
	u64_map__exit(&t->children);
	memset(t, 0, sizeof(*t));
}

/* the child of parent named name, made when new; 0 or -errno into *child */
static int child(struct report_tree *t, uint32_t parent, const char *name,
		 const struct report_frame *frame, uint32_t *out)
{
	int64_t n = strtab__intern(&t->names, name);
	struct report_tree_node *c;
	uint64_t *slot;

	if (n < 0)
		return n;
	if (n > UINT32_MAX || t->nr > UINT32_MAX)
		return -E2BIG;
	slot = u64_map__get(&t->children, (uint64_t)parent << 32 | (uint64_t)n);
	if (!slot)
		return -ENOMEM;
	if (*slot) {
		*out = *slot;
		return 0;
	}
	if (grow_array((void **)&t->nodes, &t->cap, t->nr + 1, sizeof(*t->nodes)))
		return -ENOMEM;
	c = &t->nodes[t->nr];
	memset(c, 0, sizeof(*c));
	c->parent = parent;
	c->name = n;
	c->frame = frame;
	c->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = t->nr;
	*out = *slot = t->nr++;
	return 0;
}

static void add_values(struct report_tree_node *n, const struct report_site *s,
		       enum report_tree_side side)
{
	unsigned int k;

	for (k = 0; k < REPORT_SITE_KEYS; k++)
		n->value[side][k] += report_site__value(s, k);
}

static int add_site(struct report_tree *t, const struct report_site *s,
		    enum report_tree_side side)
{
	uint32_t node = 0, i;
	int err;

	add_values(&t->nodes[0], s, side);
	if (s->kind != REPORT_SITE_STACK || !s->nr_frames) {
		err = child(t, 0, no_frames[s->kind], NULL, &node);
		if (!err)
			add_values(&t->nodes[node], s, side);
		return err;
	}
	for (i = s->nr_frames; i-- > 0;) {	/* root first */
		err = child(t, node, s->frames[i]->name, s->frames[i], &node);
		if (err)
			return err;
		add_values(&t->nodes[node], s, side);
	}
	return 0;
}

int report_tree__add(struct report_tree *t, const struct report_site_list *sites,
		     enum report_tree_side side)
{
	size_t i;
	int err;

	for (i = 0; i < sites->nr; i++) {
		err = add_site(t, &sites->sites[i], side);
		if (err)
			return err;
	}
	return 0;
}

int report_tree__keep(const struct report_tree *t, uint32_t node, uint64_t min_share)
{
	const struct report_tree_node *n = &t->nodes[node], *root = &t->nodes[0];
	unsigned int side, k;

	for (side = 0; side < REPORT_TREE_SIDES; side++)
		for (k = 0; k < REPORT_SITE_KEYS; k++)
			if (n->value[side][k] &&
			    (double)n->value[side][k] * min_share >= (double)root->value[side][k])
				return 1;
	return 0;
}
