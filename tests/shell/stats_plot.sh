#!/bin/bash
# memtrack stats: PNG plots and gnuplot scripts, with and without pressure episodes
set -e

. "$(dirname "$0")/lib/common.sh"

GEN=$TOP/tests/shell/data/stats/generate.sh
DATA=$TOP/tests/shell/data/stats
tmpdir=$(mktemp -d /tmp/memtrack-stats-plot.XXXXXX)

cleanup() {
	rm -rf "$tmpdir"
	trap - EXIT TERM INT
}

trap_cleanup() {
	cleanup
	exit 1
}
trap trap_cleanup EXIT TERM INT

# png_size <file>: prints "<width>x<height>" of a valid PNG, nothing otherwise
png_size() {
	local sig ihdr end

	[ -s "$1" ] || return 0
	sig=$(od -An -tx1 -N8 "$1" | tr -d ' \n')
	ihdr=$(od -An -c -j12 -N4 "$1" | tr -d ' \n')
	end=$(tail -c 8 "$1" | head -c 4)
	[ "$sig" = 89504e470d0a1a0a ] && [ "$ihdr" = IHDR ] && [ "$end" = IEND ] || return 0
	echo "$((16#$(od -An -tx1 -j16 -N4 "$1" | tr -d ' \n')))x$((16#$(od -An -tx1 -j20 -N4 "$1" | tr -d ' \n')))"
}

test_png_with_episodes() {
	"$MEMTRACK" stats --quiet --plot "$tmpdir/ep.png" "$tmpdir/ep.jsonl" 2>"$tmpdir/err"
	# five panels of 280 pixels, the swimlane among them
	expect_eq "png with episodes: a valid 1280x1400 PNG" 1280x1400 "$(png_size "$tmpdir/ep.png")"
	expect_eq "png with episodes: nothing said" "" "$(cat "$tmpdir/err")"
}

test_png_without_episodes() {
	"$GEN" >"$tmpdir/noep.jsonl"
	"$MEMTRACK" stats --plot "$tmpdir/noep.png" "$tmpdir/noep.jsonl" >"$tmpdir/out"
	# no swimlane: four panels
	expect_eq "png without episodes: a valid 1280x1120 PNG" 1280x1120 "$(png_size "$tmpdir/noep.png")"
	if grep -q '^stacks ' "$tmpdir/out"; then
		pass "png without episodes: the summary is printed too"
	else
		fail "png without episodes" "no summary"
	fi
}

test_plot_size() {
	"$MEMTRACK" stats -q --plot "$tmpdir/small.png" --plot-size 640x480 "$tmpdir/ep.jsonl"
	expect_eq "--plot-size" 640x480 "$(png_size "$tmpdir/small.png")"
}

test_gnuplot_script() {
	"$MEMTRACK" stats -q --gnuplot "$tmpdir/run.gp" "$tmpdir/ep.jsonl"
	if grep -q "^set output '$tmpdir/run.png'" "$tmpdir/run.gp" &&
	   grep -q '^\$f0_r0 << EOD' "$tmpdir/run.gp"; then
		pass "--gnuplot: a script with its data inline"
	else
		fail "--gnuplot" "no output or no inline data in the script"
	fi
	[ ! -e "$tmpdir/run.png" ] || fail "--gnuplot" "rendered without --plot"
	(cd "$tmpdir" && gnuplot run.gp)
	expect_eq "--gnuplot: the script renders alone" 1280x1400 "$(png_size "$tmpdir/run.png")"

	"$MEMTRACK" stats -q --gnuplot "$tmpdir/both.gp" --plot "$tmpdir/both.png" "$tmpdir/ep.jsonl"
	expect_eq "--gnuplot with --plot: renders into --plot" 1280x1400 "$(png_size "$tmpdir/both.png")"
}

test_some_row_kinds() {
	"$MEMTRACK" stats -q --plot "$tmpdir/partial.png" "$DATA/rings-only.jsonl" 2>"$tmpdir/err"
	expect_eq "only ring rows: a PNG of two panels" 1280x560 "$(png_size "$tmpdir/partial.png")"
	if grep -q "skipping the ring fill panel: no ring_open rows" "$tmpdir/err" &&
	   grep -q "skipping the events in flight and RSS panel: no backlog rows" "$tmpdir/err"; then
		pass "only ring rows: says which panels it skipped"
	else
		fail "only ring rows" "skipped panels not named: $(cat "$tmpdir/err")"
	fi
}

test_several_files() {
	"$GEN" --seconds 5 --t0 1002000000000 >"$tmpdir/late.jsonl"
	"$MEMTRACK" stats -q --plot "$tmpdir/two.png" --gnuplot "$tmpdir/two.gp" \
		"$tmpdir/ep.jsonl" "$tmpdir/late.jsonl"
	expect_eq "several files: one PNG" 1280x1400 "$(png_size "$tmpdir/two.png")"
	if grep -q "title 'late:stacks peak'" "$tmpdir/two.gp"; then
		pass "several files: series named after their file"
	else
		fail "several files" "no 'late:stacks peak' series"
	fi
}

