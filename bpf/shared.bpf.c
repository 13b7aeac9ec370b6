// SPDX-License-Identifier: GPL-2.0
/*
 * What the program files share: every map and global of tracer.bpf.h is
 * defined here, with the global functions below.
 *
 * Paths are built in the kernel, backwards from the leaf into a per-CPU
 * buffer, so that a path longer or deeper than kept loses its head, never
 * its tail (the record's flag says so): the tail is what names a file or a
 * container. They are read racily, like d_path() without its locks: a
 * concurrent rename can give a mixed path, never a fault.
 *
 * Which processes are traced: a process's decision is taken when it execs
 * (or, in daemon mode, when a process already running when tracing started
 * is first seen) and inherited by the children it forks:
 *   traced        every record about it goes out
 *   excluded      matched an exclude rule: one exec record saying so, then
 *                 nothing about it or its descendants, whatever they exec
 *   not included  include rules exist and it matched none: nothing, until
 *                 it execs something that matches
 * With --trace-pid only the seeded process and its descendants have state.
 */
#define TRACER_BPF_DEFINE
#include "tracer.bpf.h"
#include "paths.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define DENTRY_STEPS_MAX 64  /* components plus mount crossings */
#define CGROUP_DEPTH_MAX 32
#define CGROUP_LEVEL_MAX 255

/* Cgroup paths already sent, by (id, hierarchy): a TR_CGROUP goes out once per id. */
struct cg_key {
	__u64 id;
	__u32 v1;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH); /* an evicted id is sent again: harmless */
	__uint(max_entries, 16384);
	__type(key, struct cg_key);
	__type(value, __u8);
} cgroups_sent SEC(".maps");

/*
 * The last cgroup each CPU found sent, per hierarchy, in front of
 * cgroups_sent: every exec and exit (and sample) asks about its cgroup,
 * nearly always the one the previous event asked about, and a lookup in a
 * large hash map costs hundreds of ns on a busy VM (a cache and TLB miss
 * or two), this a load. One entry per path_scratch slot (the timer's
 * slot 1 can interrupt slot 0's programs on the same CPU), each id an
 * 8-byte store: never torn. Cgroup ids are never reused.
 */
struct cg_recent {
	__u64 id[2]; /* by hierarchy: [0] v2, [1] v1 */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct cg_recent);
} cgroups_recent SEC(".maps");

/* kernfs_node->parent became __parent in 6.15: both spellings, whichever this kernel has. */
struct kernfs_node___new {
	struct kernfs_node *__parent;
} __attribute__((preserve_access_index));

struct kernfs_node___old {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn)
{
	struct kernfs_node___new *n = (void *)kn;

	if (bpf_core_field_exists(n->__parent))
		return BPF_CORE_READ(n, __parent);
	return BPF_CORE_READ((struct kernfs_node___old *)kn, parent);
}

/* ---- paths ------------------------------------------------------------------ */

/*
 * Prepend "/" and len bytes of name at ps->pos; false (nothing written)
 * when it does not fit. The position lives in the map value, not in a
 * register: so the verifier knows nothing of it, and the states of a
 * walk's paths (a component, a mount crossing) fold together at each step
 * instead of each carrying its own range of positions down the loop.
 */
static __always_inline bool prepend(struct path_scratch *ps, const void *name, __u32 len)
{
	__u32 p = ps->pos;

	if (len > NAME_MASK || p > PATH_END || p < PATH_HDR_ROOM + len + 1)
		return false;
	p -= len;
	bpf_probe_read_kernel(ps->buf + (p & PATH_MASK), len & NAME_MASK, name);
	p--;
	ps->buf[p & PATH_MASK] = '/';
	ps->pos = p;
	return true;
}

static __always_inline void path_start(struct path_scratch *ps)
{
	ps->buf[PATH_END] = 0;
	ps->pos = PATH_END;
}

/* The builder's result: where the path starts (the root itself if nothing was prepended), | trunc. */
static __always_inline int path_result(struct path_scratch *ps, __u32 trunc)
{
	__u32 pos = ps->pos;

	if (pos == PATH_END) {
		pos--;
		ps->buf[pos & PATH_MASK] = '/';
	}
	return pos | trunc;
}

/*
 * A dentry's parent and name, and a mount's parent and mountpoint: the
 * walk below reads each pair with one bpf_probe_read_kernel() where the
 * two fields are adjacent (as they have been for years: d_parent then
 * d_name, mnt_parent then mnt_mountpoint), and field by field otherwise.
 * A helper call is most of what a step costs.
 */
struct dentry_up {
	struct dentry *parent;
	struct qstr name;
};

struct mount_up {
	struct mount *parent;
	struct dentry *mountpoint;
};

