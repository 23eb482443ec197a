// SPDX-License-Identifier: GPL-2.0
/*
 * The artifact reader: a zstd_reader (util/artifact/zstd-reader.c) hands over
 * decompressed bytes, the records are decoded from them with the msgpack
 * pull decoder (util/artifact/msgpack-pull.c).  A record cut by the end of the bytes
 * at hand is decoded again from its start once more bytes have arrived, so
 * the decoder needs no state between calls.  Nothing here allocates by a
 * length read from the file unless the bytes that length promises are
 * already at hand.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "util/artifact/artifact.h"
#include "util/artifact/artifact-schema.h"
#include "util/artifact/msgpack-pull.h"
#include "util/artifact/zstd-reader.h"

#define OUT_INITIAL	(256u << 10)

struct artifact {
	int fd;
	bool own_fd;
	char *name;
	uint64_t size;
	struct zstd_reader z;

	bool memtrack;		/* it starts with memtrack's header */
	bool seen_meta;
	int first_byte;		/* of the file, -1 when empty */
	struct mp_cursor cur;	/* the bytes of z.out not decoded yet */
	struct record_decoder dec;
	struct artifact_record rec;
	uint64_t records, skipped;
	/* a killed run's side records, read after its last complete frame */
	unsigned char *side;
	size_t side_len;
	struct mp_cursor side_cur;
	bool side_read;
	int error;
	uint64_t error_offset;
	char reason[256];
};

/* ---- the reader ------------------------------------------------------------ */

static int fail(struct artifact *a, int err, uint64_t offset)
{
	a->error = err;
	a->error_offset = offset;
	return err;
}

