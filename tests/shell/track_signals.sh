#!/bin/bash
# track: SIGINT/SIGTERM go to the command, and the artifact is still completed
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# interrupt <signal> <expected status>
interrupt() {
	local sig=$1 want=$2 mt rc=0
	# the last round's "ready" would let the signal go before this memtrack runs, to a
	# shell about to exec it whose trap removes $tmp
	rm -rf "$tmp/out" "$tmp/ready"
	# a script's background jobs ignore SIGINT, and the command would inherit that
	env --default-signal=INT "$MEMTRACK" track -q -o "$tmp/out" -- \
		"$WORKLOADS/malloc_free_then_sleep" >"$tmp/ready" &
	mt=$!
	wait_for 20 grep -qs ready "$tmp/ready"
	kill "-$sig" "$mt"
	wait "$mt" || rc=$?
	expect_eq "$sig: memtrack exits 128 + the command's signal" "$want" "$rc"
	if "$MEMTRACK" report --json "$tmp"/out/*.msgpack >"$tmp/r.json"; then
		pass "$sig: the artifact is complete"
	else
		fail "$sig: the artifact is complete" "report failed"
	fi
	expect_eq "$sig: its 100 Malloc" 100 "$(count "$tmp/r.json" Malloc)"
}

interrupt INT 130
interrupt TERM 143
finish
