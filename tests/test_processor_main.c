/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-processor as a whole, under its real sandbox: this test plays the
 * collector (a real ring, handed over on a real socket) and tracer run (the
 * report, summary, ready and control descriptors), and checks what the
 * processor writes and how it ends. A processor that made a system call
 * outside its seccomp allowlist would die of SIGSYS and fail these tests.
 *
 * Daemon mode with a spool (--set state_dir=...): the host heartbeat
 * (TL_HOST) reaches the spool every heartbeat_interval, read back with the
 * spool's own reader once the status file's heartbeat.beats says enough.
 *
 * Nothing here sleeps in place of a condition: the tests wait on the ring's
 * consumer position or the status file, up to 30 s (ASan on a busy host).
 *
 * As root the processor runs as nobody, as tracer run starts it; otherwise
 * as the caller. Needs BUILD/tracer-processor (make all): skips without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon_harness.h"
#include "decode.h"
#include "encode.h"
#include "frame.h"
#include "handover.h"
#include "json_parse.h"
#include "lake.h"
#include "ring.h"
#include "skip.h"
#include "spool.h"
#include "status.h"

#define NOBODY 65534
#define ROOT_PID 4242
#define WAIT_MS 20000
#define CONDITION_WAIT_NS (30ULL * 1000000000ULL) /* the longest wait for a condition: ASan on a busy machine */
#define CONDITION_POLL_US 1000

static char processor_bin[PATH_MAX];

struct harness {
	char dir[64], sock[128];
	struct ring_producer p;
	bool producer_live;
	int lfd, conn;
	int report_fd, summary_fd, stderr_fd;
	int ready_r, control_w;
	pid_t pid;
	uid_t consumer_uid;
};

/* ---- helpers ---------------------------------------------------------- */

