/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Two-process stress: a producer process and a consumer process exchange
 * millions of sequence-numbered, checksummed records through a real
 * handed-over ring. Proves zero loss when the consumer keeps up, exact
 * loss accounting when it pauses, and restarts of either side.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "handover.h"

#define N_TYPES 4
#define T_DATA RING_REC_FIRST_USER /* data records use T_DATA .. T_DATA + N_TYPES - 1 */
#define T_END (RING_REC_FIRST_USER + 10)
#define STRESS_ORDER 20 /* 1 MiB: wraps every few thousand records */

/* Data record payload: seq, then bytes derived from seq, then their checksum. */
struct rec_head {
	uint64_t seq;
	uint32_t len;
	uint32_t csum;
};

static uint64_t records_wanted(void)
{
	/* Millions in every build; fewer under the sanitizers only to keep runs short. */
	return getenv("TRACER_TEST_SANITIZED") ? 1000000 : 3000000;
}

static uint32_t rec_len(uint64_t seq)
{
	return (uint32_t)(sizeof(struct rec_head) + (seq * 2654435761u) % 241);
}

static unsigned rec_type(uint64_t seq)
{
	return T_DATA + (unsigned)((seq * 11400714819323198485ULL) >> 62);
}

static uint32_t fnv1a(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static void rec_fill(unsigned char *buf, uint64_t seq)
{
	struct rec_head h = { .seq = seq, .len = rec_len(seq) };
	size_t body = h.len - sizeof(h);

	for (size_t i = 0; i < body; i++)
		buf[sizeof(h) + i] = (unsigned char)(seq >> (i % 8 * 8)) ^ (unsigned char)i;
	h.csum = fnv1a(buf + sizeof(h), body);
	memcpy(buf, &h, sizeof(h));
}

/* ---- producer side ---------------------------------------------------- */

struct producer {
	struct ring_producer ring;
	int listen_fd; /* -1 when the consumer got a socketpair end instead */
	int conns[8];
	int nconns;
};

/* Hand the ring to whoever connected since the last call (restart support). */
static void producer_accept(struct producer *pr)
{
	int fd;

	if (pr->listen_fd < 0)
		return;
	while ((fd = accept4(pr->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		if (ring_handover_send(fd, &pr->ring, getuid()) || pr->nconns == 8)
			_exit(20);
		pr->conns[pr->nconns++] = fd;
	}
}

/* Lossless mode waits for room, as a test harness may; lossy mode is the collector's. */
static int produce(struct producer *pr, uint64_t first, uint64_t n, bool lossless)
{
	unsigned char buf[512];

	for (uint64_t seq = first; seq < first + n; seq++) {
		uint32_t len = rec_len(seq);

		if ((seq & 255) == 0) {
			producer_accept(pr);
			ring_producer_heartbeat(&pr->ring, ring_now_ns());
		}
		while (lossless && !ring_has_room(&pr->ring, len)) {
			ring_notify(&pr->ring);
			producer_accept(pr);
			sched_yield();
		}
		rec_fill(buf, seq);
		if (ring_write(&pr->ring, rec_type(seq), buf, len) && (lossless || errno != ENOSPC))
			return -1;
		if ((seq & 63) == 0)
			ring_notify(&pr->ring);
	}
	ring_notify(&pr->ring);
	return 0;
}

/* The end marker always gets through: wait for room, then wake the consumer. */
static void produce_end(struct producer *pr, uint64_t total)
{
	while (!ring_has_room(&pr->ring, sizeof(total))) {
		ring_notify(&pr->ring);
		producer_accept(pr);
		sched_yield();
	}
	if (ring_write(&pr->ring, T_END, &total, sizeof(total)))
		_exit(21);
	ring_notify(&pr->ring);
}

static void producer_start(struct producer *pr, uint64_t generation, int sock, const char *path)
{
	memset(pr, 0, sizeof(*pr));
	pr->listen_fd = -1;
	if (ring_producer_create(&pr->ring, STRESS_ORDER, generation))
		_exit(22);
	if (path) {
		pr->listen_fd = handover_listen(path, 0600);
		if (pr->listen_fd < 0)
			_exit(23);
	} else if (ring_handover_send(sock, &pr->ring, getuid())) {
		_exit(24);
	}
}

/* ---- consumer side ---------------------------------------------------- */

/* What the consumer saw; sent back to the test through a pipe. */
struct result {
	uint64_t received;       /* data records, each checked */
	uint64_t bad;            /* wrong checksum, length, type or order */
	uint64_t lost;           /* sum of loss markers */
	uint64_t unexplained;    /* sequence gaps not matched exactly by markers */
	uint64_t first_seq;
	uint64_t next_seq;       /* the sequence number expected next */
	uint64_t end_total;      /* from the end record, 0 if none seen */
	uint64_t hdr_drops[N_TYPES];
	uint64_t marker_lost[N_TYPES];
	uint64_t resets;
	uint64_t generations[2];
};

struct verifier {
	struct result r;
	uint64_t pending[N_TYPES]; /* lost per type announced since the last data record */
	bool started;
};

/* A gap before seq must be exactly the records the markers announced, type by type. */
static void check_gap(struct verifier *vf, uint64_t seq)
{
	uint64_t by_type[N_TYPES] = { 0 };

	if (seq < vf->r.next_seq || seq - vf->r.next_seq > 100000000) {
		vf->r.bad++;
		return;
	}
	for (uint64_t s = vf->r.next_seq; s < seq; s++)
		by_type[rec_type(s) - T_DATA]++;
	for (unsigned t = 0; t < N_TYPES; t++) {
		if (by_type[t] != vf->pending[t])
			vf->r.unexplained++;
		vf->pending[t] = 0;
	}
}

static void verify_data(struct verifier *vf, const struct ring_view *v)
{
	unsigned char buf[512];
	struct rec_head h;

	if (v->len < sizeof(h) || v->len > sizeof(buf)) {
		vf->r.bad++;
		return;
	}
	memcpy(buf, v->payload, v->len);
	memcpy(&h, buf, sizeof(h));
	if (!vf->started) {
		vf->started = true;
		vf->r.first_seq = vf->r.next_seq = h.seq;
	}
	check_gap(vf, h.seq);
	if (h.len != v->len || h.len != rec_len(h.seq) || v->type != rec_type(h.seq) ||
	    h.csum != fnv1a(buf + sizeof(h), h.len - sizeof(h)))
		vf->r.bad++;
	vf->r.received++;
	vf->r.next_seq = h.seq + 1;
}

/* Returns true at the end record. */
static bool verify_one(struct verifier *vf, const struct ring_view *v)
{
	if (v->type == RING_REC_LOST) {
		if (v->lost.type < T_DATA || v->lost.type >= T_DATA + N_TYPES) {
			vf->r.bad++;
			return false;
		}
		vf->pending[v->lost.type - T_DATA] += v->lost.count;
		vf->r.marker_lost[v->lost.type - T_DATA] += v->lost.count;
		vf->r.lost += v->lost.count;
		return false;
	}
	if (v->type == T_END) {
		memcpy(&vf->r.end_total, v->payload, sizeof(vf->r.end_total));
		check_gap(vf, vf->r.end_total);
		return true;
	}
	verify_data(vf, v);
	return false;
}

struct consume_opts {
	uint64_t pause_every;  /* sleep pause_us every this many records (0: never) */
	unsigned pause_us;
	uint64_t die_after;    /* release after this many records, read some more, SIGKILL self */
	int sock;              /* handover connection: EOF means the producer is gone */
};

static bool socket_closed(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char b;

	return poll(&pfd, 1, 0) == 1 && recv(fd, &b, 1, MSG_DONTWAIT) == 0;
}

/*
 * Consume until the end record, or until the producer is gone and its ring
 * is drained (returns false then).
 */
static bool consume(struct ring_consumer *c, struct verifier *vf, const struct consume_opts *o)
{
	struct ring_view v;
	uint64_t n = 0;

	for (;;) {
		int rc = ring_next(c, &v);

		if (rc < 0) {
			vf->r.resets++;
			continue;
		}
		if (rc == 0) {
			if (!o->die_after || n < o->die_after)
				ring_release(c);
			ring_consumer_heartbeat(c, ring_now_ns());
			/* Producer gone: its last position is final; drain it, then stop. */
			if (socket_closed(o->sock)) {
				while ((rc = ring_next(c, &v)) == 1)
					if (verify_one(vf, &v))
						return true;
				ring_release(c);
				return false;
			}
			ring_wait(c, 50);
			continue;
		}
		if (verify_one(vf, &v)) {
			ring_release(c);
			return true;
		}
		n++;
		if (o->die_after && n == o->die_after)
			ring_release(c);
		if (o->die_after && n == o->die_after + 500)
			raise(SIGKILL); /* 500 records read but never released */
		if (o->pause_every && n % o->pause_every == 0) {
			ring_release(c);
			usleep(o->pause_us);
		}
		if ((n & 1023) == 0 && !o->die_after)
			ring_release(c);
	}
}

static void consumer_snapshot(const struct ring_consumer *c, struct verifier *vf)
{
	for (unsigned t = 0; t < N_TYPES; t++)
		vf->r.hdr_drops[t] = c->hdr->drops[T_DATA + t];
}

static pid_t spawn(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	return pid;
}

static void wait_ok(pid_t pid, const char *who)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s exited with status %#x", who, status);
}

static void read_result(int fd, struct result *r)
{
	assert_int_equal(read(fd, r, sizeof(*r)), (ssize_t)sizeof(*r));
}

/* Producer and consumer in two processes over a socketpair. */
static void run_pair(uint64_t n, bool lossless, const struct consume_opts *co, struct result *r)
{
	int sv[2], res[2];
	pid_t prod, cons;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(res), 0);
	prod = spawn();
	if (prod == 0) {
		struct producer pr;

		producer_start(&pr, 1, sv[0], NULL);
		if (produce(&pr, 0, n, lossless))
			_exit(25);
		produce_end(&pr, n);
		_exit(lossless && pr.ring.drops_total ? 26 : 0);
	}
	cons = spawn();
	if (cons == 0) {
		struct ring_consumer c;
		struct verifier vf = { 0 };
		struct consume_opts o = *co;

		o.sock = sv[1];
		if (ring_handover_recv(sv[1], &c, getuid(), ~0ULL, 5000))
			_exit(30);
		if (!consume(&c, &vf, &o))
			_exit(31);
		consumer_snapshot(&c, &vf);
		_exit(write(res[1], &vf.r, sizeof(vf.r)) == sizeof(vf.r) ? 0 : 32);
	}
	close(sv[0]);
	close(sv[1]);
	close(res[1]);
	wait_ok(prod, "producer");
	wait_ok(cons, "consumer");
	read_result(res[0], r);
	close(res[0]);
}

static void consumer_that_keeps_up_loses_nothing(void **state)
{
	struct consume_opts co = { 0 };
	uint64_t n = records_wanted();
	struct result r;

	(void)state;
	run_pair(n, true, &co, &r);
	assert_int_equal(r.received, n);
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.lost, 0);
	assert_int_equal(r.unexplained, 0);
	assert_int_equal(r.first_seq, 0);
	assert_int_equal(r.next_seq, n);
	assert_int_equal(r.end_total, n);
	assert_int_equal(r.resets, 0);
	for (unsigned t = 0; t < N_TYPES; t++)
		assert_int_equal(r.hdr_drops[t], 0);
}

