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
		# on stdout, as git's and perl tools' help: `memtrack track -h | less` shows it
		if grep -q "^usage: memtrack $c" "$tmp/out"; then pass "$c -h usage on stdout"; else fail "$c -h usage on stdout" "$(head -3 "$tmp/out")"; fi
		expect_eq "$c -h: nothing on stderr" "" "$(cat "$tmp/err")"
	done
}

test_help_command() {
	local c
	for c in $("$MEMTRACK" --list-cmds); do
		MANPATH=/nonexistent expect_eq "help $c exits 0" 0 "$(status "$MEMTRACK" help "$c")"
		if grep -q "usage: memtrack $c" "$tmp/out" || grep -qi "memtrack-$c" "$tmp/out"; then
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
		"$MEMTRACK" "$c" -h >"$tmp/out" || true
		first=$(sed -n 's/^usage: //p' "$tmp/out")
		if grep -qF "$(echo "$first" | sed 's/^memtrack \([a-z]*\)/'"'"'memtrack \1'"'"'/')" "$page"; then
			pass "$c usage matches its SYNOPSIS"
		else
			fail "$c usage matches its SYNOPSIS" "'$first' not in $page"
		fi
	done
}

# a usage error: its one line, the synopsis and where the options are; not every option
test_usage_error() {
	local c
	for c in $("$MEMTRACK" --list-cmds); do
		expect_eq "$c --bogus exits 129" 129 "$(status "$MEMTRACK" "$c" --bogus x)"
		expect_eq "$c --bogus: first the error" "error: unknown option \`bogus'" "$(head -n 1 "$tmp/err")"
		expect_eq "$c --bogus: last, where the options are" "Run 'memtrack $c -h' for the options." \
			"$(tail -n 1 "$tmp/err")"
		expect_eq "$c --bogus: no option listed" 0 "$(grep -c '^    -' "$tmp/err" || true)"
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
test_usage_error
test_unknown
finish
