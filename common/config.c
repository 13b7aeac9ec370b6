/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer.conf: one table of keys, one parser for the file and for
 * command-line overrides (docs/config.md).
 *
 * Values are checked by the same setter whichever way they come (file,
 * --set, the table's own defaults), and a setter writes its field only
 * once the value is known good. A parse works on a copy of the config and
 * hands it over only when every line and the whole are valid.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_format.h"
#include "conf_lines.h"
#include "parse.h"

enum config_type { CT_PATH, CT_STRING, CT_BOOL, CT_UINT, CT_BYTES, CT_DURATION, CT_LISTEN, CT_URLS, CT_PRICE };

static const char *const type_names[] = {
	[CT_PATH] = "path", [CT_STRING] = "string", [CT_BOOL] = "bool", [CT_UINT] = "integer",
	[CT_BYTES] = "size", [CT_DURATION] = "duration", [CT_LISTEN] = "host:port", [CT_URLS] = "URLs",
	[CT_PRICE] = "price",
};

#define CK_EMPTY_OK 0x1u /* an empty value is allowed: not set */
#define CK_POW2 0x2u     /* size: a power of two */
#define CK_USER 0x4u     /* string: a user name or uid, not root */
#define CK_HOST_ID 0x8u  /* string: 32 hex digits */
#define CK_LOWER_NAME 0x10u /* string: lowercase letters, digits and '-', a letter first (cloud, region) */
#define CK_INSTANCE_TYPE 0x20u /* string: letters, digits, '.', '_' and '-', a letter or digit first */
#define CK_DB_URI 0x40u  /* path: or a PostgreSQL database, a libpq URI (postgresql://, postgres://) */

struct config_key {
	const char *name;
	enum config_type type;
	unsigned flags;
	size_t offset, size; /* of the field in struct tracer_config */
	uint64_t min, max;   /* integer, size (bytes), duration (ns) */
	const char *def;     /* the default, as it is written in the file */
	const char *users;   /* who reads it */
	const char *doc;     /* one line */
};

#define MS 1000000ULL
#define SEC (1000 * MS)
#define MIN (60 * SEC)
#define HOUR (60 * MIN)
#define DAY (24 * HOUR)
#define KIB 1024ULL
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)
#define TIB (1024 * GIB)

/*
 * The field f of struct tracer_config, which must have type T: a table
 * entry naming the wrong field fails to compile (array of size -1).
 */
#define FIELD(f, T)                                                                                 \
	.offset = offsetof(struct tracer_config, f) +                                               \
		  0 * sizeof(char[_Generic(((struct tracer_config *)0)->f, T: 1, default: -1)]), \
	.size = sizeof(((struct tracer_config *)0)->f)

#define PATH(k, f, fl, d, u, doc) { k, CT_PATH, fl, FIELD(f, char *), 0, 0, d, u, doc }
#define STRING(k, f, fl, d, u, doc) { k, CT_STRING, fl, FIELD(f, char *), 0, 0, d, u, doc }
#define BOOL(k, f, d, u, doc) { k, CT_BOOL, 0, FIELD(f, bool), 0, 1, d, u, doc }
#define UINT(k, f, lo, hi, d, u, doc) { k, CT_UINT, 0, FIELD(f, uint32_t), lo, hi, d, u, doc }
#define BYTES(k, f, fl, lo, hi, d, u, doc) { k, CT_BYTES, fl, FIELD(f, uint64_t), lo, hi, d, u, doc }
#define DURATION(k, f, lo, hi, d, u, doc) { k, CT_DURATION, 0, FIELD(f, uint64_t), lo, hi, d, u, doc }
#define LISTEN(k, f, d, u, doc) { k, CT_LISTEN, 0, FIELD(f, struct config_listen), 0, 0, d, u, doc }
#define URLS(k, f, fl, d, u, doc) { k, CT_URLS, fl, FIELD(f, char *), 0, 0, d, u, doc }
#define PRICE(k, f, fl, hi, d, u, doc) { k, CT_PRICE, fl, FIELD(f, struct config_price), 0, hi, d, u, doc }

/*
 * Every key. The defaults are text, parsed by the key's own setter, so a
 * default that its bounds refuse fails the defaults test, not a daemon.
 */
