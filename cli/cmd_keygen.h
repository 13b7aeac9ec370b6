/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_CLI_CMD_KEYGEN_H
#define TRACER_CLI_CMD_KEYGEN_H

/* tracer keygen [--out FILE] [--host-id HEX32 | --any-host]: exit status. */
int cmd_keygen(int argc, char **argv);

#endif /* TRACER_CLI_CMD_KEYGEN_H */
