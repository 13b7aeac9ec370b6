/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the processor sends to the lake for a kernel record: the record as
 * the decoder validated it (its private copy, never the shared ring's
 * bytes again), except that an exec's argument area is redacted first. So
 * no secret the redaction rules know reaches the spool, the wire or the
 * lake.
 */
#ifndef TRACER_DELIVERY_LAKEOUT_H
#define TRACER_DELIVERY_LAKEOUT_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "redact.h"

/* Room for any record lakeout_record writes. */
#define LAKEOUT_MAX DECODE_MAX_LEN

/*
 * d: a record decode_record accepted, of len payload bytes. Writes the
 * lake's copy into out (cap >= LAKEOUT_MAX), its length to *outlen and
 * frame flags (TR_FRAME_REDACTED for an exec) to *flags; *nredacted: how
 * many arguments were replaced. 0, or -ENOSPC.
 */
int lakeout_record(const struct redact_rules *r, const struct decoded *d, uint32_t len, uint8_t *out, size_t cap,
		   uint32_t *outlen, uint16_t *flags, unsigned *nredacted);

#endif /* TRACER_DELIVERY_LAKEOUT_H */
