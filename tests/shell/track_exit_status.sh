#!/bin/bash
# track: memtrack exits with the command's status, or 128 + signal
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

status_of() {
	local rc=0
	"$MEMTRACK" track -q -o "$tmp" "$@" >/dev/null 2>"$tmp/err" || rc=$?
	echo $rc
}

test_exit_code() {
	expect_eq "exit 3 passes through" 3 "$(status_of -- "$WORKLOADS/exit3")"
	expect_eq "shell exit 5 passes through" 5 "$(status_of "exit 5")"
	expect_eq "success is 0" 0 "$(status_of -- "$WORKLOADS/malloc_free")"
}

test_killed() {
	expect_eq "SIGKILL gives 137" 137 "$(status_of -- "$WORKLOADS/killed")"
	art=$(ls -t "$tmp"/*.msgpack | head -n 1)
	report_json "$art" "$tmp/r.json"
	expect_eq "killed: its 5 Malloc are there" 5 "$(count "$tmp/r.json" Malloc)"
	expect_eq "killed: wait status in the Process record" 9 \
		"$(jq -r '.processes[0].exit_code' "$tmp/r.json")"
}

test_not_found() {
	expect_eq "missing program with -- gives 127" 127 "$(status_of -- /nonexistent/prog)"
	if grep -q "command not found" "$tmp/err"; then
		pass "missing program is named"
	else
		fail "missing program is named" "$(cat "$tmp/err")"
	fi
	expect_eq "missing program via the shell gives 127" 127 "$(status_of "nonexistent-prog-xyz")"
	expect_eq "not executable gives 126" 126 "$(status_of -- /etc/passwd)"
}

test_exit_code
test_killed
test_not_found
finish
