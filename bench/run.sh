#!/bin/bash
# make bench: what memtrack costs, against the bare workload, the empty-uprobe
# floor, heaptrack and bcc's memleak, measured in one run and written to
# bench/results/.  Not part of make test.  See bench/README.md for the parts,
# the knobs and how to read the tables.
set -eu
cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-.output}
B=$OUTPUT/bench
W=tests/workloads

RUNS=${RUNS:-3}			# runs per row of the overhead table (median)
N=${N:-16}			# processes of alloc_storm_procs, threads of alloc_storm_threads
ALLOCS=${ALLOCS:-50000}		# malloc+free pairs of each, in the traced runs
FIXED_RUNS=${FIXED_RUNS:-10}	# runs per row of the fixed cost table
REPORT_RUNS=${REPORT_RUNS:-3}
REPORT_EVENTS=${REPORT_EVENTS:-10000000}	# events of the synthetic artifact
HT_ALLOCS=${HT_ALLOCS:-125000}	# pairs per thread of heaptrack's recording for heaptrack_print
ENCODER_EVENTS=${ENCODER_EVENTS:-4000000}
QUIET_WAIT=${QUIET_WAIT:-10}	# s to wait for other tracers' uprobes to go, per measurement
QUIET_BUDGET=${QUIET_BUDGET:-120}	# s of such waiting in all, then measure regardless
RESULTS=${RESULTS:-bench/results}

work=$(mktemp -d /tmp/memtrack-bench.XXXXXX)
ml_pid=
held_pid=
cleanup() {
	# never leave a tracer attached or a workload stopped behind us
	set +e
	[ -n "$ml_pid" ] && stop_memleak
	[ -n "$held_pid" ] && kill -KILL "$held_pid" 2>/dev/null
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	rm -rf "$work"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

log() { printf '%s\n' "$*" >&2; }
die() { log "bench: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root: memtrack track, the floor and memleak load BPF"
[ -x ./memtrack ] || die "./memtrack is missing: run make first"
for f in timeit floor synth-artifact encoder-bench; do
	[ -x "$B/$f" ] || die "$B/$f is missing: run make bench"
done
for f in alloc_storm_procs alloc_storm_threads; do
	[ -x "$W/$f" ] || die "$W/$f is missing: run make workloads"
done

# ---- helpers ---------------------------------------------------------------

mt_dir() { echo "$work/$1.$2.$3"; }	# <memtrack row> <workload> <round>: its artifact's directory

kv() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'; }
calc() {	# arithmetic on medians; nan in, nan out
	case $1 in
	*nan*) echo nan ;;
	*) awk "BEGIN { x = $1; print x }" 2>/dev/null || echo nan ;;
	esac
}
fmt() { awk -v x="$2" "BEGIN { if (x == \"nan\" || x == \"\") print \"-\"; else printf \"$1\", x }"; }

# uprobes that other programs hold right now (others' memtrack, perf, bcc):
# with them in place every process on the machine traps, ours included
foreign_uprobes() {
	local links perfs
	links=$(bpftool link list -j 2>/dev/null |
		jq '[.[] | select(.type == 12 or .type == "uprobe_multi" or .type == "perf_event")] | length' 2>/dev/null || echo 0)
	perfs=$(bpftool perf list -j 2>/dev/null |
		jq '[.[] | select(.fd_type == "uprobe" or .fd_type == "uretprobe")] | length' 2>/dev/null || echo 0)
	echo $((links + perfs))
}

# processes that hold uprobes and are not ours (ours carry the token in their
# environment): someone else's memtrack, bpftrace or bcc tool
token=$$.$RANDOM
export MEMTRACK_BENCH_TOKEN=$token
foreign_tracers() {
	local p out=
	for p in $(pgrep -x 'memtrack|floor|bpftrace|memleak-bpfcc' 2>/dev/null) \
		 $(pgrep -f '/memleak' 2>/dev/null); do
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" |
			grep -qx "MEMTRACK_BENCH_TOKEN=$token" && continue
		out="$out $(cat "/proc/$p/comm" 2>/dev/null):$p"
	done
	echo "$out"
}

