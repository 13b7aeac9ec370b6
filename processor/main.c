/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-processor: the unprivileged consumer of the collector's ring.
 *
 *   1. drop to --user with no capabilities (before connecting: the collector
 *      hands the ring only to its --consumer-uid, checked with SO_PEERCRED)
 *   2. connect to the collector's socket, receive and map the ring
 *   3. install the seccomp allowlist, say "ready"
 *   4. loop: decode every record (untrusted bytes), keep the process table;
 *      watch the control fd (tracer run's end line), the collector socket
 *      (end-of-file: the collector is gone) and SIGTERM/SIGINT
 *   5. run mode: write the JSON report and the summary, exit 0
 *
 * Daemon mode with a config (--config): every record also goes to the
 * durable spool and from there, signed, to the ingest (deliver.c); the
 * ring is released only up to records that are durable; when the
 * collector goes away the processor waits for the next one and attaches
 * to its ring; a status file in the state directory says how delivery
 * stands (tracer status).
 *
 * From step 3 on nothing can be opened: every file descriptor it reads or
 * writes was handed to it on the command line (and checked at start-up) or
 * came from steps 1-2.
 *
 * Before step 1, still root: the rules files, the host's identity (DMI,
 * /proc/meminfo: read_host), daemon mode's host and boot ids, and the
 * host heartbeat's /proc files (heartbeat.c's heartbeat_open): kept open,
 * read again at each beat with lseek and read, which the sandbox allows.
 *
 * This file owns the loop and its wiring: start-up in order (main),
 * attaching to a ring, draining it, signals, housekeeping, the rules files
 * (read at start and on SIGHUP), the status file's figures and the order
 * of the stop. The options and the config are options.c's; the user,
 * Landlock and seccomp confine.c's; the host heartbeat heartbeat.c's; the
 * runs' checkpoint checkpoint.c's; the control fd's end line and the
 * report, summary and run record at the end runend.c's; the status file's
 * format status/'s.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "checkpoint.h"
#include "clock.h"
#include "config.h"
#include "confine.h"
#include "deliver.h"
#include "handover.h"
#include "heartbeat.h"
#include "hostid.h"
#include "lake.h"
#include "live.h"
#include "notify.h"
#include "options.h"
#include "parse.h"
#include "records.h"
#include "redact.h"
#include "report.h"
#include "readfile.h"
#include "ring.h"
#include "runend.h"
#include "runs.h"
#include "session.h"
#include "status.h"
#include "steps.h"
#include "testtrigger.h"
#include "toolrules.h"

#define HANDOVER_TIMEOUT_MS 10000
#define LOOP_WAIT_MS 50                 /* longest sleep before the control fd, socket and signals are looked at */
#define SWEEP_INTERVAL_NS 1000000000ULL /* evict processes that no longer matter, at most this often */
#define END_RECORD_WAIT_NS 10000000000ULL /* after tracer run's end line, how long the collector may take */
#define HEARTBEAT_STALE_NS 10000000000ULL
#define DRAIN_MAX 16384 /* records per batch, so a busy ring cannot delay the control fd and signals */

#define KNOWN_TYPES                                                                                     \
	((1ULL << TR_EXEC) | (1ULL << TR_FORK) | (1ULL << TR_EXIT) | (1ULL << TR_OOM) | (1ULL << TR_CGROUP) | \
	 (1ULL << TR_SAMPLE) | (1ULL << TR_FILE) | (1ULL << TR_COUNTERS) | (1ULL << TR_END))
#define STALL_CHECK_INTERVAL_NS 1000000000ULL
#define RECONNECT_INTERVAL_NS 1000000000ULL /* daemon mode: looking for a (new) collector */
#define STATUS_INTERVAL_NS 1000000000ULL
#define LIVE_INTERVAL_NS 1000000000ULL /* daemon mode: how often the runs are looked at (docs/live.md) */
#define UPLOAD_WAIT_MS 5         /* loop sleep while a transfer is under way: the ring is looked at this often */

/* The loop's state. */
struct loop {
	const struct options *o;
	struct ring_consumer ring;
	int conn_fd;
	int signal_fd;
	bool collector_eof;         /* the handover socket reached end-of-file */
	bool collector_lost;        /* ... before the end record */
	bool interrupted;
	bool stale_warned;
	uint64_t next_sweep;
	uint64_t next_stall_check;
	uint64_t mono_to_real;
	/* daemon mode with delivery */
	struct deliver *dlv;
	bool attached;              /* a ring is mapped */
	uint64_t next_reconnect;
	uint64_t next_status;
	uint64_t next_live;
	bool live;                  /* delivery: runs are found and streamed */
	struct heartbeat beat;      /* daemon mode with delivery: the host heartbeat (heartbeat.h) */
	uint64_t steps_running;     /* running steps of running runs, at the last look at the runs */
	struct run_end end;         /* run mode: tracer run's end line, the report (runend.h) */
	struct checkpoint ckpt;     /* daemon mode: the runs' checkpoint; the ring is released only up to it */
	int status_fd;
	uint64_t attaches;
	struct notify notify;       /* systemd: READY=1, WATCHDOG=1, STOPPING=1 */
};

/* The large, long-lived objects: here rather than on the stack. */
static struct session session;
static struct toolrules tool_rules;
static struct steps steps;
static struct runs runs;
static struct live live;
static struct hostid host; /* read once at start (read_host): constant afterwards */

