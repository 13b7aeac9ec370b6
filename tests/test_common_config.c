/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer.conf: defaults, every type with its bounds, the file's syntax
 * (quotes, escapes, comments, CRLF), errors that name file, line and column
 * and say what is expected, all-or-nothing parses, command-line overrides,
 * write/parse round trips, and the checks on the file itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "batch_format.h"
#include "config.h"
#include "proctab.h"
#include "readfile.h"
#include "skip.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define MIB (1ULL << 20)

/* Large (paths are PATH_MAX): one of each per test, off the stack. */
static struct tracer_config *new_config(void)
{
	struct tracer_config *c = malloc(sizeof(*c));

	assert_non_null(c);
	config_defaults(c);
	return c;
}

static void parse_ok(struct tracer_config *c, const char *text)
{
	char err[512];
	int rc = config_parse(c, "t.conf", text, strlen(text), err, sizeof(err));

	if (rc)
		fail_msg("text \"%s\": %d %s", text, rc, err);
}

/* The text is refused with a message containing want, and the config is untouched. */
static void parse_bad(const char *text, const char *want)
{
	struct tracer_config *c = new_config(), *before = new_config();
	char err[512] = "";
	int rc;

	rc = config_parse(c, "t.conf", text, strlen(text), err, sizeof(err));
	if (rc != -EINVAL || !strstr(err, want) || strncmp(err, "t.conf:", 7))
		fail_msg("text \"%s\": got %d \"%s\", want -EINVAL \"t.conf:...%s...\"", text, rc, err, want);
	assert_memory_equal(c, before, sizeof(*c));
	free(c);
	free(before);
}

/* The whole message, exactly. */
static void parse_error_is(const char *text, const char *want)
{
	struct tracer_config *c = new_config();
	char err[512] = "";
	int rc = config_parse(c, "t.conf", text, strlen(text), err, sizeof(err));

	if (rc != -EINVAL || strcmp(err, want))
		fail_msg("text \"%s\":\n got  %d \"%s\"\n want -EINVAL \"%s\"", text, rc, err, want);
	free(c);
}

/* One value, from a file line and from config_set: both accept it, with the same result. */
static struct tracer_config *value_ok(const char *key, const char *value)
{
	struct tracer_config *c = new_config(), *s = new_config();
	char text[PATH_MAX + 64], err[512];

	snprintf(text, sizeof(text), "%s = %s\n", key, value);
	parse_ok(c, text);
	if (config_set(s, key, value, err, sizeof(err)))
		fail_msg("config_set %s=%s: %s", key, value, err);
	assert_memory_equal(c, s, sizeof(*c));
	free(s);
	return c; /* for the caller to look at, then free */
}

/* One value, refused both ways, with want in the message and nothing changed. */
static void value_bad(const char *key, const char *value, const char *want)
{
	struct tracer_config *s = new_config(), *before = new_config();
	char text[PATH_MAX + 64], err[512] = "";
	int rc;

	snprintf(text, sizeof(text), "%s = %s\n", key, value);
	parse_bad(text, want);
	rc = config_set(s, key, value, err, sizeof(err));
	if (rc != -EINVAL || !strstr(err, want))
		fail_msg("config_set %s=%s: got %d \"%s\", want \"%s\"", key, value, rc, err, want);
	assert_memory_equal(s, before, sizeof(*s));
	free(s);
	free(before);
}

static uint64_t duration_of(const char *key, const char *value, size_t offset)
{
	struct tracer_config *c = value_ok(key, value);
	uint64_t v;

	memcpy(&v, (const char *)c + offset, sizeof(v));
	free(c);
	return v;
}

#define DURATION(key, value) duration_of(#key, value, offsetof(struct tracer_config, key##_ns))
#define BYTES(key, value) duration_of(#key, value, offsetof(struct tracer_config, key))

/* config_write's text, in a buffer the caller frees. */
static char *written(const struct tracer_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	config_write(f, c);
	fclose(f);
	return buf;
}

/* ---- defaults -------------------------------------------------------- */

static void defaults_are_the_documented_values(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	assert_string_equal(c->state_dir, "/var/lib/tracer");
	assert_string_equal(c->runtime_dir, "/run/tracer");
	assert_string_equal(c->collector_user, "65533");
	assert_string_equal(c->processor_user, "tracer");
	assert_string_equal(c->rules, "");
	assert_string_equal(c->tool_rules, "");
	assert_string_equal(c->redact_rules, "");
	assert_int_equal(c->sample_interval_ns, 1 * SEC);
	assert_int_equal(c->ring_order, 22);
	assert_int_equal(c->kernel_buffer, 16 * MIB);
	assert_int_equal(c->stall_after_ns, 300 * SEC);
	assert_int_equal(c->io_wait_after_ns, 10 * SEC);
	assert_int_equal(c->net_wait_after_ns, 30 * SEC);
	assert_int_equal(c->max_processes, 65536);
	assert_string_equal(c->cloud, "");
	assert_string_equal(c->instance_type, "");
	assert_string_equal(c->region, "");
	assert_false(c->price_per_hour.set);
	assert_int_equal(c->price_per_hour.micro_usd, 0);
	assert_string_equal(c->upload_url, "");
	assert_string_equal(c->signing_key, "/etc/tracer/signing.key");
	assert_string_equal(c->ca_file, "");
	assert_string_equal(c->client_cert, "");
	assert_string_equal(c->client_key, "");
	assert_true(c->tls_verify);
	assert_string_equal(c->host_id, "");
	assert_int_equal(c->batch_records, 5000);
	assert_int_equal(c->batch_interval_ns, 1 * SEC);
	assert_int_equal(c->fsync_interval_ns, 200 * MS);
	assert_int_equal(c->spool_quota, 1024 * MIB);
	assert_int_equal(c->segment_size, 16 * MIB);
	assert_int_equal(c->segment_age_ns, 60 * SEC);
	assert_int_equal(c->connect_timeout_ns, 10 * SEC);
	assert_int_equal(c->transfer_timeout_ns, 60 * SEC);
	assert_int_equal(c->retry_max_ns, 300 * SEC);
	assert_string_equal(c->ingest_listen.host, "127.0.0.1");
	assert_int_equal(c->ingest_listen.family, AF_INET);
	assert_memory_equal(c->ingest_listen.addr, "\x7f\0\0\x01", 4);
	assert_int_equal(c->ingest_listen.port, 8750);
	assert_string_equal(c->ingest_db, "/var/lib/tracer-ingest/lake.db");
	assert_string_equal(c->ingest_keys, "/etc/tracer/ingest.keys");
	assert_int_equal(c->ingest_max_body, 32 * MIB);
	assert_int_equal(c->ingest_max_connections, 64);
	assert_int_equal(c->ingest_timeout_ns, 30 * SEC);
	assert_string_equal(c->ingest_tls_cert, "");
	assert_string_equal(c->ingest_tls_key, "");
	assert_string_equal(c->ingest_client_ca, "");
	assert_int_equal(config_check(c, NULL, 0), 0);
	free(c);
}

/* "#key = default" lines of a text, uncommented: every key with its default, as a config text. */
static char *uncomment_settings(const char *text, unsigned *nkeys)
{
	char *out = malloc(strlen(text) + 1), *o = out;

	assert_non_null(out);
	*nkeys = 0;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);

		if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z' && memchr(line, '=', n)) {
			memcpy(o, line + 1, n - 1);
			o += n - 1;
			(*nkeys)++;
		}
		line += n;
	}
	*o = 0;
	return out;
}

static void describe_documents_every_key_with_a_valid_default(void **state)
{
	struct tracer_config *c = new_config(), *d = new_config();
	char *text = NULL, *settings, *a, *b;
	size_t len = 0;
	unsigned nkeys, nwritten = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	config_describe(f);
	fclose(f);
	settings = uncomment_settings(text, &nkeys);
	memset(c, 0x5a, sizeof(*c));
	parse_ok(c, settings); /* every key set, each once, to its documented default */
	a = written(c);
	b = written(d);
	assert_string_equal(a, b);
	for (const char *p = a; (p = strchr(p, '\n')); p++)
		nwritten++;
	assert_int_equal(nkeys, nwritten); /* config_write writes every key: describe documents as many */
	free(a);
	free(b);
	free(settings);
	free(text);
	free(c);
	free(d);
}

