#!/bin/bash
# track: where BPF links the first processes' probes as they start (--backend bpf), a
# warm-up link of memtrack's own (program mt_grace) is there during the run, and is gone
# once memtrack and its guardian have ended; with the shim serving the tree there is one
# only for a command that looks like it will link probes at once (a static executable, one
# with an allocator of its own, a library with functions the shim does not see), and none
# for the others; the probes' programs then load as the command starts, and a run that ends
# before it does not wait for them
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

# warmed <workload> <reason>: -v says why the warm-up link is made, and the run succeeds
warmed() {
	local rc=0
	"$MEMTRACK" track -v -o "$tmp" -- "$WORKLOADS/$1" >"$tmp/out" 2>"$tmp/err" || rc=$?
	expect_eq "$1: exit" 0 "$rc"
	expect_eq "$1: warm-up link" 1 \
		"$(grep -c "warming the kernel's uprobe lock: $WORKLOADS/$1 is $2\$" "$tmp/err")"
}

not_warmed() {
	"$MEMTRACK" track -v -o "$tmp" -- "$@" >"$tmp/out" 2>"$tmp/err"
	expect_eq "$1: no warm-up link" 0 "$(grep -c "warming the kernel's uprobe lock" "$tmp/err")"
}

test_guessed() {
	warmed alloc_loop_jemalloc_static "a static executable"
	warmed own_malloc "an executable with an allocator of its own"
	warmed alloc_loop_mimalloc "a library with allocator functions the shim does not see"
	expect_eq "alloc_loop_mimalloc: the probes load as it starts, not before" 1 \
		"$(grep -c "^the allocator probes load as the command starts$" "$tmp/err")"
	not_warmed "$WORKLOADS/malloc_free"
	not_warmed "$WORKLOADS/reallocarray_lib"
	not_warmed true
	# a script: its interpreter is not looked at
	printf '#!/bin/sh\nexit 0\n' >"$tmp/script" && chmod +x "$tmp/script"
	not_warmed "$tmp/script"
}

# the probes wait for the command's start: a run that ends before it does not wait for them
test_never_started() {
	local rc=0
	mkdir "$tmp/dir.msgpack"
	timeout 60 "$MEMTRACK" track -o "$tmp/dir.msgpack" -- "$WORKLOADS/alloc_loop_mimalloc" \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
	expect_eq "an artifact that cannot be made: exit" 128 "$rc"
	expect_eq "an artifact that cannot be made: said" 1 \
		"$(grep -c "cannot create artifact '$tmp/dir.msgpack': Is a directory" "$tmp/err")"
	"$MEMTRACK" track -v --backend bpf -o "$tmp" -- true >"$tmp/out" 2>"$tmp/err"
	expect_eq "--backend bpf: the probes load before the command starts" 0 \
		"$(grep -c "^the allocator probes load as the command starts$" "$tmp/err")"
}

test_bpf_backend
test_auto
test_guessed
test_never_started
finish