static const struct config_key keys[] = {
	PATH("state_dir", state_dir, 0, "/var/lib/tracer", "processor", "the processor's spool and status files"),
	PATH("runtime_dir", runtime_dir, 0, "/run/tracer", "collector, processor",
	     "the collector's socket, collector.sock"),
	STRING("collector_user", collector_user, CK_USER, "65533", "collector",
	       "user (name or uid) the collector runs as once its programs are loaded"),
	STRING("processor_user", processor_user, CK_USER, "tracer", "processor", "user (name or uid) the processor runs as"),

	PATH("rules", rules, CK_EMPTY_OK, "", "collector", "filter rules file (exclude, include, env); empty: none"),
	DURATION("sample_interval", sample_interval_ns, 100 * MS, 60 * SEC, "1s", "collector",
		 "how often a running process is sampled"),
	UINT("ring_order", ring_order, 16, 30, "22", "collector",
	     "the shared ring holds 2^ring_order bytes (22: 4 MiB)"),
	BYTES("kernel_buffer", kernel_buffer, CK_POW2, MIB, GIB, "16MiB", "collector",
	      "the kernel's BPF ring buffer, a power of two"),

	PATH("tool_rules", tool_rules, CK_EMPTY_OK, "", "processor", "tool naming rules file; empty: none"),
	PATH("redact_rules", redact_rules, CK_EMPTY_OK, "", "processor", "redaction rules file; empty: none"),
	DURATION("stall_after", stall_after_ns, SEC, 366 * DAY, "300s", "processor",
		 "a live process with no CPU or I/O progress this long is stalled"),
	DURATION("io_wait_after", io_wait_after_ns, 0, 366 * DAY, "10s", "processor",
		 "an uninterruptible (I/O) wait this long is reported"),
	DURATION("net_wait_after", net_wait_after_ns, 0, 366 * DAY, "30s", "processor",
		 "a network wait this long is reported"),
	UINT("max_processes", max_processes, 1, 4194304, "65536", "processor",
	     "size of the process table; processes beyond it are counted, not tracked"),
	DURATION("heartbeat_interval", heartbeat_interval_ns, SEC, HOUR, "60s", "processor",
		 "daemon mode: how often the host's CPU, memory and network figures go to the lake (TL_HOST)"),

	STRING("cloud", cloud, CK_EMPTY_OK | CK_LOWER_NAME, "", "processor",
	       "the cloud this host runs in (aws, gcp, azure, ...); empty: what DMI says"),
	STRING("instance_type", instance_type, CK_EMPTY_OK | CK_INSTANCE_TYPE, "", "processor",
	       "this host's instance (machine) type, e.g. m6i.xlarge; empty: what DMI says"),
	STRING("region", region, CK_EMPTY_OK | CK_LOWER_NAME, "", "processor",
	       "the region this host runs in, e.g. us-east-1 (DMI does not say); empty: unknown"),
	PRICE("price_per_hour", price_per_hour, CK_EMPTY_OK, 100000 * CONFIG_MICRO, "", "processor",
	      "what this host costs per hour in US dollars, e.g. 0.192; overrides any price table; empty: unknown"),

	URLS("upload_url", upload_url, CK_EMPTY_OK, "", "processor",
	     "where batches are uploaded (http or https); several: the next takes over when one fails; empty: keep "
	     "them in the spool"),
	PATH("signing_key", signing_key, 0, "/etc/tracer/signing.key", "processor, cli",
	     "the secret key batches are signed with"),
	PATH("signing_key_next", signing_key_next, CK_EMPTY_OK, "", "processor",
	     "key rotation: announced in a batch signed with signing_key, used once the lake has that batch"),
	PATH("ca_file", ca_file, CK_EMPTY_OK, "", "processor", "CA certificates for the upload (PEM); empty: the system's"),
	PATH("client_cert", client_cert, CK_EMPTY_OK, "", "processor",
	     "client certificate for the upload (PEM); empty: none; needs client_key"),
	PATH("client_key", client_key, CK_EMPTY_OK, "", "processor",
	     "client certificate's key (PEM); empty: none; needs client_cert"),
	BOOL("tls_verify", tls_verify, "true", "processor",
	     "verify the ingest's certificate and name (false only for tests)"),
	STRING("host_id", host_id, CK_EMPTY_OK | CK_HOST_ID, "", "processor, cli",
	       "this host's id, 32 hex digits; empty: /etc/machine-id"),
	UINT("batch_records", batch_records, 1, 100000, "5000", "processor", "most records in one batch"),
	DURATION("batch_interval", batch_interval_ns, 10 * MS, 60 * SEC, "1s", "processor",
		 "a batch is closed at most this long after its first record"),
	DURATION("fsync_interval", fsync_interval_ns, MS, SEC, "200ms", "processor",
		 "spool writes reach the disk at least this often"),
	BYTES("spool_quota", spool_quota, 0, 16 * MIB, TIB, "1GiB", "processor",
	      "most disk space the spool may use (at least two segments)"),
	BYTES("segment_size", segment_size, 0, MIB, GIB, "16MiB", "processor", "a spool segment is closed at this size"),
	DURATION("segment_age", segment_age_ns, SEC, HOUR, "60s", "processor",
		 "a spool segment is closed this long after it was opened"),
	DURATION("connect_timeout", connect_timeout_ns, 100 * MS, 10 * MIN, "10s", "processor",
		 "longest wait for the upload's connection"),
	DURATION("transfer_timeout", transfer_timeout_ns, SEC, HOUR, "60s", "processor",
		 "longest wait for one upload request to complete"),
	DURATION("retry_max", retry_max_ns, SEC, DAY, "300s", "processor",
		 "longest wait between upload retries (the backoff doubles up to it)"),

	LISTEN("ingest_listen", ingest_listen, "127.0.0.1:8750", "ingest",
	       "address and port the ingest listens on (IPv4, [IPv6] or localhost)"),
	PATH("ingest_db", ingest_db, CK_DB_URI, "/var/lib/tracer-ingest/lake.db", "ingest, cli",
	     "the ingest's database: an SQLite file, or a PostgreSQL database as a libpq URI (postgresql://...)"),
	PATH("ingest_keys", ingest_keys, 0, "/etc/tracer/ingest.keys", "ingest",
	     "the enrolled public keys the ingest accepts batches from"),
	BYTES("ingest_max_body", ingest_max_body, 0, MIB, BATCH_MAX_WIRE, "32MiB", "ingest",
	      "largest request body the ingest reads"),
	UINT("ingest_max_connections", ingest_max_connections, 1, 4096, "64", "ingest",
	     "most connections the ingest serves at once"),
	DURATION("ingest_timeout", ingest_timeout_ns, SEC, HOUR, "30s", "ingest",
		 "an ingest connection idle this long is closed"),
	PATH("ingest_tls_cert", ingest_tls_cert, CK_EMPTY_OK, "", "ingest",
	     "the ingest's TLS certificate, then any intermediates (PEM); empty: plain HTTP; needs ingest_tls_key"),
	PATH("ingest_tls_key", ingest_tls_key, CK_EMPTY_OK, "", "ingest",
	     "its private key (PEM, unencrypted); needs ingest_tls_cert"),
	PATH("ingest_client_ca", ingest_client_ca, CK_EMPTY_OK, "", "ingest",
	     "with TLS: the CA client certificates must chain to (PEM), checked in the handshake; empty: none asked"),
	DURATION("lake_retention", lake_retention_ns, 0, 100 * 366 * DAY, "2160h", "ingest",
		 "how long the lake keeps records, samples, files, heartbeats, the agents' counters and losses, and "
		 "its batches ledger, in whole days (2160h: 90 days); 0: for ever"),
	DURATION("lake_retention_runs", lake_retention_runs_ns, 0, 100 * 366 * DAY, "8784h", "ingest",
		 "how long the lake keeps runs (with their steps, processes and signals) and processes (8784h: 366 "
		 "days); 0: for ever"),

	DURATION("sweep_window", sweep_window_ns, SEC, 366 * DAY, "336h", "cli, web",
		 "tracer sweep's window before the lake's newest word (336h: 14 days; --since overrides)"),
	UINT("sweep_gcp_cpu_millicores", sweep_gcp_cpu_millicores, 1, 1000000, "30", "cli, web",
	     "idle host (GCP's rule): under this CPU use (thousandths of a core) ..."),
	UINT("sweep_gcp_cpu_percent", sweep_gcp_cpu_percent, 1, 100, "97", "cli, web",
	     "... for this share of the observed time"),
	UINT("sweep_gcp_rx_bytes_per_s", sweep_gcp_rx_bytes_per_s, 0, 4000000000u, "2000", "cli, web",
	     "idle host (GCP's rule): under this many bytes received per second ..."),
	UINT("sweep_gcp_tx_bytes_per_s", sweep_gcp_tx_bytes_per_s, 0, 4000000000u, "1000", "cli, web",
	     "... and sent per second ..."),
	UINT("sweep_gcp_net_percent", sweep_gcp_net_percent, 1, 100, "95", "cli, web",
	     "... for this share of the observed time"),
	DURATION("sweep_gcp_min_observed", sweep_gcp_min_observed_ns, SEC, 366 * DAY, "24h", "cli, web",
		 "idle host (GCP's rule): judged only when observed at least this long"),
	UINT("sweep_aws_cpu_percent", sweep_aws_cpu_percent, 1, 100, "10", "cli, web",
	     "idle host (AWS's rule): a low day averages at most this share of the host's CPUs ..."),
	UINT("sweep_aws_net_bytes", sweep_aws_net_bytes, 0, 4000000000u, "5000000", "cli, web",
	     "... and moves at most this many bytes over the network"),
	UINT("sweep_aws_days", sweep_aws_days, 1, 366, "4", "cli, web",
	     "idle host (AWS's rule): at least this many low days ..."),
	UINT("sweep_aws_window_days", sweep_aws_window_days, 1, 366, "14", "cli, web",
	     "... among the last this many days"),
	DURATION("sweep_day", sweep_day_ns, SEC, DAY, "24h", "cli, web",
		 "the length of a day for AWS's rule (shorter only for tests)"),
	DURATION("sweep_run_idle_min", sweep_run_idle_min_ns, SEC, 366 * DAY, "300s", "cli, web",
		 "idle time inside a run: a gap between steps, or the tail after the last, at least this long"),
	DURATION("sweep_worker_idle", sweep_worker_idle_ns, SEC, 366 * DAY, "1h", "cli, web",
		 "a run's engine or batch worker alive with nothing under it working this long is stuck"),
	DURATION("sweep_session_idle", sweep_session_idle_ns, SEC, 366 * DAY, "4h", "cli, web",
		 "an interactive session (Jupyter, RStudio, a shell under sshd or tmux) idle this long is forgotten"),
	DURATION("sweep_idle_process_age", sweep_idle_process_age_ns, SEC, 366 * DAY, "24h", "cli, web",
		 "an idle process holding memory: alive at least this long ..."),
	DURATION("sweep_idle_process_idle", sweep_idle_process_idle_ns, SEC, 366 * DAY, "6h", "cli, web",
		 "... idle at least this long ..."),
	BYTES("sweep_idle_process_rss", sweep_idle_process_rss, 0, MIB, TIB, "1GiB", "cli, web",
	      "... holding at least this much memory"),
	DURATION("sweep_reserved_min", sweep_reserved_min_ns, SEC, 366 * DAY, "10m", "cli, web",
		 "reserved but unused: a step that ran at least this long under a CPU or memory limit ..."),
	UINT("sweep_reserved_cpu_percent", sweep_reserved_cpu_percent, 1, 100, "25", "cli, web",
	     "... and used at most this share of its CPU limit (its p95 cores) ..."),
	UINT("sweep_reserved_memory_percent", sweep_reserved_memory_percent, 1, 100, "25", "cli, web",
	     "... or at most this share of its memory limit (its peak) ..."),
	UINT("sweep_reserved_min_cpu_millicores", sweep_reserved_min_cpu_millicores, 0, 100000000, "1000", "cli, web",
	     "... leaving at least this many thousandths of a CPU unused ..."),
	BYTES("sweep_reserved_min_memory", sweep_reserved_min_memory, 0, 0, TIB, "1GiB", "cli, web",
	      "... or at least this much memory unused"),

	LISTEN("web_listen", web_listen, "127.0.0.1:8760", "web",
	       "address and port tracer-web serves the dashboard on (it reads the lake at ingest_db)"),
	PATH("web_token_file", web_token_file, 0, "/etc/tracer/web.token", "web",
	     "the file holding the token the dashboard asks for (mode 0600; openssl rand -hex 32)"),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* Headings for config_describe, by the first key of each group. */
static const struct {
	const char *first, *title;
} sections[] = {
	{ "state_dir", "Where things live, who runs" },
	{ "rules", "Collector" },
	{ "tool_rules", "Processor" },
	{ "cloud", "Host identity (processor), for tracer cost" },
	{ "upload_url", "Delivery: spool, batches, upload (processor)" },
	{ "ingest_listen", "Ingest" },
	{ "sweep_window", "Sweep (tracer sweep; the anchors' values: docs/sweep.md)" },
	{ "web_listen", "Web dashboard" },
};

/* ------------------------------------------------------------------ */
/* Messages                                                           */
/* ------------------------------------------------------------------ */

#define WHY_MAX CONF_WHY_MAX

__attribute__((format(printf, 3, 4))) static int why(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* Formatting values                                                  */
/* ------------------------------------------------------------------ */

static void format_bytes(uint64_t v, char *buf, size_t len)
{
	static const struct {
		uint64_t unit;
		const char *suffix;
	} units[] = { { TIB, "TiB" }, { GIB, "GiB" }, { MIB, "MiB" }, { KIB, "KiB" } };

	for (size_t i = 0; v && i < sizeof(units) / sizeof(units[0]); i++)
		if (v % units[i].unit == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(v / units[i].unit), units[i].suffix);
			return;
		}
	snprintf(buf, len, "%lluB", (unsigned long long)v);
}

/* Exact, in the largest unit that fits: "1h", "10m", "300s", "200ms", "1.5ms". */
static void format_duration(uint64_t ns, char *buf, size_t len)
{
	unsigned long long v = (unsigned long long)ns;

	if (v && v % HOUR == 0)
		snprintf(buf, len, "%lluh", v / HOUR);
	else if (v >= 10 * MIN && v % MIN == 0)
		snprintf(buf, len, "%llum", v / MIN);
	else if (v % SEC == 0)
		snprintf(buf, len, "%llus", v / SEC);
	else if (v % MS == 0)
		snprintf(buf, len, "%llums", v / MS);
	else {
		unsigned long long frac = v % MS;
		int digits = 6;

		while (frac % 10 == 0) {
			frac /= 10;
			digits--;
		}
		snprintf(buf, len, "%llu.%0*llums", v / MS, digits, frac);
	}
}

static void format_listen(const struct config_listen *l, char *buf, size_t len)
{
	snprintf(buf, len, l->family == AF_INET6 ? "[%s]:%u" : "%s:%u", l->host, (unsigned)l->port);
}

/* A value's text as the file would hold it, unquoted. */
static void format_value(const struct config_key *k, const struct tracer_config *cfg, char *buf, size_t len)
{
	const char *field = (const char *)cfg + k->offset;
	uint64_t u64;
	uint32_t u32;

	switch (k->type) {
	case CT_PATH:
	case CT_STRING:
	case CT_URLS: snprintf(buf, len, "%s", field); return;
	case CT_BOOL: snprintf(buf, len, "%s", *(const bool *)(const void *)field ? "true" : "false"); return;
	case CT_UINT:
		memcpy(&u32, field, sizeof(u32));
		snprintf(buf, len, "%u", (unsigned)u32);
		return;
	case CT_BYTES:
		memcpy(&u64, field, sizeof(u64));
		format_bytes(u64, buf, len);
		return;
	case CT_DURATION:
		memcpy(&u64, field, sizeof(u64));
		format_duration(u64, buf, len);
		return;
	case CT_LISTEN: format_listen((const struct config_listen *)(const void *)field, buf, len); return;
	case CT_PRICE: {
		struct config_price p;

		memcpy(&p, field, sizeof(p));
		if (p.set)
			config_format_price(p.micro_usd, buf, len);
		else
			snprintf(buf, len, "%s", "");
		return;
	}
	}
}

/* What a key takes, for the parenthesis of a message. */
static void expected(const struct config_key *k, char *buf, size_t len)
{
	char lo[32], hi[32];

	switch (k->type) {
	case CT_PATH:
		snprintf(buf, len, "an absolute path%s of at most %zu bytes%s",
			 k->flags & CK_DB_URI ? " or a postgresql:// URI" : "", k->size - 1,
			 k->flags & CK_EMPTY_OK ? ", or empty for none" : "");
		return;
	case CT_STRING:
		if (k->flags & CK_USER)
			snprintf(buf, len, "a user name (letters, digits, '.', '_', '-'; at most %zu bytes) or uid, "
					   "not root", k->size - 1);
		else if (k->flags & CK_HOST_ID)
			snprintf(buf, len, "32 hex digits, or empty for /etc/machine-id");
		else if (k->flags & (CK_LOWER_NAME | CK_INSTANCE_TYPE))
			snprintf(buf, len, "%s, a %s first, at most %zu bytes, e.g. %s; or empty for %s",
				 k->flags & CK_LOWER_NAME ? "lowercase letters, digits and '-'"
							  : "letters, digits, '.', '_' and '-'",
				 k->flags & CK_LOWER_NAME ? "letter" : "letter or digit", k->size - 1,
				 !strcmp(k->name, "cloud") ? "aws, gcp or azure"
				 : !strcmp(k->name, "region") ? "us-east-1"
							      : "m6i.xlarge or Standard_D4s_v5",
				 !strcmp(k->name, "region") ? "none" : "what DMI says");
		else
			snprintf(buf, len, "text of at most %zu bytes", k->size - 1);
		return;
	case CT_BOOL: snprintf(buf, len, "true, false, yes, no, on, off, 1 or 0"); return;
	case CT_UINT:
		snprintf(buf, len, "an integer from %llu to %llu", (unsigned long long)k->min, (unsigned long long)k->max);
		return;
	case CT_BYTES:
		format_bytes(k->min, lo, sizeof(lo));
		format_bytes(k->max, hi, sizeof(hi));
		snprintf(buf, len, "a size from %s to %s%s: an integer and B, K/KiB, M/MiB, G/GiB or T/TiB, all binary",
			 lo, hi, k->flags & CK_POW2 ? ", a power of two" : "");
		return;
	case CT_DURATION:
		format_duration(k->min, lo, sizeof(lo));
		format_duration(k->max, hi, sizeof(hi));
		snprintf(buf, len, "a duration from %s to %s: a number with ms, s, m or h; no unit: seconds", lo, hi);
		return;
	case CT_LISTEN: snprintf(buf, len, "host:port, e.g. 127.0.0.1:8750, [::1]:8750 or localhost:8750"); return;
	case CT_URLS:
		snprintf(buf, len, "up to %u http:// or https:// URLs separated by commas or blanks, at most %zu bytes "
				   "in all%s", CONFIG_URLS_MAX, k->size - 1, k->flags & CK_EMPTY_OK ? ", or empty for none" : "");
		return;
	case CT_PRICE:
		config_format_price(k->max, hi, sizeof(hi));
		snprintf(buf, len, "US dollars per hour from 0 to %s, at most 6 digits after the point, e.g. 0.192%s", hi,
			 k->flags & CK_EMPTY_OK ? "; or empty for none" : "");
		return;
	}
}

/* ------------------------------------------------------------------ */
/* Text                                                               */
/* ------------------------------------------------------------------ */

static bool is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static const struct config_key *find_key(const char *name, size_t len)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == len && !memcmp(keys[i].name, name, len))
			return &keys[i];
	return NULL;
}

