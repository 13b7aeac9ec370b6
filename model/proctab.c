/* SPDX-License-Identifier: Apache-2.0 */
#include "proctab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

enum { MEMO_NONE = 0, MEMO_BUSY, MEMO_YES, MEMO_NO };

/* ------------------------------------------------------------------ */
/* Hashing and chains                                                 */
/* ------------------------------------------------------------------ */

static uint32_t key_bucket(const struct proctab *t, uint32_t tgid, uint64_t start_ns)
{
	return (uint32_t)(hash_mix64(hash_mix64(t->seed ^ tgid) ^ start_ns) & t->mask);
}

static uint32_t tgid_bucket(const struct proctab *t, uint32_t tgid)
{
	return (uint32_t)(hash_mix64(t->seed ^ ((uint64_t)tgid << 32) ^ 0x9e3779b97f4a7c15ULL) & t->mask);
}

static struct proc *at(const struct proctab *t, uint32_t idx1)
{
	return idx1 ? &t->procs[idx1 - 1] : NULL;
}

static uint32_t index1(const struct proctab *t, const struct proc *p)
{
	return (uint32_t)(p - t->procs) + 1;
}

static void link_entry(struct proctab *t, struct proc *p)
{
	uint32_t i = index1(t, p), kb = key_bucket(t, p->tgid, p->start_ns), tb = tgid_bucket(t, p->tgid);

	p->key_prev = 0;
	p->key_next = t->key_heads[kb];
	if (p->key_next)
		at(t, p->key_next)->key_prev = i;
	t->key_heads[kb] = i;
	/* Newest first in the tgid chain: resolving a pid usually stops at the first match. */
	p->tgid_prev = 0;
	p->tgid_next = t->tgid_heads[tb];
	if (p->tgid_next)
		at(t, p->tgid_next)->tgid_prev = i;
	t->tgid_heads[tb] = i;
}

static void unlink_entry(struct proctab *t, struct proc *p)
{
	if (p->key_prev)
		at(t, p->key_prev)->key_next = p->key_next;
	else
		t->key_heads[key_bucket(t, p->tgid, p->start_ns)] = p->key_next;
	if (p->key_next)
		at(t, p->key_next)->key_prev = p->key_prev;
	if (p->tgid_prev)
		at(t, p->tgid_prev)->tgid_next = p->tgid_next;
	else
		t->tgid_heads[tgid_bucket(t, p->tgid)] = p->tgid_next;
	if (p->tgid_next)
		at(t, p->tgid_next)->tgid_prev = p->tgid_prev;
}

/* ------------------------------------------------------------------ */
/* Images                                                             */
/* ------------------------------------------------------------------ */

static void image_put(struct proctab *t, struct proc_image *im)
{
	if (im && --im->refs == 0) {
		t->image_bytes -= im->bytes;
		free(im);
	}
}

static struct proc_image *image_get(struct proc_image *im)
{
	if (im)
		im->refs++;
	return im;
}

/* Split the argument area (NUL-terminated one past its end) into t->argv_scratch. */
static uint32_t split_args(struct proctab *t, const char *area, uint32_t len)
{
	uint32_t argc = 0;

	for (uint32_t off = 0; off < len; argc++) {
		t->argv_scratch[argc] = area + off;
		off += (uint32_t)strlen(area + off) + 1;
	}
	return argc;
}

/*
 * A new image. Over the image budget the argument area is not kept (the
 * tool is still named from it): what a process ran stays known, memory
 * stays bounded.
 */
/*
 * Secrets out of the argument area before anything keeps it or names a
 * tool from it: the redacted copy, NUL-terminated past its end, in
 * t->redact_scratch. Never longer than the original.
 */