measured=0 contaminated=0 waited=0 watch_pid=
settle() {	# <dirty file> [ours-attached]: waits for a quiet machine; notes what remains
	local t=0 f
	while [ -n "$(foreign_tracers)" ] && [ "$t" -lt "$QUIET_WAIT" ] &&
	      [ "$waited" -lt "$QUIET_BUDGET" ]; do
		sleep 1
		t=$((t + 1))
		waited=$((waited + 1))
	done
	f=$(foreign_tracers)
	[ -z "$f" ] || echo "before:$f" >>"$1"
	# with ours attached (memleak waiting for the workload) links are no proof
	[ $# -gt 1 ] || [ "$(foreign_uprobes)" -eq 0 ] || echo "before: uprobe links" >>"$1"
}
watch_start() {	# <dirty file> [ours-attached]: notes foreign tracers seen while we measure
	settle "$@"
	( while :; do
		f=$(foreign_tracers)
		[ -z "$f" ] || echo "$f" >>"$1"
		sleep 0.25
	done ) &
	watch_pid=$!
}
watch_stop() {	# <dirty file>
	kill "$watch_pid" 2>/dev/null || true
	wait "$watch_pid" 2>/dev/null || true
	watch_pid=
	measured=$((measured + 1))
	[ ! -s "$1" ] || contaminated=$((contaminated + 1))
}

# timeit [<label> <round>] -- cmd: result line into $work/r/<label>.<round>
timed() {
	local label=$1 round=$2 res
	shift 2
	res=$work/r/$label.$round
	watch_start "$res.dirty"
	"$B/timeit" -o "$res" "$@" >/dev/null 2>"$res.err" || true
	watch_stop "$res.dirty"
}
status_ok() { [ "$(kv "$1" status)" = 0 ]; }
runs_of() {	# <label>: its result files; only the clean ones if there are any
	local f all=() clean=()
	for f in "$work"/r/"$1".*; do
		case ${f##*.} in *[!0-9]*) continue ;; esac	# <label>.<round> only
		all+=("$f")
		[ -s "$f.dirty" ] || clean+=("$f")
	done
	if [ ${#clean[@]} -gt 0 ]; then
		printf '%s\n' "${clean[@]}"
	elif [ ${#all[@]} -gt 0 ]; then
		printf '%s\n' "${all[@]}"
	fi
}
clean_of() {	# <label>: clean runs / runs
	local f n=0 c=0
	for f in "$work"/r/"$1".*; do
		case ${f##*.} in *[!0-9]*) continue ;; esac
		n=$((n + 1))
		[ -s "$f.dirty" ] || c=$((c + 1))
	done
	echo "$c/$n"
}
med_of() {	# <label> <key>: the median over (clean) rounds, nan when a run failed
	local f out=()
	for f in $(runs_of "$1"); do
		status_ok "$f" || { echo nan; return; }
		out+=("$(kv "$f" "$2")")
	done
	[ ${#out[@]} -gt 0 ] || { echo nan; return; }
	printf '%s\n' "${out[@]}" | median
}

# ---- machine ---------------------------------------------------------------

mkdir -p "$work/r" "$RESULTS"
stamp=$(date -u +%Y-%m-%d-%H%M)
md=$RESULTS/$stamp.md
png=$RESULTS/$stamp.png
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
machine="$(nproc) CPUs ($cpu), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), \
kernel $(uname -r), Debian $(cat /etc/debian_version), $(ldd --version | head -1 | sed 's/^ldd //'), \
heaptrack $(dpkg-query -W -f='${Version}' heaptrack 2>/dev/null), \
bcc $(dpkg-query -W -f='${Version}' bpfcc-tools 2>/dev/null), memtrack $(git rev-parse --short HEAD 2>/dev/null)"
log "bench: $machine"
log "bench: results to $md"

# ---- bcc's memleak: it compiles its BPF C at start and wants kernel headers -

ml_usable=1 ml_note=
memleak_setup() {
	local rel hdr
	rel=$(uname -r)
	if ! command -v memleak-bpfcc >/dev/null; then
		ml_usable=0 ml_note="memleak-bpfcc is not installed"
		return
	fi
	if [ -e "/lib/modules/$rel/build/include/linux/kconfig.h" ] || [ -e /sys/kernel/kheaders.tar.xz ]; then
		return
	fi
	# no headers for this kernel: Debian's (another version) do for memleak's
	# program, which reads only pt_regs; bcc wants them merged in one tree
	hdr=$(find /usr/src -maxdepth 1 -name 'linux-headers-*-common' | sort -V | tail -1)
	if [ -z "$hdr" ] || [ ! -d "${hdr%-common}-amd64" ]; then
		ml_usable=0 ml_note="no kernel headers for bcc (install linux-headers-amd64)"
		return
	fi
	mkdir -p "$work/ksrc"
	cp -rs "$hdr/." "$work/ksrc/" && cp -rsf "${hdr%-common}-amd64/." "$work/ksrc/"
	export BCC_KERNEL_SOURCE=$work/ksrc
	ml_note="kernel headers of $(basename "${hdr%-common}") via BCC_KERNEL_SOURCE (none for $rel)"
}

# memleak attaches to a pid: the workload is held stopped until its 20
# probes (entry and return on 9 allocators, free, munmap) are in place
memleak_run() {	# <label> <round> <workload...>
	local label=$1 round=$2 n t=0 last=0 same=0 log_f
	shift 2
	log_f=$work/r/$label.$round.log
	rm -f "$work/held"
	"$B/timeit" -o "$work/r/$label.$round" --stopped "$work/held" -- "$@" >/dev/null 2>&1 &
	local tpid=$!
	while [ ! -s "$work/held" ]; do sleep 0.02; done
	held_pid=$(cat "$work/held")
	# a script's background jobs ignore SIGINT: give it back to python,
	# whose KeyboardInterrupt makes memleak detach and exit cleanly
	env --default-signal=INT /usr/bin/python3 /usr/sbin/memleak-bpfcc -p "$held_pid" 3600 >"$log_f" 2>&1 &
	ml_pid=$!
	while kill -0 "$ml_pid" 2>/dev/null && [ "$t" -lt 1800 ]; do
		n=$(bpftool perf list -j 2>/dev/null | jq "[.[] | select(.pid == $ml_pid)] | length")
		[ "$n" -ge 20 ] && break
		if [ "$n" -ge 18 ] && [ "$n" -eq "$last" ]; then
			same=$((same + 1))
			[ "$same" -ge 20 ] && break
		fi
		last=$n
		sleep 0.1
		t=$((t + 1))
	done
	echo "start_s=$(calc "$t / 10")" >"$work/r/$label.$round.start"
	if ! kill -0 "$ml_pid" 2>/dev/null || [ "$t" -ge 1800 ]; then
		kill -KILL "$held_pid" 2>/dev/null || true
		wait "$tpid" || true
		held_pid=
		wait "$ml_pid" 2>/dev/null || true
		ml_pid=
		echo "status=-1" >"$work/r/$label.$round"
		return
	fi
	watch_start "$work/r/$label.$round.dirty" ours-attached
	kill -CONT "$held_pid" 2>/dev/null || true
	wait "$tpid" || true
	watch_stop "$work/r/$label.$round.dirty"
	held_pid=
	echo "rss_kib=$(awk '/VmHWM/ { print $2 }' "/proc/$ml_pid/status")" >>"$work/r/$label.$round.start"
	stop_memleak
}

stop_memleak() {
	kill -INT "$ml_pid" 2>/dev/null || true
	for _ in $(seq 100); do
		kill -0 "$ml_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$ml_pid" 2>/dev/null || true
	wait "$ml_pid" 2>/dev/null || true
	ml_pid=
}

# ---- 0. encoder --------------------------------------------------------------

log "bench: encoder, $ENCODER_EVENTS synthetic events per thread count"
"$B/encoder-bench" "$ENCODER_EVENTS" | tee "$work/encoder.md" >&2

# ---- 1. workloads sized for one second bare ---------------------------------

# a calibration run, then the size that takes a second on this machine
"$B/timeit" -o "$work/cal" -- "$W/alloc_storm_procs" "$N" 1000000 >/dev/null
ALLOCS_1S=$(awk -v ns="$(kv "$work/cal" wall_ns)" 'BEGIN { printf "%d", 1000000 * 1e9 / ns }')
log "bench: bare workloads at $N x $ALLOCS_1S pairs (about 1 s), $RUNS runs each"
for r in $(seq "$RUNS"); do
	timed bare1s_procs "$r" -- "$W/alloc_storm_procs" "$N" "$ALLOCS_1S"
	timed bare1s_threads "$r" -- "$W/alloc_storm_threads" "$N" "$ALLOCS_1S"
done

# ---- 2 and 3. overhead table, with the floor ---------------------------------

memleak_setup
events=$((2 * N * ALLOCS))
rows="bare memtrack memtrack_fp memtrack_dwarf floor_multi floor_perf floor_skip heaptrack memleak"
log "bench: overhead at $N x $ALLOCS pairs ($events events per workload), $RUNS interleaved rounds"
for r in $(seq "$RUNS"); do
	for wl in procs threads; do
		prog=$W/alloc_storm_$wl
		log "bench:   round $r/$RUNS, alloc_storm_$wl"
		timed "bare_$wl" "$r" -- "$prog" "$N" "$ALLOCS"
		for cg in no fp dwarf; do
			t=memtrack
			[ "$cg" = no ] || t=memtrack_$cg
			mkdir -p "$(mt_dir "$t" "$wl" "$r")"
			timed "${t}_$wl" "$r" -- ./memtrack track -q --call-graph "$cg" \
				-o "$(mt_dir "$t" "$wl" "$r")" -- "$prog" "$N" "$ALLOCS"
		done
		timed "floor_multi_$wl" "$r" -- "$B/floor" --link multi -o "$work/r/floor_multi_$wl.$r.phases" -- "$prog" "$N" "$ALLOCS"
		timed "floor_perf_$wl" "$r" -- "$B/floor" --link perf -o "$work/r/floor_perf_$wl.$r.phases" -- "$prog" "$N" "$ALLOCS"
		timed "floor_skip_$wl" "$r" -- "$B/floor" --link multi --free-past-test -o "$work/r/floor_skip_$wl.$r.phases" -- "$prog" "$N" "$ALLOCS"
		timed "heaptrack_$wl" "$r" -- heaptrack -o "$work/ht.$wl.$r" "$prog" "$N" "$ALLOCS"
		# memleak -p follows one process (its mm): not the children of procs
		if [ "$wl" = threads ] && [ "$ml_usable" = 1 ]; then
			memleak_run "memleak_$wl" "$r" "$prog" "$N" "$ALLOCS"
		fi
		# the first round's records are checked below; later ones only timed
		[ "$r" -eq 1 ] || rm -rf "$work"/mt*."$wl.$r" "$work/ht.$wl.$r".*
	done
done

# ---- 4. fixed cost ------------------------------------------------------------

log "bench: fixed cost, $FIXED_RUNS interleaved rounds"
mkdir -p "$work/fx"
for r in $(seq "$FIXED_RUNS"); do
	timed fx_true "$r" -- /bin/true
	timed fx_memtrack "$r" -- ./memtrack track -q -o "$work/fx" -- /bin/true
	timed fx_checkbpf "$r" -- ./memtrack track --check-bpf
	timed fx_floor_multi "$r" -- "$B/floor" --link multi -o "$work/r/fx_floor_multi.$r.phases" -- /bin/true
	timed fx_floor_perf "$r" -- "$B/floor" --link perf -o "$work/r/fx_floor_perf.$r.phases" -- /bin/true
	timed fx_heaptrack "$r" -- heaptrack -o "$work/fx/ht.$r" /bin/true
	rm -f "$work"/fx/*
done
# where memtrack's fixed cost goes: one run under strace (indicative only)
if command -v strace >/dev/null; then
	strace -f -ttt -T -e trace=bpf,close,execve,wait4,exit_group -o "$work/fx.strace" \
		./memtrack track -q -o "$work/fx" -- /bin/true >/dev/null 2>&1 || true
fi

# ---- 5. report speed ------------------------------------------------------------

log "bench: report speed: synthetic artifact of $REPORT_EVENTS events; heaptrack recording of alloc_storm_threads $N $HT_ALLOCS"
"$B/synth-artifact" "$REPORT_EVENTS" "$work/synth.msgpack" >"$work/synth.out"
heaptrack -o "$work/htrec" "$W/alloc_storm_threads" "$N" "$HT_ALLOCS" >/dev/null 2>&1 ||
	die "heaptrack could not record alloc_storm_threads"
real_art=$(ls "$(mt_dir memtrack procs 1)"/*.msgpack 2>/dev/null | head -1)
for r in $(seq "$REPORT_RUNS"); do
	timed rp_memtrack "$r" -- sh -c "exec ./memtrack report -q --json '$work/synth.msgpack' >'$work/rp.json'"
	timed rp_heaptrack "$r" -- sh -c "exec heaptrack_print -f '$work/htrec.zst' >'$work/hp.txt'"
	[ -n "$real_art" ] &&
		timed rp_memtrack_real "$r" -- sh -c "exec ./memtrack report -q --json '$real_art' >/dev/null"
done
rp_read=$(jq '[.counts[]] | add' "$work/rp.json" 2>/dev/null || echo "?")
ht_calls=$(sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p' "$work/hp.txt")
ht_events=$((2 * N * HT_ALLOCS))
real_events=0
[ -n "$real_art" ] && real_events=$(./memtrack report -q --json "$real_art" | jq '.events')

# ---- 6. call stacks -------------------------------------------------------------

log "bench: call stacks, one run per --call-graph mode with --stats"
for cg in no fp dwarf; do
	mkdir -p "$work/cg.$cg"
	timed "cg_$cg" 1 -- ./memtrack track -q --call-graph "$cg" --stats "$work/cg.$cg.jsonl" \
		-o "$work/cg.$cg" -- "$W/alloc_storm_procs" "$N" "$ALLOCS"
	./memtrack stats --json "$work/cg.$cg.jsonl" >"$work/cg.$cg.json" 2>/dev/null || echo '{}' >"$work/cg.$cg.json"
done

# ---- figures ------------------------------------------------------------------

bare1s_p=$(med_of bare1s_procs wall_ns)
bare1s_t=$(med_of bare1s_threads wall_ns)
bare_ns_ev_p=$(calc "$bare1s_p / (2 * $N * $ALLOCS_1S)")
bare_ns_ev_t=$(calc "$bare1s_t / (2 * $N * $ALLOCS_1S)")

fx_true=$(med_of fx_true wall_ns)
fixed_of() {	# <tool>: median ns its `true` run takes beyond `true` bare
	local m
	m=$(med_of "fx_$1" wall_ns)
	[ "$m" = nan ] && { echo nan; return; }
	calc "$m - $fx_true"
}
fixed_memtrack=$(fixed_of memtrack)
fixed_floor_multi=$(fixed_of floor_multi)
fixed_floor_perf=$(fixed_of floor_perf)
fixed_heaptrack=$(fixed_of heaptrack)

# what a tool caught in round 1, against the workload's own counts
captured() {	# <tool> <wl>
	local exp=$((N * ALLOCS)) art m f c r
	case $1 in
	bare) echo "-" ;;
	memtrack*)
		art=$(ls "$(mt_dir "$1" "$2" 1)"/*.msgpack 2>/dev/null | head -1)
		if [ -z "$art" ] || ! ./memtrack report -q --json "$art" >"$work/cap.json" 2>/dev/null; then
			echo "? (no report)"
			return
		fi
		m=$(jq '.counts.Malloc' "$work/cap.json")
		f=$(jq '.counts.Free' "$work/cap.json")
		if [ "$m" -ge "$exp" ] && [ "$f" -ge "$exp" ]; then r=yes; else r=NO; fi
		echo "$r: $m malloc, $f free / $exp"
		;;
	heaptrack)
		[ -e "$work/ht.$2.1.zst" ] || { echo "? (no recording)"; return; }
		c=$(heaptrack_print -f "$work/ht.$2.1.zst" 2>/dev/null |
			sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
		if [ "${c:-0}" -ge "$exp" ]; then r=yes; else r=NO; fi
		echo "$r: ${c:-0} calls / $exp malloc"
		[ "$2" = procs ] && [ "$r" = NO ] && echo " (does not follow fork)"
		;;
	floor_*) echo "- (records nothing)" ;;
	memleak) echo "n/a (keeps only outstanding allocations)" ;;
	esac
}

# the first words of what a failed run said
failure_of() {
	local f
	for f in "$work"/r/"$1".[0-9]*.err "$work"/r/"$1".[0-9]*.log; do
		[ -s "$f" ] && { grep -v '^\s*$' "$f" | tail -1 | cut -c1-120; return; }
	done
	echo "no message"
}

declare -A wall fixed ovh slow proj rss cap
for wl in procs threads; do
	bare=$(med_of "bare_$wl" wall_ns)
	bare_ev=$bare_ns_ev_p
	[ "$wl" = threads ] && bare_ev=$bare_ns_ev_t
	for t in $rows; do
		k=${t}_$wl
		cap[$k]=$(captured "$t" "$wl" | tr -d '\n')
		case $t in
		memleak)
			if [ "$wl" = procs ]; then
				wall[$k]=nan cap[$k]="not run: memleak -p does not follow forked children"
			elif [ "$ml_usable" != 1 ]; then
				wall[$k]=nan cap[$k]="not run: $ml_note"
			else
				wall[$k]=$(med_of "$k" wall_ns)
			fi
			fixed[$k]=0
			rss[$k]=$(cat "$work"/r/"$k".*.start 2>/dev/null | sed -n 's/rss_kib=//p' | median)
			;;
		*)
			wall[$k]=$(med_of "$k" wall_ns)
			rss[$k]=$(med_of "$k" maxrss_kib)
			case $t in
			bare) fixed[$k]=0 ;;
			memtrack*) fixed[$k]=$fixed_memtrack ;;
			floor_multi) fixed[$k]=$fixed_floor_multi ;;
			floor_perf) fixed[$k]=$fixed_floor_perf ;;
			floor_skip) fixed[$k]=$fixed_floor_multi ;;
			heaptrack) fixed[$k]=$fixed_heaptrack ;;
			esac
			;;
		esac
		if [ "${wall[$k]}" = nan ] || [ "$bare" = nan ] || [ "${fixed[$k]}" = nan ]; then
			ovh[$k]=nan slow[$k]=nan proj[$k]=nan
			case ${cap[$k]} in
			"not run"*) ;;
			*) cap[$k]="a run failed: $(failure_of "$k")" ;;
			esac
			continue
		fi
		slow[$k]=$(calc "${wall[$k]} / $bare")
		if [ "$t" = bare ]; then
			ovh[$k]=0 proj[$k]=1
		else
			ovh[$k]=$(calc "(${wall[$k]} - $bare - ${fixed[$k]}) / $events")
			proj[$k]=$(calc "1 + ${ovh[$k]} / $bare_ev")
		fi
	done
done

label_of() {
	case $1 in
	bare) echo "bare" ;;
	memtrack) echo "memtrack track --call-graph no" ;;
	memtrack_fp) echo "memtrack track --call-graph fp" ;;
	memtrack_dwarf) echo "memtrack track --call-graph dwarf (the default)" ;;
	floor_multi) echo "floor: empty uprobes, uprobe_multi link" ;;
	floor_perf) echo "floor: empty uprobes, perf-event links" ;;
	floor_skip) echo "floor: uprobe_multi, free probed past its test" ;;
	heaptrack) echo "heaptrack (stacks)" ;;
	memleak) echo "bcc memleak (stacks)" ;;
	esac
}

table() {
	local wl k
	echo "| workload | tool | wall s | fixed ms | slowdown | slowdown, 1-s run | overhead ns/event | peak RSS MiB | every allocation captured | clean runs |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---|---:|"
	for wl in procs threads; do
		for t in $rows; do
			k=${t}_$wl
			printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "alloc_storm_$wl" "$(label_of "$t")" \
				"$(fmt %.3f "$(calc "${wall[$k]} / 1e9" 2>/dev/null || echo nan)")" \
				"$(fmt %.0f "$(calc "${fixed[$k]} / 1e6" 2>/dev/null || echo nan)")" \
				"$(fmt %.1fx "${slow[$k]}")" "$(fmt %.1fx "${proj[$k]}")" \
				"$(fmt %.0f "${ovh[$k]}")" \
				"$(fmt %.1f "$(calc "${rss[$k]:-nan} / 1024" 2>/dev/null || echo nan)")" "${cap[$k]}" \
				"$(clean_of "$k")"
		done
	done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b <= 0) print "nan"; else print a / b }'; }
verdict() {	# <value> <op> <limit>
	awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
		if (v == "nan" || v == "") { print "n/a"; exit }
		ok = op == "<=" ? v <= l : v < l
		print ok ? "met" : "MISSED" }'
}

# the floor with probes placed as memtrack places them (past free's flag-only test)
floor_p=$(ratio "${ovh[memtrack_procs]}" "${ovh[floor_skip_procs]}")
floor_t=$(ratio "${ovh[memtrack_threads]}" "${ovh[floor_skip_threads]}")
floorperf_p=$(ratio "${ovh[memtrack_procs]}" "${ovh[floor_perf_procs]}")
floorperf_t=$(ratio "${ovh[memtrack_threads]}" "${ovh[floor_perf_threads]}")
vs_ht=$(ratio "${proj[memtrack_threads]}" "${proj[heaptrack_threads]}")
vs_ht_stacks=$(ratio "${proj[memtrack_dwarf_threads]}" "${proj[heaptrack_threads]}")
fixed_ms=$(calc "$fixed_memtrack / 1e6")
mt_rss_mib=$(calc "${rss[memtrack_dwarf_procs]} / 1024")
rp_mt_rate=$(calc "$REPORT_EVENTS / ($(med_of rp_memtrack wall_ns) / 1e9)")
rp_ht_rate=$(calc "$ht_events / ($(med_of rp_heaptrack wall_ns) / 1e9)")
rp_ratio=$(ratio "$rp_mt_rate" "$rp_ht_rate")

# ---- chart ----------------------------------------------------------------------

{
	# a tool that missed allocations gets no bar
	bar() { case ${cap[$1]} in NO*) echo "-" ;; *) fmt %.0f "${ovh[$1]}" ;; esac; }
	for t in memtrack memtrack_dwarf floor_multi floor_perf floor_skip heaptrack memleak; do
		case $t in
		memtrack) l="memtrack, no stacks" ;;
		memtrack_dwarf) l="memtrack, dwarf stacks" ;;
		floor_multi) l="floor, uprobe_multi" ;;
		floor_perf) l="floor, perf links" ;;
		floor_skip) l="floor, free past test" ;;
		heaptrack) l="heaptrack" ;;
		memleak) l="bcc memleak" ;;
		esac
		printf '"%s" %s %s\n' "$l" "$(bar "${t}_procs")" "$(bar "${t}_threads")"
	done
} >"$work/chart.dat"
gnuplot <<EOF || log "bench: gnuplot failed; no chart"
set terminal pngcairo size 1000,560 font ",10"
set output "$png"
set title "memtrack overhead per allocation event (median of $RUNS; $N x $ALLOCS malloc+free pairs; $(date -u +%Y-%m-%d))"
set ylabel "overhead, ns per event (log)"
set logscale y
set yrange [10:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top right
set xtics noenhanced
set datafile missing "-"
plot "$work/chart.dat" using 2:xtic(1) title "alloc\\\\_storm\\\\_procs", \
     "" using 3 title "alloc\\\\_storm\\\\_threads"
EOF

# ---- results ----------------------------------------------------------------------

phase_med() { # <label> <key>: median of a floor phase, in ms
	local f v=()
	for f in "$work"/r/"$1".*.phases; do
		[ -e "$f" ] && v+=("$(kv "$f" "$2")")
	done
	[ ${#v[@]} -gt 0 ] || { echo nan; return; }
	calc "$(printf '%s\n' "${v[@]}" | median) / 1e6"
}

strace_phases() {
	[ -e "$work/fx.strace" ] || { echo "(strace not installed: no breakdown)"; return; }
	awk '
	{ t = $2 + 0; if (!t0) t0 = t }
	/ bpf\(/ && !load0 { load0 = t }
	/bpf\(BPF_LINK_CREATE/ { link1 = t; d = $NF; gsub(/[<>]/, "", d); linkt += d }
	/wait4/ && / = [1-9][0-9]* / && !reap { reap = t }
	/close\(|close resumed/ { d = $NF; gsub(/[<>]/, "", d); if (d + 0 > 0.005) slowclose += d }
	{ last = t }
	END {
		printf "| start to the first bpf() call | %.1f |\n", (load0 - t0) * 1e3
		printf "| first bpf() to the last BPF_LINK_CREATE (BTF, maps, load, attach) | %.1f |\n", (link1 - load0) * 1e3
		printf "| of which inside BPF_LINK_CREATE | %.1f |\n", linkt * 1e3
		printf "| last link to the command reaped | %.1f |\n", (reap - link1) * 1e3
		printf "| command reaped to exit (teardown) | %.1f |\n", (last - reap) * 1e3
		printf "| of which in close() calls over 5 ms (link release) | %.1f |\n", slowclose * 1e3
	}' "$work/fx.strace"
}

{
	echo "# memtrack benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Machine: $machine."
	echo
	echo "Made by \`make bench\` (bench/run.sh; bench/README.md says how to read it)."
	echo "Measurements: $measured, of which $contaminated ran while another program that holds"
	echo "uprobes (another memtrack, bpftrace, bcc) was running: such probes make every process"
	echo "on the machine trap, ours included. Medians are taken over the clean runs of a row"
	echo "when it has any (column \"clean runs\"). Before each measurement the script"
	echo "waited up to ${QUIET_WAIT} s for them to go, $QUIET_BUDGET s in all; it waited $waited s."
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "## 1. Workloads"
	echo
	echo "- \`alloc_storm_procs $N A\`: $N forked processes, each A malloc(16..1039)+free pairs."
	echo "- \`alloc_storm_threads $N A\`: $N threads of one process, the same loop ($N calloc more from pthread_create)."
	echo
	echo "Bare, sized to about a second here (A = $ALLOCS_1S, $((2 * N * ALLOCS_1S)) events), median of $RUNS:"
	echo
	echo "| workload | wall s | ns per event |"
	echo "|---|---:|---:|"
	echo "| alloc_storm_procs $N $ALLOCS_1S | $(fmt %.3f "$(calc "$bare1s_p / 1e9")") | $(fmt %.2f "$bare_ns_ev_p") |"
	echo "| alloc_storm_threads $N $ALLOCS_1S | $(fmt %.3f "$(calc "$bare1s_t / 1e9")") | $(fmt %.2f "$bare_ns_ev_t") |"
	echo
	echo "Traced runs use A = $ALLOCS ($events events per workload): at several µs per event a"
	echo "one-second workload would take many minutes under each tracer."
	echo
	echo "## 2. Overhead (median of $RUNS interleaved rounds)"
	echo
	table
	echo
	echo "- wall: end to end, the tool's start-up and teardown included (memleak: from the"
	echo "  workload's start to its exit; its attach took $(cat "$work"/r/memleak_threads.*.start 2>/dev/null | sed -n 's/start_s=//p' | median) s before that)."
	echo "- fixed: the tool's cost on \`true\` (section 4), taken out of the overhead."
	echo "- overhead ns/event = (wall - bare wall - fixed) / $events."
	echo "- slowdown, 1-s run = 1 + overhead per event / bare ns per event of section 1: the"
	echo "  slowdown the one-second workload would see, start-up aside."
	echo "- peak RSS: ru_maxrss of the tool's process tree (largest single process; the bare"
	echo "  workload's is $(fmt %.1f "$(calc "${rss[bare_procs]} / 1024")") MiB); memleak: VmHWM of its python process."
	[ -n "$ml_note" ] && echo "- memleak: $ml_note."
	echo
	echo "![overhead per event]($(basename "$png"))"
	echo
	echo "## 3. The floor"
	echo
	echo "memtrack's overhead per event / the empty-uprobe floor's, same probes, same run:"
	echo
	echo "| workload | uprobe_multi link, free probed past its test (as memtrack probes) | perf-event links, free at its entry |"
	echo "|---|---:|---:|"
	echo "| alloc_storm_procs | $(fmt %.2fx "$floor_p") | $(fmt %.2fx "$floorperf_p") |"
	echo "| alloc_storm_threads | $(fmt %.2fx "$floor_t") | $(fmt %.2fx "$floorperf_t") |"
	echo
	echo "## 4. Fixed cost (median of $FIXED_RUNS interleaved rounds)"
	echo
	echo "| run | wall ms | beyond \`true\` ms | peak RSS MiB |"
	echo "|---|---:|---:|---:|"
	for x in true memtrack checkbpf floor_multi floor_perf heaptrack; do
		case $x in
		true) l="\`true\`" ;;
		memtrack) l="\`memtrack track -- true\`" ;;
		checkbpf) l="\`memtrack track --check-bpf\` (load, attach, detach; no command)" ;;
		floor_multi) l="floor, uprobe_multi, \`true\`" ;;
		floor_perf) l="floor, perf-event links, \`true\`" ;;
		heaptrack) l="\`heaptrack true\`" ;;
		esac
		m=$(med_of "fx_$x" wall_ns)
		echo "| $l | $(fmt %.1f "$(calc "$m / 1e6")") | $(fmt %.1f "$(calc "($m - $fx_true) / 1e6")") | $(fmt %.1f "$(calc "$(med_of "fx_$x" maxrss_kib) / 1024")") |"
	done
	echo
	echo "Floor phases (ms, median): uprobe_multi load $(fmt %.1f "$(phase_med fx_floor_multi load_ns)"), attach $(fmt %.1f "$(phase_med fx_floor_multi attach_ns)"), detach $(fmt %.1f "$(phase_med fx_floor_multi detach_ns)");"
	echo "perf-event links load $(fmt %.1f "$(phase_med fx_floor_perf load_ns)"), attach $(fmt %.1f "$(phase_med fx_floor_perf attach_ns)"), detach $(fmt %.1f "$(phase_med fx_floor_perf detach_ns)")."
	echo
	echo "Where \`memtrack track -- true\` spends its time, one run under strace (inflated by strace):"
	echo
	echo "| phase | ms |"
	echo "|---|---:|"
	strace_phases
	echo
	echo "## 5. Report speed (median of $REPORT_RUNS)"
	echo
	echo "| input | events | wall s | events/s | peak RSS MiB |"
	echo "|---|---:|---:|---:|---:|"
	m=$(med_of rp_memtrack wall_ns)
	echo "| \`memtrack report --json\`, synthetic artifact ($(kv "$work/synth.out" bytes) bytes; read back $rp_read events) | $REPORT_EVENTS | $(fmt %.2f "$(calc "$m / 1e9")") | $(fmt %.0f "$rp_mt_rate") | $(fmt %.1f "$(calc "$(med_of rp_memtrack maxrss_kib) / 1024")") |"
	if [ -n "$real_art" ]; then
		m=$(med_of rp_memtrack_real wall_ns)
		echo "| \`memtrack report --json\`, real artifact of alloc_storm_procs $N $ALLOCS | $real_events | $(fmt %.2f "$(calc "$m / 1e9")") | $(fmt %.0f "$(calc "$real_events / ($m / 1e9)")") | $(fmt %.1f "$(calc "$(med_of rp_memtrack_real maxrss_kib) / 1024")") |"
	fi
	m=$(med_of rp_heaptrack wall_ns)
	echo "| \`heaptrack_print\`, heaptrack's recording of alloc_storm_threads $N $HT_ALLOCS ($ht_calls calls) | $ht_events | $(fmt %.2f "$(calc "$m / 1e9")") | $(fmt %.0f "$rp_ht_rate") | $(fmt %.1f "$(calc "$(med_of rp_heaptrack maxrss_kib) / 1024")") |"
	echo
	echo "Events of heaptrack's recording: its workload's mallocs and frees ($ht_events), not counting"
	echo "the stacks heaptrack also records. memtrack report's artifact has no stacks."
	echo
	echo "## 6. Call stacks (alloc_storm_procs $N $ALLOCS, one run per mode, with --stats)"
	echo
	echo "| --call-graph | wall s | slowdown vs no | stacks ring bytes per allocation | stacks ring episodes | stacks poller busy % (unwinds with dwarf) | resolver busy % | peak RSS MiB |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for cg in no fp dwarf; do
		j=$work/cg.$cg.json
		stk() { jq -r "[.files[0].rings[]? | select(.ring == \"stacks\") | $1][0] // \"nan\"" "$j"; }
		w=$(med_of "cg_$cg" wall_ns)
		echo "| $cg | $(fmt %.2f "$(calc "$w / 1e9")") | $(fmt %.2fx "$(ratio "$w" "$(med_of cg_no wall_ns)")") |" \
			"$(fmt %.0f "$(calc "$(stk .written_bytes) / ($N * $ALLOCS)")") | $(fmt %.0f "$(stk .episodes)") |" \
			"$(fmt %.1f "$(stk .busy_pct)") | $(fmt %.2f "$(jq -r '.files[0].pipeline.resolver_busy_pct // "nan"' "$j")") |" \
			"$(fmt %.1f "$(calc "$(med_of "cg_$cg" maxrss_kib) / 1024")") |"
	done
	echo
	echo "One allocation in two is a malloc (frees carry no stack). With dwarf each one copies"
	echo "the registers and 8 KiB of user stack into the stacks ring; the stacks poller unwinds"
	echo "it, so its busy % is the unwinder's; the resolver symbolizes distinct stacks only."
	echo
	echo "## Targets (ratios measured in this run)"
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	echo "| overhead per event <= 1.5x the uprobe_multi floor (free probed past its test, as memtrack does) | procs $(fmt %.2fx "$floor_p"), threads $(fmt %.2fx "$floor_t") | $(verdict "$floor_p" '<=' 1.5), $(verdict "$floor_t" '<=' 1.5) |"
	echo "| slowdown without stacks <= heaptrack's (threads; heaptrack does not follow procs' forks) | $(fmt %.1fx "${proj[memtrack_threads]}") vs $(fmt %.1fx "${proj[heaptrack_threads]}") (1-s run) | $(verdict "$vs_ht" '<=' 1) |"
	echo "| slowdown with stacks (dwarf, the default) <= 2x heaptrack's (threads) | $(fmt %.1fx "${proj[memtrack_dwarf_threads]}") vs $(fmt %.1fx "${proj[heaptrack_threads]}") ($(fmt %.1fx "$vs_ht_stacks")) | $(verdict "$vs_ht_stacks" '<=' 2) |"
	echo "| fixed cost of \`memtrack track true\` < 50 ms | $(fmt %.1f "$fixed_ms") ms | $(verdict "$fixed_ms" '<' 50) |"
	echo "| memtrack peak RSS < 64 MiB on alloc_storm_procs $N $ALLOCS with stacks (dwarf) | $(fmt %.1f "$mt_rss_mib") MiB | $(verdict "$mt_rss_mib" '<' 64) |"
	echo "| report faster per event than heaptrack_print | $(fmt %.0f "$rp_mt_rate") vs $(fmt %.0f "$rp_ht_rate") events/s ($(fmt %.2fx "$rp_ratio")) | $(verdict "$(ratio 1 "$rp_ratio")" '<' 1) |"
	echo
	echo "## Encoder"
	echo
	cat "$work/encoder.md"
} >"$md"

echo
sed -n '/^## 2\./,/^## 5\./p' "$md" | grep -v '^!\[' | sed '$d'
sed -n '/^## 5\./,/^## Encoder/p' "$md" | sed '$d'
log "bench: wrote $md and $png"