static void paused_consumer_gets_exact_loss_accounting(void **state)
{
	struct consume_opts co = { .pause_every = 50000, .pause_us = 20000 };
	uint64_t n = records_wanted();
	struct result r;

	(void)state;
	run_pair(n, false, &co, &r);
	assert_true(r.lost > 0); /* the pauses did overflow the ring */
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.unexplained, 0); /* every gap matched its markers, type by type */
	assert_int_equal(r.received + r.lost, n);
	assert_int_equal(r.end_total, n);
	assert_int_equal(r.resets, 0);
	for (unsigned t = 0; t < N_TYPES; t++)
		assert_int_equal(r.marker_lost[t], r.hdr_drops[t]); /* in-band == header counters */
	print_message("sent %lu, received %lu, lost %lu\n", (unsigned long)n, (unsigned long)r.received,
		      (unsigned long)r.lost);
}

static void make_sock_path(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/tracer-stress-%d.sock", (int)getpid());
}

/* Connect to the producer (retrying while it starts) and attach. */
static int consumer_connect(const char *path, struct ring_consumer *c)
{
	for (int tries = 0; tries < 5000; tries++) {
		int fd = handover_connect(path);

		if (fd >= 0) {
			if (ring_handover_recv(fd, c, getuid(), ~0ULL, 5000) == 0)
				return fd;
			close(fd);
		}
		usleep(1000);
	}
	_exit(40);
}

