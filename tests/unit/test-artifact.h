/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by tests/unit/test-artifact*.c and test-report*.c: a tiny
 * TAP-style checker and writers of artifacts through the real encoder.
 */
#ifndef MEMTRACK_TEST_ARTIFACT_H
#define MEMTRACK_TEST_ARTIFACT_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "util/track/encoder.h"
#include "util/util.h"

/* a directory of its own under $TMPDIR, removed by test_tmpdir_remove() */
static inline const char *test_tmpdir(void)
{
	static char dir[256];
	const char *base = getenv("TMPDIR");

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/memtrack-test-XXXXXX",
			 base ? base : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			exit(1);
		}
	}
	return dir;
}

static inline void test_tmpdir_remove(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_tmpdir());
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", test_tmpdir());
}

static inline char *test_path(const char *name)
{
	static char path[8][512];
	static int next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", test_tmpdir(), name);
	return p;
}

typedef void test_pack_fn(msgpack_packer *pk, void *arg);

/*
 * Writes events through the encoder, window_events per frame, then the
 * trailer built by pack (if any) as one more frame, and by pack2 (if any)
 * as another, as track writes its trailer's two frames.
 */
static inline int test_write_artifact2(const char *path,
				       const struct mt_alloc_event *ev, size_t n,
				       unsigned int window_events,
				       test_pack_fn *pack, void *arg,
				       test_pack_fn *pack2, void *arg2)
{
	struct encoder_opts opts = { .window_events = window_events, .threads = 2 };
	struct encoder *enc;
	size_t i;
	int err = 0;

	opts.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (opts.fd < 0)
		return -errno;
	enc = encoder__new(&opts);
	if (!enc) {
		close(opts.fd);
		return -ENOMEM;
	}
	for (i = 0; i < n && !err; i++)
		err = encoder__add(enc, &ev[i]);
	if (!err)
		err = encoder__drain(enc);
	if (!err && pack)
		err = encoder__append_records(enc, pack, arg);
	if (!err && pack2)
		err = encoder__append_records(enc, pack2, arg2);
	encoder__delete(enc);
	if (close(opts.fd) && !err)
		err = -errno;
	return err;
}

static inline int test_write_artifact(const char *path,
				      const struct mt_alloc_event *ev, size_t n,
				      unsigned int window_events,
				      test_pack_fn *pack, void *arg)
{
	return test_write_artifact2(path, ev, n, window_events, pack, arg, NULL, NULL);
}

static inline int test_write_bytes(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err;

	if (fd < 0)
		return -errno;
	err = write_all(fd, buf, len);
	close(fd);
	return err;
}

/* compresses buf as frames of chunk bytes each: records cut across frames */
static inline int test_write_chunked(const char *path, const void *buf, size_t len,
				     size_t chunk)
{
	size_t cap = ZSTD_compressBound(len) + (len / chunk + 1) * 32, zlen = 0, pos;
	unsigned char *z = malloc(cap);
	int err;

	if (!z)
		return -ENOMEM;
	for (pos = 0; pos < len; pos += chunk) {
		size_t n = len - pos < chunk ? len - pos : chunk;
		size_t r = ZSTD_compress(z + zlen, cap - zlen, (const char *)buf + pos, n, 1);

		if (ZSTD_isError(r)) {
			free(z);
			return -EINVAL;
		}
		zlen += r;
	}
	err = test_write_bytes(path, z, zlen);
	free(z);
	return err;
}

/* an artifact as CodSpeed's memtrack writes it: events only, no header, one frame */
static inline int test_write_codspeed(const char *path, const struct mt_alloc_event *ev,
				      size_t n)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	size_t i;
	int err;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (i = 0; i < n; i++)
		pack_alloc_event(&pk, &ev[i]);
	err = test_write_chunked(path, sb.data, sb.size, sb.size + 1);
	msgpack_sbuffer_destroy(&sb);
	return err;
}

/* the whole file in memory; *len its size */
static inline void *test_read_file(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	buf = malloc(st.st_size + 1);
	if (buf && read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = st.st_size;
	return buf;
}

static inline void test_pack_meta(msgpack_packer *pk, const char *command,
				  int32_t root_pid, uint64_t start, uint64_t end,
				  uint64_t drops, int32_t exit_code)
{
	struct artifact_record run = { 0 };

	artifact_record__set_version(&run, "0.1.0");
	artifact_record__set_command(&run, command);
	artifact_record__set_root_pid(&run, root_pid);
	artifact_record__set_start(&run, start);
	artifact_record__set_end(&run, end);
	artifact_record__set_drops(&run, (struct artifact_drops){ .events = drops });
	artifact_record__set_exit_code(&run, exit_code);
	artifact__pack_meta(pk, &run);
}

static inline void test_pack_process(msgpack_packer *pk, int32_t pid, int32_t ppid,
				     const char *comm, const char *exe,
				     int32_t exit_code)
{
	struct artifact_record r = { .type = ARTIFACT_PROCESS };

	artifact_record__set_pid(&r, pid);
	artifact_record__set_ppid(&r, ppid);
	artifact_record__set_comm(&r, comm);
	if (exe)
		artifact_record__set_exe(&r, exe);
	artifact_record__set_exit_code(&r, exit_code);
	artifact_record__pack(pk, &r);
}

static inline struct mt_alloc_event test_event(uint32_t kind, uint32_t pid,
					       uint64_t ts, uint64_t addr,
					       uint64_t size, uint64_t old_addr)
{
	struct mt_alloc_event e = {
		.kind = kind, .pid = pid, .tid = pid, .ts = ts,
		.addr = addr, .size = size, .old_addr = old_addr,
	};

	return e;
}

#endif
