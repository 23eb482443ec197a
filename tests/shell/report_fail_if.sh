#!/bin/bash
# report --fail-if: exit 3 and one line per limit crossed, exit 0 within the limits; growth limits with --diff
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# malloc_free: 100 blocks of 1..100 bytes (5050 bytes), the last 40 (3220 bytes) never freed
art=$(track_workload "$tmp" -- "$WORKLOADS/malloc_free")
write_samples test-report "$tmp/samples"

test_within() {
	local rc
	rc=$(status "$MEMTRACK" report -q --fail-if 'peak>5050' --fail-if 'allocs>100' \
		--fail-if 'leaked<3220' --fail-if 'leaked-blocks>40' --fail-if 'peak@each>=5051' "$art")
	expect_eq "within the limits: exit 0" 0 "$rc"
	expect_eq "within the limits: nothing on stderr" "" "$(cat "$tmp/err")"
}

test_crossed() {
	local rc
	rc=$(status "$MEMTRACK" report -q --fail-if 'peak>4KiB' --fail-if 'allocs>1e6' \
		--fail-if 'leaked-blocks >= 40' "$art")
	expect_eq "crossed: exit 3" 3 "$rc"
	expect_eq "crossed: one line per limit crossed" \
		"error: limit crossed: peak>4KiB: peak is 4.9 KiB (5050 bytes), 954 B over the limit
error: limit crossed: leaked-blocks >= 40: leaked-blocks is 40, 0 over the limit" "$(cat "$tmp/err")"
	if grep -q '^Heap' "$tmp/out"; then pass "crossed: the report is printed"; else fail "crossed: the report is printed" "$(head -3 "$tmp/out")"; fi

	rc=$(status "$MEMTRACK" report --json --fail-if 'leaked>3219' "$art")
	expect_eq "crossed with --json: exit 3" 3 "$rc"
	expect_eq "crossed with --json: stdout is the JSON document" 3220 "$(jq .leaked_bytes "$tmp/out")"
	expect_eq "crossed with --json: the limit crossed, in the document" \
		'[{"limit":"leaked>3219","pid":null,"value":3220,"message":"leaked>3219: leaked is 3.1 KiB (3220 bytes), 1 B over the limit"}]' \
		"$(jq -c .limits_crossed "$tmp/out")"
	rc=$(status "$MEMTRACK" report --json --fail-if 'leaked>3220' "$art")
	expect_eq "within the limits with --json: none crossed" "0 []" "$rc $(jq -c .limits_crossed "$tmp/out")"
	rc=$(status "$MEMTRACK" report --json "$art")
	expect_eq "without --fail-if: no limits_crossed key" "0 null" "$rc $(jq -c .limits_crossed "$tmp/out")"
}

# the samples: base single.msgpack has a peak of 350 B, head tree.msgpack 6500 B
test_diff() {
	local rc s=$tmp/samples
	rc=$(status "$MEMTRACK" report --diff --fail-if 'peak+>10%' "$s/single.msgpack" "$s/tree.msgpack")
	expect_eq "diff: growth crossed: exit 3" 3 "$rc"
	expect_eq "diff: says by how much" \
		"error: limit crossed: peak+>10%: peak grew by 1757.1% (350 B to 6.3 KiB), 1747.1 points over the limit" \
		"$(cat "$tmp/err")"
	rc=$(status "$MEMTRACK" report --diff --fail-if 'peak+>1757.2%' --fail-if 'peak+>6150' \
		"$s/single.msgpack" "$s/tree.msgpack")
	expect_eq "diff: growth within the limits: exit 0" 0 "$rc"
	rc=$(status "$MEMTRACK" report --diff --fail-if 'peak+>0' "$s/single.msgpack" "$s/truncated.msgpack")
	expect_eq "diff: a truncated artifact exits 1 even past a limit" 1 "$rc"
}

test_usage() {
	local rc
	rc=$(status "$MEMTRACK" report --fail-if 'peek>1' "$art")
	expect_eq "unknown quantity: usage error" 129 "$rc"
	if grep -q "^error: --fail-if 'peek>1': unknown quantity 'peek'" "$tmp/err"; then
		pass "unknown quantity: says which"; else fail "unknown quantity: says which" "$(head -1 "$tmp/err")"; fi
	rc=$(status "$MEMTRACK" report --fail-if 'peak+>10%' "$art")
	expect_eq "growth without --diff: usage error" 129 "$rc"
	rc=$(status "$MEMTRACK" report --flamegraph --fail-if 'peak>1' "$art")
	expect_eq "--flamegraph takes no limit: usage error" 129 "$rc"
}

test_within
test_crossed
test_diff
test_usage
finish
