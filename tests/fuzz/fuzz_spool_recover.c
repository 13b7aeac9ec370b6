/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: arbitrary bytes as the contents of a spool directory,
 * through spool_open's recovery, then everything read back, acked, one
 * more record appended and read, and spool_close - with abort() on a
 * broken invariant. Whatever is on disk, the spool must not crash, leak or
 * hand out a frame that is not whole and good: every frame spool_read
 * returns has its crc right, a seq above the one asked for and
 * above the frame before it, and the span's counts match its bytes.
 *
 * Input:
 *   [0]      flags: bit 0 a ledger file, bit 1 a ledger.tmp (the same bytes)
 *   [1..2]   ledger length L (little-endian, clipped to what is left)
 *   L bytes  the ledger
 *   [2]      first segment length S (little-endian, clipped)
 *   S bytes  the first segment; the rest of the input is a second segment
 * Each segment file is named by the first_seq in its own header (bytes
 * 16..23) when it has one that is not zero, else by 1 and 2, so that a
 * valid spool packed this way recovers as it was written.
 *
 * The seeds in tests/fuzz/corpus/fuzz_spool_recover/ were written by the
 * real spool (a few records of 1-60 bytes in two segments rotated by age,
 * part of them acked) and packed in this layout; torn, corrupt and
 * ledgerless variants of them.
 *
 * The directory is made under $TMPDIR or /dev/shm when it exists (fsync
 * on tmpfs costs nothing, so more inputs per second).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "spool.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *p;
	size_t left;
};

static size_t take_len(struct input *in)
{
	size_t n;

	if (in->left < 2) {
		in->left = 0;
		return 0;
	}
	n = (size_t)in->p[0] | (size_t)in->p[1] << 8;
	in->p += 2;
	in->left -= 2;
	return n < in->left ? n : in->left;
}

static void put_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK(n == 0 || write(fd, p, n) == (ssize_t)n);
	close(fd);
}

static uint64_t seg_first(const uint8_t *p, size_t n, uint64_t fallback)
{
	uint64_t v = 0;

	if (n >= 24)
		memcpy(&v, p + 16, sizeof(v));
	return v ? v : fallback;
}

static void put_segment(const char *dir, const uint8_t *p, size_t n, uint64_t first)
{
	char name[32];

	snprintf(name, sizeof(name), "%016" PRIx64 ".seg", first);
	put_file(dir, name, p, n);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Every durable frame after from: checked one by one. Returns the last seq read. */
static uint64_t read_everything(struct spool *s, uint64_t from)
{
	static uint8_t buf[16384];
	struct spool_span sp;
	int rc, rounds = 0;

	while ((rc = spool_read(s, from, 7, buf, sizeof(buf), &sp)) == 1) {
		uint64_t prev = from;
		size_t off = 0;

		CHECK(++rounds < 100000);
		CHECK(sp.nrecords >= 1 && sp.nrecords <= 7 && sp.bytes <= sizeof(buf));
		CHECK(sp.first_seq > from && sp.last_seq >= sp.first_seq);
		CHECK(sp.last_seq <= spool_durable_seq(s));
		for (uint32_t i = 0; i < sp.nrecords; i++) {
			struct tr_frame f;

			CHECK(sp.bytes - off >= TR_FRAME_HDR);
			memcpy(&f, buf + off, sizeof(f));
			CHECK(f.seq > prev && f.len <= TR_FRAME_MAX_PAYLOAD);
			CHECK(TR_FRAME_SIZE(f.len) <= sp.bytes - off);
			CHECK(frame_crc(&f, buf + off + TR_FRAME_HDR) == f.crc);
			CHECK(i > 0 || f.seq == sp.first_seq);
			prev = f.seq;
			off += TR_FRAME_SIZE(f.len);
		}
		CHECK(off == sp.bytes && prev == sp.last_seq);
		from = sp.last_seq;
	}
	CHECK(rc == 0 || rc == -ENOBUFS);
	return from;
}

static void exercise(const char *dir)
{
	struct spool_config c = { .dir = dir, .segment_bytes = 4096, .quota_bytes = 16384 };
	struct spool_stats st;
	struct spool *s;
	uint64_t last, seq;

	if (spool_open(&s, &c) != 0)
		return;
	spool_get_stats(s, &st);
	CHECK(st.durable_seq == st.next_seq - 1);
	CHECK(st.acked_seq <= st.durable_seq);
	last = read_everything(s, st.acked_seq);
	CHECK(last <= st.durable_seq);
	if (last > st.acked_seq)
		CHECK(spool_ack(s, last, 1, NULL) == 0);
	CHECK(spool_append(s, 64, 0, 0, 0, "after", 5, &seq) == 0);
	CHECK(seq == st.next_seq);
	CHECK(spool_sync(s) == 0);
	CHECK(read_everything(s, seq - 1) == seq);
	spool_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *base;
	struct input in = { data, size };
	char root[256], dir[300];
	size_t n;
	uint8_t flags;
	uint64_t first1 = 0;

	if (!base) {
		base = getenv("TMPDIR");
		if (!base || !*base)
			base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	}
	if (size < 1)
		return 0;
	flags = data[0];
	in.p++;
	in.left--;
	snprintf(root, sizeof(root), "%s/fuzz_spool.XXXXXX", base);
	CHECK(mkdtemp(root) != NULL);
	snprintf(dir, sizeof(dir), "%s/spool", root);
	CHECK(mkdir(dir, 0700) == 0);

	n = take_len(&in);
	if (flags & 1)
		put_file(dir, "ledger", in.p, n);
	if (flags & 2)
		put_file(dir, "ledger.tmp", in.p, n);
	in.p += n;
	in.left -= n;
	n = take_len(&in);
	if (n || in.left) {
		first1 = seg_first(in.p, n, 1);
		put_segment(dir, in.p, n, first1);
	}
	in.p += n;
	in.left -= n;
	if (in.left) {
		uint64_t first2 = seg_first(in.p, in.left, 2);

		put_segment(dir, in.p, in.left, first2 == first1 ? first2 + 1 : first2);
	}

	exercise(dir);
	CHECK(nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0);
	return 0;
}
