/* SPDX-License-Identifier: Apache-2.0 */
#include "decode.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static const char *const error_names[DECODE_ERR_COUNT] = {
	[DECODE_OK] = "ok",
	[DECODE_ERR_TYPE] = "type",
	[DECODE_ERR_LENGTH] = "length",
	[DECODE_ERR_HDR_TYPE] = "header_type",
	[DECODE_ERR_VERSION] = "version",
	[DECODE_ERR_PATH] = "path",
	[DECODE_ERR_ARGV] = "argv",
	[DECODE_ERR_PID] = "pid",
	[DECODE_ERR_CWD] = "cwd",
	[DECODE_ERR_ENV] = "env",
	[DECODE_ERR_CGROUP] = "cgroup",
	[DECODE_ERR_FILE] = "file",
};

const char *decode_error_name(enum decode_error e)
{
	return (unsigned)e < DECODE_ERR_COUNT ? error_names[e] : "unknown";
}

static int refuse(struct decoded *d, enum decode_error e)
{
	d->error = e;
	if (e == DECODE_ERR_TYPE)
		return -EPROTONOSUPPORT;
	return e == DECODE_ERR_VERSION ? -EPROTO : -EBADMSG;
}

/* The exact size of each fixed-size type; 0 for types decoded otherwise or not at all. */
static size_t fixed_size(unsigned type)
{
	switch (type) {
	case TR_FORK: return sizeof(struct tr_fork);
	case TR_EXIT: return sizeof(struct tr_exit);
	case TR_OOM: return sizeof(struct tr_oom);
	case TR_SAMPLE: return sizeof(struct tr_sample);
	case TR_COUNTERS: return sizeof(struct tr_counters);
	case TR_END: return sizeof(struct tr_end);
	default: return 0;
	}
}

static int pid_ok(uint32_t pid)
{
	return pid != 0 && pid <= DECODE_PID_LIMIT;
}

/*
 * A string of len bytes (NUL included) at s: its only NUL is its last
 * byte. The kernel writes every path that way.
 */
static int exact_string(const char *s, uint32_t len)
{
	const char *nul = len ? memchr(s, 0, len) : NULL;

	return nul && (uint32_t)(nul - s) == len - 1;
}

/* Allowlisted environment: NUL-terminated strings, each with a non-empty KEY before '='. */
static int env_ok(const char *env, uint32_t len)
{
	uint32_t off = 0;

	if (len == 0)
		return 1;
	if (env[len - 1] != 0)
		return 0;
	while (off < len) {
		size_t n = strlen(env + off);
		const char *eq = memchr(env + off, '=', n);

		if (!eq || eq == env + off)
			return 0;
		off += (uint32_t)n + 1;
	}
	return 1;
}

/* d->buf holds a copy of a record of this type and a plausible length. */
static int decode_exec(struct decoded *d, uint32_t len)
{
	struct decoded_exec *x = &d->u.exec;
	const char *path = (const char *)d->buf + sizeof(x->rec), *cwd, *env;

	memcpy(&x->rec, d->buf, sizeof(x->rec));
	/* 64-bit sum: four 32-bit lengths from the record cannot overflow it. */
	if ((uint64_t)sizeof(x->rec) + x->rec.path_len + x->rec.argv_len + x->rec.cwd_len + x->rec.env_len != len)
		return refuse(d, DECODE_ERR_LENGTH);
	/* The kernel writes the path with its NUL at path_len - 1 and none before. */
	if (x->rec.path_len > TR_PATH_MAX || !exact_string(path, x->rec.path_len))
		return refuse(d, DECODE_ERR_PATH);
	if (x->rec.argv_len > TR_ARGV_MAX || x->rec.argv_len > x->rec.argv_true_len)
		return refuse(d, DECODE_ERR_ARGV);
	cwd = path + x->rec.path_len + x->rec.argv_len;
	if (x->rec.cwd_len > TR_CWD_MAX || (x->rec.cwd_len && (!exact_string(cwd, x->rec.cwd_len) || cwd[0] != '/')))
		return refuse(d, DECODE_ERR_CWD);
	env = cwd + x->rec.cwd_len;
	if (x->rec.env_len > TR_ENV_MAX || !env_ok(env, x->rec.env_len))
		return refuse(d, DECODE_ERR_ENV);
	if (!pid_ok(x->rec.pid) || !pid_ok(x->rec.tgid) || x->rec.ppid > DECODE_PID_LIMIT)
		return refuse(d, DECODE_ERR_PID);
	x->path = path;
	x->path_len = x->rec.path_len - 1;
	/*
	 * The argument area is followed by cwd, not by a NUL, in the record:
	 * give it its own terminator in a copy the views can point at.
	 */
	memcpy(d->argv_copy, path + x->rec.path_len, x->rec.argv_len);
	d->argv_copy[x->rec.argv_len] = 0;
	x->argv = d->argv_copy;
	x->argv_len = x->rec.argv_len;
	x->cwd = x->rec.cwd_len ? cwd : "";
	x->cwd_len = x->rec.cwd_len ? x->rec.cwd_len - 1 : 0;
	x->env = env;
	x->env_len = x->rec.env_len;
	memcpy(x->comm, x->rec.comm, TR_COMM_LEN);
	x->comm[TR_COMM_LEN] = 0;
	return 0;
}

