/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host heartbeat (TL_HOST, docs/live.md "Host heartbeat"): in daemon
 * mode the processor says, every heartbeat_interval, what the whole host
 * did over the interval - CPU busy and idle, memory in use, network bytes -
 * and what it was running, so that a host with nothing to run is seen as
 * idle, and a host that stops sending as unknown.
 *
 * Pure: the parsers take the text of a /proc file as read (the caller
 * reads it: the processor's sandbox opens nothing), the deltas take two
 * readings, the writer takes the beat. No I/O, no clock.
 *
 *   /proc/stat                        the "cpu" line, in USER_HZ ticks; its cpuN lines: the online CPUs
 *   /proc/meminfo                     MemTotal, MemAvailable
 *   /proc/net/dev                     rx and tx bytes of every interface but lo
 *   /proc/sys/kernel/random/boot_id   this boot, as 32 hex digits
 *
 * Every parser reads complete lines only: a text cut short by its read
 * bound (or a file that changed format) never gives a number cut in the
 * middle. What cannot be read is unknown, written null; a counter that
 * went backwards moved by 0.
 */
#ifndef TRACER_REPORT_HOSTBEAT_H
#define TRACER_REPORT_HOSTBEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hostid.h"
#include "json.h"

#define HOSTBEAT_SCHEMA "tracer.host.v1"

#define HOSTBEAT_STAT_PATH "/proc/stat"
#define HOSTBEAT_MEMINFO_PATH "/proc/meminfo"
#define HOSTBEAT_NETDEV_PATH "/proc/net/dev"
#define HOSTBEAT_BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

/*
 * Bytes read of a file at most. /proc/stat: its cpuN lines (about 60 bytes
 * each) come first, so 64 KiB covers some 700 CPUs; past that the count of
 * CPUs is unknown, not wrong (the "cpu" line is the first). /proc/net/dev:
 * about 130 bytes an interface, some 480 of them. /proc/meminfo is ~1.5 KiB.
 */
#define HOSTBEAT_READ_MAX (64u << 10)
#define HOSTBEAT_IFACES_MAX 512u  /* interfaces of one reading; past it, the reading is incomplete */
#define HOSTBEAT_IFNAME_MAX 16u   /* IFNAMSIZ: the kernel's names are at most 15 bytes */
#define HOSTBEAT_BOOT_ID_HEX 32u

/* The "cpu" line of /proc/stat, in USER_HZ ticks (sysconf(_SC_CLK_TCK)). guest and guest_nice are inside user. */
struct hostbeat_cpu {
	bool known;
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
	uint32_t cpus;              /* its cpuN lines: the CPUs online; 0: unknown (the text ended inside them) */
};

struct hostbeat_mem {
	bool total_known, available_known;
	uint64_t total_bytes;       /* MemTotal */
	uint64_t available_bytes;   /* MemAvailable (since Linux 3.14) */
};

struct hostbeat_iface {
	char name[HOSTBEAT_IFNAME_MAX];
	uint64_t rx_bytes, tx_bytes;
};

struct hostbeat_net {
	bool known;
	bool complete;              /* every interface is here: the text and the table were long enough (a
				     * caller whose read filled its buffer clears it: the cut may fall between lines) */
	uint32_t n;
	struct hostbeat_iface v[HOSTBEAT_IFACES_MAX]; /* lo left out */
};

/* One look at the host: everything a beat is the difference of. */
struct hostbeat_reading {
	uint64_t real_ns;           /* when it was taken: CLOCK_REALTIME (the processor's: docs/live.md) */
	bool uptime_known;
	uint64_t uptime_ns;         /* CLOCK_BOOTTIME then: the host's uptime, as /proc/uptime has it */
	char boot_id[HOSTBEAT_BOOT_ID_HEX + 1]; /* "": unknown */
	struct hostbeat_cpu cpu;
	struct hostbeat_mem mem;
	struct hostbeat_net net;
};

/* One beat, as TL_HOST carries it (schema tracer.host.v1). Each *_known false: null. */
struct hostbeat {
	uint64_t beat;              /* 1, 2, ... since the processor started */
	char boot_id[HOSTBEAT_BOOT_ID_HEX + 1]; /* "": null */
	uint64_t start_ns, end_ns;  /* [previous reading, this one), CLOCK_REALTIME */
	bool uptime_known;
	uint64_t uptime_ns;
	bool cpus_known;
	uint32_t cpus;
	bool cpu_known;
	uint64_t cpu_busy_ns;       /* user+nice+system+irq+softirq+steal over the interval, all CPUs */
	uint64_t cpu_idle_ns;       /* idle+iowait */
	bool mem_total_known, mem_used_known;
	uint64_t mem_total_bytes, mem_used_bytes; /* MemTotal, MemTotal - MemAvailable at the end */
	bool net_known;
	uint64_t net_rx_bytes, net_tx_bytes; /* over the interval, every interface but lo */
	uint64_t runs, steps, processes;      /* at the end: live runs, running steps, live processes */
	const struct hostid *host;  /* the "host" object, as TL_RUN's; NULL: null */
};

/* The beats so far and the reading the next one starts from. */
struct hostbeat_state {
	uint64_t clk_tck;           /* sysconf(_SC_CLK_TCK), taken once; 0: CPU times unknown */
	uint64_t beats;
	struct hostbeat_reading prev;
};

/*
 * Parsers: len bytes of text (need not be NUL-terminated), complete lines
 * only. 0 and *out filled, or -EINVAL when the text has nothing usable
 * (*out then says unknown).
 *
 * stat: the "cpu" line with at least its 8 first numbers (user .. steal;
 * every kernel since 2.6.11 has 10). meminfo: 0 when either key was found
 * (each has its flag). netdev: the two header lines, then
 * "NAME: 16 numbers" lines; a line without its first 9 numbers (through tx
 * bytes) makes the whole text unusable. boot_id: a UUID as the kernel
 * writes it, 8-4-4-4-12 hex digits, to 32 lowercase hex digits.
 */
int hostbeat_parse_stat(const char *text, size_t len, struct hostbeat_cpu *out);
int hostbeat_parse_meminfo(const char *text, size_t len, struct hostbeat_mem *out);
int hostbeat_parse_netdev(const char *text, size_t len, struct hostbeat_net *out);
int hostbeat_parse_boot_id(const char *text, size_t len, char out[HOSTBEAT_BOOT_ID_HEX + 1]);

/* ticks of a clock of hz per second, in ns (saturating); 0 when hz is 0. */
uint64_t hostbeat_ticks_ns(uint64_t ticks, uint64_t hz);

/*
 * Deltas between two readings, each counter on its own: one that went
 * backwards (a counter reset, an interface re-created) moved by 0. false
 * when either reading is unknown. net: an interface in cur only counts
 * its whole counters when prev was complete (it came up during the
 * interval), else 0 (it may have been cut from prev).
 */
bool hostbeat_cpu_delta(const struct hostbeat_cpu *prev, const struct hostbeat_cpu *cur, uint64_t *busy_ticks,
			uint64_t *idle_ticks);
bool hostbeat_net_delta(const struct hostbeat_net *prev, const struct hostbeat_net *cur, uint64_t *rx_bytes,
			uint64_t *tx_bytes);

/* The first reading: what beat 1 starts from. clk_tck: sysconf(_SC_CLK_TCK) (<= 0: unknown). */
void hostbeat_start(struct hostbeat_state *s, long clk_tck, const struct hostbeat_reading *first);

/*
 * The next beat: from the previous reading to cur, which becomes the
 * previous. runs, steps, processes and host are the caller's to fill.
 */
void hostbeat_next(struct hostbeat_state *s, const struct hostbeat_reading *cur, struct hostbeat *out);

/* The beat as one tracer.host.v1 JSON object; "host" through report_write_host(). 0 or o's error. */
int hostbeat_write(struct obuf *o, const struct hostbeat *b);

#endif /* TRACER_REPORT_HOSTBEAT_H */
