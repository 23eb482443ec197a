#!/bin/bash
# track: no process is left stopped or waiting, even when memtrack is SIGKILLed, and
# a process stopped by someone else is not resumed by memtrack
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
mt=
cleanup() {
	[ -n "$mt" ] && kill -CONT "$mt" 2>/dev/null && kill -9 "$mt" 2>/dev/null
	pkill -CONT -f "^$WORKLOADS/" 2>/dev/null || true
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

# the workload's processes (memtrack's own command line names them too)
workers() {
	pgrep -f "^$WORKLOADS/alloc_storm_procs 4 300000"
}

have_workers() { [ -n "$(workers)" ]; }
some_stopped() { [ "$(stopped_workers)" -gt 0 ]; }
self_stop_pid() { pgrep -f "^$WORKLOADS/self_stop"; }
is_stopped() { [ "$(process_state "$1")" = T ]; }

stopped_workers() {
	local n=0 p
	for p in $(workers); do
		[ "$(process_state "$p")" = T ] && n=$((n + 1))
	done
	echo $n
}

# workers asleep in the shim's wait for room in their ring
waiting_workers() {
	local n=0 p
	for p in $(workers); do
		case $(cat "/proc/$p/wchan" 2>/dev/null) in *futex*) n=$((n + 1)) ;; esac
	done
	echo $n
}
some_waiting() { [ "$(waiting_workers)" -gt 0 ]; }

# workers that have a ring: past their hello, which waits for memtrack's answer
ringed_workers() {
	local n=0 p
	for p in $(workers); do
		grep -q memtrack-ring "/proc/$p/maps" 2>/dev/null && n=$((n + 1))
	done
	echo $n
}
# at least one child has a ring, whether the parent has one or not
a_child_has_a_ring() { [ "$(ringed_workers)" -ge 2 ]; }

test_sigkill_resumes() {
	# a tiny ring and memtrack itself stopped: the workers stop at the watermark (no
	# freezer: a tree frozen as memtrack stops never gets there; track_freezer tests its thaw)
	"$MEMTRACK" track -q -o "$tmp" --backend bpf --ring-size events=16K --no-freezer \
		"$WORKLOADS/alloc_storm_procs 4 300000; echo \$? > $tmp/done" &
	mt=$!
	wait_for 20 have_workers
	kill -STOP "$mt"
	if ! wait_for 20 some_stopped; then
		fail "sigkill: workers stopped by back-pressure" "none stopped"
		return
	fi
	pass "sigkill: workers stopped by back-pressure ($(stopped_workers))"
	kill -9 "$mt"
	wait "$mt" 2>/dev/null || true
	mt=
	if wait_for 60 test -s "$tmp/done"; then
		pass "sigkill: every worker resumed and the workload ran to its end"
		expect_eq "sigkill: the workload's own exit" 0 "$(cat "$tmp/done")"
	else
		fail "sigkill: workload resumed" "stopped: $(stopped_workers)"
	fi
	expect_eq "sigkill: none left in state T" 0 "$(stopped_workers)"
}

# the shim's rings: a worker waits for room, and runs on untracked once memtrack is gone
test_sigkill_releases_waiters() {
	rm -f "$tmp/done"
	"$MEMTRACK" track -q -o "$tmp/shim" --backend preload --ring-size heap=4K \
		"$WORKLOADS/alloc_storm_procs 4 300000; echo \$? > $tmp/done" &
	mt=$!
	wait_for 20 a_child_has_a_ring
	kill -STOP "$mt"
	if ! wait_for 20 some_waiting; then
		fail "sigkill, shim: workers wait for room in their rings" "none waits"
		return
	fi
	pass "sigkill, shim: workers wait for room in their rings ($(waiting_workers))"
	kill -9 "$mt"
	wait "$mt" 2>/dev/null || true
	mt=
	if wait_for 60 test -s "$tmp/done"; then
		pass "sigkill, shim: every worker ran on to its end"
		expect_eq "sigkill, shim: the workload's own exit" 0 "$(cat "$tmp/done")"
	else
		fail "sigkill, shim: the workload ran to its end" "waiting: $(waiting_workers)"
	fi
}

test_self_stop_not_resumed() {
	local pid
	"$MEMTRACK" track -q -o "$tmp/self" -- "$WORKLOADS/self_stop" &
	mt=$!
	wait_for 20 self_stop_pid >/dev/null
	pid=$(self_stop_pid)
	wait_for 20 is_stopped "$pid"
	sleep 1
	expect_eq "self-stop: still stopped a second later" T "$(process_state "$pid")"
	kill -CONT "$pid"
	wait "$mt"
	mt=
	report_json "$(ls "$tmp"/self/*.msgpack)" "$tmp/r.json"
	expect_eq "self-stop: both mallocs recorded" 2 "$(count "$tmp/r.json" Malloc)"
}

test_sigkill_resumes
test_sigkill_releases_waiters
test_self_stop_not_resumed
finish
