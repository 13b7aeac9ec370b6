/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Spool recovery benchmark (part of make bench-delivery): how long
 * spool_open takes to recover a spool of about 1 GiB that nothing has
 * acknowledged, the worst case after a crash with the ingest away (every
 * frame of every segment is read and checked, every segment fdatasynced).
 *
 *   1. spool_open on an empty directory, then append realistic kernel
 *      records (encode.h: 2 samples and 1 file per exit, an exec every
 *      fourth process; 64-450 bytes) until --mib MiB of frames are
 *      appended, polling as the processor does; spool_close (everything
 *      durable).
 *   2. Cold: sync, then "echo 3 > /proc/sys/vm/drop_caches" (root only;
 *      says on stderr whether it worked), spool_open timed, spool_close.
 *   3. Warm: spool_open timed again with the segments in the page cache.
 *
 * Usage: spool_recovery_bench DIR [--mib N]   (DIR: an empty or absent
 * directory on the disk to measure; DIR/spool is created and removed.)
 * Results: "<metric> <value> <unit>" lines on stdout (DESIGN.md). Exit 0,
 * 1 when recovery lost or invented records, 2 on a setup error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "encode.h"
#include "frame.h"
#include "records.h"
#include "spool.h"

#define NS 1000000000ULL
#define POLL_EVERY 1024 /* appends between spool_poll calls, as the processor's drain does at most */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* The i-th record of the stream into buf: its type and length. */
static uint32_t make_record(uint64_t i, unsigned char *buf, size_t cap, uint16_t *type)
{
	uint32_t tgid = 10000 + (uint32_t)(i / 4) % 3000000;
	uint64_t ts = i * 1000;
	char path[160], a1[64], a2[64];

	switch (i % 4) {
	case 0:
	case 1: {
		struct tr_sample s = encode_sample(ts, tgid, ts / 2, 4242, i * 970000, 512ULL << 20, i << 10);

		memcpy(buf, &s, sizeof(s));
		*type = TR_SAMPLE;
		return sizeof(s);
	}
	case 2:
		snprintf(path, sizeof(path), "/data/run42/sample_%u_R1.fq.gz", (unsigned)tgid);
		*type = TR_FILE;
		return (uint32_t)encode_file(buf, cap, ts, tgid, ts / 2, TR_FILE_READ, path);
	default:
		if (i % 16 == 3) {
			const char *args[] = { "samtools", "sort", "-@", "4", "-o", a1, a2, NULL };

			snprintf(a1, sizeof(a1), "/scratch/sorted_%u.bam", (unsigned)tgid);
			snprintf(a2, sizeof(a2), "/scratch/aligned_%u.bam", (unsigned)tgid);
			*type = TR_EXEC;
			return (uint32_t)encode_exec_ctx(buf, cap, ts, tgid, 4242, ts / 2, "/usr/bin/samtools", args,
							 "/scratch/work/5e/0042", NULL);
		}
		struct tr_exit x = encode_exit(ts, tgid, ts / 2, 4242, 0);

		memcpy(buf, &x, sizeof(x));
		*type = TR_EXIT;
		return sizeof(x);
	}
}

static int fill_spool(const struct spool_config *c, uint64_t target_bytes, uint64_t *records, double *secs)
{
	static unsigned char buf[8192];
	struct spool *s;
	uint64_t bytes = 0, n = 0, seq, t0;
	int rc = spool_open(&s, c);

	if (rc)
		return rc;
	t0 = mono_ns();
	while (bytes < target_bytes) {
		uint16_t type;
		uint32_t len = make_record(n, buf, sizeof(buf), &type);

		while ((rc = spool_append(s, type, 0, 1, n * 64, buf, len, &seq)) == -EAGAIN)
			if ((rc = spool_poll(s, mono_ns())) != 0)
				break;
		if (rc)
			break;
		bytes += TR_FRAME_SIZE(len);
		if (++n % POLL_EVERY == 0 && (rc = spool_poll(s, mono_ns())) != 0)
			break;
	}
	if (!rc)
		rc = spool_sync(s);
	*secs = (double)(mono_ns() - t0) / 1e9;
	spool_close(s);
	*records = n;
	return rc;
}

