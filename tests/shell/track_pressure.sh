#!/bin/bash
# track: back-pressure stops producers instead of dropping; stats rows are sane
# timeout: 600
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# BPF's back-pressure: the producers are stopped at the events ring's watermark (SIGSTOP
# alone: the freezer's rows, one per freeze of the whole tree, overlap the releases')
test_pressure_no_loss() {
	"$MEMTRACK" track -o "$tmp" --backend bpf --stats "$tmp/s.jsonl" --ring-size events=64K \
		--no-freezer --poll-interval 2000 -- "$WORKLOADS/alloc_storm_procs" 16 10000 \
		2>"$tmp/track.err"
	art=$(ls "$tmp"/*.msgpack)
	report_json "$art" "$tmp/r.json"
	expect_eq "pressure: 160000 Malloc" 160000 "$(count "$tmp/r.json" Malloc)"
	expect_eq "pressure: 160000 Free" 160000 "$(count "$tmp/r.json" Free)"
	expect_eq "pressure: zero drops" 0 "$(jq -r .meta.drops.events "$tmp/r.json")"
	rows=$(grep -c '"k":"pressure"' "$tmp/s.jsonl" || true)
	if [ "$rows" -gt 0 ]; then pass "pressure: episodes recorded ($rows)"; else fail "pressure: episodes" "none"; fi
	expect_eq "pressure: every pid stopped before its release" 0 \
		"$(jq -s '[.[] | select(.k == "pressure") | .t as $t | .pids[] | select(.[1] >= $t or .[1] == 0)] | length' "$tmp/s.jsonl")"
	check_pressure_rows "pressure" "$tmp/s.jsonl"
	expect_eq "pressure: the summary counts them" "$rows" \
		"$(sed -n 's/.* \([0-9]*\) pressure episodes.*/\1/p' "$tmp/track.err")"
}

# the same with the tree's freezer (the default), polled every 20 ms: its rows and the
# SIGSTOP releases' (at 64K a burst outruns the freeze) count alike
test_pressure_freezer() {
	local rows
	mkdir -p "$tmp/freezer"
	"$MEMTRACK" track -o "$tmp/freezer" --backend bpf --stats "$tmp/f.jsonl" \
		--ring-size events=64K --poll-interval 20 -- "$WORKLOADS/alloc_storm_procs" 16 10000 \
		2>"$tmp/freezer.err"
	report_json "$(ls "$tmp"/freezer/*.msgpack)" "$tmp/f.json"
	expect_eq "pressure, freezer: 160000 Malloc" 160000 "$(count "$tmp/f.json" Malloc)"
	expect_eq "pressure, freezer: 160000 Free" 160000 "$(count "$tmp/f.json" Free)"
	expect_eq "pressure, freezer: zero drops" 0 "$(jq -r .meta.drops.events "$tmp/f.json")"
	rows=$(grep -c '"k":"pressure"' "$tmp/f.jsonl" || true)
	expect_eq "pressure, freezer: episodes recorded" yes \
		"$([ "$rows" -gt 0 ] && echo yes || echo "no ($rows)")"
	expect_eq "pressure, freezer: every pid paused before its release" 0 \
		"$(jq -s '[.[] | select(.k == "pressure") | .t as $t | .pids[] | select(.[1] >= $t or .[1] == 0)] | length' "$tmp/f.jsonl")"
	expect_eq "pressure, freezer: the summary counts them" "$rows" \
		"$(sed -n 's/.* \([0-9]*\) pressure episodes.*/\1/p' "$tmp/freezer.err")"
}

# the same through a small events ring with 16 threads of one process
test_pressure_threads() {
	mkdir -p "$tmp/threads"
	"$MEMTRACK" track -q -o "$tmp/threads" --backend bpf --call-graph no --ring-size events=64K \
		-- "$WORKLOADS/alloc_storm_threads" 16 10000 2>"$tmp/threads.err"
	report_json "$(ls "$tmp"/threads/*.msgpack)" "$tmp/t.json"
	expect_eq "pressure, threads: zero drops" 0 "$(jq -r .meta.drops.events "$tmp/t.json")"
	expect_eq "pressure, threads: every Malloc" 160000 \
		"$(jq '.counts.Malloc' "$tmp/t.json")"
}

test_stats_rows() {
	local s=$tmp/s.jsonl
	if jq -e . "$s" >/dev/null; then pass "stats: every line is JSON"; else fail "stats: every line is JSON" "jq failed"; fi
	expect_eq "stats: key k first" 0 "$(grep -vc '^{"k":' "$s" || true)"
	expect_eq "stats: one ring_open for events" 1 \
		"$(jq -s '[.[] | select(.k == "ring_open" and .ring == "events")] | length' "$s")"
	expect_eq "stats: ring_open size" 65536 \
		"$(jq -s -r '.[] | select(.k == "ring_open" and .ring == "events") | .size' "$s")"
	# each ring's rows against that ring's size (the stacks ring is there too, with call graphs)
	expect_eq "stats: t0 <= t1, cons <= prod, 0 <= peak <= size" 0 \
		"$(jq -s '(map(select(.k == "ring_open") | {(.ring): .size}) | add) as $size
			| [.[] | select(.k == "ring") | select(.t0 > .t1 or .cons0 > .prod0 or .cons1 > .prod1
				or .peak < 0 or .peak > $size[.ring])] | length' "$s")"
	expect_eq "stats: positions never decrease" 0 \
		"$(jq -s '[group_by(.ring)[] | map(select(.k == "ring")) as $r
			| range(1; $r | length) | select($r[.].prod0 < $r[. - 1].prod1 or $r[.].cons0 < $r[. - 1].cons1)]
			| length' "$s")"
	expect_eq "stats: no idle ticks written" 0 \
		"$(jq -s '[.[] | select(.k == "ring" and .prod0 == .prod1 and .cons0 == .cons1)] | length' "$s")"
	if [ "$(jq -s '[.[] | select(.k == "encode")] | length' "$s")" -gt 0 ]; then
		pass "stats: encode rows"
	else
		fail "stats: encode rows" "none"
	fi
}

