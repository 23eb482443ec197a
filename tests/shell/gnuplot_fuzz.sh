#!/bin/bash
# stats --plot/--gnuplot, report --timeline/--gnuplot: hostile names change no script's shape, run nothing
set -e
. "$(dirname "$0")/lib/common.sh"

command -v gnuplot >/dev/null || skip "gnuplot is not installed (gnuplot-nox)"
tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
work=$tmp/work
mkdir "$work" "$work/render"
write_samples test-plot-names "$tmp/art"

# the same strings as tests/unit/test-plot-names.c: quotes, backquotes, newlines,
# EOD, system(, !, @, backslashes, escape sequences, bytes that are not UTF-8
names=(
	"it's \"quoted\""
	'a`touch PWNED_bq`b'
	$'x\nEOD\n!touch PWNED_bang\nsystem(\'touch PWNED_sys\')'
	'EOD'
	'system("touch PWNED_sys2")'
	'back\slash\'
	'@macro `id` @x'
	$'\r\nplot 1\r\n'
	"';system('touch PWNED_sq');'"
	$'\e]0;title\a\e[2J'
	$'\xff\xfe not UTF-8'
	'"; `touch PWNED_dq`; "'
)

# the script with each name made '': the "'" that quote_gnuplot() joins between
# the pieces of a name out first, then the contents of each '...'
shape() {
	perl -pe "s/' \\. \"'\" \\. '//g; s/'[^']*'/''/g" "$1"
}

png_ok() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

pwned() {
	find "$tmp" / -maxdepth 1 -name 'PWNED*' 2>/dev/null | wc -l
}

# stats: a file named after the string, its stacks ring too, and a second file
stats_file() {
	"$TOP/tests/shell/data/stats/generate.sh" --episodes --seconds 1 |
		jq -c --arg r "$2" 'if .ring == "stacks" then .ring = $r else . end' >"$1"
}

# check <what> <plain script> <script> <png> <command...>: the command (run in
# $work) exits 0 and writes a PNG and a script of the plain one's shape, which
# gnuplot renders alone
check() {
	local what=$1 plain=$2 script=$3 png=$4 rc=0
	shift 4
	(cd "$work" && "$@" >/dev/null) 2>"$tmp/err" || rc=$?
	expect_eq "$what: exit 0, nothing said" "0 " "$rc $(cat "$tmp/err")"
	if png_ok "$png"; then pass "$what: a PNG"; else fail "$what: a PNG" "none"; fi
	expect_eq "$what: as many plot commands" "$(grep -c '^plot ' "$plain")" \
		"$(grep -c '^plot ' "$script")"
	if diff <(shape "$plain") <(shape "$script") >"$tmp/diff"; then
		pass "$what: the script's shape"
	else
		fail "$what: the script's shape" "$(head -5 "$tmp/diff")"
	fi
	rc=0
	(cd "$work/render" && gnuplot "$script") 2>"$tmp/err" || rc=$?
	expect_eq "$what: gnuplot renders the script alone" "0 " "$rc $(cat "$tmp/err")"
}

test_stats() {
	local i name
	stats_file "$work/plain.jsonl" stacks
	cp "$work/plain.jsonl" "$work/other.jsonl"
	(cd "$work" && "$MEMTRACK" stats -q --gnuplot plain.gp plain.jsonl other.jsonl)
	for i in "${!names[@]}"; do
		name=${names[$i]}
		stats_file "$work/$name.jsonl" "$name"
		check "stats, name $i" "$work/plain.gp" "$work/s$i.gp" "$work/$name.png" \
			"$MEMTRACK" stats -q --gnuplot "s$i.gp" --plot "$name.png" "$name.jsonl" other.jsonl
	done
}

test_report() {
	local i name
	(cd "$work" && "$MEMTRACK" report -q --gnuplot plain-r.gp "$tmp/art/plain.msgpack" >/dev/null)
	for i in "${!names[@]}"; do
		name=${names[$i]}
		check "report, name $i" "$work/plain-r.gp" "$work/r$i.gp" "$work/$name.t.png" \
			"$MEMTRACK" report -q --timeline "$name.t.png" --gnuplot "r$i.gp" \
			"$tmp/art/hostile-$i.msgpack"
	done
}

test_stats
test_report
expect_eq "no command ran" 0 "$(pwned)"
expect_eq "no command ran in the working directories" "" "$(find "$work" -name 'PWNED*')"
finish
