/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-collector: the only privileged part of tracer. Its whole life:
 *
 *   1. read the rules; load and attach the BPF programs  (needs CAP_BPF, CAP_PERFMON / root)
 *   2. create the shared-memory ring and listen    (collector.sock, for the processor)
 *   3. drop every privilege, install seccomp       (sandbox.c, one function)
 *   4. loop: copy BPF ring-buffer records into the shared ring, hand the ring
 *      to a (re)connecting processor, write counters and a heartbeat
 *      and, on SIGHUP, reread the rules into the programs' memory (no bpf())
 *   5. on SIGTERM: drain, write the end record, detach, exit
 *
 * It parses nothing it did not produce but two root-owned files, its keys
 * of tracer.conf (conf.c, at start) and the rules file (rules.c), opens no
 * network socket, and allocates nothing in its loop. Its only input from
 * the processor is the consumer position in the ring, which
 * shm/ring_producer.c validates where it reads it.
 */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "conf.h"
#include "handover_producer.h"
#include "load.h"
#include "notify.h"
#include "parse.h"
#include "priv.h"
#include "record_header.h"
#include "ring_producer.h"
#include "sandbox.h"
#include "testtrigger.h"
#include "version.h"

#define COUNTERS_INTERVAL_NS 1000000000ULL
#define COLLECTOR_POLL_MS 20 /* copy at least this often; see wakeup_flags() in bpf/ */
/*
 * A uid of its own, not shared with the processor (nobody, or the tracer
 * user): a process of the same uid could signal it.
 */
#define COLLECTOR_DEFAULT_USER "65533"

struct options {
	const char *socket_path;
	const char *user;      /* drop to this user (name or uid) */
	uid_t consumer_uid;    /* only this uid receives the ring */
	unsigned ring_order;
	int ready_fd;          /* "ready\n" here once serving, "stopped CPU_NS MAXRSS_KIB\n" when done; -1: none */
	const char *rules;     /* --rules FILE, or NULL */
	struct load_options load;
	const char *config;    /* --config FILE: daemon mode as tracer.conf says */
	const char *sets[32];  /* --set KEY=VALUE */
	unsigned nsets;
};

struct collector {
	struct bpf_state bpf;
	struct rules_file rules;
	struct ring_buffer *krb;
	struct ring_producer ring;
	int listen_fd;
	int conn_fd;           /* the current processor connection, kept open so it sees EOF when we exit */
	int epoll_fd;
	int signal_fd;
	struct notify notify;  /* systemd: READY=1, WATCHDOG=1, STOPPING=1 */
	__u64 records_copied;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer-collector --socket PATH --consumer-uid UID [--user NAME] [--ring-order N]\n"
		   "                        [--kernel-buffer-mib N] [--ready-fd FD] [--trace-pid PID]\n"
		   "                        [--sample-interval-ms MS (100..60000, 1000)] [--rules FILE]\n"
		   "   or: tracer-collector --config FILE [--set KEY=VALUE]... [--trace-pid PID] [--ready-fd FD]\n"
		   "Loads tracer's BPF programs as root, then as NAME (default uid " COLLECTOR_DEFAULT_USER ") serves\n"
		   "the ring on PATH to the processor (uid UID); FILE (root's: docs/config.md) gives the socket,\n"
		   "users, rules, sizes. --trace-pid: only PID and descendants. --rules: filter rules and environment\n"
		   "keys (docs/security.md), reread on SIGHUP. --help: this text; --version: the version.\n");
}

/*
 * Daemon mode: the root-owned config file (and --set overrides) give the
 * socket, the users, the rules and the sizes (conf.c: the collector's own
 * keys only). The runtime directory is made here (root's, 0711: the
 * processor can reach the socket in it, not list or change it).
 */