/* A path record (cgroup, file): fixed part, then path_len bytes of absolute path. */
static int decode_path(struct decoded *d, uint32_t len, size_t fixed, uint32_t path_len, uint32_t max,
		       enum decode_error err, const char **out, uint32_t *out_len)
{
	const char *path = (const char *)d->buf + fixed;

	if ((uint64_t)fixed + path_len != len)
		return refuse(d, DECODE_ERR_LENGTH);
	if (path_len < 2 || path_len > max || !exact_string(path, path_len) || path[0] != '/')
		return refuse(d, err);
	*out = path;
	*out_len = path_len - 1;
	return 0;
}

static int decode_variable(struct decoded *d, unsigned type, uint32_t len)
{
	switch (type) {
	case TR_EXEC:
		return decode_exec(d, len);
	case TR_CGROUP: {
		struct decoded_cgroup *c = &d->u.cgroup;

		memcpy(&c->rec, d->buf, sizeof(c->rec));
		if (c->rec.v1 > 1)
			return refuse(d, DECODE_ERR_CGROUP);
		return decode_path(d, len, sizeof(c->rec), c->rec.path_len, TR_CGROUP_PATH_MAX, DECODE_ERR_CGROUP,
				   &c->path, &c->path_len);
	}
	default: { /* TR_FILE */
		struct decoded_file *f = &d->u.file;

		memcpy(&f->rec, d->buf, sizeof(f->rec));
		if (!pid_ok(f->rec.tgid))
			return refuse(d, DECODE_ERR_PID);
		if ((f->rec.mode & ~(uint32_t)(TR_FILE_READ | TR_FILE_WRITE | TR_FILE_TRUNCATED)) ||
		    !(f->rec.mode & (TR_FILE_READ | TR_FILE_WRITE)))
			return refuse(d, DECODE_ERR_FILE);
		return decode_path(d, len, sizeof(f->rec), f->rec.path_len, TR_FILE_PATH_MAX, DECODE_ERR_FILE,
				   &f->path, &f->path_len);
	}
	}
}

/* Variable-length types: their fixed part and largest size. */
static int variable_bounds(unsigned type, size_t *min, size_t *max)
{
	switch (type) {
	case TR_EXEC: *min = sizeof(struct tr_exec); *max = DECODE_MAX_LEN; return 1;
	case TR_CGROUP: *min = sizeof(struct tr_cgroup); *max = sizeof(struct tr_cgroup) + TR_CGROUP_PATH_MAX; return 1;
	case TR_FILE: *min = sizeof(struct tr_file); *max = sizeof(struct tr_file) + TR_FILE_PATH_MAX; return 1;
	default: return 0;
	}
}