#define SUGGEST_MAX 64 /* longer words are not compared */

/* Edit distance (insert, delete, substitute, swap two neighbours), case-insensitive. */
static unsigned edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	unsigned d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];

	for (size_t i = 0; i <= na; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= nb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++) {
			unsigned cost = (a[i - 1] | 0x20) != (b[j - 1] | 0x20), best = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[na][nb];
}

/* " (did you mean 'KEY'?)" for the closest key within 2 edits, else a pointer to the list. */
static void suggest(const char *name, size_t len, char *buf, size_t buflen)
{
	const char *best = NULL;
	unsigned best_d = 3;

	for (size_t i = 0; len <= SUGGEST_MAX && i < NKEYS; i++) {
		size_t kn = strlen(keys[i].name);
		unsigned d = edit_distance(name, len, keys[i].name, kn);

		if (d < best_d) {
			best_d = d;
			best = keys[i].name;
		}
	}
	if (best)
		snprintf(buf, buflen, "did you mean '%s'?", best);
	else
		snprintf(buf, buflen, "docs/config.md lists the keys");
}

/* A key name: known, lowercase. 0 and *kp, or -EINVAL with what is wrong. */
static int lookup(const char *name, size_t len, const struct config_key **kp, char *w, size_t wlen)
{
	char hint[64], b[48];

	for (size_t i = 0; i < len; i++)
		if (!is_key_char(name[i])) {
			suggest(name, len, hint, sizeof(hint));
			return why(w, wlen, "key '%s': not a key name (lowercase letters, digits and _; %s)",
				   conf_shown(name, len, b), hint);
		}
	*kp = find_key(name, len);
	if (*kp)
		return 0;
	suggest(name, len, hint, sizeof(hint));
	return why(w, wlen, "key '%s': unknown key (%s)", conf_shown(name, len, b), hint);
}

