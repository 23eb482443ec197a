#!/bin/bash
# track --call-graph dwarf: the CFI rules the shims of one run computed serve the next
# (cfi-rules.<uid> in the cache directory), the same stacks; a table a process of the tree
# rewrote is kept as it was left, and the runs after it stay exact, their stacks cut at worst
# timeout: 120
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

cache=$tmp/cache

# run <name> <command...>: tracked with -v and the cache; the artifact's report in $tmp/<name>.json
run() {
	local name=$1 art
	shift
	mkdir -p "$tmp/$name"
	art=$(MEMTRACK_CACHE_DIR=$cache track_workload "$tmp/$name" -v -- "$@" 2>/dev/null)
	"$MEMTRACK" report --json --stack-depth 0 "$art" >"$tmp/$name.json"
}

# read_before <name>: the rules its run read from the runs before
read_before() {
	sed -n 's/.*CFI rules: \([0-9]*\) read from the runs before.*/\1/p' "$tmp/$1/track.err"
}

shared() {
	sed -n 's/.*the preload shims share \([0-9]*\) CFI rules.*/\1/p' "$tmp/$1/track.err"
}

test_second_run_reads_the_first_ones_rules() {
	local file=$cache/cfi-rules.$(id -u)

	run first "$WORKLOADS/stack_alloc_nofp"
	expect_eq "first run: nothing read" 0 "$(read_before first)"
	expect_eq "first run: its rules kept, its user's alone" \
		"600 $((4096 + (1 << 21)))" "$(stat -c '%a %s' "$file" 2>&1)"
	run second "$WORKLOADS/stack_alloc_nofp"
	expect_eq "second run: every rule of the first read" "$(shared first)" "$(read_before second)"
	expect_eq "second run: the same library site" "$(site_frames "$tmp/first.json" 10)" \
		"$(site_frames "$tmp/second.json" 10)"
	expect_eq "second run: lib_leaf_alloc lib_mid_alloc outer_alloc main" \
		"lib_leaf_alloc lib_mid_alloc outer_alloc main" \
		"$(site_frames "$tmp/second.json" 10 | cut -d' ' -f1-4)"
	expect_eq "second run: the same direct site" "$(site_frames "$tmp/first.json" 5)" \
		"$(site_frames "$tmp/second.json" 5)"
}

# cfi_scribble gives every rule of the table a check that passes and offsets that point
# anywhere: kept so, the next run's stacks may be cut, its counts may not
test_rewritten_table_kept() {
	run scribble "$WORKLOADS/cfi_scribble" 2 100
	if grep -Eq '^rewrote [1-9][0-9]* rules$' "$tmp/scribble/track.out"; then
		pass "rewritten: the workload rewrote the table"
	else
		fail "rewritten: the workload rewrote the table" "$(cat "$tmp/scribble/track.out")"
	fi
	run after "$WORKLOADS/stack_alloc_nofp"
	expect_eq "after: the rewritten rules read" 1 "$([ "$(read_before after)" -gt 0 ] && echo 1)"
	expect_eq "after: its 15 malloc" 15 "$(count "$tmp/after.json" Malloc)"
	expect_eq "after: its 15 free" 15 "$(count "$tmp/after.json" Free)"
	rm -f "$cache"/cfi-rules.*
	run clean "$WORKLOADS/stack_alloc_nofp"
	expect_eq "the file removed: nothing read" 0 "$(read_before clean)"
	expect_eq "the file removed: the library site whole again" \
		"lib_leaf_alloc lib_mid_alloc outer_alloc main" \
		"$(site_frames "$tmp/clean.json" 10 | cut -d' ' -f1-4)"
}

# MEMTRACK_CACHE_DIR="" turns every cache off: nothing read, nothing written
test_cache_off() {
	rm -rf "$cache"
	mkdir -p "$tmp/off"
	MEMTRACK_CACHE_DIR= track_workload "$tmp/off" -v -- "$WORKLOADS/stack_alloc_nofp" >/dev/null 2>&1
	expect_eq "cache off: nothing read" 0 "$(read_before off)"
	expect_eq "cache off: no directory made" 0 "$([ -e "$cache" ] && echo 1 || echo 0)"
}

test_second_run_reads_the_first_ones_rules
test_rewritten_table_kept
test_cache_off
finish
