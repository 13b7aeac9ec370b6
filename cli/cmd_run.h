/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_RUN_H
#define TRACER_CLI_CMD_RUN_H

/* `tracer run`: argv[0] is "run". Returns the exit status for tracer. */
int cmd_run(int argc, char **argv);

#endif
