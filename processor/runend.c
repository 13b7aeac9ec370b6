/* SPDX-License-Identifier: Apache-2.0 */
/* The end of a run: tracer run's end line, then the report, the summary and the run's record (runend.h). */
#include "runend.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "frame.h"
#include "json.h"
#include "lake.h"
#include "parse.h"
#include "redact.h"

/*
 * Run mode with delivery: everything is uploaded before we exit, for at
 * most this long; what is left stays in the spool, which the next
 * processor with this state_dir sends.
 */
#define RUN_UPLOAD_WAIT_NS (30ULL * 1000000000ULL)

void run_end_init(struct run_end *e, int control_fd)
{
	e->control_fd = control_fd;
	e->control_open = control_fd >= 0;
	e->ended = false;
	e->len = 0;
}

/* "end EXIT_CODE END_REALTIME_NS": EXIT_CODE 0..255, both plain decimals. */
static int parse_control_line(struct run_end *e, char *line)
{
	char *sp1, *sp2;
	uint64_t code, ns;

	if (strncmp(line, "end ", 4))
		return -1;
	sp1 = line + 4;
	sp2 = strchr(sp1, ' ');
	if (!sp2)
		return -1;
	*sp2++ = 0;
	if (parse_u64(sp1, 255, &code) || parse_u64(sp2, UINT64_MAX, &ns))
		return -1;
	e->ended = true;
	e->exit_code = (int)code;
	e->end_ns = ns;
	e->end_at = mono_ns();
	return 0;
}

void run_end_read_control(struct run_end *e)
{
	ssize_t n = read(e->control_fd, e->line + e->len, sizeof(e->line) - e->len);
	char *nl;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (!e->ended)
			fprintf(stderr, "<4>the control fd closed without an end line: the report has no exit code\n");
		e->control_open = false;
		return;
	}
	e->len += (size_t)n;
	nl = memchr(e->line, '\n', e->len);
	if (!nl && e->len < sizeof(e->line))
		return;
	if (e->ended || !nl || (*nl = 0, parse_control_line(e, e->line))) {
		fprintf(stderr, "<3>unexpected input on the control fd (want one line \"end STATUS REALTIME_NS\"): "
				"ignoring the control fd from now on\n");
		e->control_open = false;
		return;
	}
	/* Anything after the line is unexpected too; the next read sees it. */
	e->len -= (size_t)(nl + 1 - e->line);
	memmove(e->line, nl + 1, e->len);
}

/*
 * The command as the report shows it: redacted like every argument area
 * (the processor's own copy of it came from tracer run, not the kernel,
 * but it holds the same secrets). Pointers into e->out.
 */
static const char *const *redacted_command(struct run_end *e, const struct options *o,
					   const struct redact_rules *redact)
{
	size_t len = 0, outlen = 0, n = 0;
	unsigned nr = 0, flags = 0;

	for (size_t i = 0; i < o->ncommand && i < TR_ARGV_MAX; i++) {
		size_t l = strlen(o->command[i]) + 1;

		if (len + l > sizeof(e->area)) {
			flags = REDACT_TRUNCATED;
			l = sizeof(e->area) - len;
			memcpy(e->area + len, o->command[i], l);
			len += l;
			break;
		}
		memcpy(e->area + len, o->command[i], l);
		len += l;
	}
	if (redact_area(redact, e->area, len, flags, e->out, sizeof(e->out) - 1, &outlen, &nr))
		outlen = 0;
	e->out[outlen] = 0;
	for (size_t off = 0; off < outlen && n < TR_ARGV_MAX; n++) {
		e->argv[n] = e->out + off;
		off += strnlen(e->out + off, outlen - off) + 1;
	}
	e->argv[n] = NULL;
	return e->argv;
}

