# shellcheck shell=bash
# Helpers for tests/shell/*.sh.  Source with: . "$(dirname "$0")/lib/common.sh"

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
MEMTRACK=${MEMTRACK:-$TOP/memtrack}
# shellcheck disable=SC2034 # used by the scripts that source this
WORKLOADS=${WORKLOADS:-$TOP/tests/workloads}
failures=0
# through sudo or not, commands run as root: track_sudo sets these itself
unset SUDO_UID SUDO_GID SUDO_USER
# debug files come from the tests' own directories and servers, never the network's
unset DEBUGINFOD_URLS MEMTRACK_DEBUG_DIRS
# no DWARF answers kept from run to run (/var/cache/memtrack) unless a test asks
export MEMTRACK_CACHE_DIR=

skip() {
	echo "[Skip] $*"
	exit 2
}

# Skip only when this kernel (or this build) cannot run memtrack's BPF at
# all; any other failure to load or attach is a failure of the test.
skip_if_no_bpf() {
	local why
	[ "$(id -u)" -eq 0 ] || skip "not root: BPF needs root"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
	why=$("$MEMTRACK" track --check-bpf 2>&1 >/dev/null) && return 0
	case $why in
	*"built without BPF"* | *"needs root"* | *"this kernel lacks"*) skip "$why" ;;
	esac
	echo "memtrack track --check-bpf failed: $why"
	exit 1
}

pass() { echo "$1 ... [Success]"; }
fail() {
	echo "$1 ... [Fail: $2]"
	failures=$((failures + 1))
}

# expect_eq <test name> <expected> <actual>
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}

# exact_or_said <what> <expected> <got> <memtrack's rc> <its stderr>: the count is
# exact, or memtrack said its artifact is incomplete because another process
# resumed one of its holds early (a race it can lose on a busy machine); a
# count short of the expected one with exit 0 is always a failure
exact_or_said() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	elif [ "$4" = 128 ] && grep -q "SIGCONT resumed a process memtrack held" "$5"; then
		pass "$1 (got $3, and memtrack said a hold was ended early)"
	else
		fail "$1" "expected '$2', got '$3' (memtrack's exit $4)"
	fi
}

# rc_or_said <memtrack's rc> <its stderr>: the rc, or 0 for memtrack's 128 of a hold ended early
rc_or_said() {
	if [ "$1" = 128 ] && grep -q "SIGCONT resumed a process memtrack held" "$2"; then
		echo 0
	else
		echo "$1"
	fi
}

# attach_target_start: starts tests/workloads/attach_target (pid in $target), and
# memtrack track -p on it (pid in $mt, stderr in $tmp/err) once it is ready; the
# caller's cleanup kills $target
attach_target_start() {
	# shellcheck disable=SC2154 # $tmp is the calling script's
	"$WORKLOADS/attach_target" >"$tmp/ready" &
	target=$!
	wait_for 10 grep -q ready "$tmp/ready"
	"$MEMTRACK" track -o "$tmp" -p "$target" 2>"$tmp/err" &
	# shellcheck disable=SC2034 # for the scripts that source this
	mt=$!
	wait_for 20 grep -q "tracking pid $target" "$tmp/err"
}

# attach_target_run: attach_target_start, then the target runs to its end;
# memtrack's exit status in $rc
attach_target_run() {
	rc=0
	attach_target_start
	kill -USR1 "$target"
	wait "$mt" || rc=$?
	wait "$target" || true
}

# json_get <file> <jq filter>: prints one value of a JSON document
json_get() {
	jq -r "$2" "$1"
}

# wait_for <seconds> <command...>: polls until the command succeeds, for that long
# times TEST_SCALE (tests/run.sh: a slow or loaded machine)
wait_for() {
	local deadline=$((SECONDS + $1 * ${TEST_SCALE:-1}))
	shift
	until "$@"; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.05
	done
}

# status <command...>: runs it with stdout in $tmp/out and stderr in $tmp/err,
# and prints its exit status (the caller's $tmp holds the files)
# shellcheck disable=SC2154 # $tmp is the calling script's
status() {
	local rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	echo $rc
}

# write_samples <unit test> <dir>: the synthetic artifacts a unit test
# program writes with --write (make unit builds it; a missing one fails)
write_samples() {
	local gen=$TOP/${OUTPUT:-.output}/tests/unit/$1
	if [ ! -x "$gen" ]; then
		echo "$gen is not built: run 'make unit'"
		exit 1
	fi
	mkdir -p "$2"
	"$gen" --write "$2" >/dev/null
}

# pprof_decode <profile.pb.gz> <dir>: the profile as JSON (see lib/pprof_decode.py),
# decoded by Google's protobuf runtime (python3-protobuf) with the Python module that
# protoc makes from util/report/profile.proto into <dir>
pprof_decode() {
	if [ ! -f "$2/profile_pb2.py" ]; then
		protoc --proto_path="$TOP/util/report" --python_out="$2" "$TOP/util/report/profile.proto" || return 1
	fi
	/usr/bin/python3 "$TOP/tests/shell/lib/pprof_decode.py" "$2" "$1"
}

# browse <page.html> [--screenshot <png>] [--json <file>] [<expression>...] [--page ...]:
# the pages in Debian's chromium, headless, driven by tests/html/browse.js through the
# DevTools protocol; what it saw of each (results of the expressions, console, requests)
# as JSON, to its --json file or to stdout
browse() {
	if [ ! -d "$TOP/tests/html/node_modules/ws" ]; then
		echo "tests/html/node_modules is missing: run scripts/install-deps.sh" >&2
		return 1
	fi
	node "$TOP/tests/html/browse.js" "$@"
}

