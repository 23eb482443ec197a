#!/bin/bash
# track --stats: a write error (disk full) stops sampling with one message,
# and the run and its artifact go on
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

test_disk_full() {
	local rc=0
	"$MEMTRACK" track -q -o "$tmp" --stats /dev/full -- "$WORKLOADS/alloc_storm_procs" 2 20000 \
		2>"$tmp/err" || rc=$?
	expect_eq "disk full: the command's status" 0 "$rc"
	expect_eq "disk full: one message" 1 "$(grep -c "cannot write memtrack stats file '/dev/full'" "$tmp/err")"
	report_json "$(ls "$tmp"/*.msgpack)" "$tmp/r.json"
	expect_eq "disk full: the artifact is whole" 40000 "$(count "$tmp/r.json" Malloc)"
}

test_disk_full
finish
