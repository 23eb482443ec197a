#!/bin/bash
# track: the DWARF answers of one run serve the next, the same frames without reading the DWARF again
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

cache=$tmp/cache

# run: cxx_inline tracked with -v, the cache in $cache
run() {
	rm -f "$tmp"/*.msgpack
	art=$(MEMTRACK_CACHE_DIR=$cache track_workload "$tmp" -v -- "$WORKLOADS/cxx_inline" 2>/dev/null)
}

# read_and_cached: "<modules whose DWARF was read> <modules answered from the cache>"
read_and_cached() {
	sed -n 's/.*the DWARF of \([0-9]*\) read, \([0-9]*\) answered.*/\1 \2/p' "$tmp/track.err"
}

cache_file() {
	echo "$cache/$(readelf -n "$WORKLOADS/cxx_inline" | awk '/Build ID:/ { print $3 }')"
}

test_second_run_reads_no_dwarf() {
	local first
	run
	first=$(read_and_cached)
	expect_eq "first run: frames from the DWARF" "$(cxx_inline_expected)" "$(cxx_inline_chain "$art")"
	expect_eq "first run: nothing cached yet" 0 "${first#* }"
	expect_eq "first run: cxx_inline's answers kept" "memtrack-dwarf-cache 2 $(basename "$(cache_file)")" \
		"$(head -n 1 "$(cache_file)" | cut -d' ' -f1-3)"
	expect_eq "the cache directory is root's alone" 700 "$(stat -c %a "$cache")"
	run
	expect_eq "second run: the same frames" "$(cxx_inline_expected)" "$(cxx_inline_chain "$art")"
	expect_eq "second run: no DWARF read, every module answered" "0 ${first% *}" "$(read_and_cached)"
}

# a file that breaks a rule is ignored whole: the DWARF answers, and the file is written anew
test_corrupt_file() {
	printf '%s\n1000 9\nnot a frame\n' "$(head -n 1 "$(cache_file)")" >"$(cache_file).new"
	mv "$(cache_file).new" "$(cache_file)"
	run
	expect_eq "corrupt file: the frames" "$(cxx_inline_expected)" "$(cxx_inline_chain "$art")"
	expect_eq "corrupt file: written anew, without the bad entry" 0 "$(grep -c '^1000 9$' "$(cache_file)")"
	run
	expect_eq "corrupt file: then answered again" 0 "$(read_and_cached | cut -d' ' -f1)"
}

# a directory another user may write to is not used; the run goes on without it
test_dir_not_ours() {
	chmod 0777 "$cache"
	run
	expect_eq "a world-writable directory: said" 1 \
		"$(grep -c "no cache of DWARF answers: $cache may be written by another user" "$tmp/track.err")"
	expect_eq "a world-writable directory: the frames" "$(cxx_inline_expected)" "$(cxx_inline_chain "$art")"
	expect_eq "a world-writable directory: nothing answered from it" 0 "$(read_and_cached | cut -d' ' -f2)"
	chmod 0700 "$cache"
}