/* ------------------------------------------------------------------ */
/* Rules files                                                        */
/* ------------------------------------------------------------------ */

/*
 * The whole of a rules file into a new buffer (NUL-terminated), or a negative errno: at most READ_MAX_RULES
 * bytes, the collector's bound too; opened with the flags the sandbox allows for a SIGHUP's reread.
 */
static int read_rules_file(const char *path, char **text, size_t *len)
{
	ssize_t n = read_file_alloc(AT_FDCWD, path, CONFINE_RULES_OPEN_FLAGS, READ_MAX_RULES, text, NULL);

	if (n < 0)
		return (int)n;
	*len = (size_t)n;
	return 0;
}

/*
 * Load (or reload) the tool and redaction rules files. All or nothing per
 * file: a file with an error leaves the rules in use as they were, and the
 * message names the file, the line and what is wrong.
 */
static int load_rules(const struct options *o)
{
	char err[256], *text;
	size_t len = 0;
	int rc, failed = 0;

	if (o->tool_rules_path) {
		rc = read_rules_file(o->tool_rules_path, &text, &len);
		if (rc) {
			fprintf(stderr, "<3>cannot read the tool rules %s: %s\n", o->tool_rules_path, strerror(-rc));
			failed = -1;
		} else {
			rc = toolrules_load_as(&tool_rules, o->tool_rules_path, text, len, err, sizeof(err));
			if (rc)
				fprintf(stderr, "<3>%s (the tool rules in use are unchanged)\n", err);
			failed |= rc;
			free(text);
		}
	}
	if (o->redact_rules_path) {
		struct redact_rules r;

		redact_rules_init(&r);
		rc = read_rules_file(o->redact_rules_path, &text, &len);
		if (rc) {
			fprintf(stderr, "<3>cannot read the redaction rules %s: %s\n", o->redact_rules_path, strerror(-rc));
			failed = -1;
		} else {
			rc = redact_rules_load(&r, text, len, err, sizeof(err));
			if (rc)
				fprintf(stderr, "<3>%s: %s (the redaction rules in use are unchanged)\n", o->redact_rules_path,
					err);
			else
				session.tab.redact = r;
			failed |= rc;
			free(text);
		}
	}
	return failed ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* The host                                                           */
/* ------------------------------------------------------------------ */

/*
 * What the host is (hostid.h), for every report and live record: read
 * before the sandbox, as root (some DMI files are root's alone), then the
 * config's keys over it. Nothing here stops the processor: what cannot be
 * read is unknown.
 */
static void read_host(const struct options *o)
{
	char price[HOSTID_PRICE_TEXT_MAX];
	int rc = hostid_read(HOSTID_DMI_DIR, &host);

	hostid_read_size(HOSTID_MEMINFO, &host);
	hostid_read_name(&host);
	hostid_apply_config(&host, &o->cfg);
	hostid_price_text(&host, price);
	fprintf(stderr, "<6>host: %s, cloud %s%s, instance type %s%s, instance %s, region %s, %u CPUs, %llu MiB, "
			"price per hour %s%s\n",
		host.name[0] ? host.name : "name unknown", host.cloud[0] ? host.cloud : "unknown",
		host.cloud_from == HOSTID_FROM_CONFIG ? " (config)" : rc ? " (no DMI at " HOSTID_DMI_DIR ")" : "",
		host.instance_type[0] ? host.instance_type : "unknown",
		host.instance_type_from == HOSTID_FROM_CONFIG ? " (config)" : "",
		host.instance_id[0] ? host.instance_id : "unknown", host.region[0] ? host.region : "unknown",
		(unsigned)host.cpus, (unsigned long long)(host.memory_bytes >> 20), price[0] ? "$" : "unknown", price);
}

/* ------------------------------------------------------------------ */
/* The host heartbeat                                                 */
/* ------------------------------------------------------------------ */

/* Live runs: those still running (ended ones are gone after their last record). */
static uint64_t runs_running(void)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < runs.high; i++)
		n += runs.v[i].used && runs.v[i].state == RUN_RUNNING;
	return n;
}

/*
 * Steps of running runs with a process running, from the steps the look
 * at the runs just built (live_cycle(): the table has not changed since).
 */
static uint64_t steps_running(void)
{
	uint64_t n = 0;

	if (!runs.live)
		return 0; /* no run: live_cycle() built nothing, the steps are an earlier look's */
	for (uint32_t i = 0; i < steps.n; i++) {
		const struct step *st = &steps.v[i];
		const struct run *r = st->running && st->main ? runs_of(&runs, st->main) : NULL;

		n += r && r->state == RUN_RUNNING;
	}
	return n;
}

/* Processes tracked that have not exited. */
static uint64_t processes_live(void)
{
	uint64_t n = 0;

	for (const struct proc *p = proctab_next(&session.tab, NULL); p; p = proctab_next(&session.tab, p))
		n += !(p->flags & PROC_F_EXIT);
	return n;
}

/* One TL_HOST record: the host from the previous reading to now. */
static void send_beat(struct loop *l, uint64_t now)
{
	struct heartbeat_figures f = {
		.runs = runs_running(), .steps = l->steps_running, .processes = processes_live(), .host = &host,
	};
	int rc = heartbeat_send(&l->beat, now, &f, l->dlv);

	if (rc) {
		fprintf(stderr, "<2>the spool failed (%s): stopping; what is in the ring stays there for the next "
				"start\n", strerror(-rc));
		l->interrupted = true;
	}
}

