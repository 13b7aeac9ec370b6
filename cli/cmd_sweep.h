/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_SWEEP_H
#define TRACER_CLI_CMD_SWEEP_H

int cmd_sweep(int argc, char **argv);

#endif /* TRACER_CLI_CMD_SWEEP_H */
