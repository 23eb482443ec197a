// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the artifact reader and the report's aggregation.
 * The first byte picks the layer the fuzzer aims at:
 *   odd:  the rest is the artifact file as is (zstd, then msgpack);
 *   even: the rest is msgpack, wrapped here in a valid zstd frame, so that
 *         mutations reach the record decoder instead of dying in zstd.
 * Build and run: see tests/fuzz/README.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "util/artifact/artifact.h"
#include "util/report/report-summary.h"
#include "util/report/report-timeline.h"

static int memfd = -1;

static int write_input(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;

	if (ftruncate(memfd, 0) || lseek(memfd, 0, SEEK_SET))
		return -1;
	while (size) {
		ssize_t n = write(memfd, p, size);

		if (n <= 0)
			return -1;
		p += n;
		size -= n;
	}
	return lseek(memfd, 0, SEEK_SET) ? -1 : 0;
}

static int write_framed(const uint8_t *data, size_t size)
{
	size_t cap = ZSTD_compressBound(size), n;
	void *z = malloc(cap);
	int err;

	if (!z)
		return -1;
	n = ZSTD_compress(z, cap, data, size, 1);
	err = ZSTD_isError(n) ? -1 : write_input(z, n);
	free(z);
	return err;
}

static bool every_other_pid(int32_t pid, void *arg)
{
	(void)arg;
	return pid & 1;
}

static void read_artifact(bool filtered)
{
	struct report_filter f = { .pid_selected = every_other_pid,
				   .has_time = true, .from_ns = 1000, .to_ns = 1000000 };
	const struct artifact_record *r;
	struct report_summary s;
	struct artifact *a;

	if (artifact__open_fd(memfd, "fuzz", &a))
		return;
	if (report_summary__init(&s, filtered ? &f : NULL)) {
		artifact__close(a);
		return;
	}
	s.timeline = report_timeline__new(64);
	while (artifact__next(a, &r) == 1) {
		/* touch what the record says it has */
		if (r->comm)
			(void)strlen(r->comm);
		if (r->frames.n)
			(void)r->frames.v[r->frames.n - 1];
		report_summary__add(&s, r);
	}
	(void)artifact__strerror(a);
	report_summary__finish(&s);
	artifact__close(a);
	report_summary__exit(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int err;

	if (memfd < 0)
		memfd = memfd_create("artifact", MFD_CLOEXEC);
	if (memfd < 0 || !size)
		return 0;
	if (data[0] & 1)
		err = write_input(data + 1, size - 1);
	else
		err = write_framed(data + 1, size - 1);
	if (!err)
		read_artifact(data[0] & 2);
	return 0;
}
