#!/bin/bash
# dispatcher: command list, -h of every command, unknown commands, --version
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT


test_lists() {
	expect_eq "bare memtrack is a usage error" 129 "$(status "$MEMTRACK")"
	for c in track stats report; do
		if grep -q "^   $c " "$tmp/out"; then pass "bare memtrack lists $c"; else fail "lists $c" "$(cat "$tmp/out")"; fi
	done
	expect_eq "memtrack -h" 0 "$(status "$MEMTRACK" -h)"
	expect_eq "memtrack --version" 0 "$(status "$MEMTRACK" --version)"
	if grep -q '^memtrack version [0-9]' "$tmp/out"; then pass "version line"; else fail "version line" "$(cat "$tmp/out")"; fi
}

test_every_command_h() {
	local c
	for c in $("$MEMTRACK" --list-cmds); do
		expect_eq "$c -h exits 129" 129 "$(status "$MEMTRACK" "$c" -h)"
		if grep -q "^usage: memtrack $c" "$tmp/err"; then pass "$c -h usage"; else fail "$c -h usage" "$(head -3 "$tmp/err")"; fi
	done
}

test_help_command() {
	local c
	for c in $("$MEMTRACK" --list-cmds); do
		MANPATH=/nonexistent expect_eq "help $c exits 0" 0 "$(status "$MEMTRACK" help "$c")"
		if grep -q "usage: memtrack $c" "$tmp/err" || grep -qi "memtrack-$c" "$tmp/out"; then
			pass "help $c shows its page or its usage"
		else
			fail "help $c shows its page or its usage" "$(head -3 "$tmp/err")"
		fi
	done
	expect_eq "help of an unknown command exits 129" 129 "$(status "$MEMTRACK" help bogus)"
}

test_usage_matches_man_page() {
	local c page first
	for c in $("$MEMTRACK" --list-cmds); do
		page=$TOP/Documentation/memtrack-$c.txt
		if [ ! -f "$page" ]; then fail "$c man page" "missing $page"; continue; fi
		"$MEMTRACK" "$c" -h 2>"$tmp/err" || true
		first=$(sed -n 's/^usage: //p' "$tmp/err")
		if grep -qF "$(echo "$first" | sed 's/^memtrack \([a-z]*\)/'"'"'memtrack \1'"'"'/')" "$page"; then
			pass "$c usage matches its SYNOPSIS"
		else
			fail "$c usage matches its SYNOPSIS" "'$first' not in $page"
		fi
	done
}

test_unknown() {
	expect_eq "unknown command exits 129" 129 "$(status "$MEMTRACK" trakc)"
	if grep -q "The most similar command is" "$tmp/err" && grep -q "track" "$tmp/err"; then
		pass "unknown command gets a suggestion"
	else
		fail "unknown command gets a suggestion" "$(cat "$tmp/err")"
	fi
	expect_eq "unknown global option exits 129" 129 "$(status "$MEMTRACK" --bogus)"
}

test_lists
test_every_command_h
test_help_command
test_usage_matches_man_page
test_unknown
finish
