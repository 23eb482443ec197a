#!/bin/bash
# track: a bad_alloc thrown through operator new is caught under every backend, the counts exact
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# check <label> <command...>: cxx_bad_alloc's output, status and calls under memtrack
check() {
	local label=$1 art rc=0
	shift
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" -- "$@") || rc=$?
	expect_eq "$label: the program catches both bad_alloc, exits 0" "0 caught 2" \
		"$rc $(cat "$tmp/track.out")"
	expect_eq "$label: 10 new char[3333]" 10 "$(count_sized "$art" Malloc 3333)"
	expect_eq "$label: and their 10 delete[]" 10 \
		"$("$MEMTRACK" report --dump "$art" | jq -s '[.[] | select(.type == "Malloc" and
			.size == 3333) | .addr] as $a | [.[] | select(.type == "Free" and (.freeres | not)) |
			select(.addr as $x | $a | index($x))] | length')"
	expect_eq "$label: no event of the failed allocations" 0 \
		"$("$MEMTRACK" report --dump "$art" | jq -s '[.[] | select(.type == "Malloc" or
			.type == "AlignedAlloc") | select(.size > 1000000000)] | length')"
	expect_eq "$label: the site after the throws is make_after, not the failed new" \
		"make_after()" "$("$MEMTRACK" report --json --stack-depth 3 "$art" |
			jq -r '[.sites[] | select(.calls == 10) | .frames[] | select(.symbol |
				test("make_after")) | .symbol] | unique | join(",")')"
}

check "$(basename "$0" .sh)" "$WORKLOADS/cxx_bad_alloc"
# a cleared environment sends it to BPF under auto too
check "env -i" env -i "$WORKLOADS/cxx_bad_alloc"
finish
