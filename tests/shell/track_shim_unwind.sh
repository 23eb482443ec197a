#!/bin/bash
# track: a program's rbp and stack alignment never fault the shim's unwinders, in any call-graph mode
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# $1: hostile_rbp's mode; under each call graph: its status, its output and its 100 malloc(1234)
test_hostile_rbp() {
	local mode=$1 cg rc bare_rc=0 art

	"$WORKLOADS/hostile_rbp" "$mode" >"$tmp/bare.out" 2>"$tmp/bare.err" || bare_rc=$?
	expect_eq "$mode, bare: the workload runs" 0 "$bare_rc"
	for cg in dwarf fp no; do
		rc=0
		"$MEMTRACK" track -q -o "$tmp/$mode-$cg" --backend preload --call-graph "$cg" \
			-- "$WORKLOADS/hostile_rbp" "$mode" >"$tmp/out" 2>"$tmp/err" || rc=$?
		# before: SIGSEGV in the shim under fp with rbp 0xfffffffffffffff0, under dwarf
		# and fp when misaligned too
		expect_eq "$mode, $cg: the status of the bare run" "$bare_rc" "$rc"
		expect_eq "$mode, $cg: the output of the bare run" "$(cat "$tmp/bare.out")" \
			"$(cat "$tmp/out")"
		expect_eq "$mode, $cg: nothing on stderr" "" "$(cat "$tmp/err")"
		art=$(ls "$tmp/$mode-$cg"/*.msgpack)
		expect_eq "$mode, $cg: its 100 malloc(1234)" 100 "$(count_sized "$art" Malloc 1234)"
	done
}

test_hostile_rbp top
test_hostile_rbp unmapped
test_hostile_rbp misaligned
finish
