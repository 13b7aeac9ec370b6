/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the one parser the processor runs on the ingest's
 * answer, the Retry-After header's value (upload_parse_retry_after; the
 * uploader keeps at most 63 bytes of it), with abort() on a broken
 * invariant.
 *
 * Input: [0..7] the current CLOCK_REALTIME in seconds (little-endian,
 * signed), then the header's value (cut at a NUL, at most 63 bytes, as
 * on_header keeps it).
 *
 * Invariants: never more than an hour (RETRY_AFTER_HOUR_NS), whatever the
 * value or the clock; delay-seconds (digits between optional blanks, and
 * trailing CR/LF) are that many seconds, capped at the hour, and a number
 * followed by anything else is no delay at all; anything else is an
 * HTTP date, or no delay: a date's delay never grows as the clock moves
 * on, is a whole number of seconds, and is the same from a copy that
 * differs only in trailing CR/LF.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upload.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEC 1000000000ULL
#define RETRY_AFTER_HOUR_NS (3600 * SEC) /* the uploader's longest wait (upload.c) */
#define VALUE_MAX 63

/* The model of delay-seconds: 1 when v is one, with *s its value capped at an hour. */
static int delay_seconds(const char *v, uint64_t *s)
{
	size_t i = 0;

	while (v[i] == ' ' || v[i] == '\t')
		i++;
	if (v[i] < '0' || v[i] > '9')
		return 0;
	*s = 0;
	for (; v[i] >= '0' && v[i] <= '9'; i++)
		if ((*s = *s * 10 + (uint64_t)(v[i] - '0')) > 3600)
			*s = 3601; /* stays above the cap, never wraps */
	while (v[i] == ' ' || v[i] == '\t' || v[i] == '\r' || v[i] == '\n')
		i++;
	if (v[i])
		*s = 0; /* a number then something else: no delay */
	else if (*s > 3600)
		*s = 3600;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char v[VALUE_MAX + 3];
	int64_t now = 0;
	uint64_t got, later, secs;
	size_t n;

	if (size < 8)
		return 0;
	memcpy(&now, data, sizeof(now));
	/* A clock within a few thousand years: time_t arithmetic in the parser stays meaningful. */
	now %= (int64_t)1 << 40;
	n = size - 8 < VALUE_MAX ? size - 8 : VALUE_MAX;
	memcpy(v, data + 8, n);
	v[n] = 0;
	got = upload_parse_retry_after(v, now);
	CHECK(got <= RETRY_AFTER_HOUR_NS);
	if (delay_seconds(v, &secs)) {
		CHECK(got == secs * SEC);
		return 0;
	}
	CHECK(got % SEC == 0);
	later = upload_parse_retry_after(v, now + 1);
	CHECK(later <= got);
	CHECK(got == 0 || later == got - SEC || got == RETRY_AFTER_HOUR_NS);
	n = strlen(v);
	memcpy(v + n, "\r\n", 3);
	CHECK(upload_parse_retry_after(v, now) == got);
	return 0;
}
