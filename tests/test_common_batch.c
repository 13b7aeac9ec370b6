/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Signed batches (common/batch.c): a sealed batch verifies and opens to the
 * frames it was made of; any change to any byte, a key that is not
 * enrolled or is bound to another host, and lengths that lie are refused
 * with their own error, before anything is inflated. Key files: 0600,
 * never overwritten, refused when readable by others or damaged, one byte
 * too large, a FIFO or a symlink; id files (machine-id, boot_id) likewise.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "batch.h"
#include "readfile.h"
#include "lake.h"
#include "records.h"

struct keyring {
	struct batch_secret_key key;
	uint8_t bound_host[BATCH_HOST_ID_LEN]; /* zeros: any host */
};

static int lookup(void *ctx, const uint8_t key_id[BATCH_KEY_ID_LEN], uint8_t pk[BATCH_PUBKEY_LEN],
		  uint8_t bound[BATCH_HOST_ID_LEN])
{
	const struct keyring *r = ctx;

	if (memcmp(key_id, r->key.key_id, BATCH_KEY_ID_LEN))
		return -1;
	memcpy(pk, r->key.public_key, BATCH_PUBKEY_LEN);
	memcpy(bound, r->bound_host, BATCH_HOST_ID_LEN);
	return 0;
}

/* nrecords frames with seqs first.., payloads of varying length and content. */
static size_t make_frames(uint8_t *buf, size_t cap, uint64_t first, uint32_t nrecords)
{
	size_t off = 0;

	for (uint32_t i = 0; i < nrecords; i++) {
		struct tr_frame f = { .seq = first + i, .type = TR_SAMPLE, .len = 40 + (i * 7) % 300 };
		uint8_t *p = buf + off + TR_FRAME_HDR;

		assert_true(off + TR_FRAME_SIZE(f.len) <= cap);
		memset(buf + off, 0, TR_FRAME_SIZE(f.len));
		for (uint32_t j = 0; j < f.len; j++)
			p[j] = (uint8_t)(i * 31 + j);
		f.crc = frame_crc(&f, p);
		memcpy(buf + off, &f, sizeof(f));
		off += TR_FRAME_SIZE(f.len);
	}
	return off;
}

struct fixture {
	struct keyring ring;
	struct batch_identity id;
	struct batch_build b;
	uint8_t frames[1 << 17];
	size_t raw_len;
	uint8_t *wire;
	size_t wire_len;
	uint8_t hash[BATCH_HASH_LEN];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || batch_crypto_init())
		return -1;
	batch_key_generate(&f->ring.key);
	memset(f->id.host_id, 0xab, sizeof(f->id.host_id));
	memset(f->id.boot_id, 0xcd, sizeof(f->id.boot_id));
	f->b = (struct batch_build){ .batch_seq = 7, .first_seq = 100, .last_seq = 299, .nrecords = 200,
				     .created_ns = 1700000000000000000ULL, .compression = BATCH_COMP_ZLIB };
	f->raw_len = make_frames(f->frames, sizeof(f->frames), 100, 200);
	f->wire = malloc(batch_max_wire(f->raw_len));
	if (!f->wire)
		return -1;
	if (batch_seal(&f->ring.key, &f->id, &f->b, f->frames, f->raw_len, f->wire, batch_max_wire(f->raw_len),
		       &f->wire_len, f->hash))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->wire);
	free(f);
	return 0;
}

static int verify(struct fixture *f, const uint8_t *wire, size_t len, struct batch_header *h)
{
	uint8_t hash[BATCH_HASH_LEN];

	return batch_verify(wire, len, lookup, &f->ring, h, hash);
}

