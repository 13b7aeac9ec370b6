/* SPDX-License-Identifier: Apache-2.0 */
#include "cgctx.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

/*
 * The path is read one component at a time, root first. Each component is
 * classified with the kind of the one before it - the only context any
 * layout needs (a bare id means docker under "docker", a pod's container
 * under "pod<uid>"; "job_N" is a SLURM job only under a SLURM parent) - so
 * a layout is recognised wherever it sits: under a custom cgroup root, a
 * kubelet --cgroup-root, or inside another container. A later match
 * replaces an earlier one, which makes every field the innermost of its
 * kind.
 */

/* A component: bytes between two '/', never empty, never holding '/' or NUL. */
struct span {
	const char *s;
	size_t n;
};

enum kind {
	K_OTHER,
	K_DOCKER_DIR,  /* "docker": cgroupfs parent of docker containers */
	K_KUBEPODS,    /* "kubepods": the cgroupfs driver's pod root */
	K_QOS,         /* "burstable", "besteffort" under kubepods */
	K_POD,         /* "pod<uid>" (cgroupfs) or a kubepods pod slice */
	K_SLURM_ROOT,  /* a parent of job_N: uid_N (v1), slurm, slurm_<node>, [<node>_]slurmstepd.scope (v2) */
	K_SLURM_JOB,   /* job_N */
	K_SLURM_STEP,  /* step_X */
	K_SLURM_USER,  /* a v2 step's "user" cgroup, parent of task_N */
};

struct parser {
	enum kind prev;
	enum cgctx_qos qos; /* of the last K_QOS */
};

/* ------------------------------------------------------------------ */
/* Small matchers                                                     */
/* ------------------------------------------------------------------ */

static bool span_is(struct span c, const char *lit)
{
	size_t n = strlen(lit);

	return c.n == n && memcmp(c.s, lit, n) == 0;
}

static bool span_starts(struct span c, const char *lit)
{
	size_t n = strlen(lit);

	return c.n >= n && memcmp(c.s, lit, n) == 0;
}

static bool span_ends(struct span c, const char *lit)
{
	size_t n = strlen(lit);

	return c.n >= n && memcmp(c.s + c.n - n, lit, n) == 0;
}

/* c without its first head and last tail bytes; the caller has checked they exist. */
static struct span span_cut(struct span c, size_t head, size_t tail)
{
	return (struct span){ c.s + head, c.n - head - tail };
}

static bool is_lower_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
}

static bool all_lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_lower_hex(s[i]))
			return false;
	return true;
}

bool cgctx_is_container_id(const char *s, size_t n)
{
	return s && n == CGCTX_ID_LEN && all_lower_hex(s, n);
}

