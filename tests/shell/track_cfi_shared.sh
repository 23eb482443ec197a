#!/bin/bash
# track --call-graph dwarf: the shims of a run share the CFI rules they compute (one table,
# shim-abi.h), each process's stacks stay its own and whole, and a process that rewrites
# the table cuts stacks at worst, never faults the others
# timeout: 120
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

test_shared_across_processes() {
	local art shared

	# the second and third process take the first one's rules from the table
	art=$("$MEMTRACK" track -v -o "$tmp/three" -- sh -c \
		"$WORKLOADS/stack_alloc_nofp && $WORKLOADS/stack_alloc_nofp && $WORKLOADS/stack_alloc_nofp" \
		2>"$tmp/three.err" >/dev/null && ls "$tmp"/three/*.msgpack)
	"$MEMTRACK" report --json --stack-depth 0 "$art" >"$tmp/r.json"
	expect_eq "three processes: one library site of 30 calls, three levels deep" \
		"lib_leaf_alloc lib_mid_alloc outer_alloc main __libc_start_call_main" \
		"$(site_frames "$tmp/r.json" 30 | cut -d' ' -f1-5)"
	expect_eq "three processes: one direct site of 15 calls" \
		"direct_alloc main __libc_start_call_main" "$(site_frames "$tmp/r.json" 15 | cut -d' ' -f1-3)"
	shared=$(sed -n 's/.*the preload shims share \([0-9]*\) CFI rules.*/\1/p' "$tmp/three.err")
	if [ "${shared:-0}" -gt 0 ]; then
		pass "three processes: -v counts the shared rules ($shared)"
	else
		fail "three processes: -v counts the shared rules" "'$(cat "$tmp/three.err")'"
	fi
	rm -rf "${tmp:?}/three"
	mkdir "$tmp/three"
	"$MEMTRACK" track -v --call-graph fp -o "$tmp/three" -- "$WORKLOADS/stack_alloc" \
		2>"$tmp/fp.err" >/dev/null
	expect_eq "fp: no table to share" "" "$(grep 'CFI rules' "$tmp/fp.err" || true)"
}

test_rewritten_rules() {
	local rc=0 art

	mkdir -p "$tmp/scribble"
	"$MEMTRACK" track -q -o "$tmp/scribble" -- "$WORKLOADS/cfi_scribble" 4 500 \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
	expect_eq "rewritten rules: the status of the bare run" 0 "$rc"
	expect_eq "rewritten rules: nothing on stderr" "" "$(cat "$tmp/err")"
	if grep -Eq '^rewrote [1-9][0-9]* rules$' "$tmp/out"; then
		pass "rewritten rules: the workload found the table and rewrote it"
	else
		fail "rewritten rules: the workload found the table and rewrote it" "$(cat "$tmp/out")"
	fi
	art=$(ls "$tmp"/scribble/*.msgpack)
	expect_eq "rewritten rules: the children's 2000 malloc(4321)" 2000 \
		"$(count_sized "$art" Malloc 4321)"
	expect_eq "rewritten rules: the parent's 10 malloc(1234)" 10 "$(count_sized "$art" Malloc 1234)"
	"$MEMTRACK" report --json "$art" >"$tmp/r.json"
	expect_eq "rewritten rules: nothing leaked" 0 "$(jq '.leaked_bytes // 0' "$tmp/r.json")"
}

test_shared_across_processes
test_rewritten_rules
finish
