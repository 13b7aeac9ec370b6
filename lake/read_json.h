/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON the lake's reads look into, in C rather than in SQL (SQLite's
 * json1 functions have no PostgreSQL twin giving the same text): a column's
 * text parsed with records/json_parse.h (strict), and the values the reads
 * hand over made of it exactly as the SQL of before made them:
 *
 *   lake_json_valid  CASE WHEN json_valid(x) THEN x END, json_valid being
 *                    json_parse's acceptance
 *   lake_json_join   group_concat(value, sep) over json_each(x)
 *   lake_json_minify the text as SQLite's json functions give a value
 *                    (whitespace outside strings dropped; strings and
 *                    numbers as written)
 *
 * A reader holds one struct lake_json for a walk: its nodes and its output
 * are reused from row to row, valid until the next call. Private to lake/.
 */
#ifndef TRACER_LAKE_READ_JSON_H
#define TRACER_LAKE_READ_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "json_parse.h"

struct lake_json {
	struct json_doc doc;
	struct json_node *nodes;
	uint32_t cap;
	struct obuf out;            /* lake_json_join's string */
};

/* Parse len bytes of text: 0, -EINVAL (json_parse refuses it), -ENOMEM. */
int lake_json_parse(struct lake_json *j, const char *text, size_t len);

/* text when json_parse accepts it, else NULL (NULL too for NULL). */
const char *lake_json_valid(struct lake_json *j, const char *text, size_t len);

/*
 * The values of text's array (an object: its members' values; a scalar:
 * itself) joined with sep, as SQLite's group_concat(value, sep) over
 * json_each(text) gave them: a string decoded, an integer of int64's range
 * printed, another number as SQLite prints a REAL, true and false as 1 and
 * 0, an array or object as minified JSON, null left out. "" when text is
 * NULL, not JSON, or holds no value; NULL when out of memory.
 */
const char *lake_json_join(struct lake_json *j, const char *text, size_t len, const char *sep);

/* len bytes of JSON text (json_parse accepted it) into o as SQLite's json functions give it. */
void lake_json_minify(struct obuf *o, const char *text, size_t len);

/*
 * A stored run report as tracer report shows it (store_run_report): the
 * "report" object of payload (a record's JSON, len bytes) minified, with
 * "state" set to state (NULL: null), "signals" the report's own (if an
 * array) followed by the values of signals (a JSON array; NULL: none) and,
 * unless tune is NULL, "tune" set to tune (a JSON object), each in place
 * when the report has the member, else appended in that order (as SQLite's
 * json_set did). Into o: 0, -ENOENT (payload holds no report object),
 * -EINVAL (signals or tune not JSON), -ENOMEM, or o's error.
 */
int lake_json_report(struct obuf *o, const char *payload, size_t len, const char *state, const char *signals,
		     const char *tune);

void lake_json_free(struct lake_json *j);

#endif /* TRACER_LAKE_READ_JSON_H */
