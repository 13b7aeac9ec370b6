/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The processor's durable spool: spool.h for the API, include/spool_format.h
 * for the bytes, docs/spool.md for the guarantees.
 *
 * Write path. spool_append copies a frame into the newest of a FIFO of
 * SPOOL_WRITE_BUFFERS buffers; a buffer holds a contiguous range of one
 * segment. A full buffer is submitted at once as one io_uring write at its
 * segment offset. Buffers complete in any order but are released in FIFO
 * order, so the released prefix always ends at a known seq (written_seq)
 * and a known byte of a known segment (written_bytes).
 *
 * Group commit. An fsync round is submitted only once every write it must
 * cover has completed (written_seq >= commit_target): one
 * IORING_OP_FSYNC(DATASYNC) per segment that received writes since the
 * last round, plus one of the directory when a segment was created. Waiting
 * for the writes' completions orders the fsyncs after them without
 * IOSQE_IO_DRAIN, which would also hold back every write submitted after
 * the fsync. When every fsync of the round has succeeded, durable_seq
 * becomes the round's target. One round is in flight at a time.
 *
 * Invariants:
 *  - segs[] is a FIFO of segments in seq order (absolute ids, never reused);
 *    only the newest can be unsealed (written to). Segments with an open fd
 *    are the newest few: the one written, and sealed ones awaiting the fsync
 *    that covers their last bytes; older ones are closed and immutable.
 *  - a segment is deleted only when closed, not the newest, and every seq in
 *    it is <= durable_acked, the acked_seq of the ledger known durable.
 *  - spool_read never looks at a byte past a segment's durable_bytes, nor
 *    at a frame whose seq is past durable_seq.
 */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <zlib.h>

#include "batch.h"
#include "clock.h"
#include "config.h"
#include "uring.h"

#define SPOOL_MAX_SEGMENTS 4096u          /* tracked at once; beyond, the oldest is evicted like the quota */
#define SPOOL_MAX_OPEN_SEGMENTS 8u        /* written or awaiting their last fsync; beyond, append says -EAGAIN */
#define SPOOL_MAX_SCAN (1u << 20)         /* segment names recovery reads from the directory */
#define SPOOL_MAX_QUARANTINE 1024u        /* files kept in quarantine/; beyond, batches are counted, not kept */
#define SPOOL_MIN_SEGMENT_BYTES 4096u
#define SPOOL_MAX_FSYNC_NS 1000000000ULL
#define SPOOL_QUEUE_DEPTH 32u             /* > buffers + open segments + the directory */
#define SPOOL_WINDOW_BYTES (1u << 20)     /* read window of recovery and spool_read */
#define SEG_HDR ((uint64_t)sizeof(struct spool_seg_header))
#define SPOOL_MAX_SEQ (1ULL << 63) /* +1 per record never gets here: a seq beyond is corrupt */
#define SPOOL_LOG_EVERY_NS (10ULL * 1000000000ULL)
#define SEG_NAME_MAX 32
#define NO_TAG UINT64_MAX

_Static_assert(SEG_HDR % TR_FRAME_ALIGN == 0, "frames after the segment header stay 8-byte aligned");
_Static_assert(SPOOL_QUEUE_DEPTH > SPOOL_WRITE_BUFFERS + SPOOL_MAX_OPEN_SEGMENTS + 1, "room for every op in flight");

/*
 * The ring reaches files only through its fixed file table (uring.c): the
 * directory in slot 0, each open segment in a slot of its own.
 */
#define SLOT_DIR 0u
#define FILE_SLOTS (SPOOL_MAX_OPEN_SEGMENTS + 1u)
_Static_assert(FILE_SLOTS <= 32, "slots_used is a 32-bit mask");

/* io_uring user_data: the kind of operation in the top byte, its object below. */
enum { OP_WRITE = 1, OP_FSYNC = 2, OP_DIRSYNC = 3 };
#define UD(kind, v) (((uint64_t)(kind) << 56) | (v))
#define UD_KIND(ud) ((unsigned)((ud) >> 56))
#define UD_VALUE(ud) ((ud) & ((1ULL << 56) - 1))

enum buf_state { BUF_FREE, BUF_FILLING, BUF_INFLIGHT, BUF_DONE };

struct spool_buf {
	uint8_t *data;          /* SPOOL_WRITE_BUFFER_BYTES, owned */
	uint8_t *big;           /* one frame larger than data, for this write only; or NULL */
	size_t cap, used, done; /* done: bytes written so far (a short write resumes there) */
	uint64_t seg;           /* segment id */
	uint64_t file_off;      /* where data[0] goes in the segment */
	uint64_t last_seq;      /* last frame in it, or the seq before it when none */
	enum buf_state state;
};

struct spool_seg {
	uint64_t first_seq;
	uint64_t last_seq;      /* last frame appended or recovered; first_seq - 1 when none */
	uint64_t bytes;         /* header and every frame appended (some maybe still in buffers) */
	uint64_t written_bytes; /* prefix whose writes have completed */
	uint64_t durable_bytes; /* prefix covered by a completed fsync */
	uint64_t sync_bytes;    /* written_bytes when the round in flight was submitted */
	uint64_t created_ns;    /* CLOCK_MONOTONIC, for rotation by age */
	int fd;                 /* O_RDWR while written or awaiting its last fsync; -1 after */
	unsigned slot;          /* its index in the ring's fixed file table while fd >= 0 */
	bool sealed, dirty, in_round;
};

/* A cache of one range of one segment's durable bytes: segments only grow, so cached bytes stay true. */
struct window {
	uint8_t *buf;
	size_t cap, len;
	uint64_t tag; /* segment id, or NO_TAG */
	uint64_t off;
};

struct reader {
	int fd;
	uint64_t end; /* bytes that may be read */
	struct window *w;
};

/* A place in the stream of frames: the frame expected next, and where. */
struct pos {
	uint64_t seg, off, expect;
};

struct spool {
	char *dir;
	int dirfd, qdirfd, efd;
	struct io_uring ring;
	bool ring_ready;
	bool created; /* the directory was made by this open: a new spool, whose missing ledger is no loss */
	uint8_t host_id[16];
	uint64_t seg_bytes, seg_age_ns, fsync_ns, quota;

	struct spool_seg *segs; /* SPOOL_MAX_SEGMENTS, indexed by id % SPOOL_MAX_SEGMENTS */
	uint64_t seg_head, seg_count, bytes_total;
	unsigned open_segs;
	unsigned slots_used;    /* bit i: fixed file slot i holds a segment (slot SLOT_DIR: the directory) */

	struct spool_buf bufs[SPOOL_WRITE_BUFFERS];
	unsigned buf_head, buf_count, buf_inflight;

	uint64_t next_seq, written_seq, durable_seq;
	uint64_t commit_target, pending_since_ns, round_target;
	unsigned round_ops;
	bool rotate_pending, dir_dirty;
	int err; /* the first failed write or fsync: sticky, nothing more is durable */

	struct spool_ledger ledger; /* counters may be ahead of the disk; acked_seq is not */
	uint64_t durable_acked;
	bool ledger_dirty;

	struct window win;
	int rfd;
	uint64_t rfd_seg;
	struct pos cursor[2]; /* where the last read started and ended: the next read starts at one of them */
	bool cursor_valid[2];
	uint64_t corrupt_seen_upto; /* corrupt frames at or below this seq are already counted */
	uint64_t evict_logged_ns;
	unsigned quarantine_files;

	struct spool_stats st;
};

/* ---- small helpers ------------------------------------------------- */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void seg_name(char *out, uint64_t first_seq)
{
	snprintf(out, SEG_NAME_MAX, "%016" PRIx64 ".seg", first_seq);
}

/* 16 lowercase hex digits and ".seg", naming a seq >= 1: the only names recovery takes for segments. */
static bool parse_seg_name(const char *name, uint64_t *seq)
{
	uint64_t v = 0;

	if (strlen(name) != 20 || strcmp(name + 16, ".seg") != 0)
		return false;
	for (int i = 0; i < 16; i++) {
		char c = name[i];

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return false;
	}
	*seq = v;
	return v != 0;
}

