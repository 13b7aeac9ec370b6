/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The processor's spool on real files with real io_uring, in a fresh
 * directory under /tmp per test: what is appended comes back exactly once
 * and in order, durable only once fsynced; segments rotate by size and age
 * and go only after a durable ledger acknowledges them; recovery truncates
 * torn tails, skips and counts corrupt frames, sets bad segments aside and
 * survives a missing ledger; the quota evicts the oldest; a process killed
 * at any moment loses nothing it was told was durable, nor does one whose
 * file system then drops every write not flushed (ext4 on a loop device).
 *
 * Skips (77) when the kernel refuses io_uring; the loop-device test skips
 * without root, mkfs.ext4, loop devices or ext4 (a skip fails under CI).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/types.h>
#include <liburing.h>
#include <zlib.h>

#include "batch.h"
#include "skip.h"
#include "spool.h"

#define SEC 1000000000ULL
#define MAX_LEN 400u

struct fix {
	char root[64];
	char dir[96];
	struct spool_config c;
	struct spool *s;
};

static uint64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* Each seq's payload is a function of the seq: a read can check every byte. */
static uint32_t len_of(uint64_t seq)
{
	return (uint32_t)((seq * 2654435761u) % MAX_LEN);
}

static void fill(uint64_t seq, uint8_t *p, uint32_t len)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ULL;

	for (uint32_t i = 0; i < len; i++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		p[i] = (uint8_t)(x >> 56);
	}
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->root, "/tmp/test_spool.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->dir, sizeof(f->dir), "%s/spool", f->root);
	f->c.dir = f->dir;
	memset(f->c.host_id, 0xab, sizeof(f->c.host_id));
	*state = f;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct fix *f = *state;

	spool_close(f->s);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void reopen(struct fix *f)
{
	spool_close(f->s);
	f->s = NULL;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
}

static struct spool_stats stats(const struct fix *f)
{
	struct spool_stats st;

	spool_get_stats(f->s, &st);
	return st;
}

/*
 * Append records seq by seq with their known payloads. When the buffers are all in flight, wait for a
 * completion (the spool's event fd) and poll: at most 30 s for one record (a disk, or ASan on a busy host,
 * can be slow; a bound on the number of polls was not a bound on time).
 */
static uint64_t append_n(struct fix *f, uint64_t n)
{
	uint8_t p[MAX_LEN];
	uint64_t seq = 0, want = stats(f).next_seq;

	for (uint64_t i = 0; i < n; i++, want++) {
		uint32_t len = len_of(want);
		uint64_t deadline = now_mono() + 30 * SEC;
		int rc;

		fill(want, p, len);
		while ((rc = spool_append(f->s, 64, 0, 0, 0, p, len, &seq)) == -EAGAIN) {
			struct pollfd pfd = { spool_event_fd(f->s), POLLIN, 0 };

			assert_true(now_mono() < deadline);
			(void)poll(&pfd, 1, 10);
			assert_int_equal(spool_poll(f->s, now_mono()), 0);
		}
		assert_int_equal(rc, 0);
		assert_int_equal(seq, want);
	}
	return seq;
}

/* Check one frame's bytes against what append_n wrote for its seq. */
static void check_frame(const uint8_t *p, size_t avail, uint64_t seq)
{
	struct tr_frame h;
	uint8_t want[MAX_LEN];

	assert_true(avail >= TR_FRAME_HDR);
	memcpy(&h, p, sizeof(h));
	assert_int_equal(h.seq, seq);
	assert_int_equal(h.len, len_of(seq));
	assert_true(TR_FRAME_SIZE(h.len) <= avail);
	assert_int_equal(h.type, 64);
	assert_int_equal(frame_crc(&h, p + TR_FRAME_HDR), h.crc);
	fill(seq, want, h.len);
	assert_memory_equal(p + TR_FRAME_HDR, want, h.len);
}

/*
 * Every durable record after from, read back in batches of at most batch:
 * strictly increasing seqs, each checked. Stores the seqs seen in seen[] when given.
 */
static uint64_t read_all(struct fix *f, uint64_t from, uint32_t batch, uint64_t *seen, uint64_t cap)
{
	static uint8_t buf[64 << 10];
	struct spool_span sp;
	uint64_t n = 0, prev = from;
	int rc;

	while ((rc = spool_read(f->s, prev, batch, buf, sizeof(buf), &sp)) == 1) {
		size_t off = 0;

		assert_true(sp.first_seq > prev);
		assert_true(sp.nrecords >= 1 && sp.nrecords <= batch);
		for (uint32_t i = 0; i < sp.nrecords; i++) {
			struct tr_frame h;

			memcpy(&h, buf + off, sizeof(h));
			assert_true(h.seq > prev);
			check_frame(buf + off, sp.bytes - off, h.seq);
			if (seen) {
				assert_true(n < cap);
				seen[n] = h.seq;
			}
			n++;
			prev = h.seq;
			off += TR_FRAME_SIZE(h.len);
		}
		assert_int_equal(off, sp.bytes);
		assert_int_equal(sp.last_seq, prev);
	}
	assert_int_equal(rc, 0);
	return n;
}

static int count_files(const char *dir, const char *suffix)
{
	char cmd[256];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -1 %s | grep -c '%s$'", dir, suffix);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static off_t file_size(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &st) < 0)
		return -1;
	return st.st_size;
}

