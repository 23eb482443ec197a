#!/bin/bash
# make bench: the encoder benchmark, then memtrack track's slowdown on
# alloc_storm_procs against the bare workload, measured in the same run
# (interleaved, median of RUNS).  Not part of make test.
set -eu
cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-.output}
RUNS=${RUNS:-3}
PROCS=${PROCS:-16}
ALLOCS=${ALLOCS:-50000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$OUTPUT/bench/encoder-bench" "${BENCH_EVENTS:-4000000}"
echo

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(((t1 - t0) / 1000)); }

if [ "$(id -u)" -ne 0 ]; then
	echo "end to end: skipped (memtrack track needs root)"
	exit 0
fi
bare=() tracked=() rss=()
for _ in $(seq "$RUNS"); do
	bare+=("$(seconds tests/workloads/alloc_storm_procs "$PROCS" "$ALLOCS")")
	t0=$(date +%s%N)
	/usr/bin/time -f %M -o "$out/rss" ./memtrack track -q -o "$out" -- \
		tests/workloads/alloc_storm_procs "$PROCS" "$ALLOCS" >/dev/null
	t1=$(date +%s%N)
	tracked+=($(((t1 - t0) / 1000)))
	rss+=("$(cat "$out/rss")")
	rm -f "$out"/*.msgpack
done
b=$(printf '%s\n' "${bare[@]}" | median)
t=$(printf '%s\n' "${tracked[@]}" | median)
r=$(printf '%s\n' "${rss[@]}" | median)
events=$((PROCS * ALLOCS * 2))
echo "end to end: alloc_storm_procs $PROCS $ALLOCS ($events events), median of $RUNS"
echo "| run | wall ms | slowdown | overhead ns/event | memtrack peak RSS MiB |"
echo "|-----|---------|----------|-------------------|-----------------------|"
printf '| bare | %.1f | 1.0x | - | - |\n' "$(echo "$b / 1000" | bc -l)"
printf '| memtrack track | %.1f | %.1fx | %.0f | %.1f |\n' "$(echo "$t / 1000" | bc -l)" \
	"$(echo "$t / $b" | bc -l)" "$(echo "($t - $b) * 1000 / $events" | bc -l)" "$(echo "$r / 1024" | bc -l)"
