#!/bin/bash
# track: back-pressure on BPF rings freezes the tree's cgroup, which no parent sees; SIGKILL thaws
# timeout: 180
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
mnt=$(findmnt -n -t cgroup2 -o TARGET | head -1)
[ -n "$mnt" ] || skip "no cgroup2 mount (back-pressure stops with SIGSTOP only)"

tmp=$(mktemp -d)
mt=
cleanup() {
	[ -n "$mt" ] && kill -CONT "$mt" 2>/dev/null && kill -9 "$mt" 2>/dev/null
	pkill -f "^$WORKLOADS/watch_stops" 2>/dev/null || true
	rmdir "$mnt/memtrack-test-$$" 2>/dev/null || true
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

# a BPF ring of 1 MiB: the tree is frozen at 512 KiB, and stopped with SIGSTOP at 768 KiB,
# which leaves the freezer some 8000 events' time, however busy the machine
RINGS=(--backend bpf --call-graph no --ring-size events=1M --poll-interval 20)

cgroup_of() { echo "$mnt$(sed -n 's/^0:://p' "/proc/$1/cgroup")/memtrack-$1"; }

# A ring fills only when its poller falls behind, which an idle machine may
# never see: memtrack's events poller is stalled (ptrace, that thread alone)
# until what it must bring about holds, checked by the command given; -s SIG:
# memtrack gets SIG then, before the poller goes on.  watch_stops's child
# waits for $tmp/go, made once the poller is stalled: a child done before
# then (80 ms on a quiet machine) would leave nothing to fill the ring.
stall_poller() {
	local opts=() pid
	if [ "$1" = -s ]; then
		opts=(-s "$2")
		shift 2
	fi
	pid=$1
	shift
	# stalled before its poller saw the child's fork, the child stays held there
	wait_for 60 child_waiting || echo "the command of memtrack $pid never ran" >&2
	# shellcheck disable=SC2016 # expanded by the inner shell
	"$WORKLOADS/stall_thread" "${opts[@]}" "$pid" mt-poll-events \
		sh -c ': >"$0" && exec "$@"' "$tmp/go" "$@"
	local rc=$?
	rm -f "$tmp/go"		# the next run's child waits again
	return $rc
}

# watch_stops's child is past its first allocator call, which memtrack holds (at its fork
# under BPF, in its shim's hello otherwise) until its poller has linked its probes or
# answered: it has written to its parent twice, and waits for $tmp/go
child_waiting() {
	local p ppid
	for p in $(pgrep -f "^$WORKLOADS/watch_stops"); do
		ppid=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
		[ "$(cat "/proc/$ppid/comm" 2>/dev/null)" = watch_stops ] || continue
		[ "$(sed -n 's/^syscw: //p' "/proc/$p/io" 2>/dev/null)" -ge 2 ] 2>/dev/null && return 0
	done
	return 1
}

# true while memtrack (or its cgroup's tree) is frozen by memtrack
frozen_by() { echo "grep -qx 1 $(cgroup_of "$1")/cgroup.freeze"; }

# a process of watch_stops stopped after it ran (one write(2) done): held by
# back-pressure, not by the hold at its fork
# shellcheck disable=SC2016 # expanded by the inner shell
STOPPED_AFTER_RUNNING=(sh -c 'for p in $(pgrep -f "^$1"); do
	[ "$(sed -n "s/^syscw: //p" "/proc/$p/io")" -ge 1 ] 2>/dev/null &&
		grep -q "^State:.*stopped" "/proc/$p/status" && exit 0
	done; exit 1' sh "$WORKLOADS/watch_stops")

test_parent_sees_no_stop() {
	local rc=0 rows
	"$MEMTRACK" track -q -v -o "$tmp" "${RINGS[@]}" --stats "$tmp/s.jsonl" \
		-- "$WORKLOADS/watch_stops" 50000 "$tmp/go" >"$tmp/out" 2>"$tmp/err" &
	mt=$!
	# shellcheck disable=SC2046 # a command line
	expect_eq "freezer: a stalled poller has the tree frozen" 0 \
		"$(stall_poller "$mt" $(frozen_by "$mt") 2>&1; echo $?)"
	wait "$mt" || rc=$?
	mt=
	expect_eq "freezer: the run ends well" 0 "$rc"
	# moving a process into a cgroup costs an RCU grace period (11 ms here)
	expect_eq "freezer: the command starts in its cgroup, not moved there" 1 \
		"$(grep -c "^back-pressure freezes cgroup2 .*/memtrack-[0-9]*, where the command starts (clone3)$" "$tmp/err")"
	rows=$(grep -c '"k":"pressure"' "$tmp/s.jsonl" || true)
	expect_eq "freezer: the ring was under pressure" yes \
		"$([ "$rows" -gt 0 ] && echo yes || echo "no ($rows rows)")"
	expect_eq "freezer: the parent's wait() told of no stop" "stops 0" "$(cat "$tmp/out")"
	expect_eq "freezer: the child's 50000 malloc(2222)" 50000 \
		"$(count_sized "$(ls "$tmp"/*.msgpack)" Malloc 2222)"
	expect_eq "freezer: its cgroup is gone at the end" 0 \
		"$(find "$mnt" -maxdepth 6 -name 'memtrack-*' -newer "$tmp/s.jsonl" 2>/dev/null | wc -l)"
}

# the same run with SIGSTOP alone: what the freezer spares the parent
test_stops_without_freezer() {
	local stops
	rm -f "$tmp"/*.msgpack
	"$MEMTRACK" track -q -o "$tmp" "${RINGS[@]}" --no-freezer \
		-- "$WORKLOADS/watch_stops" 50000 "$tmp/go" >"$tmp/out" &
	mt=$!
	expect_eq "--no-freezer: a stalled poller has the child stopped" 0 \
		"$(stall_poller "$mt" "${STOPPED_AFTER_RUNNING[@]}" 2>&1; echo $?)"
	wait "$mt" || fail "--no-freezer: the run ends well" "exit $?"
	mt=
	stops=$(sed -n 's/^stops //p' "$tmp/out")
	expect_eq "--no-freezer: the parent sees memtrack's stops" yes \
		"$([ "$stops" -gt 0 ] && echo yes || echo "no ($stops)")"
	expect_eq "--no-freezer: the child's 50000 malloc(2222)" 50000 \
		"$(count_sized "$(ls "$tmp"/*.msgpack)" Malloc 2222)"
}

# memtrack killed while the tree is frozen: the guardian thaws it, it runs to its end
test_killed_while_frozen() {
	local cg
	rm -f "$tmp"/*.msgpack
	"$MEMTRACK" track -q -o "$tmp" "${RINGS[@]}" \
		-- sh -c "$WORKLOADS/watch_stops 2000000 $tmp/go > $tmp/done" &
	mt=$!
	cg=$(cgroup_of "$mt")
	# shellcheck disable=SC2046 # a command line
	expect_eq "killed: memtrack killed while its tree is frozen" 0 \
		"$(stall_poller -s 9 "$mt" $(frozen_by "$mt") 2>&1; echo $?)"
	wait "$mt" 2>/dev/null || true
	mt=
	if wait_for 60 test -s "$tmp/done"; then
		pass "killed: the guardian thawed the tree, which ran to its end"
	else
		fail "killed: the guardian thawed the tree" "cgroup.freeze: $(cat "$cg/cgroup.freeze")"
	fi
	# the next run removes the cgroup left behind, empty now
	"$MEMTRACK" track -q -o "$tmp" -- true
	expect_eq "killed: the next run removes the cgroup left behind" no \
		"$([ -d "$cg" ] && echo yes || echo no)"
}

# in a mount namespace of its own without the cgroup2 mount (and $1, unmounted too);
# it execs, so that a subshell it runs in becomes memtrack: ( track_without_cgroup2 ... )
track_without_cgroup2() {
	local also=$1
	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec unshare -m sh -c 'umount "$1" && { [ -z "$2" ] || umount "$2"; } && shift 2 && exec "$@"' \
		sh "$mnt" "$also" "$MEMTRACK" track -q -v -o "$tmp" "${RINGS[@]}" "$@"
}

test_v1_freezer() {
	local v1
	v1=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)freezer(,|$)/ { print $1; exit }')
	if [ -z "$v1" ]; then
		echo "v1 freezer: no cgroup v1 freezer mounted ... [Skip]"
		return
	fi
	rm -f "$tmp"/*.msgpack
	(track_without_cgroup2 "" -- "$WORKLOADS/watch_stops" 50000) >"$tmp/out" 2>"$tmp/err"
	expect_eq "v1 freezer: used without cgroup2, the command moved there" 1 \
		"$(grep -c "^back-pressure freezes cgroup v1 freezer $v1/.*memtrack-[0-9]*, where the command was moved$" "$tmp/err")"
	expect_eq "v1 freezer: the parent's wait() told of no stop" "stops 0" "$(cat "$tmp/out")"
	expect_eq "v1 freezer: the child's 50000 malloc(2222)" 50000 \
		"$(count_sized "$(ls "$tmp"/*.msgpack)" Malloc 2222)"
}

test_no_cgroup() {
	local v1 stops
	v1=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)freezer(,|$)/ { print $1; exit }')
	rm -f "$tmp"/*.msgpack
	(track_without_cgroup2 "$v1" -- "$WORKLOADS/watch_stops" 50000 "$tmp/go") >"$tmp/out" 2>"$tmp/err" &
	mt=$!
	expect_eq "no cgroup: a stalled poller has the child stopped" 0 \
		"$(stall_poller "$mt" "${STOPPED_AFTER_RUNNING[@]}" 2>&1; echo $?)"
	wait "$mt" || fail "no cgroup: the run ends well" "exit $?"
	mt=
	expect_eq "no cgroup: -v says so, and that parents see the stops" 1 \
		"$(grep -c "^no cgroup freezer (cgroup2: not mounted; cgroup v1 freezer: not mounted): back-pressure on BPF rings stops processes with SIGSTOP, which their parents can see$" "$tmp/err")"
	stops=$(sed -n 's/^stops //p' "$tmp/out")
	expect_eq "no cgroup: SIGSTOP holds the ring" yes \
		"$([ "$stops" -gt 0 ] && echo yes || echo "no ($stops)")"
	expect_eq "no cgroup: the child's 50000 malloc(2222)" 50000 \
		"$(count_sized "$(ls "$tmp"/*.msgpack)" Malloc 2222)"
}

# memtrack dies (here: the artifact's name is taken) after its cgroup is made and the
# command started in it: the cgroup goes, and the command with it
test_die_removes_cgroup() {
	local last max rc=0
	mkdir "$tmp/taken"
	last=$(cat /proc/sys/kernel/ns_last_pid)
	max=$(cat /proc/sys/kernel/pid_max)
	perl -e 'my ($dir, $last, $max) = @ARGV;
		for my $i (1 .. 3000) {
			my $pid = ($last + $i) % $max;
			open(my $f, ">", "$dir/$pid.MemtrackArtifact.msgpack") or die "$!";
		}' "$tmp/taken" "$last" "$max"
	"$MEMTRACK" track -q -o "$tmp/taken" --backend bpf -- touch "$tmp/ran" 2>"$tmp/err" || rc=$?
	expect_eq "die: memtrack refuses the run" 128 "$rc"
	expect_eq "die: the command did not run" no "$([ -e "$tmp/ran" ] && echo yes || echo no)"
	expect_eq "die: no cgroup of memtrack's is left" 0 \
		"$(find "$mnt" -maxdepth 6 -name 'memtrack-*' -newer "$tmp/taken" 2>/dev/null | wc -l)"
}

# a cgroup2 that belongs to a user (delegated): memtrack makes nothing in it
test_user_cgroup() {
	local cg="$mnt/memtrack-test-$$" v1
	v1=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)freezer(,|$)/ { print $1; exit }')
	mkdir "$cg"
	chown 65534:65534 "$cg"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m sh -c '[ -z "$1" ] || umount "$1"; echo $$ > "$2/cgroup.procs" && shift 2 && exec "$@"' \
		sh "$v1" "$cg" "$MEMTRACK" track -q -v -o "$tmp" "${RINGS[@]}" \
		-- "$WORKLOADS/watch_stops" 1000 >"$tmp/out" 2>"$tmp/err"
	expect_eq "user's cgroup: no freezer there, and -v says why" 1 \
		"$(grep -c "^no cgroup freezer (cgroup2: Operation not permitted; cgroup v1 freezer: not mounted)" "$tmp/err")"
	expect_eq "user's cgroup: nothing made in it" "" \
		"$(find "$cg" -mindepth 1 -type d)"
	# empty once memtrack's guardian, which ran there too, has gone
	wait_for 10 rmdir "$cg" 2>/dev/null || fail "user's cgroup: emptied" "$(cat "$cg/cgroup.procs")"
}

test_parent_sees_no_stop
test_stops_without_freezer
test_killed_while_frozen
test_v1_freezer
test_no_cgroup
test_die_removes_cgroup
test_user_cgroup
finish