static int from_config(struct options *o)
{
	static struct collector_conf cfg;
	static char socket_path[PATH_MAX + 32];
	gid_t gid;
	uid_t uid;
	int rc;

	if (conf_from_options(&cfg, o->config, o->sets, o->nsets))
		return -1;
	rc = priv_lookup_user(cfg.processor_user, &uid, &gid);
	if (rc) {
		fprintf(stderr, "<3>processor_user '%s' is not a user here: create it (sysusers.d) or set another\n",
			cfg.processor_user);
		return -1;
	}
	if (mkdir(cfg.runtime_dir, 0711) && errno != EEXIST) {
		fprintf(stderr, "<3>cannot create runtime_dir %s: %s\n", cfg.runtime_dir, strerror(errno));
		return -1;
	}
	snprintf(socket_path, sizeof(socket_path), "%s/collector.sock", cfg.runtime_dir);
	o->socket_path = socket_path;
	o->consumer_uid = uid;
	o->user = cfg.collector_user;
	o->rules = cfg.rules[0] ? cfg.rules : o->rules;
	o->ring_order = cfg.ring_order;
	o->load.kernel_buffer_mib = (unsigned)(cfg.kernel_buffer >> 20);
	o->load.sample_interval_ms = (unsigned)(cfg.sample_interval_ns / 1000000ULL);
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "consumer-uid", required_argument, NULL, 'c' },
		{ "user", required_argument, NULL, 'u' },
		{ "ring-order", required_argument, NULL, 'r' },
		{ "kernel-buffer-mib", required_argument, NULL, 'k' },
		{ "ready-fd", required_argument, NULL, 'f' },
		{ "trace-pid", required_argument, NULL, 'p' },
		{ "sample-interval-ms", required_argument, NULL, 'i' },
		{ "rules", required_argument, NULL, 'R' },
		{ "config", required_argument, NULL, 'C' },
		{ "set", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v; /* an option's whole number: digits only (common/parse.h, as every program reads numbers) */
	int c;

	*o = (struct options){ .user = COLLECTOR_DEFAULT_USER, .consumer_uid = (uid_t)-1, .ring_order = RING_DEFAULT_ORDER,
			       .ready_fd = -1, .load = { .kernel_buffer_mib = 16, .sample_interval_ms = 1000 } };
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->socket_path = optarg; break;
		case 'u': o->user = optarg; break;
		case 'c':
			if (parse_u64(optarg, 0xfffffffe, &v))
				goto bad;
			o->consumer_uid = (uid_t)v;
			break;
		case 'r':
			if (parse_u64(optarg, RING_MAX_ORDER, &v) || v < RING_MIN_ORDER)
				goto bad;
			o->ring_order = (unsigned)v;
			break;
		case 'k':
			/* A power of two number of MiB, as the BPF ring buffer needs. */
			if (parse_u64(optarg, 1024, &v) || v == 0 || (v & (v - 1)))
				goto bad;
			o->load.kernel_buffer_mib = (unsigned)v;
			break;
		case 'f':
			if (parse_u64(optarg, 65535, &v))
				goto bad;
			o->ready_fd = (int)v;
			break;
		case 'p':
			if (parse_u64(optarg, 0x7fffffff, &v) || v == 0)
				goto bad;
			o->load.trace_pid = (pid_t)v;
			break;
		case 'i':
			if (parse_u64(optarg, SAMPLE_INTERVAL_MAX_MS, &v) || v < SAMPLE_INTERVAL_MIN_MS)
				goto bad;
			o->load.sample_interval_ms = (unsigned)v;
			break;
		case 'R': o->rules = optarg; break;
		case 'C': o->config = optarg; break;
		case 'E':
			if (o->nsets == sizeof(o->sets) / sizeof(o->sets[0]))
				goto bad;
			o->sets[o->nsets++] = optarg;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': version_print("tracer-collector"); exit(0);
		default: goto bad;
		}
	}
	if ((o->config || o->nsets) && from_config(o))
		return -1;
	if (!o->socket_path || o->consumer_uid == (uid_t)-1 || optind != argc)
		goto bad;
	return 0;
bad:
	usage(stderr);
	return -1;
}

/*
 * Called by libbpf for each kernel record. The record came from our own BPF
 * program; all we read is its type, to file it under that type in the ring.
 */
static int copy_record(void *ctx, void *data, size_t size)
{
	struct collector *col = ctx;
	const struct tr_hdr *h = data;

	if (size < sizeof(*h) || size > UINT32_MAX || h->type < RING_REC_FIRST_USER ||
	    h->type >= TR_KERNEL_TYPES_END)
		return 0;
	/* A full ring drops and counts (per type, in-band too); never waits. */
	if (ring_write(&col->ring, h->type, data, (uint32_t)size) == 0)
		col->records_copied++;
	return 0;
}

