#!/bin/bash
# track: bad input gets one clear message and a defined exit code
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
chmod 755 "$tmp"

# expect_failure <name> <exit code> <stderr pattern> <command...>
expect_failure() {
	local name=$1 want=$2 pattern=$3 rc=0
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name" "exit $rc, expected $want: $(head -c 300 "$tmp/err")"
	elif ! grep -q -- "$pattern" "$tmp/err"; then
		fail "$name" "stderr lacks '$pattern': $(head -c 300 "$tmp/err")"
	else
		pass "$name"
	fi
}

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

test_usage_errors() {
	expect_failure "unknown option" 129 "unknown option" "$MEMTRACK" track --bogus -- true
	expect_failure "missing command" 129 "no command given" "$MEMTRACK" track
	expect_failure "missing command after --" 129 "no command given" "$MEMTRACK" track --
	expect_failure "bad ring size" 129 "power of two" "$MEMTRACK" track --ring-size events=3K -- true
	expect_failure "unknown ring" 129 "unknown ring" "$MEMTRACK" track --ring-size bogus=4K -- true
	expect_failure "ring size without =" 129 "expects <name>=<size>" "$MEMTRACK" track --ring-size 4K -- true
	expect_failure "stacks ring too small for dwarf copies" 129 "it needs at least 256K" \
		"$MEMTRACK" track --ring-size stacks=128K -- true
	expect_failure "non-numeric poll interval" 129 "expects a non-negative number" \
		"$MEMTRACK" track --poll-interval soon -- true
	expect_eq "-h is usage, on stdout" "129 1" \
		"$(status "$MEMTRACK" track -h) $(grep -c '^usage: memtrack track' "$tmp/out")"
	expect_failure "watermark out of range" 129 "between 1 and 99" \
		"$MEMTRACK" track --pressure-watermark 100 -- true
	expect_failure "poll interval out of range" 129 "between 1 and 60000" \
		"$MEMTRACK" track --poll-interval 0 -- true
	expect_failure "compression level 0" 129 "between 1 and 19, not 0" \
		"$MEMTRACK" track -z 0 -- true
	expect_failure "compression level 20" 129 "between 1 and 19, not 20" \
		"$MEMTRACK" track --compression-level 20 -- true
	expect_failure "compression level not a number" 129 "expects a non-negative number" \
		"$MEMTRACK" track -z fast -- true
}

test_fatal_errors() {
	touch "$tmp/file"
	expect_failure "output under a file" 128 "fatal: cannot create output directory '$tmp/file/out'" \
		"$MEMTRACK" track -o "$tmp/file/out" -- true
	expect_failure "stats path under a file" 128 \
		"fatal: failed to create memtrack stats file '$tmp/file/s.jsonl': Not a directory" \
		"$MEMTRACK" track --stats "$tmp/file/s.jsonl" -- true
	MEMTRACK_STATS=$tmp/file/e.jsonl expect_failure "MEMTRACK_STATS under a file" 128 \
		"failed to create memtrack stats file '$tmp/file/e.jsonl'" "$MEMTRACK" track -- true
}

test_without_privilege() {
	command -v setpriv >/dev/null || { pass "non-root (setpriv missing, not run)"; return; }
	[ "$(id -u)" -eq 0 ] || { pass "non-root (already not root)"; return; }
	expect_failure "non-root: stats path checked first" 128 \
		"fatal: failed to create memtrack stats file '/proc/nope/s.jsonl'" \
		as_nobody "$MEMTRACK" track --stats /proc/nope/s.jsonl -o "$tmp" -- true
	chmod 777 "$tmp"
	expect_failure "non-root: BPF needs privilege" 128 "fatal: cannot load BPF programs: .*needs root" \
		as_nobody "$MEMTRACK" track -o "$tmp" -- true
	# forked before the load, the command waits for its start: a failed load never runs it
	expect_failure "non-root: the command forked before the load" 128 "needs root" \
		as_nobody "$MEMTRACK" track -o "$tmp" -- touch "$tmp/ran"
	expect_eq "non-root: ... never ran" "absent" "$([ -e "$tmp/ran" ] && echo ran || echo absent)"
	expect_failure "non-root: unwritable output directory" 128 "is not writable" \
		as_nobody "$MEMTRACK" track -o / -- true
}

test_usage_errors
test_fatal_errors
test_without_privilege
finish