/* ------------------------------------------------------------------ */
/* Values                                                             */
/* ------------------------------------------------------------------ */

static int out_of_range(const struct config_key *k, const char *v, char *w, size_t wlen)
{
	char ex[WHY_MAX], b[48];

	expected(k, ex, sizeof(ex));
	return why(w, wlen, "'%s' is out of range (%s)", conf_shown(v, strlen(v), b), ex);
}

static int not_valid(const struct config_key *k, const char *v, const char *what, char *w, size_t wlen)
{
	char ex[WHY_MAX], b[48];

	expected(k, ex, sizeof(ex));
	return why(w, wlen, "'%s' %s (%s)", conf_shown(v, strlen(v), b), what, ex);
}

/* The number kinds: tracer.conf's one set of checks and messages (common/conf_lines.c), in the key's terms. */
static int parse_number(const struct config_key *k, const char *v, uint64_t *out, char *w, size_t wlen)
{
	enum conf_number_kind kind = k->type == CT_UINT ? CONF_UINT : k->type == CT_DURATION ? CONF_DURATION
				     : k->flags & CK_POW2 ? CONF_BYTES_POW2 : CONF_BYTES;
	char ex[WHY_MAX];

	expected(k, ex, sizeof(ex));
	return conf_number(kind, v, k->min, k->max, ex, out, w, wlen);
}