static void sealed_batch_verifies_and_opens_to_its_frames(void **state)
{
	struct fixture *f = *state;
	struct batch_header h;
	uint8_t hash[BATCH_HASH_LEN], *frames;
	size_t raw_len, off = 0, n = 0;
	const struct tr_frame *fr;

	assert_int_equal(batch_verify(f->wire, f->wire_len, lookup, &f->ring, &h, hash), BATCH_OK);
	assert_memory_equal(hash, f->hash, sizeof(hash));
	assert_int_equal(h.batch_seq, 7);
	assert_int_equal(h.first_seq, 100);
	assert_int_equal(h.last_seq, 299);
	assert_memory_equal(h.host_id, f->id.host_id, sizeof(h.host_id));
	assert_true(h.body_len < f->raw_len); /* it did compress */
	assert_int_equal(batch_open(f->wire, f->wire_len, &h, &frames, &raw_len), BATCH_OK);
	assert_int_equal(raw_len, f->raw_len);
	assert_memory_equal(frames, f->frames, raw_len);
	while ((fr = batch_next_frame(frames, raw_len, &off)) != NULL)
		assert_int_equal(fr->seq, 100 + n++);
	assert_int_equal(n, 200);
	free(frames);
}

static void uncompressed_batch_roundtrips(void **state)
{
	struct fixture *f = *state;
	struct batch_build b = f->b;
	struct batch_header h;
	uint8_t hash[BATCH_HASH_LEN], *wire = malloc(batch_max_wire(f->raw_len)), *frames;
	size_t len, raw_len;

	b.compression = BATCH_COMP_NONE;
	assert_int_equal(batch_seal(&f->ring.key, &f->id, &b, f->frames, f->raw_len, wire, batch_max_wire(f->raw_len),
				    &len, hash), BATCH_OK);
	assert_int_equal(len, sizeof(h) + f->raw_len + BATCH_SIG_LEN);
	assert_int_equal(verify(f, wire, len, &h), BATCH_OK);
	assert_int_equal(batch_open(wire, len, &h, &frames, &raw_len), BATCH_OK);
	assert_memory_equal(frames, f->frames, raw_len);
	free(frames);
	free(wire);
}

/* Flip one bit at every 97th byte (header, body and signature alike): never accepted. */
static void any_flipped_bit_is_refused(void **state)
{
	struct fixture *f = *state;
	uint8_t *copy = malloc(f->wire_len);
	struct batch_header h;

	for (size_t i = 0; i < f->wire_len; i += 97) {
		int rc;

		memcpy(copy, f->wire, f->wire_len);
		copy[i] ^= 0x10;
		rc = verify(f, copy, f->wire_len, &h);
		if (rc == BATCH_OK)
			fail_msg("a flipped bit at byte %zu was accepted", i);
	}
	free(copy);
}

static void tampered_body_fails_the_signature(void **state)
{
	struct fixture *f = *state;
	uint8_t *copy = malloc(f->wire_len);
	struct batch_header h;

	memcpy(copy, f->wire, f->wire_len);
	copy[sizeof(h) + 10] ^= 1;
	assert_int_equal(verify(f, copy, f->wire_len, &h), BATCH_E_SIGNATURE);
	free(copy);
}

static void unknown_key_is_refused(void **state)
{
	struct fixture *f = *state;
	struct keyring other = { 0 };
	struct batch_header h;
	uint8_t hash[BATCH_HASH_LEN];

	batch_key_generate(&other.key);
	assert_int_equal(batch_verify(f->wire, f->wire_len, lookup, &other, &h, hash), BATCH_E_UNKNOWN_KEY);
}

static void key_bound_to_another_host_is_refused(void **state)
{
	struct fixture *f = *state;
	struct batch_header h;

	memset(f->ring.bound_host, 0x11, sizeof(f->ring.bound_host));
	assert_int_equal(verify(f, f->wire, f->wire_len, &h), BATCH_E_WRONG_HOST);
	memcpy(f->ring.bound_host, f->id.host_id, sizeof(f->ring.bound_host));
	assert_int_equal(verify(f, f->wire, f->wire_len, &h), BATCH_OK);
	memset(f->ring.bound_host, 0, sizeof(f->ring.bound_host));
}

