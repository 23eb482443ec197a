#!/bin/bash
# track -p under sudo: only processes the invoking user could trace; the others are refused by pid
# shellcheck disable=SC2154 # $test_user, $test_uid, $bg_pid: lib/user.sh
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/user.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	user_cleanup
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT
user_create
sleep_bin=$(command -v sleep)
user_allow_sudo "$sleep_bin"
mkdir "$tmp/home"
chown "$test_user:" "$tmp/home"

state() { awk '/^State:/ { print $2 }' "/proc/$1/status"; }

# root's process: refused, named, left running, nothing written
test_root_process() {
	local victim rc
	# short-lived: a memtrack that attached would wait for it, not hang the test
	"$sleep_bin" 30 &
	victim=$!
	pids+=("$victim")
	rc=$(status sudo_memtrack track -q -o "$tmp/home" -p "$victim")
	expect_eq "root's process: exit status" 128 "$rc"
	expect_eq "root's process: says which pid and why" \
		"fatal: cannot attach to pid $victim (uid 0): uid $test_uid, who ran sudo, may not trace it (Permission denied)" \
		"$(cat "$tmp/err")"
	expect_eq "root's process: not stopped" S "$(state "$victim")"
	expect_eq "root's process: no artifact" "" "$(ls "$tmp/home")"
}

# the user's own process: tracked as before, exact counts
test_own_process() {
	local target mt rc=0
	as_user_bg "$WORKLOADS/attach_target" >"$tmp/home/ready"
	target=$bg_pid
	pids+=("$target")
	wait_for 10 grep -q ready "$tmp/home/ready"
	sudo_memtrack track -o "$tmp/home/own" -p "$target" 2>"$tmp/err" &
	mt=$!
	wait_for 20 grep -q "tracking pid $target" "$tmp/err"
	kill -USR1 "$target"
	wait "$mt" || rc=$?
	expect_eq "own process: memtrack exits 0" 0 "$rc"
	expect_eq "own process: 1100 Malloc after attach" 1100 \
		"$("$MEMTRACK" report --json "$tmp"/home/own/*.msgpack | jq .counts.Malloc)"
	expect_eq "own process: the artifact is the user's" "$test_uid" \
		"$(stat -c %u "$tmp"/home/own/*.msgpack)"
}

# the user's shell ran sudo: the root processes under it are not tracked
test_root_descendants() {
	local shell sudo_pid child mt rc=0
	as_user_bg /bin/sh -c "sudo -n $sleep_bin 1000; :"
	shell=$bg_pid
	pids+=("$shell")
	wait_for 10 pgrep -P "$shell" -x sudo >/dev/null
	sudo_pid=$(pgrep -P "$shell" -x sudo)
	wait_for 10 pgrep -P "$sudo_pid" >/dev/null
	child=$(pgrep -P "$sudo_pid" | head -n 1)
	sudo_memtrack track -o "$tmp/home/tree" -p "$shell" 2>"$tmp/err" &
	mt=$!
	wait_for 20 grep -q "tracking pid $shell" "$tmp/err"
	kill "$child"
	wait "$mt" || rc=$?
	expect_eq "root descendants: memtrack exits 0" 0 "$rc"
	expect_eq "root descendants: each is named and left alone" \
		"warning: not tracking pid $sudo_pid, a descendant: uid $test_uid may not trace it (Permission denied)" \
		"$(grep "^warning: not tracking pid $sudo_pid," "$tmp/err")"
	expect_eq "root descendants: and the process sudo started" 1 \
		"$(grep -c "^warning: not tracking pid $child, a descendant" "$tmp/err")"
	expect_eq "root descendants: only the user's shell in the artifact" "$shell" \
		"$("$MEMTRACK" report --json "$tmp"/home/tree/*.msgpack | jq -c '[.processes[].pid]' | tr -d '[]')"
}

test_root_process
test_own_process
test_root_descendants
finish
