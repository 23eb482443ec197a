#!/bin/bash
# track: the shim's warnings reach memtrack, which prints them naming the process, and not under -q
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# sandboxed_stack: a seccomp filter refuses the copy of a coroutine's stack, the shim says so once
test_warning_to_memtrack() {
	local cg rc
	for cg in dwarf fp; do
		rc=0
		"$MEMTRACK" track -o "$tmp/$cg" --backend preload --call-graph "$cg" \
			-- "$WORKLOADS/sandboxed_stack" >"$tmp/out" 2>"$tmp/err" || rc=$?
		expect_eq "$cg: the program's status" 0 "$rc"
		expect_eq "$cg: its output" "done 100" "$(cat "$tmp/out")"
		expect_eq "$cg: memtrack prints the warning once, naming the process" 1 \
			"$(grep -c "^warning: pid [0-9]* (sandboxed_stack): preload shim: call stacks on a stack of unknown bounds (a coroutine's, a signal's) are cut to their first frame: process_vm_readv: Operation not permitted$" "$tmp/err")"
		# before: the shim wrote its warnings on the program's stderr
		expect_eq "$cg: nothing of the shim's on the program's stderr" 0 \
			"$(grep -c "^memtrack preload:" "$tmp/err")"
		expect_eq "$cg: the coroutine's 100 malloc(3333)" 100 \
			"$(count_sized "$(ls "$tmp/$cg"/*.msgpack)" Malloc 3333)"
	done
}

test_quiet() {
	local rc=0
	"$MEMTRACK" track -q -o "$tmp/q" --backend preload --call-graph fp \
		-- "$WORKLOADS/sandboxed_stack" >"$tmp/out" 2>"$tmp/err" || rc=$?
	expect_eq "-q: the program's status" 0 "$rc"
	expect_eq "-q: nothing on stderr" "" "$(cat "$tmp/err")"
}

test_warning_to_memtrack
test_quiet
finish
