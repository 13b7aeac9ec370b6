/* SPDX-License-Identifier: Apache-2.0 */
/* tracer tune (cli/cmd_tune.c), and what tracer report and tracer cost share of it. */
#ifndef TRACER_CLI_CMD_TUNE_H
#define TRACER_CLI_CMD_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "tune.h"

int cmd_tune(int argc, char **argv);

/* RUN as tracer report takes it -> its lake id and pipeline; 1 (said on stderr) if none. */
int tune_find_run(struct store *st, const char *db, const char *name, const char *cmd, int64_t *lake_id,
		  char *pipeline, size_t pipelinelen);
/* A run's bottlenecks and slower-than-usual steps, as text. */
void tune_text_run(const struct an_input *in, long run, const struct an_bottlenecks *b, const struct an_slow *slow,
		   size_t nslow);

#endif /* TRACER_CLI_CMD_TUNE_H */
