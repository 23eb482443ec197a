// SPDX-License-Identifier: GPL-2.0
/*
 * report: the summary as text (see report.h): the header, the counts per
 * event type, the heap, the histogram of sizes, the processes and the top
 * call sites of each cost type.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util/artifact/artifact.h"
#include "util/quote.h"
#include "util/report/report.h"
#include "util/report/report-hints.h"
#include "util/report/report-suppress.h"
#include "util/report/report-threads.h"
#include "util/symbol/demangle.h"
#include "util/usage.h"
#include "util/util.h"

#define HB(v)	human_bytes((v), (char[32]){ 0 }, 32)

/* a wait status in words: "exit 3", "signal 9" */
static const char *exit_words(int32_t status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	return buf;
}

static double seconds(uint64_t ns)
{
	return ns / 1e9;
}

static void print_header(const struct report_summary *s, const char *path)
{
	const struct report_meta *m = &s->meta;
	char ex[32];

	printf("# artifact: %s\n", quote_term(path));
	if (s->has_meta) {
		if (m->has & AR_HAS(AK_COMMAND))
			printf("# command: %s\n", quote_term(m->command));
		printf("# recorded by %s %s (format %u), root pid %d",
		       m->tool ? quote_term(m->tool) : "?", m->version ? quote_term(m->version) : "?",
		       m->format, m->root_pid);
		if (m->has & AR_HAS(AK_EXIT_CODE))
			printf(", %s", exit_words(m->exit_code, ex, sizeof(ex)));
		if (m->has & AR_HAS(AK_DROPS))
			printf(", %" PRIu64 " events and %" PRIu64 " call stacks dropped",
			       m->drops_events, m->drops_total - m->drops_events);
		putchar('\n');
		if (m->running)
			printf("# the run stopped with %u process%s of the tree still running: "
			       "what they did after it is not here\n", m->running,
			       m->running == 1 ? "" : "es");
		if (m->blind)
			printf("# %u static stripped process%s: their allocations are not here\n",
			       m->blind, m->blind == 1 ? "" : "es");
		if (m->attached)
			printf("# attached to running processes: allocations made before "
			       "attaching are unknown; frees of their blocks are counted "
			       "apart as unknown frees (%" PRIu64 ")\n",
			       s->total.unknown_frees);
	} else {
		printf("# no Meta record: events only (CodSpeed), or a run that was killed\n");
	}
	printf("# %" PRIu64 " records, %" PRIu64 " events, %zu process%s, %.3f s\n",
	       s->records, s->events, s->nr_procs, s->nr_procs == 1 ? "" : "es",
	       seconds(report_summary__rel_ns(s, s->last_ts)));
}

