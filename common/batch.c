/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Signed batches and their keys: see batch.h and include/batch_format.h.
 *
 * The order of checks in batch_verify is the point of this file: lengths
 * first (nothing is read outside the bytes received), then the key, then
 * the signature, then the digest. Nothing is decompressed or decoded until
 * batch_open, which the ingest calls only on a verified batch, and which
 * checks every frame again on its own (it must not trust the signer to
 * have framed correctly either).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>
#include <zlib.h>

#include "batch.h"
#include "readfile.h"

#define SECRET_TAG "tracer-secret-key-v1"
#define PUBLIC_TAG "tracer-public-key-v1"
#define ZLIB_LEVEL 1 /* records compress ~4x at level 1; higher levels cost CPU for little */

_Static_assert(crypto_sign_BYTES == BATCH_SIG_LEN, "Ed25519 signature size");
_Static_assert(crypto_sign_PUBLICKEYBYTES == BATCH_PUBKEY_LEN, "Ed25519 public key size");
_Static_assert(crypto_sign_SECRETKEYBYTES == 64, "Ed25519 secret key size");

const char *batch_strerror(int err)
{
	switch (err) {
	case BATCH_OK: return "ok";
	case BATCH_E_SHORT: return "shorter than a batch header and signature";
	case BATCH_E_MAGIC: return "not a tracer batch (bad magic)";
	case BATCH_E_VERSION: return "unknown batch version or header length";
	case BATCH_E_LENGTH: return "lengths in the header do not match the bytes received";
	case BATCH_E_TOO_BIG: return "batch larger than allowed";
	case BATCH_E_UNKNOWN_KEY: return "signing key not enrolled";
	case BATCH_E_WRONG_HOST: return "signing key enrolled for another host";
	case BATCH_E_SIGNATURE: return "bad signature";
	case BATCH_E_DIGEST: return "body digest does not match the body";
	case BATCH_E_COMPRESSION: return "unknown compression or body does not inflate to its stated length";
	case BATCH_E_FRAME: return "malformed record frame";
	case BATCH_E_COUNT: return "record count or sequence range does not match the frames";
	case BATCH_E_NOMEM: return "out of memory";
	case BATCH_E_INTERNAL: return "internal error in the crypto or compression library";
	default: return "unknown batch error";
	}
}

int batch_crypto_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

uint32_t frame_crc(const struct tr_frame *f, const void *payload)
{
	uLong c = crc32(0L, (const Bytef *)f, TR_FRAME_CRC_SPAN);

	return (uint32_t)crc32(c, (const Bytef *)payload, f->len);
}

/* ---- keys ---------------------------------------------------------- */

void batch_key_id(const uint8_t public_key[BATCH_PUBKEY_LEN], uint8_t key_id[BATCH_KEY_ID_LEN])
{
	uint8_t h[BATCH_HASH_LEN];

	crypto_generichash(h, sizeof(h), public_key, BATCH_PUBKEY_LEN, NULL, 0);
	memcpy(key_id, h, BATCH_KEY_ID_LEN);
}

void batch_key_generate(struct batch_secret_key *k)
{
	crypto_sign_keypair(k->public_key, k->secret_key);
	batch_key_id(k->public_key, k->key_id);
}

