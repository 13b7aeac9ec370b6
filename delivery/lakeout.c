/* SPDX-License-Identifier: Apache-2.0 */
#include "lakeout.h"

#include <errno.h>
#include <string.h>

#include "frame.h"

/* An exec record rebuilt around its redacted argument area (never longer than the original). */
static int exec_redacted(const struct redact_rules *r, const struct decoded_exec *e, uint8_t *out, size_t cap,
			 uint32_t *outlen, unsigned *nredacted)
{
	unsigned rflags = (e->rec.flags & (TR_EXEC_ARGV_TRUNCATED | TR_EXEC_ARGV_FAULT)) ? REDACT_TRUNCATED : 0;
	struct tr_exec rec = e->rec;
	size_t argv_len = 0, off = sizeof(rec);
	char *argv_out = (char *)out + off + rec.path_len;

	if (cap < sizeof(rec) + (size_t)rec.path_len + rec.argv_len + rec.cwd_len + rec.env_len)
		return -ENOSPC;
	if (redact_area(r, e->argv, e->argv_len, rflags, argv_out, rec.argv_len, &argv_len, nredacted) ||
	    argv_len > rec.argv_len)
		return -ENOSPC; /* cannot happen: the output is bounded by the input */
	rec.argv_len = (uint32_t)argv_len;
	memcpy(out + off, e->path, rec.path_len); /* path_len counts its NUL; e->path is NUL-terminated there */
	off += rec.path_len + argv_len;
	if (rec.cwd_len)
		memcpy(out + off, e->cwd, rec.cwd_len);
	off += rec.cwd_len;
	memcpy(out + off, e->env, rec.env_len);
	off += rec.env_len;
	memcpy(out, &rec, sizeof(rec));
	*outlen = (uint32_t)off;
	return 0;
}

int lakeout_record(const struct redact_rules *r, const struct decoded *d, uint32_t len, uint8_t *out, size_t cap,
		   uint32_t *outlen, uint16_t *flags, unsigned *nredacted)
{
	*nredacted = 0;
	if (d->type == TR_EXEC) {
		*flags = TR_FRAME_REDACTED;
		return exec_redacted(r, &d->u.exec, out, cap, outlen, nredacted);
	}
	if (len > cap || len > sizeof(d->buf))
		return -ENOSPC;
	memcpy(out, d->buf, len); /* the decoder's private copy: what was checked is what is sent */
	*outlen = len;
	*flags = 0;
	return 0;
}
