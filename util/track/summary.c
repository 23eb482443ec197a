// SPDX-License-Identifier: GPL-2.0
/*
 * What a track session tells at its end: the summary line (perf's habit),
 * with -v what the unwinder, the symbolizer and the probes did, and the
 * exit status, which is the command's unless the artifact is incomplete.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "util/probe/bpf_track.h"
#include "util/quote.h"
#include "util/symbol/symbolize.h"
#include "util/track/encoder.h"
#include "util/track/resolver.h"
#include "util/track/session.h"
#include "util/track/stack-ids.h"
#include "util/usage.h"
#include "util/util.h"

/* -v: what the dwarf unwinding did */
static void print_unwind_stats(struct track_session *s)
{
	struct stack_ids_stats st;
	char size[32];

	if (!s->stack_ids || verbose < 1)
		return;
	stack_ids__stats(s->stack_ids, &st);
	fprintf(stderr, "memtrack track: unwound %lu stack copies (%s), %.1f frames each, "
		"into %lu distinct stacks\n", st.raw,
		human_bytes(st.raw_bytes, size, sizeof(size)),
		st.raw ? (double)st.frames / st.raw : 0.0, st.stacks);
	if (s->cfi_rules >= 0)
		fprintf(stderr, "memtrack track: the preload shims share %" PRId64
			" CFI rules: %" PRIu64 " read from the runs before, %" PRIu64
			" computed in this one, each in one process\n", s->cfi_rules,
			rule_cache__loaded(&s->rules), rule_cache__stored(&s->rules));
}

/* -v: how much DWARF the frames took, and how much of it earlier runs had kept */
static void print_symbolizer_stats(struct track_session *s)
{
	struct symbolizer_stats st;

	if (!s->sym || verbose < 1)
		return;
	symbolizer__stats(s->sym, &st);
	fprintf(stderr, "memtrack track: symbols of %" PRIu64 " files, the DWARF of %" PRIu64
		" read, %" PRIu64 " answered from the cache (%" PRIu64 " addresses)\n",
		st.loaded, st.dwarf_opened, st.dwarf_cached, st.cache_addrs);
}

/* -v: what the tracked tree paid in the BPF path (nothing outside it does) */
static void print_probe_runs(struct track_session *s)
{
	if (verbose < 1)
		return;
	fprintf(stderr, "memtrack track: the allocator probes ran %" PRIu64 " times at entry, "
		"%" PRIu64 " at return\n", s->probe_runs[MT_PROBE_ENTRY],
		s->probe_runs[MT_PROBE_RETURN]);
	fprintf(stderr, "memtrack track: back-pressure froze the tree %" PRIu64 " times, "
		"stopped a process %" PRIu64 " times (SIGSTOP)\n",
		atomic_load(&s->watch.freezes), *bpf_track__pressure_stops(s->bpf));
	fprintf(stderr, "memtrack track: held processes for their new code %" PRIu64
		" times at exec, %" PRIu64 " at a code mapping; %" PRIu64 " execs ran on unheld, "
		"%" PRIu64 " code mappings were told by event\n",
		s->held_exec, s->held_mmap, s->unheld_exec, s->code_maps);
}

/* processes traced through the preload shim (or that would have been, had they allocated) */
static size_t preload_processes(const struct proc_table *pt)
{
	size_t i, n = 0;

	for (i = 0; i < pt->count; i++)
		n += pt->procs[i].mode && pt->procs[i].mode != MT_MODE_BPF;
	return n;
}

static void describe_backends(const struct proc_table *pt, char *buf, size_t len)
{
	const char *whys[16];
	size_t counts[16], n = 0, nbpf = 0, i, j;
	int at;

	for (i = 0; i < pt->count; i++) {
		const char *why = pt->procs[i].bpf_why ? pt->procs[i].bpf_why : "other";

		if (pt->procs[i].mode != MT_MODE_BPF)
			continue;
		nbpf++;
		for (j = 0; j < n && strcmp(whys[j], why); j++)
			;
		if (j == n && n < ARRAY_SIZE(whys)) {
			whys[n] = why;
			counts[n++] = 0;
		}
		if (j < n)
			counts[j]++;
	}
	at = snprintf(buf, len, "%zu preload", preload_processes(pt));
	if (nbpf)
		at += snprintf(buf + at, len - at, ", %zu bpf", nbpf);
	for (j = 0; j < n && at > 0 && (size_t)at < len; j++)
		at += snprintf(buf + at, len - at, "%s%zu %s", j ? ", " : ": ", counts[j], whys[j]);
}