/* The length of a fixed record of a version (older exits and samples lack their last fields); want otherwise. */
static size_t versioned_size(unsigned type, unsigned version, size_t want)
{
	if (type == TR_EXIT)
		return version == 2 ? TR_EXIT_V2_SIZE
		       : version == 3 ? TR_EXIT_V3_SIZE
		       : version == 4 ? TR_EXIT_V4_SIZE
				      : sizeof(struct tr_exit);
	if (type == TR_SAMPLE)
		return version < 4 ? TR_SAMPLE_V3_SIZE : version == 4 ? TR_SAMPLE_V4_SIZE : sizeof(struct tr_sample);
	return want;
}

static int check_pids(struct decoded *d)
{
	switch (d->type) {
	case TR_FORK:
		if (!pid_ok(d->u.fork.parent_tgid) || !pid_ok(d->u.fork.child_tgid))
			return refuse(d, DECODE_ERR_PID);
		break;
	case TR_EXIT:
		if (!pid_ok(d->u.exit.pid) || !pid_ok(d->u.exit.tgid) || d->u.exit.ppid > DECODE_PID_LIMIT)
			return refuse(d, DECODE_ERR_PID);
		break;
	case TR_OOM:
		if (!pid_ok(d->u.oom.pid))
			return refuse(d, DECODE_ERR_PID);
		break;
	case TR_SAMPLE:
		if (!pid_ok(d->u.sample.tgid) || d->u.sample.ppid > DECODE_PID_LIMIT)
			return refuse(d, DECODE_ERR_PID);
		break;
	default:
		break;
	}
	return 0;
}

int decode_record(struct decoded *d, unsigned type, const void *payload, uint32_t len)
{
	size_t want = fixed_size(type), min = 0, max = 0;
	int variable = variable_bounds(type, &min, &max);
	struct tr_hdr h;

	d->error = DECODE_OK;
	d->type = 0;
	if (!variable && want == 0)
		return refuse(d, DECODE_ERR_TYPE);
	/* Lengths first: nothing is read from the payload before its size is known to be sane. */
	if ((type == TR_EXIT && (len == TR_EXIT_V2_SIZE || len == TR_EXIT_V3_SIZE || len == TR_EXIT_V4_SIZE)) ||
	    (type == TR_SAMPLE && (len == TR_SAMPLE_V3_SIZE || len == TR_SAMPLE_V4_SIZE)))
		want = len; /* an older exit or sample: checked against the header below */
	if (variable ? len < min || len > max : len != want)
		return refuse(d, DECODE_ERR_LENGTH);
	/* The one read of shared memory: everything below uses this copy. */
	memcpy(d->buf, payload, len);
	d->buf[len] = 0;
	memcpy(&h, d->buf, sizeof(h));
	if (h.type != type)
		return refuse(d, DECODE_ERR_HDR_TYPE);
	if (h.version < RECORDS_VERSION_MIN || h.version > RECORDS_VERSION ||
	    want != versioned_size(type, h.version, want))
		return refuse(d, h.version == RECORDS_VERSION ? DECODE_ERR_LENGTH : DECODE_ERR_VERSION);
	d->type = type;
	d->ts_ns = h.ts_ns;
	if (variable) {
		int err = decode_variable(d, type, len);

		if (err)
			d->type = 0;
		return err;
	}
	/*
	 * Fixed-size types: the union member has exactly `want` bytes. An old
	 * exit or sample has fewer: the fields it lacks read 0 (unknown), a
	 * version-2 exit says its image peak is unknown, and one before
	 * version 5 that reclaim was not measured.
	 */
	if (type == TR_EXIT)
		memset(&d->u.exit, 0, sizeof(d->u.exit));
	if (type == TR_SAMPLE)
		memset(&d->u.sample, 0, sizeof(d->u.sample));
	memcpy(&d->u, d->buf, want);
	if (want == TR_EXIT_V2_SIZE)
		d->u.exit.flags |= TR_EXIT_NO_IMAGE_PEAK;
	if (type == TR_EXIT && want < sizeof(struct tr_exit))
		d->u.exit.flags |= TR_EXIT_NO_RECLAIM;
	if (type == TR_SAMPLE && want < sizeof(struct tr_sample))
		d->u.sample.flags |= TR_EXIT_NO_RECLAIM;
	if (check_pids(d)) {
		d->type = 0;
		return -EBADMSG;
	}
	return 0;
}
