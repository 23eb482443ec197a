#!/bin/bash
# track: memtrack's holds do not leave a parent that mirrors its child's stops (sudo) stopped
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d)
cleanup() {
	pkill -CONT -f "^$WORKLOADS/mirror_stop" 2>/dev/null || true
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

# the child is held at its fork (BPF), the parent stops itself in turn
test_mirroring_parent() {
	local rc=0 child
	timeout 60 "$MEMTRACK" track -q -o "$tmp" --backend bpf -- "$WORKLOADS/mirror_stop" \
		2>"$tmp/err" || rc=$?
	expect_eq "mirror: the parent ran to its end" 0 "$rc"
	report_json "$(ls "$tmp"/*.msgpack)" "$tmp/r.json"
	child=$(jq -r --argjson r "$(jq .meta.root_pid "$tmp/r.json")" \
		'.processes[] | select(.pid != $r) | .pid' "$tmp/r.json")
	expect_eq "mirror: the child's 100 malloc(4321)" 100 "$(count_sized "$(ls "$tmp"/*.msgpack)" Malloc 4321 "$child")"
	expect_eq "mirror: and its 100 Free" 100 "$(count "$tmp/r.json" Free "$child")"
}

# sudo itself, when there is a user to run as
test_sudo() {
	local rc=0
	command -v sudo >/dev/null || { echo "sudo: not installed ... [Skip]"; return; }
	rm -f "$tmp"/*.msgpack
	timeout 60 "$MEMTRACK" track -q -o "$tmp" -- sudo -u nobody "$WORKLOADS/sig_alloc" \
		2>"$tmp/err" || rc=$?
	expect_eq "sudo: memtrack track -- sudo -u nobody ends" 0 "$rc"
	# the forked sudo allocates before its exec, under the same pid: count by size
	expect_eq "sudo: the program's 50 malloc(3333)" 50 \
		"$(count_sized "$(ls "$tmp"/*.msgpack)" Malloc 3333)"
}

test_mirroring_parent
test_sudo
finish
