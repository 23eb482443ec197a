#!/bin/bash
# report --html in headless chromium: no console error, no request, the flame graph's frames and widths per cost type, zoom, search, diff, hostile names
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report-sites "$tmp"
write_samples test-plot-names "$tmp/names"

# the frames drawn (not the zoomed node's ancestors): [name, value, width in %]
FRAMES='Array.from(document.querySelectorAll("#flame .frame:not(.dim)")).map(f =>
	[f.textContent, Number(f.getAttribute("data-value")), parseFloat(f.style.width)])'
# cost <id>: picks a cost type, then the frames
cost() { echo "document.querySelector('input[name=cost][value=$1]').click(), $FRAMES"; }

# clean <browse.json>: the page loaded with nothing on the console and nothing fetched
clean() {
	local j=$1 what=$2
	expect_eq "$what: no console error" "[]" "$(jq -c '.console + .exceptions + .log' "$j")"
	expect_eq "$what: nothing fetched but the page" "[\"file://$3\"]" "$(jq -c '.requests' "$j")"
}

# frames <browse.json> <result index>: "name value" of each frame, sorted, one line
frames() {
	jq -r ".results[$2] | map(\"\(.[0]) \(.[1])\") | sort | join(\"|\")" "$1"
}

# widths_ok <browse.json> <result index> <the whole's value>: every width is value/whole
widths_ok() {
	jq -r --argjson i "$2" --argjson w "$3" '[.results[$i][] |
		select((.[2] - 100 * .[1] / $w) | fabs > 0.0001)] | length' "$1"
}

# pages: the arguments of browse.js, each page's expressions, its results to $tmp/<name>.json
pages=()
# page <name> <html> <expression>...
page() {
	local name=$1 html=$2
	shift 2
	pages+=(--page "$html" --json "$tmp/$name.json" "$@")
}

make_pages() {
	expect_eq "--html exits 0" 0 "$(status "$MEMTRACK" report --html "$tmp/r.html" "$tmp/stacks.msgpack")"
	expect_eq "nothing on stdout or stderr" "" "$(cat "$tmp/out" "$tmp/err")"
	page b "$tmp/r.html" "$FRAMES" "$(cost calls)" "$(cost peak)" "$(cost leaked)" "$(cost temporary)" \
		"document.querySelector('#flame .none') && document.querySelector('#flame .none').textContent"
	page z "$tmp/r.html" \
		"Array.from(document.querySelectorAll('#flame .frame')).find(f => f.textContent === 'main' && f.getAttribute('data-value') === '2114').click(), $FRAMES" \
		"Array.from(document.querySelectorAll('#flame .frame.dim')).map(f => f.textContent).join(' ')" \
		"document.getElementById('reset-zoom').click(), document.querySelectorAll('#flame .frame').length" \
		"(() => { const s = document.getElementById('search'); s.value = 'make_'; s.dispatchEvent(new Event('input')); return [Array.from(document.querySelectorAll('#flame .frame.match')).map(f => f.textContent).sort().join(' '), document.getElementById('search-info').textContent]; })()" \
		"(() => { const s = document.getElementById('search'); s.value = '(('; s.dispatchEvent(new Event('input')); return document.getElementById('search-info').textContent; })()"
	write_samples test-report "$tmp"
	"$MEMTRACK" report --html "$tmp/temporary.html" "$tmp/temporary.msgpack"
	page t "$tmp/temporary.html" "$(cost temporary)" \
		"Array.from(document.querySelectorAll('#sites tbody tr')).map(r => r.cells[5].textContent + ' ' + r.cells[6].textContent.split(' ')[0]).join('|')" \
		"document.querySelectorAll('#sites th')[5].click(), document.querySelectorAll('#sites th')[5].click(), Array.from(document.querySelectorAll('#sites tbody tr')).map(r => r.cells[5].textContent).join(' ')"
	"$MEMTRACK" report --html "$tmp/procs.html" "$tmp/tree.msgpack"
	page p "$tmp/procs.html" \
		"Array.from(document.querySelectorAll('#processes tbody tr')).map(r => r.cells[0].textContent + ' ' + r.cells[2].textContent + ' ' + r.cells[4].textContent).join('|')" \
		"Array.from(document.querySelectorAll('#timeline .legend text')).map(t => t.textContent).join('|')" \
		"document.querySelectorAll('#timeline polyline').length" \
		"document.querySelector('#flame .none').textContent"
	expect_eq "--diff --html exits 0" 0 \
		"$(status "$MEMTRACK" report --diff --html "$tmp/d.html" "$tmp/stacks-base.msgpack" "$tmp/stacks.msgpack")"
	page d "$tmp/d.html" \
		"Array.from(document.querySelectorAll('#flame .frame')).map(f => f.textContent + ' ' + f.getAttribute('data-delta') + ' ' + (f.classList.contains('grew') ? 'grew' : f.classList.contains('shrank') ? 'shrank' : '=')).sort().join('|')" \
		"document.querySelector('input[name=side][value=base]').click(), $FRAMES" \
		"document.querySelector('#cards [data-key=bytes] .d').textContent"
	for i in 12 13 10 2; do
		"$MEMTRACK" report --html "$tmp/h$i.html" "$tmp/names/hostile-$i.msgpack"
		page "h$i" "$tmp/h$i.html" "typeof window.pwned" \
			"document.querySelectorAll('script').length + ' ' + document.querySelectorAll('img, [onerror], [onload]').length" \
			"document.getElementById('title').textContent" \
			"Array.from(document.querySelectorAll('#flame .frame')).map(f => f.textContent)" \
			"document.title" \
			"Array.from(document.querySelectorAll('#processes tbody tr')).map(r => r.cells[2].textContent)"
	done
	# one browser for them all
	if ! browse "${pages[@]:1}"; then
		fail "the browser read the pages" "browse.js failed"
		finish
	fi
}