static const char *redacted_args(struct proctab *t, const struct decoded_exec *e, uint32_t *len)
{
	unsigned flags = (e->rec.flags & (TR_EXEC_ARGV_TRUNCATED | TR_EXEC_ARGV_FAULT)) ? REDACT_TRUNCATED : 0, n = 0;
	size_t out = 0;

	if (redact_area(&t->redact, e->argv, e->argv_len, flags, t->redact_scratch, sizeof(t->redact_scratch) - 1, &out,
			&n) || out > e->argv_len) {
		*len = 0; /* cannot happen (bounded by the input); never keep what was not redacted */
		t->redact_scratch[0] = 0;
		return t->redact_scratch;
	}
	t->redact_scratch[out] = 0;
	t->args_redacted += n;
	*len = (uint32_t)out;
	return t->redact_scratch;
}

static struct proc_image *image_new(struct proctab *t, const struct decoded_exec *e, uint64_t ts_ns)
{
	char tool[TOOL_NAME_MAX];
	uint32_t argv_len, flags = e->rec.flags;
	const char *args = redacted_args(t, e, &argv_len);
	uint32_t argc = split_args(t, args, argv_len);
	size_t tool_len = t->tool_rules ? toolrules_name(t->tool_rules, e->path, t->argv_scratch, argc, tool, sizeof(tool))
				       : tool_name(e->path, t->argv_scratch, argc, tool, sizeof(tool)), size;
	struct proc_image *im;
	char *d;

	if (tool_len == 0)
		tool_len = (size_t)snprintf(tool, sizeof(tool), "%s", e->comm) % sizeof(tool);
	size = sizeof(*im) + e->path_len + 1 + argv_len + 1 + tool_len + 1 + e->cwd_len + 1 + e->env_len;
	if (t->image_bytes + size > t->image_budget) {
		size -= argv_len;
		argv_len = argc = 0;
		flags |= PROC_IMAGE_ARGV_DROPPED;
		t->st.argv_dropped++;
	}
	im = malloc(size);
	if (!im)
		return NULL;
	*im = (struct proc_image){
		.refs = 1,
		.flags = flags,
		.argv_true_len = e->rec.argv_true_len,
		.argc = argc,
		.path_len = e->path_len,
		.argv_len = argv_len,
		.tool_len = (uint32_t)tool_len,
		.cwd_len = e->cwd_len,
		.env_len = e->env_len,
		.bytes = (uint32_t)size,
		.ts_ns = ts_ns,
	};
	t->image_bytes += size;
	d = im->data;
	memcpy(d, e->path, e->path_len);
	d[e->path_len] = 0;
	d += e->path_len + 1;
	memcpy(d, args, argv_len);
	d[argv_len] = 0;
	d += argv_len + 1;
	memcpy(d, tool, tool_len);
	d[tool_len] = 0;
	d += tool_len + 1;
	memcpy(d, e->cwd, e->cwd_len);
	d[e->cwd_len] = 0;
	d += e->cwd_len + 1;
	memcpy(d, e->env, e->env_len);
	return im;
}