/* Page cache out, so that recovery reads from the disk. */
static bool drop_caches(void)
{
	int fd;
	bool ok;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, "3\n", 2) == 2;
	close(fd);
	return ok;
}

static int timed_open(const struct spool_config *c, double *secs, struct spool_stats *st)
{
	struct spool *s;
	uint64_t t0 = mono_ns();
	int rc = spool_open(&s, c);

	*secs = (double)(mono_ns() - t0) / 1e9;
	if (rc)
		return rc;
	spool_get_stats(s, st);
	spool_close(s);
	return 0;
}

static void remove_spool(const char *dir)
{
	char path[4096 + 300];
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) && errno == EISDIR) {
			remove_spool(path);
			rmdir(path);
		}
	}
	closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	char dir[4096 + 16];
	struct spool_config c;
	struct spool_stats cold, warm;
	uint64_t mib = 1024, records = 0;
	double fill_s, cold_s, warm_s;
	bool dropped;
	int rc;

	if (argc == 4 && strcmp(argv[2], "--mib") == 0)
		mib = strtoull(argv[3], NULL, 10);
	if ((argc != 2 && argc != 4) || mib == 0 || mib > (1 << 20)) {
		fprintf(stderr, "usage: spool_recovery_bench DIR [--mib N]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/spool", argv[1]);
	if (mkdir(argv[1], 0700) && errno != EEXIST) {
		fprintf(stderr, "<3>cannot create %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	remove_spool(dir);
	memset(&c, 0, sizeof(c));
	c.dir = dir;
	memset(c.host_id, 0xab, sizeof(c.host_id));
	c.quota_bytes = (mib << 20) * 4; /* nothing evicted: the whole spool is recovered */
	rc = fill_spool(&c, mib << 20, &records, &fill_s);
	if (rc) {
		fprintf(stderr, "<3>filling the spool in %s failed: %s\n", dir, strerror(-rc));
		return 2;
	}
	fprintf(stderr, "<7>appended %llu records (%llu MiB of frames) in %.2f s\n", (unsigned long long)records,
		(unsigned long long)mib, fill_s);
	dropped = drop_caches();
	if (!dropped)
		fprintf(stderr, "<4>could not drop the page cache (%s): the cold figure is a warm one\n", strerror(errno));
	rc = timed_open(&c, &cold_s, &cold);
	if (!rc)
		rc = timed_open(&c, &warm_s, &warm);
	remove_spool(dir);
	if (rc) {
		fprintf(stderr, "<3>recovery failed: %s\n", strerror(-rc));
		return 2;
	}
	/* named for the size: 1GiB by default */
	if (mib == 1024) {
		printf("delivery.spool_recovery_1GiB_s %.3f s\n", cold_s);
		printf("delivery.spool_recovery_1GiB_warm_s %.3f s\n", warm_s);
	} else {
		printf("delivery.spool_recovery_%lluMiB_s %.3f s\n", (unsigned long long)mib, cold_s);
		printf("delivery.spool_recovery_%lluMiB_warm_s %.3f s\n", (unsigned long long)mib, warm_s);
	}
	printf("delivery.spool_recovery.cache_dropped %d bool\n", dropped ? 1 : 0);
	printf("delivery.spool_recovery.records %llu records\n", (unsigned long long)cold.recovered_records);
	printf("delivery.spool_recovery.segments %llu segments\n", (unsigned long long)cold.recovered_segments);
	printf("delivery.spool_recovery.bytes %llu bytes\n", (unsigned long long)cold.bytes_on_disk);
	printf("delivery.spool_append.records_per_s %.0f rec/s\n", (double)records / fill_s);
	if (cold.recovered_records != records || warm.recovered_records != records || cold.recovered_unacked != records) {
		fprintf(stderr, "<3>BROKEN SPOOL: appended %llu records, recovery found %llu (%llu unacked), then %llu\n",
			(unsigned long long)records, (unsigned long long)cold.recovered_records,
			(unsigned long long)cold.recovered_unacked, (unsigned long long)warm.recovered_records);
		return 1;
	}
	return 0;
}
