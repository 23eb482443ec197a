#!/bin/bash
# report: truncated, killed, corrupt, empty, missing and non-artifact files; usage errors
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp"


test_truncated() {
	local a=$tmp/truncated.msgpack
	expect_eq "truncated exits 1" 1 "$(status "$MEMTRACK" report "$a")"
	if grep -Eq "^error: '$a' is truncated after 7 records \(byte [0-9]+\): .*incomplete" "$tmp/err"; then
		pass "truncated message"; else fail "truncated message" "$(cat "$tmp/err")"; fi
	if grep -q 'Malloc *4' "$tmp/out"; then
		pass "what could be read is printed"; else fail "what could be read" "$(cat "$tmp/out")"; fi
	expect_eq "truncated --json exits 1" 1 "$(status "$MEMTRACK" report --json "$a")"
	expect_eq "json says truncated" true "$(json_get "$tmp/out" .truncated)"
	expect_eq "json error records" 7 "$(json_get "$tmp/out" .error.records)"
	expect_eq "json leaks from the events read" 2500 "$(json_get "$tmp/out" .leaked_bytes)"
	expect_eq "truncated --dump exits 1" 1 "$(status "$MEMTRACK" report --dump "$a")"
	expect_eq "dump prints the records before" 7 "$(wc -l <"$tmp/out")"
}

# cut at the end of a frame, before the trailer: a run that was killed
test_killed() {
	local a=$tmp/killed.msgpack
	expect_eq "killed exits 1" 1 "$(status "$MEMTRACK" report --json "$a")"
	expect_eq "killed: json says truncated" true "$(json_get "$tmp/out" .truncated)"
	expect_eq "killed: events read" 7 "$(json_get "$tmp/out" .error.records)"
	expect_eq "killed: where" "$(stat -c %s "$a")" "$(json_get "$tmp/out" .error.offset)"
	if grep -q "^error: '$a' is truncated after 7 records (byte [0-9]*): the trailer is missing" \
		"$tmp/err"; then
		pass "killed message"; else fail "killed message" "$(cat "$tmp/err")"; fi
}

test_not_artifacts() {
	expect_eq "garbage exits 1" 1 "$(status "$MEMTRACK" report "$tmp/garbage.msgpack")"
	if grep -q "^error: '$tmp/garbage.msgpack' is not a memtrack artifact: it does not start with a zstd frame$" "$tmp/err"; then
		pass "garbage message"; else fail "garbage message" "$(cat "$tmp/err")"; fi
	expect_eq "garbage: no report" 0 "$(wc -c <"$tmp/out")"
	expect_eq "JSON lines exit 1" 1 "$(status "$MEMTRACK" report --json "$tmp/run.jsonl")"
	if grep -q "^error: '$tmp/run.jsonl' is not a memtrack artifact: .*'memtrack stats' reads those" "$tmp/err"; then
		pass "JSON lines message"; else fail "JSON lines message" "$(cat "$tmp/err")"; fi
	expect_eq "JSON lines: no report" 0 "$(wc -c <"$tmp/out")"
	expect_eq "empty file exits 1" 1 "$(status "$MEMTRACK" report --json "$tmp/empty.msgpack")"
	if grep -q "^error: '$tmp/empty.msgpack' is not a memtrack artifact: the file is empty$" "$tmp/err"; then
		pass "empty file message"; else fail "empty file message" "$(cat "$tmp/err")"; fi
	expect_eq "empty --dump exits 1" 1 "$(status "$MEMTRACK" report --dump "$tmp/empty.msgpack")"
}

test_missing() {
	expect_eq "missing exits 1" 1 "$(status "$MEMTRACK" report "$tmp/nope.msgpack")"
	if grep -q "^error: cannot open artifact '$tmp/nope.msgpack': No such file or directory" "$tmp/err"; then
		pass "missing message"; else fail "missing message" "$(cat "$tmp/err")"; fi
	expect_eq "a directory exits 1" 1 "$(status "$MEMTRACK" report "$tmp")"
}

test_usage() {
	expect_eq "no artifact" 129 "$(status "$MEMTRACK" report)"
	expect_eq "two artifacts" 129 "$(status "$MEMTRACK" report a b)"
	expect_eq "-h" 129 "$(status "$MEMTRACK" report -h)"
	expect_eq "unknown option" 129 "$(status "$MEMTRACK" report --bogus x)"
	expect_eq "--dump --json" 129 "$(status "$MEMTRACK" report --dump --json x)"
	expect_eq "--children alone" 129 "$(status "$MEMTRACK" report --children x)"
	expect_eq "bad --time" 129 "$(status "$MEMTRACK" report --time 3 x)"
	expect_eq "reversed --time" 129 "$(status "$MEMTRACK" report --time 3,1 x)"
	expect_eq "bad --pid" 129 "$(status "$MEMTRACK" report --pid abc "$tmp/tree.msgpack")"
	expect_eq "--diff with one" 129 "$(status "$MEMTRACK" report --diff x)"
	expect_eq "--fail-if with two, without --diff" 129 \
		"$(status "$MEMTRACK" report --fail-if 'leaked>0' "$tmp/tree.msgpack" "$tmp/tree.msgpack")"
	# and so the synopsis: one artifact a line, two only as <base> and <head>
	"$MEMTRACK" report -h >"$tmp/out" 2>&1 || true
	expect_eq "-h: no line takes several artifacts" 0 "$(grep -c '<artifact>\.\.\.' "$tmp/out" || true)"
}

# usage_error <what the first line says> <report arguments...>: exit 129 and that line
usage_error() {
	local want=$1
	shift
	expect_eq "report $* exits 129" 129 "$(status "$MEMTRACK" report "$@")"
	expect_eq "report $*" "error: $want" "$(head -1 "$tmp/err")"
}

# the modes (summary, --dump, --diff, --flamegraph, both) and the options each takes
test_modes() {
	usage_error "--dump and --flamegraph cannot be used together" --dump --flamegraph x
	usage_error "--dump and --diff cannot be used together" --diff --dump x y
	usage_error "--diff --flamegraph prints every stack of two: --pid does not apply" \
		--flamegraph --diff --pid 1 x y
	usage_error "--diff --flamegraph needs two artifacts: <base> <head>" --flamegraph --diff x
	usage_error "--dump prints every record: --pid does not apply" --dump --pid 1 x
	usage_error "--dump prints every record: --stack-depth does not apply" --dump --stack-depth 2 x
	usage_error "--diff compares two artifacts: --timeline does not apply" --diff --timeline t.png x y
	usage_error "--diff compares two artifacts: --children does not apply" --diff --comm c --children x y
	usage_error "--flamegraph prints every stack: --json does not apply" --flamegraph --json x
	usage_error "--flamegraph prints every stack: --top does not apply" --flamegraph --top 3 x
	usage_error "--weight needs --flamegraph" --weight count x
	usage_error "--children needs --pid or --comm" --flamegraph --children x
	usage_error "--diff needs two artifacts: <base> <head>" --diff --json x
	usage_error "one artifact at a time (or --diff <base> <head>)" --json x y
	expect_eq "--diff takes --comm and --sort" 1 \
		"$(status "$MEMTRACK" report --diff --comm c --sort peak /nonexistent/x y)"
	expect_eq "--flamegraph takes --pid and --children" 1 \
		"$(status "$MEMTRACK" report --flamegraph --pid 1 --children /nonexistent/x)"
}

test_truncated
test_killed
test_not_artifacts
test_missing
test_usage
test_modes
finish
