/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel programs on the real kernel, daemon mode (every process
 * traced, the built-in environment allowlist), sample interval 200 ms:
 * each test runs a real workload in child processes and checks the records
 * the programs wrote into the BPF ring buffer. Needs root; skips (77)
 * without it or without BTF.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/utsname.h>

#include "bpf_harness.h"
#include "skip.h"

#define INTERVAL_MS 200
#define SECRET "s3cr3t-value-that-must-never-leave-the-kernel"

static pid_t preexisting;  /* started before the programs were loaded, waiting on go_fd */
static int go_fd = -1;

/* ---- helpers ----------------------------------------------------------------- */

/* This process's cgroup path in the hierarchy named `which` ("" for v2, "memory" for v1), into out. */
static bool own_cgroup(const char *which, char *out, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "r");
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = 0;
		if (strcmp(a + 1, which) == 0) {
			b[strcspn(b + 1, "\n") + 1] = 0;
			snprintf(out, len, "%s", b + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* The TR_CGROUP record for (id, v1), or NULL. */
static const struct tr_cgroup *cgroup_record(uint64_t id, uint32_t v1, unsigned *count)
{
	const struct tr_cgroup *c, *first = NULL;
	size_t pos = 0, size;

	*count = 0;
	while ((c = harness_next(&pos, TR_CGROUP, &size))) {
		assert_int_equal(size, sizeof(*c) + c->path_len);
		assert_int_equal(((const char *)(c + 1))[c->path_len - 1], 0);
		if (c->id == id && c->v1 == v1) {
			(*count)++;
			first = first ? first : c;
		}
	}
	return first;
}

static void path_in_tmp(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", harness_tmpdir(), name);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void burn_ms(unsigned ms)
{
	uint64_t end = now_ns() + ms * 1000000ULL;

	while (now_ns() < end) /* vDSO: no syscall, no switch */
		;
}

/* The exec record of tgid with its variable parts located. */
struct exec_view {
	struct tr_exec e;
	const char *path, *argv, *cwd, *env;
};

static void view_exec(pid_t tgid, struct exec_view *v)
{
	size_t size;
	const struct tr_exec *e = harness_wait_for(TR_EXEC, tgid, 2000, &size);

	if (!e)
		fail_msg("no exec record for %d", (int)tgid);
	v->e = *e;
	assert_int_equal(size, sizeof(*e) + e->path_len + e->argv_len + e->cwd_len + e->env_len);
	v->path = (const char *)(e + 1);
	v->argv = v->path + e->path_len;
	v->cwd = v->argv + e->argv_len;
	v->env = v->cwd + e->cwd_len;
}

/* ---- exec ---------------------------------------------------------------------- */

static int exec_true_in(void *dir)
{
	static char a0[] = "/bin/true", a1[] = "first-arg";
	static char e0[] = "HOME=/nowhere", e1[] = "TRACER_RUN_ID=run-42", e2[] = "AWS_SECRET_ACCESS_KEY=" SECRET,
		    e3[] = "SLURM_JOB_ID=4242", e4[] = "TRACER_RUN_IDX=not-this", e5[] = "TRACER_RUN=nor-this",
		    e6[] = "PATH=/usr/bin";
	char *const argv[] = { a0, a1, NULL };
	char *const envp[] = { e0, e1, e2, e3, e4, e5, e6, NULL };

	if (chdir(dir))
		return 1;
	execve(a0, argv, envp);
	return 127;
}

/* cwd, namespaces, cgroups, argv and exactly the allowlisted environment strings. */
static void test_exec_record_has_context_and_only_allowlisted_env(void **state)
{
	static const char want_env[] = "TRACER_RUN_ID=run-42\0SLURM_JOB_ID=4242";
	char dir[PATH_MAX], real[PATH_MAX], cg[PATH_MAX], p[PATH_MAX + 64];
	struct exec_view v;
	const struct tr_cgroup *c;
	unsigned n;
	pid_t pid;

	(void)state;
	path_in_tmp(dir, sizeof(dir), "exec-here");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_non_null(realpath(dir, real));
	pid = harness_spawn(exec_true_in, dir);
	harness_reap(pid);
	view_exec(pid, &v);

	assert_string_equal(v.path, "/bin/true");
	assert_int_equal(v.e.argv_len, sizeof("/bin/true\0first-arg"));
	assert_memory_equal(v.argv, "/bin/true\0first-arg", v.e.argv_len);
	assert_string_equal(v.cwd, real);
	assert_int_equal(v.e.cwd_len, strlen(real) + 1);
	assert_int_equal(v.e.env_len, sizeof(want_env));
	assert_memory_equal(v.env, want_env, sizeof(want_env));
	assert_false(v.e.flags & (TR_EXEC_ENV_TRUNCATED | TR_EXEC_CWD_TRUNCATED | TR_EXEC_EXCLUDED));
	assert_string_equal(v.e.comm, "true");
	assert_int_equal(v.e.ppid, getpid());
	assert_int_equal(v.e.mnt_ns, harness_ino("/proc/self/ns/mnt"));
	assert_int_equal(v.e.pid_ns, harness_ino("/proc/self/ns/pid"));

	if (harness_v2_root()) {
		assert_true(own_cgroup("", cg, sizeof(cg)));
		snprintf(p, sizeof(p), "%s%s", harness_v2_root(), cg);
		assert_int_equal(v.e.cgroup_id, harness_ino(p));
		c = cgroup_record(v.e.cgroup_id, 0, &n);
		assert_non_null(c);
		assert_int_equal(n, 1); /* deduplicated in the kernel: many execs named it */
		assert_string_equal((const char *)(c + 1), cg);
	}
	if (harness_v1_memory()) {
		assert_true(own_cgroup("memory", cg, sizeof(cg)));
		snprintf(p, sizeof(p), "/sys/fs/cgroup/memory%s", cg);
		assert_int_equal(v.e.cgroup_v1_id, harness_ino(p));
		c = cgroup_record(v.e.cgroup_v1_id, 1, &n);
		assert_non_null(c);
		assert_int_equal(n, 1);
		assert_string_equal((const char *)(c + 1), cg);
	} else {
		assert_int_equal(v.e.cgroup_v1_id, 0);
	}
	/* Nothing else of the environment left the kernel, in any record. */
	harness_drain();
	assert_false(harness_bytes_contain(SECRET));
	assert_false(harness_bytes_contain("not-this"));
	assert_false(harness_bytes_contain("nor-this"));
}

/* In a mount namespace of its own, under a tmpfs mounted there: the path crosses the mount. */
static int exec_under_mount(void *dir)
{
	char sub[PATH_MAX];

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
		return 1;
	snprintf(sub, sizeof(sub), "%s/inside", (const char *)dir);
	if (mkdir(sub, 0755))
		return 2;
	return exec_true_in(sub);
}

static void test_exec_cwd_crosses_mounts(void **state)
{
	char dir[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 16];
	struct exec_view v;
	pid_t pid;

	(void)state;
	path_in_tmp(dir, sizeof(dir), "mnt");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_non_null(realpath(dir, real));
	pid = harness_spawn(exec_under_mount, dir);
	harness_reap(pid);
	view_exec(pid, &v);
	snprintf(want, sizeof(want), "%s/inside", real);
	assert_string_equal(v.cwd, want);
	assert_int_not_equal(v.e.mnt_ns, harness_ino("/proc/self/ns/mnt"));
}

/* A directory deeper than TR_CWD_MAX: the record keeps its tail and says the head is missing. */
static void test_exec_cwd_too_long_keeps_tail(void **state)
{
	char dir[8192], name[201];
	struct exec_view v;
	size_t n;
	pid_t pid;

	(void)state;
	memset(name, 'd', 200);
	name[200] = 0;
	path_in_tmp(dir, sizeof(dir), "deep");
	assert_int_equal(mkdir(dir, 0755), 0);
	for (int i = 0; i < 7; i++) { /* 7 x 201 bytes: past 1024 */
		name[0] = (char)('0' + i);
		n = strlen(dir);
		snprintf(dir + n, sizeof(dir) - n, "/%s", name);
		assert_int_equal(mkdir(dir, 0755), 0);
	}
	pid = harness_spawn(exec_true_in, dir);
	harness_reap(pid);
	view_exec(pid, &v);
	assert_true(v.e.flags & TR_EXEC_CWD_TRUNCATED);
	assert_true(v.e.cwd_len <= TR_CWD_MAX);
	assert_int_equal(v.cwd[0], '/');
	n = strlen(v.cwd);
	assert_true(n >= 4 * 201);
	assert_string_equal(v.cwd, dir + strlen(dir) - n); /* a tail of the real path, at a component */
}

static int exec_with_env(void *envp)
{
	static char a0[] = "/bin/true";
	char *const argv[] = { a0, NULL };

	execve(a0, argv, envp);
	return 127;
}

/* The scan's bounds: strings, bytes kept, and a huge unlisted value skipped correctly. */
static void test_exec_env_scan_is_bounded(void **state)
{
	static char big[10000], v600a[620], v600b[620], late[] = "TRACER_STEP=late", after[] = "TRACER_STEP=after-big";
	static char many[300][16];
	char *envp[310];
	struct exec_view v;
	pid_t pid;
	int n = 0;

	(void)state;
	/* 1: a 10 KB unlisted string (read in pieces), then an allowlisted one: kept, nothing truncated. */
	snprintf(big, sizeof(big), "BIG=");
	memset(big + 4, 'x', sizeof(big) - 5);
	envp[0] = big;
	envp[1] = after;
	envp[2] = NULL;
	pid = harness_spawn(exec_with_env, envp);
	harness_reap(pid);
	view_exec(pid, &v);
	assert_int_equal(v.e.env_len, sizeof(after));
	assert_string_equal(v.env, after);
	assert_false(v.e.flags & TR_EXEC_ENV_TRUNCATED);

	/* 2: more than 256 strings: the scan stops, says so, and the late key is not reached. */
	for (n = 0; n < 300; n++) {
		snprintf(many[n], sizeof(many[n]), "V%d=x", n);
		envp[n] = many[n];
	}
	envp[n++] = late;
	envp[n] = NULL;
	pid = harness_spawn(exec_with_env, envp);
	harness_reap(pid);
	view_exec(pid, &v);
	assert_true(v.e.flags & TR_EXEC_ENV_TRUNCATED);
	assert_int_equal(v.e.env_len, 0);

	/* 3: allowlisted values beyond TR_ENV_MAX in all: the first kept, the second dropped. */
	snprintf(v600a, sizeof(v600a), "TRACER_RUN_ID=");
	memset(v600a + 14, 'a', 600);
	snprintf(v600b, sizeof(v600b), "TRACER_PIPELINE=");
	memset(v600b + 16, 'b', 600);
	envp[0] = v600a;
	envp[1] = v600b;
	envp[2] = NULL;
	pid = harness_spawn(exec_with_env, envp);
	harness_reap(pid);
	view_exec(pid, &v);
	assert_true(v.e.flags & TR_EXEC_ENV_TRUNCATED);
	assert_int_equal(v.e.env_len, strlen(v600a) + 1);
	assert_string_equal(v.env, v600a);
}

/* ---- files --------------------------------------------------------------------- */

static int open_files(void *dir)
{
	struct open_how how = { .flags = O_RDONLY };
	int fd;

	if (chdir(dir))
		return 1;
	for (int i = 0; i < 2; i++) { /* twice: reported once */
		if ((fd = open("r.txt", O_RDONLY)) < 0)
			return 2;
		close(fd);
	}
	if ((fd = open("w.txt", O_WRONLY | O_CREAT, 0644)) < 0)
		return 3;
	close(fd);
	if ((fd = open("rw.txt", O_RDWR | O_CREAT, 0644)) < 0)
		return 4;
	close(fd);
	if ((fd = (int)syscall(SYS_creat, "c.txt", 0644)) < 0)
		return 5;
	close(fd);
	if ((fd = (int)syscall(SYS_open, "o.txt", O_RDONLY)) < 0)
		return 6;
	close(fd);
	if ((fd = (int)syscall(SYS_openat2, AT_FDCWD, "o2.txt", &how, sizeof(how))) < 0)
		return 7;
	close(fd);
	/* Not regular files: not reported. */
	if ((fd = open(".", O_RDONLY | O_DIRECTORY)) < 0)
		return 8;
	close(fd);
	if ((fd = open("/dev/null", O_WRONLY)) < 0)
		return 9;
	close(fd);
	if ((fd = open("r.txt", O_PATH)) < 0)
		return 10;
	close(fd);
	return 0;
}

static void expect_file(pid_t pid, const char *dir, const char *name, unsigned mode)
{
	char want[PATH_MAX + 64];
	const struct tr_file *f;
	size_t pos = 0, size;
	unsigned n = 0;

	snprintf(want, sizeof(want), "%s/%s", dir, name);
	while ((f = harness_next(&pos, TR_FILE, &size))) {
		if ((pid_t)f->tgid != pid || strcmp((const char *)(f + 1), want))
			continue;
		assert_int_equal(size, sizeof(*f) + f->path_len);
		assert_int_equal(f->path_len, strlen(want) + 1);
		if (f->mode != mode)
			fail_msg("%s: mode %#x, expected %#x", want, f->mode, mode);
		n++;
	}
	if (n != 1)
		fail_msg("%s: %u file records, expected 1", want, n);
}

static void test_files_opened_once_per_mode_regular_only(void **state)
{
	char dir[PATH_MAX], real[PATH_MAX], p[PATH_MAX + 16];
	const struct tr_exit *e;
	pid_t pid;

	(void)state;
	path_in_tmp(dir, sizeof(dir), "files");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_non_null(realpath(dir, real));
	for (const char *const *n = (const char *const[]){ "r.txt", "o.txt", "o2.txt", NULL }; *n; n++) {
		snprintf(p, sizeof(p), "%s/%s", dir, *n);
		harness_write_file(p, "data");
	}
	pid = harness_spawn(open_files, dir);
	e = harness_reap(pid);
	assert_int_equal(e->files_dropped, 0);
	expect_file(pid, real, "r.txt", TR_FILE_READ);
	expect_file(pid, real, "w.txt", TR_FILE_WRITE);
	expect_file(pid, real, "rw.txt", TR_FILE_READ | TR_FILE_WRITE);
	expect_file(pid, real, "c.txt", TR_FILE_WRITE);
	expect_file(pid, real, "o.txt", TR_FILE_READ);
	expect_file(pid, real, "o2.txt", TR_FILE_READ);
	assert_int_equal(harness_count(TR_FILE, pid), 6); /* not the directory, /dev/null, O_PATH */
}

/* File records of pid whose path is want. */
static unsigned file_records(pid_t pid, const char *want)
{
	const struct tr_file *f;
	size_t pos = 0, size;
	unsigned n = 0;

	while ((f = harness_next(&pos, TR_FILE, &size)))
		n += (pid_t)f->tgid == pid && !strcmp((const char *)(f + 1), want);
	return n;
}

/* The loader's opens are recognised from 5.15 (bpf_task_pt_regs()); before, every open is reported. */
static bool loader_opens_recognised(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 5 || (major == 5 && minor >= 15);
}

/* /bin/cat on a data file, with an empty environment: ld.so opens ld.so.cache and libc, cat the file. */
static int exec_cat(void *path)
{
	char a0[] = "cat";
	char *const argv[] = { a0, path, NULL };
	char *const envp[] = { NULL };
	int null = open("/dev/null", O_WRONLY);

	if (null < 0 || dup2(null, 1) < 0)
		return 1;
	execve("/bin/cat", argv, envp);
	return 127;
}

static void test_files_loader_opens_left_out_program_opens_reported(void **state)
{
	char dir[PATH_MAX], real[PATH_MAX], data[PATH_MAX + 16];
	const struct tr_file *f;
	size_t pos = 0, size;
	pid_t pid;

	(void)state;
	if (!loader_opens_recognised())
		TEST_SKIP("the kernel is older than 5.15 (no bpf_task_pt_regs()): every open is reported there");
	path_in_tmp(dir, sizeof(dir), "loader");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_non_null(realpath(dir, real));
	snprintf(data, sizeof(data), "%s/data.txt", real);
	harness_write_file(data, "data");
	pid = harness_spawn(exec_cat, data);
	harness_reap(pid);
	expect_file(pid, real, "data.txt", TR_FILE_READ);
	/* Not ld.so.cache, not libc.so.6: what the loader opened to map. */
	while ((f = harness_next(&pos, TR_FILE, &size)))
		if ((pid_t)f->tgid == pid && strcmp((const char *)(f + 1), data))
			fail_msg("the loader's open of %s was reported", (const char *)(f + 1));
	assert_int_equal(harness_count(TR_FILE, pid), 1);
}

/* A shared library this test is linked with (libz), for copies that no process has loaded. */
static int find_libz(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	if (!strstr(info->dlpi_name, "/libz.so"))
		return 0;
	snprintf(out, PATH_MAX, "%s", info->dlpi_name);
	return 1;
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	if (in < 0 || out < 0)
		fail_msg("copy %s to %s: %s", from, to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

/* dlopen() one copy (ld.so opens it), open() the other for reading as ld.so would (the program opens it). */
static int dlopen_and_open(void *dir)
{
	char a[PATH_MAX + 16], b[PATH_MAX + 16];
	int fd;

	snprintf(a, sizeof(a), "%s/dl-a.so", (const char *)dir);
	snprintf(b, sizeof(b), "%s/dl-b.so", (const char *)dir);
	if (!dlopen(a, RTLD_NOW | RTLD_LOCAL))
		return 1;
	if ((fd = open(b, O_RDONLY | O_CLOEXEC)) < 0)
		return 2;
	close(fd);
	return 0;
}

static void test_files_dlopen_left_out_library_opened_by_program_reported(void **state)
{
	char dir[PATH_MAX], real[PATH_MAX], libz[PATH_MAX] = "", p[PATH_MAX + 16];
	pid_t pid;

	(void)state;
	if (!loader_opens_recognised())
		TEST_SKIP("the kernel is older than 5.15 (no bpf_task_pt_regs()): every open is reported there");
	assert_int_equal(dl_iterate_phdr(find_libz, libz), 1);
	path_in_tmp(dir, sizeof(dir), "dlopen");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_non_null(realpath(dir, real));
	snprintf(p, sizeof(p), "%s/dl-a.so", real);
	copy_file(libz, p);
	snprintf(p, sizeof(p), "%s/dl-b.so", real);
	copy_file(libz, p);
	pid = harness_spawn(dlopen_and_open, real);
	harness_reap(pid);
	snprintf(p, sizeof(p), "%s/dl-a.so", real);
	assert_int_equal(file_records(pid, p), 0);
	expect_file(pid, real, "dl-b.so", TR_FILE_READ);
}

/*
 * Write a file, delete it, create another: the file system hands the new
 * file the freed inode number (ext4 does, at once). Writes "same" into
 * result when it did.
 */
static int replace_file(void *dir)
{
	char f1[PATH_MAX + 16], f2[PATH_MAX + 16], res[PATH_MAX + 16];
	struct stat a, b;
	int fd;

	snprintf(f1, sizeof(f1), "%s/first", (const char *)dir);
	snprintf(f2, sizeof(f2), "%s/second", (const char *)dir);
	snprintf(res, sizeof(res), "%s/result", (const char *)dir);
	if ((fd = open(f1, O_WRONLY | O_CREAT, 0644)) < 0 || fstat(fd, &a))
		return 1;
	close(fd);
	if (unlink(f1))
		return 2;
	if ((fd = open(f2, O_WRONLY | O_CREAT, 0644)) < 0 || fstat(fd, &b))
		return 3;
	close(fd);
	if ((fd = open(res, O_WRONLY | O_CREAT, 0644)) < 0 ||
	    write(fd, a.st_ino == b.st_ino ? "same" : "diff", 4) != 4)
		return 4;
	close(fd);
	return 0;
}

static void test_files_new_file_with_reused_inode_number_reported(void **state)
{
	char dir[PATH_MAX], real[PATH_MAX], res[PATH_MAX + 16], got[8] = "";
	pid_t pid;
	int fd;

	(void)state;
	path_in_tmp(dir, sizeof(dir), "reuse");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_non_null(realpath(dir, real));
	pid = harness_spawn(replace_file, real);
	harness_reap(pid);
	snprintf(res, sizeof(res), "%s/result", real);
	fd = open(res, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, 4), 4);
	close(fd);
	expect_file(pid, real, "first", TR_FILE_WRITE);
	if (strcmp(got, "same")) {
		fprintf(stderr, "(%s's file system gave the new file a new inode number: nothing more to prove)\n", real);
		return;
	}
	expect_file(pid, real, "second", TR_FILE_WRITE);
}

#define MANY_FILES 1100

static int open_many(void *dir)
{
	char p[PATH_MAX];

	for (int i = 0; i < MANY_FILES; i++) {
		int fd;

		snprintf(p, sizeof(p), "%s/f%d", (const char *)dir, i);
		if ((fd = open(p, O_RDONLY)) < 0)
			return 1;
		close(fd);
	}
	return 0;
}

static void test_files_bounded_per_process_and_drops_counted(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX + 16];
	const struct tr_exit *e;
	pid_t pid;

	(void)state;
	path_in_tmp(dir, sizeof(dir), "many");
	assert_int_equal(mkdir(dir, 0755), 0);
	for (int i = 0; i < MANY_FILES; i++) {
		snprintf(p, sizeof(p), "%s/f%d", dir, i);
		harness_write_file(p, "");
	}
	pid = harness_spawn(open_many, dir);
	e = harness_reap(pid);
	assert_int_equal(e->files_dropped, MANY_FILES - 1024);
	assert_int_equal(harness_count(TR_FILE, pid), 1024);
}

/* ---- network ------------------------------------------------------------------- */

#define NET_BYTES (8u << 20)

static int tcp_server(void *arg)
{
	int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL);
	static char buf[65536];
	size_t total = 0;
	ssize_t n;

	if (fd < 0)
		return 1;
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		total += (size_t)n;
	return total == NET_BYTES ? 0 : 2;
}

static int tcp_client(void *arg)
{
	struct sockaddr_in *a = arg;
	static char buf[65536];
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t sent = 0;

	if (fd < 0 || connect(fd, (struct sockaddr *)a, sizeof(*a)))
		return 1;
	while (sent < NET_BYTES) {
		ssize_t n = send(fd, buf, sizeof(buf) < NET_BYTES - sent ? sizeof(buf) : NET_BYTES - sent, 0);

		if (n <= 0)
			return 2;
		sent += (size_t)n;
	}
	close(fd);
	return 0;
}

static void test_net_bytes_and_waits_over_loopback_tcp(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct tr_exit srv, cli;
	pid_t s, c;

	(void)state;
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	s = harness_spawn(tcp_server, &lfd);
	usleep(100000); /* the server waits in accept(): net_wait_ns */
	c = harness_spawn(tcp_client, &a);
	cli = *harness_reap(c);
	srv = *harness_reap(s);
	close(lfd);
	/* Loopback TCP: every byte written is read; the sock tracepoints see exactly the payload. */
	assert_int_equal(cli.net_tx_bytes, NET_BYTES);
	assert_int_equal(srv.net_rx_bytes, NET_BYTES);
	assert_int_equal(cli.net_rx_bytes, 0);
	assert_int_equal(srv.net_tx_bytes, 0);
	assert_true(srv.net_wait_ns >= 80000000ULL); /* at least the 100 ms in accept() */
	assert_true(cli.net_wait_ns > 0);
	assert_int_equal(srv.state_flags, TR_PSTATE_TRACED);
}

/* ---- waits and samples ----------------------------------------------------------- */

static int read_fifo(void *path)
{
	char c;
	int fd = open(path, O_RDONLY); /* blocks until the writer comes */

	return fd >= 0 && read(fd, &c, 1) == 1 ? 0 : 1;
}

/* The state letter of /proc/PID/stat ('S', 'R', ...), or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* after the command name, which may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Samples of tgid timed in [from_ns, to_ns). */
static unsigned samples_between(pid_t tgid, uint64_t from_ns, uint64_t to_ns)
{
	const struct tr_sample *s;
	unsigned n = 0;
	size_t pos = 0, size;

	while ((s = harness_next(&pos, TR_SAMPLE, &size)))
		if (s->tgid == (uint32_t)tgid && s->hdr.ts_ns >= from_ns && s->hdr.ts_ns < to_ns)
			n++;
	return n;
}

/*
 * Idle processes cost nothing: a process blocked on an empty FIFO sends no
 * sample while it sleeps. (Before it blocks it may have waited a whole
 * interval for a CPU on a loaded machine, and is then sampled as it goes
 * to sleep: only the blocked time is asserted on.)
 */
static void test_blocked_process_sends_no_samples(void **state)
{
	char fifo[PATH_MAX];
	const struct tr_exit *e;
	uint64_t asleep_ns, woken_ns;
	pid_t pid;
	int fd, i;

	(void)state;
	path_in_tmp(fifo, sizeof(fifo), "fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid = harness_spawn(read_fifo, fifo);
	for (i = 0; i < 1000 && proc_state(pid) != 'S'; i++)
		usleep(10000);
	assert_int_equal(proc_state(pid), 'S');
	asleep_ns = now_ns();
	usleep(7 * INTERVAL_MS * 1000);
	woken_ns = now_ns();
	fd = open(fifo, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	e = harness_reap(pid);
	assert_int_equal(samples_between(pid, asleep_ns, woken_ns), 0);
	/* An interruptible sleep is neither I/O wait nor blocked. */
	assert_int_equal(e->iowait_ns, 0);
	assert_int_equal(e->blocked_ns, 0);
}

static int burn(void *arg)
{
	burn_ms(*(unsigned *)arg);
	return 0;
}

/*
 * A thread that never leaves its CPU is sampled by the per-CPU timer. To
 * see that alone, the sched_switch program is detached meanwhile (the
 * burner's own exit record, parked for its final switch, is then never
 * sent: the test does not need it).
 */
static void test_cpu_bound_process_sampled_by_timer(void **state)
{
	struct tracer_bpf *skel = H.bpf.skel;
	const struct tr_sample *s;
	uint64_t last_runtime = 0, last_ts = 0, start = 0, cpu_ns;
	unsigned ms = 1200, n = 0, want_min;
	size_t pos = 0, size;
	struct rusage ru;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(bpf_link__destroy(skel->links.handle_switch), 0);
	skel->links.handle_switch = NULL;
	pid = harness_spawn(burn, &ms);
	assert_int_equal(wait4(pid, &st, 0, &ru), pid);
	/* The burner runs 1.2 s of wall time; its CPU share depends on what else the machine runs. */
	cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
		 (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	skel->links.handle_switch = bpf_program__attach(skel->progs.handle_switch);
	assert_non_null(skel->links.handle_switch);
	harness_drain();
	while ((s = harness_next(&pos, TR_SAMPLE, &size))) {
		if ((pid_t)s->tgid != pid)
			continue;
		assert_int_equal(size, sizeof(*s));
		assert_true(s->runtime_ns > last_runtime);
		/* 15/16 of the interval, on a tick-granular clock: allow a tick or two more. */
		assert_true(s->hdr.ts_ns - last_ts >= (uint64_t)INTERVAL_MS * 1000000 * 14 / 16);
		assert_true(s->rss_bytes > 0);
		assert_true(s->hiwater_rss_bytes >= s->rss_bytes);
		assert_int_equal(s->nr_threads, 1);
		assert_int_equal(s->state_flags, TR_PSTATE_TRACED);
		assert_int_equal(s->uid, 0);
		assert_int_equal(s->ppid, getpid());
		assert_true(!start || s->start_ns == start);
		start = s->start_ns;
		last_runtime = s->runtime_ns;
		last_ts = s->hdr.ts_ns;
		n++;
	}
	/*
	 * One sample per 200 ms of its life while on a CPU, the first 200 ms
	 * after birth: on an idle machine 1.2 s of CPU gives 5 or 6. Under
	 * load, at least one per 200 ms of the CPU it got, less the first and
	 * a tick's worth; never more than its wall time allows.
	 */
	want_min = (unsigned)(cpu_ns / (INTERVAL_MS * 1000000ULL));
	want_min = want_min > 3 ? want_min - 2 : 1;
	if (n < want_min || n > 7)
		fail_msg("%u samples of a 1.2 s CPU burner at %d ms (it ran %llu ms on a CPU: want %u..7)", n,
			 INTERVAL_MS, (unsigned long long)(cpu_ns / 1000000), want_min);
	/* The last sample is at most an interval (and a tick) before its end. */
	assert_true(last_runtime <= cpu_ns);
	assert_true(last_runtime + 2ULL * INTERVAL_MS * 1000000 >= cpu_ns);
}

static int vfork_waits(void *arg)
{
	(void)arg;
	/* The parent sleeps uninterruptibly (TASK_KILLABLE) until the child exits: blocked, not I/O. */
	pid_t pid = vfork();

	if (pid == 0) {
		usleep(300000);
		_exit(0);
	}
	return pid > 0 && waitpid(pid, NULL, 0) == pid ? 0 : 1;
}

static int write_and_fsync(void *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	memset(buf, 'w', sizeof(buf));
	for (int i = 0; i < 32; i++)
		if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	return fsync(fd) || close(fd) ? 2 : 0;
}

static void test_uninterruptible_sleep_split_into_iowait_and_blocked(void **state)
{
	char file[PATH_MAX];
	const struct tr_exit *e;

	(void)state;
	e = harness_reap(harness_spawn(vfork_waits, NULL));
	assert_true(e->blocked_ns >= 250000000ULL);
	assert_true(e->blocked_ns < 2000000000ULL);
	assert_true(e->iowait_ns < 50000000ULL);

	path_in_tmp(file, sizeof(file), "fsync.dat");
	e = harness_reap(harness_spawn(write_and_fsync, file));
	assert_true(e->iowait_ns > 0); /* writeback waits are io_schedule(): in_iowait */
}

/* ---- run-queue wait: every thread's ------------------------------------------------ */

#define RQ_WORKERS 3
#define RQ_SPINNERS 4
#define RQ_WORKER_CPU_MS 150

/* Shared with the workload (MAP_SHARED): each thread's own run delay just before it ended. */
struct rq_shared {
	int cpu;                           /* the contended CPU: workers and spinners */
	int main_cpu;                      /* the main thread's */
	uint64_t worker_delay_ns[RQ_WORKERS];
	uint64_t main_delay_ns;
	uint64_t workers_done_ns;          /* when the last worker was joined (CLOCK_MONOTONIC) */
};

/* This thread's sched_info.run_delay, as /proc/thread-self/schedstat shows it (its second field). */
static uint64_t own_run_delay_ns(void)
{
	unsigned long long run = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n = f ? fscanf(f, "%llu %llu", &run, &delay) : 0;

	if (f)
		fclose(f);
	return n == 2 ? delay : 0;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) /* 0: the calling thread */
		_exit(90);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct rq_worker {
	struct rq_shared *sh;
	int i;
};

/* On the contended CPU until it has had RQ_WORKER_CPU_MS of it; then its own run delay, and it ends. */
static void *rq_worker(void *arg)
{
	struct rq_worker *w = arg;
	uint64_t end;

	pin_to(w->sh->cpu);
	end = thread_cpu_ns() + RQ_WORKER_CPU_MS * 1000000ULL;
	while (thread_cpu_ns() < end)
		;
	w->sh->worker_delay_ns[w->i] = own_run_delay_ns();
	return NULL;
}

/* Until killed. */
static int spin_on(void *arg)
{
	volatile int forever = 1;

	pin_to(*(int *)arg);
	while (forever)
		;
	return 0;
}

/*
 * RQ_WORKERS threads queue on one CPU behind RQ_SPINNERS spinning
 * processes and end; the main thread, on another CPU, runs on for two
 * sample intervals (sampled meanwhile), then ends the process.
 */
static int rq_workload(void *arg)
{
	struct rq_shared *sh = arg;
	struct rq_worker w[RQ_WORKERS];
	pthread_t t[RQ_WORKERS];

	pin_to(sh->main_cpu);
	for (int i = 0; i < RQ_WORKERS; i++) {
		w[i] = (struct rq_worker){ sh, i };
		if (pthread_create(&t[i], NULL, rq_worker, &w[i]))
			return 1;
	}
	for (int i = 0; i < RQ_WORKERS; i++)
		if (pthread_join(t[i], NULL))
			return 2;
	sh->workers_done_ns = now_ns();
	burn_ms(2 * INTERVAL_MS + INTERVAL_MS / 2);
	sh->main_delay_ns = own_run_delay_ns();
	return 0;
}

/*
 * The exit record's run_delay_ns is every thread's: the workers' (ended
 * before the process) and the last thread's own, each as the thread read
 * its own /proc/thread-self/schedstat just before it ended (within 10%:
 * a thread can still wait a little between its read and its exit). A
 * sample after the workers ended counts them too.
 */
static void test_run_delay_counts_threads_that_ended_before_the_process(void **state)
{
	struct rq_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t spinners[RQ_SPINNERS], pid;
	const struct tr_sample *s, *last = NULL;
	uint64_t want, got, workers = 0;
	struct tr_exit e;
	size_t pos = 0;

	(void)state;
	assert_true(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	sh->cpu = ncpu > 1 ? (int)ncpu - 1 : 0;
	sh->main_cpu = 0;
	for (int i = 0; i < RQ_SPINNERS; i++)
		spinners[i] = harness_spawn(spin_on, &sh->cpu);
	pid = harness_spawn(rq_workload, sh);
	e = *harness_reap(pid);
	for (int i = 0; i < RQ_SPINNERS; i++) {
		kill(spinners[i], SIGKILL);
		waitpid(spinners[i], NULL, 0);
	}
	for (int i = 0; i < RQ_WORKERS; i++) {
		assert_true(sh->worker_delay_ns[i] > 0); /* they did queue */
		workers += sh->worker_delay_ns[i];
	}
	want = workers + sh->main_delay_ns;
	got = e.run_delay_ns;
	assert_int_equal(e.flags & TR_EXIT_NO_SCHED_INFO, 0);
	if (got < want - want / 10 || got > want + want / 10)
		fail_msg("exit run_delay_ns %llu, the threads' own sum %llu (workers %llu, main %llu): not within 10%%",
			 (unsigned long long)got, (unsigned long long)want, (unsigned long long)workers,
			 (unsigned long long)sh->main_delay_ns);
	/* The newest sample taken after the workers ended: the process's wait so far, theirs included. */
	while ((s = harness_next(&pos, TR_SAMPLE, NULL)))
		if ((pid_t)s->tgid == pid && s->hdr.ts_ns > sh->workers_done_ns)
			last = s;
	assert_non_null(last);
	assert_int_equal(last->nr_threads, 1);
	if (last->run_delay_ns < workers - workers / 10 || last->run_delay_ns > got)
		fail_msg("sample run_delay_ns %llu after the workers ended: want %llu (theirs) .. %llu (the exit's)",
			 (unsigned long long)last->run_delay_ns, (unsigned long long)workers, (unsigned long long)got);
	munmap(sh, sizeof(*sh));
}

/* ---- direct reclaim -------------------------------------------------------------- */

#define RECLAIM_FILE_MIB 128

/* Join the memory cgroup dir, then read the file twice: its page cache is charged to the cgroup. */
struct reclaim_arg {
	char dir[PATH_MAX + 64];
	char file[PATH_MAX];
};

static int read_under_limit(void *arg)
{
	struct reclaim_arg *a = arg;
	char p[PATH_MAX + 128], pid[32];
	static char buf[1 << 20];
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.procs", a->dir);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		return 1;
	close(fd);
	for (int pass = 0; pass < 2; pass++) {
		ssize_t n;

		fd = open(a->file, O_RDONLY);
		if (fd < 0)
			return 2;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		close(fd);
		if (n < 0)
			return 3;
	}
	return 0;
}

/* A file of RECLAIM_FILE_MIB, written and then dropped from the page cache: reading it charges it again. */
static void make_cold_file(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	memset(buf, 'r', sizeof(buf));
	for (int i = 0; i < RECLAIM_FILE_MIB; i++)
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(fdatasync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
}

/*
 * A process that reads 2 x 128 MiB of file through a 32 MiB memory
 * cgroup spends time in the cgroup's limit reclaim: reclaim_ns > 0, in its
 * exit record and measured; one without memory pressure has none.
 */
static void test_reclaim_time_of_a_process_under_a_memory_limit(void **state)
{
	struct reclaim_arg a;
	char p[PATH_MAX + 128];
	bool v1 = harness_v1_memory();
	const struct tr_sample *s;
	struct tr_exit e;
	unsigned burn_for = 20;
	size_t pos = 0;
	pid_t pid;

	(void)state;
	if (!v1 && !(harness_v2_root() && access("/sys/fs/cgroup/cgroup.subtree_control", F_OK) == 0))
		TEST_SKIP("no memory controller to limit a reader (v1 memory, or v2 mounted at /sys/fs/cgroup)");
	path_in_tmp(a.file, sizeof(a.file), "reclaim.dat");
	make_cold_file(a.file);
	snprintf(a.dir, sizeof(a.dir), "%s/tracer-bpf-reclaim.%d", v1 ? "/sys/fs/cgroup/memory" : harness_v2_root(),
		 (int)getpid());
	assert_int_equal(mkdir(a.dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/%s", a.dir, v1 ? "memory.limit_in_bytes" : "memory.max");
	harness_write_file(p, "33554432");
	pid = harness_spawn(read_under_limit, &a);
	e = *harness_reap(pid);
	assert_int_equal(rmdir(a.dir), 0);
	unlink(a.file);
	assert_int_equal(e.flags & TR_EXIT_NO_RECLAIM, 0);
	if (e.reclaim_ns == 0)
		fail_msg("a reader of %d MiB under a 32 MiB memory limit spent no time in reclaim", 2 * RECLAIM_FILE_MIB);
	assert_true(e.reclaim_ns < 60000000000ULL);
	while ((s = harness_next(&pos, TR_SAMPLE, NULL)))
		if ((pid_t)s->tgid == pid) {
			assert_int_equal(s->flags & TR_EXIT_NO_RECLAIM, 0);
			assert_true(s->reclaim_ns <= e.reclaim_ns);
		}

	e = *harness_reap(harness_spawn(burn, &burn_for));
	assert_int_equal(e.flags & TR_EXIT_NO_RECLAIM, 0);
	assert_int_equal(e.reclaim_ns, 0);
}

/* ---- a process that was running before the programs were loaded ------------------ */

static void test_preexisting_process_marked_and_sampled(void **state)
{
	const struct tr_exit *e;
	const struct tr_sample *s;

	(void)state;
	assert_int_equal(write(go_fd, "g", 1), 1);
	close(go_fd);
	e = harness_reap(preexisting);
	assert_int_equal(e->state_flags, TR_PSTATE_TRACED | TR_PSTATE_PREEXISTING);
	s = harness_find(TR_SAMPLE, preexisting, NULL);
	assert_non_null(s); /* sampled at its first switch out: no fork seen, no interval started */
	assert_int_equal(s->state_flags, TR_PSTATE_TRACED | TR_PSTATE_PREEXISTING);
	assert_null(harness_find(TR_EXEC, preexisting, NULL));
	assert_null(harness_find(TR_FORK, preexisting, NULL));
}

/* ---- cgroups ------------------------------------------------------------------------ */

static const char docker_id[] = "4f0a1c2b3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";

struct cg_pair {
	char v2[PATH_MAX + 256], v1[PATH_MAX + 256];
};

static int join_and_exec(void *arg)
{
	struct cg_pair *cg = arg;
	char p[PATH_MAX + 512], pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	for (int i = 0; i < 2; i++) {
		const char *dir = i ? cg->v1 : cg->v2;
		int fd;

		if (!dir[0])
			continue;
		snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
		fd = open(p, O_WRONLY);
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
			return 1;
		close(fd);
	}
	static char root[] = "/";

	return exec_true_in(root);
}

/* A process in cgroups named like a Docker container's: the paths, once each, on v2 and v1. */
static void test_cgroup_paths_of_a_docker_named_container(void **state)
{
	struct cg_pair cg = { { 0 }, { 0 } };
	char want2[256], want1[256];
	const struct tr_cgroup *c;
	struct exec_view v;
	unsigned n;
	pid_t pid;

	(void)state;
	if (!harness_v2_root() && !harness_v1_memory())
		TEST_SKIP("no cgroup v2 hierarchy and no v1 memory hierarchy to make the container's cgroups in");
	if (harness_v2_root()) {
		snprintf(want2, sizeof(want2), "/system.slice/docker-%s.scope", docker_id);
		snprintf(cg.v2, sizeof(cg.v2), "%s/system.slice", harness_v2_root());
		mkdir(cg.v2, 0755);
		snprintf(cg.v2, sizeof(cg.v2), "%s%s", harness_v2_root(), want2);
		assert_int_equal(mkdir(cg.v2, 0755), 0);
	}
	if (harness_v1_memory()) {
		snprintf(want1, sizeof(want1), "/docker/%s", docker_id);
		mkdir("/sys/fs/cgroup/memory/docker", 0755);
		snprintf(cg.v1, sizeof(cg.v1), "/sys/fs/cgroup/memory%s", want1);
		assert_int_equal(mkdir(cg.v1, 0755), 0);
	}
	pid = harness_spawn(join_and_exec, &cg);
	harness_reap(pid);
	view_exec(pid, &v);
	if (cg.v2[0]) {
		assert_int_equal(v.e.cgroup_id, harness_ino(cg.v2));
		c = cgroup_record(v.e.cgroup_id, 0, &n);
		assert_non_null(c);
		assert_int_equal(n, 1);
		assert_int_equal(c->flags, 0);
		assert_string_equal((const char *)(c + 1), want2);
		assert_int_equal(rmdir(cg.v2), 0);
	}
	if (cg.v1[0]) {
		assert_int_equal(v.e.cgroup_v1_id, harness_ino(cg.v1));
		c = cgroup_record(v.e.cgroup_v1_id, 1, &n);
		assert_non_null(c);
		assert_int_equal(n, 1);
		assert_string_equal((const char *)(c + 1), want1);
		assert_int_equal(rmdir(cg.v1), 0);
		rmdir("/sys/fs/cgroup/memory/docker");
	}
}

/* ---- OOM -------------------------------------------------------------------------------- */

static int hog(void *dir)
{
	char p[PATH_MAX + 32], pid[32];
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.procs", (const char *)dir);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		return 1;
	close(fd);
	for (int i = 0; i < 512; i++) { /* 512 MiB against a 32 MiB limit */
		char *m = malloc(1 << 20);

		if (!m)
			return 2;
		memset(m, i, 1 << 20);
	}
	return 3;
}

static void test_oom_names_memory_cgroup_and_its_limit(void **state)
{
	const uint64_t limit = 32u << 20;
	char dir[PATH_MAX + 64], p[PATH_MAX + 128], want[256];
	const struct tr_cgroup *c;
	struct tr_oom o;
	const struct tr_oom *r;
	bool v1 = harness_v1_memory();
	unsigned n;
	pid_t pid;
	int st;

	(void)state;
	if (!v1 && !(harness_v2_root() && access("/sys/fs/cgroup/cgroup.subtree_control", F_OK) == 0))
		TEST_SKIP("no memory controller to confine a hog (v1 memory, or v2 mounted at /sys/fs/cgroup)");
	snprintf(want, sizeof(want), "/tracer-bpf-oom.%d", (int)getpid());
	snprintf(dir, sizeof(dir), "%s%s", v1 ? "/sys/fs/cgroup/memory" : harness_v2_root(), want);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max");
	harness_write_file(p, "33554432");
	pid = harness_spawn(hog, dir);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	r = harness_wait_for(TR_OOM, pid, 2000, NULL);
	assert_non_null(r);
	o = *r;
	assert_int_equal(o.memcg_v1, v1);
	assert_int_equal(o.memcg_id, harness_ino(dir));
	assert_int_equal(o.memcg_limit_bytes, limit);
	assert_true(o.memcg_usage_bytes > limit / 2 && o.memcg_usage_bytes <= limit);
	assert_true(o.anon_rss_kb > 0);
	c = cgroup_record(o.memcg_id, v1, &n);
	assert_non_null(c);
	assert_string_equal((const char *)(c + 1), want);
	harness_wait_for(TR_EXIT, pid, 2000, NULL);
	assert_int_equal(rmdir(dir), 0);
}

/* ---- lifecycle -------------------------------------------------------------------------- */

static int fork_child(void *arg)
{
	pid_t pid = fork();

	(void)arg;
	if (pid == 0)
		_exit(0);
	return pid > 0 && waitpid(pid, NULL, 0) == pid ? 0 : 1;
}

static void test_fork_precedes_child_records_and_counters_reach_collector(void **state)
{
	const struct tr_fork *f;
	size_t pos = 0;
	pid_t pid;

	(void)state;
	pid = harness_spawn(fork_child, NULL);
	harness_reap(pid);
	while ((f = harness_next(&pos, TR_FORK, NULL)))
		if ((pid_t)f->parent_tgid == pid)
			break;
	assert_non_null(f);
	assert_non_null(harness_wait_for(TR_EXIT, (pid_t)f->child_tgid, 2000, NULL));
	/* Nothing was lost: the collector's counters (the programs' drop_counts) are all zero. */
	for (int t = 0; t < TR_KERNEL_TYPES_END; t++)
		assert_int_equal(H.bpf.skel->bss->drop_counts[t], 0);
}

/* ---- set-up --------------------------------------------------------------------------- */

static int wait_for_go(void *arg)
{
	char c;

	if (read(*(int *)arg, &c, 1) != 1)
		return 1;
	burn_ms(300);
	return 0;
}

static int setup(void **state)
{
	int go[2];

	(void)state;
	assert_int_equal(pipe(go), 0);
	preexisting = harness_spawn(wait_for_go, &go[0]);
	close(go[0]);
	go_fd = go[1];
	usleep(50000); /* it is waiting in read() before the programs are there */
	harness_start(0, INTERVAL_MS, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_stop();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_record_has_context_and_only_allowlisted_env),
		cmocka_unit_test(test_exec_cwd_crosses_mounts),
		cmocka_unit_test(test_exec_cwd_too_long_keeps_tail),
		cmocka_unit_test(test_exec_env_scan_is_bounded),
		cmocka_unit_test(test_files_opened_once_per_mode_regular_only),
		cmocka_unit_test(test_files_bounded_per_process_and_drops_counted),
		cmocka_unit_test(test_files_loader_opens_left_out_program_opens_reported),
		cmocka_unit_test(test_files_dlopen_left_out_library_opened_by_program_reported),
		cmocka_unit_test(test_files_new_file_with_reused_inode_number_reported),
		cmocka_unit_test(test_net_bytes_and_waits_over_loopback_tcp),
		cmocka_unit_test(test_blocked_process_sends_no_samples),
		cmocka_unit_test(test_cpu_bound_process_sampled_by_timer),
		cmocka_unit_test(test_uninterruptible_sleep_split_into_iowait_and_blocked),
		cmocka_unit_test(test_run_delay_counts_threads_that_ended_before_the_process),
		cmocka_unit_test(test_reclaim_time_of_a_process_under_a_memory_limit),
		cmocka_unit_test(test_preexisting_process_marked_and_sampled),
		cmocka_unit_test(test_cgroup_paths_of_a_docker_named_container),
		cmocka_unit_test(test_oom_names_memory_cgroup_and_its_limit),
		cmocka_unit_test(test_fork_precedes_child_records_and_counters_reach_collector),
	};
	const char *why = harness_unavailable();

	if (why)
		return test_skip_all("%s", why);
	return cmocka_run_group_tests(tests, setup, teardown);
}