static void fill_hdr(struct tr_hdr *h, unsigned type)
{
	h->type = (__u16)type;
	h->version = RECORDS_VERSION;
	h->cpu = 0;
	h->ts_ns = ring_now_ns();
}

static void write_counters(struct collector *col)
{
	struct tr_counters c;

	memset(&c, 0, sizeof(c));
	fill_hdr(&c.hdr, TR_COUNTERS);
	for (__u32 t = 0; t < TR_KERNEL_TYPES_END; t++) /* [TR_DROP_STATE] and the record types */
		c.kernel_drops[t] = __atomic_load_n(&col->bpf.skel->bss->drop_counts[t], __ATOMIC_RELAXED);
	memcpy(c.ring_drops, col->ring.drops, sizeof(c.ring_drops));
	c.records_copied = col->records_copied;
	c.bad_consumer_pos = col->ring.bad_consumer_pos;
	ring_write(&col->ring, TR_COUNTERS, &c, sizeof(c));
}

/* One processor at a time; a new connection replaces the old one (a restart). */
static void accept_processor(struct collector *col, uid_t consumer_uid)
{
	int fd, err;

	while ((fd = accept4(col->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		err = ring_handover_send(fd, &col->ring, consumer_uid);
		if (err) {
			fprintf(stderr, "<4>refused ring to a peer: %s\n", strerror(-err));
			close(fd);
			continue;
		}
		if (col->conn_fd >= 0)
			close(col->conn_fd);
		col->conn_fd = fd;
		fprintf(stderr, "<6>processor attached\n");
	}
}

static int setup_loop(struct collector *col, const struct options *o)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;
	uint64_t generation;

	if (getrandom(&generation, sizeof(generation), 0) != sizeof(generation))
		generation = ring_now_ns();
	if (ring_producer_create(&col->ring, o->ring_order, generation))
		return -1;
	col->krb = ring_buffer__new(bpf_map__fd(col->bpf.skel->maps.events), copy_record, col, NULL);
	/* Anyone may connect; only consumer_uid gets the ring (SO_PEERCRED in ring_handover_send). */
	col->listen_fd = handover_listen(o->socket_path, 0666);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGPIPE);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || !col->krb || col->listen_fd < 0)
		return -1;
	col->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	col->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (col->signal_fd < 0 || col->epoll_fd < 0)
		return -1;
	ev.data.fd = ring_buffer__epoll_fd(col->krb);
	if (epoll_ctl(col->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return -1;
	ev.data.fd = col->listen_fd;
	if (epoll_ctl(col->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return -1;
	ev.data.fd = col->signal_fd;
	return epoll_ctl(col->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev);
}

/*
 * SIGHUP: reread the rules file and publish it into the programs' memory
 * (a memory copy: no bpf(), nothing detached). A bad file changes nothing.
 */
static void reload_rules(struct collector *col)
{
	if (!col->rules.path) {
		fprintf(stderr, "<5>SIGHUP: no --rules file to reread\n");
	} else if (rules_read(&col->rules)) {
		fprintf(stderr, "<3>rules file %s not reloaded: the previous rules stay in force\n", col->rules.path);
	} else {
		rules_publish(&col->rules, col->bpf.skel->bss->rules, &col->bpf.skel->bss->rules_active);
		fprintf(stderr, "<6>rules reloaded from %s\n", col->rules.path);
	}
}

/* false: a stop signal came. */
static bool signals_say_go_on(struct collector *col)
{
	struct signalfd_siginfo si;

	while (read(col->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGHUP)
			return false;
		reload_rules(col);
	}
	return true;
}

/* The copy loop: no allocation, no parsing (but the rules file on SIGHUP), no blocking on the processor. */
static void run_loop(struct collector *col, uid_t consumer_uid)
{
	uint64_t next_counters = 0;
	struct epoll_event evs[4];

	for (;;) {
		uint64_t now;
		/* The BPF side wakes us only when its buffer fills: this timeout bounds the latency. */
		int n = epoll_wait(col->epoll_fd, evs, 4, COLLECTOR_POLL_MS);

		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "<3>epoll_wait: %s\n", strerror(errno));
			return;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == col->signal_fd && !signals_say_go_on(col))
				return;
			if (evs[i].data.fd == col->listen_fd)
				accept_processor(col, consumer_uid);
		}
		ring_buffer__consume(col->krb);
		now = ring_now_ns();
		if (now >= next_counters) {
			write_counters(col);
			ring_producer_heartbeat(&col->ring, now);
			notify_watchdog(&col->notify, now);
			next_counters = now + COUNTERS_INTERVAL_NS;
		}
		ring_notify(&col->ring);
	}
}

