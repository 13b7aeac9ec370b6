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
	case TR_COUNTERS: return sizeof(struct tr_counters);
	case TR_END: return sizeof(struct tr_end);
	default: return 0;
	}
}

static int pid_ok(uint32_t pid)
{
	return pid != 0 && pid <= DECODE_PID_LIMIT;
}

/* d->buf holds a copy of a record of this type and a plausible length. */
static int decode_exec(struct decoded *d, uint32_t len)
{
	struct decoded_exec *x = &d->u.exec;
	const char *path = (const char *)d->buf + sizeof(x->rec);
	const char *nul;

	memcpy(&x->rec, d->buf, sizeof(x->rec));
	/* 64-bit sum: two 32-bit lengths from the record cannot overflow it. */
	if ((uint64_t)sizeof(x->rec) + x->rec.path_len + x->rec.argv_len != len)
		return refuse(d, DECODE_ERR_LENGTH);
	if (x->rec.path_len == 0 || x->rec.path_len > TR_PATH_MAX)
		return refuse(d, DECODE_ERR_PATH);
	/* The kernel writes the path with its NUL at path_len - 1 and none before. */
	nul = memchr(path, 0, x->rec.path_len);
	if (!nul || (uint32_t)(nul - path) != x->rec.path_len - 1)
		return refuse(d, DECODE_ERR_PATH);
	if (x->rec.argv_len > TR_ARGV_MAX || x->rec.argv_len > x->rec.argv_true_len)
		return refuse(d, DECODE_ERR_ARGV);
	if (!pid_ok(x->rec.pid) || !pid_ok(x->rec.tgid) || x->rec.ppid > DECODE_PID_LIMIT)
		return refuse(d, DECODE_ERR_PID);
	x->path = path;
	x->path_len = x->rec.path_len - 1;
	x->argv = path + x->rec.path_len;
	x->argv_len = x->rec.argv_len;
	memcpy(x->comm, x->rec.comm, TR_COMM_LEN);
	x->comm[TR_COMM_LEN] = 0;
	return 0;
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
	default:
		break;
	}
	return 0;
}

int decode_record(struct decoded *d, unsigned type, const void *payload, uint32_t len)
{
	size_t want = fixed_size(type);
	struct tr_hdr h;

	d->error = DECODE_OK;
	d->type = 0;
	if (type != TR_EXEC && want == 0)
		return refuse(d, DECODE_ERR_TYPE);
	/* Lengths first: nothing is read from the payload before its size is known to be sane. */
	if (type == TR_EXEC ? len < sizeof(struct tr_exec) || len > DECODE_MAX_LEN : len != want)
		return refuse(d, DECODE_ERR_LENGTH);
	/* The one read of shared memory: everything below uses this copy. */
	memcpy(d->buf, payload, len);
	d->buf[len] = 0;
	memcpy(&h, d->buf, sizeof(h));
	if (h.type != type)
		return refuse(d, DECODE_ERR_HDR_TYPE);
	if (h.version != RECORDS_VERSION)
		return refuse(d, DECODE_ERR_VERSION);
	d->type = type;
	d->ts_ns = h.ts_ns;
	if (type == TR_EXEC) {
		int err = decode_exec(d, len);

		if (err)
			d->type = 0;
		return err;
	}
	/* Fixed-size types: the union member has exactly `want` bytes. */
	memcpy(&d->u, d->buf, want);
	if (check_pids(d)) {
		d->type = 0;
		return -EBADMSG;
	}
	return 0;
}