static uint32_t crc_before(const void *p, size_t n)
{
	return (uint32_t)crc32(0L, (const Bytef *)p, (uInt)n);
}

static struct spool_seg *seg_at(const struct spool *s, uint64_t id)
{
	return &s->segs[id % SPOOL_MAX_SEGMENTS];
}

static struct spool_seg *seg_newest(const struct spool *s)
{
	return s->seg_count ? seg_at(s, s->seg_head + s->seg_count - 1) : NULL;
}

static struct spool_seg *seg_current(const struct spool *s)
{
	struct spool_seg *g = seg_newest(s);

	return g && !g->sealed ? g : NULL;
}

static void fail(struct spool *s, int err, const char *what, uint64_t seg_first)
{
	char name[SEG_NAME_MAX];

	if (s->err)
		return;
	s->err = err;
	seg_name(name, seg_first);
	fprintf(stderr,
		"<3>spool: %s of %s/%s failed: %s; records after seq %" PRIu64 " are not durable. "
		"Check the disk and free space under %s, then restart the processor (recovery keeps what is on disk)\n",
		what, s->dir, name, strerror(-err), s->durable_seq, s->dir);
}

/* ---- the ledger ---------------------------------------------------- */

static void ledger_init(struct spool_ledger *l)
{
	memset(l, 0, sizeof(*l));
	memcpy(l->magic, SPOOL_LEDGER_MAGIC, sizeof(l->magic));
	l->version = SPOOL_FORMAT_VERSION;
	l->len = sizeof(*l);
}

/* 0 and the ledger, or -1 when there is none or it is not one we wrote whole. */
static int ledger_load(struct spool *s, struct spool_ledger *l)
{
	uint8_t raw[sizeof(*l) + 1]; /* one byte more: a longer file is not a ledger either */
	ssize_t n;
	int fd = openat(s->dirfd, "ledger", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = pread(fd, raw, sizeof(raw), 0);
	close(fd);
	if (n != (ssize_t)sizeof(*l))
		return -1;
	memcpy(l, raw, sizeof(*l));
	if (memcmp(l->magic, SPOOL_LEDGER_MAGIC, sizeof(l->magic)) != 0 ||
	    l->version != SPOOL_FORMAT_VERSION || l->len != sizeof(*l) ||
	    l->crc != crc_before(l, offsetof(struct spool_ledger, crc)) || l->acked_seq >= SPOOL_MAX_SEQ)
		return -1;
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* name.tmp, fsync, rename over name, fsync of the directory: name is either the old file or the new, whole. */
static int replace_durably(int dirfd, const char *name, const void *p, size_t n)
{
	char tmp[PATH_MAX];
	int fd, rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, p, n);
	if (!rc && fdatasync(fd) < 0)
		rc = -errno;
	close(fd);
	if (!rc && renameat(dirfd, tmp, dirfd, name) < 0)
		rc = -errno;
	if (rc) {
		unlinkat(dirfd, tmp, 0);
		return rc;
	}
	return fsync(dirfd) < 0 ? -errno : 0;
}

/* Make next the ledger on disk; only then may anything it acknowledges be deleted. */
static int ledger_store(struct spool *s, struct spool_ledger *next)
{
	int rc;

	next->crc = crc_before(next, offsetof(struct spool_ledger, crc));
	rc = replace_durably(s->dirfd, "ledger", next, sizeof(*next));
	if (rc) {
		fprintf(stderr,
			"<3>spool: cannot write the ledger %s/ledger: %s; no acknowledged segment is deleted until it "
			"can be (check free space and permissions of %s)\n",
			s->dir, strerror(-rc), s->dir);
		return rc;
	}
	s->ledger = *next;
	s->durable_acked = next->acked_seq;
	s->ledger_dirty = false;
	return 0;
}

/* ---- the stream id ------------------------------------------------- */

#define STREAM_FILE_LEN 17 /* 16 hex digits and a newline */

/* 0 and the id in the file stream, or -1 when there is none or it is not one we wrote whole. */
static int stream_load(struct spool *s, uint64_t *id)
{
	char raw[STREAM_FILE_LEN + 1], *end;
	ssize_t n;
	int fd = openat(s->dirfd, "stream", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = pread(fd, raw, sizeof(raw), 0);
	close(fd);
	if (n != STREAM_FILE_LEN || raw[STREAM_FILE_LEN - 1] != '\n')
		return -1;
	raw[STREAM_FILE_LEN - 1] = 0;
	for (int i = 0; i < STREAM_FILE_LEN - 1; i++)
		if (!((raw[i] >= '0' && raw[i] <= '9') || (raw[i] >= 'a' && raw[i] <= 'f')))
			return -1;
	*id = strtoull(raw, &end, 16);
	return *id > INT64_MAX ? -1 : 0;
}

/*
 * The spool's stream id: the file's, else the ledger's, else a new one. Both kept: the file is
 * written when it is not the id, the ledger (dirty) at the end of recovery.
 */
static int stream_recover(struct spool *s)
{
	char line[STREAM_FILE_LEN + 1];
	uint64_t id = 0;
	int rc;

	if (stream_load(s, &id) == 0) {
		if (s->ledger.stream != id)
			s->ledger_dirty = true;
		s->ledger.stream = id;
		return 0;
	}
	if (s->st.ledger_missing) {
		do {
			if (getrandom(&id, sizeof(id), 0) != sizeof(id)) {
				rc = -errno;
				fprintf(stderr, "<3>spool: no random stream id for %s: %s\n", s->dir, strerror(-rc));
				return rc;
			}
			id &= INT64_MAX;
		} while (!id);
		if (!s->created)
			fprintf(stderr,
				"<4>spool: neither ledger nor stream id in %s: the records still on disk go to the lake "
				"as a new stream %016" PRIx64 " (any the lake had are stored again)\n",
				s->dir, id);
		s->ledger.stream = id;
		s->ledger_dirty = true;
	}
	snprintf(line, sizeof(line), "%016" PRIx64 "\n", s->ledger.stream);
	rc = replace_durably(s->dirfd, "stream", line, STREAM_FILE_LEN);
	if (rc)
		fprintf(stderr, "<3>spool: cannot write %s/stream: %s (check free space and permissions)\n", s->dir,
			strerror(-rc));
	return rc;
}

uint64_t spool_stream(const struct spool *s)
{
	return s->ledger.stream;
}

/* ---- deleting segments --------------------------------------------- */

static void forget_reads_of(struct spool *s, uint64_t id)
{
	if (s->rfd >= 0 && s->rfd_seg == id) {
		close(s->rfd);
		s->rfd = -1;
	}
	if (s->win.tag == id)
		s->win.tag = NO_TAG;
}

/* Drop the oldest segment from disk and from the FIFO: closed, and acknowledged by a durable ledger. */
static void delete_oldest(struct spool *s)
{
	struct spool_seg *g = seg_at(s, s->seg_head);
	char name[SEG_NAME_MAX];

	forget_reads_of(s, s->seg_head);
	seg_name(name, g->first_seq);
	/* A segment that cannot be unlinked is forgotten anyway: the ledger acknowledges it, so recovery deletes it. */
	if (unlinkat(s->dirfd, name, 0) < 0 && errno != ENOENT)
		fprintf(stderr, "<4>spool: cannot delete the acknowledged segment %s/%s: %s (delete it by hand)\n",
			s->dir, name, strerror(errno));
	s->bytes_total -= g->bytes;
	s->seg_head++;
	s->seg_count--;
}

/* Whole segments whose every record the durable ledger acknowledges; never the newest. */
/*
 * Delete segments whose every record the lake has. One with a durable
 * frame is always kept: a restarted processor learns from the newest
 * frames where in the collector's ring it had got to (spool_last_source),
 * and a new segment holds nothing until its first write is fsynced - with
 * only that left after a kill -9 it would read the ring's unreleased
 * records again and spool them twice.
 */
static void delete_acked(struct spool *s)
{
	while (s->seg_count > 1) {
		struct spool_seg *g = seg_at(s, s->seg_head);

		if (g->fd >= 0 || g->last_seq > s->durable_acked || seg_at(s, s->seg_head + 1)->durable_bytes <= SEG_HDR)
			return;
		delete_oldest(s);
	}
}

/* ---- the write path ------------------------------------------------ */

static struct io_uring_sqe *get_sqe(struct spool *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);

	if (!sqe) {
		io_uring_submit(&s->ring);
		sqe = io_uring_get_sqe(&s->ring);
	}
	return sqe;
}

static void submit(struct spool *s)
{
	int rc = io_uring_submit(&s->ring);

	if (rc < 0)
		fail(s, rc, "io_uring submission", seg_newest(s) ? seg_newest(s)->first_seq : 0);
}

static void write_rest(struct spool *s, unsigned slot)
{
	struct spool_buf *b = &s->bufs[slot];
	struct io_uring_sqe *sqe = get_sqe(s);
	uint8_t *p = b->big ? b->big : b->data;

	if (!sqe) {
		fail(s, -EBUSY, "write submission", seg_at(s, b->seg)->first_seq);
		return;
	}
	io_uring_prep_write(sqe, (int)seg_at(s, b->seg)->slot, p + b->done, (unsigned)(b->used - b->done),
			    b->file_off + b->done);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	io_uring_sqe_set_data64(sqe, UD(OP_WRITE, slot));
	s->st.writes++;
	submit(s);
}

static struct spool_buf *buf_filling(struct spool *s)
{
	struct spool_buf *b;

	if (!s->buf_count)
		return NULL;
	b = &s->bufs[(s->buf_head + s->buf_count - 1) % SPOOL_WRITE_BUFFERS];
	return b->state == BUF_FILLING ? b : NULL;
}

/* Hand the filling buffer to the kernel. */
static void seal_filling(struct spool *s)
{
	struct spool_buf *b = buf_filling(s);

	if (!b)
		return;
	b->state = BUF_INFLIGHT;
	s->buf_inflight++;
	write_rest(s, (unsigned)(b - s->bufs));
}

/* A buffer for seg with room for size bytes: the filling one, or a fresh one; -EAGAIN when all are in flight. */
static int buf_for(struct spool *s, uint64_t seg, uint64_t size, struct spool_buf **out)
{
	struct spool_buf *b = buf_filling(s);

	if (b && b->seg == seg && !b->big && b->used + size <= b->cap) {
		*out = b;
		return 0;
	}
	seal_filling(s);
	if (s->buf_count == SPOOL_WRITE_BUFFERS)
		return -EAGAIN;
	b = &s->bufs[(s->buf_head + s->buf_count) % SPOOL_WRITE_BUFFERS];
	b->big = NULL;
	b->cap = SPOOL_WRITE_BUFFER_BYTES;
	if (size > SPOOL_WRITE_BUFFER_BYTES) {
		/* Rare (reports): one allocation for the one write, freed when it completes. */
		b->big = malloc(size);
		if (!b->big)
			return -ENOMEM;
		b->cap = size;
	}
	b->used = b->done = 0;
	b->seg = seg;
	b->file_off = seg_at(s, seg)->bytes;
	b->last_seq = s->next_seq - 1;
	b->state = BUF_FILLING;
	s->buf_count++;
	*out = b;
	return 0;
}

static void put_header(struct spool *s, struct spool_buf *b, struct spool_seg *g)
{
	struct spool_seg_header *h = (struct spool_seg_header *)(void *)(b->data + b->used);

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, SPOOL_SEG_MAGIC, sizeof(h->magic));
	h->version = SPOOL_FORMAT_VERSION;
	h->header_len = sizeof(*h);
	h->first_seq = g->first_seq;
	h->created_ns = real_ns();
	memcpy(h->host_id, s->host_id, sizeof(h->host_id));
	h->crc = crc_before(h, offsetof(struct spool_seg_header, crc));
	b->used += sizeof(*h);
	g->bytes += sizeof(*h);
	s->bytes_total += sizeof(*h);
}

