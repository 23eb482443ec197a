#!/bin/bash
# track --backend bpf: once --shared-probes processes had uprobe links of their own to libc,
# one link without a pid serves the rest: every call counted once (those with links of
# their own too), nothing of processes outside the tree, no hold at fork a parent can see
# timeout: 300
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# run <memtrack args...>: track into a fresh $tmp/out (stderr kept), report into $tmp/r.json
run() {
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	"$MEMTRACK" track -o "$tmp/out/a.msgpack" --backend bpf "$@" >"$tmp/out/track.out" \
		2>"$tmp/out/track.err"
	rc=$?
	sed 's/^/memtrack: /' "$tmp/out/track.err" >&2
	"$MEMTRACK" report --json "$tmp/out/a.msgpack" >"$tmp/r.json"
}

# children with exactly 100 malloc and 100 free, of the 16..1039 bytes alloc_storm_procs makes
exact_children() {
	jq '[.processes[] | select(.counts.Malloc == 100 and .counts.Free == 100)] | length' \
		"$tmp/r.json"
}

shared_said() {
	grep -c 'shared from now on' "$tmp/out/track.err" || true
}

# the root and 3 children have links of their own, the other 36 use the shared ones: a call
# of the first seen by both would count twice
test_counted_once() {
	run --shared-probes 4 -- "$WORKLOADS/alloc_storm_procs" 40 100
	expect_eq "4: exit" 0 "$rc"
	expect_eq "4: said once" 1 "$(shared_said)"
	expect_eq "4: 4000 Malloc" 4000 "$(count "$tmp/r.json" Malloc)"
	expect_eq "4: 4000 Free" 4000 "$(count "$tmp/r.json" Free)"
	expect_eq "4: every child 100 and 100" 40 "$(exact_children)"
	expect_eq "4: no drops" "0 0" "$(jq -r '"\(.meta.drops.events) \(.meta.drops.stacks)"' "$tmp/r.json")"
	expect_eq "4: every allocation has a stack" 0 \
		"$("$MEMTRACK" report --dump "$tmp/out/a.msgpack" | jq -c 'select(.type == "Malloc" and .stack == null)' | wc -l)"
}

test_never_shared() {
	run --shared-probes 0 -- "$WORKLOADS/alloc_storm_procs" 20 100
	expect_eq "0: exit" 0 "$rc"
	expect_eq "0: not said" 0 "$(shared_said)"
	expect_eq "0: every child 100 and 100" 20 "$(exact_children)"
}

# a malloc loop outside the tree runs through the whole run: its calls trap, and are not ours
test_bystander() {
	local by

	"$WORKLOADS/alloc_storm_procs" 1 30000000 &
	by=$!
	run --shared-probes 1 -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do $WORKLOADS/malloc_free; done"
	kill "$by" 2>/dev/null || true
	wait "$by" 2>/dev/null || true
	expect_eq "bystander: exit" 0 "$rc"
	expect_eq "bystander: said" 1 "$(shared_said)"
	expect_eq "bystander: 11 processes, the tree's" 11 "$(jq -r '.processes | length' "$tmp/r.json")"
	expect_eq "bystander: 1000 Malloc of malloc_free" 1000 "$(sum_of malloc_free Malloc)"
	expect_eq "bystander: 600 Free" 600 "$(sum_of malloc_free Free)"
	expect_eq "bystander: nothing of pid $by" 0 \
		"$(jq --argjson p "$by" '[.processes[] | select(.pid == $p)] | length' "$tmp/r.json")"
}

# a parent that waits with WUNTRACED and continues what it sees stopped: with the probes
# shared from its own on, its 40 children are never held (a hold it ends loses events);
# no stacks, so that no ring fills to a stop for back-pressure on a slow machine
test_no_fork_hold() {
	run --shared-probes 1 --call-graph no -- "$WORKLOADS/fork_watch" 40 50
	expect_eq "watch: exit" 0 "$rc"
	expect_eq "watch: no stop seen" "stops 0" "$(cat "$tmp/out/track.out")"
	expect_eq "watch: 40 x 50 malloc(3333)" 2000 \
		"$("$MEMTRACK" report --dump "$tmp/out/a.msgpack" | jq -c 'select(.type == "Malloc" and .size == 3333)' | wc -l)"
	expect_eq "watch: 41 processes" 41 "$(jq -r '.processes | length' "$tmp/r.json")"
}

test_bad_value() {
	set +e
	"$MEMTRACK" track --shared-probes x -- true >/dev/null 2>"$tmp/err"
	rc=$?
	set -e
	expect_eq "--shared-probes x: usage error" 129 "$rc"
}

test_counted_once
test_never_shared
test_bystander
test_no_fork_hold
test_bad_value
finish
