#!/bin/bash
# The compat corpus: real commands run bare and under memtrack, which must not change them.
#
# Usage: tests/compat/run.sh [--fast] [--keep] [--list] [--cases <file>] [<pattern>...]
#
# Each case of tests/compat/cases.sh runs bare, then under
# `memtrack track -q -o <dir>` with --call-graph dwarf, fp and no, and with
# --backend bpf when it says so.  A run passes when its exit status and
# stdout are the bare run's (its stderr too, where the case says it is
# deterministic), it leaves no process behind, its artifact reads back whole,
# and, where the case asks, its allocation counts equal valgrind's or the
# ones the case knows.  A row of the table per case: bare and memtrack
# seconds per mode (the first run of each), the backends of the dwarf run's
# processes (from the report's process table), the outcome.
#
# A case that fails today because of a known harm carries "xfail=ISSUE:MODES":
# its failure in those modes is reported as "xfail ISSUE", and, once every
# mode of the mark passes, as "fixed, remove the mark", neither of them a
# failure.  A case whose tool is missing is skipped with a message.  Exit 0
# when no case failed, 1 otherwise, 2 when memtrack cannot track here at all.
#
#   --fast      only the cases marked fast, repeated at most 3 times, 30 s a
#               run at most (tests/shell/compat_fast.sh, in make test)
#   --keep      keep the work directory (outputs, artifacts, logs) and say where
#   --list      list the cases and their flags, run nothing
#   --cases <file>  the cases of <file>, not tests/compat/cases.sh
#   <pattern>   only the cases whose name contains one of the patterns
#
# TIMEOUT_SCALE multiplies every time limit (120 s a run by default, or the
# case's timeout=N; with --fast, 30 s at most: its commands take a second).  MEMTRACK is the binary (default ./memtrack).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
MEMTRACK=${MEMTRACK:-$TOP/memtrack}
WORKLOADS=$TOP/tests/workloads
COMPAT=$TOP/tests/compat
TIMEOUT_SCALE=${TIMEOUT_SCALE:-1}
RUN_TIMEOUT=120
FAST=0 KEEP=0 LIST=0
CASES_FILE=$COMPAT/cases.sh
PATTERNS=()

while [ $# -gt 0 ]; do
	case $1 in
	--fast) FAST=1 RUN_TIMEOUT=30 ;;
	--keep) KEEP=1 ;;
	--list) LIST=1 ;;
	--cases)
		[ $# -ge 2 ] || { echo "run.sh: --cases needs a file" >&2; exit 129; }
		CASES_FILE=$2
		shift
		;;
	-h | --help) sed -n '3,/^set -u/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;;
	-*) echo "run.sh: unknown option '$1'" >&2; exit 129 ;;
	*) PATTERNS+=("$1") ;;
	esac
	shift
done

declare -a CASES=()
declare -A CASE_FLAGS=() CASE_ARGV=()

