/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tool rules: the file format (every rule, quoting, comments), naming with
 * rules (tool, interpreter, subcommand, rename; precedence), errors that
 * name line and column and say what is wrong, and reloads that keep the
 * old rules when the new text is bad.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "toolrules.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static size_t count(const char *const *argv)
{
	size_t n = 0;

	while (argv[n])
		n++;
	return n;
}

static void load_ok(struct toolrules *tr, const char *text)
{
	char err[256];
	int rc = toolrules_load(tr, text, strlen(text), err, sizeof(err));

	if (rc)
		fail_msg("load failed (%d): %s", rc, err);
}

static void expect_name(const struct toolrules *tr, const char *exe, const char *const *argv, const char *want)
{
	char out[TOOL_NAME_MAX];
	size_t n = toolrules_name(tr, exe, argv, count(argv), out, sizeof(out));

	if (strcmp(out, want) || n != strlen(out))
		fail_msg("%s: got \"%s\" (len %zu), want \"%s\"", exe ? exe : "(null)", out, n, want);
}

/* The error a text gives: rc, and the message must be exactly want. */
static void expect_error(const char *text, int want_rc, const char *want)
{
	struct toolrules tr;
	char err[256];
	int rc;

	toolrules_init(&tr);
	rc = toolrules_load_as(&tr, "rules.conf", text, strlen(text), err, sizeof(err));
	if (rc != want_rc || strcmp(err, want))
		fail_msg("text \"%s\": got %d \"%s\", want %d \"%s\"", text, rc, err, want_rc, want);
	assert_int_equal(tr.rules, 0);
	toolrules_free(&tr);
}

/* ---- naming ---------------------------------------------------------- */

static void no_rules_name_as_the_built_ins_do(void **state)
{
	struct toolrules tr;

	(void)state;
	toolrules_init(&tr);
	expect_name(&tr, "/usr/bin/samtools", ARGV("samtools", "sort", "x"), "samtools sort");
	expect_name(NULL, "/usr/bin/samtools", ARGV("samtools", "sort", "x"), "samtools sort");
	load_ok(&tr, "# only a comment\n\n   \t\n");
	assert_int_equal(tr.rules, 0);
	expect_name(&tr, "/usr/bin/python3", ARGV("python3", "qc.py"), "qc.py");
	toolrules_free(&tr);
}

static void tool_rule_names_an_image_that_meets_every_condition(void **state)
{
	struct toolrules tr;

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "tool \"star align\" when name=STAR arg=--runMode arg=alignReads\n"
		     "tool star-index when name=STAR arg=genomeGenerate\n"
		     "tool vendor-aligner when exe=/opt/vendor/*/bin/*\n"
		     "tool login-shell when arg0=-*sh\n"
		     "tool \"samtools (any)\" when tool=samtools*\n");
	assert_int_equal(tr.rules, 5);
	assert_int_equal(tr.n_tools, 5);
	expect_name(&tr, "/usr/bin/STAR", ARGV("STAR", "--runMode", "alignReads", "--genomeDir", "g"), "star align");
	expect_name(&tr, "/usr/bin/STAR", ARGV("STAR", "--runMode", "genomeGenerate"), "star-index");
	expect_name(&tr, "/usr/bin/STAR", ARGV("STAR", "--version"), "STAR");
	expect_name(&tr, "/opt/vendor/2.1/bin/align", ARGV("align", "-x"), "vendor-aligner");
	expect_name(&tr, "/bin/bash", ARGV("-bash"), "login-shell");
	expect_name(&tr, "/usr/bin/samtools", ARGV("samtools", "view"), "samtools (any)");
	/* name= is argv[0]'s basename when the path is unknown */
	expect_name(&tr, NULL, ARGV("/usr/bin/STAR", "--runMode", "alignReads"), "star align");
	toolrules_free(&tr);
}

static void first_matching_tool_rule_wins(void **state)
{
	struct toolrules tr;

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "tool first when name=x*\ntool second when name=xy\n");
	expect_name(&tr, "/bin/xy", ARGV("xy"), "first");
	toolrules_free(&tr);
}