static void seg_path(const struct fix *f, uint64_t first, char *out, size_t n)
{
	snprintf(out, n, "%s/%016" PRIx64 ".seg", f->dir, first);
}

/* Overwrite bytes of a file in place. */
static void poke(const char *path, off_t off, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, p, n, off), (ssize_t)n);
	close(fd);
}

/* The offset of seq's frame in a one-segment spool starting at seq 1. */
static off_t offset_of(uint64_t seq)
{
	off_t off = sizeof(struct spool_seg_header);

	for (uint64_t q = 1; q < seq; q++)
		off += (off_t)TR_FRAME_SIZE(len_of(q));
	return off;
}

/* ---- the write path ------------------------------------------------ */

static void test_roundtrip_of_random_sizes_across_segments_reads_each_record_once_in_order(void **state)
{
	struct fix *f = *state;
	static uint64_t seen[20000];

	f->c.segment_bytes = 64 << 10;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(append_n(f, 20000), 20000);
	assert_int_equal(spool_sync(f->s), 0);
	assert_int_equal(spool_durable_seq(f->s), 20000);
	assert_true(stats(f).segments > 20);
	assert_int_equal(read_all(f, 0, 777, seen, 20000), 20000);
	for (uint64_t i = 0; i < 20000; i++)
		assert_int_equal(seen[i], i + 1);
	/* from the middle, and again from the same place (a retried upload) */
	assert_int_equal(read_all(f, 12345, 100, NULL, 0), 20000 - 12345);
	assert_int_equal(read_all(f, 12345, 5000, NULL, 0), 20000 - 12345);
	assert_int_equal(stats(f).ledger.corrupt_frames, 0);
}

static void test_durable_seq_advances_only_when_the_covering_fsync_completes(void **state)
{
	struct fix *f = *state;
	uint8_t buf[4096];
	struct spool_span sp;
	uint64_t t0 = now_mono();
	struct pollfd pfd;

	f->c.fsync_interval_ns = 50 * 1000000ULL;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, 10);
	assert_int_equal(spool_durable_seq(f->s), 0);
	assert_int_equal(spool_read(f->s, 0, 100, buf, sizeof(buf), &sp), 0); /* not durable: not read */

	/* Before the interval is up nothing is fsynced, however often we poll. */
	for (int i = 0; i < 10; i++)
		assert_int_equal(spool_poll(f->s, t0), 0);
	assert_int_equal(stats(f).fsyncs, 0);
	assert_int_equal(spool_durable_seq(f->s), 0);

	/* After it, completions arrive on the event fd and polls carry the commit through. */
	pfd.fd = spool_event_fd(f->s);
	pfd.events = POLLIN;
	for (int i = 0; i < 100 && spool_durable_seq(f->s) < 10; i++) {
		assert_int_equal(spool_poll(f->s, t0 + 60 * 1000000ULL), 0);
		if (spool_durable_seq(f->s) < 10)
			assert_true(poll(&pfd, 1, 1000) == 1);
	}
	assert_int_equal(spool_durable_seq(f->s), 10);
	assert_true(stats(f).fsyncs >= 1);
	assert_int_equal(read_all(f, 0, 100, NULL, 0), 10);

	append_n(f, 5);
	assert_int_equal(spool_durable_seq(f->s), 10);
	assert_int_equal(spool_sync(f->s), 0);
	assert_int_equal(spool_durable_seq(f->s), 15);
}

static void test_rotation_by_size_starts_segments_named_by_their_first_seq(void **state)
{
	struct fix *f = *state;
	char path[256];
	uint64_t first = 1;
	int segs = 0;

	f->c.segment_bytes = 8192;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, 500);
	assert_int_equal(spool_sync(f->s), 0);
	/* Walk the files in seq order: each named by its first frame, none past the size, none splitting a frame. */
	while (first <= 500) {
		struct spool_seg_header h;
		off_t size, off;
		uint64_t seq = first;
		int fd;

		seg_path(f, first, path, sizeof(path));
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		size = lseek(fd, 0, SEEK_END);
		assert_true(size <= 8192);
		assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
		assert_memory_equal(h.magic, SPOOL_SEG_MAGIC, 8);
		assert_int_equal(h.first_seq, first);
		assert_memory_equal(h.host_id, f->c.host_id, 16);
		for (off = sizeof(h); off < size; seq++) {
			uint8_t frame[TR_FRAME_HDR + MAX_LEN + 8];
			struct tr_frame fh;

			assert_int_equal(pread(fd, &fh, sizeof(fh), off), sizeof(fh));
			assert_int_equal(fh.seq, seq);
			assert_true(off + (off_t)TR_FRAME_SIZE(fh.len) <= size);
			assert_int_equal(pread(fd, frame, TR_FRAME_SIZE(fh.len), off), (ssize_t)TR_FRAME_SIZE(fh.len));
			check_frame(frame, sizeof(frame), seq);
			off += (off_t)TR_FRAME_SIZE(fh.len);
		}
		close(fd);
		assert_true(seq > first);
		first = seq;
		segs++;
	}
	assert_int_equal(first, 501);
	assert_int_equal(segs, count_files(f->dir, ".seg"));
	assert_true(segs > 10);
}