# cxx_inline_chain <artifact> [<report options>...]: the frames of cxx_inline's
# site of 7 calls, innermost first, one a line: "symbol [(inlined)] file:line"
cxx_inline_chain() {
	local art=$1
	shift
	"$MEMTRACK" report --json --stack-depth 4 "$@" "$art" | jq -r '.sites[] |
		select(.calls == 7) | .frames[] | "\(.symbol)\(if .inlined then " (inlined)"
		else "" end) \(.file // "-" | split("/") | last):\(.line // 0)"'
}

# cxx_inline_expected: that chain as cxx_inline.cc's markers place it
cxx_inline_expected() {
	local src=$WORKLOADS/cxx_inline.cc
	line() { grep -n "$1" "$src" | cut -d: -f1; }
	echo "app::make_block(unsigned long) (inlined) cxx_inline.cc:$(line CXX_INLINE_MALLOC_LINE)"
	echo "app::pool<app::item>::grow(unsigned long) cxx_inline.cc:$(line CXX_INLINE_GROW_LINE)"
	echo "app::run(int) cxx_inline.cc:$(line CXX_INLINE_RUN_LINE)"
	echo "main cxx_inline.cc:$(line CXX_INLINE_MAIN_LINE)"
}

finish() {
	[ "$failures" -eq 0 ] || exit 1
	exit 0
}

# a test's own directory: tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
remove_tmp_dir() {
	rm -rf "$tmp"
	trap - EXIT TERM INT
}

# track_workload <outdir> <memtrack track args...>: runs memtrack track -q -o <outdir>
# and prints the artifact's path; the exit status is memtrack's (what memtrack said, if
# anything, goes to stderr, for the test's log).
track_workload() {
	local out=$1 rc
	shift
	"$MEMTRACK" track -q -o "$out" "$@" >"$out/track.out" 2>"$out/track.err"
	rc=$?
	[ -s "$out/track.err" ] && sed 's/^/memtrack: /' "$out/track.err" >&2
	ls -t "$out"/*.MemtrackArtifact.msgpack 2>/dev/null | head -n 1
	return $rc
}

# report_json <artifact> <out.json>: the summary of an artifact as JSON
report_json() {
	"$MEMTRACK" report --json "$1" >"$2"
}

# calloc_run <dir> <name> [<track args>...]: the calloc workload tracked with -v into
# <dir>/<name> (memtrack's stderr in its track.err), its report in <dir>/<name>.json
calloc_run() {
	local dir=$1 name=$2 art
	shift 2
	mkdir -p "$dir/$name"
	art=$(track_workload "$dir/$name" -v "$@" -- "$WORKLOADS/calloc" 2>/dev/null)
	report_json "$art" "$dir/$name.json"
}

# calloc_exact <dir> <name>: calloc_run's report holds the workload's exact counts
calloc_exact() {
	expect_eq "$2: 50 Calloc, 10 Realloc, 60 Free" "50 10 60" \
		"$(count "$1/$2.json" Calloc) $(count "$1/$2.json" Realloc) $(count "$1/$2.json" Free)"
}

# count <json> <type> [<pid>]: events of one type, for the tree or one process
count() {
	if [ -n "${3:-}" ]; then
		jq -r --argjson pid "$3" '.processes[] | select(.pid == $pid) | .counts["'"$2"'"] // 0' "$1"
	else
		jq -r '.counts["'"$2"'"] // 0' "$1"
	fi
}

# site_frames <json> <calls>: the symbols of report --json's site with that many calls,
# innermost first
site_frames() {
	jq -r --argjson n "$2" '[.sites[] | select(.calls == $n) | .frames[].symbol] | join(" ")' "$1"
}

# sum_of <comm> <type>: events of a type over the processes of that command name, in
# $tmp/r.json; procs_of <comm>: how many processes of that name it has
sum_of() {
	jq -r --arg c "$1" --arg t "$2" \
		'[.processes[] | select(.comm == $c) | .counts[$t] // 0] | add // 0' "$tmp/r.json"
}

procs_of() { jq -r --arg c "$1" '[.processes[] | select(.comm == $c)] | length' "$tmp/r.json"; }

# process_state <pid>: the one-letter state of a process (T when stopped)
process_state() {
	awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# count_sized <artifact> <type> <size>: events of a type with that exact size
count_sized() {
	"$MEMTRACK" report --dump "$1" |
		jq -c --arg t "$2" --argjson s "$3" --argjson p "${4:-0}" \
			'select(.type == $t and .size == $s and ($p == 0 or .pid == $p))' | wc -l
}

# check_pressure_rows <label> <stats.jsonl>: each (pid, stopped_at) pair is in exactly one
# pressure row, and a release resumes only stops made after the release before the previous
# one of its ring (a stop that races with a release's scan of the map is in the next row; an
# older stop in a row was left in the stopped-pids map by an earlier release).  Thaws of the
# tree's cgroup ("frozen") are rows of the ring too, but no release of the map: a SIGSTOP
# waits for the ring to drain below its watermark however many freezes pass meanwhile
check_pressure_rows() {
	expect_eq "$1: each (pid, stopped_at) in exactly one pressure row" 0 \
		"$(jq -s '[.[] | select(.k == "pressure") | .pids[] | "\(.[0]) \(.[1])"]
			| group_by(.) | map(select(length > 1)) | length' "$2")"
	expect_eq "$1: a release resumes only new stops" 0 \
		"$(jq -s '[.[] | select(.k == "pressure" and (.frozen // 0) == 0)] | group_by(.ring)
			| map(. as $rows | [range(2; $rows | length) as $k
				| $rows[$k].pids[] | select(.[1] <= $rows[$k - 2].t)] | length)
			| add // 0' "$2")"
}