/* Every heartbeat_interval of the loop's clock, collector or not, runs or not: one TL_HOST record. */
static void heartbeat(struct loop *l, uint64_t now)
{
	if (l->dlv && !l->interrupted && heartbeat_due(&l->beat, now))
		send_beat(l, now);
}

/* At a stop (a signal, the collector's end): the beat of the interval so far. */
static void heartbeat_last(struct loop *l, uint64_t now)
{
	if (l->dlv && heartbeat_last_due(&l->beat, now))
		send_beat(l, now);
}

/* ------------------------------------------------------------------ */
/* Start-up: attach                                                   */
/* ------------------------------------------------------------------ */

/* quiet: a daemon looking for its collector says why only the first time. */
static int attach(struct loop *l, bool quiet)
{
	int err;

	l->conn_fd = handover_connect(l->o->socket_path);
	if (l->conn_fd < 0) {
		if (!quiet)
			fprintf(stderr, "<3>cannot connect to the collector at %s: %s (is tracer-collector running, and "
					"can this user reach the socket's directory?)%s\n",
				l->o->socket_path, strerror(-l->conn_fd), l->dlv ? "; trying again every second" : "");
		return -1;
	}
	err = ring_handover_recv(l->conn_fd, &l->ring, l->o->producer_uid, KNOWN_TYPES, HANDOVER_TIMEOUT_MS);
	if (err) {
		close(l->conn_fd);
		l->conn_fd = -1;
	}
	if (err && quiet)
		return -1;
	if (err == -EPERM)
		fprintf(stderr, "<3>the socket %s is not served by uid %u: pass the collector's uid with --producer-uid\n",
			l->o->socket_path, (unsigned)l->o->producer_uid);
	else if (err == -ECONNRESET)
		fprintf(stderr, "<3>the collector at %s closed the connection without a ring: it serves only its "
				"--consumer-uid, and we run as uid %u\n", l->o->socket_path, (unsigned)getuid());
	else if (err)
		fprintf(stderr, "<3>no ring from the collector at %s: %s\n", l->o->socket_path, strerror(-err));
	if (err)
		return -1;
	l->attached = true;
	l->collector_eof = false;
	l->attaches++;
	return 0;
}

