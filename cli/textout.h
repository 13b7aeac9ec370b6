/* SPDX-License-Identifier: Apache-2.0 */
/* Text for a terminal from strings that came from a host (cli/textout.c). */
#ifndef TRACER_CLI_TEXTOUT_H
#define TRACER_CLI_TEXTOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "store.h"

#define FIELD_MAX 256 /* bytes of a host string kept for one padded column */

/* c, or '?' for a control character (newlines and tabs kept when multiline). */
unsigned char clean_char(unsigned char c, bool multiline);
/* s with control characters shown as '?'. */
void put_clean(const char *s, bool multiline);
/* A column: s cleaned (cut at the width, on a character's start), NULL as "-", padded to width. */
void put_field(const char *s, int width);
/* CLOCK_REALTIME ns as "YYYY-MM-DD HH:MM:SS" UTC, "-" if unknown. */
void format_time(char *out, size_t outlen, struct store_int ns);
/* Bytes as "1.5 GiB", "-" if unknown or negative. */
void format_bytes(char *out, size_t outlen, struct store_int b);

#endif /* TRACER_CLI_TEXTOUT_H */
