/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer.conf's line layer, shared by its two readers: the general one
 * (common/config.c) and the collector's own (collector/conf.c, which links
 * this file and not config.c). The syntax (UTF-8 text, one `key = value`
 * a line, quoted or bare values, # comments, a byte order mark, CRLF),
 * each key at most once, the messages ("FILE:LINE:COLUMN: ..."), and the
 * file's checks: a regular file of at most READ_MAX_CONFIG bytes
 * (common/readfile.h), writable by no one else; with root_owned, root's
 * and in a directory that is root's too. What a key means is the reader's.
 */
#ifndef TRACER_COMMON_CONF_LINES_H
#define TRACER_COMMON_CONF_LINES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONF_WHY_MAX 240 /* what is wrong with one value, and what is expected */

struct conf_lines {
	const char *name; /* the file, for messages */
	char *err;
	size_t errlen;
	void *ctx; /* the reader's */
	/*
	 * The reader's key named s[0..len): its index (>= 0), with its name and the longest value it takes
	 * (the "too long" message's figure); -ENOENT: not the reader's, the line is skipped; -EINVAL: what is
	 * wrong in w.
	 */
	int (*find)(void *ctx, const char *s, size_t len, const char **name, size_t *max, char *w, size_t wlen);
	/* Set key from value (decoded, NUL-terminated): 0, or -EINVAL with what is wrong in w. */
	int (*set)(void *ctx, int key, const char *value, char *w, size_t wlen);
	unsigned *lines;          /* by key index: the line it was set on, 0: not yet */
	unsigned line;
	char value[PATH_MAX + 1]; /* a decoded value: the longest path and one byte more, to say it is too long */
};

/* Parse the text (len bytes, at most READ_MAX_CONFIG) line by line through cl's find and set. 0 or -EINVAL. */
int conf_lines_parse(struct conf_lines *cl, const char *text, size_t len);

/*
 * Read the file at path and check it (and, with root_owned, its directory), then give its text to
 * parse(ctx, path, text, len, err, errlen): 0, or -errno with the message in err (parse's, or the file's).
 */
int conf_lines_load(const char *path, bool root_owned,
		    int (*parse)(void *ctx, const char *name, const char *text, size_t len, char *err, size_t errlen),
		    void *ctx, char *err, size_t errlen);

/* What is wrong with the bytes of a value or line, or 0 if it is UTF-8 text: the offset in *at. */
int conf_check_text(const char *s, size_t len, size_t *at, char *w, size_t wlen);

/* Text from the file or a command line, for a message: printable ASCII, at most 40 bytes, "..." after. */
const char *conf_shown(const char *s, size_t len, char buf[48]);

/* The message into err (when not NULL and errlen > 0); returns rc. */
__attribute__((format(printf, 4, 5))) int conf_report(char *err, size_t errlen, int rc, const char *fmt, ...);

/* The number kinds both readers take, through common/parse.h. */
enum conf_number_kind { CONF_UINT, CONF_BYTES, CONF_BYTES_POW2, CONF_DURATION };

/*
 * v as a whole number, a size (B, KiB, ...; CONF_BYTES_POW2: a power of two) or a duration (ns .. d) within
 * [min, max], into *out: 0, or -EINVAL with what is wrong in w, ex (what the key takes) in its parenthesis.
 * The one set of value messages of tracer.conf.
 */
int conf_number(enum conf_number_kind kind, const char *v, uint64_t min, uint64_t max, const char *ex,
		uint64_t *out, char *w, size_t wlen);

/* Blanks (space, tab) at s[*i...], within n bytes. */
void conf_skip_blanks(const char *s, size_t n, size_t *i);

#endif /* TRACER_COMMON_CONF_LINES_H */
