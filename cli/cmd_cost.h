/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_COST_H
#define TRACER_CLI_CMD_COST_H

#include <stddef.h>

#include "cost.h"

int cmd_cost(int argc, char **argv);

#endif /* TRACER_CLI_CMD_COST_H */
