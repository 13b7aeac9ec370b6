/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ingest's TLS files (ingest/tls.c), as read: a certificate and its key (made by openssl) load; a
 * missing file, a FIFO (at once, not waited on), a directory and a file one byte over READ_MAX_PEM are
 * refused naming the option and the file, while a file at the bound is read (and refused for what it holds).
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

#include "readfile.h"
#include "tls.h"
#include "tmpdir.h"

static char dir[64], cert[128], key[128], other[128], err[512];

static int setup(void **state)
{
	char cmd[512];

	if (dir_make(state, "/tmp/test_ingest_tls.XXXXXX"))
		return -1;
	snprintf(dir, sizeof(dir), "%s", ((struct dir *)*state)->path);
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(cmd, sizeof(cmd), "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
		 "-subj /CN=localhost -keyout %s -out %s 2>/dev/null", key, cert);
	return system(cmd) == 0 ? 0 : -1;
}

static void a_certificate_and_its_key_load(void **state)
{
	struct tls_files t;

	(void)state;
	assert_int_equal(tls_files_load(&t, cert, key, cert, err, sizeof(err)), 0);
	assert_non_null(strstr(t.cert, "-----BEGIN CERTIFICATE-----"));
	assert_non_null(strstr(t.key, "PRIVATE KEY-----"));
	assert_non_null(t.client_ca);
	tls_files_free(&t);
	assert_null(t.key);
}

static void a_missing_file_is_named_with_its_option(void **state)
{
	struct tls_files t;

	(void)state;
	err[0] = 0;
	assert_int_equal(tls_files_load(&t, cert, "/nonexistent/key.pem", NULL, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--tls-key /nonexistent/key.pem: cannot open"));
	assert_non_null(strstr(err, "give a PEM file that uid"));
	assert_null(t.cert); /* what was read is freed */
}

static void a_fifo_or_a_directory_is_refused_at_once(void **state)
{
	struct tls_files t;

	(void)state;
	assert_int_equal(mkfifo(other, 0600), 0); /* no writer: a blocking open would hang here */
	err[0] = 0;
	assert_int_equal(tls_files_load(&t, cert, key, other, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--client-ca "));
	assert_non_null(strstr(err, "not a regular file"));
	unlink(other);
	err[0] = 0;
	assert_int_equal(tls_files_load(&t, dir, key, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--tls-cert "));
	assert_non_null(strstr(err, "not a regular file"));
}

static void a_file_one_byte_over_the_bound_is_refused_and_one_at_it_read(void **state)
{
	struct tls_files t;

	assert_int_equal(dir_put(*state, "other", NULL, READ_MAX_PEM, 'x'), 0);
	err[0] = 0;
	assert_int_equal(tls_files_load(&t, other, key, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no PEM certificate in it")); /* read, then refused for what it holds */
	assert_int_equal(dir_put(*state, "other", NULL, READ_MAX_PEM + 1, 'x'), 0);
	err[0] = 0;
	assert_int_equal(tls_files_load(&t, other, key, NULL, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "--tls-cert "));
	assert_non_null(strstr(err, "not a regular file of at most"));
	unlink(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_certificate_and_its_key_load),
		cmocka_unit_test(a_missing_file_is_named_with_its_option),
		cmocka_unit_test(a_fifo_or_a_directory_is_refused_at_once),
		cmocka_unit_test(a_file_one_byte_over_the_bound_is_refused_and_one_at_it_read),
	};

	return cmocka_run_group_tests(tests, setup, dir_teardown);
}