/* SIGTERM, SIGINT and SIGHUP through a signalfd the loop polls; SIGPIPE ignored (EPIPE instead). */
static int setup_signals(struct loop *l)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	l->signal_fd = -1;
	if (sigprocmask(SIG_BLOCK, &mask, NULL) == 0)
		l->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (l->signal_fd < 0) {
		fprintf(stderr, "<3>cannot set up signal handling: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The loop                                                           */
/* ------------------------------------------------------------------ */

static void log_exit(const struct proc *p)
{
	char tool[TOOL_NAME_MAX];
	const char *t = p->image ? proc_image_tool(p->image) : p->comm;
	uint32_t raw = p->exit.exit_code;

	report_safe_text(tool, sizeof(tool), t);
	fprintf(stderr, "<7>exit pid=%u ppid=%u tool=%s status=%u signal=%u cpu_ns=%llu maxrss=%llu\n",
		(unsigned)p->tgid, (unsigned)p->ppid, tool, decode_exit_status(raw), decode_exit_signal(raw),
		(unsigned long long)p->exit.runtime_ns, (unsigned long long)p->exit.maxrss_bytes);
}

/*
 * Daemon mode: the ring goes only as far as the runs' checkpoint includes
 * (a record that starts a run must not be released before a checkpoint
 * holds the run). With no run, a checkpoint is only a position (checkpoint_save()).
 */
static bool ckpt_holds_ring(const struct loop *l)
{
	return l->live && !l->o->root_pid && !l->ckpt.failed;
}

/* How far the newest checkpoint lets the ring go: what it includes, or what is released already. */
static uint64_t ckpt_barrier(const struct loop *l)
{
	return checkpoint_barrier(&l->ckpt, l->ring.generation,
				  __atomic_load_n(&l->ring.cpage->consumer_pos, __ATOMIC_RELAXED));
}

static void live_housekeeping(struct loop *l, uint64_t now);

/*
 * Release what may be released: everything read, or with delivery only
 * what is durable - and, while runs are followed, only what the runs'
 * checkpoint includes, so that a restarted processor finds every record
 * after its checkpoint still in the ring.
 */
static void release(struct loop *l)
{
	uint64_t pos;

	if (!l->dlv) {
		ring_release(&l->ring);
		return;
	}
	pos = deliver_release_pos(l->dlv);
	if (ckpt_holds_ring(l)) {
		uint64_t barrier = ckpt_barrier(l);

		pos = pos < barrier ? pos : barrier;
	}
	ring_release_to(&l->ring, pos);
}

/* A loss marker, for the lake: records that never reached us. */
static int deliver_ring_loss(struct loop *l, const struct ring_lost *lost)
{
	struct tl_loss x = { .reason = TL_LOSS_RING, .records = lost->count };

	return deliver_own_record(l->dlv, TL_LOSS, &x, sizeof(x));
}

/* One record to the spool (daemon mode with delivery). A spool that fails is fatal: -1. */
static int deliver_one(struct loop *l, const struct ring_view *v, int decoded)
{
	int rc = 0;

	if (v->type == RING_REC_LOST)
		rc = deliver_ring_loss(l, &v->lost);
	else if (v->type >= RING_REC_FIRST_USER && decoded == 0)
		rc = deliver_kernel_record(l->dlv, &session.tab.redact, &session.dec, v->len,
					   (uint32_t)l->ring.generation, v->pos);
	if (rc) {
		fprintf(stderr, "<2>the spool failed (%s): stopping; what is in the ring stays there for the next "
				"start\n", strerror(-rc));
		l->interrupted = true;
		return -1;
	}
	return 0;
}

/* Read every record the ring has. Returns how many. */
static size_t drain(struct loop *l)
{
	struct ring_view v;
	size_t n = 0;
	int rc;

	if (!l->attached)
		return 0;
	while (n < DRAIN_MAX && (rc = ring_next(&l->ring, &v)) != 0) {
		struct proc *exited = NULL;
		int dec = -1;

		n++;
		if (rc < 0) /* a corrupt ring: counted in ring.resets, the consumer skipped ahead */
			continue;
		if (v.type >= RING_REC_FIRST_USER && checkpoint_includes(&l->ckpt, l->ring.generation, v.pos)) {
			dec = decode_record(&session.dec, v.type, v.payload, v.len) ? -1 : 0; /* in the checkpoint */
		} else if (v.type >= RING_REC_FIRST_USER) { /* loss markers: summed in ring.lost_total */
			uint64_t refused = session.st.decode_errors;

			session_record(&session, v.type, v.payload, v.len, &exited);
			dec = session.st.decode_errors == refused ? 0 : -1; /* a full table still delivers */
		}
		if (l->dlv && deliver_one(l, &v, dec))
			return n; /* not marked, not released: the record stays in the ring for the next start */
		if (exited && !l->o->root_pid && !l->dlv)
			log_exit(exited);
		if ((n & 1023) == 0) {
			if (l->dlv)
				deliver_mark(l->dlv, l->ring.pos);
			release(l); /* let the collector reuse space during long batches */
		}
	}
	if (l->dlv)
		deliver_mark(l->dlv, l->ring.pos);
	release(l);
	return n;
}

static void read_signal(struct loop *l)
{
	struct signalfd_siginfo si;

	if (read(l->signal_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		/* Later execs are named and redacted by the new rules; what was kept stays as it was. */
		if (load_rules(l->o) == 0 && (l->o->tool_rules_path || l->o->redact_rules_path))
			fprintf(stderr, "<6>SIGHUP: rules reloaded\n");
		return;
	}
	fprintf(stderr, "<5>signal %u: writing what we have and stopping\n", si.ssi_signo);
	l->interrupted = true;
}

/* The collector's connection: it sends nothing after the handover, so readable means end-of-file. */
static void read_collector(struct loop *l)
{
	char buf[64];
	ssize_t n = read(l->conn_fd, buf, sizeof(buf));

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		l->collector_eof = true;
}

static void poll_fds(struct loop *l)
{
	struct pollfd p[3] = {
		{ .fd = l->signal_fd, .events = POLLIN },
		{ .fd = l->collector_eof ? -1 : l->conn_fd, .events = POLLIN },
		{ .fd = l->end.control_open ? l->end.control_fd : -1, .events = POLLIN },
	};

	if (poll(p, 3, 0) <= 0)
		return;
	if (p[0].revents)
		read_signal(l);
	if (p[1].revents)
		read_collector(l);
	if (p[2].revents)
		run_end_read_control(&l->end);
}

static bool finished(struct loop *l)
{
	uint64_t now = mono_ns();

	if (l->dlv && !l->o->root_pid) /* a daemon: only a signal stops it; collectors come and go */
		return l->interrupted;

	bool source_done = session.st.end_seen || l->collector_eof;
	bool control_done = !l->o->root_pid || !l->end.control_open || l->end.ended;

	if (l->interrupted)
		return true;
	if (l->end.ended && !source_done && now > l->end.end_at + END_RECORD_WAIT_NS) {
		fprintf(stderr, "<4>no end record from the collector %llu s after the command ended: "
				"reporting without it\n", END_RECORD_WAIT_NS / 1000000000ULL);
		return true;
	}
	return source_done && control_done;
}

/*
 * Say so as soon as a process stalls, not only in the report: live
 * processes without progress for --stall-after, that are not waiting for
 * a live child of their own (the child is the one to look at). Once each.
 */
static void warn_stalls(uint64_t now)
{
	struct proctab *t = &session.tab;
	bool *has_child = calloc(t->high_water ? t->high_water : 1, sizeof(*has_child));

	if (!has_child)
		return;
	if (t->root_pid)
		proctab_mark_tree(t);
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		struct proc *parent = (p->flags & PROC_F_EXIT) ? NULL : proctab_parent(t, p);

		if (parent)
			has_child[parent - t->procs] = true;
	}
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		char tool[TOOL_NAME_MAX];

		if ((t->root_pid && !p->in_tree) || (p->flags & PROC_F_STALL_WARNED) || has_child[p - t->procs] ||
		    !proctab_stalled_now(t, p, now))
			continue;
		p->flags |= PROC_F_STALL_WARNED;
		report_safe_text(tool, sizeof(tool), p->image ? proc_image_tool(p->image) : p->comm);
		fprintf(stderr, "<4>stalled: pid %u (%s) has made no CPU or I/O progress for %llu s\n", (unsigned)p->tgid,
			tool, (unsigned long long)((now - p->progress_ts_ns) / 1000000000ULL));
	}
	free(has_child);
}

/*
 * The collector went away (end-of-file on its socket): once its ring is
 * drained and what came from it is durable, let it go and look for the
 * next collector every second. A new collector means a new ring (a new
 * generation); the released position of the old one means nothing there.
 */
static void reattach(struct loop *l, uint64_t now)
{
	if (l->attached && l->collector_eof) {
		if (ring_consumer_producer_pos(&l->ring) != l->ring.pos)
			return; /* still records to read */
		if (deliver_sync(l->dlv)) {
			l->interrupted = true;
			return;
		}
		release(l);
		fprintf(stderr, "<5>the collector has gone (%llu records read from its ring): waiting for the next one\n",
			(unsigned long long)l->ring.records);
		ring_consumer_detach(&l->ring);
		close(l->conn_fd);
		l->conn_fd = -1;
		l->attached = false;
		l->next_reconnect = now;
	}
	if (l->attached || now < l->next_reconnect)
		return;
	l->next_reconnect = now + RECONNECT_INTERVAL_NS;
	if (attach(l, true))
		return;
	session.st.end_seen = false;
	deliver_mark(l->dlv, l->ring.pos); /* nothing of this ring before its resume position is ours to hold */
	fprintf(stderr, "<6>attached to the collector's ring (generation %016llx, from position %llu)\n",
		(unsigned long long)l->ring.generation, (unsigned long long)l->ring.pos);
}

/* Counters of delivery, for `tracer status` (status/status.h): the whole file rewritten in place, once a second. */
static void write_status(struct loop *l, uint64_t now)
{
	struct status st;
	struct deliver_stats ds;
	struct spool_stats ss;
	struct upload_stats us;
	int rc;

	if (l->status_fd < 0)
		return;
	deliver_get_stats(l->dlv, &ds, &ss, &us);
	memset(&st, 0, sizeof(st));
	st.time_ns = now + l->mono_to_real;
	st.pid = (uint64_t)getpid();
	st.ring.attached = l->attached;
	st.ring.attaches = l->attaches;
	st.ring.generation = l->attached ? l->ring.generation : 0;
	st.ring.records = session.st.records;
	st.ring.lost = l->attached ? l->ring.lost_total : 0;
	st.ring.released_pos = ds.released_pos;
	st.spool.next_seq = ss.next_seq;
	st.spool.durable_seq = ss.durable_seq;
	st.spool.acked_seq = ss.acked_seq;
	st.spool.segments = ss.segments;
	st.spool.bytes_on_disk = ss.bytes_on_disk;
	st.spool.records_appended = ss.records_appended;
	st.spool.fsyncs = ss.fsyncs;
	st.spool.records_skipped_after_restart = ds.records_skipped;
	st.spool.evicted_records = ss.ledger.evicted_records;
	st.spool.evicted_bytes = ss.ledger.evicted_bytes;
	st.spool.corrupt_frames = ss.ledger.corrupt_frames;
	st.spool.torn_bytes = ss.ledger.torn_bytes;
	st.spool.ledger_resets = ss.ledger.ledger_resets;
	st.spool.quarantined_batches = ss.ledger.quarantined_batches;
	st.spool.quarantined_records = ss.ledger.quarantined_records;
	st.spool.recovery_ns = ss.recovery_ns;
	st.upload.enabled = l->o->cfg.upload_url[0] != 0;
	snprintf(st.upload.url, sizeof(st.upload.url), "%s", l->o->cfg.upload_url);
	snprintf(st.upload.url_in_use, sizeof(st.upload.url_in_use), "%s", us.url_in_use ? us.url_in_use : "");
	snprintf(st.upload.failed_url, sizeof(st.upload.failed_url), "%s", us.failed_url ? us.failed_url : "");
	st.upload.failovers = us.failovers;
	st.upload.batches_acked = us.batches_acked;
	st.upload.records_acked = us.records_acked;
	st.upload.bytes_sent = us.bytes_sent;
	st.upload.attempts = us.attempts;
	st.upload.retries = us.retries;
	st.upload.http_4xx = us.http_4xx;
	st.upload.http_5xx = us.http_5xx;
	st.upload.net_errors = us.net_errors;
	st.upload.last_http_status = (uint64_t)(us.last_http_status > 0 ? us.last_http_status : 0);
	snprintf(st.upload.last_error, sizeof(st.upload.last_error), "%s", us.last_error);
	st.upload.pending_records = ss.durable_seq > us.acked_seq ? ss.durable_seq - us.acked_seq : 0;
	st.heartbeat.beats = l->beat.sent;
	rc = status_write(l->status_fd, &st);
	if (rc)
		fprintf(stderr, "<4>cannot write the status file: %s\n", strerror(-rc));
}

static void delivery_housekeeping(struct loop *l, uint64_t now)
{
	int rc = deliver_poll(l->dlv, now);

	if (rc) {
		fprintf(stderr, "<2>delivery failed (%s): stopping; what is in the ring stays there for the next start\n",
			strerror(-rc));
		l->interrupted = true;
		return;
	}
	/* Half the ring waits for the group commit: commit now rather than let the collector drop. */
	if (l->attached && l->ring.pos - __atomic_load_n(&l->ring.cpage->consumer_pos, __ATOMIC_RELAXED) > l->ring.size / 2 &&
	    deliver_sync(l->dlv)) {
		l->interrupted = true;
		return;
	}
	/* Half the ring waits for the runs' checkpoint: write it now (after the spool, whose records it counts). */
	if (l->attached && ckpt_holds_ring(l) && l->ring.pos - ckpt_barrier(l) > l->ring.size / 2) {
		l->next_live = 0;
		live_housekeeping(l, now); /* decides the new processes' runs first: the checkpoint must hold them */
		if (l->interrupted)
			return;
	}
	if (l->attached)
		release(l);
	if (!l->o->root_pid)
		reattach(l, now);
	if (now >= l->next_status) {
		write_status(l, now);
		l->next_status = now + STATUS_INTERVAL_NS;
	}
}

/* This boot's id in hex (the first part of run keys), read before the sandbox; "0" if unreadable. */
static const char *boot_hex(void)
{
	static char hex[2 * BATCH_BOOT_ID_LEN + 1];
	uint8_t id[BATCH_BOOT_ID_LEN];

	if (batch_read_id_file(BATCH_BOOT_ID_PATH, id))
		return "0";
	sodium_bin2hex(hex, sizeof(hex), id, sizeof(id));
	return hex;
}

/* A live record of a run, to the spool. */
static int emit_live(void *ctx, uint16_t type, const void *payload, uint32_t len)
{
	struct loop *l = ctx;

	return deliver_own_record(l->dlv, type, payload, len);
}

static void live_housekeeping(struct loop *l, uint64_t now)
{
	int rc;

	uint64_t records_before = live.records;

	if (!l->live || !l->dlv || now < l->next_live)
		return;
	l->next_live = now + LIVE_INTERVAL_NS;
	rc = live_cycle(&live, &session, &steps, &runs, now);
	if (rc) {
		fprintf(stderr, "<2>the spool failed (%s): stopping; what is in the ring stays there for the next "
				"start\n", strerror(-rc));
		l->interrupted = true;
		return;
	}
	/*
	 * The checkpoint says what was sent (attribution, signals): what the live
	 * records just appended must be durable first, or a crash between the two
	 * would lose records the checkpoint counts as sent.
	 */
	if (!l->o->root_pid && live.records != records_before && deliver_sync(l->dlv)) {
		fprintf(stderr, "<2>the spool failed: stopping; what is in the ring stays there for the next start\n");
		l->interrupted = true;
		return;
	}
	if (!l->o->root_pid) {
		l->steps_running = steps_running();
		checkpoint_save(&l->ckpt, &runs, &session.tab, l->attached, l->ring.generation, l->ring.pos);
	}
}

static void housekeeping(struct loop *l, uint64_t now)
{
	uint64_t hb = l->attached ? ring_consumer_peer_heartbeat(&l->ring) : now;

	notify_watchdog(&l->notify, now);
	if (l->dlv)
		delivery_housekeeping(l, now);
	heartbeat(l, now); /* with no collector too: the host still is */
	if (!l->attached)
		return;
	ring_consumer_heartbeat(&l->ring, now);
	live_housekeeping(l, now); /* before the sweep: it says which exited processes runs still need */
	if (now >= l->next_sweep) {
		proctab_sweep(&session.tab);
		l->next_sweep = now + SWEEP_INTERVAL_NS;
	}
	if (now >= l->next_stall_check) {
		warn_stalls(now);
		l->next_stall_check = now + STALL_CHECK_INTERVAL_NS;
	}
	if (!l->stale_warned && !session.st.end_seen && ring_heartbeat_stale(hb, now, HEARTBEAT_STALE_NS)) {
		fprintf(stderr, "<4>the collector's heartbeat is more than %llu s old: it may be stuck\n",
			HEARTBEAT_STALE_NS / 1000000000ULL);
		l->stale_warned = true;
	}
}

static void run_loop(struct loop *l)
{
	for (;;) {
		size_t n = drain(l);

		housekeeping(l, mono_ns());
		poll_fds(l);
		if (finished(l))
			break;
		if (n == 0 && l->dlv && deliver_busy(l->dlv))
			deliver_wait(l->dlv, UPLOAD_WAIT_MS); /* curl's sockets; the ring is looked at again soon */
		else if (n == 0 && l->attached && !l->collector_eof)
			ring_wait(&l->ring, LOOP_WAIT_MS);
		else if (n == 0)
			poll(NULL, 0, LOOP_WAIT_MS); /* the collector is gone: only the control fd can still change */
	}
	/* Whatever arrived while deciding to stop. */
	drain(l);
	l->collector_lost = !session.st.end_seen && l->collector_eof;
	if (l->collector_lost)
		fprintf(stderr, "<4>the collector went away without its end record: the trace may be incomplete\n");
}

/* ------------------------------------------------------------------ */
/* The end                                                            */
/* ------------------------------------------------------------------ */

static void fill_report_input(struct loop *l, struct report_input *in)
{
	const struct ring_consumer *c = &l->ring;
	/* A daemon whose collector has gone has no ring mapped: its counts are in what was decoded. */
	uint64_t hdr_drops = l->attached ? __atomic_load_n(&c->hdr->drops_total, __ATOMIC_RELAXED) : 0;

	run_end_input(&l->end, l->o, &session.tab.redact, in);
	in->mono_to_real_ns = l->mono_to_real;
	in->cgroups = &session.cgroups;
	in->host = &host;
	/*
	 * Ring losses: the in-band markers, or the producer's own totals when
	 * they say more (drops not yet reported in-band when it stopped).
	 */
	in->agent.ring_drops = c->lost_total > hdr_drops ? c->lost_total : hdr_drops;
	in->agent.ring_resets = c->resets;
	in->agent.ring_bytes_discarded = c->bytes_discarded;
	report_agent_from_session(&in->agent, &session);
	in->agent.collector_lost = l->collector_lost;
	in->agent.interrupted = l->interrupted;
}

/* Delivery is over: what is durable released, the last status file, the spool and the uploader closed. */
static void delivery_close(struct loop *l)
{
	if (l->attached)
		release(l);
	write_status(l, mono_ns());
	deliver_close(l->dlv);
	l->dlv = NULL;
}

static int finish(struct loop *l)
{
	struct report_input in;
	int err = 0;

	notify_send(&l->notify, "STOPPING=1");
	if (l->dlv && !l->o->root_pid) {
		l->next_live = 0;
		live_housekeeping(l, mono_ns()); /* the runs as they stand now, and their checkpoint */
		heartbeat_last(l, mono_ns());
		/* Durable before we go: what was read and not released stays in the ring anyway. */
		if (deliver_sync(l->dlv) == 0 && l->attached)
			release(l);
		write_status(l, mono_ns());
		deliver_close(l->dlv);
		l->dlv = NULL;
	}

	if (l->dlv && l->o->root_pid) {
		l->next_live = 0;
		live_housekeeping(l, mono_ns()); /* the run's last live record: ended, or as far as it got */
	}
	fill_report_input(l, &in);
	if (l->o->root_pid) {
		err = run_end_report(&l->end, l->o, &session, &steps, &runs, &in, l->dlv);
		if (l->dlv)
			delivery_close(l);
	}
	fprintf(stderr, "<6>stopping: %llu records, %llu lost, %u processes tracked\n",
		(unsigned long long)in.agent.records, (unsigned long long)report_dropped(&in.agent),
		(unsigned)session.tab.used);
	return err ? 1 : 0;
}

_Static_assert(CONFIG_URLS_MAX == UPLOAD_URLS_MAX, "the uploader takes every URL upload_url may name");

/*
 * Before dropping privileges: libcurl's global set-up, this host's and
 * this boot's ids (the batch header names them), the spool's place.
 */
static int delivery_prepare(struct options *o, struct deliver_options *d)
{
	static char spool_dir[PATH_MAX + 16];
	static char urls[CONFIG_URL_MAX];
	const struct tracer_config *c = &o->cfg;
	int rc;

	memset(d, 0, sizeof(*d));
	if (upload_global_init()) {
		fprintf(stderr, "<3>libcurl or libsodium failed to initialise\n");
		return -1;
	}
	if (c->host_id[0]) {
		size_t n;

		if (sodium_hex2bin(d->id.host_id, sizeof(d->id.host_id), c->host_id, strlen(c->host_id), NULL, &n, NULL) ||
		    n != sizeof(d->id.host_id))
			return -1; /* config.c validated it: cannot happen */
	} else if ((rc = batch_read_id_file(BATCH_MACHINE_ID_PATH, d->id.host_id)) != 0) {
		fprintf(stderr, "<3>cannot read this host's id from %s (%s): set host_id in the config\n",
			BATCH_MACHINE_ID_PATH, strerror(-rc));
		return -1;
	}
	rc = batch_read_id_file(BATCH_BOOT_ID_PATH, d->id.boot_id);
	if (rc) {
		fprintf(stderr, "<3>cannot read the boot id from %s: %s\n", BATCH_BOOT_ID_PATH, strerror(-rc));
		return -1;
	}
	snprintf(spool_dir, sizeof(spool_dir), "%s/spool", c->state_dir);
	d->spool = (struct spool_config){
		.dir = spool_dir,
		.segment_bytes = c->segment_size,
		.segment_age_ns = c->segment_age_ns,
		.fsync_interval_ns = c->fsync_interval_ns,
		.quota_bytes = c->spool_quota,
	};
	memcpy(d->spool.host_id, d->id.host_id, sizeof(d->spool.host_id));
	d->key_path = c->signing_key;
	d->next_key_path = c->signing_key_next;
	d->up = (struct upload_config){
		.ca_file = c->ca_file[0] ? c->ca_file : NULL,
		.client_cert = c->client_cert[0] ? c->client_cert : NULL,
		.client_key = c->client_key[0] ? c->client_key : NULL,
		.tls_verify = c->tls_verify,
		.connect_timeout_ns = c->connect_timeout_ns,
		.transfer_timeout_ns = c->transfer_timeout_ns,
		.retry_max_ns = c->retry_max_ns,
		.batch_records = c->batch_records,
		.batch_interval_ns = c->batch_interval_ns,
		.compression = BATCH_COMP_ZLIB,
	};
	d->up.nurls = config_url_split(c->upload_url, urls, d->up.urls);
	d->upload = d->up.nurls != 0;
	return 0;
}

/* As the processor's user: the spool (recovery), the uploader, the status file. */
static int delivery_start(struct loop *l, struct deliver_options *d)
{
	char path[PATH_MAX + 16];
	uint32_t gen;
	uint64_t pos;

	d->up.mono_to_real_ns = (int64_t)l->mono_to_real;
	d->seed = mono_ns() ^ (uint64_t)getpid() << 32;
	if (deliver_open(&l->dlv, d))
		return -1;
	snprintf(path, sizeof(path), "%s/" STATUS_FILE, l->o->cfg.state_dir);
	l->status_fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (l->status_fd < 0)
		fprintf(stderr, "<4>cannot write the status file %s: %s (tracer status will not see this processor)\n",
			path, strerror(errno));
	checkpoint_init(&l->ckpt, l->o->cfg.state_dir);
	if (l->live && !l->o->root_pid)
		checkpoint_load(&l->ckpt, &runs, &session.tab);
	if (deliver_resume_point(l->dlv, &gen, &pos))
		fprintf(stderr, "<6>the spool holds records up to ring generation %08x position %llu: those are "
				"not spooled again\n", (unsigned)gen, (unsigned long long)pos);
	return 0;
}

/*
 * tracer run --config on a host where the daemons run: their processor
 * streams this run already (the command of a `tracer run` is a run,
 * docs/live.md), and a second sender with this host's id would number its
 * records from its own spool, clashing with theirs in the lake. The
 * daemons' collector socket in runtime_dir says they are there.
 */
static bool daemons_deliver(const struct options *o)
{
	char path[PATH_MAX + 32];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/collector.sock", o->cfg.runtime_dir);
	if (stat(path, &sb) || !S_ISSOCK(sb.st_mode))
		return false;
	fprintf(stderr, "<5>the daemons deliver on this host (%s): they send this run to the lake, so this tracer run "
			"does not (if no tracer-collector runs, remove that socket)\n", path);
	return true;
}

int main(int argc, char **argv)
{
	static struct loop loop;
	struct deliver_options dopt;
	struct options o;
	uint64_t seed = 0;

	if (options_parse(argc, argv, &o))
		return 2;
	if (options_check_fds(&o))
		return 1;
	loop = (struct loop){ .o = &o, .conn_fd = -1, .signal_fd = -1, .status_fd = -1 };
	run_end_init(&loop.end, o.control_fd);
	loop.mono_to_real = mono_to_real_ns();
	if (!o.start_ns_set)
		o.start_ns = real_ns();
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = mono_ns();
	if (session_init(&session, o.max_processes, o.root_pid, seed)) {
		fprintf(stderr, "<3>cannot allocate a table of %u processes: lower --max-processes\n", o.max_processes);
		return 1;
	}
	session.tab.stall_after_ns = o.stall_after_ns;
	toolrules_init(&tool_rules);
	session.tab.tool_rules = &tool_rules;
	if (steps_init(&steps, 0, seed) || load_rules(&o))
		return 1;
	read_host(&o);
	if (o.delivery && o.root_pid && daemons_deliver(&o))
		o.delivery = false;
	heartbeat_init(&loop.beat);
	if (o.delivery && !o.root_pid)
		heartbeat_open(&loop.beat, o.cfg.heartbeat_interval_ns, loop.mono_to_real, mono_ns());
	if (o.delivery && delivery_prepare(&o, &dopt))
		return 1;
	runs_init(&runs, boot_hex());
	if (o.delivery) {
		live_init(&live);
		live.mono_to_real_ns = loop.mono_to_real;
		live.io_wait_after_ns = o.io_wait_after_ns;
		live.net_wait_after_ns = o.net_wait_after_ns;
		live.host = &host;
		live.emit = emit_live;
		live.emit_ctx = &loop;
		session.tab.on_evict = runs_on_evict;
		session.tab.evict_ctx = &runs;
		loop.live = true;
	}
	if (notify_open(&loop.notify) < 0)
		return 1;
	/* Privileges go first, then the spool and the ring, then every system call the loop does not need. */
	if (setup_signals(&loop) || confine_user(&o))
		return 1;
	if (o.delivery && delivery_start(&loop, &dopt))
		return 1;
	if (attach(&loop, false) && !o.delivery)
		return 1;
	if (confine(&o))
		return 1;
	TEST_TRIGGER("tracer-processor", CONFINE_RULES_OPEN_FLAGS);
	if (o.ready_fd >= 0 && (write(o.ready_fd, "ready\n", 6) != 6 || close(o.ready_fd)))
		fprintf(stderr, "<4>cannot report readiness on fd %d: %s\n", o.ready_fd, strerror(errno));
	notify_send(&loop.notify, "READY=1");
	fprintf(stderr, "<6>processing: ring %llu KiB, up to %u processes, %s%s%s\n",
		(unsigned long long)(loop.ring.size >> 10), o.max_processes,
		o.root_pid ? "run mode" : "daemon mode", o.delivery ? ", spooling in " : "",
		o.delivery ? o.cfg.state_dir : "");
	run_loop(&loop);
	return finish(&loop);
}
