#!/bin/bash
# track: the shim serves what wraps malloc (an own operator new, a library's reallocarray), BPF an own malloc
# timeout: 120
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
bpf=false
[ "${MEMTRACK_BACKEND:-}" = bpf ] && bpf=true

# run <workload>: tracks it; $art, $tmp/r.json, its stderr in $tmp/track.err
run() {
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" -- "$WORKLOADS/$1")
	report_json "$art" "$tmp/r.json"
}

# backend_is <name> <auto's backend>: the process's backend (bpf with --backend bpf)
backend_is() {
	local want=$2
	$bpf && want=bpf
	expect_eq "$1: traced by $want" "$want" "$(jq -r '.processes[0].backend' "$tmp/r.json")"
}

# top_frames <n>: the innermost symbol of each site of n calls
top_frames() {
	"$MEMTRACK" report --json --stack-depth 2 "$art" |
		jq -r --argjson n "$1" '[.sites[] | select(.calls == $n) | .frames[0].symbol] | sort | join(",")'
}

test_own_malloc() {
	run own_malloc
	backend_is "own malloc" bpf
	expect_eq "own malloc: 30 malloc(300)" 30 "$(count_sized "$art" Malloc 300)"
	expect_eq "own malloc: 10 calloc(4, 25)" 10 "$(count_sized "$art" Calloc 100)"
	expect_eq "own malloc: 5 realloc(p, 600)" 5 "$(count_sized "$art" Realloc 600)"
	expect_eq "own malloc: 35 free" 35 "$(jq '.processes[0].counts.Free' "$tmp/r.json")"
	local why="own allocator"
	$bpf && why="--backend bpf"
	expect_eq "own malloc: --json says why BPF" "$why" \
		"$(jq -r '.processes[0].bpf_why' "$tmp/r.json")"
	if "$MEMTRACK" report "$art" | grep -q "own_malloc (bpf: $why)\$"; then
		pass "own malloc: the process table says why BPF"
	else
		fail "own malloc: the process table says why BPF" "$("$MEMTRACK" report "$art" | tail -2)"
	fi
	if ! $bpf; then
		# said without -q (-q keeps it to -v: the program's stderr is not memtrack's)
		"$MEMTRACK" track -o "$tmp" -- "$WORKLOADS/own_malloc" >/dev/null 2>"$tmp/loud.err" || true
		if grep -q "own_malloc (pid [0-9]*) is traced by BPF.*allocator of its own (malloc)" \
			"$tmp/loud.err" && ! grep -q "is traced by BPF" "$tmp/track.err"; then
			pass "own malloc: a warning says why BPF, and not under -q"
		else
			fail "own malloc: a warning says why BPF" "$(cat "$tmp/loud.err" "$tmp/track.err")"
		fi
	fi
}

test_own_new() {
	run cxx_own_new
	backend_is "own operator new" preload
	expect_eq "own operator new: 25 new char[1111], not doubled by its malloc" 25 \
		"$(count_sized "$art" Malloc 1111)"
	expect_eq "own operator new: 15 new object(2222)" 15 "$(count_sized "$art" Malloc 2222)"
	# the program's frees, not glibc's at its exit (stdout's buffer)
	expect_eq "own operator new: 40 delete" 40 \
		"$(jq '.processes[0].counts.Free - .processes[0].libc_freed_count' "$tmp/r.json")"
	# the program's call: from its caller, as BPF sees it at operator new's entry
	expect_eq "own operator new: the site is make_object, not operator new" "make_object()" \
		"$(top_frames 15)"
	expect_eq "own operator new: new[] inlined in make_array" \
		"operator new[](unsigned long)" "$(top_frames 25)"
}

test_library_reallocarray() {
	local k sizes=""
	run reallocarray_lib
	backend_is "a library's reallocarray" preload
	for k in $(seq 1 12); do
		sizes="$sizes$(count_sized "$art" Realloc $((k * 100)))"
	done
	expect_eq "a library's reallocarray: 12 reallocarray(p, k, 100), once each" \
		111111111111 "$sizes"
	expect_eq "a library's reallocarray: 1 free" 1 "$(jq '.processes[0].counts.Free' "$tmp/r.json")"
}

test_summary_line() {
	local line
	$bpf && return 0
	line=$("$MEMTRACK" track -o "$tmp" -- sh -c \
		"$WORKLOADS/own_malloc; $WORKLOADS/cxx_own_new" 2>&1 >/dev/null | grep '^\[ memtrack')
	if [[ $line == *"3 processes (2 preload, 1 bpf: 1 own allocator)"* ]]; then
		pass "summary: processes by backend, and why BPF"
	else
		fail "summary: processes by backend, and why BPF" "$line"
	fi
}

test_own_malloc
test_own_new
test_library_reallocarray
test_summary_line
finish
