#!/bin/bash
# make bench: what memtrack costs, through either backend, against the bare
# workload, heaptrack, bcc's memleak and the empty-uprobe floor, and what it
# costs the processes it does not track; measured in one run and written to
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
FLOORS=${FLOORS:-1}		# 0: no floor rows (about a third of the run's time)
FIXED_RUNS=${FIXED_RUNS:-10}	# runs per row of the fixed cost table
REPORT_RUNS=${REPORT_RUNS:-3}
REPORT_EVENTS=${REPORT_EVENTS:-10000000}	# events of the synthetic artifact
HT_ALLOCS=${HT_ALLOCS:-125000}	# pairs per thread of heaptrack's recording for heaptrack_print
ENCODER_EVENTS=${ENCODER_EVENTS:-4000000}
BYSTANDER_RUNS=${BYSTANDER_RUNS:-5}	# runs per row of the bystander table
BYSTANDER_ALLOCS=${BYSTANDER_ALLOCS:-}	# pairs of the bystander; default: its 1-s size
BYSTANDER_LIMIT=${BYSTANDER_LIMIT:-60}	# s after which a bystander run is killed
QUIET_WAIT=${QUIET_WAIT:-10}	# s to wait for other tracers' uprobes to go, per measurement
QUIET_BUDGET=${QUIET_BUDGET:-120}	# s of such waiting in all, then measure regardless
RESULTS=${RESULTS:-bench/results}

