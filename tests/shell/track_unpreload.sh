#!/bin/bash
# track: no shim in the environment where it changes the program (ASan, chroot): output, status as bare
# timeout: 120
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
[ -x "$WORKLOADS/asan_alloc" ] || skip "asan_alloc not built (no libasan)"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# the sanitizer's report, without pids and addresses
normal() {
	sed 's/^==[0-9]*==/==PID==/; s/0x[0-9a-f]*/0x/g' "$1"
}

# run <label> <args...>: bare and under memtrack, with the same small environment
run() {
	local label=$1 rc=0 bare_rc=0
	shift
	env -i PATH=/usr/bin:/bin A=1 "$WORKLOADS/asan_alloc" "$@" >"$tmp/bare.out" \
		2>"$tmp/bare.err" || bare_rc=$?
	rm -f "$tmp"/*.msgpack
	env -i PATH=/usr/bin:/bin A=1 \
		"$MEMTRACK" track -q ${MEMTRACK_BACKEND:+--backend $MEMTRACK_BACKEND} -o "$tmp" -- \
		"$WORKLOADS/asan_alloc" "$@" >"$tmp/mt.out" \
		2>"$tmp/mt.err" || rc=$?
	grep -v '^warning: ' "$tmp/mt.err" >"$tmp/mt.report" || true
	art=$(ls "$tmp"/*.msgpack)
	expect_eq "$label: exit status as bare" "$bare_rc" "$rc"
	expect_eq "$label: output, its environment, as bare" "$(cat "$tmp/bare.out")" \
		"$(cat "$tmp/mt.out")"
	expect_eq "$label: traced by BPF" bpf \
		"$("$MEMTRACK" report --json "$art" | jq -r '.processes[0].backend')"
	expect_eq "$label: its 20 malloc(123)" 20 "$(count_sized "$art" Malloc 123)"
}

run "no error"
expect_eq "no error: no report" "" "$(cat "$tmp/mt.report")"
# a report says where the block was allocated: from the stack ASan's malloc sees, return
# address included (no return probe's trampoline there)
for kind in global heap leak; do
	run "$kind" "$kind"
	expect_eq "$kind: the sanitizer's report as bare" "$(normal "$tmp/bare.err")" \
		"$(normal "$tmp/mt.report")"
done

# a root without the shim: ld.so would say it cannot preload it
mkdir -p "$tmp/root/bin"
cp /bin/echo "$tmp/root/bin/"
for lib in $(ldd /bin/echo | grep -o '/lib[^ ]*'); do
	mkdir -p "$tmp/root$(dirname "$lib")"
	cp "$lib" "$tmp/root$lib"
done
rc=0
"$MEMTRACK" track -q -o "$tmp" -- chroot "$tmp/root" /bin/echo hi >"$tmp/mt.out" 2>"$tmp/mt.err" ||
	rc=$?
expect_eq "chroot: output and status as bare" "0 hi" "$rc $(cat "$tmp/mt.out")"
expect_eq "chroot: nothing from ld.so" "" "$(grep -v '^warning: ' "$tmp/mt.err" || true)"
finish