static void interpreter_rule_names_the_script(void **state)
{
	struct toolrules tr;

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "interpreter tclsh* value -encoding code -c\n"
		     "interpreter snakemake-wrapper value --profile\n");
	assert_int_equal(tr.extra.n_interps, 2);
	expect_name(&tr, "/usr/bin/tclsh8.6", ARGV("tclsh8.6", "-encoding", "utf-8", "make.tcl"), "make.tcl");
	expect_name(&tr, "/usr/bin/tclsh8.6", ARGV("tclsh8.6", "-c", "puts 1"), "tclsh8.6");
	expect_name(&tr, "/opt/snakemake-wrapper", ARGV("snakemake-wrapper", "--profile", "p", "wf.smk"), "wf.smk");
	toolrules_free(&tr);
}

static void subcommand_rule_names_a_tool_with_its_subcommand(void **state)
{
	struct toolrules tr;

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "subcommand mytool value -c --config\nsubcommand kraken*\n");
	expect_name(&tr, "/opt/mytool", ARGV("mytool", "-c", "x.yml", "run", "a"), "mytool run");
	expect_name(&tr, "/usr/bin/python3", ARGV("python3", "/opt/mytool", "--config", "y", "check"), "mytool check");
	expect_name(&tr, "/usr/bin/kraken2", ARGV("kraken2", "classify"), "kraken2 classify");
	expect_name(&tr, "/opt/mytool", ARGV("mytool", "/data/x"), "mytool"); /* not a subcommand: a path */
	toolrules_free(&tr);
}

static void rename_replaces_the_first_word_and_keeps_the_rest(void **state)
{
	struct toolrules tr;

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "rename bwa-mem2 bwa\nrename align_v*.py align\nrename python3.* python\n");
	expect_name(&tr, "/usr/bin/bwa-mem2", ARGV("bwa-mem2", "mem", "r", "x"), "bwa mem");
	expect_name(&tr, "/usr/bin/python3", ARGV("python3", "align_v2.py", "x"), "align");
	expect_name(&tr, "/usr/bin/python3.11", ARGV("python3.11", "-c", "1"), "python");
	expect_name(&tr, "/usr/bin/bwa", ARGV("bwa", "mem"), "bwa mem");
	toolrules_free(&tr);
}

static void tool_rules_see_the_name_after_interpreter_and_subcommand_rules(void **state)
{
	struct toolrules tr;

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "subcommand mytool\ntool mytool-batch when \"tool=mytool batch*\"\nrename mytool mt\n");
	expect_name(&tr, "/opt/mytool", ARGV("mytool", "batch", "x"), "mytool-batch"); /* a tool rule: not renamed */
	expect_name(&tr, "/opt/mytool", ARGV("mytool", "run"), "mt run");
	toolrules_free(&tr);
}

static void quoting_allows_spaces_and_escapes(void **state)
{
	struct toolrules tr;

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "tool \"say \\\"hi\\\" \\\\o/\" when \"arg=hello world\" # trailing comment\r\n");
	expect_name(&tr, "/bin/echo", ARGV("echo", "hello world"), "say \"hi\" \\o/");
	expect_name(&tr, "/bin/echo", ARGV("echo", "hello", "world"), "echo");
	toolrules_free(&tr);
}

static void output_is_truncated_to_the_buffer(void **state)
{
	struct toolrules tr;
	char small[6];

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "tool \"a very long name\" when name=x\nrename y yyyyyyyyyy\n");
	assert_int_equal(toolrules_name(&tr, "/bin/x", ARGV("x"), 1, small, sizeof(small)), 5);
	assert_string_equal(small, "a ver");
	assert_int_equal(toolrules_name(&tr, "/bin/y", ARGV("y", "sub"), 2, small, sizeof(small)), 5);
	assert_string_equal(small, "yyyyy");
	assert_int_equal(toolrules_name(&tr, "/bin/y", ARGV("y"), 1, small, 0), 0);
	toolrules_free(&tr);
}

/* ---- errors ----------------------------------------------------------- */

