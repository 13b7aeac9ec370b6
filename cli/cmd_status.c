/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer status: how delivery stands, from the status file the processor
 * rewrites every second in its state directory (STATE_DIR/status.json,
 * schema tracer.status.v1, read by status/status.c): the spool (records
 * waiting, evicted, corrupt, quarantined), the upload (where to,
 * acknowledged, retries, failovers, the last error). A file it cannot read
 * as tracer.status.v1 is refused, with the key at fault.
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

#include "cmd_status.h"
#include "readfile.h"
#include "config.h"
#include "status.h"

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

static const char *yes_no(bool b)
{
	return b ? "true" : "false";
}

/* The figures, as the processor wrote them (strings as the file has them, escapes and all). */
static void print_human(const char *path, const struct status *s, time_t mtime)
{
	char text[6 * STATUS_URL_MAX];
	long age = (long)(time(NULL) - mtime);
	const char *to = s->upload.url_in_use[0] ? s->upload.url_in_use : s->upload.url; /* older: no url_in_use */

	printf("status of %s (written %ld s ago%s)\n", path, age,
	       age > STALE_S ? ": the processor is not running, or is stuck" : "");
	printf("ring:    attached %s, %llu records read, %llu lost before the processor\n", yes_no(s->ring.attached),
	       (unsigned long long)s->ring.records, (unsigned long long)s->ring.lost);
	printf("spool:   %llu segments, %llu bytes; next seq %llu, durable %llu, acknowledged %llu\n",
	       (unsigned long long)s->spool.segments, (unsigned long long)s->spool.bytes_on_disk,
	       (unsigned long long)s->spool.next_seq, (unsigned long long)s->spool.durable_seq,
	       (unsigned long long)s->spool.acked_seq);
	printf("lost:    %llu evicted (quota), %llu corrupt, %llu quarantined (refused by the ingest)\n",
	       (unsigned long long)s->spool.evicted_records, (unsigned long long)s->spool.corrupt_frames,
	       (unsigned long long)s->spool.quarantined_records);
	if (!s->upload.enabled) {
		printf("upload:  off (no upload_url): records stay in the spool\n");
		return;
	}
	status_shown(to, text, sizeof(text));
	printf("upload:  to %s: %llu batches (%llu records) acknowledged, %llu waiting; %llu retries\n", text,
	       (unsigned long long)s->upload.batches_acked, (unsigned long long)s->upload.records_acked,
	       (unsigned long long)s->upload.pending_records, (unsigned long long)s->upload.retries);
	if (strcmp(to, s->upload.url)) { /* one of several */
		status_shown(s->upload.url, text, sizeof(text));
		printf("         of upload_url %s: %llu failovers", text, (unsigned long long)s->upload.failovers);
		if (s->upload.failed_url[0]) {
			status_shown(s->upload.failed_url, text, sizeof(text));
			printf(", the last failure at %s", text);
		}
		putchar('\n');
	}
	if (s->upload.last_error[0]) {
		status_shown(s->upload.last_error, text, sizeof(text));
		printf("         last error: %s\n", text);
	}
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
	char state[PATH_MAX], path[PATH_MAX + 16], buf[STATUS_FILE_MAX + 1], why[256];
	struct status st;
	enum status_error e;
	bool json = false;
	struct stat sb;
	time_t mtime;
	ssize_t n;
	int c;

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
	snprintf(path, sizeof(path), "%s/" STATUS_FILE, state);
	n = read_file_bounded(AT_FDCWD, path, 0, buf, STATUS_FILE_MAX, &sb);
	if (n == -EINVAL || n == -EFBIG) {
		fprintf(stderr, "tracer status: %s: not a regular file of at most %u bytes: not the status file "
				"tracer-processor writes\n", path, STATUS_FILE_MAX);
		return 1;
	}
	if (n < 0) {
		fprintf(stderr, "tracer status: cannot read %s: %s (has tracer-processor run with this state_dir?)\n", path,
			strerror((int)-n));
		return 1;
	}
	mtime = sb.st_mtime;
	e = status_parse(buf, (size_t)n, &st, why, sizeof(why));
	if (e == STATUS_E_INCOMPLETE) {
		fprintf(stderr, "tracer status: %s is empty or being written: try again\n", path);
		return 1;
	}
	if (e == STATUS_E_JSON) {
		fprintf(stderr, "tracer status: %s: %s (being written, or damaged: try again)\n", path, why);
		return 1;
	}
	if (e) {
		fprintf(stderr, "tracer status: %s: %s (the processor that wrote it may be another version than this "
				"tracer)\n", path, why);
		return 1;
	}
	if (json) {
		make_printable(buf);
		fputs(buf, stdout);
	} else {
		print_human(path, &st, mtime);
	}
	return 0;
}
