/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Delivery: see deliver.h.
 *
 * Checkpoints. After a drain the loop calls deliver_mark(pos): every
 * record before ring position pos is in the spool with a seq <= the last
 * one appended. The checkpoint (seq, pos) is kept until the spool's
 * durable_seq reaches seq; then pos may be released. Checkpoints are a
 * bounded FIFO: when it is full the newest is moved forward instead of
 * adding one, which only delays a release (never releases early).
 */
#include "deliver.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "lake.h"
#include "lakeout.h"

#define CHECKPOINTS 1024
#define APPEND_WAIT_MS 10

struct checkpoint {
	uint64_t seq, pos;
};

struct deliver {
	struct spool *spool;
	struct uploader *up;
	struct batch_secret_key key;
	struct batch_secret_key next_key; /* signing_key_next, when a rotation is under way */
	char rotated_marker[PATH_MAX];    /* spool/rotated-KEYID: the lake has the next key's announcement */
	struct batch_identity id;
	struct checkpoint cp[CHECKPOINTS];
	unsigned cp_head, cp_count;
	uint64_t last_seq;          /* last appended */
	uint64_t released_pos;
	bool resume_known;
	uint32_t resume_gen;
	uint64_t resume_pos;
	uint64_t evicted_told, evicted_bytes_told, quarantined_told; /* losses already sent to the lake */
	struct deliver_stats st;
	uint8_t out[LAKEOUT_MAX];
};

static int read_key(const char *path, struct batch_secret_key *k)
{
	char err[PATH_MAX + 128];
	int rc = batch_key_read(path, k, err, sizeof(err));

	if (rc == -EINVAL)
		fprintf(stderr, "<3>signing key: %s\n", err);
	else if (rc)
		fprintf(stderr, "<3>cannot read the signing key %s: %s (make one with 'tracer keygen --out %s' and "
				"enrol its public line at the ingest)\n", path, strerror(-rc), path);
	return rc;
}

