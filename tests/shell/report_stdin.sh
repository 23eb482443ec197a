#!/bin/bash
# report -: the artifact from standard input, a pipe: every mode, a second pass for --comm/--children, errors
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp"
write_samples test-report-sites "$tmp"

# same <test name> <report arguments, '-' for the artifact>: from a pipe, as from the file
same() {
	local name=$1 a=() x
	shift
	for x in "$@"; do
		if [ "$x" = - ]; then a+=("$tmp/tree.msgpack"); else a+=("$x"); fi
	done
	"$MEMTRACK" report "${a[@]}" >"$tmp/want" 2>&1 || true
	cat "$tmp/tree.msgpack" | "$MEMTRACK" report "$@" >"$tmp/got" 2>&1 || true
	sed -i "s|$tmp/tree.msgpack|-|g" "$tmp/want"
	if cmp -s "$tmp/want" "$tmp/got"; then pass "$name"; else fail "$name" "$(diff "$tmp/want" "$tmp/got" | head -5)"; fi
}

test_modes() {
	same "the summary" -
	same "--json" --json -
	same "--dump" --dump -
	same "--pid" --pid 21 --json -
	# the trailer's Process records first, then the events: read twice
	same "--comm, read twice" --comm parent --json -
	same "--pid --children, read twice" --pid 20 --children --json -
	expect_eq "--pid 20 --children: three processes" "20 21 22" \
		"$(jq -r '[.processes[].pid | tostring] | join(" ")' "$tmp/got")"
	expect_eq "a regular file as standard input, read twice" "20 21 22" \
		"$("$MEMTRACK" report --pid 20 --children --json - <"$tmp/tree.msgpack" |
		   jq -r '[.processes[].pid | tostring] | join(" ")')"
}

test_flamegraph_and_diff() {
	local s=$tmp/stacks.msgpack b=$tmp/stacks-base.msgpack
	expect_eq "--flamegraph -" "$("$MEMTRACK" report --flamegraph "$s")" \
		"$(cat "$s" | "$MEMTRACK" report --flamegraph -)"
	expect_eq "--diff - <head>" "$("$MEMTRACK" report --diff --json "$b" "$s" | jq -c .sites)" \
		"$(cat "$b" | "$MEMTRACK" report --diff --json - "$s" | jq -c .sites)"
	expect_eq "--diff <base> -" "$("$MEMTRACK" report --diff --flamegraph "$b" "$s")" \
		"$(cat "$s" | "$MEMTRACK" report --diff --flamegraph "$b" -)"
}

test_errors() {
	expect_eq "empty standard input exits 1" 1 "$(status "$MEMTRACK" report - </dev/null)"
	expect_eq "says so" "error: '<stdin>' is not a memtrack artifact: the file is empty" "$(cat "$tmp/err")"
	cat "$tmp/stacks-truncated.msgpack" >"$tmp/in"
	expect_eq "truncated from a pipe exits 1" 1 \
		"$(status sh -c "cat '$tmp/in' | '$MEMTRACK' report --flamegraph -")"
	expect_eq "what was read is printed" "[no stack] 5|[unknown stack] 2124" "$(paste -sd'|' "$tmp/out")"
	if grep -q "^error: '<stdin>' is truncated after 13 records" "$tmp/err"; then
		pass "truncated message"; else fail "truncated message" "$(cat "$tmp/err")"; fi
	expect_eq "- twice is a usage error" 129 "$(status "$MEMTRACK" report --diff - - </dev/null)"
	expect_eq "and says why" "error: standard input ('-') can be one of the artifacts, not both" \
		"$(head -1 "$tmp/err")"
}

test_modes
test_flamegraph_and_diff
test_errors
finish