test_flame_graph() {
	local j=$tmp/b.json
	clean "$j" "stacks" "$tmp/r.html"
	expect_eq "bytes: the frames" \
		"[no stack] 5|[unknown] 10|__libc_start_main 2114|all 2129|libweird.so+0x1234 1050|main 10|main 2114|make_buffer 864|make_list 200|parse;config 1050" \
		"$(frames "$j" 0)"
	expect_eq "bytes: widths" 0 "$(widths_ok "$j" 0 2129)"
	expect_eq "calls: the frames" \
		"[no stack] 1|[unknown] 1|__libc_start_main 7|all 9|libweird.so+0x1234 2|main 1|main 7|make_buffer 4|make_list 1|parse;config 2" \
		"$(frames "$j" 1)"
	expect_eq "calls: widths" 0 "$(widths_ok "$j" 1 9)"
	expect_eq "peak: the frames live at the peak" \
		"[unknown] 10|__libc_start_main 1450|all 1460|libweird.so+0x1234 1050|main 10|main 1450|make_buffer 400|parse;config 1050" \
		"$(frames "$j" 2)"
	expect_eq "peak: widths" 0 "$(widths_ok "$j" 2 1460)"
	expect_eq "leaked: the frames" \
		"[no stack] 5|__libc_start_main 1114|all 1119|libweird.so+0x1234 1050|main 1114|make_buffer 64|parse;config 1050" \
		"$(frames "$j" 3)"
	expect_eq "temporary: none here" "[]" "$(jq -c '.results[4]' "$j")"
	expect_eq "temporary: and it says so" "nothing of this cost type here" "$(jq -r '.results[5]' "$j")"
	expect_eq "make_buffer's width by bytes, then calls" "40.5824 44.4444" \
		"$(jq -r '[.results[0,1][] | select(.[0] == "make_buffer") | .[2]] | map(tostring) | join(" ")' "$j")"
}

test_zoom_and_search() {
	local j=$tmp/z.json
	clean "$j" "zoom" "$tmp/r.html"
	expect_eq "zoom on main: main and what it called" \
		"libweird.so+0x1234 1050|main 2114|make_buffer 864|make_list 200|parse;config 1050" "$(frames "$j" 0)"
	expect_eq "zoom: widths of main's" 0 "$(widths_ok "$j" 0 2114)"
	expect_eq "zoom: its callers span the width, dimmed" "all __libc_start_main" "$(jq -r '.results[1]' "$j")"
	expect_eq "reset: all ten frames again" 10 "$(jq -r '.results[2]' "$j")"
	expect_eq "search: the matches" "make_buffer make_list" "$(jq -r '.results[3][0]' "$j")"
	expect_eq "search: what they add up to" "matched 1.0 KiB (49.98%)" "$(jq -r '.results[3][1]' "$j")"
	expect_eq "search: not a regular expression, a string" "matched 0 B (0.00%)" "$(jq -r '.results[4]' "$j")"
}

# the tables and the timeline: what the page shows besides the flame graph
test_tables() {
	local j=$tmp/t.json
	clean "$j" "temporary" "$tmp/temporary.html"
	expect_eq "temporary: the frames" "__libc_start_main 3|all 3|main 3|make_buffer 1|make_list 2" "$(frames "$j" 0)"
	expect_eq "sites: by bytes, with their temporary" "2 make_list|1 make_buffer" "$(jq -r '.results[1]' "$j")"
	expect_eq "sites: sorted by a click on a column" "1 2" "$(jq -r '.results[2]' "$j")"
	j=$tmp/p.json
	clean "$j" "processes" "$tmp/procs.html"
	expect_eq "processes: pid, comm, exit as --json has them" \
		"$("$MEMTRACK" report --json "$tmp/tree.msgpack" | jq -r '[.processes[] | "\(.pid) \(.comm) \(if .exit_code == null then "-" elif (.exit_code % 128) > 0 then "signal \(.exit_code % 128)" else "exit \(.exit_code / 256 | floor)" end)"] | sort | join("|")')" \
		"$(jq -r '.results[0] | split("|") | sort | join("|")' "$j")"
	expect_eq "timeline: a line per process and the total" 5 "$(jq -r '.results[2]' "$j")"
	expect_eq "timeline: named" "all processes" "$(jq -r '.results[1] | split("|") | last' "$j")"
	expect_eq "no stacks: the flame graph says so" \
		"no call stacks: record with 'memtrack track --call-graph fp' (or dwarf)" "$(jq -r '.results[3]' "$j")"
}