static void test_rotation_by_age_starts_a_new_segment_at_the_next_append(void **state)
{
	struct fix *f = *state;

	f->c.segment_age_ns = 5 * SEC;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, 3);
	assert_int_equal(spool_poll(f->s, now_mono() + 1 * SEC), 0);
	append_n(f, 1);
	assert_int_equal(stats(f).segments, 1);
	assert_int_equal(spool_poll(f->s, now_mono() + 6 * SEC), 0);
	append_n(f, 2);
	assert_int_equal(stats(f).segments, 2);
	assert_int_equal(spool_sync(f->s), 0);
	assert_true(file_size(f->dir, "0000000000000005.seg") > 0);
	assert_int_equal(read_all(f, 0, 100, NULL, 0), 6);
}

static void test_reopen_continues_seqs_after_the_last_record(void **state)
{
	struct fix *f = *state;
	uint64_t seq = 0;

	f->c.segment_bytes = 16384;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, 300);
	reopen(f); /* close syncs */
	assert_int_equal(stats(f).next_seq, 301);
	assert_int_equal(stats(f).durable_seq, 300);
	assert_int_equal(stats(f).recovered_records, 300);
	assert_int_equal(stats(f).recovered_unacked, 300);
	assert_false(stats(f).ledger_missing); /* the first open wrote one */
	assert_int_equal(spool_append(f->s, 64, 0, 0, 0, "x", 1, &seq), 0);
	assert_int_equal(seq, 301);
	assert_int_equal(spool_sync(f->s), 0);
	assert_true(file_size(f->dir, "000000000000012d.seg") > 0);
	reopen(f);
	assert_int_equal(stats(f).next_seq, 302);
	assert_int_equal(stats(f).ledger.torn_bytes, 0);
	assert_int_equal(stats(f).ledger.corrupt_frames, 0);
}

static void test_append_returns_eagain_when_every_buffer_is_in_flight_then_progresses_after_poll(void **state)
{
	struct fix *f = *state;
	static uint8_t big[60000];
	struct pollfd pfd;
	uint64_t seq, n = 0;
	int rc;

	assert_int_equal(spool_open(&f->s, &f->c), 0);
	/* Buffers are handed back only by spool_poll: without it, four buffers' worth and then -EAGAIN. */
	while ((rc = spool_append(f->s, 64, 0, 0, 0, big, sizeof(big), &seq)) == 0)
		assert_true(++n < 1000);
	assert_int_equal(rc, -EAGAIN);
	assert_true(n * TR_FRAME_SIZE(sizeof(big)) >= (SPOOL_WRITE_BUFFERS - 1) * (uint64_t)SPOOL_WRITE_BUFFER_BYTES);
	assert_true(n * TR_FRAME_SIZE(sizeof(big)) <= SPOOL_WRITE_BUFFERS * (uint64_t)SPOOL_WRITE_BUFFER_BYTES);
	assert_int_equal(spool_append(f->s, 64, 0, 0, 0, big, sizeof(big), &seq), -EAGAIN);
	assert_int_equal(stats(f).append_busy, 2);
	assert_int_equal(stats(f).next_seq, n + 1);

	pfd.fd = spool_event_fd(f->s);
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(spool_poll(f->s, now_mono()), 0);
	assert_int_equal(spool_append(f->s, 64, 0, 0, 0, big, sizeof(big), &seq), 0);
	assert_int_equal(seq, n + 1);
	assert_int_equal(spool_sync(f->s), 0);
	assert_int_equal(spool_durable_seq(f->s), n + 1);
}

static void test_record_larger_than_a_write_buffer_roundtrips(void **state)
{
	struct fix *f = *state;
	uint32_t len = 3 * SPOOL_WRITE_BUFFER_BYTES + 5;
	uint8_t *p = malloc(len), *buf = malloc(TR_FRAME_SIZE(len) + 2 * TR_FRAME_SIZE(1));
	struct spool_span sp;
	struct tr_frame h;
	uint64_t seq;

	assert_non_null(p);
	assert_non_null(buf);
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(spool_append(f->s, 64, 0, 0, 0, p, TR_FRAME_MAX_PAYLOAD + 1, &seq), -EMSGSIZE);
	assert_int_equal(spool_append(f->s, 64, 0, 0, 0, "a", 1, &seq), 0);
	assert_int_equal(spool_append(f->s, 65, 0, 0, 0, p, len, &seq), 0);
	assert_int_equal(seq, 2);
	assert_int_equal(spool_append(f->s, 64, 0, 0, 0, "b", 1, &seq), 0);
	assert_int_equal(spool_sync(f->s), 0);

	assert_int_equal(spool_read(f->s, 1, 10, buf, 1000, &sp), -ENOBUFS);
	assert_int_equal(spool_read(f->s, 1, 1, buf, TR_FRAME_SIZE(len), &sp), 1);
	assert_int_equal(sp.first_seq, 2);
	memcpy(&h, buf, sizeof(h));
	assert_int_equal(h.len, len);
	assert_int_equal(frame_crc(&h, buf + TR_FRAME_HDR), h.crc);
	assert_memory_equal(buf + TR_FRAME_HDR, p, len);
	/* and after recovery, which sums its crc in pieces */
	reopen(f);
	assert_int_equal(stats(f).recovered_records, 3);
	assert_int_equal(stats(f).ledger.corrupt_frames, 0);
	assert_int_equal(spool_read(f->s, 0, 10, buf, TR_FRAME_SIZE(len) + 2 * TR_FRAME_SIZE(1), &sp), 1);
	assert_int_equal(sp.nrecords, 3);
	assert_int_equal(sp.last_seq, 3);
	free(p);
	free(buf);
}