static int parse_bool(const struct config_key *k, const char *v, bool *out, char *w, size_t wlen)
{
	static const char *const yes[] = { "true", "yes", "on", "1" }, *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (!strcmp(v, yes[i]) || !strcmp(v, no[i])) {
			*out = !strcmp(v, yes[i]);
			return 0;
		}
	}
	return not_valid(k, v, "is not a boolean", w, wlen);
}

/*
 * A price: digits, optionally a point and 1..6 digits (a millionth of a
 * dollar); no sign, no exponent, so nothing negative or infinite gets in.
 */
static int parse_price(const struct config_key *k, const char *v, uint64_t *out, char *w, size_t wlen)
{
	uint64_t whole, frac = 0;
	size_t n, digits = 0;
	const char *p;

	if (v[0] == '-')
		return not_valid(k, v, "is negative", w, wlen);
	switch (parse_u64_prefix(v, &n, &whole)) {
	case PARSE_OK: break;
	case PARSE_E_RANGE: return out_of_range(k, v, w, wlen);
	default: return not_valid(k, v, "is not a decimal number", w, wlen);
	}
	p = v + n;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			if (digits < 6)
				frac = frac * 10 + (uint64_t)(*p - '0');
		if (digits == 0)
			return not_valid(k, v, "has no digit after the point", w, wlen);
		if (digits > 6)
			return not_valid(k, v, "has more than 6 digits after the point", w, wlen);
	}
	if (*p)
		return not_valid(k, v, "is not a decimal number", w, wlen);
	for (; digits < 6; digits++)
		frac *= 10;
	if (whole > k->max / CONFIG_MICRO || whole * CONFIG_MICRO + frac > k->max)
		return out_of_range(k, v, w, wlen);
	*out = whole * CONFIG_MICRO + frac;
	return 0;
}

void config_format_price(uint64_t micro_usd, char *buf, size_t len)
{
	unsigned long long frac = (unsigned long long)(micro_usd % CONFIG_MICRO);
	int digits = 6;

	if (!frac) {
		snprintf(buf, len, "%llu", (unsigned long long)(micro_usd / CONFIG_MICRO));
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, len, "%llu.%0*llu", (unsigned long long)(micro_usd / CONFIG_MICRO), digits, frac);
}

/* A port, the whole of s: 0..65535. */
static int parse_port(const char *s, uint16_t *port)
{
	uint64_t v;

	if (strlen(s) > 5 || parse_u64(s, 65535, &v))
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int parse_listen(const struct config_key *k, const char *v, struct config_listen *out, char *w, size_t wlen)
{
	struct config_listen l = { .family = AF_INET };
	const char *colon, *host = v;
	size_t hlen;

	if (v[0] == '[') {
		const char *close = strchr(v, ']');

		if (!close)
			return not_valid(k, v, "has no ']' after the IPv6 address", w, wlen);
		host = v + 1;
		hlen = (size_t)(close - host);
		colon = close + 1;
		if (*colon != ':')
			return not_valid(k, v, "has no ':port' after the ']'", w, wlen);
		l.family = AF_INET6;
	} else {
		colon = strrchr(v, ':');
		if (!colon)
			return not_valid(k, v, "has no port", w, wlen);
		if (memchr(v, ':', (size_t)(colon - v)))
			return not_valid(k, v, "is an IPv6 address without brackets", w, wlen);
		hlen = (size_t)(colon - v);
	}
	if (hlen == 0)
		return not_valid(k, v, "has no host (0.0.0.0 or [::] for every address)", w, wlen);
	if (hlen >= sizeof(l.host))
		return not_valid(k, v, "is not an IP address", w, wlen);
	memcpy(l.host, host, hlen);
	if (parse_port(colon + 1, &l.port))
		return not_valid(k, v, "has a port that is not 0..65535", w, wlen);
	if (l.family == AF_INET && !strcmp(l.host, "localhost")) {
		l.addr[0] = 127, l.addr[3] = 1;
	} else if (inet_pton(l.family, l.host, l.addr) != 1) {
		return not_valid(k, v, l.family == AF_INET ? "has a host that is not an IPv4 address or localhost"
							   : "has a host that is not an IPv6 address",
				 w, wlen);
	} else {
		inet_ntop(l.family, l.addr, l.host, sizeof(l.host)); /* canonical: ::1, not 0:0::1 */
	}
	*out = l;
	return 0;
}

/* http:// or https://, a host (name, IPv4 or [IPv6]) and an optional port; no credentials, no spaces. */
static int check_url(const struct config_key *k, const char *v, char *w, size_t wlen)
{
	size_t skip = !strncmp(v, "http://", 7) ? 7 : !strncmp(v, "https://", 8) ? 8 : 0;
	const char *auth = v + skip, *host_end, *port = NULL;
	size_t alen = strcspn(auth, "/?#");

	if (!skip)
		return not_valid(k, v, "is not an http:// or https:// URL", w, wlen);
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
			return not_valid(k, v, "has a control character or a byte that is not ASCII (percent-encode it)", w,
					 wlen);
	if (memchr(auth, '@', alen))
		return not_valid(k, v, "has credentials (use client_cert and client_key)", w, wlen);
	if (auth[0] == '[') {
		char a6[CONFIG_LISTEN_HOST_MAX];
		uint8_t bin[16];
		const char *close = memchr(auth, ']', alen);

		if (!close || (size_t)(close - auth - 1) >= sizeof(a6))
			return not_valid(k, v, "has a bad IPv6 host", w, wlen);
		memcpy(a6, auth + 1, (size_t)(close - auth - 1));
		a6[close - auth - 1] = 0;
		if (inet_pton(AF_INET6, a6, bin) != 1)
			return not_valid(k, v, "has a bad IPv6 host", w, wlen);
		host_end = close + 1;
		if (host_end < auth + alen && *host_end != ':')
			return not_valid(k, v, "has text after the IPv6 host", w, wlen);
	} else {
		host_end = auth + strcspn(auth, ":/?#");
		if (host_end == auth)
			return not_valid(k, v, "has no host", w, wlen);
		for (const char *c = auth; c < host_end; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			      *c == '.' || *c == '-'))
				return not_valid(k, v, "has a host name with a character other than letters, digits, "
						       "'.' and '-'", w, wlen);
	}
	if (host_end < auth + alen) {
		char p[8];
		size_t plen = (size_t)(auth + alen - host_end - 1);
		uint16_t n;

		port = host_end + 1;
		if (plen == 0 || plen >= sizeof(p))
			return not_valid(k, v, "has a port that is not 1..65535", w, wlen);
		memcpy(p, port, plen);
		p[plen] = 0;
		if (parse_port(p, &n) || n == 0)
			return not_valid(k, v, "has a port that is not 1..65535", w, wlen);
	}
	return 0;
}

#define URL_SEPARATORS ", \t"

