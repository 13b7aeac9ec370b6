/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON output: strings are valid JSON and valid UTF-8 whatever the bytes
 * (quotes, backslashes, control characters, broken UTF-8), the writer puts
 * commas where they belong, and the output buffer reports every failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "json.h"

/* Escape n bytes of s, compare with want (NUL-terminated). */
static void check_escaped(const char *s, size_t n, const char *want)
{
	struct obuf o;

	obuf_init_mem(&o, 1 << 20);
	json_put_string(&o, s, n);
	assert_int_equal(o.err, 0);
	if (o.len != strlen(want) || memcmp(o.buf, want, o.len))
		fail_msg("escaped to [%.*s], want [%s]", (int)o.len, o.buf, want);
	obuf_free(&o);
}

#define EXPECT(lit, want) check_escaped(lit, sizeof(lit) - 1, want)

static void quotes_and_backslashes_are_escaped(void **state)
{
	(void)state;
	EXPECT("say \"hi\"", "\"say \\\"hi\\\"\"");
	EXPECT("C:\\path\\", "\"C:\\\\path\\\\\"");
	EXPECT("/slash/stays", "\"/slash/stays\"");
	EXPECT("", "\"\"");
}

static void control_characters_become_u00xx(void **state)
{
	(void)state;
	EXPECT("a\nb", "\"a\\u000ab\"");
	EXPECT("\t\r\b\f", "\"\\u0009\\u000d\\u0008\\u000c\"");
	EXPECT("\x01\x1f", "\"\\u0001\\u001f\"");
	EXPECT("\x1b[31mred", "\"\\u001b[31mred\"");
	EXPECT("del\x7f", "\"del\\u007f\"");
	EXPECT("nul\0in", "\"nul\\u0000in\"");
}

static void valid_utf8_is_kept_as_is(void **state)
{
	(void)state;
	EXPECT("caf\xc3\xa9", "\"caf\xc3\xa9\"");                  /* é */
	EXPECT("\xe2\x82\xac", "\"\xe2\x82\xac\"");                 /* € */
	EXPECT("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");         /* 😀 */
	EXPECT("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");         /* U+10FFFF */
	EXPECT("\xc2\x80", "\"\xc2\x80\"");                         /* U+0080: valid JSON, kept */
	EXPECT("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");                 /* U+FFFD itself */
}

#define FFFD "\xef\xbf\xbd"

static void invalid_utf8_becomes_replacement_characters(void **state)
{
	(void)state;
	EXPECT("\x80", "\"" FFFD "\"");                             /* lone continuation byte */
	EXPECT("a\xc3", "\"a" FFFD "\"");                           /* truncated at the end */
	EXPECT("\xc3(", "\"" FFFD "(\"");                           /* bad continuation */
	EXPECT("\xc0\x80", "\"" FFFD FFFD "\"");                    /* overlong NUL */
	EXPECT("\xc1\xbf", "\"" FFFD FFFD "\"");                    /* overlong */
	EXPECT("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");           /* overlong 3-byte */
	EXPECT("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");           /* UTF-16 surrogate */
	EXPECT("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");  /* above U+10FFFF */
	EXPECT("\xf5\xff\xfe", "\"" FFFD FFFD FFFD "\"");           /* never valid */
	EXPECT("\xe2\x82", "\"" FFFD FFFD "\"");                    /* 3-byte sequence cut short */
	EXPECT("ok\xff\"", "\"ok" FFFD "\\\"\"");                   /* then an escape */
}

static void writer_puts_commas_between_members_and_elements(void **state)
{
	struct obuf o;
	struct json j;

	(void)state;
	obuf_init_mem(&o, 4096);
	json_init(&j, &o);
	json_object_begin(&j);
	json_kv_string(&j, "a", "x");
	json_kv_u64(&j, "b", 18446744073709551615ULL);
	json_key(&j, "c");
	json_array_begin(&j);
	json_i64(&j, -5);
	json_bool(&j, true);
	json_null(&j);
	json_object_begin(&j);
	json_object_end(&j);
	json_array_begin(&j);
	json_array_end(&j);
	json_array_end(&j);
	json_kv_string(&j, "d", NULL);
	json_kv_u64_or_null(&j, "e", false, 1);
	json_kv_u64_or_null(&j, "f", true, 0);
	json_kv_bool_or_null(&j, "g", false, true);
	json_kv_bool(&j, "h", false);
	json_kv_null(&j, "i");
	json_object_end(&j);
	obuf_putc(&o, 0);
	assert_int_equal(o.err, 0);
	assert_string_equal(o.buf, "{\"a\":\"x\",\"b\":18446744073709551615,\"c\":[-5,true,null,{},[]],\"d\":null,"
				   "\"e\":null,\"f\":0,\"g\":null,\"h\":false,\"i\":null}");
	obuf_free(&o);
}

