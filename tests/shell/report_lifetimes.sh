#!/bin/bash
# report: a process's blocks go with its exec and its exit (live at exit, peak), both backends, and through a pipe
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

run() {
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	art=$(track_workload "$tmp/out" "$@")
	report_json "$art" "$tmp/r.json"
	# a pipe cannot seek: the trailer comes after the events
	cat "$art" | "$MEMTRACK" report --json /dev/stdin >"$tmp/pipe.json"
}

get() { jq -r "$1" "$tmp/r.json"; }

# the break's growth of each image of the process, summed: the highest break minus the first
brk_growth_by_image() {
	"$MEMTRACK" report --dump "$art" | jq -s --argjson pid "$1" '
		(map(select(.type == "Process" and .pid == $pid))[0].execs) as $execs
		| map(select(.type == "Brk" and .pid == $pid and .addr > 0))
		| group_by(.timestamp as $t | [$execs[] | select(. <= $t)] | length)
		| map((map(.addr) | max) - .[0].addr) | add // 0'
}
piped() { jq -r "$1" "$tmp/pipe.json"; }

# 7 malloc(3000), 2 freed, then exec of malloc_free (100 Malloc, 40 live)
test_exec_discards() {
	local b
	for b in auto bpf; do
		run --backend "$b" -- "$WORKLOADS/exec_after_alloc"
		expect_eq "exec, $b: one process, both images' 107 Malloc, 7 of 3000" "1 107 7" \
			"$(get '.processes | length') $(get .counts.Malloc) $(count_sized "$art" Malloc 3000)"
		expect_eq "exec, $b: the new image's 40 blocks live at exit, not 45" "40 3220" \
			"$(get '.processes[0].leaked_count') $(get '.processes[0].leaked_bytes')"
		expect_eq "exec, $b: the old image's 5 gone with the exec" "5 15000" \
			"$(get .discarded_count) $(get .discarded_bytes)"
		expect_eq "exec, $b: no unknown free, none overwritten" "0 0" \
			"$(get .unknown_frees) $(get .overwritten)"
		expect_eq "exec, $b: the trailer read first" ahead "$(get .lifetimes)"
		expect_eq "exec, $b: the break grows within each image, not from one to the next" \
			"$(brk_growth_by_image "$(get '.processes[0].pid')")" "$(get .brk_growth)"
		expect_eq "exec, $b, a pipe: the same leaks, said late" "late 40 3220 5" \
			"$(piped .lifetimes) $(piped .leaked_count) $(piped .leaked_bytes) $(piped .discarded_count)"
	done
}

# three children of 3, 5 and 4 MB, never freed; one after the other, or the first two together
test_tree_peak() {
	local b
	for b in auto bpf; do
		run --backend "$b" -- "$WORKLOADS/tree_peaks"
		expect_eq "sequential, $b: the peak is the largest child's, not the sum" 5000000 \
			"$(get .peak_bytes)"
		expect_eq "sequential, $b: each child's block live at its exit" \
			"3000000 4000000 5000000 12000000" \
			"$(get '[.processes[].leaked_bytes | select(. > 0)] | sort | map(tostring) | join(" ")') $(get .leaked_bytes)"
		expect_eq "sequential, $b, a pipe: the sum, said, with the same leaks" \
			"late 12000000 12000000" \
			"$(piped .lifetimes) $(piped .peak_bytes) $(piped .leaked_bytes)"
		run --backend "$b" -- "$WORKLOADS/tree_peaks" overlap
		expect_eq "overlap, $b: the peak is the two that overlap" 8000000 "$(get .peak_bytes)"
	done
	cat "$art" | "$MEMTRACK" report /dev/stdin >"$tmp/text"
	if grep -q "with the blocks of exited processes and replaced images: the trailer was not read first" "$tmp/text"; then
		pass "a pipe: the text says what the peak counts"
	else
		fail "a pipe: the text says what the peak counts" "$(sed -n '/^Heap/,/^$/p' "$tmp/text")"
	fi
}

test_exec_discards
test_tree_peak
finish
