#!/bin/bash
# report: leak suppressions, built in (libstdc++'s emergency pool) and from a file (LSan's leak: lines)
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

POOL=72704	# libstdc++'s emergency exception pool (GCC 12, x86-64): 71.0 KiB

# cxx_new_delete frees every block it allocates: only the pool is live at exit
test_builtin() {
	local cg art
	for cg in dwarf fp; do
		mkdir -p "$tmp/$cg"
		art=$(track_workload "$tmp/$cg" --call-graph "$cg" -- "$WORKLOADS/cxx_new_delete")
		"$MEMTRACK" report --json "$art" >"$tmp/on.json"
		expect_eq "$cg: 0 leaked bytes by default" 0 "$(jq .leaked_bytes "$tmp/on.json")"
		expect_eq "$cg: the pool is suppressed" "$POOL" "$(jq .suppressed_bytes "$tmp/on.json")"
		expect_eq "$cg: by the built-in rule" "1 $POOL built in" \
			"$(jq -r '.suppressions[0] | "\(.count) \(.bytes) \(.source)"' "$tmp/on.json")"
		expect_eq "$cg: nor leaked by its process" 0 "$(jq '.processes[0].leaked_bytes' "$tmp/on.json")"
		"$MEMTRACK" report --json --no-default-suppressions "$art" >"$tmp/off.json"
		expect_eq "$cg: 71 KiB leaked with suppressions off" "$POOL" "$(jq .leaked_bytes "$tmp/off.json")"
		expect_eq "$cg: nothing suppressed with them off" 0 "$(jq .suppressed_bytes "$tmp/off.json")"
	done
	"$MEMTRACK" report -q "$art" >"$tmp/text"
	if grep -q "^  live at exit  *0 blocks, 0 B" "$tmp/text" &&
		grep -q "^  suppressed  *1 blocks, 71.0 KiB ($POOL bytes)" "$tmp/text" &&
		grep -q "^  *1  *71.0 KiB  libstdc++'s emergency exception pool (built in)" "$tmp/text"; then
		pass "text: says how much was suppressed, and by what"
	else
		fail "text: says how much was suppressed, and by what" "$(sed -n '/^Heap/,/^$/p;/^Suppressed/,/^$/p' "$tmp/text")"
	fi
	"$MEMTRACK" report -q --no-default-suppressions "$art" >"$tmp/text"
	if grep -q "^  live at exit  *1 blocks, 71.0 KiB" "$tmp/text" && ! grep -q '^Suppressed' "$tmp/text"; then
		pass "text: the pool leaks with suppressions off"
	else
		fail "text: the pool leaks with suppressions off" "$(sed -n '/^Heap/,/^$/p' "$tmp/text")"
	fi
}

# malloc_free leaves 40 blocks (3220 bytes) of main's live
test_file() {
	local art rc
	mkdir -p "$tmp/c"
	art=$(track_workload "$tmp/c" -- "$WORKLOADS/malloc_free")
	printf '# a comment\n\nleak:^mai$\n  leak:^main$  \n' >"$tmp/main.supp"
	"$MEMTRACK" report --json --suppressions "$tmp/main.supp" "$art" >"$tmp/j"
	expect_eq "file: main's blocks suppressed" "0 40 3220" \
		"$(jq -r '"\(.leaked_bytes) \(.suppressed_count) \(.suppressed_bytes)"' "$tmp/j")"
	expect_eq "file: by the rule of line 4" "^main$ 4 40" \
		"$(jq -r '.suppressions[] | select(.count > 0) | "\(.rule) \(.line) \(.count)"' "$tmp/j")"
	printf 'leak:malloc_free\n' >"$tmp/module.supp"
	"$MEMTRACK" report --json --suppressions "$tmp/module.supp" "$art" >"$tmp/j"
	expect_eq "file: a module pattern" 3220 "$(jq .suppressed_bytes "$tmp/j")"
	printf 'leak:^mai$\n' >"$tmp/no.supp"
	"$MEMTRACK" report --json --suppressions "$tmp/no.supp" "$art" >"$tmp/j"
	expect_eq "file: an anchored pattern that does not match" 3220 "$(jq .leaked_bytes "$tmp/j")"
	"$MEMTRACK" report --pprof "$tmp/p.pb.gz" --suppressions "$tmp/main.supp" "$art"
	pprof_decode "$tmp/p.pb.gz" "$tmp" >"$tmp/p.json"
	"$MEMTRACK" report --pprof "$tmp/all.pb.gz" "$art"
	pprof_decode "$tmp/all.pb.gz" "$tmp" >"$tmp/all.json"
	expect_eq "file: --pprof leaks the same as --json" "0 3220" \
		"$(jq '.totals["leaked_space/bytes"]' "$tmp/p.json") $(jq '.totals["leaked_space/bytes"]' "$tmp/all.json")"
	rc=$(status "$MEMTRACK" report --html "$tmp/p.html" --suppressions "$tmp/main.supp" "$art")
	expect_eq "file: --html takes them too" 0 "$rc"
	rc=$(status "$MEMTRACK" report --fail-if 'leaked>0' --suppressions "$tmp/main.supp" "$art")
	expect_eq "file: --fail-if leaked>0 passes once suppressed" 0 "$rc"

	printf 'leak:x\ninterceptor_via_fun:y\n' >"$tmp/bad.supp"
	rc=$(status "$MEMTRACK" report --suppressions "$tmp/bad.supp" "$art")
	expect_eq "bad file: exit 1" 1 "$rc"
	expect_eq "bad file: which line and why" \
		"error: --suppressions: $tmp/bad.supp:2: unknown suppression type 'interceptor_via_fun' (only leak: suppressions apply to memtrack)" \
		"$(cat "$tmp/err")"
	rc=$(status "$MEMTRACK" report --suppressions "$tmp/missing.supp" "$art")
	expect_eq "missing file: exit 1" 1 "$rc"
	rc=$(status "$MEMTRACK" report --dump --suppressions "$tmp/main.supp" "$art")
	expect_eq "--dump takes no suppressions: usage error" 129 "$rc"
}

test_builtin
test_file
finish