/* A key that signs a batch naming itself but forged by another key: the signature fails. */
static void signature_by_another_key_is_refused(void **state)
{
	struct fixture *f = *state;
	struct keyring forger = { 0 };
	uint8_t *wire = malloc(batch_max_wire(f->raw_len)), hash[BATCH_HASH_LEN];
	struct batch_header h;
	size_t len;

	batch_key_generate(&forger.key);
	memcpy(forger.key.key_id, f->ring.key.key_id, BATCH_KEY_ID_LEN); /* claims to be the enrolled key */
	assert_int_equal(batch_seal(&forger.key, &f->id, &f->b, f->frames, f->raw_len, wire,
				    batch_max_wire(f->raw_len), &len, hash), BATCH_OK);
	assert_int_equal(verify(f, wire, len, &h), BATCH_E_SIGNATURE);
	free(wire);
}

/*
 * The stream is signed with the rest. A version 1 batch (a processor of before: a 176-byte header without
 * a stream) verifies and opens, its stream 0; a header whose version and length disagree is refused.
 */
static void streams_are_signed_and_version_1_batches_are_stream_0(void **state)
{
	struct fixture *f = *state;
	size_t body = f->wire_len - sizeof(struct batch_header) - BATCH_SIG_LEN;
	size_t len = BATCH_HEADER_V1_LEN + body + BATCH_SIG_LEN, raw_len = 0;
	uint8_t *v1 = malloc(len), *wire = malloc(batch_max_wire(f->raw_len)), *raw = NULL;
	struct batch_build b = f->b;
	struct batch_header h;
	size_t wire_len;
	uint8_t hash[BATCH_HASH_LEN];

	b.stream = 0x1234567890abcdefULL;
	assert_int_equal(batch_seal(&f->ring.key, &f->id, &b, f->frames, f->raw_len, wire, batch_max_wire(f->raw_len),
				    &wire_len, hash), BATCH_OK);
	assert_int_equal(verify(f, wire, wire_len, &h), BATCH_OK);
	assert_int_equal(h.version, 2);
	assert_int_equal(h.header_len, 184);
	assert_int_equal(h.stream, 0x1234567890abcdefULL);
	wire[BATCH_HEADER_V1_LEN] ^= 1;
	assert_int_equal(verify(f, wire, wire_len, &h), BATCH_E_SIGNATURE);

	memcpy(&h, f->wire, sizeof(h));
	h.version = 1;
	h.header_len = BATCH_HEADER_V1_LEN;
	memcpy(v1, &h, BATCH_HEADER_V1_LEN);
	memcpy(v1 + BATCH_HEADER_V1_LEN, f->wire + sizeof(h), body);
	crypto_sign_detached(v1 + BATCH_HEADER_V1_LEN + body, NULL, v1, BATCH_HEADER_V1_LEN + body,
			     f->ring.key.secret_key);
	memset(&h, 0x5a, sizeof(h));
	assert_int_equal(verify(f, v1, len, &h), BATCH_OK);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.stream, 0);
	assert_int_equal(h.batch_seq, 7);
	assert_int_equal(batch_open(v1, len, &h, &raw, &raw_len), BATCH_OK);
	assert_int_equal(raw_len, f->raw_len);
	assert_memory_equal(raw, f->frames, raw_len);
	free(raw);
	/* version 1 with version 2's length, and version 2 with version 1's */
	h.header_len = sizeof(h);
	memcpy(v1, &h, BATCH_HEADER_V1_LEN);
	assert_int_equal(verify(f, v1, len, &h), BATCH_E_VERSION);
	memcpy(&h, f->wire, sizeof(h));
	h.header_len = BATCH_HEADER_V1_LEN;
	memcpy(wire, &h, sizeof(h));
	assert_int_equal(verify(f, wire, f->wire_len, &h), BATCH_E_VERSION);
	free(v1);
	free(wire);
}

