/* SPDX-License-Identifier: Apache-2.0 */
#include "runs_ckpt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "decode.h"
#include "hsort.h"

#define KEEP_FLAGS (PROC_F_RUN_ROOT | PROC_F_RUN_DECIDED | PROC_F_HELD | PROC_F_LIVE_END | PROC_F_PREEXISTING)

/* One member process; its strings follow. */
struct ckpt_proc {
	uint32_t tgid, ppid;
	uint32_t run, live_attr;
	uint32_t flags;           /* PROC_F_* of KEEP_FLAGS, plus FORK / EXEC / EXIT / INHERITED as seen */
	uint32_t uid, gid;
	uint32_t exec_flags, argv_true_len;
	uint32_t path_len, argv_len, cwd_len, env_len; /* 0 path_len: no image of its own */
	uint32_t mnt_ns, pid_ns;
	uint32_t parent_start_known;
	uint64_t start_ns, parent_start_ns, fork_ts_ns, image_ts_ns;
	uint64_t cgroup_id, cgroup_v1_id;
	char comm[TR_COMM_LEN];
	struct tr_exit exit;      /* valid with PROC_F_EXIT */
};

static void put(struct obuf *o, const void *p, size_t n)
{
	obuf_put(o, (const char *)p, n);
}

static int by_start(const void *a, const void *b)
{
	const struct proc *x = *(const struct proc *const *)a, *y = *(const struct proc *const *)b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static void put_proc(struct obuf *o, const struct proc *p)
{
	const struct proc_image *im = (p->image && !(p->flags & PROC_F_INHERITED)) ? p->image : NULL;
	struct ckpt_proc c;

	memset(&c, 0, sizeof(c));
	c.tgid = p->tgid;
	c.ppid = p->ppid;
	c.run = p->run;
	c.live_attr = p->live_attr;
	c.flags = p->flags & (KEEP_FLAGS | PROC_F_FORK | PROC_F_EXEC | PROC_F_EXIT);
	c.uid = p->uid;
	c.gid = p->gid;
	c.mnt_ns = p->mnt_ns;
	c.pid_ns = p->pid_ns;
	c.parent_start_known = p->parent_start_known;
	c.start_ns = p->start_ns;
	c.parent_start_ns = p->parent_start_ns;
	c.fork_ts_ns = p->fork_ts_ns;
	c.cgroup_id = p->cgroup_id;
	c.cgroup_v1_id = p->cgroup_v1_id;
	memcpy(c.comm, p->comm, sizeof(c.comm));
	if (p->flags & PROC_F_EXIT)
		c.exit = p->exit;
	if (im && !(im->flags & PROC_IMAGE_ARGV_DROPPED)) {
		c.exec_flags = im->flags & ~(uint32_t)PROC_IMAGE_ARGV_DROPPED;
		c.argv_true_len = im->argv_true_len;
		c.path_len = im->path_len + 1;
		c.argv_len = im->argv_len;
		c.cwd_len = im->cwd_len ? im->cwd_len + 1 : 0;
		c.env_len = im->env_len;
		c.image_ts_ns = im->ts_ns;
	}
	put(o, &c, sizeof(c));
	if (c.path_len) {
		put(o, proc_image_path(im), c.path_len);
		put(o, proc_image_args(im), c.argv_len);
		put(o, proc_image_cwd(im), c.cwd_len);
		put(o, proc_image_envs(im), c.env_len);
	}
}

int ckpt_write(struct obuf *o, struct runs *r, const struct proctab *t, uint32_t ring_gen, uint64_t ring_pos,
	       uint64_t now_real_ns)
{
	struct ckpt_header h;
	struct proc **v;
	uint32_t n = 0;

	v = malloc(((size_t)t->used + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		if (runs_of(r, p))
			v[n++] = p;
	hsort(v, n, sizeof(*v), by_start); /* parents before children: a fork copies its parent's image */
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CKPT_MAGIC, sizeof(h.magic));
	h.version = CKPT_VERSION;
	h.run_size = sizeof(struct run);
	h.ring_gen = ring_gen;
	h.ring_pos = ring_pos;
	h.written_ns = now_real_ns;
	h.nruns = r->live;
	h.nprocs = n;
	put(o, &h, sizeof(h));
	for (uint32_t i = 0; i < r->high; i++)
		if (r->v[i].used) {
			put(o, &i, sizeof(i));
			put(o, &r->v[i], sizeof(r->v[i]));
		}
	for (uint32_t i = 0; i < n; i++)
		put_proc(o, v[i]);
	free(v);
	if (o->err)
		return o->err;
	h.payload_len = o->len - sizeof(h);
	h.crc = (uint32_t)crc32(0L, (const Bytef *)o->buf + sizeof(h), (uInt)h.payload_len);
	memcpy(o->buf, &h, sizeof(h));
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

static int bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The exec record p's image came from, rebuilt, through the decoder like any record. */
static int restore_exec(struct proctab *t, const struct ckpt_proc *c, const char *strings)
{
	_Alignas(8) static unsigned char buf[DECODE_MAX_LEN];
	static struct decoded dec;
	struct tr_exec e;
	size_t len = sizeof(e) + c->path_len + c->argv_len + c->cwd_len + c->env_len;

	if (len > sizeof(buf))
		return -EINVAL;
	memset(&e, 0, sizeof(e));
	e.hdr.type = TR_EXEC;
	e.hdr.version = RECORDS_VERSION;
	e.hdr.ts_ns = c->image_ts_ns;
	e.pid = e.tgid = c->tgid;
	e.ppid = c->ppid;
	e.uid = c->uid;
	e.gid = c->gid;
	e.flags = c->exec_flags;
	e.start_ns = c->start_ns;
	e.cgroup_id = c->cgroup_id;
	e.cgroup_v1_id = c->cgroup_v1_id;
	e.mnt_ns = c->mnt_ns;
	e.pid_ns = c->pid_ns;
	e.path_len = c->path_len;
	e.argv_len = c->argv_len;
	e.argv_true_len = c->argv_true_len;
	e.cwd_len = c->cwd_len;
	e.env_len = c->env_len;
	memcpy(e.comm, c->comm, sizeof(e.comm));
	memcpy(buf, &e, sizeof(e));
	memcpy(buf + sizeof(e), strings, len - sizeof(e));
	if (decode_record(&dec, TR_EXEC, buf, (uint32_t)len))
		return -EINVAL;
	return proctab_exec(t, &dec.u.exec, c->image_ts_ns, NULL);
}

static int restore_proc(struct proctab *t, const struct runs *r, const struct ckpt_proc *c, const char *strings)
{
	struct proc *p;

	if (c->run == 0 || c->run > r->high || !r->v[c->run - 1].used)
		return -EINVAL;
	if ((c->flags & PROC_F_FORK) && c->parent_start_known) {
		struct tr_fork f = { .hdr = { .type = TR_FORK, .version = RECORDS_VERSION, .ts_ns = c->fork_ts_ns },
				     .parent_tgid = c->ppid, .child_tgid = c->tgid,
				     .parent_start_ns = c->parent_start_ns, .child_start_ns = c->start_ns, .uid = c->uid };

		if (proctab_fork(t, &f, c->fork_ts_ns))
			return -ENOSPC;
	}
	if (c->path_len && restore_exec(t, c, strings))
		return -EINVAL;
	if (c->flags & PROC_F_EXIT) {
		struct tr_exit x = c->exit;

		if (x.tgid != c->tgid || x.start_ns != c->start_ns || proctab_exit(t, &x, x.hdr.ts_ns, NULL))
			return -EINVAL;
	}
	p = proctab_lookup(t, c->tgid, c->start_ns);
	if (!p)
		return -EINVAL; /* nothing to rebuild it from: no fork and no image */
	p->run = c->run;
	p->live_attr = c->live_attr;
	p->flags |= c->flags & KEEP_FLAGS;
	return 0;
}

static int read_runs(const unsigned char **at, const unsigned char *end, uint32_t n, struct runs *r, char *err,
		     size_t errlen)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot;
		struct run run;

		if ((size_t)(end - *at) < sizeof(slot) + sizeof(run))
			return bad(err, errlen, "run %u is cut short", i);
		memcpy(&slot, *at, sizeof(slot));
		memcpy(&run, *at + sizeof(slot), sizeof(run));
		*at += sizeof(slot) + sizeof(run);
		if (slot >= RUNS_MAX || !run.used || run.state != RUN_RUNNING || run.key[sizeof(run.key) - 1] ||
		    run.command_len > RUN_COMMAND_MAX)
			return bad(err, errlen, "run %u is not a live run", i);
		while (r->high <= slot) {
			if (r->high == r->cap) {
				uint32_t ncap = r->cap ? r->cap * 2 : 16;
				struct run *nv = realloc(r->v, (size_t)ncap * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				r->v = nv;
				r->cap = ncap;
			}
			memset(&r->v[r->high++], 0, sizeof(struct run));
		}
		if (r->v[slot].used)
			return bad(err, errlen, "run slot %u twice", slot);
		/* A restarted processor's records must win over any written after this checkpoint. */
		run.update += CKPT_RESTART_UPDATES;
		r->v[slot] = run;
		r->live++;
	}
	return 0;
}

int ckpt_read(const void *buf, size_t len, struct runs *r, struct proctab *t, uint32_t *ring_gen, uint64_t *ring_pos,
	      struct ckpt_stats *st, char *err, size_t errlen)
{
	const unsigned char *at = buf, *end = at + len;
	struct ckpt_header h;
	int rc;

	memset(st, 0, sizeof(*st));
	if (len < sizeof(h))
		return bad(err, errlen, "shorter than its header (%zu bytes)", len);
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, CKPT_MAGIC, sizeof(h.magic)) || h.version != CKPT_VERSION)
		return bad(err, errlen, "not a checkpoint of this version");
	if (h.run_size != sizeof(struct run))
		return bad(err, errlen, "written by a processor with another run layout (%u bytes, not %zu)", h.run_size,
			   sizeof(struct run));
	if (h.payload_len != len - sizeof(h))
		return bad(err, errlen, "%zu bytes after the header, not the %llu it says", len - sizeof(h),
			   (unsigned long long)h.payload_len);
	if ((uint32_t)crc32(0L, at + sizeof(h), (uInt)h.payload_len) != h.crc)
		return bad(err, errlen, "its checksum does not match");
	at += sizeof(h);
	rc = read_runs(&at, end, h.nruns, r, err, errlen);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < h.nprocs; i++) {
		struct ckpt_proc c;
		uint64_t strings;

		if ((size_t)(end - at) < sizeof(c))
			return bad(err, errlen, "process %u is cut short", i);
		memcpy(&c, at, sizeof(c));
		strings = (uint64_t)c.path_len + c.argv_len + c.cwd_len + c.env_len;
		if ((uint64_t)(end - at) - sizeof(c) < strings)
			return bad(err, errlen, "process %u's strings are cut short", i);
		if (restore_proc(t, r, &c, (const char *)at + sizeof(c)))
			st->procs_skipped++;
		else
			st->procs++;
		at += sizeof(c) + strings;
	}
	if (at != end)
		return bad(err, errlen, "%zu bytes after the last process", (size_t)(end - at));
	st->runs = h.nruns;
	*ring_gen = (uint32_t)h.ring_gen;
	*ring_pos = h.ring_pos;
	return 0;
}
