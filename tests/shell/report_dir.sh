#!/bin/bash
# report DIR: the newest artifact of a directory (track -o DIR), or an error that says there is none
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp/samples"

# header <report args...>: the artifact the text header names
header() { "$MEMTRACK" report -q "$@" | sed -n 's/^# artifact: //p'; }

mkdir "$tmp/runs"
cp "$tmp/samples/single.msgpack" "$tmp/runs/1.MemtrackArtifact.msgpack"
cp "$tmp/samples/tree.msgpack" "$tmp/runs/2.MemtrackArtifact.msgpack"
cp "$tmp/samples/single.msgpack" "$tmp/runs/named.msgpack"
touch -d '2020-01-01 00:00:00' "$tmp/runs/1.MemtrackArtifact.msgpack"
touch -d '2020-01-01 00:00:02' "$tmp/runs/2.MemtrackArtifact.msgpack"
touch -d '2020-01-01 00:00:01' "$tmp/runs/named.msgpack"
# newer, but not an artifact's name, or not a regular file
echo '{}' >"$tmp/runs/notes.json"
mkdir "$tmp/runs/sub.msgpack"
ln -s "$tmp/samples/single.msgpack" "$tmp/runs/link.msgpack"

expect_eq "DIR: its newest artifact" "$tmp/runs/2.MemtrackArtifact.msgpack" "$(header "$tmp/runs")"
expect_eq "DIR/: the same" "$tmp/runs/2.MemtrackArtifact.msgpack" "$(header "$tmp/runs/")"
expect_eq "DIR: the figures are that artifact's" \
	"$("$MEMTRACK" report --json "$tmp/samples/tree.msgpack" | jq .peak_bytes)" \
	"$("$MEMTRACK" report --json "$tmp/runs" | jq .peak_bytes)"
expect_eq "--diff DIR DIR: each side resolved" 2 \
	"$("$MEMTRACK" report -q --diff "$tmp/runs" "$tmp/runs" | grep -c "^# [a-z]*: $tmp/runs/2.MemtrackArtifact.msgpack$")"

mkdir "$tmp/none"
echo '{}' >"$tmp/none/notes.json"
rc=$(status "$MEMTRACK" report "$tmp/none")
expect_eq "a directory without an artifact: exit 1" 1 "$rc"
expect_eq "a directory without an artifact: says so" \
	"error: no artifact in '$tmp/none': it has no *.msgpack file" "$(cat "$tmp/err")"

# track -o DIR, then report DIR
if "$MEMTRACK" track --check-bpf >/dev/null 2>&1; then
	mkdir "$tmp/live"
	"$MEMTRACK" track -q -o "$tmp/live" -- "$WORKLOADS/malloc_free"
	expect_eq "track -o DIR; report DIR: that run's 100 mallocs" 100 \
		"$("$MEMTRACK" report --json "$tmp/live" | jq .counts.Malloc)"
fi
finish
