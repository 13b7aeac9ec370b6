/* SPDX-License-Identifier: Apache-2.0 */
#include "tool.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Tables                                                             */
/* ------------------------------------------------------------------ */

#define NAME_VERSIONED 0x1 /* the name may carry a version: python3, python3.11, perl5.36 */
#define NAME_PLUS_OPTS 0x2 /* '+' starts options too (shells: +x, +o name) */

enum interp_kind {
	INTERP_GENERIC, /* options, then the script as the first non-option argument */
	INTERP_JAVA,    /* -jar FILE or a main class, after single-dash options */
	INTERP_R,       /* R: the script comes from -f/--file only; R CMD x */
};

/*
 * An interpreter: what ran is its script (or module, jar, class), found as
 * the first argument that is not an option or an option's value. Short
 * option sets are strings of option letters.
 */
struct interp {
	const char *name;
	unsigned flags;
	enum interp_kind kind;
	const char *arg;                  /* take a value: glued (-Wall) or the next argument */
	const char *optval;               /* take an optional value, glued only (perl -i.bak) */
	const char *code;                 /* inline code or stdin follows: the tool is the interpreter */
	const char *module;               /* the value names a module to run: the tool is the module */
	const char *script;               /* the value names the script (R -f FILE) */
	const char *const *long_arg;      /* --opt VALUE or --opt=VALUE */
	const char *const *long_code;
	const char *const *long_module;
	const char *const *long_script;
	const char *const *word_arg;      /* whole-token single-dash options taking the next argument (-encoding) */
	const char *const *word_code;     /* whole-token single-dash options followed by inline code */
};

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct interp interps[] = {
	{ .name = "python", .flags = NAME_VERSIONED, .arg = "WX", .code = "c", .module = "m",
	  .long_arg = LIST("--check-hash-based-pycs") },
	{ .name = "pypy", .flags = NAME_VERSIONED, .arg = "WX", .code = "c", .module = "m" },
	{ .name = "perl", .flags = NAME_VERSIONED, .arg = "I", .optval = "0CdDFilmMVx", .code = "eE" },
	{ .name = "Rscript", .code = "e" },
	{ .name = "R", .kind = INTERP_R, .arg = "dg", .code = "e", .script = "f",
	  .long_arg = LIST("--debugger", "--gui", "--encoding"), .long_code = LIST("--args"),
	  .long_script = LIST("--file") },
	{ .name = "ruby", .flags = NAME_VERSIONED, .arg = "ICEr", .optval = "0FKTWxi", .code = "e",
	  .long_arg = LIST("--encoding", "--external-encoding", "--internal-encoding", "--enable", "--disable") },
	{ .name = "node", .arg = "rC", .code = "ep",
	  .long_arg = LIST("--require", "--import", "--loader", "--experimental-loader", "--input-type", "--title",
			   "--conditions", "--env-file", "--inspect-port"),
	  .long_code = LIST("--eval", "--print") },
	{ .name = "nodejs", .arg = "rC", .code = "ep",
	  .long_arg = LIST("--require", "--import", "--loader", "--experimental-loader", "--input-type", "--title",
			   "--conditions", "--env-file", "--inspect-port"),
	  .long_code = LIST("--eval", "--print") },
	{ .name = "php", .flags = NAME_VERSIONED, .arg = "cdz", .code = "rBRFE", .script = "f" },
	{ .name = "lua", .flags = NAME_VERSIONED, .arg = "l", .code = "e" },
	{ .name = "julia", .arg = "CJLtp", .code = "eE", .long_code = LIST("--eval", "--print"),
	  .long_arg = LIST("--project", "--threads", "--sysimage", "--load") },
	{ .name = "bash", .flags = NAME_PLUS_OPTS, .arg = "oO", .code = "cs", .long_arg = LIST("--rcfile", "--init-file") },
	{ .name = "sh", .flags = NAME_PLUS_OPTS, .arg = "o", .code = "cs" },
	{ .name = "dash", .flags = NAME_PLUS_OPTS, .arg = "o", .code = "cs" },
	{ .name = "ash", .flags = NAME_PLUS_OPTS, .arg = "o", .code = "cs" },
	{ .name = "zsh", .flags = NAME_PLUS_OPTS, .arg = "o", .code = "cs" },
	{ .name = "ksh", .flags = NAME_PLUS_OPTS, .arg = "o", .code = "cs" },
	{ .name = "mksh", .flags = NAME_PLUS_OPTS, .arg = "o", .code = "cs" },
	{ .name = "java", .kind = INTERP_JAVA },
};