/* A number as Slurm prints it (%u): 1-10 digits, no leading zero but "0" itself, at most UINT32_MAX. */
static bool is_slurm_number(struct span c)
{
	uint64_t v = 0;

	if (c.n == 0 || c.n > 10 || (c.s[0] == '0' && c.n > 1))
		return false;
	for (size_t i = 0; i < c.n; i++) {
		if (c.s[i] < '0' || c.s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(c.s[i] - '0');
	}
	return v <= UINT32_MAX;
}

/*
 * Copy c into a field of size bytes, zero to its end: a field holds nothing
 * of an earlier value, so equal contexts are equal bytes. The caller has
 * checked c.n < size.
 */
static void copy_field(char *field, size_t size, struct span c)
{
	if (c.n >= size)
		return;
	memcpy(field, c.s, c.n);
	memset(field + c.n, 0, size - c.n);
}

/*
 * A pod uid in canonical form into out: a UUID 8-4-4-4-12 of lowercase hex
 * whose separators are sep ('-' for cgroupfs, '_' in systemd slice names,
 * where '-' separates the hierarchy), written with dashes; or 32 lowercase
 * hex digits (a static pod's uid, a hash of its manifest), as is.
 */
static bool pod_uid_canonical(struct span u, char sep, char *out)
{
	static const size_t dash_at[] = { 8, 13, 18, 23 };

	if (u.n == 32 && all_lower_hex(u.s, u.n)) {
		copy_field(out, CGCTX_POD_UID_MAX, u);
		return true;
	}
	if (u.n != 36)
		return false;
	for (size_t i = 0, d = 0; i < u.n; i++) {
		if (d < 4 && i == dash_at[d]) {
			if (u.s[i] != sep)
				return false;
			d++;
		} else if (!is_lower_hex(u.s[i])) {
			return false;
		}
	}
	copy_field(out, CGCTX_POD_UID_MAX, u);
	for (size_t d = 0; d < 4; d++)
		out[dash_at[d]] = '-';
	return true;
}

/* ------------------------------------------------------------------ */
/* What a component says                                              */
/* ------------------------------------------------------------------ */

static void set_container(struct cgctx *out, enum cgctx_runtime rt, struct span id)
{
	copy_field(out->container_id, sizeof(out->container_id), id);
	out->runtime = rt;
	if (out->containers < UINT_MAX)
		out->containers++;
	/* A monitor runs beside its container; nothing is nested in one. */
	memset(out->monitor_of, 0, sizeof(out->monitor_of));
	out->monitor_runtime = CGCTX_RT_NONE;
}

static void set_monitor(struct cgctx *out, enum cgctx_runtime rt, struct span id)
{
	copy_field(out->monitor_of, sizeof(out->monitor_of), id);
	out->monitor_runtime = rt;
	if (out->container_id[0] == '\0')
		out->runtime = rt;
}

/*
 * Container cgroups named by their runtime: <prefix><id><suffix>. The
 * systemd driver makes scopes; the cgroupfs driver the bare name (CRI-O,
 * podman). docker's cgroupfs layout is a bare id under "docker" instead.
 */
static const struct named_container {
	const char *prefix;
	const char *suffix;
	enum cgctx_runtime runtime;
	bool monitor; /* conmon: beside the container, not in it */
} named_containers[] = {
	{ "docker-", ".scope", CGCTX_RT_DOCKER, false },
	{ "cri-containerd-", ".scope", CGCTX_RT_CONTAINERD, false },
	{ "nerdctl-", ".scope", CGCTX_RT_CONTAINERD, false },
	{ "crio-", ".scope", CGCTX_RT_CRIO, false },
	{ "crio-", "", CGCTX_RT_CRIO, false },
	{ "crio-conmon-", ".scope", CGCTX_RT_CRIO, true },
	{ "crio-conmon-", "", CGCTX_RT_CRIO, true },
	{ "libpod-", ".scope", CGCTX_RT_PODMAN, false },
	{ "libpod-", "", CGCTX_RT_PODMAN, false },
	{ "libpod-conmon-", ".scope", CGCTX_RT_PODMAN, true },
};

static bool match_named_container(struct span c, struct cgctx *out)
{
	for (size_t i = 0; i < sizeof(named_containers) / sizeof(named_containers[0]); i++) {
		const struct named_container *nc = &named_containers[i];
		size_t head = strlen(nc->prefix), tail = strlen(nc->suffix);
		struct span id;

		if (c.n != head + CGCTX_ID_LEN + tail || !span_starts(c, nc->prefix) || !span_ends(c, nc->suffix))
			continue;
		id = span_cut(c, head, tail);
		if (!cgctx_is_container_id(id.s, id.n))
			continue;
		if (nc->monitor)
			set_monitor(out, nc->runtime, id);
		else
			set_container(out, nc->runtime, id);
		return true;
	}
	return false;
}

/*
 * A Kubernetes pod slice (systemd driver): <root->kubepods[-<qos>]-pod<uid>.slice,
 * the uid's dashes as '_'. kubelet --cgroup-root=/kubelet.slice makes
 * kubelet-kubepods-...; a guaranteed pod has no QoS level.
 */
static bool match_pod_slice(struct span c, struct cgctx *out)
{
	static const struct {
		const char *name;
		enum cgctx_qos qos;
	} levels[] = { { "-burstable", CGCTX_QOS_BURSTABLE }, { "-besteffort", CGCTX_QOS_BESTEFFORT } };
	enum cgctx_qos qos = CGCTX_QOS_GUARANTEED;
	char uid[CGCTX_POD_UID_MAX] = { 0 };
	struct span body, before;
	size_t dash;

	if (!span_ends(c, ".slice"))
		return false;
	body = span_cut(c, 0, strlen(".slice"));
	for (dash = body.n; dash > 0 && body.s[dash - 1] != '-'; dash--)
		;
	if (dash == 0)
		return false;
	if (body.n - dash < 3 || memcmp(body.s + dash, "pod", 3) != 0 ||
	    !pod_uid_canonical(span_cut(body, dash + 3, 0), '_', uid))
		return false;
	before = (struct span){ body.s, dash - 1 };
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (span_ends(before, levels[i].name)) {
			qos = levels[i].qos;
			before.n -= strlen(levels[i].name);
			break;
		}
	}
	if (!span_is(before, "kubepods") && !span_ends(before, "-kubepods"))
		return false;
	memcpy(out->pod_uid, uid, sizeof(uid));
	out->qos = qos;
	return true;
}