/* ---- acknowledgement ------------------------------------------------ */

static void read_ledger(const struct fix *f, struct spool_ledger *l)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/ledger", f->dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, l, sizeof(*l)), sizeof(*l));
	close(fd);
}

static void test_ack_deletes_only_wholly_acked_segments_after_the_ledger_says_so(void **state)
{
	struct fix *f = *state;
	uint8_t hash[32];
	struct spool_ledger l;
	char path[256];
	uint64_t before;

	memset(hash, 0x42, sizeof(hash));
	f->c.segment_bytes = 8192;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, 400);
	assert_int_equal(spool_sync(f->s), 0);
	before = stats(f).segments;

	assert_int_equal(spool_ack(f->s, 401, 1, hash), -EINVAL); /* never appended */
	assert_int_equal(spool_ack(f->s, 150, 7, hash), 0);
	read_ledger(f, &l);
	assert_int_equal(l.acked_seq, 150);
	assert_int_equal(l.batch_seq, 7);
	assert_memory_equal(l.prev_hash, hash, 32);
	assert_true(stats(f).segments < before);
	/* Every record after 150 still there; what is left before it is the start of the segment holding 150. */
	assert_int_equal(read_all(f, 150, 64, NULL, 0), 250);
	{
		uint64_t kept = read_all(f, 0, 64, NULL, 0), first = 400 - kept + 1;

		assert_true(first <= 151);
		seg_path(f, first, path, sizeof(path));
		assert_int_equal(access(path, F_OK), 0);
	}

	/* All acked: everything but the newest segment goes (it holds the last seq used). */
	assert_int_equal(spool_ack(f->s, 400, 8, hash), 0);
	assert_int_equal(stats(f).segments, 1);
	assert_int_equal(read_all(f, 400, 64, NULL, 0), 0);
	reopen(f);
	assert_int_equal(stats(f).acked_seq, 400);
	assert_int_equal(stats(f).next_seq, 401);
	assert_int_equal(stats(f).recovered_unacked, 0);
}

static void test_ack_deletes_nothing_when_the_ledger_cannot_be_made_durable(void **state)
{
	struct fix *f = *state;
	char path[256];
	uint64_t before;
	int fd;

	f->c.segment_bytes = 8192;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, 400);
	assert_int_equal(spool_sync(f->s), 0);
	before = stats(f).segments;
	/* A non-empty directory where the ledger goes: the rename onto it fails. */
	snprintf(path, sizeof(path), "%s/ledger", f->dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/ledger/x", f->dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);

	assert_true(spool_ack(f->s, 400, 1, NULL) < 0);
	assert_int_equal(stats(f).segments, before);
	assert_int_equal(count_files(f->dir, ".seg"), (int)before);
	assert_int_equal(stats(f).acked_seq, 0);
	assert_int_equal(read_all(f, 0, 64, NULL, 0), 400);
	unlink(path);
	snprintf(path, sizeof(path), "%s/ledger", f->dir);
	rmdir(path);
}

static void test_quarantine_keeps_the_batch_and_acks_its_records(void **state)
{
	struct fix *f = *state;
	static const char batch[] = "a refused batch";
	char path[256], got[64] = { 0 };
	struct spool_ledger l;
	int fd;

	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, 30);
	assert_int_equal(spool_sync(f->s), 0);
	assert_int_equal(spool_quarantine(f->s, batch, sizeof(batch), 3, 1, 20, 20), 0);

	snprintf(path, sizeof(path), "%s/quarantine/3-1-20.batch", f->dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, sizeof(got)), sizeof(batch));
	close(fd);
	assert_string_equal(got, batch);
	read_ledger(f, &l);
	assert_int_equal(l.acked_seq, 20);
	assert_int_equal(l.quarantined_batches, 1);
	assert_int_equal(l.quarantined_records, 20);
	assert_int_equal(stats(f).acked_seq, 20);
	assert_int_equal(read_all(f, stats(f).acked_seq, 100, NULL, 0), 10);
	assert_int_equal(count_files(f->dir, ".tmp"), 0);
}

/* ---- the quota ------------------------------------------------------ */

static void test_quota_evicts_the_oldest_records_counts_them_and_keeps_the_newest(void **state)
{
	struct fix *f = *state;
	static uint64_t seen[5000];
	struct spool_stats st;
	uint64_t n, t = now_mono();

	f->c.quota_bytes = 64 << 10;
	f->c.segment_bytes = 16 << 10;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	/* ~1 MB through a 64 KiB spool that nobody acknowledges: appends keep going. */
	for (int i = 0; i < 50; i++) {
		append_n(f, 100);
		assert_int_equal(spool_sync(f->s), 0);
		assert_int_equal(spool_poll(f->s, t), 0);
	}
	st = stats(f);
	assert_int_equal(st.next_seq, 5001);
	assert_true(st.bytes_on_disk <= (64 << 10) + (16 << 10));
	assert_true(st.ledger.evicted_records > 0);
	assert_true(st.ledger.evicted_bytes > 0);
	assert_int_equal(st.acked_seq, st.ledger.evicted_records); /* reads skip what was evicted */
	n = read_all(f, 0, 1000, seen, 5000);
	assert_int_equal(n + st.ledger.evicted_records, 5000);
	assert_int_equal(seen[0], st.ledger.evicted_records + 1);
	assert_int_equal(seen[n - 1], 5000);
	/* counted across a restart, and still within the quota */
	reopen(f);
	assert_int_equal(stats(f).ledger.evicted_records, st.ledger.evicted_records);
	assert_int_equal(stats(f).recovered_unacked, n);
}