static void keys_are_escaped_too(void **state)
{
	struct obuf o;
	struct json j;

	(void)state;
	obuf_init_mem(&o, 4096);
	json_init(&j, &o);
	json_object_begin(&j);
	json_kv_u64(&j, "we\"ird\n", 1);
	json_object_end(&j);
	obuf_putc(&o, 0);
	assert_string_equal(o.buf, "{\"we\\\"ird\\u000a\":1}");
	obuf_free(&o);
}

/* Numbers with a fraction (tracer tune and cost): 9 significant digits; what JSON has no word for, null. */
static void doubles_are_numbers_or_null(void **state)
{
	struct obuf o;
	struct json j;

	(void)state;
	obuf_init_mem(&o, 4096);
	json_init(&j, &o);
	json_object_begin(&j);
	json_kv_double(&j, "a", 1.5);
	json_kv_double(&j, "b", 0.1 + 0.2);
	json_kv_double(&j, "c", 1e300 * 1e10);
	json_kv_double(&j, "d", NAN);
	json_kv_double(&j, "e", -2);
	json_object_end(&j);
	obuf_putc(&o, 0);
	assert_string_equal(o.buf, "{\"a\":1.5,\"b\":0.3,\"c\":null,\"d\":null,\"e\":-2}");
	obuf_free(&o);
}

static void memory_output_stops_at_its_bound(void **state)
{
	struct obuf o;
	char big[1000];

	(void)state;
	memset(big, 'x', sizeof(big));
	obuf_init_mem(&o, 100);
	obuf_put(&o, big, sizeof(big));
	assert_int_equal(o.err, -EFBIG);
	assert_true(o.len <= 100);
	obuf_free(&o);
}

static void fd_output_is_flushed_whole_through_a_small_buffer(void **state)
{
	int fd = memfd_create("json-test", MFD_CLOEXEC);
	char storage[7], back[64];
	struct obuf o;

	(void)state;
	assert_true(fd >= 0);
	obuf_init_fd(&o, fd, storage, sizeof(storage));
	obuf_puts(&o, "0123456789abcdefghijklmnopqrstuvwxyz");
	obuf_printf(&o, "-%d-", 42);
	assert_int_equal(obuf_flush(&o), 0);
	assert_int_equal(pread(fd, back, sizeof(back), 0), 40);
	assert_memory_equal(back, "0123456789abcdefghijklmnopqrstuvwxyz-42-", 40);
	close(fd);
}

static void fd_output_reports_a_failed_write(void **state)
{
	int fds[2];
	char storage[16];
	struct obuf o;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	close(fds[1]);
	obuf_init_fd(&o, fds[0], storage, sizeof(storage)); /* the read end: writes fail */
	obuf_puts(&o, "this does not fit in sixteen bytes");
	assert_int_equal(obuf_flush(&o), -EBADF);
	close(fds[0]);
}

static void utf8_length_follows_the_unicode_table(void **state)
{
	(void)state;
	assert_int_equal(json_utf8_len((const unsigned char *)"a", 1), 1);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xc3\xa9", 2), 2);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xc3\xa9", 1), 0);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xe0\xa0\x80", 3), 3);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xed\x9f\xbf", 3), 3);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xed\xa0\x80", 3), 0);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xf0\x90\x80\x80", 4), 4);
	assert_int_equal(json_utf8_len((const unsigned char *)"x", 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quotes_and_backslashes_are_escaped),
		cmocka_unit_test(control_characters_become_u00xx),
		cmocka_unit_test(valid_utf8_is_kept_as_is),
		cmocka_unit_test(invalid_utf8_becomes_replacement_characters),
		cmocka_unit_test(writer_puts_commas_between_members_and_elements),
		cmocka_unit_test(doubles_are_numbers_or_null),
		cmocka_unit_test(keys_are_escaped_too),
		cmocka_unit_test(memory_output_stops_at_its_bound),
		cmocka_unit_test(fd_output_is_flushed_whole_through_a_small_buffer),
		cmocka_unit_test(fd_output_reports_a_failed_write),
		cmocka_unit_test(utf8_length_follows_the_unicode_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
