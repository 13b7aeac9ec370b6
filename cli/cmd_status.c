/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer status: how delivery stands, from the status file the processor
 * rewrites every second in its state directory (STATE_DIR/status.json,
 * schema tracer.status.v1): the spool (records waiting, evicted, corrupt,
 * quarantined), the upload (acknowledged, retries, the last error).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cmd_status.h"

#define STATUS_MAX (1 << 16)
#define STALE_S 10 /* older than this: the processor is not running (or stuck) */

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer status [--config FILE | --state-dir DIR] [--json]\n"
		   "Shows the processor's delivery status from STATE_DIR/status.json (state_dir of\n"
		   "FILE, default " CONFIG_DEFAULT_PATH "). --json prints the file as it is.\n");
}

static int state_dir_of(const char *config, const char *dir, char *out, size_t outlen)
{
	static struct tracer_config cfg;
	char err[PATH_MAX + 256];
	int rc;

	if (dir) {
		snprintf(out, outlen, "%s", dir);
		return 0;
	}
	config_defaults(&cfg);
	rc = config_load(&cfg, config ? config : CONFIG_DEFAULT_PATH, false, err, sizeof(err));
	if (rc && !(rc == -ENOENT && !config)) {
		fprintf(stderr, "tracer status: %s\n", err[0] ? err : strerror(-rc));
		return -1;
	}
	snprintf(out, outlen, "%s", cfg.state_dir);
	return 0;
}

/* The value of "key": in the JSON text (our own flat format), as text; "" when absent. */
static const char *field(const char *json, const char *section, const char *key, char *out, size_t outlen)
{
	char pat[96];
	const char *p = json, *e;
	size_t n;

	out[0] = 0;
	if (section) {
		snprintf(pat, sizeof(pat), "\"%s\":", section);
		p = strstr(json, pat);
		if (!p)
			return out;
	}
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(p, pat);
	if (!p)
		return out;
	p += strlen(pat);
	if (*p == '"') {
		e = ++p;
		while (*e && !(*e == '"' && e[-1] != '\\'))
			e++;
	} else {
		e = p + strcspn(p, ",}");
	}
	n = (size_t)(e - p) < outlen - 1 ? (size_t)(e - p) : outlen - 1;
	memcpy(out, p, n);
	out[n] = 0;
	return out;
}

/*
 * The file is written by the processor, which runs with less privilege
 * than whoever reads this: no terminal control bytes reach the screen.
 */
static void make_printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 ? *s != '\n' : (unsigned char)*s == 0x7f)
			*s = '?';
}

static void print_human(const char *path, const char *j, time_t mtime)
{
	char a[160], b[160], c[160], d[160], e[160];
	long age = (long)(time(NULL) - mtime);

	printf("status of %s (written %ld s ago%s)\n", path, age,
	       age > STALE_S ? ": the processor is not running, or is stuck" : "");
	printf("ring:    attached %s, %s records read, %s lost before the processor\n", field(j, "ring", "attached", a, sizeof(a)),
	       field(j, "ring", "records", b, sizeof(b)), field(j, "ring", "lost", c, sizeof(c)));
	printf("spool:   %s segments, %s bytes; next seq %s, durable %s, acknowledged %s\n",
	       field(j, "spool", "segments", a, sizeof(a)), field(j, "spool", "bytes_on_disk", b, sizeof(b)),
	       field(j, "spool", "next_seq", c, sizeof(c)), field(j, "spool", "durable_seq", d, sizeof(d)),
	       field(j, "spool", "acked_seq", e, sizeof(e)));
	printf("lost:    %s evicted (quota), %s corrupt, %s quarantined (refused by the ingest)\n",
	       field(j, "spool", "evicted_records", a, sizeof(a)), field(j, "spool", "corrupt_frames", b, sizeof(b)),
	       field(j, "spool", "quarantined_records", c, sizeof(c)));
	field(j, "upload", "enabled", a, sizeof(a));
	if (strcmp(a, "true")) {
		printf("upload:  off (no upload_url): records stay in the spool\n");
		return;
	}
	printf("upload:  to %s: %s batches (%s records) acknowledged, %s waiting; %s retries\n",
	       field(j, "upload", "url", a, sizeof(a)), field(j, "upload", "batches_acked", b, sizeof(b)),
	       field(j, "upload", "records_acked", c, sizeof(c)), field(j, "upload", "pending_records", d, sizeof(d)),
	       field(j, "upload", "retries", e, sizeof(e)));
	field(j, "upload", "last_error", a, sizeof(a));
	if (a[0])
		printf("         last error: %s\n", a);
}

int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *dir = NULL;
	char state[PATH_MAX], path[PATH_MAX + 16], buf[STATUS_MAX + 1];
	bool json = false;
	struct stat st;
	ssize_t n;
	int c, fd;

	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'd': dir = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (config && dir)) {
		usage(stderr);
		return 2;
	}
	if (state_dir_of(config, dir, state, sizeof(state)))
		return 1;
	snprintf(path, sizeof(path), "%s/status.json", state);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "tracer status: cannot read %s: %s (has tracer-processor run with this state_dir?)\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	n = read(fd, buf, STATUS_MAX);
	close(fd);
	if (n <= 0 || !memchr(buf, '\n', (size_t)n)) {
		fprintf(stderr, "tracer status: %s is empty or being written: try again\n", path);
		return 1;
	}
	buf[n] = 0;
	make_printable(buf);
	if (json)
		fputs(buf, stdout);
	else
		print_human(path, buf, st.st_mtime);
	return 0;
}
