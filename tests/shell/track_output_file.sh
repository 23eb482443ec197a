#!/bin/bash
# track: -o <file>.msgpack is the artifact itself; a command that cannot start leaves none
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

test_named_file() {
	local rc
	rc=$(status "$MEMTRACK" track -q -o "$tmp/new/dir/run.msgpack" -- "$WORKLOADS/malloc_free")
	expect_eq "-o x.msgpack: the run ends well" 0 "$rc"
	report_json "$tmp/new/dir/run.msgpack" "$tmp/r.json"
	expect_eq "-o x.msgpack: the artifact is that file" 100 "$(count "$tmp/r.json" Malloc)"
	expect_eq "-o x.msgpack: and nothing else is made there" run.msgpack "$(ls "$tmp/new/dir")"
	rc=$(status "$MEMTRACK" track -q -o "$tmp/new/dir/run.msgpack" -- "$WORKLOADS/calloc")
	report_json "$tmp/new/dir/run.msgpack" "$tmp/r.json"
	expect_eq "-o x.msgpack again: replaces the last run's" "0 0" \
		"$rc $(count "$tmp/r.json" Malloc)"
	rc=$(status "$MEMTRACK" track -o "$tmp/plain" -- "$WORKLOADS/malloc_free")
	expect_eq "-o dir: a directory, as before" "0 1" \
		"$rc $(find "$tmp/plain" -name '*.MemtrackArtifact.msgpack' | wc -l)"
	# a fifo nobody reads: refused at once, not waited on, and said plainly
	mkfifo "$tmp/fifo.msgpack"
	rc=$(status timeout 60 "$MEMTRACK" track -q -o "$tmp/fifo.msgpack" -- true)
	expect_eq "-o a fifo: refused" 128 "$rc"
	expect_eq "-o a fifo: says why" 1 \
		"$(grep -c "cannot create artifact '$tmp/fifo.msgpack': it exists and is not a regular file" "$tmp/err")"
}

# not_started <label> <expected status> <message> <command...>
not_started() {
	local label=$1 want=$2 msg=$3 rc
	shift 3
	rm -rf "$tmp/none"
	rc=$(status "$MEMTRACK" track -o "$tmp/none" "$@")
	expect_eq "$label: exits $want" "$want" "$rc"
	expect_eq "$label: says so" 1 "$(grep -c -- "$msg" "$tmp/err")"
	expect_eq "$label: leaves no artifact" 0 "$(find "$tmp/none" -type f | wc -l)"
	expect_eq "$label: and no summary line" 0 "$(grep -c '^\[ memtrack track' "$tmp/err" || true)"
}

test_named_file
not_started "-- missing" 127 "no-such-program: command not found" -- no-such-program
printf 'not a program\n' >"$tmp/plain-file"
chmod 644 "$tmp/plain-file"
not_started "-- not executable" 126 "Permission denied" -- "$tmp/plain-file"
not_started "through sh, missing" 127 "not found" "no-such-program --flag"
# a command that ran and exited 127 itself keeps its artifact
rc=$(status "$MEMTRACK" track -q -o "$tmp/ran" -- sh -c 'exit 127')
expect_eq "a program exiting 127 after running: keeps its artifact" "127 1" \
	"$rc $(find "$tmp/ran" -type f | wc -l)"
finish
