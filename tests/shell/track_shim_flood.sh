#!/bin/bash
# track: another user's flood of the shim's socket costs a run under sudo nothing
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
command -v setpriv >/dev/null || skip "setpriv is missing"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
chmod 777 "$tmp"
hold=4

# the name of memtrack $1's socket, once it has made it
socket_name() {
	local name
	for _ in $(seq 200); do
		name=$(grep -o "@memtrack-$1-[0-9a-f]*" /proc/net/unix | head -1 | cut -c2-)
		[ -n "$name" ] && { echo "$name"; return; }
		sleep 0.05
	done
}

# utime + stime, in clock ticks
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# nobody opens 1100 idle connections, more than the 1024 descriptors sudo leaves memtrack,
# and holds them while the command runs 20 processes that each make 100 mallocs
test_flood() {
	local rc=0 name before after ticks art
	ticks=$(getconf CLK_TCK)
	(
		ulimit -Sn 1024
		SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody exec "$MEMTRACK" track \
			-o "$tmp/out" --backend preload -- /bin/sh -c "
			while [ ! -e $tmp/ready ]; do sleep 0.05; done
			for i in \$(seq 20); do $WORKLOADS/malloc_free; done
			while [ ! -e $tmp/flooded ]; do sleep 0.05; done"
	) >/dev/null 2>"$tmp/err" &
	local track=$!	# memtrack's pid: the subshell exec'd it
	name=$(socket_name $track)
	[ -n "$name" ] || { kill $track; fail "flood: memtrack's socket" "not in /proc/net/unix"; return; }
	setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$WORKLOADS/shim_flood" "$name" 1100 "$tmp/ready" $hold >"$tmp/opened" &
	local flood=$!
	while [ ! -e "$tmp/ready" ] && kill -0 $flood 2>/dev/null; do sleep 0.05; done
	before=$(cpu_ticks $track)
	wait $flood
	after=$(cpu_ticks $track)
	touch "$tmp/flooded"
	wait $track || rc=$?
	expect_eq "flood: nobody opened its 1100 connections" 1100 "$(cat "$tmp/opened")"
	expect_eq "flood: the run ends well" 0 "$rc"
	art=$(ls "$tmp"/out/*.msgpack)
	expect_eq "flood: the 20 processes' 2000 malloc(100)s, all of them" 2000 \
		"$("$MEMTRACK" report --json "$art" |
			jq '[.processes[] | select(.comm == "malloc_free") | .counts.Malloc] | add')"
	# before: a full core on the listening socket for as long as the flood lasted
	if [ $((after - before)) -lt $((hold * ticks / 4)) ]; then
		pass "flood: memtrack used $((after - before)) ticks of CPU in ${hold}s of flood"
	else
		fail "flood: memtrack's CPU while flooded" "$((after - before)) ticks in ${hold}s"
	fi
	expect_eq "flood: 0 drops, nothing lost" 1 \
		"$(grep -c '^\[ memtrack track: .* 0 drops, [^A-Z]* \]$' "$tmp/err")"
}

# 300 processes alive at once and 256 descriptors: memtrack cannot hold a connection for
# each, and the run says the processes it could not serve, and fails
test_unserved() {
	local rc=0
	(
		ulimit -n 256
		exec "$MEMTRACK" track -o "$tmp/few" --backend preload -- /bin/sh -c "
			pids=
			for i in \$(seq 300); do
				$WORKLOADS/malloc_free_then_sleep >>$tmp/up & pids=\"\$pids \$!\"
			done
			while [ \$(wc -l <$tmp/up) -lt 300 ]; do sleep 0.1; done
			kill \$pids; wait"
	) >/dev/null 2>"$tmp/err-few" || rc=$?
	expect_eq "unserved: the artifact is incomplete, the run fails" 128 "$rc"
	expect_eq "unserved: memtrack says why, once a process" 1 \
		"$(grep -c "^error: [0-9]* processes could not be served by the preload shim's socket: the artifact is incomplete$" "$tmp/err-few")"
	# a child is counted once, before its exec and after
	expect_eq "unserved: and names each" "$(grep -c "^warning: pid [0-9]* ([^)]*) could not be served by memtrack's preload shim socket (memtrack had no descriptor to spare for its connection): its allocations are not tracked$" "$tmp/err-few")" \
		"$(grep -o "^error: [0-9]*" "$tmp/err-few" | cut -c8- | tr -d ' ')"
	expect_eq "unserved: the summary line says so" 1 \
		"$(grep -c '^\[ memtrack track: .*, PROCESSES NOT SERVED (see above) \]$' "$tmp/err-few")"
}

test_flood
test_unserved
finish