static void restarted_consumer_resumes_where_it_released(void **state)
{
	uint64_t n = records_wanted() / 2, k = n / 3;
	char path[64];
	int res[2];
	pid_t prod, cons;
	struct result r;
	int status;

	(void)state;
	make_sock_path(path, sizeof(path));
	assert_int_equal(pipe(res), 0);
	prod = spawn();
	if (prod == 0) {
		struct producer pr;

		producer_start(&pr, 1, -1, path);
		if (produce(&pr, 0, n, true))
			_exit(25);
		produce_end(&pr, n);
		_exit(pr.ring.drops_total ? 26 : 0);
	}
	/* First consumer: releases after k records, reads 500 more, dies by SIGKILL. */
	cons = spawn();
	if (cons == 0) {
		struct ring_consumer c;
		struct verifier vf = { 0 };
		struct consume_opts o = { .die_after = k };

		o.sock = consumer_connect(path, &c);
		consume(&c, &vf, &o);
		_exit(41); /* not reached: SIGKILL */
	}
	assert_int_equal(waitpid(cons, &status, 0), cons);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* Second consumer: must start exactly at record k and see everything after. */
	cons = spawn();
	if (cons == 0) {
		struct ring_consumer c;
		struct verifier vf = { 0 };
		struct consume_opts o = { 0 };

		o.sock = consumer_connect(path, &c);
		if (!consume(&c, &vf, &o))
			_exit(31);
		consumer_snapshot(&c, &vf);
		_exit(write(res[1], &vf.r, sizeof(vf.r)) == sizeof(vf.r) ? 0 : 32);
	}
	close(res[1]);
	wait_ok(cons, "second consumer");
	wait_ok(prod, "producer");
	read_result(res[0], &r);
	close(res[0]);
	unlink(path);
	assert_int_equal(r.first_seq, k);
	assert_int_equal(r.received, n - k);
	assert_int_equal(r.next_seq, n);
	assert_int_equal(r.bad + r.lost + r.unexplained + r.resets, 0);
}

