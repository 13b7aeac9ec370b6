/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web's static files, built in at build time (web/embed_assets.py):
 * the pages of web/page/ and the HTML report's script and style
 * (view/html/report.js, report.css). Nothing is read from disk at run time.
 */
#ifndef TRACER_WEB_ASSETS_H
#define TRACER_WEB_ASSETS_H

#include <stddef.h>

struct web_asset {
	const char *name;        /* base name: "runs.html", "report.js" */
	const char *type;        /* Content-Type */
	const unsigned char *data;
	size_t len;
};

extern const struct web_asset web_assets[];
extern const size_t web_nassets;

#endif /* TRACER_WEB_ASSETS_H */
