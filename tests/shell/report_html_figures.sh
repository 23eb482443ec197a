#!/bin/bash
# report --html in headless chromium: every figure the page embeds and shows (totals, cards, per process) is report --json's
set -e
. "$(dirname "$0")/lib/common.sh"

tmp=$(mktemp -d) && trap remove_tmp_dir EXIT TERM INT
write_samples test-report "$tmp"
write_samples test-report-sites "$tmp"

# what the page holds and shows: its data's runs (totals, each process's and each site's figures), the
# cost types in order, the cards' texts and the process table's cells
SEEN='(() => { const D = JSON.parse(document.getElementById("memtrack-data").textContent);
	return { keys: D.keys.map(k => k.id),
		runs: D.runs.map(r => ({ totals: r.totals, processes: r.processes.map(p => ({ pid: p.pid, v: p.v })),
			sites: r.sites.map(s => s.v.concat([s.leaked_count])) })),
		cards: Array.from(document.querySelectorAll("#cards .card")).map(c =>
			[c.getAttribute("data-key"), c.querySelector(".v").textContent]),
		rows: Array.from(document.querySelectorAll("#processes tbody tr")).map(r =>
			Array.from(r.cells).map(c => c.textContent)) }; })()'

# report --json's field of each cost type of the page
FIELDS='{"bytes": "bytes_allocated", "calls": "allocations", "peak": "peak_bytes",
	"leaked": "leaked_bytes", "temporary": "temporary_count"}'
# the page's own formats (report-html.js: bytes(), count()), for what it shows
FORMATS='def count: tostring | gsub("\\B(?=(\\d{3})+(?!\\d))"; ",");
	def bytes: [., 0] | until(.[0] < 1024 or .[1] == 5; [.[0] / 1024, .[1] + 1]) |
		if .[1] == 0 then "\(.[0]) B" else
		"\(.[0] * 10 | round | . / 10 | tostring | if test("\\.") then . else . + ".0" end) \(["B", "KiB", "MiB", "GiB", "TiB", "PiB"][.[1]])" end;
	def fmt($k): if $k == "calls" or $k == "temporary" then count else bytes end;'
# the figures of the totals besides the cost types, under the same names in both
OTHERS='["frees", "bytes_freed", "peak_count", "peak_time_ns", "leaked_count",
	"temporary_bytes", "unknown_frees", "events", "duration_ns"]'

# check_run <label> <browse.json> <run index> <report --json> [sites]: the run's data against
# --json, and its sites' when asked
check_run() {
	local label=$1 seen=$2 i=$3 json=$4
	expect_eq "$label: the cost types, in order" '["bytes","calls","peak","leaked","temporary"]' \
		"$(jq -c '.results[0].keys' "$seen")"
	expect_eq "$label: the totals of each cost type" \
		"$(jq -c --argjson f "$FIELDS" --slurpfile s "$seen" '. as $j | [$s[0].results[0].keys[] | $j[$f[.]]]' "$json")" \
		"$(jq -c --argjson i "$i" '.results[0].runs[$i].totals.v' "$seen")"
	expect_eq "$label: the other totals" \
		"$(jq -c --argjson o "$OTHERS" '[$o[] as $k | .[$k]]' "$json")" \
		"$(jq -c --argjson i "$i" --argjson o "$OTHERS" '.results[0].runs[$i].totals as $t | [$o[] as $k | $t[$k]]' "$seen")"
	expect_eq "$label: each process's figure of each cost type" \
		"$(jq -c --argjson f "$FIELDS" --slurpfile s "$seen" '[.processes[] | . as $p |
			{pid, v: [$s[0].results[0].keys[] | $p[$f[.]]]}] | sort_by(.pid)' "$json")" \
		"$(jq -c --argjson i "$i" '.results[0].runs[$i].processes | sort_by(.pid)' "$seen")"
	# a diff's sites are matched by frame names, not the stacks of --json
	[ "$5" = sites ] || return 0
	expect_eq "$label: each site's figures and leaked blocks" \
		"$(jq -c --argjson f "$FIELDS" --slurpfile s "$seen" '[.sites // [] | .[] | . as $x |
			[$s[0].results[0].keys[] | $x[$f[.] | sub("_allocated"; "") | sub("allocations"; "calls")]] +
			[$x.leaked_count]] | sort' "$json")" \
		"$(jq -c --argjson i "$i" '.results[0].runs[$i].sites | sort' "$seen")"
}

# check_shown <label> <browse.json> <report --json>: the cards and the process table's figures
check_shown() {
	local label=$1 seen=$2 json=$3
	expect_eq "$label: the cards" \
		"$(jq -c --argjson f "$FIELDS" --slurpfile s "$seen" "$FORMATS"' . as $j |
			[$s[0].results[0].keys[] as $k | [$k, ($j[$f[$k]] | fmt($k))]]' "$json")" \
		"$(jq -c '.results[0].cards' "$seen")"
	expect_eq "$label: the process table's pids and figures" \
		"$(jq -c --argjson f "$FIELDS" --slurpfile s "$seen" "$FORMATS"' [.processes[] | . as $p |
			[($p.pid | tostring)] + [$s[0].results[0].keys[] as $k | $p[$f[$k]] | fmt($k)]] | sort' "$json")" \
		"$(jq -c '[.results[0].rows[] | [.[0]] + .[5:10]] | sort' "$seen")"
}

test_figures() {
	local name pages=()
	for name in temporary tree stacks; do
		"$MEMTRACK" report --html "$tmp/$name.html" "$tmp/$name.msgpack"
		"$MEMTRACK" report --json "$tmp/$name.msgpack" >"$tmp/$name.report.json"
		pages+=(--page "$tmp/$name.html" --json "$tmp/$name.seen.json" "$SEEN")
	done
	"$MEMTRACK" report --diff --html "$tmp/diff.html" "$tmp/stacks-base.msgpack" "$tmp/stacks.msgpack"
	"$MEMTRACK" report --json "$tmp/stacks-base.msgpack" >"$tmp/stacks-base.report.json"
	pages+=(--page "$tmp/diff.html" --json "$tmp/diff.seen.json" "$SEEN")
	if ! browse "${pages[@]:1}"; then
		fail "the browser read the pages" "browse.js failed"
		finish
	fi
	for name in temporary tree stacks; do
		expect_eq "$name: no console error" "[]" "$(jq -c '.console + .exceptions + .log' "$tmp/$name.seen.json")"
		check_run "$name" "$tmp/$name.seen.json" 0 "$tmp/$name.report.json" sites
		check_shown "$name" "$tmp/$name.seen.json" "$tmp/$name.report.json"
	done
	expect_eq "tree: a row per process" 4 "$(jq '.results[0].rows | length' "$tmp/tree.seen.json")"
	check_run "diff: base" "$tmp/diff.seen.json" 0 "$tmp/stacks-base.report.json"
	check_run "diff: head" "$tmp/diff.seen.json" 1 "$tmp/stacks.report.json"
}

test_figures
finish