/* java options that take the next argument (all others are one token: -Xmx4g, -Dk=v, --add-opens=...). */
static const char *const java_arg_opts[] = {
	"-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path", "--add-modules",
	"--limit-modules", "--add-exports", "--add-opens", "--add-reads", "--patch-module", "--enable-native-access",
	"--source", NULL,
};

/*
 * Tools named with their subcommand: "samtools sort". The subcommand is the
 * first argument that is not an option (or the value of one of the listed
 * global options). snakemake is deliberately absent: its arguments are
 * targets, not subcommands.
 */
struct subcmd {
	const char *name;
	unsigned flags;
	const char *const *global_arg; /* global options taking the next argument */
};

static const struct subcmd subcmds[] = {
	{ "samtools", 0, NULL },
	{ "bcftools", 0, NULL },
	{ "bwa", 0, NULL },
	{ "bwa-mem2", 0, NULL },
	{ "bedtools", 0, NULL },
	{ "gatk", 0, LIST("--java-options", "--spark-runner", "--spark-master", "--conf") },
	{ "picard", 0, NULL },
	{ "fgbio", 0, NULL },
	{ "sambamba", 0, NULL },
	{ "seqkit", 0, NULL },
	{ "csvtk", 0, NULL },
	{ "salmon", 0, NULL },
	{ "kallisto", 0, NULL },
	{ "diamond", 0, NULL },
	{ "mmseqs", 0, NULL },
	{ "jellyfish", 0, NULL },
	{ "cellranger", 0, NULL },
	{ "spaceranger", 0, NULL },
	{ "umi_tools", 0, NULL },
	{ "medaka", 0, NULL },
	{ "pbmm2", 0, NULL },
	{ "vg", 0, NULL },
	{ "nextflow", 0, LIST("-log", "-c", "-config", "-C", "-trace", "-syslog") },
	{ "nf-core", 0, LIST("--log-file") },
	{ "git", 0, LIST("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env") },
	{ "docker", 0, LIST("-H", "--host", "-c", "--context", "-l", "--log-level", "--config", "--tlscacert",
			    "--tlscert", "--tlskey") },
	{ "podman", 0, LIST("--root", "--runroot", "--url", "--connection", "-c", "--log-level", "--storage-driver",
			    "--cgroup-manager", "--identity") },
	{ "kubectl", 0, LIST("-n", "--namespace", "--context", "--cluster", "--kubeconfig", "-s", "--server",
			     "--user", "--token", "-v", "--v", "--request-timeout", "--as") },
	{ "helm", 0, LIST("-n", "--namespace", "--kube-context", "--kubeconfig") },
	{ "singularity", 0, NULL },
	{ "apptainer", 0, NULL },
	{ "conda", 0, NULL },
	{ "mamba", 0, NULL },
	{ "micromamba", 0, LIST("-r", "--root-prefix", "--rc-file") },
	{ "pip", NAME_VERSIONED, LIST("--proxy", "--log", "--cache-dir", "--retries", "--timeout", "--exists-action",
				      "--trusted-host", "--cert", "--client-cert", "--python") },
	{ "uv", 0, LIST("--directory", "--cache-dir", "--config-file") },
	{ "poetry", 0, LIST("-C", "--directory") },
	{ "npm", 0, NULL },
	{ "yarn", 0, NULL },
	{ "pnpm", 0, NULL },
	{ "cargo", NAME_PLUS_OPTS, LIST("--color", "-C", "--config", "-Z") }, /* cargo +nightly build */
	{ "rustup", 0, NULL },
	{ "go", 0, NULL },
	{ "dotnet", 0, NULL },
	{ "dvc", 0, NULL },
	{ "systemctl", 0, LIST("-H", "--host", "-M", "--machine") },
	{ "apt", 0, LIST("-o", "-c") },
	{ "apt-get", 0, LIST("-o", "-c") },
	{ "dnf", 0, NULL },
	{ "yum", 0, NULL },
	{ "aws", 0, LIST("--profile", "--region", "--output", "--endpoint-url") },
	{ "gcloud", 0, LIST("--project", "--account", "--configuration") },
	{ "gsutil", 0, LIST("-o", "-h", "-u") },
	{ "az", 0, NULL },
	{ "terraform", 0, NULL },
	/* Bioinformatics and data tools with subcommands. */
	{ "bamtools", 0, NULL },
	{ "seqtk", 0, NULL },
	{ "taxonkit", 0, NULL },
	{ "nanopolish", 0, NULL },
	{ "pod5", 0, NULL },
	{ "dorado", 0, NULL },
	{ "modkit", 0, NULL },
	{ "whatshap", 0, NULL },
	{ "isoseq", NAME_VERSIONED, NULL }, /* isoseq3 */
	{ "mash", 0, NULL },
	{ "sourmash", 0, NULL },
	{ "skani", 0, NULL },
	{ "gfatools", 0, NULL },
	{ "ivar", 0, NULL },
	{ "nextclade", 0, NULL },
	{ "augur", 0, NULL },
	{ "checkm", 0, NULL },
	{ "gtdbtk", 0, NULL },
	{ "qiime", 0, NULL },
	{ "trimmomatic", 0, NULL },
	{ "snpEff", 0, LIST("-c", "-config", "-dataDir") },
	{ "SnpSift", 0, NULL },
	{ "varscan", 0, NULL },
	/* Workflow runners whose first argument is a subcommand (snakemake and cwltool take files). */
	{ "cromwell", 0, NULL },
	{ "womtool", 0, NULL },
	{ "miniwdl", 0, NULL },
	{ "nf-test", 0, NULL },
	/* Storage, VCS and model tools. */
	{ "gh", 0, LIST("-R", "--repo") },
	{ "hg", 0, LIST("-R", "--repository", "--cwd", "--config") },
	{ "svn", 0, NULL },
	{ "rclone", 0, LIST("--config") },
	{ "s3cmd", 0, LIST("-c", "--config") },
	{ "azcopy", 0, NULL },
	{ "pixi", 0, NULL },
	{ "huggingface-cli", 0, NULL },
	{ "ollama", 0, NULL },
};

