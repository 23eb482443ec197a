#!/bin/bash
# make demo: track a bundled workload (a process tree of 4 children, each
# doing 20000 malloc/free pairs) and print what memtrack saw.
set -e
cd "$(dirname "$0")/.."
out=$(mktemp -d /tmp/memtrack-demo.XXXXXX)

echo "$ memtrack track -o $out --stats $out/stats.jsonl -- tests/workloads/alloc_storm_procs 4 20000"
./memtrack track -o "$out" --stats "$out/stats.jsonl" -- tests/workloads/alloc_storm_procs 4 20000
artifact=$(ls "$out"/*.MemtrackArtifact.msgpack)
echo
echo "$ memtrack report $artifact"
./memtrack report "$artifact"
echo
echo "$ memtrack stats $out/stats.jsonl"
./memtrack stats "$out/stats.jsonl" || true
echo
echo "(files are in $out)"
