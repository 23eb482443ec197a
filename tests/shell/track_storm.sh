#!/bin/bash
# track: alloc_storm_procs and alloc_storm_threads 16 50000, every one of the 1.6 M events, no drop
# timeout: 600
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

test_storm_exact() {
	art=$(track_workload "$tmp" --stats "$tmp/s.jsonl" -- "$WORKLOADS/alloc_storm_procs" 16 50000)
	report_json "$art" "$tmp/r.json"
	expect_eq "storm: 800000 Malloc" 800000 "$(count "$tmp/r.json" Malloc)"
	expect_eq "storm: 800000 Free" 800000 "$(count "$tmp/r.json" Free)"
	expect_eq "storm: 17 processes" 17 "$(jq -r '.processes | length' "$tmp/r.json")"
	expect_eq "storm: every child did 50000" 16 \
		"$(jq '[.processes[] | select(.counts.Malloc == 50000 and .counts.Free == 50000)] | length' "$tmp/r.json")"
	expect_eq "storm: no drops" "0 0" "$(jq -r '"\(.meta.drops.events) \(.meta.drops.stacks)"' "$tmp/r.json")"
	expect_eq "storm: nothing leaked" 0 "$(jq -r .leaked_count "$tmp/r.json")"
	# how often producers are stopped depends on how soon memtrack gets a core (a busy
	# machine stops them more): what must hold is that no event is lost (above) and that
	# the stops are sane; "no pressure at the default settings" is make bench's (section 8)
	check_pressure_rows "storm" "$tmp/s.jsonl"
	# stacks are on by default (dwarf): one for every allocation, frees carry none
	expect_eq "storm: every allocation has a stack" 0 \
		"$("$MEMTRACK" report --dump "$art" | jq -c 'select(.type == "Malloc" and .stack == null)' | wc -l)"
}

# 16 threads of one process: a stop for pressure must stop the thread that asked for it
# at once, or the others run on past the end of the stacks ring (it once lost thousands)
test_storm_threads() {
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" -- "$WORKLOADS/alloc_storm_threads" 16 50000) || true
	report_json "$art" "$tmp/r.json"
	expect_eq "threads: 800000 malloc(16..1039)" 800000 \
		"$("$MEMTRACK" report --dump "$art" | jq -c 'select(.type == "Malloc" and .size >= 16 and .size <= 1039)' | wc -l)"
	expect_eq "threads: no drops" "0 0" "$(jq -r '"\(.meta.drops.events) \(.meta.drops.stacks)"' "$tmp/r.json")"
	expect_eq "threads: every allocation has a stack" 0 \
		"$("$MEMTRACK" report --dump "$art" | jq -c 'select((.type == "Malloc" or .type == "Calloc") and .stack == null)' | wc -l)"
}

test_storm_exact
test_storm_threads
finish
