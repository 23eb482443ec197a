#!/bin/bash
# track: in a pid namespace of its own (a container's): the core suites, its pids, -p, deeper ones
# timeout: 400
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

# the whole test runs in a pid namespace with its own /proc, as docker run --privileged gives
if [ -z "${MEMTRACK_TEST_PIDNS:-}" ]; then
	unshare --pid --fork --mount-proc true 2>/dev/null || skip "cannot make a pid namespace (unshare)"
	exec unshare --pid --fork --mount-proc env MEMTRACK_TEST_PIDNS=1 bash "$0" "$@"
fi

tmp=$(mktemp -d)
target=
cleanup() {
	[ -n "$target" ] && kill "$target" 2>/dev/null
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

# suite <name> <script> [<prefix command>...]: one of the suite's scripts, whole, here
suite() {
	local name=$1 script=$2 rc=0
	shift 2
	"$@" bash "$TOP/tests/shell/$script.sh" >"$tmp/$script.log" 2>&1 || rc=$?
	grep '\[Fail' "$tmp/$script.log" | sed "s/^/$name: /" || true
	expect_eq "$name: $script.sh passes ($(grep -c 'Success' "$tmp/$script.log") checks)" 0 "$rc"
}

test_suites() {
	suite "pidns" track_tree
	suite "pidns" track_calls
	suite "pidns" track_stacks
	# memtrack two levels down
	suite "pidns, nested" track_tree unshare --pid --fork --mount-proc
}

# the pids memtrack records are those the processes have here
test_own_pids() {
	local root child
	rm -f "$tmp"/*.msgpack
	art=$(track_workload "$tmp" "echo \$\$ >$tmp/root; sh -c 'echo \$\$ >$tmp/child; exec $WORKLOADS/threads'")
	report_json "$art" "$tmp/r.json"
	root=$(cat "$tmp/root")
	child=$(cat "$tmp/child")
	expect_eq "pids: the root is the shell's getpid()" "$root" "$(jq .meta.root_pid "$tmp/r.json")"
	expect_eq "pids: the exec'd child is its getpid(), with its 8000 malloc(4242)" 8000 \
		"$(count_sized "$art" Malloc 4242 "$child")"
	expect_eq "pids: its parent is the root" "$root" \
		"$(jq --argjson c "$child" '.processes[] | select(.pid == $c) | .ppid' "$tmp/r.json")"
	expect_eq "pids: report -p <the child's pid> has that process alone" "$child" \
		"$("$MEMTRACK" report --json -p "$child" "$art" | jq -r '[.processes[].pid] | join(" ")')"
	expect_eq "pids: report -p <the child's pid> has its 8000 malloc(4242)" 8000 \
		"$("$MEMTRACK" report --json --sort calls --top 0 -p "$child" "$art" |
			jq '[.sites[] | select(.bytes == .calls * 4242) | .calls] | add')"
	expect_eq "pids: from 8 tids" 8 \
		"$("$MEMTRACK" report --dump "$art" | jq -s '[.[] | select(.size == 4242) | .tid] | unique | length')"
}

# a process of the tree that enters a deeper pid namespace is followed, under the pid it has here
test_deeper_namespace() {
	local outer
	rm -f "$tmp"/*.msgpack
	# sh reads its own status (this namespace's /proc: its pid here, then there), then execs
	art=$(track_workload "$tmp" -- unshare --pid --fork sh -c "while read -r k v; do
		[ \"\$k\" = NSpid: ] && echo \"\$v\" >$tmp/nspid; done </proc/self/status
		exec $WORKLOADS/threads")
	outer=$(awk '{ print $1 }' "$tmp/nspid")
	expect_eq "deeper: its own namespace calls it 1" 1 "$(awk '{ print $2 }' "$tmp/nspid")"
	expect_eq "deeper: 8000 malloc(4242) under the pid it has here" 8000 \
		"$(count_sized "$art" Malloc 4242 "$outer")"
	expect_eq "deeper: no event names its main thread by its id there (1)" 0 \
		"$("$MEMTRACK" report --dump "$art" | jq -c --argjson c "$outer" 'select(.pid == $c and .tid == 1)' | wc -l)"
	expect_eq "deeper: nothing under the pid it has there" 0 \
		"$("$MEMTRACK" report --dump "$art" | jq -c 'select(.pid == 1)' | wc -l)"
}

# -p with a pid of this namespace
test_attach() {
	local rc
	rm -f "$tmp"/*.msgpack
	attach_target_run
	expect_eq "attach: memtrack exits 0" 0 "$rc"
	art=$(ls "$tmp"/*.msgpack)
	report_json "$art" "$tmp/r.json"
	expect_eq "attach: the root is the pid given" "$target" "$(jq .meta.root_pid "$tmp/r.json")"
	target=
	expect_eq "attach: 1000 malloc(321) after attach" 1000 "$(count_sized "$art" Malloc 321)"
	expect_eq "attach: the forked child's 100 malloc(123)" 100 "$(count_sized "$art" Malloc 123)"
}

test_suites
test_own_pids
test_deeper_namespace
test_attach
finish