# --diff --html: head's widths, coloured by the change; base's widths on demand
test_diff() {
	local j=$tmp/d.json
	clean "$j" "diff" "$tmp/d.html"
	expect_eq "diff: head's frames, by their change" \
		"[no stack] 5 grew|[unknown] 10 grew|__libc_start_main 1064 grew|all 779 grew|libweird.so+0x1234 1050 grew|main -290 shrank|main 1064 grew|make_buffer -136 shrank|make_list 150 grew|parse;config 1050 grew" \
		"$(jq -r '.results[0]' "$j")"
	expect_eq "diff: base's widths show what went" \
		"__libc_start_main 1050|all 1350|main 1050|main 300|make_buffer 1000|make_list 50|only_in_base 300" \
		"$(frames "$j" 1)"
	expect_eq "diff: base's widths" 0 "$(widths_ok "$j" 1 1350)"
	expect_eq "diff: the card of bytes" "base 1.3 KiB, +779 B (57.7%)" "$(jq -r '.results[2]' "$j")"
}

# names that are markup or script: shown as text, never run
test_hostile_names() {
	local i j name
	for i in 12 13 10 2; do
		j=$tmp/h$i.json
		clean "$j" "hostile-$i" "$tmp/h$i.html"
		expect_eq "hostile-$i: no script of the artifact ran" undefined "$(jq -r '.results[0]' "$j")"
		expect_eq "hostile-$i: no element of the artifact" "2 0" "$(jq -r '.results[1]' "$j")"
	done
	for i in 12 13; do
		j=$tmp/h$i.json
		name=$(jq -r '.results[2]' "$j")
		expect_eq "hostile-$i: the command is the title, as text" "$(jq -r '.results[4]' "$j")" "memtrack: $name"
		expect_eq "hostile-$i: the symbol is a frame's text" true \
			"$(jq --arg n "$name" '.results[3] | index($n) != null' "$j")"
		expect_eq "hostile-$i: comm in the process table" "$name" "$(jq -r '.results[5][0]' "$j")"
	done
	expect_eq "hostile-12 verbatim" "</script><script>window.pwned=1</script><!--" "$(jq -r '.results[2]' "$tmp/h12.json")"
	expect_eq "hostile-13: references stay text" \
		'<img src=x onerror="window.pwned=2"><svg onload=window.pwned=3> &amp; &lt;b&gt;' "$(jq -r '.results[2]' "$tmp/h13.json")"
	if grep -q "</script><script>window.pwned" "$tmp/h12.html"; then
		fail "hostile-12: no closing tag in the file" "$(grep -c "</script><script>window.pwned" "$tmp/h12.html")"
	else
		pass "hostile-12: no closing tag in the file"
	fi
}

test_errors() {
	local a=$tmp/stacks.msgpack
	# the same page but for its nonce, new each time
	expect_eq "--html - writes to stdout" "$(sed -E 's/[0-9a-f]{32}//' "$tmp/r.html" | md5sum)" \
		"$("$MEMTRACK" report --html - "$a" | sed -E 's/[0-9a-f]{32}//' | md5sum)"
	expect_eq "a nonce of its own each time" 2 \
		"$(cat "$tmp/r.html" <("$MEMTRACK" report --html - "$a") | grep -Eo "'nonce-[0-9a-f]{32}'" | sort -u | wc -l)"
	expect_eq "truncated exits 1" 1 "$(status "$MEMTRACK" report --html "$tmp/t.html" "$tmp/stacks-truncated.msgpack")"
	expect_eq "truncated: the page says so" 1 "$(grep -c '"truncated":true' "$tmp/t.html")"
	expect_eq "a directory that is not there exits 1" 1 \
		"$(status "$MEMTRACK" report --html "$tmp/no/such/r.html" "$a")"
	if grep -q "^error: cannot write the page '$tmp/no/such/r.html': " "$tmp/err"; then
		pass "and says which file"; else fail "and says which file" "$(cat "$tmp/err")"; fi
	expect_eq "--html --json" 129 "$(status "$MEMTRACK" report --html "$tmp/x" --json "$a")"
	expect_eq "--html --pprof" 129 "$(status "$MEMTRACK" report --html "$tmp/x" --pprof "$tmp/y" "$a")"
	expect_eq "--html --weight" 129 "$(status "$MEMTRACK" report --html "$tmp/x" --weight calls "$a")"
	expect_eq "--diff --html --pid" 129 "$(status "$MEMTRACK" report --diff --html "$tmp/x" --pid 1 "$a" "$a")"
	expect_eq "nothing written by usage errors" no "$([ -e "$tmp/x" ] && echo yes || echo no)"
}

make_pages
test_flame_graph
test_zoom_and_search
test_tables
test_diff
test_hostile_names
test_errors
finish