void session__print_summary(struct track_session *s)
{
	unsigned int unprobed = bpf_track__probe_failures(s->bpf);
	char size[32], stacks[64] = "", running[64] = "", blind[64] = "", path[PATH_MAX];
	char backends[256];
	uint64_t episodes;

	print_unwind_stats(s);
	print_symbolizer_stats(s);
	print_probe_runs(s);
	if (s->opts->quiet)
		return;
	quote_term_escape(path, sizeof(path), s->artifact_path);
	if (s->resolver)
		snprintf(stacks, sizeof(stacks), ", %lu stack%s of %lu frame%s",
			 resolver__stacks(s->resolver), resolver__stacks(s->resolver) == 1 ? "" : "s",
			 resolver__frames(s->resolver), resolver__frames(s->resolver) == 1 ? "" : "s");
	if (s->running)
		snprintf(running, sizeof(running), ", %u STILL RUNNING, NOT FOLLOWED", s->running);
	if (s->blind)
		snprintf(blind, sizeof(blind), ", %u PROCESS%s NOT SEEN (static, stripped)",
			 s->blind, s->blind == 1 ? "" : "ES");
	else if (s->untraceable)
		snprintf(blind, sizeof(blind), ", %u SETUID PROCESS%s NOT TRACKED (sudo)",
			 s->untraceable, s->untraceable == 1 ? "" : "ES");
	episodes = s->events.episodes + s->stacks.episodes + s->waits.episodes +
		   atomic_load(&s->watch.episodes);
	describe_backends(&s->procs, backends, sizeof(backends));
	fprintf(stderr, "[ memtrack track: %lu events, %lu process%s (%s)%s, '%s' (%s), "
		"%lu drops, %lu pressure episode%s%s%s%s%s%s%s%s ]\n",
		encoder__events_in(s->enc), s->procs.count, s->procs.count == 1 ? "" : "es",
		backends, stacks,
		path, human_bytes(encoder__bytes_written(s->enc), size, sizeof(size)),
		s->event_drops + s->stack_drops + s->event_lost,
		episodes, episodes == 1 ? "" : "s",
		unprobed ? ", SOME ALLOCATORS NOT PROBED (see above)" : "",
		s->corrupt ? ", CORRUPT RINGS (see above)" : "",
		s->ringless ? ", THREADS WITHOUT A RING (see above)" : "",
		s->unserved ? ", PROCESSES NOT SERVED (see above)" : "",
		bpf_track__holds_ended_early(s->bpf) ? ", HOLDS ENDED BY ANOTHER (see below)" : "",
		running, blind);
}

int track_session__exit_status(const struct track_session *s, int err)
{
	if (err || s->unseen)
		return MEMTRACK_EXIT_FATAL;
	if (s->refused) {
		error("%u processes could not take the preload shim (--backend preload)",
		      s->refused);
		return MEMTRACK_EXIT_FATAL;
	}
	if (s->ringless && !s->opts->tolerate_drops) {
		error("%u thread%s could not make a preload shim ring: the artifact is "
		      "incomplete", s->ringless, s->ringless == 1 ? "" : "s");
		return MEMTRACK_EXIT_FATAL;
	}
	if (s->unserved && !s->opts->tolerate_drops) {
		error("%u process%s could not be served by the preload shim's socket: the "
		      "artifact is incomplete", s->unserved, s->unserved == 1 ? "" : "es");
		return MEMTRACK_EXIT_FATAL;
	}
	if (bpf_track__holds_ended_early(s->bpf) && !s->opts->tolerate_drops) {
		error("%lu time%s another process's SIGCONT resumed a process memtrack held for "
		      "its probes before they were attached: its allocations until then may be "
		      "missing, the artifact is incomplete",
		      (unsigned long)bpf_track__holds_ended_early(s->bpf),
		      bpf_track__holds_ended_early(s->bpf) == 1 ? "" : "s");
		return MEMTRACK_EXIT_FATAL;
	}
	if (s->event_lost && !s->opts->tolerate_drops) {
		error("%lu bytes of events in corrupt rings were lost: the artifact is incomplete",
		      s->event_lost);
		return MEMTRACK_EXIT_FATAL;
	}
	if ((s->event_drops || s->stack_drops) && !s->opts->tolerate_drops) {
		error("%lu events and %lu call stacks were dropped: the artifact is incomplete "
		      "(use a larger --ring-size, or --tolerate-drops)",
		      s->event_drops, s->stack_drops);
		return MEMTRACK_EXIT_FATAL;
	}
	if (s->detached)
		return MEMTRACK_EXIT_DETACHED;
	if (s->attach)
		return 0;
	if (WIFSIGNALED(s->status))
		return 128 + WTERMSIG(s->status);
	return WEXITSTATUS(s->status);
}
