#!/bin/bash
# track: a second SIGINT (or --detach-after) lets go of a tree that will not end; its artifact is whole
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
pids=
cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	remove_tmp_dir
}
trap cleanup EXIT TERM INT

# the tree's processes run on: neither stopped (T) nor frozen, nor in a cgroup of memtrack's
check_running() {
	local label=$1 pid state
	for pid in $pids; do
		state=$(process_state "$pid")
		expect_eq "$label: pid $pid runs on, not stopped" yes \
			"$([ -n "$state" ] && [ "$state" != T ] && [ "$state" != t ] && echo yes || echo "state '$state'")"
		expect_eq "$label: pid $pid is in no cgroup of memtrack's" 0 \
			"$(grep -c 'memtrack-' "/proc/$pid/cgroup" || true)"
		expect_eq "$label: pid $pid is not frozen" 0 \
			"$(cat "/sys/fs/cgroup$(cut -d: -f3 "/proc/$pid/cgroup")/cgroup.freeze" 2>/dev/null || echo 0)"
	done
}

# check_artifact <label>: complete, marked detached, the 100 + 50 allocations with named frames
check_artifact() {
	local label=$1 art
	art=$(ls "$tmp"/out/*.msgpack)
	if "$MEMTRACK" report --json "$art" >"$tmp/r.json" 2>"$tmp/report.err"; then
		pass "$label: the artifact reads to its end"
	else
		fail "$label: the artifact reads to its end" "$(cat "$tmp/report.err")"
	fi
	expect_eq "$label: Meta says detached" 1 \
		"$("$MEMTRACK" report --dump "$art" | jq -c 'select(.type == "Meta" and .detached == true)' | wc -l)"
	expect_eq "$label: the child's 100 malloc(5555)" 100 "$(count_sized "$art" Malloc 5555)"
	expect_eq "$label: the daemon's 50 malloc(4444)" 50 "$(count_sized "$art" Malloc 4444)"
	expect_eq "$label: its frames are named" yes \
		"$("$MEMTRACK" report --json --stack-depth 3 "$art" |
			jq -r '[.sites[].frames[].symbol] | if any(. == "allocate_and_sleep") then "yes" else . end')"
}

# detach_on <label> <how...>: runs detach_tree, asks memtrack to let go, checks the rest
detach_on() {
	local label=$1 mt rc=0
	shift
	rm -rf "$tmp/out" "$tmp/pids"
	mkdir "$tmp/out"
	env --default-signal=INT "$MEMTRACK" track -o "$tmp/out" "$@" -- \
		"$WORKLOADS/detach_tree" "$tmp/pids" 2>"$tmp/err" &
	mt=$!
	if ! wait_for 60 test -s "$tmp/pids"; then
		fail "$label: the tree started" "no pids after 60 s: $(cat "$tmp/err")"
		kill -KILL "$mt"
		return
	fi
	pids=$(cat "$tmp/pids")
	if [ "$1" != --detach-after ]; then
		kill -INT "$mt"
		sleep 0.2
		kill -INT "$mt"
	fi
	# bounded: a memtrack that does not let go fails here, not by the suite's timeout
	timeout $((60 * ${TEST_SCALE:-1})) tail --pid="$mt" -f /dev/null || kill -KILL "$mt"
	wait "$mt" || rc=$?
	expect_eq "$label: memtrack exits 130" 130 "$rc"
	expect_eq "$label: it says why" 1 "$(grep -c 'detaching from the tree, which runs on' "$tmp/err")"
	check_running "$label"
	check_artifact "$label"
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
	pids=
}

detach_on "two SIGINTs"
detach_on "--detach-after" --detach-after 10
finish
