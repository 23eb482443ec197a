#!/bin/bash
# report --timeline: a PNG of the live heap over time through gnuplot, in the text's units (KiB, MiB)
set -e
. "$(dirname "$0")/lib/common.sh"

command -v gnuplot >/dev/null || skip "gnuplot is not installed"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp"

rc=0
"$MEMTRACK" report --timeline "$tmp/heap.png" "$tmp/tree.msgpack" >/dev/null || rc=$?
expect_eq "--timeline exits 0" 0 "$rc"
expect_eq "a PNG" "PNG" "$(head -c 4 "$tmp/heap.png" | tail -c 3)"
rc=0
"$MEMTRACK" report --timeline /nonexistent/dir/x.png "$tmp/tree.msgpack" >/dev/null 2>"$tmp/err" || rc=$?
expect_eq "an unwritable PNG exits 1" 1 "$rc"
expect_eq "an unwritable PNG: says why" \
	"error: cannot create plot '/nonexistent/dir/x.png': No such file or directory" "$(cat "$tmp/err")"

# the axis in the text's unit (powers of 1024), not gnuplot's MB
"$MEMTRACK" report -q --gnuplot "$tmp/heap.gp" "$tmp/tree.msgpack" >"$tmp/text"
unit=$(sed -n 's/^  peak live heap  *[0-9.]* \([KMGT]iB\) .*/\1/p' "$tmp/text")
peak=$(sed -n 's/^  peak live heap  *\([0-9.]*\) .*/\1/p' "$tmp/text")
peak_bytes=$(sed -n 's/^  peak live heap .*(\([0-9]*\) bytes).*/\1/p' "$tmp/text")
divisor=$(sed -n 's/.*using 1:(\$2\/\([0-9]*\)).*/\1/p' "$tmp/heap.gp" | sort -u)
expect_eq "the y axis in the text's unit" "set ylabel '$unit'" "$(grep '^set ylabel' "$tmp/heap.gp")"
expect_eq "each series scaled by one divisor" 1 "$(echo "$divisor" | wc -l)"
expect_eq "the peak on the axis is the text's" "$peak" \
	"$(gnuplot -e "print sprintf('%.1f', $peak_bytes / $divisor.)" 2>&1)"

# no heap event at all (a static program, mmap and brk only): gnuplot refused an empty range
write_samples test-plot-names "$tmp/names"
rc=0
"$MEMTRACK" report -q --timeline "$tmp/none.png" "$tmp/names/no-heap.msgpack" >/dev/null \
	2>"$tmp/err" || rc=$?
expect_eq "no heap events: exit 0, nothing said" "0 " "$rc $(cat "$tmp/err")"
expect_eq "no heap events: a PNG" "PNG" "$(head -c 4 "$tmp/none.png" | tail -c 3)"
finish