# compat_case NAME FLAG... -- ARGV...: one case (tests/compat/cases.sh says what the flags mean)
compat_case() {
	local name=$1 flags=()

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		flags+=("$1")
		shift
	done
	if [ $# -lt 2 ] || [ -n "${CASE_ARGV[$name]+set}" ]; then
		echo "cases.sh: case '$name' is defined twice or has no '-- <command>'" >&2
		exit 1
	fi
	shift
	CASES+=("$name")
	CASE_FLAGS[$name]=$(printf '%s\n' "${flags[@]}")
	CASE_ARGV[$name]=$(printf '%q ' "$@")
}

# load_flags <case>: its flags in F, the flag -> its value ("" for a bare
# flag; the values of sized=, xfail=, fixture= and env=, which may repeat, one a line)
declare -A F=()
load_flags() {
	local f key

	F=()
	while IFS= read -r f; do
		[ -n "$f" ] || continue
		key=${f%%=*}
		if [ "$key" = "$f" ]; then
			F[$key]=
		elif [ -n "${F[$key]:-}" ] && [[ $key == @(sized|xfail|fixture|env) ]]; then
			F[$key]+=$'\n'${f#*=}
		else
			F[$key]=${f#*=}
		fi
	done <<<"${CASE_FLAGS[$1]}"
}

# has <flag>: whether the loaded case has it, with a value or not
has() {
	[ -n "${F[$1]+set}" ]
}

# the command line of a case as the table shows it: one line, paths short
cmdline_of() {
	local line

	line=$(eval "printf '%s ' ${CASE_ARGV[$1]}")
	line=${line//$'\n'/ }
	line=${line//"$W/"/}
	line=${line//"$TOP/"/}
	printf '%s' "${line% }"
}

# in the work directory: data/ (fixtures), bin/ (programs built for the
# cases), run/ (each run's working directory, made afresh), art/, res/
W=$(mktemp -d /tmp/memtrack-compat.XXXXXX) || exit 1
chmod 755 "$W"
D=$W/data
B=$W/bin
mkdir -p "$D" "$B" "$W/art" "$W/res" "$W/home" "$W/tmp" "$W/cache" "$W/fixtures"
TOKEN=memtrack-compat-$$
runs=0

# marked_pids <token>: the processes of a run, by the marker in the
# environment each run starts with and its children inherit; with no
# token, those of every run
marked_pids() {
	local f pattern="^MEMTRACK_COMPAT_RUN=$TOKEN-${1:-[0-9]+}\$"

	while IFS= read -r f; do
		f=${f#/proc/}
		echo "${f%/environ}"
	done < <(grep -lszE -- "$pattern" /proc/[0-9]*/environ 2>/dev/null)
}

cleanup() {
	local pids

	pids=$(marked_pids)
	# shellcheck disable=SC2086 # one pid a word
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
	if [ "$KEEP" = 1 ]; then
		echo "work directory kept: $W"
	else
		rm -rf "$W"
	fi
	trap - EXIT
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=tests/compat/cases.sh
. "$CASES_FILE" || exit 1

if [ "$LIST" = 1 ]; then
	for name in "${CASES[@]}"; do
		printf '%-24s %s\n%24s [%s]\n' "$name" "$(cmdline_of "$name")" "" \
			"$(tr '\n' ' ' <<<"${CASE_FLAGS[$name]}" | sed 's/ $//')"
	done
	exit 0
fi

if [ ! -x "$MEMTRACK" ]; then
	echo "run.sh: $MEMTRACK is not built: run 'make'" >&2
	exit 1
fi
if ! why=$("$MEMTRACK" track --check-bpf 2>&1 >/dev/null); then
	echo "[Skip] memtrack cannot track here: $why"
	exit 2
fi

selected() {
	local p

	[ "$FAST" = 1 ] && ! grep -qxF fast <<<"${CASE_FLAGS[$1]}" && return 1
	[ ${#PATTERNS[@]} -eq 0 ] && return 0
	for p in "${PATTERNS[@]}"; do
		[[ $1 == *"$p"* ]] && return 0
	done
	return 1
}

# what every run starts from, bare or not: nothing of the caller's environment
RUN_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$W/home"
	TMPDIR="$W/tmp" LANG=C.UTF-8 TERM=dumb USER=root LOGNAME=root SHELL=/bin/bash
	PYTHONHASHSEED=0 MEMTRACK_CACHE_DIR="$W/cache")

# the data most cases read, made first; what only some need is made by
# their fixture= when the first of them runs
if ! (cd "$D" && compat_data) >"$W/fixtures/data" 2>&1; then
	echo "run.sh: the cases' data could not be made: $(tail -n 1 "$W/fixtures/data")" >&2
	exit 1
fi

# fixture <name>: fixture_<name> of cases.sh, run once in data/; prints why
# it could not be made, if it could not
fixture() {
	local log=$W/fixtures/$1

	if [ ! -f "$log.done" ]; then
		if (cd "$D" && "fixture_$1") >"$log" 2>&1; then
			: >"$log.done"
		else
			tail -n 1 "$log" >"$log.failed"
			: >"$log.done"
		fi
	fi
	[ -f "$log.failed" ] && echo "fixture $1: $(<"$log.failed")"
}

# usecs <EPOCHREALTIME>: as an integer
usecs() {
	local s=${1%.*} f=${1#*.}

	echo $((10#$s * 1000000 + 10#${f:0:6}))
}

# unavailable <case>: why it cannot run here (a tool of its needs= missing,
# a fixture that could not be made), or nothing
unavailable() {
	local need fx why needs=${F[needs]:-}

	while IFS= read -r fx; do
		[ -n "$fx" ] || continue
		why=$(fixture "$fx")
		[ -z "$why" ] || { echo "$why"; return; }
	done <<<"${F[fixture]:-}"
	while IFS= read -r need; do
		[ -n "$need" ] || continue
		if [[ $need == */* ]]; then
			[ -e "$need" ] || { echo "no ${need#"$B/"}"; return; }
		else
			command -v "$need" >/dev/null 2>&1 || { echo "no $need"; return; }
		fi
	done <<<"${needs//,/$'\n'}"
}

# run_one <case> <mode> <rep>: one run in a fresh run/; its files in res/<case>/
# <mode>.<rep>.* (out, err, rc, usecs, timeout, left, files, sum: what the
# report says) and its artifact in art/<case>.<mode>.<rep>/
run_one() {
	local name=$1 mode=$2 rep=$3 res=$W/res/$1 art=$W/art/$1.$2.$3 base
	local limit token rc t0 t1 pids p comm state others a cmd=() argv=() arts=() env=()

	base=$res/$mode.$rep
	eval "argv=(${CASE_ARGV[$name]})"
	limit=${F[timeout]:-$RUN_TIMEOUT}
	[ "$FAST" = 0 ] || [ "$limit" -le "$RUN_TIMEOUT" ] || limit=$RUN_TIMEOUT
	limit=$((limit * TIMEOUT_SCALE))
	runs=$((runs + 1))
	token=$TOKEN-$runs

	rm -rf "$W/run" "$art"
	mkdir -p "$W/run" "$art" "$res"
	if has setup && ! (cd "$W/run" && "${F[setup]}") >"$base.setup" 2>&1; then
		echo "setup ${F[setup]} failed: $(tail -n 1 "$base.setup")" >"$base.setupfail"
	fi

	[ -z "${F[env]:-}" ] || mapfile -t env <<<"${F[env]}"
	# --foreground: the run stays in our process group, which a test runner's
	# kill reaches; what outlives its limit is found by its marker below
	cmd=(timeout --foreground -k 10 "$limit" env -i "${RUN_ENV[@]}" "${env[@]}" "MEMTRACK_COMPAT_RUN=$token")
	! has pty || cmd+=(/usr/bin/python3 "$COMPAT/pty_run.py" "${F[pty]}" --)
	case $mode in
	bare) ;;
	vg) cmd+=(valgrind --tool=memcheck --run-libc-freeres=no --log-file="$base.vglog") ;;
	bpf) cmd+=("$MEMTRACK" track -q -o "$art" --backend bpf --) ;;
	*) cmd+=("$MEMTRACK" track -q -o "$art" --call-graph "$mode" --) ;;
	esac
	cmd+=("${argv[@]}")

	t0=$EPOCHREALTIME
	# in the background: a TERM or INT for us ends the wait, and cleanup the run
	(cd "$W/run" && exec "${cmd[@]}") </dev/null >"$base.out" 2>"$base.err" &
	wait $!
	rc=$?
	t1=$(( $(usecs "$EPOCHREALTIME") - $(usecs "$t0") ))
	echo "$rc" >"$base.rc"
	echo "$t1" >"$base.usecs"
	if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ "$t1" -ge $((limit * 1000000)) ]; then
		echo "$limit" >"$base.timeout"
	fi

	# what is left of the run: given 10 s to go (an orphan finishing), then
	# killed; memtrack's guardian, which closes its BPF links after it has
	# gone (a slow release on a busy machine), 120 s
	local deadline=$((SECONDS + 10)) guard_deadline=$((SECONDS + 120))
	while pids=$(marked_pids "$runs") && [ -n "$pids" ]; do
		others=
		for p in $pids; do
			comm=
			read -r comm <"/proc/$p/comm" 2>/dev/null
			[ "$comm" = memtrack-guard ] || others+=" $p"
		done
		if [ -n "$others" ]; then
			[ $SECONDS -ge $deadline ] && break
		else
			[ $SECONDS -ge $guard_deadline ] && break
		fi
		sleep 0.05
	done
	if [ -n "$pids" ]; then
		for p in $pids; do
			comm=''
			read -r comm <"/proc/$p/comm" 2>/dev/null
			state=$(awk '/^State:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
			printf '%s(%s) ' "$comm" "$state"
		done >"$base.left"
		# shellcheck disable=SC2086 # one pid a word
		kill -KILL $pids 2>/dev/null
	fi

	if has files; then
		(cd "$W/run" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) >"$base.files"
	fi
	[ "$mode" != bare ] && [ "$mode" != vg ] || return 0
	arts=("$art"/*.MemtrackArtifact.msgpack)
	a=${arts[0]}
	if [ ! -f "$a" ]; then
		echo "no artifact" >"$base.artfail"
		return 0
	fi
	# one line: whether it read back whole, the root's allocations and frees, the backends
	if ! "$MEMTRACK" report --json "$a" 2>"$base.report-err" | jq -r '
		(if .truncated or .error != null then "truncated \(.error | tostring)" else "whole" end),
		(.meta.root_pid as $r | [.processes[] | select(.pid == $r)] | last |
			"\(.allocations // "-") \(if .frees then .frees - (.libc_freed_count // 0) else "-" end)"),
		((.meta.blind // 0) as $blind | [.processes[].backend // "none"] | group_by(.) |
			map("\(.[0]) \(length)") + (if $blind > 0 then ["blind \($blind)"] else [] end) |
			join(", "))' >"$base.sum" 2>>"$base.report-err" || [ ! -s "$base.sum" ]; then
		echo "memtrack report failed: $(head -n 1 "$base.report-err")" >"$base.artfail"
	fi
	if has sized; then
		"$MEMTRACK" report --dump "$a" >"$base.dump" 2>/dev/null
	fi
	[ "$KEEP" = 1 ] || rm -rf "$art"
}

# compared <stream> <file>: the file to compare, through the case's
# stdout=/stderr= filter when it has one (into <file>.cmp)
compared() {
	if [ -n "${F[$1]:-}" ]; then
		sh -c "${F[$1]}" <"$2" >"$2.cmp"
		echo "$2.cmp"
	else
		echo "$2"
	fi
}

# first_diff <bare> <other>: the first line that differs, as diff shows it
first_diff() {
	diff "$1" "$2" | grep -m 1 '^[<>]' | cut -c 1-80
}

# vg_counts <valgrind log>: "allocs frees" of its heap summary
vg_counts() {
	sed -n 's/.*total heap usage: \([0-9,]*\) allocs, \([0-9,]*\) frees.*/\1 \2/p' "$1" |
		tail -n 1 | tr -d ,
}

# check_counts <case> <base>: prints what differs from the counts the case expects
check_counts() {
	local name=$1 base=$2 tol want got spec type size n line

	if has vg; then
		tol=${F[vg]:-0}
		want=$(vg_counts "$W/res/$name/vg.1.vglog")
		{ read -r line; read -r got; } <"$base.sum"
		if [ -z "$want" ]; then
			echo "valgrind gave no heap summary"
		elif [[ ! $got =~ ^[0-9]+\ [0-9]+$ ]]; then
			echo "no root process in the report"
		else
			# shellcheck disable=SC2086 # two numbers each
			set -- $want $got
			if [ $(( $1 > $3 ? $1 - $3 : $3 - $1 )) -gt "$tol" ] ||
				[ $(( $2 > $4 ? $2 - $4 : $4 - $2 )) -gt "$tol" ]; then
				echo "allocs/frees $3/$4, valgrind $1/$2"
			fi
		fi
	fi
	while IFS= read -r spec; do
		[ -n "$spec" ] || continue
		IFS=: read -r type size n <<<"$spec"
		got=$(jq -c --arg t "$type" --argjson s "$size" \
			'select(.type == $t and .size == $s)' "$base.dump" 2>/dev/null | wc -l)
		[ "$got" = "$n" ] || echo "$got $type($size), not $n"
	done <<<"${F[sized]:-}"
}

# check_one <case> <mode> <rep>: prints why the run differs from the bare one, one reason a line
check_one() {
	local name=$1 base=$W/res/$1/$2.$3 bare=$W/res/$1/bare.1 rc brc incomplete=0 x y whole

	[ -f "$base.setupfail" ] && cat "$base.setupfail"
	[ -f "$base.timeout" ] && echo "timeout after $(<"$base.timeout")s"
	read -r rc <"$base.rc"
	read -r brc <"$bare.rc"
	if has incomplete-ok && [ "$rc" = 128 ] && [ "$brc" != 128 ] &&
		grep -q 'the artifact is incomplete' "$base.err"; then
		incomplete=1
	fi
	[ "$rc" = "$brc" ] || [ $incomplete = 1 ] || echo "rc $rc (bare $brc)"
	x=$(compared stdout "$bare.out")
	y=$(compared stdout "$base.out")
	cmp -s "$x" "$y" || echo "stdout: $(first_diff "$x" "$y")"
	if [ $incomplete = 0 ] && has stderr; then
		x=$(compared stderr "$bare.err")
		y=$(compared stderr "$base.err")
		cmp -s "$x" "$y" || echo "stderr: $(first_diff "$x" "$y")"
	fi
	if has files && ! cmp -s "$bare.files" "$base.files"; then
		echo "files: $(first_diff "$bare.files" "$base.files" | cut -c 1-2,69-)"
	fi
	[ -f "$base.left" ] && echo "left behind: $(<"$base.left")"
	[ -f "$base.artfail" ] && cat "$base.artfail"
	if [ -f "$base.sum" ] && [ ! -f "$base.artfail" ]; then
		read -r whole <"$base.sum"
		[ "$whole" = whole ] || echo "artifact $whole"
		[ $incomplete = 1 ] || check_counts "$name" "$base"
	fi
}

# secs <file of microseconds>: as seconds with two decimals, "-" when there is none
secs() {
	local u

	if [ -f "$1" ]; then
		read -r u <"$1"
		printf '%d.%02d' $((u / 1000000)) $((u / 10000 % 100))
	else
		printf -- '-'
	fi
}

# xfail_issue <mode>: the issue a mark of the loaded case says this mode waits for
xfail_issue() {
	local spec issue modes

	while IFS= read -r spec; do
		[ -n "$spec" ] || continue
		issue=${spec%%:*}
		modes=${spec#*:}
		[ "$modes" = "$spec" ] && modes=all
		if [ "$modes" = all ] || [[ ,$modes, == *",$1,"* ]]; then
			echo "$issue"
			return
		fi
	done <<<"${F[xfail]:-}"
}

n_pass=0 n_fail=0 n_xfail=0 n_fixed=0 n_skip=0
failed_cases=() details=()
ROW='%-22s %-36s %6s %6s %6s %6s %6s  %-18s %s\n'

# row <case> <command> <5 times> <backends> <outcome>: a line of the table
row() {
	local line=$2

	[ ${#line} -gt 36 ] && line="${line:0:35}~"
	# shellcheck disable=SC2059
	printf "$ROW" "$1" "$line" "${@:3}"
}

# run_case <case>: all its runs, checks, and its row of the table
run_case() {
	local name=$1 modes=(dwarf fp no) reps why issue mode rep m line
	local -A fails=() marked=()
	local bad=() xf=() fx=() outcome=() res=$W/res/$1 backends=-

	load_flags "$name"
	why=$(unavailable "$name")
	if [ -n "$why" ]; then
		n_skip=$((n_skip + 1))
		row "$name" "$(cmdline_of "$name")" - - - - - - "skip: $why"
		return
	fi
	has bpf && modes+=(bpf)
	reps=${F[repeat]:-1}
	[ "$FAST" = 1 ] && [ "$reps" -gt 3 ] && reps=3

	run_one "$name" bare 1
	! has vg || run_one "$name" vg 1
	for mode in "${modes[@]}"; do
		for ((rep = 1; rep <= reps; rep++)); do
			run_one "$name" "$mode" "$rep"
			why=$(check_one "$name" "$mode" "$rep")
			if [ -n "$why" ]; then
				[ "$reps" -gt 1 ] && why="run $rep of $reps: $why"
				fails[$mode]=$why
				break
			fi
		done
	done

	# a mark is fixed when every mode it names passes; a flaky harm that
	# let one of them through is still a known failure
	for mode in "${modes[@]}"; do
		issue=$(xfail_issue "$mode")
		[ -z "$issue" ] || marked[$mode]=$issue
		if [ -n "${fails[$mode]+set}" ]; then
			if [ -n "$issue" ]; then
				xf+=("$mode")
			else
				bad+=("$mode")
			fi
			line=${fails[$mode]%%$'\n'*}
			details+=("$name [$mode]${issue:+ (xfail $issue)}: ${line:0:200}")
			while IFS= read -r m; do
				[ -z "$m" ] || details+=("        ${m:0:200}")
			done < <(tail -n +2 <<<"${fails[$mode]}")
		fi
	done
	for mode in "${modes[@]}"; do
		[ -n "${marked[$mode]+set}" ] && [ -z "${fails[$mode]+set}" ] || continue
		for m in "${xf[@]}"; do
			[ "${marked[$m]}" != "${marked[$mode]}" ] || continue 2
		done
		fx+=("$mode")
	done

	if [ ${#bad[@]} -gt 0 ]; then
		outcome+=("FAIL $(IFS=,; echo "${bad[*]}"): ${fails[${bad[0]}]%%$'\n'*}")
		n_fail=$((n_fail + 1))
		failed_cases+=("$name")
	fi
	if [ ${#xf[@]} -gt 0 ]; then
		outcome+=("xfail ${marked[${xf[0]}]} ($(IFS=,; echo "${xf[*]}"): ${fails[${xf[0]}]%%$'\n'*})")
		[ ${#bad[@]} -gt 0 ] || n_xfail=$((n_xfail + 1))
	fi
	if [ ${#fx[@]} -gt 0 ]; then
		outcome+=("fixed, remove the mark xfail=${marked[${fx[0]}]} ($(IFS=,; echo "${fx[*]}"))")
		[ ${#bad[@]} -gt 0 ] || [ ${#xf[@]} -gt 0 ] || n_fixed=$((n_fixed + 1))
	fi
	if [ ${#outcome[@]} -eq 0 ]; then
		outcome=(pass)
		n_pass=$((n_pass + 1))
	fi

	if [ -f "$res/dwarf.1.sum" ]; then
		{ read -r line; read -r line; read -r backends; } <"$res/dwarf.1.sum"
	fi
	line=$(IFS=';'; echo "${outcome[*]}")
	line=${line//;/; }
	row "$name" "$(cmdline_of "$name")" "$(secs "$res/bare.1.usecs")" \
		"$(secs "$res/dwarf.1.usecs")" "$(secs "$res/fp.1.usecs")" "$(secs "$res/no.1.usecs")" \
		"$(secs "$res/bpf.1.usecs")" "${backends:--}" "${line:0:160}"
}

echo "work directory: $W"
row case command bare dwarf fp no bpf backends outcome
for name in "${CASES[@]}"; do
	selected "$name" || continue
	run_case "$name"
done

echo
echo "$n_pass passed, $n_fail failed, $n_xfail known failures (xfail)," \
	"$n_fixed fixed (remove the mark), $n_skip skipped"
if [ ${#details[@]} -gt 0 ]; then
	echo
	echo "runs that differ from the bare one:"
	printf '  %s\n' "${details[@]}"
fi
[ ${#failed_cases[@]} -eq 0 ] || { echo "failed: ${failed_cases[*]}"; exit 1; }
exit 0
