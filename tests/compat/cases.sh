# shellcheck shell=bash
# The cases of the compat corpus, sourced by tests/compat/run.sh.
#
#   compat_case NAME FLAG... -- ARGV...
#
# ARGV runs in a fresh, empty working directory (the same path for every
# run, so that outputs naming it compare), stdin /dev/null, an environment of
# its own (run.sh's RUN_ENV: PATH, HOME and TMPDIR in the work directory,
# LANG=C.UTF-8, PYTHONHASHSEED=0).  $D holds the data compat_data and the
# fixtures made, $B the programs they built, $WORKLOADS tests/workloads, $COMPAT this
# directory.  Exit status and stdout are always compared with the bare run.
# Flags:
#   fast            in make test's subset (tests/shell/compat_fast.sh)
#   bpf             run with --backend bpf too
#   stderr          stderr compared as well (it is deterministic)
#   stderr=CMD      stderr compared after the filter CMD (sh -c, stdin to stdout)
#   stdout=CMD      stdout compared after the filter CMD
#   files           the files the run leaves in its directory compared (sha256)
#   vg              the root process's allocations and frees (report --json:
#                   allocations, frees) equal valgrind's
#                   "total heap usage: N allocs, M frees" (memcheck,
#                   --run-libc-freeres=no: memtrack's frees without those
#                   of __libc_freeres()); valgrind does not follow children
#   vg=N            the same within N, for the reason the case gives
#   sized=TYPE:SIZE:N  exactly N events of that type and size in the tree
#                   (report --dump): what valgrind cannot count (static, setuid)
#   incomplete-ok   memtrack's exit 128 "the artifact is incomplete" stands in
#                   for the bare status (its stdout still compared; no counts)
#   needs=TOOL[,..] a command or a path; the case is skipped without it
#   fixture=NAME    fixture_NAME below makes what it needs first (once a run)
#   env=VAR=VALUE   added to the environment of every run (bare, valgrind's, memtrack's)
#   setup=FUNC      FUNC runs in the working directory before each run
#   pty=FILE        the run is in a pseudo-terminal (pty_run.py) typing FILE
#   repeat=N        each memtrack mode N times (3 at most with --fast); one
#                   run that differs fails the mode
#   timeout=N       seconds a run may take (default 120; 30 at most with --fast;
#                   times TIMEOUT_SCALE)
#   xfail=ISSUE[:MODES]  fails today in MODES (dwarf,fp,no,bpf; default all)
#                   because of a harm that issue ISSUE fixes: reported as
#                   "xfail ISSUE", and as "fixed, remove the mark" once it passes
#
# How counts compare with valgrind's: memtrack counts a realloc as valgrind
# does (realloc(NULL, n) an allocation, realloc(p, n) one of each,
# realloc(p, 0) a free); neither counts free(NULL) nor failed calls; a call
# inside another allocator call (operator new's malloc) is counted once by
# both.  memtrack's frees are those of live blocks: under BPF the uprobes
# also see libc's internal calls to free (each thread's tcache, at its exit)
# of blocks no interposer saw allocated, which report counts apart as unknown
# frees (tests/workloads/threads: 8 under bpf, 0 under the shim).  They
# differ on the memalign family (valgrind 3.19 says 17 allocs and 0 frees of
# tests/workloads/aligned, which makes 19 of each: not compared) and on what
# the environment holds (see python3-json-malloc).

# the data most cases read, made once in $D
compat_data() {
	seq 1 20000 | shuf --random-source=<(yes) >nums.txt
	cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/LGPL-2.1 \
		/usr/share/common-licenses/Apache-2.0 >words.txt
	chmod 644 nums.txt words.txt
}

# fixture=NAME: fixture_NAME makes what some cases need, once, in $D (a
# program in $B); when it fails, its last line says why and they are skipped
fixture_objects() {
	gcc -O2 -S -o wordfreq.s "$WORKLOADS/wordfreq.c"
	gcc -O2 -c -o wordfreq.o "$WORKLOADS/wordfreq.c"
}

fixture_static() {
	gcc -O1 -static -pthread -o "$B/threads_static" "$WORKLOADS/threads.c"
	gcc -O1 -static -o "$B/wordfreq_static" "$WORKLOADS/wordfreq.c"
}

fixture_asan() {
	gcc -O1 -g -fsanitize=address -o "$B/wordfreq_asan" "$WORKLOADS/wordfreq.c" ||
		{ echo "gcc -fsanitize=address failed: no ASan runtime (libasan)"; return 1; }
}