const char *proc_image_env(const struct proc_image *im, const char *key)
{
	const char *env = proc_image_envs(im);
	size_t klen = strlen(key);

	for (uint32_t off = 0; off < im->env_len;) {
		const char *kv = env + off;
		size_t n = strnlen(kv, im->env_len - off);

		if (n > klen && memcmp(kv, key, klen) == 0 && kv[klen] == '=')
			return kv + klen + 1;
		off += (uint32_t)n + 1;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Table                                                              */
/* ------------------------------------------------------------------ */

int proctab_init(struct proctab *t, uint32_t max, uint32_t root_pid, uint64_t seed)
{
	uint32_t nb = 1;

	memset(t, 0, sizeof(*t));
	if (max == 0 || max > PROCTAB_MAX_LIMIT)
		return -EINVAL;
	if (intern_init(&t->strings, PROCTAB_STRING_BUDGET, seed))
		return -ENOMEM;
	redact_rules_init(&t->redact);
	while (nb < max)
		nb <<= 1;
	/* calloc: pages are only touched (made resident) as entries are used. */
	t->procs = calloc(max, sizeof(*t->procs));
	t->key_heads = calloc(nb, sizeof(*t->key_heads));
	t->tgid_heads = calloc(nb, sizeof(*t->tgid_heads));
	if (!t->procs || !t->key_heads || !t->tgid_heads) {
		proctab_free(t);
		return -ENOMEM;
	}
	t->max = max;
	t->mask = nb - 1;
	t->seed = seed;
	t->root_pid = root_pid;
	t->grace_ns = PROCTAB_DEFAULT_GRACE_NS;
	t->image_budget = PROCTAB_IMAGE_BUDGET;
	t->series_budget = PROCTAB_SERIES_BUDGET;
	return 0;
}

static void release_entry(struct proctab *t, struct proc *p)
{
	image_put(t, p->image);
	for (uint32_t i = 0; i < p->n_earlier; i++)
		image_put(t, p->earlier[i]);
	for (uint32_t i = 0; i < p->n_files; i++)
		intern_put(&t->strings, p->files[i].path);
	t->files_bytes -= (uint64_t)p->files_cap * sizeof(*p->files);
	free(p->files);
	series_free(p->series, &t->series_bytes);
}

void proctab_free(struct proctab *t)
{
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		release_entry(t, p);
	free(t->procs);
	free(t->key_heads);
	free(t->tgid_heads);
	if (t->strings.buckets)
		intern_free(&t->strings);
	t->procs = NULL;
	t->key_heads = t->tgid_heads = NULL;
	t->max = t->used = t->high_water = 0;
}

struct proc *proctab_next(const struct proctab *t, const struct proc *prev)
{
	uint32_t i = prev ? (uint32_t)(prev - t->procs) + 1 : 0;

	for (; i < t->high_water; i++)
		if (t->procs[i].flags & PROC_F_USED)
			return &t->procs[i];
	return NULL;
}

struct proc *proctab_lookup(const struct proctab *t, uint32_t tgid, uint64_t start_ns)
{
	for (struct proc *p = at(t, t->key_heads[key_bucket(t, tgid, start_ns)]); p; p = at(t, p->key_next))
		if (p->tgid == tgid && p->start_ns == start_ns)
			return p;
	return NULL;
}

/*
 * The process with this pid that was alive at time `when` (started at or
 * before it, not exited before it), the newest such. Bounded walk.
 */
static struct proc *find_alive_at(const struct proctab *t, uint32_t tgid, uint64_t when)
{
	struct proc *best = NULL;
	unsigned steps = 0;

	for (struct proc *p = at(t, t->tgid_heads[tgid_bucket(t, tgid)]); p && steps < PROC_TGID_WALK_MAX;
	     p = at(t, p->tgid_next), steps++) {
		if (p->tgid != tgid || p->start_ns > when)
			continue;
		if ((p->flags & PROC_F_EXIT) && p->exit.hdr.ts_ns < when)
			continue;
		if (!best || p->start_ns > best->start_ns)
			best = p;
	}
	return best;
}

static void evict(struct proctab *t, struct proc *p)
{
	if (t->on_evict)
		t->on_evict(t->evict_ctx, p);
	unlink_entry(t, p);
	release_entry(t, p);
	memset(p, 0, sizeof(*p));
	p->key_next = t->free_head;
	t->free_head = index1(t, p);
	t->used--;
	t->st.evicted++;
	t->changes++;
}

static unsigned sweep(struct proctab *t, const struct proc *pin);

/* pin: an entry the caller holds, which a sweep to make room must not evict. */
static struct proc *get_or_create(struct proctab *t, uint32_t tgid, uint64_t start_ns, const struct proc *pin)
{
	struct proc *p = proctab_lookup(t, tgid, start_ns);

	if (p)
		return p;
	/* Full: make room if a sweep can (at most once per 100 ms of record time). */
	if (!t->free_head && t->high_water == t->max && t->newest_ts - t->full_sweep_ts >= 100000000ULL) {
		t->full_sweep_ts = t->newest_ts;
		sweep(t, pin);
	}
	/* Evicted entries first; then entries never used, so pages are touched only as the table grows. */
	if (t->free_head) {
		p = at(t, t->free_head);
		t->free_head = p->key_next;
	} else if (t->high_water < t->max) {
		p = &t->procs[t->high_water++];
	} else {
		t->st.table_full++;
		return NULL;
	}
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	p->start_ns = start_ns;
	p->flags = PROC_F_USED;
	link_entry(t, p);
	t->used++;
	t->st.created++;
	t->changes++;
	/* The root's start time is not given: the earliest lifetime of its pid we hear of is it. */
	if (t->root_pid && tgid == t->root_pid && (!t->root_known || start_ns < t->root_start_ns)) {
		t->root_known = true;
		t->root_start_ns = start_ns;
	}
	return p;
}

/* The clock of the sweep is the newest record time: first thing for every record. */
static void note_time(struct proctab *t, uint64_t ts_ns)
{
	if (ts_ns > t->newest_ts)
		t->newest_ts = ts_ns;
}

static void touch(struct proctab *t, struct proc *p, uint64_t ts_ns)
{
	if (ts_ns > p->last_ts_ns)
		p->last_ts_ns = ts_ns;
	note_time(t, ts_ns);
}

/* A ppid from an exec or exit record, used only while no better source has been seen. */
static void set_parent_from_ppid(struct proctab *t, struct proc *p, uint32_t ppid, enum proc_parent_src src)
{
	struct proc *parent;

	if (p->parent_src >= src || ppid == 0)
		return;
	p->ppid = ppid;
	p->parent_src = (uint8_t)src;
	parent = find_alive_at(t, ppid, p->start_ns);
	p->parent_start_known = parent != NULL;
	p->parent_start_ns = parent ? parent->start_ns : 0;
}

static void set_comm(struct proc *p, const char comm[TR_COMM_LEN])
{
	memcpy(p->comm, comm, TR_COMM_LEN);
	p->comm[TR_COMM_LEN] = 0;
}

/*
 * p made progress at ts: a gap since the last progress of at least
 * stall_after_ns is a stall (its longest one is kept).
 */
static void progress(const struct proctab *t, struct proc *p, uint64_t ts)
{
	if (p->progress_ts_ns && ts > p->progress_ts_ns && t->stall_after_ns) {
		uint64_t gap = ts - p->progress_ts_ns;

		if (gap >= t->stall_after_ns) {
			p->stalls++;
			if (gap > p->stall_ns) {
				p->stall_ns = gap;
				p->stall_start_ns = p->progress_ts_ns;
			}
		}
	}
	if (ts > p->progress_ts_ns)
		p->progress_ts_ns = ts;
}

bool proctab_stalled_now(const struct proctab *t, const struct proc *p, uint64_t now_ns)
{
	return t->stall_after_ns && !(p->flags & (PROC_F_EXIT | PROC_F_EXCLUDED)) && p->progress_ts_ns &&
	       now_ns > p->progress_ts_ns && now_ns - p->progress_ts_ns >= t->stall_after_ns;
}

/* ------------------------------------------------------------------ */
/* Records                                                            */
/* ------------------------------------------------------------------ */

/* The image p runs now becomes an earlier one: kept if the limits allow, else counted. */
static void keep_earlier_image(struct proctab *t, struct proc *p)
{
	bool inherited = (p->flags & PROC_F_INHERITED) != 0;

	if (!p->image)
		return;
	if (!inherited && p->n_earlier < PROC_MAX_EARLIER_EXECS && t->image_bytes <= t->image_budget) {
		p->earlier[p->n_earlier++] = p->image;
	} else {
		if (!inherited) { /* a copy of the parent's image is not one of this process's execs */
			p->execs_dropped++;
			t->st.execs_dropped++;
		}
		image_put(t, p->image);
	}
	p->image = NULL;
	p->flags &= ~(uint32_t)PROC_F_INHERITED;
}

int proctab_exec(struct proctab *t, const struct decoded_exec *e, uint64_t ts_ns, struct proc **out)
{
	struct proc_image *im;
	struct proc *p;

	t->changes++; /* what the process is, not just its counters (live.c rebuilds on it) */
	note_time(t, ts_ns);
	p = get_or_create(t, e->rec.tgid, e->rec.start_ns, NULL);
	if (out)
		*out = p;
	if (!p)
		return -ENOSPC;
	touch(t, p, ts_ns);
	set_parent_from_ppid(t, p, e->rec.ppid, PARENT_FROM_EXEC);
	p->flags |= PROC_F_EXEC | PROC_F_UID;
	p->flags &= ~(uint32_t)(PROC_F_RUN_DECIDED | PROC_F_TOOL_SENT); /* a new image: a run? its tool */
	p->uid = e->rec.uid;
	p->gid = e->rec.gid;
	p->cgroup_id = e->rec.cgroup_id;
	p->cgroup_v1_id = e->rec.cgroup_v1_id;
	p->mnt_ns = e->rec.mnt_ns;
	p->pid_ns = e->rec.pid_ns;
	if ((e->rec.flags & TR_EXEC_EXCLUDED) && !(p->flags & PROC_F_EXCLUDED)) {
		p->flags |= PROC_F_EXCLUDED;
		t->st.excluded++;
	}
	progress(t, p, ts_ns);
	set_comm(p, e->rec.comm);
	im = image_new(t, e, ts_ns);
	if (!im) {
		t->st.no_memory++;
		return -ENOMEM;
	}
	keep_earlier_image(t, p);
	p->image = im;
	/* A new image: the memory peaks of the one before are not its own. */
	p->image_ts_ns = ts_ns;
	p->sampled_hwm_bytes = 0;
	return 0;
}

int proctab_fork(struct proctab *t, const struct tr_fork *f, uint64_t ts_ns)
{
	struct proc *c, *parent;

	t->changes++; /* what the process is, not just its counters (live.c rebuilds on it) */
	note_time(t, ts_ns);
	c = get_or_create(t, f->child_tgid, f->child_start_ns, NULL);
	if (!c)
		return -ENOSPC;
	touch(t, c, ts_ns);
	c->flags |= PROC_F_FORK;
	c->fork_ts_ns = ts_ns;
	progress(t, c, ts_ns);
	c->ppid = f->parent_tgid;
	c->parent_start_ns = f->parent_start_ns;
	c->parent_start_known = true;
	c->parent_src = PARENT_FROM_FORK;
	if (!(c->flags & PROC_F_UID)) {
		c->uid = f->uid;
		c->flags |= PROC_F_UID;
	}
	parent = proctab_lookup(t, f->parent_tgid, f->parent_start_ns);
	/* The root is the one parent worth an entry of its own before its records arrive. */
	if (!parent && t->root_pid && f->parent_tgid == t->root_pid)
		parent = get_or_create(t, f->parent_tgid, f->parent_start_ns, c);
	if (parent)
		touch(t, parent, ts_ns);
	/* A child that has not exec'd (yet) runs a copy of its parent's image. */
	if (parent && parent->image && !c->image) {
		c->image = image_get(parent->image);
		c->flags |= PROC_F_INHERITED;
	}
	if (parent && !c->comm[0])
		memcpy(c->comm, parent->comm, sizeof(c->comm));
	return 0;
}

static void take_pending_oom(struct proctab *t, struct proc *p, const struct tr_exit *x)
{
	for (unsigned i = 0; i < PROC_PENDING_OOMS; i++) {
		struct pending_oom *o = &t->pending[i];

		if (o->pid && (o->pid == x->tgid || o->pid == x->pid) && o->info.ts_ns <= x->hdr.ts_ns) {
			p->oom = o->info;
			p->flags |= PROC_F_OOM;
			o->pid = 0;
			return;
		}
	}
}

int proctab_exit(struct proctab *t, const struct tr_exit *x, uint64_t ts_ns, struct proc **out)
{
	struct proc *p;

	t->changes++; /* what the process is, not just its counters (live.c rebuilds on it) */
	note_time(t, ts_ns);
	p = get_or_create(t, x->tgid, x->start_ns, NULL);
	if (out)
		*out = p;
	if (!p)
		return -ENOSPC;
	touch(t, p, ts_ns);
	set_parent_from_ppid(t, p, x->ppid, PARENT_FROM_EXIT);
	p->exit = *x;
	p->flags |= PROC_F_EXIT;
	p->alloc = (struct proc_alloc){ .memory_bytes = x->memcg_limit_bytes,
					.cpu_quota_millicores = x->cpu_quota_millicores,
					.cpus_allowed = x->cpus_allowed };
	p->cgroup_id = x->cgroup_id;
	p->cgroup_v1_id = x->cgroup_v1_id;
	p->state_flags = x->state_flags;
	if (x->files_dropped > p->files_dropped)
		p->files_dropped = x->files_dropped;
	progress(t, p, x->hdr.ts_ns);
	set_comm(p, x->comm);
	if (!(p->flags & PROC_F_OOM))
		take_pending_oom(t, p, x);
	return 0;
}

int proctab_oom(struct proctab *t, const struct tr_oom *o, uint64_t ts_ns)
{
	struct proc_oom info = {
		.ts_ns = ts_ns,
		.total_vm_kb = o->total_vm_kb,
		.anon_rss_kb = o->anon_rss_kb,
		.file_rss_kb = o->file_rss_kb,
		.shmem_rss_kb = o->shmem_rss_kb,
		.pgtables_kb = o->pgtables_kb,
		.oom_score_adj = o->oom_score_adj,
		.memcg_v1 = o->memcg_v1,
		.memcg_id = o->memcg_id,
		.memcg_limit_bytes = o->memcg_limit_bytes,
		.memcg_usage_bytes = o->memcg_usage_bytes,
	};
	struct proc *p = find_alive_at(t, o->pid, ts_ns);
	struct pending_oom *slot;

	t->changes++; /* what the process is, not just its counters (live.c rebuilds on it) */
	note_time(t, ts_ns);
	if (p) {
		p->oom = info;
		p->flags |= PROC_F_OOM;
		touch(t, p, ts_ns);
		return 0;
	}
	/* The victim is not known yet (or is a thread): match it at its exit. */
	slot = &t->pending[t->pending_next++ % PROC_PENDING_OOMS];
	if (slot->pid)
		t->st.oom_unmatched++;
	slot->pid = o->pid;
	slot->info = info;
	return 0;
}

int proctab_sample(struct proctab *t, const struct tr_sample *s, uint64_t ts_ns)
{
	struct series_point pt;
	struct proc *p;
	bool moved;

	note_time(t, ts_ns);
	p = get_or_create(t, s->tgid, s->start_ns, NULL);
	if (!p)
		return -ENOSPC;
	touch(t, p, ts_ns);
	t->st.samples++;
	set_parent_from_ppid(t, p, s->ppid, PARENT_FROM_SAMPLE);
	if (!(p->flags & (PROC_F_FORK | PROC_F_EXEC)) && (s->state_flags & TR_PSTATE_PREEXISTING))
		p->flags |= PROC_F_PREEXISTING;
	if (!(p->flags & PROC_F_UID)) {
		p->uid = s->uid;
		p->flags |= PROC_F_UID;
	}
	if (!p->comm[0])
		set_comm(p, s->comm);
	if (!p->cgroup_id)
		p->cgroup_id = s->cgroup_id;
	p->state_flags = s->state_flags;
	/* A sample taken before the current image's exec (records from other CPUs can trail) is not its. */
	if (s->hdr.ts_ns >= p->image_ts_ns && s->hiwater_rss_bytes > p->sampled_hwm_bytes)
		p->sampled_hwm_bytes = s->hiwater_rss_bytes;
	/* What it runs under now (an older agent's sample: unknown); its exit's, once it has one, stands. */
	if (!(p->flags & PROC_F_EXIT))
		p->alloc = (struct proc_alloc){ .memory_bytes = s->memcg_limit_bytes,
						.cpu_quota_millicores = s->cpu_quota_millicores,
						.cpus_allowed = s->cpus_allowed };
	series_point_from_sample(&pt, s);
	moved = !p->series || !p->series->samples || series_progressed(&p->series->last, &pt);
	if (moved)
		progress(t, p, pt.ts_ns);
	if (!series_add(&p->series, &pt, &t->series_bytes, t->series_budget))
		t->st.series_dropped++;
	return 0;
}

/* The file array of p with room for one more, or false (bound or memory). */
static bool files_room(struct proctab *t, struct proc *p)
{
	uint32_t ncap;
	struct proc_file *nf;

	if (p->n_files < p->files_cap)
		return true;
	if (p->files_cap >= PROC_MAX_FILES)
		return false;
	ncap = p->files_cap ? p->files_cap * 2 : 8;
	nf = realloc(p->files, (size_t)ncap * sizeof(*nf));
	if (!nf)
		return false;
	t->files_bytes += (uint64_t)(ncap - p->files_cap) * sizeof(*nf);
	p->files = nf;
	p->files_cap = ncap;
	return true;
}

int proctab_file(struct proctab *t, const struct decoded_file *f, uint64_t ts_ns)
{
	struct proc *p;
	const char *path;
	uint32_t mode = f->rec.mode & (TR_FILE_READ | TR_FILE_WRITE);

	note_time(t, ts_ns);
	t->st.files++;
	p = get_or_create(t, f->rec.tgid, f->rec.start_ns, NULL);
	if (!p) {
		t->st.files_dropped++;
		return -ENOSPC;
	}
	touch(t, p, ts_ns);
	path = intern_get(&t->strings, f->path, f->path_len);
	if (!path) {
		p->files_dropped++;
		t->st.files_dropped++;
		return -ENOMEM;
	}
	/* Interned: one pointer per distinct path. The kernel sends each (file, mode) once. */
	for (uint32_t i = 0; i < p->n_files; i++) {
		if (p->files[i].path == path) {
			p->files[i].mode |= mode;
			intern_put(&t->strings, path);
			return 0;
		}
	}
	if (!files_room(t, p)) {
		intern_put(&t->strings, path);
		p->files_dropped++;
		t->st.files_dropped++;
		return -ENOSPC;
	}
	p->files[p->n_files++] = (struct proc_file){ .path = path, .mode = mode };
	return 0;
}

/* ------------------------------------------------------------------ */
/* The tree                                                           */
/* ------------------------------------------------------------------ */

struct proc *proctab_root(const struct proctab *t)
{
	return t->root_pid && t->root_known ? proctab_lookup(t, t->root_pid, t->root_start_ns) : NULL;
}

static bool is_root(const struct proctab *t, const struct proc *p)
{
	return t->root_pid && t->root_known && p->tgid == t->root_pid && p->start_ns == t->root_start_ns;
}

struct proc *proctab_parent(const struct proctab *t, const struct proc *p)
{
	if (p->parent_src == PARENT_UNKNOWN || is_root(t, p))
		return NULL;
	if (p->parent_start_known)
		return proctab_lookup(t, p->ppid, p->parent_start_ns);
	/* Not resolved when the record came: maybe the parent's records came later. */
	return find_alive_at(t, p->ppid, p->start_ns);
}

/* Verdict for a process whose parent has no entry: a child of the root's pid is in the tree. */
static uint8_t orphan_verdict(const struct proctab *t, const struct proc *p)
{
	if (!t->root_pid || p->parent_src == PARENT_UNKNOWN || p->ppid != t->root_pid)
		return MEMO_NO;
	if (p->parent_start_known && t->root_known && p->parent_start_ns != t->root_start_ns)
		return MEMO_NO; /* another lifetime of the root's pid */
	return MEMO_YES;
}

/*
 * Walk up from p until the root, a process already decided, or the end of
 * what is known; then give every process on the path that verdict. Records
 * are untrusted, so parent links may form a cycle: a process met twice on
 * one walk ends it with "not in the tree". Linear overall: each process is
 * walked once per generation.
 */
static void resolve(struct proctab *t, struct proc *p)
{
	uint32_t gen = t->memo_gen;
	uint8_t verdict = MEMO_NO;
	struct proc *q = p;

	for (uint32_t hops = 0; q && hops <= t->max; hops++) {
		struct proc *parent;

		if (q->memo_gen == gen) {
			verdict = q->memo == MEMO_BUSY ? MEMO_NO : q->memo;
			break;
		}
		q->memo_gen = gen;
		q->memo = MEMO_BUSY;
		if (is_root(t, q)) {
			verdict = MEMO_YES;
			break;
		}
		parent = proctab_parent(t, q);
		if (!parent) {
			verdict = orphan_verdict(t, q);
			break;
		}
		q = parent;
	}
	for (uint32_t hops = 0; p && p->memo_gen == gen && p->memo == MEMO_BUSY && hops <= t->max; hops++) {
		p->memo = verdict;
		p->in_tree = verdict == MEMO_YES;
		p = proctab_parent(t, p);
	}
}

void proctab_mark_tree(struct proctab *t)
{
	/* A new generation invalidates every memo; on wrap-around, clear them for real. */
	if (++t->memo_gen == 0) {
		for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
			p->memo_gen = 0;
		t->memo_gen = 1;
	}
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		resolve(t, p);
		p->in_tree = p->memo == MEMO_YES;
	}
}

static unsigned sweep(struct proctab *t, const struct proc *pin)
{
	unsigned n = 0;

	if (t->root_pid)
		proctab_mark_tree(t);
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		/* touch() keeps newest_ts >= every last_ts_ns */
		bool idle = p != pin && t->newest_ts - p->last_ts_ns >= t->grace_ns;
		/* Run mode: whatever is outside the tree. Daemon mode: what has exited. */
		bool done = t->root_pid ? !p->in_tree : (p->flags & (PROC_F_EXIT | PROC_F_HELD)) == PROC_F_EXIT;

		if (idle && done) {
			evict(t, p);
			n++;
		}
	}
	return n;
}

