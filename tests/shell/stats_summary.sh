#!/bin/bash
# memtrack stats: text and JSON summaries of generated stats files with known figures
set -e

. "$(dirname "$0")/lib/common.sh"

GEN=$TOP/tests/shell/data/stats/generate.sh
tmpdir=$(mktemp -d /tmp/memtrack-stats-summary.XXXXXX)

cleanup() {
	rm -rf "$tmpdir"
	trap - EXIT TERM INT
}

trap_cleanup() {
	cleanup
	exit 1
}
trap trap_cleanup EXIT TERM INT

# the row of one ring in the text table, squeezed to single spaces
ring_row() {
	grep -E "^$2 " "$1" | tr -s ' '
}

test_text_with_episodes() {
	local out=$tmpdir/text.out

	"$GEN" --episodes >"$tmpdir/ep.jsonl"
	"$MEMTRACK" stats "$tmpdir/ep.jsonl" >"$out"
	expect_eq "text: header" \
		"$tmpdir/ep.jsonl: span 10.000 s, 4104 rows (2 ring_open, 1998 ring, 3 pressure, 1001 backlog, 1000 resolve, 100 encode)" \
		"$(head -n 1 "$out")"
	expect_eq "text: events row" "events 1M 99.8 10.0 10.0 100.0 100.0 9.5 10.0 0 0.0 0.0" \
		"$(ring_row "$out" events)"
	expect_eq "text: stacks row" "stacks 256K 49.9 5.0 5.0 25.0 25.0 75.0 20.0 3 160.0 50.0" \
		"$(ring_row "$out" stacks)"
	expect_eq "text: resolver" "resolver busy % 40.0" \
		"$(grep 'resolver busy' "$out" | tr -s ' ' | sed 's/^ //')"
	expect_eq "text: encoder" "encoder busy % 50.0" \
		"$(grep 'encoder busy' "$out" | tr -s ' ' | sed 's/^ //')"
	expect_eq "text: encoder in -> out" "encoder in -> out MB 100.0 -> 25.0 (ratio 4.00)" \
		"$(grep 'encoder in' "$out" | tr -s ' ' | sed 's/^ //')"
	expect_eq "text: in flight" "events in flight max 490" \
		"$(grep 'in flight' "$out" | tr -s ' ' | sed 's/^ //')"
	expect_eq "text: peak RSS" "peak RSS MB 60.0" \
		"$(grep 'peak RSS' "$out" | tr -s ' ' | sed 's/^ //')"
	if grep -q '^shards' "$out"; then
		fail "text: one file" "printed a shard table"
	else
		pass "text: one file has no shard table"
	fi
}

test_json_with_episodes() {
	local out=$tmpdir/ep.json

	"$MEMTRACK" stats --json "$tmpdir/ep.jsonl" >"$out"
	expect_eq "json: span" 10 "$(json_get "$out" '.files[0].span_s')"
	expect_eq "json: ring rows" 1998 "$(json_get "$out" '.files[0].rows.ring')"
	expect_eq "json: events written" 99810000 \
		"$(json_get "$out" '.files[0].rings[] | select(.ring == "events") | .written_bytes')"
	expect_eq "json: events write MB/s" "10 10" \
		"$(json_get "$out" '.files[0].rings[] | select(.ring == "events") | "\(.write_mb_s_avg) \(.write_mb_s_peak)"')"
	expect_eq "json: events drain MB/s" "100 100" \
		"$(json_get "$out" '.files[0].rings[] | select(.ring == "events") | "\(.drain_mb_s_avg) \(.drain_mb_s_peak)"')"
	expect_eq "json: events fill and busy" "9.53674 9.99" \
		"$(json_get "$out" '.files[0].rings[] | select(.ring == "events") | "\(.fill_pct_max) \(.busy_pct)"')"
	expect_eq "json: stacks" "49910000 5 25 75 19.98 3 160 50" \
		"$(json_get "$out" '.files[0].rings[] | select(.ring == "stacks") |
			"\(.written_bytes) \(.write_mb_s_avg) \(.drain_mb_s_peak) \(.fill_pct_max) \(.busy_pct) \(.episodes) \(.paused_ms_sum) \(.paused_ms_max)"')"
	expect_eq "json: pipeline" "40 50 100000000 25000000 4 490 60000000" \
		"$(json_get "$out" '.files[0].pipeline |
			"\(.resolver_busy_pct) \(.encoder_busy_pct) \(.encoder_in_bytes) \(.encoder_out_bytes) \(.encoder_ratio) \(.events_in_flight_max) \(.rss_peak_bytes)"')"
	expect_eq "json: no shards for one file" null "$(json_get "$out" '.shards')"
}

test_without_episodes() {
	local out=$tmpdir/noep.out

	"$GEN" >"$tmpdir/noep.jsonl"
	"$MEMTRACK" stats "$tmpdir/noep.jsonl" >"$out"
	expect_eq "no episodes: stacks row" "stacks 256K 49.9 5.0 5.0 25.0 25.0 19.1 20.0 0 0.0 0.0" \
		"$(ring_row "$out" stacks)"
	"$MEMTRACK" stats --json "$tmpdir/noep.jsonl" >"$out"
	expect_eq "no episodes: json" "19.0735 0 0" \
		"$(json_get "$out" '.files[0] | "\(.rings[1].fill_pct_max) \(.pipeline.episodes) \(.pipeline.paused_ms_max)"')"
}

test_stdin() {
	expect_eq "stdin: '-' reads the standard input" 1998 \
		"$("$MEMTRACK" stats --json - <"$tmpdir/ep.jsonl" | jq -r '.files[0].rows.ring')"
}

test_shards() {
	local out=$tmpdir/shards.out

	"$GEN" --episodes --seconds 20 --t0 5000000000000 >"$tmpdir/shard-1.jsonl"
	"$MEMTRACK" stats "$tmpdir/ep.jsonl" "$tmpdir/shard-1.jsonl" >"$out"
	expect_eq "shards: one row per file" 2 \
		"$(sed -n '/^shards/,$p' "$out" | grep -c 'jsonl')"
	expect_eq "shards: first row" "$tmpdir/ep.jsonl 0.050 5.0 20.0 3 160.0 50.0 0.100 -> 0.025 4.00 60.0" \
		"$(grep -E "^$tmpdir/ep.jsonl " "$out" | tr -s ' ')"
	"$MEMTRACK" stats --json "$tmpdir/ep.jsonl" "$tmpdir/shard-1.jsonl" >"$out"
	expect_eq "shards: json" "stacks 0.04991 0.09991 6 0.2 0.05" \
		"$(json_get "$out" '"\(.shards[0].ring) \(.shards[0].written_gb) \(.shards[1].written_gb) \(.shards[1].episodes) \(.shards[1].encoder_in_gb) \(.shards[1].encoder_out_gb)"')"
	expect_eq "shards: --shard-ring" "events 0.09981" \
		"$("$MEMTRACK" stats --json --shard-ring events "$tmpdir/ep.jsonl" "$tmpdir/shard-1.jsonl" |
			jq -r '"\(.shards[0].ring) \(.shards[0].written_gb)"')"
}

command -v jq >/dev/null || skip "jq is not installed"
test_text_with_episodes
test_json_with_episodes
test_without_episodes
test_stdin
test_shards
cleanup
finish
