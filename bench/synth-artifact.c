// SPDX-License-Identifier: GPL-2.0
/*
 * synth-artifact <events> <path>: writes a memtrack artifact of <events>
 * allocation events through memtrack's own encoder, shaped like what
 * `memtrack track -- alloc_storm_procs 16 N` records: a root process that
 * allocates nothing and 16 children, each a run of malloc(16..1039)/free
 * pairs on addresses that its tcache hands back again, the children's events
 * interleaved in blocks (as two CPUs fill the ring), timestamps 700 ns apart.
 * Then the trailer track writes: one Meta record and one Process per pid.
 * <events> is rounded down to an even number.  It is the input of the report
 * speed benchmark, since tracking 10 M real events takes minutes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/track/encoder.h"
#include "util/util.h"

#define CHILDREN	16
#define ROOT_PID	40000
#define BLOCK_PAIRS	512	/* pairs of one child before the next child's */
#define EVENT_NS	700

struct synth {
	uint64_t pairs;
	uint64_t start, end;
};

/* the i-th malloc/free pair: which child, and its n-th pair */
static void pair_of(uint64_t i, uint32_t *child, uint64_t *nth)
{
	uint64_t block = i / BLOCK_PAIRS;

	*child = block % CHILDREN;
	*nth = (block / CHILDREN) * BLOCK_PAIRS + i % BLOCK_PAIRS;
}

static void make_pair(struct mt_alloc_event e[2], uint64_t i, uint64_t ts)
{
	uint32_t child;
	uint64_t nth, size;

	pair_of(i, &child, &nth);
	size = 16 + (nth & 1023);
	e[0].kind = MT_MALLOC;
	e[0].pid = e[0].tid = ROOT_PID + 1 + child;
	e[0].flags = 0;
	e[0].ts = ts;
	/* a tcache bin per 16 bytes of size: the same chunk comes back */
	e[0].addr = 0x55d4a0000000ULL + child * 0x1000000ULL + (size / 16) * 0x420;
	e[0].size = size;
	e[0].old_addr = 0;
	e[1] = e[0];
	e[1].kind = MT_FREE;
	e[1].ts = ts + EVENT_NS;
	e[1].size = 0;
}

static void pack_process(msgpack_packer *pk, int32_t pid, int32_t ppid,
			 uint64_t start, uint64_t end)
{
	struct artifact_record r = { .type = ARTIFACT_PROCESS };

	artifact_record__set_pid(&r, pid);
	artifact_record__set_ppid(&r, ppid);
	artifact_record__set_comm(&r, "alloc_storm_pro");
	artifact_record__set_exe(&r, "tests/workloads/alloc_storm_procs");
	artifact_record__set_start(&r, start);
	artifact_record__set_exit(&r, end);
	artifact_record__set_exit_code(&r, 0);
	artifact_record__pack(pk, &r);
}

static void pack_trailer(msgpack_packer *pk, void *arg)
{
	const struct synth *s = arg;
	struct artifact_record run = { 0 };
	int i;

	artifact_record__set_version(&run, "synth-artifact");
	artifact_record__set_command(&run, "synth-artifact (alloc_storm_procs shape)");
	artifact_record__set_root_pid(&run, ROOT_PID);
	artifact_record__set_start(&run, s->start);
	artifact_record__set_end(&run, s->end);
	artifact_record__set_drops(&run, (struct artifact_drops){ 0 });
	artifact_record__set_exit_code(&run, 0);
	artifact__pack_meta(pk, &run);

	pack_process(pk, ROOT_PID, 1, s->start, s->end);
	for (i = 0; i < CHILDREN; i++)
		pack_process(pk, ROOT_PID + 1 + i, ROOT_PID, s->start, s->end);
}

int main(int argc, char **argv)
{
	struct encoder_opts o = { 0 };
	struct mt_alloc_event e[2];
	struct synth s = { 0 };
	struct encoder *enc;
	uint64_t i, t0;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: synth-artifact <events> <path>\n");
		return 129;
	}
	s.pairs = strtoull(argv[1], NULL, 10) / 2;
	o.fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (o.fd < 0) {
		perror("synth-artifact: cannot create the artifact");
		return 1;
	}
	enc = encoder__new(&o);
	if (!enc) {
		fprintf(stderr, "synth-artifact: cannot start the encoder\n");
		return 1;
	}
	t0 = now_ns();
	s.start = t0;
	for (i = 0; i < s.pairs; i++) {
		make_pair(e, i, t0 + 2 * i * EVENT_NS);
		if (encoder__add(enc, &e[0]) || encoder__add(enc, &e[1]))
			break;
	}
	s.end = t0 + 2 * s.pairs * EVENT_NS;
	err = encoder__drain(enc);
	if (!err)
		err = encoder__append_records(enc, pack_trailer, &s);
	if (err) {
		fprintf(stderr, "synth-artifact: cannot write '%s'\n", argv[2]);
		return 1;
	}
	printf("events=%lu bytes=%lu encode_ns=%lu\n", 2 * s.pairs,
	       encoder__bytes_written(enc), now_ns() - t0);
	encoder__delete(enc);
	return close(o.fd) ? 1 : 0;
}
