#!/bin/bash
# track: the allocator probes trap in the tracked tree only, never in a bystander
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
bystander_pid=
cleanup() {
	if [ -n "$bystander_pid" ]; then
		kill "$bystander_pid" 2>/dev/null || true
		wait "$bystander_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

# a storm outside the tree, round after round, each counted in $tmp/rounds
start_bystander() {
	: >"$tmp/rounds"
	(
		while :; do
			"$WORKLOADS/alloc_storm_procs" 2 20000 >/dev/null
			echo >>"$tmp/rounds"
		done
	) &
	bystander_pid=$!
	wait_for 20 test -s "$tmp/rounds"
}

rounds() { wc -l <"$tmp/rounds"; }

# probe_runs <where>: "<entry> <return>" from the -v line of $tmp/out/track.err
probe_runs() {
	sed -n 's/.*the allocator probes ran \([0-9]*\) times at entry, \([0-9]*\) at return.*/\1 \2/p' \
		"$tmp/out/track.err"
}

# run <memtrack args...>: tracks with -v while the bystander storms, reports into $tmp/r.json
run() {
	local before
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	before=$(rounds)
	art=$(track_workload "$tmp/out" -v "$@")
	report_json "$art" "$tmp/r.json"
	during=$(($(rounds) - before))
}

# alloc_storm_procs 2 20000: two children of 20000 malloc and 20000 free each, nothing
# else; its probes stay in place the whole storm, with the bystander's storms around it
test_bpf_traps_only_the_tree() {
	run --backend bpf -- "$WORKLOADS/alloc_storm_procs" 2 20000
	[ "$during" -gt 0 ] && pass "bpf: the bystander stormed during the run ($during rounds)" ||
		fail "bpf: the bystander stormed during the run" "no round finished"
	expect_eq "bpf: the tree's 3 processes, no other" 3 "$(jq '.processes | length' "$tmp/r.json")"
	expect_eq "bpf: 40000 Malloc" 40000 "$(count "$tmp/r.json" Malloc)"
	expect_eq "bpf: 40000 Free" 40000 "$(count "$tmp/r.json" Free)"
	expect_eq "bpf: the probes ran once per call of the tree, at entry and return" \
		"80000 40000" "$(probe_runs)"
}

# through the shim, a dynamic program costs the BPF probes nothing at all
test_preload_traps_nothing() {
	run --backend auto -- "$WORKLOADS/alloc_storm_procs" 2 20000
	[ "$during" -gt 0 ] && pass "auto: the bystander stormed during the run ($during rounds)" ||
		fail "auto: the bystander stormed during the run" "no round finished"
	expect_eq "auto: 40000 Malloc" 40000 "$(count "$tmp/r.json" Malloc)"
	expect_eq "auto: the BPF probes never ran" "0 0" "$(probe_runs)"
}

start_bystander
test_bpf_traps_only_the_tree
test_preload_traps_nothing
finish
