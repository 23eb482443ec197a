#!/bin/bash
# make install DESTDIR=: binary, preload shim, man pages, bash completion, license, schemas; the installed memtrack runs with its shim and shows its pages
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

root=$tmp/root
prefix=/usr/local
mt=$root$prefix/bin/memtrack
o=()
[ "${OUTPUT:-.output}" = .output ] || o=("O=$OUTPUT")

test_install() {
	local f missing=
	if ! make -s -C "$TOP" "${o[@]}" install DESTDIR="$root" >"$tmp/make.log" 2>&1; then
		fail "make install DESTDIR=" "$(tail -5 "$tmp/make.log")"
		return
	fi
	pass "make install DESTDIR="
	for f in bin/memtrack lib/memtrack/libmemtrack-preload.so share/man/man1/memtrack.1 \
		share/man/man1/memtrack-track.1 share/man/man1/memtrack-report.1 \
		share/man/man1/memtrack-stats.1 share/bash-completion/completions/memtrack \
		share/doc/memtrack/LICENSE share/memtrack/schema/memtrack-report.schema.json \
		share/memtrack/schema/memtrack-stats.schema.json; do
		[ -f "$root$prefix/$f" ] || missing="$missing $f"
	done
	expect_eq "every file installed" "" "$missing"
	expect_eq "the binary is executable" "-rwxr-xr-x" "$(stat -c %A "$mt")"
	if grep -q "GNU GENERAL PUBLIC LICENSE" "$root$prefix/share/doc/memtrack/LICENSE" &&
		grep -q "Version 2, June 1991" "$root$prefix/share/doc/memtrack/LICENSE"; then
		pass "LICENSE: the GPL-2.0 text"; else fail "LICENSE: the GPL-2.0 text" "not in it"; fi
}

# the installed binary finds the installed shim: <prefix>/lib/memtrack, under DESTDIR
test_runs() {
	local rc
	mkdir -p "$tmp/art"
	expect_eq "installed: --version" "memtrack version" "$("$mt" --version | cut -d' ' -f1,2)"
	rc=$(status "$mt" track -v -o "$tmp/art" -- "$WORKLOADS/malloc_free")
	expect_eq "installed: track runs" 0 "$rc"
	if grep -qF "the preload shim: $root$prefix/lib/memtrack/libmemtrack-preload.so" "$tmp/err"; then
		pass "installed: uses its installed shim"
	else
		fail "installed: uses its installed shim" "$(grep -i shim "$tmp/err")"
	fi
	"$MEMTRACK" report --json "$tmp"/art/*.msgpack >"$tmp/r.json"
	expect_eq "installed: the process went through the shim" preload \
		"$(jq -r '.processes[0].backend' "$tmp/r.json")"
	expect_eq "installed: its 100 mallocs" 100 "$(count "$tmp/r.json" Malloc)"
}

test_man() {
	local page=$root$prefix/share/man/man1/memtrack-report.1
	if man -l "$page" 2>/dev/null | grep -q "^MEMTRACK-REPORT(1)"; then
		pass "man -l of an installed page"; else fail "man -l of an installed page" "$(man -l "$page" 2>&1 | head -3)"; fi
	if MANPATH=/nonexistent "$mt" help report 2>"$tmp/err" | grep -q "^MEMTRACK-REPORT(1)"; then
		pass "installed: memtrack help report opens the installed page"
	else
		fail "installed: memtrack help report opens the installed page" "$(head -3 "$tmp/err")"
	fi
}

# complete <words...>: what the installed completion offers for the last word
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _memtrack
		echo "${COMPREPLY[*]}"' _ "$root$prefix/share/bash-completion/completions/memtrack" "$@"
}

test_completion() {
	expect_eq "completion: commands" report "$(complete_words memtrack rep)"
	expect_eq "completion: an option of report" --fail-if "$(complete_words memtrack report --fail)"
	expect_eq "completion: an option of track" --call-graph "$(complete_words memtrack track --call)"
	expect_eq "completion: help's commands" "stats" "$(complete_words memtrack help st)"
	expect_eq "completion: the values of --backend" "auto preload bpf" \
		"$(complete_words memtrack track --backend "")"
	expect_eq "completion: the values of --call-graph" "fp" \
		"$(complete_words memtrack track --call-graph f)"
}

test_uninstall() {
	make -s -C "$TOP" "${o[@]}" uninstall DESTDIR="$root" >/dev/null 2>&1
	expect_eq "make uninstall leaves no file" "" "$(find "$root" -type f)"
}

test_install
test_runs
test_man
test_completion
test_uninstall
finish