static void errors_name_the_line_and_column_and_what_is_wrong(void **state)
{
	(void)state;
	expect_error("frobnicate x", -EINVAL,
		     "rules.conf:1:1: unknown rule 'frobnicate' (expected tool, run, interpreter, subcommand or rename)");
	expect_error("# ok\n  tool x when nme=y\n", -EINVAL,
		     "rules.conf:2:15: unknown field 'nme' (expected exe, name, arg0, arg or tool)");
	expect_error("tool x when name=", -EINVAL, "rules.conf:1:18: empty pattern");
	expect_error("tool x when", -EINVAL, "rules.conf:1:12: tool: at least one condition FIELD=GLOB after 'when'");
	expect_error("tool x if name=y", -EINVAL, "rules.conf:1:8: tool: expected 'when' after the name, not if");
	expect_error("tool", -EINVAL, "rules.conf:1:5: tool: the NAME to give is missing");
	expect_error("tool x when name", -EINVAL,
		     "rules.conf:1:13: expected FIELD=GLOB (exe, name, arg0, arg or tool), not name");
	expect_error("tool \"\" when name=x", -EINVAL, "rules.conf:1:6: empty tool name");
	expect_error("tool \"x when name=y", -EINVAL, "rules.conf:1:6: quote not closed on this line");
	expect_error("tool \"x\\n\" when name=y", -EINVAL,
		     "rules.conf:1:8: only \\\" and \\\\ may follow a backslash in quotes");
	expect_error("tool x\"y when name=y", -EINVAL,
		     "rules.conf:1:7: a quote inside a word (quote the whole word: \"a b\")");
	expect_error("tool \"x\"y when name=y", -EINVAL, "rules.conf:1:9: a space must follow a closing quote");
	expect_error("tool x when name=\x01", -EINVAL, "rules.conf:1:18: control character 0x01");
	expect_error("interpreter a/b", -EINVAL, "rules.conf:1:13: interpreter name is a basename, without '/': a/b");
	expect_error("interpreter tclsh -x", -EINVAL, "rules.conf:1:19: expected 'value' or 'code' before -x");
	expect_error("subcommand t code -x", -EINVAL, "rules.conf:1:14: expected 'value' before code");
	expect_error("subcommand t value x", -EINVAL,
		     "rules.conf:1:20: not an option (-x, -word or --long, without '='): x");
	expect_error("subcommand t value --a=b", -EINVAL,
		     "rules.conf:1:20: not an option (-x, -word or --long, without '='): --a=b");
	expect_error("subcommand", -EINVAL, "rules.conf:1:11: subcommand: the NAME is missing");
	expect_error("rename a", -EINVAL, "rules.conf:1:9: rename: expected FROM and TO");
	expect_error("rename a b c", -EINVAL, "rules.conf:1:12: rename: unexpected c after FROM TO");
	expect_error("\"tool\" x when name=y", -EINVAL,
		     "rules.conf:1:1: a rule starts with tool, run, interpreter, subcommand or rename");
}