void batch_key_wipe(struct batch_secret_key *k)
{
	sodium_memzero(k, sizeof(*k));
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int batch_key_write(const char *path, const struct batch_secret_key *k)
{
	char id[BATCH_KEY_ID_LEN * 2 + 1];
	char b64[sodium_base64_ENCODED_LEN(64, sodium_base64_VARIANT_ORIGINAL)];
	char line[sizeof(SECRET_TAG) + sizeof(id) + sizeof(b64) + 4];
	int fd, err, n;

	sodium_bin2hex(id, sizeof(id), k->key_id, sizeof(k->key_id));
	sodium_bin2base64(b64, sizeof(b64), k->secret_key, sizeof(k->secret_key), sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(line, sizeof(line), "%s %s %s\n", SECRET_TAG, id, b64);
	sodium_memzero(b64, sizeof(b64));
	/* O_EXCL: never replace a key someone may still need; 0600 from the start, no window. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		sodium_memzero(line, sizeof(line));
		return -errno;
	}
	err = write_all(fd, line, (size_t)n);
	sodium_memzero(line, sizeof(line));
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (err)
		unlink(path);
	return err;
}

static int key_error(char *err, size_t errlen, const char *path, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", path, what);
	return -EINVAL;
}

/* Split "TAG HEX B64" (NUL-terminated, no newline) into its three words. */
static int split3(char *line, char **w)
{
	char *save = NULL;

	for (int i = 0; i < 3; i++) {
		w[i] = strtok_r(i ? NULL : line, " \t", &save);
		if (!w[i])
			return -1;
	}
	return strtok_r(NULL, " \t", &save) ? -1 : 0;
}

static int parse_secret_line(char *text, const char *path, struct batch_secret_key *k, char *err, size_t errlen)
{
	char *w[3], *nl = strchr(text, '\n');
	uint8_t pk[BATCH_PUBKEY_LEN], id[BATCH_KEY_ID_LEN];
	size_t n;

	if (nl)
		*nl = 0;
	if (split3(text, w) || strcmp(w[0], SECRET_TAG))
		return key_error(err, errlen, path, "not a tracer secret key (want \"" SECRET_TAG " KEYID KEY\"; "
						   "make one with 'tracer keygen')");
	if (sodium_hex2bin(k->key_id, sizeof(k->key_id), w[1], strlen(w[1]), NULL, &n, NULL) || n != sizeof(k->key_id) ||
	    strlen(w[1]) != 2 * sizeof(k->key_id))
		return key_error(err, errlen, path, "the key id is not 16 hex digits");
	if (sodium_base642bin(k->secret_key, sizeof(k->secret_key), w[2], strlen(w[2]), NULL, &n, NULL,
			      sodium_base64_VARIANT_ORIGINAL) ||
	    n != sizeof(k->secret_key))
		return key_error(err, errlen, path, "the key is not 64 bytes of base64");
	crypto_sign_ed25519_sk_to_pk(pk, k->secret_key);
	memcpy(k->public_key, pk, sizeof(pk));
	batch_key_id(pk, id);
	if (memcmp(id, k->key_id, sizeof(id)))
		return key_error(err, errlen, path, "the key id does not belong to this key (file damaged?)");
	return 0;
}

int batch_key_read(const char *path, struct batch_secret_key *k, char *err, size_t errlen)
{
	char text[READ_MAX_BATCH_KEY + 1];
	struct stat st;
	ssize_t n = read_file_bounded(AT_FDCWD, path, O_NOFOLLOW, text, READ_MAX_BATCH_KEY, &st);
	int rc;

	if (n == -EINVAL)
		rc = key_error(err, errlen, path, "not a regular file");
	else if (n == -EFBIG)
		rc = key_error(err, errlen, path, "too large for a key file (one line): not a tracer secret key "
						  "(make one with 'tracer keygen')");
	else if (n < 0)
		rc = (int)n;
	else if (st.st_mode & 077)
		rc = key_error(err, errlen, path, "readable by group or others: chmod 600 it "
						  "(and consider the key exposed)");
	else
		rc = parse_secret_line(text, path, k, err, errlen);
	sodium_memzero(text, sizeof(text)); /* on every path: a refused file may still hold a key */
	if (rc)
		batch_key_wipe(k);
	return rc;
}

int batch_public_line(const struct batch_secret_key *k, const uint8_t *host_id, char *out, size_t outlen)
{
	char id[BATCH_KEY_ID_LEN * 2 + 1], host[BATCH_HOST_ID_LEN * 2 + 2] = "";
	char b64[sodium_base64_ENCODED_LEN(BATCH_PUBKEY_LEN, sodium_base64_VARIANT_ORIGINAL)];
	int n;

	sodium_bin2hex(id, sizeof(id), k->key_id, sizeof(k->key_id));
	sodium_bin2base64(b64, sizeof(b64), k->public_key, sizeof(k->public_key), sodium_base64_VARIANT_ORIGINAL);
	if (host_id) {
		host[0] = ' ';
		sodium_bin2hex(host + 1, sizeof(host) - 1, host_id, BATCH_HOST_ID_LEN);
	}
	n = snprintf(out, outlen, "%s %s %s%s", PUBLIC_TAG, id, b64, host);
	return n < 0 || (size_t)n >= outlen ? -ENOSPC : 0;
}

/* ---- building ------------------------------------------------------ */

size_t batch_max_wire(size_t raw_len)
{
	return sizeof(struct batch_header) + compressBound((uLong)raw_len) + BATCH_SIG_LEN;
}

static int compress_body(int method, const void *frames, size_t raw_len, uint8_t *body, size_t cap, size_t *len)
{
	uLongf n = (uLongf)cap;

	if (method == BATCH_COMP_NONE) {
		if (raw_len > cap)
			return BATCH_E_TOO_BIG;
		memcpy(body, frames, raw_len);
		*len = raw_len;
		return BATCH_OK;
	}
	if (method != BATCH_COMP_ZLIB)
		return BATCH_E_COMPRESSION;
	if (compress2(body, &n, (const Bytef *)frames, (uLong)raw_len, ZLIB_LEVEL) != Z_OK)
		return BATCH_E_TOO_BIG;
	*len = n;
	return BATCH_OK;
}

int batch_seal(const struct batch_secret_key *k, const struct batch_identity *id, const struct batch_build *b,
	       const void *frames, size_t raw_len, void *out, size_t outcap, size_t *outlen,
	       uint8_t hash[BATCH_HASH_LEN])
{
	struct batch_header h;
	uint8_t *w = out;
	size_t body_len;
	int rc;

	if (raw_len > BATCH_MAX_RAW || outcap < sizeof(h) + BATCH_SIG_LEN)
		return BATCH_E_TOO_BIG;
	rc = compress_body(b->compression, frames, raw_len, w + sizeof(h), outcap - sizeof(h) - BATCH_SIG_LEN,
			   &body_len);
	if (rc)
		return rc;
	if (sizeof(h) + body_len + BATCH_SIG_LEN > BATCH_MAX_WIRE)
		return BATCH_E_TOO_BIG;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, BATCH_MAGIC, sizeof(h.magic));
	h.version = BATCH_VERSION;
	h.compression = (uint16_t)b->compression;
	h.header_len = sizeof(h);
	memcpy(h.host_id, id->host_id, sizeof(h.host_id));
	memcpy(h.key_id, k->key_id, sizeof(h.key_id));
	memcpy(h.boot_id, id->boot_id, sizeof(h.boot_id));
	h.batch_seq = b->batch_seq;
	h.first_seq = b->first_seq;
	h.last_seq = b->last_seq;
	h.nrecords = b->nrecords;
	h.body_len = (uint32_t)body_len;
	h.raw_len = (uint32_t)raw_len;
	h.created_ns = b->created_ns;
	h.mono_to_real_ns = b->mono_to_real_ns;
	h.stream = b->stream;
	memcpy(h.prev_hash, b->prev_hash, sizeof(h.prev_hash));
	crypto_generichash(h.body_digest, sizeof(h.body_digest), w + sizeof(h), body_len, NULL, 0);
	memcpy(w, &h, sizeof(h));
	if (crypto_sign_detached(w + sizeof(h) + body_len, NULL, w, sizeof(h) + body_len, k->secret_key))
		return BATCH_E_INTERNAL;
	*outlen = sizeof(h) + body_len + BATCH_SIG_LEN;
	crypto_generichash(hash, BATCH_HASH_LEN, w, *outlen, NULL, 0);
	return BATCH_OK;
}

/* ---- verifying ----------------------------------------------------- */

/* Lengths only: after this, header, body and signature lie within the bytes received. */
static int check_lengths(const void *wire, size_t len, struct batch_header *h)
{
	if (len > BATCH_MAX_WIRE)
		return BATCH_E_TOO_BIG;
	if (len < BATCH_HEADER_V1_LEN + BATCH_SIG_LEN)
		return BATCH_E_SHORT;
	memset(h, 0, sizeof(*h));
	memcpy(h, wire, BATCH_HEADER_V1_LEN);
	if (memcmp(h->magic, BATCH_MAGIC, sizeof(h->magic)))
		return BATCH_E_MAGIC;
	if (!(h->version == 1 && h->header_len == BATCH_HEADER_V1_LEN) &&
	    !(h->version == BATCH_VERSION && h->header_len == sizeof(*h)))
		return BATCH_E_VERSION;
	if (len < (uint64_t)h->header_len + BATCH_SIG_LEN)
		return BATCH_E_SHORT;
	memcpy(h, wire, h->header_len); /* a version 1 header leaves stream 0 */
	if ((uint64_t)h->header_len + h->body_len + BATCH_SIG_LEN != len)
		return BATCH_E_LENGTH;
	if (h->raw_len > BATCH_MAX_RAW)
		return BATCH_E_TOO_BIG;
	return BATCH_OK;
}

int batch_verify(const void *wire, size_t len, batch_key_lookup_fn lookup, void *ctx, struct batch_header *hdr,
		 uint8_t hash[BATCH_HASH_LEN])
{
	static const uint8_t any_host[BATCH_HOST_ID_LEN];
	uint8_t pk[BATCH_PUBKEY_LEN], bound[BATCH_HOST_ID_LEN], digest[BATCH_HASH_LEN];
	const uint8_t *w = wire;
	struct batch_header h;
	size_t signed_len;
	int rc = check_lengths(wire, len, &h);

	if (rc)
		return rc;
	if (lookup(ctx, h.key_id, pk, bound))
		return BATCH_E_UNKNOWN_KEY;
	if (memcmp(bound, any_host, sizeof(bound)) && memcmp(bound, h.host_id, sizeof(bound)))
		return BATCH_E_WRONG_HOST;
	signed_len = (size_t)h.header_len + h.body_len;
	if (crypto_sign_verify_detached(w + signed_len, w, signed_len, pk))
		return BATCH_E_SIGNATURE;
	crypto_generichash(digest, sizeof(digest), w + h.header_len, h.body_len, NULL, 0);
	if (sodium_memcmp(digest, h.body_digest, sizeof(digest)))
		return BATCH_E_DIGEST;
	*hdr = h;
	crypto_generichash(hash, BATCH_HASH_LEN, w, len, NULL, 0);
	return BATCH_OK;
}

/* ---- opening ------------------------------------------------------- */

static int inflate_body(const struct batch_header *h, const uint8_t *body, uint8_t *raw)
{
	uLongf n = h->raw_len;

	switch (h->compression) {
	case BATCH_COMP_NONE:
		if (h->body_len != h->raw_len)
			return BATCH_E_COMPRESSION;
		memcpy(raw, body, h->raw_len);
		return BATCH_OK;
	case BATCH_COMP_ZLIB:
		/* Exactly raw_len: a body that inflates to more or less is refused. */
		if (uncompress(raw, &n, body, h->body_len) != Z_OK || n != h->raw_len)
			return BATCH_E_COMPRESSION;
		return BATCH_OK;
	default:
		return BATCH_E_COMPRESSION;
	}
}

/* Every frame within the buffer, its crc right, seqs increasing within the header's range. */
static int check_frames(const struct batch_header *h, const uint8_t *raw, size_t raw_len)
{
	uint64_t prev = 0;
	uint32_t count = 0;
	size_t off = 0;

	while (off < raw_len) {
		struct tr_frame f;

		if (raw_len - off < TR_FRAME_HDR)
			return BATCH_E_FRAME;
		memcpy(&f, raw + off, sizeof(f));
		if (f.len > TR_FRAME_MAX_PAYLOAD || TR_FRAME_SIZE(f.len) > raw_len - off)
			return BATCH_E_FRAME;
		if (frame_crc(&f, raw + off + TR_FRAME_HDR) != f.crc)
			return BATCH_E_FRAME;
		if (f.seq <= prev || f.seq < h->first_seq || f.seq > h->last_seq)
			return BATCH_E_FRAME;
		if (count == 0 && f.seq != h->first_seq)
			return BATCH_E_COUNT;
		prev = f.seq;
		count++;
		off += TR_FRAME_SIZE(f.len);
	}
	if (count == 0 || count != h->nrecords || prev != h->last_seq)
		return BATCH_E_COUNT;
	return BATCH_OK;
}

int batch_open(const void *wire, size_t len, const struct batch_header *hdr, uint8_t **frames, size_t *raw_len)
{
	const uint8_t *body = (const uint8_t *)wire + hdr->header_len;
	uint8_t *raw;
	int rc;

	if ((uint64_t)hdr->header_len + hdr->body_len + BATCH_SIG_LEN != len || hdr->raw_len > BATCH_MAX_RAW)
		return BATCH_E_LENGTH;
	if (hdr->raw_len == 0)
		return BATCH_E_COUNT;
	raw = malloc(hdr->raw_len);
	if (!raw)
		return BATCH_E_NOMEM;
	rc = inflate_body(hdr, body, raw);
	if (!rc)
		rc = check_frames(hdr, raw, hdr->raw_len);
	if (rc) {
		free(raw);
		return rc;
	}
	*frames = raw;
	*raw_len = hdr->raw_len;
	return BATCH_OK;
}

const struct tr_frame *batch_next_frame(const uint8_t *frames, size_t raw_len, size_t *off)
{
	const struct tr_frame *f;

	if (*off >= raw_len || raw_len - *off < TR_FRAME_HDR)
		return NULL;
	f = (const struct tr_frame *)(const void *)(frames + *off);
	*off += TR_FRAME_SIZE(f->len);
	return f;
}

/* ---- host and boot ids --------------------------------------------- */

int batch_read_id_file(const char *path, uint8_t id[16])
{
	char text[READ_MAX_ID_FILE + 1], hex[33];
	size_t n = 0, bin_len;
	ssize_t got = read_file_bounded(AT_FDCWD, path, 0, text, READ_MAX_ID_FILE, NULL);

	if (got < 0)
		return (int)got;
	for (ssize_t i = 0; i < got && text[i] != '\n'; i++) {
		if (text[i] == '-')
			continue; /* boot_id is a UUID with dashes; machine-id has none */
		if (n == 32)
			return -EINVAL;
		hex[n++] = text[i];
	}
	hex[n] = 0;
	if (n != 32 || sodium_hex2bin(id, 16, hex, n, NULL, &bin_len, NULL) || bin_len != 16)
		return -EINVAL;
	return 0;
}
