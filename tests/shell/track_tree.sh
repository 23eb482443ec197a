#!/bin/bash
# track: the whole process tree (fork, fork+exec, threads), nothing outside it
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# run <program> [<args>...], or run "<shell command>"
run() {
	rm -f "$tmp"/*.msgpack
	if [ $# -eq 1 ] && [[ "$1" == *" "* ]]; then
		art=$(track_workload "$tmp" "$1")
	else
		art=$(track_workload "$tmp" -- "$@")
	fi
	report_json "$art" "$tmp/r.json"
	root=$(jq -r .meta.root_pid "$tmp/r.json")
	child=$(jq -r --argjson r "$root" '[.processes[] | select(.pid != $r)][0].pid' "$tmp/r.json")
}

test_fork() {
	run "$WORKLOADS/fork"
	expect_eq "fork: two processes" 2 "$(jq -r '.processes | length' "$tmp/r.json")"
	expect_eq "fork: parent 10 Malloc" 10 "$(count "$tmp/r.json" Malloc "$root")"
	expect_eq "fork: parent 10 Free" 10 "$(count "$tmp/r.json" Free "$root")"
	expect_eq "fork: child 20 Malloc" 20 "$(count "$tmp/r.json" Malloc "$child")"
	expect_eq "fork: child 5 Free" 5 "$(count "$tmp/r.json" Free "$child")"
	expect_eq "fork: child's parent" "$root" \
		"$(jq -r --argjson c "$child" '.processes[] | select(.pid == $c) | .ppid' "$tmp/r.json")"
}

test_fork_exec() {
	run "$WORKLOADS/fork_exec"
	expect_eq "fork+exec: parent 7 Malloc" 7 "$(count "$tmp/r.json" Malloc "$root")"
	expect_eq "fork+exec: exec'd child 100 Malloc" 100 "$(count "$tmp/r.json" Malloc "$child")"
	expect_eq "fork+exec: exec'd child 60 Free" 60 "$(count "$tmp/r.json" Free "$child")"
	expect_eq "fork+exec: child's exe" "$WORKLOADS/malloc_free" \
		"$(jq -r --argjson c "$child" '.processes[] | select(.pid == $c) | .exe' "$tmp/r.json")"
}

# malloc_of <comm> <min> <max>: how many Malloc of <min> to <max> bytes that process made
malloc_of() {
	local pid
	pid=$(jq --arg c "$1" '.processes[] | select(.comm == $c) | .pid' "$tmp/r.json")
	"$MEMTRACK" report --dump "$art" |
		jq -c --argjson p "$pid" --argjson lo "$2" --argjson hi "$3" \
			'select(.type == "Malloc" and .pid == $p and .size >= $lo and .size <= $hi)' | wc -l
}

test_shell_pipeline() {
	# through /bin/sh: two workloads in one command line. Before it execs, the forked dash may
	# malloc a block for its own stack or not, depending on the length of the command line:
	# count the sizes the workloads allocate.
	run "$WORKLOADS/malloc_free; $WORKLOADS/exit3; true"
	expect_eq "shell: malloc_free's 100 malloc(1..100)" 100 "$(malloc_of malloc_free 1 100)"
	expect_eq "shell: exit3's 5 malloc(1000)" 5 "$(malloc_of exit3 1000 1000)"
	expect_eq "shell: 3 processes (sh and two children)" 3 "$(jq -r '.processes | length' "$tmp/r.json")"
}

test_threads() {
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" -- "$WORKLOADS/threads")
	expect_eq "threads: 8000 malloc(4242) from 8 threads" 8000 "$(count_sized "$art" Malloc 4242)"
	tids=$("$MEMTRACK" report --dump "$art" | jq 'select(.size == 4242) | .tid' | sort -u | wc -l)
	expect_eq "threads: from 8 distinct tids" 8 "$tids"
	# pid is the process (tgid), tid the thread: swapped, they would name 8 processes
	report_json "$art" "$tmp/r.json"
	expect_eq "threads: every one of the process's pid" "$(jq -r .meta.root_pid "$tmp/r.json")" \
		"$("$MEMTRACK" report --dump "$art" | jq -s -r '[.[] | select(.size == 4242) | .pid] | unique | map(tostring) | join(" ")')"
}

test_not_outside_tree() {
	# a process allocating at the same time, outside the tree, is not seen
	"$WORKLOADS/alloc_storm_procs" 1 200000 &
	local bg=$!
	run "$WORKLOADS/malloc_free"
	wait $bg
	expect_eq "outside: only the tree's 100 Malloc" 100 "$(count "$tmp/r.json" Malloc)"
}

# One child at a time, 300 of them: each is forgotten once it has exited and its
# connection closed, whichever memtrack sees first (each child's exit came before its
# close, and memtrack kept both entries, and their rings, to the end of the run).
test_serial_children() {
	local loop='i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done' most

	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" --stats "$tmp/stats.jsonl" -- sh -c "$loop")
	report_json "$art" "$tmp/r.json"
	expect_eq "serial: 301 processes" 301 "$(jq -r '.processes | length' "$tmp/r.json")"
	[ "${MEMTRACK_BACKEND:-}" = bpf ] && return
	# the size said is the most the live rings ever came to: a few children's, not 300
	most=$(jq -s '[.[] | select(.k == "ring_open" and .ring == "heap") | .size] | max' \
		"$tmp/stats.jsonl")
	expect_eq "serial: at most 16 rings live at once" true \
		"$(jq -n --argjson m "$most" '$m <= 16 * 1048576')"
}

test_fork
test_fork_exec
test_serial_children
test_shell_pipeline
test_threads
test_not_outside_tree
finish