static void dump_stderr(const struct harness *h)
{
	char *e = daemon_read_fd(h->stderr_fd);

	fprintf(stderr, "--- processor stderr ---\n%s------------------------\n", e);
	free(e);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Start the processor with the standard run-mode options plus extra ones (NULL-terminated). */
static void harness_start(struct harness *h, bool run_mode, const char *const *extra)
{
	struct daemon_io io = DAEMON_IO;
	int ready[2], control[2];
	char uid[16], root[16], start[24], rep[16], sum[16], rdy[16], ctl[16];
	const char *argv[40];
	size_t n = 0;

	memset(h, 0, sizeof(*h));
	h->conn = -1;
	snprintf(h->dir, sizeof(h->dir), "/tmp/tracer-proc-test-XXXXXX");
	assert_non_null(mkdtemp(h->dir));
	assert_int_equal(chmod(h->dir, 0755), 0); /* nobody must reach the socket */
	snprintf(h->sock, sizeof(h->sock), "%s/c.sock", h->dir);
	h->lfd = handover_listen(h->sock, 0666);
	assert_true(h->lfd >= 0);
	assert_int_equal(ring_producer_create(&h->p, 16, 99), 0);
	h->producer_live = true;
	h->report_fd = memfd_create("report", 0);
	h->summary_fd = memfd_create("summary", 0);
	h->stderr_fd = memfd_create("stderr", MFD_CLOEXEC);
	assert_true(h->report_fd >= 0 && h->summary_fd >= 0 && h->stderr_fd >= 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(control, O_CLOEXEC), 0);
	h->consumer_uid = geteuid() == 0 ? NOBODY : geteuid();
	snprintf(uid, sizeof(uid), "%u", (unsigned)h->consumer_uid);
	snprintf(root, sizeof(root), "%d", ROOT_PID);
	snprintf(start, sizeof(start), "%llu", (unsigned long long)realtime_ns());
	snprintf(rep, sizeof(rep), "%d", h->report_fd);
	snprintf(sum, sizeof(sum), "%d", h->summary_fd);
	snprintf(rdy, sizeof(rdy), "%d", ready[1]);
	snprintf(ctl, sizeof(ctl), "%d", control[0]);
	argv[n++] = processor_bin;
	argv[n++] = "--socket";
	argv[n++] = h->sock;
	argv[n++] = "--producer-uid";
	argv[n++] = geteuid() == 0 ? "0" : uid;
	argv[n++] = "--user";
	argv[n++] = uid;
	argv[n++] = "--ready-fd";
	argv[n++] = rdy;
	if (run_mode) {
		const char *const run[] = { "--root-pid", root, "--start-ns", start, "--report-fd", rep,
					    "--summary-fd", sum, "--control-fd", ctl };

		for (size_t i = 0; i < sizeof(run) / sizeof(run[0]); i++)
			argv[n++] = run[i];
	}
	for (; extra && *extra; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	io.stderr_fd = h->stderr_fd;
	io.inherit[0] = ready[1];
	io.inherit[1] = control[0];
	h->pid = daemon_start(argv, &io);
	close(ready[1]);
	close(control[0]);
	h->ready_r = ready[0];
	h->control_w = control[1];
}

/* Accept the processor's connection, hand it the ring, wait for "ready". */
static void harness_attach(struct harness *h)
{
	struct pollfd p = { .fd = h->lfd, .events = POLLIN };
	char buf[8];

	if (poll(&p, 1, WAIT_MS) != 1) {
		dump_stderr(h);
		fail_msg("the processor did not connect");
	}
	h->conn = accept4(h->lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(h->conn >= 0);
	assert_int_equal(ring_handover_send(h->conn, &h->p, h->consumer_uid), 0);
	if (daemon_ready(h->ready_r, WAIT_MS, buf, sizeof(buf)) != 6 || strcmp(buf, "ready\n")) {
		dump_stderr(h);
		fail_msg("the processor did not say ready");
	}
}

/* Write a record, waiting (up to WAIT_MS) for the processor to make room: this test loses nothing. */
static void put(struct harness *h, unsigned type, const void *rec, size_t len)
{
	for (int waited = 0; !ring_has_room(&h->p, (uint32_t)len); waited++) {
		if (waited >= WAIT_MS * 10) {
			dump_stderr(h);
			fail_msg("the processor stopped reading the ring");
		}
		ring_notify(&h->p);
		usleep(100);
	}
	assert_int_equal(ring_write(&h->p, type, rec, (uint32_t)len), 0);
	ring_notify(&h->p);
}

static void put_exec(struct harness *h, uint64_t ts, uint32_t tgid, uint32_t ppid, uint64_t start, const char *path,
		     const char *const *args)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = encode_exec(buf, sizeof(buf), ts, tgid, ppid, start, path, args);

	assert_true(n > 0);
	put(h, TR_EXEC, buf, n);
}

static void put_fork(struct harness *h, uint64_t ts, uint32_t parent, uint64_t pstart, uint32_t child)
{
	struct tr_fork f = encode_fork(ts, parent, pstart, child, ts);

	put(h, TR_FORK, &f, sizeof(f));
}

static void put_exit(struct harness *h, uint64_t ts, uint32_t tgid, uint64_t start, uint32_t ppid, uint32_t raw)
{
	struct tr_exit x = encode_exit(ts, tgid, start, ppid, raw);

	put(h, TR_EXIT, &x, sizeof(x));
}

static void put_end(struct harness *h)
{
	struct tr_end e = encode_end(ring_now_ns(), 1);

	put(h, TR_END, &e, sizeof(e));
}

static void send_control(struct harness *h, const char *line)
{
	assert_int_equal(write(h->control_w, line, strlen(line)), (ssize_t)strlen(line));
}

/* Wait for the processor to end; returns its wait status. */
static int harness_wait(struct harness *h)
{
	int status = daemon_wait(h->pid, WAIT_MS);

	if (status == -1) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, &status, 0);
		dump_stderr(h);
		fail_msg("the processor did not stop");
	}
	return status;
}

static void assert_exited_cleanly(struct harness *h, int status)
{
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		dump_stderr(h);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
			fail_msg("the processor made a system call outside its seccomp allowlist (SIGSYS)");
		fail_msg("the processor ended with status %#x", status);
	}
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A wait that failed: the processor's stderr, and no processor left behind holding the test's output. */
static void give_up(struct harness *h)
{
	dump_stderr(h);
	kill(h->pid, SIGKILL);
	waitpid(h->pid, NULL, 0);
}

/*
 * Wait (up to CONDITION_WAIT_NS) until the processor has read every record
 * written so far: the ring's consumer position, which it stores once it is
 * done with them, reaches the producer's. Fails the test otherwise.
 */
