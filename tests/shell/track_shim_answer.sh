#!/bin/bash
# track: a process waits in its shim's hello for as long as memtrack takes to answer, and no
# longer than memtrack lives
# timeout: 180
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
mt=
# a memtrack left stopped would hold its tree forever: continued and killed, its shell let go
end_run() {
	[ -n "$mt" ] || return 0
	kill -CONT "$mt" 2>/dev/null
	kill -9 "$mt" 2>/dev/null
	[ -p "$tmp/go" ] && timeout 5 sh -c "echo go >$tmp/go" 2>/dev/null
	wait "$mt" 2>/dev/null || true
	mt=
}
cleanup() {
	end_run
	remove_tmp_dir
}
trap cleanup EXIT TERM INT

SYS_RECVMSG=47	# x86_64

# malloc_free twice: the first exec is held and teaches memtrack the executable; the second,
# once a line comes through the fifo $tmp/go, runs on unheld to its shim's hello.  Nothing else
# is exec'd in between: a first sleep or touch would be held at its exec with memtrack stopped.
start_two_runs() {
	rm -f "$tmp/first" "$tmp/go" "$tmp/done"
	mkfifo "$tmp/go"
	"$MEMTRACK" track -q -o "$tmp/$1" --backend preload -- sh -c "
		$WORKLOADS/malloc_free >/dev/null
		: >$tmp/first
		read -r _ <$tmp/go
		$WORKLOADS/malloc_free >$tmp/second.out; echo \$? >$tmp/done" \
		>"$tmp/track.out" 2>"$tmp/track.err" &
	mt=$!
	wait_for 60 test -e "$tmp/first"
}

# kill -STOP returns once one thread of memtrack is told: the others (the one that answers a
# hello among them) run on until that one stops them all, later on a busy machine
all_stopped() {
	local stat

	for stat in /proc/"$mt"/task/*/stat; do
		[ "$(sed 's/.*) //' "$stat" 2>/dev/null | cut -d' ' -f1)" = T ] || return 1
	done
}

stop_memtrack() {
	kill -STOP "$mt"
	wait_for 30 all_stopped
}

# the second malloc_free, blocked reading memtrack's answer
in_hello() {
	local sh pid

	sh=$(pgrep -P "$mt" -x sh) || return 1
	pid=$(pgrep -P "$sh" -x malloc_free) || return 1
	[ "$(cut -d' ' -f1 "/proc/$pid/syscall" 2>/dev/null)" = "$SYS_RECVMSG" ]
}

# what the tree's processes are doing, for a failure's message
tree_state() {
	local p

	for p in $(pgrep -P "$(pgrep -P "$mt" -x sh)") $(pgrep -P "$mt"); do
		printf '%s ' "$(ps -o pid=,stat=,wchan=,comm= -p "$p")" \
			"syscall $(cut -d' ' -f1 "/proc/$p/syscall" 2>/dev/null);"
	done
	printf 'done: %s' "$(cat "$tmp/done" 2>/dev/null)"
}

# before: the shim gave up after 30 s and ran on untracked, and memtrack, answering later,
# counted the process as served: 100 malloc lost, exit status 0, nothing said
test_memtrack_slow() {
	local rc=0 art

	start_two_runs slow
	if ! stop_memtrack; then
		fail "slow answer: memtrack stops" "$(tree_state)"
		end_run
		return
	fi
	echo go >"$tmp/go"
	if ! wait_for 30 in_hello; then
		fail "slow answer: the second malloc_free waits in its hello" "$(tree_state)"
		end_run
		return
	fi
	sleep 31
	expect_eq "slow answer: still waiting after 31 s" yes "$(in_hello && echo yes || echo no)"
	kill -CONT "$mt"
	wait "$mt" || rc=$?
	mt=
	expect_eq "slow answer: the run ends well" 0 "$rc"
	art=$(ls "$tmp"/slow/*.msgpack)
	report_json "$art" "$tmp/r.json"
	expect_eq "slow answer: 200 Malloc of two malloc_free" 200 \
		"$(jq '[.processes[] | select(.comm == "malloc_free") | .counts.Malloc] | add' "$tmp/r.json")"
	expect_eq "slow answer: 120 Free" 120 \
		"$(jq '[.processes[] | select(.comm == "malloc_free") | .counts.Free] | add' "$tmp/r.json")"
	expect_eq "slow answer: both by the shim" "preload preload" \
		"$(jq -r '[.processes[] | select(.comm == "malloc_free") | .backend] | join(" ")' "$tmp/r.json")"
}

# memtrack gone while a process waits for its answer: the process runs on, untracked, its
# output and exit status its own
test_memtrack_killed() {
	start_two_runs killed
	if ! stop_memtrack; then
		fail "killed: memtrack stops" "$(tree_state)"
		end_run
		return
	fi
	echo go >"$tmp/go"
	if ! wait_for 30 in_hello; then
		fail "killed: the second malloc_free waits in its hello" "$(tree_state)"
		end_run
		return
	fi
	kill -KILL "$mt"
	wait "$mt" 2>/dev/null || true
	mt=
	wait_for 30 test -s "$tmp/done" || true
	expect_eq "killed: the waiting process ran to its end" 0 "$(cat "$tmp/done" 2>/dev/null)"
	expect_eq "killed: its output" "$("$WORKLOADS/malloc_free")" "$(cat "$tmp/second.out")"
}

test_memtrack_slow
test_memtrack_killed
finish