/* The example shipped in docs/ (found when the tests run from the top of the tree). */
static void example_file_documents_every_key_with_its_default(void **state)
{
	FILE *f = fopen("docs/tracer.conf.example", "r");
	struct tracer_config *c, *d;
	char *text, *settings, *a, *b;
	unsigned nkeys, nwritten = 0;

	(void)state;
	if (!f)
		TEST_SKIP("no docs/tracer.conf.example here: run it from the top of the tree");
	c = new_config();
	d = new_config();
	text = calloc(1, READ_MAX_CONFIG + 1);
	assert_non_null(text);
	assert_true(fread(text, 1, READ_MAX_CONFIG, f) > 0);
	fclose(f);
	parse_ok(c, text); /* as shipped: all commented out, the defaults */
	settings = uncomment_settings(text, &nkeys);
	parse_ok(c, settings);
	a = written(c);
	b = written(d);
	assert_string_equal(a, b);
	for (const char *p = a; (p = strchr(p, '\n')); p++)
		nwritten++;
	assert_int_equal(nkeys, nwritten);
	free(a);
	free(b);
	free(settings);
	free(text);
	free(c);
	free(d);
}

/*
 * Programs whose own options take a key's value read its default and
 * bounds from the table (config_key_number, config_default_text): the
 * table is the one place they are written. Where a bound is a limit of
 * the code (the process table, a batch on the wire), they agree.
 */
static void other_programs_read_defaults_and_bounds_from_the_table(void **state)
{
	struct tracer_config *c = new_config();
	uint64_t def = 0, min = 0, max = 0;
	static const char *const used[] = { "stall_after", "io_wait_after", "net_wait_after", "max_processes",
					    "segment_size", "segment_age", "fsync_interval", "spool_quota",
					    "ingest_max_body", "ingest_max_connections", "ingest_timeout" };

	(void)state;
	for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		if (config_key_number(used[i], &def, NULL, NULL))
			fail_msg("%s: not a number key of the table", used[i]);
	assert_int_equal(config_key_number("stall_after", &def, &min, &max), 0);
	assert_true(def == c->stall_after_ns && min == SEC && max == 366 * 86400 * SEC);
	assert_int_equal(config_key_number("spool_quota", &def, NULL, NULL), 0);
	assert_true(def == c->spool_quota);
	assert_int_equal(config_key_number("max_processes", &def, &min, &max), 0);
	assert_true(def == c->max_processes && min == 1 && max == PROCTAB_MAX_LIMIT);
	assert_int_equal(config_key_number("ingest_max_body", &def, NULL, &max), 0);
	assert_true(def == c->ingest_max_body && max == BATCH_MAX_WIRE);
	assert_int_equal(config_key_number("state_dir", &def, NULL, NULL), -ENOENT);
	assert_int_equal(config_key_number("no_such_key", &def, NULL, NULL), -ENOENT);
	assert_string_equal(config_default_text("signing_key"), c->signing_key);
	assert_string_equal(config_default_text("stall_after"), "300s");
	assert_null(config_default_text("no_such_key"));
	free(c);
}

static void empty_text_and_comments_give_the_defaults(void **state)
{
	struct tracer_config *c = new_config(), *d = new_config();

	(void)state;
	memset(c, 0x5a, sizeof(*c));
	parse_ok(c, "");
	assert_memory_equal(c, d, sizeof(*c));
	memset(c, 0x5a, sizeof(*c));
	parse_ok(c, "# only comments\n\n   \t\n  # indented comment\n");
	assert_memory_equal(c, d, sizeof(*c));
	free(c);
	free(d);
}

static void parse_replaces_the_whole_config_keys_not_set_go_back_to_default(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "ring_order = 20\nstate_dir = /srv/tracer\n");
	assert_int_equal(c->ring_order, 20);
	parse_ok(c, "state_dir = /srv/other\n"); /* ring_order removed from the file */
	assert_int_equal(c->ring_order, 22);
	assert_string_equal(c->state_dir, "/srv/other");
	free(c);
}

/* ---- types ----------------------------------------------------------- */

static void paths_must_be_absolute_and_fit(void **state)
{
	struct tracer_config *c;
	char longest[PATH_MAX + 1];

	(void)state;
	c = value_ok("state_dir", "/srv/tracer state");
	assert_string_equal(c->state_dir, "/srv/tracer state");
	free(c);
	memset(longest, 'a', sizeof(longest));
	longest[0] = '/';
	longest[PATH_MAX - 1] = 0; /* 4095 bytes: the longest that fits */
	c = value_ok("ingest_db", longest);
	assert_int_equal(strlen(c->ingest_db), PATH_MAX - 1);
	free(c);
	longest[PATH_MAX - 1] = 'a';
	longest[PATH_MAX] = 0;
	value_bad("ingest_db", longest, "value of 4096 bytes is too long (an absolute path or a postgresql:// URI of at most 4095 bytes)");
	value_bad("state_dir", "var/lib/tracer", "'var/lib/tracer' is not an absolute path (an absolute path");
	value_bad("signing_key", "~/key", "is not an absolute path");
}

static void empty_path_is_allowed_only_where_documented(void **state)
{
	struct tracer_config *c = new_config();
	const char *allowed[] = { "rules", "tool_rules", "redact_rules", "ca_file", "upload_url", "host_id" };
	const char *refused[] = { "state_dir", "runtime_dir", "signing_key", "ingest_db", "ingest_keys",
				  "collector_user", "processor_user" };

	(void)state;
	parse_ok(c, "rules = /etc/tracer/rules\n");
	assert_string_equal(c->rules, "/etc/tracer/rules");
	parse_ok(c, "rules =\ntool_rules = \"\"\nredact_rules =   # none\n");
	assert_string_equal(c->rules, "");
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		free(value_ok(allowed[i], ""));
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		value_bad(refused[i], "", "empty value (");
	free(c);
}

static void users_are_names_or_uids_but_not_root(void **state)
{
	struct tracer_config *c;

	(void)state;
	c = value_ok("processor_user", "nobody");
	assert_string_equal(c->processor_user, "nobody");
	free(c);
	free(value_ok("collector_user", "65534"));
	free(value_ok("collector_user", "svc.tracer_1-x"));
	free(value_ok("collector_user", "abcdefghijklmnopqrstuvwxyzabcdef")); /* 32 bytes */
	value_bad("collector_user", "abcdefghijklmnopqrstuvwxyzabcdefg", "value of 33 bytes is too long");
	value_bad("collector_user", "root", "'root' is root");
	value_bad("processor_user", "0", "is root");
	value_bad("processor_user", "000", "is root");
	value_bad("processor_user", "-x", "is not a user name or uid");
	value_bad("processor_user", "\"a b\"", "is not a user name or uid");
	value_bad("processor_user", "4294967295", "is not a valid uid");
	value_bad("processor_user", "99999999999", "is not a valid uid");
}

static void host_id_is_32_hex_digits_stored_lowercase(void **state)
{
	struct tracer_config *c;

	(void)state;
	c = value_ok("host_id", "0123456789ABCDEF0123456789abcdef");
	assert_string_equal(c->host_id, "0123456789abcdef0123456789abcdef");
	free(c);
	value_bad("host_id", "0123456789abcdef0123456789abcde", "is not 32 hex digits");
	value_bad("host_id", "0123456789abcdef0123456789abcdeg", "is not 32 hex digits");
	value_bad("host_id", "01234567-89ab-cdef-0123-456789abcdef", "value of 36 bytes is too long (32 hex digits");
	value_bad("host_id", "00000000000000000000000000000000", "is all zeros");
}

/* ---- the host's identity (common/hostid.h: what tracer cost prices a run by) ---- */