/* ---- recovery ------------------------------------------------------- */

/* One segment of n records, synced and closed. */
static void one_segment(struct fix *f, uint64_t n)
{
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, n);
	spool_close(f->s);
	f->s = NULL;
}

static void test_torn_tail_is_truncated_at_the_last_whole_frame_and_counted(void **state)
{
	struct fix *f = *state;
	uint64_t frame_size = TR_FRAME_SIZE(len_of(20));
	const uint64_t cuts[] = { 1, 8, TR_FRAME_HDR - 1, TR_FRAME_HDR, TR_FRAME_HDR + 1, frame_size - 1 };
	char path[256];

	assert_true(frame_size > TR_FRAME_HDR + 1);
	seg_path(f, 1, path, sizeof(path));
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		one_segment(f, 20);
		/* Cut the last frame (seq 20) short. */
		assert_int_equal(truncate(path, offset_of(20) + (off_t)cuts[i]), 0);
		assert_int_equal(spool_open(&f->s, &f->c), 0);
		assert_int_equal(stats(f).ledger.torn_bytes, cuts[i]);
		assert_int_equal(stats(f).recovered_records, 19);
		assert_int_equal(stats(f).next_seq, 20);
		assert_int_equal(file_size(f->dir, "0000000000000001.seg"), offset_of(20));
		assert_int_equal(read_all(f, 0, 100, NULL, 0), 19);
		spool_close(f->s);
		f->s = NULL;
	}

	/* A whole last frame whose crc does not match is a torn tail too. */
	nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	one_segment(f, 20);
	poke(path, offset_of(20) + TR_FRAME_HDR, "\xff\xfe", 2);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(stats(f).ledger.torn_bytes, frame_size);
	assert_int_equal(stats(f).ledger.corrupt_frames, 0);
	assert_int_equal(read_all(f, 0, 100, NULL, 0), 19);
}

static void test_flipped_bits_in_a_middle_frame_count_it_corrupt_and_later_frames_still_read(void **state)
{
	struct fix *f = *state;
	uint64_t seen[40];
	char path[256];
	uint8_t b;
	int fd;

	seg_path(f, 1, path, sizeof(path));
	one_segment(f, 40);
	/* a payload bit of seq 10, and the length field of seq 25 */
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, offset_of(10) + TR_FRAME_HDR), 1);
	b ^= 0x10;
	assert_int_equal(pwrite(fd, &b, 1, offset_of(10) + TR_FRAME_HDR), 1);
	assert_int_equal(pread(fd, &b, 1, offset_of(25) + 12), 1);
	b ^= 0x01;
	assert_int_equal(pwrite(fd, &b, 1, offset_of(25) + 12), 1);
	close(fd);

	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(stats(f).ledger.corrupt_frames, 2);
	assert_int_equal(stats(f).ledger.torn_bytes, 0);
	assert_int_equal(stats(f).recovered_records, 38);
	assert_int_equal(stats(f).next_seq, 41);
	assert_int_equal(read_all(f, 0, 7, seen, 40), 38);
	for (uint64_t i = 0, seq = 1; i < 38; i++, seq++) {
		if (seq == 10 || seq == 25)
			seq++;
		assert_int_equal(seen[i], seq);
	}
	/* reading them again counts nothing twice */
	assert_int_equal(read_all(f, 0, 100, NULL, 0), 38);
	assert_int_equal(stats(f).ledger.corrupt_frames, 2);
	reopen(f);
	assert_int_equal(stats(f).ledger.corrupt_frames, 4); /* found again by this recovery: the frames are still bad */
}

static void test_segment_with_a_truncated_header_is_set_aside_and_the_rest_read(void **state)
{
	struct fix *f = *state;
	char path[256];

	f->c.segment_bytes = 8192;
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	append_n(f, 200);
	spool_close(f->s);
	f->s = NULL;
	seg_path(f, 1, path, sizeof(path));
	assert_int_equal(truncate(path, 30), 0);

	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(stats(f).corrupt_segments, 1);
	assert_int_equal(count_files(f->dir, ".corrupt"), 1);
	assert_true(file_size(f->dir, "0000000000000001.seg.corrupt") == 30);
	assert_int_equal(stats(f).next_seq, 201);
	assert_true(read_all(f, 0, 100, NULL, 0) > 100);
}

static void test_garbage_segment_is_set_aside_without_harm(void **state)
{
	struct fix *f = *state;
	uint8_t junk[5000];
	char path[256];
	int fd;

	one_segment(f, 10);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	seg_path(f, 0x100, path, sizeof(path));
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
	close(fd);

	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(stats(f).corrupt_segments, 1);
	assert_int_equal(access(path, F_OK), -1);
	/* Its name was its first seq: new records start after it, so none can reuse a seq it held. */
	assert_int_equal(stats(f).next_seq, 0x100);
	assert_int_equal(read_all(f, 0, 100, NULL, 0), 10);
	append_n(f, 5);
	assert_int_equal(spool_sync(f->s), 0);
	assert_int_equal(read_all(f, 0, 100, NULL, 0), 15);
	assert_int_equal(stats(f).next_seq, 0x105);
}

