#!/bin/bash
# track: mmap, munmap, mremap and brk events, their addresses and sizes
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# events <type> <size>: the addresses of that type's events of that size, sorted
events() {
	"$MEMTRACK" report --dump "$art" |
		jq -r --arg t "$1" --argjson s "$2" 'select(.type == $t and .size == $s) | .addr' | sort
}

# printed <word> [<field>]: the addresses mmap_brk printed after that word, sorted
printed() {
	awk -v w="$1" -v f="${2:-2}" '$1 == w { print $f }' "$tmp/track.out" | sort
}

test_syscalls() {
	art=$(track_workload "$tmp" -- "$WORKLOADS/mmap_brk")
	expect_eq "mmap_brk ran: 5 mmap, 3 munmap, 1 mremap, 2 brk" "5 3 1 2" \
		"$(printed mmap | wc -l) $(printed munmap | wc -l) $(printed mremap | wc -l) $(printed brk | wc -l)"
	expect_eq "5 mmap of 11 pages, at the addresses mmap returned" \
		"$(printed mmap)" "$(events Mmap 45056)"
	expect_eq "3 munmap of 11 pages and the mremap's old range" \
		"$( (printed munmap; printed mremap 2) | sort)" "$(events Munmap 45056)"
	expect_eq "the mremap's new range of 23 pages" "$(printed mremap 3)" "$(events Mmap 94208)"
	expect_eq "2 brk moves, to the breaks sbrk left" "$(printed brk)" \
		"$("$MEMTRACK" report --dump "$art" | jq -r 'select(.type == "Brk") | .addr' | sort |
			grep -Fx -f <(printed brk))"
}

test_syscalls
finish
