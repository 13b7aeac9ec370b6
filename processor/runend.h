/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The end of a run (run mode): tracer run's end line on the control fd
 * ("end EXIT_CODE END_REALTIME_NS"), and what the processor writes once the
 * run is over: the JSON report and the summary to their descriptors and,
 * with delivery, the run's report to the lake as one TL_RUN_REPORT record.
 * The loop decides when the run is over (main.c's finished()); this file
 * owns the control fd's state and the report's buffers.
 */
#ifndef TRACER_PROCESSOR_RUNEND_H
#define TRACER_PROCESSOR_RUNEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deliver.h"
#include "options.h"
#include "records.h"
#include "report.h"
#include "runs.h"
#include "session.h"
#include "steps.h"

#define RUN_END_LINE_MAX 64

struct run_end {
	int control_fd;             /* -1: none (daemon mode) */
	bool control_open;          /* the control fd is still read */
	bool ended;                 /* the end line came */
	int exit_code;              /* the command's, 0..255 */
	uint64_t end_ns;            /* CLOCK_REALTIME of the command's end, as tracer run says */
	uint64_t end_at;            /* CLOCK_MONOTONIC when the end line came */
	char line[RUN_END_LINE_MAX];
	size_t len;
	/* The report's command, redacted: argv points into out. */
	char area[TR_ARGV_MAX * 4], out[TR_ARGV_MAX * 4];
	const char *argv[TR_ARGV_MAX + 1];
	char key[sizeof(((struct run *)0)->key)];
	char out_storage[1 << 16];  /* the report's and the summary's write buffer */
};

/* Nothing read yet from control_fd (-1: no control fd). */
void run_end_init(struct run_end *e, int control_fd);

/* The control fd is readable: take what it has; a second line or anything else closes it for good (said once). */
void run_end_read_control(struct run_end *e);

/*
 * The report's input as far as the run's end and the options say: the
 * command (redacted by the rules in use), its exit code and end, the
 * start, the thresholds; in is cleared first. The caller adds the ring's
 * and the agent's figures.
 */
void run_end_input(struct run_end *e, const struct options *o, const struct redact_rules *redact,
		   struct report_input *in);

/*
 * Run mode: the report and the summary to the descriptors o names, and
 * with dlv (delivery) the run's TL_RUN_REPORT record, made durable and
 * uploaded for at most 30 s (what is left stays in the spool). The run's
 * key and steps are found here. 0, or 1 when anything could not be written.
 */
int run_end_report(struct run_end *e, const struct options *o, struct session *s, struct steps *steps,
		   struct runs *runs, struct report_input *in, struct deliver *dlv);

#endif /* TRACER_PROCESSOR_RUNEND_H */
