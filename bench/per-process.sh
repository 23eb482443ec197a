#!/bin/bash
# The per-process cost of following a tree: `sh -c` starting N `/bin/true`
# (200), bare and under memtrack with its defaults, `--call-graph no` and
# `--backend bpf`; ROUNDS (5) interleaved rounds, medians; ms per process
# beyond bare.  And `make -j2` of a ten-file C project (tests/compat's
# setup_cproject), bare and under the defaults, as a ratio.
#
# Usage: bench/per-process.sh [<memtrack>...]   (default: ./memtrack)
# Several binaries (another build's, for a before/after) are measured in the
# same rounds, each row named by its path.  MAKE=0 leaves the make rows out.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-200}
ROUNDS=${ROUNDS:-5}
MAKE=${MAKE:-1}
[ $# -gt 0 ] || set -- "$TOP/memtrack"
work=$(mktemp -d /tmp/memtrack-per-process.XXXXXX)
trap 'rm -rf "$work"' EXIT

loop="i=0; while [ \$i -lt $N ]; do /bin/true; i=\$((i + 1)); done"
# label<TAB>binary<TAB>options of track (bare: no binary)
rows=("bare	-	")
for mt in "$@"; do
	rows+=("$mt defaults	$mt	" "$mt --call-graph no	$mt	--call-graph no"
	       "$mt --backend bpf	$mt	--backend bpf")
done

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
	fi
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

if [ "$MAKE" != 0 ]; then
	# setup_cproject writes the project into the current directory
	# shellcheck source=/dev/null
	(cd "$work" && mkdir cproject && cd cproject && WORKLOADS=$TOP/tests/workloads \
		bash -c "source <(sed -n '/^setup_cproject()/,/^}/p' '$TOP/tests/compat/cases.sh'); setup_cproject")
fi

for _ in $(seq "$ROUNDS"); do
	for row in "${rows[@]}"; do
		IFS='	' read -r label bin opts <<<"$row"
		run_row "$bin" "$opts" sh -c "$loop" >>"$work/procs.$(echo "$label" | md5sum | cut -c1-8)"
		if [ "$MAKE" != 0 ] && [[ "$label" == bare || "$label" == *defaults ]]; then
			rm -f "$work"/cproject/*.o "$work"/cproject/prog
			(cd "$work/cproject" && run_row "$bin" "$opts" make -s -j2) \
				>>"$work/make.$(echo "$label" | md5sum | cut -c1-8)"
		fi
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
