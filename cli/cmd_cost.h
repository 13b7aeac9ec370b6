/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_COST_H
#define TRACER_CLI_CMD_COST_H

#include <stddef.h>

#include "cost.h"

int cmd_cost(int argc, char **argv);
/* The price table installed with tracer (or the source tree's): 1 loaded (its path in path), 0 none
 * found, -1 found but refused (said on stderr). */
int cost_default_table(struct price_table *t, char *path, size_t pathlen);

#endif /* TRACER_CLI_CMD_COST_H */
