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
#ifndef TRACER_PROCESSOR_TOOL_H
#define TRACER_PROCESSOR_TOOL_H

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

#endif /* TRACER_PROCESSOR_TOOL_H */
