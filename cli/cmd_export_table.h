/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_EXPORT_TABLE_H
#define TRACER_CLI_CMD_EXPORT_TABLE_H

/* tracer export table --db LAKE TABLE [--since DURATION] [--format csv|ndjson]: argv[0] is "table". */
int cmd_export_table(int argc, char **argv);

#endif /* TRACER_CLI_CMD_EXPORT_TABLE_H */