static void print_counts(const uint64_t *counts)
{
	unsigned int k;

	printf("\nEvents\n");
	for (k = MT_MALLOC; k <= MT_BRK; k++)
		printf("  %-14s %14" PRIu64 "\n", artifact__kind_name(k), counts[k]);
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

static void print_heap(const struct report_summary *s)
{
	const struct report_heap *h = &s->total;

	printf("\nHeap\n");
	printf("  %-20s %s in %" PRIu64 " blocks (%" PRIu64 " bytes)\n", "allocated",
	       HB(h->bytes_allocated), h->allocs, h->bytes_allocated);
	printf("  %-20s %s in %" PRIu64 " blocks (%" PRIu64 " bytes)\n", "freed",
	       HB(h->bytes_freed), h->frees, h->bytes_freed);
	printf("  %-20s %s (%" PRIu64 " bytes) at %.6f s\n", "peak live heap",
	       HB(h->peak_bytes), h->peak_bytes,
	       seconds(report_summary__rel_ns(s, h->peak_ts)));
	if (s->lifetimes == REPORT_LIFETIMES_LATE)
		printf("  %-20s (with the blocks of exited processes and replaced images: "
		       "the trailer was not read first)\n", "");
	printf("  %-20s %" PRIu64 " blocks, %s (%" PRIu64 " bytes)\n", "live at exit",
	       h->leaked_count, HB(h->leaked_bytes), h->leaked_bytes);
	if (h->suppressed_count)
		printf("  %-20s %" PRIu64 " blocks, %s (%" PRIu64 " bytes) also live at exit, "
		       "not counted (see Suppressed leaks)\n", "suppressed",
		       h->suppressed_count, HB(h->suppressed_bytes), h->suppressed_bytes);
	if (h->discarded_count)
		printf("  %-20s %" PRIu64 " blocks, %s (live when their process exec'd)\n",
		       "gone with an exec", h->discarded_count, HB(h->discarded_bytes));
	printf("  %-20s %" PRIu64 " (not allocated while tracked)\n", "unknown frees",
	       h->unknown_frees);
	if (h->libc_freed_count)
		printf("  %-20s %" PRIu64 " blocks, %s at exit by __libc_freeres()%s\n",
		       "freed by glibc", h->libc_freed_count, HB(h->libc_freed_bytes),
		       s->show_libc_frees ? ": counted live at exit" : "");
	printf("  %-20s %" PRIu64 " blocks (%.1f%%), %s\n", "temporary",
	       h->temporary_count, percent(h->temporary_count, h->allocs),
	       HB(h->temporary_bytes));
	if (h->failed_allocs)
		printf("  %-20s %" PRIu64 "\n", "failed allocations", h->failed_allocs);
	if (h->overwritten)
		printf("  %-20s %" PRIu64 " (allocated again while live: frees missed)\n",
		       "overwritten", h->overwritten);

	printf("\nOutside the heap\n");
	printf("  %-20s %" PRIu64 " calls, %s mapped\n", "mmap",
	       h->counts[MT_MMAP], HB(h->mmap_bytes));
	printf("  %-20s %" PRIu64 " calls, %s unmapped\n", "munmap",
	       h->counts[MT_MUNMAP], HB(h->munmap_bytes));
	printf("  %-20s %" PRIu64 " calls, the break grew by %s\n", "brk",
	       h->counts[MT_BRK], HB(h->brk_growth));
}

/* the largest size in a bucket */
uint64_t hist_upper(unsigned int bucket)
{
	if (!bucket)
		return 0;
	return bucket == 64 ? UINT64_MAX : (1ULL << bucket) - 1;
}

static void print_histogram(const struct report_summary *s)
{
	unsigned int i, first = REPORT_HIST_BUCKETS, last = 0;
	uint64_t most = 0;

	for (i = 0; i < REPORT_HIST_BUCKETS; i++) {
		if (!s->hist[i])
			continue;
		if (first == REPORT_HIST_BUCKETS)
			first = i;
		last = i;
		if (s->hist[i] > most)
			most = s->hist[i];
	}
	if (!most)
		return;
	printf("\nAllocation sizes\n");
	for (i = first; i <= last; i++) {
		char lo[32], hi[32];
		int stars = (int)(40 * s->hist[i] / most);

		human_bytes(report_hist__lower(i), lo, sizeof(lo));
		human_bytes(hist_upper(i), hi, sizeof(hi));
		printf("  %10s .. %-10s %12" PRIu64 " |%-40.*s|\n", lo, hi, s->hist[i],
		       stars, "****************************************");
	}
}

static int cmp_proc_pid(const void *a, const void *b)
{
	const struct report_process *x = *(const struct report_process *const *)a;
	const struct report_process *y = *(const struct report_process *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* the processes by pid; NULL when there are none or no memory */
const struct report_process **sorted_processes(const struct report_summary *s)
{
	const struct report_process **v = malloc((s->nr_procs + 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < s->nr_procs; i++)
		v[i] = &s->procs[i];
	qsort(v, s->nr_procs, sizeof(*v), cmp_proc_pid);
	return v;
}

/* --threads: the threads that allocated most, --top of them */
static void print_threads(const struct report_summary *s, unsigned int top)
{
	const struct report_threads *t = s->threads;
	size_t i, n;

	if (!t)
		return;
	n = top && top < t->nr ? top : t->nr;
	printf("\nThreads by bytes allocated, top %zu of %zu\n", n, t->nr);
	printf("  %8s %8s %10s %11s %10s %11s %11s %8s %11s\n", "PID", "TID", "ALLOCS",
	       "ALLOCATED", "FREES", "FREED", "PEAK", "LEAKED", "LIVE@EXIT");
	for (i = 0; i < n; i++) {
		const struct report_thread *th = &t->v[i];

		printf("  %8d %8d %10" PRIu64 " %11s %10" PRIu64 " %11s %11s %8" PRIu64 " %11s\n",
		       th->pid, th->tid, th->allocs, HB(th->bytes_allocated), th->frees,
		       HB(th->bytes_freed), HB(th->peak_bytes), th->leaked_count,
		       HB(th->leaked_bytes));
	}
}

static void print_processes(const struct report_summary *s)
{
	const struct report_process **procs = sorted_processes(s);
	size_t i;

	if (!s->nr_procs || !procs) {
		free(procs);
		return;
	}
	printf("\nProcesses\n");
	printf("  %8s %8s %-16s %-10s %-7s %10s %11s %11s %11s %8s %s\n", "PID", "PPID",
	       "COMM", "EXIT", "TRACED", "ALLOCS", "ALLOCATED", "PEAK", "LIVE@EXIT", "UNKNOWN",
	       "EXE");
	for (i = 0; i < s->nr_procs; i++) {
		const struct report_process *p = procs[i];
		char ppid[16] = "-", ex[32] = "-", why[48] = "";

		if (p->info_has & AR_HAS(AK_PPID))
			snprintf(ppid, sizeof(ppid), "%d", p->ppid);
		if (p->info_has & AR_HAS(AK_EXIT_CODE))
			exit_words(p->exit_code, ex, sizeof(ex));
		/* after the executable: a few words that would not fit the column */
		if (p->backend && !strcmp(p->backend, "bpf") && p->bpf_why)
			snprintf(why, sizeof(why), " (bpf: %s)", quote_term(p->bpf_why));
		printf("  %8d %8s %-16s %-10s %-7s %10" PRIu64 " %11s %11s %11s %8" PRIu64 " %s%s\n",
		       p->pid, ppid, p->comm ? quote_term(p->comm) : "-", ex,
		       p->backend && !strcmp(p->backend, "bpf") ? "bpf" :
		       p->backend ? "preload" : "-", p->heap.allocs,
		       HB(p->heap.bytes_allocated), HB(p->heap.peak_bytes),
		       HB(p->heap.leaked_bytes), p->heap.unknown_frees,
		       p->exe ? quote_term(p->exe) : "-", why);
	}
	free(procs);
}

/* ---- call sites ------------------------------------------------------------ */

const char *const site_titles[REPORT_SITE_KEYS] = {
	[REPORT_SITE_BYTES] = "bytes allocated",
	[REPORT_SITE_CALLS] = "calls",
	[REPORT_SITE_PEAK] = "contribution to the peak",
	[REPORT_SITE_LEAKED] = "bytes leaked (live at exit)",
	[REPORT_SITE_TEMPORARY] = "temporary allocations",
};

/*
 * `symbol+0xoff (module) file:line`, or `symbol (inlined) (module)
 * file:line`; templates without their arguments unless names are raw
 */
static void print_frame(const struct report_frame *f, bool raw_names)
{
	const char *module = f->module ? strrchr(f->module, '/') : NULL;
	char name[512];

	module = module && module[1] ? module + 1 : f->module;
	if (!f->known) {
		printf("[unknown] (frame %" PRIu64 " has no Frame record)", f->id);
		return;
	}
	if (f->symbol) {
		fputs(quote_term(raw_names ? f->symbol :
				 symbol_name__shorten(f->symbol, name, sizeof(name))), stdout);
		if (f->inlined)
			fputs(" (inlined)", stdout);
		else
			printf("+0x%" PRIx64, f->offset);
		if (module)
			printf(" (%s)", quote_term(module));
	} else {
		fputs(quote_term(f->name), stdout);
	}
	if (f->file) {
		printf(" %s", quote_term(f->file));
		if (f->line)
			printf(":%" PRIu32, f->line);
	}
}

void print_site_frames(const struct report_site *site, const char *indent,
			      bool raw_names)
{
	uint32_t i;

	switch (site->kind) {
	case REPORT_SITE_NO_STACK:
		printf("%s[no call stack]\n", indent);
		return;
	case REPORT_SITE_UNRESOLVED:
		printf("%s[stack %" PRIu64 " has no Stack record]\n", indent, site->stack);
		return;
	case REPORT_SITE_STACK:
		break;
	}
	if (!site->nr_frames)
		printf("%s[empty stack]\n", indent);
	for (i = 0; i < site->nr_frames; i++) {
		fputs(indent, stdout);
		print_frame(site->frames[i], raw_names);
		putchar('\n');
	}
}

static void print_site_section(const struct report_summary *s,
			       const struct report_site_list *list,
			       enum report_site_key key, const struct report_opts *o,
			       const struct report_site **top)
{
	size_t i, n, nonzero;

	n = report_site_list__top(list, key, o->top, top, &nonzero);
	printf("\nCall sites by %s", site_titles[key]);
	if (key == REPORT_SITE_PEAK)
		printf(" (%s at %.6f s)", HB(s->total.peak_bytes),
		       seconds(report_summary__rel_ns(s, s->total.peak_ts)));
	if (!nonzero) {
		printf("\n  none\n");
		return;
	}
	printf(", top %zu of %zu\n", n, nonzero);
	printf("  %4s %11s %10s %11s %11s %8s %10s\n", "#", "ALLOCATED", "CALLS", "AT PEAK",
	       "LEAKED", "BLOCKS", "TEMPORARY");
	for (i = 0; i < n; i++) {
		const struct report_site *site = top[i];

		printf("  %4zu %11s %10" PRIu64 " %11s %11s %8" PRIu64 " %10" PRIu64 "\n",
		       i + 1, HB(site->bytes), site->calls, HB(site->peak_bytes),
		       HB(site->leaked_bytes), site->leaked_count, site->temporary_count);
		print_site_frames(site, "         ", o->no_demangle);
	}
}

/* the call sites of s by their frames, --stack-depth deep; 0 or -1 */
int resolve_sites(struct report_summary *s, const struct report_opts *o,
			 enum report_site_match match, struct report_site_list *list)
{
	if (report_sites__resolve(s->sites, o->depth, match, list))
		return error("out of memory");
	return 0;
}

static int print_sites(struct loaded *l, const struct report_opts *o)
{
	struct report_site_list list;
	const struct report_site **top;
	unsigned int k;

	if (!report_sites__has_stacks(l->s.sites)) {
		printf("\nCall sites\n  no call stacks: %s\n", NO_STACKS_HINT);
		return 0;
	}
	if (resolve_sites(&l->s, o, REPORT_MATCH_FRAME, &list))
		return -1;
	top = malloc((list.nr ? list.nr : 1) * sizeof(*top));
	if (!top) {
		report_site_list__exit(&list);
		return error("out of memory");
	}
	for (k = 0; k < REPORT_SITE_KEYS; k++)
		if (o->sort_key < 0 || o->sort_key == (int)k)
			print_site_section(&l->s, &list, k, o, top);
	free(top);
	report_site_list__exit(&list);
	return 0;
}

int print_summary(struct loaded *l, const char *path, const struct report_opts *o)
{
	print_header(&l->s, path);
	report_hints__print(&l->s, stdout);
	if (l->truncated)
		printf("# TRUNCATED: only the records before the error below\n");
	print_counts(l->s.total.counts);
	print_heap(&l->s);
	print_histogram(&l->s);
	print_processes(&l->s);
	if (o->threads)
		print_threads(&l->s, o->top);
	if (l->s.total.suppressed_count) {
		printf("\nSuppressed leaks (--no-default-suppressions counts the built-in ones)\n");
		report_suppressions__print(o->sup, stdout);
	}
	return print_sites(l, o);
}
