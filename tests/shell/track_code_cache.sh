#!/bin/bash
# track: the allocator functions a run finds in libc (read and decoded, 0.7-1 ms at every
# start) serve the runs after it for the rest of the boot (/run/memtrack/alloc-code, root's
# alone), and those runs stay exact under both backends; an entry cut short, rewritten, or a
# link, and a directory others could write, are not read, and the next run replaces the entry
# timeout: 120
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
[ "$(id -u)" = 0 ] || skip "the functions are kept for root's runs only"

dir=/run/memtrack/alloc-code
said="from $dir"
tmp=$(mktemp -d)
cleanup() {
	[ -d "$dir" ] && chmod 0700 "$dir"
	remove_tmp_dir
}
trap cleanup EXIT TERM INT

libc=$(ldd "$WORKLOADS/calloc" | awk '/libc\.so/ { print $3 }')
# the entry's name: libc's device and inode, and memtrack's inode
self=$(stat -L -c %i "$MEMTRACK")
entry=$dir/$(stat -L -c '%d %i' "$libc" |
	awk -v self="$self" '{ printf "%016x-%016x-%016x", $1, $2, self }')

run() {
	calloc_run "$tmp" "$@"
}

read_from_cache() {
	grep -c "$said" "$tmp/$1/track.err" || true
}

# some_read <name>: yes when the run read some file's functions from the cache
some_read() {
	[ "$(read_from_cache "$1")" -gt 0 ] && echo yes || echo no
}

exact() {
	calloc_exact "$tmp" "$1"
}

test_kept_and_read_again() {
	rm -rf "$dir"
	run first
	expect_eq "first run: read from the files" 0 "$(read_from_cache first)"
	expect_eq "first run: libc's kept, root's alone" "600 0 regular file" \
		"$(stat -c '%a %u %F' "$entry" 2>&1)"
	exact first
	run second
	expect_eq "second run: read from the cache" yes "$(some_read second)"
	exact second
	run bpf --backend bpf
	expect_eq "bpf: read from the cache" yes "$(some_read bpf)"
	exact bpf
}

# spoil <how>: every entry cut short, rewritten as zeros, or replaced by a link
spoil() {
	local f size
	for f in "$dir"/*; do
		size=$(stat -c %s "$f")
		case $1 in
		short) truncate -s $((size - 1)) "$f" ;;
		zeros) head -c "$size" /dev/zero >"$f" ;;
		link) rm -f "$f"; ln -s /etc/passwd "$f" ;;
		esac
	done
}

test_spoilt_entries_not_read() {
	local how before
	before=$(sha256sum /etc/passwd)
	for how in short zeros link; do
		spoil $how
		run "$how" --backend bpf
		expect_eq "$how: not read" 0 "$(read_from_cache "$how")"
		exact "$how"
		expect_eq "$how: replaced, root's alone" "600 0 regular file" \
			"$(stat -c '%a %u %F' "$entry" 2>&1)"
		run "$how-after"
		expect_eq "$how: the next run reads the new entry" yes "$(some_read "$how-after")"
	done
	expect_eq "link: its target untouched" "$before" "$(sha256sum /etc/passwd)"
}

test_loose_directory_not_read() {
	chmod 0777 "$dir"
	run loose
	expect_eq "loose directory: not read" 0 "$(read_from_cache loose)"
	exact loose
	chmod 0700 "$dir"
}

test_kept_and_read_again
test_spoilt_entries_not_read
test_loose_directory_not_read
finish