static void host_names_take_clouds_instance_types_and_regions(void **state)
{
	struct tracer_config *c;

	(void)state;
	c = value_ok("cloud", "aws");
	assert_string_equal(c->cloud, "aws");
	free(c);
	c = value_ok("cloud", "on-prem2");
	assert_string_equal(c->cloud, "on-prem2");
	free(c);
	c = value_ok("instance_type", "m6i.xlarge");
	assert_string_equal(c->instance_type, "m6i.xlarge");
	free(c);
	c = value_ok("instance_type", "Standard_D4s_v5"); /* Azure's sizes: upper case and '_' */
	assert_string_equal(c->instance_type, "Standard_D4s_v5");
	free(c);
	c = value_ok("instance_type", "n2-standard-4");
	free(c);
	c = value_ok("region", "us-east-1");
	assert_string_equal(c->region, "us-east-1");
	free(c);
	/* empty: unset, from a file ("") and from a command line */
	c = new_config();
	parse_ok(c, "cloud = \"\"\ninstance_type =\nregion = \"\"\n");
	assert_true(!c->cloud[0] && !c->instance_type[0] && !c->region[0]);
	assert_int_equal(config_set(c, "region", "eu-west-1", NULL, 0), 0);
	assert_int_equal(config_set(c, "region", "", NULL, 0), 0);
	assert_string_equal(c->region, "");
	free(c);
	value_bad("cloud", "AWS", "'AWS' is not a cloud name (lowercase letters, digits and '-', a letter first, "
				  "at most 15 bytes, e.g. aws, gcp or azure; or empty for what DMI says)");
	value_bad("cloud", "-aws", "is not a cloud name");
	value_bad("cloud", "a-cloud-of-16-by", "value of 16 bytes is too long");
	value_bad("instance_type", "m6i xlarge", "'m6i xlarge' is not an instance type (letters, digits, '.', '_' and "
						 "'-', a letter or digit first, at most 64 bytes");
	value_bad("instance_type", ".large", "is not an instance type");
	value_bad("instance_type", "m6i/xlarge", "is not an instance type");
	value_bad("instance_type", "m6i.xlarge;rm", "is not an instance type");
	value_bad("instance_type", "t\xc3\xa9st", "is not an instance type");
	value_bad("instance_type", "a123456789b123456789c123456789d123456789e123456789f123456789g1234",
		  "value of 65 bytes is too long");
	value_bad("region", "US-East-1", "'US-East-1' is not a region (lowercase letters, digits and '-', a letter "
					 "first, at most 64 bytes, e.g. us-east-1; or empty for none)");
	value_bad("region", "us_east_1", "is not a region");
	value_bad("region", "1us", "is not a region");
}

static void price_per_hour_is_a_decimal_of_dollars_not_negative(void **state)
{
	static const struct {
		const char *text;
		uint64_t micro;
	} good[] = { { "0.192", 192000 }, { "0", 0 }, { "12", 12000000 }, { "3.5", 3500000 },
		     { "0.000001", 1 }, { "100000", 100000000000ULL }, { "007.10", 7100000 } };
	struct tracer_config *c;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		c = value_ok("price_per_hour", good[i].text);
		if (!c->price_per_hour.set || c->price_per_hour.micro_usd != good[i].micro)
			fail_msg("%s: set %d, %llu millionths", good[i].text, c->price_per_hour.set,
				 (unsigned long long)c->price_per_hour.micro_usd);
		free(c);
	}
	/* empty: unset, from a file and from a command line; the whole struct as the defaults have it */
	c = new_config();
	parse_ok(c, "price_per_hour = 1\n");
	parse_ok(c, "price_per_hour = \"\"\n");
	assert_false(c->price_per_hour.set);
	assert_int_equal(config_set(c, "price_per_hour", "2.5", NULL, 0), 0);
	assert_true(c->price_per_hour.set);
	assert_int_equal(config_set(c, "price_per_hour", "", NULL, 0), 0);
	assert_false(c->price_per_hour.set);
	assert_int_equal(c->price_per_hour.micro_usd, 0);
	free(c);
	value_bad("price_per_hour", "-0.5", "'-0.5' is negative (US dollars per hour from 0 to 100000, at most 6 "
					    "digits after the point, e.g. 0.192; or empty for none)");
	value_bad("price_per_hour", "-0", "is negative");
	value_bad("price_per_hour", "abc", "'abc' is not a decimal number");
	value_bad("price_per_hour", "$0.19", "is not a decimal number");
	value_bad("price_per_hour", "+1", "is not a decimal number");
	value_bad("price_per_hour", ".5", "is not a decimal number");
	value_bad("price_per_hour", "1e3", "is not a decimal number");
	value_bad("price_per_hour", "0x10", "is not a decimal number");
	value_bad("price_per_hour", "inf", "is not a decimal number");
	value_bad("price_per_hour", "nan", "is not a decimal number");
	value_bad("price_per_hour", "0,19", "is not a decimal number");
	value_bad("price_per_hour", "1.", "has no digit after the point");
	value_bad("price_per_hour", "0.1234567", "has more than 6 digits after the point");
	value_bad("price_per_hour", "100000.000001", "is out of range");
	value_bad("price_per_hour", "99999999999999999999999", "is out of range");
	/* in a file, the message names the file, the line and the value's column */
	parse_error_is("# prices\n\nprice_per_hour =  -1 # oops\n",
		       "t.conf:3:19: key 'price_per_hour': '-1' is negative (US dollars per hour from 0 to 100000, at "
		       "most 6 digits after the point, e.g. 0.192; or empty for none)");
	parse_error_is("instance_type = m6i xl\n",
		       "t.conf:1:17: key 'instance_type': 'm6i xl' is not an instance type (letters, digits, '.', '_' "
		       "and '-', a letter or digit first, at most 64 bytes, e.g. m6i.xlarge or Standard_D4s_v5; or "
		       "empty for what DMI says)");
	/* config_key_number is for integers, sizes and durations only */
	assert_int_equal(config_key_number("price_per_hour", NULL, NULL, NULL), -ENOENT);
}

static void bools_take_true_false_yes_no_on_off_1_0(void **state)
{
	static const char *const yes[] = { "true", "yes", "on", "1" }, *const no[] = { "false", "no", "off", "0" };
	struct tracer_config *c;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		c = value_ok("tls_verify", no[i]);
		assert_false(c->tls_verify);
		free(c);
		c = value_ok("tls_verify", yes[i]);
		assert_true(c->tls_verify);
		free(c);
	}
	value_bad("tls_verify", "True", "'True' is not a boolean (true, false, yes, no, on, off, 1 or 0)");
	value_bad("tls_verify", "2", "is not a boolean");
	value_bad("tls_verify", "", "is not a boolean");
}

static void integers_are_decimal_and_bounded(void **state)
{
	struct tracer_config *c;

	(void)state;
	c = value_ok("ring_order", "16");
	assert_int_equal(c->ring_order, 16);
	free(c);
	c = value_ok("ring_order", "30");
	assert_int_equal(c->ring_order, 30);
	free(c);
	c = value_ok("max_processes", "4194304");
	assert_int_equal(c->max_processes, 4194304);
	free(c);
	c = value_ok("batch_records", "0100000"); /* leading zeros are still decimal */
	assert_int_equal(c->batch_records, 100000);
	free(c);
	value_bad("ring_order", "15", "'15' is out of range (an integer from 16 to 30)");
	value_bad("ring_order", "31", "is out of range (an integer from 16 to 30)");
	value_bad("max_processes", "4194305", "is out of range");
	value_bad("max_processes", "0", "is out of range");
	value_bad("batch_records", "100001", "is out of range");
	value_bad("ingest_max_connections", "99999999999999999999999", "is out of range");
	value_bad("ring_order", "-1", "is not a whole number");
	value_bad("ring_order", "+20", "is not a whole number");
	value_bad("ring_order", "0x14", "is not a whole number");
	value_bad("ring_order", "20.0", "is not a whole number");
	value_bad("ring_order", "20 x", "is not a whole number");
	value_bad("ring_order", "", "is not a whole number");
}

