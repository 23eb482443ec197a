#!/bin/bash
# track: a preloaded library that forwards malloc and free to libc's: each call of the
# program's is one event, the library's and libc's functions both probed under BPF
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# before: under BPF libforward's free made its event at entry and libc's free, called through
# a pointer, made another: 120 Free of malloc_free's 60
test_forwarded_calls() {
	local art

	art=$(LD_PRELOAD=$WORKLOADS/libforward.so track_workload "$tmp" -- "$WORKLOADS/malloc_free")
	report_json "$art" "$tmp/r.json"
	expect_eq "forwarder: 100 Malloc" 100 "$(count "$tmp/r.json" Malloc)"
	expect_eq "forwarder: 60 Free" 60 "$(count "$tmp/r.json" Free)"
	expect_eq "forwarder: no free of a block not seen" 0 \
		"$(jq '[.processes[].unknown_frees] | add' "$tmp/r.json")"
	expect_eq "forwarder: 40 blocks leaked" 40 "$(jq '[.processes[].leaked_count] | add' "$tmp/r.json")"
}

test_forwarded_calls
finish