static void restarted_producer_is_noticed_and_its_last_records_kept(void **state)
{
	uint64_t n1 = records_wanted() / 4, n2 = records_wanted() / 4;
	char path[64];
	int res[2], go[2];
	pid_t prod, cons;
	struct result r;
	char b = 'g';

	(void)state;
	make_sock_path(path, sizeof(path));
	assert_int_equal(pipe(res), 0);
	assert_int_equal(pipe(go), 0);
	prod = spawn();
	if (prod == 0) { /* first life: writes n1 records and exits without an end record */
		struct producer pr;

		producer_start(&pr, 0x1111, -1, path);
		while (pr.nconns == 0) {
			producer_accept(&pr);
			usleep(1000);
		}
		_exit(produce(&pr, 0, n1, true) || pr.ring.drops_total ? 25 : 0);
	}
	cons = spawn();
	if (cons == 0) {
		struct ring_consumer c;
		struct verifier vf = { 0 };
		struct consume_opts o = { 0 };
		uint64_t hb;

		o.sock = consumer_connect(path, &c);
		vf.r.generations[0] = c.generation;
		if (consume(&c, &vf, &o)) /* returns when the first producer is gone and drained */
			_exit(42);
		/* A dead producer's heartbeat goes stale (200 ms without a beat). */
		hb = ring_consumer_peer_heartbeat(&c);
		for (int i = 0; !ring_heartbeat_stale(hb, ring_now_ns(), 200000000ULL); i++) {
			if (i == 500 || ring_consumer_peer_heartbeat(&c) != hb)
				_exit(43);
			usleep(10000);
		}
		close(o.sock);
		ring_consumer_detach(&c);
		if (write(go[1], &b, 1) != 1) /* let the second life start */
			_exit(44);
		o.sock = consumer_connect(path, &c);
		vf.r.generations[1] = c.generation;
		if (!consume(&c, &vf, &o))
			_exit(45);
		consumer_snapshot(&c, &vf);
		_exit(write(res[1], &vf.r, sizeof(vf.r)) == sizeof(vf.r) ? 0 : 32);
	}
	close(res[1]);
	close(go[1]);
	wait_ok(prod, "first producer");
	assert_int_equal(read(go[0], &b, 1), 1);
	prod = spawn();
	if (prod == 0) { /* second life: a new ring, a new generation, sequence continues */
		struct producer pr;

		producer_start(&pr, 0x2222, -1, path);
		if (produce(&pr, n1, n2, true))
			_exit(25);
		produce_end(&pr, n1 + n2);
		_exit(pr.ring.drops_total ? 26 : 0);
	}
	wait_ok(cons, "consumer");
	wait_ok(prod, "second producer");
	read_result(res[0], &r);
	close(res[0]);
	close(go[0]);
	unlink(path);
	assert_int_equal(r.generations[0], 0x1111);
	assert_int_equal(r.generations[1], 0x2222);
	assert_int_equal(r.first_seq, 0);
	assert_int_equal(r.received, n1 + n2);
	assert_int_equal(r.next_seq, n1 + n2);
	assert_int_equal(r.bad + r.lost + r.unexplained + r.resets, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(consumer_that_keeps_up_loses_nothing),
		cmocka_unit_test(paused_consumer_gets_exact_loss_accounting),
		cmocka_unit_test(restarted_consumer_resumes_where_it_released),
		cmocka_unit_test(restarted_producer_is_noticed_and_its_last_records_kept),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
