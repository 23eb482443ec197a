#!/bin/bash
# track --call-graph dwarf (the default) and fp: the functions of each allocation site, in
# order, with file:line
# timeout: 180
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# known_sites <name> <workload> [<track options>...]
known_sites() {
	local name=$1 workload=$2
	shift 2
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" "$@" -- "$WORKLOADS/$workload")
	"$MEMTRACK" report --json --stack-depth 0 "$art" >"$tmp/r.json"
	expect_eq "$name: the library site, three levels deep" \
		"lib_leaf_alloc lib_mid_alloc outer_alloc main __libc_start_call_main" \
		"$(site_frames "$tmp/r.json" 10 | cut -d' ' -f1-5)"
	expect_eq "$name: the direct site" "direct_alloc main __libc_start_call_main" \
		"$(site_frames "$tmp/r.json" 5 | cut -d' ' -f1-3)"
	expect_eq "$name: the library site's bytes" 55550 \
		"$(jq '.sites[] | select(.calls == 10) | .bytes' "$tmp/r.json")"
	expect_eq "$name: file:line of the malloc call" "libstack_alloc.c:9" \
		"$(jq -r '.sites[] | select(.calls == 10) | .frames[0] | "\(.file | split("/") | last):\(.line)"' "$tmp/r.json")"
	expect_eq "$name: the module of the library frames" "lib$workload.so" \
		"$(jq -r '.sites[] | select(.calls == 10) | .frames[1].module | split("/") | last' "$tmp/r.json")"
	expect_eq "$name: flamegraph line" \
		"__libc_start_call_main;main;outer_alloc;lib_mid_alloc;lib_leaf_alloc 55550" \
		"$("$MEMTRACK" report --flamegraph --stack-depth 5 "$art" | grep lib_leaf_alloc)"
}

test_known_sites() {
	known_sites "fp" stack_alloc --call-graph fp
	# built without frame pointers, like Debian's packages: dwarf, the default, unwinds it
	known_sites "dwarf" stack_alloc_nofp
	known_sites "dwarf,2048" stack_alloc_nofp --call-graph dwarf,2048
	# and beyond main, through libc, which has no frame pointers either
	expect_eq "dwarf: up to _start" "_start" \
		"$(jq -r '[.sites[] | select(.calls == 10) | .frames[].symbol] | last' "$tmp/r.json")"
}

test_short_lived_exec() {
	# a shell whose child execs the workload and is gone at once
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" --call-graph fp "$WORKLOADS/stack_alloc; true")
	"$MEMTRACK" report --json --stack-depth 0 "$art" >"$tmp/r.json"
	expect_eq "stacks: exec'd child, library site" "lib_leaf_alloc lib_mid_alloc outer_alloc" \
		"$(site_frames "$tmp/r.json" 10 | cut -d' ' -f1-3)"
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" "$WORKLOADS/stack_alloc_nofp; true")
	"$MEMTRACK" report --json --stack-depth 0 "$art" >"$tmp/r.json"
	expect_eq "dwarf: exec'd child, library site" "lib_leaf_alloc lib_mid_alloc outer_alloc main" \
		"$(site_frames "$tmp/r.json" 10 | cut -d' ' -f1-4)"
}

test_every_event_has_a_stack() {
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" --call-graph fp -- "$WORKLOADS/alloc_storm_procs" 4 20000)
	expect_eq "stacks: no allocation without a stack" 0 \
		"$("$MEMTRACK" report --dump "$art" | jq -c 'select(.type == "Malloc" and .stack == null)' | wc -l)"
	expect_eq "stacks: frees carry none" 0 \
		"$("$MEMTRACK" report --dump "$art" | jq -c 'select(.type == "Free" and .stack != null)' | wc -l)"
	report_json "$art" "$tmp/r.json"
	expect_eq "stacks: 80000 Malloc" 80000 "$(count "$tmp/r.json" Malloc)"
	expect_eq "stacks: no drops" 0 "$(jq .meta.drops.events "$tmp/r.json")"
}

test_bad_mode() {
	local rc=0
	"$MEMTRACK" track --call-graph bogus -- true 2>"$tmp/err" || rc=$?
	expect_eq "stacks: unknown mode is a usage error" 129 "$rc"
	if grep -q "expects fp, dwarf" "$tmp/err"; then pass "stacks: says which modes"; else fail "stacks: says which modes" "$(cat "$tmp/err")"; fi
	for size in 0 65529 12k -8; do
		rc=0
		"$MEMTRACK" track --call-graph "dwarf,$size" -- true 2>"$tmp/err" || rc=$?
		expect_eq "stacks: dwarf,$size is a usage error" 129 "$rc"
	done
	if grep -q "the size must be 1 to 65528 bytes" "$tmp/err"; then
		pass "stacks: says which sizes"
	else
		fail "stacks: says which sizes" "$(cat "$tmp/err")"
	fi
}

test_known_sites
test_short_lived_exec
test_every_event_has_a_stack
test_bad_mode
finish