/* Cut buf into its URLs at the separators; the first max in url[]. How many there are, beyond max too. */
static unsigned split_urls(char *buf, const char **url, unsigned max)
{
	unsigned n = 0;

	for (char *p = buf + strspn(buf, URL_SEPARATORS); *p; p += strspn(p, URL_SEPARATORS)) {
		if (n < max)
			url[n] = p;
		n++;
		p += strcspn(p, URL_SEPARATORS);
		if (*p)
			*p++ = 0;
	}
	return n;
}

/* Each URL as check_url wants it, at most CONFIG_URLS_MAX, none twice; a message names the one at fault. */
static int check_url_list(const struct config_key *k, const char *v, char *w, size_t wlen)
{
	char buf[CONFIG_URL_MAX], one[WHY_MAX], ex[WHY_MAX], b[48];
	const char *url[CONFIG_URLS_MAX];
	unsigned n;

	snprintf(buf, sizeof(buf), "%s", v); /* fits: check_string checked the length */
	n = split_urls(buf, url, CONFIG_URLS_MAX);
	if (n == 0)
		return not_valid(k, v, "has separators and no URL", w, wlen);
	if (n > CONFIG_URLS_MAX) {
		expected(k, ex, sizeof(ex));
		return why(w, wlen, "'%s' names %u URLs (%s)", conf_shown(v, strlen(v), b), n, ex);
	}
	for (unsigned i = 0; i < n; i++) {
		if (check_url(k, url[i], one, sizeof(one)))
			return n == 1 ? why(w, wlen, "%s", one) : why(w, wlen, "URL %u of %u: %s", i + 1, n, one);
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(url[j], url[i]))
				return why(w, wlen, "URL %u of %u: '%s' is URL %u too (name each ingest once)", i + 1, n,
					   conf_shown(url[i], strlen(url[i]), b), j + 1);
	}
	return 0;
}

unsigned config_url_split(const char *list, char buf[CONFIG_URL_MAX], const char *url[CONFIG_URLS_MAX])
{
	unsigned n;

	snprintf(buf, CONFIG_URL_MAX, "%s", list);
	n = split_urls(buf, url, CONFIG_URLS_MAX);
	return n < CONFIG_URLS_MAX ? n : CONFIG_URLS_MAX;
}

/* A user name as useradd takes it (or a uid); not root, since the daemons run as it to give root up. */
static int check_user(const struct config_key *k, const char *v, char *w, size_t wlen)
{
	size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
	size_t digits = strspn(v, "0123456789");
	uint64_t uid;

	if (v[n] || n == 0 || v[0] == '-')
		return not_valid(k, v, "is not a user name or uid", w, wlen);
	if (!strcmp(v, "root") || (digits == n && strspn(v, "0") == n))
		return not_valid(k, v, "is root: the daemons run as this user to give root up", w, wlen);
	if (digits == n && (n > 10 || parse_u64(v, 0xfffffffeULL, &uid)))
		return not_valid(k, v, "is not a valid uid", w, wlen);
	return 0;
}

static int check_host_id(const struct config_key *k, const char *v, char *w, size_t wlen)
{
	if (strlen(v) != CONFIG_HOST_ID_HEX || strspn(v, "0123456789abcdefABCDEF") != CONFIG_HOST_ID_HEX)
		return not_valid(k, v, "is not 32 hex digits", w, wlen);
	if (strspn(v, "0") == CONFIG_HOST_ID_HEX)
		return not_valid(k, v, "is all zeros", w, wlen);
	return 0;
}

/* The host's names: a cloud or region (lowercase, '-'), an instance type (also upper case, '.', '_'). */
static int check_name(const struct config_key *k, const char *v, char *w, size_t wlen)
{
	static const char lower[] = "abcdefghijklmnopqrstuvwxyz";
	static const char digits[] = "0123456789";
	bool type = k->flags & CK_INSTANCE_TYPE;
	size_t n = type ? strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
			: strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-");
	bool first = strchr(lower, v[0]) || (type && (strchr(digits, v[0]) || (v[0] >= 'A' && v[0] <= 'Z')));

	if (v[n] || !first)
		return not_valid(k, v, type ? "is not an instance type" : !strcmp(k->name, "cloud") ? "is not a cloud name"
										  : "is not a region",
				 w, wlen);
	return 0;
}

/* The strings' common checks: length, empty, then the type's own. */
static int check_string(const struct config_key *k, const char *v, char *w, size_t wlen)
{
	size_t len = strlen(v);
	char ex[WHY_MAX];

	if (len >= k->size) {
		expected(k, ex, sizeof(ex));
		return why(w, wlen, "value of %zu bytes is too long (%s)", len, ex);
	}
	if (len == 0) {
		if (k->flags & CK_EMPTY_OK)
			return 0;
		expected(k, ex, sizeof(ex));
		return why(w, wlen, "empty value (%s)", ex);
	}
	if (k->type == CT_PATH && (k->flags & CK_DB_URI) &&
	    (!strncmp(v, "postgresql://", 13) || !strncmp(v, "postgres://", 11)))
		return 0; /* libpq checks the rest when the lake is opened, and says what is wrong */
	if (k->type == CT_PATH && v[0] != '/')
		return not_valid(k, v, k->flags & CK_DB_URI ? "is not an absolute path nor a postgresql:// URI" :
							     "is not an absolute path", w, wlen);
	if (k->type == CT_URLS)
		return check_url_list(k, v, w, wlen);
	if (k->flags & CK_USER)
		return check_user(k, v, w, wlen);
	if (k->flags & CK_HOST_ID)
		return check_host_id(k, v, w, wlen);
	if (k->flags & (CK_LOWER_NAME | CK_INSTANCE_TYPE))
		return check_name(k, v, w, wlen);
	return 0;
}

/*
 * Set key k from v (NUL-terminated, decoded, UTF-8 without control
 * characters). The field is written only if v is valid; else -EINVAL and
 * what is wrong in w.
 */
static int set_value(const struct config_key *k, struct tracer_config *cfg, const char *v, char *w, size_t wlen)
{
	char *field = (char *)cfg + k->offset;
	uint64_t u64 = 0;
	bool b = false;
	struct config_listen l;
	int rc;

	switch (k->type) {
	case CT_PATH:
	case CT_STRING:
	case CT_URLS:
		rc = check_string(k, v, w, wlen);
		if (rc)
			return rc;
		strcpy(field, v); /* fits: checked above */
		if (k->flags & CK_HOST_ID)
			for (char *c = field; *c; c++)
				*c = (char)(*c >= 'A' && *c <= 'F' ? *c + 0x20 : *c);
		return 0;
	case CT_BOOL:
		rc = parse_bool(k, v, &b, w, wlen);
		if (!rc)
			*(bool *)(void *)field = b;
		return rc;
	case CT_UINT:
		rc = parse_number(k, v, &u64, w, wlen);
		if (!rc) {
			uint32_t u32 = (uint32_t)u64; /* max is within uint32_t */

			memcpy(field, &u32, sizeof(u32));
		}
		return rc;
	case CT_BYTES:
	case CT_DURATION:
		rc = parse_number(k, v, &u64, w, wlen);
		if (!rc)
			memcpy(field, &u64, sizeof(u64));
		return rc;
	case CT_LISTEN:
		rc = parse_listen(k, v, &l, w, wlen);
		if (!rc)
			memcpy(field, &l, sizeof(l));
		return rc;
	case CT_PRICE: {
		struct config_price p;

		memset(&p, 0, sizeof(p)); /* the padding too: configs are compared whole */
		rc = !v[0] && (k->flags & CK_EMPTY_OK) ? 0 : parse_price(k, v, &p.micro_usd, w, wlen);
		p.set = v[0] != 0;
		if (!rc)
			memcpy(field, &p, sizeof(p));
		return rc;
	}
	}
	return why(w, wlen, "internal error: key type %d", (int)k->type);
}

