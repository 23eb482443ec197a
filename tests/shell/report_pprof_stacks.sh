#!/bin/bash
# track + report --pprof: known stacks (stack_alloc, cxx_inline) as locations, functions, lines and inlined lines
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

FIGURES='{"alloc_objects/count": .allocations, "alloc_space/bytes": .bytes_allocated,
	"inuse_objects/count": .peak_count, "inuse_space/bytes": .peak_bytes,
	"leaked_objects/count": .leaked_count, "leaked_space/bytes": .leaked_bytes,
	"temporary_objects/count": .temporary_count, "temporary_space/bytes": .temporary_bytes}'

# profile <name> <artifact>: decodes its profile into $tmp/<name>.json, checks the totals
profile() {
	"$MEMTRACK" report --pprof "$tmp/$1.pb.gz" "$2"
	pprof_decode "$tmp/$1.pb.gz" "$tmp" >"$tmp/$1.json"
	expect_eq "$1: every type's total is --json's" \
		"$("$MEMTRACK" report --json "$2" | jq -cS "$FIGURES")" "$(jq -cS .totals "$tmp/$1.json")"
}

# stack_alloc: 10 x malloc(5555) from main -> outer_alloc -> lib_mid_alloc -> lib_leaf_alloc
stack_alloc() {
	local name=$1 wl=$2 lib=$3 art
	shift 3
	mkdir -p "$tmp/$name"
	art=$(track_workload "$tmp/$name" "$@" -- "$WORKLOADS/$wl")
	profile "$name" "$art"
	jq -c '.samples[] | select(.values["alloc_space/bytes"] == 55550)' "$tmp/$name.json" >"$tmp/$name.smp"
	expect_eq "$name: one sample of the 10 calls" "10 10" \
		"$(jq -r '"\(.values["alloc_objects/count"]) \(.values["inuse_objects/count"])"' "$tmp/$name.smp")"
	expect_eq "$name: each location names its function, leaf first" \
		"lib_leaf_alloc libstack_alloc.c:9|lib_mid_alloc libstack_alloc.c:17|outer_alloc stack_alloc.c:14|main stack_alloc.c:34" \
		"$(jq -r '[.stack[0:4][] | .lines | join(",")] | join("|")' "$tmp/$name.smp")"
	expect_eq "$name: and its module" "$lib $lib $wl $wl" \
		"$(jq -r '[.stack[0:4][].module | split("/") | last] | join(" ")' "$tmp/$name.smp")"
	expect_eq "$name: all freed" 0 "$(jq '.totals["leaked_space/bytes"]' "$tmp/$name.json")"
}

test_stack_alloc() {
	stack_alloc fp stack_alloc libstack_alloc.so --call-graph fp
	stack_alloc dwarf stack_alloc_nofp libstack_alloc_nofp.so
}

# cxx_inline: make_block is inlined into grow: two lines of one location
test_cxx_inline() {
	local art src=$WORKLOADS/cxx_inline.cc
	line() { grep -n "$1" "$src" | cut -d: -f1; }
	mkdir -p "$tmp/cxx"
	art=$(track_workload "$tmp/cxx" -- "$WORKLOADS/cxx_inline")
	profile cxx "$art"
	jq -c '.samples[] | select(.values["alloc_objects/count"] == 7)' "$tmp/cxx.json" >"$tmp/cxx.smp"
	expect_eq "cxx: the inlined function and its caller, one location" \
		"app::make_block(unsigned long) cxx_inline.cc:$(line CXX_INLINE_MALLOC_LINE),app::pool<app::item>::grow(unsigned long) cxx_inline.cc:$(line CXX_INLINE_GROW_LINE)" \
		"$(jq -r '.stack[0].lines | join(",")' "$tmp/cxx.smp")"
	expect_eq "cxx: then run and main" \
		"app::run(int) cxx_inline.cc:$(line CXX_INLINE_RUN_LINE)|main cxx_inline.cc:$(line CXX_INLINE_MAIN_LINE)" \
		"$(jq -r '[.stack[1:3][].lines | join(",")] | join("|")' "$tmp/cxx.smp")"
	expect_eq "cxx: the binary's names are the system names" \
		"_ZN3app10make_blockEm _ZN3app3runEi _ZN3app4poolINS_4itemEE4growEm" \
		"$(jq -r '[.system_names[] | select(startswith("_ZN3app"))] | join(" ")' "$tmp/cxx.json")"
	expect_eq "cxx: 7 temporary, freed right after" 7 \
		"$(jq '.values["temporary_objects/count"]' "$tmp/cxx.smp")"
}

test_stack_alloc
test_cxx_inline
finish
