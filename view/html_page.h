/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_VIEW_HTML_PAGE_H
#define TRACER_VIEW_HTML_PAGE_H

#include <stddef.h>

/*
 * The HTML report's static page, generated at build time from
 * view/html/report.{html,css,js} by view/html/embed.py (into
 * $(BUILD)/gen/html_page.c), cut where html.c puts the run in: the head
 * up to the <title>'s text, then up to the run-data element's text, then
 * the rest. The page's Content-Security-Policy carries the sha256 of its
 * one <style> and one <script>, computed by the same step.
 */
extern const char html_page_head[];
extern const size_t html_page_head_len;
extern const char html_page_mid[];
extern const size_t html_page_mid_len;
extern const char html_page_tail[];
extern const size_t html_page_tail_len;

#endif /* TRACER_VIEW_HTML_PAGE_H */