test_no_gnuplot() {
	local rc=0 nogp=$tmpdir/nogp

	# a PATH with what the shell needs but no gnuplot
	mkdir "$nogp"
	PATH=$nogp "$MEMTRACK" stats -q --plot "$tmpdir/x.png" "$tmpdir/ep.jsonl" \
		2>"$tmpdir/err" || rc=$?
	expect_eq "no gnuplot: --plot exits 1" 1 "$rc"
	if grep -q "gnuplot is not installed (install the 'gnuplot-nox' package)" "$tmpdir/err"; then
		pass "no gnuplot: names the package"
	else
		fail "no gnuplot" "message: $(cat "$tmpdir/err")"
	fi

	rc=0
	PATH=$nogp "$MEMTRACK" stats -q --gnuplot "$tmpdir/nogp.gp" "$tmpdir/ep.jsonl" || rc=$?
	expect_eq "no gnuplot: --gnuplot still works" 0 "$rc"
	[ -s "$tmpdir/nogp.gp" ] || fail "no gnuplot" "no script written"

	rc=0
	PATH=$nogp "$MEMTRACK" stats -q --gnuplot "$tmpdir/nogp2.gp" --plot "$tmpdir/x.png" \
		"$tmpdir/ep.jsonl" 2>/dev/null || rc=$?
	if [ "$rc" = 1 ] && [ -s "$tmpdir/nogp2.gp" ]; then
		pass "no gnuplot: --gnuplot with --plot writes the script, then fails"
	else
		fail "no gnuplot: --gnuplot with --plot" "exit $rc"
	fi
}

# 20 ms in one 100 ms bin whose middle is before the first record: gnuplot found
# "all points y value undefined"
test_one_bin() {
	local rc=0
	"$GEN" --t0 1000060000000 --seconds 0.02 >"$tmpdir/short.jsonl"
	"$MEMTRACK" stats -q --plot "$tmpdir/short.png" "$tmpdir/short.jsonl" 2>"$tmpdir/err" || rc=$?
	expect_eq "one bin: exit 0, nothing said" "0 " "$rc $(cat "$tmpdir/err")"
	expect_eq "one bin: a valid 1280x1120 PNG" 1280x1120 "$(png_size "$tmpdir/short.png")"
}

# a gnuplot that fails half-way through its PNG: no partial file, an older one left as it was
test_gnuplot_fails() {
	local rc=0

	mkdir -p "$tmpdir/bin"
	# it writes where the script says (set output), else on its stdout, as gnuplot does
	cat >"$tmpdir/bin/gnuplot" <<-'EOF'
	#!/bin/sh
	out=$(sed -n "s/^set output '\\(.*\\)'$/\\1/p" "$1")
	[ -n "$out" ] && exec >"$out"
	printf '\211PNG\r\n\032\nIHDR'
	echo "line 3: all points y value undefined!" >&2
	exit 1
	EOF
	chmod +x "$tmpdir/bin/gnuplot"
	echo "an older plot" >"$tmpdir/old.png"
	PATH=$tmpdir/bin:$PATH "$MEMTRACK" stats -q --plot "$tmpdir/old.png" "$tmpdir/ep.jsonl" \
		2>"$tmpdir/err" || rc=$?
	expect_eq "gnuplot failure: exits 1" 1 "$rc"
	if grep -q "error: gnuplot failed (exit status 1)" "$tmpdir/err" &&
		grep -q "error: no plot written to '$tmpdir/old.png'" "$tmpdir/err"; then
		pass "gnuplot failure: reported"
	else
		fail "gnuplot failure" "message: $(cat "$tmpdir/err")"
	fi
	expect_eq "gnuplot failure: the older file is as it was" "an older plot" "$(cat "$tmpdir/old.png")"
	PATH=$tmpdir/bin:$PATH "$MEMTRACK" stats -q --plot "$tmpdir/new.png" "$tmpdir/ep.jsonl" \
		2>/dev/null || true
	expect_eq "gnuplot failure: no partial PNG" no "$([ -e "$tmpdir/new.png" ] && echo yes || echo no)"
}

# a PNG that cannot be created: said before gnuplot runs
test_unwritable_plot() {
	local rc=0

	"$MEMTRACK" stats -q --plot "$tmpdir/no/such/dir/x.png" "$tmpdir/ep.jsonl" \
		2>"$tmpdir/err" || rc=$?
	expect_eq "plot in a missing directory: exits 1" 1 "$rc"
	expect_eq "plot in a missing directory: says why" \
		"error: cannot create plot '$tmpdir/no/such/dir/x.png': No such file or directory" \
		"$(cat "$tmpdir/err")"
}

"$GEN" --episodes >"$tmpdir/ep.jsonl"
test_no_gnuplot
command -v gnuplot >/dev/null || skip "gnuplot is not installed (gnuplot-nox)"
test_png_with_episodes
test_png_without_episodes
test_plot_size
test_gnuplot_script
test_some_row_kinds
test_several_files
test_one_bin
test_gnuplot_fails
test_unwritable_plot
cleanup
finish