static void lengths_that_lie_are_refused_before_the_key(void **state)
{
	struct fixture *f = *state;
	uint8_t *copy = malloc(f->wire_len + 8);
	struct batch_header h;

	assert_int_equal(verify(f, f->wire, 10, &h), BATCH_E_SHORT);
	assert_int_equal(verify(f, f->wire, f->wire_len - 1, &h), BATCH_E_LENGTH);
	memcpy(copy, f->wire, f->wire_len);
	memset(copy + f->wire_len, 0, 8);
	assert_int_equal(verify(f, copy, f->wire_len + 8, &h), BATCH_E_LENGTH);
	memcpy(&h, copy, sizeof(h));
	h.body_len = 0xffffffffu;
	memcpy(copy, &h, sizeof(h));
	assert_int_equal(verify(f, copy, f->wire_len, &h), BATCH_E_LENGTH);
	memcpy(copy, f->wire, f->wire_len);
	memcpy(copy, "NOTBATCH", 8);
	assert_int_equal(verify(f, copy, f->wire_len, &h), BATCH_E_MAGIC);
	memcpy(copy, f->wire, f->wire_len);
	copy[8] = 9; /* version */
	assert_int_equal(verify(f, copy, f->wire_len, &h), BATCH_E_VERSION);
	assert_int_equal(verify(f, f->wire, (size_t)BATCH_MAX_WIRE + 1, &h), BATCH_E_TOO_BIG);
	free(copy);
}

/* Seal whatever frames we are given (the signer is trusted, its framing is not) and open them. */
static int seal_and_open(struct fixture *f, const uint8_t *frames, size_t raw_len, uint64_t first, uint64_t last,
			 uint32_t n)
{
	struct batch_build b = f->b;
	struct batch_header h;
	uint8_t *wire = malloc(batch_max_wire(raw_len)), hash[BATCH_HASH_LEN], *out = NULL;
	size_t len, out_len;
	int rc;

	b.first_seq = first;
	b.last_seq = last;
	b.nrecords = n;
	assert_int_equal(batch_seal(&f->ring.key, &f->id, &b, frames, raw_len, wire, batch_max_wire(raw_len), &len,
				    hash), BATCH_OK);
	assert_int_equal(verify(f, wire, len, &h), BATCH_OK);
	rc = batch_open(wire, len, &h, &out, &out_len);
	free(out);
	free(wire);
	return rc;
}

static void signed_but_malformed_frames_are_refused_when_opened(void **state)
{
	struct fixture *f = *state;
	uint8_t *bad = malloc(f->raw_len);
	struct tr_frame fr;

	/* A payload byte changed after its crc was computed. */
	memcpy(bad, f->frames, f->raw_len);
	bad[TR_FRAME_HDR + 3] ^= 1;
	assert_int_equal(seal_and_open(f, bad, f->raw_len, 100, 299, 200), BATCH_E_FRAME);
	/* A length running past the end. */
	memcpy(bad, f->frames, f->raw_len);
	memcpy(&fr, bad, sizeof(fr));
	fr.len = (uint32_t)f->raw_len;
	memcpy(bad, &fr, sizeof(fr));
	assert_int_equal(seal_and_open(f, bad, f->raw_len, 100, 299, 200), BATCH_E_FRAME);
	/* The count or range in the header disagrees with the frames. */
	assert_int_equal(seal_and_open(f, f->frames, f->raw_len, 100, 299, 199), BATCH_E_COUNT);
	assert_int_equal(seal_and_open(f, f->frames, f->raw_len, 100, 300, 200), BATCH_E_COUNT);
	assert_int_equal(seal_and_open(f, f->frames, f->raw_len, 101, 299, 200), BATCH_E_FRAME);
	assert_int_equal(seal_and_open(f, f->frames, f->raw_len, 99, 299, 200), BATCH_E_COUNT);
	/* A torn last frame. */
	assert_int_equal(seal_and_open(f, f->frames, f->raw_len - 8, 100, 299, 200), BATCH_E_FRAME);
	free(bad);
}

