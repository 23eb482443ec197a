// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <string.h>

#include "util/quote.h"
#include "util/report/report-hints.h"
#include "util/report/report-sites.h"
#include "util/util.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool python_exe_name(const char *path)
{
	const char *name = base_name(path), *p;

	if (strncmp(name, "python", 6))
		return false;
	for (p = name + 6; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			return false;
	return true;
}

static int find_libpython(uint32_t site, const struct report_frame *const *frames,
			  uint32_t nr, void *arg)
{
	struct python_hint *h = arg;
	uint32_t i;

	(void)site;
	for (i = 0; i < nr; i++) {
		const char *m = frames[i]->module;

		if (m && !strncmp(base_name(m), "libpython", 9)) {
			snprintf(h->module, sizeof(h->module), "%s", base_name(m));
			h->found = true;
			return 1;
		}
	}
	return 0;
}

void report_hint__python(struct report_summary *s, struct python_hint *h)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < s->nr_procs; i++) {
		const struct report_process *p = &s->procs[i];

		if (p->pymalloc_off) {
			h->pymalloc_off = true;
			continue;
		}
		if ((p->exe && python_exe_name(p->exe)) || (!p->exe && p->comm &&
							     python_exe_name(p->comm))) {
			if (!h->proc || p->pid < h->proc->pid)
				h->proc = p;
			h->found = true;
		}
	}
	/* a libpython frame of a process that ran without pymalloc says nothing */
	if (!h->found && !h->pymalloc_off && s->sites)
		report_sites__each_stack(s->sites, find_libpython, h);
}

void report_hints__print(struct report_summary *s, FILE *out)
{
	struct python_hint h;

	report_hint__python(s, &h);
	if (!h.found)
		return;
	fputs("# hint: ", out);
	if (h.proc) {
		fprintf(out, "pid %d runs Python (", h.proc->pid);
		quote_term_fputs(h.proc->exe ? h.proc->exe : h.proc->comm, out);
		fputs(")", out);
	} else {
		fputs("Python runs here (", out);
		quote_term_fputs(h.module, out);
		fputs(")", out);
	}
	fputs(", whose objects of up to 512 bytes\n"
	      "#   come from pymalloc's own arenas, unseen here: run it with PYTHONMALLOC=malloc\n"
	      "#   to see every object\n", out);
}
