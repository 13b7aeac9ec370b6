/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_REPORT_H
#define TRACER_CLI_CMD_REPORT_H

/*
 * tracer report --db FILE [--json] [RUN]: the lake's runs of both modes, or one run (its summary or its
 * steps, and its signals; with --json its tracer.run.v1 report, stored or rebuilt). Exit status.
 */
int cmd_report(int argc, char **argv);

#endif /* TRACER_CLI_CMD_REPORT_H */