/* Stop: everything the kernel has is copied, then counters, then the end record. */
static void finish(struct collector *col)
{
	struct tr_end end;

	notify_send(&col->notify, "STOPPING=1");
	/*
	 * An exit is sent at the dying thread's last context switch, which
	 * follows the wakeup of its parent by microseconds: let the last ones in.
	 */
	usleep(50000);
	ring_buffer__consume(col->krb);
	write_counters(col);
	memset(&end, 0, sizeof(end));
	fill_hdr(&end.hdr, TR_END);
	end.records_copied = col->records_copied;
	/* The end record must arrive: give a live processor up to 2 s to make room. */
	for (int i = 0; i < 2000 && !ring_has_room(&col->ring, sizeof(end)); i++) {
		ring_notify(&col->ring);
		usleep(1000);
	}
	if (ring_write(&col->ring, TR_END, &end, sizeof(end)))
		fprintf(stderr, "<4>the ring stayed full: the end record was dropped (and counted)\n");
	ring_notify(&col->ring);
	fprintf(stderr, "<6>stopping: %llu records copied, %llu dropped in the ring\n",
		(unsigned long long)col->records_copied, (unsigned long long)col->ring.drops_total);
}

/*
 * Tell whoever started us that everything is in the ring, and what we
 * cost. Exiting can then take the kernel a second or two (detaching
 * every program waits for RCU grace periods): nobody needs to wait for it.
 */
static void report_stopped(int fd)
{
	struct rusage ru;
	char line[80];
	int n;

	if (fd < 0 || getrusage(RUSAGE_SELF, &ru))
		return;
	n = snprintf(line, sizeof(line), "stopped %llu %ld\n",
		     (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
			     (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL,
		     ru.ru_maxrss);
	if (write(fd, line, (size_t)n) != n)
		fprintf(stderr, "<4>cannot report the stop on fd %d: %s\n", fd, strerror(errno));
	close(fd);
}

int main(int argc, char **argv)
{
	static struct collector state; /* lives as long as the process; nothing allocated */
	struct collector *col = &state;
	struct options o;

	if (parse_options(argc, argv, &o))
		return 2;
	col->conn_fd = -1;
	if (geteuid() != 0) {
		fprintf(stderr, "<3>tracer-collector must start as root (it loads BPF programs), then drops to %s\n",
			o.user);
		return 1;
	}
	if (rules_init(&col->rules, o.rules))
		return 1;
	if (bpf_start(&col->bpf, &o.load, &col->rules))
		return 1;
	if (setup_loop(col, &o)) {
		fprintf(stderr, "<3>cannot set up the ring or the socket %s: %s\n", o.socket_path, strerror(errno));
		return 1;
	}
	if (notify_open(&col->notify) < 0)
		return 1;
	/* From here on: no capabilities, only the rules file's directory, seccomp. */
	if (sandbox_collector(o.user, col->rules.path ? col->rules.file : NULL))
		return 1;
	TEST_TRIGGER("tracer-collector", RULES_OPEN_FLAGS);
	if (o.ready_fd >= 0 && write(o.ready_fd, "ready\n", 6) != 6)
		fprintf(stderr, "<4>cannot report readiness on fd %d: %s\n", o.ready_fd, strerror(errno));
	notify_send(&col->notify, "READY=1");
	fprintf(stderr, "<6>collecting: ring %llu KiB on %s for uid %u\n",
		(unsigned long long)(col->ring.size >> 10), o.socket_path, (unsigned)o.consumer_uid);
	run_loop(col, o.consumer_uid);
	finish(col);
	report_stopped(o.ready_fd);
	/*
	 * No teardown calls: detaching needs syscalls the sandbox does not
	 * allow (ioctl, bpf). Exiting closes every fd, and the kernel detaches
	 * the programs when their last link fd goes.
	 */
	return 0;
}
