/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: arbitrary bytes as a cgroup path through cgctx_parse(),
 * with abort() on a broken invariant. Whatever the bytes, nothing read may
 * be invented: every id, uid, job and unit reported must be in the input,
 * in the exact form the rules allow (64 lowercase hex digits, a canonical
 * pod uid, Slurm's %u numbers, a systemd unit name); a refused path leaves
 * every field empty; the same input gives the same answer; and a path that
 * starts with '/' reads the same with CGCTX_TRUNCATED as without. Every
 * string field is zero after its NUL.
 *
 * Input: [0] flags (bit 0: CGCTX_TRUNCATED), then the path's bytes (any,
 * NUL included: the length is what counts).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgctx.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool in_input(const char *path, size_t len, const char *s)
{
	return memmem(path, len, s, strlen(s)) != NULL;
}

/* NUL-terminated inside the field, and zero after the NUL: equal contexts are equal bytes. */
static bool terminated(const char *field, size_t size)
{
	const char *nul = memchr(field, '\0', size);

	if (!nul)
		return false;
	for (; nul < field + size; nul++)
		if (*nul)
			return false;
	return true;
}

static bool all_of(const char *s, const char *set)
{
	return strspn(s, set) == strlen(s);
}

static void check_id(const char *path, size_t len, const char *id)
{
	char short_id[CGCTX_SHORT_ID_LEN + 1];

	if (id[0] == '\0') {
		CHECK(cgctx_short_id(id, short_id, sizeof(short_id)) == 0);
		return;
	}
	CHECK(cgctx_is_container_id(id, strlen(id)));
	CHECK(in_input(path, len, id));
	CHECK(cgctx_short_id(id, short_id, sizeof(short_id)) == CGCTX_SHORT_ID_LEN);
	CHECK(memcmp(short_id, id, CGCTX_SHORT_ID_LEN) == 0);
}

static void check_pod(const char *path, size_t len, const struct cgctx *c)
{
	char systemd_form[CGCTX_POD_UID_MAX];
	size_t n = strlen(c->pod_uid);

	CHECK((n == 0) == (c->qos == CGCTX_QOS_NONE));
	CHECK(c->qos <= CGCTX_QOS_BESTEFFORT);
	if (n == 0)
		return;
	if (n == 32) {
		CHECK(all_of(c->pod_uid, "0123456789abcdef"));
		CHECK(in_input(path, len, c->pod_uid));
		return;
	}
	CHECK(n == 36);
	for (size_t i = 0; i < n; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		CHECK(dash ? c->pod_uid[i] == '-' : strchr("0123456789abcdef", c->pod_uid[i]) != NULL);
	}
	memcpy(systemd_form, c->pod_uid, sizeof(systemd_form));
	for (size_t i = 0; i < n; i++)
		if (systemd_form[i] == '-')
			systemd_form[i] = '_';
	CHECK(in_input(path, len, c->pod_uid) || in_input(path, len, systemd_form));
}

static bool slurm_number(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 10 && all_of(s, "0123456789") && (s[0] != '0' || n == 1) &&
	       strtoull(s, NULL, 10) <= UINT32_MAX;
}

static void check_slurm(const char *path, size_t len, const struct cgctx *c)
{
	char job[32];

	CHECK(terminated(c->slurm_job, sizeof(c->slurm_job)));
	CHECK(terminated(c->slurm_step, sizeof(c->slurm_step)));
	CHECK(terminated(c->slurm_task, sizeof(c->slurm_task)));
	if (c->slurm_job[0] == '\0') {
		CHECK(c->slurm_step[0] == '\0');
		return;
	}
	CHECK(slurm_number(c->slurm_job) && strcmp(c->slurm_job, "0") != 0);
	snprintf(job, sizeof(job), "job_%s", c->slurm_job);
	CHECK(in_input(path, len, job));
	if (c->slurm_step[0] == '\0') {
		CHECK(c->slurm_task[0] == '\0' && !c->slurm_stepd);
		return;
	}
	CHECK(in_input(path, len, c->slurm_step));
	CHECK(slurm_number(c->slurm_step) || !strcmp(c->slurm_step, "batch") || !strcmp(c->slurm_step, "extern") ||
	      !strcmp(c->slurm_step, "interactive") || strchr(c->slurm_step, '+'));
	if (c->slurm_task[0] != '\0') {
		CHECK(slurm_number(c->slurm_task) || !strcmp(c->slurm_task, "special"));
		CHECK(!c->slurm_stepd);
	}
}

