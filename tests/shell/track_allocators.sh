#!/bin/bash
# track: C++ new/delete, jemalloc, mimalloc, tcmalloc (dynamic and static), dlopen
# timeout: 120
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

run() {
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" -- "$@")
	report_json "$art" "$tmp/r.json"
}

# the calls alloc_loop.c makes through the standard API, whatever allocator serves them;
# with a pid, those of that process only
check_standard_calls() {
	local name=$1 pid=${2:-0}
	expect_eq "$name: 100 malloc(777)" 100 "$(count_sized "$art" Malloc 777 "$pid")"
	expect_eq "$name: 20 calloc(3, 259)" 20 "$(count_sized "$art" Calloc 777 "$pid")"
	expect_eq "$name: 10 realloc(p, 200)" 10 "$(count_sized "$art" Realloc 200 "$pid")"
	expect_eq "$name: 5 aligned_alloc(64, 640)" 5 "$(count_sized "$art" AlignedAlloc 640 "$pid")"
}

test_glibc() {
	run "$WORKLOADS/alloc_loop_glibc"
	check_standard_calls glibc
	expect_eq "glibc: exactly 135 Free" 135 "$(count "$tmp/r.json" Free)"
	expect_eq "glibc: exactly 110 Malloc" 110 "$(count "$tmp/r.json" Malloc)"
}

test_jemalloc() {
	local variant
	for variant in jemalloc jemalloc_static; do
		run "$WORKLOADS/alloc_loop_$variant"
		check_standard_calls "$variant"
		expect_eq "$variant: 10 mallocx(555)" 10 "$(count_sized "$art" Malloc 555)"
		expect_eq "$variant: 5 rallocx(300)" 5 "$(count_sized "$art" Realloc 300)"
		expect_eq "$variant: 150 Free, sdallocx and dallocx once each" 150 "$(count "$tmp/r.json" Free)"
	done
}

test_mimalloc() {
	run "$WORKLOADS/alloc_loop_mimalloc"
	check_standard_calls mimalloc
	expect_eq "mimalloc: 10 mi_malloc(555)" 10 "$(count_sized "$art" Malloc 555)"
	expect_eq "mimalloc: 5 mi_malloc_aligned(300)" 5 "$(count_sized "$art" AlignedAlloc 300)"
	expect_eq "mimalloc: 150 Free, mi_free_size once each" 150 "$(count "$tmp/r.json" Free)"
}

test_tcmalloc() {
	local variant
	for variant in tcmalloc tcmalloc_static; do
		run "$WORKLOADS/alloc_loop_$variant"
		check_standard_calls "$variant"
		expect_eq "$variant: 10 tc_malloc(555)" 10 "$(count_sized "$art" Malloc 555)"
		expect_eq "$variant: 5 tc_memalign(64, 300)" 5 "$(count_sized "$art" AlignedAlloc 300)"
		# tcmalloc frees 2 blocks of its own start-up
		expect_eq "$variant: 152 Free, tc_free_sized once each" 152 "$(count "$tmp/r.json" Free)"
	done
}

test_cxx() {
	local size
	run "$WORKLOADS/cxx_new_delete"
	for size in 1001 1002 1003 1004 1007 1008; do
		expect_eq "c++: 10 new($size), not doubled by its malloc" 10 "$(count_sized "$art" Malloc "$size")"
	done
	for size in 1005 1006 1009; do
		expect_eq "c++: 10 aligned new($size)" 10 "$(count_sized "$art" AlignedAlloc "$size")"
	done
	expect_eq "c++: 90 Free, each delete once" 90 "$(count "$tmp/r.json" Free)"
	# libstdc++ allocates its emergency exception pool at start-up: 1 Malloc
	expect_eq "c++: 61 Malloc in all" 61 "$(count "$tmp/r.json" Malloc)"
}

test_static_after_exec() {
	# a shell that execs a static jemalloc program: found when it is exec'd (the shell is
	# no program that links probes at once: the probes' programs load at their first use)
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" "$WORKLOADS/alloc_loop_jemalloc_static; true")
	report_json "$art" "$tmp/r.json"
	# the program's own calls: dash's stack blocks are sized by the command line's length
	pid=$(jq --arg e "$WORKLOADS/alloc_loop_jemalloc_static" '.processes[] | select(.exe == $e) | .pid' \
		"$tmp/r.json")
	check_standard_calls "sh + static jemalloc" "$pid"
	expect_eq "sh + static jemalloc: 10 mallocx(555)" 10 "$(count_sized "$art" Malloc 555 "$pid")"
}

test_dlopen() {
	run "$WORKLOADS/dlopen_alloc"
	expect_eq "dlopen: 10 je_malloc(5000) of a library loaded at run time" 10 \
		"$(count_sized "$art" Malloc 5000)"
	expect_eq "dlopen: and its 10 je_free of those blocks" 10 \
		"$("$MEMTRACK" report --dump "$art" | jq -s '[.[] | select(.type == "Malloc" and .size == 5000) | .addr] as $a
			| [.[] | select(.type == "Free") | select(.addr as $x | $a | index($x))] | length')"
}

test_glibc
test_jemalloc
test_mimalloc
test_tcmalloc
test_cxx
test_static_after_exec
test_dlopen
finish
