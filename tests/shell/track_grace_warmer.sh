#!/bin/bash
# track: where BPF links the first processes' probes as they start (--backend bpf), a
# warm-up link of memtrack's own (program mt_grace) is there during the run, and is gone
# once memtrack and its guardian have ended; with the shim serving the tree there is none
# timeout: 60
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
mt=

grace_progs() { bpftool -j prog show | jq -r '.[] | select(.name == "mt_grace") | .id'; }

# the mt_grace program a link among memtrack's descriptors holds, if any
grace_prog_of_memtrack() {
	local ids
	ids=$(grace_progs)
	[ -n "$ids" ] || return 0
	cat "/proc/$mt/fdinfo/"* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' |
		grep -Fx -e "$ids" | head -1 || true
}

command_started() { pgrep -P "$mt" -x sleep >/dev/null; }
has_grace_prog() { [ -n "$(grace_prog_of_memtrack)" ]; }
prog_gone() { ! grace_progs | grep -qFx "$1"; }

test_bpf_backend() {
	local id
	"$MEMTRACK" track -q --backend bpf -o "$tmp" -- sleep 3 &
	mt=$!
	wait_for 20 command_started
	wait_for 10 has_grace_prog || true
	id=$(grace_prog_of_memtrack)
	expect_eq "--backend bpf: memtrack holds a warm-up link" yes "${id:+yes}"
	wait "$mt"
	mt=
	wait_for 20 prog_gone "$id" && gone=yes || gone=no
	expect_eq "--backend bpf: the link released after the run" yes "$gone"
}

test_auto() {
	"$MEMTRACK" track -q -o "$tmp" -- sleep 1 &
	mt=$!
	wait_for 20 command_started
	expect_eq "auto: no warm-up link" "" "$(grace_prog_of_memtrack)"
	wait "$mt"
	mt=
}

test_bpf_backend
test_auto
finish
