/* SPDX-License-Identifier: Apache-2.0 */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "readfile.h"

static bool token_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\';
}

int auth_set(struct auth *a, const char *token, size_t len, char *err, size_t errlen)
{
	if (len < AUTH_TOKEN_MIN || len > AUTH_TOKEN_MAX) {
		snprintf(err, errlen, "the token has %zu characters: want %d to %d (e.g. openssl rand -hex 32)", len,
			 AUTH_TOKEN_MIN, AUTH_TOKEN_MAX);
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		if (!token_char((unsigned char)token[i])) {
			snprintf(err, errlen, "the token holds a character a header or cookie cannot carry (byte %zu): "
				 "use printable ASCII without space, quotes, commas, semicolons or backslashes", i + 1);
			return -1;
		}
	crypto_generichash(a->hash, sizeof(a->hash), (const unsigned char *)token, len, NULL, 0);
	return 0;
}

_Static_assert(READ_MAX_TOKEN >= AUTH_TOKEN_MAX + 2, "a token file holds the longest token and CR LF");

/* A token file's fstat and read (n) checked, or its text parsed into a. 0, or -1 with err. */
static int token_file_check(struct auth *a, const char *path, const struct stat *sb, char *buf, ssize_t n, char *err,
			    size_t errlen)
{
	if (n == -EINVAL) {
		snprintf(err, errlen, "the token file %s is not a regular file", path);
		return -1;
	}
	if (n < 0 && n != -EFBIG) {
		snprintf(err, errlen, "cannot open the token file %s: %s (make one: openssl rand -hex 32 > %s; "
			 "chmod 600 %s)", path, strerror((int)-n), path, path);
		return -1;
	}
	if (sb->st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen, "the token file %s may be read or written by others (mode %04o): chmod 600 %s",
			 path, (unsigned)(sb->st_mode & 07777), path);
		return -1;
	}
	if (n == -EFBIG) {
		snprintf(err, errlen, "the token file %s is larger than a token (%d to %d characters) and a newline", path,
			 AUTH_TOKEN_MIN, AUTH_TOKEN_MAX);
		return -1;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (auth_set(a, buf, (size_t)n, err, errlen)) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	return 0;
}

int auth_load(struct auth *a, const char *path, char *err, size_t errlen)
{
	char buf[READ_MAX_TOKEN + 1];
	struct stat sb = { 0 };
	ssize_t n = read_file_bounded(AT_FDCWD, path, O_NOFOLLOW, buf, READ_MAX_TOKEN, &sb);
	int rc = token_file_check(a, path, &sb, buf, n, err, errlen);

	sodium_memzero(buf, sizeof(buf)); /* on every path: a refused file may still hold the token */
	return rc;
}

enum auth_result auth_check(const struct auth *a, const char *token, size_t len)
{
	uint8_t h[32];

	if (!token || !len)
		return AUTH_NONE;
	if (len > AUTH_TOKEN_MAX) /* not the token whatever it says; its length is no secret */
		return AUTH_BAD;
	crypto_generichash(h, sizeof(h), (const unsigned char *)token, len, NULL, 0);
	return sodium_memcmp(h, a->hash, sizeof(h)) == 0 ? AUTH_OK : AUTH_BAD;
}

/* The value of cookie name in a Cookie header ("a=1; tracer_token=...; b=2"). */
static const char *cookie_value(const char *cookie, const char *name, size_t *len)
{
	size_t nlen = strlen(name);
	const char *p = cookie;

	while (*p) {
		const char *end;

		while (*p == ' ' || *p == ';')
			p++;
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		if ((size_t)(end - p) > nlen && !strncmp(p, name, nlen) && p[nlen] == '=') {
			*len = (size_t)(end - p) - nlen - 1;
			return p + nlen + 1;
		}
		p = end;
	}
	return NULL;
}

const char *auth_from_headers(const char *authorization, const char *cookie, size_t *len)
{
	static const char bearer[] = "Bearer ";

	*len = 0;
	if (authorization) {
		if (strncasecmp(authorization, bearer, sizeof(bearer) - 1))
			return NULL; /* another scheme: no token of ours */
		authorization += sizeof(bearer) - 1;
		while (*authorization == ' ')
			authorization++;
		*len = strlen(authorization);
		while (*len && authorization[*len - 1] == ' ')
			(*len)--;
		return authorization;
	}
	if (cookie)
		return cookie_value(cookie, AUTH_COOKIE, len);
	return NULL;
}
