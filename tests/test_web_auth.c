/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web's access check (web/auth.c): the token file's rules (length,
 * characters a header and a cookie can carry, mode 0600, one trailing
 * newline, at most READ_MAX_TOKEN bytes; not a FIFO, a directory or a
 * symlink), the token found in "Authorization: Bearer" or in the cookie
 * among others (the header winning), and the check: none, wrong (a
 * prefix, a longer one, one byte off), right.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth.h"
#include "readfile.h"
#include "tmpdir.h"

#define TOKEN "0123456789abcdef0123456789abcdef"

static int dir_setup(void **state) { return dir_make(state, "/tmp/test_web_auth.XXXXXX"); }

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void token_rules(void **state)
{
	struct auth a;
	char err[256];

	(void)state;
	assert_int_equal(auth_set(&a, "short", 5, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "5 characters"));
	assert_int_equal(auth_set(&a, TOKEN " x", strlen(TOKEN) + 2, err, sizeof(err)), -1);
	assert_int_equal(auth_set(&a, TOKEN ";", strlen(TOKEN) + 1, err, sizeof(err)), -1);
	assert_int_equal(auth_set(&a, TOKEN "\xc3\xa9", strlen(TOKEN) + 2, err, sizeof(err)), -1);
	assert_int_equal(auth_set(&a, TOKEN, strlen(TOKEN), err, sizeof(err)), 0);
}

static void token_file(void **state)
{
	struct dir *d = *state;
	struct auth a;
	char path[128], err[512];

	snprintf(path, sizeof(path), "%s/token", d->path);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), -1); /* missing: says how to make one */
	assert_non_null(strstr(err, "openssl rand"));
	write_file(path, TOKEN "\n", 0644);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), -1); /* others may read it */
	assert_non_null(strstr(err, "chmod 600"));
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), 0);
	assert_int_equal(auth_check(&a, TOKEN, strlen(TOKEN)), AUTH_OK); /* the newline is not part of it */
	write_file(path, TOKEN "\n\n", 0600);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), -1); /* only one trailing newline */
	write_file(path, "", 0600);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), -1);
}

static void token_file_of_the_longest_token_or_longer_a_fifo_or_a_symlink(void **state)
{
	struct dir *d = *state;
	char path[128], link[128], err[512], text[READ_MAX_TOKEN + 2];
	struct auth a;

	snprintf(path, sizeof(path), "%s/token", d->path);
	snprintf(link, sizeof(link), "%s/link", d->path);
	/* The longest token and CR LF: read. */
	memset(text, 'a', AUTH_TOKEN_MAX);
	memcpy(text + AUTH_TOKEN_MAX, "\r\n", 3);
	write_file(path, text, 0600);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), 0);
	assert_int_equal(auth_check(&a, text, AUTH_TOKEN_MAX), AUTH_OK);
	/* A file at the bound is read (and its token is too long); one byte more is refused unread. */
	memset(text, 'a', READ_MAX_TOKEN);
	text[READ_MAX_TOKEN] = 0;
	write_file(path, text, 0600);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "characters: want"));
	text[READ_MAX_TOKEN] = 'a';
	text[READ_MAX_TOKEN + 1] = 0;
	write_file(path, text, 0600);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "larger than a token"));
	assert_non_null(strstr(err, path));
	/* ... and its mode is still checked first. */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "chmod 600"));
	/* A symlink to a good token file is not followed. */
	write_file(path, TOKEN "\n", 0600);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(auth_load(&a, link, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open the token file"));
	unlink(link);
	/* A FIFO with no writer: refused at once, not waited on. */
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(auth_load(&a, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(path);
}

static void token_check(void **state)
{
	char wrong[] = TOKEN, longer[AUTH_TOKEN_MAX + 2];
	struct auth a;
	char err[256];

	(void)state;
	assert_int_equal(auth_set(&a, TOKEN, strlen(TOKEN), err, sizeof(err)), 0);
	assert_int_equal(auth_check(&a, NULL, 0), AUTH_NONE);
	assert_int_equal(auth_check(&a, "", 0), AUTH_NONE);
	assert_int_equal(auth_check(&a, TOKEN, strlen(TOKEN) - 1), AUTH_BAD); /* a prefix */
	assert_int_equal(auth_check(&a, TOKEN "0", strlen(TOKEN) + 1), AUTH_BAD);
	wrong[7] ^= 1;
	assert_int_equal(auth_check(&a, wrong, strlen(wrong)), AUTH_BAD);
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	assert_int_equal(auth_check(&a, longer, strlen(longer)), AUTH_BAD);
	assert_int_equal(auth_check(&a, TOKEN, strlen(TOKEN)), AUTH_OK);
}

static void token_from_headers(void **state)
{
	const char *t;
	size_t len;

	(void)state;
	t = auth_from_headers("Bearer " TOKEN, NULL, &len);
	assert_int_equal(len, strlen(TOKEN));
	assert_memory_equal(t, TOKEN, len);
	t = auth_from_headers("bearer   " TOKEN "  ", NULL, &len); /* the scheme in any case, spaces around */
	assert_int_equal(len, strlen(TOKEN));
	assert_memory_equal(t, TOKEN, len);
	assert_null(auth_from_headers("Basic dXNlcjpwYXNz", "tracer_token=" TOKEN, &len)); /* the header wins */
	t = auth_from_headers(NULL, "a=1; tracer_tokenx=no; tracer_token=" TOKEN "; b=2", &len);
	assert_int_equal(len, strlen(TOKEN));
	assert_memory_equal(t, TOKEN, len);
	t = auth_from_headers(NULL, "tracer_token=" TOKEN, &len);
	assert_int_equal(len, strlen(TOKEN));
	assert_null(auth_from_headers(NULL, "other=" TOKEN, &len));
	assert_null(auth_from_headers(NULL, NULL, &len));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(token_rules),
		cmocka_unit_test_setup_teardown(token_file, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(token_file_of_the_longest_token_or_longer_a_fifo_or_a_symlink, dir_setup,
						dir_teardown),
		cmocka_unit_test(token_check),
		cmocka_unit_test(token_from_headers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
