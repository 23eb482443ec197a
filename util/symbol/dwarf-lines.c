// SPDX-License-Identifier: GPL-2.0
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/symbol/dwarf-lines.h"
#include "util/util.h"

/* deeper than any compiler nests code; bounds the walk of a crafted file */
#define MAX_NESTING	64

struct dwarf_cu_range {
	uint64_t low, high;	/* [low, high) */
	Dwarf_Die cu;
};

static int cu_range_cmp(const void *a, const void *b)
{
	const struct dwarf_cu_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->high < y->high ? -1 : x->high > y->high;
}

/*
 * The address ranges of every compile unit, from the units themselves
 * (.debug_aranges is optional, clang does not write it).
 */
int dwarf_lines__init(struct dwarf_lines *dl, Dwarf *dwarf)
{
	size_t cap = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t type;

	memset(dl, 0, sizeof(*dl));
	dl->dwarf = dwarf;
	while (dwarf_get_units(dwarf, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		Dwarf_Addr base, low, high;
		ptrdiff_t off = 0;

		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &low, &high)) > 0) {
			if (low >= high)
				continue;
			if (grow_array((void **)&dl->cus, &cap, dl->nr_cus + 1, sizeof(*dl->cus)))
				return -ENOMEM;
			dl->cus[dl->nr_cus].low = low;
			dl->cus[dl->nr_cus].high = high;
			dl->cus[dl->nr_cus].cu = cudie;
			dl->nr_cus++;
		}
	}
	qsort(dl->cus, dl->nr_cus, sizeof(*dl->cus), cu_range_cmp);
	return 0;
}

void dwarf_lines__exit(struct dwarf_lines *dl)
{
	free(dl->cus);
	memset(dl, 0, sizeof(*dl));
}

static Dwarf_Die *find_cu(const struct dwarf_lines *dl, uint64_t addr)
{
	size_t lo = 0, hi = dl->nr_cus, i, back;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dl->cus[mid].low <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* ranges may nest or overlap (rare): look a few back */
	for (i = lo - 1, back = 0; back < 4; back++, i--) {
		if (addr < dl->cus[i].high)
			return &dl->cus[i].cu;
		if (!i)
			break;
	}
	return NULL;
}

/* DIEs that hold code at addresses of their own */
static bool is_code_scope(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_entry_point:
		return true;
	default:
		return false;
	}
}

/* DIEs without addresses that may hold functions: C++ namespaces, classes */
static bool is_container(int tag)
{
	switch (tag) {
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return true;
	default:
		return false;
	}
}

/*
 * The function and the inlined calls that hold addr, outermost first, into
 * chain[*n..max): a walk down from parent that enters only the scopes
 * covering addr.  True once a scope covering addr was found.
 */
static bool find_chain(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *chain, int *n,
		       int max, int nesting)
{
	Dwarf_Die scope = *parent, child;
	bool found = false;

	while (nesting++ < MAX_NESTING && dwarf_child(&scope, &child) == 0) {
		bool entered = false;

		do {
			int tag = dwarf_tag(&child);

			if (is_code_scope(tag) && dwarf_haspc(&child, addr) > 0) {
				if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) &&
				    *n < max)
					chain[(*n)++] = child;
				entered = true;
			} else if (is_container(tag) &&
				   find_chain(&child, addr, chain, n, max, nesting)) {
				return true;
			}
		} while (!entered && dwarf_siblingof(&child, &child) == 0);
		if (!entered)
			break;
		found = true;
		scope = child;		/* only its children can hold addr more closely */
	}
	return found;
}

static const char *die_function_name(Dwarf_Die *die)
{
	static const int names[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute attr;
	const char *name;
	size_t i;

	/* the concrete instance names its abstract origin, which may name its declaration */
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		name = dwarf_formstring(dwarf_attr_integrate(die, names[i], &attr));
		if (name && *name)
			return name;
	}
	return NULL;
}

/* the file:line of the call that an inlined instance stands for */
static void call_site(Dwarf_Die *inl, Dwarf_Die *cu, struct src_frame *f)
{
	Dwarf_Word file, line;
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	size_t nfiles;

	f->file = NULL;
	f->line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &line) || !line ||
	    line > UINT32_MAX)
		return;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &file) ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) || file >= nfiles)
		return;
	f->file = dwarf_filesrc(files, file, NULL, NULL);
	f->line = f->file ? line : 0;
}

static void line_at(Dwarf_Die *cu, uint64_t addr, struct src_frame *f)
{
	Dwarf_Line *line = dwarf_getsrc_die(cu, addr);
	int lineno;

	f->file = NULL;
	f->line = 0;
	if (!line || dwarf_lineno(line, &lineno) || lineno <= 0)
		return;
	f->file = dwarf_linesrc(line, NULL, NULL);
	f->line = f->file ? lineno : 0;
}

int dwarf_lines__find(const struct dwarf_lines *dl, uint64_t addr,
		      struct src_frame *out, int max)
{
	Dwarf_Die chain[MAX_NESTING], *cu = find_cu(dl, addr);
	int n = 0, i, k;

	if (!cu || max < 1)
		return 0;
	out[0].function = NULL;
	line_at(cu, addr, &out[0]);
	find_chain(cu, addr, chain, &n, max < MAX_NESTING ? max : MAX_NESTING, 0);
	/* chain[0] is the function (when found), chain[1..] the inlined calls in it */
	for (i = n - 1, k = 0; i >= 0 && k + 1 < max; i--) {
		if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine)
			break;
		out[k].function = die_function_name(&chain[i]);
		if (!out[k].function)
			break;
		k++;
		out[k].function = NULL;
		call_site(&chain[i], cu, &out[k]);
	}
	return k + 1;
}