static void sizes_take_binary_suffixes(void **state)
{
	(void)state;
	assert_int_equal(BYTES(segment_size, "1048576"), MIB);
	assert_int_equal(BYTES(segment_size, "1048576B"), MIB);
	assert_int_equal(BYTES(segment_size, "1024K"), MIB);
	assert_int_equal(BYTES(segment_size, "1024KiB"), MIB);
	assert_int_equal(BYTES(segment_size, "3M"), 3 * MIB);
	assert_int_equal(BYTES(segment_size, "3MiB"), 3 * MIB);
	assert_int_equal(BYTES(spool_quota, "1G"), 1024 * MIB);
	assert_int_equal(BYTES(spool_quota, "2GiB"), 2048 * MIB);
	assert_int_equal(BYTES(spool_quota, "1T"), 1024 * 1024 * MIB);
	assert_int_equal(BYTES(spool_quota, "1TiB"), 1024 * 1024 * MIB);
	assert_int_equal(BYTES(spool_quota, "64 MiB"), 64 * MIB);
}

static void sizes_are_bounded_and_refuse_other_units(void **state)
{
	(void)state;
	value_bad("segment_size", "1023KiB", "'1023KiB' is out of range (a size from 1MiB to 1GiB");
	value_bad("segment_size", "1025MiB", "is out of range");
	value_bad("spool_quota", "2TiB", "is out of range (a size from 16MiB to 1TiB");
	value_bad("spool_quota", "99999999999999999999", "is out of range");
	value_bad("spool_quota", "18014398509481984T", "is out of range"); /* overflows 64 bits */
	value_bad("segment_size", "16MB", "'16MB' has an unknown unit 'MB'");
	value_bad("segment_size", "16mib", "has an unknown unit 'mib'");
	value_bad("segment_size", "1.5MiB", "has an unknown unit '.5MiB'");
	value_bad("segment_size", "-1MiB", "is not a size");
	value_bad("segment_size", "MiB", "is not a size");
	value_bad("ingest_max_body", "64MiB", "is out of range (a size from 1MiB to 32MiB");
}

static void kernel_buffer_must_be_a_power_of_two(void **state)
{
	(void)state;
	assert_int_equal(BYTES(kernel_buffer, "1MiB"), MIB);
	assert_int_equal(BYTES(kernel_buffer, "1GiB"), 1024 * MIB);
	assert_int_equal(BYTES(kernel_buffer, "64M"), 64 * MIB);
	value_bad("kernel_buffer", "3MiB", "'3MiB' is not a power of two");
	value_bad("kernel_buffer", "2GiB", "is out of range");
	value_bad("kernel_buffer", "512KiB", "is out of range");
}

static void durations_take_ms_s_m_h_and_fractions(void **state)
{
	(void)state;
	assert_int_equal(DURATION(stall_after, "90"), 90 * SEC); /* bare number: seconds */
	assert_int_equal(DURATION(stall_after, "90s"), 90 * SEC);
	assert_int_equal(DURATION(stall_after, "1500ms"), 1500 * MS);
	assert_int_equal(DURATION(stall_after, "2m"), 120 * SEC);
	assert_int_equal(DURATION(stall_after, "2h"), 7200 * SEC);
	assert_int_equal(DURATION(stall_after, "1.5"), 1500 * MS);
	assert_int_equal(DURATION(stall_after, "1.25s"), 1250 * MS);
	assert_int_equal(DURATION(stall_after, "0.5m"), 30 * SEC);
	assert_int_equal(DURATION(stall_after, "0.25h"), 900 * SEC);
	assert_int_equal(DURATION(stall_after, "1.000000001s"), SEC + 1);
	assert_int_equal(DURATION(stall_after, "1.5 m"), 90 * SEC);
	assert_int_equal(DURATION(fsync_interval, "1.5ms"), 1500000);
	assert_int_equal(DURATION(fsync_interval, "1.000001ms"), 1000001);
	assert_int_equal(DURATION(io_wait_after, "0"), 0);
}

static void durations_are_bounded_and_refuse_other_forms(void **state)
{
	(void)state;
	assert_int_equal(DURATION(sample_interval, "100ms"), 100 * MS);
	assert_int_equal(DURATION(sample_interval, "60s"), 60 * SEC);
	value_bad("sample_interval", "99ms", "'99ms' is out of range (a duration from 100ms to 60s");
	value_bad("sample_interval", "60.001s", "is out of range");
	value_bad("sample_interval", "0", "is out of range");
	value_bad("segment_age", "61m", "is out of range (a duration from 1s to 1h");
	value_bad("stall_after", "99999999999999999999h", "is out of range");
	value_bad("stall_after", "18446744073709551615h", "is out of range"); /* overflows in ns */
	value_bad("stall_after", "5 minutes", "has an unknown unit");
	value_bad("stall_after", "5ns", "has an unknown unit");
	value_bad("stall_after", "5S", "has an unknown unit");
	value_bad("stall_after", "1e3", "has an unknown unit");
	value_bad("stall_after", "-1s", "is not a duration");
	value_bad("stall_after", ".5s", "is not a duration");
	value_bad("stall_after", "1.s", "has no digit after the point");
	value_bad("stall_after", "1.0000000001s", "has more than 9 digits after the point");
	value_bad("fsync_interval", "1.0000001ms", "is finer than a nanosecond");
	value_bad("stall_after", "", "is not a duration");
}

