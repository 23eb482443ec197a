#!/bin/bash
# track: exact malloc/free counts, artifact name and summary line
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

test_malloc_free() {
	local art pid
	art=$(track_workload "$tmp" -- "$WORKLOADS/malloc_free")
	report_json "$art" "$tmp/r.json"
	pid=$(basename "$art" .MemtrackArtifact.msgpack)
	expect_eq "artifact is named after the root pid" "$pid" "$(jq -r .meta.root_pid "$tmp/r.json")"
	expect_eq "100 Malloc" 100 "$(count "$tmp/r.json" Malloc)"
	expect_eq "60 Free (free(NULL) is not an event)" 60 "$(count "$tmp/r.json" Free)"
	expect_eq "no Calloc/Realloc/AlignedAlloc" 0 \
		"$(( $(count "$tmp/r.json" Calloc) + $(count "$tmp/r.json" Realloc) + $(count "$tmp/r.json" AlignedAlloc) ))"
	expect_eq "40 leaked" 40 "$(jq -r .leaked_count "$tmp/r.json")"
	# sizes 61..100 are the ones left
	expect_eq "3220 bytes leaked" 3220 "$(jq -r .leaked_bytes "$tmp/r.json")"
	expect_eq "5050 bytes allocated" 5050 "$(jq -r .bytes_allocated "$tmp/r.json")"
	expect_eq "one process" 1 "$(jq -r '.processes | length' "$tmp/r.json")"
	expect_eq "no drops" 0 "$(jq -r .meta.drops.events "$tmp/r.json")"
}

test_summary_line() {
	rm -f "$tmp"/*.msgpack
	"$MEMTRACK" track -o "$tmp" -- "$WORKLOADS/malloc_free" 2>"$tmp/err"
	if grep -q '^\[ memtrack track: .* events, .*MemtrackArtifact.msgpack.*, 0 drops, .* ]$' "$tmp/err"; then
		pass "summary line on stderr"
	else
		fail "summary line on stderr" "$(cat "$tmp/err")"
	fi
}

test_output_dir_created() {
	"$MEMTRACK" track -q -o "$tmp/new/sub" -- "$WORKLOADS/malloc_free"
	if ls "$tmp"/new/sub/*.MemtrackArtifact.msgpack >/dev/null 2>&1; then
		pass "missing output directory is created"
	else
		fail "missing output directory is created" "no artifact in $tmp/new/sub"
	fi
}

test_malloc_free
test_summary_line
test_output_dir_created
finish
