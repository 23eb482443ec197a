#!/bin/bash
# track: the shim calls __libc_freeres() at exit, after exit handlers and destructors: hello world leaks nothing
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
HELLO=$WORKLOADS/hello_stdio

# run <name> <hello_stdio args> [-- <track options>...]: bare, then tracked; stdout and status compared
run() {
	local name=$1 args=$2 bare_rc=0 rc=0
	shift 2
	[ "${1:-}" = -- ] && shift
	mkdir -p "$tmp/$name"
	# shellcheck disable=SC2086 # its arguments
	echo input | "$HELLO" $args >"$tmp/$name/bare.out" 2>&1 || bare_rc=$?
	# shellcheck disable=SC2086
	echo input | "$MEMTRACK" track -q -o "$tmp/$name/a.msgpack" "$@" -- "$HELLO" $args \
		>"$tmp/$name/out" 2>"$tmp/$name/err" || rc=$?
	expect_eq "$name: the exit status is the program's" "$bare_rc" "$rc"
	expect_eq "$name: stdout is the program's, in its order" "$(cat "$tmp/$name/bare.out")" \
		"$(cat "$tmp/$name/out")"
	"$MEMTRACK" report --dump "$tmp/$name/a.msgpack" >"$tmp/$name/dump"
	"$MEMTRACK" report --json "$tmp/$name/a.msgpack" >"$tmp/$name/r.json"
}

freeres_frees() { jq -c 'select(.type == "Free" and .freeres == true)' "$tmp/$1/dump" | wc -l; }

test_hello() {
	local rc=0 last
	run hello 5
	expect_eq "hello: stdin's and stdout's buffers freed by glibc" 2 "$(freeres_frees hello)"
	expect_eq "hello: 0 bytes leaked" "0 0" "$(jq -r '"\(.leaked_bytes) \(.leaked_count)"' "$tmp/hello/r.json")"
	"$MEMTRACK" report -q --fail-if 'leaked>0' "$tmp/hello/a.msgpack" >/dev/null || rc=$?
	expect_eq "hello: --fail-if 'leaked>0' passes" 0 "$rc"
	# after the exit handler's malloc(1111) and the destructor's malloc(2222): the last of the program's
	last=$(jq -s '[.[] | select(.type == "Malloc" and (.size == 1111 or .size == 2222)) | .timestamp] | max' \
		"$tmp/hello/dump")
	expect_eq "hello: glibc's frees come after the exit handler and the destructor" 2 \
		"$(jq -s --argjson t "$last" '[.[] | select(.freeres == true and .timestamp > $t)] | length' \
			"$tmp/hello/dump")"
	expect_eq "hello: nothing but frees is marked" 0 \
		"$(jq -c 'select(.freeres == true and .type != "Free")' "$tmp/hello/dump" | wc -l)"
	expect_eq "hello: --json counts glibc's frees, in the tree and its process" "2 2" \
		"$(jq -r '"\(.libc_freed_count) \(.processes[0].libc_freed_count)"' "$tmp/hello/r.json")"
	"$MEMTRACK" report -q "$tmp/hello/a.msgpack" >"$tmp/hello/text"
	expect_eq "hello: the text says what glibc freed" 1 \
		"$(grep -c '^  freed by glibc  *2 blocks, .* at exit by __libc_freeres()$' "$tmp/hello/text")"
}

# what glibc freed, shown as it was before: live at exit, at the sites of stdio's buffers
test_show_libc_frees() {
	"$MEMTRACK" report --json --show-libc-frees --stack-depth 1 "$tmp/hello/a.msgpack" >"$tmp/show.json"
	expect_eq "--show-libc-frees: the two buffers live at exit" "2 2" \
		"$(jq -r '"\(.leaked_count) \(.libc_freed_count)"' "$tmp/show.json")"
	expect_eq "--show-libc-frees: allocated by stdio" "_IO_file_doallocate" \
		"$(jq -r '[.sites[] | select(.leaked_count > 0) | .frames[0].symbol] | unique | join(" ")' \
			"$tmp/show.json")"
}

test_no_libc_freeres() {
	local rc=0
	run off 0 -- --no-libc-freeres
	expect_eq "--no-libc-freeres: glibc frees nothing" 0 "$(freeres_frees off)"
	expect_eq "--no-libc-freeres: its two buffers leak" 2 "$(jq .leaked_count "$tmp/off/r.json")"
	"$MEMTRACK" report -q --fail-if 'leaked>0' "$tmp/off/a.msgpack" >/dev/null 2>&1 || rc=$?
	expect_eq "--no-libc-freeres: --fail-if 'leaked>0' fails" 3 "$rc"
}

# a process that ever made a thread: glibc's tables may be another thread's, left alone
test_threaded() {
	run threaded "0 thread"
	expect_eq "a process that made a thread: no __libc_freeres()" 0 "$(freeres_frees threaded)"
	expect_eq "a process that made a thread: its buffers leak" true \
		"$(jq '.leaked_count >= 2' "$tmp/threaded/r.json")"
}

# BPF cannot make a process call anything: its buffers stay live at exit
test_bpf() {
	run bpf 0 -- --backend bpf
	expect_eq "--backend bpf: no __libc_freeres()" 0 "$(freeres_frees bpf)"
	expect_eq "--backend bpf: the two buffers leak" 2 "$(jq .leaked_count "$tmp/bpf/r.json")"
}

test_hello
test_show_libc_frees
test_no_libc_freeres
test_threaded
test_bpf
finish
