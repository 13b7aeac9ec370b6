/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The self-contained HTML report (html.h, docs/html.md): the static page
 * generated from view/html/, the run's title as HTML text and the page's
 * data (html_data.h, made from the run's report) as JSON inside a script
 * element, each through its own escaping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "html.h"
#include "html_data.h"
#include "html_page.h"

#define UTF8_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

void html_put_text(struct obuf *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		size_t len;

		switch (u[i]) {
		case '&': obuf_puts(o, "&amp;"); i++; continue;
		case '<': obuf_puts(o, "&lt;"); i++; continue;
		case '>': obuf_puts(o, "&gt;"); i++; continue;
		case '"': obuf_puts(o, "&quot;"); i++; continue;
		case '\'': obuf_puts(o, "&#39;"); i++; continue;
		default: break;
		}
		len = json_utf8_len(u + i, n - i);
		if (len == 0 || u[i] < 0x20 || u[i] == 0x7f) {
			/* A newline in a title is a space; any other control or stray byte is shown as U+FFFD. */
			obuf_puts(o, u[i] == '\n' || u[i] == '\t' ? " " : UTF8_REPLACEMENT);
			i++;
			continue;
		}
		obuf_put(o, s + i, len);
		i += len;
	}
}

void html_put_script_json(struct obuf *o, const char *json, size_t n)
{
	const unsigned char *u = (const unsigned char *)json;
	size_t i = 0;

	while (i < n) {
		size_t len;
		unsigned char c = u[i];

		if (c == '<' || c == '>' || c == '&' || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
		    c == 0x7f) {
			/* Only inside a JSON string can these be (valid JSON has none elsewhere): escaped, the same string. */
			obuf_printf(o, "\\u%04x", c);
			i++;
			continue;
		}
		len = json_utf8_len(u + i, n - i);
		if (len == 0) {
			obuf_puts(o, "\\ufffd");
			i++;
			continue;
		}
		/* U+2028 and U+2029 are E2 80 A8 and E2 80 A9: line terminators to older JavaScript. */
		if (len == 3 && c == 0xe2 && u[i + 1] == 0x80 && (u[i + 2] == 0xa8 || u[i + 2] == 0xa9))
			obuf_puts(o, u[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
		else
			obuf_put(o, json + i, len);
		i += len;
	}
}

/* The page around its data (already made: html_data_write's output). */
static void write_page(struct obuf *o, const struct obuf *data, const char *title)
{
	obuf_put(o, html_page_head, html_page_head_len);
	html_put_text(o, title ? title : "tracer run report", title ? strlen(title) : strlen("tracer run report"));
	obuf_put(o, html_page_mid, html_page_mid_len);
	html_put_script_json(o, data->buf ? data->buf : "", data->len);
	obuf_put(o, html_page_tail, html_page_tail_len);
}

/*
 * The page's data of a report, into memory. Bounded by twice the report
 * (what it copies, a step's id both in its step and among the strings)
 * and 64 MiB: the columns of HTML_DATA_MAX_PROCESSES rows, even when each
 * process of the report is a bare "{}".
 */
static int make_data(struct obuf *data, const char *json, size_t len, char *err, size_t errlen)
{
	obuf_init_mem(data, 2 * len + (64u << 20));
	return html_data_write(data, json, len, err, errlen);
}

int html_write_report(struct obuf *o, const char *json, size_t len, const char *title)
{
	struct obuf data;
	char err[160];
	int rc = make_data(&data, json, len, err, sizeof(err));

	if (!rc)
		write_page(o, &data, title);
	obuf_free(&data);
	return rc ? rc : o->err;
}

int html_write_file(const char *path, const char *json, size_t len, const char *title, int uid, int gid,
		    const char *who)
{
	char buf[64 << 10], why[160];
	struct obuf o, data;
	int fd, err;

	/* The data first: a report the page cannot show leaves no file behind. */
	if ((err = make_data(&data, json, len, why, sizeof(why))) != 0) {
		fprintf(stderr, "%s: cannot make the HTML report %s: %s\n", who, path,
			err == -EINVAL ? why : strerror(-err));
		obuf_free(&data);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot write the HTML report to %s: %s\n", who, path, strerror(errno));
		obuf_free(&data);
		return -1;
	}
	obuf_init_fd(&o, fd, buf, sizeof(buf));
	write_page(&o, &data, title);
	obuf_free(&data);
	err = obuf_flush(&o);
	if (!err && uid != -1 && fchown(fd, (uid_t)uid, (gid_t)gid) && geteuid() == 0)
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		fprintf(stderr, "%s: writing the HTML report to %s failed: %s\n", who, path, strerror(-err));
		return -1;
	}
	return 0;
}