/* The uploader has switched to the next key: remember it, so that a restart signs with it at once. */
static void rotated(void *ctx)
{
	struct deliver *d = ctx;
	int fd = open(d->rotated_marker, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || fsync(fd))
		fprintf(stderr, "<4>cannot write %s: %s (after a restart the new key is announced again)\n",
			d->rotated_marker, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * Rotation: announce signing_key_next in the spool (the batch carrying it
 * is signed with the current key), switch once the lake has it. Already
 * switched before a restart (the marker exists): sign with the next key.
 */
static int start_rotation(struct deliver *d, const struct deliver_options *o)
{
	char hex[BATCH_KEY_ID_LEN * 2 + 1];
	struct tl_key_announce a;
	uint64_t seq;
	int rc = read_key(o->next_key_path, &d->next_key);

	if (rc)
		return rc;
	sodium_bin2hex(hex, sizeof(hex), d->next_key.key_id, sizeof(d->next_key.key_id));
	snprintf(d->rotated_marker, sizeof(d->rotated_marker), "%s/rotated-%s", o->spool.dir, hex);
	if (access(d->rotated_marker, F_OK) == 0) {
		d->key = d->next_key; /* the lake has known it since before this start */
		return 0;
	}
	memset(&a, 0, sizeof(a));
	memcpy(a.new_key_id, d->next_key.key_id, sizeof(a.new_key_id));
	memcpy(a.new_public_key, d->next_key.public_key, sizeof(a.new_public_key));
	a.announced_ns = real_ns();
	rc = spool_append(d->spool, TL_KEY_ANNOUNCE, 0, 0, 0, &a, sizeof(a), &seq);
	if (rc == -EAGAIN) {
		rc = spool_sync(d->spool);
		if (!rc)
			rc = spool_append(d->spool, TL_KEY_ANNOUNCE, 0, 0, 0, &a, sizeof(a), &seq);
	}
	if (rc)
		return rc;
	d->last_seq = seq;
	upload_rotate(d->up, &d->next_key, seq, rotated, d);
	fprintf(stderr, "<5>announcing the next signing key %s (record %llu); it is used once the lake has it\n", hex,
		(unsigned long long)seq);
	return 0;
}

int deliver_open(struct deliver **out, const struct deliver_options *o)
{
	struct deliver *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return -ENOMEM;
	d->id = o->id;
	if (o->upload && (rc = read_key(o->key_path, &d->key)) != 0) {
		free(d);
		return rc;
	}
	rc = spool_open(&d->spool, &o->spool);
	if (rc) {
		deliver_close(d);
		return rc;
	}
	d->resume_known = spool_last_source(d->spool, &d->resume_gen, &d->resume_pos) == 1;
	{
		struct spool_stats ss;

		spool_get_stats(d->spool, &ss);
		d->evicted_told = ss.ledger.evicted_records; /* told by the processor that counted them */
		d->evicted_bytes_told = ss.ledger.evicted_bytes;
		d->quarantined_told = ss.ledger.quarantined_records;
	}
	d->last_seq = spool_durable_seq(d->spool);
	if (o->upload) {
		rc = upload_open(&d->up, &o->up, d->spool, &d->key, &d->id, o->seed);
		if (!rc && o->next_key_path && o->next_key_path[0])
			rc = start_rotation(d, o);
		if (rc) {
			deliver_close(d);
			return rc;
		}
	}
	*out = d;
	return 0;
}

void deliver_close(struct deliver *d)
{
	if (!d)
		return;
	upload_close(d->up);
	spool_close(d->spool); /* waits for writes in flight and fsyncs */
	batch_key_wipe(&d->key);
	batch_key_wipe(&d->next_key);
	free(d);
}

bool deliver_resume_point(const struct deliver *d, uint32_t *gen, uint64_t *pos)
{
	*gen = d->resume_gen;
	*pos = d->resume_pos;
	return d->resume_known;
}

/* Append, waiting for a write buffer when all are in flight (the ring buffers meanwhile). */
static int append(struct deliver *d, uint16_t type, uint16_t flags, uint32_t gen, uint64_t pos, const void *p,
		  uint32_t len)
{
	for (;;) {
		int rc = spool_append(d->spool, type, flags, gen, pos, p, len, &d->last_seq);

		if (rc != -EAGAIN) {
			d->st.records_spooled += rc == 0;
			return rc;
		}
		d->st.append_waits++;
		rc = spool_poll(d->spool, mono_ns());
		if (rc)
			return rc;
		poll(&(struct pollfd){ .fd = spool_event_fd(d->spool), .events = POLLIN }, 1, APPEND_WAIT_MS);
	}
}

int deliver_kernel_record(struct deliver *d, const struct redact_rules *r, const struct decoded *dec, uint32_t len,
			  uint32_t gen, uint64_t pos)
{
	uint32_t outlen;
	uint16_t flags;
	unsigned n;
	int rc;

	if (d->resume_known && gen == d->resume_gen && pos <= d->resume_pos) {
		d->st.records_skipped++; /* spooled before a restart; the ring kept it because it was not released */
		return 0;
	}
	rc = lakeout_record(r, dec, len, d->out, sizeof(d->out), &outlen, &flags, &n);
	if (rc)
		return 0; /* cannot happen for a decoded record; never send what was not redacted */
	d->st.args_redacted += n;
	return append(d, (uint16_t)dec->type, flags, gen, pos, d->out, outlen);
}

int deliver_own_record(struct deliver *d, uint16_t type, const void *payload, uint32_t len)
{
	return append(d, type, 0, 0, 0, payload, len);
}

void deliver_mark(struct deliver *d, uint64_t pos)
{
	struct checkpoint *last = d->cp_count ? &d->cp[(d->cp_head + d->cp_count - 1) % CHECKPOINTS] : NULL;

	if (last && (last->seq == d->last_seq || d->cp_count == CHECKPOINTS)) {
		last->seq = d->last_seq;
		last->pos = pos;
		return;
	}
	d->cp[(d->cp_head + d->cp_count) % CHECKPOINTS] = (struct checkpoint){ .seq = d->last_seq, .pos = pos };
	d->cp_count++;
}

uint64_t deliver_release_pos(const struct deliver *d)
{
	return d->released_pos;
}

static void advance_release(struct deliver *d)
{
	uint64_t durable = spool_durable_seq(d->spool);

	while (d->cp_count && d->cp[d->cp_head].seq <= durable) {
		d->released_pos = d->cp[d->cp_head].pos;
		d->cp_head = (d->cp_head + 1) % CHECKPOINTS;
		d->cp_count--;
	}
	d->st.released_pos = d->released_pos;
}

/*
 * Records the spool let go unsent - evicted by the quota, quarantined
 * after a permanent refusal - are counted in its ledger; the lake hears of
 * them too, in a TL_LOSS record (counts; the ingest sees the seq gap).
 */
static int tell_losses(struct deliver *d)
{
	struct spool_stats ss;
	int rc = 0;

	spool_get_stats(d->spool, &ss);
	if (ss.ledger.evicted_records > d->evicted_told) {
		struct tl_loss x = { .reason = TL_LOSS_EVICTED, .records = ss.ledger.evicted_records - d->evicted_told,
				     .bytes = ss.ledger.evicted_bytes - d->evicted_bytes_told };

		d->evicted_told = ss.ledger.evicted_records;
		d->evicted_bytes_told = ss.ledger.evicted_bytes;
		rc = deliver_own_record(d, TL_LOSS, &x, sizeof(x));
	}
	if (!rc && ss.ledger.quarantined_records > d->quarantined_told) {
		struct tl_loss x = { .reason = TL_LOSS_QUARANTINED,
				     .records = ss.ledger.quarantined_records - d->quarantined_told };

		d->quarantined_told = ss.ledger.quarantined_records;
		rc = deliver_own_record(d, TL_LOSS, &x, sizeof(x));
	}
	return rc;
}

int deliver_poll(struct deliver *d, uint64_t now_ns)
{
	int rc = spool_poll(d->spool, now_ns);

	if (rc)
		return rc;
	advance_release(d);
	rc = d->up ? upload_poll(d->up, now_ns) : 0;
	return rc ? rc : tell_losses(d);
}

bool deliver_busy(const struct deliver *d)
{
	return d->up && upload_busy(d->up);
}

void deliver_wait(struct deliver *d, int timeout_ms)
{
	if (d->up)
		upload_wait(d->up, timeout_ms);
}

void deliver_get_stats(const struct deliver *d, struct deliver_stats *st, struct spool_stats *ss,
		       struct upload_stats *us)
{
	*st = d->st;
	spool_get_stats(d->spool, ss);
	if (d->up)
		upload_get_stats(d->up, us);
	else
		memset(us, 0, sizeof(*us));
}

int deliver_sync(struct deliver *d)
{
	int rc = spool_sync(d->spool);

	if (rc) {
		fprintf(stderr, "<2>the spool cannot make records durable: %s\n", strerror(-rc));
		return rc;
	}
	advance_release(d);
	return 0;
}

int deliver_drain(struct deliver *d, uint64_t timeout_ns)
{
	uint64_t end = mono_ns() + timeout_ns, target = spool_durable_seq(d->spool);
	struct upload_stats us;

	if (!d->up)
		return 0;
	for (;;) {
		uint64_t now = mono_ns();

		if (deliver_poll(d, now))
			return -1;
		upload_get_stats(d->up, &us);
		if (us.acked_seq >= target)
			return 0;
		if (now >= end)
			return 1;
		if (upload_busy(d->up))
			upload_wait(d->up, 50);
		else
			poll(NULL, 0, 10);
	}
}
