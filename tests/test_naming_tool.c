/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tool naming: a table of (exe, argv) -> expected tool, one group of cases
 * per rule, so a failure names the rule and the exact case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <stdbool.h>

#include <cmocka.h>

#include "tool.h"

#define MAX_ARGS 16

struct tool_case {
	const char *exe;
	const char *argv[MAX_ARGS]; /* NULL-terminated */
	const char *want;
};

static void check_cases(const struct tool_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char out[TOOL_NAME_MAX];
		size_t argc = 0, len;

		while (cases[i].argv[argc])
			argc++;
		len = tool_name(cases[i].exe, cases[i].argv, argc, out, sizeof(out));
		if (strcmp(out, cases[i].want) || len != strlen(out))
			fail_msg("case %zu: exe %s argv[0] %s: got \"%s\" (len %zu), want \"%s\"", i,
				 cases[i].exe ? cases[i].exe : "(null)", argc ? cases[i].argv[0] : "(none)", out, len,
				 cases[i].want);
	}
}

#define CHECK(cases) check_cases(cases, sizeof(cases) / sizeof(cases[0]))

static void plain_executable_is_named_by_its_basename(void **state)
{
	static const struct tool_case cases[] = {
		{ "/usr/bin/grep", { "grep", "-c", "x", "f" }, "grep" },
		{ "/bin/ls", { "ls" }, "ls" },
		{ "./run_me", { "./run_me", "--fast" }, "run_me" },
		{ "fastp", { "fastp", "-i", "a.fq" }, "fastp" },
		{ "/usr/bin/grep", { "some-other-argv0" }, "grep" }, /* the file that ran, not what argv[0] claims */
		{ "/usr/bin/minimap2", { "minimap2", "-ax", "sr", "ref.fa" }, "minimap2" },
		{ "/usr/bin/snakemake", { "snakemake", "all", "--cores", "4" }, "snakemake" }, /* targets, not subcommands */
	};

	(void)state;
	CHECK(cases);
}

static void missing_exe_or_argv_falls_back_to_what_is_known(void **state)
{
	static const struct tool_case cases[] = {
		{ NULL, { "/usr/bin/tar", "xf", "a.tar" }, "tar" },
		{ "", { "wc", "-l" }, "wc" },
		{ "/usr/bin/samtools", { NULL }, "samtools" },
		{ NULL, { NULL }, "" },
		{ "/usr/bin/", { "x" }, "x" },
	};

	(void)state;
	CHECK(cases);
}

