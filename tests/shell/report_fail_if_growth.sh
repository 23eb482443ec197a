#!/bin/bash
# report --diff --fail-if: a growth limit sees head minus base, with its sign, for every quantity, both ways
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp"

# the quantities of a limit, and report --json's figure of each
QUANTITIES="peak leaked leaked-blocks allocated allocs temporary temporary% unknown-frees"
# figure <report.json> <quantity>
figure() {
	jq -r --arg q "$2" '{peak: .peak_bytes, leaked: .leaked_bytes, "leaked-blocks": .leaked_count,
		allocated: .bytes_allocated, allocs: .allocations, temporary: .temporary_count,
		"temporary%": (if .allocations > 0 then 100 * .temporary_count / .allocations else 0 end),
		"unknown-frees": .unknown_frees}[$q]' "$1"
}

# check_way <base> <head>: for each quantity, q+>0 is crossed when it grew, q+<0 when it
# shrank, neither when it stayed, with head minus base as the value; q+>0% likewise
check_way() {
	local base=$tmp/$1.msgpack head=$tmp/$2.msgpack q b h want got
	"$MEMTRACK" report --json "$base" >"$tmp/b.json"
	"$MEMTRACK" report --json "$head" >"$tmp/h.json"
	for q in $QUANTITIES; do
		b=$(figure "$tmp/b.json" "$q")
		h=$(figure "$tmp/h.json" "$q")
		want=$(jq -nc --arg q "$q" --argjson b "$b" --argjson h "$h" '($h - $b) as $d |
			if $d > 0 then [["\($q)+>0", $d]] elif $d < 0 then [["\($q)+<0", $d]] else [] end')
		"$MEMTRACK" report --diff --json --fail-if "$q+>0" --fail-if "$q+<0" "$base" "$head" \
			>"$tmp/d.json" 2>/dev/null || true
		got=$(jq -c '[.limits_crossed[] | [.limit, .value]]' "$tmp/d.json")
		expect_eq "$1 to $2: $q from $b to $h" "$want" "$got"
		want=$(jq -nc --arg q "$q" --argjson b "$b" --argjson h "$h" '($h - $b) as $d |
			if $b > 0 and $d > 0 then ["\($q)+>0%"] elif $b > 0 and $d < 0 then ["\($q)+<0%"] else [] end')
		"$MEMTRACK" report --diff --json --fail-if "$q+>0%" --fail-if "$q+<0%" "$base" "$head" \
			>"$tmp/d.json" 2>/dev/null || true
		expect_eq "$1 to $2: $q in percent" "$want" "$(jq -c '[.limits_crossed[].limit]' "$tmp/d.json")"
	done
}

# single and tree: each has quantities above, below and equal to the other's
test_signs() {
	check_way single tree
	check_way tree single
	check_way tree tree
}

# the exit status says the same: 3 for a shrink past a negative limit, 0 for a growth
test_exit() {
	expect_eq "peak shrank by 94.6%: peak+<-90% crossed" 3 \
		"$(status "$MEMTRACK" report --diff --fail-if 'peak+<-90%' "$tmp/tree.msgpack" "$tmp/single.msgpack")"
	expect_eq "and says it shrank" \
		"error: limit crossed: peak+<-90%: peak shrank by 94.6% (6.3 KiB to 350 B), 4.6 points under the limit" \
		"$(cat "$tmp/err")"
	expect_eq "peak grew: peak+<-90% not crossed" 0 \
		"$(status "$MEMTRACK" report --diff --fail-if 'peak+<-90%' "$tmp/single.msgpack" "$tmp/tree.msgpack")"
	expect_eq "allocs grew by 3 the other way: allocs+>2 crossed" 3 \
		"$(status "$MEMTRACK" report --diff --fail-if 'allocs+>2' "$tmp/tree.msgpack" "$tmp/single.msgpack")"
}

test_signs
test_exit
finish
