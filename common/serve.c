/* SPDX-License-Identifier: Apache-2.0 */
/* Around serving, for tracer-ingest and tracer-web (common/serve.h). */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

#define NS_PER_S 1000000000ull

void serve_format_listen(const struct config_listen *l, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN] = "";

	inet_ntop(l->family, l->addr, a, sizeof(a));
	if (l->family == AF_INET6)
		snprintf(out, outlen, "[%s]:%u", a, l->port);
	else
		snprintf(out, outlen, "%s:%u", a, l->port);
}

void serve_announce_ready(int ready_fd, uint16_t port)
{
	char line[32];
	int n;

	if (ready_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "ready %u\n", port);
	if (write(ready_fd, line, (size_t)n) != n)
		fprintf(stderr, "<4>--ready-fd %d: %s\n", ready_fd, strerror(errno));
	close(ready_fd);
}

/*
 * With systemd's watchdog (WatchdogSec=), wake often enough to send
 * WATCHDOG=1 in time; it says that this process and its main thread are
 * alive, not that the HTTP threads are.
 */
void serve_wait_for_stop(const sigset_t *set, struct notify *nt, void (*on_hup)(void *ctx), void *ctx)
{
	for (;;) {
		uint64_t wake_ns = nt->watchdog_ns / 4;
		struct timespec ts = { .tv_sec = (time_t)(wake_ns / NS_PER_S), .tv_nsec = (long)(wake_ns % NS_PER_S) };
		int sig;

		notify_watchdog(nt, mono_ns());
		sig = sigtimedwait(set, NULL, wake_ns ? &ts : NULL);
		if (sig == SIGHUP && on_hup) {
			on_hup(ctx);
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT) {
			notify_send(nt, "STOPPING=1");
			fprintf(stderr, "<6>stopping (%s)\n", strsignal(sig));
			return;
		}
	}
}
