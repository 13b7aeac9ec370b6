/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The report's "run" and "steps" (steps.c finds them) and the summary's
 * steps table.
 */
#ifndef TRACER_PROCESSOR_REPORT_STEPS_H
#define TRACER_PROCESSOR_REPORT_STEPS_H

#include <stdint.h>

#include "json.h"
#include "steps.h"

void report_write_run(struct json *j, const struct steps *st);
void report_write_steps(struct json *j, const struct steps *st, uint64_t mono_to_real_ns);

/* One line per step (at most max_lines, then a count), for the human summary. */
void report_print_steps(struct obuf *o, const struct steps *st, unsigned max_lines);

#endif /* TRACER_PROCESSOR_REPORT_STEPS_H */
