/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A lake record as it is framed on disk (processor spool segments) and on
 * the wire (the body of a signed batch): the same bytes in both places, so
 * the checksum computed when the processor spools a record is the one the
 * ingest verifies and stores.
 *
 *   0        8         16        20     22     24     28     32
 *   +--------+---------+---------+------+------+------+------+---------------------+---------+
 *   | seq    | src_pos | src_gen | type | flags| len  | crc  | payload (len bytes) | pad to 8|
 *   +--------+---------+---------+------+------+------+------+---------------------+---------+
 *
 * seq: this host's record sequence number, from 1, +1 per record, never
 * reused (the spool persists it). src_pos, src_gen: where a kernel record
 * came from - its position in the collector's shared ring and the low 32
 * bits of that ring's generation - so that a restarted processor skips
 * the records its spool already has (0, 0 for the processor's own
 * records). type: a kernel record type (records.h, 16..33) or a lake
 * record type (lake.h, 64..). crc: zlib crc32 of bytes 0..27 of the frame
 * followed by the payload. Pad bytes: 0. All integers little-endian (the
 * only byte order tracer runs on).
 */
#ifndef TRACER_FRAME_H
#define TRACER_FRAME_H

#include <stdint.h>

struct tr_frame {
	uint64_t seq;
	uint64_t src_pos;
	uint32_t src_gen;
	uint16_t type;
	uint16_t flags;  /* TR_FRAME_* */
	uint32_t len;    /* payload bytes, not counting pad */
	uint32_t crc;
	/* uint8_t payload[len]; zero pad to a multiple of 8 */
};

#define TR_FRAME_HDR 32u
#define TR_FRAME_ALIGN 8u
#define TR_FRAME_MAX_PAYLOAD (16u << 20) /* 16 MiB: a whole run report fits */
#define TR_FRAME_CRC_SPAN 28u            /* bytes of the header covered by crc: all before it */

/* Flags. */
#define TR_FRAME_REDACTED 0x1 /* the payload's argument areas went through the processor's redaction */

/* Bytes a frame with len bytes of payload takes, header and pad included. */
#define TR_FRAME_SIZE(len) (TR_FRAME_HDR + (((uint64_t)(len) + TR_FRAME_ALIGN - 1) & ~(uint64_t)(TR_FRAME_ALIGN - 1)))

_Static_assert(sizeof(struct tr_frame) == TR_FRAME_HDR, "frame header is 32 bytes");
_Static_assert(__builtin_offsetof(struct tr_frame, crc) == TR_FRAME_CRC_SPAN, "crc right after the covered span");

#endif /* TRACER_FRAME_H */
