#!/bin/bash
# track: -z/--compression-level, the same events at any level (bad levels: track_errors;
# fewer bytes at a higher one, for the same windows: unit/test-encoder)
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# track_at <level>: the artifact of alloc_storm_procs 2 20000 at that level
track_at() {
	mkdir -p "$tmp/z$1"
	track_workload "$tmp/z$1" -z "$1" --call-graph no -- "$WORKLOADS/alloc_storm_procs" 2 20000
}

test_levels() {
	local fast best
	fast=$(track_at 1)
	best=$(track_at 19)
	report_json "$fast" "$tmp/fast.json"
	report_json "$best" "$tmp/best.json"
	expect_eq "level 1: 40000 Malloc" 40000 "$(count "$tmp/fast.json" Malloc)"
	expect_eq "level 19: 40000 Malloc" 40000 "$(count "$tmp/best.json" Malloc)"
	expect_eq "level 19: 40000 Free" 40000 "$(count "$tmp/best.json" Free)"
	expect_eq "level 19: the same events as level 1" \
		"$(jq -c '[.counts.Malloc, .counts.Free, .bytes_allocated, .leaked_count, .meta.drops.events]' "$tmp/fast.json")" \
		"$(jq -c '[.counts.Malloc, .counts.Free, .bytes_allocated, .leaked_count, .meta.drops.events]' "$tmp/best.json")"
	# no byte count compared: memtrack closes a window when it is 100 ms old, so how many
	# events each holds, and what they compress to, is the machine's load as much as the level
}

test_levels
finish
