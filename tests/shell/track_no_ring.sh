#!/bin/bash
# track: a thread's shim ring when descriptors are scarce or closed: tracked, or the run fails
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

test_thread_without_ring() {
	local rc=0
	"$MEMTRACK" track -q -o "$tmp/a" --backend preload -- "$WORKLOADS/fds_then_thread" exhaust \
		>/dev/null 2>"$tmp/err" || rc=$?
	expect_eq "no ring: memtrack fails the run" 128 "$rc"
	expect_eq "no ring: memtrack says which thread and why" 1 \
		"$(grep -c "^warning: thread [0-9]* of pid [0-9]* (fds_then_thread) could not make its preload shim ring (Too many open files): its allocations are not tracked$" "$tmp/err")"
	expect_eq "no ring: and that the artifact is incomplete" 1 \
		"$(grep -c "^error: 1 thread could not make a preload shim ring: the artifact is incomplete$" "$tmp/err")"
	# before: a warning per call, 200 of them, and an exit status of 0; then the shim's own
	# line on the program's stderr besides memtrack's
	expect_eq "no ring: memtrack says it, the shim nothing on the program's stderr" 0 \
		"$(grep -c "^memtrack preload:" "$tmp/err")"

	rc=0
	"$MEMTRACK" track -q -o "$tmp/b" --backend preload --tolerate-drops \
		-- "$WORKLOADS/fds_then_thread" exhaust >/dev/null 2>"$tmp/err" || rc=$?
	expect_eq "no ring, --tolerate-drops: the command's status" 0 "$rc"
	expect_eq "no ring, --tolerate-drops: the main thread's malloc(1111)" 1 \
		"$(count_sized "$(ls "$tmp"/b/*.msgpack)" Malloc 1111)"
	expect_eq "no ring, --tolerate-drops: none of the thread's malloc(4444)" 0 \
		"$(count_sized "$(ls "$tmp"/b/*.msgpack)" Malloc 4444)"
}

# the shim's connection closed by the program: a new thread's ring goes on a new one
test_connection_closed() {
	local rc=0 art
	"$MEMTRACK" track -q -o "$tmp/c" --backend preload -- "$WORKLOADS/fds_then_thread" close \
		>/dev/null 2>"$tmp/err" || rc=$?
	expect_eq "closed: the run ends well" 0 "$rc"
	art=$(ls "$tmp"/c/*.msgpack)
	expect_eq "closed: the malloc(1111) before" 1 "$(count_sized "$art" Malloc 1111)"
	expect_eq "closed: the 50 malloc(2222) after" 50 "$(count_sized "$art" Malloc 2222)"
	# before: 0, the ring registered on a connection that had not said hello
	expect_eq "closed: the new thread's 100 malloc(4444)" 100 "$(count_sized "$art" Malloc 4444)"
}

# the connection closed and no descriptor left to make another: the shim counts the thread in
# the process's first ring, which memtrack reads
test_no_connection_no_descriptor() {
	local rc=0
	"$MEMTRACK" track -o "$tmp/d" --backend preload -- "$WORKLOADS/fds_then_thread" both \
		>/dev/null 2>"$tmp/err" || rc=$?
	# before: 0, "0 drops", the thread's calls missing without a word
	expect_eq "no connection: memtrack fails the run" 128 "$rc"
	expect_eq "no connection: memtrack names the process" 1 \
		"$(grep -c "^warning: 1 thread of pid [0-9]* (fds_then_thread) could not make a preload shim ring, and the shim could not say why (no connection, no descriptor left): its allocations are not tracked$" "$tmp/err")"
	expect_eq "no connection: the summary line says so" 1 \
		"$(grep -c "^\[ memtrack track: .*, THREADS WITHOUT A RING (see above) \]$" "$tmp/err")"
	expect_eq "no connection: and that the artifact is incomplete" 1 \
		"$(grep -c "^error: 1 thread could not make a preload shim ring: the artifact is incomplete$" "$tmp/err")"
	expect_eq "no connection: nothing of the shim's on the program's stderr" 0 \
		"$(grep -c "^memtrack preload:" "$tmp/err")"

	rc=0
	"$MEMTRACK" track -q -o "$tmp/e" --backend preload --tolerate-drops \
		-- "$WORKLOADS/fds_then_thread" both >/dev/null 2>"$tmp/err" || rc=$?
	expect_eq "no connection, --tolerate-drops: the command's status" 0 "$rc"
	expect_eq "no connection: the 50 malloc(2222) after the close" 50 \
		"$(count_sized "$(ls "$tmp"/e/*.msgpack)" Malloc 2222)"
	expect_eq "no connection: none of the thread's malloc(4444)" 0 \
		"$(count_sized "$(ls "$tmp"/e/*.msgpack)" Malloc 4444)"
}

test_thread_without_ring
test_connection_closed
test_no_connection_no_descriptor
finish
