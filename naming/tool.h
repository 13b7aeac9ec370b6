/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "tool" of a process image: the name a person would use for what ran.
 *
 *   /usr/bin/samtools sort -o x.bam y.bam       -> "samtools sort"
 *   /usr/bin/python3 -u /opt/bin/align.py ...   -> "align.py"
 *   python3 /usr/bin/pip install numpy          -> "pip install"
 *   bash -c 'echo hi'                           -> "bash"
 *   java -Xmx4g -jar picard.jar SortSam I=...   -> "picard SortSam"
 *   /usr/bin/grep foo                           -> "grep"
 *
 * Table-driven (tool.c): interpreters, with the options of each that take
 * a value, and tools named by their subcommand, with their global options
 * that take a value. Rules in docs/processor.md.
 */
#ifndef TRACER_NAMING_TOOL_H
#define TRACER_NAMING_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#define TOOL_NAME_MAX 128 /* bytes kept, NUL included */

/*
 * Name the tool of an image run as exe (the path given to execve, may be
 * NULL or empty) with arguments argv[0..argc). Writes a NUL-terminated name
 * of at most size - 1 bytes to out (empty when nothing is known) and
 * returns its length.
 */
size_t tool_name(const char *exe, const char *const *argv, size_t argc, char *out, size_t size);

/* The part of path after its last '/' (path itself if none). */
const char *tool_basename(const char *path);

/*
 * Naming tables added at run time (toolrules.c), consulted before the
 * built-in ones, so they add tools and override built-in entries of the
 * same name. Names are glob patterns (tool_glob). Option lists are
 * NULL-terminated, each entry written as on the command line: "-x" (one
 * letter: its value may be glued, -xVALUE, or the next argument), "-word"
 * and "--long" (the next argument, or --long=VALUE).
 */
struct tool_interp_rule {
	const char *name;              /* the interpreter's basename */
	const char *const *value_opts; /* options that take a value */
	const char *const *code_opts;  /* options followed by inline code: the tool stays the interpreter */
};

struct tool_subcmd_rule {
	const char *name;              /* the tool's basename (or a script's, a jar's stem) */
	const char *const *value_opts; /* global options that take a value, before the subcommand */
};

struct tool_extra {
	const struct tool_interp_rule *interps;
	size_t n_interps;
	const struct tool_subcmd_rule *subcmds;
	size_t n_subcmds;
};

/* tool_name() with extra tables (NULL: the built-ins only). */
size_t tool_name_with(const struct tool_extra *extra, const char *exe, const char *const *argv, size_t argc,
		      char *out, size_t size);

/*
 * Does s match the glob pattern? `*` any run of bytes ('/' included), `?`
 * one byte, `[abc]`, `[a-z]`, `[!x]` a class, `\c` the byte c. Time at most
 * proportional to strlen(pattern) * strlen(s): no backtracking blow-up on
 * hostile strings. A malformed class ('[' without ']') matches '[' itself.
 */
bool tool_glob(const char *pattern, const char *s);

/* Is name (a basename, "-bash" for a login shell) a shell: bash, sh, dash, ash, zsh, ksh, mksh? */
bool tool_is_shell(const char *name);

#endif /* TRACER_NAMING_TOOL_H */
