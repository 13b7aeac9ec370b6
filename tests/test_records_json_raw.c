/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_raw (records/json.c): JSON text someone else checked, embedded in
 * the writer's output. Valid JSON is copied byte for byte, commas
 * between values are the writer's as for any value, and the writer's own
 * guarantees hold whatever the text: no raw control character or DEL, and
 * nothing that is not UTF-8. And obuf_printf, whatever the length of what
 * it formats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"

/* text as raw values inside an array, each then a string: what the writer made of them. */
static void raw_in_array(struct obuf *o, const char *const *texts, size_t n)
{
	struct json j;

	obuf_init_mem(o, 1 << 16);
	json_init(&j, o);
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		json_raw(&j, texts[i], strlen(texts[i]));
		json_string(&j, "s");
	}
	json_array_end(&j);
	obuf_putc(o, 0);
}

static void valid_json_is_copied_byte_for_byte_between_the_writers_commas(void **state)
{
	static const char *const texts[] = { "{\"a\":[1,2.5e3,\"\\u001b\\\"x\"],\"b\":null}", "[]", "\"\xc3\xa9\\n\"" };
	struct obuf o;

	(void)state;
	raw_in_array(&o, texts, 3);
	assert_int_equal(o.err, 0);
	assert_string_equal(o.buf, "[{\"a\":[1,2.5e3,\"\\u001b\\\"x\"],\"b\":null},\"s\",[],\"s\",\"\xc3\xa9\\n\",\"s\"]");
	obuf_free(&o);
}

static void control_characters_and_del_are_escaped_and_whitespace_kept(void **state)
{
	static const char *const texts[] = { "[\"a\x1b[2J\x7f\x01\"]", "{\n\t\"k\" :\r 1}" };
	struct obuf o;

	(void)state;
	raw_in_array(&o, texts, 2);
	assert_string_equal(o.buf, "[[\"a\\u001b[2J\\u007f\\u0001\"],\"s\",{\n\t\"k\" :\r 1},\"s\"]");
	obuf_free(&o);
}

static void bytes_that_are_not_utf8_become_replacement_characters(void **state)
{
	/* a lone continuation byte, a truncated sequence, an overlong '/', a surrogate */
	static const char *const texts[] = { "\"\x80\"", "\"\xe2\x82\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"" };
	struct obuf o;

	(void)state;
	raw_in_array(&o, texts, 4);
	assert_string_equal(o.buf, "[\"\\ufffd\",\"s\",\"\\ufffd\\ufffd\",\"s\",\"\\ufffd\\ufffd\",\"s\","
				   "\"\\ufffd\\ufffd\\ufffd\",\"s\"]");
	obuf_free(&o);
}

/* obuf_printf (records/json.c): a result of any length whole, short or beyond its 512-byte first try. */
static void obuf_printf_writes_long_results_whole(void **state)
{
	char want[3000];
	struct obuf o;

	(void)state;
	memset(want, 'x', sizeof(want) - 1);
	want[sizeof(want) - 1] = 0;
	for (size_t len = 0; len < sizeof(want); len += len < 520 ? 1 : 97) {
		obuf_init_mem(&o, 1 << 16);
		obuf_printf(&o, "<%.*s>%d", (int)len, want, 7);
		obuf_putc(&o, 0);
		assert_int_equal(o.err, 0);
		assert_int_equal(strlen(o.buf), len + 3);
		assert_int_equal(o.buf[0], '<');
		assert_memory_equal(o.buf + 1, want, len);
		assert_string_equal(o.buf + 1 + len, ">7");
		obuf_free(&o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_json_is_copied_byte_for_byte_between_the_writers_commas),
		cmocka_unit_test(control_characters_and_del_are_escaped_and_whitespace_kept),
		cmocka_unit_test(bytes_that_are_not_utf8_become_replacement_characters),
		cmocka_unit_test(obuf_printf_writes_long_results_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