# DWARF that answers nothing (its units zeroed) is not kept: a good debug file later must be read
test_unreadable_dwarf_not_kept() {
	local id size
	mkdir -p "$tmp/bad"
	cp "$WORKLOADS/cxx_inline" "$tmp/bad/"
	objcopy --only-keep-debug "$tmp/bad/cxx_inline" "$tmp/bad/full.debug"
	strip --strip-all "$tmp/bad/cxx_inline"
	size=$(readelf -S -W "$tmp/bad/full.debug" | awk '$2 == ".debug_info" { print $6 }')
	head -c "$((16#$size))" /dev/zero >"$tmp/bad/zeros"
	id=$(readelf -n "$tmp/bad/cxx_inline" | awk '/Build ID:/ { print $3 }')
	mkdir -p "$tmp/bad/dbg/.build-id/${id:0:2}"
	objcopy --update-section .debug_info="$tmp/bad/zeros" "$tmp/bad/full.debug" \
		"$tmp/bad/dbg/.build-id/${id:0:2}/${id:2}.debug"
	rm -f "$tmp"/*.msgpack
	MEMTRACK_DEBUG_DIRS=$tmp/bad/dbg MEMTRACK_CACHE_DIR=$tmp/bad/cache \
		track_workload "$tmp" -- "$tmp/bad/cxx_inline" >/dev/null 2>&1
	expect_eq "zeroed DWARF: nothing kept for it" 0 "$(find "$tmp/bad/cache" -name "$id" | wc -l)"
}

# another user's program of the victim's build id, its DWARF lying (the same code, another
# name for make_block): root's run of it keeps its answers, and root's next run of the
# victim must name the victim's frames.  Before: "EVIL_BLOCK (inlined)", from the cache.
test_poisoned_build_id() {
	local id evil=$tmp/evil
	id=$(readelf -n "$WORKLOADS/cxx_inline" | awk '/Build ID:/ { print $3 }')
	mkdir -p "$evil"
	sed 's/make_block/EVIL_BLOCK/g' "$WORKLOADS/cxx_inline.cc" >"$evil/cxx_inline.cc"
	"${CXX:-g++}" -O2 -g -fomit-frame-pointer -Wall -std=c++17 -Wl,--build-id=0x"$id" \
		-o "$evil/cxx_inline" "$evil/cxx_inline.cc"
	chown -R 65534:65534 "$evil"
	expect_eq "poison: the fake bears the victim's build id" "$id" \
		"$(readelf -n "$evil/cxx_inline" | awk '/Build ID:/ { print $3 }')"
	rm -f "$tmp"/*.msgpack "$(cache_file)"
	art=$(MEMTRACK_CACHE_DIR=$cache track_workload "$tmp" -- "$evil/cxx_inline" 2>/dev/null)
	expect_eq "poison: the fake's run names its lie" 1 \
		"$(cxx_inline_chain "$art" | grep -c '^app::EVIL_BLOCK(unsigned long) (inlined)')"
	expect_eq "poison: its answers are kept" 1 "$(grep -c -m1 EVIL_BLOCK "$(cache_file)")"
	run
	expect_eq "poison: root's next run of the victim names its own frames" \
		"$(cxx_inline_expected)" "$(cxx_inline_chain "$art")"
	expect_eq "poison: and the fake's answers are replaced" 0 "$(grep -c EVIL_BLOCK "$(cache_file)")"
	run
	expect_eq "poison: then the victim's own are answered from the cache" 0 \
		"$(read_and_cached | cut -d' ' -f1)"
}

# under sudo, MEMTRACK_CACHE_DIR is the user's word: made as the user, and never a directory
# the user could not write (before: root wrote its files into any root-owned directory)
test_sudo_cache_dir() {
	local own=$tmp/sudo/own
	mkdir -p "$tmp/sudo/root" && chmod 755 "$tmp" && chmod 777 "$tmp/sudo"
	rm -rf "$tmp/sudo/out"
	SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody MEMTRACK_CACHE_DIR=$tmp/sudo/root \
		"$MEMTRACK" track -v -q -o "$tmp/sudo/out" -- "$WORKLOADS/cxx_inline" 2>"$tmp/sudo.err"
	expect_eq "sudo: a root directory as the cache: nothing written there" 0 \
		"$(find "$tmp/sudo/root" -type f | wc -l)"
	expect_eq "sudo: and said" 1 "$(grep -c "no cache of DWARF answers: .*$tmp/sudo/root" "$tmp/sudo.err")"
	rm -rf "$tmp/sudo/out"
	SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody MEMTRACK_CACHE_DIR=$own \
		"$MEMTRACK" track -q -o "$tmp/sudo/out" -- "$WORKLOADS/cxx_inline" 2>/dev/null
	expect_eq "sudo: the user's cache directory is made as the user" 65534 "$(stat -c %u "$own")"
	expect_eq "sudo: cxx_inline's answers kept in it" 1 \
		"$(head -n 1 "$own/$(basename "$(cache_file)")" | grep -c '^memtrack-dwarf-cache 2 ')"
	chmod 700 "$tmp"
}

# MEMTRACK_CACHE_DIR="" turns it off
test_off() {
	rm -f "$tmp"/*.msgpack
	art=$(MEMTRACK_CACHE_DIR='' track_workload "$tmp" -v -- "$WORKLOADS/cxx_inline" 2>/dev/null)
	expect_eq "off: said" 1 "$(grep -c 'no cache of DWARF answers: MEMTRACK_CACHE_DIR is empty' "$tmp/track.err")"
	expect_eq "off: the frames" "$(cxx_inline_expected)" "$(cxx_inline_chain "$art")"
}

test_second_run_reads_no_dwarf
test_corrupt_file
test_dir_not_ours
test_unreadable_dwarf_not_kept
test_poisoned_build_id
test_sudo_cache_dir
test_off
finish
