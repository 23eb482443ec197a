#!/bin/bash
# report: --pid, --children, --comm and --time on a process tree
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp"
A=$tmp/tree.msgpack

# figures <options...>: "peak peak_time leaked pids"
figures() {
	"$MEMTRACK" report --json "$@" "$A" |
		jq -r '"\(.peak_bytes) \(.peak_time_ns) \(.leaked_bytes) \([.processes[].pid] | join(","))"'
}

expect_eq "whole tree" "6500 4000000000 2500 20,21,22,30" "$(figures)"
expect_eq "--pid 20" "1000 0 0 20" "$(figures --pid 20)"
expect_eq "--pid 20 --children" "3500 2000000000 2500 20,21,22" "$(figures --pid 20 --children)"
expect_eq "--pid 21,30" "4500 4000000000 500 21,30" "$(figures --pid 21,30)"
expect_eq "--comm other" "4000 4000000000 0 30" "$(figures --comm other)"
expect_eq "--comm child --children" "2500 2000000000 2500 21,22" "$(figures --comm child --children)"
expect_eq "--time 2.5,4.5" "6500 4000000000 0" "$(figures --time 2.5,4.5 | cut -d' ' -f1-3)"
expect_eq "--time ,1.5" "1500 1000000000 500" "$(figures --time ,1.5 | cut -d' ' -f1-3)"
expect_eq "--time counts" 2 "$("$MEMTRACK" report --json --time 2.5,4.5 "$A" | jq .events)"
# a window after the last event (at 5 s): said, not an empty report
rc=0
"$MEMTRACK" report --time 6,9 "$A" >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "--time past the end: exit 1, nothing printed" "1 0" "$rc $(wc -c <"$tmp/out")"
expect_eq "--time past the end: says where the run ended" \
	"error: --time 6,9 starts after the last event of '$A', at 5.000000 s: nothing in it" \
	"$(cat "$tmp/err")"
expect_eq "--time up to the last event still reports" 0 \
	"$(status "$MEMTRACK" report -q --time 5,9 "$A")"
finish
