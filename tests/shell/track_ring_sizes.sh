#!/bin/bash
# track: the BPF rings' sizes, as the stats file's ring_open rows give them: the events and
# stacks rings are 2M when the shim serves the tree and 8M when BPF carries every process
# (--backend bpf, -p), the stacks ring raised to what dwarf's copies in flight need above
# the watermark; --ring-size wins over both
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
	expect_eq "auto: events 2M, stacks 2M" "2097152 2097152" "$(sizes auto)"
	expect_eq "auto, fp: events 2M, stacks 2M" "2097152 2097152" \
		"$(sizes fp --call-graph fp)"
	expect_eq "bpf: events 8M, stacks 8M" "8388608 8388608" "$(sizes bpf --backend bpf)"
}

# dwarf,8192 copies in flight (a record: 8 bytes of ring header, 48 of struct mt_raw_stack,
# the copy), one a CPU and 2 (4 at least), under a 1% margin: 4M on 2 CPUs, past the default
test_raised_for_dwarf() {
	local cpus want
	cpus=$(getconf _NPROCESSORS_CONF)
	want=$(awk -v c="$cpus" 'BEGIN { n = (c > 2 ? c : 2) + 2; need = n * (8 + 48 + 8192) * 100;
		m = 4096; while (m < need) m *= 2; if (m < 2097152) m = 2097152; print m }')
	expect_eq "auto, watermark 99%: stacks raised" "2097152 $want" \
		"$(sizes wm99 --pressure-watermark 99)"
}

test_asked_for() {
	expect_eq "auto, events=64K" "65536 2097152" "$(sizes auto64 --ring-size events=64K)"
	expect_eq "auto, stacks=4M" "2097152 4194304" "$(sizes auto4m --ring-size stacks=4M)"
	expect_eq "bpf, events=64K" "65536 8388608" \
		"$(sizes bpf64 --backend bpf --ring-size events=64K)"
}

test_by_backend
test_raised_for_dwarf
test_asked_for
finish
