/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web's access check (docs/web.md, "Access"). A request is let in
 * when it carries the token of the token file: in the header
 * "Authorization: Bearer TOKEN", or in the cookie tracer_token, which
 * "GET PATH?token=TOKEN" sets (as Jupyter does) so that a browser, and
 * its EventSource, need nothing else. The token is never compared as
 * text: both sides are hashed (BLAKE2b-256, libsodium) and the hashes
 * compared in constant time, so neither the time taken nor an early exit
 * says how much of a guess was right, or how long the token is.
 */
#ifndef TRACER_WEB_AUTH_H
#define TRACER_WEB_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_TOKEN_MIN 16    /* characters of a token file's token, at least */
#define AUTH_TOKEN_MAX 256   /* ... at most */
#define AUTH_COOKIE "tracer_token"

struct auth {
	uint8_t hash[32];        /* of the token; the token itself is not kept */
};

enum auth_result {
	AUTH_NONE = 0,           /* no token presented: 401 */
	AUTH_BAD,                /* a token that is not the one: 403 */
	AUTH_OK,
};

/*
 * The token file: one token of AUTH_TOKEN_MIN to AUTH_TOKEN_MAX printable
 * ASCII characters other than space, quote, comma, semicolon and
 * backslash (so that it fits in a cookie and a header as it is), an
 * optional newline. 0, or -1 with err saying what is wrong and what to do.
 * A file others may read is refused: the token is the only key.
 */
int auth_load(struct auth *a, const char *path, char *err, size_t errlen);
/* For tests and the file's reader: the same checks on a token in memory. */
int auth_set(struct auth *a, const char *token, size_t len, char *err, size_t errlen);

/* Whether token (len bytes, NULL: none) is the one, in time independent of how much of it is right. */
enum auth_result auth_check(const struct auth *a, const char *token, size_t len);

/*
 * The token a request carries, from its Authorization header (NULL:
 * none) or its Cookie header (NULL: none); the header wins. *len its
 * length; NULL when there is none.
 */
const char *auth_from_headers(const char *authorization, const char *cookie, size_t *len);

#endif /* TRACER_WEB_AUTH_H */
