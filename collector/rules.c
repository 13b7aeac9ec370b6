/* SPDX-License-Identifier: Apache-2.0 */
/* The rules file: read at start, and on SIGHUP inside the sandbox (open, fstat, stat, read, close). */
#include <errno.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "load.h"
#include "ring_common.h"

/* Run identifiers and allocations that schedulers (and tracer) put in the environment: docs/security.md. */
static const char *const default_env_keys[] = {
	"TRACER_RUN_ID", "TRACER_PIPELINE", "TRACER_STEP", "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_ARRAY_JOB_ID",
	"SLURM_ARRAY_TASK_ID", "SLURM_JOB_NAME", "SLURM_SUBMIT_DIR", "SLURM_SUBMIT_HOST", "AWS_BATCH_JOB_ID",
	"AWS_BATCH_JOB_ARRAY_INDEX", "PBS_JOBID", "PBS_ARRAY_INDEX", "LSB_JOBID", "LSB_JOBINDEX", "JOB_ID", "SGE_TASK_ID",
	"NXF_TASK_WORKDIR", "SLURM_CPUS_ON_NODE", "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "OMP_NUM_THREADS", NULL,
};

__attribute__((format(printf, 3, 4))) static int fail(const struct rules_file *f, unsigned line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "<3>%s:%u: ", f->path, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static dev_t mount_dev(const char *dir, long magic)
{
	struct statfs sf;
	struct stat st;

	return statfs(dir, &sf) == 0 && sf.f_type == magic && stat(dir, &st) == 0 ? st.st_dev : 0;
}

int rules_init(struct rules_file *f, const char *path)
{
	f->path = path;
	f->v2_dev = mount_dev("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC); /* hybrid */
	if (!f->v2_dev)
		f->v2_dev = mount_dev("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC);
	f->v1_memory_dev = mount_dev("/sys/fs/cgroup/memory", CGROUP_SUPER_MAGIC);
	/* Resolved once, as root: a reload reopens the same file whatever the working directory. */
	if (path && !realpath(path, f->file)) {
		fprintf(stderr, "<3>rules file %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (path) {
		char *slash = strrchr(memcpy(f->dir, f->file, sizeof(f->dir)), '/'); /* realpath: absolute */

		slash[slash == f->dir] = 0; /* "/rules" lives in "/" */
	}
	return rules_read(f);
}

/* The rules decide what is hidden from the record: only root may be able to change them. */
static int check_owner(const struct rules_file *f, const char *what, const struct stat *st)
{
	if (st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	fprintf(stderr, "<3>rules file %s refused: %s is owned by uid %u, mode %04o; only root may be able to "
			"write it (chown root %s; chmod go-w %s)\n", f->path, what, (unsigned)st->st_uid,
		(unsigned)st->st_mode & 07777, what, what);
	return -1;
}

static int read_file(struct rules_file *f)
{
	struct stat st, dst;
	ssize_t len;
	int fd = open(f->file, RULES_OPEN_FLAGS);

	if (fd < 0) {
		fprintf(stderr, "<3>cannot open the rules file %s: %s%s\n", f->file, strerror(errno),
			errno == EACCES ? " (after start-up the collector reads it as its own user: chmod o+r)" : "");
		return -1;
	}
	if (fstat(fd, &st) || stat(f->dir, &dst) || check_owner(f, f->file, &st) || check_owner(f, f->dir, &dst) ||
	    !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	len = read_fd_bounded(fd, f->buf, READ_MAX_RULES); /* NUL-terminated */
	close(fd);
	if (len < 0 || memchr(f->buf, 0, (size_t)len)) {
		fprintf(stderr, "<3>rules file %s: %s\n", f->file,
			len == -EFBIG ? "larger than 64 KiB" : len < 0 ? strerror((int)-len) : "not text (NUL byte)");
		return -1;
	}
	return 0;
}

static int add_env(struct rules_file *f, const char *key, unsigned line)
{
	size_t n = strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	struct tr_env_key k = { .nwords = (__u32)(n + 8) / 8 };

	if (key[n] || n == 0 || n >= TR_RULES_ENV_WORDS * 8 || (key[0] >= '0' && key[0] <= '9'))
		return fail(f, line, "environment key '%s': letters, digits and _, at most 63 bytes", key);
	/* "KEY=" as the programs compare it: little-endian words, a mask over its bytes. */
	memcpy(k.word, key, n);
	((char *)k.word)[n] = '=';
	memset(k.mask, 0xff, n + 1);
	for (__u32 i = 0; i < f->next.n_env; i++)
		if (!memcmp(&f->next.env[i], &k, sizeof(k)))
			return 0;
	if (f->next.n_env == TR_RULES_ENV_MAX)
		return fail(f, line, "at most %d environment keys, the built-in ones included", TR_RULES_ENV_MAX);
	f->next.env[f->next.n_env++] = k;
	return 0;
}

/* The depth of a cgroup directory in its hierarchy: how many ".." steps stay on its filesystem. */
static int cgroup_level(struct rules_file *f, const char *path, dev_t dev)
{
	size_t n = strlen(path);
	struct stat st;

	if (n >= PATH_MAX)
		return -1;
	memcpy(f->up, path, n + 1);
	for (int level = 0; level < CGROUP_LEVEL_MAX; level++, n += 3) {
		memcpy(f->up + n, "/..", 4);
		if (stat(f->up, &st) || st.st_dev != dev)
			return level;
	}
	return -1;
}

static int add_cgroup(struct rules_file *f, struct tr_rule_set *s, const char *path, unsigned line)
{
	struct stat st;
	int level = -1;

	if (!stat(path, &st) && S_ISDIR(st.st_mode) && st.st_dev && (st.st_dev == f->v2_dev || st.st_dev == f->v1_memory_dev))
		level = cgroup_level(f, path, st.st_dev);
	if (level < 0)
		return fail(f, line, "'%s' is not a cgroup directory of the v2 hierarchy or of the v1 memory "
				     "hierarchy%s%s", path, errno ? ": " : "", errno ? strerror(errno) : "");
	/* A cgroup's id, as the kernel reports it, is its directory's inode number. */
	s->cgroup[s->n_cgroup++] = (struct tr_cgroup_rule){ .id = st.st_ino, .v1 = st.st_dev == f->v1_memory_dev,
							    .level = (__u32)level };
	return 0;
}

static int parse_line(struct rules_file *f, char *text, unsigned line)
{
	const char *sep = " \t\r";
	char *save, *end, *verb = strtok_r(text, sep, &save);
	char *kind = strtok_r(NULL, sep, &save), *val = strtok_r(NULL, sep, &save);
	struct tr_rule_set *s = verb && verb[0] == 'e' ? &f->next.exclude : &f->next.include;
	unsigned long uid;
	__u32 *count;

	if (!verb || verb[0] == '#')
		return 0;
	if (!strcmp(verb, "env") && kind && !val)
		return add_env(f, kind, line);
	if ((strcmp(verb, "exclude") && strcmp(verb, "include")) || !val || strtok_r(NULL, sep, &save))
		return fail(f, line, "expected 'exclude|include exe NAME', '... uid UID', '... cgroup PATH' or 'env KEY'");
	count = !strcmp(kind, "exe") ? &s->n_exe : !strcmp(kind, "uid") ? &s->n_uid
		: !strcmp(kind, "cgroup") ? &s->n_cgroup : NULL;
	if (!count)
		return fail(f, line, "unknown kind '%s': exe, uid or cgroup", kind);
	if (*count == TR_RULES_PER_KIND)
		return fail(f, line, "at most %d '%s %s' rules", TR_RULES_PER_KIND, verb, kind);
	errno = 0;
	if (kind[0] == 'c')
		return add_cgroup(f, s, val, line);
	if (kind[0] == 'e') {
		if (strchr(val, '/') || strlen(val) >= TR_RULES_EXE_LEN)
			return fail(f, line, "exe takes a file name without '/', at most 63 bytes: '%s'", val);
		strcpy(s->exe[s->n_exe++], val);
		return 0;
	}
	/* Digits only: strtoul alone would also take a sign or leading white space ("+5", "\v-0"). */
	uid = strtoul(val, &end, 10);
	if (errno || *end || uid > 0xfffffffeUL || val[0] < '0' || val[0] > '9')
		return fail(f, line, "uid takes a number: '%s'", val);
	s->uid[s->n_uid++] = (__u32)uid;
	return 0;
}

int rules_parse(struct rules_file *f, char *text)
{
	char *next;
	unsigned line = 0;

	memset(&f->next, 0, sizeof(f->next));
	for (const char *const *k = default_env_keys; *k; k++)
		add_env(f, *k, 0);
	for (; text; text = next) {
		next = strchr(text, '\n');
		if (next)
			*next++ = 0;
		if (parse_line(f, text, ++line))
			return -1;
	}
	return 0;
}

int rules_read(struct rules_file *f)
{
	if (f->path && read_file(f)) {
		rules_parse(f, NULL); /* f->next: the built-in allowlist alone, as before a file is read */
		return -1;
	}
	return rules_parse(f, f->path ? f->buf : NULL);
}

void rules_publish(struct rules_file *f, struct tr_kernel_rules copies[2], __u32 *active)
{
	__u32 next = !__atomic_load_n(active, __ATOMIC_RELAXED);
	uint64_t reuse = f->published_ns + RULES_REUSE_DELAY_MS * 1000000ULL, now = ring_now_ns();

	/* The copy about to be rewritten was the live one until the last publication. */
	if (f->published_ns && now < reuse)
		nanosleep(&(struct timespec){ .tv_nsec = (long)(reuse - now) }, NULL);
	memcpy(&copies[next], &f->next, sizeof(f->next));
	/* Pairs with the programs' single read of rules_active (active_rules() in bpf/tracer.bpf.h). */
	__atomic_store_n(active, next, __ATOMIC_RELEASE);
	f->published_ns = ring_now_ns();
}