static void seqs_must_increase(void **state)
{
	struct fixture *f = *state;
	uint8_t frames[4096];
	size_t a = make_frames(frames, sizeof(frames), 5, 1), b;

	b = make_frames(frames + a, sizeof(frames) - a, 5, 1); /* the same seq again */
	assert_int_equal(seal_and_open(f, frames, a + b, 5, 5, 2), BATCH_E_FRAME);
	/* A gap inside the range is allowed (evicted records), an increase is what counts. */
	b = make_frames(frames + a, sizeof(frames) - a, 9, 1);
	assert_int_equal(seal_and_open(f, frames, a + b, 5, 9, 2), BATCH_OK);
}

static void key_file_roundtrips_and_is_private(void **state)
{
	struct fixture *f = *state;
	char dir[] = "/tmp/tracer-test-batch.XXXXXX", path[64], err[256];
	struct batch_secret_key k;
	struct stat st;

	(void)f;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/key", dir);
	assert_int_equal(batch_key_write(path, &f->ring.key), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(batch_key_read(path, &k, err, sizeof(err)), 0);
	assert_memory_equal(&k, &f->ring.key, sizeof(k));
	/* Never overwritten. */
	assert_int_equal(batch_key_write(path, &f->ring.key), -EEXIST);
	/* Readable by others: refused, with what to do. */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(batch_key_read(path, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "chmod 600"));
	unlink(path);
	rmdir(dir);
}

static void damaged_key_file_is_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"tracer-secret-key-v1\n",
		"tracer-public-key-v1 0011223344556677 AAAA\n",
		"tracer-secret-key-v1 00112233445566 AAAA\n",
		"tracer-secret-key-v1 0011223344556677 not-base64!\n",
		"tracer-secret-key-v1 0011223344556677 AAAA extra\n",
	};
	char dir[] = "/tmp/tracer-test-batch.XXXXXX", path[64], err[256], line[256], b64[128];
	struct fixture *f = *state;
	struct batch_secret_key k;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/key", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, bad[i], strlen(bad[i])), (ssize_t)strlen(bad[i]));
		close(fd);
		err[0] = 0;
		assert_int_equal(batch_key_read(path, &k, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, path));
	}
	/* A valid key under another key's id. */
	sodium_bin2base64(b64, sizeof(b64), f->ring.key.secret_key, 64, sodium_base64_VARIANT_ORIGINAL);
	snprintf(line, sizeof(line), "tracer-secret-key-v1 0011223344556677 %s\n", b64);
	{
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
		close(fd);
	}
	assert_int_equal(batch_key_read(path, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "key id"));
	unlink(path);
	rmdir(dir);
}

/* The key file's text (its one line), as batch_key_write wrote it. */
static size_t key_text(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, cap);
	close(fd);
	assert_true(n > 0 && (size_t)n < cap);
	return (size_t)n;
}

