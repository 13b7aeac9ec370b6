/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_STATUS_H
#define TRACER_CLI_CMD_STATUS_H

/* tracer status [--config FILE | --state-dir DIR] [--json]: exit status. */
int cmd_status(int argc, char **argv);

#endif /* TRACER_CLI_CMD_STATUS_H */
