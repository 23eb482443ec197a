#!/bin/bash
# track: valgrind under memtrack runs as bare (its guest's code is not probed), and says so
# timeout: 120
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
command -v valgrind >/dev/null || skip "no valgrind"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# its report without the pids
normal() {
	sed 's/^==[0-9]*==/==PID==/' "$1"
}

# same <label> <command...>: output, report (stderr) and status as bare
same() {
	local label=$1 rc=0 bare_rc=0
	shift
	"$@" >"$tmp/bare.out" 2>"$tmp/bare.err" || bare_rc=$?
	"$MEMTRACK" track -o "$tmp" -- "$@" >"$tmp/mt.out" 2>"$tmp/mt.err" || rc=$?
	expect_eq "$label: exit status as bare" "$bare_rc" "$rc"
	expect_eq "$label: output as bare" "$(cat "$tmp/bare.out")" "$(cat "$tmp/mt.out")"
	expect_eq "$label: valgrind's report as bare" "$(normal "$tmp/bare.err")" \
		"$(grep '^==' "$tmp/mt.err" | normal /dev/stdin)"
}

same "valgrind -q ls" valgrind -q ls "$WORKLOADS"
same "valgrind, a leak" valgrind -q --leak-check=full --error-exitcode=3 "$WORKLOADS/malloc_free"
if grep -q "maps allocator code of its own (.*libc.so.6): not probed" "$tmp/mt.err"; then
	pass "a warning says the guest's code is not probed"
else
	fail "a warning says the guest's code is not probed" "$(grep -v '^==' "$tmp/mt.err")"
fi
finish
