/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The collector's own reader of tracer.conf (collector/conf.c) against the
 * general parser (common/config.c), which the collector no longer links:
 * the same defaults, the same values and the same messages for the
 * collector's seven keys, the same verdict on every bad line, the same
 * checks on the file; the keys of the other components skipped, whatever
 * their values; --set and what the daemon logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "../collector/conf.h"
#include "config.h"
#include "readfile.h"
#include "skip.h"

/* Both parsers' results: the collector's struct, and the general one (large: off the stack). */
struct both {
	struct collector_conf c;
	struct tracer_config *g;
	int rc_c, rc_g;
	char err_c[512], err_g[512];
};

static struct both *new_both(void)
{
	struct both *b = calloc(1, sizeof(*b));

	assert_non_null(b);
	b->g = malloc(sizeof(*b->g));
	assert_non_null(b->g);
	conf_defaults(&b->c);
	config_defaults(b->g);
	return b;
}

static void free_both(struct both *b)
{
	free(b->g);
	free(b);
}

/* The collector's seven keys hold what the general parser's fields hold. */
static void assert_same_values(const struct collector_conf *c, const struct tracer_config *g)
{
	assert_string_equal(c->runtime_dir, g->runtime_dir);
	assert_string_equal(c->collector_user, g->collector_user);
	assert_string_equal(c->processor_user, g->processor_user);
	assert_string_equal(c->rules, g->rules);
	assert_int_equal(c->sample_interval_ns, g->sample_interval_ns);
	assert_int_equal(c->ring_order, g->ring_order);
	assert_int_equal(c->kernel_buffer, g->kernel_buffer);
}

/* Parse text with both; they must agree exactly: verdict, message, values. want_rc: what both return. */
static void same(const char *text, size_t len, int want_rc)
{
	struct both *b = new_both();

	b->rc_c = conf_parse(&b->c, "t.conf", text, len, b->err_c, sizeof(b->err_c));
	b->rc_g = config_parse(b->g, "t.conf", text, len, b->err_g, sizeof(b->err_g));
	if (b->rc_c != want_rc || b->rc_g != want_rc || (want_rc && strcmp(b->err_c, b->err_g)))
		fail_msg("text \"%.*s\":\n collector %d \"%s\"\n general   %d \"%s\"\n want %d", (int)len, text,
			 b->rc_c, b->err_c, b->rc_g, b->err_g, want_rc);
	assert_same_values(&b->c, b->g);
	free_both(b);
}

static void same_ok(const char *text)
{
	same(text, strlen(text), 0);
}

static void same_bad(const char *text)
{
	same(text, strlen(text), -EINVAL);
}

/* One value, from a file line and from --set KEY=VALUE: both readers agree both ways. */
static void value(const char *key, const char *v, int want_rc)
{
	struct both *b = new_both();
	char text[PATH_MAX + 64], arg[PATH_MAX + 64];

	snprintf(text, sizeof(text), "%s = %s\n", key, v);
	same(text, strlen(text), want_rc);
	snprintf(arg, sizeof(arg), "%s=%s", key, v);
	b->rc_c = conf_set_arg(&b->c, arg, b->err_c, sizeof(b->err_c));
	b->rc_g = config_set_arg(b->g, arg, b->err_g, sizeof(b->err_g));
	if (b->rc_c != b->rc_g || (b->rc_c && strcmp(b->err_c, b->err_g)))
		fail_msg("--set %s:\n collector %d \"%s\"\n general   %d \"%s\"", arg, b->rc_c, b->err_c, b->rc_g,
			 b->err_g);
	assert_same_values(&b->c, b->g);
	free_both(b);
}

/* ---- defaults and values ---------------------------------------------- */

static void defaults_are_the_general_parsers(void **state)
{
	struct both *b = new_both();

	(void)state;
	assert_int_equal(CONF_USER_MAX, CONFIG_USER_MAX);
	assert_same_values(&b->c, b->g);
	same_ok("");
	same_ok("# only a comment\n\n   \t\n");
	free_both(b);
}