static void subcommand_tools_are_named_with_their_subcommand(void **state)
{
	static const struct tool_case cases[] = {
		{ "/usr/bin/samtools", { "samtools", "sort", "-o", "x.bam", "y.bam" }, "samtools sort" },
		{ "/usr/bin/samtools", { "samtools", "view", "-b", "in.sam" }, "samtools view" },
		{ "/usr/bin/bcftools", { "bcftools", "mpileup", "-f", "ref.fa" }, "bcftools mpileup" },
		{ "/usr/bin/bwa", { "bwa", "mem", "-t", "8", "ref.fa", "r1.fq" }, "bwa mem" },
		{ "/usr/bin/bwa-mem2", { "bwa-mem2", "index", "ref.fa" }, "bwa-mem2 index" },
		{ "/usr/bin/bedtools", { "bedtools", "intersect", "-a", "a.bed" }, "bedtools intersect" },
		{ "/usr/bin/git", { "git", "status" }, "git status" },
		{ "/usr/bin/docker", { "docker", "run", "--rm", "alpine" }, "docker run" },
		{ "/usr/bin/kubectl", { "kubectl", "apply", "-f", "x.yaml" }, "kubectl apply" },
		{ "/opt/conda/bin/conda", { "conda", "install", "-y", "samtools" }, "conda install" },
		{ "/opt/conda/bin/mamba", { "mamba", "create", "-n", "env" }, "mamba create" },
		{ "/usr/bin/cargo", { "cargo", "build", "--release" }, "cargo build" },
		{ "/usr/local/go/bin/go", { "go", "test", "./..." }, "go test" },
		{ "/usr/bin/nextflow", { "nextflow", "run", "main.nf" }, "nextflow run" },
		{ "/usr/bin/salmon", { "salmon", "quant", "-i", "idx" }, "salmon quant" },
		/* added with step detection: more tools people run with a subcommand */
		{ "/usr/bin/seqtk", { "seqtk", "seq", "-a", "x.fq" }, "seqtk seq" },
		{ "/usr/bin/bamtools", { "bamtools", "convert", "-format", "bed" }, "bamtools convert" },
		{ "/opt/ont/bin/dorado", { "dorado", "basecaller", "hac", "pod5s/" }, "dorado basecaller" },
		{ "/usr/bin/modkit", { "modkit", "pileup", "in.bam", "out.bed" }, "modkit pileup" },
		{ "/usr/bin/isoseq3", { "isoseq3", "refine", "a.bam" }, "isoseq refine" },
		{ "/usr/bin/mash", { "mash", "sketch", "-o", "ref", "ref.fa" }, "mash sketch" },
		{ "/usr/bin/nextclade", { "nextclade", "run", "-D", "data" }, "nextclade run" },
		{ "/usr/bin/qiime", { "qiime", "tools", "import" }, "qiime tools" },
		{ "/usr/bin/gh", { "gh", "-R", "o/r", "pr", "list" }, "gh pr" },
		{ "/usr/bin/rclone", { "rclone", "--config", "/x", "copy", "a", "b" }, "rclone copy" },
		{ "/usr/local/bin/miniwdl", { "miniwdl", "run", "wf.wdl" }, "miniwdl run" },
		{ "/usr/bin/python3", { "python3", "/usr/bin/whatshap", "phase", "-o", "x" }, "whatshap phase" },
	};

	(void)state;
	CHECK(cases);
}

static void subcommand_is_found_past_global_options(void **state)
{
	static const struct tool_case cases[] = {
		{ "/usr/bin/git", { "git", "-C", "/repo", "log", "-1" }, "git log" },
		{ "/usr/bin/git", { "git", "-c", "user.name=x", "commit", "-m", "m" }, "git commit" },
		{ "/usr/bin/git", { "git", "--git-dir=/r/.git", "fetch" }, "git fetch" },
		{ "/usr/bin/git", { "git", "--no-pager", "diff" }, "git diff" },
		{ "/usr/bin/docker", { "docker", "-H", "unix:///x.sock", "ps" }, "docker ps" },
		{ "/usr/bin/kubectl", { "kubectl", "-n", "prod", "get", "pods" }, "kubectl get" },
		{ "/usr/bin/kubectl", { "kubectl", "--namespace=prod", "logs", "p" }, "kubectl logs" },
		{ "/usr/bin/cargo", { "cargo", "+nightly", "test" }, "cargo test" },
		{ "/usr/bin/nextflow", { "nextflow", "-log", "x.log", "run", "main.nf" }, "nextflow run" },
		{ "/usr/bin/gatk", { "gatk", "--java-options", "-Xmx4g", "HaplotypeCaller", "-R", "r.fa" },
		  "gatk HaplotypeCaller" },
	};

	(void)state;
	CHECK(cases);
}