static void wait_consumed(struct harness *h)
{
	uint64_t deadline = monotonic_ns() + CONDITION_WAIT_NS, pos = 0;

	while (monotonic_ns() < deadline) {
		/* Pairs with the consumer's store-release of consumer_pos (ring_release). */
		pos = __atomic_load_n(&h->p.cons->consumer_pos, __ATOMIC_ACQUIRE);
		if (pos == h->p.pos)
			return;
		ring_notify(&h->p);
		usleep(CONDITION_POLL_US);
	}
	give_up(h);
	fail_msg("the processor's consumer position is %llu after %llu s, want %llu (every record written)",
		 (unsigned long long)pos, CONDITION_WAIT_NS / 1000000000ULL, (unsigned long long)h->p.pos);
}

static void harness_close_producer(struct harness *h)
{
	if (h->conn >= 0)
		close(h->conn);
	h->conn = -1;
	if (h->producer_live)
		ring_producer_destroy(&h->p);
	h->producer_live = false;
}

static void harness_free(struct harness *h)
{
	harness_close_producer(h);
	close(h->lfd);
	close(h->report_fd);
	close(h->summary_fd);
	close(h->stderr_fd);
	close(h->ready_r);
	if (h->control_w >= 0)
		close(h->control_w);
	unlink(h->sock);
	rmdir(h->dir);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing: %s\nin: %.2000s", needle, hay);
}

/* The root (sh) runs samtools sort, which fails with 3, and many short `true`s. */
static void play_a_run(struct harness *h, unsigned n_true)
{
	static const char *const a_sh[] = { "sh", "-c", "samtools sort x; true", NULL };
	static const char *const a_sort[] = { "samtools", "sort", "x.bam", NULL };
	static const char *const a_true[] = { "true", NULL };
	struct tr_counters c = encode_counters(1, 0, 1); /* the kernel lost one exit record */

	put_exec(h, 1100, ROOT_PID, 1, 1000, "/bin/sh", a_sh);
	put_exec(h, 1150, 7777, 1, 1150, "/usr/sbin/cron", NULL); /* not ours */
	put_fork(h, 1200, ROOT_PID, 1000, ROOT_PID + 1);
	put_exec(h, 1210, ROOT_PID + 1, ROOT_PID, 1200, "/usr/bin/samtools", a_sort);
	put_exit(h, 1300, ROOT_PID + 1, 1200, ROOT_PID, 3 << 8);
	for (unsigned i = 0; i < n_true; i++) {
		uint32_t pid = 10000 + i;
		uint64_t t = 2000 + 10 * (uint64_t)i;

		put_fork(h, t, ROOT_PID, 1000, pid);
		put_exec(h, t + 1, pid, ROOT_PID, t, "/bin/true", a_true);
		put_exit(h, t + 2, pid, t, ROOT_PID, 0);
	}
	put_exit(h, 900000, ROOT_PID, 1000, 1, 3 << 8);
	put(h, TR_COUNTERS, &c, sizeof(c));
}

/* ---- tests ------------------------------------------------------------ */

