#!/bin/bash
# track: the preload shim where a process takes it, BPF where it cannot; exact either way
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
chmod 755 "$tmp"

# run <memtrack args...>: track into a fresh $tmp/out, report into $tmp/r.json
run() {
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	# under sudo memtrack writes as the user, as the user's own directory lets it
	chown "${SUDO_UID:-0}:${SUDO_GID:-0}" "$tmp/out"
	art=$(MEMTRACK_BACKEND='' track_workload "$tmp/out" "$@")
	report_json "$art" "$tmp/r.json"
}

# backend_of <comm>: the backend its Process record names
backend_of() {
	jq -r --arg c "$1" '[.processes[] | select(.comm == $c) | .backend] | join(" ")' "$tmp/r.json"
}

# malloc_free's own: 100 malloc(1..100), 60 of them freed
check_malloc_free() {
	local pid
	pid=$(jq -r '.processes[] | select(.comm == "malloc_free") | .pid' "$tmp/r.json")
	expect_eq "$1: malloc_free's 100 Malloc" 100 "$(count "$tmp/r.json" Malloc "$pid")"
	expect_eq "$1: malloc_free's 60 Free" 60 "$(count "$tmp/r.json" Free "$pid")"
	expect_eq "$1: malloc_free traced by $2" "$2" "$(backend_of malloc_free)"
}

test_default_is_preload() {
	run -- "$WORKLOADS/malloc_free"
	check_malloc_free "default" preload
	run --backend bpf -- "$WORKLOADS/malloc_free"
	check_malloc_free "--backend bpf" bpf
}

test_children() {
	local how
	for how in vfork posix_spawn; do
		run -- "$WORKLOADS/spawn_kinds" "$how"
		check_malloc_free "$how" preload
		expect_eq "$how: the parent allocated nothing" 0 \
			"$(count "$tmp/r.json" Malloc "$(jq -r .meta.root_pid "$tmp/r.json")")"
	done
	run -- "$WORKLOADS/spawn_kinds" envi
	check_malloc_free "exec with env -i" bpf
	run -- "$WORKLOADS/spawn_kinds" preload
	check_malloc_free "exec with an LD_PRELOAD of its own" bpf
}

# the forked shell may malloc before it execs: the program's own calls are counted by size
test_static_child() {
	local pid
	run "$WORKLOADS/alloc_loop_jemalloc_static; true"
	pid=$(jq -r '.processes[] | select(.comm == "alloc_loop_jema") | .pid' "$tmp/r.json")
	expect_eq "static: 100 malloc(777)" 100 "$(count_sized "$art" Malloc 777 "$pid")"
	expect_eq "static: 10 mallocx(555)" 10 "$(count_sized "$art" Malloc 555 "$pid")"
	expect_eq "static: 150 Free" 150 "$(count "$tmp/r.json" Free "$pid")"
	expect_eq "static: traced by bpf" bpf "$(backend_of alloc_loop_jema)"
	expect_eq "static: its shell by the shim" preload "$(backend_of sh)"
}

# as a user, a setuid-root copy is a secure exec: ld.so ignores LD_PRELOAD there
# a setgid copy run by root is a secure exec (its gid is not root's): ld.so
# ignores LD_PRELOAD there, BPF traces it
test_secure_exec_child() {
	cp "$WORKLOADS/malloc_free" "$tmp/malloc_free"
	chgrp nogroup "$tmp/malloc_free"
	chmod 2755 "$tmp/malloc_free"
	run "$tmp/malloc_free"
	check_malloc_free "setgid" bpf
}

# under sudo the artifact is the user's: a setuid-root program is one the
# user may not trace, and its tracking ends at its exec, saying so
test_setuid_child_under_sudo() {
	cp "$WORKLOADS/malloc_free" "$tmp/malloc_free"
	chmod 4755 "$tmp/malloc_free"
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	chown 65534:65534 "$tmp/out"
	SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$MEMTRACK" track -o "$tmp/out" \
		"$tmp/malloc_free; true" >/dev/null 2>"$tmp/err" || true
	report_json "$(ls "$tmp"/out/*.msgpack)" "$tmp/r.json"
	expect_eq "setuid under sudo: none of its allocations" 0 \
		"$(jq -r '[.processes[] | select(.comm == "malloc_free") | .counts.Malloc] | add // 0' "$tmp/r.json")"
	if grep -q "(malloc_free) is a setuid, setgid or capable program, which uid 65534 may not trace" "$tmp/err"; then
		pass "setuid under sudo: memtrack says why"
	else
		fail "setuid under sudo: memtrack says why" "$(cat "$tmp/err")"
	fi
}

