#!/bin/bash
# The per-process cost of following a tree: `sh -c` starting N `/bin/true`
# (200), bare and under memtrack with its defaults, `--call-graph no` and
# `--backend bpf`; ROUNDS (5) interleaved rounds, medians; ms per process
# beyond bare.  And `make -j2` of a ten-file C project (tests/compat's
# setup_cproject), bare and under the defaults, as a ratio.  And the BPF
# fan-out: `alloc_storm_procs 200 100` and `2000 100` (children forked at
# once, 100 malloc each) bare and under `--backend bpf`, with libc's probes
# shared after 16 processes (the default) and, at 200 only, never
# (`--shared-probes 0`, minutes at 2000); FANOUT=0 leaves it out.
#
# Usage: bench/per-process.sh [<memtrack>...]   (default: ./memtrack)
# Several binaries (another build's, for a before/after) are measured in the
# same rounds, each row named by its path.  MAKE=0 leaves the make rows out.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-200}
ROUNDS=${ROUNDS:-5}
MAKE=${MAKE:-1}
FANOUT=${FANOUT:-1}
[ $# -gt 0 ] || set -- "$TOP/memtrack"
# the make rows run in the project's directory: a relative path would not be found there
bins=()
for mt in "$@"; do
	bins+=("$(realpath "$mt")")
done
set -- "${bins[@]}"
work=$(mktemp -d /tmp/memtrack-per-process.XXXXXX)
trap 'rm -rf "$work"' EXIT

loop="i=0; while [ \$i -lt $N ]; do /bin/true; i=\$((i + 1)); done"
# label<TAB>binary<TAB>options of track (bare: no binary), grouped by options: a row
# after a --backend bpf one starts while the kernel's uprobe lock is slow for forks
# (rcu_sync), and ran 5-10% slower than the same row after another
modes=("defaults	" "--call-graph no	--call-graph no" "--backend bpf	--backend bpf")
rows=("bare	-	")
for mode in "${modes[@]}"; do
	for mt in "$@"; do
		rows+=("$mt ${mode%%	*}	$mt	${mode#*	}")
	done
done

# the rows of round r: the binaries of each mode in turn, reversed every other round
round_rows() {
	local r=$1 i j per=$(($# > 1 ? $# - 1 : 1))

	echo "${rows[0]}"
	for ((i = 1; i < ${#rows[@]}; i += per)); do
		for ((j = 0; j < per; j++)); do
			if [ $((r % 2)) = 0 ]; then
				echo "${rows[i + j]}"
			else
				echo "${rows[i + per - 1 - j]}"
			fi
		done
	done
}

# seconds the command took, on stdout; its output to /dev/null
seconds() {
	local t0 t1

	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 </dev/null
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / 1000 ))" | awk '{ printf "%.4f\n", $1 / 1e6 }'
}

run_row() {	# <binary or -> <options> <command...>
	local bin=$1 opts=$2

	shift 2
	if [ "$bin" = - ]; then
		seconds "$@"
	else
		# shellcheck disable=SC2086
		seconds "$bin" track -q -o "$work/out" $opts -- "$@"
		rm -f "$work"/out/*.msgpack
		wait_for_guardians
	fi
}

# memtrack's guardian closes the uprobe links after memtrack has exited, 20 ms or more
# each, holding the kernel's uprobe lock, which every fork waits for: the next row waits
# until it is gone (at most a minute)
wait_for_guardians() {
	for _ in $(seq 600); do
		pgrep -f -- "track -q -o $work/out" >/dev/null || return 0
		sleep 0.1
	done
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

if [ "$MAKE" != 0 ]; then
	# setup_cproject writes the project into the current directory
	# shellcheck source=/dev/null
	(cd "$work" && mkdir cproject && cd cproject && WORKLOADS=$TOP/tests/workloads \
		bash -c "source <(sed -n '/^setup_cproject()/,/^}/p' '$TOP/tests/compat/cases.sh'); setup_cproject")
fi

for r in $(seq "$ROUNDS"); do
	mapfile -t this_round < <(round_rows "$r" "$@")
	for row in "${this_round[@]}"; do
		IFS='	' read -r label bin opts <<<"$row"
		run_row "$bin" "$opts" sh -c "$loop" >>"$work/procs.$(echo "$label" | md5sum | cut -c1-8)"
		if [ "$MAKE" != 0 ] && [[ "$label" == bare || "$label" == *defaults ]]; then
			rm -f "$work"/cproject/*.o "$work"/cproject/prog
			(cd "$work/cproject" && run_row "$bin" "$opts" make -s -j2) \
				>>"$work/make.$(echo "$label" | md5sum | cut -c1-8)"
		fi
	done
done

# label<TAB>binary<TAB>options of track (- for none: read joins empty fields)<TAB>children
fan_rows=("bare	-	-	200 2000")
for mt in "$@"; do
	if "$mt" track -h 2>&1 | grep -q -- --shared-probes; then
		fan_rows+=("$mt --backend bpf	$mt	--backend bpf	200 2000"
			   "$mt --backend bpf --shared-probes 0	$mt	--backend bpf --shared-probes 0	200")
	else	# a build from before shared probes: minutes at 2000
		fan_rows+=("$mt --backend bpf	$mt	--backend bpf	200")
	fi
done
for _ in $(seq "$([ "$FANOUT" != 0 ] && echo "$ROUNDS" || echo 0)"); do
	for row in "${fan_rows[@]}"; do
		IFS='	' read -r label bin opts counts <<<"$row"
		for n in $counts; do
			run_row "$bin" "$opts" "$TOP/tests/workloads/alloc_storm_procs" "$n" 100 \
				>>"$work/fan$n.$(echo "$label" | md5sum | cut -c1-8)"
		done
	done
done

med() { median <"$work/$1.$(echo "$2" | md5sum | cut -c1-8)"; }
bare=$(med procs bare)
printf '## per process: %d `/bin/true` from one sh, medians of %d interleaved rounds\n\n' "$N" "$ROUNDS"
printf '| row | s | ms per process over bare |\n|---|---|---|\n'
for row in "${rows[@]}"; do
	label=${row%%	*}
	s=$(med procs "$label")
	awk -v l="$label" -v s="$s" -v b="$bare" -v n="$N" \
		'BEGIN { printf "| %s | %.3f | %s |\n", l, s, l == "bare" ? "-" : sprintf("%.2f", (s - b) * 1000 / n) }'
done
if [ "$MAKE" != 0 ]; then
	mbare=$(med make bare)
	printf '\n## make -j2 of a ten-file C project\n\n| row | s | x bare |\n|---|---|---|\n'
	for row in "${rows[@]}"; do
		label=${row%%	*}
		[[ "$label" == bare || "$label" == *defaults ]] || continue
		s=$(med make "$label")
		awk -v l="$label" -v s="$s" -v b="$mbare" 'BEGIN { printf "| %s | %.3f | %.2f |\n", l, s, s / b }'
	done
fi
if [ "$FANOUT" != 0 ]; then
	printf '\n## BPF fan-out: alloc_storm_procs N 100, medians of %d interleaved rounds\n\n' "$ROUNDS"
	printf '| row | N=200 s | N=2000 s | 2000 / 200 |\n|---|---|---|---|\n'
	for row in "${fan_rows[@]}"; do
		IFS='	' read -r label _ _ counts <<<"$row"
		a=$(med fan200 "$label")
		b=-
		[[ " $counts " == *" 2000 "* ]] && b=$(med fan2000 "$label")
		awk -v l="$label" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %.3f | %s | %s |\n", l, a,
			b == "-" ? "-" : sprintf("%.3f", b), b == "-" ? "-" : sprintf("%.1fx", b / a) }'
	done
fi
