#!/bin/bash
# bench/real.sh: real programs (compilers, python, make) bare, under memtrack's
# defaults, and under heaptrack where it can run them (one process); medians
# of RUNS interleaved rounds; a markdown table on stdout.  Run as root after
# make and make workloads; bench/run.sh runs it as its "real programs" section.
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}

work=$(mktemp -d /tmp/memtrack-real.XXXXXX)
trap 'rm -rf "$work"' EXIT TERM INT
log() { printf '%s\n' "$*" >&2; }

[ -x ./memtrack ] || { log "real: ./memtrack is missing: run make"; exit 1; }

# a template-heavy C++ file: nested instantiations of a few class templates
cxx_file() {
	local i
	echo '#include <map>'
	echo '#include <string>'
	echo '#include <vector>'
	echo '#include <memory>'
	echo '#include <functional>'
	echo 'template <int N, typename T> struct node { std::vector<T> v; std::map<int, std::string> m;'
	echo '  T sum() const { T s{}; for (auto &x : v) s += x; return s; } };'
	echo 'template <int N> struct chain { node<N, long> a; chain<N - 1> next;'
	echo '  long go() { std::function<long()> f = [this] { return a.sum() + next.go(); }; return f(); } };'
	echo 'template <> struct chain<0> { long go() { return 0; } };'
	for i in $(seq 1 12); do
		echo "long f$i() { auto p = std::make_unique<chain<$((20 + i * 5))>>(); return p->go(); }"
	done
}

# a C project of ten files and a Makefile
c_project() {
	local dir=$1 i
	mkdir -p "$dir"
	for i in $(seq 1 10); do
		cp util/quote.c "$dir/f$i.c"
		sed -i "s/\\bquote_/q${i}_/g" "$dir/f$i.c"
	done
	mkdir -p "$dir/util"
	cp util/quote.h "$dir/util/"
	sed -i 's/\bquote_/q1_/g' "$dir/util/quote.h"
	printf 'OBJS := %s\nall: $(OBJS)\n%%.o: %%.c\n\t$(CC) -O2 -I. -w -c -o $@ $<\n' \
		"$(seq -f 'f%g.o' 1 10 | tr '\n' ' ')" >"$dir/Makefile"
}

# now in ns
now() { date +%s%N; }

# run <label> <round> <command...>: wall ns into $work/<label>.<round>, and memtrack's summary
run() {
	local label=$1 round=$2 t0 rc=0
	shift 2
	t0=$(now)
	"$@" >/dev/null 2>"$work/$label.$round.err" || rc=$?
	echo "$(( $(now) - t0 )) $rc" >"$work/$label.$round"
}

median_of() {	# <label>: median wall ms, "-" if a run failed
	local f
	for f in "$work/$1".[0-9]*; do
		case $f in *.err) continue ;; esac
		read -r ns rc <"$f"
		[ "$rc" = 0 ] || { echo failed; return; }
		echo "$ns"
	done | sort -n | awk '/failed/ { bad = 1 } { v[NR] = $1 }
		END { if (bad || !NR) print "-"; else printf "%.1f", v[int((NR + 1) / 2)] / 1e6 }'
}

mkdir -p "$work/cxx" "$work/out"
cxx_file >"$work/cxx/t.cc"
c_project "$work/proj"
# Debian 12 has no python3.13; a build of one's own (pyenv) is taken when it runs
py313=
for p in /usr/bin/python3.13 /usr/local/bin/python3.13 /root/.pyenv/versions/3.13*/bin/python3.13; do
	[ -x "$p" ] && "$p" -c pass 2>/dev/null && { py313=$p; break; }
done

# name|heaptrack can run it (one process)|command
cmds=(
	"gcc -O2 -c util/quote.c|no|gcc -O2 -I. -c util/quote.c -o $work/out/q.o"
	"g++ -O2 -c (templates)|no|g++ -O2 -c $work/cxx/t.cc -o $work/out/t.o"
	"clang -c util/quote.c|yes|clang -I. -c util/quote.c -o $work/out/q.o"
	"python3 -c pass|yes|/usr/bin/python3 -c pass"
)
[ -n "$py313" ] && cmds+=("python3.13 -c pass|yes|$py313 -c pass")
cmds+=("make -j2 (10 C files)|no|make -s -j2 -B -C $work/proj")

log "real: ${#cmds[@]} commands, $RUNS interleaved rounds"
for r in $(seq "$RUNS"); do
	i=0
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		IFS='|' read -r _ ht cmd <<<"$c"
		# shellcheck disable=SC2086
		run "bare$i" "$r" $cmd
		rm -rf "$work/mt"
		mkdir -p "$work/mt"
		# shellcheck disable=SC2086
		run "mt$i" "$r" ./memtrack track -o "$work/mt" -- $cmd
		if [ "$ht" = yes ] && command -v heaptrack >/dev/null; then
			# shellcheck disable=SC2086
			run "ht$i" "$r" heaptrack -o "$work/ht.$i.$r" $cmd
			rm -f "$work/ht.$i.$r".*
		fi
	done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.1fx", a / b }'; }

echo "| command | bare ms | memtrack ms | x bare | heaptrack ms | x bare | processes (memtrack) |"
echo "|---|---:|---:|---:|---:|---:|---|"
i=0
for c in "${cmds[@]}"; do
	i=$((i + 1))
	IFS='|' read -r name ht _ <<<"$c"
	b=$(median_of "bare$i")
	m=$(median_of "mt$i")
	h=-
	[ "$ht" = yes ] && h=$(median_of "ht$i")
	procs=$(sed -n 's/.*events, \([0-9]* process[es]* ([^)]*)\).*/\1/p' "$work/mt$i.1.err")
	echo "| \`$name\` | $b | $m | $(ratio "$m" "$b") | $h | $(ratio "$h" "$b") | $procs |"
done
[ -n "$py313" ] || echo "
python3.13: not installed (Debian 12 has no python3.13 package: \`apt-cache policy python3.13\`)."