/*
 * Names a jar (stem), a Java main class or a script can go by, mapped to a
 * subcommand tool: gatk-package-4.5.0.0-local.jar is gatk, picard's main
 * class is picard. Prefix matches.
 */
static const struct {
	const char *prefix;
	const char *tool;
} aliases[] = {
	{ "gatk-package", "gatk" },
	{ "org.broadinstitute.hellbender.", "gatk" },
	{ "picard.", "picard" },
	{ "com.fulcrumgenomics.", "fgbio" },
	{ "org.usadellab.trimmomatic.", "trimmomatic" },
	{ "VarScan", "varscan" }, /* VarScan.v2.4.6.jar */
	{ "net.sf.varscan.", "varscan" },
	{ "SnpSift", "SnpSift" },
	{ "snpEff", "snpEff" },
	{ "cromwell", "cromwell" },
	{ "womtool", "womtool" },
};

#define SUBCMD_MAX 48 /* longer "subcommands" are file names or data, not subcommands */

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

const char *tool_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool in_list(const char *const *list, const char *s, size_t n)
{
	for (; list && *list; list++)
		if (strlen(*list) == n && !memcmp(*list, s, n))
			return true;
	return false;
}

static bool in_set(const char *set, char c)
{
	return set && c && strchr(set, c);
}

