#!/bin/bash
# track: started with an LD_PRELOAD of the user's, every process takes the shim as well as that library
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
LIB=$WORKLOADS/libpreload_mark.so

# a shell and two malloc_free under it, memtrack itself started with LD_PRELOAD=$LIB;
# libpreload_mark writes "pid shim mark" (1: mapped) of every process it is loaded in
test_user_preload_kept() {
	local art pids pid
	art=$(LD_PRELOAD=$LIB PRELOAD_MARK=$tmp/marks MEMTRACK_BACKEND='' track_workload "$tmp" -- \
		sh -c "$WORKLOADS/malloc_free; $WORKLOADS/malloc_free; true")
	report_json "$art" "$tmp/r.json"
	expect_eq "two malloc_free" 2 "$(jq '[.processes[] | select(.comm == "malloc_free")] | length' "$tmp/r.json")"
	expect_eq "every process traced by preload" \
		"$(jq -r '[.processes[] | "\(.pid) \(.comm) preload"] | join("|")' "$tmp/r.json")" \
		"$(jq -r '[.processes[] | "\(.pid) \(.comm) \(.backend)"] | join("|")' "$tmp/r.json")"
	expect_eq "malloc_free's exact counts: 200 Malloc, 120 Free" "200 120" \
		"$(jq -r '[.processes[] | select(.comm == "malloc_free")] | "\(map(.counts.Malloc) | add) \(map(.counts.Free) | add)"' "$tmp/r.json")"
	pids=$(jq -r '.processes[].pid' "$tmp/r.json")
	for pid in $pids; do
		expect_eq "process $pid: the shim and the user's library both mapped" "$pid 1 1" \
			"$(grep "^$pid " "$tmp/marks" || echo "$pid: no line of libpreload_mark")"
	done
	# memtrack and its helpers: the user's library as they were started, never the shim
	grep -v -F -f <(printf '%s \n' $pids) "$tmp/marks" | cut -d' ' -f2- | sort -u >"$tmp/own"
	expect_eq "memtrack's own processes: the user's library, not the shim" "0 1" "$(cat "$tmp/own")"
}

test_user_preload_kept
finish
