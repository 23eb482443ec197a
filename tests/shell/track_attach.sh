#!/bin/bash
# track -p: attach to a running process tree; counts after attach are exact
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
target=
cleanup() {
	[ -n "$target" ] && kill "$target" 2>/dev/null
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

test_attach_mid_run() {
	local rc
	attach_target_run
	target=
	expect_eq "attach: memtrack exits 0 when the tree is gone" 0 "$rc"
	art=$(ls "$tmp"/*.msgpack)
	report_json "$art" "$tmp/r.json"
	expect_eq "attach: 1000 malloc(321) after attach" 1000 "$(count_sized "$art" Malloc 321)"
	expect_eq "attach: the forked child's 100 malloc(123)" 100 "$(count_sized "$art" Malloc 123)"
	expect_eq "attach: nothing from before attach" 1100 "$(count "$tmp/r.json" Malloc)"
	expect_eq "attach: 1150 Free in all" 1150 "$(count "$tmp/r.json" Free)"
	expect_eq "attach: the 50 blocks from before are unknown frees" 50 "$(jq .unknown_frees "$tmp/r.json")"
	expect_eq "attach: the artifact says it was attached" true "$(jq .meta.attached "$tmp/r.json")"
}

test_attach_errors() {
	local rc=0
	"$MEMTRACK" track -p 12x 2>"$tmp/err" || rc=$?
	expect_eq "attach: bad pid is a usage error" 129 "$rc"
	rc=0
	"$MEMTRACK" track -o "$tmp" -p 4194303 2>"$tmp/err" || rc=$?
	expect_eq "attach: no such process" 128 "$rc"
	if grep -q "no process with pid 4194303" "$tmp/err"; then pass "attach: says which pid"; else fail "attach: says which pid" "$(cat "$tmp/err")"; fi
	rc=0
	"$MEMTRACK" track -p 1 -- true 2>"$tmp/err" || rc=$?
	expect_eq "attach: -p with a command is a usage error" 129 "$rc"
}

# -p of memtrack's own shell (or of 1): memtrack and its guardian are left out of the tree,
# or it stops itself for its own probes and never resumes, and its shell waits for ever
test_attach_own_shell() {
	local rc=0
	timeout -s KILL 60 bash -c '"$0" track -q -p $$ --detach-after 1 -o "$1" >"$1/own.out" 2>"$1/own.err"
		echo $? >"$1/own.rc"' "$MEMTRACK" "$tmp" || rc=$?
	expect_eq "attach to its own shell: memtrack ends, nothing stays stopped" 0 "$rc"
	expect_eq "attach to its own shell: exits 130 as --detach-after does" 130 \
		"$(cat "$tmp/own.rc" 2>/dev/null)"
}

test_attach_mid_run
test_attach_errors
test_attach_own_shell
finish