static int fail_reason(struct artifact *a, int err, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_reason(struct artifact *a, int err, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
	return fail(a, err, offset);
}

/* -ENOMSG: what was read shows that the file is not an artifact at all */
static int fail_not_artifact(struct artifact *a, const char *why)
{
	const char *hint = a->first_byte == '{' ? " (JSON: 'memtrack stats' reads those)" : "";

	return fail_reason(a, -ENOMSG, 0, "%s%s", why, hint);
}

static int fail_newer(struct artifact *a, uint32_t format)
{
	return fail_reason(a, -EPROTONOSUPPORT, 0, "it is of artifact format %u, newer than "
			   "this memtrack reads (%u): read it with a newer memtrack",
			   format, ARTIFACT_FORMAT);
}

/* memtrack's header, the skippable frame it starts with (artifact-format.h) */
static void read_header(struct artifact *a)
{
	const struct zstd_reader *z = &a->z;
	const unsigned char *p = z->lead + sizeof(ARTIFACT_TOOL) - 1;
	uint32_t format;

	if (z->lead_magic != ARTIFACT_HEADER_MAGIC || z->lead_len < ARTIFACT_HEADER_SIZE - 8 ||
	    memcmp(z->lead, ARTIFACT_TOOL, sizeof(ARTIFACT_TOOL) - 1))
		return;
	a->memtrack = true;
	format = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
	if (format > ARTIFACT_FORMAT)
		fail_newer(a, format);
}

/* more decompressed bytes: > 0 added, 0 at the end of the file, or an error */
static int fill(struct artifact *a)
{
	int err = zstd_reader__fill(&a->z);

	if (err == -E2BIG)
		return fail_reason(a, -EBADMSG, a->z.error_offset,
				   "a record is larger than %u bytes", ARTIFACT_MAX_RECORD);
	if (err == -ENOMSG && !a->z.error_offset && !a->memtrack)
		return fail_not_artifact(a, "it does not start with a zstd frame");
	if (err < 0) {
		memcpy(a->reason, a->z.reason, sizeof(a->reason));
		return fail(a, err == -ENOMSG ? -EBADMSG : err, a->z.error_offset);
	}
	if (record_decoder__reserve(&a->dec, a->z.out_cap))
		return fail_reason(a, -ENOMEM, a->z.frame_start, "out of memory");
	return err;
}

static int fail_truncated(struct artifact *a)
{
	const struct zstd_reader *z = &a->z;

	if (z->in_frame)
		return fail_reason(a, -EBADMSG, z->frame_start, "the last zstd frame is "
				   "incomplete (%" PRIu64 " bytes of it present)",
				   z->in_base + z->zin.size - z->frame_start);
	return fail_reason(a, -EBADMSG, z->data_frame, "the stream ends inside a record "
			   "(%zu bytes of it present)", z->out_len - z->out_pos);
}

/* the end of the stream, at the end of a frame and of a record */
static int at_end(struct artifact *a)
{
	if (!artifact__offset(a))
		return fail_not_artifact(a, "the file is empty");
	if (!a->memtrack && a->records && a->records == a->skipped)
		return fail_not_artifact(a, "none of its records is of a type memtrack knows");
	/* the trailer's last frame holds Meta: cut before it, the trailer reads as missing */
	if (a->memtrack && !a->seen_meta)
		return fail_reason(a, -EBADMSG, artifact__offset(a), "the trailer is missing: "
				   "no Meta record after the last complete zstd frame");
	return 0;
}

/* a record is read: the trailer's Meta has the format */
static int took_record(struct artifact *a)
{
	const struct artifact_record *r = &a->rec;

	if (r->type != ARTIFACT_META)
		return 1;
	a->seen_meta = true;
	if ((r->has & AR_HAS(AK_FORMAT)) && r->format > ARTIFACT_FORMAT)
		return fail_newer(a, r->format);
	return 1;
}

/*
 * A window of the file mapped for the walk over its frames: mapped a window
 * at a time, so that what it maps stays small whatever the file's length.
 */
#define WALK_WINDOW	(8u << 20)

struct walk_map {
	int fd;
	uint64_t size;			/* of the file */
	const unsigned char *p;		/* bytes [base, base + len) of the file */
	uint64_t base, len, window;
};

/* maps the window that starts at the page of off; 0 or -errno */
static int walk_map__at(struct walk_map *w, uint64_t off)
{
	uint64_t page = sysconf(_SC_PAGESIZE);
	void *p;

	if (w->p)
		munmap((void *)w->p, w->len);
	w->p = NULL;
	w->base = off / page * page;
	w->len = w->size - w->base < w->window ? w->size - w->base : w->window;
	p = mmap(NULL, w->len, PROT_READ, MAP_PRIVATE, w->fd, w->base);
	if (p == MAP_FAILED)
		return -errno;
	w->p = p;
	return 0;
}

/*
 * Calls fn for each whole frame of the file, from the first, with its
 * bytes mapped: a walk that reads the headers of frames and blocks, not
 * their data.  fn returns 0 to go on, anything else to stop the walk with
 * it.  Returns that, 0 after the last whole frame, -ENOMSG when the file
 * is cut or corrupt before its end, or -errno.
 */
typedef int frame_fn(const unsigned char *frame, size_t len, uint64_t off, void *arg);

static int walk_frames(int fd, uint64_t size, frame_fn *fn, void *arg)
{
	struct walk_map w = { .fd = fd, .size = size, .window = WALK_WINDOW };
	uint64_t off = 0;
	size_t n;
	int err;

	if (!size || size > SIZE_MAX)
		return -ENOMSG;
	err = walk_map__at(&w, 0);
	while (!err && off < size) {
		n = ZSTD_findFrameCompressedSize(w.p + (off - w.base), w.base + w.len - off);
		if (!ZSTD_isError(n) && n) {
			err = fn(w.p + (off - w.base), n, off, arg);
			off += n;
			if (!err && off < size && off >= w.base + w.len)
				err = walk_map__at(&w, off);
			continue;
		}
		if (w.base + w.len == size) {
			err = -ENOMSG;
			break;
		}
		/* the frame goes past the window: map from its start, wider if it started there */
		if (off - w.base < (uint64_t)sysconf(_SC_PAGESIZE))
			w.window *= 2;
		err = walk_map__at(&w, off);
	}
	if (w.p)
		munmap((void *)w.p, w.len);
	return err;
}

/* ---- a killed run's side records ----------------------------------------- */

#define SIDE_MAX	(256u << 20)	/* decompressed side records, all together */

/* appends the records of one side frame (one zstd frame) to a->side; 0 or -errno */
static int add_side_frame(struct artifact *a, const unsigned char *zf, size_t len)
{
	unsigned long long n = ZSTD_getFrameContentSize(zf, len);
	unsigned char *p;
	size_t got;

	if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN ||
	    n > SIDE_MAX - a->side_len)
		return -EBADMSG;
	p = realloc(a->side, a->side_len + n);
	if (!p)
		return -ENOMEM;
	a->side = p;
	got = ZSTD_decompress(p + a->side_len, n, zf, len);
	if (ZSTD_isError(got) || got != n)
		return -EBADMSG;
	a->side_len += n;
	return 0;
}

