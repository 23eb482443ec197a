#!/bin/bash
# track: back-pressure and stops in a pid namespace of its own: SIGSTOP, SIGCONT and the freezer by its pids
# timeout: 600
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

if [ -z "${MEMTRACK_TEST_PIDNS:-}" ]; then
	unshare --pid --fork --mount-proc true 2>/dev/null || skip "cannot make a pid namespace (unshare)"
	exec unshare --pid --fork --mount-proc env MEMTRACK_TEST_PIDNS=1 bash "$0" "$@"
fi

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# run <dir> <track options...> -- <command>: a fresh directory, memtrack's stderr in <dir>.err
run() {
	local dir=$tmp/$1
	shift
	mkdir -p "$dir"
	rc=0
	timeout 300 "$MEMTRACK" track -o "$dir" "$@" 2>"$dir.err" || rc=$?
	art=$(ls "$dir"/*.msgpack)
	report_json "$art" "$dir.json"
}

# as track_pressure.sh: stopped at the events ring's watermark by SIGSTOP alone, and released
test_pressure() {
	local rows
	run sig --backend bpf --stats "$tmp/s.jsonl" --ring-size events=64K --no-freezer \
		--poll-interval 2000 -- "$WORKLOADS/alloc_storm_procs" 16 10000
	expect_eq "pressure: 160000 Malloc" 160000 "$(count "$tmp/sig.json" Malloc)"
	expect_eq "pressure: 160000 Free" 160000 "$(count "$tmp/sig.json" Free)"
	expect_eq "pressure: zero drops" 0 "$(jq -r .meta.drops.events "$tmp/sig.json")"
	rows=$(grep -c '"k":"pressure"' "$tmp/s.jsonl" || true)
	expect_eq "pressure: episodes recorded" yes "$([ "$rows" -gt 0 ] && echo yes || echo no)"
	expect_eq "pressure: every pid stopped before its release" 0 \
		"$(jq -s '[.[] | select(.k == "pressure") | .t as $t | .pids[] | select(.[1] >= $t or .[1] == 0)] | length' "$tmp/s.jsonl")"
	check_pressure_rows "pressure" "$tmp/s.jsonl"
	expect_eq "pressure: the stopped pids are the tree's" 0 \
		"$(jq -s --slurpfile r "$tmp/sig.json" '[$r[0].processes[].pid] as $tree
			| [.[] | select(.k == "pressure") | .pids[][0] | select(. as $p | $tree | index($p) | not)]
			| length' "$tmp/s.jsonl")"
}

# the tree's cgroup freezer, which takes this namespace's pids in cgroup.procs
test_pressure_freezer() {
	run frz -v --backend bpf --stats "$tmp/f.jsonl" --ring-size events=64K --poll-interval 20 \
		-- "$WORKLOADS/alloc_storm_procs" 16 10000
	expect_eq "pressure, freezer: 160000 Malloc" 160000 "$(count "$tmp/frz.json" Malloc)"
	expect_eq "pressure, freezer: zero drops" 0 "$(jq -r .meta.drops.events "$tmp/frz.json")"
	expect_eq "pressure, freezer: the tree's cgroup took the command" 1 \
		"$(grep -c '^back-pressure freezes .*, where the command' "$tmp/frz.err")"
}

test_pressure_threads() {
	run thr -q --backend bpf --call-graph no --ring-size events=64K \
		-- "$WORKLOADS/alloc_storm_threads" 16 10000
	expect_eq "pressure, threads: zero drops" 0 "$(jq -r .meta.drops.events "$tmp/thr.json")"
	expect_eq "pressure, threads: every Malloc" 160000 "$(jq '.counts.Malloc' "$tmp/thr.json")"
}

# as track_stops.sh: holds at fork and pressure stops, the parent mirroring them
test_stops() {
	local child
	run mirror -q --backend bpf -- "$WORKLOADS/mirror_stop"
	expect_eq "mirror: the parent ran to its end" 0 "$rc"
	child=$(jq -r --argjson r "$(jq .meta.root_pid "$tmp/mirror.json")" \
		'.processes[] | select(.pid != $r) | .pid' "$tmp/mirror.json")
	expect_eq "mirror: the child's 100 malloc(4321)" 100 "$(count_sized "$art" Malloc 4321 "$child")"
	run mirror_pressure -q --backend bpf --call-graph no --ring-size events=4K \
		--pressure-watermark 10 -- "$WORKLOADS/mirror_stop" 20000
	expect_eq "mirror, pressure: the parent ran to its end" 0 "$rc"
	expect_eq "mirror, pressure: the child's 20000 malloc(4321)" 20000 \
		"$(count_sized "$art" Malloc 4321)"
	for backend in auto bpf; do
		run "stop_$backend" -q --backend "$backend" -- "$WORKLOADS/stop_child" 5 20000
		expect_eq "stopped children, $backend: none ran while its parent had it stopped" "0 " \
			"$(rc_or_said "$rc" "$tmp/stop_$backend.err") $(grep -v '^memtrack\|^error: .* SIGCONT resumed' "$tmp/stop_$backend.err" || true)"
		exact_or_said "stopped children, $backend: 100000 malloc(24)" 100000 \
			"$(count_sized "$art" Malloc 24)" "$rc" "$tmp/stop_$backend.err"
	done
}

test_pressure
test_pressure_freezer
test_pressure_threads
test_stops
finish