static void listen_addresses_are_ipv4_bracketed_ipv6_or_localhost(void **state)
{
	struct tracer_config *c;

	(void)state;
	c = value_ok("ingest_listen", "0.0.0.0:80");
	assert_int_equal(c->ingest_listen.family, AF_INET);
	assert_string_equal(c->ingest_listen.host, "0.0.0.0");
	assert_int_equal(c->ingest_listen.port, 80);
	free(c);
	c = value_ok("ingest_listen", "[0:0::1]:65535");
	assert_int_equal(c->ingest_listen.family, AF_INET6);
	assert_string_equal(c->ingest_listen.host, "::1"); /* canonical */
	assert_memory_equal(c->ingest_listen.addr, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	assert_int_equal(c->ingest_listen.port, 65535);
	free(c);
	c = value_ok("ingest_listen", "localhost:0");
	assert_int_equal(c->ingest_listen.family, AF_INET);
	assert_string_equal(c->ingest_listen.host, "localhost");
	assert_memory_equal(c->ingest_listen.addr, "\x7f\0\0\x01", 4);
	assert_int_equal(c->ingest_listen.port, 0);
	free(c);
	value_bad("ingest_listen", "127.0.0.1", "'127.0.0.1' has no port (host:port, e.g. 127.0.0.1:8750");
	value_bad("ingest_listen", ":8750", "has no host");
	value_bad("ingest_listen", "::1:8750", "is an IPv6 address without brackets");
	value_bad("ingest_listen", "[::1]8750", "has no ':port' after the ']'");
	value_bad("ingest_listen", "[::1:8750", "has no ']'");
	value_bad("ingest_listen", "127.0.0.1:65536", "has a port that is not 0..65535");
	value_bad("ingest_listen", "127.0.0.1:", "has a port that is not 0..65535");
	value_bad("ingest_listen", "127.0.0.1:-1", "has a port that is not 0..65535");
	value_bad("ingest_listen", "127.0.0.1:000080", "has a port that is not 0..65535");
	value_bad("ingest_listen", "example.com:80", "is not an IPv4 address or localhost");
	value_bad("ingest_listen", "1.2.3:80", "is not an IPv4 address or localhost");
	value_bad("ingest_listen", "[zz::1]:80", "is not an IPv6 address");
}

static void urls_are_http_or_https_with_a_host(void **state)
{
	struct tracer_config *c;

	(void)state;
	c = value_ok("upload_url", "https://ingest.example.org:8750/v1/batches?site=a");
	assert_string_equal(c->upload_url, "https://ingest.example.org:8750/v1/batches?site=a");
	free(c);
	free(value_ok("upload_url", "http://10.0.0.1"));
	free(value_ok("upload_url", "https://[2001:db8::1]:443/x"));
	value_bad("upload_url", "ftp://host/x", "'ftp://host/x' is not an http:// or https:// URL");
	value_bad("upload_url", "HTTPS://host/", "is not an http:// or https:// URL");
	value_bad("upload_url", "ingest.example.org", "is not an http:// or https:// URL");
	value_bad("upload_url", "https://", "has no host");
	value_bad("upload_url", "https://:80/", "has no host");
	value_bad("upload_url", "https://user:secret@host/", "has credentials");
	value_bad("upload_url", "https://host:0/", "has a port that is not 1..65535");
	value_bad("upload_url", "https://host:70000/", "has a port that is not 1..65535");
	value_bad("upload_url", "https://host:/", "has a port that is not 1..65535");
	value_bad("upload_url", "https://ho_st/", "has a host name with a character");
	value_bad("upload_url", "https://[::1/", "has a bad IPv6 host");
	value_bad("upload_url", "https://h\xc3\xa9st/", "has a control character or a byte that is not ASCII");
}

/* upload_url may name several ingests: each URL checked as one, the one at fault named. */
static void url_lists_are_split_at_commas_and_blanks_and_checked_one_by_one(void **state)
{
	struct tracer_config *c;
	char buf[CONFIG_URL_MAX], list[CONFIG_URL_MAX + 64];
	const char *url[CONFIG_URLS_MAX];

	(void)state;
	c = value_ok("upload_url", "https://a.example:8750/v1/batches,https://b.example:8750/v1/batches");
	assert_int_equal(config_url_split(c->upload_url, buf, url), 2);
	assert_string_equal(url[0], "https://a.example:8750/v1/batches");
	assert_string_equal(url[1], "https://b.example:8750/v1/batches");
	free(c);
	c = value_ok("upload_url", "http://a/v1 , \thttp://b/v1   http://[::1]:9/v1,");
	assert_int_equal(config_url_split(c->upload_url, buf, url), 3);
	assert_string_equal(url[0], "http://a/v1");
	assert_string_equal(url[1], "http://b/v1");
	assert_string_equal(url[2], "http://[::1]:9/v1");
	free(c);
	c = value_ok("upload_url", "https://one.example/v1/batches"); /* one URL, as ever */
	assert_int_equal(config_url_split(c->upload_url, buf, url), 1);
	assert_string_equal(url[0], "https://one.example/v1/batches");
	free(c);
	assert_int_equal(config_url_split("", buf, url), 0);
	free(value_ok("upload_url", "http://1/,http://2/,http://3/,http://4/,http://5/,http://6/,http://7/,http://8/"));

	value_bad("upload_url", "http://1/,http://2/,http://3/,http://4/,http://5/,http://6/,http://7/,http://8/,http://9/",
		  "names 9 URLs (up to 8 http:// or https:// URLs");
	value_bad("upload_url", "https://a/v1,ftp://b/v1", "URL 2 of 2: 'ftp://b/v1' is not an http:// or https:// URL "
							  "(up to 8 http:// or https:// URLs separated by commas or blanks");
	value_bad("upload_url", "https://a:0/v1 https://b/v1", "URL 1 of 2: 'https://a:0/v1' has a port that is not 1..65535");
	value_bad("upload_url", "https://a/v1, https://a/v1", "URL 2 of 2: 'https://a/v1' is URL 1 too (name each ingest once)");
	value_bad("upload_url", ", ,", "', ,' has separators and no URL");
	/* A URL cannot hold a comma or a blank: they separate URLs (percent-encode them: %2C, %20). */
	value_bad("upload_url", "https://host/a b", "URL 2 of 2: 'b' is not an http:// or https:// URL");
	value_bad("upload_url", "https://host/x?a=1,2", "URL 2 of 2: '2' is not an http:// or https:// URL");
	/* The whole list is one value of at most 2047 bytes. */
	memset(list, 0, sizeof(list));
	snprintf(list, sizeof(list), "https://a/");
	memset(list + strlen(list), 'x', CONFIG_URL_MAX - strlen(list));
	value_bad("upload_url", list, "too long");
}

/* ---- syntax ---------------------------------------------------------- */

static void quoted_values_keep_hash_blanks_and_escapes(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "state_dir = \"/srv/a #1 \\\"q\\\" \\\\ \"  # a comment\n"
		    "runtime_dir=\"/run/x\"\n");
	assert_string_equal(c->state_dir, "/srv/a #1 \"q\" \\ ");
	assert_string_equal(c->runtime_dir, "/run/x");
	free(c);
	parse_bad("rules = \"  /lead\"\n", "'  /lead' is not an absolute path"); /* blanks kept: not absolute */
}

/* ingest_db: a lake file's absolute path, or a PostgreSQL database's URI (docs/lake.md); nothing else. */
static void ingest_db_takes_a_path_or_a_postgresql_uri(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "ingest_db = postgresql://fleet@db.internal:5432/lake?sslmode=verify-full\n");
	assert_string_equal(c->ingest_db, "postgresql://fleet@db.internal:5432/lake?sslmode=verify-full");
	parse_ok(c, "ingest_db = postgres:///lake?host=/run/postgresql\n");
	assert_string_equal(c->ingest_db, "postgres:///lake?host=/run/postgresql");
	parse_ok(c, "ingest_db = /srv/lake.db\n");
	assert_string_equal(c->ingest_db, "/srv/lake.db");
	free(c);
	parse_bad("ingest_db = mysql://x/lake\n", "is not an absolute path nor a postgresql:// URI");
	parse_bad("ingest_db = lake.db\n", "is not an absolute path nor a postgresql:// URI");
	/* other paths take no URI */
	parse_bad("state_dir = postgresql://x/lake\n", "is not an absolute path");
}

static void bad_escapes_and_unclosed_quotes_are_errors(void **state)
{
	(void)state;
	parse_error_is("state_dir = \"/a\\n\"\n",
		       "t.conf:1:16: key 'state_dir': only \\\" and \\\\ may follow a backslash in quotes");
	parse_error_is("state_dir = \"/a\n",
		       "t.conf:1:13: key 'state_dir': quote not closed on this line (a value ends with its line)");
	parse_error_is("state_dir = \"/a\\\"\n", "t.conf:1:13: key 'state_dir': quote not closed on this line "
						      "(a value ends with its line)");
	parse_error_is("state_dir = \"/a\" /b\n",
		       "t.conf:1:18: key 'state_dir': text after the closing quote (a comment starts with #)");
	parse_bad("state_dir = /a\"b\"\n", "key 'state_dir': a quote inside a bare value");
}

static void bare_values_end_at_a_comment_and_lose_trailing_blanks(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "  state_dir\t=\t/srv/a b \t# the spool\nring_order=20#no space\nrules = /x\\y\n");
	assert_string_equal(c->state_dir, "/srv/a b");
	assert_int_equal(c->ring_order, 20);
	assert_string_equal(c->rules, "/x\\y"); /* a backslash outside quotes is itself */
	free(c);
}

static void crlf_line_endings_are_accepted(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "# windows\r\nstate_dir = /srv/t\r\nring_order = 18\r\n\r\nrules = \"/r\"\r\n");
	assert_string_equal(c->state_dir, "/srv/t");
	assert_int_equal(c->ring_order, 18);
	assert_string_equal(c->rules, "/r");
	parse_ok(c, "ring_order = 19\r"); /* the last line without its newline */
	assert_int_equal(c->ring_order, 19);
	free(c);
	parse_error_is("ring_order = 1\r9\n", "t.conf:1:15: a carriage return inside a line (text: a carriage "
					      "return only before a line's newline)");
}

static void a_byte_order_mark_is_skipped(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "\xef\xbb\xbfring_order = 17\n");
	assert_int_equal(c->ring_order, 17);
	free(c);
}

