#!/bin/bash
# memtrack stats: exit codes and messages for missing, empty and malformed files and bad usage
set -e

. "$(dirname "$0")/lib/common.sh"

DATA=$TOP/tests/shell/data/stats
tmpdir=$(mktemp -d /tmp/memtrack-stats-errors.XXXXXX)

cleanup() {
	rm -rf "$tmpdir"
	trap - EXIT TERM INT
}

trap_cleanup() {
	cleanup
	exit 1
}
trap trap_cleanup EXIT TERM INT

# run_stats <args...>: sets rc, and out/err to the files holding stdout/stderr
run_stats() {
	rc=0
	"$MEMTRACK" stats "$@" >"$tmpdir/out" 2>"$tmpdir/err" || rc=$?
}

# expect_said <test name> <text>: stderr of the last run_stats holds text
expect_said() {
	if grep -qF -- "$2" "$tmpdir/err"; then
		pass "$1"
	else
		fail "$1" "stderr lacks '$2': $(cat "$tmpdir/err")"
	fi
}

test_missing_file() {
	run_stats "$tmpdir/nope.jsonl"
	expect_eq "missing file: exit 1" 1 "$rc"
	expect_said "missing file: the OS error" \
		"error: cannot open '$tmpdir/nope.jsonl': No such file or directory"
}

test_unreadable_file() {
	run_stats "$tmpdir"
	expect_eq "a directory: exit 1" 1 "$rc"
	expect_said "a directory: the OS error" "error: cannot read '$tmpdir': Is a directory"

	if [ "$(id -u)" -ne 0 ]; then
		cp "$DATA/design-example.jsonl" "$tmpdir/secret.jsonl"
		chmod 000 "$tmpdir/secret.jsonl"
		run_stats "$tmpdir/secret.jsonl"
		expect_eq "unreadable file: exit 1" 1 "$rc"
		expect_said "unreadable file: the OS error" "Permission denied"
	fi
}

test_empty_file() {
	run_stats "$DATA/empty.jsonl"
	expect_eq "empty file: exit 1" 1 "$rc"
	expect_said "empty file: says so" "error: '$DATA/empty.jsonl' is empty"
	expect_eq "empty file: nothing on stdout" "" "$(cat "$tmpdir/out")"
}

test_no_ring_rows() {
	run_stats "$DATA/no-ring.jsonl"
	expect_eq "no ring rows: exit 1" 1 "$rc"
	expect_said "no ring rows: says so" "error: no ring rows in '$DATA/no-ring.jsonl'"
}

test_one_bad_file_of_several() {
	run_stats "$DATA/design-example.jsonl" "$tmpdir/nope.jsonl"
	expect_eq "one bad file of two: exit 1" 1 "$rc"
}

test_malformed_lines() {
	run_stats "$DATA/malformed.jsonl"
	expect_eq "malformed lines: skipped, exit 0" 0 "$rc"
	expect_said "malformed lines: file and line" \
		"warning: $DATA/malformed.jsonl:3: skipping malformed line: not valid JSON"
	expect_said "malformed lines: what is wrong" \
		"warning: $DATA/malformed.jsonl:4: skipping malformed line: backlog row: \"sent\" is not a non-negative number"
	if grep -q '^events ' "$tmpdir/out" && grep -q '2 malformed lines skipped' "$tmpdir/out"; then
		pass "malformed lines: the rest is summarised"
	else
		fail "malformed lines" "no summary: $(cat "$tmpdir/out")"
	fi

	run_stats --strict "$DATA/malformed.jsonl"
	expect_eq "--strict: exit 1" 1 "$rc"
	expect_said "--strict: the first malformed line" \
		"error: $DATA/malformed.jsonl:3: malformed line: not valid JSON"
}

test_usage() {
	run_stats
	expect_eq "no file: exit 129" 129 "$rc"
	expect_said "no file: usage" "usage: memtrack stats [<options>] <file>..."

	run_stats -h
	expect_eq "-h: exit 129" 129 "$rc"
	expect_eq "-h: every option, on stdout" 1 "$(grep -cF -- "--gnuplot <file>" "$tmpdir/out")"

	run_stats --no-such-option "$DATA/design-example.jsonl"
	expect_eq "unknown option: exit 129" 129 "$rc"

	run_stats --watermark 0 "$DATA/design-example.jsonl"
	expect_eq "--watermark 0: exit 129" 129 "$rc"
	expect_said "--watermark 0: says why" "error: --watermark must be between 1 and 100"

	run_stats --plot-size 12 --plot "$tmpdir/x.png" "$DATA/design-example.jsonl"
	expect_eq "--plot-size 12: exit 129" 129 "$rc"
	expect_said "--plot-size 12: says why" "--plot-size expects <width>x<height>"

	run_stats --quiet --json "$DATA/design-example.jsonl"
	expect_eq "--quiet --json: exit 129" 129 "$rc"
}

test_missing_file
test_unreadable_file
test_empty_file
test_no_ring_rows
test_one_bad_file_of_several
test_malformed_lines
test_usage
cleanup
finish