/* ------------------------------------------------------------------ */
/* The whole                                                          */
/* ------------------------------------------------------------------ */

/* Two keys set together or not at all: 0, or -EINVAL with the one set alone as the culprit. */
static int both_or_neither(const char *a, const char *va, const char *b, const char *vb, size_t *culprit, char *w,
			   size_t wlen)
{
	const char *alone = va[0] ? a : b;

	if (!va[0] == !vb[0])
		return 0;
	*culprit = (size_t)(find_key(alone, strlen(alone)) - keys);
	return why(w, wlen, "set without %s (both, or neither)", alone == a ? b : a);
}

/* What no single value can say. 0, or -EINVAL, the key at fault (index into keys) and what is wrong. */
static int check_whole(const struct tracer_config *cfg, const unsigned *lines, size_t *culprit, char *w,
		       size_t wlen)
{
	const struct config_key *quota = find_key("spool_quota", 11), *seg = find_key("segment_size", 12);
	char q[32], s[32];

	if (both_or_neither("client_cert", cfg->client_cert, "client_key", cfg->client_key, culprit, w, wlen) ||
	    both_or_neither("ingest_tls_cert", cfg->ingest_tls_cert, "ingest_tls_key", cfg->ingest_tls_key, culprit,
			    w, wlen))
		return -EINVAL;
	if (cfg->ingest_client_ca[0] && !cfg->ingest_tls_cert[0]) {
		*culprit = (size_t)(find_key("ingest_client_ca", 16) - keys);
		return why(w, wlen, "set without ingest_tls_cert (client certificates are checked in the TLS handshake: "
				    "set ingest_tls_cert and ingest_tls_key too)");
	}
	if (cfg->spool_quota / 2 < cfg->segment_size) {
		size_t qi = (size_t)(quota - keys), si = (size_t)(seg - keys);

		*culprit = lines && lines[si] > lines[qi] ? si : qi;
		format_bytes(cfg->spool_quota, q, sizeof(q));
		format_bytes(cfg->segment_size, s, sizeof(s));
		return why(w, wlen, "spool_quota %s holds fewer than two segments of segment_size %s "
				    "(spool_quota at least twice segment_size)", q, s);
	}
	return 0;
}

int config_check(const struct tracer_config *cfg, char *err, size_t errlen)
{
	char w[WHY_MAX];
	size_t culprit = 0;

	if (check_whole(cfg, NULL, &culprit, w, sizeof(w)))
		return conf_report(err, errlen, -EINVAL, "key '%s': %s", keys[culprit].name, w);
	return 0;
}

void config_defaults(struct tracer_config *cfg)
{
	char w[WHY_MAX];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NKEYS; i++)
		(void)set_value(&keys[i], cfg, keys[i].def, w, sizeof(w)); /* tests/test_common_config.c: every default is valid */
}

const char *config_default_text(const char *key)
{
	const struct config_key *k = find_key(key, strlen(key));

	return k ? k->def : NULL;
}

