/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sweep's findings as JSON (tracer.sweep.v1, docs/sweep.md): the
 * window, the price table, the thresholds, the hosts judged and every
 * finding with its evidence and cost. tracer sweep --json and tracer-web's
 * /api/sweep write the same bytes through it. Every string (host ids,
 * evidence, a process's command line) goes through records/json.h's writer.
 */
#ifndef TRACER_VIEW_SWEEP_JSON_H
#define TRACER_VIEW_SWEEP_JSON_H

#include <stddef.h>

#include "json.h"
#include "sweep.h"
#include "sweep_input.h"

/*
 * One tracer.sweep.v1 document into j: si the input sw_sweep judged, c its
 * thresholds, prices the price table's path (NULL: none was used), f[0..n)
 * its findings. Errors are the writer's (j's obuf).
 */
void sweep_json_write(struct json *j, const struct sweep_input *si, const struct sw_config *c, const char *prices,
		      const struct sw_finding *f, size_t n);

/* The id of the host a finding is on; NULL when its host is not among si's (a run's host that sent no beats). */
const char *sweep_finding_host(const struct sweep_input *si, const struct sw_finding *f);

#endif /* TRACER_VIEW_SWEEP_JSON_H */