static void test_missing_ledger_sends_everything_again_and_counts_a_reset(void **state)
{
	struct fix *f = *state;
	char path[256];

	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_true(stats(f).ledger_missing); /* a new spool has none yet... */
	assert_int_equal(stats(f).ledger.ledger_resets, 0); /* ...but nothing was lost */
	append_n(f, 50);
	assert_int_equal(spool_sync(f->s), 0);
	assert_int_equal(spool_ack(f->s, 30, 1, NULL), 0);
	spool_close(f->s);
	f->s = NULL;

	snprintf(path, sizeof(path), "%s/ledger", f->dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_true(stats(f).ledger_missing);
	assert_int_equal(stats(f).ledger.ledger_resets, 1);
	assert_int_equal(stats(f).acked_seq, 0);
	assert_int_equal(stats(f).recovered_unacked, 50);
	assert_int_equal(read_all(f, stats(f).acked_seq, 100, NULL, 0), 50);
	spool_close(f->s);
	f->s = NULL;

	/* a ledger with a bad crc is no ledger */
	poke(path, 16, "\x01", 1);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_true(stats(f).ledger_missing);
	assert_int_equal(stats(f).ledger.ledger_resets, 1);
	assert_int_equal(stats(f).next_seq, 51);
}

static uint64_t stream_file(const struct fix *f)
{
	char path[256], text[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/stream", f->dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	assert_int_equal(n, 17);
	assert_int_equal(text[16], '\n');
	return strtoull(text, NULL, 16);
}

/*
 * A spool's stream id: random for a new spool, kept in the file stream and in the ledger, either of which
 * brings it back; a spool of before (a ledger without one) keeps stream 0; with neither, a new one.
 */
static void test_stream_id_survives_the_loss_of_its_file_or_of_the_ledger(void **state)
{
	struct fix *f = *state;
	char path[256], ledger[256];
	struct spool_ledger l;
	uint64_t id, again;
	int fd;

	snprintf(path, sizeof(path), "%s/stream", f->dir);
	snprintf(ledger, sizeof(ledger), "%s/ledger", f->dir);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	id = spool_stream(f->s);
	assert_true(id > 0 && id <= INT64_MAX);
	assert_int_equal(stream_file(f), id);
	append_n(f, 5);
	reopen(f);
	assert_int_equal(spool_stream(f->s), id);
	read_ledger(f, &l);
	assert_int_equal(l.stream, id);
	/* the file lost: the ledger's, written back */
	assert_int_equal(unlink(path), 0);
	reopen(f);
	assert_int_equal(spool_stream(f->s), id);
	assert_int_equal(stream_file(f), id);
	/* the ledger lost: the file's (everything on disk is sent again, in the same stream) */
	spool_close(f->s);
	f->s = NULL;
	assert_int_equal(unlink(ledger), 0);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_true(stats(f).ledger_missing);
	assert_int_equal(spool_stream(f->s), id);
	assert_int_equal(stats(f).recovered_unacked, 5);
	/* a damaged file is no file */
	spool_close(f->s);
	f->s = NULL;
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789abcdeg\n", 17), 17);
	close(fd);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(spool_stream(f->s), id);
	assert_int_equal(stream_file(f), id);
	/* a spool of before: its ledger says 0, no file: it keeps stream 0 */
	spool_close(f->s);
	f->s = NULL;
	read_ledger(f, &l);
	l.stream = 0;
	l.crc = (uint32_t)crc32(0L, (const Bytef *)&l, (uInt)offsetof(struct spool_ledger, crc));
	fd = open(ledger, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, &l, sizeof(l)), sizeof(l));
	close(fd);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_false(stats(f).ledger_missing);
	assert_int_equal(spool_stream(f->s), 0);
	assert_int_equal(stream_file(f), 0);
	reopen(f);
	assert_int_equal(spool_stream(f->s), 0);
	/* neither: a new stream (what is still on disk may reach the lake twice: said on stderr) */
	spool_close(f->s);
	f->s = NULL;
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(ledger), 0);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	again = spool_stream(f->s);
	assert_true(again > 0 && again != id);
	assert_int_equal(stream_file(f), again);
}

static void test_ledger_tmp_left_by_a_crash_is_removed_at_open(void **state)
{
	struct fix *f = *state;
	char path[256];
	int fd;

	one_segment(f, 5);
	snprintf(path, sizeof(path), "%s/ledger.tmp", f->dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "half", 4), 4);
	close(fd);
	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_false(stats(f).ledger_missing);
	assert_int_equal(stats(f).next_seq, 6);
}

/* ---- a crash at any moment ------------------------------------------ */

static void child_appends_forever(struct fix *f, int out)
{
	uint8_t p[MAX_LEN];
	uint64_t seq;
	struct spool *s;

	if (spool_open(&s, &f->c) != 0)
		_exit(2);
	for (uint64_t want = 1;; want++) {
		uint32_t len = len_of(want);
		int rc;

		fill(want, p, len);
		while ((rc = spool_append(s, 64, 0, 0, 0, p, len, &seq)) == -EAGAIN)
			spool_poll(s, now_mono());
		if (rc || seq != want)
			_exit(3);
		spool_poll(s, now_mono());
		if (want % 97 == 0) {
			uint64_t d;

			if (spool_sync(s) != 0)
				_exit(4);
			d = spool_durable_seq(s);
			if (write(out, &d, sizeof(d)) != sizeof(d))
				_exit(5);
		}
	}
}

