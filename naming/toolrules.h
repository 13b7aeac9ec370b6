/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tool rules: a small text file that adds to or overrides the built-in tool
 * naming (tool.c), reloadable at run time. The format, one rule per line
 * (docs/processor.md, "Tool rules", has the whole of it):
 *
 *   # a comment
 *   tool "star align" when name=STAR arg=--runMode arg=alignReads
 *   interpreter tclsh value -encoding
 *   subcommand mytool value -c --config
 *   rename bwa-mem2 bwa
 *   run "rnaseq" when exe=/opt/lab/bin/launch-*
 *
 * `tool NAME when COND...` names an image that meets every condition
 * (exe=GLOB, name=GLOB, arg0=GLOB, arg=GLOB, tool=GLOB); `interpreter`
 * and `subcommand` add entries to the naming tables, ahead of the built-in
 * ones; `rename FROM TO` replaces the first word of a name. A load parses
 * the whole text first and replaces the rules only if all of it is valid,
 * so a bad edit followed by SIGHUP keeps the rules in force.
 */
#ifndef TRACER_NAMING_TOOLRULES_H
#define TRACER_NAMING_TOOLRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tool.h"

#define TOOLRULES_MAX_TEXT (1u << 20) /* bytes of rules text accepted */
#define TOOLRULES_MAX_RULES 4096u     /* rules in one text */
#define TOOLRULES_MAX_CONDS 8u        /* conditions of one tool rule */
#define TOOLRULES_MAX_OPTS 32u        /* options listed by one interpreter or subcommand rule */
#define TOOLRULES_GLOB_MAX 255u       /* bytes of one glob */
#define TOOLRULES_OPT_MAX 64u         /* bytes of one option */
#define TOOLRULES_ERR_MIN 128u        /* an error buffer this size holds any message but a long source name */

enum toolrule_field {
	TOOLRULE_EXE,  /* the executable's path as exec'd */
	TOOLRULE_NAME, /* its basename (argv[0]'s when the path is unknown) */
	TOOLRULE_ARG0, /* argv[0] as given */
	TOOLRULE_ARG,  /* any argument after argv[0] */
	TOOLRULE_TOOL, /* the name the built-in tables (and interpreter/subcommand rules) give */
};

struct toolrule_cond {
	enum toolrule_field field;
	const char *glob;
};

struct toolrule_tool {
	const char *name;
	const struct toolrule_cond *conds;
	uint32_t n_conds;
	uint32_t line;
	bool run;      /* a `run` rule: a process it matches starts a run named `name` (docs/live.md) */
};

struct toolrule_rename {
	const char *from; /* glob on the first word */
	const char *to;
};

struct toolrules {
	void *mem;                       /* one block: the arrays and every string */
	const struct toolrule_tool *tools;
	uint32_t n_tools;
	const struct toolrule_rename *renames;
	uint32_t n_renames;
	struct tool_extra extra;         /* interpreter and subcommand rules, for tool_name_with() */
	uint32_t rules;                  /* rules loaded */
	uint64_t loads;                  /* successful loads so far */
};

/* An empty set: naming is the built-in one. */
void toolrules_init(struct toolrules *tr);
void toolrules_free(struct toolrules *tr);

/*
 * Parse text[0..len) (need not be NUL-terminated) and, if all of it is
 * valid, replace tr's rules with it. Returns 0; or -EINVAL (a syntax
 * error: err holds "<rules>:LINE:COLUMN: what is wrong"), -E2BIG (text
 * over TOOLRULES_MAX_TEXT or over TOOLRULES_MAX_RULES rules), -ENOMEM; tr
 * is then unchanged. err may be NULL.
 */
int toolrules_load(struct toolrules *tr, const char *text, size_t len, char *err, size_t errsize);

/* The same, with source (a file's path) naming the text in error messages: "path:LINE:COLUMN: ...". */
int toolrules_load_as(struct toolrules *tr, const char *source, const char *text, size_t len, char *err,
		      size_t errsize);

/*
 * The tool name of an image, as tool_name() but with the rules: the first
 * `tool` rule whose conditions all hold gives the name; otherwise the
 * built-in naming with the interpreter and subcommand rules, then the
 * first `rename` whose FROM matches the name's first word. tr may be
 * NULL (built-ins only). Same contract as tool_name().
 */
size_t toolrules_name(const struct toolrules *tr, const char *exe, const char *const *argv, size_t argc, char *out,
		      size_t size);

/*
 * The first `run` rule whose conditions all hold for this image: its
 * NAME (the run's pipeline), or NULL. tr may be NULL (no rules).
 */
const char *toolrules_run(const struct toolrules *tr, const char *exe, const char *const *argv, size_t argc);

#endif /* TRACER_NAMING_TOOLRULES_H */
