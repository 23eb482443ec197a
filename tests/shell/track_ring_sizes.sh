#!/bin/bash
# track: the BPF rings' sizes, as the stats file's ring_open rows give them: the events ring
# is 2M when the shim serves the tree and 8M when BPF carries every process (--backend bpf,
# -p); --ring-size wins over both
# timeout: 60
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# sizes <name> <track args...>: "events stacks" sizes of a run of true
sizes() {
	local name=$1
	shift
	mkdir -p "$tmp/$name"
	"$MEMTRACK" track -q -o "$tmp/$name" --stats "$tmp/$name.jsonl" "$@" -- true
	jq -r 'select(.k == "ring_open" and (.ring == "events" or .ring == "stacks")) |
		"\(.ring) \(.size)"' "$tmp/$name.jsonl" | sort | awk '{ print $2 }' | paste -sd ' '
}

test_by_backend() {
	expect_eq "auto: events 2M, stacks 8M" "2097152 8388608" "$(sizes auto)"
	expect_eq "bpf: events 8M, stacks 8M" "8388608 8388608" "$(sizes bpf --backend bpf)"
}

test_asked_for() {
	expect_eq "auto, events=64K" "65536 8388608" "$(sizes auto64 --ring-size events=64K)"
	expect_eq "bpf, events=64K" "65536 8388608" \
		"$(sizes bpf64 --backend bpf --ring-size events=64K)"
}

test_by_backend
test_asked_for
finish
