/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_VIEW_HTML_H
#define TRACER_VIEW_HTML_H

#include <stddef.h>

#include "json.h"

/*
 * The self-contained HTML report of one run (docs/html.md): the page of
 * view/html/ with its data (html_data.h: what the page shows of the run's
 * tracer.run.v1 report) embedded once, as JSON, in <script
 * type="application/json" id="run-data">. tracer run --html and tracer
 * report --html both write through html_write_file, from the same JSON
 * text their --json writes.
 *
 * Every byte that came from a host is escaped for the context it lands
 * in, by the one function for that context:
 *   html_put_text         HTML text (the <title>): & < > " ' as
 *                         character references; control characters and
 *                         ill-formed UTF-8 as U+FFFD
 *   html_put_script_json  JSON inside a <script> element: < > & as
 *                         \u003c \u003e \u0026, U+2028 and U+2029 as
 *                         \u2028 \u2029, control characters as \u00XX,
 *                         ill-formed UTF-8 as \ufffd; so the text can
 *                         neither end the element ("</script"), nor open
 *                         a comment ("<!--"), and JSON.parse reads back
 *                         the same values.
 * Everything else on the page is the page's own, fixed at build time.
 */
void html_put_text(struct obuf *o, const char *s, size_t n);
void html_put_script_json(struct obuf *o, const char *json, size_t n);

/*
 * The whole page of the report json into o: 0; -EINVAL when json is not a
 * report the page can show (html_data_write refused it: nothing written);
 * -ENOMEM; or o's first error (negative errno).
 */
int html_write_report(struct obuf *o, const char *json, size_t len, const char *title);

/*
 * The page into a new file at path (mode 0644, truncated), owned by
 * uid:gid when they are not -1. 0, or -1 with a message on stderr
 * naming who (e.g. "tracer report") and what was wrong; a report the page
 * cannot show makes no file.
 */
int html_write_file(const char *path, const char *json, size_t len, const char *title, int uid, int gid,
		    const char *who);

#endif /* TRACER_VIEW_HTML_H */