/*
 * Run child_appends_forever and SIGKILL it after delay (after_first: counted
 * from its first durable record, which a slow first fsync delays, as under
 * ASan). Returns the last seq it was told is durable.
 */
static uint64_t writer_killed_after(struct fix *f, const struct timespec *delay, bool after_first)
{
	uint64_t durable = 0, d;
	int fds[2], status, ready = 1;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		child_appends_forever(f, fds[1]);
	}
	close(fds[1]);
	if (after_first)
		ready = poll(&(struct pollfd){ fds[0], POLLIN, 0 }, 1, 30000);
	if (ready == 1)
		nanosleep(delay, NULL);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(ready, 1);
	assert_true(WIFSIGNALED(status));
	while (read(fds[0], &d, sizeof(d)) == (ssize_t)sizeof(d))
		durable = d;
	close(fds[0]);
	return durable;
}

/*
 * Reopened, the spool holds every record up to durable: intact, once each,
 * in order. Then it is emptied for the next round (the child numbers from 1).
 * Returns how many records it recovered.
 */
static uint64_t expect_durable_then_empty(struct fix *f, uint64_t durable)
{
	static uint64_t seen[2000000];
	uint64_t n;

	assert_int_equal(spool_open(&f->s, &f->c), 0);
	n = read_all(f, 0, 4096, seen, sizeof(seen) / sizeof(seen[0]));
	if (n < durable)
		fail_msg("%" PRIu64 " records were reported durable, %" PRIu64 " survived", durable, n);
	for (uint64_t i = 0; i < durable; i++)
		assert_int_equal(seen[i], i + 1);
	spool_close(f->s);
	f->s = NULL;
	nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return n;
}

/*
 * Killed at a random moment, mid-write: recovery reads back every record it
 * was told is durable, and a torn tail is cut. The page cache outlives the
 * process, so this cannot tell an fsync from none: the test after it can.
 */
static void test_killed_writer_loses_no_record_it_was_told_is_durable(void **state)
{
	struct fix *f = *state;

	f->c.segment_bytes = 256 << 10;
	f->c.fsync_interval_ns = 5 * 1000000ULL;
	srand((unsigned)now_mono());
	for (int round = 0; round < 4; round++) {
		struct timespec delay = { 0, (long)(50 + rand() % 400) * 1000000L };
		uint64_t durable = writer_killed_after(f, &delay, false), n = expect_durable_then_empty(f, durable);

		fprintf(stderr, "round %d: killed after %ld ms, %" PRIu64 " durable, %" PRIu64 " recovered\n", round,
			delay.tv_nsec / 1000000L, durable, n);
	}
}

/*
 * SIGKILL leaves the page cache to the kernel, which writes it out later:
 * the test above cannot tell an fsync from none. Here the spool lives on an
 * ext4 file system of its own (a loop device), and after the kill the file
 * system is shut down without flushing (EXT4_IOC_SHUTDOWN, NOLOGFLUSH: what
 * fstests' godown does to stand in for a power cut): every write not made
 * durable by an fsync is dropped. Remounted, every record the writer was
 * told is durable must be there. A file written just before the shutdown
 * and never synced must not be: the proof that the drop happened here.
 */
#ifndef EXT4_IOC_SHUTDOWN
#define EXT4_IOC_SHUTDOWN _IOR('X', 125, __u32)
#endif
#define EXT4_GOING_FLAGS_NOLOGFLUSH 0x2 /* linux/fs/ext4/ext4.h: no flush of data or of the journal */

