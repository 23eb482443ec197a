#!/bin/bash
# stats --plot/--gnuplot: a ring or file name with a newline does not end a data block and run gnuplot code
set -e
. "$(dirname "$0")/lib/common.sh"

command -v gnuplot >/dev/null || skip "gnuplot is not installed (gnuplot-nox)"
tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
mkdir "$tmp/work"

ran() { [ -e "$tmp/work/$1" ] && echo yes || echo no; }

# as the issue found it: the name ends the inline block, the next line is a command
test_ring_name() {
	local rc=0
	"$TOP/tests/shell/data/stats/generate.sh" --seconds 1 |
		jq -c --arg r $'stacks\nEOD\nsystem("touch ring")\n$x << EOD' \
			'if .ring == "stacks" then .ring = $r else . end' >"$tmp/ring.jsonl"
	(cd "$tmp/work" && "$MEMTRACK" stats -q --plot "$tmp/ring.png" --gnuplot "$tmp/ring.gp" \
		"$tmp/ring.jsonl") 2>"$tmp/err" || rc=$?
	expect_eq "ring name: exit 0, nothing said" "0 " "$rc $(cat "$tmp/err")"
	expect_eq "ring name: no command ran" no "$(ran ring)"
	(cd "$tmp/work" && gnuplot "$tmp/ring.gp") 2>/dev/null || true
	expect_eq "ring name: nor when the script is rendered alone" no "$(ran ring)"
}

# the file's name went into a comment line of the script
test_file_name() {
	local rc=0 name=$'run\nsystem("touch file")\n.jsonl'
	"$TOP/tests/shell/data/stats/generate.sh" --seconds 1 >"$tmp/$name"
	(cd "$tmp/work" && "$MEMTRACK" stats -q --plot "$tmp/file.png" --gnuplot "$tmp/file.gp" \
		"$tmp/$name") 2>"$tmp/err" || rc=$?
	expect_eq "file name: exit 0, nothing said" "0 " "$rc $(cat "$tmp/err")"
	expect_eq "file name: no command ran" no "$(ran file)"
	(cd "$tmp/work" && gnuplot "$tmp/file.gp") 2>/dev/null || true
	expect_eq "file name: nor when the script is rendered alone" no "$(ran file)"
}

# the PNG's own name is in the script that --gnuplot writes
test_png_name() {
	local rc=0 png="$tmp/work/a\`touch png\`'\"b.png"
	"$TOP/tests/shell/data/stats/generate.sh" --seconds 1 >"$tmp/png.jsonl"
	"$MEMTRACK" stats -q --plot "$png" --gnuplot "$tmp/png.gp" "$tmp/png.jsonl" \
		2>"$tmp/err" || rc=$?
	expect_eq "PNG name: exit 0, nothing said" "0 " "$rc $(cat "$tmp/err")"
	expect_eq "PNG name: the PNG under its name" PNG "$(head -c 4 "$png" | tail -c 3)"
	rm -f "$png"
	(cd "$tmp/work" && gnuplot "$tmp/png.gp") 2>/dev/null || true
	expect_eq "PNG name: the script alone renders to it" PNG "$(head -c 4 "$png" | tail -c 3)"
	expect_eq "PNG name: no command ran" no "$(ran png)"
}

test_ring_name
test_file_name
test_png_name
finish
