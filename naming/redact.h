/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Redaction of command lines: the secret part of an argument is replaced by
 * "***" before anything leaves the processor; everything else is copied
 * byte for byte.
 *
 *   mysql -uroot -pS3cret db                  -> mysql -uroot -p*** db
 *   curl -H 'Authorization: Bearer abc' URL   -> curl -H 'Authorization: ***' URL
 *   git clone https://bob:S3cret@host/x.git   -> git clone https://bob:***@host/x.git
 *   bash -c 'TOKEN=abc ./deploy --key-file k' -> bash -c 'TOKEN=*** ./deploy --key-file k'
 *   samtools sort -o x.bam y.bam              -> unchanged
 *
 * Table-driven (redact.c): secret option and variable names, key-like
 * names, program-specific short options (mysql -p, sshpass -p, curl -u...),
 * URL user info, token shapes (AKIA..., ghp_..., JWTs, private key blocks),
 * plus a rules file. No regular expressions, no allocation: the caller
 * gives the output buffer. Rules in docs/processor.md, "Redaction".
 *
 * Bounds: every string comes out no longer than it went in (a secret of 1
 * or 2 bytes becomes "*" or "**", anything longer "***"), so an output
 * buffer as large as the input always suffices. Redacting the output again
 * changes nothing.
 */
#ifndef TRACER_NAMING_REDACT_H
#define TRACER_NAMING_REDACT_H

#include <stddef.h>
#include <stdint.h>

#define REDACT_MARKER "***"
#define REDACT_RULES_MAX 64 /* rules a rules file may add (more is an error, not a silent drop) */
#define REDACT_RULE_MAX 64  /* bytes of a rule's name or prefix, NUL included */

/* flags */
#define REDACT_TRUNCATED 0x1u /* the last string was cut short: redact what may be the start of a secret at its end */
#define REDACT_SCRIPT 0x2u    /* every string is shell text: a value ends with its shell word, not with the string */

enum redact_rule_kind {
	REDACT_RULE_OPTION = 1, /* redact the value of this option or variable */
	REDACT_RULE_KEEP,       /* never redact this option or variable by its name */
	REDACT_RULE_PATTERN,    /* redact what follows this prefix in a token */
};

struct redact_rule {
	uint8_t kind; /* enum redact_rule_kind */
	uint8_t len;
	char text[REDACT_RULE_MAX]; /* options and keeps: lower case, '_' as '-', no leading dashes */
};

/* The rules a file added; the built-in ones always apply. Zero (or redact_rules_init) is "no file". */
struct redact_rules {
	unsigned n;
	struct redact_rule rule[REDACT_RULES_MAX];
};

void redact_rules_init(struct redact_rules *r);

/*
 * Add the rules of a rules file (text, len bytes; see docs/processor.md).
 * All or nothing: on an error r is unchanged, err receives "line N: what
 * is wrong" and -EINVAL (syntax) or -ENOSPC (more than REDACT_RULES_MAX
 * rules) is returned. err may be NULL.
 */
int redact_rules_load(struct redact_rules *r, const char *text, size_t len, char *err, size_t errsize);

/*
 * Redact argv[0..argc) (NUL-terminated strings, any bytes; a NULL entry is
 * an empty string) into out as argc NUL-terminated strings, one after
 * another. r may be NULL (built-in rules only). *outlen receives the bytes
 * written (NULs included), *nredacted (may be NULL) the number of secrets
 * replaced. Needs outsize >= sum(strlen(argv[i]) + 1), else -ENOSPC and
 * nothing usable is written; 0 on success. out must not overlap the input.
 */
int redact_argv(const struct redact_rules *r, const char *const *argv, size_t argc, unsigned flags, char *out,
		size_t outsize, size_t *outlen, unsigned *nredacted);

/*
 * The same for an argument area as an exec record carries it: len bytes of
 * NUL-terminated strings, the last one possibly without its NUL (truncated).
 * The output has the same strings in the same order and the same NULs, so
 * *outlen <= len; needs outsize >= len.
 */
int redact_area(const struct redact_rules *r, const char *area, size_t len, unsigned flags, char *out, size_t outsize,
		size_t *outlen, unsigned *nredacted);

/*
 * One free-form string of len bytes (an environment entry, a command
 * string), treated as a single argument. Writes at most len bytes and a NUL;
 * needs outsize >= len + 1. *outlen excludes the NUL.
 */
int redact_string(const struct redact_rules *r, const char *s, size_t len, unsigned flags, char *out,
		  size_t outsize, size_t *outlen, unsigned *nredacted);

#endif /* TRACER_NAMING_REDACT_H */
