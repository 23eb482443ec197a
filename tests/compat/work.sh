# shellcheck shell=sh
# A shell script of the kind configure scripts and test suites are: about 60
# commands, in pipes, substitutions, subshells, loops and functions; POSIX,
# for bash and dash alike.  Run in an empty directory; prints what it found.
set -e

count_lines() {
	wc -l <"$1" | tr -d ' '
}

mkdir -p src out
i=0
while [ $i -lt 12 ]; do
	seq 1 $((i * 50 + 10)) >"src/part$i.txt"
	i=$((i + 1))
done
for f in src/*.txt; do
	n=$(count_lines "$f")
	sum=$(awk '{ s += $1 } END { print s }' "$f")
	echo "$(basename "$f" .txt) $n $sum"
done | sort -k2,2n >out/summary
cat src/*.txt | sort -n | uniq -c | sort -k1,1nr -k2,2n | head -n 5
(cd src && ls | tr a-z A-Z | sed 's/\.TXT$//' | paste -s -d, -)
if grep -q '^part11 ' out/summary; then
	echo "largest: $(tail -n 1 out/summary)"
fi
case $(uname -s) in
Linux) echo "kernel family: linux" ;;
*) echo "kernel family: other" ;;
esac
printf '%s\n' alpha beta gamma delta | while read -r w; do
	printf '%s=%s\n' "$w" "$(printf %s "$w" | wc -c | tr -d ' ')"
done
expr 6 \* 7
test -d out && test -s out/summary && echo "summary: $(count_lines out/summary) lines"
cut -d' ' -f3 out/summary | tr '\n' '+' | sed 's/+$/\n/' | bc
find src -name 'part1*' | sort | xargs cat | md5sum | cut -c 1-12
rm -r src
ls
