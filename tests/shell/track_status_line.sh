#!/bin/bash
# track: a live status line on stderr when it is a terminal (a pseudo-terminal through script), cleared before the summary; none in a pipe, with -q or TERM=dumb
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
command -v script >/dev/null || { echo "script (util-linux) is missing"; exit 1; }

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

STATUS='memtrack: [0-9.]+ s, [0-9.]+[kMG]? events \([0-9.]+[kMG]?/s\), [0-9]+ process(es)?, [0-9]+ pressure episodes?, RSS [0-9.]+ [KMG]?i?B'
CLEAR=$'\r\033[K'

# on_pty <term> <memtrack track args...>: the bytes a terminal would get
on_pty() {
	local term=$1 cmd
	shift
	printf -v cmd '%q ' "$MEMTRACK" track "$@"
	TERM=$term script -qec "$cmd" /dev/null >"$tmp/pty" </dev/null
}

test_terminal() {
	on_pty xterm -o "$tmp" -- "$WORKLOADS/malloc_free"
	if grep -aEq "$STATUS" "$tmp/pty"; then
		pass "terminal: the status line"
	else
		fail "terminal: the status line" "$(cat -v "$tmp/pty")"
	fi
	# the last status is cleared, and the summary line starts clean
	if grep -aqF "${CLEAR}[ memtrack track: " "$tmp/pty"; then
		pass "terminal: cleared before the summary"
	else
		fail "terminal: cleared before the summary" "$(cat -v "$tmp/pty")"
	fi
}

# a warning while the line is drawn starts on a cleared line, not after the status text
test_warning() {
	on_pty xterm -o "$tmp" -- /bin/sh -c 'sleep 0.6; exec /sbin/ldconfig -p >/dev/null'
	if grep -aqF "${CLEAR}warning: pid " "$tmp/pty" &&
	   ! grep -aEq "${STATUS}warning: " "$tmp/pty"; then
		pass "terminal: a warning starts on a cleared line"
	else
		fail "terminal: a warning starts on a cleared line" "$(cat -v "$tmp/pty")"
	fi
}

test_not_terminal() {
	"$MEMTRACK" track -o "$tmp" -- "$WORKLOADS/malloc_free" 2>&1 | cat >"$tmp/pipe"
	if grep -aEq "$STATUS" "$tmp/pipe" || grep -aqF $'\033' "$tmp/pipe"; then
		fail "pipe: no status line" "$(cat -v "$tmp/pipe")"
	else
		pass "pipe: no status line"
	fi
	if grep -q '^\[ memtrack track: ' "$tmp/pipe"; then pass "pipe: the summary line"; else fail "pipe: the summary line" "$(cat "$tmp/pipe")"; fi
	on_pty xterm -q -o "$tmp" -- "$WORKLOADS/malloc_free"
	if grep -aEq "$STATUS" "$tmp/pty"; then fail "-q: no status line" "$(cat -v "$tmp/pty")"; else pass "-q: no status line"; fi
	on_pty dumb -o "$tmp" -- "$WORKLOADS/malloc_free"
	if grep -aEq "$STATUS" "$tmp/pty"; then fail "TERM=dumb: no status line" "$(cat -v "$tmp/pty")"; else pass "TERM=dumb: no status line"; fi
}

test_terminal
test_warning
test_not_terminal
finish
