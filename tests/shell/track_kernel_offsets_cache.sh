#!/bin/bash
# track: the kernel's offsets read from its BTF by one run serve the runs after it for the
# rest of the boot (/run/memtrack/kernel-offsets, root's alone), and those runs stay exact
# under both backends; a file others could have written is not read, and the next run
# replaces it
# timeout: 120
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf
[ "$(id -u)" = 0 ] || skip "the offsets are kept for root's runs only"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

file=/run/memtrack/kernel-offsets
said="the kernel's offsets of this boot, from $file"

run() {
	calloc_run "$tmp" "$@"
}

read_from_file() {
	grep -c "$said" "$tmp/$1/track.err" || true
}

exact() {
	calloc_exact "$tmp" "$1"
}

test_kept_and_read_again() {
	rm -f "$file"
	run first
	expect_eq "first run: read from the BTF" 0 "$(read_from_file first)"
	expect_eq "first run: kept, root's alone" "600 0 200" "$(stat -c '%a %u %s' "$file" 2>&1)"
	exact first
	run second
	expect_eq "second run: read from the file" 1 "$(read_from_file second)"
	exact second
	run bpf --backend bpf
	expect_eq "bpf: read from the file" 1 "$(read_from_file bpf)"
	exact bpf
}

test_file_others_could_write_not_read() {
	chmod 0666 "$file"
	run loose --backend bpf
	expect_eq "loose: not read" 0 "$(read_from_file loose)"
	exact loose
	expect_eq "loose: replaced, root's alone again" "600 0 200" "$(stat -c '%a %u %s' "$file" 2>&1)"
	local before
	before=$(sha256sum /etc/passwd)
	rm -f "$file"
	ln -s /etc/passwd "$file"
	run link
	expect_eq "link: not read" 0 "$(read_from_file link)"
	exact link
	expect_eq "link: replaced by a file" "regular file" "$(stat -c '%F' "$file" 2>&1)"
	expect_eq "link: its target untouched" "$before" "$(sha256sum /etc/passwd)"
}

test_kept_and_read_again
test_file_others_could_write_not_read
finish
