/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Context from a cgroup path: which container, Kubernetes pod, SLURM job
 * step and systemd unit a process ran in, read from the path of its cgroup
 * as the kernel sends it (struct tr_cgroup: relative to the hierarchy's
 * root, for the v2 default hierarchy or the v1 memory hierarchy - the
 * layouts below are the same in both).
 *
 *   /system.slice/docker-<id>.scope                          docker <id>
 *   /docker/<id>                                             docker <id>
 *   /kubepods.slice/kubepods-burstable.slice/
 *     kubepods-burstable-pod<u_u_u_u_u>.slice/cri-containerd-<id>.scope
 *                                                            containerd <id>, pod u-u-u-u-u, burstable
 *   /kubepods/besteffort/pod<uid>/<id>                       kubernetes <id>, pod <uid>, besteffort
 *   /machine.slice/libpod-<id>.scope/container               podman <id>
 *   /machine.slice/libpod-conmon-<id>.scope                  podman, monitor of <id> (not in it)
 *   /slurm/uid_1000/job_42/step_batch/task_0                 SLURM job 42, step batch, task 0
 *   /system.slice/slurmstepd.scope/job_42/step_0/user/task_3 SLURM job 42, step 0, task 3
 *   /user.slice/user-1000.slice/session-3.scope              unit session-3.scope, slice user-1000.slice
 *
 * Pure: no allocation, no global state, fixed-size output. Every layout,
 * and what is deliberately not recognised, is in docs/processor.md
 * ("Context from cgroup paths"); tests/test_attrib_cgctx.c has the cases.
 *
 * Rules that keep a wrong answer out: a container id is reported only when
 * it is exactly 64 lowercase hex digits in a position a runtime puts it; a
 * pod uid only in canonical form; SLURM numbers only as Slurm prints them
 * (%u). Nested containers (docker-in-docker, kind) give the innermost; each
 * field is the innermost of its kind on the path.
 */
#ifndef TRACER_ATTRIB_CGCTX_H
#define TRACER_ATTRIB_CGCTX_H

#include <stdbool.h>
#include <stddef.h>

#define CGCTX_ID_LEN 64       /* a container id: 64 lowercase hex digits */
#define CGCTX_SHORT_ID_LEN 12 /* what `docker ps` shows */
#define CGCTX_POD_UID_MAX 37  /* 8-4-4-4-12 and a NUL (static pods: 32 hex) */
#define CGCTX_UNIT_MAX 256    /* systemd's UNIT_NAME_MAX, NUL included */

/* The path need not start with '/': its leading part is missing (the
 * record's TR_CGROUP_TRUNCATED). A first component that may be cut short
 * is ignored. */
#define CGCTX_TRUNCATED 0x1u

enum cgctx_runtime {
	CGCTX_RT_NONE = 0,
	CGCTX_RT_DOCKER,
	CGCTX_RT_CONTAINERD, /* CRI (cri-containerd-), nerdctl */
	CGCTX_RT_CRIO,
	CGCTX_RT_PODMAN,
	CGCTX_RT_KUBERNETES, /* a pod's container whose engine the path does not name (cgroupfs driver) */
	CGCTX_RT_UNKNOWN,    /* a bare 64-hex cgroup under a parent no runtime is known by */
};

enum cgctx_qos {
	CGCTX_QOS_NONE = 0, /* not in a pod */
	CGCTX_QOS_GUARANTEED,
	CGCTX_QOS_BURSTABLE,
	CGCTX_QOS_BESTEFFORT,
};

struct cgctx {
	enum cgctx_runtime runtime;         /* of container_id, else of monitor_of; NONE when both are empty */
	char container_id[CGCTX_ID_LEN + 1]; /* innermost container, "" if none */
	unsigned containers;                /* containers on the path: > 1 when nested */
	/* A runtime's monitor (conmon) runs beside its container, not in it:
	 * libpod-conmon-<id>.scope, crio-conmon-<id>.scope. */
	char monitor_of[CGCTX_ID_LEN + 1];
	enum cgctx_runtime monitor_runtime;

	char pod_uid[CGCTX_POD_UID_MAX]; /* canonical: dashed, lowercase; static pods 32 hex */
	enum cgctx_qos qos;

	char slurm_job[11];  /* decimal job id, "" if none */
	char slurm_step[24]; /* "0", "batch", "extern", "interactive", "3+1" (het component) */
	char slurm_task[11]; /* "0".. or "special"; "" if not in a task's cgroup */
	bool slurm_stepd;    /* in the step's "slurm" cgroup: slurmstepd itself, not the user's task */

	char unit[CGCTX_UNIT_MAX];  /* innermost systemd unit (.service .scope .socket .mount .swap) */
	char slice[CGCTX_UNIT_MAX]; /* innermost slice */
	bool truncated;             /* CGCTX_TRUNCATED was given */
};

/*
 * Read the context of path[0..len) into out (always fully written). flags:
 * CGCTX_TRUNCATED or 0. Returns 0 for a path the kernel could have written
 * - fields it does not recognise stay empty - and -EINVAL, with every field
 * empty, for one it could not: NULL, no leading '/' (unless truncated), an
 * empty component ("//", a trailing '/'), "." or "..", a NUL byte inside.
 * The root "/" is well formed and names nothing.
 */
int cgctx_parse(const char *path, size_t len, unsigned flags, struct cgctx *out);

/* "docker", "containerd", "cri-o", "podman", "kubernetes", "unknown"; "" for NONE. */
const char *cgctx_runtime_name(enum cgctx_runtime runtime);

/* "guaranteed", "burstable", "besteffort"; "" for NONE. */
const char *cgctx_qos_name(enum cgctx_qos qos);

/* True if s[0..n) is a container id: exactly 64 lowercase hex digits. */
bool cgctx_is_container_id(const char *s, size_t n);

/*
 * The 12-character short form of a container id into out (size >= 13):
 * returns 12, or 0 and "" when id is not a container id or out too small.
 */
size_t cgctx_short_id(const char *id, char *out, size_t size);

#endif /* TRACER_ATTRIB_CGCTX_H */