static void paths_take_what_the_general_parser_takes(void **state)
{
	char long_path[PATH_MAX + 2];

	(void)state;
	value("runtime_dir", "/run/x", 0);
	value("rules", "/etc/tracer/rules", 0);
	value("rules", "", 0);
	value("rules", "\"\"", 0);
	value("runtime_dir", "", -EINVAL);
	value("runtime_dir", "run/x", -EINVAL);
	value("rules", "\"  /lead\"", -EINVAL);
	value("rules", "/déjà/vu", 0);
	long_path[0] = '/';
	memset(long_path + 1, 'a', PATH_MAX);
	long_path[PATH_MAX + 1] = 0;
	value("rules", long_path, -EINVAL);       /* 4097 bytes: too long to be read */
	long_path[PATH_MAX] = 0;
	value("rules", long_path, -EINVAL);       /* 4096 bytes: read, too long for the key */
	long_path[PATH_MAX - 1] = 0;
	value("runtime_dir", long_path, 0);       /* 4095 bytes: the longest */
}

static void users_take_what_the_general_parser_takes(void **state)
{
	static const char *const ok[] = { "nobody", "65534", "svc.tracer_1-x", "abcdefghijklmnopqrstuvwxyzabcdef" };
	static const char *const bad[] = { "", "root", "0", "000", "-x", "\"a b\"", "4294967295", "99999999999",
					   "abcdefghijklmnopqrstuvwxyzabcdefg", "us\xc3\xa9r" };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		value("collector_user", ok[i], 0);
		value("processor_user", ok[i], 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		value("collector_user", bad[i], -EINVAL);
		value("processor_user", bad[i], -EINVAL);
	}
}

