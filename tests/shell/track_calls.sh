#!/bin/bash
# track: calloc, realloc chains, a realloc that moves and the aligned family, each call counted once
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

run() {
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" -- "$WORKLOADS/$1")
	report_json "$art" "$tmp/r.json"
}

test_calloc() {
	run calloc
	expect_eq "calloc: 50 Calloc" 50 "$(count "$tmp/r.json" Calloc)"
	expect_eq "calloc: reallocarray(NULL) is 10 Realloc" 10 "$(count "$tmp/r.json" Realloc)"
	expect_eq "calloc: no nested Malloc" 0 "$(count "$tmp/r.json" Malloc)"
	expect_eq "calloc: 60 Free" 60 "$(count "$tmp/r.json" Free)"
	# 8 * (1 + ... + 50) + 16 * (1 + ... + 10)
	expect_eq "calloc: bytes" $((8 * 1275 + 16 * 55)) "$(jq -r .bytes_allocated "$tmp/r.json")"
	expect_eq "calloc: nothing leaked" 0 "$(jq -r .leaked_count "$tmp/r.json")"
}

test_realloc_chain() {
	run realloc_chain
	expect_eq "realloc: 12 Realloc incl. realloc(NULL, n) and realloc(p, 0)" 12 \
		"$(count "$tmp/r.json" Realloc)"
	expect_eq "realloc: no nested Malloc or Free" 0 \
		"$(( $(count "$tmp/r.json" Malloc) + $(count "$tmp/r.json" Free) ))"
	expect_eq "realloc: realloc(p, 0) freed the last block" 0 "$(jq -r .leaked_count "$tmp/r.json")"
	expect_eq "realloc: realloc(p, 0) is addr 0, size 0, old_addr the last block" "0 0 true" \
		"$("$MEMTRACK" report --dump "$art" | jq -s -r '[.[] | select(.type == "Realloc")]
			| "\(.[-1].addr) \(.[-1].size) \(.[-1].old_addr == .[-2].addr and .[-2].addr != 0)"')"
	expect_eq "realloc: peak is the largest block" 176 "$(jq -r .peak_bytes "$tmp/r.json")"
}

# b stays live right after a: realloc(a, 4096) must move it, and its Realloc frees a
test_realloc_move() {
	local moved
	run realloc_move
	moved=$(cat "$tmp/track.out")
	expect_eq "realloc move: traced by ${MEMTRACK_BACKEND:-preload}" "${MEMTRACK_BACKEND:-preload}" \
		"$(jq -r '.processes[0].backend' "$tmp/r.json")"
	expect_eq "realloc move: 2 Malloc, 1 Realloc, 2 Free" "2 1 2" \
		"$(count "$tmp/r.json" Malloc) $(count "$tmp/r.json" Realloc) $(count "$tmp/r.json" Free)"
	expect_eq "realloc move: the Realloc's old_addr is a, its addr the new block (the workload's 'old new')" \
		"$moved" "$("$MEMTRACK" report --dump "$art" | jq -r 'select(.type == "Realloc") | "\(.old_addr) \(.addr)"')"
	expect_eq "realloc move: old_addr is the first malloc's block" true \
		"$("$MEMTRACK" report --dump "$art" | jq -s '[.[] | select(.type == "Malloc")][0].addr as $a
			| [.[] | select(.type == "Realloc")][0].old_addr == $a')"
	expect_eq "realloc move: nothing leaked (the old block was freed by the move)" "0 0" \
		"$(jq -r '"\(.leaked_count) \(.leaked_bytes)"' "$tmp/r.json")"
}

test_aligned() {
	run aligned
	expect_eq "aligned: 19 AlignedAlloc" 19 "$(count "$tmp/r.json" AlignedAlloc)"
	expect_eq "aligned: no nested Malloc" 0 "$(count "$tmp/r.json" Malloc)"
	expect_eq "aligned: 19 Free" 19 "$(count "$tmp/r.json" Free)"
	expect_eq "aligned: bytes" $((5 * 128 + 5 * 100 + 5 * 1000 + 4 * 100)) \
		"$(jq -r .bytes_allocated "$tmp/r.json")"
}

test_calloc
test_realloc_chain
test_realloc_move
test_aligned
finish
