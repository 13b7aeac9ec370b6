/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_VIEW_HTML_DATA_H
#define TRACER_VIEW_HTML_DATA_H

#include <stddef.h>

#include "json.h"

/*
 * The HTML report's data (docs/html.md, "What the file carries"): a
 * tracer.run.v1 report made into what the page draws, so that a run of
 * 100,000 processes is a file of a few MB, not the report's 200 MB.
 *
 *   {"schema": "tracer.page.v1",
 *    "report": the report's own members the page shows, as they are:
 *              schema command exit_code signal state start_ns end_ns uid
 *              host agent run tune last_update_ns (those it has)
 *    "t0_ns", "span_ns": the run's span, [t0, t0 + span]: its start and
 *              end widened to what its steps and processes cover
 *    "counts": {processes, processes_listed, steps, steps_listed, signals,
 *               signals_listed, argv, argv_listed, tools, tools_listed}
 *    "caps":   {processes, steps, signals, argv, tools} (the bounds below)
 *    "steps":  the first HTML_DATA_MAX_STEPS steps, whole, as they are
 *    "step_stats": one per listed step, the same order: {processes,
 *              failed, running, cpu_ns, flagged} over every process of
 *              the report naming it (flagged: a signal "stalled" or
 *              "slower_than_usual" names it), and the step's own
 *              peak_rss_bytes the host's at most (null: none), with
 *              peak_rss_clamped
 *    "signals": the first HTML_DATA_MAX_SIGNALS signals, whole
 *    "strings": tool names, step ids and executables, each once
 *    "processes": columns, one entry per listed process (the first
 *              HTML_DATA_MAX_PROCESSES of the report, in its order):
 *              pid, parent (the row of its parent: the latest listed
 *              process with its ppid as pid started no later; -1 none),
 *              start_us (since t0), dur_us (null: not ended), tool, step,
 *              exe (an index into strings, -1: null), status (the exit
 *              code, or minus the signal; null: not ended), cpu_us,
 *              rss_kib (peak, KiB rounded up); null where unknown
 *    "oom":    rows of the processes the OOM killer killed
 *    "argv":   [[row, argv], ...]: the command lines of at most
 *              HTML_DATA_MAX_ARGV listed processes: those that failed (a
 *              non-zero exit, a signal, the OOM killer) first, then the
 *              longest-lived
 *    "tools":  per tool, over every process, by CPU time, at most
 *              HTML_DATA_MAX_TOOLS: {tool, processes, failed, cpu_ns,
 *              wall_ns, peak_rss_bytes (the host's at most),
 *              peak_rss_clamped}
 *    "resources": {bins, bin_ns, cpu_ns[], rss_bytes[], host_cpus,
 *              host_memory_bytes, cpu_clamped, rss_clamped}: CPU time and
 *              the sum of the resident sets of the listed processes over
 *              the span, in HTML_DATA_BINS slices, each within the host's
 *              CPUs and memory (the report's host.cpus, host.memory_bytes;
 *              null: not known, nothing clamped); *_clamped: the slices
 *              that summed beyond them and were clamped
 *              (docs/html.md, "Within the host")}
 *
 * Nothing else of a process is carried (files, cwd, cgroups, series, the
 * other counters). Strings are copied as the report wrote them (the text
 * is checked first, so each is valid JSON and UTF-8 already), whitespace
 * outside strings dropped.
 *
 * The report is read with status/json_parse.h, strictly, element by
 * element of its processes, steps and signals, so memory is bounded by
 * the listed processes (about 100 bytes each), the strings, the largest
 * single element (HTML_DATA_MAX_NODES values at most) and the output: not
 * by the report's size.
 */
#define HTML_DATA_SCHEMA "tracer.page.v1"
#define HTML_DATA_MAX_PROCESSES 120000 /* processes listed (about 8 MB of page); the rest only counted */
#define HTML_DATA_MAX_ARGV 5000        /* processes whose command line is carried */
#define HTML_DATA_MAX_STEPS 2000       /* steps carried whole (the page draws at most 2,000) */
#define HTML_DATA_MAX_SIGNALS 5000     /* signals carried whole */
#define HTML_DATA_MAX_TOOLS 2000       /* rows of the tools table */
#define HTML_DATA_MAX_STRINGS (1u << 20) /* distinct strings; a tool beyond them counts as "(more tools)" */
#define HTML_DATA_MAX_NODES (1u << 20) /* values in one process, step, signal or other member */
#define HTML_DATA_BINS 200             /* slices of the resource chart */

/*
 * The page's data of the len bytes of a tracer.run.v1 report, into o.
 * 0; -EINVAL when the text is not a JSON object, or not one this can read
 * (err says what and where, NUL-terminated, when errlen > 0); -ENOMEM; or
 * o's first error. Everything is read before anything is written: after
 * -EINVAL or -ENOMEM o has nothing of this call's.
 */
int html_data_write(struct obuf *o, const char *json, size_t len, char *err, size_t errlen);

#endif /* TRACER_VIEW_HTML_DATA_H */
