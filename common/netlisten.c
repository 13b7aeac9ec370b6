/* SPDX-License-Identifier: Apache-2.0 */
/* Listening TCP sockets on exactly the address given (common/netlisten.h). */
#include "netlisten.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"

static int parse_port(const char *s, uint16_t *port)
{
	uint64_t v;

	if (parse_u64(s, 65535, &v))
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int net_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2];
	size_t hlen;
	uint16_t port;

	if (!colon || parse_port(colon + 1, &port))
		return -EINVAL;
	hlen = (size_t)(colon - s);
	if (hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = 0;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[hlen - 1] == ']') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		host[hlen - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return -EINVAL;
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
	}
	return 0;
}

void net_format_addr(const struct sockaddr *sa, char *out, size_t outlen, bool with_port)
{
	char a[INET6_ADDRSTRLEN];

	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		if (with_port)
			snprintf(out, outlen, "%s:%u", a, ntohs(in->sin_port));
		else
			snprintf(out, outlen, "%s", a);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		if (with_port)
			snprintf(out, outlen, "[%s]:%u", a, ntohs(in6->sin6_port));
		else
			snprintf(out, outlen, "%s", a);
	} else {
		snprintf(out, outlen, "?");
	}
}

/* A listening socket on exactly that address (IPv6: that address only, no v4-mapped). */
int net_listen(const char *spec, int backlog, char *address, size_t addrlen, uint16_t *port, char *err,
	       size_t errlen)
{
	struct sockaddr_storage ss, got;
	socklen_t len = 0, glen = sizeof(got);
	int one = 1, fd, rc;

	if (net_parse_listen(spec, &ss, &len)) {
		snprintf(err, errlen, "--listen %s: want ADDR:PORT with a numeric address (127.0.0.1:8443, "
			 "[::1]:8443; port 0 picks a free one)", spec);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, backlog) < 0 ||
	    getsockname(fd, (struct sockaddr *)&got, &glen) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s%s", spec, strerror(-rc),
			 rc == -EADDRINUSE ? " (another process has it: pick another port)" :
			 rc == -EACCES ? " (ports below 1024 need CAP_NET_BIND_SERVICE)" :
			 rc == -EADDRNOTAVAIL ? " (no interface has that address)" : "");
		close(fd);
		return rc;
	}
	net_format_addr((struct sockaddr *)&got, address, addrlen, true);
	*port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port :
						    ((struct sockaddr_in *)&got)->sin_port);
	return fd;
}

void net_http_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	fprintf(stderr, "<4>microhttpd: %s\n", msg);
}