static void check_unit(const char *path, size_t len, const char *unit, bool slice)
{
	static const char *const suffixes[] = { ".service", ".scope", ".socket", ".mount", ".swap" };
	size_t n = strlen(unit);
	bool suffix_ok = false;

	if (n == 0)
		return;
	CHECK(in_input(path, len, unit));
	CHECK(all_of(unit, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.\\-@"));
	if (slice) {
		suffix_ok = n > 6 && !strcmp(unit + n - 6, ".slice");
	} else {
		for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
			size_t s = strlen(suffixes[i]);

			suffix_ok |= n > s && !strcmp(unit + n - s, suffixes[i]);
		}
	}
	CHECK(suffix_ok);
}

static void check_context(const char *path, size_t len, unsigned flags, int rc, const struct cgctx *c)
{
	static const struct cgctx empty;

	CHECK(rc == 0 || rc == -EINVAL);
	if (rc != 0) {
		CHECK(memcmp(c, &empty, sizeof(empty)) == 0);
		return;
	}
	CHECK(c->truncated == ((flags & CGCTX_TRUNCATED) != 0));
	CHECK(terminated(c->container_id, sizeof(c->container_id)));
	CHECK(terminated(c->monitor_of, sizeof(c->monitor_of)));
	CHECK(terminated(c->pod_uid, sizeof(c->pod_uid)));
	CHECK(terminated(c->unit, sizeof(c->unit)));
	CHECK(terminated(c->slice, sizeof(c->slice)));

	check_id(path, len, c->container_id);
	check_id(path, len, c->monitor_of);
	CHECK((c->container_id[0] == '\0') == (c->containers == 0));
	CHECK(c->runtime <= CGCTX_RT_UNKNOWN);
	CHECK((c->runtime == CGCTX_RT_NONE) == (c->container_id[0] == '\0' && c->monitor_of[0] == '\0'));
	CHECK((c->monitor_runtime == CGCTX_RT_NONE) == (c->monitor_of[0] == '\0'));
	CHECK(c->monitor_runtime == CGCTX_RT_NONE || c->monitor_runtime == CGCTX_RT_PODMAN ||
	      c->monitor_runtime == CGCTX_RT_CRIO);
	CHECK(c->container_id[0] != '\0' || c->runtime == c->monitor_runtime);
	CHECK(cgctx_runtime_name(c->runtime)[0] != '\0' || c->runtime == CGCTX_RT_NONE);

	check_pod(path, len, c);
	check_slurm(path, len, c);
	check_unit(path, len, c->unit, false);
	check_unit(path, len, c->slice, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgctx a, b;
	unsigned flags;
	const char *path;
	size_t len;
	int rc;

	if (size < 1)
		return 0;
	flags = data[0] & 1u ? CGCTX_TRUNCATED : 0;
	path = (const char *)data + 1;
	len = size - 1;

	rc = cgctx_parse(path, len, flags, &a);
	check_context(path, len, flags, rc, &a);

	/* the same answer twice, whatever was in the output before */
	memset(&b, 0x5a, sizeof(b));
	CHECK(cgctx_parse(path, len, flags, &b) == rc);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);

	/* a whole path (leading '/') reads the same when marked truncated */
	if (len > 0 && path[0] == '/') {
		CHECK(cgctx_parse(path, len, flags ^ CGCTX_TRUNCATED, &b) == rc);
		b.truncated = a.truncated;
		CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	}
	return 0;
}