/*
 * A systemd cgroupsPath ("slice:prefix:id") that runc's cgroupfs manager
 * took as a literal directory name - containerd with SystemdCgroup = false
 * under a kubelet using the systemd driver:
 *   /system.slice/containerd.service/kubepods-besteffort-pod<u_u>.slice:cri-containerd:<id>
 */
static bool match_colon_path(struct span c, struct cgctx *out)
{
	static const struct {
		const char *prefix;
		enum cgctx_runtime runtime;
	} prefixes[] = {
		{ "cri-containerd", CGCTX_RT_CONTAINERD },
		{ "crio", CGCTX_RT_CRIO },
		{ "docker", CGCTX_RT_DOCKER },
	};
	struct span id, rest;
	size_t colon;

	if (c.n < CGCTX_ID_LEN + 3 || c.s[c.n - CGCTX_ID_LEN - 1] != ':')
		return false;
	id = span_cut(c, c.n - CGCTX_ID_LEN, 0);
	if (!cgctx_is_container_id(id.s, id.n))
		return false;
	rest = (struct span){ c.s, c.n - CGCTX_ID_LEN - 1 };
	for (colon = rest.n; colon > 0 && rest.s[colon - 1] != ':'; colon--)
		;
	if (colon == 0)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (!span_is(span_cut(rest, colon, 0), prefixes[i].prefix))
			continue;
		match_pod_slice((struct span){ rest.s, colon - 1 }, out);
		set_container(out, prefixes[i].runtime, id);
		return true;
	}
	return false;
}

/* A systemd unit or slice name: [A-Za-z0-9:_.\-@], a non-empty name before the suffix, at most 255 bytes. */
static bool is_unit_name(struct span c, const char *suffix)
{
	if (c.n > CGCTX_UNIT_MAX - 1 || c.n <= strlen(suffix) || !span_ends(c, suffix))
		return false;
	for (size_t i = 0; i < c.n; i++) {
		char ch = c.s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == ':' || ch == '_' || ch == '.' || ch == '\\' || ch == '-' || ch == '@'))
			return false;
	}
	return true;
}

static void note_unit(struct span c, struct cgctx *out)
{
	static const char *const unit_suffixes[] = { ".service", ".scope", ".socket", ".mount", ".swap" };

	if (is_unit_name(c, ".slice")) {
		copy_field(out->slice, sizeof(out->slice), c);
		return;
	}
	for (size_t i = 0; i < sizeof(unit_suffixes) / sizeof(unit_suffixes[0]); i++) {
		if (is_unit_name(c, unit_suffixes[i])) {
			copy_field(out->unit, sizeof(out->unit), c);
			return;
		}
	}
}

/* "<prefix><number>" as Slurm names its cgroups: the number into field. */
static bool match_slurm_number(struct span c, const char *prefix, char *field, size_t size)
{
	struct span num;

	if (!span_starts(c, prefix))
		return false;
	num = span_cut(c, strlen(prefix), 0);
	if (!is_slurm_number(num) || num.n >= size)
		return false;
	copy_field(field, size, num);
	return true;
}