fixture_java() {
	command -v javac >/dev/null || { echo "no javac"; return 1; }
	javac -d . "$COMPAT/Hello.java"
}

# a setuid root program, run by nobody: a secure exec
fixture_setuid() {
	cp "$WORKLOADS/wordfreq" "$B/wordfreq_setuid"
	chmod 4755 "$B/wordfreq_setuid"
	chmod 755 . "$B"
}

# a root with a dynamic program and its libraries, but not the preload shim
fixture_chroot() {
	mkdir -p chroot
	cp "$WORKLOADS/wordfreq" words.txt chroot/
	ldd "$WORKLOADS/wordfreq" | grep -o '/[^ ]*' | while read -r lib; do
		mkdir -p "chroot$(dirname "$lib")"
		cp -L "$lib" "chroot$lib"
	done
}

# Pythons other than Debian's, where pyenv has them (Debian 12 has 3.11 only)
fixture_pythons() {
	local v py

	for v in 3.9 3.10 3.11 3.12 3.13; do
		py=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v" 2>/dev/null | tail -n 1)
		[ -z "$py" ] || ln -s "$py" "$B/python$v"
	done
}

# a C project of ten files with a Makefile, for make -j2
setup_cproject() {
	local i

	{
		echo '#include <stddef.h>'
		for i in 1 2 3 4 5 6 7 8 9; do
			echo "long part$i(const char *text, size_t n);"
		done
	} >proj.h
	for i in 1 2 3 4 5 6 7 8 9; do
		cat >"part$i.c" <<-EOF
		#include <stdio.h>
		#include <stdlib.h>
		#include <string.h>
		#include "proj.h"

		struct node$i { struct node$i *next; long v; };

		long part$i(const char *text, size_t n)
		{
			struct node$i *head = NULL, *p;
			long sum = 0;
			size_t k;

			for (k = 0; k < n; k++) {
				p = malloc(sizeof(*p));
				if (!p)
					return -1;
				p->v = (long)text[k] * $i;
				p->next = head;
				head = p;
			}
			while (head) {
				p = head->next;
				sum += head->v;
				free(head);
				head = p;
			}
			return sum;
		}
		EOF
	done
	cat >main.c <<-'EOF'
	#include <stdio.h>
	#include <string.h>
	#include "proj.h"

	int main(void)
	{
		static const char text[] = "the quick brown fox jumps over the lazy dog";
		long (*const parts[])(const char *, size_t) = {
			part1, part2, part3, part4, part5, part6, part7, part8, part9
		};
		size_t i;

		for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
			printf("part%zu: %ld\n", i + 1, parts[i](text, strlen(text)));
		return 0;
	}
	EOF
	printf '%s\n' 'OBJS := main.o $(patsubst %.c,%.o,$(wildcard part*.c))' \
		'prog: $(OBJS)' '	$(CC) -o $@ $(OBJS)' \
		'%.o: %.c proj.h' '	$(CC) -O2 -Wall -c -o $@ $<' >Makefile
}

# a git repository's worth of history with fixed names and dates: the hashes are fixed
GIT_SCRIPT='export GIT_AUTHOR_NAME=compat GIT_AUTHOR_EMAIL=compat@example.org
export GIT_COMMITTER_NAME=compat GIT_COMMITTER_EMAIL=compat@example.org
export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
git init -q -b main r && cd r
for i in 1 2 3 4 5 6; do
	seq $i 3000 >f$i && git add f$i && git commit -q -m "add f$i"
done
git mv f1 g1 && git commit -q -m "rename"
git log --format="%H %s" && git diff --stat HEAD~3 HEAD
git gc -q && git count-objects -v | grep -v size && git fsck --no-progress'

PY_JSON='import json
d = [{"id": i, "name": "n%d" % i, "tags": [str(i % 7), str(i % 11)], "v": i * 1.5} for i in range(40000)]
s = json.dumps(d, sort_keys=True)
back = json.loads(s)
print(len(s), len(back), sum(x["id"] for x in back))'

PY_SQLITE='import sqlite3
db = sqlite3.connect(":memory:")
db.execute("create table t(k integer, v text)")
db.executemany("insert into t values (?, ?)", ((i % 97, "v%d" % i) for i in range(30000)))
print(db.execute("select count(*), count(distinct k), max(v) from t").fetchone())
print(db.execute("select k, count(*) from t group by k order by k limit 3").fetchall())'

