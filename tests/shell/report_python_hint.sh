#!/bin/bash
# report: a Python program gets a hint that pymalloc hides small objects and that PYTHONMALLOC=malloc shows them; a C program gets none
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# Debian's python3, not one of pyenv's shims (a shell script that execs it)
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || { echo "$PYTHON is missing"; exit 1; }

mkdir -p "$tmp/py" "$tmp/c"
py=$(track_workload "$tmp/py" -- "$PYTHON" -c 'x = [str(i) for i in range(1000)]')
c=$(track_workload "$tmp/c" -- "$WORKLOADS/malloc_free")
pid=$(basename "$py" .MemtrackArtifact.msgpack)

"$MEMTRACK" report -q "$py" >"$tmp/out"
expect_eq "python: the hint names the process" "# hint: pid $pid runs Python ($PYTHON), whose objects of up to 512 bytes" \
	"$(grep '^# hint:' "$tmp/out")"
if grep -q 'run it with PYTHONMALLOC=malloc' "$tmp/out"; then
	pass "python: says PYTHONMALLOC=malloc shows every object"
else
	fail "python: says PYTHONMALLOC=malloc shows every object" "$(head -8 "$tmp/out")"
fi
"$MEMTRACK" report -q "$c" >"$tmp/out"
if grep -q 'hint' "$tmp/out"; then fail "C: no hint" "$(grep hint "$tmp/out")"; else pass "C: no hint"; fi
finish
