#!/bin/bash
# track + report --html in headless chromium: a known process tree's frames, widths and cost types; the README's screenshot
set -e
. "$(dirname "$0")/lib/common.sh"
skip_if_no_bpf

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT

# {name: [value, width in %]} of the frames drawn, when a name is drawn once
FRAMES='Object.fromEntries(Array.from(document.querySelectorAll("#flame .frame")).map(f =>
	[f.textContent, [Number(f.getAttribute("data-value")), parseFloat(f.style.width)]]))'
cost() { echo "document.querySelector('input[name=cost][value=$1]').click(), $FRAMES"; }

# value <result> <frame>: its value; width_ok <result> <frame>: its width is value/all
value() { jq -r --argjson i "$1" --arg f "$2" '.results[$i][$f][0]' "$tmp/b.json"; }
width_ok() {
	jq -r --argjson i "$1" --arg f "$2" '.results[$i] as $r |
		(($r[$f][1] - 100 * $r[$f][0] / $r["all"][0]) | fabs) < 0.0001' "$tmp/b.json"
}

# sh, then stack_alloc (10 x 5555 B through outer_alloc, 5 x 6666 B through direct_alloc),
# then cxx_inline (7 x 4242 B through app::run, freed at once; 12 walks)
test_known_tree() {
	local art page=$tmp/r.html
	art=$(track_workload "$tmp" -- sh -c "$WORKLOADS/stack_alloc; $WORKLOADS/cxx_inline 12")
	"$MEMTRACK" report --html "$page" "$art"
	browse "$page" --screenshot "$tmp/shot.png" "$FRAMES" "$(cost calls)" "$(cost temporary)" \
		"Array.from(document.querySelectorAll('#processes tbody tr')).map(r => r.cells[2].textContent).sort().join(' ')" \
		"document.querySelectorAll('#timeline polyline').length" >"$tmp/b.json"
	expect_eq "no console error" "[]" "$(jq -c '.console + .exceptions + .log' "$tmp/b.json")"
	expect_eq "nothing fetched but the page" "[\"file://$page\"]" "$(jq -c .requests "$tmp/b.json")"
	expect_eq "bytes: outer_alloc, lib_leaf_alloc, direct_alloc, app::run(int)" "55550 55550 33330 29694" \
		"$(value 0 outer_alloc) $(value 0 lib_leaf_alloc) $(value 0 direct_alloc) $(value 0 'app::run(int)')"
	expect_eq "bytes: the whole is --json's" "$("$MEMTRACK" report --json "$art" | jq .bytes_allocated)" \
		"$(value 0 all)"
	expect_eq "bytes: widths" "true true true" \
		"$(width_ok 0 outer_alloc) $(width_ok 0 direct_alloc) $(width_ok 0 'app::run(int)')"
	expect_eq "calls: 10, 5, 7" "10 5 7" \
		"$(value 1 outer_alloc) $(value 1 direct_alloc) $(value 1 'app::run(int)')"
	expect_eq "calls: widths" "true true" "$(width_ok 1 outer_alloc) $(width_ok 1 'app::run(int)')"
	expect_eq "temporary: app::run's 7, none of stack_alloc's" "7 null" \
		"$(value 2 'app::run(int)') $(value 2 outer_alloc)"
	expect_eq "the three processes" "cxx_inline sh stack_alloc" "$(jq -r '.results[3]' "$tmp/b.json")"
	expect_eq "a line each, and the total" 4 "$(jq -r '.results[4]' "$tmp/b.json")"
	expect_eq "a screenshot" "PNG image data, 1280 x" "$(file -b "$tmp/shot.png" | cut -d, -f1-2 | sed 's/ [0-9]*$//')"
	# the picture of Documentation/ and the README: MEMTRACK_HTML_SCREENSHOT=<png>
	if [ -n "${MEMTRACK_HTML_SCREENSHOT:-}" ]; then
		cp "$tmp/shot.png" "$MEMTRACK_HTML_SCREENSHOT"
	fi
}

test_known_tree
finish
