#!/bin/bash
# track: a live status line on the terminal's last row, out of the program's scrolling region, gone before the summary; none in a pipe, with -q or TERM=dumb
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
command -v script >/dev/null || { echo "script (util-linux) is missing"; exit 1; }

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

STATUS='memtrack: [0-9.]+ s, [0-9.]+[kMG]? events \([0-9.]+[kMG]?/s\), [0-9]+ process(es)?, heap [0-9.]+ [KMG]?i?B live, [0-9]+ pressure episodes?'
ROWS=24

# on_pty <term> <memtrack track args...>: the bytes a terminal of ROWS rows would get
on_pty() {
	local term=$1 cmd
	shift
	printf -v cmd '%q ' "$MEMTRACK" track "$@"
	TERM=$term script -qec "stty rows $ROWS cols 160; $cmd" /dev/null >"$tmp/pty" </dev/null
}

# has <label> <fixed string>: the terminal got those bytes
has() {
	if grep -aqF -- "$2" "$tmp/pty"; then pass "$1"; else fail "$1" "$(cat -v "$tmp/pty")"; fi
}

# visible <file>: the bytes with ESC as ^[, as cat -v shows them
visible() {
	cat -v "$1"
}

test_terminal() {
	local v
	# lines of the program's own while the status line is drawn
	on_pty xterm -o "$tmp" -- /bin/sh -c \
		"$WORKLOADS/malloc_free; for i in 1 2 3 4 5; do echo line\$i; sleep 0.2; done"
	v=$(visible "$tmp/pty")
	expect_eq "terminal: the program's rows scroll, the last is the status line's" 1 \
		"$(grep -cF "^[7^[[1;$((ROWS - 1))r^[8" <<<"$v")"
	expect_eq "terminal: the status line, on the last row, the cursor given back" yes \
		"$(grep -qE "\^\[7\^\[\[$ROWS;1H\^\[\[K$STATUS\^\[8" <<<"$v" && echo yes || echo "$v")"
	# every status text ends with the cursor given back, before anything else
	expect_eq "terminal: the program's output is whole, none of it after the status" \
		"5 $(grep -o 'Kmemtrack: ' <<<"$v" | wc -l)" \
		"$(grep -c '^line[1-5]\|\^\[8line[1-5]' <<<"$v") $(grep -o 'pressure episodes\?\^\[8' <<<"$v" | wc -l)"
	# the whole screen scrolls again, the status row is cleared, then the summary
	expect_eq "terminal: the region is undone before the summary" 1 \
		"$(grep -cF "^[7^[[r^[[$ROWS;1H^[[K^[8[ memtrack track: " <<<"$v")"
}

# memtrack's warnings go to the scrolling rows, never after the status text
test_warning() {
	on_pty xterm -o "$tmp" -- /bin/sh -c 'sleep 0.6; exec /sbin/ldconfig -p >/dev/null'
	if grep -aq "warning: pid " "$tmp/pty" && ! grep -aEq "${STATUS}warning: " "$tmp/pty"; then
		pass "terminal: a warning is a line of its own"
	else
		fail "terminal: a warning is a line of its own" "$(cat -v "$tmp/pty")"
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