work=$(mktemp -d /tmp/memtrack-bench.XXXXXX)
ml_pid=
held_pid=
by_pid=
watch_pid=
cleanup() {
	# never leave a tracer attached or a workload stopped behind us
	set +e
	[ -n "$ml_pid" ] && stop_memleak
	[ -n "$held_pid" ] && kill -KILL "$held_pid" 2>/dev/null
	[ -n "$by_pid" ] && bystander_stop
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	rm -rf "$work"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

log() { printf '%s\n' "$*" >&2; }
die() { log "bench: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root: memtrack track, the floor and memleak load BPF"
[ -x ./memtrack ] || die "./memtrack is missing: run make first"
[ -e ./libmemtrack-preload.so ] || die "./libmemtrack-preload.so is missing: run make first"
for f in timeit floor synth-artifact encoder-bench uprobe-links; do
	[ -x "$B/$f" ] || die "$B/$f is missing: run make bench"
done
for f in alloc_storm_procs alloc_storm_threads; do
	[ -x "$W/$f" ] || die "$W/$f is missing: run make workloads"
done
for f in bpftool jq heaptrack gnuplot; do
	command -v "$f" >/dev/null || die "$f is missing: run bench/install-deps.sh"
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

# ours carry the token in their environment (memtrack's guardian too: it is
# forked, not exec'd)
token=$$.$RANDOM
export MEMTRACK_BENCH_TOKEN=$token
ours() { tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | grep -qx "MEMTRACK_BENCH_TOKEN=$token"; }

# uprobe_multi links whose probes trap in every process: the floor, bpftrace,
# a memtrack older than per-process links.  A link limited to a pid reads
# pid 0 too once its process has been reaped, until its holder closes it:
# so a link counts when its program has no link limited to a pid, and it is
# still there a second later.  A kernel that does not say (before 6.8) gives
# "?" for every link: then every uprobe_multi link counts but ours.
global_links_now() {
	"$B/uprobe-links" 2>/dev/null | awk '
		{ id[NR] = $1; pid[NR] = $2; prog[NR] = $3 }
		$2 != 0 && $2 != "?" { limited[$3] = 1 }
		END {
			for (i = 1; i <= NR; i++)
				if ((pid[i] == "?" || pid[i] == 0) && !limited[prog[i]])
					print id[i]
		}' | sort
}
global_links() {
	local a
	a=$(global_links_now)
	[ -n "$a" ] || return 0
	sleep 1
	comm -12 <(echo "$a") <(global_links_now)
}
link_holders() {	# <link id>...: "comm:pid" of each holder not ours, "link:<id>" for a link nobody holds
	local fd p id out=
	declare -A want=() seen=()
	for id in "$@"; do want[$id]=1; done
	while read -r fd; do
		p=${fd#/proc/}
		p=${p%%/*}
		id=$(sed -n 's/^link_id:[[:space:]]*//p' "/proc/$p/fdinfo/${fd##*/}" 2>/dev/null)
		[ -n "$id" ] && [ -n "${want[$id]:-}" ] || continue
		seen[$id]=1
		ours "$p" || out="$out $(cat "/proc/$p/comm" 2>/dev/null):$p"
	done < <(find /proc/[0-9]*/fd -lname 'anon_inode:bpf_link' 2>/dev/null)
	# pinned, or in flight to another process
	for id in "$@"; do [ -n "${seen[$id]:-}" ] || out="$out link:$id"; done
	echo "$out"
}

# the programs that would make every process trap, ours left out: bpftrace,
# bcc's memleak and a floor by name (they may be starting), and the holders
# of global uprobe_multi links.  Another memtrack whose links name a pid is
# no contamination: its probes trap in its own tree alone.
ours_global=	# set while our floor runs: its own links are global
foreign_tracers() {
	local p ids out=
	# by name, in one pass
	for p in $(ps -e -o pid=,comm=,args= | awk '$2 == "floor" || $2 == "bpftrace" ||
		   $2 == "memleak-bpfcc" || $3 ~ /\/memleak/ || $4 ~ /\/memleak/ { print $1 }'); do
		ours "$p" || out="$out $(cat "/proc/$p/comm" 2>/dev/null):$p"
	done
	if [ -z "$ours_global" ]; then
		ids=$(global_links)
		# shellcheck disable=SC2086
		[ -z "$ids" ] || out="$out $(link_holders $ids)"
	fi
	# shellcheck disable=SC2086
	[ -z "${out// /}" ] || printf '%s\n' $out | sort -u | tr '\n' ' '
}
# perf-event uprobes held by others (perf, bcc, bpftrace): whether one was
# opened for a single process cannot be told from here, so any counts
foreign_perf_uprobes() {
	local p n=0
	for p in $(bpftool perf list -j 2>/dev/null |
		   jq -r '.[] | select(.fd_type == "uprobe" or .fd_type == "uretprobe") | .pid' 2>/dev/null | sort -u); do
		ours "$p" || n=$((n + 1))
	done
	echo "$n"
}

measured=0 contaminated=0 waited=0
# our memtrack's guardian, after memtrack has gone, still holds its links while it closes
# them, a shared (global) one too: the next measurement waits for it, as for a stranger's
# (with a memtrack of ours attached for the measurement, its guardian is there by design)
ours_lingering() {
	local p
	for p in $(pgrep -x memtrack-guard); do
		ours "$p" && return 0
	done
	return 1
}
settle() {	# <dirty file> [ours-attached]: waits for a quiet machine; notes what remains
	local t0=$SECONDS f
	while [ $# -lt 2 ] && ours_lingering && [ $((SECONDS - t0)) -lt "$QUIET_WAIT" ]; do
		sleep 0.1
	done
	while :; do
		f=$(foreign_tracers | tr -d '\n')
		[ -n "${f// /}" ] && [ $((SECONDS - t0)) -lt "$QUIET_WAIT" ] &&
			[ $((waited + SECONDS - t0)) -lt "$QUIET_BUDGET" ] || break
		sleep 1
	done
	waited=$((waited + SECONDS - t0))
	[ -z "${f// /}" ] || echo "before:$f" >>"$1"
	# with ours attached (memleak waiting for the workload) perf uprobes are no proof
	[ $# -gt 1 ] || [ "$(foreign_perf_uprobes)" -eq 0 ] || echo "before: perf-event uprobes" >>"$1"
}
watch_start() {	# <dirty file> [ours-attached]: notes foreign tracers seen while we measure
	settle "$@"
	( while :; do
		f=$(foreign_tracers | tr -d '\n')
		[ -z "${f// /}" ] || echo "$f" >>"$1"
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

# ---- memtrack tracking a sleep, for the bystanders ---------------------------

by_kids=
bystander_start() {	# <backend> <dir>: memtrack tracks a long sleep; fails unless attached
	local be=$1 d=$2 t=0
	rm -rf "$d"
	mkdir -p "$d"
	# a script's background jobs ignore SIGINT, and memtrack would keep that
	env --default-signal=INT ./memtrack track -q --backend "$be" --stats "$d/stats.jsonl" \
		-o "$d" -- sleep 3600 >"$d/log" 2>&1 &
	by_pid=$!
	# attached: its rings are open and its child has become sleep (the bpf
	# backend then probes the new image: give it a moment)
	while [ "$t" -lt 300 ]; do
		kill -0 "$by_pid" 2>/dev/null || return 1
		if grep -q '"k":"ring_open"' "$d/stats.jsonl" 2>/dev/null &&
		   pgrep -P "$by_pid" -x sleep >/dev/null; then
			by_kids=$(pgrep -P "$by_pid" | tr '\n' ' ')
			sleep 0.5
			return 0
		fi
		sleep 0.1
		t=$((t + 1))
	done
	return 1
}
bystander_stop() {	# SIGINT, which memtrack passes on to sleep; then nothing of it left
	local t=0 p
	[ -z "$by_kids" ] && by_kids=$(pgrep -P "$by_pid" | tr '\n' ' ')
	kill -INT "$by_pid" 2>/dev/null || true
	while kill -0 "$by_pid" 2>/dev/null && [ "$t" -lt 100 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	kill -KILL "$by_pid" 2>/dev/null || true
	wait "$by_pid" 2>/dev/null || true
	# its guardian closes the links after it, then goes: wait for it (and
	# for sleep, which should have had SIGINT), then kill what is left
	for p in $by_kids; do
		t=0
		while [ -d "/proc/$p" ] && ours "$p" && [ "$t" -lt 100 ]; do
			sleep 0.1
			t=$((t + 1))
		done
		if [ -d "/proc/$p" ] && ours "$p"; then
			log "bench: $(cat "/proc/$p/comm" 2>/dev/null) ($p) of a bystander run was still there after 10 s: killed"
			kill -KILL "$p" 2>/dev/null || true
		fi
	done
	by_pid=
	by_kids=
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
mt_rows="auto_no auto_fp auto_dwarf bpf_no bpf_fp bpf_dwarf"
floor_rows=
[ "$FLOORS" = 0 ] || floor_rows="floor_multi floor_perf floor_skip"
rows="bare $mt_rows $floor_rows heaptrack memleak"
log "bench: overhead at $N x $ALLOCS pairs ($events events per workload), $RUNS interleaved rounds"
for r in $(seq "$RUNS"); do
	for wl in procs threads; do
		prog=$W/alloc_storm_$wl
		log "bench:   round $r/$RUNS, alloc_storm_$wl"
		timed "bare_$wl" "$r" -- "$prog" "$N" "$ALLOCS"
		for t in $mt_rows; do
			mkdir -p "$(mt_dir "$t" "$wl" "$r")"
			timed "${t}_$wl" "$r" -- ./memtrack track -q --backend "${t%_*}" --call-graph "${t#*_}" \
				-o "$(mt_dir "$t" "$wl" "$r")" -- "$prog" "$N" "$ALLOCS"
		done
		if [ -n "$floor_rows" ]; then
			ours_global=1
			timed "floor_multi_$wl" "$r" -- "$B/floor" --link multi -o "$work/r/floor_multi_$wl.$r.phases" -- "$prog" "$N" "$ALLOCS"
			timed "floor_perf_$wl" "$r" -- "$B/floor" --link perf -o "$work/r/floor_perf_$wl.$r.phases" -- "$prog" "$N" "$ALLOCS"
			timed "floor_skip_$wl" "$r" -- "$B/floor" --link multi --free-past-test -o "$work/r/floor_skip_$wl.$r.phases" -- "$prog" "$N" "$ALLOCS"
			ours_global=
		fi
		timed "heaptrack_$wl" "$r" -- heaptrack -o "$work/ht.$wl.$r" "$prog" "$N" "$ALLOCS"
		# memleak -p follows one process (its mm): not the children of procs
		if [ "$wl" = threads ] && [ "$ml_usable" = 1 ]; then
			memleak_run "memleak_$wl" "$r" "$prog" "$N" "$ALLOCS"
		fi
		# the first round's records are checked below; later ones only timed
		[ "$r" -eq 1 ] || rm -rf "$work"/{auto,bpf}_*."$wl.$r" "$work/ht.$wl.$r".*
	done
done

# ---- 4. bystanders -------------------------------------------------------------

BYSTANDER_ALLOCS=${BYSTANDER_ALLOCS:-$ALLOCS_1S}
log "bench: bystanders, $N x $BYSTANDER_ALLOCS pairs outside the tree of memtrack tracking sleep, $BYSTANDER_RUNS rounds"
for r in $(seq "$BYSTANDER_RUNS"); do
	for wl in procs threads; do
		by=(timeout -s KILL "$BYSTANDER_LIMIT" "$W/alloc_storm_$wl" "$N" "$BYSTANDER_ALLOCS")
		timed "by_bare_$wl" "$r" -- "${by[@]}"
		for be in auto bpf; do
			if bystander_start "$be" "$work/by.$be.$wl.$r"; then
				timed "by_${be}_$wl" "$r" -- "${by[@]}"
			else
				echo "status=-1" >"$work/r/by_${be}_$wl.$r"
				tail -1 "$work/by.$be.$wl.$r/log" >"$work/r/by_${be}_$wl.$r.err" 2>/dev/null || true
			fi
			bystander_stop
			# what memtrack recorded: sleep's events, none of the bystander's
			art=$(ls "$work/by.$be.$wl.$r"/*.msgpack 2>/dev/null | head -1)
			if [ -n "$art" ]; then
				./memtrack report -q --json "$art" 2>/dev/null | jq -r .events \
					>"$work/r/by_${be}_$wl.$r.recorded" 2>/dev/null || true
			fi
			rm -rf "$work/by.$be.$wl.$r"/*.msgpack
		done
	done
done

# ---- 5. fixed cost ------------------------------------------------------------

log "bench: fixed cost, $FIXED_RUNS interleaved rounds"
mkdir -p "$work/fx"
for r in $(seq "$FIXED_RUNS"); do
	timed fx_true "$r" -- /bin/true
	timed fx_memtrack "$r" -- ./memtrack track -q --backend auto -o "$work/fx" -- /bin/true
	timed fx_memtrack_bpf "$r" -- ./memtrack track -q --backend bpf -o "$work/fx" -- /bin/true
	timed fx_checkbpf "$r" -- ./memtrack track --check-bpf
	if [ -n "$floor_rows" ]; then
		ours_global=1
		timed fx_floor_multi "$r" -- "$B/floor" --link multi -o "$work/r/fx_floor_multi.$r.phases" -- /bin/true
		timed fx_floor_perf "$r" -- "$B/floor" --link perf -o "$work/r/fx_floor_perf.$r.phases" -- /bin/true
		ours_global=
	fi
	timed fx_heaptrack "$r" -- heaptrack -o "$work/fx/ht.$r" /bin/true
	rm -f "$work"/fx/*
done
# where memtrack's fixed cost goes: one run under strace (indicative only)
if command -v strace >/dev/null; then
	strace -f -ttt -T -e trace=bpf,openat,close,execve,wait4,exit_group -o "$work/fx.strace" \
		./memtrack track -q --backend auto -o "$work/fx" -- /bin/true >/dev/null 2>&1 || true
fi

# ---- 6. report speed ------------------------------------------------------------

log "bench: report speed: synthetic artifact of $REPORT_EVENTS events; heaptrack recording of alloc_storm_threads $N $HT_ALLOCS"
"$B/synth-artifact" "$REPORT_EVENTS" "$work/synth.msgpack" >"$work/synth.out"
heaptrack -o "$work/htrec" "$W/alloc_storm_threads" "$N" "$HT_ALLOCS" >/dev/null 2>&1 ||
	die "heaptrack could not record alloc_storm_threads"
real_art=$(ls "$(mt_dir auto_no procs 1)"/*.msgpack 2>/dev/null | head -1)
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

# ---- 7. call stacks and pressure --------------------------------------------------

log "bench: call stacks, one run per backend and --call-graph mode with --stats"
for be in auto bpf; do
	for cg in no fp dwarf; do
		k=${be}_$cg
		mkdir -p "$work/cg.$k"
		timed "cg_$k" 1 -- ./memtrack track -q --backend "$be" --call-graph "$cg" \
			--stats "$work/cg.$k.jsonl" -o "$work/cg.$k" -- "$W/alloc_storm_procs" "$N" "$ALLOCS"
		./memtrack stats --json "$work/cg.$k.jsonl" >"$work/cg.$k.json" 2>/dev/null || echo '{}' >"$work/cg.$k.json"
		rm -rf "$work/cg.$k"
	done
done

# ---- 8. real programs ---------------------------------------------------------------

log "bench: real programs (bench/real.sh)"
RUNS=$RUNS bench/real.sh >"$work/real.md" || echo "(bench/real.sh failed)" >"$work/real.md"

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
fixed_memtrack_bpf=$(fixed_of memtrack_bpf)
fixed_floor_multi=$(fixed_of floor_multi)
fixed_floor_perf=$(fixed_of floor_perf)
fixed_heaptrack=$(fixed_of heaptrack)

# what a tool caught in round 1, against the workload's own counts
captured() {	# <tool> <wl>
	local exp=$((N * ALLOCS)) art m f c r
	case $1 in
	bare) echo "-" ;;
	auto_*|bpf_*)
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
			auto_*) fixed[$k]=$fixed_memtrack ;;
			bpf_*) fixed[$k]=$fixed_memtrack_bpf ;;
			floor_multi|floor_skip) fixed[$k]=$fixed_floor_multi ;;
			floor_perf) fixed[$k]=$fixed_floor_perf ;;
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
	auto_no) echo "memtrack --backend auto (preload) --call-graph no" ;;
	auto_fp) echo "memtrack --backend auto (preload) --call-graph fp" ;;
	auto_dwarf) echo "memtrack --backend auto (preload) --call-graph dwarf (the default)" ;;
	bpf_no) echo "memtrack --backend bpf --call-graph no" ;;
	bpf_fp) echo "memtrack --backend bpf --call-graph fp" ;;
	bpf_dwarf) echo "memtrack --backend bpf --call-graph dwarf" ;;
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
				"$(fmt %.3f "$(calc "${wall[$k]} / 1e9")")" \
				"$(fmt %.0f "$(calc "${fixed[$k]} / 1e6")")" \
				"$(fmt %.1fx "${slow[$k]}")" "$(fmt %.1fx "${proj[$k]}")" \
				"$(fmt %.0f "${ovh[$k]}")" \
				"$(fmt %.1f "$(calc "${rss[$k]:-nan} / 1024")")" "${cap[$k]}" \
				"$(clean_of "$k")"
		done
	done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || a == "" || b == "" || b <= 0) print "nan"; else print a / b }'; }
verdict() {	# <value> <op> <limit>
	awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
		if (v == "nan" || v == "") { print "n/a"; exit }
		ok = op == "<=" ? v <= l : op == "==" ? v == l : v < l
		print ok ? "met" : "MISSED" }'
}

# per event, against heaptrack's on threads (the one workload it follows)
ht_ev=${ovh[heaptrack_threads]}
per_event_table() {
	local t
	echo "| tool | alloc_storm_threads ns/event | / heaptrack's | alloc_storm_procs ns/event | / heaptrack's on threads |"
	echo "|---|---:|---:|---:|---:|"
	echo "| heaptrack (stacks) | $(fmt %.0f "$ht_ev") | 1.00x | $(fmt %.0f "${ovh[heaptrack_procs]}") (records none of the children's events) | - |"
	for t in $mt_rows; do
		echo "| $(label_of "$t") | $(fmt %.0f "${ovh[${t}_threads]}") | $(fmt %.2fx "$(ratio "${ovh[${t}_threads]}" "$ht_ev")")" \
			"| $(fmt %.0f "${ovh[${t}_procs]}") | $(fmt %.2fx "$(ratio "${ovh[${t}_procs]}" "$ht_ev")") |"
	done
}

# the floor with probes placed as memtrack places them (past free's flag-only test)
floor_p=$(ratio "${ovh[bpf_no_procs]}" "${ovh[floor_skip_procs]:-nan}")
floor_t=$(ratio "${ovh[bpf_no_threads]}" "${ovh[floor_skip_threads]:-nan}")
floorperf_p=$(ratio "${ovh[bpf_no_procs]}" "${ovh[floor_perf_procs]:-nan}")
floorperf_t=$(ratio "${ovh[bpf_no_threads]}" "${ovh[floor_perf_threads]:-nan}")
fp_vs_ht=$(ratio "${ovh[auto_fp_threads]}" "$ht_ev")
dwarf_vs_ht=$(ratio "${ovh[auto_dwarf_threads]}" "$ht_ev")
bpf_dwarf_slow=$(ratio "${wall[bpf_dwarf_procs]}" "${wall[bpf_no_procs]}")
fixed_ms=$(calc "$fixed_memtrack / 1e6")
rss_auto_mib=$(calc "${rss[auto_dwarf_procs]} / 1024")
rss_bpf_mib=$(calc "${rss[bpf_dwarf_procs]} / 1024")
rp_mt_rate=$(calc "$REPORT_EVENTS / ($(med_of rp_memtrack wall_ns) / 1e9)")
rp_ht_rate=$(calc "$ht_events / ($(med_of rp_heaptrack wall_ns) / 1e9)")
rp_ratio=$(ratio "$rp_mt_rate" "$rp_ht_rate")

# bystanders: the workload beside memtrack / the workload alone
declare -A by_wall by_slow
for wl in procs threads; do
	for be in bare auto bpf; do
		by_wall[${be}_$wl]=$(med_of "by_${be}_$wl" wall_ns)
	done
	for be in auto bpf; do
		by_slow[${be}_$wl]=$(ratio "${by_wall[${be}_$wl]}" "${by_wall[bare_$wl]}")
	done
done
by_recorded() {	# <label>: events memtrack recorded in its artifacts, the most of any round
	cat "$work"/r/"$1".*.recorded 2>/dev/null | sort -g | tail -1
}

# pressure rows per ring in one stats file
pressure_of() {	# <stats jsonl>: "ring n, ..." or "none"
	jq -r 'select(.k == "pressure") | .ring' "$1" 2>/dev/null | sort | uniq -c |
		awk '{ s = s (s ? ", " : "") $2 " " $1 } END { print s ? s : "none" }'
}
pressure_n() { jq -r 'select(.k == "pressure") | .ring' "$1" 2>/dev/null | wc -l; }
pressure_auto=$(pressure_n "$work/cg.auto_dwarf.jsonl")
pressure_bpf=$(pressure_n "$work/cg.bpf_dwarf.jsonl")
[ -s "$work/cg.auto_dwarf.jsonl" ] || pressure_auto=nan
[ -s "$work/cg.bpf_dwarf.jsonl" ] || pressure_bpf=nan

# ---- chart ----------------------------------------------------------------------

{
	# a tool that missed allocations gets no bar, nor does one at or below 0
	bar() {
		case ${cap[$1]} in
		NO*) echo "-" ;;
		*) awk -v x="${ovh[$1]}" 'BEGIN { if (x == "nan" || x <= 0) print "-"; else printf "%.0f", x }' ;;
		esac
	}
	for t in auto_no auto_fp auto_dwarf bpf_no bpf_dwarf $floor_rows heaptrack memleak; do
		case $t in
		auto_no) l="auto (preload), no stacks" ;;
		auto_fp) l="auto (preload), fp" ;;
		auto_dwarf) l="auto (preload), dwarf" ;;
		bpf_no) l="bpf, no stacks" ;;
		bpf_dwarf) l="bpf, dwarf" ;;
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
set terminal pngcairo size 1100,560 font ",10"
set output "$png"
set title "memtrack overhead per allocation event (median of $RUNS; $N x $ALLOCS malloc+free pairs; $(date -u +%Y-%m-%d))"
set ylabel "overhead, ns per event (log)"
set logscale y
set yrange [1:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xtics noenhanced rotate by -20
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
	function dur() { d = $NF; gsub(/[<>]/, "", d); return d + 0 }
	{ t = $2 + 0; if (!t0) t0 = t }
	/openat\(.*"\/sys\/kernel\/btf\/vmlinux"/ && !btf0 { btf_pid = $1; btf_fd = $(NF - 1); btf0 = t }
	btf0 && !btf1 && $1 == btf_pid && ($3 == "close(" btf_fd ")" || $3 == "close(" btf_fd) { btf1 = t }
	/ bpf\(/ && !load0 { load0 = t }
	/bpf\(BPF_LINK_CREATE|bpf\(BPF_RAW_TRACEPOINT_OPEN/ { link1 = t; linkt += dur() }
	/wait4/ && / = [1-9][0-9]* / && !reap { reap = t }
	/close\(|close resumed/ { if (dur() > 0.005) slowclose += dur() }
	{ last = t }
	END {
		printf "| start to the first bpf() call | %.1f |\n", (load0 - t0) * 1e3
		if (btf1) printf "| of which reading /sys/kernel/btf/vmlinux (open to close) | %.1f |\n", (btf1 - btf0) * 1e3
		printf "| first bpf() to the last attach (BTF, maps, load, attach) | %.1f |\n", (link1 - load0) * 1e3
		printf "| of which in attach calls (BPF_LINK_CREATE, BPF_RAW_TRACEPOINT_OPEN) | %.1f |\n", linkt * 1e3
		printf "| last attach to the command reaped | %.1f |\n", (reap - link1) * 1e3
		printf "| command reaped to exit (teardown) | %.1f |\n", (last - reap) * 1e3
		printf "| of which in close() calls over 5 ms (link release) | %.1f |\n", slowclose * 1e3
	}' "$work/fx.strace"
}

stacks_table() {
	local be cg k j w
	echo "| backend | --call-graph | wall s | slowdown vs no | slowdown vs no, overhead table (median of $RUNS) | bytes per allocation: events / stacks / heap ring | pressure rows | stacks poller busy % | resolver busy % | encoder busy % | peak RSS MiB |"
	echo "|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|"
	for be in auto bpf; do
		for cg in no fp dwarf; do
			k=${be}_$cg
			j=$work/cg.$k.json
			w=$(med_of "cg_$k" wall_ns)
			echo "| $be | $cg | $(fmt %.2f "$(calc "$w / 1e9")") | $(fmt %.2fx "$(ratio "$w" "$(med_of "cg_${be}_no" wall_ns)")")" \
				"| $(fmt %.2fx "$(ratio "${wall[${k}_procs]}" "${wall[${be}_no_procs]}")")" \
				"| $(per_alloc "$j" events) / $(per_alloc "$j" stacks) / $(per_alloc "$j" heap)" \
				"| $(pressure_of "$work/cg.$k.jsonl") | $(fmt %.1f "$(ring_of "$j" stacks .busy_pct)")" \
				"| $(fmt %.1f "$(jq -r '.files[0].pipeline.resolver_busy_pct // "nan"' "$j")")" \
				"| $(fmt %.1f "$(jq -r '.files[0].pipeline.encoder_busy_pct // "nan"' "$j")")" \
				"| $(fmt %.1f "$(calc "$(med_of "cg_$k" maxrss_kib) / 1024")") |"
		done
	done
}
ring_of() { jq -r "[.files[0].rings[]? | select(.ring == \"$2\") | $3][0] // \"nan\"" "$1"; }
per_alloc() {	# <stats json> <ring>: its written bytes per allocation, "-" when absent
	fmt %.0f "$(calc "$(ring_of "$1" "$2" .written_bytes) / ($N * $ALLOCS)")"
}

bystander_table() {
	local wl be
	echo "| workload, outside the tree | alone s | beside \`--backend auto\` s | slowdown | beside \`--backend bpf\` s | slowdown | events memtrack recorded (sleep's) | clean runs: alone, auto, bpf |"
	echo "|---|---:|---:|---:|---:|---:|---|---|"
	for wl in procs threads; do
		echo "| alloc_storm_$wl $N $BYSTANDER_ALLOCS | $(fmt %.3f "$(calc "${by_wall[bare_$wl]} / 1e9")")" \
			"| $(fmt %.3f "$(calc "${by_wall[auto_$wl]} / 1e9")") | $(fmt %.2fx "${by_slow[auto_$wl]}")" \
			"| $(fmt %.3f "$(calc "${by_wall[bpf_$wl]} / 1e9")") | $(fmt %.2fx "${by_slow[bpf_$wl]}")" \
			"| auto $(by_recorded "by_auto_$wl"), bpf $(by_recorded "by_bpf_$wl")" \
			"| $(clean_of "by_bare_$wl"), $(clean_of "by_auto_$wl"), $(clean_of "by_bpf_$wl") |"
	done
}

{
	echo "# memtrack benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Machine: $machine."
	echo
	echo "Made by \`make bench\` (bench/run.sh; bench/README.md says how to read it)."
	echo "Measurements: $measured, of which $contaminated ran while a program held uprobes that"
	echo "trap in every process, ours included (uprobe_multi links without a pid: the floor, a"
	echo "memtrack older than per-process links; perf-event uprobes: perf, bcc, bpftrace), or while"
	echo "bpftrace or bcc's memleak ran. Another memtrack whose links name a pid does not count."
	echo "Medians are taken over the clean runs of a row when it has any (column \"clean runs\")."
	echo "Before each measurement the script waited up to ${QUIET_WAIT} s for such programs to go,"
	echo "$QUIET_BUDGET s in all; checks and waits took $waited s."
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
	echo "Traced runs use A = $ALLOCS ($events events per workload): at microseconds per event"
	echo "(a uprobe trap) a one-second workload would take hours under the BPF tracers."
	echo
	echo "## 2. Overhead (median of $RUNS interleaved rounds)"
	echo
	table
	echo
	echo "- wall: end to end, the tool's start-up and teardown included (memleak: from the"
	echo "  workload's start to its exit; its attach took $(cat "$work"/r/memleak_threads.*.start 2>/dev/null | sed -n 's/start_s=//p' | median) s before that)."
	echo "- fixed: the tool's cost on \`true\` (section 6), taken out of the overhead."
	echo "- overhead ns/event = (wall - bare wall - fixed) / $events."
	echo "- slowdown, 1-s run = 1 + overhead per event / bare ns per event of section 1: the"
	echo "  slowdown the one-second workload would see, start-up aside."
	echo "- peak RSS: ru_maxrss of the tool's process tree (largest single process; the bare"
	echo "  workload's is $(fmt %.1f "$(calc "${rss[bare_procs]} / 1024")") MiB); memleak: VmHWM of its python process."
	[ -n "$ml_note" ] && echo "- memleak: $ml_note."
	[ -n "$floor_rows" ] || echo "- floor rows not run (FLOORS=0)."
	echo
	echo "![overhead per event]($(basename "$png"))"
	echo
	echo "## 3. Per event, against heaptrack"
	echo
	echo "Overhead per event (section 2), and its ratio to heaptrack's on alloc_storm_threads. heaptrack"
	echo "does not follow fork: under it alloc_storm_procs runs with the children untraced, so its"
	echo "procs figure is no comparison; memtrack's procs figures are set against heaptrack's on threads."
	echo
	per_event_table
	echo
	echo "## 4. The floor (\`--backend bpf\`)"
	echo
	if [ -n "$floor_rows" ]; then
		echo "\`--backend bpf --call-graph no\` overhead per event / the empty-uprobe floor's, same probes, same run"
		echo "(the floor's links are for every process, memtrack's for each traced process: the trap is the same):"
		echo
		echo "| workload | uprobe_multi link, free probed past its test (as memtrack probes) | perf-event links, free at its entry |"
		echo "|---|---:|---:|"
		echo "| alloc_storm_procs | $(fmt %.2fx "$floor_p") | $(fmt %.2fx "$floorperf_p") |"
		echo "| alloc_storm_threads | $(fmt %.2fx "$floor_t") | $(fmt %.2fx "$floorperf_t") |"
	else
		echo "Not run (FLOORS=0)."
	fi
	echo
	echo "## 5. Bystanders (median of $BYSTANDER_RUNS interleaved rounds)"
	echo
	echo "The workload alone, then the same workload started outside the tree while \`memtrack track"
	echo "--backend B -- sleep\` runs (attached: its stats file has opened its rings and its child is"
	echo "sleep), for each backend; memtrack is stopped with SIGINT after each run. A run over"
	echo "$BYSTANDER_LIMIT s is killed (a failed run, \"-\")."
	echo
	bystander_table
	echo
	echo "## 6. Fixed cost (median of $FIXED_RUNS interleaved rounds)"
	echo
	echo "| run | wall ms | beyond \`true\` ms | peak RSS MiB |"
	echo "|---|---:|---:|---:|"
	fx_rows="true memtrack memtrack_bpf checkbpf"
	[ -z "$floor_rows" ] || fx_rows="$fx_rows floor_multi floor_perf"
	for x in $fx_rows heaptrack; do
		case $x in
		true) l="\`true\`" ;;
		memtrack) l="\`memtrack track -- true\` (auto: preload)" ;;
		memtrack_bpf) l="\`memtrack track --backend bpf -- true\`" ;;
		checkbpf) l="\`memtrack track --check-bpf\` (load, attach, detach; no command)" ;;
		floor_multi) l="floor, uprobe_multi, \`true\`" ;;
		floor_perf) l="floor, perf-event links, \`true\`" ;;
		heaptrack) l="\`heaptrack true\`" ;;
		esac
		m=$(med_of "fx_$x" wall_ns)
		echo "| $l | $(fmt %.1f "$(calc "$m / 1e6")") | $(fmt %.1f "$(calc "($m - $fx_true) / 1e6")") | $(fmt %.1f "$(calc "$(med_of "fx_$x" maxrss_kib) / 1024")") |"
	done
	echo
	if [ -n "$floor_rows" ]; then
		echo "Floor phases (ms, median): uprobe_multi load $(fmt %.1f "$(phase_med fx_floor_multi load_ns)"), attach $(fmt %.1f "$(phase_med fx_floor_multi attach_ns)"), detach $(fmt %.1f "$(phase_med fx_floor_multi detach_ns)");"
		echo "perf-event links load $(fmt %.1f "$(phase_med fx_floor_perf load_ns)"), attach $(fmt %.1f "$(phase_med fx_floor_perf attach_ns)"), detach $(fmt %.1f "$(phase_med fx_floor_perf detach_ns)")."
		echo
	fi
	echo "Where \`memtrack track -- true\` spends its time, one run under strace (inflated by strace):"
	echo
	echo "| phase | ms |"
	echo "|---|---:|"
	strace_phases
	echo
	echo "## 7. Report speed (median of $REPORT_RUNS)"
	echo
	echo "| input | events | wall s | events/s | peak RSS MiB |"
	echo "|---|---:|---:|---:|---:|"
	m=$(med_of rp_memtrack wall_ns)
	echo "| \`memtrack report --json\`, synthetic artifact ($(kv "$work/synth.out" bytes) bytes; read back $rp_read events) | $REPORT_EVENTS | $(fmt %.2f "$(calc "$m / 1e9")") | $(fmt %.0f "$rp_mt_rate") | $(fmt %.1f "$(calc "$(med_of rp_memtrack maxrss_kib) / 1024")") |"
	if [ -n "$real_art" ]; then
		m=$(med_of rp_memtrack_real wall_ns)
		echo "| \`memtrack report --json\`, real artifact of alloc_storm_procs $N $ALLOCS (auto, no stacks) | $real_events | $(fmt %.2f "$(calc "$m / 1e9")") | $(fmt %.0f "$(calc "$real_events / ($m / 1e9)")") | $(fmt %.1f "$(calc "$(med_of rp_memtrack_real maxrss_kib) / 1024")") |"
	fi
	m=$(med_of rp_heaptrack wall_ns)
	echo "| \`heaptrack_print\`, heaptrack's recording of alloc_storm_threads $N $HT_ALLOCS ($ht_calls calls) | $ht_events | $(fmt %.2f "$(calc "$m / 1e9")") | $(fmt %.0f "$rp_ht_rate") | $(fmt %.1f "$(calc "$(med_of rp_heaptrack maxrss_kib) / 1024")") |"
	echo
	echo "Events of heaptrack's recording: its workload's mallocs and frees ($ht_events), not counting"
	echo "the stacks heaptrack also records. memtrack report's artifact has no stacks."
	echo
	echo "## 8. Call stacks and pressure (alloc_storm_procs $N $ALLOCS, one run per backend and mode, with --stats)"
	echo
	stacks_table
	echo
	echo "Allocations: the $((N * ALLOCS)) mallocs (frees carry no stack). \`bpf\`: events go through the"
	echo "events ring, stacks through the stacks ring (dwarf: registers and the live part of the user"
	echo "stack, unwound by the stacks poller, whose busy % is then the unwinder's; fp: each distinct"
	echo "stack once). \`auto\`: the shim's per-thread rings (ring \`heap\`) carry the events and each"
	echo "distinct stack once, unwound in process. Pressure rows: BPF stopped a producer (events,"
	echo "stacks), or a shim thread waited for room in its ring (heap); \"none\" is the target with the"
	echo "default settings (dwarf, default ring sizes)."
	echo
	echo "## 9. Real programs (median of $RUNS interleaved rounds)"
	echo
	echo "Compilers, python and make bare, under \`memtrack track\` (defaults: auto, dwarf) and"
	echo "heaptrack where it runs them (one process); the processes each backend traced."
	echo
	cat "$work/real.md"
	echo
	echo "## Targets (measured in this run)"
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	echo "| \`--backend auto --call-graph fp\`: overhead per event <= 0.5x heaptrack's (threads) | $(fmt %.0f "${ovh[auto_fp_threads]}") vs $(fmt %.0f "$ht_ev") ns ($(fmt %.2fx "$fp_vs_ht")) | $(verdict "$fp_vs_ht" '<=' 0.5) |"
	echo "| \`--backend auto --call-graph dwarf\`: overhead per event <= 1x heaptrack's (threads) | $(fmt %.0f "${ovh[auto_dwarf_threads]}") vs $(fmt %.0f "$ht_ev") ns ($(fmt %.2fx "$dwarf_vs_ht")) | $(verdict "$dwarf_vs_ht" '<=' 1) |"
	echo "| \`--backend auto --call-graph no\`: overhead <= 50 ns per event | threads $(fmt %.0f "${ovh[auto_no_threads]}"), procs $(fmt %.0f "${ovh[auto_no_procs]}") ns | $(verdict "${ovh[auto_no_threads]}" '<=' 50), $(verdict "${ovh[auto_no_procs]}" '<=' 50) |"
	echo "| default settings (auto, dwarf) on alloc_storm_procs $N $ALLOCS: no pressure rows | $(pressure_of "$work/cg.auto_dwarf.jsonl") | $(verdict "$pressure_auto" '==' 0) |"
	echo "| \`--backend bpf\`, default settings, on alloc_storm_procs $N $ALLOCS: no pressure rows | $(pressure_of "$work/cg.bpf_dwarf.jsonl") | $(verdict "$pressure_bpf" '==' 0) |"
	echo "| \`--backend bpf\`: dwarf <= 1.3x as slow as no stacks (procs, wall, section 2 medians) | $(fmt %.2fx "$bpf_dwarf_slow") | $(verdict "$bpf_dwarf_slow" '<=' 1.3) |"
	for be in auto bpf; do
		echo "| bystander beside \`--backend $be\` <= 1.1x as slow as alone | procs $(fmt %.2fx "${by_slow[${be}_procs]}"), threads $(fmt %.2fx "${by_slow[${be}_threads]}") | $(verdict "${by_slow[${be}_procs]}" '<=' 1.1), $(verdict "${by_slow[${be}_threads]}" '<=' 1.1) |"
	done
	[ -z "$floor_rows" ] ||
		echo "| \`--backend bpf --call-graph no\`: overhead per event <= 1.5x the uprobe_multi floor (free probed past its test, as memtrack does) | procs $(fmt %.2fx "$floor_p"), threads $(fmt %.2fx "$floor_t") | $(verdict "$floor_p" '<=' 1.5), $(verdict "$floor_t" '<=' 1.5) |"
	echo "| fixed cost of \`memtrack track -- true\` < 50 ms | $(fmt %.1f "$fixed_ms") ms | $(verdict "$fixed_ms" '<' 50) |"
	echo "| memtrack peak RSS < 64 MiB on alloc_storm_procs $N $ALLOCS with dwarf stacks | auto $(fmt %.1f "$rss_auto_mib"), bpf $(fmt %.1f "$rss_bpf_mib") MiB | $(verdict "$rss_auto_mib" '<' 64), $(verdict "$rss_bpf_mib" '<' 64) |"
	echo "| report faster per event than heaptrack_print | $(fmt %.0f "$rp_mt_rate") vs $(fmt %.0f "$rp_ht_rate") events/s ($(fmt %.2fx "$rp_ratio")) | $(verdict "$(ratio 1 "$rp_ratio")" '<' 1) |"
	echo
	echo "## Encoder"
	echo
	cat "$work/encoder.md"
} >"$md"

echo
sed -n '/^## 2\./,/^## Encoder/p' "$md" | grep -v '^!\[' | sed '$d'
log "bench: wrote $md and $png"