/* Run a shell command quietly: its exit status, or -1. */
static int quiet(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int quiet(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " >/dev/null 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	st = system(cmd);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Shut the file system at mnt down, dropping every write not yet flushed. */
static void shut_down_without_flush(const char *mnt)
{
	__u32 how = EXT4_GOING_FLAGS_NOLOGFLUSH;
	int fd = open(mnt, O_RDONLY | O_DIRECTORY);

	assert_true(fd >= 0);
	if (ioctl(fd, EXT4_IOC_SHUTDOWN, &how))
		fail_msg("EXT4_IOC_SHUTDOWN of %s: %s", mnt, strerror(errno));
	close(fd);
}

/*
 * Unmount mnt: 0, or umount's status. The killed writer's io_uring lets go
 * of its files only once the kernel has torn its ring down, a moment after
 * the process is reaped: until then the file system is busy (status 32).
 */
static int unmount(const char *mnt)
{
	uint64_t deadline = now_mono() + 10 * SEC;
	int rc;

	while ((rc = quiet("umount '%s'", mnt)) == 32 && now_mono() < deadline)
		usleep(20000);
	return rc;
}

/* The test's teardown, after unmounting what a failed check left mounted. */
static int unmount_then_teardown(void **state)
{
	struct fix *f = *state;
	struct stat top, sub;
	char mnt[80];

	snprintf(mnt, sizeof(mnt), "%s/mnt", f->root);
	spool_close(f->s);
	f->s = NULL;
	if (stat(f->root, &top) == 0 && stat(mnt, &sub) == 0 && sub.st_dev != top.st_dev)
		(void)unmount(mnt);
	return teardown(state);
}

static void test_writer_cut_off_with_its_unflushed_writes_loses_no_record_it_was_told_is_durable(void **state)
{
	struct fix *f = *state;
	char img[96], mnt[80], canary[96];

	if (geteuid() != 0)
		TEST_SKIP("needs root to mount a loop device and shut its file system down");
	if (quiet("command -v mkfs.ext4"))
		TEST_SKIP("no mkfs.ext4 (e2fsprogs) to make the spool's file system");
	snprintf(img, sizeof(img), "%s/ext4.img", f->root);
	snprintf(mnt, sizeof(mnt), "%s/mnt", f->root);
	snprintf(canary, sizeof(canary), "%s/canary", mnt);
	snprintf(f->dir, sizeof(f->dir), "%s/spool", mnt);
	assert_int_equal(mkdir(mnt, 0700), 0);
	assert_int_equal(quiet("truncate -s 128M '%s' && mkfs.ext4 -q -F '%s'", img, img), 0);
	if (quiet("mount -t ext4 -o loop '%s' '%s'", img, mnt))
		TEST_SKIP("cannot mount an ext4 image on a loop device here (no loop devices, or no ext4)");
	f->c.segment_bytes = 256 << 10;
	f->c.fsync_interval_ns = 5 * 1000000ULL;
	srand((unsigned)now_mono());
	for (int round = 0; round < 4; round++) {
		struct timespec delay = { 0, (long)(50 + rand() % 400) * 1000000L };
		uint64_t durable = writer_killed_after(f, &delay, true), n;
		struct stat st;
		int fd;

		fd = open(canary, O_CREAT | O_TRUNC | O_WRONLY, 0600);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "not flushed", 11), 11);
		close(fd);
		shut_down_without_flush(mnt);
		assert_int_equal(unmount(mnt), 0);
		assert_int_equal(quiet("mount -t ext4 -o loop '%s' '%s'", img, mnt), 0);
		if (stat(canary, &st) == 0 && st.st_size == 11)
			fail_msg("the shutdown kept a write never flushed (%s): it cannot stand in for a power cut", canary);
		assert_true(durable > 0);
		n = expect_durable_then_empty(f, durable);
		fprintf(stderr, "round %d: cut off %ld ms after its first durable record, %" PRIu64 " durable, %" PRIu64
			" recovered\n", round, delay.tv_nsec / 1000000L, durable, n);
		unlink(canary);
	}
	assert_int_equal(unmount(mnt), 0);
}

/* 0, or -errno when the kernel refuses io_uring. */
static int io_uring_works(void)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(4, &ring, 0);

	if (rc < 0)
		return rc;
	io_uring_queue_exit(&ring);
	return 0;
}

/* The newest kernel record's ring source survives a reopen; the processor's own records have none. */
static void test_last_source_is_the_newest_kernel_records_after_a_reopen(void **state)
{
	struct fix *f = *state;
	uint32_t gen = 0;
	uint64_t pos = 0, seq;

	assert_int_equal(spool_open(&f->s, &f->c), 0);
	assert_int_equal(spool_last_source(f->s, &gen, &pos), 0); /* empty */
	for (uint64_t i = 0; i < 5000; i++)
		assert_int_equal(spool_append(f->s, 21, 0, 0xabcd1234u, 4096 + i * 64, "sample", 6, &seq), 0);
	assert_int_equal(spool_append(f->s, 66, 0, 0, 0, "own", 3, &seq), 0); /* a lake record: no source */
	reopen(f);
	assert_int_equal(spool_last_source(f->s, &gen, &pos), 1);
	assert_int_equal(gen, 0xabcd1234u);
	assert_int_equal(pos, 4096 + 4999 * 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_roundtrip_of_random_sizes_across_segments_reads_each_record_once_in_order),
		T(test_durable_seq_advances_only_when_the_covering_fsync_completes),
		T(test_rotation_by_size_starts_segments_named_by_their_first_seq),
		T(test_rotation_by_age_starts_a_new_segment_at_the_next_append),
		T(test_reopen_continues_seqs_after_the_last_record),
		T(test_append_returns_eagain_when_every_buffer_is_in_flight_then_progresses_after_poll),
		T(test_record_larger_than_a_write_buffer_roundtrips),
		T(test_ack_deletes_only_wholly_acked_segments_after_the_ledger_says_so),
		T(test_ack_deletes_nothing_when_the_ledger_cannot_be_made_durable),
		T(test_quarantine_keeps_the_batch_and_acks_its_records),
		T(test_quota_evicts_the_oldest_records_counts_them_and_keeps_the_newest),
		T(test_torn_tail_is_truncated_at_the_last_whole_frame_and_counted),
		T(test_flipped_bits_in_a_middle_frame_count_it_corrupt_and_later_frames_still_read),
		T(test_segment_with_a_truncated_header_is_set_aside_and_the_rest_read),
		T(test_garbage_segment_is_set_aside_without_harm),
		T(test_missing_ledger_sends_everything_again_and_counts_a_reset),
		T(test_stream_id_survives_the_loss_of_its_file_or_of_the_ledger),
	T(test_ledger_tmp_left_by_a_crash_is_removed_at_open),
		T(test_killed_writer_loses_no_record_it_was_told_is_durable),
		cmocka_unit_test_setup_teardown(
			test_writer_cut_off_with_its_unflushed_writes_loses_no_record_it_was_told_is_durable, setup,
			unmount_then_teardown),
		T(test_last_source_is_the_newest_kernel_records_after_a_reopen),
#undef T
	};
	int rc = io_uring_works();

	if (rc)
		return test_skip_all("io_uring unavailable here (%s): the spool needs it", strerror(-rc));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