static void processor_reports_a_run_from_inside_its_sandbox(void **state)
{
	const char *const cmd[] = { "--", "sh", "-c", "samtools sort x; true", NULL };
	struct harness h;
	char *report, *summary, host[256];
	struct utsname u;

	(void)state;
	assert_int_equal(uname(&u), 0);
	harness_start(&h, true, cmd);
	harness_attach(&h);
	play_a_run(&h, 600); /* enough processes for large allocations and sorting */
	put_end(&h);
	send_control(&h, "end 3 1800000000000000000\n");
	assert_exited_cleanly(&h, harness_wait(&h));
	report = daemon_read_fd(h.report_fd);
	summary = daemon_read_fd(h.summary_fd);
	assert_contains(report, "{\"schema\":\"tracer.run.v1\",\"command\":[\"sh\",\"-c\",\"samtools sort x; true\"],"
				"\"exit_code\":3,");
	/* the command's user, and the host as the processor read it before its sandbox (this machine's: any) */
	snprintf(host, sizeof(host), "\"end_ns\":1800000000000000000,\"uid\":1000,\"host\":{\"name\":\"%s\",\"cloud\":",
		 u.nodename);
	assert_contains(report, host);
	assert_contains(report, ",\"cpus\":");
	assert_contains(report, "},\"agent\":{\"dropped\":1,\"kernel_drops\":1,");
	assert_contains(report, "\"end_record\":true,\"collector_lost\":false,\"control_end\":true,\"interrupted\":false");
	assert_contains(report, "\"pid\":4243,\"ppid\":4242,");
	/* A child subtree of the command is a (generic) step of its own, named by its tool. */
	assert_contains(report, "\"tool\":\"samtools sort\",\"step\":\"proc-4243\",\"exit_code\":3,");
	assert_contains(report, "{\"kind\":\"failed\",\"pid\":4243,\"step\":\"proc-4243\",\"tool\":\"samtools sort\","
				"\"cgroup\":null,\"exit_code\":3}");
	assert_contains(report, "\"steps\":[{\"id\":\"proc-4243\",\"name\":\"samtools sort\",\"tools\":[\"samtools sort\"],");
	assert_contains(summary, "steps: ");
	assert_contains(report, "\"pid\":10599,");
	assert_true(strstr(report, "cron") == NULL);
	assert_contains(summary, "FAILED exit 3");
	assert_contains(summary, "... 598 more `true` (exit 0)");
	assert_contains(summary, "WARNING: 1 RECORDS WERE LOST");
	free(report);
	free(summary);
	harness_free(&h);
}

static void processor_runs_unprivileged_under_seccomp(void **state)
{
	struct harness h;
	char path[64], *status;
	int fd;

	(void)state;
	harness_start(&h, true, NULL);
	harness_attach(&h);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)h.pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	{
		char buf[8192] = { 0 };
		char want[64];

		assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
		status = buf;
		snprintf(want, sizeof(want), "Uid:\t%u\t%u\t%u", (unsigned)h.consumer_uid, (unsigned)h.consumer_uid,
			 (unsigned)h.consumer_uid);
		assert_contains(status, want);
		assert_contains(status, "CapEff:\t0000000000000000");
		assert_contains(status, "CapPrm:\t0000000000000000");
		assert_contains(status, "NoNewPrivs:\t1");
		assert_contains(status, "Seccomp:\t2");
	}
	close(fd);
	put_end(&h);
	send_control(&h, "end 0 1\n");
	assert_exited_cleanly(&h, harness_wait(&h));
	harness_free(&h);
}

static void processor_notes_a_collector_that_went_away(void **state)
{
	struct harness h;
	char *report;

	(void)state;
	harness_start(&h, true, NULL);
	harness_attach(&h);
	play_a_run(&h, 3);
	wait_consumed(&h);
	harness_close_producer(&h); /* no end record: the collector died */
	send_control(&h, "end 3 5\n");
	assert_exited_cleanly(&h, harness_wait(&h));
	report = daemon_read_fd(h.report_fd);
	assert_contains(report, "\"end_record\":false,\"collector_lost\":true,\"control_end\":true");
	assert_contains(report, "\"pid\":10002,"); /* everything published before it died is there */
	free(report);
	harness_free(&h);
}

static void processor_writes_what_it_has_on_sigterm(void **state)
{
	struct harness h;
	char *report, *summary;

	(void)state;
	harness_start(&h, true, NULL);
	harness_attach(&h);
	play_a_run(&h, 2);
	wait_consumed(&h); /* the records are read: SIGTERM finds them in the model */
	assert_int_equal(kill(h.pid, SIGTERM), 0);
	assert_exited_cleanly(&h, harness_wait(&h));
	report = daemon_read_fd(h.report_fd);
	summary = daemon_read_fd(h.summary_fd);
	assert_contains(report, "\"exit_code\":null,");
	assert_contains(report, "\"end_ns\":null,");
	assert_contains(report, "\"interrupted\":true");
	assert_contains(report, "\"pid\":10001,");
	assert_contains(summary, "FAILED exit 3");
	free(report);
	free(summary);
	harness_free(&h);
}