static void control_characters_and_bad_utf8_are_errors(void **state)
{
	static const char nul[] = "ring_order = 2\0\n";
	struct tracer_config *c = new_config();
	char err[256];

	(void)state;
	parse_ok(c, "# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\nstate_dir = /srv/caf\xc3\xa9\n");
	assert_string_equal(c->state_dir, "/srv/caf\xc3\xa9");
	assert_int_equal(config_parse(c, "t.conf", nul, sizeof(nul) - 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:1:15: control character 0x00 (text, one key = value per line)");
	parse_error_is("# \x1b[31m\n", "t.conf:1:3: control character 0x1b (text, one key = value per line)");
	parse_error_is("# \xff\n", "t.conf:1:3: byte 0xff is not UTF-8 (UTF-8 text)");
	parse_error_is("# \xc0\xaf\n", "t.conf:1:3: byte 0xc0 is not UTF-8 (UTF-8 text)");     /* overlong */
	parse_error_is("# \xed\xa0\x80\n", "t.conf:1:3: byte 0xed is not UTF-8 (UTF-8 text)"); /* surrogate */
	parse_error_is("# \xe2\x82\n", "t.conf:1:3: byte 0xe2 is not UTF-8 (UTF-8 text)");     /* cut short */
	value_bad("state_dir", "/a\tb\x01", "control character 0x01");
	free(c);
}

static void a_line_without_equals_is_an_error(void **state)
{
	(void)state;
	parse_error_is("\nstate_dir /var/lib/tracer # old style\n",
		       "t.conf:2:1: 'state_dir /var/lib/tracer' is not a setting: no '=' (key = value)");
	parse_error_is("ring_order\n", "t.conf:1:1: 'ring_order' is not a setting: no '=' (key = value)");
	parse_error_is("  = 5\n", "t.conf:1:3: no key before '=' (key = value)");
}

static void a_key_set_twice_names_both_lines(void **state)
{
	(void)state;
	parse_error_is("ring_order = 20\n# x\n\nring_order = 20\n",
		       "t.conf:4:1: key 'ring_order': set twice, on line 1 and on line 4 (each key at most once)");
}

static void unknown_keys_are_errors_with_a_suggestion(void **state)
{
	(void)state;
	parse_error_is("stat_dir = /x\n", "t.conf:1:1: key 'stat_dir': unknown key (did you mean 'state_dir'?)");
	parse_bad("ring_ordre = 20\n", "key 'ring_ordre': unknown key (did you mean 'ring_order'?)"); /* swap */
	parse_bad("tls_verifyy = 1\n", "did you mean 'tls_verify'?");
	parse_error_is("  flavour = blue\n", "t.conf:1:3: key 'flavour': unknown key (docs/config.md lists the keys)");
	parse_error_is("stall-after = 5\n", "t.conf:1:1: key 'stall-after': not a key name (lowercase letters, "
					    "digits and _; did you mean 'stall_after'?)");
	parse_bad("State_Dir = /x\n", "key 'State_Dir': not a key name (lowercase letters, digits and _; did you "
				      "mean 'state_dir'?)");
}

static void errors_name_file_line_and_value_column(void **state)
{
	(void)state;
	parse_error_is("# c\nstate_dir = /a\n  ring_order =   40   # too big\n",
		       "t.conf:3:18: key 'ring_order': '40' is out of range (an integer from 16 to 30)");
	parse_error_is("upload_url = ftp://x\n", "t.conf:1:14: key 'upload_url': 'ftp://x' is not an http:// or "
						  "https:// URL (up to 8 http:// or https:// URLs separated by commas or "
						  "blanks, at most 2047 bytes in all, or empty for none)");
}

static void a_bad_line_leaves_the_config_untouched(void **state)
{
	static const char bad_line[] = "state_dir = /srv/second\nring_order = 20\nmax_processes = 0\n";
	static const char bad_whole[] = "state_dir = /srv/second\nclient_cert = /c\n";
	struct tracer_config *c = new_config(), *before;
	char err[512];

	(void)state;
	parse_ok(c, "state_dir = /srv/first\nring_order = 18\n");
	before = malloc(sizeof(*before));
	assert_non_null(before);
	memcpy(before, c, sizeof(*c));
	/* Good lines first, then one bad one: none of it is applied. */
	assert_int_equal(config_parse(c, "t.conf", bad_line, strlen(bad_line), err, sizeof(err)), -EINVAL);
	assert_memory_equal(c, before, sizeof(*c));
	assert_string_equal(c->state_dir, "/srv/first");
	/* Every line good, the whole not: same. */
	assert_int_equal(config_parse(c, "t.conf", bad_whole, strlen(bad_whole), err, sizeof(err)), -EINVAL);
	assert_memory_equal(c, before, sizeof(*c));
	free(before);
	free(c);
}

static void text_larger_than_1_mib_is_refused(void **state)
{
	struct tracer_config *c = new_config();
	char *text = malloc(READ_MAX_CONFIG + 1), err[256];

	(void)state;
	assert_non_null(text);
	memset(text, '\n', READ_MAX_CONFIG + 1);
	assert_int_equal(config_parse(c, "t.conf", text, READ_MAX_CONFIG, err, sizeof(err)), 0); /* blank lines */
	assert_int_equal(config_parse(c, "t.conf", text, READ_MAX_CONFIG + 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf: 1048577 bytes, larger than 1024 KiB (a config file is a few KiB)");
	free(text);
	free(c);
}

/* ---- the whole ------------------------------------------------------- */

static void client_cert_and_client_key_come_together(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "client_cert = /etc/tracer/c.pem\nclient_key = /etc/tracer/k.pem\n");
	assert_string_equal(c->client_key, "/etc/tracer/k.pem");
	parse_error_is("\nclient_key = /k\n", "t.conf:2:1: key 'client_key': set without client_cert (both, or neither)");
	free(c);
}

static void ingest_tls_cert_and_key_come_together_and_client_ca_needs_them(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "ingest_tls_cert = /etc/tracer/ingest.pem\ningest_tls_key = /etc/tracer/ingest.key\n"
		    "ingest_client_ca = /etc/tracer/ca.pem\n");
	assert_string_equal(c->ingest_tls_key, "/etc/tracer/ingest.key");
	assert_string_equal(c->ingest_client_ca, "/etc/tracer/ca.pem");
	parse_error_is("ingest_tls_cert = /c\n",
		       "t.conf:1:1: key 'ingest_tls_cert': set without ingest_tls_key (both, or neither)");
	parse_error_is("\n\ningest_tls_key = /k\n",
		       "t.conf:3:1: key 'ingest_tls_key': set without ingest_tls_cert (both, or neither)");
	parse_error_is("ingest_client_ca = /ca\n",
		       "t.conf:1:1: key 'ingest_client_ca': set without ingest_tls_cert (client certificates are "
		       "checked in the TLS handshake: set ingest_tls_cert and ingest_tls_key too)");
	free(c);
}

static void spool_quota_holds_two_segments(void **state)
{
	struct tracer_config *c = new_config();

	(void)state;
	parse_ok(c, "spool_quota = 32MiB\nsegment_size = 16MiB\n");
	parse_error_is("spool_quota = 32MiB\nsegment_size = 17MiB\n",
		       "t.conf:2:1: key 'segment_size': spool_quota 32MiB holds fewer than two segments of "
		       "segment_size 17MiB (spool_quota at least twice segment_size)");
	parse_error_is("spool_quota = 16MiB\n",
		       "t.conf:1:1: key 'spool_quota': spool_quota 16MiB holds fewer than two segments of "
		       "segment_size 16MiB (spool_quota at least twice segment_size)");
	free(c);
}

/* ---- command-line overrides ----------------------------------------- */

static void config_set_takes_the_value_as_it_is(void **state)
{
	struct tracer_config *c = new_config(), *before = new_config();
	char err[256];

	(void)state;
	assert_int_equal(config_set(c, "state_dir", "/srv/a #b", err, sizeof(err)), 0);
	assert_string_equal(c->state_dir, "/srv/a #b"); /* no comments on a command line */
	assert_int_equal(config_set(c, "state_dir", " /srv", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "key 'state_dir': ' /srv' is not an absolute path (an absolute path of at most "
				 "4095 bytes)");
	assert_int_equal(config_set(c, "state_dir", "\"/srv\"", err, sizeof(err)), -EINVAL); /* no quotes either */
	assert_string_equal(c->state_dir, "/srv/a #b");
	assert_int_equal(config_set(c, "stat_dir", "/x", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "key 'stat_dir': unknown key (did you mean 'state_dir'?)");
	assert_int_equal(config_set(c, "ring_order", "20\n", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "key 'ring_order': control character 0x0a (text, one key = value per line)");
	config_defaults(c);
	assert_int_equal(config_set(c, "ring_order", "99", err, sizeof(err)), -EINVAL);
	assert_memory_equal(c, before, sizeof(*c));
	free(c);
	free(before);
}

static void config_set_arg_splits_at_the_first_equals(void **state)
{
	struct tracer_config *c = new_config();
	char err[256];

	(void)state;
	assert_int_equal(config_set_arg(c, "upload_url=https://h/x?a=b", err, sizeof(err)), 0);
	assert_string_equal(c->upload_url, "https://h/x?a=b");
	assert_int_equal(config_set_arg(c, "upload_url", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'upload_url' has no '=' (key=value)");
	assert_int_equal(config_set_arg(c, "ring_order = 20", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "key 'ring_order ': not a key name (lowercase letters, digits and _; did you mean "
				 "'ring_order'?)");
	assert_int_equal(config_set_arg(c, "=1", err, sizeof(err)), -EINVAL);
	free(c);
}

static void config_check_judges_the_whole_after_overrides(void **state)
{
	struct tracer_config *c = new_config();
	char err[256];

	(void)state;
	/* One at a time, the first leaves a half pair: only the whole is checked. */
	assert_int_equal(config_set(c, "client_cert", "/c.pem", err, sizeof(err)), 0);
	assert_int_equal(config_check(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "key 'client_cert': set without client_key (both, or neither)");
	assert_int_equal(config_set(c, "client_key", "/k.pem", err, sizeof(err)), 0);
	assert_int_equal(config_check(c, err, sizeof(err)), 0);
	free(c);
}

/* ---- writing --------------------------------------------------------- */

static void config_write_reads_back_to_the_same_config(void **state)
{
	struct tracer_config *c = new_config(), *back = new_config();
	char *a, *b;

	(void)state;
	parse_ok(c, "state_dir = \"/srv/a #1 \\\"q\\\" \\\\ \"\n"
		    "runtime_dir = \"/run/ lead\"\n"
		    "processor_user = nobody\n"
		    "rules = /x\\y\n"
		    "sample_interval = 1.5s\n"
		    "ring_order = 17\n"
		    "kernel_buffer = 1G\n"
		    "stall_after = 1.000000001s\n"
		    "io_wait_after = 0\n"
		    "net_wait_after = 90m\n"
		    "max_processes = 7\n"
		    "upload_url = \"https://h:1/p?q=1#f\"\n"
		    "client_cert = /c\nclient_key = /k\n"
		    "tls_verify = off\n"
		    "host_id = 0123456789ABCDEF0123456789abcdef\n"
		    "fsync_interval = 1.5ms\n"
		    "spool_quota = 1000MiB\n"
		    "segment_size = 1536KiB\n"
		    "ingest_listen = [::ffff:1.2.3.4]:9\n"
		    "ingest_max_body = 1048577B\n"
		    "cloud = aws\ninstance_type = m6i.xlarge\nregion = us-east-1\n"
		    "price_per_hour = 0.19200\n");
	a = written(c);
	parse_ok(back, a);
	b = written(back);
	assert_string_equal(a, b);
	assert_memory_equal(&c->ingest_listen, &back->ingest_listen, sizeof(c->ingest_listen));
	assert_string_equal(back->state_dir, "/srv/a #1 \"q\" \\ ");
	assert_int_equal(back->stall_after_ns, SEC + 1);
	assert_int_equal(back->fsync_interval_ns, 1500000);
	assert_int_equal(back->ingest_max_body, MIB + 1);
	assert_non_null(strstr(a, "\nsegment_size = 1536KiB\n"));
	assert_non_null(strstr(a, "\nnet_wait_after = 90m\n"));
	assert_non_null(strstr(a, "\nfsync_interval = 1.5ms\n"));
	assert_non_null(strstr(a, "\nprice_per_hour = 0.192\n"));
	assert_true(back->price_per_hour.set && back->price_per_hour.micro_usd == 192000);
	assert_memory_equal(&c->price_per_hour, &back->price_per_hour, sizeof(c->price_per_hour));
	free(a);
	free(b);
	free(c);
	free(back);
}

static void error_buffers_may_be_small_or_absent(void **state)
{
	struct tracer_config *c = new_config();
	char tiny[8];

	(void)state;
	assert_int_equal(config_parse(c, "t.conf", "x = 1", 5, NULL, 0), -EINVAL);
	memset(tiny, 'X', sizeof(tiny));
	assert_int_equal(config_parse(c, "t.conf", "x = 1", 5, tiny, 5), -EINVAL);
	assert_string_equal(tiny, "t.co");
	assert_int_equal(tiny[5], 'X');
	assert_int_equal(config_set(c, "x", "1", NULL, 0), -EINVAL);
	free(c);
}

/* ---- the file -------------------------------------------------------- */

static int dir_setup(void **state)
{
	return dir_make(state, "/tmp/test_common_config.XXXXXX");
}

/* A file in the test's directory with this text and mode; its path in out. */
static void make_file(const struct dir *d, const char *name, const char *text, mode_t mode, char *out, size_t len)
{
	int fd;

	snprintf(out, len, "%s/%s", d->path, name);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* config_load refuses: rc, the message contains want, the config is untouched. */
static void load_bad(const char *path, bool require_root, int want_rc, const char *want)
{
	struct tracer_config *c = new_config(), *before = new_config();
	char err[512] = "";
	int rc = config_load(c, path, require_root, err, sizeof(err));

	if (rc != want_rc || !strstr(err, want))
		fail_msg("%s: got %d \"%s\", want %d \"%s\"", path, rc, err, want_rc, want);
	assert_memory_equal(c, before, sizeof(*c));
	free(c);
	free(before);
}

static void load_reads_a_good_file(void **state)
{
	struct tracer_config *c = new_config();
	char path[128], err[256];

	make_file(*state, "tracer.conf", "ring_order = 21\nupload_url = https://i.example/v1\n", 0644, path,
		  sizeof(path));
	assert_int_equal(config_load(c, path, geteuid() == 0, err, sizeof(err)), 0);
	assert_int_equal(c->ring_order, 21);
	assert_string_equal(c->upload_url, "https://i.example/v1");
	free(c);
}

static void load_names_the_file_in_content_errors(void **state)
{
	char path[128], want[192];

	make_file(*state, "tracer.conf", "ring_order = 21\n\nring_order = 99\n", 0644, path, sizeof(path));
	snprintf(want, sizeof(want), "%s:3:1: key 'ring_order': set twice, on line 1 and on line 3", path);
	load_bad(path, false, -EINVAL, want);
}

static void load_missing_file_is_enoent_and_says_what_to_do(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/none.conf", ((struct dir *)*state)->path);
	load_bad(path, false, -ENOENT, "none.conf: no such file (create it: docs/tracer.conf.example has every key");
}

static void load_directory_is_eisdir(void **state)
{
	load_bad(((struct dir *)*state)->path, false, -EISDIR, ": is a directory (give the config file's path");
}

static void load_fifo_is_not_a_regular_file_and_does_not_block(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/fifo", ((struct dir *)*state)->path);
	assert_int_equal(mkfifo(path, 0644), 0);
	load_bad(path, false, -EINVAL, "fifo: not a regular file");
}

static void load_file_larger_than_1_mib_is_efbig(void **state)
{
	char path[128];
	int fd;

	make_file(*state, "big.conf", "", 0644, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, READ_MAX_CONFIG + 1), 0);
	close(fd);
	load_bad(path, false, -EFBIG, "big.conf: 1048577 bytes, larger than 1024 KiB");
	/* Exactly the limit is read (and then refused for its NUL bytes, as any binary file). */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_int_equal(ftruncate(fd, READ_MAX_CONFIG), 0);
	close(fd);
	load_bad(path, false, -EINVAL, "big.conf:1:1: control character 0x00");
}

static void load_world_writable_file_is_refused_even_unrequired(void **state)
{
	char path[128];

	make_file(*state, "ww.conf", "ring_order = 21\n", 0666, path, sizeof(path));
	load_bad(path, false, -EPERM, "is writable by anyone (mode 0666): anyone could reconfigure tracer (chmod o-w");
	load_bad(path, true, -EPERM, "is writable by anyone");
}

/* The port Landlock lets the processor connect to: the upload URL's, or an environment proxy's. */
static void url_port_follows_the_scheme_and_an_explicit_port(void **state)
{
	(void)state;
	assert_int_equal(config_url_port("http://ingest.example.org/v1/batches", 0), 80);
	assert_int_equal(config_url_port("https://ingest.example.org/v1/batches", 0), 443);
	assert_int_equal(config_url_port("https://ingest.example.org:8750/v1/batches#a:1", 0), 8750);
	assert_int_equal(config_url_port("http://127.0.0.1:9/x?y=:2", 0), 9);
	assert_int_equal(config_url_port("https://[::1]:8443/v1", 0), 8443);
	assert_int_equal(config_url_port("https://[::1]/v1", 0), 443);
	assert_int_equal(config_url_port("socks5://proxy.local", 1080), 1080);
	assert_int_equal(config_url_port("http://user:pw@proxy:3128", 1080), 3128);
	assert_int_equal(config_url_port("http://user:pw@proxy", 1080), 80);
	/* Nothing usable: no rule rather than a wrong one. */
	assert_int_equal(config_url_port("proxy:3128", 1080), 0);
	assert_int_equal(config_url_port("", 0), 0);
	assert_int_equal(config_url_port(NULL, 0), 0);
	assert_int_equal(config_url_port("http://h:0/", 0), 0);
	assert_int_equal(config_url_port("http://h:65536/", 0), 0);
	assert_int_equal(config_url_port("http://h:-1/", 0), 0);
	assert_int_equal(config_url_port("http://h:80x/", 0), 0);
}

static void load_not_root_owned_is_refused_when_required(void **state)
{
	struct passwd *nobody = getpwnam("nobody");
	struct tracer_config *c;
	char path[128], err[256];

	if (geteuid() != 0 || !nobody)
		TEST_SKIP("needs root (to chown the file) and a user nobody");
	c = new_config();
	make_file(*state, "nobody.conf", "ring_order = 21\n", 0644, path, sizeof(path));
	assert_int_equal(chown(path, nobody->pw_uid, nobody->pw_gid), 0);
	load_bad(path, true, -EPERM, "is owned by uid 65534, not root: only root may be able to change it (chown root");
	assert_int_equal(config_load(c, path, false, err, sizeof(err)), 0); /* not required: read */
	assert_int_equal(c->ring_order, 21);
	free(c);
}

static void load_group_writable_is_refused_when_required(void **state)
{
	struct tracer_config *c;
	char path[128], err[256];

	if (geteuid() != 0)
		TEST_SKIP("needs root: as another user the file would not be root's anyway");
	c = new_config();
	make_file(*state, "gw.conf", "ring_order = 21\n", 0664, path, sizeof(path));
	load_bad(path, true, -EPERM, "is writable by its group (mode 0664): only root may be able to change it");
	assert_int_equal(config_load(c, path, false, err, sizeof(err)), 0);
	free(c);
}

static void load_refuses_a_directory_others_can_write_when_required(void **state)
{
	const struct dir *d = *state;
	char sub[96], path[160], want[192];
	int fd;

	if (geteuid() != 0)
		TEST_SKIP("needs root: as another user the directory would not be root's anyway");
	snprintf(sub, sizeof(sub), "%s/open", d->path);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chmod(sub, 01777), 0); /* as /tmp */
	snprintf(path, sizeof(path), "%s/t.conf", sub);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(want, sizeof(want), ": %s is writable by anyone (mode 1777)", sub);
	load_bad(path, true, -EPERM, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_are_the_documented_values),
		cmocka_unit_test(describe_documents_every_key_with_a_valid_default),
		cmocka_unit_test(example_file_documents_every_key_with_its_default),
		cmocka_unit_test(other_programs_read_defaults_and_bounds_from_the_table),
		cmocka_unit_test(empty_text_and_comments_give_the_defaults),
		cmocka_unit_test(parse_replaces_the_whole_config_keys_not_set_go_back_to_default),
		cmocka_unit_test(paths_must_be_absolute_and_fit),
		cmocka_unit_test(empty_path_is_allowed_only_where_documented),
		cmocka_unit_test(users_are_names_or_uids_but_not_root),
		cmocka_unit_test(host_id_is_32_hex_digits_stored_lowercase),
		cmocka_unit_test(host_names_take_clouds_instance_types_and_regions),
		cmocka_unit_test(price_per_hour_is_a_decimal_of_dollars_not_negative),
		cmocka_unit_test(bools_take_true_false_yes_no_on_off_1_0),
		cmocka_unit_test(integers_are_decimal_and_bounded),
		cmocka_unit_test(sizes_take_binary_suffixes),
		cmocka_unit_test(sizes_are_bounded_and_refuse_other_units),
		cmocka_unit_test(kernel_buffer_must_be_a_power_of_two),
		cmocka_unit_test(durations_take_ms_s_m_h_and_fractions),
		cmocka_unit_test(durations_are_bounded_and_refuse_other_forms),
		cmocka_unit_test(listen_addresses_are_ipv4_bracketed_ipv6_or_localhost),
		cmocka_unit_test(urls_are_http_or_https_with_a_host),
		cmocka_unit_test(url_lists_are_split_at_commas_and_blanks_and_checked_one_by_one),
		cmocka_unit_test(quoted_values_keep_hash_blanks_and_escapes),
		cmocka_unit_test(bad_escapes_and_unclosed_quotes_are_errors),
		cmocka_unit_test(bare_values_end_at_a_comment_and_lose_trailing_blanks),
		cmocka_unit_test(crlf_line_endings_are_accepted),
		cmocka_unit_test(a_byte_order_mark_is_skipped),
		cmocka_unit_test(control_characters_and_bad_utf8_are_errors),
		cmocka_unit_test(a_line_without_equals_is_an_error),
		cmocka_unit_test(a_key_set_twice_names_both_lines),
		cmocka_unit_test(unknown_keys_are_errors_with_a_suggestion),
		cmocka_unit_test(errors_name_file_line_and_value_column),
		cmocka_unit_test(a_bad_line_leaves_the_config_untouched),
		cmocka_unit_test(text_larger_than_1_mib_is_refused),
		cmocka_unit_test(client_cert_and_client_key_come_together),
		cmocka_unit_test(ingest_tls_cert_and_key_come_together_and_client_ca_needs_them),
		cmocka_unit_test(spool_quota_holds_two_segments),
		cmocka_unit_test(config_set_takes_the_value_as_it_is),
		cmocka_unit_test(config_set_arg_splits_at_the_first_equals),
		cmocka_unit_test(config_check_judges_the_whole_after_overrides),
		cmocka_unit_test(config_write_reads_back_to_the_same_config),
		cmocka_unit_test(error_buffers_may_be_small_or_absent),
		cmocka_unit_test(url_port_follows_the_scheme_and_an_explicit_port),
		cmocka_unit_test(ingest_db_takes_a_path_or_a_postgresql_uri),
		cmocka_unit_test_setup_teardown(load_reads_a_good_file, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_names_the_file_in_content_errors, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_missing_file_is_enoent_and_says_what_to_do, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_directory_is_eisdir, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_fifo_is_not_a_regular_file_and_does_not_block, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(load_file_larger_than_1_mib_is_efbig, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_world_writable_file_is_refused_even_unrequired, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(load_not_root_owned_is_refused_when_required, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_group_writable_is_refused_when_required, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_refuses_a_directory_others_can_write_when_required, dir_setup,
						dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
