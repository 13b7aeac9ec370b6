/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ingest's keys file (ingest/keys.c): the lines `tracer keygen` prints
 * parse, with comments, blank lines and CRLF; a host id binds a key; each
 * kind of mistake is refused with FILE:LINE:COLUMN and what is wrong, and
 * a refused file changes nothing; a file others can write is refused, and
 * so are one a byte over its bound and a FIFO (at once, not waited on).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "keys.h"
#include "readfile.h"
#include "test_ingest_helpers.h"

static struct batch_secret_key k1, k2;
static uint8_t host[BATCH_HOST_ID_LEN];
static char line1[256], line2[256]; /* k1 for any host, k2 bound to host */

static int setup(void **state)
{
	(void)state;
	if (batch_crypto_init())
		return -1;
	batch_key_generate(&k1);
	batch_key_generate(&k2);
	host_id_of(host, 5);
	if (batch_public_line(&k1, NULL, line1, sizeof(line1)) || batch_public_line(&k2, host, line2, sizeof(line2)))
		return -1;
	return 0;
}

static int parse(struct keyring *kr, const char *text, char *err, size_t errlen)
{
	return keys_parse(kr, "ingest.keys", text, strlen(text), err, errlen);
}

static void keygen_lines_parse_with_comments_blanks_and_crlf(void **state)
{
	struct keyring kr;
	const struct key_entry *e;
	char text[1024], err[256];

	(void)state;
	snprintf(text, sizeof(text), "# enrolled\n\n  \t\n%s\r\n   # indented comment\n%s", line1, line2);
	assert_int_equal(parse(&kr, text, err, sizeof(err)), 0);
	assert_int_equal(kr.n, 2);
	e = keys_find(&kr, k1.key_id);
	assert_non_null(e);
	assert_false(e->bound);
	assert_int_equal(e->line, 4);
	assert_memory_equal(e->public_key, k1.public_key, BATCH_PUBKEY_LEN);
	e = keys_find(&kr, k2.key_id);
	assert_non_null(e);
	assert_true(e->bound);
	assert_memory_equal(e->host_id, host, BATCH_HOST_ID_LEN);
	assert_int_equal(e->line, 6);
	assert_null(keys_find(&kr, host));
	keys_free(&kr);
	assert_int_equal(parse(&kr, "", err, sizeof(err)), 0);
	assert_int_equal(kr.n, 0);
	keys_free(&kr);
}

/* The line after a good one holds the mistake: "ingest.keys:2:COL: what". */
static void expect_error(const char *bad, const char *where_what)
{
	struct keyring kr = { (struct key_entry *)(uintptr_t)0x77, 3 };
	char text[1024], err[256];

	snprintf(text, sizeof(text), "%s\n%s\n", line1, bad);
	assert_int_equal(parse(&kr, text, err, sizeof(err)), -EINVAL);
	if (strncmp(err, where_what, strlen(where_what))) {
		fprintf(stderr, "got: %s\nwant: %s\n", err, where_what);
		fail();
	}
	assert_true(kr.v == (struct key_entry *)(uintptr_t)0x77 && kr.n == 3); /* untouched */
}

