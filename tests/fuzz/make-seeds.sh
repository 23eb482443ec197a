#!/bin/bash
# Writes a seed corpus for fuzz-artifact into <dir>: the synthetic artifacts
# of tests/unit/test-report, each as a file (first byte odd) and as its
# decompressed msgpack (first byte even, the harness compresses it again).
# Usage: tests/fuzz/make-seeds.sh <dir>   (after 'make unit')
set -e
cd "$(dirname "$0")/../.."
out=${1:?usage: $0 <dir>}
gen=${OUTPUT:-.output}/tests/unit/test-report
[ -x "$gen" ] || { echo "build $gen first: make unit" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$gen" --write "$tmp"
for f in "$tmp"/*.msgpack; do
	name=$(basename "$f" .msgpack)
	{ printf '\001'; cat "$f"; } >"$out/file-$name"
	{ printf '\003'; cat "$f"; } >"$out/file-filtered-$name"
	if zstd -dcq "$f" >"$tmp/raw" 2>/dev/null; then
		{ printf '\000'; cat "$tmp/raw"; } >"$out/msgpack-$name"
		{ printf '\002'; cat "$tmp/raw"; } >"$out/msgpack-filtered-$name"
	fi
done
echo "$(ls "$out" | wc -l) seeds in $out"
