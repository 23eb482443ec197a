#!/bin/bash
# track: the ways a process comes and goes, counted exactly whether its exec was held or
# ran on unheld (an executable seen before): an exec right after fork, vfork + exec,
# posix_spawn, a fan-out of 2000, a failed exec, a library mapped, unmapped and deleted
# timeout: 480
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# run <memtrack args...>: track into a fresh $tmp/out, report into $tmp/r.json
run() {
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	art=$(track_workload "$tmp/out" "$@")
	report_json "$art" "$tmp/r.json"
}

# fork_exec's child execs at once, 20 times over: the first exec of malloc_free is held,
# the others are not
test_fork_then_exec() {
	run -- sh -c "for i in \$(seq 20); do $WORKLOADS/fork_exec || exit 1; done"
	expect_eq "fork+exec x20: 20 malloc_free" 20 "$(procs_of malloc_free)"
	expect_eq "fork+exec x20: 2000 Malloc" 2000 "$(sum_of malloc_free Malloc)"
	expect_eq "fork+exec x20: 1200 Free" 1200 "$(sum_of malloc_free Free)"
}

test_spawn_kinds() {
	local how

	for how in vfork posix_spawn; do
		run -- sh -c "for i in \$(seq 10); do $WORKLOADS/spawn_kinds $how || exit 1; done"
		expect_eq "$how x10: 1000 Malloc" 1000 "$(sum_of malloc_free Malloc)"
		expect_eq "$how x10: 600 Free" 600 "$(sum_of malloc_free Free)"
		expect_eq "$how x10: spawn_kinds allocated nothing" 0 "$(sum_of spawn_kinds Malloc)"
	done
}

# 2000 processes (under --backend bpf, all but the first 16 through libc's shared probes)
test_fan_out() {
	local n=2000

	run -- sh -c "seq $n | xargs -P 4 -n 1 $WORKLOADS/malloc_free"
	expect_eq "fan-out: $n malloc_free" "$n" "$(procs_of malloc_free)"
	expect_eq "fan-out: $((n * 100)) Malloc" "$((n * 100))" "$(sum_of malloc_free Malloc)"
	expect_eq "fan-out: $((n * 60)) Free" "$((n * 60))" "$(sum_of malloc_free Free)"
}

test_failed_exec() {
	run -- "$WORKLOADS/exec_fail"
	expect_eq "failed execs: 20 Malloc" 20 "$(count "$tmp/r.json" Malloc)"
	expect_eq "failed execs: 20 Free" 20 "$(count "$tmp/r.json" Free)"
	expect_eq "failed execs: 10 malloc(2222) after them" 10 "$(count_sized "$art" Malloc 2222)"
}

# the library's frames keep their names, or at least say module+offset, never nothing
test_library_gone() {
	local sym

	run -- "$WORKLOADS/dlopen_gone" "$tmp/libgone.so"
	expect_eq "library gone: the copy was deleted" no "$([ -e "$tmp/libgone.so" ] && echo yes || echo no)"
	expect_eq "library gone: 10 malloc(5555)" 10 "$(count_sized "$art" Malloc 5555)"
	expect_eq "library gone: 3 malloc(3333)" 3 "$(count_sized "$art" Malloc 3333)"
	"$MEMTRACK" report --json --stack-depth 0 "$art" >"$tmp/s.json"
	sym=$(jq -r '[.sites[] | select(.calls == 10) | .frames[0:2][] |
		if .symbol then .symbol else "\(.module)+\(.offset)" end] | join(" ")' "$tmp/s.json")
	case $sym in
	"lib_leaf_alloc lib_mid_alloc" | *libgone.so+*) pass "library gone: frames named ($sym)" ;;
	*) fail "library gone: frames named" "$sym" ;;
	esac
}

test_fork_then_exec
test_spawn_kinds
test_fan_out
test_failed_exec
test_library_gone
finish
