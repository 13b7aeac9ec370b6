/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The collector's own reader of tracer.conf (docs/config.md), run as root
 * before the sandbox. It sets the seven keys the collector acts on, with
 * the validation and the messages of the general parser (common/config.c,
 * which is not linked into the collector):
 *
 *   runtime_dir  collector_user  processor_user  rules
 *   sample_interval  ring_order  kernel_buffer
 *
 * Every line is checked as the general parser checks it (UTF-8 text, one
 * `key = value`, quoting, a known key, each key once); the value of a key
 * of another component (the processor's, the ingest's) is not looked at:
 * they check their own. The file must be root's and writable by no one
 * else, and so must its directory.
 *
 * Errors are negative errno values, with a message in err (when err is
 * not NULL and errlen > 0), word for word the general parser's:
 *   "FILE:LINE:COLUMN: key 'KEY': what is wrong (what is expected)"
 * tests/test_collector_conf.c and tests/fuzz/fuzz_collector_conf.c hold
 * the two readers to agreeing.
 */
#ifndef TRACER_COLLECTOR_CONF_H
#define TRACER_COLLECTOR_CONF_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define CONF_USER_MAX 33u        /* a user name or uid and its NUL (CONFIG_USER_MAX) */

struct collector_conf {
	char runtime_dir[PATH_MAX];
	char collector_user[CONF_USER_MAX];
	char processor_user[CONF_USER_MAX];
	char rules[PATH_MAX]; /* empty: none */
	uint64_t sample_interval_ns;
	uint32_t ring_order;
	uint64_t kernel_buffer; /* bytes */
};

/* Every key at its default (the general parser's). */
void conf_defaults(struct collector_conf *c);

/*
 * Parse a config text of len bytes (name: the file, for messages). No I/O.
 * All or nothing: *c is the defaults plus what the text sets, or untouched
 * on error. 0 or -EINVAL.
 */
int conf_parse(struct collector_conf *c, const char *name, const char *text, size_t len, char *err, size_t errlen);

/* Read and parse the file; it and its directory must be root's and writable by no one else. */
int conf_load(struct collector_conf *c, const char *path, char *err, size_t errlen);

/* "key=value" from --set: the value taken as it is. Another component's key is accepted and ignored. */
int conf_set_arg(struct collector_conf *c, const char *key_value, char *err, size_t errlen);

/*
 * --config FILE (path may be NULL) and --set KEY=VALUE, in that order, over
 * the defaults. 0, or -1 with the reason logged once (<3>).
 */
int conf_from_options(struct collector_conf *c, const char *path, const char *const *sets, unsigned nsets);

#endif /* TRACER_COLLECTOR_CONF_H */