/* a side frame's records to a->side; the others pass */
static int add_side_records(const unsigned char *f, size_t frame_len, uint64_t off, void *arg)
{
	uint32_t magic, len;

	(void)off;
	if (frame_len < 8)
		return 0;
	memcpy(&magic, f, sizeof(magic));
	memcpy(&len, f + 4, sizeof(len));
	if (le32toh(magic) != ARTIFACT_SIDE_MAGIC || le32toh(len) != frame_len - 8)
		return 0;
	/* a broken one is left out; no memory ends the walk */
	return add_side_frame(arg, f + 8, frame_len - 8) == -ENOMEM ? -ENOMEM : 0;
}

/*
 * Every side record of the file, decompressed into a->side.  The walk ends
 * where the file is cut.
 */
static void read_side_records(struct artifact *a)
{
	a->side_read = true;
	walk_frames(a->fd, a->size, add_side_records, a);
	a->side_cur.p = a->side;
	a->side_cur.end = a->side + a->side_len;
}

/*
 * A memtrack artifact without its trailer (the run was killed): before the
 * error, the side records the run wrote as it went, so that frames are
 * named from what it had resolved.  Regular files only: a pipe is read once.
 */
static bool side_records_left(struct artifact *a)
{
	if (!a->memtrack || a->seen_meta || !a->size)
		return false;
	if (!a->side_read)
		read_side_records(a);
	return a->side_cur.p && a->side_cur.p < a->side_cur.end;
}

static int next_side_record(struct artifact *a, const struct artifact_record **recp)
{
	while (a->side_cur.p < a->side_cur.end) {
		int ret = record_decoder__read(&a->dec, &a->side_cur, &a->rec);

		if (ret != 0 && ret != RECORD_SKIPPED)
			break;		/* cut or bad: the rest of them is lost */
		a->records++;
		if (ret == 0 && (a->rec.type == ARTIFACT_FRAME || a->rec.type == ARTIFACT_STACK ||
				 a->rec.type == ARTIFACT_MODULE)) {
			*recp = &a->rec;
			return 1;
		}
		a->skipped++;
	}
	a->side_cur.p = a->side_cur.end;
	return a->error;
}

/*
 * The cursor over the decompressed bytes stays in a->cur from one call to
 * the next; z->out_pos is brought up to it only when the zstd reader needs
 * it (a load of out_pos and out_len together right after a store of
 * out_pos stalled every record).
 */
int artifact__next(struct artifact *a, const struct artifact_record **recp)
{
	struct zstd_reader *z = &a->z;
	const unsigned char *at;
	int ret;

	if (a->error)
		return side_records_left(a) ? next_side_record(a, recp) : a->error;
	for (;;) {
		at = a->cur.p;
		ret = at < a->cur.end ? record_decoder__read(&a->dec, &a->cur, &a->rec) : MP_MORE;
		if (ret == 0 || ret == RECORD_SKIPPED) {
			a->records++;
			if (ret == 0) {
				*recp = &a->rec;
				return took_record(a);
			}
			a->skipped++;
			continue;
		}
		/* the record at "at" is decoded again once more bytes are in */
		z->out_pos = at ? at - z->out : 0;
		if (ret == MP_BAD && !a->memtrack && !z->out_base && !z->out_pos)
			return fail_not_artifact(a, "its content is not msgpack records");
		if (ret == MP_BAD)
			return fail_reason(a, -EBADMSG, z->data_frame,
					   "%s 0x%02x at decompressed byte %" PRIu64, a->dec.bad,
					   a->dec.bad_byte, z->out_base + z->out_pos);
		ret = fill(a);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			ret = z->in_frame || z->out_pos < z->out_len ? fail_truncated(a) : at_end(a);
			if (ret && side_records_left(a))
				return next_side_record(a, recp);
			return ret;
		}
		a->cur.p = z->out + z->out_pos;
		a->cur.end = z->out + z->out_len;
	}
}

int artifact__open_fd(int fd, const char *name, struct artifact **ap)
{
	struct artifact *a = calloc(1, sizeof(*a));
	struct stat st;
	int err;

	if (!a)
		return -ENOMEM;
	a->fd = fd;
	a->name = strdup(name ? name : "");
	record_decoder__init(&a->dec);
	if (!a->name || record_decoder__reserve(&a->dec, OUT_INITIAL) ||
	    zstd_reader__init(&a->z, fd, OUT_INITIAL, ARTIFACT_MAX_RECORD)) {
		artifact__close(a);
		return -ENOMEM;
	}
	err = zstd_reader__peek(&a->z);
	if (err) {
		artifact__close(a);
		return err;
	}
	a->first_byte = a->z.zin.size ? a->z.in[0] : -1;
	read_header(a);
	/*
	 * Regular files only: a read() from a pipe can block for good, and
	 * artifact__close() waits for the thread.
	 */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		a->size = st.st_size;
		zstd_reader__start_thread(&a->z);
	}
	*ap = a;
	return 0;
}