static void processor_ignores_a_malformed_control_line(void **state)
{
	struct harness h;
	char *report, *err;

	(void)state;
	harness_start(&h, true, NULL);
	harness_attach(&h);
	send_control(&h, "end 300 12\n"); /* status out of range */
	put_end(&h);
	assert_exited_cleanly(&h, harness_wait(&h));
	report = daemon_read_fd(h.report_fd);
	err = daemon_read_fd(h.stderr_fd);
	assert_contains(report, "\"exit_code\":null,");
	assert_contains(report, "\"control_end\":false");
	assert_contains(err, "<3>unexpected input on the control fd");
	free(report);
	free(err);
	harness_free(&h);
}

static void processor_counts_hostile_records_and_carries_on(void **state)
{
	struct harness h;
	unsigned char junk[600];
	const unsigned types[] = { TR_EXEC, TR_FORK, TR_EXIT, TR_OOM, TR_COUNTERS, TR_END };
	uint64_t x = 88172645463325252ULL;
	char *report;

	(void)state;
	harness_start(&h, true, NULL);
	harness_attach(&h);
	for (int i = 0; i < 300; i++) {
		uint32_t len;

		for (size_t k = 0; k < sizeof(junk); k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			junk[k] = (unsigned char)x;
		}
		len = (uint32_t)(x % sizeof(junk));
		/* Never a valid version: every one of them must be refused. */
		junk[2] = 0xee;
		put(&h, types[i % 6], junk, len);
	}
	play_a_run(&h, 1);
	put_end(&h);
	send_control(&h, "end 3 9\n");
	assert_exited_cleanly(&h, harness_wait(&h));
	report = daemon_read_fd(h.report_fd);
	assert_contains(report, "\"decode_errors\":300,");
	assert_contains(report, "\"pid\":4243,");
	free(report);
	harness_free(&h);
}