static void nul_byte_is_reported_where_it_is(void **state)
{
	static const char text[] = "rename a b\nrename c\0d e\n";
	struct toolrules tr;
	char err[128];

	(void)state;
	toolrules_init(&tr);
	assert_int_equal(toolrules_load_as(&tr, "r", text, sizeof(text) - 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "r:2:9: NUL byte in the text");
	toolrules_free(&tr);
}

static void limits_are_enforced_with_a_message(void **state)
{
	struct toolrules tr;
	char err[256], *text, *p;
	size_t cap = 11 * (TOOLRULES_MAX_RULES + 1) + 1;

	(void)state;
	toolrules_init(&tr);
	/* too many rules */
	text = malloc(cap);
	assert_non_null(text);
	p = text;
	for (unsigned i = 0; i <= TOOLRULES_MAX_RULES; i++)
		p += sprintf(p, "rename a b\n");
	assert_int_equal(toolrules_load_as(&tr, "r", text, strlen(text), err, sizeof(err)), -E2BIG);
	snprintf(text, cap, "r:%u:1: more than %u rules", TOOLRULES_MAX_RULES + 1, TOOLRULES_MAX_RULES);
	assert_string_equal(err, text);
	free(text);
	/* too much text */
	assert_int_equal(toolrules_load_as(&tr, "r", "", TOOLRULES_MAX_TEXT + 1, err, sizeof(err)), -E2BIG);
	assert_string_equal(err, "r: rules text of 1048577 bytes (at most 1048576)");
	/* too many conditions, options, words; names and patterns too long */
	expect_error("tool x when name=1 name=2 name=3 name=4 name=5 name=6 name=7 name=8 name=9", -EINVAL,
		     "rules.conf:1:69: tool: more than 8 conditions");
	{
		char line[1200] = "subcommand t value", big[300], msg[200];

		for (int i = 0; i < 33; i++)
			strcat(line, " -a");
		expect_error(line, -EINVAL, "rules.conf:1:116: more than 32 options in one list");
		memset(big, 'n', sizeof(big) - 1);
		big[sizeof(big) - 1] = 0;
		snprintf(line, sizeof(line), "rename x %.*s", TOOL_NAME_MAX, big);
		snprintf(msg, sizeof(msg), "rules.conf:1:10: new name longer than %d bytes: %.40s...", TOOL_NAME_MAX - 1,
			 big);
		expect_error(line, -EINVAL, msg);
		snprintf(line, sizeof(line), "rename %s y", big);
		expect_error(line, -EINVAL, "rules.conf:1:8: pattern longer than 255 bytes");
		line[0] = 0;
		for (int i = 0; i < 81; i++)
			strcat(line, "a ");
		expect_error(line, -EINVAL, "rules.conf:1:161: too many words on one line (at most 80)");
	}
	toolrules_free(&tr);
}

static void bad_reload_keeps_the_rules_in_force(void **state)
{
	struct toolrules tr;
	char err[256];

	(void)state;
	toolrules_init(&tr);
	load_ok(&tr, "rename bwa-mem2 bwa\n");
	assert_int_equal(tr.loads, 1);
	assert_int_equal(toolrules_load(&tr, "rename a\n", 9, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "<rules>:1:9: rename: expected FROM and TO");
	assert_int_equal(tr.loads, 1);
	expect_name(&tr, "/usr/bin/bwa-mem2", ARGV("bwa-mem2", "index"), "bwa index");
	/* a good reload replaces them all */
	load_ok(&tr, "rename samtools st\n");
	assert_int_equal(tr.loads, 2);
	expect_name(&tr, "/usr/bin/bwa-mem2", ARGV("bwa-mem2", "index"), "bwa-mem2 index");
	expect_name(&tr, "/usr/bin/samtools", ARGV("samtools", "index"), "st index");
	/* and an empty text clears them */
	load_ok(&tr, "");
	expect_name(&tr, "/usr/bin/samtools", ARGV("samtools", "index"), "samtools index");
	/* errors without a buffer are still refused */
	assert_int_equal(toolrules_load(&tr, "bogus", 5, NULL, 0), -EINVAL);
	toolrules_free(&tr);
}

static void small_error_buffer_is_truncated_not_overrun(void **state)
{
	struct toolrules tr;
	char err[12];

	(void)state;
	toolrules_init(&tr);
	memset(err, 'X', sizeof(err));
	assert_int_equal(toolrules_load_as(&tr, "rules.conf", "bogus", 5, err, 8), -EINVAL);
	assert_string_equal(err, "rules.c");
	assert_int_equal(err[8], 'X');
	toolrules_free(&tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_rules_name_as_the_built_ins_do),
		cmocka_unit_test(tool_rule_names_an_image_that_meets_every_condition),
		cmocka_unit_test(first_matching_tool_rule_wins),
		cmocka_unit_test(interpreter_rule_names_the_script),
		cmocka_unit_test(subcommand_rule_names_a_tool_with_its_subcommand),
		cmocka_unit_test(rename_replaces_the_first_word_and_keeps_the_rest),
		cmocka_unit_test(tool_rules_see_the_name_after_interpreter_and_subcommand_rules),
		cmocka_unit_test(quoting_allows_spaces_and_escapes),
		cmocka_unit_test(output_is_truncated_to_the_buffer),
		cmocka_unit_test(errors_name_the_line_and_column_and_what_is_wrong),
		cmocka_unit_test(nul_byte_is_reported_where_it_is),
		cmocka_unit_test(limits_are_enforced_with_a_message),
		cmocka_unit_test(bad_reload_keeps_the_rules_in_force),
		cmocka_unit_test(small_error_buffer_is_truncated_not_overrun),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
