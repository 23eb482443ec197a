#!/bin/bash
# track: the guardian keeps uid 0 and CAP_KILL only, still resumes another user's stopped
# processes, and releases the tracepoints' links memtrack hands it at its end
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
chmod 755 "$tmp"
mt=
cleanup() {
	local p
	[ -n "$mt" ] && kill -CONT "$mt" 2>/dev/null && kill -9 "$mt" 2>/dev/null
	# a failed test leaves its workers stopped: they would hold the log open
	for p in $(workers); do
		kill -CONT "$p"
		kill "$p"
	done
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

guardian_of() {
	ps -eo pid=,ppid=,comm= | awk -v m="$1" '$2 == m && $3 == "memtrack-guard" { print $1 }'
}
have_guardian() { [ -n "$(guardian_of "$mt")" ]; }
status_field() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

test_rights() {
	local g
	"$MEMTRACK" track -q -o "$tmp" -- sleep 30 &
	mt=$!
	wait_for 30 have_guardian
	g=$(guardian_of "$mt")
	expect_eq "guardian: uid 0 (no other user may signal it)" 0 "$(status_field "$g" Uid)"
	# CAP_KILL is bit 5
	expect_eq "guardian: permitted CAP_KILL only" 0000000000000020 "$(status_field "$g" CapPrm)"
	expect_eq "guardian: effective CAP_KILL only" 0000000000000020 "$(status_field "$g" CapEff)"
	expect_eq "guardian: bounding set CAP_KILL only" 0000000000000020 "$(status_field "$g" CapBnd)"
	expect_eq "guardian: nothing inheritable" 0000000000000000 "$(status_field "$g" CapInh)"
	expect_eq "guardian: no ambient capability" 0000000000000000 "$(status_field "$g" CapAmb)"
	expect_eq "guardian: no_new_privs" 1 "$(status_field "$g" NoNewPrivs)"
	expect_eq "guardian: the socket, the map and memtrack's pidfd, stdio on /dev/null" \
		"/dev/null /dev/null /dev/null socket anon_inode:bpf-map anon_inode:[pidfd]" \
		"$(for fd in 0 1 2 3 4 5; do readlink "/proc/$g/fd/$fd"; done | sed 's/:\[[0-9]*\]$//' | xargs)"
	# the tree's cgroup freezer, to thaw it should memtrack die
	expect_eq "guardian: no other fd than the freezer's state" "" \
		"$(for f in "/proc/$g/fd"/*; do [ "${f##*/}" -gt 5 ] && readlink "$f"; done |
		grep -v "/memtrack-$mt/cgroup.freeze$" || true)"
	kill "$mt"
	wait "$mt" || true
	mt=
}

# the ids of the links to tracepoints memtrack holds
tracepoint_links() {
	awk '$1 == "link_type:" { tp = $2 == "raw_tracepoint" } $1 == "link_id:" && tp { print $2 }' \
		"/proc/$1/fdinfo/"* 2>/dev/null | sort -n | xargs
}
# every link is made before the command is let go
command_started() { pgrep -P "$mt" -x sleep >/dev/null; }
link_exists() { bpftool link show id "$1" >/dev/null 2>&1; }
links_gone() {
	local id
	for id in $1; do
		! link_exists "$id" || return 1
	done
}

# closing a tracepoint's link rewrites kernel text on every CPU: the guardian does it after
# memtrack has gone, for both backends, and none is left once it has
test_tracepoints_released() {
	local backend ids gone
	for backend in auto bpf; do
		"$MEMTRACK" track -q --backend "$backend" -o "$tmp" -- sleep 3 &
		mt=$!
		wait_for 30 command_started
		ids=$(tracepoint_links "$mt")
		expect_eq "$backend: memtrack holds the tracepoints' links" \
			"sched_process_exec sched_process_exit sched_process_fork signal_generate sys_exit" \
			"$(awk '$1 == "tp_name:" { print $2 }' "/proc/$mt/fdinfo/"* 2>/dev/null | sort | xargs)"
		wait "$mt"
		mt=
		wait_for 20 links_gone "$ids" && gone=yes || gone=no
		expect_eq "$backend: the tracepoints' links released after the run" yes "$gone"
	done
}

workers() { pgrep -u 65534 -f "^$WORKLOADS/alloc_storm_procs 4 300000"; }
have_workers() { [ -n "$(workers)" ]; }
stopped_workers() {
	local n=0 p
	for p in $(workers); do
		[ "$(process_state "$p")" = T ] && n=$((n + 1))
	done
	echo $n
}
some_stopped() { [ "$(stopped_workers)" -gt 0 ]; }

# under sudo the workers are the user's, in a session of their own: resuming
# them takes CAP_KILL (without it, SIGCONT reaches only memtrack's session).
# No freezer: a tree frozen when memtrack stops would never reach a SIGSTOP
# (track_freezer tests the guardian's thaw)
test_resumes_users_processes() {
	mkdir "$tmp/nobody"
	chown 65534:65534 "$tmp/nobody"
	SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$MEMTRACK" track -q -o "$tmp/nobody" \
		--backend bpf --ring-size events=16K --no-freezer \
		"setsid -w $WORKLOADS/alloc_storm_procs 4 300000; echo \$? > $tmp/nobody/done" &
	mt=$!
	wait_for 30 have_workers
	kill -STOP "$mt"
	if ! wait_for 30 some_stopped; then
		fail "another user's workers stopped by back-pressure" "none stopped"
		return
	fi
	pass "another user's workers stopped by back-pressure"
	kill -9 "$mt"
	wait "$mt" 2>/dev/null || true
	mt=
	if wait_for 60 test -s "$tmp/nobody/done"; then
		pass "memtrack killed: the guardian resumed them and the workload ran to its end"
	else
		fail "memtrack killed: the guardian resumed them" "stopped: $(stopped_workers)"
	fi
	expect_eq "none left in state T" 0 "$(stopped_workers)"
}

test_rights
test_tracepoints_released
test_resumes_users_processes
finish
