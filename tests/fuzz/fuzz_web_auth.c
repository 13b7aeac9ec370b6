/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: tracer-web's access check (web/auth.c) on what a
 * client sends, with abort() on a broken invariant.
 *
 * Input: an Authorization header and a Cookie header, split at the first
 * NUL byte (no NUL: only the Authorization header); a header that is
 * empty is taken as absent.
 *
 * Invariants: a token found lies inside the header it came from, with no
 * space at either end when it came from Authorization and no ';' when it
 * came from the cookie; the check of it is NONE only when there is none,
 * OK exactly when it is byte for byte the configured token, and the same
 * on a second call; nothing reads past the headers (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TOKEN "fuzz-token-0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct auth a;
	static int ready;
	char *text = malloc(size + 2), *cookie, *hdr;
	const char *t;
	size_t len = 0, hlen;
	enum auth_result r;
	char err[256];

	CHECK(text != NULL);
	if (!ready) {
		CHECK(auth_set(&a, TOKEN, strlen(TOKEN), err, sizeof(err)) == 0);
		ready = 1;
	}
	memcpy(text, data, size);
	text[size] = 0;
	text[size + 1] = 0;
	hdr = text;
	hlen = strlen(hdr);
	cookie = hlen < size ? text + hlen + 1 : NULL;
	t = auth_from_headers(*hdr ? hdr : NULL, cookie && *cookie ? cookie : NULL, &len);
	if (t) {
		const char *from = *hdr ? hdr : cookie;

		CHECK(t >= from && t + len <= from + strlen(from));
		if (*hdr && len) {
			CHECK(t[0] != ' ' && t[len - 1] != ' ');
		}
		if (!*hdr)
			CHECK(memchr(t, ';', len) == NULL);
	} else {
		CHECK(len == 0);
	}
	r = auth_check(&a, t, len);
	CHECK(r == auth_check(&a, t, len));
	CHECK((r == AUTH_NONE) == (!t || !len));
	CHECK((r == AUTH_OK) == (t && len == strlen(TOKEN) && !memcmp(t, TOKEN, len)));
	free(text);
	return 0;
}
