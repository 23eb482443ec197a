#!/bin/bash
# Writes a pipeline stats file (the keys of memtrack-stats(1), FILE FORMAT) with known figures to stdout.
#
# Usage: generate.sh [--episodes] [--seconds <s>] [--t0 <ns>]
#
# Rows come every 10 ms period i, in the order memtrack track writes them:
#   backlog   t = T0 + i*10ms; sent - received = (i % 50) * 10, rss = 50 MB + i*10 kB
#   events    tick k = i >= 1: t0 = T0 + i*10ms, 1 ms long; producer at 10 MB/s,
#             each tick drains what was there at t0 (100000 B): 100 MB/s while busy
#   resolve   t0 = T0 + i*10ms + 3ms, 4 ms long
#   stacks    tick k = i >= 1: t0 = T0 + i*10ms + 5ms, 2 ms long; producer at
#             5 MB/s, each tick drains 50000 B: 25 MB/s while busy
#   encode    every 100 ms: a 100 ms window (wait 50, encode 30, write 20 ms),
#             1 MB msgpack in, 250 kB zstd out
#   pressure  with --episodes, after the stacks ticks k with k % 300 == 200,
#             whose peak is 75% of the ring; pids paused 30+20, 50, 10+10+40 ms
#
# With --seconds 10 (the default): span 10 s; events 99.81 MB written, 10 MB/s,
# drain 100 MB/s, fill 9.537%, busy 9.99%; stacks 49.91 MB, 5 MB/s, drain
# 25 MB/s, fill 75% (19.073% without episodes), busy 19.98%, 3 episodes,
# paused 160 ms in all, 50 ms at most; resolver 40%, encoder 50%, encoder
# 100 MB -> 25 MB (ratio 4), 490 events in flight at most, RSS 60 MB at most.
set -e

episodes=0
seconds=10
t0=1000000000000
while [ $# -gt 0 ]; do
	case $1 in
	--episodes) episodes=1 ;;
	--seconds) seconds=$2; shift ;;
	--t0) t0=$2; shift ;;
	*) echo "usage: $0 [--episodes] [--seconds <s>] [--t0 <ns>]" >&2; exit 129 ;;
	esac
	shift
done

exec awk -v T0="$t0" -v S="$seconds" -v EP="$episodes" '
function ring(name, t0, d, rate, off, period, peak,    p0, p1, c0, c1) {
	p0 = (t0 - T0 - off) * rate
	p1 = (t0 + d - T0 - off) * rate
	c0 = (t0 - period - T0 - off) * rate
	c1 = p0
	if (peak < p0 - c0)
		peak = p0 - c0
	printf "{\"k\":\"ring\",\"ring\":\"%s\",\"t0\":%.0f,\"prod0\":%.0f,\"cons0\":%.0f,\"t1\":%.0f,\"prod1\":%.0f,\"cons1\":%.0f,\"peak\":%.0f}\n",
		name, t0, p0, c0, t0 + d, p1, c1, peak
}
function pressure(t, e) {
	if (e % 3 == 0)
		pids = sprintf("[%d,%.0f],[%d,%.0f]", 4242, t - 30 * MS, 4243, t - 20 * MS)
	else if (e % 3 == 1)
		pids = sprintf("[%d,%.0f]", 4242, t - 50 * MS)
	else
		pids = sprintf("[%d,%.0f],[%d,%.0f],[%d,%.0f]", 4242, t - 10 * MS,
			       4243, t - 10 * MS, 4244, t - 40 * MS)
	printf "{\"k\":\"pressure\",\"ring\":\"stacks\",\"t\":%.0f,\"pids\":[%s]}\n", t, pids
}
BEGIN {
	MS = 1000000
	n = S * 100
	e = 0
	printf "{\"k\":\"ring_open\",\"t\":%.0f,\"ring\":\"events\",\"size\":1048576}\n", T0
	printf "{\"k\":\"ring_open\",\"t\":%.0f,\"ring\":\"stacks\",\"size\":262144}\n", T0
	for (i = 0; i <= n; i++) {
		base = T0 + i * 10 * MS
		if (i > 0 && i % 10 == 0)
			printf "{\"k\":\"encode\",\"t\":%.0f,\"events\":20000,\"wait_ns\":%.0f,\"encode_ns\":%.0f,\"write_ns\":%.0f,\"msgpack_bytes\":1000000,\"zstd_bytes\":250000}\n",
				base, 50 * MS, 30 * MS, 20 * MS
		printf "{\"k\":\"backlog\",\"t\":%.0f,\"sent\":%.0f,\"received\":%.0f,\"rss\":%.0f}\n",
			base, 2000 * i + (i % 50) * 10, 2000 * i, 50000000 + i * 10000
		if (i == n)
			break
		if (i > 0)
			ring("events", base, MS, 0.01, 0, 10 * MS, 0)
		printf "{\"k\":\"resolve\",\"t0\":%.0f,\"t1\":%.0f,\"n\":%d}\n",
			base + 3 * MS, base + 7 * MS, 64
		if (i > 0) {
			hot = EP && i % 300 == 200
			ring("stacks", base + 5 * MS, 2 * MS, 0.005, 5 * MS, 10 * MS, hot ? 196608 : 0)
			if (hot)
				pressure(base + 7 * MS, e++)
		}
	}
}'
