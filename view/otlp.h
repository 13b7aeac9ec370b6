/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A run of the lake as an OpenTelemetry trace, in the OTLP/HTTP JSON
 * encoding (view/otlp.c; docs/export.md, "OpenTelemetry traces"): the run
 * the root span, each step a child of it, each process a child of its
 * step; signals as span events; the host as the resource. Ids are derived
 * from the run's identity, so that exporting a run twice gives the same
 * trace and span ids.
 */
#ifndef TRACER_VIEW_OTLP_H
#define TRACER_VIEW_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define OTLP_TRACE_ID_LEN 16
#define OTLP_SPAN_ID_LEN 8
#define OTLP_SPANS_PER_REQUEST 2000 /* a run with more processes goes in several requests */

struct otlp_options {
	bool with_argv;            /* process.command_args: the command line, redacted as the lake holds it */
	const char *version;       /* the scope's version (tracer's) */
	size_t spans_per_request;  /* 0: OTLP_SPANS_PER_REQUEST */
};

/* One ExportTraceServiceRequest, JSON text of len bytes, holding spans spans; non-zero stops and is returned. */
typedef int (*otlp_request_fn)(void *ctx, const char *json, size_t len, size_t spans);

/*
 * Run r of the lake as one or more requests (its root and steps in the
 * first, its processes in order after them), each given to fn. 0, fn's
 * non-zero, or a negative errno / STORE_E_* with err saying what failed.
 */
int otlp_run(struct store *st, const struct store_run *r, const struct otlp_options *o, otlp_request_fn fn,
	     void *ctx, char *err, size_t errlen);

/* The run's trace id: a hash of its host and run key (or, without one, of what else identifies it). */
void otlp_trace_id(const struct store_run *r, uint8_t id[OTLP_TRACE_ID_LEN]);

/* cicd.pipeline.result of a run's or step's state: success, failure, error; NULL while it runs. */
const char *otlp_result(const char *state);

#endif /* TRACER_VIEW_OTLP_H */
