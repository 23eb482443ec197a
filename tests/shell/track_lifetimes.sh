#!/bin/bash
# track: whose memory a vfork child's is, orphans after the root, programs it cannot see
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

run() {
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	art=$(track_workload "$tmp/out" "$@") || true
	report_json "$art" "$tmp/r.json"
}

of() {	# <comm> <jq path under the process>
	jq -r --arg c "$1" "[.processes[] | select(.comm == \$c) | $2] | add" "$tmp/r.json"
}

# a shell's vfork child allocates in its parent's memory, and the parent frees it
test_vfork_block_is_the_parents() {
	local b
	for b in auto bpf; do
		run --backend "$b" -- "$WORKLOADS/vfork_alloc"
		expect_eq "vfork, $b: the parent's malloc(512)" 1 "$(of vfork_alloc .counts.Malloc)"
		expect_eq "vfork, $b: ... and its free, no unknown one" "1 0" \
			"$(of vfork_alloc .counts.Free) $(of vfork_alloc .unknown_frees)"
		expect_eq "vfork, $b: nothing live in the parent" 0 "$(of vfork_alloc .leaked_count)"
		expect_eq "vfork, $b: the exec'd program's own 100 Malloc, 40 live" "100 40" \
			"$(of malloc_free .counts.Malloc) $(of malloc_free .leaked_count)"
	done
}

# the root exits first: the orphan is followed to its end
test_orphan_after_the_root() {
	run -- "$WORKLOADS/orphan_alloc"
	expect_eq "orphan: its 10 malloc(6666) after the root's exit" 10 \
		"$(count_sized "$art" Malloc 6666)"
	expect_eq "orphan: its exit status 7" "$((7 << 8))" \
		"$(jq -r '[.processes[] | select(.counts.Malloc == 10) | .exit_code] | add' "$tmp/r.json")"
	expect_eq "orphan: nothing left running" 0 "$(jq -r .meta.running "$tmp/r.json")"
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	"$MEMTRACK" track --stop-with-root -o "$tmp/out" -- "$WORKLOADS/orphan_alloc" 2>"$tmp/err"
	art=$(ls "$tmp"/out/*.msgpack)
	report_json "$art" "$tmp/r.json"
	expect_eq "--stop-with-root: the orphan's allocations are not there" 0 \
		"$(count_sized "$art" Malloc 6666)"
	expect_eq "--stop-with-root: one process still running, said in Meta" 1 \
		"$(jq -r .meta.running "$tmp/r.json")"
	if grep -q "1 STILL RUNNING, NOT FOLLOWED" "$tmp/err"; then
		pass "--stop-with-root: the summary says so"
	else
		fail "--stop-with-root: the summary says so" "$(cat "$tmp/err")"
	fi
}

# a static stripped program has no allocator symbol to probe: said, not hidden
test_static_stripped_is_said() {
	[ -x /sbin/ldconfig ] || { echo "static stripped: no /sbin/ldconfig ... [Skip]"; return; }
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	"$MEMTRACK" track -o "$tmp/out" -- /sbin/ldconfig -p >/dev/null 2>"$tmp/err"
	if grep -q "is a static executable without allocator symbols (stripped)" "$tmp/err" &&
	   grep -q "1 PROCESS NOT SEEN (static, stripped)" "$tmp/err"; then
		pass "static stripped: a warning and the summary say so"
	else
		fail "static stripped: a warning and the summary say so" "$(cat "$tmp/err")"
	fi
	report_json "$(ls "$tmp"/out/*.msgpack)" "$tmp/r.json"
	expect_eq "static stripped: Meta counts it" 1 "$(jq -r .meta.blind "$tmp/r.json")"
}

test_vfork_block_is_the_parents
test_orphan_after_the_root
test_static_stripped_is_said
finish