static __always_inline long read_dentry_up(struct dentry *d, struct dentry_up *u)
{
	if (bpf_core_field_offset(struct dentry, d_name) ==
	    bpf_core_field_offset(struct dentry, d_parent) + sizeof(u->parent))
		return bpf_probe_read_kernel(u, sizeof(*u), (char *)d + bpf_core_field_offset(struct dentry, d_parent));
	u->parent = BPF_CORE_READ(d, d_parent);
	return bpf_core_read(&u->name, sizeof(u->name), &d->d_name);
}

static __always_inline long read_mount_up(struct mount *m, struct mount_up *u)
{
	if (bpf_core_field_offset(struct mount, mnt_mountpoint) ==
	    bpf_core_field_offset(struct mount, mnt_parent) + sizeof(u->parent))
		return bpf_probe_read_kernel(u, sizeof(*u), (char *)m + bpf_core_field_offset(struct mount, mnt_parent));
	u->parent = BPF_CORE_READ(m, mnt_parent);
	u->mountpoint = BPF_CORE_READ(m, mnt_mountpoint);
	return 0;
}

/*
 * Like the kernel's d_path(): up through parents, and at a mount's root,
 * across to where that mount is mounted, until the task's root. A path
 * outside it ends at its mount namespace's root.
 */
__attribute__((noinline)) int dentry_path(__u32 slot, __u64 dentry, __u64 vfsmount, __u64 root_dentry,
					  __u64 root_vfsmount)
{
	struct path_scratch *ps = bpf_map_lookup_elem(&path_scratch, &slot);
	struct dentry *d = (struct dentry *)dentry;
	struct vfsmount *vm = (struct vfsmount *)vfsmount;
	struct mount *mnt = (struct mount *)((char *)vm - bpf_core_field_offset(struct mount, mnt));
	struct dentry *mnt_root = BPF_CORE_READ(vm, mnt_root);
	__u32 trunc = PATH_TRUNCATED;

	if (!ps)
		return 0;
	path_start(ps);
	for (int i = 0; i < DENTRY_STEPS_MAX; i++) {
		struct dentry_up du;
		struct mount_up mu;

		if ((__u64)d == root_dentry && (__u64)vm == root_vfsmount) {
			trunc = 0;
			break;
		}
		if (d == mnt_root) {
			if (read_mount_up(mnt, &mu))
				break;
			if (mu.parent == mnt) { /* the namespace's root mount */
				trunc = 0;
				break;
			}
			d = mu.mountpoint;
			mnt = mu.parent;
			vm = (struct vfsmount *)((char *)mnt + bpf_core_field_offset(struct mount, mnt));
			mnt_root = BPF_CORE_READ(vm, mnt_root);
			continue;
		}
		if (read_dentry_up(d, &du))
			break;
		if (du.parent == d) { /* root of a filesystem mounted nowhere (detached) */
			trunc = 0;
			break;
		}
		if (!prepend(ps, du.name.name, du.name.len))
			break;
		d = du.parent;
	}
	return path_result(ps, trunc);
}

/* The path of a cgroup (its kernfs node) relative to its hierarchy's root. Result as dentry_path(). */
static __always_inline int cgroup_path(struct path_scratch *ps, struct kernfs_node *kn)
{
	__u32 trunc = PATH_TRUNCATED;

	path_start(ps);
	for (int i = 0; i < CGROUP_DEPTH_MAX; i++) {
		struct kernfs_node *up = kn_parent(kn);
		long n;

		if (!up) { /* the root: its name is not part of the path */
			trunc = 0;
			break;
		}
		n = bpf_probe_read_kernel_str(ps->name, sizeof(ps->name), BPF_CORE_READ(kn, name));
		if (n <= 1 || !prepend(ps, ps->name, (__u32)n - 1))
			break;
		kn = up;
	}
	return path_result(ps, trunc);
}

__attribute__((noinline)) int send_cgroup(__u64 id, __u32 v1, __u64 kn, __u32 slot)
{
	struct cg_recent *recent = bpf_map_lookup_elem(&cgroups_recent, &slot);
	struct cg_key k = { .id = id, .v1 = v1 };
	struct path_scratch *ps;
	struct tr_cgroup h;
	__u8 one = 1;
	__u32 pos;
	int r;

	/*
	 * No recent entry: a slot path_scratch has no entry for either (both
	 * have two), nothing could be sent. Returning here also keeps the
	 * verifier from walking the path builder below once per case.
	 */
	if (!id || !kn || !recent || recent->id[v1 & 1] == id)
		return 0;
	if (bpf_map_lookup_elem(&cgroups_sent, &k)) {
		recent->id[v1 & 1] = id;
		return 0;
	}
	ps = bpf_map_lookup_elem(&path_scratch, &slot);
	if (!ps)
		return 0;
	r = cgroup_path(ps, (struct kernfs_node *)kn);
	pos = PATH_POS(r);
	if (!path_pos_valid(pos))
		return 0;
	__builtin_memset(&h, 0, sizeof(h));
	fill_hdr(&h.hdr, TR_CGROUP);
	h.id = id;
	h.v1 = v1;
	h.path_len = path_len(pos);
	h.flags = r & PATH_TRUNCATED ? TR_CGROUP_TRUNCATED : 0;
	if (output_path_record(ps, pos, &h)) {
		count_drop(TR_CGROUP);
		return 0; /* not marked sent: the next record naming it tries again */
	}
	bpf_map_update_elem(&cgroups_sent, &k, &one, BPF_ANY);
	recent->id[v1 & 1] = id;
	return 0;
}