static void each_mistake_is_named_by_file_line_and_column(void **state)
{
	char bad[512], id[2 * BATCH_KEY_ID_LEN + 1];

	(void)state;
	expect_error("tracer-public-key-v2 0011223344556677 AAAA", "ingest.keys:2:1: expected \"tracer-public-key-v1");
	expect_error("tracer-public-key-v1", "ingest.keys:2:21: missing the key id and the key");
	expect_error("tracer-public-key-v1 0011223344556677", "ingest.keys:2:38: missing the key");
	expect_error("tracer-public-key-v1 00112233 AAAA", "ingest.keys:2:22: the key id is not 16 hex digits");
	expect_error("tracer-public-key-v1 001122334455667g AAAA", "ingest.keys:2:22: the key id is not 16 hex digits");
	sodium_bin2hex(id, sizeof(id), k1.key_id, sizeof(k1.key_id));
	snprintf(bad, sizeof(bad), "tracer-public-key-v1 %s AAAA", id);
	expect_error(bad, "ingest.keys:2:39: the public key is not base64 of 32 bytes");
	/* k2's key under k1's id */
	snprintf(bad, sizeof(bad), "tracer-public-key-v1 %s %s", id, strchr(strchr(line2, ' ') + 1, ' ') + 1);
	expect_error(bad, "ingest.keys:2:22: the key id does not belong to this key");
	snprintf(bad, sizeof(bad), "%s 00ff", line2);
	*strrchr(bad, ' ') = 0;
	*strrchr(bad, ' ') = 0; /* line2 without its host id */
	strcat(bad, " 00ff");
	expect_error(bad, "ingest.keys:2:");
	snprintf(bad, sizeof(bad), "%s extra", line2);
	expect_error(bad, "ingest.keys:2:");
	expect_error("tracer-public-key-v1 \001", "ingest.keys:2:22: control character 0x01");
	/* the same key twice */
	expect_error(line1, "ingest.keys:2:1: key enrolled twice (also on line 1)");
}

static void overlong_line_is_refused(void **state)
{
	struct keyring kr;
	char *text = malloc(KEYS_LINE_MAX + 10), err[128];

	(void)state;
	assert_non_null(text);
	memset(text, '#', KEYS_LINE_MAX + 5);
	text[KEYS_LINE_MAX + 5] = 0;
	assert_int_equal(parse(&kr, text, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "ingest.keys:1:"));
	free(text);
}

static void file_others_can_write_is_refused_and_a_missing_one_named(void **state)
{
	char dir[] = "/tmp/test_ingest_keys.XXXXXX", path[64], err[256];
	struct keyring kr;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/keys", dir);
	assert_int_equal(keys_load_file(&kr, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", line1);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(keys_load_file(&kr, path, err, sizeof(err)), 0);
	assert_int_equal(kr.n, 1);
	keys_free(&kr);
	assert_int_equal(chmod(path, 0664), 0);
	assert_int_equal(keys_load_file(&kr, path, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "chmod go-w"));
	assert_int_equal(keys_load_file(&kr, dir, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	rm_tree(dir);
}

/* A file of comment lines after line1, len bytes; its last byte a newline. */
static void put_padded(const char *path, size_t len)
{
	char *text = malloc(len);
	size_t at = strlen(line1);
	int fd;

	assert_non_null(text);
	memcpy(text, line1, at);
	text[at++] = '\n';
	while (at < len) {
		size_t n = len - at < 100 ? len - at : 100;

		memset(text + at, '#', n - 1);
		text[at + n - 1] = '\n';
		at += n;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	free(text);
}

static void file_one_byte_over_its_bound_or_a_fifo_is_refused(void **state)
{
	char dir[] = "/tmp/test_ingest_keys.XXXXXX", path[64], err[256];
	struct keyring kr;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/keys", dir);
	put_padded(path, READ_MAX_INGEST_KEYS);
	assert_int_equal(keys_load_file(&kr, path, err, sizeof(err)), 0);
	assert_int_equal(kr.n, 1);
	keys_free(&kr);
	put_padded(path, READ_MAX_INGEST_KEYS + 1);
	err[0] = 0;
	assert_int_equal(keys_load_file(&kr, path, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "larger than"));
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0); /* no writer: a blocking open would hang the ingest */
	err[0] = 0;
	assert_int_equal(keys_load_file(&kr, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(path);
	assert_int_equal(keys_load_file(&kr, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--keys FILE"));
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keygen_lines_parse_with_comments_blanks_and_crlf),
		cmocka_unit_test(each_mistake_is_named_by_file_line_and_column),
		cmocka_unit_test(overlong_line_is_refused),
		cmocka_unit_test(file_others_can_write_is_refused_and_a_missing_one_named),
		cmocka_unit_test(file_one_byte_over_its_bound_or_a_fifo_is_refused),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
