#!/bin/bash
# track: a run killed by SIGKILL leaves an artifact whose frames report still names (side records)
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
cleanup() {
	pkill -KILL -f "$WORKLOADS/malloc_free_then_sleep" 2>/dev/null || true
	remove_tmp_dir
}
trap cleanup EXIT TERM INT

# has_stacks <artifact>: report reads Stack records from it, trailer or not
has_stacks() {
	"$MEMTRACK" report --dump "$1" 2>/dev/null | grep -q '"type":"Stack"'
}

test_killed() {
	local mt art rc=0
	"$MEMTRACK" track -q -o "$tmp/out" -- "$WORKLOADS/malloc_free_then_sleep" >"$tmp/ready" &
	mt=$!
	wait_for 60 grep -q ready "$tmp/ready" || fail "the workload started" "no 'ready' in 60 s"
	art=$(ls "$tmp"/out/*.msgpack)
	# the side records of its stacks are written within seconds of their resolution
	if wait_for 60 has_stacks "$art"; then
		pass "the running artifact has its stacks already"
	else
		fail "the running artifact has its stacks already" "none after 60 s"
	fi
	kill -KILL "$mt"
	wait "$mt" 2>/dev/null || true
	"$MEMTRACK" report --json --stack-depth 2 "$art" >"$tmp/r.json" 2>"$tmp/err" || rc=$?
	expect_eq "report says it is truncated" "1 1" "$rc $(grep -c 'trailer is missing' "$tmp/err")"
	expect_eq "its 100 Malloc" 100 "$(count "$tmp/r.json" Malloc)"
	expect_eq "the site of the 100 is named" "main malloc_free_then_sleep.c" \
		"$(jq -r '.sites[] | select(.calls == 100) | .frames[0] |
			"\(.symbol) \(.file // "-" | split("/") | last)"' "$tmp/r.json")"
	expect_eq "no site without its Stack record" 0 \
		"$(jq '[.sites[].frames[] | select(.symbol | test("has no Stack record"))] | length' "$tmp/r.json")"
}

test_killed
finish