static void processor_without_a_root_logs_each_finished_process(void **state)
{
	struct harness h;
	char *err;

	(void)state;
	harness_start(&h, false, NULL);
	harness_attach(&h);
	play_a_run(&h, 1);
	put_end(&h);
	assert_exited_cleanly(&h, harness_wait(&h));
	err = daemon_read_fd(h.stderr_fd);
	assert_contains(err, "<7>exit pid=4243 ppid=4242 tool=samtools sort status=3 signal=0");
	assert_contains(err, "<7>exit pid=10000 ppid=4242 tool=true status=0");
	assert_contains(err, "daemon mode");
	free(err);
	harness_free(&h);
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* A number member of a beat; the test fails when it is missing, null or not a whole number. */
static uint64_t beat_u64(const struct json_doc *d, const char *name)
{
	const struct json_node *n = json_member(d, json_root(d), name);
	uint64_t v = 0;

	if (!n || json_get_u64(n, &v))
		fail_msg("beat member %s: missing or not a whole number in %.*s", name, (int)d->len, d->text);
	return v;
}

/*
 * One TL_HOST payload, checked against this machine: 0-based index i among
 * the beats. Every beat but the one sent at the stop spans about an
 * interval; the ends go to *prev_end.
 */
static void check_beat(const char *text, size_t len, uint64_t i, uint64_t *prev_end)
{
	struct json_node nodes[64];
	struct json_doc d;
	const struct json_node *host;
	char schema[32], boot[40], want_boot[40], raw[64];
	uint64_t start, end, busy, idle, cpus = (uint64_t)sysconf(_SC_NPROCESSORS_ONLN);
	size_t k = 0;

	if (json_parse(&d, text, len, nodes, 64))
		fail_msg("beat %llu is not JSON (%s at %zu): %.*s", (unsigned long long)i, json_parse_error_name(d.err),
			 d.err_at, (int)len, text);
	assert_int_equal(json_get_string(&d, json_member(&d, json_root(&d), "schema"), schema, sizeof(schema), NULL), 0);
	assert_string_equal(schema, "tracer.host.v1");
	assert_int_equal(beat_u64(&d, "beat"), i + 1);
	start = beat_u64(&d, "start_ns");
	end = beat_u64(&d, "end_ns");
	assert_true(end > start);
	if (*prev_end)
		assert_int_equal(start, *prev_end); /* beats tile time */
	*prev_end = end;
	/* At most about one interval (1 s) each (the one at the stop: what was left of one); the first
	 * starts at the processor's first reading. */
	assert_true(end - start >= 100000000ULL && end - start < 5000000000ULL);
	assert_int_equal(beat_u64(&d, "cpus"), cpus);
	busy = beat_u64(&d, "cpu_busy_ns");
	idle = beat_u64(&d, "cpu_idle_ns");
	/* Every CPU was busy or idle all along: the sum is about cpus x the interval (10 ms ticks, loose). */
	assert_true(busy + idle >= cpus * (end - start) / 4 && busy + idle <= cpus * (end - start) * 2);
	assert_true(beat_u64(&d, "mem_total_bytes") > 0);
	assert_true(beat_u64(&d, "mem_used_bytes") <= beat_u64(&d, "mem_total_bytes"));
	(void)beat_u64(&d, "net_rx_bytes");
	(void)beat_u64(&d, "net_tx_bytes");
	assert_int_equal(beat_u64(&d, "runs"), 0);
	assert_int_equal(beat_u64(&d, "steps"), 0);
	assert_int_equal(beat_u64(&d, "processes"), 0);
	assert_true(json_member(&d, json_root(&d), "uptime_s")->type == JSON_NUMBER);
	/* The boot id as /proc has it, without its dashes. */
	daemon_read_file("/proc/sys/kernel/random/boot_id", raw, sizeof(raw));
	for (const char *p = raw; *p && *p != '\n' && k < sizeof(want_boot) - 1; p++)
		if (*p != '-')
			want_boot[k++] = *p;
	want_boot[k] = 0;
	assert_int_equal(json_get_string(&d, json_member(&d, json_root(&d), "boot_id"), boot, sizeof(boot), NULL), 0);
	assert_string_equal(boot, want_boot);
	host = json_member(&d, json_root(&d), "host");
	assert_non_null(host);
	assert_int_equal(host->type, JSON_OBJECT);
	assert_int_equal(json_get_u64(json_member(&d, host, "cpus"), &start), 0);
	assert_int_equal(start, cpus);
}

/* The TL_HOST payloads in a stopped processor's spool, checked one by one; how many; the last one's end. */
static uint64_t check_spooled_beats(const char *state_dir, uint64_t *last_end)
{
	static char buf[1 << 20];
	char dir[PATH_MAX];
	struct spool_config c = { .dir = dir };
	struct spool_span sp;
	struct spool *s;
	uint64_t from = 0, beats = 0, prev_end = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%s/spool", state_dir);
	assert_int_equal(spool_open(&s, &c), 0);
	while ((rc = spool_read(s, from, 1000, buf, sizeof(buf), &sp)) == 1) {
		size_t off = 0;

		for (uint32_t i = 0; i < sp.nrecords; i++) {
			struct tr_frame f;

			memcpy(&f, buf + off, sizeof(f));
			if (f.type == TL_HOST)
				check_beat(buf + off + TR_FRAME_HDR, f.len, beats++, &prev_end);
			off += TR_FRAME_SIZE(f.len);
		}
		from = sp.last_seq;
	}
	assert_int_equal(rc, 0);
	spool_close(s);
	*last_end = prev_end;
	return beats;
}

/* The processor's status file in state_dir, read as `tracer status` reads it: false while it is not (yet) whole. */
static bool read_status(const char *state_dir, struct status *st)
{
	char path[PATH_MAX], text[STATUS_FILE_MAX + 1], err[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/" STATUS_FILE, state_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, text, sizeof(text) - 1); /* one read: the writer rewrites it in place with one pwrite */
	close(fd);
	return n > 0 && status_parse(text, (size_t)n, st, err, sizeof(err)) == STATUS_OK;
}

/*
 * Wait (up to CONDITION_WAIT_NS) until the status file says the processor
 * has put at least want heartbeats in the spool; fails the test otherwise.
 */
static void wait_beats(struct harness *h, const char *state_dir, uint64_t want)
{
	uint64_t deadline = monotonic_ns() + CONDITION_WAIT_NS;
	struct status st = { 0 };
	bool seen = false;

	while (monotonic_ns() < deadline) {
		if (read_status(state_dir, &st)) {
			seen = true;
			if (st.heartbeat.beats >= want)
				return;
		}
		usleep(10 * CONDITION_POLL_US);
	}
	give_up(h);
	if (!seen)
		fail_msg("no readable status file in %s after %llu s", state_dir, CONDITION_WAIT_NS / 1000000000ULL);
	fail_msg("the status file says %llu heartbeats after %llu s at heartbeat_interval=1s, want %llu",
		 (unsigned long long)st.heartbeat.beats, CONDITION_WAIT_NS / 1000000000ULL, (unsigned long long)want);
}

static void processor_daemon_sends_the_host_heartbeat_to_the_spool(void **state)
{
	char state_dir[64], set_state[96], *err;
	const char *extra[] = { "--set", set_state, "--set", "host_id=0123456789abcdef0123456789abcdef",
				"--set", "heartbeat_interval=1s", NULL };
	struct harness h;
	struct status st;
	struct timespec ts;
	uint64_t beats, last_end, stop_ns;

	(void)state;
	snprintf(state_dir, sizeof(state_dir), "/tmp/tracer-proc-beat-XXXXXX");
	assert_non_null(mkdtemp(state_dir));
	assert_int_equal(chmod(state_dir, 0755), 0);
	/* The processor's user (harness_start's) makes the spool there. */
	assert_int_equal(chown(state_dir, geteuid() == 0 ? NOBODY : geteuid(), (gid_t)-1), 0);
	snprintf(set_state, sizeof(set_state), "state_dir=%s", state_dir);
	harness_start(&h, false, extra);
	harness_attach(&h);
	wait_beats(&h, state_dir, 2); /* at about 1 s and 2 s after its start */
	/* The beat at the stop goes out only when it spans 100 ms or more (processor/heartbeat.c): let that pass. */
	usleep(150000);
	clock_gettime(CLOCK_REALTIME, &ts);
	stop_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	assert_exited_cleanly(&h, daemon_stop(h.pid, SIGTERM, WAIT_MS));
	err = daemon_read_fd(h.stderr_fd);
	assert_null(strstr(err, "host heartbeat")); /* every /proc file there and read */
	free(err);
	beats = check_spooled_beats(state_dir, &last_end);
	if (beats < 3) {
		dump_stderr(&h);
		fail_msg("%llu heartbeats in the spool after the status file said 2 and a stop, want 3",
			 (unsigned long long)beats);
	}
	/* Its last status file, written after its last beat, counts every beat in the spool. */
	assert_true(read_status(state_dir, &st));
	assert_int_equal(st.heartbeat.beats, beats);
	/* the last one reaches the stop: the lake knows the host up to it, not to the last whole interval */
	assert_true(last_end >= stop_ns);
	harness_free(&h);
	assert_int_equal(nftw(state_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void processor_refuses_bad_options(void **state)
{
	const char *const cases[][6] = {
		{ "--root-pid", "5", NULL },                         /* no socket, no report fd */
		{ "--socket", "/x", "--root-pid", "5", NULL },       /* no report fd */
		{ "--socket", "/x", "--report-fd", "9", NULL },      /* a report without a root */
		{ "--socket", "/x", "--max-processes", "0", NULL },
		{ "--socket", "/x", "--root-pid", "-1", "--report-fd" },
		{ "--socket", "/x", "--ready-fd", "+3", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[8] = { processor_bin };
		struct daemon_io io = DAEMON_IO;
		int status;

		for (size_t k = 0; k < 6 && cases[i][k]; k++)
			argv[k + 1] = cases[i][k];
		io.stderr_path = "/dev/null";
		status = daemon_run(argv, &io, WAIT_MS);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 2)
			fail_msg("case %zu: status %#x, want exit 2", i, status);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(processor_reports_a_run_from_inside_its_sandbox),
		cmocka_unit_test(processor_runs_unprivileged_under_seccomp),
		cmocka_unit_test(processor_notes_a_collector_that_went_away),
		cmocka_unit_test(processor_writes_what_it_has_on_sigterm),
		cmocka_unit_test(processor_ignores_a_malformed_control_line),
		cmocka_unit_test(processor_counts_hostile_records_and_carries_on),
		cmocka_unit_test(processor_without_a_root_logs_each_finished_process),
		cmocka_unit_test(processor_daemon_sends_the_host_heartbeat_to_the_spool),
		cmocka_unit_test(processor_refuses_bad_options),
	};

	if (daemon_find("tracer-processor", processor_bin, sizeof(processor_bin)))
		return test_skip_all("no tracer-processor next to the test binaries: run 'make all' first");
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
