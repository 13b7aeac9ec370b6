/* SPDX-License-Identifier: Apache-2.0 */
/* tracer export otlp: the lake's runs as OpenTelemetry traces (cli/cmd_export_otlp.c). */
#ifndef TRACER_CLI_CMD_EXPORT_OTLP_H
#define TRACER_CLI_CMD_EXPORT_OTLP_H

/* argv[0] is "otlp". Returns the exit status. */
int cmd_export_otlp(int argc, char **argv);

#endif /* TRACER_CLI_CMD_EXPORT_OTLP_H */