test_stats_of_a_real_run() {
	if "$MEMTRACK" stats "$tmp/s.jsonl" --plot "$tmp/s.png" >"$tmp/summary" &&
		file "$tmp/s.png" | grep -q "PNG image data"; then
		pass "stats: a real run plots"
	else
		fail "stats: a real run plots" "$(cat "$tmp/summary")"
	fi
	expect_eq "stats: the summary counts the episodes" \
		"$(grep '"k":"pressure"' "$tmp/s.jsonl" | grep -c '"ring":"events"')" \
		"$(awk '$1 == "events" { print $10 }' "$tmp/summary")"
}

test_drops_are_loud() {
	# a watermark at the very top of a tiny ring: reservations fail before any stop
	local rc=0
	"$MEMTRACK" track -o "$tmp/drops" --backend bpf --ring-size events=4K --pressure-watermark 99 \
		--poll-interval 2000 -- "$WORKLOADS/alloc_storm_procs" 16 2000 2>"$tmp/err" || rc=$?
	expect_eq "drops: memtrack fails the run" 128 "$rc"
	if grep -q "call stacks were dropped: the artifact is incomplete" "$tmp/err"; then
		pass "drops: says so"
	else
		fail "drops: says so" "$(cat "$tmp/err")"
	fi
	report_json "$(ls "$tmp"/drops/*.msgpack)" "$tmp/d.json"
	if [ "$(jq .meta.drops.events "$tmp/d.json")" -gt 0 ]; then
		pass "drops: counted in the artifact"
	else
		fail "drops: counted in the artifact" "$(jq -c .meta "$tmp/d.json")"
	fi
	rc=0
	"$MEMTRACK" track -q --tolerate-drops -o "$tmp/drops" --backend bpf --ring-size events=4K \
		--pressure-watermark 99 --poll-interval 2000 -- \
		"$WORKLOADS/alloc_storm_procs" 16 2000 2>/dev/null || rc=$?
	expect_eq "drops: --tolerate-drops gives the command's status" 0 "$rc"
}

# the shim's back-pressure: a thread whose ring is full waits for the poller
test_heap_pressure() {
	local s=$tmp/heap.jsonl
	mkdir -p "$tmp/heap"
	"$MEMTRACK" track -o "$tmp/heap" --backend preload --stats "$s" --ring-size heap=4K \
		--poll-interval 2000 -- "$WORKLOADS/alloc_storm_procs" 16 20000 2>"$tmp/heap.err"
	report_json "$(ls "$tmp"/heap/*.msgpack)" "$tmp/h.json"
	expect_eq "heap pressure: 320000 Malloc" 320000 "$(count "$tmp/h.json" Malloc)"
	expect_eq "heap pressure: 320000 Free" 320000 "$(count "$tmp/h.json" Free)"
	rows=$(grep '"k":"pressure"' "$s" | grep -c '"ring":"heap"' || true)
	if [ "$rows" -gt 0 ]; then pass "heap pressure: waits recorded ($rows)"; else fail "heap pressure: waits" "none"; fi
	expect_eq "heap pressure: every wait began before its release" 0 \
		"$(jq -s '[.[] | select(.k == "pressure") | .t as $t | .pids[] | select(.[1] >= $t or .[1] == 0)] | length' "$s")"
	expect_eq "heap pressure: a pid once per row" 0 \
		"$(jq -s '[.[] | select(.k == "pressure") | [.pids[][0]] | select(length != (unique | length))] | length' "$s")"
	expect_eq "heap pressure: the summary counts them" "$rows" \
		"$(sed -n 's/.* \([0-9]*\) pressure episodes.*/\1/p' "$tmp/heap.err")"
	expect_eq "heap pressure: ring_open for heap" 1 \
		"$(jq -s '[.[] | select(.k == "ring_open" and .ring == "heap")] | length > 0 | if . then 1 else 0 end' "$s")"
}

test_stats_env() {
	MEMTRACK_STATS=$tmp/env.jsonl "$MEMTRACK" track -q -o "$tmp" -- "$WORKLOADS/malloc_free"
	expect_eq "stats: MEMTRACK_STATS" 1 "$(grep '"k":"ring_open"' "$tmp/env.jsonl" | grep -c '"events"')"
	CODSPEED_MEMTRACK_STATS=$tmp/cs.jsonl "$MEMTRACK" track -q -o "$tmp" -- "$WORKLOADS/malloc_free"
	expect_eq "stats: CODSPEED_MEMTRACK_STATS" 1 "$(grep '"k":"ring_open"' "$tmp/cs.jsonl" | grep -c '"events"')"
}

test_pressure_no_loss
test_pressure_freezer
test_pressure_threads
test_stats_rows
test_stats_of_a_real_run
test_drops_are_loud
test_heap_pressure
test_stats_env
finish