static bool newer(const struct stat *a, const char *a_name, const struct stat *b,
		  const char *b_name)
{
	if (a->st_mtim.tv_sec != b->st_mtim.tv_sec)
		return a->st_mtim.tv_sec > b->st_mtim.tv_sec;
	if (a->st_mtim.tv_nsec != b->st_mtim.tv_nsec)
		return a->st_mtim.tv_nsec > b->st_mtim.tv_nsec;
	return strcmp(a_name, b_name) > 0;
}

/* the name of dir's newest artifact, malloc'd; NULL with *err set */
static char *newest_name(DIR *dp, int fd, int *err)
{
	size_t ext = strlen(ARTIFACT_FILE_EXT), len;
	struct stat st, best_st = { 0 };
	char *best = NULL;
	struct dirent *d;

	*err = -ENOENT;
	while ((d = readdir(dp))) {
		len = strlen(d->d_name);
		if (len <= ext || strcmp(d->d_name + len - ext, ARTIFACT_FILE_EXT) ||
		    fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (best && !newer(&st, d->d_name, &best_st, best))
			continue;
		free(best);
		best = strdup(d->d_name);
		best_st = st;
		if (!best) {
			*err = -ENOMEM;
			return NULL;
		}
	}
	return best;
}

int artifact__newest_in(const char *dir, char **out)
{
	size_t len = strlen(dir);
	char *name;
	DIR *dp;
	int fd, err;

	*out = NULL;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dp = fdopendir(fd);
	if (!dp) {
		err = -errno;
		close(fd);
		return err;
	}
	name = newest_name(dp, fd, &err);
	closedir(dp);
	if (!name)
		return err;
	if (asprintf(out, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name) < 0)
		*out = NULL;
	free(name);
	return *out ? 0 : -ENOMEM;
}

int artifact__open(const char *path, struct artifact **ap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	err = artifact__open_fd(fd, path, ap);
	if (err) {
		close(fd);
		return err;
	}
	(*ap)->own_fd = true;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

static int note_data_frame(const unsigned char *f, size_t len, uint64_t off, void *arg)
{
	uint32_t magic;

	(void)len;
	memcpy(&magic, f, sizeof(magic));	/* a frame has 4 bytes or more */
	if ((le32toh(magic) & ZSTD_MAGIC_SKIPPABLE_MASK) != ZSTD_MAGIC_SKIPPABLE_START)
		*(int64_t *)arg = off;
	return 0;
}

/* the offset of the last frame that is not a skippable one, or -errno */
static int64_t last_frame(int fd, uint64_t size)
{
	int64_t last = -ENOMSG;
	int err = walk_frames(fd, size, note_data_frame, &last);

	/* cut or corrupt where the file ends: no trailer to read first */
	return err ? err : last;
}

int artifact__open_trailer(const char *path, struct artifact **ap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	struct stat st;
	int64_t at;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ESPIPE;
	}
	at = last_frame(fd, st.st_size);
	if (at >= 0 && lseek(fd, at, SEEK_SET) < 0)
		at = -errno;
	err = at < 0 ? at : artifact__open_fd(fd, path, ap);
	if (err) {
		close(fd);
		return err;
	}
	(*ap)->own_fd = true;
	return 0;
}

void artifact__close(struct artifact *a)
{
	if (!a)
		return;
	zstd_reader__exit(&a->z);
	if (a->own_fd)
		close(a->fd);
	record_decoder__exit(&a->dec);
	free(a->side);
	free(a->name);
	free(a);
}

const char *artifact__strerror(const struct artifact *a)
{
	return a->error ? a->reason : "";
}

uint64_t artifact__error_offset(const struct artifact *a)
{
	return a->error_offset;
}

uint64_t artifact__records(const struct artifact *a)
{
	return a->records;
}

uint64_t artifact__skipped(const struct artifact *a)
{
	return a->skipped;
}

uint64_t artifact__offset(const struct artifact *a)
{
	return zstd_reader__offset(&a->z);
}

uint64_t artifact__size(const struct artifact *a)
{
	return a->size;
}

const char *artifact__name(const struct artifact *a)
{
	return a->name;
}
