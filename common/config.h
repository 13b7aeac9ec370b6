/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one configuration file, /etc/tracer/tracer.conf, read by every daemon
 * and the CLI (docs/config.md has the format and every key):
 *
 *   # a comment
 *   state_dir = /var/lib/tracer
 *   kernel_buffer = 32MiB        # a comment after a value
 *   upload_url = https://ingest-a.example:8750/v1/batches, https://ingest-b.example:8750/v1/batches
 *
 * Every key is in one table in config.c (type, bounds, default, the daemons
 * that use it, a line of documentation); config_describe() prints it.
 *
 * A parse is all or nothing: the struct is written only when the whole text
 * is valid, so a bad edit followed by a reload keeps the config in force.
 * The result of a parse is the defaults plus what the text sets: a key
 * removed from the file goes back to its default on the next load.
 * Command-line options override the file: load it, then config_set() each
 * override, then config_check() the whole.
 *
 * Errors are negative errno values, with a message in err (when err is not
 * NULL and errlen > 0; truncated to fit):
 *   "FILE:LINE:COLUMN: key 'KEY': what is wrong (what is expected)"
 * COLUMN is the 1-based byte column of the value (or of the key).
 */
#ifndef TRACER_COMMON_CONFIG_H
#define TRACER_COMMON_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_DEFAULT_PATH "/etc/tracer/tracer.conf"
#define CONFIG_USER_MAX 33u        /* a user name or uid, 32 bytes at most, and its NUL */
#define CONFIG_HOST_ID_HEX 32u     /* host_id: 32 hex digits (16 bytes, as /etc/machine-id) */
#define CONFIG_URL_MAX 2048u       /* a URL list (upload_url) and its NUL */
#define CONFIG_URLS_MAX 8u         /* URLs in upload_url, at most */
#define CONFIG_LISTEN_HOST_MAX 46u /* INET6_ADDRSTRLEN: the longest IPv6 text and its NUL */
#define CONFIG_ERR_MIN 160u        /* an error buffer this size holds any message but a long file name */
#define CONFIG_CLOUD_MAX 16u       /* cloud: at most 15 bytes and its NUL */
#define CONFIG_HOST_NAME_MAX 65u   /* instance_type, region: at most 64 bytes and the NUL */
#define CONFIG_MICRO 1000000ULL    /* price_per_hour is kept in millionths of a US dollar */
#define CONFIG_PRICE_TEXT_MAX 24u  /* a price as config_format_price writes it, and its NUL */

/* A listen address: "127.0.0.1:8750", "[::1]:8750" or "localhost:8750". */
struct config_listen {
	char host[CONFIG_LISTEN_HOST_MAX]; /* as written, without brackets; an address in canonical form */
	int family;                        /* AF_INET or AF_INET6 ("localhost" is AF_INET 127.0.0.1) */
	uint8_t addr[16];                  /* network byte order; the first 4 bytes for AF_INET */
	uint16_t port;                     /* 0: any free port */
};

/* A price per hour in US dollars ("0.192"), exact to a millionth of a dollar. */
struct config_price {
	uint64_t micro_usd;
	bool set;                          /* false: not set (the default; 0 is a price: free) */
};

/*
 * Every key's value. Paths and strings are NUL-terminated arrays (empty:
 * not set, where the key allows it); durations are nanoseconds; sizes are
 * bytes. Nothing is allocated: a config can be copied with an assignment.
 */
struct tracer_config {
	/* where things live, who runs */
	char state_dir[PATH_MAX];
	char runtime_dir[PATH_MAX];
	char collector_user[CONFIG_USER_MAX];
	char processor_user[CONFIG_USER_MAX];

	/* collector */
	char rules[PATH_MAX];
	uint64_t sample_interval_ns;
	uint32_t ring_order;
	uint64_t kernel_buffer;

	/* processor */
	char tool_rules[PATH_MAX];
	char redact_rules[PATH_MAX];
	uint64_t stall_after_ns;
	uint64_t io_wait_after_ns;
	uint64_t net_wait_after_ns;
	uint32_t max_processes;
	uint64_t heartbeat_interval_ns;  /* daemon mode: the host heartbeat's period (TL_HOST, docs/live.md) */

	/* host identity (processor): what tracer cost prices a run by; empty, unset: what DMI says, or unknown */
	char cloud[CONFIG_CLOUD_MAX];
	char instance_type[CONFIG_HOST_NAME_MAX];
	char region[CONFIG_HOST_NAME_MAX];
	struct config_price price_per_hour;

	/* delivery: spool, batches, upload */
	char upload_url[CONFIG_URL_MAX];  /* URLs separated by commas or blanks: config_url_split */
	char signing_key[PATH_MAX];
	char signing_key_next[PATH_MAX]; /* empty: no rotation under way */
	char ca_file[PATH_MAX];
	char client_cert[PATH_MAX];
	char client_key[PATH_MAX];
	bool tls_verify;
	char host_id[CONFIG_HOST_ID_HEX + 1]; /* lowercase hex, or empty: /etc/machine-id */
	uint32_t batch_records;
	uint64_t batch_interval_ns;
	uint64_t fsync_interval_ns;
	uint64_t spool_quota;
	uint64_t segment_size;
	uint64_t segment_age_ns;
	uint64_t connect_timeout_ns;
	uint64_t transfer_timeout_ns;
	uint64_t retry_max_ns;