void proctab_clear(struct proctab *t)
{
	void (*hook)(void *, const struct proc *) = t->on_evict;

	t->on_evict = NULL; /* nothing of what goes belonged anywhere yet */
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		evict(t, p);
	t->on_evict = hook;
}

unsigned proctab_sweep(struct proctab *t)
{
	return sweep(t, NULL);
}

uint64_t proc_peak_rss(const struct proc *p, enum proc_peak_source *src)
{
	enum proc_peak_source from = PEAK_NONE;
	uint64_t v = 0;

	if ((p->flags & PROC_F_EXIT) && !(p->exit.flags & TR_EXIT_NO_IMAGE_PEAK)) {
		from = PEAK_EXIT;
		v = p->exit.image_peak_rss_bytes;
	} else if (p->sampled_hwm_bytes) {
		from = PEAK_SAMPLED;
		v = p->sampled_hwm_bytes;
	} else if (p->flags & PROC_F_EXIT) {
		from = PEAK_RUSAGE;
		v = p->exit.maxrss_bytes;
	}
	if (src)
		*src = from;
	return v;
}

const char *proc_peak_source_name(enum proc_peak_source src)
{
	switch (src) {
	case PEAK_EXIT: return "exit";
	case PEAK_SAMPLED: return "sampled";
	case PEAK_RUSAGE: return "rusage";
	default: return NULL;
	}
}
