// SPDX-License-Identifier: GPL-2.0
/*
 * Side records never wait for a window: the resolver that writes them is
 * the one the windows wait for (their stack ids), so a side record that
 * waited for the writing turn of a window still being encoded would hang
 * the run with the tree frozen behind full rings.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "util/track/encoder.h"

struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool window_waiting;	/* the window's stack id is asked for */
	bool open;		/* the stack id may be answered */
	bool side_done;
	int side_err;
	struct encoder *enc;
};

static struct gate gate = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/* the stack id of the window's event: given once the side record is written */
static uint64_t blocked_stack_id(void *arg, uint64_t ref)
{
	struct gate *g = arg;

	pthread_mutex_lock(&g->lock);
	g->window_waiting = true;
	pthread_cond_broadcast(&g->cond);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
	return ref + 1;
}

static void pack_one_record(msgpack_packer *pk, void *arg)
{
	(void)arg;
	msgpack_pack_map(pk, 1);
	msgpack_pack_str_with_body(pk, "side", 4);
	msgpack_pack_uint32(pk, 7);
}

static void *add_side(void *arg)
{
	struct gate *g = arg;
	int err = encoder__add_side(g->enc, pack_one_record, NULL);

	pthread_mutex_lock(&g->lock);
	g->side_done = true;
	g->side_err = err;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

/* waits up to 10 s for *flag; false if it did not come */
static bool wait_for(struct gate *g, const bool *flag)
{
	struct timespec until;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&g->lock);
	while (!*flag && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&g->cond, &g->lock, &until);
	pthread_mutex_unlock(&g->lock);
	return *flag;
}

static size_t count_side_frames(const unsigned char *p, size_t n)
{
	size_t i, frames = 0;

	for (i = 0; i + 4 <= n; i++)
		if (p[i] == (ARTIFACT_SIDE_MAGIC & 0xff) &&
		    p[i + 1] == (ARTIFACT_SIDE_MAGIC >> 8 & 0xff) &&
		    p[i + 2] == (ARTIFACT_SIDE_MAGIC >> 16 & 0xff) &&
		    p[i + 3] == (ARTIFACT_SIDE_MAGIC >> 24))
			frames++;
	return frames;
}

static void test_side_record_while_a_window_waits_for_stacks(void)
{
	char path[] = "/tmp/test-encoder-side.XXXXXX";
	int fd = mkstemp(path);
	struct encoder_opts opts = {
		.fd = fd, .threads = 1, .window_events = 4,
		.stack_id = blocked_stack_id, .stack_id_arg = &gate,
	};
	struct mt_alloc_event e = {
		.kind = MT_MALLOC, .pid = 1, .tid = 1, .addr = 0x1000, .size = 16,
		.stack = 41, .flags = MT_EVENT_STACK_SEQ,
	};
	unsigned char buf[1 << 16];
	pthread_t side;
	ssize_t n;
	int i;

	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	unlink(path);
	gate.enc = encoder__new(&opts);
	CHECK(gate.enc != NULL, "encoder__new");
	if (fd < 0 || !gate.enc)
		return;
	for (i = 0; i < 4; i++)		/* one full window, handed over */
		CHECK(encoder__add(gate.enc, &e) == 0, "encoder__add %d", i);
	CHECK(wait_for(&gate, &gate.window_waiting), "the window asks for its stack id");

	pthread_create(&side, NULL, add_side, &gate);
	CHECK(wait_for(&gate, &gate.side_done),
	      "a side record returns while the window before it waits for stacks");

	pthread_mutex_lock(&gate.lock);
	gate.open = true;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	pthread_join(side, NULL);
	CHECK(gate.side_err == 0, "encoder__add_side: %d", gate.side_err);
	CHECK(encoder__drain(gate.enc) == 0, "encoder__drain");

	n = pread(fd, buf, sizeof(buf), 0);
	CHECK(n > 0 && (uint64_t)n == encoder__bytes_written(gate.enc),
	      "%zd bytes in the file, %" PRIu64 " written", n, encoder__bytes_written(gate.enc));
	CHECK_U64(count_side_frames(buf, n > 0 ? n : 0), 1, "side frames in the file");
	CHECK_U64(encoder__events_out(gate.enc), 4, "events written");
	encoder__delete(gate.enc);
	close(fd);
}

int main(void)
{
	test_side_record_while_a_window_waits_for_stacks();
	return test_done("encoder-side");
}