	/* ingest */
	struct config_listen ingest_listen;
	char ingest_db[PATH_MAX];
	char ingest_keys[PATH_MAX];
	uint64_t ingest_max_body;
	uint32_t ingest_max_connections;
	uint64_t ingest_timeout_ns;
	char ingest_tls_cert[PATH_MAX];  /* empty: plain HTTP */
	char ingest_tls_key[PATH_MAX];
	char ingest_client_ca[PATH_MAX]; /* empty: no client certificate asked for */
	uint64_t lake_retention_ns;      /* 0: for ever (lake/maintain.c) */
	uint64_t lake_retention_runs_ns;
	/* tracer sweep (docs/sweep.md) */
	uint64_t sweep_window_ns;
	uint32_t sweep_gcp_cpu_millicores, sweep_gcp_cpu_percent, sweep_gcp_rx_bytes_per_s, sweep_gcp_tx_bytes_per_s;
	uint32_t sweep_gcp_net_percent;
	uint64_t sweep_gcp_min_observed_ns;
	uint32_t sweep_aws_cpu_percent, sweep_aws_net_bytes, sweep_aws_days, sweep_aws_window_days;
	uint64_t sweep_day_ns, sweep_run_idle_min_ns, sweep_worker_idle_ns, sweep_session_idle_ns;
	uint64_t sweep_idle_process_age_ns, sweep_idle_process_idle_ns, sweep_idle_process_rss;
	uint64_t sweep_reserved_min_ns, sweep_reserved_min_memory;
	uint32_t sweep_reserved_cpu_percent, sweep_reserved_memory_percent, sweep_reserved_min_cpu_millicores;

	struct config_listen web_listen;
	char web_token_file[PATH_MAX];
};

/* Every key at its default. */
void config_defaults(struct tracer_config *cfg);

/*
 * One key's default as the table writes it ("300s", "/etc/tracer/signing.key"),
 * or NULL for no such key: for programs whose own options default to it.
 */
const char *config_default_text(const char *key);

/*
 * A number key's default and bounds, parsed (integer: the value; size:
 * bytes; duration: ns); def, min and max may be NULL. For programs whose
 * own options take the same value, so that the table stays the one place
 * it is written. 0, or -ENOENT when key is not an integer, size or duration.
 */
int config_key_number(const char *key, uint64_t *def, uint64_t *min, uint64_t *max);

/*
 * Parse a config text (len bytes, need not be NUL-terminated; name is the
 * file name for messages). No I/O. On success *cfg is the defaults plus
 * what the text sets, and config_check() holds; on error *cfg is untouched.
 * 0, -EINVAL, or -ENOMEM (the parse works on a heap copy of the config).
 */
int config_parse(struct tracer_config *cfg, const char *name, const char *text, size_t len, char *err,
		 size_t errlen);

/*
 * Read and parse a config file. The file must be a regular file of at most
 * READ_MAX_CONFIG bytes (common/readfile.h) that others cannot write; with require_root_owned,
 * it and its directory must also be owned by root and not group-writable
 * (the daemons run as root at first: whoever writes the file decides what
 * they do). On error *cfg is untouched. 0, -ENOENT (no such file: callers
 * reading the default path may run on the defaults), -EACCES, -EISDIR,
 * -EFBIG, -EPERM (ownership or mode), -EINVAL (content) or another -errno.
 */
int config_load(struct tracer_config *cfg, const char *path, bool require_root_owned, char *err, size_t errlen);

/*
 * Set one key from a value as given on a command line (no quotes, no
 * comments: the value is taken as it is), with the file's validation.
 * On error *cfg is untouched; the message is "key 'KEY': ...". 0 or -EINVAL.
 * Checks only the value: config_check() the whole once every override is in.
 */
int config_set(struct tracer_config *cfg, const char *key, const char *value, char *err, size_t errlen);

/* config_set from "key=value" (split at the first '='), as `--set key=value` gives it. */
int config_set_arg(struct tracer_config *cfg, const char *key_value, char *err, size_t errlen);

/*
 * What no single value can say: client_cert and client_key both or neither,
 * ingest_tls_cert and ingest_tls_key too, ingest_client_ca only with them;
 * spool_quota holds at least two segments. 0 or -EINVAL with a message.
 */
int config_check(const struct tracer_config *cfg, char *err, size_t errlen);

/*
 * What each daemon does with its --config FILE and --set KEY=VALUE options:
 * the defaults, then the file (path may be NULL: the defaults and the
 * overrides only), then each override in order, then the whole checked.
 * 0, or -1 with the reason logged once (<3>, with FILE:LINE where the file
 * is at fault, or the --set that is).
 */
int config_from_options(struct tracer_config *cfg, const char *path, bool require_root_owned,
			const char *const *sets, unsigned nsets);

/*
 * upload_url's URLs (as its setter checked them: separated by commas or
 * blanks, none twice), each NUL-terminated in buf and pointed at by url[]
 * in order. How many: 0 when the list is empty, at most CONFIG_URLS_MAX.
 */
unsigned config_url_split(const char *list, char buf[CONFIG_URL_MAX], const char *url[CONFIG_URLS_MAX]);

/*
 * The TCP port a URL leads to: its explicit port, else 443 for https://, 80
 * for http://, dflt for any other scheme (a proxy URL: socks5://...); 0
 * when there is no "://" or the port is not 1..65535. For Landlock's rules:
 * each URL of upload_url (checked by its setter) and the proxy libcurl takes
 * from the environment (not checked by anyone).
 */
uint16_t config_url_port(const char *url, uint16_t dflt);

/* A price in millionths of a dollar as the file writes it: "0.192", "12", "0" (no trailing zeros). */
void config_format_price(uint64_t micro_usd, char *buf, size_t len);

/* The documentation of every key (type, bounds, default, users), as a commented config file. */
void config_describe(FILE *out);

/* The config in force, one "key = value" line per key, in a form config_parse reads back. */
void config_write(FILE *out, const struct tracer_config *cfg);

#endif
