#!/bin/bash
# track: a process that scribbles over its shim ring ends its own tracking, not memtrack's
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; trap - EXIT TERM INT; }
trap cleanup EXIT TERM INT

test_scribbled_ring() {
	local rc=0
	"$MEMTRACK" track -o "$tmp" --backend preload \
		"$WORKLOADS/ring_scribble; echo \$? > $tmp/done; $WORKLOADS/malloc_free" \
		>/dev/null 2>"$tmp/err" || rc=$?
	expect_eq "scribble: memtrack fails the run, the events are incomplete" 128 "$rc"
	expect_eq "scribble: the process ran to its end" 0 "$(cat "$tmp/done")"
	if grep -q "ring of pid [0-9]* (ring_scribble), thread [0-9]*, is corrupt: a record of an impossible length" "$tmp/err"; then
		pass "scribble: memtrack says which process and why"
	else
		fail "scribble: memtrack says which process and why" "$(cat "$tmp/err")"
	fi
	report_json "$(ls "$tmp"/*.msgpack)" "$tmp/r.json"
	expect_eq "scribble: its 1000 malloc(1234) before the scribble" 1000 \
		"$(count_sized "$(ls "$tmp"/*.msgpack)" Malloc 1234)"
	expect_eq "scribble: none of the 200000 after" 0 \
		"$(count_sized "$(ls "$tmp"/*.msgpack)" Malloc 4321)"
	expect_eq "scribble: the next process is tracked as ever" 100 \
		"$(jq -r '[.processes[] | select(.comm == "malloc_free") | .counts.Malloc] | add' "$tmp/r.json")"
}

test_scribbled_ring
finish
