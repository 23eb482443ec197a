#!/bin/bash
# report --diff: base, head and change of peak, allocations and leaks
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp"

rc=0
"$MEMTRACK" report --diff "$tmp/single.msgpack" "$tmp/tree.msgpack" >"$tmp/out" || rc=$?
expect_eq "--diff exits 0" 0 "$rc"
if grep -Eq '^ *peak live heap +350 B +6.3 KiB +\+1757.1%' "$tmp/out"; then
	pass "peak row"; else fail "peak row" "$(cat "$tmp/out")"; fi
if grep -Eq '^ *allocations +7 +4 +-42.9%' "$tmp/out"; then
	pass "allocations row"; else fail "allocations row" "$(cat "$tmp/out")"; fi

"$MEMTRACK" report --diff --json "$tmp/single.msgpack" "$tmp/tree.msgpack" >"$tmp/j"
expect_eq "json base peak" 350 "$(json_get "$tmp/j" .base.peak_bytes)"
expect_eq "json head peak" 6500 "$(json_get "$tmp/j" .head.peak_bytes)"
expect_eq "json leaked change" 1636.1 "$(jq '.change_pct.leaked_bytes * 10 | round / 10' "$tmp/j")"
expect_eq "json allocations change" -42.9 "$(jq '.change_pct.allocations * 10 | round / 10' "$tmp/j")"

"$MEMTRACK" report --diff --json "$tmp/nothing.msgpack" "$tmp/single.msgpack" >"$tmp/j"
expect_eq "change from 0 is null" null "$(json_get "$tmp/j" .change_pct.peak_bytes)"
rc=0
"$MEMTRACK" report --diff "$tmp/single.msgpack" "$tmp/truncated.msgpack" >/dev/null 2>&1 || rc=$?
expect_eq "a truncated side exits 1" 1 "$rc"
finish
