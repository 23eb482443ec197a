#!/bin/bash
# track: a process that scribbles over its shim ring ends its own tracking, not memtrack's
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# $1: ring_scribble's argument, $2: its name in the checks, $3: what memtrack must say
test_scribbled_ring() {
	local arg=$1 name=$2 why=$3 out="$tmp/$2" rc=0 artifact

	"$MEMTRACK" track -o "$out" --backend preload \
		"$WORKLOADS/ring_scribble $arg; echo \$? > $tmp/done-$name; $WORKLOADS/malloc_free" \
		>/dev/null 2>"$tmp/err-$name" || rc=$?
	expect_eq "$name: memtrack fails the run, the events are incomplete" 128 "$rc"
	expect_eq "$name: the process ran to its end" 0 "$(cat "$tmp/done-$name")"
	if grep -q "ring of pid [0-9]* (ring_scribble), thread [0-9]*, is corrupt: $why" "$tmp/err-$name"; then
		pass "$name: memtrack says which process and why"
	else
		fail "$name: memtrack says which process and why" "$(cat "$tmp/err-$name")"
	fi
	artifact=$(ls "$out"/*.msgpack)
	report_json "$artifact" "$tmp/r-$name.json"
	expect_eq "$name: its 1000 malloc(1234) before the scribble" 1000 \
		"$(count_sized "$artifact" Malloc 1234)"
	expect_eq "$name: none of the 200000 after" 0 "$(count_sized "$artifact" Malloc 4321)"
	expect_eq "$name: the next process is tracked as ever" 100 \
		"$(jq -r '[.processes[] | select(.comm == "malloc_free") | .counts.Malloc] | add' \
			"$tmp/r-$name.json")"
}

test_scribbled_ring "" scribble "a record of an impossible length"
# a free stamped an hour ahead held the process's events, and its threads, to the end
test_scribbled_ring future future "a timestamp from the future"
# a thread started after memtrack let the process go: before, the shim unmapped the rings
# memtrack had released, the main thread's among them, and the main thread's next malloc faulted
test_scribbled_ring thread thread "a record of an impossible length"
finish
