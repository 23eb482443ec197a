#!/bin/bash
# track: the shim's socket lies high, out of the program's way, and is noticed when the program takes its number
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# $1: shim_fds's mode; prints its output under memtrack, the artifact in $tmp/$1
track_fds() {
	"$MEMTRACK" track -q -o "$tmp/$1" --backend preload -- "$WORKLOADS/shim_fds" "$1" 2>"$tmp/err"
}

test_first_free() {
	local bare
	bare=$("$WORKLOADS/shim_fds" plain | head -1)
	# before: pipe 4 5, the shim's socket on 3
	expect_eq "the program's first descriptors as bare" "$bare" "$(track_fds plain | head -1)"
	expect_eq "the socket near the top of the limit" "shim fd top" \
		"$(track_fds plain | sed -n 2p)"
	expect_eq "with a limit of 100 too" "shim fd top" \
		"$(ulimit -n 100 && track_fds plain | sed -n 2p)"
}

test_dup2_onto() {
	expect_eq "dup2 onto the socket: a new one, high again" "shim fd top" \
		"$(track_fds dup2 | sed -n 3p)"
	expect_eq "dup2 onto the socket: the new thread's 100 malloc(4444)" 100 \
		"$(count_sized "$(ls "$tmp"/dup2/*.msgpack)" Malloc 4444)"
}

test_limit_lowered() {
	local out
	out=$(track_fds lowered)
	expect_eq "a limit lowered under it: the socket stays, past the limit" "shim fd above" \
		"$(echo "$out" | sed -n 3p)"
	expect_eq "closed then: a new one below the lowered limit" "shim fd top" \
		"$(echo "$out" | sed -n 4p)"
	expect_eq "the thread's 100 malloc(4444)" 100 \
		"$(count_sized "$(ls "$tmp"/lowered/*.msgpack)" Malloc 4444)"
}

test_first_free
test_dup2_onto
test_limit_lowered
finish
