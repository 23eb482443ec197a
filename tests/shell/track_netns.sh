#!/bin/bash
# track: a process whose shim cannot reach memtrack's socket (a network namespace of its own,
# MEMTRACK_SHIM gone from its environment) is traced by BPF, never lost
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
unshare -n true 2>/dev/null || skip "cannot make a network namespace here"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

malloc_free_sum() {
	jq --arg t "$1" '[.processes[] | select(.comm == "malloc_free") | .counts[$t]] | add // 0' \
		"$tmp/r.json"
}

# the socket's name is abstract, and so per network namespace. Before: both malloc_free ran
# with an inert shim, 0 of their 200 malloc recorded, exit status 0, nothing said
test_own_netns() {
	local art

	art=$(track_workload "$tmp" -- unshare -n sh -c "$WORKLOADS/malloc_free; $WORKLOADS/malloc_free")
	report_json "$art" "$tmp/r.json"
	expect_eq "netns: 200 Malloc of two malloc_free" 200 "$(malloc_free_sum Malloc)"
	expect_eq "netns: 120 Free" 120 "$(malloc_free_sum Free)"
	[ "${MEMTRACK_BACKEND:-}" = bpf ] && return
	expect_eq "netns: both traced by BPF, and why" "socket unreached socket unreached" \
		"$(jq -r '[.processes[] | select(.comm == "malloc_free") | .bpf_why] | join(" ")' "$tmp/r.json")"
}

# the second malloc_free is exec'd unheld (its executable known), with LD_PRELOAD and without
# the socket's name. Before: its 100 malloc went unrecorded, exit status 0
test_name_gone() {
	local art

	rm -rf "$tmp"/*.msgpack
	art=$(track_workload "$tmp" -- sh -c \
		"$WORKLOADS/malloc_free; env -u MEMTRACK_SHIM $WORKLOADS/malloc_free")
	"$MEMTRACK" report --json --stack-depth 0 "$art" >"$tmp/s.json"
	# env execs malloc_free in its own process: the calls from malloc_free's main are counted
	expect_eq "name gone: 200 malloc from malloc_free's main" 200 \
		"$(jq '[.sites[] | select(any(.frames[]; .symbol == "main" and
			(.module | endswith("/malloc_free")))) | .calls] | add' "$tmp/s.json")"
}

# where only the shim may trace, the run says it could not
test_preload_only() {
	local rc

	[ "${MEMTRACK_BACKEND:-}" = bpf ] && return
	rc=$(status "$MEMTRACK" track -q -o "$tmp" --backend preload -- unshare -n "$WORKLOADS/malloc_free")
	expect_eq "--backend preload: the run fails" 128 "$rc"
	expect_eq "--backend preload: and says why" 1 \
		"$(grep -c "cannot take the preload shim: its preload shim cannot reach memtrack's socket" "$tmp/err")"
}

test_own_netns
test_name_gone
test_preload_only
finish
