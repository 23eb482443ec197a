#!/bin/bash
# track + report: a C++ chain through a template and an inlined function, demangled, with lines
# backends: both
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

test_demangled_chain() {
	art=$(track_workload "$tmp" -- "$WORKLOADS/cxx_inline")
	expect_eq "cxx: demangled chain, inlined frame, lines" "$(cxx_inline_expected)" \
		"$(cxx_inline_chain "$art")"
	expect_eq "cxx: one Frame record says inlined" 1 \
		"$("$MEMTRACK" report --dump "$art" | jq -c 'select(.type == "Frame" and .inlined)' |
		   wc -l)"
	expect_eq "cxx: no version suffix in any symbol" 0 \
		"$("$MEMTRACK" report --dump "$art" | jq -r 'select(.type == "Frame") | .symbol' |
		   grep -c @ || true)"
	expect_eq "cxx: libc's frame by its name" "__libc_start_main" \
		"$("$MEMTRACK" report --json --stack-depth 0 "$art" | jq -r '.sites[] |
		   select(.calls == 7) | .frames[] | select(.symbol | startswith("__libc_start_m")) |
		   .symbol')"
}

test_raw_names() {
	expect_eq "cxx: --no-demangle" \
		"_ZN3app10make_blockEm _ZN3app4poolINS_4itemEE4growEm _ZN3app3runEi main" \
		"$(cxx_inline_chain "$art" --no-demangle | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"
}

test_text_table() {
	"$MEMTRACK" report --sort calls --top 1 "$art" >"$tmp/text"
	expect_eq "cxx: text table, templates shortened, inlined marked" \
		"app::make_block(unsigned long) (inlined) (cxx_inline)
app::pool<>::grow(unsigned long)+0xN (cxx_inline)
app::run(int)+0xN (cxx_inline)
main+0xN (cxx_inline)" \
		"$(sed -n '/Call sites by calls/,$p' "$tmp/text" | sed -n '4,7p' |
		   sed 's/^ *//; s/+0x[0-9a-f]*/+0xN/; s/ [^ ]*cxx_inline.cc:[0-9]*$//')"
	expect_eq "cxx: JSON keeps the template" "app::pool<app::item>::grow(unsigned long)" \
		"$(cxx_inline_chain "$art" | sed -n 2p | sed 's/ cxx_inline.cc:.*//')"
}

test_demangled_chain
test_raw_names
test_text_table
finish