static bool needs_rotation(const struct spool *s, uint64_t size)
{
	const struct spool_seg *g = seg_current(s);

	if (!g || s->rotate_pending)
		return true;
	/* A frame never spans two segments; a frame larger than a segment gets one of its own. */
	return g->last_seq >= g->first_seq && g->bytes + size > s->seg_bytes;
}

/* Put fd in a free slot of the ring's file table: the slot, or -errno. */
static int slot_get(struct spool *s, int fd)
{
	for (unsigned i = SLOT_DIR + 1; i < FILE_SLOTS; i++) {
		int rc;

		if (s->slots_used & (1u << i))
			continue;
		rc = io_uring_register_files_update(&s->ring, i, &fd, 1);
		if (rc < 0)
			return rc;
		s->slots_used |= 1u << i;
		return (int)i;
	}
	return -EMFILE; /* cannot happen: open_segs < SPOOL_MAX_OPEN_SEGMENTS */
}

/* Empty a slot, so the ring holds no reference to a closed segment. */
static void slot_put(struct spool *s, unsigned slot)
{
	int none = -1;

	if (io_uring_register_files_update(&s->ring, slot, &none, 1) < 0)
		fprintf(stderr, "<4>spool: cannot clear io_uring file slot %u\n", slot);
	s->slots_used &= ~(1u << slot);
}

/* Seal the current segment and start the next, named by next_seq, with its header in a fresh buffer. */
static int rotate(struct spool *s)
{
	struct spool_seg *cur = seg_current(s), *g;
	struct spool_buf *b;
	char name[SEG_NAME_MAX];
	int fd, slot;

	if (s->buf_count == SPOOL_WRITE_BUFFERS || s->open_segs >= SPOOL_MAX_OPEN_SEGMENTS ||
	    s->seg_count >= SPOOL_MAX_SEGMENTS)
		return -EAGAIN;
	seg_name(name, s->next_seq);
	fd = openat(s->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		int err = -errno;

		fprintf(stderr, "<3>spool: cannot create the segment %s/%s: %s (check free space and permissions of %s)\n",
			s->dir, name, strerror(-err), s->dir);
		return err;
	}
	slot = slot_get(s, fd);
	if (slot < 0) {
		fprintf(stderr, "<3>spool: cannot give the segment %s/%s to io_uring: %s\n", s->dir, name,
			strerror(-slot));
		unlinkat(s->dirfd, name, 0);
		close(fd);
		return slot;
	}
	if (cur) {
		seal_filling(s);
		cur->sealed = true;
		/* Fsync the sealed segment soon, so that its fd can be closed. */
		s->commit_target = max_u64(s->commit_target, cur->last_seq);
	}
	g = seg_at(s, s->seg_head + s->seg_count);
	memset(g, 0, sizeof(*g));
	g->first_seq = s->next_seq;
	g->last_seq = s->next_seq - 1;
	g->created_ns = mono_ns();
	g->fd = fd;
	g->slot = (unsigned)slot;
	s->seg_count++;
	s->open_segs++;
	s->dir_dirty = true;
	s->rotate_pending = false;
	if (buf_for(s, s->seg_head + s->seg_count - 1, SEG_HDR, &b) != 0)
		return -EAGAIN; /* cannot happen: a buffer was free above */
	put_header(s, b, g);
	return 0;
}

static void put_frame(struct spool *s, struct spool_buf *b, const struct tr_frame *src, const void *payload,
		      uint64_t size)
{
	uint8_t *p = (b->big ? b->big : b->data) + b->used;
	struct tr_frame *f = (struct tr_frame *)(void *)p;
	struct spool_seg *g = seg_at(s, b->seg);

	uint32_t len = src->len;

	*f = *src;
	f->seq = s->next_seq;
	if (len)
		memcpy(p + TR_FRAME_HDR, payload, len);
	memset(p + TR_FRAME_HDR + len, 0, size - TR_FRAME_HDR - len);
	f->crc = frame_crc(f, p + TR_FRAME_HDR);
	b->used += size;
	b->last_seq = s->next_seq;
	g->bytes += size;
	g->last_seq = s->next_seq;
	s->bytes_total += size;
	s->next_seq++;
	s->st.records_appended++;
	s->st.bytes_appended += size;
	if (b->used == b->cap)
		seal_filling(s);
}