/*
 * Most events ask about the cgroups the CPU's previous event asked about:
 * cgroups_recent answers before any kernfs node is read. Through BTF the
 * v1 memory cgroup's id is a few loads; its node (and the v2 one) are read
 * with helper calls only for a cgroup this CPU did not send last.
 */
__attribute__((noinline)) __u64 send_task_cgroups(__u64 v2_id, __u32 slot)
{
	struct cg_recent *recent = bpf_map_lookup_elem(&cgroups_recent, &slot);
	struct task_struct *t = current_task();
	struct cgroup_subsys_state *css;
	int idx = memory_subsys();
	struct kernfs_node *kn;
	struct css_set *cs;
	struct cgroup *cg;
	__u64 v1_id = 0;

	if (!recent || recent->id[0] != v2_id)
		send_cgroup(v2_id, 0, (__u64)cgroup_v2_kn(t), slot);
	if (!TASK_BTF) {
		kn = cgroup_v1_kn(t);
		v1_id = kn_id(kn);
		send_cgroup(v1_id, 1, (__u64)kn, slot);
		return v1_id;
	}
	cs = t->cgroups;
	if (idx < 0 || !cs)
		return 0;
	/* idx is a constant once loaded: the verifier checks this load's offset like any other's. */
	css = cs->subsys[idx];
	cg = css ? css->cgroup : NULL;
	if (!cg || !cg->root->hierarchy_id)
		return 0;
	v1_id = cg->kn->id;
	if (!recent || recent->id[1] != v1_id)
		send_cgroup(v1_id, 1, (__u64)BPF_CORE_READ(cg, kn), slot);
	return v1_id;
}

/* ---- rules ------------------------------------------------------------------- */

/* What rules are matched against. */
struct subject {
	char exe[TR_RULES_EXE_LEN]; /* base name, NUL-padded; all zero when unknown or too long */
	__u32 uid;
	__u32 level_v2, level_v1;   /* depths of its cgroups in their hierarchies */
	struct cgroup *cg_v2;       /* its cgroups (NULL: none, or no rule needs them) */
	struct cgroup *cg_v1;       /* in the v1 memory hierarchy */
};

/* A cgroup's ancestors by level: pointers from 6.0, their ids before. Whichever this kernel has. */
struct cgroup___ptrs {
	struct cgroup *ancestors[0];
} __attribute__((preserve_access_index));

