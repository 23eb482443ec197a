// SPDX-License-Identifier: GPL-2.0
/*
 * encoder-bench [<events>] [<threads>...]: pushes a synthetic stream shaped
 * like alloc_storm_procs (16 processes, malloc/free pairs of 16..1039 bytes,
 * a few mmaps) through the encoder into /dev/null-like temp file, once per
 * thread count, each in its own process so that peak RSS is its own.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/track/encoder.h"
#include "util/util.h"

struct totals {
	uint64_t msgpack_bytes, zstd_bytes;
};

static void on_window(const struct encoder_window_stats *w, void *arg)
{
	struct totals *t = arg;

	t->msgpack_bytes += w->msgpack_bytes;
	t->zstd_bytes += w->zstd_bytes;
}

static void make_event(struct mt_alloc_event *e, uint64_t i, uint64_t ts)
{
	uint32_t proc = i % 16;
	uint64_t nth = i / 16;

	e->pid = 10000 + proc;
	e->tid = e->pid;
	e->ts = ts;
	e->addr = 0x55d4a0000000ULL + proc * 0x100000ULL + ((nth / 2) % 64) * 1056;
	e->old_addr = 0;
	if (nth % 100000 == 99999) {
		e->kind = MT_MMAP;
		e->size = 1 << 20;
	} else if (nth % 2) {
		e->kind = MT_FREE;
		e->size = 0;
	} else {
		e->kind = MT_MALLOC;
		e->size = 16 + ((nth / 2) & 1023);
	}
}

static int run(uint64_t events, unsigned int threads)
{
	char path[] = "/tmp/encoder-bench.XXXXXX";
	struct totals t = { 0 };
	struct encoder_opts o = { .threads = threads, .on_window = on_window,
				  .on_window_arg = &t };
	struct mt_alloc_event e;
	struct encoder *enc;
	struct rusage ru;
	uint64_t i, t0, t1;

	o.fd = mkstemp(path);
	if (o.fd < 0)
		return 1;
	unlink(path);
	enc = encoder__new(&o);
	if (!enc)
		return 1;
	t0 = now_ns();
	for (i = 0; i < events; i++) {
		make_event(&e, i, t0 + i * 700);
		encoder__add(enc, &e);
	}
	if (encoder__drain(enc))
		return 1;
	t1 = now_ns();
	encoder__delete(enc);
	getrusage(RUSAGE_SELF, &ru);
	printf("| %7u | %12.0f | %8.2f | %8.2f | %6.1f | %9.1f |\n", threads,
	       events * 1e9 / (t1 - t0), (double)t.msgpack_bytes / events,
	       (double)t.zstd_bytes / events,
	       (double)t.msgpack_bytes / (t.zstd_bytes ? t.zstd_bytes : 1),
	       ru.ru_maxrss / 1024.0);
	return 0;
}

/* a positive decimal number, or 0 */
static uint64_t count_arg(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	return *s >= '0' && *s <= '9' && !*end ? v : 0;
}

int main(int argc, char **argv)
{
	static const unsigned int default_threads[] = { 1, 2, 4, 8, 16 };
	uint64_t events = argc > 1 ? count_arg(argv[1]) : 4000000;
	int i, n = argc > 2 ? argc - 2 : 5, status, failed = 0;

	for (i = 2; i < argc && events; i++)
		if (!count_arg(argv[i]) || count_arg(argv[i]) > 64)
			events = 0;
	if (!events) {
		fprintf(stderr, "usage: encoder-bench [<events> [<threads>...]]\n"
			"  <events>   events per run (default 4000000)\n"
			"  <threads>  encoder thread counts to run, 1 to 64 (default 1 2 4 8 16)\n");
		return 129;
	}

	printf("encoder: %lu synthetic events per run, machine: %ld cpus\n\n",
	       events, sysconf(_SC_NPROCESSORS_ONLN));
	printf("| threads |     events/s | msgpack B/ev | zstd B/ev | ratio | peak RSS MiB |\n");
	printf("|---------|--------------|----------|----------|--------|-----------|\n");
	fflush(stdout);
	for (i = 0; i < n; i++) {
		unsigned int threads = argc > 2 ? (unsigned int)atoi(argv[i + 2]) : default_threads[i];
		pid_t pid = fork();

		if (pid == 0) {
			int ret = run(events, threads);

			fflush(stdout);
			_exit(ret);
		}
		waitpid(pid, &status, 0);
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	}
	return failed;
}