static void put_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void key_file_too_large_a_fifo_or_a_symlink_is_refused(void **state)
{
	static char text[READ_MAX_BATCH_KEY + 1];
	struct fixture *f = *state;
	char dir[] = "/tmp/tracer-test-batch.XXXXXX", path[64], link[64], err[256];
	struct batch_secret_key k;
	size_t len;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/key", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(batch_key_write(path, &f->ring.key), 0);
	/* The key line, then comment bytes up to the bound: read; one byte more: refused, and why. */
	len = key_text(path, text, sizeof(text));
	memset(text + len, '#', sizeof(text) - len);
	put_file(path, text, READ_MAX_BATCH_KEY);
	assert_int_equal(batch_key_read(path, &k, err, sizeof(err)), 0);
	assert_memory_equal(&k, &f->ring.key, sizeof(k));
	put_file(path, text, READ_MAX_BATCH_KEY + 1);
	err[0] = 0;
	assert_int_equal(batch_key_read(path, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "too large"));
	/* A symlink to a good key is not followed (O_NOFOLLOW). */
	put_file(path, text, len);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(batch_key_read(link, &k, err, sizeof(err)), -ELOOP);
	unlink(link);
	/* A FIFO with no writer: refused at once, not waited on. */
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	err[0] = 0;
	assert_int_equal(batch_key_read(path, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(path);
	assert_int_equal(batch_key_read(path, &k, err, sizeof(err)), -ENOENT);
	rmdir(dir);
}

static void id_files_are_32_hex_digits_of_at_most_their_bound(void **state)
{
	static const uint8_t want[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
					  0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	static char text[READ_MAX_ID_FILE + 1];
	char dir[] = "/tmp/tracer-test-batch.XXXXXX", path[64];
	uint8_t id[16];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/id", dir);
	put_file(path, "0123456789abcdef0123456789abcdef\n", 33);
	assert_int_equal(batch_read_id_file(path, id), 0);
	assert_memory_equal(id, want, 16);
	put_file(path, "01234567-89ab-cdef-0123-456789abcdef\n", 37);
	assert_int_equal(batch_read_id_file(path, id), 0);
	assert_memory_equal(id, want, 16);
	/* At the bound, the id then blank padding after its newline; one byte more: refused. */
	memset(text, ' ', sizeof(text));
	memcpy(text, "0123456789abcdef0123456789abcdef\n", 33);
	put_file(path, text, READ_MAX_ID_FILE);
	assert_int_equal(batch_read_id_file(path, id), 0);
	put_file(path, text, READ_MAX_ID_FILE + 1);
	assert_int_equal(batch_read_id_file(path, id), -EFBIG);
	put_file(path, "0123456789abcdef0123456789abcde\n", 32);
	assert_int_equal(batch_read_id_file(path, id), -EINVAL);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(batch_read_id_file(path, id), -EINVAL);
	unlink(path);
	assert_int_equal(batch_read_id_file(path, id), -ENOENT);
	assert_int_equal(batch_read_id_file(BATCH_BOOT_ID_PATH, id), 0); /* procfs: st_size 0, read all the same */
	rmdir(dir);
}

static void public_line_names_key_and_host(void **state)
{
	struct fixture *f = *state;
	char line[256], id[17];

	sodium_bin2hex(id, sizeof(id), f->ring.key.key_id, 8);
	assert_int_equal(batch_public_line(&f->ring.key, f->id.host_id, line, sizeof(line)), 0);
	assert_int_equal(strncmp(line, "tracer-public-key-v1 ", 21), 0);
	assert_non_null(strstr(line, id));
	assert_non_null(strstr(line, " abababababababababababababababab"));
	assert_int_equal(batch_public_line(&f->ring.key, f->id.host_id, line, 20), -ENOSPC);
}

static void every_error_has_a_name(void **state)
{
	(void)state;
	for (int e = BATCH_OK; e >= BATCH_E_INTERNAL; e--)
		assert_string_not_equal(batch_strerror(e), "unknown batch error");
	assert_string_equal(batch_strerror(-99), "unknown batch error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sealed_batch_verifies_and_opens_to_its_frames),
		cmocka_unit_test(uncompressed_batch_roundtrips),
		cmocka_unit_test(any_flipped_bit_is_refused),
		cmocka_unit_test(tampered_body_fails_the_signature),
		cmocka_unit_test(unknown_key_is_refused),
		cmocka_unit_test(key_bound_to_another_host_is_refused),
		cmocka_unit_test(signature_by_another_key_is_refused),
		cmocka_unit_test(streams_are_signed_and_version_1_batches_are_stream_0),
		cmocka_unit_test(lengths_that_lie_are_refused_before_the_key),
		cmocka_unit_test(signed_but_malformed_frames_are_refused_when_opened),
		cmocka_unit_test(seqs_must_increase),
		cmocka_unit_test(key_file_roundtrips_and_is_private),
		cmocka_unit_test(damaged_key_file_is_refused),
		cmocka_unit_test(key_file_too_large_a_fifo_or_a_symlink_is_refused),
		cmocka_unit_test(id_files_are_32_hex_digits_of_at_most_their_bound),
		cmocka_unit_test(public_line_names_key_and_host),
		cmocka_unit_test(every_error_has_a_name),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
