/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The listening socket of tracer-ingest and tracer-web: "ADDR:PORT" or
 * "[ADDR6]:PORT", numeric only, so that it is exactly that address (no
 * name lookup, no IPv4-mapped IPv6); port 0: the kernel picks a free one.
 */
#ifndef TRACER_COMMON_NETLISTEN_H
#define TRACER_COMMON_NETLISTEN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Parse "ADDR:PORT" / "[ADDR6]:PORT": 0 or -EINVAL. */
int net_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/* "1.2.3.4:80", "[::1]:80" (or without the port), "?" for another family or NULL. */
void net_format_addr(const struct sockaddr *sa, char *out, size_t outlen, bool with_port);
/*
 * A non-blocking, close-on-exec socket listening on spec: its descriptor,
 * with the address bound (port included) in address and the port in
 * *port; or -errno with err saying what failed and what to do.
 */
int net_listen(const char *spec, int backlog, char *address, size_t addrlen, uint16_t *port, char *err,
	       size_t errlen);

/* libmicrohttpd's error logger (MHD_OPTION_EXTERNAL_LOGGER) for both HTTP daemons: one <4> line on stderr. */
__attribute__((format(printf, 2, 0))) void net_http_log(void *cls, const char *fmt, va_list ap);

#endif /* TRACER_COMMON_NETLISTEN_H */