/* step_<id>: a number, a het job component "<n>+<n>", or batch, extern, interactive. */
static bool match_slurm_step(struct span c, struct cgctx *out)
{
	struct span step, left, right;
	const char *plus;

	if (!span_starts(c, "step_"))
		return false;
	step = span_cut(c, strlen("step_"), 0);
	if (span_is(step, "batch") || span_is(step, "extern") || span_is(step, "interactive") ||
	    is_slurm_number(step)) {
		copy_field(out->slurm_step, sizeof(out->slurm_step), step);
		return true;
	}
	plus = memchr(step.s, '+', step.n);
	if (!plus)
		return false;
	left = (struct span){ step.s, (size_t)(plus - step.s) };
	right = span_cut(step, left.n + 1, 0);
	if (!is_slurm_number(left) || !is_slurm_number(right))
		return false;
	copy_field(out->slurm_step, sizeof(out->slurm_step), step);
	return true;
}

static bool match_slurm_task(struct span c, struct cgctx *out)
{
	if (span_is(c, "task_special")) {
		copy_field(out->slurm_task, sizeof(out->slurm_task), span_cut(c, strlen("task_"), 0));
		return true;
	}
	return match_slurm_number(c, "task_", out->slurm_task, sizeof(out->slurm_task));
}

static bool is_slurm_root(struct span c)
{
	char uid[11] = { 0 };

	return span_is(c, "slurm") || (span_starts(c, "slurm_") && c.n > strlen("slurm_")) ||
	       span_is(c, "slurmstepd.scope") ||
	       (span_ends(c, "_slurmstepd.scope") && c.n > strlen("_slurmstepd.scope")) ||
	       match_slurm_number(c, "uid_", uid, sizeof(uid));
}

/* pod<uid> (cgroupfs driver), the uid dashed. */
static bool match_pod_dir(struct span c, enum cgctx_qos qos, struct cgctx *out)
{
	char uid[CGCTX_POD_UID_MAX] = { 0 };

	if (!span_starts(c, "pod") || !pod_uid_canonical(span_cut(c, strlen("pod"), 0), '-', uid))
		return false;
	memcpy(out->pod_uid, uid, sizeof(uid));
	out->qos = qos;
	return true;
}

/* The kinds that only mean something under a particular parent. */
static bool classify_in_context(struct parser *p, struct span c, struct cgctx *out, enum kind *kind)
{
	switch (p->prev) {
	case K_SLURM_ROOT: {
		char job[sizeof(out->slurm_job)] = { 0 };

		if (!match_slurm_number(c, "job_", job, sizeof(job)) || span_is(c, "job_0"))
			return false;
		memcpy(out->slurm_job, job, sizeof(job));
		memset(out->slurm_step, 0, sizeof(out->slurm_step));
		memset(out->slurm_task, 0, sizeof(out->slurm_task));
		out->slurm_stepd = false;
		*kind = K_SLURM_JOB;
		return true;
	}
	case K_SLURM_JOB:
		if (!match_slurm_step(c, out))
			return false;
		memset(out->slurm_task, 0, sizeof(out->slurm_task));
		out->slurm_stepd = false;
		*kind = K_SLURM_STEP;
		return true;
	case K_SLURM_STEP:
		if (span_is(c, "user")) { /* v2: the user's processes, in task_N below */
			*kind = K_SLURM_USER;
			return true;
		}
		if (span_is(c, "slurm")) { /* v2: the step's slurmstepd */
			out->slurm_stepd = true;
			*kind = K_OTHER;
			return true;
		}
		/* v1: task_N right under the step */
		if (!match_slurm_task(c, out))
			return false;
		*kind = K_OTHER;
		return true;
	case K_SLURM_USER:
		if (!match_slurm_task(c, out))
			return false;
		*kind = K_OTHER;
		return true;
	case K_KUBEPODS:
		if (span_is(c, "burstable") || span_is(c, "besteffort")) {
			p->qos = c.s[1] == 'u' ? CGCTX_QOS_BURSTABLE : CGCTX_QOS_BESTEFFORT;
			*kind = K_QOS;
			return true;
		}
		/* a guaranteed pod sits right under kubepods */
		if (!match_pod_dir(c, CGCTX_QOS_GUARANTEED, out))
			return false;
		*kind = K_POD;
		return true;
	case K_QOS:
		if (!match_pod_dir(c, p->qos, out))
			return false;
		*kind = K_POD;
		return true;
	case K_DOCKER_DIR:
		if (!cgctx_is_container_id(c.s, c.n))
			return false;
		set_container(out, CGCTX_RT_DOCKER, c);
		*kind = K_OTHER;
		return true;
	case K_POD:
		if (!cgctx_is_container_id(c.s, c.n))
			return false;
		set_container(out, CGCTX_RT_KUBERNETES, c);
		*kind = K_OTHER;
		return true;
	case K_OTHER:
		return false;
	}
	return false;
}

