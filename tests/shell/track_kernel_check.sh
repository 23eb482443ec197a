#!/bin/bash
# track: a kernel without BTF, uprobes or uprobe_multi (< 6.6) gets one message naming what is missing, before anything is done
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# fake_kernel <dir> <release> [btf] [uprobes]: a tree that mimics /sys and /proc
fake_kernel() {
	local root=$1 what
	mkdir -p "$root/proc/sys/kernel"
	echo "$2" >"$root/proc/sys/kernel/osrelease"
	shift 2
	for what in "$@"; do
		case $what in
		btf) mkdir -p "$root/sys/kernel/btf" && : >"$root/sys/kernel/btf/vmlinux" ;;
		uprobes) mkdir -p "$root/sys/bus/event_source/devices/uprobe" ;;
		esac
	done
}

test_lacks_all() {
	local rc
	fake_kernel "$tmp/old" 5.10.0-21-amd64
	mkdir -p "$tmp/art"
	rc=$(MEMTRACK_TEST_KERNEL_ROOT=$tmp/old status "$MEMTRACK" track -o "$tmp/art" \
		--stats "$tmp/art/stats.jsonl" -- "$WORKLOADS/malloc_free")
	expect_eq "old kernel: fatal" 128 "$rc"
	expect_eq "old kernel: one line naming all three" \
		"fatal: this kernel lacks what memtrack track needs: BTF (/sys/kernel/btf/vmlinux is missing: a kernel built with CONFIG_DEBUG_INFO_BTF=y); uprobes (/sys/bus/event_source/devices/uprobe is missing: a kernel built with CONFIG_UPROBE_EVENTS=y); uprobe_multi links (Linux 6.6 or later; this is 5.10.0-21-amd64)" \
		"$(cat "$tmp/err")"
	expect_eq "old kernel: nothing written, not even the stats file" "" "$(ls "$tmp/art")"
	rc=$(MEMTRACK_TEST_KERNEL_ROOT=$tmp/old status "$MEMTRACK" track -h)
	expect_eq "old kernel: -h still shows the usage" 129 "$rc"
}

test_lacks_one() {
	local rc
	fake_kernel "$tmp/nobtf" 6.6.0 uprobes
	rc=$(MEMTRACK_TEST_KERNEL_ROOT=$tmp/nobtf status "$MEMTRACK" track --check-bpf)
	expect_eq "no BTF: --check-bpf says so" 128 "$rc"
	expect_eq "no BTF: names BTF only" \
		"fatal: this kernel lacks what memtrack track needs: BTF (/sys/kernel/btf/vmlinux is missing: a kernel built with CONFIG_DEBUG_INFO_BTF=y)" \
		"$(cat "$tmp/err")"
}

test_has_all() {
	local rc
	fake_kernel "$tmp/ok" 6.6.0 btf uprobes
	mkdir -p "$tmp/ok-out"
	rc=$(MEMTRACK_TEST_KERNEL_ROOT=$tmp/ok status "$MEMTRACK" track -q -o "$tmp/ok-out" -- "$WORKLOADS/malloc_free")
	expect_eq "6.6 with BTF and uprobes: tracks" 0 "$rc"
	rc=$(status "$MEMTRACK" track -q -o "$tmp/ok-out" -- "$WORKLOADS/malloc_free")
	expect_eq "this machine: tracks" 0 "$rc"
}

test_lacks_all
test_lacks_one
test_has_all
finish