/* name is base, or base followed by a version made of digits and dots when versioned. */
static bool name_matches(const char *name, const char *base, unsigned flags)
{
	size_t n = strlen(base);

	if (strncmp(name, base, n))
		return false;
	if (!name[n])
		return true;
	if (!(flags & NAME_VERSIONED))
		return false;
	for (const char *p = name + n; *p; p++)
		if ((*p < '0' || *p > '9') && *p != '.')
			return false;
	return true;
}

/* An interpreter of the extra tables, made into a table entry: its one-letter options as letter sets. */
struct interp_buf {
	struct interp in;
	char arg[64];
	char code[64];
};

static void letters(const char *const *opts, char *set, size_t size)
{
	size_t n = 0;

	for (; opts && *opts; opts++)
		if ((*opts)[0] == '-' && (*opts)[1] && (*opts)[1] != '-' && !(*opts)[2] && n + 1 < size)
			set[n++] = (*opts)[1];
	set[n] = 0;
}

static const struct interp *find_interp(const struct tool_extra *x, const char *name, struct interp_buf *buf)
{
	if (name[0] == '-') /* a login shell: argv[0] "-bash" */
		name++;
	for (size_t i = 0; x && i < x->n_interps; i++) {
		const struct tool_interp_rule *r = &x->interps[i];

		if (!tool_glob(r->name, name))
			continue;
		letters(r->value_opts, buf->arg, sizeof(buf->arg));
		letters(r->code_opts, buf->code, sizeof(buf->code));
		/* One list serves each form: "--x" entries only ever compare equal to "--x" arguments. */
		buf->in = (struct interp){
			.name = r->name, .kind = INTERP_GENERIC, .arg = buf->arg, .code = buf->code,
			.long_arg = r->value_opts, .long_code = r->code_opts,
			.word_arg = r->value_opts, .word_code = r->code_opts,
		};
		return &buf->in;
	}
	for (size_t i = 0; i < sizeof(interps) / sizeof(interps[0]); i++)
		if (name_matches(name, interps[i].name, interps[i].flags))
			return &interps[i];
	return NULL;
}

bool tool_is_shell(const char *name)
{
	static const char *const shells[] = { "bash", "sh", "dash", "ash", "zsh", "ksh", "mksh", NULL };

	if (name[0] == '-')
		name++;
	return in_list(shells, name, strlen(name));
}

/* A subcommand tool: the name to report it by, and its global options that take a value. */
struct subcmd_match {
	const char *name;
	unsigned flags;
	const char *const *global_arg;
};

static bool find_subcmd(const struct tool_extra *x, const char *name, struct subcmd_match *m)
{
	for (size_t i = 0; x && i < x->n_subcmds; i++)
		if (tool_glob(x->subcmds[i].name, name)) {
			*m = (struct subcmd_match){ .name = name, .global_arg = x->subcmds[i].value_opts };
			return true;
		}
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (name_matches(name, subcmds[i].name, subcmds[i].flags)) {
			*m = (struct subcmd_match){ subcmds[i].name, subcmds[i].flags, subcmds[i].global_arg };
			return true;
		}
	return false;
}

static bool looks_like_subcommand(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > SUBCMD_MAX || s[0] == '-' || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.' || c == ':' || c == '+'))
			return false;
	}
	return true;
}

/* Copy "a" or "a b" into out, truncated to size - 1 bytes. */
static size_t emit(char *out, size_t size, const char *a, size_t alen, const char *b)
{
	int n;

	if (size == 0)
		return 0;
	n = b ? snprintf(out, size, "%.*s %s", (int)alen, a, b) : snprintf(out, size, "%.*s", (int)alen, a);
	if (n < 0) {
		out[0] = 0;
		return 0;
	}
	return (size_t)n < size ? (size_t)n : size - 1;
}

