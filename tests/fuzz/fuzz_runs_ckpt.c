/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: reading the runs' checkpoint (attrib/runs_ckpt.c), then
 * a look at the runs it brought back (report/live.c), with abort() on a
 * broken invariant.
 *
 * Input: a checkpoint file. When the first byte is odd, the rest is taken
 * as the payload and a well-formed header (magic, version, layout, length,
 * checksum; run and process counts from the payload's first bytes) is put
 * in front, so that mutations reach the parts after the checksum.
 *
 * Invariants: ckpt_read returns 0 or a negative errno with a message; a
 * refused file leaves no run live after the caller clears; the table
 * stays within its bound; every live record is a JSON object within
 * TL_RUN_MAX; nothing leaks (LeakSanitizer).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "fuzz_check.h"
#include "lake.h"
#include "live.h"
#include "runs.h"
#include "runs_ckpt.h"
#include "session.h"
#include "steps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int emit(void *ctx, uint16_t type, const void *payload, uint32_t len)
{
	const char *p = payload;

	(void)ctx;
	CHECK(type == TL_RUN || type == TL_TOOLS);
	CHECK(len >= 2 && len <= TL_RUN_MAX && p[0] == '{' && p[len - 1] == '}');
	return 0;
}

/* The payload behind a header that passes the checks, for odd first bytes. */
static uint8_t *framed(const uint8_t *data, size_t size, size_t *len)
{
	struct ckpt_header h;
	uint8_t *buf;

	if (size == 0 || !(data[0] & 1)) {
		*len = size;
		return NULL;
	}
	data++;
	size--;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CKPT_MAGIC, sizeof(h.magic));
	h.version = CKPT_VERSION;
	h.run_size = sizeof(struct run);
	h.nruns = size > 0 ? data[0] % 4 : 0;
	h.nprocs = size > 1 ? data[1] % 16 : 0;
	h.ring_gen = 1;
	h.payload_len = size;
	h.crc = (uint32_t)crc32(0L, data, (uInt)size);
	buf = malloc(sizeof(h) + size + 1);
	CHECK(buf != NULL);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), data, size);
	*len = sizeof(h) + size;
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct session ss;
	static struct steps steps;
	static struct runs runs;
	static struct live live;
	struct ckpt_stats st;
	char err[256];
	uint32_t gen = 0;
	uint64_t pos = 0;
	size_t len;
	uint8_t *buf = framed(data, size, &len);
	int rc;

	CHECK(session_init(&ss, 1024, 0, 1) == 0);
	CHECK(steps_init(&steps, 256, 2) == 0);
	runs_init(&runs, "f00d");
	live_init(&live);
	live.emit = emit;
	ss.tab.on_evict = runs_on_evict;
	ss.tab.evict_ctx = &runs;
	err[0] = 0;
	rc = ckpt_read(buf ? buf : data, len, &runs, &ss.tab, &gen, &pos, &st, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc) {
		CHECK(rc == -ENOMEM || err[0]);
		runs_free(&runs);
		runs_init(&runs, "f00d");
		proctab_clear(&ss.tab);
		CHECK(ss.tab.used == 0);
	}
	CHECK(ss.tab.used <= ss.tab.max);
	CHECK(live_cycle(&live, &ss, &steps, &runs, 5000000000ULL) == 0);
	CHECK(live_cycle(&live, &ss, &steps, &runs, 11000000000ULL) == 0);
	live_free(&live);
	runs_free(&runs);
	steps_free(&steps);
	session_free(&ss);
	free(buf);
	return 0;
}
