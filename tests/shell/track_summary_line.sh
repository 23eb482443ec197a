#!/bin/bash
# track: the summary line counts in words that agree with the number (1 process, 2 processes)
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# summary <workload>: the summary line of tracking it
summary() {
	"$MEMTRACK" track -o "$tmp" -- "$WORKLOADS/$1" 2>&1 >/dev/null | grep '^\[ memtrack track:'
}

line=$(summary malloc_free)
if [[ $line == *", 1 process ("* ]]; then pass "one: 1 process"; else fail "one: 1 process" "$line"; fi
if [[ $line == *", 0 pressure episodes ]"* ]]; then pass "none: 0 pressure episodes"; else fail "none: 0 pressure episodes" "$line"; fi
line=$(summary fork)
if [[ $line == *", 2 processes ("* ]]; then pass "two: 2 processes"; else fail "two: 2 processes" "$line"; fi
finish