/* ------------------------------------------------------------------ */
/* Interpreters: find what they run                                   */
/* ------------------------------------------------------------------ */

enum found_kind { FOUND_NONE, FOUND_SCRIPT, FOUND_MODULE, FOUND_R_CMD };

struct found {
	enum found_kind kind;
	const char *value;
	size_t next; /* index of the first argument after it */
};

static struct found found(enum found_kind kind, const char *value, size_t next)
{
	return (struct found){ .kind = value && *value ? kind : FOUND_NONE, .value = value, .next = next };
}

/* --name[=value]. Returns 1 when the scan ends here (with *out set), 0 to go on. */
static int scan_long(const struct interp *in, const char *const *argv, size_t argc, size_t *i, struct found *out)
{
	const char *a = argv[*i], *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);
	const char *value = eq ? eq + 1 : (*i + 1 < argc ? argv[*i + 1] : NULL);
	size_t next = eq ? *i + 1 : *i + 2;

	if (in_list(in->long_code, a, n)) {
		*out = found(FOUND_NONE, NULL, 0);
		return 1;
	}
	if (in_list(in->long_module, a, n) || in_list(in->long_script, a, n)) {
		*out = found(in_list(in->long_module, a, n) ? FOUND_MODULE : FOUND_SCRIPT, value, next);
		return 1;
	}
	if (!eq && in_list(in->long_arg, a, n))
		(*i)++; /* its value */
	return 0;
}

/* A cluster of short options (-xvc, -Wall, +o). Returns 1 when the scan ends here. */
static int scan_short(const struct interp *in, const char *const *argv, size_t argc, size_t *i, struct found *out)
{
	const char *a = argv[*i];

	for (size_t j = 1; a[j]; j++) {
		char c = a[j];
		const char *value = a[j + 1] ? a + j + 1 : (*i + 1 < argc ? argv[*i + 1] : NULL);
		size_t next = a[j + 1] ? *i + 1 : *i + 2;

		if (in_set(in->code, c)) {
			*out = found(FOUND_NONE, NULL, 0);
			return 1;
		}
		if (in_set(in->module, c) || in_set(in->script, c)) {
			*out = found(in_set(in->module, c) ? FOUND_MODULE : FOUND_SCRIPT, value, next);
			return 1;
		}
		if (in_set(in->arg, c)) {
			if (!a[j + 1])
				(*i)++;
			return 0;
		}
		if (in_set(in->optval, c))
			return 0; /* the rest of the cluster is its value */
	}
	return 0;
}

static struct found scan_generic(const struct interp *in, const char *const *argv, size_t argc)
{
	struct found f = found(FOUND_NONE, NULL, 0);

	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool opt = (a[0] == '-' || (a[0] == '+' && (in->flags & NAME_PLUS_OPTS))) && a[1];

		if (!strcmp(a, "--"))
			return i + 1 < argc ? found(FOUND_SCRIPT, argv[i + 1], i + 2) : f;
		if (a[0] == '-' && a[1] == '-') {
			if (scan_long(in, argv, argc, &i, &f))
				return f;
		} else if (a[0] == '-' && in_list(in->word_code, a, strlen(a))) {
			return f;
		} else if (a[0] == '-' && in_list(in->word_arg, a, strlen(a))) {
			i++; /* its value */
		} else if (opt) {
			if (scan_short(in, argv, argc, &i, &f))
				return f;
		} else if (!strcmp(a, "-")) {
			return f; /* the program comes from stdin */
		} else if (in->kind == INTERP_R) {
			if (!strcmp(a, "CMD") && i + 1 < argc)
				return found(FOUND_R_CMD, argv[i + 1], i + 2);
			/* R takes no script argument: anything else is ignored by R too */
		} else {
			return found(FOUND_SCRIPT, a, i + 1);
		}
	}
	return f;
}