static void subcommand_tool_without_a_subcommand_keeps_its_name(void **state)
{
	static const struct tool_case cases[] = {
		{ "/usr/bin/samtools", { "samtools" }, "samtools" },
		{ "/usr/bin/samtools", { "samtools", "--version" }, "samtools" },
		{ "/usr/bin/git", { "git", "-C", "/repo" }, "git" },
		/* Something that is not a subcommand: a path, an assignment, a long blob. */
		{ "/usr/bin/bwa", { "bwa", "/data/ref.fa" }, "bwa" },
		{ "/usr/bin/picard", { "picard", "I=in.bam" }, "picard" },
		{ "/usr/bin/bwa", { "bwa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }, "bwa" },
		{ "/usr/bin/git", { "git", "st\x1b[31mtus" }, "git" },
	};

	(void)state;
	CHECK(cases);
}

static void interpreter_is_named_by_its_script(void **state)
{
	static const struct tool_case cases[] = {
		{ "/usr/bin/python3", { "python3", "/opt/align.py", "--in", "x" }, "align.py" },
		{ "/usr/bin/python3.11", { "python3.11", "-u", "-W", "ignore", "run.py" }, "run.py" },
		{ "/usr/bin/python", { "python", "-Wignore", "-X", "dev", "./tools/qc.py" }, "qc.py" },
		{ "/usr/bin/python2.7", { "python2.7", "-OO", "legacy.py" }, "legacy.py" },
		{ "/usr/bin/perl", { "perl", "-w", "-I", "lib", "script.pl", "arg" }, "script.pl" },
		{ "/usr/bin/perl", { "perl", "-Ilib", "-Mstrict", "-i.bak", "fix.pl" }, "fix.pl" },
		{ "/usr/bin/Rscript", { "Rscript", "--vanilla", "analysis.R", "x" }, "analysis.R" },
		{ "/usr/lib/R/bin/exec/R", { "/usr/lib/R/bin/exec/R", "--no-echo", "--file=plot.R" }, "plot.R" },
		{ "/usr/lib/R/bin/exec/R", { "R", "-f", "model.R", "--args", "1" }, "model.R" },
		{ "/usr/bin/ruby", { "ruby", "-r", "json", "-w", "tool.rb" }, "tool.rb" },
		{ "/usr/bin/node", { "node", "--require", "ts-node/register", "server.js" }, "server.js" },
		{ "/usr/bin/node", { "node", "--max-old-space-size=4096", "build.js" }, "build.js" },
		{ "/bin/bash", { "bash", "-e", "-o", "pipefail", "run.sh", "a" }, "run.sh" },
		{ "/bin/bash", { "bash", "-xe", "+o", "nounset", "./step.sh" }, "step.sh" },
		{ "/bin/bash", { "bash", "--rcfile", "/x", "job.sh" }, "job.sh" },
		{ "/bin/sh", { "sh", "/usr/local/bin/wrapper" }, "wrapper" },
		{ "/bin/dash", { "dash", "script" }, "script" },
		{ "/usr/bin/zsh", { "zsh", "-f", "x.zsh" }, "x.zsh" },
		{ "/usr/bin/python3", { "python3", "--", "-weird-name.py" }, "-weird-name.py" },
	};

	(void)state;
	CHECK(cases);
}

static void interpreter_running_inline_code_or_stdin_keeps_its_name(void **state)
{
	static const struct tool_case cases[] = {
		{ "/bin/bash", { "bash", "-c", "echo hi; samtools sort x" }, "bash" },
		{ "/bin/bash", { "bash", "-ec", "make" }, "bash" },
		{ "/bin/sh", { "sh", "-c", "exit 3" }, "sh" },
		{ "/bin/sh", { "sh" }, "sh" },
		{ "/bin/bash", { "bash", "-s", "arg" }, "bash" },
		{ "/bin/bash", { "-bash" }, "bash" }, /* a login shell */
		{ "/usr/bin/python3", { "python3", "-c", "print(1)", "x.py" }, "python3" },
		{ "/usr/bin/python3", { "python3", "-uc", "print(1)" }, "python3" },
		{ "/usr/bin/python3", { "python3" }, "python3" },
		{ "/usr/bin/python3", { "python3", "-" }, "python3" },
		{ "/usr/bin/perl", { "perl", "-ne", "print", "file" }, "perl" },
		{ "/usr/bin/Rscript", { "Rscript", "-e", "1+1" }, "Rscript" },
		{ "/usr/lib/R/bin/exec/R", { "R", "--vanilla" }, "R" },
		{ "/usr/bin/node", { "node", "-e", "1" }, "node" },
		{ "/usr/bin/node", { "node", "--eval=1" }, "node" },
		{ "/usr/bin/ruby", { "ruby", "-e", "puts 1" }, "ruby" },
		{ "/usr/bin/java", { "java", "-version" }, "java" },
	};

	(void)state;
	CHECK(cases);
}

static void python_module_is_named_by_the_module(void **state)
{
	static const struct tool_case cases[] = {
		{ "/usr/bin/python3", { "python3", "-m", "pytest", "-x" }, "pytest" },
		{ "/usr/bin/python3", { "python3", "-mhttp.server", "8000" }, "http.server" },
		{ "/usr/bin/python3", { "python3", "-m", "pip", "install", "numpy" }, "pip install" },
		{ "/usr/bin/python3", { "python3", "-m" }, "python3" },
	};

	(void)state;
	CHECK(cases);
}

static void script_of_a_subcommand_tool_gets_its_subcommand(void **state)
{
	static const struct tool_case cases[] = {
		/* pip, gatk and npm are scripts: the interpreter runs them */
		{ "/usr/bin/python3", { "/usr/bin/python3", "/usr/bin/pip", "install", "-r", "req.txt" }, "pip install" },
		{ "/usr/bin/python3", { "python3", "/usr/local/bin/pip3.11", "list" }, "pip list" },
		{ "/usr/bin/python3", { "python3", "/opt/gatk/gatk", "--java-options", "-Xmx2g", "MarkDuplicates" },
		  "gatk MarkDuplicates" },
		{ "/usr/bin/node", { "node", "/usr/bin/npm", "ci" }, "npm ci" },
	};

	(void)state;
	CHECK(cases);
}

static void shebang_script_is_named_by_the_script(void **state)
{
	/* binfmt_script: exe is the script, argv[0] the interpreter, argv[1] the script again. */
	static const struct tool_case cases[] = {
		{ "./count.py", { "/usr/bin/python3", "./count.py", "in.txt" }, "count.py" },
		{ "/usr/local/bin/R", { "/bin/bash", "/usr/local/bin/R", "--vanilla" }, "R" },
		{ "/opt/bin/step.sh", { "/bin/bash", "-e", "/opt/bin/step.sh" }, "step.sh" },
		{ "/usr/bin/pip", { "/usr/bin/python3", "/usr/bin/pip", "download", "x" }, "pip download" },
	};

	(void)state;
	CHECK(cases);
}

static void java_is_named_by_its_jar_or_main_class(void **state)
{
	static const struct tool_case cases[] = {
		{ "/usr/bin/java", { "java", "-Xmx8g", "-jar", "/opt/picard.jar", "SortSam", "I=a.bam" }, "picard SortSam" },
		{ "/usr/bin/java", { "java", "-jar", "/opt/picard-2.27.5.jar", "MarkDuplicates" }, "picard MarkDuplicates" },
		{ "/usr/bin/java", { "java", "-Dsamjdk.compression_level=2", "-jar",
				     "/gatk/gatk-package-4.5.0.0-local.jar", "HaplotypeCaller", "-R", "r.fa" },
		  "gatk HaplotypeCaller" },
		{ "/usr/bin/java", { "java", "-jar", "/opt/trimmomatic-0.39.jar", "PE", "a.fq" }, "trimmomatic PE" },
		{ "/usr/bin/java", { "java", "-jar", "/opt/snpEff.jar", "ann", "GRCh38" }, "snpEff ann" },
		{ "/usr/bin/java", { "java", "-jar", "/opt/snpEff.jar", "-c", "snpEff.config", "ann", "x" }, "snpEff ann" },
		{ "/usr/bin/java", { "java", "-jar", "VarScan.v2.4.6.jar", "mpileup2snp", "x" }, "varscan mpileup2snp" },
		{ "/usr/bin/java", { "java", "-jar", "/opt/cromwell-86.jar", "run", "wf.wdl" }, "cromwell run" },
		{ "/usr/bin/java", { "java", "-cp", "t.jar", "org.usadellab.trimmomatic.Trimmomatic", "SE", "a" },
		  "trimmomatic SE" },
		{ "/usr/bin/java", { "java", "-jar", "/opt/unknown-1.0.jar", "PE" }, "unknown-1.0.jar" },
		{ "/usr/bin/java", { "java", "-cp", "/a.jar:/b.jar", "org.example.Main", "x" }, "org.example.Main" },
		{ "/usr/bin/java", { "java", "-cp", "picard.jar", "picard.cmdline.PicardCommandLine", "SortSam" },
		  "picard SortSam" },
		{ "/usr/bin/java", { "java", "--module-path", "mods", "-m", "com.app/com.app.Main" }, "com.app" },
		{ "/usr/bin/java", { "java", "-jar" }, "java" },
	};

	(void)state;
	CHECK(cases);
}

static void output_is_truncated_to_the_buffer(void **state)
{
	const char *argv[] = { "samtools", "sort", NULL };
	char small[8];
	char big[TOOL_NAME_MAX];
	char longname[300];
	const char *argv2[] = { longname, NULL };

	(void)state;
	assert_int_equal(tool_name("/usr/bin/samtools", argv, 2, small, sizeof(small)), 7);
	assert_string_equal(small, "samtool");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(tool_name(NULL, argv2, 1, big, sizeof(big)), TOOL_NAME_MAX - 1);
	assert_int_equal(strlen(big), TOOL_NAME_MAX - 1);
}

static void extra_tables_add_interpreters_and_subcommand_tools(void **state)
{
	static const char *const tcl_value[] = { "-encoding", NULL };
	static const char *const awk_value[] = { "-v", "-F", NULL };
	static const char *const mytool_value[] = { "-c", "--config", NULL };
	static const char *const code[] = { "-e", "--eval", NULL };
	static const struct tool_interp_rule interps[] = {
		{ "tclsh*", tcl_value, NULL },
		{ "gawk", awk_value, code },
	};
	static const struct tool_subcmd_rule subcmds[] = {
		{ "mytool", mytool_value },
		{ "samtools", NULL }, /* overrides the built-in entry: no global options */
	};
	static const struct tool_extra extra = { interps, 2, subcmds, 2 };
	static const struct {
		const char *exe;
		const char *argv[8];
		const char *want;
	} cases[] = {
		{ "/usr/bin/tclsh8.6", { "tclsh8.6", "-encoding", "utf-8", "build.tcl", "x" }, "build.tcl" },
		{ "/usr/bin/tclsh8.6", { "tclsh8.6" }, "tclsh8.6" },
		{ "/usr/bin/gawk", { "gawk", "-v", "x=1", "-F", ",", "prog.awk" }, "prog.awk" },
		{ "/usr/bin/gawk", { "gawk", "-vx=1", "-e", "{print}", "f" }, "gawk" },
		{ "/usr/bin/gawk", { "gawk", "--eval=1" }, "gawk" },
		{ "/opt/bin/mytool", { "mytool", "-c", "cfg", "run", "x" }, "mytool run" },
		{ "/opt/bin/mytool", { "mytool", "--config", "cfg", "build" }, "mytool build" },
		{ "/opt/bin/mytool", { "mytool", "--config=cfg", "build" }, "mytool build" },
		{ "/usr/bin/python3", { "python3", "/opt/bin/mytool", "test" }, "mytool test" },
		{ "/usr/bin/java", { "java", "-jar", "mytool-2.1.jar", "sub" }, "mytool sub" },
		{ "/usr/bin/samtools", { "samtools", "sort", "x" }, "samtools sort" },
		{ "/usr/bin/grep", { "grep", "x" }, "grep" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[TOOL_NAME_MAX];
		size_t argc = 0;

		while (cases[i].argv[argc])
			argc++;
		tool_name_with(&extra, cases[i].exe, cases[i].argv, argc, out, sizeof(out));
		if (strcmp(out, cases[i].want))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, out, cases[i].want);
	}
	/* Without the extra tables they are unknown. */
	{
		const char *argv[] = { "mytool", "run", NULL };
		char out[TOOL_NAME_MAX];

		tool_name_with(NULL, "/opt/bin/mytool", argv, 2, out, sizeof(out));
		assert_string_equal(out, "mytool");
	}
}

static void glob_matches_stars_classes_and_escapes(void **state)
{
	static const struct {
		const char *pattern, *s;
		bool match;
	} cases[] = {
		{ "*", "", true },
		{ "*", "/usr/bin/x", true },
		{ "", "", true },
		{ "", "a", false },
		{ "a", "", false },
		{ "/usr/*/samtools", "/usr/local/bin/samtools", true }, /* '*' crosses '/' */
		{ "python3.?", "python3.9", true },
		{ "python3.?", "python3.11", false },
		{ "python3.*", "python3.11", true },
		{ "*.py", "align.py", true },
		{ "*.py", "align.pyc", false },
		{ "a*b*c", "aXXbYYc", true },
		{ "a*b*c", "aXXbYY", false },
		{ "[abc]x", "bx", true },
		{ "[abc]x", "dx", false },
		{ "[a-c]", "b", true },
		{ "[!a-c]", "b", false },
		{ "[!a-c]", "z", true },
		{ "[^a]", "b", true },
		{ "[]]", "]", true },
		{ "[a-]", "-", true },
		{ "[\\]]", "]", true },
		{ "\\*", "*", true },
		{ "\\*", "x", false },
		{ "[abc", "[abc", true }, /* no closing bracket: literal */
		{ "x\\", "x\\", true },
		{ "**a**", "bab", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (tool_glob(cases[i].pattern, cases[i].s) != cases[i].match)
			fail_msg("case %zu: \"%s\" on \"%s\": want %s", i, cases[i].pattern, cases[i].s,
				 cases[i].match ? "match" : "no match");
}

static void glob_takes_polynomial_time_on_hostile_strings(void **state)
{
	static char s[4097], pattern[256];

	(void)state;
	/* a*a*a*...*b against aaaa...: exponential for a naive backtracking matcher */
	memset(s, 'a', sizeof(s) - 1);
	for (size_t i = 0; i + 2 < sizeof(pattern) - 1; i += 2) {
		pattern[i] = 'a';
		pattern[i + 1] = '*';
	}
	pattern[sizeof(pattern) - 2] = 'b';
	for (int k = 0; k < 50; k++)
		assert_false(tool_glob(pattern, s));
}

static void shells_are_recognised_by_name(void **state)
{
	(void)state;
	assert_true(tool_is_shell("bash"));
	assert_true(tool_is_shell("-bash"));
	assert_true(tool_is_shell("sh"));
	assert_true(tool_is_shell("dash"));
	assert_false(tool_is_shell("bash5"));
	assert_false(tool_is_shell("run.sh"));
	assert_false(tool_is_shell(""));
}

static void basename_is_what_follows_the_last_slash(void **state)
{
	(void)state;
	assert_string_equal(tool_basename("/a/b/c"), "c");
	assert_string_equal(tool_basename("c"), "c");
	assert_string_equal(tool_basename("/a/b/"), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_executable_is_named_by_its_basename),
		cmocka_unit_test(missing_exe_or_argv_falls_back_to_what_is_known),
		cmocka_unit_test(subcommand_tools_are_named_with_their_subcommand),
		cmocka_unit_test(subcommand_is_found_past_global_options),
		cmocka_unit_test(subcommand_tool_without_a_subcommand_keeps_its_name),
		cmocka_unit_test(interpreter_is_named_by_its_script),
		cmocka_unit_test(interpreter_running_inline_code_or_stdin_keeps_its_name),
		cmocka_unit_test(python_module_is_named_by_the_module),
		cmocka_unit_test(script_of_a_subcommand_tool_gets_its_subcommand),
		cmocka_unit_test(shebang_script_is_named_by_the_script),
		cmocka_unit_test(java_is_named_by_its_jar_or_main_class),
		cmocka_unit_test(output_is_truncated_to_the_buffer),
		cmocka_unit_test(basename_is_what_follows_the_last_slash),
		cmocka_unit_test(extra_tables_add_interpreters_and_subcommand_tools),
		cmocka_unit_test(glob_matches_stars_classes_and_escapes),
		cmocka_unit_test(glob_takes_polynomial_time_on_hostile_strings),
		cmocka_unit_test(shells_are_recognised_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
