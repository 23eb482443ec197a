#!/bin/bash
# report: text, --json and --dump on synthetic artifacts with known figures
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp"

test_json_figures() {
	local j=$tmp/single.json
	"$MEMTRACK" report --json "$tmp/single.msgpack" >"$j"
	expect_eq "peak_bytes" 350 "$(json_get "$j" .peak_bytes)"
	expect_eq "peak_time_ns" 4000 "$(json_get "$j" .peak_time_ns)"
	expect_eq "leaked_count" 2 "$(json_get "$j" .leaked_count)"
	expect_eq "leaked_bytes" 144 "$(json_get "$j" .leaked_bytes)"
	expect_eq "unknown_frees" 1 "$(json_get "$j" .unknown_frees)"
	expect_eq "bytes_allocated" 644 "$(json_get "$j" .bytes_allocated)"
	expect_eq "bytes_freed" 500 "$(json_get "$j" .bytes_freed)"
	expect_eq "counts.Realloc" 5 "$(json_get "$j" .counts.Realloc)"
	expect_eq "counts.Free" 4 "$(json_get "$j" .counts.Free)"
	expect_eq "truncated" false "$(json_get "$j" .truncated)"
	expect_eq "records" 21 "$(json_get "$j" .records)"
	expect_eq "meta.command" ./single "$(json_get "$j" .meta.command)"
	expect_eq "process comm" single "$(json_get "$j" '.processes[0].comm')"
	expect_eq "process exe" /usr/bin/single "$(json_get "$j" '.processes[0].exe')"
	expect_eq "process leaks" 144 "$(json_get "$j" '.processes[0].leaked_bytes')"
}

test_json_keys() {
	local j=$tmp/tree.json k
	"$MEMTRACK" report --json "$tmp/tree.msgpack" >"$j"
	for k in counts bytes_allocated bytes_freed peak_bytes peak_time_ns leaked_count \
		leaked_bytes unknown_frees truncated records processes meta; do
		expect_eq "top-level key $k" true "$(jq "has(\"$k\")" "$j")"
	done
	for k in pid ppid comm exe exit_code counts bytes_allocated bytes_freed peak_bytes \
		leaked_count leaked_bytes; do
		expect_eq "process key $k" true "$(jq ".processes | all(has(\"$k\"))" "$j")"
	done
	expect_eq "four processes" "20 21 22 30" "$(jq -r '[.processes[].pid] | join(" ")' "$j")"
	expect_eq "signal exit code" 9 "$(json_get "$j" '.processes[1].exit_code')"
	expect_eq "tree peak" 6500 "$(json_get "$j" .peak_bytes)"
}

test_codspeed() {
	local j=$tmp/codspeed.json
	"$MEMTRACK" report --json "$tmp/codspeed.msgpack" >"$j"
	expect_eq "events only: meta is null" null "$(json_get "$j" .meta)"
	expect_eq "events only: not truncated" false "$(json_get "$j" .truncated)"
	expect_eq "events only: peak" 350 "$(json_get "$j" .peak_bytes)"
	expect_eq "events only: comm unknown" null "$(json_get "$j" '.processes[0].comm')"
}

test_text() {
	"$MEMTRACK" report "$tmp/single.msgpack" >"$tmp/out"
	if grep -q 'peak live heap *350 B (350 bytes) at 0.000004 s' "$tmp/out"; then
		pass "text peak"; else fail "text peak" "$(grep peak "$tmp/out")"; fi
	if grep -q 'live at exit *2 blocks, 144 B' "$tmp/out"; then
		pass "text leaks"; else fail "text leaks" "$(grep 'live at' "$tmp/out")"; fi
	if grep -q '^ *10 *1 single *exit 0' "$tmp/out"; then
		pass "text process row"; else fail "text process row" "$(tail -2 "$tmp/out")"; fi
}

test_dump() {
	"$MEMTRACK" report --dump "$tmp/tree.msgpack" >"$tmp/dump"
	expect_eq "one line per record" 12 "$(wc -l <"$tmp/dump")"
	expect_eq "every line is JSON" 12 "$(jq -c . "$tmp/dump" | wc -l)"
	expect_eq "first event" '{"type":"Malloc","pid":20,"tid":20,"timestamp":5000000000,"addr":4096,"size":1000}' \
		"$(head -1 "$tmp/dump")"
	expect_eq "free has no size" false "$(sed -n 3p "$tmp/dump" | jq 'has("size")')"
	expect_eq "process record" grandchild "$(jq -r 'select(.type=="Process" and .pid==22) | .comm' "$tmp/dump")"
}

test_json_figures
test_json_keys
test_codspeed
test_text
test_dump
finish