static struct found scan_java(const char *const *argv, size_t argc)
{
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-jar"))
			return found(FOUND_SCRIPT, i + 1 < argc ? argv[i + 1] : NULL, i + 2);
		if (!strcmp(a, "-m") || !strcmp(a, "--module"))
			return found(FOUND_MODULE, i + 1 < argc ? argv[i + 1] : NULL, i + 2);
		if (!strncmp(a, "--module=", 9))
			return found(FOUND_MODULE, a + 9, i + 1);
		if (in_list(java_arg_opts, a, strlen(a))) {
			i++;
			continue;
		}
		if (a[0] == '-' || a[0] == '@') /* one-token option, or an argument file */
			continue;
		return found(FOUND_MODULE, a, i + 1); /* a main class */
	}
	return found(FOUND_NONE, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* Naming                                                             */
/* ------------------------------------------------------------------ */

/* The subcommand after argv[from..]: the first non-option, past the global options' values. */
static const char *find_subcommand(const struct subcmd_match *s, const char *const *argv, size_t argc, size_t from)
{
	for (size_t i = from; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] == '-' || (a[0] == '+' && (s->flags & NAME_PLUS_OPTS))) {
			if (!strchr(a, '=') && in_list(s->global_arg, a, strlen(a)))
				i++;
			continue;
		}
		return looks_like_subcommand(a) ? a : NULL;
	}
	return NULL;
}

/* The subcommand tool a name stands for: itself, a jar's stem, or an alias. stem: scratch, kept while *m is used. */
static bool subcmd_for(const struct tool_extra *x, const char *name, size_t n, char stem[TOOL_NAME_MAX],
		       struct subcmd_match *m)
{
	if (n >= TOOL_NAME_MAX)
		return false;
	memcpy(stem, name, n);
	stem[n] = 0;
	if (find_subcmd(x, stem, m)) /* the extra tables may name anything, even an alias's prefix */
		return true;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strncmp(stem, aliases[i].prefix, strlen(aliases[i].prefix)))
			return find_subcmd(x, aliases[i].tool, m);
	if (n > 4 && !memcmp(name + n - 4, ".jar", 4)) {
		stem[n - 4] = 0;
		/* picard-2.27.5.jar: a version after a dash */
		for (char *dash = strchr(stem, '-'); dash; dash = strchr(dash + 1, '-'))
			if (dash[1] >= '0' && dash[1] <= '9') {
				*dash = 0;
				break;
			}
		return find_subcmd(x, stem, m);
	}
	return false;
}

/* name (not NUL-terminated, n bytes) ran with argv[from..]: name it, with its subcommand if it has one. */
static size_t name_with_subcommand(const struct tool_extra *x, const char *name, size_t n, const char *const *argv,
				   size_t argc, size_t from, char *out, size_t size)
{
	char stem[TOOL_NAME_MAX];
	struct subcmd_match m;
	const char *sub = subcmd_for(x, name, n, stem, &m) ? find_subcommand(&m, argv, argc, from) : NULL;

	if (sub)
		return emit(out, size, m.name, strlen(m.name), sub);
	return emit(out, size, name, n, NULL);
}

static size_t name_interpreted(const struct tool_extra *x, const struct interp *in, const char *self,
			       const char *const *argv, size_t argc, char *out, size_t size)
{
	struct found f = in->kind == INTERP_JAVA ? scan_java(argv, argc) : scan_generic(in, argv, argc);
	const char *v;

	switch (f.kind) {
	case FOUND_SCRIPT:
		v = tool_basename(f.value);
		if (!*v)
			break;
		return name_with_subcommand(x, v, strlen(v), argv, argc, f.next, out, size);
	case FOUND_MODULE:
		/* java -m module/main.Class: the module; python -m pkg.mod: the module as written */
		v = f.value;
		return name_with_subcommand(x, v, strcspn(v, "/"), argv, argc, f.next, out, size);
	case FOUND_R_CMD:
		return emit(out, size, "R CMD", 5, f.value);
	case FOUND_NONE:
		break;
	}
	return emit(out, size, self, strlen(self), NULL);
}

