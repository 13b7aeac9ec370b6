/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers around paths and cgroups; the path builders themselves are
 * global functions in shared.bpf.c (dentry_path, send_cgroup).
 */
#ifndef TRACER_PATHS_BPF_H
#define TRACER_PATHS_BPF_H

#include "tracer.bpf.h"

#define PATH_TRUNCATED 0x10000 /* in a path builder's result: the head is missing */
#define PATH_POS(r) ((__u32)(r) & 0xffff)

/* Both path records have a 40-byte fixed part, placed right before the path. */
#define PATH_REC_HDR 40
_Static_assert(sizeof(struct tr_cgroup) == PATH_REC_HDR && sizeof(struct tr_file) == PATH_REC_HDR,
	       "path records' fixed parts");

static __always_inline bool path_pos_valid(__u32 pos)
{
	return pos >= PATH_HDR_ROOM && pos <= PATH_END;
}

static __always_inline __u32 path_len(__u32 pos)
{
	return PATH_END + 1 - pos;
}

/*
 * Send the PATH_REC_HDR bytes at hdr followed by the path a builder left at
 * pos (path_pos_valid): one contiguous record.
 */
static __always_inline long output_path_record(struct path_scratch *ps, __u32 pos, const void *hdr)
{
	__u32 start = (pos - PATH_REC_HDR) & PATH_MASK;
	__u32 size = (PATH_REC_HDR + PATH_END + 1 - pos) & PATH_MASK;

	bpf_probe_read_kernel(ps->buf + start, PATH_REC_HDR, hdr);
	return bpf_ringbuf_output(&events, ps->buf + start, size, wakeup_flags());
}

/*
 * The cgroup helpers below take t = current_task() (tracer.bpf.h, KREAD)
 * and return plain pointers: what they return goes to global functions
 * (send_cgroup) or BPF_CORE_READ.
 */

/*
 * The task's cgroup on the default (v2) hierarchy. Helper calls, not
 * KREAD: inlined into every program that sends a cgroup, each pointer hop
 * through BTF would cost the verifier its searches (tracer.bpf.h) for the
 * two helper calls it saves.
 */
static __always_inline struct kernfs_node *cgroup_v2_kn(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn);
}

/* Index of the memory controller in css_set->subsys, or -1 when this kernel has none. */
static __always_inline int memory_subsys(void)
{
	int idx;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return -1;
	idx = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	return idx >= 0 && idx < 64 ? idx : -1;
}

/*
 * The task's state of the memory controller (its memory cgroup), on
 * whichever hierarchy has it. Read with bpf_probe_read_kernel(): it is
 * inlined into rules_decide(), which every program that can meet a new
 * process verifies (tracer.bpf.h, KREAD: what a pointer hop costs the
 * verifier), and it is seldom on a hot path.
 */
static __always_inline struct cgroup_subsys_state *memory_css(struct task_struct *t)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cs = BPF_CORE_READ(t, cgroups);
	int idx = memory_subsys();

	if (idx < 0 || !cs)
		return NULL;
	bpf_probe_read_kernel(&css, sizeof(css),
			      (char *)cs + bpf_core_field_offset(struct css_set, subsys) + idx * sizeof(css));
	return css;
}

/* The default hierarchy is number 0 (as /proc/cgroups shows); v1 hierarchies count from 1. */
static __always_inline bool css_on_v1(struct cgroup_subsys_state *css)
{
	return BPF_CORE_READ(css, cgroup, root, hierarchy_id) != 0;
}

/*
 * The task's cgroup in the v1 memory hierarchy, NULL when the controller is
 * on v2 (or absent). Helper calls: what kernels without BTF pointers take
 * (send_task_cgroups() reads it through BTF where it can).
 */
static __always_inline struct kernfs_node *cgroup_v1_kn(struct task_struct *t)
{
	struct cgroup_subsys_state *css = memory_css(t);

	if (!css || !css_on_v1(css))
		return NULL;
	return BPF_CORE_READ(css, cgroup, kn);
}

/* A cgroup's id: its kernfs node's, the inode number of its directory. */
static __always_inline __u64 kn_id(struct kernfs_node *kn)
{
	return kn ? BPF_CORE_READ(kn, id) : 0;
}

#endif /* TRACER_PATHS_BPF_H */
