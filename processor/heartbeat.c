/* SPDX-License-Identifier: Apache-2.0 */
/* The host heartbeat: its files, its timer, its records (heartbeat.h). */
#include "heartbeat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "lake.h"
#include "readfile.h"

#define HEARTBEAT_LAST_MIN_NS 100000000ULL /* less since the last reading says nothing worth a record */

static const char *const file_path[HEARTBEAT_FILES] = { HOSTBEAT_STAT_PATH, HOSTBEAT_MEMINFO_PATH,
							 HOSTBEAT_NETDEV_PATH, HOSTBEAT_BOOT_ID_PATH };

void heartbeat_init(struct heartbeat *h)
{
	h->on = false;
	h->sent = 0;
	h->warned = 0;
	for (unsigned i = 0; i < HEARTBEAT_FILES; i++)
		h->fd[i] = -1;
}

/* The whole of a /proc file again, from its start, at most cap bytes: their count, or -errno. */
static ssize_t read_again(int fd, char *buf, size_t cap)
{
	return lseek(fd, 0, SEEK_SET) < 0 ? -errno : read_fd_upto(fd, buf, cap);
}

/* One look at the host (hostbeat.h) into h->now; now: the loop's CLOCK_MONOTONIC. What cannot be read is unknown. */
static void take_reading(struct heartbeat *h, uint64_t now)
{
	struct hostbeat_reading *r = &h->now;

	for (unsigned i = 0; i < HEARTBEAT_FILES; i++) {
		ssize_t n = h->fd[i] >= 0 ? read_again(h->fd[i], h->text, sizeof(h->text)) : -EBADF;
		size_t len = n > 0 ? (size_t)n : 0; /* a failed read parses as nothing: unknown */
		int rc = 0;

		switch (i) {
		case HEARTBEAT_STAT: rc = hostbeat_parse_stat(h->text, len, &r->cpu); break;
		case HEARTBEAT_MEMINFO: rc = hostbeat_parse_meminfo(h->text, len, &r->mem); break;
		case HEARTBEAT_NETDEV:
			rc = hostbeat_parse_netdev(h->text, len, &r->net);
			if (len == sizeof(h->text))
				r->net.complete = false; /* the bound may have cut it at a line's end */
			break;
		case HEARTBEAT_BOOT_ID: rc = hostbeat_parse_boot_id(h->text, len, r->boot_id); break;
		}
		if (h->fd[i] < 0 || !(n < 0 || rc) || (h->warned & (1u << i)))
			continue; /* a missing file was said at start; a failure once */
		h->warned |= 1u << i;
		fprintf(stderr, "<4>host heartbeat: %s %s: its fields are null until it reads again\n", file_path[i],
			n < 0 ? strerror((int)-n) : "has no figure in the form expected");
	}
	r->real_ns = now + h->mono_to_real;
	r->uptime_ns = clock_ns(CLOCK_BOOTTIME);
	r->uptime_known = r->uptime_ns != 0;
	h->read_at = now;
}

void heartbeat_open(struct heartbeat *h, uint64_t every_ns, uint64_t mono_to_real, uint64_t now)
{
	char missing[512];
	size_t len = 0;

	missing[0] = 0;
	for (unsigned i = 0; i < HEARTBEAT_FILES; i++) {
		h->fd[i] = open(file_path[i], O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (h->fd[i] < 0 && len < sizeof(missing))
			len += (size_t)snprintf(missing + len, sizeof(missing) - len, "%s%s (%s)", len ? ", " : "",
						file_path[i], strerror(errno));
	}
	if (missing[0])
		fprintf(stderr, "<4>host heartbeat: cannot open %s: those fields are null in every beat\n", missing);
	h->mono_to_real = mono_to_real;
	take_reading(h, now);
	hostbeat_start(&h->state, sysconf(_SC_CLK_TCK), &h->now);
	h->every = every_ns;
	h->next = now + every_ns;
	h->on = true;
}

bool heartbeat_due(struct heartbeat *h, uint64_t now)
{
	if (!h->on || now < h->next)
		return false;
	/* On the interval's grid; after a stall of more than one interval (a suspended host), from now. */
	h->next = now - h->next < h->every ? h->next + h->every : now + h->every;
	return true;
}

bool heartbeat_last_due(const struct heartbeat *h, uint64_t now)
{
	return h->on && now - h->read_at >= HEARTBEAT_LAST_MIN_NS;
}

int heartbeat_send(struct heartbeat *h, uint64_t now, const struct heartbeat_figures *f, struct deliver *dlv)
{
	struct hostbeat b;
	struct obuf o;
	int rc;

	take_reading(h, now);
	hostbeat_next(&h->state, &h->now, &b);
	b.runs = f->runs;
	b.steps = f->steps;
	b.processes = f->processes;
	b.host = f->host;
	obuf_init_mem(&o, TL_RUN_MAX);
	rc = hostbeat_write(&o, &b);
	if (rc) {
		fprintf(stderr, "<3>host heartbeat %llu not written: %s\n", (unsigned long long)b.beat, strerror(-rc));
		rc = 0;
	} else if ((rc = deliver_own_record(dlv, TL_HOST, o.buf, (uint32_t)o.len)) == 0) {
		h->sent++;
	}
	obuf_free(&o);
	return rc;
}
