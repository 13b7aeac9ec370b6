/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_REPORT_H
#define TRACER_CLI_CMD_REPORT_H

/* tracer report --db FILE [RUN]: the lake's runs, or one run's summary and signals. Exit status. */
int cmd_report(int argc, char **argv);

#endif /* TRACER_CLI_CMD_REPORT_H */