test_signal_handler() {
	run -- "$WORKLOADS/sig_alloc"
	expect_eq "signal handler: 60 Malloc" 60 "$(count "$tmp/r.json" Malloc)"
	expect_eq "signal handler: 60 Free" 60 "$(count "$tmp/r.json" Free)"
	expect_eq "signal handler: 50 malloc(3333) in the handler" 50 \
		"$(count_sized "$art" Malloc 3333)"
}

test_fork_from_busy_threads() {
	local child
	run -- "$WORKLOADS/fork_busy"
	child=$(jq -r --argjson r "$(jq -r .meta.root_pid "$tmp/r.json")" \
		'.processes[] | select(.pid != $r) | .pid' "$tmp/r.json")
	expect_eq "fork, 8 busy threads: the child's 77 Malloc" 77 "$(count "$tmp/r.json" Malloc "$child")"
	expect_eq "fork, 8 busy threads: the child's 7 Free" 7 "$(count "$tmp/r.json" Free "$child")"
	expect_eq "fork, 8 busy threads: the threads' 160000 malloc(2222)" 160000 \
		"$(count_sized "$art" Malloc 2222)"
	expect_eq "fork, 8 busy threads: the child traced by the shim" preload \
		"$(jq -r --argjson c "$child" '.processes[] | select(.pid == $c) | .backend' "$tmp/r.json")"
}

# the thread's state was never set up: the child must not take it for its own
test_fork_from_fresh_thread() {
	local child rc=0
	run -- "$WORKLOADS/fork_fresh_thread"
	expect_eq "fork, fresh thread: the command exits 0 (its child did)" 0 \
		"$(jq -r .meta.exit_code "$tmp/r.json")"
	child=$(jq -r --argjson r "$(jq -r .meta.root_pid "$tmp/r.json")" \
		'.processes[] | select(.pid != $r) | .pid' "$tmp/r.json")
	expect_eq "fork, fresh thread: the child's 10 malloc(3333)" 10 \
		"$(count_sized "$art" Malloc 3333)"
	expect_eq "fork, fresh thread: and its 10 Free" 10 "$(count "$tmp/r.json" Free "$child")"
	# the shim without memtrack (left in the environment of what outlives it) stays out of the way
	LD_PRELOAD="$(dirname "$MEMTRACK")/libmemtrack-preload.so" "$WORKLOADS/fork_fresh_thread" || rc=$?
	expect_eq "fork, fresh thread, no memtrack: the child exits 0" 0 "$rc"
}

test_preload_refused() {
	local rc=0
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	"$MEMTRACK" track -q -o "$tmp/out" --backend preload -- "$WORKLOADS/alloc_loop_jemalloc_static" \
		>/dev/null 2>"$tmp/err" || rc=$?
	expect_eq "--backend preload: a static program fails the run" 128 "$rc"
	if grep -q "cannot take the preload shim: a static executable" "$tmp/err"; then
		pass "--backend preload: says which and why"
	else
		fail "--backend preload: says which and why" "$(cat "$tmp/err")"
	fi
	rc=0
	"$MEMTRACK" track -q -o "$tmp/out" --backend nonsense -- true 2>"$tmp/err" || rc=$?
	expect_eq "--backend nonsense is a usage error" 129 "$rc"
}

# a dynamic program that takes the shim is held at its first exec (which backend), not
# at its library's code (the shim mapped first: its hello waits while libc is read);
# an executable seen once runs on unheld at its next execs, BPF deciding
test_held_for_new_code() {
	MEMTRACK_BACKEND='' "$MEMTRACK" track -v -o "$tmp" -- /bin/true 2>"$tmp/err" >/dev/null
	expect_eq "held: /bin/true at its exec, not at libc's mapping nor the shim's" \
		"memtrack track: held processes for their new code 1 times at exec, 0 at a code mapping; 0 execs ran on unheld, 1 code mappings were told by event" \
		"$(grep '^memtrack track: held processes' "$tmp/err")"
	rm -f "$tmp"/*.msgpack
	MEMTRACK_BACKEND='' "$MEMTRACK" track -v -o "$tmp" -- \
		sh -c '/bin/true; /bin/true; /bin/true; exec /bin/true' 2>"$tmp/err" >/dev/null
	expect_eq "held: sh and the first /bin/true, not the three after" \
		"memtrack track: held processes for their new code 2 times at exec, 0 at a code mapping; 3 execs ran on unheld, 5 code mappings were told by event" \
		"$(grep '^memtrack track: held processes' "$tmp/err")"
	expect_eq "unheld: every process takes the shim" "4 processes (4 preload)" \
		"$(grep -o '[0-9]* processes ([^)]*)' "$tmp/err")"
	rm -f "$tmp"/*.msgpack
}

test_default_is_preload
test_held_for_new_code
test_children
test_static_child
test_secure_exec_child
test_setuid_child_under_sudo
test_signal_handler
test_fork_from_busy_threads
test_fork_from_fresh_thread
test_preload_refused
finish
