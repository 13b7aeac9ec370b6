/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

struct harness H;
static char tmpdir[64];

const char *harness_unavailable(void)
{
	if (geteuid() != 0)
		return "the kernel programs' tests need root (they load BPF programs): run them with sudo";
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return "the kernel has no BTF (/sys/kernel/btf/vmlinux): the programs cannot load";
	return NULL;
}

static int keep_record(void *ctx, void *data, size_t size)
{
	size_t need = sizeof(size_t) + ((size + 7) & ~(size_t)7);

	(void)ctx;
	if (H.len + need > H.cap) {
		H.cap = (H.len + need) * 2;
		H.recs = realloc(H.recs, H.cap);
		assert_non_null(H.recs);
	}
	memcpy(H.recs + H.len, &size, sizeof(size));
	memcpy(H.recs + H.len + sizeof(size), data, size);
	H.len += need;
	return 0;
}

void harness_start(pid_t trace_pid, unsigned sample_interval_ms, const char *rules_path)
{
	struct load_options o = { .kernel_buffer_mib = 64, .sample_interval_ms = sample_interval_ms,
				  .trace_pid = trace_pid };

	snprintf(tmpdir, sizeof(tmpdir), "/var/tmp/tracer-bpf-test.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	assert_int_equal(chmod(tmpdir, 0755), 0);
	assert_int_equal(rules_init(&H.rules, rules_path), 0);
	assert_int_equal(bpf_start(&H.bpf, &o, &H.rules), 0);
	H.rb = ring_buffer__new(bpf_map__fd(H.bpf.skel->maps.events), keep_record, NULL, NULL);
	assert_non_null(H.rb);
}

void harness_stop(void)
{
	char cmd[128];

	ring_buffer__free(H.rb);
	/* Detach and unload: the collector never does (it exits, which does the same). */
	while (H.bpf.n_timers > 0)
		bpf_link__destroy(H.bpf.timers[--H.bpf.n_timers]);
	tracer_bpf__destroy(H.bpf.skel);
	free(H.recs);
	H.recs = NULL;
	H.len = H.cap = 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (tmpdir[0] && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

const char *harness_tmpdir(void)
{
	return tmpdir;
}

void harness_drain(void)
{
	assert_true(ring_buffer__consume(H.rb) >= 0);
}

const void *harness_next(size_t *pos, unsigned type, size_t *size)
{
	while (*pos < H.len) {
		size_t n;
		const struct tr_hdr *h = (const void *)(H.recs + *pos + sizeof(size_t));

		memcpy(&n, H.recs + *pos, sizeof(n));
		*pos += sizeof(size_t) + ((n + 7) & ~(size_t)7);
		assert_true(n >= sizeof(*h));
		assert_int_equal(h->version, RECORDS_VERSION);
		if (!type || h->type == type) {
			if (size)
				*size = n;
			return h;
		}
	}
	return NULL;
}

/* The process a record is about (0 for records about no process). */
static pid_t record_tgid(const struct tr_hdr *h)
{
	switch (h->type) {
	case TR_EXEC: return (pid_t)((const struct tr_exec *)h)->tgid;
	case TR_FORK: return (pid_t)((const struct tr_fork *)h)->child_tgid;
	case TR_EXIT: return (pid_t)((const struct tr_exit *)h)->tgid;
	case TR_SAMPLE: return (pid_t)((const struct tr_sample *)h)->tgid;
	case TR_FILE: return (pid_t)((const struct tr_file *)h)->tgid;
	case TR_OOM: return (pid_t)((const struct tr_oom *)h)->pid;
	default: return 0;
	}
}

const void *harness_find(unsigned type, pid_t tgid, size_t *size)
{
	size_t pos = 0;
	const struct tr_hdr *h;

	while ((h = harness_next(&pos, type, size)))
		if (record_tgid(h) == tgid)
			return h;
	return NULL;
}

unsigned harness_count(unsigned type, pid_t tgid)
{
	size_t pos = 0;
	unsigned n = 0;
	const struct tr_hdr *h;

	while ((h = harness_next(&pos, type, NULL)))
		n += record_tgid(h) == tgid;
	return n;
}

const void *harness_wait_for(unsigned type, pid_t tgid, int timeout_ms, size_t *size)
{
	const void *r;

	for (int i = 0; i <= timeout_ms / 10; i++) {
		harness_drain();
		r = harness_find(type, tgid, size);
		if (r)
			return r;
		usleep(10000);
	}
	return NULL;
}

bool harness_bytes_contain(const char *s)
{
	return memmem(H.recs, H.len, s, strlen(s)) != NULL;
}

pid_t harness_spawn(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

const struct tr_exit *harness_reap(pid_t pid)
{
	const struct tr_exit *e;
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("workload %d ended with status %#x", (int)pid, st);
	/* The exit record leaves at the child's final context switch, just after its parent's wakeup. */
	e = harness_wait_for(TR_EXIT, pid, 2000, NULL);
	if (!e)
		fail_msg("no exit record for workload %d", (int)pid);
	return e;
}

unsigned long long harness_ino(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		fail_msg("stat %s: %s", path, strerror(errno));
	return st.st_ino;
}

const char *harness_v2_root(void)
{
	if (access("/sys/fs/cgroup/unified/cgroup.procs", F_OK) == 0)
		return "/sys/fs/cgroup/unified"; /* hybrid */
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		return "/sys/fs/cgroup";
	return NULL;
}

bool harness_v1_memory(void)
{
	return access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0;
}

void harness_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}