size_t tool_name(const char *exe, const char *const *argv, size_t argc, char *out, size_t size)
{
	return tool_name_with(NULL, exe, argv, argc, out, size);
}

size_t tool_name_with(const struct tool_extra *x, const char *exe, const char *const *argv, size_t argc, char *out,
		      size_t size)
{
	const char *arg0 = argc > 0 ? tool_basename(argv[0]) : "";
	const char *self = exe && *tool_basename(exe) ? tool_basename(exe) : arg0;
	const struct interp *in;
	struct interp_buf buf;

	/*
	 * argv[0] first: a script started through its #! line has the script
	 * as exe and the interpreter as argv[0] (binfmt_script rewrites argv).
	 */
	in = argc > 0 && *arg0 ? find_interp(x, arg0, &buf) : NULL;
	if (in)
		return name_interpreted(x, in, arg0[0] == '-' ? arg0 + 1 : arg0, argv, argc, out, size);
	in = *self ? find_interp(x, self, &buf) : NULL;
	if (in)
		return name_interpreted(x, in, self[0] == '-' ? self + 1 : self, argv, argc, out, size);
	return name_with_subcommand(x, self, strlen(self), argv, argc, 1, out, size);
}

/* ------------------------------------------------------------------ */
/* Globs                                                              */
/* ------------------------------------------------------------------ */

/* A class member at *pp: a byte, or an escaped one (\c); *pp moves past it. */
static unsigned char class_byte(const char **pp)
{
	const char *p = *pp;

	if (*p == '\\' && p[1])
		p++;
	*pp = p + 1;
	return (unsigned char)*p;
}

/* The class at p ('[' excluded) against c: *matched, and the pattern after ']'; NULL if the class never closes. */
static const char *glob_class(const char *p, unsigned char c, bool *matched)
{
	bool neg = *p == '!' || *p == '^', hit = false;

	if (neg)
		p++;
	for (bool first = true; *p && (first || *p != ']'); first = false) {
		unsigned char lo = class_byte(&p), hi = lo;

		if (*p == '-' && p[1] && p[1] != ']') {
			p++;
			hi = class_byte(&p);
		}
		if (c >= lo && c <= hi)
			hit = true;
	}
	if (*p != ']')
		return NULL;
	*matched = hit != neg;
	return p + 1;
}

/* One pattern element at *pp against c: true if it matches; *pp moves past it. */
static bool glob_one(const char **pp, unsigned char c)
{
	const char *p = *pp;
	bool matched;
	const char *after;

	switch (*p) {
	case '?':
		*pp = p + 1;
		return true;
	case '[':
		after = glob_class(p + 1, c, &matched);
		if (after) {
			*pp = after;
			return matched;
		}
		*pp = p + 1; /* no closing ']': a literal '[' */
		return c == '[';
	case '\\':
		if (p[1]) {
			*pp = p + 2;
			return c == (unsigned char)p[1];
		}
		*pp = p + 1;
		return c == '\\';
	default:
		*pp = p + 1;
		return c == (unsigned char)*p;
	}
}

bool tool_glob(const char *pattern, const char *s)
{
	/*
	 * The classic single-backtrack matcher: on a mismatch, resume after the
	 * last '*' with one more byte of s swallowed by it. Earlier stars never
	 * need revisiting (a later star can absorb whatever they would), so the
	 * work is bounded by len(pattern) * len(s).
	 */
	const char *p = pattern, *star_p = NULL, *star_s = NULL;

	while (*s) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			if (!*p)
				return true;
			star_p = p;
			star_s = s;
			continue;
		}
		if (*p && glob_one(&p, (unsigned char)*s)) {
			s++;
			continue;
		}
		if (!star_p)
			return false;
		p = star_p;
		s = ++star_s;
	}
	while (*p == '*')
		p++;
	return !*p;
}