struct cgroup___ids {
	u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

static __always_inline __u64 ancestor_id(struct cgroup *cg, __u32 level)
{
	struct cgroup *a = NULL;
	__u64 id = 0;

	level &= CGROUP_LEVEL_MAX;
	if (bpf_core_field_exists(((struct cgroup___ptrs *)0)->ancestors)) {
		bpf_probe_read_kernel(&a, sizeof(a),
				      (char *)cg + bpf_core_field_offset(struct cgroup___ptrs, ancestors) + level * 8);
		return a ? BPF_CORE_READ(a, kn, id) : 0;
	}
	bpf_probe_read_kernel(&id, sizeof(id), (char *)cg + bpf_core_field_offset(struct cgroup___ids, ancestor_ids) +
					       level * 8);
	return id;
}

static __always_inline bool exe_matches(const struct tr_rule_set *s, const struct subject *sub)
{
	const __u64 *a = (const __u64 *)sub->exe;

	if (!sub->exe[0])
		return false;
	for (int i = 0; i < TR_RULES_PER_KIND; i++) {
		const __u64 *b;
		__u64 diff = 0;

		if (i >= s->n_exe)
			break;
		b = (const __u64 *)s->exe[i];
		for (int w = 0; w < TR_RULES_EXE_LEN / 8; w++)
			diff |= a[w] ^ b[w];
		if (!diff)
			return true;
	}
	return false;
}

static __always_inline bool uid_matches(const struct tr_rule_set *s, __u32 uid)
{
	for (int i = 0; i < TR_RULES_PER_KIND; i++) {
		if (i >= s->n_uid)
			break;
		if (s->uid[i] == uid)
			return true;
	}
	return false;
}

/* Is the process's cgroup, or one of its ancestors, named by a cgroup rule? */
static __always_inline bool cgroup_matches(const struct tr_rule_set *s, const struct subject *sub)
{
	for (int i = 0; i < TR_RULES_PER_KIND; i++) {
		const struct tr_cgroup_rule *rule;
		struct cgroup *cg;
		__u32 level;

		if (i >= s->n_cgroup)
			break;
		rule = &s->cgroup[i];
		/* Plain fields, not an array indexed by the hierarchy: the verifier forbids arithmetic on
		 * stack pointers that the compiler would use for one. */
		cg = rule->v1 ? sub->cg_v1 : sub->cg_v2;
		level = rule->v1 ? sub->level_v1 : sub->level_v2;
		if (cg && rule->level <= level && ancestor_id(cg, rule->level) == rule->id)
			return true;
	}
	return false;
}

static __always_inline bool set_matches(const struct tr_rule_set *s, const struct subject *sub)
{
	if (s->n_exe && exe_matches(s, sub))
		return true;
	if (s->n_uid && uid_matches(s, sub->uid))
		return true;
	return s->n_cgroup && cgroup_matches(s, sub);
}

/* The base name of the exec buffer's path (path_len bytes, NUL included) into sub->exe, if it fits. */
static __always_inline void exe_from_path(struct subject *sub, const struct exec_buf *b)
{
	__u32 path_len = b->e.path_len, start = 0, n;

	/* data[path_len - i] is followed by i - 2 bytes of name (then the NUL). */
	for (int i = 2; i <= TR_RULES_EXE_LEN + 1; i++) {
		if (i > path_len)
			break; /* no slash: the whole path is the name */
		if (b->data[(path_len - i) & (TR_PATH_MAX - 1)] == '/') {
			start = path_len - i + 1;
			break;
		}
		if (i == TR_RULES_EXE_LEN + 1)
			return; /* longer than any rule's name */
	}
	n = path_len - 1 - start;
	if (!n || n >= TR_RULES_EXE_LEN)
		return;
	asm volatile("" : "+r"(n)); /* keep the no-op mask below: the verifier follows it */
	bpf_probe_read_kernel(sub->exe, n & (TR_RULES_EXE_LEN - 1), b->data + (start & (TR_PATH_MAX - 1)));
}

__attribute__((noinline)) int rules_decide(__u32 flags, __u32 from_exec)
{
	const struct tr_kernel_rules *r = active_rules();
	const struct tr_rule_set *inc = &r->include;
	volatile __u32 flags_in = flags;
	struct task_struct *t;
	struct subject sub = {};
	__u32 zero = 0;

	/*
	 * Without exclude rules the answer is known before anything about the
	 * process is read (the usual case, at every exec): what follows would
	 * come to the same. What these tests teach the verifier about flags
	 * and the counts must not reach the rule loops below, where it would
	 * split the states it walks: the counts are read again there, and
	 * flags comes back from the stack as a plain number (a 4-byte spill
	 * keeps no range).
	 */
	if (!(r->exclude.n_exe | r->exclude.n_uid | r->exclude.n_cgroup)) {
		if (flags & TR_PSTATE_TRACED)
			return flags;
		if (!(inc->n_exe | inc->n_uid | inc->n_cgroup))
			return (flags & ~PS_NOT_INCLUDED) | TR_PSTATE_TRACED;
	}
	flags = flags_in;
	t = current_task();
	sub.uid = (__u32)bpf_get_current_uid_gid();
	if (r->exclude.n_cgroup || inc->n_cgroup) {
		struct cgroup_subsys_state *css = memory_css(t);
		struct cgroup *v2 = BPF_CORE_READ(t, cgroups, dfl_cgrp);
		struct cgroup *v1 = css && css_on_v1(css) ? BPF_CORE_READ(css, cgroup) : NULL;

		sub.cg_v2 = v2;
		sub.level_v2 = BPF_CORE_READ(v2, level);
		sub.cg_v1 = v1;
		sub.level_v1 = v1 ? BPF_CORE_READ(v1, level) : 0;
	}
	if (!from_exec) {
		bpf_get_current_comm(sub.exe, TR_COMM_LEN);
	} else if (r->exclude.n_exe || inc->n_exe) {
		struct exec_buf *b = bpf_map_lookup_elem(&exec_scratch, &zero);

		if (b)
			exe_from_path(&sub, b);
	}
	if (set_matches(&r->exclude, &sub))
		return PS_EXCLUDED;
	if (flags & TR_PSTATE_TRACED)
		return flags;
	if (!(inc->n_exe | inc->n_uid | inc->n_cgroup) || set_matches(inc, &sub))
		return (flags & ~PS_NOT_INCLUDED) | TR_PSTATE_TRACED;
	return flags | PS_NOT_INCLUDED;
}