int spool_append(struct spool *s, uint16_t type, uint16_t flags, uint32_t src_gen, uint64_t src_pos,
		 const void *payload, uint32_t len, uint64_t *seq)
{
	const struct tr_frame src = { .src_pos = src_pos, .src_gen = src_gen, .type = type, .flags = flags, .len = len };
	uint64_t size = TR_FRAME_SIZE(len);
	struct spool_buf *b;
	int rc;

	if (s->err)
		return s->err;
	if (len > TR_FRAME_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (needs_rotation(s, size)) {
		rc = rotate(s);
		if (rc)
			goto busy;
	}
	rc = buf_for(s, s->seg_head + s->seg_count - 1, size, &b);
	if (rc)
		goto busy;
	if (seq)
		*seq = s->next_seq;
	put_frame(s, b, &src, payload, size);
	return 0;
busy:
	if (rc == -EAGAIN)
		s->st.append_busy++;
	return rc;
}

/* ---- completions ---------------------------------------------------- */

/* Release completed buffers in FIFO order: what they held is written, up to a known seq. */
static void release_done(struct spool *s)
{
	while (s->buf_count) {
		struct spool_buf *b = &s->bufs[s->buf_head];
		struct spool_seg *g;

		if (b->state != BUF_DONE)
			return;
		g = seg_at(s, b->seg);
		g->written_bytes = b->file_off + b->used;
		g->dirty = true;
		s->written_seq = max_u64(s->written_seq, b->last_seq);
		free(b->big);
		b->big = NULL;
		b->state = BUF_FREE;
		s->buf_head = (s->buf_head + 1) % SPOOL_WRITE_BUFFERS;
		s->buf_count--;
	}
}

static void write_done(struct spool *s, unsigned slot, int res)
{
	struct spool_buf *b;

	if (slot >= SPOOL_WRITE_BUFFERS || s->bufs[slot].state != BUF_INFLIGHT)
		return;
	b = &s->bufs[slot];
	if (res == -EAGAIN || res == -EINTR) {
		write_rest(s, slot);
		return;
	}
	if (res <= 0) {
		s->buf_inflight--;
		b->state = BUF_DONE; /* never released: written_seq stops before it */
		fail(s, res < 0 ? res : -EIO, "a write", seg_at(s, b->seg)->first_seq);
		return;
	}
	b->done += (size_t)res;
	if (b->done < b->used) {
		write_rest(s, slot); /* a short write: the rest, where it stopped */
		return;
	}
	s->buf_inflight--;
	b->state = BUF_DONE;
	if (!s->err)
		release_done(s);
}

/* Sealed segments whose every byte is durable: close them (their fd bounds open_segs). */
static void close_finished(struct spool *s)
{
	for (uint64_t i = s->seg_count; i > 0; i--) {
		struct spool_seg *g = seg_at(s, s->seg_head + i - 1);

		if (g->fd < 0)
			return;
		if (g->sealed && !g->in_round && g->durable_bytes == g->bytes) {
			slot_put(s, g->slot);
			close(g->fd);
			g->fd = -1;
			s->open_segs--;
		}
	}
}

static void round_done(struct spool *s)
{
	for (uint64_t i = s->seg_count; i > 0; i--) {
		struct spool_seg *g = seg_at(s, s->seg_head + i - 1);

		if (g->fd < 0)
			break;
		if (g->in_round) {
			g->durable_bytes = max_u64(g->durable_bytes, g->sync_bytes);
			g->in_round = false;
		}
	}
	s->durable_seq = max_u64(s->durable_seq, s->round_target);
	close_finished(s);
}

static void fsync_done(struct spool *s, uint64_t ud, int res)
{
	if (res < 0) {
		uint64_t first = UD_KIND(ud) == OP_FSYNC ? seg_at(s, UD_VALUE(ud))->first_seq : 0;

		/* After a failed fsync the page cache may have dropped the data: nothing more is claimed durable. */
		fail(s, res, UD_KIND(ud) == OP_FSYNC ? "an fsync" : "an fsync of the directory", first);
	}
	if (s->round_ops && --s->round_ops == 0 && !s->err)
		round_done(s);
}

static void reap(struct spool *s)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(&s->ring, head, cqe) {
		uint64_t ud = io_uring_cqe_get_data64(cqe);

		if (UD_KIND(ud) == OP_WRITE)
			write_done(s, (unsigned)UD_VALUE(ud), cqe->res);
		else
			fsync_done(s, ud, cqe->res);
		n++;
	}
	io_uring_cq_advance(&s->ring, n);
}

/* Block until at least one completion arrives, then handle them all. */
static int wait_some(struct spool *s)
{
	struct io_uring_cqe *cqe;
	int rc;

	do
		rc = io_uring_wait_cqe(&s->ring, &cqe);
	while (rc == -EINTR);
	if (rc < 0)
		return rc;
	reap(s);
	return 0;
}

static bool prep_fsync(struct spool *s, unsigned slot, unsigned flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = get_sqe(s);

	if (!sqe)
		return false;
	io_uring_prep_fsync(sqe, (int)slot, flags);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	io_uring_sqe_set_data64(sqe, ud);
	s->round_ops++;
	s->st.fsyncs++;
	return true;
}

/* One fsync per segment written since the last round, one of the directory if a segment was created. */
static void start_round(struct spool *s)
{
	if (s->round_ops || s->err)
		return;
	s->round_target = s->written_seq;
	for (uint64_t i = s->seg_count; i > 0; i--) {
		uint64_t id = s->seg_head + i - 1;
		struct spool_seg *g = seg_at(s, id);

		if (g->fd < 0)
			break;
		if (!g->dirty)
			continue;
		if (!prep_fsync(s, g->slot, IORING_FSYNC_DATASYNC, UD(OP_FSYNC, id))) {
			fail(s, -EBUSY, "fsync submission", g->first_seq);
			return;
		}
		g->dirty = false;
		g->in_round = true;
		g->sync_bytes = g->written_bytes;
	}
	/* The segments created since the last round exist after a crash only once their directory is synced. */
	if (s->dir_dirty) {
		if (!prep_fsync(s, SLOT_DIR, 0, UD(OP_DIRSYNC, 0))) {
			fail(s, -EBUSY, "fsync submission", 0);
			return;
		}
		s->dir_dirty = false;
	}
	if (!s->round_ops) {
		round_done(s);
		return;
	}
	submit(s);
}

/* Group commit: start the fsync covering commit_target once every write under it has completed. */
static void commit_tick(struct spool *s, uint64_t now_ns)
{
	uint64_t appended = s->next_seq - 1;

	if (appended > max_u64(s->commit_target, s->durable_seq) && !s->pending_since_ns)
		s->pending_since_ns = now_ns ? now_ns : 1;
	if (s->pending_since_ns && now_ns >= s->pending_since_ns + s->fsync_ns) {
		s->commit_target = appended;
		s->pending_since_ns = 0;
		seal_filling(s);
	}
	if (s->commit_target > s->durable_seq && s->written_seq >= s->commit_target)
		start_round(s);
}

/* ---- the quota ------------------------------------------------------ */

/*
 * Oldest segments first, never the newest nor one still open, until the
 * segments fit the quota and leave a slot free in segs[]. Unacknowledged
 * records among them are counted as evicted, and the ledger that
 * acknowledges them is made durable before any is deleted.
 */