int config_key_number(const char *key, uint64_t *def, uint64_t *min, uint64_t *max)
{
	const struct config_key *k = find_key(key, strlen(key));
	char w[WHY_MAX];
	uint64_t v;
	int rc;

	if (!k || (k->type != CT_UINT && k->type != CT_BYTES && k->type != CT_DURATION))
		return -ENOENT;
	rc = parse_number(k, k->def, &v, w, sizeof(w));
	if (rc)
		return rc; /* tests/test_common_config.c: every default is valid */
	if (def)
		*def = v;
	if (min)
		*min = k->min;
	if (max)
		*max = k->max;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Lines                                                              */
/* ------------------------------------------------------------------ */

static int find_line_key(void *ctx, const char *s, size_t len, const char **name, size_t *max, char *w, size_t wlen)
{
	const struct config_key *k;

	(void)ctx;
	if (lookup(s, len, &k, w, wlen))
		return -EINVAL;
	*name = k->name;
	*max = (k->type == CT_PATH || k->type == CT_STRING || k->type == CT_URLS ? k->size : PATH_MAX + 1) - 1;
	return (int)(k - keys);
}

static int set_line_key(void *ctx, int key, const char *value, char *w, size_t wlen)
{
	return set_value(&keys[key], ctx, value, w, wlen);
}

int config_parse(struct tracer_config *cfg, const char *name, const char *text, size_t len, char *err,
		 size_t errlen)
{
	/* Both are large (paths are PATH_MAX): off the stack, which may be a small thread's. */
	struct parser {
		struct conf_lines cl;
		unsigned lines[NKEYS]; /* the line each key was set on, 0: not yet */
	} *ps = calloc(1, sizeof(*ps));
	struct tracer_config *next = malloc(sizeof(*next));
	char w[WHY_MAX];
	size_t culprit = 0;
	int rc;

	if (!ps || !next) {
		free(ps);
		free(next);
		return conf_report(err, errlen, -ENOMEM, "%s: out of memory", name);
	}
	ps->cl = (struct conf_lines){ .name = name, .err = err, .errlen = errlen, .ctx = next, .find = find_line_key,
				      .set = set_line_key, .lines = ps->lines };
	config_defaults(next);
	rc = conf_lines_parse(&ps->cl, text, len);
	if (!rc && check_whole(next, ps->lines, &culprit, w, sizeof(w))) {
		if (ps->lines[culprit])
			rc = conf_report(err, errlen, -EINVAL, "%s:%u:1: key '%s': %s", name, ps->lines[culprit],
				    keys[culprit].name, w);
		else
			rc = conf_report(err, errlen, -EINVAL, "%s: key '%s': %s", name, keys[culprit].name, w);
	}
	if (!rc)
		memcpy(cfg, next, sizeof(*next));
	free(ps);
	free(next);
	return rc;
}

int config_set(struct tracer_config *cfg, const char *key, const char *value, char *err, size_t errlen)
{
	const struct config_key *k;
	char w[WHY_MAX];
	size_t at;

	if (lookup(key, strlen(key), &k, w, sizeof(w)))
		return conf_report(err, errlen, -EINVAL, "%s", w);
	if (conf_check_text(value, strlen(value), &at, w, sizeof(w)))
		return conf_report(err, errlen, -EINVAL, "key '%s': %s", k->name, w);
	if (set_value(k, cfg, value, w, sizeof(w)))
		return conf_report(err, errlen, -EINVAL, "key '%s': %s", k->name, w);
	return 0;
}

int config_set_arg(struct tracer_config *cfg, const char *key_value, char *err, size_t errlen)
{
	const char *eq = strchr(key_value, '=');
	char key[SUGGEST_MAX + 1], b[48];
	size_t n;

	if (!eq)
		return conf_report(err, errlen, -EINVAL, "'%s' has no '=' (key=value)",
			      conf_shown(key_value, strlen(key_value), b));
	n = (size_t)(eq - key_value);
	if (n >= sizeof(key)) {
		return conf_report(err, errlen, -EINVAL, "key '%s': unknown key (docs/config.md lists the keys)",
			      conf_shown(key_value, n, b));
	}
	memcpy(key, key_value, n);
	key[n] = 0;
	return config_set(cfg, key, eq + 1, err, errlen);
}

/* ------------------------------------------------------------------ */
/* The file                                                           */
/* ------------------------------------------------------------------ */

static int parse_file(void *cfg, const char *name, const char *text, size_t len, char *err, size_t errlen)
{
	return config_parse(cfg, name, text, len, err, errlen);
}

int config_load(struct tracer_config *cfg, const char *path, bool require_root_owned, char *err, size_t errlen)
{
	return conf_lines_load(path, require_root_owned, parse_file, cfg, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Writing it down                                                    */
/* ------------------------------------------------------------------ */

/* A value as the file holds it: quoted when it must be (empty, '#', '"', blanks at either end). */
static void write_value(FILE *out, const char *v)
{
	size_t n = strlen(v);

	if (n && !strpbrk(v, "#\"") && v[0] != ' ' && v[0] != '\t' && v[n - 1] != ' ' && v[n - 1] != '\t') {
		fputs(v, out);
		return;
	}
	fputc('"', out);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fputc('\\', out);
		fputc(*v, out);
	}
	fputc('"', out);
}

void config_write(FILE *out, const struct tracer_config *cfg)
{
	char v[CONFIG_URL_MAX > PATH_MAX ? CONFIG_URL_MAX : PATH_MAX];

	for (size_t i = 0; i < NKEYS; i++) {
		format_value(&keys[i], cfg, v, sizeof(v));
		fprintf(out, "%s = ", keys[i].name);
		write_value(out, v);
		fputc('\n', out);
	}
}

static void describe_bounds(const struct config_key *k, char *buf, size_t len)
{
	char lo[32], hi[32];

	switch (k->type) {
	case CT_UINT:
		snprintf(buf, len, ", %llu..%llu", (unsigned long long)k->min, (unsigned long long)k->max);
		return;
	case CT_BYTES:
		format_bytes(k->min, lo, sizeof(lo));
		format_bytes(k->max, hi, sizeof(hi));
		snprintf(buf, len, ", %s..%s%s", lo, hi, k->flags & CK_POW2 ? ", a power of two" : "");
		return;
	case CT_DURATION:
		format_duration(k->min, lo, sizeof(lo));
		format_duration(k->max, hi, sizeof(hi));
		snprintf(buf, len, ", %s..%s", lo, hi);
		return;
	case CT_PATH: snprintf(buf, len, "%s", k->flags & CK_EMPTY_OK ? ", may be empty" : ""); return;
	case CT_URLS:
		snprintf(buf, len, ", up to %u (commas or blanks between)%s", CONFIG_URLS_MAX,
			 k->flags & CK_EMPTY_OK ? ", may be empty" : "");
		return;
	case CT_STRING:
		snprintf(buf, len, "%s", k->flags & CK_USER ? ", user name or uid" : k->flags & CK_HOST_ID ? ", 32 hex digits or empty"
					 : k->flags & (CK_LOWER_NAME | CK_INSTANCE_TYPE) ? ", may be empty" : "");
		return;
	case CT_PRICE:
		config_format_price(k->max, lo, sizeof(lo));
		snprintf(buf, len, ", US dollars per hour, 0..%s, may be empty", lo);
		return;
	case CT_BOOL:
	case CT_LISTEN: buf[0] = 0; return;
	}
}

void config_describe(FILE *out)
{
	char bounds[96];

	for (size_t i = 0; i < NKEYS; i++) {
		const struct config_key *k = &keys[i];

		for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++)
			if (!strcmp(sections[s].first, k->name))
				fprintf(out, "%s# ---- %s ----\n", i ? "\n" : "", sections[s].title);
		describe_bounds(k, bounds, sizeof(bounds));
		fprintf(out, "\n# %s: %s%s (%s)\n#   %s\n#%s = ", k->name, type_names[k->type], bounds, k->users, k->doc,
			k->name);
		write_value(out, k->def);
		fputc('\n', out);
	}
}

int config_from_options(struct tracer_config *cfg, const char *path, bool require_root_owned,
			const char *const *sets, unsigned nsets)
{
	char err[PATH_MAX + 256];
	int rc;

	config_defaults(cfg);
	err[0] = 0;
	if (path && (rc = config_load(cfg, path, require_root_owned, err, sizeof(err))) != 0) {
		fprintf(stderr, "<3>%s\n", err[0] ? err : strerror(-rc));
		return -1;
	}
	for (unsigned i = 0; i < nsets; i++)
		if (config_set_arg(cfg, sets[i], err, sizeof(err))) {
			fprintf(stderr, "<3>--set %s: %s\n", sets[i], err);
			return -1;
		}
	if (config_check(cfg, err, sizeof(err))) {
		fprintf(stderr, "<3>%s: %s\n", path ? path : "--set", err);
		return -1;
	}
	return 0;
}

uint16_t config_url_port(const char *url, uint16_t dflt)
{
	const char *host = url ? strstr(url, "://") : NULL, *end, *colon, *bracket;
	size_t ndigits;
	uint64_t port;

	if (!host)
		return 0;
	if (!strncmp(url, "https://", 8))
		dflt = 443;
	else if (!strncmp(url, "http://", 7))
		dflt = 80;
	host += 3;
	end = host + strcspn(host, "/?#");
	/* user:password@ may come first in a proxy URL; an [IPv6] address holds colons of its own. */
	for (const char *at = memchr(host, '@', (size_t)(end - host)); at; at = memchr(host, '@', (size_t)(end - host)))
		host = at + 1;
	if (*host == '[' && (bracket = memchr(host, ']', (size_t)(end - host))) != NULL)
		host = bracket;
	colon = memchr(host, ':', (size_t)(end - host));
	if (!colon)
		return dflt;
	if (parse_u64_prefix(colon + 1, &ndigits, &port) || colon + 1 + ndigits != end)
		return 0;
	return port > 0 && port < 65536 ? (uint16_t)port : 0;
}