static void ring_order_takes_what_the_general_parser_takes(void **state)
{
	static const char *const ok[] = { "16", "22", "30", "0022" };
	static const char *const bad[] = { "15", "31", "-1", "+20", "0x14", "20.0", "20 x", "", "99999999999999999999999" };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		value("ring_order", ok[i], 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		value("ring_order", bad[i], -EINVAL);
}

static void kernel_buffer_takes_what_the_general_parser_takes(void **state)
{
	static const char *const ok[] = { "1MiB", "1GiB", "64M", "1048576", "2048 K", "1G", "1048576B" };
	static const char *const bad[] = { "3MiB", "2GiB", "512KiB", "16MB", "16 mib", "1.5M", "M", "", "1T",
					   "99999999999999999999 B", "18446744073709551615K" };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		value("kernel_buffer", ok[i], 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		value("kernel_buffer", bad[i], -EINVAL);
}

static void sample_interval_takes_what_the_general_parser_takes(void **state)
{
	static const char *const ok[] = { "100ms", "60s", "1", "1.5s", "0.5m", "250 ms", "1.000000000s", "0.1" };
	static const char *const bad[] = { "99ms", "60.001s", "0", "2h", "1d", "1.", ".5s", "1.0000000001s",
					   "0.1000001ms", "s", "", "18446744073709551615h", "1e3ms" };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		value("sample_interval", ok[i], 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		value("sample_interval", bad[i], -EINVAL);
}

/* ---- lines -------------------------------------------------------------- */

static void the_file_syntax_is_the_general_parsers(void **state)
{
	(void)state;
	same_ok("ring_order=20\nrules = \"/a b/#c\"   # the rules\nkernel_buffer = 32MiB\t\n");
	same_ok("rules = \"/x\\\"y\\\\z\"\n");
	same_ok("ring_order = 20\r\nrules = /r\r\n");
	same_ok("\xef\xbb\xbfring_order = 20\n");
	same_ok("  \t runtime_dir   =   /run/t   # comment\n");
	same_ok("ring_order = 20"); /* no newline at the end */
}

static void bad_lines_are_reported_as_the_general_parser_reports_them(void **state)
{
	static const char *const bad[] = {
		"ring_order 20\n",
		"ring_order\n",
		"# fine\n  ring_order # no equals\n",
		"= 20\n",
		"ring_order = 20\nring_order = 21\n",
		"rules = \"/x\n",
		"rules = \"/x\\n\"\n",
		"rules = \"/x\\\"\n",   /* an escaped quote last: not closed */
		"rules = \"/x\\\n",     /* a backslash last */
		"rules = \"/x\" y\n",
		"rules = /a\"b\n",
		"ring_order = 2\r0\n",
		"ring_order = 20\x01\n",
		"# \xff in a comment\n",
		"# \xe0\x80\x80 overlong\n",
		"# \xed\xa0\x80 surrogate\n",
		"# \xf4\x90\x80\x80 above U+10FFFF\n",
		"# cut \xe2\x82\n",
		"stall_after = 1s\x7f\n",
	};
	static const char nul[] = "ring_order = 20\n\0\n";

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		same_bad(bad[i]);
	same(nul, sizeof(nul) - 1, -EINVAL);
}

static void a_bad_line_leaves_the_config_untouched(void **state)
{
	struct collector_conf c, before;
	char err[256];

	(void)state;
	conf_defaults(&c);
	assert_int_equal(conf_parse(&c, "t.conf", "ring_order = 20\n", 16, err, sizeof(err)), 0);
	before = c;
	assert_int_equal(conf_parse(&c, "t.conf", "ring_order = 21\nrules = x\n", 26, err, sizeof(err)), -EINVAL);
	assert_memory_equal(&c, &before, sizeof(c));
	/* A good parse is the defaults plus the text: ring_order goes back to 22. */
	assert_int_equal(conf_parse(&c, "t.conf", "rules = /r\n", 11, err, sizeof(err)), 0);
	assert_int_equal(c.ring_order, 22);
	assert_string_equal(c.rules, "/r");
}

/* The processor and the ingest read the same file: their keys, good or bad, are theirs to check. */
static void other_components_keys_are_skipped_whatever_their_values(void **state)
{
	static const char text[] = "state_dir = /srv/tracer\n"
				   "spool_quota = 12 parsecs\n"
				   "upload_url = \"https://unclosed\n"
				   "stall_after = 1s\nstall_after = 2s\n"
				   "client_cert = /only/the/cert\n"
				   "no_such_key = 1\n"
				   "Not_A_Key = 1\n"
				   "ring_order = 20\n";
	struct collector_conf c;
	char err[256] = "";

	(void)state;
	conf_defaults(&c);
	if (conf_parse(&c, "t.conf", text, sizeof(text) - 1, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(c.ring_order, 20);
	assert_int_equal(conf_set_arg(&c, "spool_quota=1KiB", err, sizeof(err)), 0);
	assert_int_equal(conf_set_arg(&c, "no_such_key=1", err, sizeof(err)), 0);
	/* Still a line of text with an '=': encoding and form are checked on every line. */
	same_bad("spool_quota = 1GiB\nupload_url = \xff\n");
	same_bad("spool_quota 1GiB\n");
}

static void set_arg_is_the_general_parsers_for_the_collectors_keys(void **state)
{
	struct both *b = new_both();

	(void)state;
	value("ring_order", "21", 0);
	value("rules", "", 0);
	value("kernel_buffer", "32 MiB", 0);
	value("sample_interval", "2s", 0);
	b->rc_c = conf_set_arg(&b->c, "ring_order", b->err_c, sizeof(b->err_c));
	b->rc_g = config_set_arg(b->g, "ring_order", b->err_g, sizeof(b->err_g));
	assert_int_equal(b->rc_c, -EINVAL);
	assert_int_equal(b->rc_g, -EINVAL);
	assert_string_equal(b->err_c, b->err_g);
	b->rc_c = conf_set_arg(&b->c, "rules=/a\nb", b->err_c, sizeof(b->err_c));
	b->rc_g = config_set_arg(b->g, "rules=/a\nb", b->err_g, sizeof(b->err_g));
	assert_int_equal(b->rc_c, -EINVAL);
	assert_string_equal(b->err_c, b->err_g);
	/* Taken as it is: no quotes, no comment. */
	assert_int_equal(conf_set_arg(&b->c, "rules=/a # b", b->err_c, sizeof(b->err_c)), 0);
	assert_string_equal(b->c.rules, "/a # b");
	free_both(b);
}

static void error_buffers_may_be_small_or_absent(void **state)
{
	struct both *b = new_both();
	char tiny[8];

	(void)state;
	assert_int_equal(conf_parse(&b->c, "t.conf", "ring_order = 1", 14, NULL, 0), -EINVAL);
	memset(tiny, 'X', sizeof(tiny));
	assert_int_equal(conf_parse(&b->c, "t.conf", "ring_order = 1", 14, tiny, 5), -EINVAL);
	assert_string_equal(tiny, "t.co");
	assert_int_equal(tiny[5], 'X');
	assert_int_equal(conf_set_arg(&b->c, "ring_order=1", NULL, 0), -EINVAL);
	/* A message cut short is cut as the general parser cuts it. */
	b->rc_c = conf_parse(&b->c, "t.conf", "ring_order = 1", 14, b->err_c, 40);
	b->rc_g = config_parse(b->g, "t.conf", "ring_order = 1", 14, b->err_g, 40);
	assert_string_equal(b->err_c, b->err_g);
	free_both(b);
}

/* ---- the file -------------------------------------------------------- */

static int dir_setup(void **state)
{
	return dir_make(state, "/tmp/test_collector_conf.XXXXXX");
}

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

/* Both load path as the daemons do (root-owned required): same verdict and message; want_rc from both. */
static void load_same(const char *path, int want_rc, const char *want)
{
	struct both *b = new_both();

	b->rc_c = conf_load(&b->c, path, b->err_c, sizeof(b->err_c));
	b->rc_g = config_load(b->g, path, true, b->err_g, sizeof(b->err_g));
	if (b->rc_c != want_rc || b->rc_g != want_rc || (want_rc && strcmp(b->err_c, b->err_g)) ||
	    (want && !strstr(b->err_c, want)))
		fail_msg("%s:\n collector %d \"%s\"\n general   %d \"%s\"\n want %d \"%s\"", path, b->rc_c, b->err_c,
			 b->rc_g, b->err_g, want_rc, want ? want : "");
	assert_same_values(&b->c, b->g);
	free_both(b);
}

static void load_checks_the_file_as_the_general_parser_does(void **state)
{
	const struct dir *d = *state;
	char path[128];
	int fd;

	if (geteuid() != 0)
		TEST_SKIP("needs root: the daemons' files must be root's, and so must the test's");
	make_file(d, "tracer.conf", "ring_order = 21\nupload_url = https://i.example/v1\n", 0644, path, sizeof(path));
	load_same(path, 0, NULL);
	make_file(d, "bad.conf", "ring_order = 21\n\nring_order = 99\n", 0644, path, sizeof(path));
	load_same(path, -EINVAL, "bad.conf:3:1: key 'ring_order': set twice");
	snprintf(path, sizeof(path), "%s/none.conf", d->path);
	load_same(path, -ENOENT, "no such file");
	load_same(d->path, -EISDIR, "is a directory");
	snprintf(path, sizeof(path), "%s/fifo", d->path);
	assert_int_equal(mkfifo(path, 0644), 0);
	load_same(path, -EINVAL, "not a regular file");
	make_file(d, "big.conf", "", 0644, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, READ_MAX_CONFIG + 1), 0);
	load_same(path, -EFBIG, "larger than 1024 KiB");
	assert_int_equal(ftruncate(fd, READ_MAX_CONFIG), 0); /* read, then refused for its NUL bytes */
	close(fd);
	load_same(path, -EINVAL, "big.conf:1:1: control character 0x00");
	make_file(d, "ww.conf", "ring_order = 21\n", 0666, path, sizeof(path));
	load_same(path, -EPERM, "is writable by anyone (mode 0666)");
	make_file(d, "gw.conf", "ring_order = 21\n", 0664, path, sizeof(path));
	load_same(path, -EPERM, "is writable by its group (mode 0664)");
}

static void load_refuses_a_file_or_directory_others_own_or_can_write(void **state)
{
	const struct dir *d = *state;
	struct passwd *nobody = getpwnam("nobody");
	char sub[96], path[160], cwd[PATH_MAX];

	if (geteuid() != 0 || !nobody)
		TEST_SKIP("needs root (to chown the file) and a user nobody");
	make_file(d, "nobody.conf", "ring_order = 21\n", 0644, path, sizeof(path));
	assert_int_equal(chown(path, nobody->pw_uid, nobody->pw_gid), 0);
	load_same(path, -EPERM, "is owned by uid 65534, not root");
	snprintf(sub, sizeof(sub), "%s/open", d->path);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chmod(sub, 01777), 0); /* as /tmp */
	snprintf(path, sizeof(path), "%s/t.conf", sub);
	make_file(d, "open/t.conf", "ring_order = 21\n", 0644, path, sizeof(path));
	load_same(path, -EPERM, "is writable by anyone (mode 1777)");
	assert_int_equal(chmod(sub, 0775), 0);
	load_same(path, -EPERM, "is writable by its group (mode 0775)");
	assert_int_equal(chmod(sub, 0755), 0);
	assert_int_equal(chown(sub, nobody->pw_uid, nobody->pw_gid), 0);
	load_same(path, -EPERM, "is owned by uid 65534, not root");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(sub), 0); /* a relative name: its directory is "." */
	load_same("t.conf", -EPERM, "t.conf: . is owned by uid 65534");
	assert_int_equal(chdir(cwd), 0);
}

/* What the daemon logs for --config FILE and --set KEY=VALUE: the general parser's lines, word for word. */
static void from_options_logs_what_the_general_parser_logs(void **state)
{
	static const char *const sets[][2] = { { "ring_order=20", "kernel_buffer=3MiB" }, { "ring_order", "x=1" } };
	const struct dir *d = *state;
	struct both *b = new_both();
	char path[128], log_c[1024], log_g[1024], tmpl[96];
	int fd, saved = dup(2);

	if (geteuid() != 0)
		TEST_SKIP("needs root: the file must be root's");
	make_file(d, "tracer.conf", "sample_interval = 5s\nspool_quota = 4GiB\n", 0644, path, sizeof(path));
	snprintf(tmpl, sizeof(tmpl), "%s/log.XXXXXX", d->path);
	fd = mkstemp(tmpl);
	assert_true(fd >= 0 && saved >= 0);
	for (size_t i = 0; i < 2; i++) {
		ssize_t n;

		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		dup2(fd, 2);
		b->rc_c = conf_from_options(&b->c, path, sets[i], 2);
		b->rc_g = config_from_options(b->g, path, true, sets[i], 2);
		dup2(saved, 2);
		n = pread(fd, log_c, sizeof(log_c) - 1, 0);
		assert_true(n > 0);
		log_c[n] = 0;
		assert_int_equal(b->rc_c, -1);
		assert_int_equal(b->rc_g, -1);
		/* The log holds the collector's line, then the general parser's: the same twice. */
		assert_non_null(strchr(log_c, '\n'));
		strcpy(log_g, strchr(log_c, '\n') + 1);
		strchr(log_c, '\n')[1] = 0;
		assert_string_equal(log_c, log_g);
		assert_true(!strncmp(log_c, "<3>--set ", 9));
	}
	assert_int_equal(conf_from_options(&b->c, path, NULL, 0), 0);
	assert_int_equal(b->c.sample_interval_ns, 5000000000ULL);
	assert_int_equal(conf_from_options(&b->c, NULL, sets[0], 1), 0); /* --set without --config */
	assert_int_equal(b->c.ring_order, 20);
	assert_int_equal(b->c.sample_interval_ns, 1000000000ULL);
	close(fd);
	close(saved);
	free_both(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_are_the_general_parsers),
		cmocka_unit_test(paths_take_what_the_general_parser_takes),
		cmocka_unit_test(users_take_what_the_general_parser_takes),
		cmocka_unit_test(ring_order_takes_what_the_general_parser_takes),
		cmocka_unit_test(kernel_buffer_takes_what_the_general_parser_takes),
		cmocka_unit_test(sample_interval_takes_what_the_general_parser_takes),
		cmocka_unit_test(the_file_syntax_is_the_general_parsers),
		cmocka_unit_test(bad_lines_are_reported_as_the_general_parser_reports_them),
		cmocka_unit_test(a_bad_line_leaves_the_config_untouched),
		cmocka_unit_test(other_components_keys_are_skipped_whatever_their_values),
		cmocka_unit_test(set_arg_is_the_general_parsers_for_the_collectors_keys),
		cmocka_unit_test(error_buffers_may_be_small_or_absent),
		cmocka_unit_test_setup_teardown(load_checks_the_file_as_the_general_parser_does, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_refuses_a_file_or_directory_others_own_or_can_write, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(from_options_logs_what_the_general_parser_logs, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