PY_SUBPROCESS='import subprocess, sys
print(subprocess.run(["/bin/echo", "from a child"], capture_output=True, text=True).stdout, end="")
print(subprocess.check_output("ls /usr/share/common-licenses | head -n 3", shell=True, text=True), end="")
p = subprocess.Popen(["sort", "-r"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
print(p.communicate("a\nc\nb\n")[0], end="")
print(subprocess.call(["false"]))'

PY_MULTIPROCESSING='import multiprocessing
def square(x):
    return x * x
if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        print(sum(pool.map(square, range(10000))))
    q = multiprocessing.Queue()
    p = multiprocessing.Process(target=q.put, args=("from a process",))
    p.start(); print(q.get()); p.join(); print(p.exitcode)'

PY_THREADS='import threading
out = {}
def work(n):
    out[n] = sum(len(str(i) * 3) for i in range(n * 20000))
ts = [threading.Thread(target=work, args=(n,)) for n in range(1, 5)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(out.items()))'

PERL_SCRIPT='my %h; $h{$_ % 97} .= "$_," for 1 .. 60000;
my @k = sort { length($h{$b}) <=> length($h{$a}) || $a <=> $b } keys %h;
print join(" ", @k[0 .. 4]), "\n";
my $s = join("", map { chr(97 + $_ % 26) } 1 .. 100000); my $n = () = $s =~ /abc/g;
print "$n\n"; printf "%s\n", join(",", map { sprintf "%03d", $_ } (sort { $a <=> $b } keys %h)[0 .. 4]);'

NODE_SCRIPT='const m = new Map();
for (let i = 0; i < 200000; i++) { const k = "k" + (i * 7919) % 1000; m.set(k, (m.get(k) || 0) + 1); }
const a = [...m.entries()].sort((x, y) => x[0] < y[0] ? -1 : 1);
console.log(JSON.stringify(a.slice(0, 3)), a.length);
console.log(JSON.parse(JSON.stringify({ a: [1, 2, { b: "c" }] })).a[2].b);'

STRACE_SCRIPT='strace -f -qq -e trace=none -e signal=\!SIGCHLD -o trace sh -c "/bin/echo a; /bin/echo b | cat"
sed "s/^[0-9]* *//; s/si_pid=[0-9]*/si_pid=N/" trace | sort | uniq -c'

# --- coreutils, text tools, archives
compat_case ls fast bpf stderr -- ls -l --time-style=+%Y /usr/share/common-licenses
compat_case sort bpf stderr vg -- sort -n "$D/nums.txt"
compat_case sort-threads stderr -- sort --parallel=2 -S 1M -k2 "$D/words.txt"
compat_case uniq-pipeline stderr -- sh -c "tr -cs A-Za-z '\n' <$D/words.txt | sort | uniq -c | sort -k1,1nr -k2 | head -n 20"
compat_case sha256sum stderr -- sha256sum "$D/nums.txt" "$D/words.txt"
compat_case cp-find-du stderr -- sh -c 'cp -r /usr/share/common-licenses lic && find lic -type f | sort && du -sb lic/GPL-3 && rm -r lic'
compat_case seq-paste-cut stderr -- sh -c 'seq 1 100000 | paste -d, - - - - | cut -d, -f2,4 | tr 0-9 a-j | tail -n 3'
compat_case xargs-P stderr -- sh -c 'seq 1 200 | xargs -P 2 -n 10 /bin/echo | sort -n'
compat_case date-stat stderr -- sh -c 'date -u -d @1700000000 +%FT%T && stat -c "%n %s" /usr/share/common-licenses/GPL-3'
compat_case grep stderr -- grep -c -E '(the|of) [a-z]+ (software|license)' "$D/words.txt"
compat_case grep-r stderr -- grep -rlw GNU /usr/share/common-licenses
compat_case sed bpf stderr vg -- sed -e 's/\([0-9]\)\([0-9]\)/\2\1/g' "$D/nums.txt"
compat_case awk bpf stderr vg -- awk '{ s += $1; c[$1 % 7]++ } END { print s; for (k = 0; k < 7; k++) print k, c[k] }' "$D/nums.txt"
compat_case tar-xz stderr -- sh -c "tar -C /usr/share/common-licenses --sort=name --mtime=@0 --owner=0 --group=0 -cJf l.tar.xz . && xz -t l.tar.xz && tar -tJf l.tar.xz | head -n 5 && tar -xJf l.tar.xz ./GPL-3 && sha256sum GPL-3"
compat_case xz-threads stderr -- sh -c "xz -T2 -6 -c $D/words.txt $D/nums.txt | xz -dc | sha256sum"
compat_case zstd stderr -- sh -c "zstd -q -T2 -10 $D/words.txt -o w.zst && zstd -q -t w.zst && zstd -dc w.zst | sha256sum"
compat_case gzip stderr -- sh -c "gzip -9c $D/words.txt | gunzip -c | cmp - $D/words.txt && echo same"
compat_case static-ldconfig stderr='grep -v "^warning: pid [0-9]* (.*).* \(is a static executable without allocator symbols\|maps allocator code of its own\)"' -- sh -c '/sbin/ldconfig -p | grep -c libc.so'

# --- shells
compat_case bash-script bpf stderr -- bash "$COMPAT/work.sh"
compat_case dash-script bpf stderr -- dash "$COMPAT/work.sh"
compat_case bash-set-m fast bpf stderr files repeat=10 timeout=60 -- bash -c 'set -m; /bin/echo first; /usr/bin/id > f.txt'
compat_case bash-pty fast bpf repeat=5 timeout=90 pty="$COMPAT/pty-commands" -- bash --norc --noprofile --noediting -i

# --- build tools
compat_case make-j2 bpf stderr setup=setup_cproject timeout=600 -- sh -c 'make -s -j2 && ./prog'
compat_case gcc stderr -- sh -c "gcc -O2 -Wall -o wf $WORKLOADS/wordfreq.c && ./wf $D/words.txt 5"
compat_case gcc-driver bpf stderr vg -- gcc -O2 -c -o wf.o "$WORKLOADS/wordfreq.c"
compat_case g++ stderr timeout=600 -- sh -c "g++ -O1 -std=c++17 -o cx $COMPAT/cxx_demo.cc && ./cx"
compat_case clang stderr needs=clang -- sh -c "clang -O2 -o wf $WORKLOADS/wordfreq.c && ./wf $D/words.txt 5"
compat_case as stderr vg fixture=objects -- as --64 -o wf.o "$D/wordfreq.s"
compat_case as-version fast stderr -- as --version
compat_case ld-r stderr fixture=objects -- ld -r -o r.o "$D/wordfreq.o"
compat_case ld-version stderr -- ld --version
compat_case binutils stderr fixture=objects -- sh -c "nm -D --defined-only /bin/ls | wc -l && readelf -h /bin/true | grep Type && objdump -d $D/wordfreq.o | grep -c call"

# --- python (Debian's), perl, node, java
compat_case python3-json bpf stderr vg -- /usr/bin/python3 -c "$PY_JSON"
# with PYTHONMALLOC=malloc every object is a malloc: 1.66 M of them.  valgrind
# runs Python with 3 variables more in its environment (GLIBCXX_FORCE_NEW,
# GLIBCPP_FORCE_NEW, LD_LIBRARY_PATH, PWD and its LD_PRELOAD, against
# memtrack's LD_PRELOAD and MEMTRACK_SHIM): 4 allocations and 4 frees more
# at start-up (1,658,771 against 1,658,767).  Too slow for BPF's uprobes
compat_case python3-json-malloc stderr env=PYTHONMALLOC=malloc vg=4 timeout=300 -- /usr/bin/python3 -c "$PY_JSON"
compat_case python3-sqlite3 stderr -- /usr/bin/python3 -c "$PY_SQLITE"
compat_case python3-subprocess stderr -- /usr/bin/python3 -c "$PY_SUBPROCESS"
compat_case python3-multiprocessing bpf stderr -- /usr/bin/python3 -c "$PY_MULTIPROCESSING"
compat_case python3-threads stderr -- /usr/bin/python3 -c "$PY_THREADS"
compat_case python3-import-mp stderr -- /usr/bin/python3 -c 'import multiprocessing'
compat_case python3-pymalloc-off stderr -- env PYTHONMALLOC=malloc /usr/bin/python3 -c pass
compat_case python3-pipe-fds fast bpf stderr -- /usr/bin/python3 -c 'import os; print(os.pipe())'
compat_case python3.9-mp stderr fixture=pythons needs="$B/python3.9" -- "$B/python3.9" -c "import multiprocessing, json; print(json.dumps({'v': 39}))"
compat_case python3.10-mp stderr fixture=pythons needs="$B/python3.10" -- "$B/python3.10" -c "import multiprocessing, json; print(json.dumps({'v': 310}))"
compat_case python3.11-mp stderr fixture=pythons needs="$B/python3.11" -- "$B/python3.11" -c "import multiprocessing, json; print(json.dumps({'v': 311}))"
compat_case python3.12-mp stderr fixture=pythons needs="$B/python3.12" -- "$B/python3.12" -c "import multiprocessing, json; print(json.dumps({'v': 312}))"
compat_case python3.13-mp stderr fixture=pythons needs="$B/python3.13" -- "$B/python3.13" -c "import multiprocessing, json; print(json.dumps({'v': 313}))"
compat_case perl stderr -- perl -e "$PERL_SCRIPT"
compat_case node stderr needs=node -- node -e "$NODE_SCRIPT"
compat_case java stderr needs=java fixture=java timeout=600 -- java -XX:-UsePerfData -Xshare:auto -cp "$D" Hello

# --- other tools
compat_case git stderr -- sh -c "$GIT_SCRIPT"
compat_case sqlite3 bpf stderr vg -- sqlite3 :memory: ".read $COMPAT/q.sql"
compat_case openssl stderr -- sh -c "openssl dgst -sha256 -r $D/nums.txt && openssl enc -aes-256-cbc -pbkdf2 -iter 1000 -pass pass:compat -S 0102030405060708 -in $D/nums.txt | openssl dgst -sha256 -r && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 2>/dev/null | openssl pkey -check -noout"
compat_case ssh-keygen stderr -- sh -c "ssh-keygen -q -t ed25519 -N '' -C compat -f key && ssh-keygen -l -f key.pub | cut -d' ' -f1,3-"
compat_case fakeroot stderr -- fakeroot sh -c 'touch f && chown 1234:5678 f && stat -c "%u %g %n" f'

# --- what the preload shim cannot reach, and what reaches past it
compat_case env-i fast stderr -- env -i /usr/bin/sort "$D/words.txt"
compat_case sudo-nobody stderr -- sudo -u nobody /usr/bin/id -un
compat_case setuid stderr fixture=setuid -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$B/wordfreq_setuid" "$D/words.txt" 5
compat_case setuid-passwd stderr -- setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/passwd -S
compat_case static bpf stderr fixture=static sized=Malloc:4242:8000 -- "$B/threads_static"
compat_case static-wordfreq stderr fixture=static -- "$B/wordfreq_static" "$D/words.txt" 5
compat_case chroot stderr fixture=chroot -- chroot "$D/chroot" /wordfreq /words.txt 3
compat_case asan fast bpf stderr fixture=asan -- "$B/wordfreq_asan" "$D/words.txt" 5
compat_case asan-report bpf fixture=asan stderr='grep -o "SUMMARY: AddressSanitizer: [a-z-]*"' -- "$B/wordfreq_asan" --overflow

# --- programs that watch others: tracers, debuggers, job control
compat_case strace-f fast bpf stderr timeout=30 xfail=29:bpf -- sh -c "$STRACE_SCRIPT"
compat_case gdb fast bpf needs=gdb stdout='sed "s/process [0-9]*/process N/"' stderr -- gdb -q -nx -batch -ex run --args /bin/echo hi
compat_case valgrind-ls bpf stderr='grep -v "^warning: pid [0-9]* (.*).* \(is a static executable without allocator symbols\|maps allocator code of its own\)"' -- valgrind -q ls -l --time-style=+%Y /usr/share/common-licenses
compat_case stop-child bpf stderr -- "$WORKLOADS/stop_child" 10 2000

# --- C++ exceptions through operator new
compat_case cxx-bad-alloc fast bpf stderr sized=Malloc:3333:10 -- "$WORKLOADS/cxx_bad_alloc"
compat_case env-i-cxx-bad-alloc stderr -- env -i "$WORKLOADS/cxx_bad_alloc"

# --- our workloads: exact counts
compat_case hostile-rbp fast bpf stderr vg -- "$WORKLOADS/hostile_rbp_many"
compat_case switched-stacks bpf stderr vg -- "$WORKLOADS/switched_stacks"
compat_case fdfill fast bpf stderr incomplete-ok sized=Malloc:5555:1000 -- bash -c "ulimit -n 256; exec $WORKLOADS/fdfill 1"
compat_case wordfreq fast bpf stderr vg -- "$WORKLOADS/wordfreq" "$D/words.txt" 5
compat_case malloc-free stderr vg -- "$WORKLOADS/malloc_free"
compat_case realloc-chain stderr vg -- "$WORKLOADS/realloc_chain"
compat_case calloc stderr vg -- "$WORKLOADS/calloc"
compat_case threads bpf stderr vg -- "$WORKLOADS/threads"
compat_case fork-exec stderr vg -- "$WORKLOADS/fork_exec"
compat_case posix-spawn stderr vg -- "$WORKLOADS/spawn_kinds" posix_spawn