static int enforce_quota(struct spool *s)
{
	struct spool_ledger next = s->ledger;
	uint64_t bytes = s->bytes_total, n = 0;

	for (uint64_t id = s->seg_head; id + 1 < s->seg_head + s->seg_count; id++) {
		struct spool_seg *g = seg_at(s, id);

		if (bytes <= s->quota && s->seg_count - n < SPOOL_MAX_SEGMENTS - 1)
			break;
		if (g->fd >= 0)
			break;
		if (g->last_seq > next.acked_seq) {
			next.evicted_records += g->last_seq - max_u64(next.acked_seq + 1, g->first_seq) + 1;
			next.evicted_bytes += g->bytes;
			next.acked_seq = g->last_seq;
		}
		bytes -= g->bytes;
		n++;
	}
	if (bytes > s->quota && seg_current(s) && s->seg_count - n == 1)
		s->rotate_pending = true; /* the current segment alone is over: seal it, so that it can go */
	if (!n)
		return 0;
	if (next.evicted_records != s->ledger.evicted_records) {
		int rc = ledger_store(s, &next);

		if (rc)
			return rc;
		/* A spool that stays full evicts at every segment: say so once every SPOOL_LOG_EVERY_NS. */
		if (!s->evict_logged_ns || mono_ns() >= s->evict_logged_ns + SPOOL_LOG_EVERY_NS) {
			s->evict_logged_ns = mono_ns();
			fprintf(stderr,
				"<4>spool: over its quota of %" PRIu64 " bytes: evicted unsent records up to seq %" PRIu64
				" (%" PRIu64 " evicted so far); raise the quota or check the upload\n",
				s->quota, next.acked_seq, next.evicted_records);
		}
	}
	while (n--)
		delete_oldest(s);
	return 0;
}

