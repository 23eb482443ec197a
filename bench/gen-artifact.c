// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a synthetic artifact through the real encoder, for measuring
 * `memtrack report` (and for fuzz seeds): a mix of malloc, calloc, realloc,
 * free and mmap/munmap by a few processes and threads, with a bounded set
 * of live blocks, log-distributed sizes, and a trailer.
 *
 *   cc -O2 -I. -pthread -o gen-artifact bench/gen-artifact.c util/encoder.c \
 *	util/util.c -lzstd -lmsgpackc
 *   ./gen-artifact big.msgpack 10000000 [processes] [live blocks]
 *   /usr/bin/time -v ./memtrack report -q big.msgpack
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/encoder.h"

struct gen {
	uint64_t rng;
	uint64_t ts;
	uint64_t next_addr;
	unsigned int nprocs;
	size_t cap;			/* live blocks per process, at most */
	struct block {
		uint64_t addr, size;
	} **live;
	size_t *nlive;
};

static uint64_t rnd(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

/* mostly small, sometimes large: 2^(0..16) plus noise */
static uint64_t rnd_size(struct gen *g)
{
	unsigned int shift = rnd(g) % 17;

	return (1ULL << shift) + rnd(g) % (1ULL << shift);
}

static struct mt_alloc_event event(struct gen *g, uint32_t kind, unsigned int p)
{
	struct mt_alloc_event e = { .kind = kind, .pid = 1000 + p };

	e.tid = e.pid + rnd(g) % 4;
	e.ts = g->ts += 50 + rnd(g) % 100;
	return e;
}

static void step(struct gen *g, struct mt_alloc_event *e)
{
	unsigned int p = rnd(g) % g->nprocs, dice = rnd(g) % 100;
	struct block *live = g->live[p];
	size_t *n = &g->nlive[p], i;

	if (*n && (dice < 42 || *n == g->cap)) {		/* free */
		i = rnd(g) % *n;
		*e = event(g, MT_FREE, p);
		e->addr = live[i].addr;
		live[i] = live[--*n];
	} else if (*n && dice < 50) {			/* realloc that moves */
		i = rnd(g) % *n;
		*e = event(g, MT_REALLOC, p);
		e->old_addr = live[i].addr;
		e->addr = live[i].addr = g->next_addr += 64;
		e->size = live[i].size = rnd_size(g);
	} else if (dice < 52) {				/* mmap, no heap */
		*e = event(g, rnd(g) & 1 ? MT_MMAP : MT_MUNMAP, p);
		e->addr = 0x7f0000000000ULL + (rnd(g) % 1024) * 4096;
		e->size = 4096 * (1 + rnd(g) % 64);
	} else {					/* malloc or calloc */
		*e = event(g, dice < 55 ? MT_CALLOC : MT_MALLOC, p);
		e->addr = g->next_addr += 64;
		e->size = rnd_size(g);
		live[*n].addr = e->addr;
		live[(*n)++].size = e->size;
	}
}

static void pack_trailer(msgpack_packer *pk, void *arg)
{
	struct gen *g = arg;
	unsigned int p;
	char comm[24];

	msgpack_pack_map(pk, 4);
	pack_key(pk, "type");
	pack_str(pk, "Meta");
	pack_key(pk, "command");
	pack_str(pk, "gen-artifact");
	pack_key(pk, "root_pid");
	msgpack_pack_int32(pk, 1000);
	pack_key(pk, "format");
	msgpack_pack_uint32(pk, 1);
	for (p = 0; p < g->nprocs; p++) {
		snprintf(comm, sizeof(comm), "worker%u", p);
		msgpack_pack_map(pk, 4);
		pack_key(pk, "type");
		pack_str(pk, "Process");
		pack_key(pk, "pid");
		msgpack_pack_int32(pk, 1000 + p);
		pack_key(pk, "ppid");
		msgpack_pack_int32(pk, p ? 1000 : 1);
		pack_key(pk, "comm");
		pack_str(pk, comm);
	}
}

int main(int argc, char **argv)
{
	struct gen g = { .rng = 0x2545f4914f6cdd1dULL, .ts = 1000000000ULL,
			 .next_addr = 0x10000 };
	struct encoder_opts opts = { 0 };
	struct mt_alloc_event e;
	struct encoder *enc;
	uint64_t n, i;
	unsigned int p;

	if (argc < 3) {
		fprintf(stderr, "usage: %s <artifact> <events> [<processes>] [<live blocks>]\n",
			argv[0]);
		return 129;
	}
	n = strtoull(argv[2], NULL, 0);
	g.nprocs = argc > 3 ? atoi(argv[3]) : 4;
	g.cap = argc > 4 ? strtoull(argv[4], NULL, 0) : 100000;
	if (!g.nprocs || !g.cap)
		return 129;
	g.live = calloc(g.nprocs, sizeof(*g.live));
	g.nlive = calloc(g.nprocs, sizeof(*g.nlive));
	for (p = 0; p < g.nprocs; p++)
		g.live[p] = calloc(g.cap, sizeof(**g.live));
	opts.fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (opts.fd < 0) {
		perror(argv[1]);
		return 1;
	}
	enc = encoder__new(&opts);
	for (i = 0; enc && i < n; i++) {
		step(&g, &e);
		if (encoder__add(enc, &e))
			break;
	}
	if (!enc || encoder__drain(enc) || encoder__append_records(enc, pack_trailer, &g)) {
		fprintf(stderr, "cannot write %s\n", argv[1]);
		return 1;
	}
	printf("%s: %llu events, %llu bytes\n", argv[1], (unsigned long long)n,
	       (unsigned long long)encoder__bytes_written(enc));
	encoder__delete(enc);
	close(opts.fd);
	return 0;
}