static enum kind classify(struct parser *p, struct span c, struct cgctx *out)
{
	enum kind kind = K_OTHER;

	note_unit(c, out);
	if (classify_in_context(p, c, out, &kind))
		return kind;
	if (span_is(c, "docker"))
		return K_DOCKER_DIR;
	if (span_is(c, "kubepods"))
		return K_KUBEPODS;
	if (is_slurm_root(c))
		return K_SLURM_ROOT;
	if (match_named_container(c, out) || match_colon_path(c, out))
		return K_OTHER;
	if (match_pod_slice(c, out))
		return K_POD;
	/* A bare id where no runtime is known to put one (/ecs/<task>/<id>, /default/<id>). */
	if (cgctx_is_container_id(c.s, c.n))
		set_container(out, CGCTX_RT_UNKNOWN, c);
	return K_OTHER;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                       */
/* ------------------------------------------------------------------ */

int cgctx_parse(const char *path, size_t len, unsigned flags, struct cgctx *out)
{
	struct parser p = { .prev = K_OTHER, .qos = CGCTX_QOS_NONE };
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!path || memchr(path, '\0', len))
		return -EINVAL;
	if (len > 0 && path[0] == '/') {
		i = 1;
	} else if (flags & CGCTX_TRUNCATED) {
		/* The first component may be the tail of a longer name: start after it. */
		const char *slash = memchr(path, '/', len);

		if (!slash)
			goto done;
		i = (size_t)(slash - path) + 1;
	} else {
		return -EINVAL;
	}
	if (i == len && i == 1)
		goto done; /* the root */
	for (;;) {
		const char *slash = memchr(path + i, '/', len - i);
		struct span c = { path + i, slash ? (size_t)(slash - (path + i)) : len - i };

		if (c.n == 0 || span_is(c, ".") || span_is(c, ".."))
			goto invalid;
		p.prev = classify(&p, c, out);
		if (!slash)
			break;
		i += c.n + 1;
	}
done:
	out->truncated = (flags & CGCTX_TRUNCATED) != 0;
	return 0;
invalid:
	memset(out, 0, sizeof(*out));
	return -EINVAL;
}

const char *cgctx_runtime_name(enum cgctx_runtime runtime)
{
	switch (runtime) {
	case CGCTX_RT_NONE:
		return "";
	case CGCTX_RT_DOCKER:
		return "docker";
	case CGCTX_RT_CONTAINERD:
		return "containerd";
	case CGCTX_RT_CRIO:
		return "cri-o";
	case CGCTX_RT_PODMAN:
		return "podman";
	case CGCTX_RT_KUBERNETES:
		return "kubernetes";
	case CGCTX_RT_UNKNOWN:
		return "unknown";
	}
	return "";
}

const char *cgctx_qos_name(enum cgctx_qos qos)
{
	switch (qos) {
	case CGCTX_QOS_NONE:
		return "";
	case CGCTX_QOS_GUARANTEED:
		return "guaranteed";
	case CGCTX_QOS_BURSTABLE:
		return "burstable";
	case CGCTX_QOS_BESTEFFORT:
		return "besteffort";
	}
	return "";
}

size_t cgctx_short_id(const char *id, char *out, size_t size)
{
	if (!out || size == 0)
		return 0;
	out[0] = '\0';
	if (!id || size < CGCTX_SHORT_ID_LEN + 1 || !cgctx_is_container_id(id, strnlen(id, CGCTX_ID_LEN + 1)))
		return 0;
	memcpy(out, id, CGCTX_SHORT_ID_LEN);
	out[CGCTX_SHORT_ID_LEN] = '\0';
	return CGCTX_SHORT_ID_LEN;
}