int spool_poll(struct spool *s, uint64_t now_ns)
{
	struct spool_seg *cur;
	uint64_t v;

	/* Reset the eventfd: the caller's poll() must not spin on completions already handled. */
	while (read(s->efd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
	reap(s);
	if (s->err)
		return s->err;
	cur = seg_current(s);
	if (cur && cur->last_seq >= cur->first_seq && now_ns >= cur->created_ns + s->seg_age_ns)
		s->rotate_pending = true;
	commit_tick(s, now_ns);
	if (s->err)
		return s->err;
	delete_acked(s);
	return enforce_quota(s);
}

int spool_sync(struct spool *s)
{
	if (s->err)
		return s->err;
	seal_filling(s);
	s->commit_target = s->next_seq - 1;
	s->pending_since_ns = 0;
	while (!s->err && s->durable_seq < s->commit_target) {
		if (!s->round_ops && s->written_seq >= s->commit_target) {
			start_round(s);
			continue;
		}
		if (!s->round_ops && !s->buf_inflight)
			return -EIO; /* nothing in flight could ever complete the commit: a bug, not a hang */
		if (wait_some(s) < 0)
			return -EIO;
	}
	close_finished(s);
	return s->err;
}

int spool_event_fd(const struct spool *s)
{
	return s->efd;
}

uint64_t spool_durable_seq(const struct spool *s)
{
	return s->durable_seq;
}

/* ---- reading frames back ------------------------------------------- */

static void reader_init(struct reader *r, struct window *w, int fd, uint64_t end, uint64_t tag)
{
	r->fd = fd;
	r->end = end;
	r->w = w;
	if (w->tag != tag || tag == NO_TAG) {
		w->tag = tag;
		w->len = 0;
	}
}

/* Bytes [off, off + n) of the file, n at most the window, off + n at most r->end. */
static int window_get(struct reader *r, uint64_t off, size_t n, const uint8_t **p)
{
	struct window *w = r->w;
	size_t want, got = 0;
	int err = -EIO; /* shorter than it was: someone truncated it */

	if (off >= w->off && off + n <= w->off + w->len) {
		*p = w->buf + (off - w->off);
		return 0;
	}
	want = (size_t)min_u64(w->cap, r->end - off);
	while (got < want) {
		ssize_t k = pread(r->fd, w->buf + got, want - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			err = -errno;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	w->off = off;
	w->len = got;
	if (got < n) {
		w->len = 0;
		return err;
	}
	*p = w->buf;
	return 0;
}

/* The crc of a frame whose header is f; payloads larger than the window are summed in pieces. */
static int frame_crc_ok(struct reader *r, uint64_t off, const struct tr_frame *f)
{
	const uint8_t *p;
	uLong crc;
	int rc;

	if (f->len <= r->w->cap) {
		rc = window_get(r, off + TR_FRAME_HDR, f->len, &p);
		return rc ? rc : frame_crc(f, p) == f->crc;
	}
	/* The same sum as frame_crc (frame.h: header span, then payload), over pieces of the window. */
	crc = crc32(0L, (const Bytef *)f, TR_FRAME_CRC_SPAN);
	for (uint32_t done = 0; done < f->len;) {
		size_t n = (size_t)min_u64(r->w->cap, f->len - done);

		rc = window_get(r, off + TR_FRAME_HDR + done, n, &p);
		if (rc)
			return rc;
		crc = crc32(crc, p, (uInt)n);
		done += (uint32_t)n;
	}
	return (uint32_t)crc == f->crc;
}

/* 1 and *f when a whole, good frame with lo <= seq <= hi starts at off; 0 when not; -errno. */
static int frame_at(struct reader *r, uint64_t off, uint64_t lo, uint64_t hi, struct tr_frame *f)
{
	const uint8_t *p;
	int rc;

	if (off > r->end || r->end - off < TR_FRAME_HDR)
		return 0;
	rc = window_get(r, off, TR_FRAME_HDR, &p);
	if (rc)
		return rc;
	memcpy(f, p, sizeof(*f));
	if (f->seq < lo || f->seq > hi || f->len > TR_FRAME_MAX_PAYLOAD ||
	    TR_FRAME_SIZE(f->len) > r->end - off)
		return 0;
	return frame_crc_ok(r, off, f);
}

/*
 * After a bad frame at off where seq expect was due: the next good frame,
 * its seq in [expect, hi]. Each frame skipped took at least a header's
 * bytes, which bounds how far its seq can have moved on.
 */
static int resync(struct reader *r, uint64_t off, uint64_t expect, uint64_t hi, uint64_t *found, struct tr_frame *f)
{
	for (uint64_t p = off + TR_FRAME_ALIGN; p < r->end && r->end - p >= TR_FRAME_HDR; p += TR_FRAME_ALIGN) {
		uint64_t most = min_u64(hi, expect + (p - off) / TR_FRAME_HDR);
		int rc = frame_at(r, p, expect, most, f);

		if (rc < 0)
			return rc;
		if (rc == 1) {
			*found = p;
			return 1;
		}
	}
	return 0;
}

static int reader_for(struct spool *s, uint64_t id, struct reader *r)
{
	struct spool_seg *g = seg_at(s, id);
	int fd = g->fd;

	if (fd < 0 && s->rfd >= 0 && s->rfd_seg == id)
		fd = s->rfd;
	if (fd < 0) {
		char name[SEG_NAME_MAX];

		if (s->rfd >= 0)
			close(s->rfd);
		seg_name(name, g->first_seq);
		s->rfd = openat(s->dirfd, name, O_RDONLY | O_CLOEXEC);
		if (s->rfd < 0) {
			int err = -errno;

			fprintf(stderr, "<3>spool: cannot read the segment %s/%s: %s\n", s->dir, name, strerror(-err));
			return err;
		}
		s->rfd_seg = id;
		fd = s->rfd;
	}
	reader_init(r, &s->win, fd, g->durable_bytes, id);
	return 0;
}

/* Frames from..to-1 could not be read: count those recovery or an earlier read did not already count. */
static void count_corrupt(struct spool *s, uint64_t from, uint64_t to)
{
	uint64_t lo = max_u64(from, s->corrupt_seen_upto + 1);

	if (to <= lo)
		return;
	s->ledger.corrupt_frames += to - lo;
	s->corrupt_seen_upto = to - 1;
	s->ledger_dirty = true;
	fprintf(stderr, "<4>spool: %" PRIu64 " corrupt frames from seq %" PRIu64 " skipped (bad crc under %s)\n",
		to - lo, lo, s->dir);
}

/* The next good durable frame at or after p (p moves to it), crossing segments; 1, 0 at the end, -errno. */
static int walk_next(struct spool *s, struct pos *p, struct tr_frame *f)
{
	for (;;) {
		struct spool_seg *g;
		struct reader r;
		uint64_t found, hi;
		int rc;

		if (p->seg < s->seg_head || p->seg >= s->seg_head + s->seg_count || p->expect > s->durable_seq)
			return 0;
		g = seg_at(s, p->seg);
		if (p->off < g->durable_bytes && p->expect <= g->last_seq) {
			rc = reader_for(s, p->seg, &r);
			if (rc)
				return rc;
			rc = frame_at(&r, p->off, p->expect, p->expect, f);
			if (rc)
				return rc;
			hi = min_u64(g->last_seq, s->durable_seq);
			rc = resync(&r, p->off, p->expect, hi, &found, f);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				count_corrupt(s, p->expect, f->seq);
				p->off = found;
				p->expect = f->seq;
				return 1;
			}
			count_corrupt(s, p->expect, hi + 1);
		}
		if (p->seg + 1 >= s->seg_head + s->seg_count)
			return 0; /* the newest: more may become durable later, right here */
		if (p->expect <= g->last_seq && g->durable_bytes < g->bytes)
			return 0; /* not all durable yet */
		p->seg++;
		p->off = SEG_HDR;
		p->expect = seg_at(s, p->seg)->first_seq;
	}
}

/* The segment holding seq, or the first one after it. */
static uint64_t seg_find(const struct spool *s, uint64_t seq)
{
	uint64_t lo = s->seg_head, hi = s->seg_head + s->seg_count;

	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (seg_at(s, mid)->first_seq <= seq)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Position p at the first good durable frame with seq >= want. */
static int seek(struct spool *s, uint64_t want, struct pos *p, struct tr_frame *f)
{
	int rc;

	for (int i = 0; i < 2; i++) {
		if (s->cursor_valid[i] && s->cursor[i].expect == want && s->cursor[i].seg >= s->seg_head) {
			*p = s->cursor[i];
			return walk_next(s, p, f);
		}
	}
	p->seg = seg_find(s, want);
	p->off = SEG_HDR;
	p->expect = seg_at(s, p->seg)->first_seq;
	while ((rc = walk_next(s, p, f)) == 1 && f->seq < want) {
		p->off += TR_FRAME_SIZE(f->len);
		p->expect = f->seq + 1;
	}
	return rc;
}

static int copy_frame(struct spool *s, const struct pos *p, uint64_t size, uint8_t *dst)
{
	struct reader r;
	int rc = reader_for(s, p->seg, &r);

	for (uint64_t done = 0; !rc && done < size;) {
		size_t n = (size_t)min_u64(r.w->cap, size - done);
		const uint8_t *src;

		rc = window_get(&r, p->off + done, n, &src);
		if (!rc)
			memcpy(dst + done, src, n);
		done += n;
	}
	return rc;
}

int spool_read(struct spool *s, uint64_t from_seq, uint32_t max_records, void *buf, size_t bufsize,
	       struct spool_span *span)
{
	struct tr_frame f;
	struct pos p;
	int rc;

	memset(span, 0, sizeof(*span));
	if (!max_records || from_seq >= s->durable_seq || !s->seg_count)
		return 0;
	rc = seek(s, from_seq + 1, &p, &f);
	s->cursor[0] = p;
	s->cursor_valid[0] = rc == 1;
	while (rc == 1) {
		uint64_t size = TR_FRAME_SIZE(f.len);

		if (size > bufsize - span->bytes) {
			if (!span->nrecords)
				return -ENOBUFS;
			break;
		}
		rc = copy_frame(s, &p, size, (uint8_t *)buf + span->bytes);
		if (rc)
			return rc;
		if (!span->nrecords)
			span->first_seq = f.seq;
		span->last_seq = f.seq;
		span->nrecords++;
		span->bytes += size;
		p.off += size;
		p.expect = f.seq + 1;
		if (span->nrecords == max_records)
			break;
		rc = walk_next(s, &p, &f);
	}
	if (rc < 0)
		return rc;
	s->cursor[1] = p;
	s->cursor_valid[1] = true;
	return span->nrecords ? 1 : 0;
}

/*
 * Where the newest kernel record came from. Read back through spool_read
 * (so only checked, durable frames count), from SPOOL_SOURCE_LOOKBACK
 * records before the end; called once, after recovery, when everything on
 * disk is durable.
 */
int spool_last_source(struct spool *s, uint32_t *src_gen, uint64_t *src_pos)
{
	size_t cap = 1u << 20;
	uint64_t from = s->durable_seq > SPOOL_SOURCE_LOOKBACK ? s->durable_seq - SPOOL_SOURCE_LOOKBACK : 0;
	uint8_t *buf = malloc(cap), *bigger;
	struct spool_span span;
	int rc, found = 0;

	if (!buf)
		return -ENOMEM;
	while ((rc = spool_read(s, from, 4096, buf, cap, &span)) != 0) {
		if (rc == -ENOBUFS && cap < TR_FRAME_SIZE(TR_FRAME_MAX_PAYLOAD)) { /* one large frame: room for it */
			cap = TR_FRAME_SIZE(TR_FRAME_MAX_PAYLOAD);
			bigger = realloc(buf, cap);
			if (!bigger)
				break;
			buf = bigger;
			continue;
		}
		if (rc < 0)
			break;
		for (size_t off = 0; off < span.bytes;) {
			struct tr_frame f;

			memcpy(&f, buf + off, sizeof(f));
			if (f.type < 64) { /* a kernel record (records.h); the processor's own are 64.. (lake.h) */
				*src_gen = f.src_gen;
				*src_pos = f.src_pos;
				found = 1;
			}
			off += TR_FRAME_SIZE(f.len);
		}
		from = span.last_seq;
	}
	free(buf);
	if (rc == -ENOBUFS) /* no memory for a large frame */
		rc = -ENOMEM;
	return rc < 0 ? rc : found;
}

/* ---- acknowledging ------------------------------------------------- */

int spool_ack(struct spool *s, uint64_t upto_seq, uint64_t batch_seq, const uint8_t hash[32])
{
	struct spool_ledger next = s->ledger;
	int rc;

	if (upto_seq > s->durable_seq) {
		fprintf(stderr, "<3>spool: ack up to seq %" PRIu64 " but only %" PRIu64 " is durable: ignored\n", upto_seq,
			s->durable_seq);
		return -EINVAL;
	}
	next.acked_seq = max_u64(next.acked_seq, upto_seq);
	/* The chain moves only with a hash: without one, the next batch still links to the last known. */
	if (hash) {
		next.batch_seq = batch_seq;
		memcpy(next.prev_hash, hash, sizeof(next.prev_hash));
	}
	rc = ledger_store(s, &next);
	if (rc)
		return rc;
	delete_acked(s);
	return 0;
}

int spool_quarantine(struct spool *s, const void *batch, size_t len, uint64_t batch_seq, uint64_t first_seq,
		     uint64_t last_seq, uint32_t nrecords)
{
	struct spool_ledger next = s->ledger;
	char name[96];
	int rc;

	if (last_seq > s->durable_seq || first_seq > last_seq)
		return -EINVAL;
	snprintf(name, sizeof(name), "%" PRIu64 "-%" PRIu64 "-%" PRIu64 ".batch", batch_seq, first_seq, last_seq);
	if (s->quarantine_files >= SPOOL_MAX_QUARANTINE) {
		s->st.quarantine_not_kept++;
		fprintf(stderr,
			"<4>spool: %s/quarantine holds %u batches already: refused batch %s counted but not kept "
			"(read and remove the old ones)\n",
			s->dir, s->quarantine_files, name);
	} else {
		rc = replace_durably(s->qdirfd, name, batch, len);
		if (rc) {
			fprintf(stderr,
				"<3>spool: cannot keep the refused batch in %s/quarantine/%s: %s; it stays unacknowledged "
				"(free space under %s)\n",
				s->dir, name, strerror(-rc), s->dir);
			return rc;
		}
		s->quarantine_files++;
	}
	next.acked_seq = max_u64(next.acked_seq, last_seq);
	next.quarantined_batches++;
	next.quarantined_records += nrecords;
	rc = ledger_store(s, &next);
	if (rc)
		return rc;
	delete_acked(s);
	return 0;
}

void spool_get_stats(const struct spool *s, struct spool_stats *st)
{
	*st = s->st;
	st->next_seq = s->next_seq;
	st->durable_seq = s->durable_seq;
	st->acked_seq = s->ledger.acked_seq;
	st->segments = s->seg_count;
	st->bytes_on_disk = s->bytes_total;
	st->ledger = s->ledger;
}

/* ---- recovery ------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The first seqs named by segment files, sorted; at most SPOOL_MAX_SCAN of them. */
static int list_segments(struct spool *s, uint64_t **out, size_t *n)
{
	size_t cap = 0, skipped = 0;
	uint64_t *v = NULL, seq;
	struct dirent *e;
	int fd = dup(s->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	*n = 0;
	while ((e = readdir(d))) {
		if (!parse_seg_name(e->d_name, &seq))
			continue;
		if (*n == SPOOL_MAX_SCAN) {
			skipped++;
			continue;
		}
		if (*n == cap) {
			uint64_t *nv = realloc(v, (cap ? cap * 2 : 64) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 64;
		}
		v[(*n)++] = seq;
	}
	closedir(d);
	if (skipped)
		fprintf(stderr, "<4>spool: %zu segment files under %s beyond the first %u are left alone\n", skipped,
			s->dir, SPOOL_MAX_SCAN);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_u64);
	*out = v;
	return 0;
}

/* 1 when the segment's header is whole and names it, 0 when not, -errno when it cannot be read. */
static int header_ok(struct spool *s, uint64_t first, uint64_t *size)
{
	struct spool_seg_header h;
	char name[SEG_NAME_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	seg_name(name, first);
	fd = openat(s->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	*size = (uint64_t)st.st_size;
	n = pread(fd, &h, sizeof(h), 0);
	close(fd);
	return n == (ssize_t)sizeof(h) && memcmp(h.magic, SPOOL_SEG_MAGIC, sizeof(h.magic)) == 0 &&
	       h.version == SPOOL_FORMAT_VERSION && h.header_len == sizeof(h) && h.first_seq == first &&
	       first < SPOOL_MAX_SEQ &&
	       h.crc == crc_before(&h, offsetof(struct spool_seg_header, crc));
}

static void set_aside(struct spool *s, uint64_t first)
{
	char name[SEG_NAME_MAX], aside[SEG_NAME_MAX + 8];

	seg_name(name, first);
	snprintf(aside, sizeof(aside), "%s.corrupt", name);
	s->st.corrupt_segments++;
	if (renameat(s->dirfd, name, s->dirfd, aside) < 0) {
		fprintf(stderr, "<3>spool: %s/%s has a bad header and cannot be set aside: %s (move it away by hand)\n",
			s->dir, name, strerror(errno));
		return;
	}
	fprintf(stderr,
		"<4>spool: %s/%s has a bad or truncated header: set aside as %s, its records are not sent "
		"(inspect it, then delete it)\n",
		s->dir, name, aside);
}

/* Drop what no segment can hold: bad headers set aside, empty files removed. Returns how many remain. */
static size_t keep_good_headers(struct spool *s, uint64_t *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t size = 0;
		int rc = header_ok(s, v[i], &size);

		if (rc == 1) {
			v[m++] = v[i];
		} else if (rc == 0 && size == 0) {
			char name[SEG_NAME_MAX];

			/* Created, then the process died before its first write: nothing was in it. */
			seg_name(name, v[i]);
			unlinkat(s->dirfd, name, 0);
		} else if (rc == 0) {
			set_aside(s, v[i]);
			/* Its name was the first seq it held: never hand that seq out again (the lake may have it). */
			if (v[i] < SPOOL_MAX_SEQ)
				s->next_seq = max_u64(s->next_seq, v[i]);
		} else {
			fprintf(stderr, "<4>spool: cannot read %s/%016" PRIx64 ".seg: %s (left alone)\n", s->dir, v[i],
				strerror(-rc));
		}
	}
	return m;
}

struct scan_result {
	uint64_t last, good_end, records, unacked, corrupt;
};

/* Every good frame of a segment, seqs in [first, limit]; good_end: the byte after the last. */
static int scan_frames(struct spool *s, struct reader *r, uint64_t first, uint64_t limit, struct scan_result *out)
{
	uint64_t off = SEG_HDR, expect = first;
	struct tr_frame f;

	memset(out, 0, sizeof(*out));
	out->last = first - 1;
	while (expect <= limit && off < r->end) {
		uint64_t found;
		int rc = frame_at(r, off, expect, expect, &f);

		if (rc == 0) {
			rc = resync(r, off, expect, limit, &found, &f);
			if (rc == 1) {
				out->corrupt += f.seq - expect; /* bad frames in the middle: skipped */
				off = found;
			}
		}
		if (rc < 0)
			return rc;
		if (rc == 0)
			break; /* nothing good after it: a torn tail */
		out->records++;
		out->unacked += f.seq > s->ledger.acked_seq;
		out->last = f.seq;
		off += TR_FRAME_SIZE(f.len);
		expect = f.seq + 1;
	}
	out->good_end = off;
	return 0;
}

/* Check one segment, truncate its torn tail, make what is left durable, and track it. */
static int recover_segment(struct spool *s, uint64_t first, uint64_t limit)
{
	struct spool_seg *g;
	struct scan_result sr;
	char name[SEG_NAME_MAX];
	struct reader r;
	struct stat st;
	int rc, fd;

	seg_name(name, first);
	fd = openat(s->dirfd, name, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		fprintf(stderr, "<3>spool: cannot open %s/%s: %s (check permissions of %s)\n", s->dir, name,
			strerror(-rc), s->dir);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	reader_init(&r, &s->win, fd, (uint64_t)st.st_size, NO_TAG);
	rc = scan_frames(s, &r, first, limit, &sr);
	if (!rc && sr.good_end < (uint64_t)st.st_size) {
		s->ledger.torn_bytes += (uint64_t)st.st_size - sr.good_end;
		s->ledger_dirty = true;
		if (ftruncate(fd, (off_t)sr.good_end) < 0)
			rc = -errno;
	}
	/* The last run may have died with these bytes only in the page cache: durable before we say so. */
	if (!rc && fdatasync(fd) < 0)
		rc = -errno;
	close(fd);
	s->win.tag = NO_TAG;
	if (rc) {
		fprintf(stderr, "<3>spool: cannot recover %s/%s: %s\n", s->dir, name, strerror(-rc));
		return rc;
	}
	if (sr.corrupt) {
		s->ledger.corrupt_frames += sr.corrupt;
		s->ledger_dirty = true;
		fprintf(stderr, "<4>spool: %s/%s: %" PRIu64 " corrupt frames skipped\n", s->dir, name, sr.corrupt);
	}
	s->next_seq = max_u64(s->next_seq, first);
	if (!sr.records) {
		unlinkat(s->dirfd, name, 0); /* only a header: the next segment may take its name */
		return 0;
	}
	g = seg_at(s, s->seg_head + s->seg_count++);
	memset(g, 0, sizeof(*g));
	g->first_seq = first;
	g->last_seq = sr.last;
	g->bytes = g->written_bytes = g->durable_bytes = sr.good_end;
	g->fd = -1;
	g->sealed = true;
	s->bytes_total += sr.good_end;
	s->next_seq = max_u64(s->next_seq, sr.last + 1);
	s->st.recovered_segments++;
	s->st.recovered_records += sr.records;
	s->st.recovered_unacked += sr.unacked;
	return 0;
}

/* More segment files than segs[] can track: the oldest go, counted like the quota's evictions. */
static size_t evict_excess(struct spool *s, const uint64_t *v, size_t n)
{
	size_t excess = n > SPOOL_MAX_SEGMENTS - 2 ? n - (SPOOL_MAX_SEGMENTS - 2) : 0;

	for (size_t i = 0; i < excess; i++) {
		uint64_t last = v[i + 1] - 1;

		if (last > s->ledger.acked_seq) {
			s->ledger.evicted_records += last - max_u64(s->ledger.acked_seq + 1, v[i]) + 1;
			s->ledger.acked_seq = last;
		}
	}
	if (excess) {
		s->ledger_dirty = true;
		fprintf(stderr, "<4>spool: %zu segment files under %s, more than the %u tracked: the oldest %zu are evicted\n",
			n, s->dir, SPOOL_MAX_SEGMENTS, excess);
	}
	return excess;
}

static void unlink_seg(struct spool *s, uint64_t first)
{
	char name[SEG_NAME_MAX];

	seg_name(name, first);
	unlinkat(s->dirfd, name, 0);
}

static int recover(struct spool *s)
{
	uint64_t *v = NULL;
	size_t n = 0, excess;
	int rc;

	unlinkat(s->dirfd, "ledger.tmp", 0); /* a ledger that was being written: the old one stands */
	if (ledger_load(s, &s->ledger) < 0) {
		/* Its cumulative counters are lost with it: the count of resets starts again too. */
		ledger_init(&s->ledger);
		s->ledger_dirty = true;
		s->st.ledger_missing = true;
		if (!s->created) {
			s->ledger.ledger_resets = 1;
			fprintf(stderr,
				"<4>spool: no valid ledger in %s: every record still on disk is sent again (the lake "
				"drops duplicates)\n",
				s->dir);
		}
	}
	s->durable_acked = s->ledger.acked_seq;
	rc = stream_recover(s);
	if (rc)
		return rc;
	rc = list_segments(s, &v, &n);
	if (rc) {
		fprintf(stderr, "<3>spool: cannot list %s: %s\n", s->dir, strerror(-rc));
		return rc;
	}
	s->next_seq = s->ledger.acked_seq + 1;
	n = keep_good_headers(s, v, n);
	excess = evict_excess(s, v, n);
	for (size_t i = excess; i < n && !rc; i++) {
		uint64_t limit = i + 1 < n ? v[i + 1] - 1 : SPOOL_MAX_SEQ - 1;

		/* Wholly acknowledged by the ledger on disk (never the newest: it holds the last seq used). */
		if (i + 1 < n && limit <= s->durable_acked) {
			unlink_seg(s, v[i]);
			continue;
		}
		rc = recover_segment(s, v[i], limit);
	}
	if (!rc && s->ledger_dirty)
		rc = ledger_store(s, &s->ledger);
	for (size_t i = 0; !rc && i < excess; i++)
		unlink_seg(s, v[i]);
	free(v);
	s->written_seq = s->durable_seq = s->commit_target = s->next_seq - 1;
	s->corrupt_seen_upto = s->next_seq - 1;
	return rc;
}

/* ---- open and close ------------------------------------------------- */

static int open_dirs(struct spool *s)
{
	int err;

	if (mkdir(s->dir, 0700) == 0) {
		s->created = true;
	} else if (errno != EEXIST) {
		err = -errno;
		fprintf(stderr, "<3>spool: cannot create %s: %s (its parent must exist and be writable)\n", s->dir,
			strerror(-err));
		return err;
	}
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		err = -errno;
		fprintf(stderr, "<3>spool: cannot open %s: %s\n", s->dir, strerror(-err));
		return err;
	}
	if (mkdirat(s->dirfd, "quarantine", 0700) < 0 && errno != EEXIST) {
		err = -errno;
		fprintf(stderr, "<3>spool: cannot create %s/quarantine: %s\n", s->dir, strerror(-err));
		return err;
	}
	s->qdirfd = openat(s->dirfd, "quarantine", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->qdirfd < 0) {
		err = -errno;
		fprintf(stderr, "<3>spool: cannot open %s/quarantine: %s\n", s->dir, strerror(-err));
		return err;
	}
	return 0;
}

static void count_quarantine(struct spool *s)
{
	int fd = dup(s->qdirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		s->quarantine_files += len > 6 && strcmp(e->d_name + len - 6, ".batch") == 0;
	}
	closedir(d);
}

static int ring_open(struct spool *s)
{
	int fds[FILE_SLOTS];
	int rc;

	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->efd < 0)
		return -errno;
	for (unsigned i = 0; i < FILE_SLOTS; i++)
		fds[i] = -1;
	fds[SLOT_DIR] = s->dirfd;
	rc = uring_open_restricted(&s->ring, SPOOL_QUEUE_DEPTH, fds, FILE_SLOTS, s->efd);
	if (rc < 0)
		return rc;
	s->ring_ready = true;
	s->slots_used = 1u << SLOT_DIR;
	return 0;
}

/* A setting left 0: tracer.conf's default for its key (the one table, common/config.c). */
static uint64_t or_default(uint64_t v, const char *key)
{
	uint64_t def = 0;

	if (v == 0 && config_key_number(key, &def, NULL, NULL) == 0)
		return def;
	return v;
}

static void config_apply(struct spool *s, const struct spool_config *c)
{
	memcpy(s->host_id, c->host_id, sizeof(s->host_id));
	s->quota = or_default(c->quota_bytes, "spool_quota");
	s->seg_bytes = or_default(c->segment_bytes, "segment_size");
	/* At least four segments fit the quota, so evicting one never takes most of it. */
	s->seg_bytes = min_u64(s->seg_bytes, s->quota / 4);
	s->seg_bytes = max_u64(s->seg_bytes, SPOOL_MIN_SEGMENT_BYTES);
	s->seg_age_ns = or_default(c->segment_age_ns, "segment_age");
	s->fsync_ns = or_default(c->fsync_interval_ns, "fsync_interval");
	s->fsync_ns = min_u64(s->fsync_ns, SPOOL_MAX_FSYNC_NS);
}

static int alloc_memory(struct spool *s)
{
	s->segs = calloc(SPOOL_MAX_SEGMENTS, sizeof(*s->segs));
	s->win.buf = malloc(SPOOL_WINDOW_BYTES);
	if (!s->segs || !s->win.buf)
		return -ENOMEM;
	s->win.cap = SPOOL_WINDOW_BYTES;
	s->win.tag = NO_TAG;
	for (unsigned i = 0; i < SPOOL_WRITE_BUFFERS; i++) {
		s->bufs[i].data = malloc(SPOOL_WRITE_BUFFER_BYTES);
		if (!s->bufs[i].data)
			return -ENOMEM;
	}
	return 0;
}

/* Wait for every operation in flight: the kernel may still read our buffers until it completes. */
static void drain(struct spool *s)
{
	while (s->ring_ready && (s->buf_inflight || s->round_ops)) {
		if (wait_some(s) < 0)
			return;
	}
}

static void spool_free(struct spool *s)
{
	drain(s);
	for (uint64_t i = 0; s->segs && i < s->seg_count; i++) {
		struct spool_seg *g = seg_at(s, s->seg_head + i);

		if (g->fd >= 0)
			close(g->fd);
	}
	if (s->ring_ready)
		io_uring_queue_exit(&s->ring);
	if (s->efd >= 0)
		close(s->efd);
	if (s->rfd >= 0)
		close(s->rfd);
	if (s->qdirfd >= 0)
		close(s->qdirfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	for (unsigned i = 0; i < SPOOL_WRITE_BUFFERS; i++) {
		free(s->bufs[i].data);
		free(s->bufs[i].big);
	}
	free(s->win.buf);
	free(s->segs);
	free(s->dir);
	free(s);
}

int spool_open(struct spool **out, const struct spool_config *c)
{
	uint64_t t0 = mono_ns();
	struct spool *s;
	int rc;

	*out = NULL;
	if (!c->dir || !c->dir[0])
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dirfd = s->qdirfd = s->efd = s->rfd = -1;
	s->dir = strdup(c->dir);
	config_apply(s, c);
	rc = s->dir ? alloc_memory(s) : -ENOMEM;
	if (!rc)
		rc = open_dirs(s);
	if (!rc)
		rc = ring_open(s);
	if (!rc)
		rc = recover(s);
	if (!rc)
		rc = enforce_quota(s);
	if (rc) {
		spool_free(s);
		return rc;
	}
	count_quarantine(s);
	s->st.recovery_ns = mono_ns() - t0;
	*out = s;
	return 0;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	if (!s->err && spool_sync(s) < 0)
		fprintf(stderr, "<3>spool: records after seq %" PRIu64 " may not be durable at close\n", s->durable_seq);
	if (!s->err && s->ledger_dirty)
		ledger_store(s, &s->ledger);
	spool_free(s);
}
