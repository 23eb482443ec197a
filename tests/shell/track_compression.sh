#!/bin/bash
# track: -z/--compression-level, the same events at any level, fewer bytes at a higher one
# (bad levels: track_errors)
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
	if [ "$(stat -c %s "$best")" -lt "$(stat -c %s "$fast")" ]; then
		pass "level 19 writes fewer bytes than level 1"
	else
		fail "level 19 writes fewer bytes than level 1" \
			"$(stat -c %s "$best") vs $(stat -c %s "$fast") bytes"
	fi
}

test_levels
finish
