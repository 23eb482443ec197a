#!/bin/bash
# report: a Python program gets a hint that pymalloc hides small objects and that PYTHONMALLOC=malloc shows them; a C program, or Python run so, gets none
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
# with PYTHONMALLOC=malloc, Python's objects are malloc's: nothing hidden, no hint
mkdir -p "$tmp/pymalloc-off"
off=$(PYTHONMALLOC=malloc track_workload "$tmp/pymalloc-off" -- "$PYTHON" -c 'x = [str(i) for i in range(1000)]')
expect_eq "PYTHONMALLOC=malloc: its Process record says so" 1 \
	"$("$MEMTRACK" report --dump "$off" | jq -c 'select(.type == "Process" and .pymalloc_off == true)' | wc -l)"
"$MEMTRACK" report -q "$off" >"$tmp/out"
expect_eq "PYTHONMALLOC=malloc: no hint" 0 "$(grep -c 'hint' "$tmp/out" || true)"
"$MEMTRACK" report -q "$c" >"$tmp/out"
if grep -q 'hint' "$tmp/out"; then fail "C: no hint" "$(grep hint "$tmp/out")"; else pass "C: no hint"; fi
finish
