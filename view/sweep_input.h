/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sweep's input (analysis/sweep.h) built from the lake's read calls
 * (lake/store.h, "reading for the sweep", and the runs and steps of
 * "reading for the analysis"): the hosts and their heartbeats, the
 * processes alive in the window with their newest activity and parents,
 * the runs. Everything the an_input and sw_input point to is owned here.
 */
#ifndef TRACER_VIEW_SWEEP_INPUT_H
#define TRACER_VIEW_SWEEP_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "store.h"
#include "sweep.h"
#include "tune_input.h"

struct sweep_input {
	struct sw_input in;
	struct tune_input runs;      /* in.runs points into it */
	struct sw_host *hosts;
	struct sw_beat *beats;
	struct sw_process *procs;
	size_t nhosts, nbeats, nprocs;
	char **strings;              /* every string copied from the lake */
	size_t nstrings, capstrings;
	size_t caps[3];              /* allocated hosts, beats, procs */
};

/*
 * The window [since_ns, now_ns] (now_ns 0: the lake's newest word from any
 * host). 0, or -1 with err saying what failed; *out is then empty
 * (sweep_input_free is still safe).
 */
int sweep_input_load(struct store *s, int64_t since_ns, int64_t now_ns, struct sweep_input *out, char *err,
		     size_t errlen);
void sweep_input_free(struct sweep_input *si);

/*
 * A window as tracer sweep --since and tracer-web's since= take it: a
 * duration as tracer.conf writes them ("36h", "90m", "2.5s") or whole days
 * ("14d"); not 0, at most INT64_MAX / 2 ns. 0, or -1.
 */
int sweep_parse_window(const char *s, uint64_t *ns);

/* The sweep's thresholds from tracer.conf's sweep_* keys. */
void sweep_config_from(const struct tracer_config *cfg, struct sw_config *c);

#endif /* TRACER_VIEW_SWEEP_INPUT_H */