void run_end_input(struct run_end *e, const struct options *o, const struct redact_rules *redact,
		   struct report_input *in)
{
	memset(in, 0, sizeof(*in));
	in->command = redacted_command(e, o, redact);
	for (in->ncommand = 0; in->command[in->ncommand]; in->ncommand++)
		;
	in->exit_known = e->ended;
	in->exit_code = e->exit_code;
	in->start_ns = o->start_ns;
	in->end_known = e->ended;
	in->end_ns = e->end_ns;
	in->stall_after_ns = o->stall_after_ns;
	in->io_wait_after_ns = o->io_wait_after_ns;
	in->net_wait_after_ns = o->net_wait_after_ns;
	in->agent.control_end = e->ended;
}

static int write_out(struct run_end *e, int fd, struct proctab *t, const struct report_input *in,
		     int (*writer)(struct obuf *, struct proctab *, const struct report_input *), const char *what)
{
	struct obuf o;
	int err;

	if (fd < 0)
		return 0;
	obuf_init_fd(&o, fd, e->out_storage, sizeof(e->out_storage));
	err = writer(&o, t, in);
	if (!err)
		err = obuf_flush(&o);
	if (err)
		fprintf(stderr, "<3>cannot write the %s to fd %d: %s\n", what, fd, strerror(-err));
	return err;
}

/*
 * Run mode with delivery: the run's report and summary go to the lake as
 * one TL_RUN_REPORT record, {"report": ..., "summary": "..."}, after the
 * kernel's records; then everything is made durable and uploaded.
 */
static int deliver_run(struct deliver *dlv, struct proctab *t, const struct report_input *in, const char *state_dir)
{
	struct obuf rep, sum, rec;
	int rc = 0;

	obuf_init_mem(&rep, 256u << 20);
	obuf_init_mem(&sum, 16u << 20);
	obuf_init_mem(&rec, TR_FRAME_MAX_PAYLOAD);
	report_json(&rep, t, in);
	report_summary(&sum, t, in);
	if (report_record(&rec, &rep, &sum) || rep.err || sum.err) {
		fprintf(stderr, "<3>the run report is too large for the lake (%zu bytes; at most %u): only the kernel's "
				"records are sent\n", rec.len, TR_FRAME_MAX_PAYLOAD);
		rc = -1;
	} else if (deliver_own_record(dlv, TL_RUN_REPORT, rec.buf, (uint32_t)rec.len)) {
		rc = -1;
	}
	obuf_free(&rep);
	obuf_free(&sum);
	obuf_free(&rec);
	if (deliver_sync(dlv)) {
		rc = -1;
	} else {
		int up = deliver_drain(dlv, RUN_UPLOAD_WAIT_NS);

		if (up > 0)
			fprintf(stderr, "<4>not everything reached the lake within %llu s: the rest stays in the spool of "
					"%s for the next processor\n", RUN_UPLOAD_WAIT_NS / 1000000000ULL, state_dir);
	}
	return rc;
}

/* Run mode: the key of the traced command's run, as daemon mode would name it (docs/live.md). */
static const char *run_key(struct run_end *e, struct runs *runs, const struct proctab *t)
{
	const struct proc *root = proctab_root(t);

	if (!root)
		return NULL;
	runs_key(runs, root, e->key, sizeof(e->key));
	return e->key;
}

int run_end_report(struct run_end *e, const struct options *o, struct session *s, struct steps *steps,
		   struct runs *runs, struct report_input *in, struct deliver *dlv)
{
	int err = 0;

	proctab_mark_tree(&s->tab);
	in->run_key = run_key(e, runs, &s->tab);
	if (steps_build(steps, &s->tab) == 0)
		in->steps = steps;
	else
		fprintf(stderr, "<3>not enough memory to find the run's steps: the report has none\n");
	err |= write_out(e, o->report_fd, &s->tab, in, report_json, "report");
	err |= write_out(e, o->summary_fd, &s->tab, in, report_summary, "summary");
	if (dlv)
		err |= deliver_run(dlv, &s->tab, in, o->cfg.state_dir);
	return err ? 1 : 0;
}
