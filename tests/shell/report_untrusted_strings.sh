#!/bin/bash
# report and stats: names from files reach the terminal escaped, and --json is valid UTF-8 whatever they hold
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-plot-names "$tmp/art"
export LC_ALL=C

# control bytes but the newlines that end lines: ESC, CR, BEL...
controls() { tr -d '\n' <"$1" | grep -c $'[\x01-\x1f\x7f]' || true; }
utf8() { iconv -f UTF-8 -t UTF-8 <"$1" >/dev/null 2>&1 && echo valid || echo invalid; }

# hostile-9: escape sequences (clear the screen, set the title); hostile-2: newlines
test_report_text() {
	local i
	"$MEMTRACK" report -q "$tmp/art/plain.msgpack" >"$tmp/plain.txt"
	for i in 2 9; do
		"$MEMTRACK" report -q "$tmp/art/hostile-$i.msgpack" >"$tmp/h$i.txt"
		expect_eq "report, name $i: no control character reaches the terminal" 0 \
			"$(controls "$tmp/h$i.txt")"
		expect_eq "report, name $i: as many lines as with plain names" \
			"$(wc -l <"$tmp/plain.txt")" "$(wc -l <"$tmp/h$i.txt")"
	done
	expect_eq "report: an escape sequence is shown quoted" \
		'# command: "\033]0;title\a\033[2J"' "$(grep '^# command' "$tmp/h9.txt")"
	expect_eq "report: comm and exe too" 2 "$(grep -c '"\\033\]0;title\\a\\033\[2J" exit 0 .* "\\033' "$tmp/h9.txt")"
	expect_eq "report: and frames, in the four tables that have the site" 4 "$(grep -c '^ *"x\\nEOD\\n!touch PWNED_bang' "$tmp/h2.txt")"
}

test_flamegraph() {
	"$MEMTRACK" report -q --flamegraph "$tmp/art/hostile-2.msgpack" >"$tmp/f.txt"
	expect_eq "flamegraph: one line per stack" 2 "$(wc -l <"$tmp/f.txt")"
	expect_eq "flamegraph: no control character" 0 "$(controls "$tmp/f.txt")"
}

# hostile-10 holds bytes that are not UTF-8
test_json() {
	"$MEMTRACK" report -q --json "$tmp/art/hostile-10.msgpack" >"$tmp/r.json"
	expect_eq "--json: valid UTF-8" valid "$(utf8 "$tmp/r.json")"
	expect_eq "--json: an invalid byte is U+FFFD" "efbfbdefbfbd206e6f74205554462d38" \
		"$(jq -r '.processes[0].comm' "$tmp/r.json" | head -c 16 | od -An -tx1 | tr -d ' \n')"
	"$MEMTRACK" report -q --dump "$tmp/art/hostile-10.msgpack" >"$tmp/d.json"
	expect_eq "--dump: valid UTF-8" valid "$(utf8 "$tmp/d.json")"
	expect_eq "--dump: every line is JSON" "$(wc -l <"$tmp/d.json")" "$(jq -c . "$tmp/d.json" | wc -l)"
	"$MEMTRACK" report -q --diff --json "$tmp/art/plain.msgpack" "$tmp/art/hostile-10.msgpack" \
		>"$tmp/diff.json"
	expect_eq "--diff --json: valid UTF-8" valid "$(utf8 "$tmp/diff.json")"
}

test_stats() {
	local name=$'\e[2J\r\xffring'
	"$TOP/tests/shell/data/stats/generate.sh" --seconds 1 |
		sed "s/\"stacks\"/\"$name\"/" >"$tmp/$name.jsonl"
	"$MEMTRACK" stats "$tmp/$name.jsonl" >"$tmp/s.txt"
	expect_eq "stats: no control character reaches the terminal" 0 "$(controls "$tmp/s.txt")"
	expect_eq "stats: the ring's name is shown quoted" 1 \
		"$(grep -c '^"\\033\[2J\\r\\xffring" ' "$tmp/s.txt")"
	"$MEMTRACK" stats --json "$tmp/$name.jsonl" >"$tmp/s.json"
	expect_eq "stats --json: valid UTF-8" valid "$(utf8 "$tmp/s.json")"
	expect_eq "stats --json: parses" 2 "$(jq '.files[0].rings | length' "$tmp/s.json")"
}

test_report_text
test_flamegraph
test_json
test_stats
finish
