#!/bin/bash
# report --threads and the HTML page's threads and allocation sizes: one thread allocates, another frees
# backends: both
# timeout: 120
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# thread_handoff: thread A makes 10 x malloc(1000), thread B frees 6 of them, 4 stay live
mkdir -p "$tmp/ho"
ART=$(track_workload "$tmp/ho" -- "$WORKLOADS/thread_handoff")
PID=$(basename "$ART" .MemtrackArtifact.msgpack)
"$MEMTRACK" report --json --threads "$ART" >"$tmp/r.json"

# row <jq filter of a thread>: its figures, "allocs bytes frees freed peak leaked leaked_bytes"
row() {
	jq -r "[.threads[] | select($1)] | if length == 1 then .[0] |
		\"\(.allocations) \(.bytes_allocated) \(.frees) \(.bytes_freed) \(.peak_bytes) \(.leaked_count) \(.leaked_bytes)\"
		else \"\(length) threads\" end" "$tmp/r.json"
}

test_json() {
	expect_eq "the allocating thread: 10 blocks, none freed by it, 4 live at exit" \
		"10 10000 0 0 10000 4 4000" "$(row '.allocations == 10')"
	expect_eq "the freeing thread: no allocation, 6 frees of 1000 bytes" \
		"0 0 6 6000 0 0 0" "$(row '.frees == 6')"
	expect_eq "three threads, of the one process" "3 $PID" \
		"$(jq -r '"\(.threads | length) \([.threads[].pid] | unique | join(","))"' "$tmp/r.json")"
	expect_eq "they are the main thread and two others" 1 \
		"$(jq --argjson p "$PID" '[.threads[] | select(.tid == $p)] | length' "$tmp/r.json")"
	expect_eq "the threads add up to the tree: allocations, frees, leaked bytes" \
		"$(jq -r '"\(.allocations) \(.frees) \(.leaked_bytes)"' "$tmp/r.json")" \
		"$(jq -r '"\([.threads[].allocations] | add) \([.threads[].frees] | add) \([.threads[].leaked_bytes] | add)"' "$tmp/r.json")"
	expect_eq "the largest allocator first" 10 "$(jq '.threads[0].allocations' "$tmp/r.json")"
	expect_eq "without --threads, no threads key" false \
		"$("$MEMTRACK" report --json "$ART" | jq 'has("threads")')"
}

test_text() {
	"$MEMTRACK" report -q --threads "$ART" >"$tmp/text"
	expect_eq "text: a table of the three" 1 "$(grep -c '^Threads by bytes allocated, top 3 of 3$' "$tmp/text")"
	expect_eq "text: the allocating thread's row" 1 \
		"$(grep -cE "^ +$PID +[0-9]+ +10 +9\.8 KiB +0 +0 B +9\.8 KiB +4 +3\.9 KiB$" "$tmp/text")"
	"$MEMTRACK" report -q --threads --top 1 "$ART" >"$tmp/text1"
	expect_eq "text: --top 1" 1 "$(grep -c '^Threads by bytes allocated, top 1 of 3$' "$tmp/text1")"
	expect_eq "--threads is not for --flamegraph" 129 \
		"$(status "$MEMTRACK" report --flamegraph --threads "$ART")"
}

test_html() {
	local threads='Array.from(document.querySelectorAll("#threads tbody tr")).map(r =>
		Array.from(r.cells).map(c => c.textContent).join("|"))'
	local bars='Array.from(document.querySelectorAll("#sizes rect.bar")).map(b =>
		[Number(b.getAttribute("data-min")), Number(b.getAttribute("data-count"))])'
	"$MEMTRACK" report --html "$tmp/r.html" "$ART"
	browse "$tmp/r.html" "$threads" "$bars" >"$tmp/b.json"
	expect_eq "html: no console error, nothing fetched" "[] [\"file://$tmp/r.html\"]" \
		"$(jq -c '.console + .exceptions + .log' "$tmp/b.json") $(jq -c .requests "$tmp/b.json")"
	expect_eq "html: the threads tab, the allocating thread first" \
		"$PID|$(jq '.threads[0].tid' "$tmp/r.json")|10|9.8 KiB|0|0 B|9.8 KiB|4|3.9 KiB" \
		"$(jq -r '.results[0][0]' "$tmp/b.json")"
	expect_eq "html: a row per thread" 3 "$(jq '.results[0] | length' "$tmp/b.json")"
	expect_eq "html: a bar per size bucket, the counts of --json's histogram" \
		"$("$MEMTRACK" report --json "$ART" | jq -c '[.histogram[] | [.min, .count]]')" \
		"$(jq -c '[.results[1][] | select(.[1] > 0)]' "$tmp/b.json")"
	expect_eq "html: the 10 blocks of 1000 bytes in [512, 1024)" 10 \
		"$(jq '[.results[1][] | select(.[0] == 512)][0][1]' "$tmp/b.json")"
}

test_json
test_text
test_html
finish
