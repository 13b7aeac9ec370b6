/* SPDX-License-Identifier: Apache-2.0 */
/* The runs' checkpoint of daemon mode: written after each look at the runs, read at start (checkpoint.h). */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "readfile.h"
#include "runs_ckpt.h"

void checkpoint_init(struct checkpoint *c, const char *state_dir)
{
	memset(c, 0, sizeof(*c));
	c->state_dir = state_dir;
}

/* state_dir/runs.ckpt, replaced whole: written aside, made durable, renamed over. */
static int store(const struct checkpoint *c, const struct obuf *o)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 40];
	size_t off = 0;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/" CKPT_FILE, c->state_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	while (off < o->len && rc == 0) {
		ssize_t n = write(fd, o->buf + off, o->len - off);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (!rc && fdatasync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	return rc;
}

void checkpoint_save(struct checkpoint *c, struct runs *r, const struct proctab *t, bool attached, uint64_t gen,
		     uint64_t pos)
{
	struct obuf o;
	int rc;

	if (!attached || (!r->live && !c->on_disk)) {
		/* No run to lose: the model holds nothing a restart would need. */
		c->valid = attached;
		c->gen = (uint32_t)gen;
		c->pos = pos;
		return;
	}
	if (c->valid && c->gen == (uint32_t)gen && c->changes == t->changes && c->runs == r->started + r->ended) {
		/*
		 * Only counters moved since the file was written (samples): what it
		 * holds is still the model a restart needs; the records in between
		 * may go (a restarted processor sees the next samples).
		 */
		c->pos = pos;
		return;
	}
	obuf_init_mem(&o, CKPT_MAX_BYTES);
	rc = ckpt_write(&o, r, t, (uint32_t)gen, pos, real_ns());
	if (!rc)
		rc = store(c, &o);
	obuf_free(&o);
	if (rc) {
		if (!c->failed)
			fprintf(stderr, "<4>cannot write the runs' checkpoint in %s: %s; a restarted processor will not "
					"continue the runs under way\n", c->state_dir, strerror(-rc));
		c->failed = true;
		return;
	}
	c->failed = false;
	c->on_disk = r->live > 0;
	c->changes = t->changes;
	c->runs = r->started + r->ended;
	c->valid = true;
	c->gen = (uint32_t)gen;
	c->pos = pos;
}

void checkpoint_load(struct checkpoint *c, struct runs *r, struct proctab *t)
{
	char path[PATH_MAX + 32], err[256];
	struct ckpt_stats st;
	char *buf = NULL;
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), "%s/" CKPT_FILE, c->state_dir);
	n = read_file_alloc(AT_FDCWD, path, O_NOFOLLOW, CKPT_MAX_BYTES, &buf, NULL);
	if (n < 0) {
		if (n != -ENOENT)
			fprintf(stderr, "<4>cannot read the runs' checkpoint %s: %s; starting with no run\n", path,
				strerror((int)-n));
		return;
	}
	rc = ckpt_read(buf, (size_t)n, r, t, &c->skip_gen, &c->skip_pos, &st, err, sizeof(err));
	free(buf);
	if (rc) {
		char boot[sizeof(r->boot)];

		fprintf(stderr, "<4>the runs' checkpoint %s is unusable (%s): starting with no run\n", path,
			rc == -ENOMEM ? "out of memory" : err);
		memcpy(boot, r->boot, sizeof(boot));
		runs_free(r);
		runs_init(r, boot);
		proctab_clear(t);
		return;
	}
	c->skip = true;
	c->on_disk = st.runs > 0;
	fprintf(stderr, "<6>continuing %u runs (%u processes; %u not restored) from the checkpoint at ring generation "
			"%08x position %llu\n", st.runs, st.procs, st.procs_skipped, (unsigned)c->skip_gen,
		(unsigned long long)c->skip_pos);
}

uint64_t checkpoint_barrier(const struct checkpoint *c, uint64_t gen, uint64_t released)
{
	return c->valid && c->gen == (uint32_t)gen ? c->pos : released;
}

bool checkpoint_includes(const struct checkpoint *c, uint64_t gen, uint64_t pos)
{
	return c->skip && (uint32_t)gen == c->skip_gen && pos < c->skip_pos;
}
