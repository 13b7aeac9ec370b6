/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host heartbeat (hostbeat.h): /proc's texts parsed, two readings
 * subtracted, one beat written. The texts are the kernel's, but a parser
 * that trusts no length, no number's width and no line's presence costs
 * nothing here: every read is bounded by len, every number by 64 bits.
 */
#include "hostbeat.h"

#include <errno.h>
#include <string.h>

#include "report.h"

#define NS_PER_S 1000000000ULL

/* One line: [p, nl) of a text, complete (ended by '\n'). */
struct line {
	const char *p, *end;
};

/* The next complete line at *off of text; false when none is left (a line without its '\n' is cut: not one). */
static bool next_line(const char *text, size_t len, size_t *off, struct line *l)
{
	const char *nl;

	if (*off >= len)
		return false;
	nl = memchr(text + *off, '\n', len - *off);
	if (!nl)
		return false;
	l->p = text + *off;
	l->end = nl;
	*off = (size_t)(nl - text) + 1;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Blanks, then a decimal number of at most 64 bits, then a blank or the line's end. */
static bool next_u64(struct line *l, uint64_t *v)
{
	uint64_t x = 0;

	while (l->p < l->end && is_blank(*l->p))
		l->p++;
	if (l->p == l->end || !is_digit(*l->p))
		return false;
	for (; l->p < l->end && is_digit(*l->p); l->p++) {
		unsigned d = (unsigned)(*l->p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	if (l->p < l->end && !is_blank(*l->p))
		return false;
	*v = x;
	return true;
}

/* Does the line start with word (then a blank or its end)? Moves past it. */
static bool take_word(struct line *l, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(l->end - l->p) < n || memcmp(l->p, word, n) || (l->p + n < l->end && !is_blank(l->p[n])))
		return false;
	l->p += n;
	return true;
}

/* ---- /proc/stat ------------------------------------------------------- */

/* "cpuN": a CPU's own line. */
static bool cpu_n_line(const struct line *l)
{
	return l->end - l->p > 3 && !memcmp(l->p, "cpu", 3) && is_digit(l->p[3]);
}

int hostbeat_parse_stat(const char *text, size_t len, struct hostbeat_cpu *out)
{
	uint64_t *const f[] = { &out->user, &out->nice, &out->system, &out->idle,
				&out->iowait, &out->irq, &out->softirq, &out->steal };
	struct line l;
	size_t off = 0;
	uint32_t cpus = 0;

	memset(out, 0, sizeof(*out));
	/* The "cpu" line is the first (fs/proc/stat.c); guest and guest_nice after steal are inside user. */
	if (!next_line(text, len, &off, &l) || !take_word(&l, "cpu"))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!next_u64(&l, f[i])) {
			memset(out, 0, sizeof(*out));
			return -EINVAL;
		}
	out->known = true;
	/* The CPUs online: one cpuN line each, then "intr". The text may end inside them: unknown. */
	while (next_line(text, len, &off, &l)) {
		if (!cpu_n_line(&l)) {
			out->cpus = cpus;
			break;
		}
		cpus++;
	}
	return 0;
}

/* ---- /proc/meminfo ---------------------------------------------------- */

/* "Key:   1234 kB" -> bytes. */
static bool meminfo_value(struct line *l, const char *key, uint64_t *bytes)
{
	size_t n = strlen(key);
	uint64_t kib;

	if ((size_t)(l->end - l->p) <= n || memcmp(l->p, key, n) || l->p[n] != ':')
		return false;
	l->p += n + 1;
	if (!next_u64(l, &kib) || !take_word(l, " kB") || l->p != l->end || kib > UINT64_MAX / 1024)
		return false;
	*bytes = kib * 1024;
	return true;
}

int hostbeat_parse_meminfo(const char *text, size_t len, struct hostbeat_mem *out)
{
	struct line l;
	size_t off = 0;

	memset(out, 0, sizeof(*out));
	while (next_line(text, len, &off, &l) && !(out->total_known && out->available_known)) {
		struct line k = l;

		if (!out->total_known && meminfo_value(&k, "MemTotal", &out->total_bytes))
			out->total_known = true;
		k = l;
		if (!out->available_known && meminfo_value(&k, "MemAvailable", &out->available_bytes))
			out->available_known = true;
	}
	return out->total_known || out->available_known ? 0 : -EINVAL;
}

/* ---- /proc/net/dev ---------------------------------------------------- */

/*
 * "  eth0: rx_bytes packets errs drop fifo frame compressed multicast
 * tx_bytes packets errs drop fifo colls carrier compressed" (the kernel's
 * dev_seq_printf_stats; older kernels wrote no blank after the colon).
 * Names never hold ':' or blanks (dev_valid_name()).
 */
static bool netdev_line(struct line l, struct hostbeat_iface *ifc)
{
	const char *colon, *name;
	uint64_t v[9];
	size_t n;

	while (l.p < l.end && is_blank(*l.p))
		l.p++;
	colon = memchr(l.p, ':', (size_t)(l.end - l.p));
	if (!colon || colon == l.p)
		return false;
	name = l.p;
	n = (size_t)(colon - name);
	if (n >= HOSTBEAT_IFNAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (is_blank(name[i]))
			return false;
	l.p = colon + 1;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!next_u64(&l, &v[i]))
			return false;
	memcpy(ifc->name, name, n);
	ifc->name[n] = 0;
	ifc->rx_bytes = v[0];
	ifc->tx_bytes = v[8];
	return true;
}

int hostbeat_parse_netdev(const char *text, size_t len, struct hostbeat_net *out)
{
	struct line l;
	size_t off = 0;

	out->known = false;
	out->complete = false;
	out->n = 0;
	/* Two header lines ("Inter-|   Receive ...", " face |bytes ..."): their '|' says so. */
	for (int i = 0; i < 2; i++)
		if (!next_line(text, len, &off, &l) || !memchr(l.p, '|', (size_t)(l.end - l.p)))
			return -EINVAL;
	while (next_line(text, len, &off, &l)) {
		struct hostbeat_iface ifc;

		if (!netdev_line(l, &ifc)) {
			out->n = 0;
			return -EINVAL; /* a format we do not know: no figure rather than a wrong one */
		}
		if (!strcmp(ifc.name, "lo"))
			continue;
		if (out->n == HOSTBEAT_IFACES_MAX) {
			out->known = true; /* complete stays false: the table is full */
			return 0;
		}
		out->v[out->n++] = ifc;
	}
	out->known = true;
	out->complete = off == len; /* bytes after the last complete line: the read bound cut the text */
	return 0;
}

/* ---- boot id ---------------------------------------------------------- */

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hostbeat_parse_boot_id(const char *text, size_t len, char out[HOSTBEAT_BOOT_ID_HEX + 1])
{
	static const char hex[] = "0123456789abcdef";
	struct line l;
	size_t off = 0, n = 0;

	out[0] = 0;
	if (!next_line(text, len, &off, &l) || l.end - l.p != 36)
		return -EINVAL;
	for (size_t i = 0; i < 36; i++) {
		bool dash_here = i == 8 || i == 13 || i == 18 || i == 23;
		int v = hex_value(l.p[i]);

		if (dash_here ? l.p[i] != '-' : v < 0) {
			out[0] = 0;
			return -EINVAL;
		}
		if (!dash_here)
			out[n++] = hex[v];
	}
	out[n] = 0;
	return 0;
}

/* ---- deltas ----------------------------------------------------------- */

uint64_t hostbeat_ticks_ns(uint64_t ticks, uint64_t hz)
{
	uint64_t whole, rest, part;

	if (!hz)
		return 0;
	whole = ticks / hz;
	rest = ticks % hz;
	if (rest > UINT64_MAX / NS_PER_S) /* only for a hz past 18 billion */
		return UINT64_MAX;
	part = rest * NS_PER_S / hz;
	if (whole > (UINT64_MAX - part) / NS_PER_S)
		return UINT64_MAX;
	return whole * NS_PER_S + part;
}

static uint64_t moved(uint64_t before, uint64_t after)
{
	return after > before ? after - before : 0;
}

static void add_sat(uint64_t *a, uint64_t v)
{
	*a = *a + v < *a ? UINT64_MAX : *a + v;
}

bool hostbeat_cpu_delta(const struct hostbeat_cpu *prev, const struct hostbeat_cpu *cur, uint64_t *busy_ticks,
			uint64_t *idle_ticks)
{
	*busy_ticks = *idle_ticks = 0;
	if (!prev->known || !cur->known)
		return false;
	/* Each counter on its own: iowait, for one, is known to step back (Documentation/filesystems/proc.rst). */
	add_sat(busy_ticks, moved(prev->user, cur->user));
	add_sat(busy_ticks, moved(prev->nice, cur->nice));
	add_sat(busy_ticks, moved(prev->system, cur->system));
	add_sat(busy_ticks, moved(prev->irq, cur->irq));
	add_sat(busy_ticks, moved(prev->softirq, cur->softirq));
	add_sat(busy_ticks, moved(prev->steal, cur->steal));
	add_sat(idle_ticks, moved(prev->idle, cur->idle));
	add_sat(idle_ticks, moved(prev->iowait, cur->iowait));
	return true;
}

/* prev's interface of that name; hint: where it was last time (the kernel's order rarely changes). */
static const struct hostbeat_iface *find_iface(const struct hostbeat_net *prev, const char *name, uint32_t hint)
{
	if (hint < prev->n && !strcmp(prev->v[hint].name, name))
		return &prev->v[hint];
	for (uint32_t i = 0; i < prev->n; i++)
		if (!strcmp(prev->v[i].name, name))
			return &prev->v[i];
	return NULL;
}

bool hostbeat_net_delta(const struct hostbeat_net *prev, const struct hostbeat_net *cur, uint64_t *rx_bytes,
			uint64_t *tx_bytes)
{
	*rx_bytes = *tx_bytes = 0;
	if (!prev->known || !cur->known)
		return false;
	for (uint32_t i = 0; i < cur->n; i++) {
		const struct hostbeat_iface *c = &cur->v[i], *p = find_iface(prev, c->name, i);

		if (p) {
			add_sat(rx_bytes, moved(p->rx_bytes, c->rx_bytes));
			add_sat(tx_bytes, moved(p->tx_bytes, c->tx_bytes));
		} else if (prev->complete) { /* it came up during the interval: all it carried is in it */
			add_sat(rx_bytes, c->rx_bytes);
			add_sat(tx_bytes, c->tx_bytes);
		}
	}
	return true;
}

/* ---- beats ------------------------------------------------------------ */

void hostbeat_start(struct hostbeat_state *s, long clk_tck, const struct hostbeat_reading *first)
{
	s->clk_tck = clk_tck > 0 ? (uint64_t)clk_tck : 0;
	s->beats = 0;
	s->prev = *first;
}

void hostbeat_next(struct hostbeat_state *s, const struct hostbeat_reading *cur, struct hostbeat *out)
{
	const struct hostbeat_reading *prev = &s->prev;
	uint64_t busy, idle;

	memset(out, 0, sizeof(*out));
	out->beat = ++s->beats;
	memcpy(out->boot_id, cur->boot_id, sizeof(out->boot_id));
	out->start_ns = prev->real_ns;
	out->end_ns = cur->real_ns;
	out->uptime_known = cur->uptime_known;
	out->uptime_ns = cur->uptime_ns;
	out->cpus_known = cur->cpu.known && cur->cpu.cpus > 0;
	out->cpus = cur->cpu.cpus;
	if (hostbeat_cpu_delta(&prev->cpu, &cur->cpu, &busy, &idle) && s->clk_tck) {
		out->cpu_known = true;
		out->cpu_busy_ns = hostbeat_ticks_ns(busy, s->clk_tck);
		out->cpu_idle_ns = hostbeat_ticks_ns(idle, s->clk_tck);
	}
	out->mem_total_known = cur->mem.total_known;
	out->mem_total_bytes = cur->mem.total_bytes;
	/* MemAvailable is an estimate and may exceed MemTotal for a moment: nothing used, not a wrap. */
	out->mem_used_known = cur->mem.total_known && cur->mem.available_known;
	out->mem_used_bytes = moved(cur->mem.available_bytes, cur->mem.total_bytes);
	out->net_known = hostbeat_net_delta(&prev->net, &cur->net, &out->net_rx_bytes, &out->net_tx_bytes);
	s->prev = *cur;
}

int hostbeat_write(struct obuf *o, const struct hostbeat *b)
{
	struct json j;

	json_init(&j, o);
	json_object_begin(&j);
	json_kv_string(&j, "schema", HOSTBEAT_SCHEMA);
	json_kv_u64(&j, "beat", b->beat);
	json_kv_string(&j, "boot_id", b->boot_id[0] ? b->boot_id : NULL);
	json_kv_u64(&j, "start_ns", b->start_ns);
	json_kv_u64(&j, "end_ns", b->end_ns);
	if (b->uptime_known)
		json_kv_double(&j, "uptime_s", (double)b->uptime_ns / (double)NS_PER_S);
	else
		json_kv_null(&j, "uptime_s");
	json_kv_u64_or_null(&j, "cpus", b->cpus_known, b->cpus);
	json_kv_u64_or_null(&j, "cpu_busy_ns", b->cpu_known, b->cpu_busy_ns);
	json_kv_u64_or_null(&j, "cpu_idle_ns", b->cpu_known, b->cpu_idle_ns);
	json_kv_u64_or_null(&j, "mem_total_bytes", b->mem_total_known, b->mem_total_bytes);
	json_kv_u64_or_null(&j, "mem_used_bytes", b->mem_used_known, b->mem_used_bytes);
	json_kv_u64_or_null(&j, "net_rx_bytes", b->net_known, b->net_rx_bytes);
	json_kv_u64_or_null(&j, "net_tx_bytes", b->net_known, b->net_tx_bytes);
	json_kv_u64(&j, "runs", b->runs);
	json_kv_u64(&j, "steps", b->steps);
	json_kv_u64(&j, "processes", b->processes);
	if (b->host)
		report_write_host(&j, b->host); /* the very object every TL_RUN carries */
	else
		json_kv_null(&j, "host");
	json_object_end(&j);
	return o->err;
}
