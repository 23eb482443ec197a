#!/bin/bash
# make help: the knobs and targets of the Makefile's comment block, and nothing else
set -e
. "$(dirname "$0")/lib/common.sh"

out=$(make -s -C "$TOP" help)
first=$(sed -n 1p <<<"$out")
expect_eq "first line" "memtrack build.  Knobs:" "$first"
if grep -q '^Targets:.*install' <<<"$out"; then pass "lists install"; else fail "lists install" "$out"; fi
if grep -q '^  prefix=' <<<"$out" && grep -q '^  DESTDIR=' <<<"$out"; then
	pass "lists prefix= and DESTDIR="; else fail "lists prefix= and DESTDIR=" "$out"; fi
if grep -Eq 'MAKEFLAGS|^[A-Z_]+ [:+?]?=|^#' <<<"$out"; then
	fail "no line of the Makefile itself" "$out"
else
	pass "no line of the Makefile itself"
fi
finish
