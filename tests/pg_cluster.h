/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A throwaway PostgreSQL cluster for a test: a temporary directory holding
 * its data (data/), its Unix socket and its logs; no TCP. Started as an
 * unprivileged user (PostgreSQL refuses root: nobody when the test is
 * root, else the test's own user), trust authentication (anyone who can
 * reach the socket connects as any role: a test's own cluster, nothing
 * else lives in it), fsync=off (a crash of the machine may lose it: a test
 * does not care; never for a real lake). tests/e2e/pg.sh does the same for
 * the shell tests and benchmarks.
 *
 *   static int group_setup(void **state) { ... return pg_cluster_start(&pc); }
 *   static int group_teardown(void **state) { return pg_cluster_stop(&pc); }
 *   ... PQconnectdb(pc.uri) ...
 *
 * pg_cluster_start forks a guardian that waits on a pipe the test holds:
 * when the test ends in any way (pg_cluster_stop, a failed assertion's
 * exit, an abort, SIGKILL), the guardian stops the server (pg_ctl stop -m
 * fast) and removes the directory, so that nothing is left behind.
 * PostgreSQL's programs missing fail the test ("make deps"), as any other
 * missing tool does. TRACER_PG_BIN overrides where they are.
 */
#ifndef TRACER_TESTS_PG_CLUSTER_H
#define TRACER_TESTS_PG_CLUSTER_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG_CLUSTER_BIN "/usr/lib/postgresql/15/bin"
#define PG_CLUSTER_USER "tracer" /* the cluster's superuser (initdb -U), whoever runs it */
#define PG_CLUSTER_DB "lake"     /* the database pg_cluster_start makes */
#define PG_CLUSTER_PORT "5432"   /* only names the socket: DIR/.s.PGSQL.5432 */

struct pg_cluster {
	char dir[64];  /* /tmp/tracer-pg.XXXXXX: data/, the socket, server.log, setup.log */
	char bin[160]; /* PostgreSQL's programs */
	char uri[256]; /* libpq URI of PG_CLUSTER_DB: postgresql:///lake?host=DIR&port=5432&user=tracer */
	bool drop;     /* the server runs as uid, gid (we are root) */
	uid_t uid;
	gid_t gid;
	pid_t guard; /* the guardian, and the pipe it waits on */
	int guard_fd;
};

/*
 * argv run to its end, stdout and stderr appended to DIR/setup.log, as the cluster's user when owner (else as
 * ourselves), in DIR, with an environment of its own (no PGPORT or PGDATA of the caller's). Its exit status,
 * or -1.
 */
static inline int pg_cluster_run(const struct pg_cluster *pc, bool owner, const char *const argv[])
{
	static const char *const env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
	char log[96];
	int status;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/setup.log", pc->dir);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || null < 0 || dup2(null, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(pc->dir))
			_exit(126);
		if (owner && pc->drop && (setgroups(0, NULL) || setgid(pc->gid) || setuid(pc->uid)))
			_exit(126);
		execve(argv[0], (char *const *)(uintptr_t)argv, (char *const *)(uintptr_t)env);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* What the cluster's logs say, on stderr: why it did not start. */
static inline void pg_cluster_show_logs(const struct pg_cluster *pc)
{
	static const char *const logs[] = { "setup.log", "server.log" };

	for (unsigned i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		char path[96], line[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", pc->dir, logs[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		fprintf(stderr, "--- %s\n", path);
		while (fgets(line, sizeof(line), f))
			fputs(line, stderr);
		fclose(f);
	}
}

/* The server stopped (if it runs) and the directory removed: the guardian's work. */
static inline void pg_cluster_remove(const struct pg_cluster *pc)
{
	char data[80], pidfile[96], bin[176];
	const char *stop[] = { bin, "stop", "-D", data, "-m", "fast", "-w", "-t", "30", "-s", NULL };
	const char *rm[] = { "/bin/rm", "-rf", "--", pc->dir, NULL };

	snprintf(data, sizeof(data), "%s/data", pc->dir);
	snprintf(pidfile, sizeof(pidfile), "%s/postmaster.pid", data);
	snprintf(bin, sizeof(bin), "%s/pg_ctl", pc->bin);
	if (access(pidfile, F_OK) == 0 && pg_cluster_run(pc, true, stop) != 0) {
		FILE *f = fopen(pidfile, "r"); /* its first line: the postmaster's pid */
		long pid = 0;

		stop[5] = "immediate";
		if (pg_cluster_run(pc, true, stop) != 0 && f && fscanf(f, "%ld", &pid) == 1 && pid > 1)
			kill((pid_t)pid, SIGKILL);
		if (f)
			fclose(f);
	}
	pg_cluster_run(pc, false, rm);
}

/*
 * The guardian: a child that waits for the test to close its end of the pipe (pg_cluster_stop, or the test's
 * end, whatever it is), then removes the cluster. In a process group of its own: a ^C meant for the test
 * does not stop it cleaning up.
 */
static inline int pg_cluster_guard(struct pg_cluster *pc)
{
	int p[2];
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pc->guard = fork();
	if (pc->guard < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pc->guard == 0) { /* only p[0] kept: another cluster's guardian must not hold this one's pipe */
		if (p[0] > 3)
			close_range(3, (unsigned)p[0] - 1, 0);
		close_range((unsigned)p[0] + 1, ~0u, 0);
		setpgid(0, 0);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		pg_cluster_remove(pc);
		_exit(0);
	}
	close(p[0]);
	pc->guard_fd = p[1];
	return 0;
}

/*
 * Stops the cluster (pg_ctl stop -m fast) and removes its directory; waits until both are done. 0, or -1 if
 * the directory is still there.
 */
static inline int pg_cluster_stop(struct pg_cluster *pc)
{
	if (pc->guard > 0) {
		close(pc->guard_fd);
		while (waitpid(pc->guard, NULL, 0) < 0 && errno == EINTR)
			;
		pc->guard = 0;
	}
	return pc->dir[0] && access(pc->dir, F_OK) == 0 ? -1 : 0;
}

/* Another database in the cluster, its URI in uri. 0, or -1 (the reason on stderr). */
static inline int pg_cluster_createdb(const struct pg_cluster *pc, const char *name, char *uri, size_t urilen)
{
	char bin[176];
	const char *argv[] = { bin, "-h", pc->dir, "-p", PG_CLUSTER_PORT, "-U", PG_CLUSTER_USER, name, NULL };

	snprintf(bin, sizeof(bin), "%s/createdb", pc->bin);
	if (pg_cluster_run(pc, false, argv) != 0) {
		fprintf(stderr, "pg_cluster: createdb %s failed\n", name);
		pg_cluster_show_logs(pc);
		return -1;
	}
	snprintf(uri, urilen, "postgresql:///%s?host=%s&port=%s&user=%s", name, pc->dir, PG_CLUSTER_PORT,
		 PG_CLUSTER_USER);
	return 0;
}

/*
 * A new cluster, running and accepting connections (pg_ctl start -w), with the database PG_CLUSTER_DB: its URI
 * in pc->uri. 0, or -1 with the reason on stderr and nothing left behind.
 */
static inline int pg_cluster_start(struct pg_cluster *pc)
{
	static const char *const progs[] = { "initdb", "pg_ctl", "createdb" };
	const char *bindir = getenv("TRACER_PG_BIN");
	char prog[176], data[80], log[96], opts[192];

	memset(pc, 0, sizeof(*pc));
	snprintf(pc->bin, sizeof(pc->bin), "%s", bindir && *bindir ? bindir : PG_CLUSTER_BIN);
	for (unsigned i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		snprintf(prog, sizeof(prog), "%s/%s", pc->bin, progs[i]);
		if (access(prog, X_OK)) {
			fprintf(stderr, "pg_cluster: PostgreSQL 15 is not installed here (no %s): run 'make deps' "
					"(it installs postgresql-15 and libpq-dev)\n", prog);
			return -1;
		}
	}
	if (geteuid() == 0) { /* PostgreSQL refuses to run as root */
		const struct passwd *pw = getpwnam("nobody");

		if (!pw) {
			fprintf(stderr, "pg_cluster: running as root, and there is no user nobody to run PostgreSQL as\n");
			return -1;
		}
		pc->drop = true;
		pc->uid = pw->pw_uid;
		pc->gid = pw->pw_gid;
	}
	snprintf(pc->dir, sizeof(pc->dir), "/tmp/tracer-pg.XXXXXX");
	if (!mkdtemp(pc->dir)) {
		fprintf(stderr, "pg_cluster: mkdtemp %s: %s\n", pc->dir, strerror(errno));
		pc->dir[0] = '\0';
		return -1;
	}
	/* the server writes its socket and log here; other users may reach the socket (0755) */
	if (chmod(pc->dir, 0755) || (pc->drop && chown(pc->dir, pc->uid, pc->gid)) || pg_cluster_guard(pc)) {
		fprintf(stderr, "pg_cluster: setting up %s: %s\n", pc->dir, strerror(errno));
		rmdir(pc->dir);
		return -1;
	}
	snprintf(data, sizeof(data), "%s/data", pc->dir);
	snprintf(log, sizeof(log), "%s/server.log", pc->dir);
	snprintf(opts, sizeof(opts), "-k %s -c listen_addresses='' -p %s -c fsync=off", pc->dir, PG_CLUSTER_PORT);
	snprintf(prog, sizeof(prog), "%s/initdb", pc->bin);
	{
		const char *initdb[] = { prog, "-D", data, "-U", PG_CLUSTER_USER, "-A", "trust", "-E", "UTF8",
					 "--locale=C", "--no-sync", "--no-instructions", NULL };

		if (pg_cluster_run(pc, true, initdb) != 0) {
			fprintf(stderr, "pg_cluster: initdb failed\n");
			goto fail;
		}
	}
	snprintf(prog, sizeof(prog), "%s/pg_ctl", pc->bin);
	{
		const char *start[] = { prog, "start", "-D", data, "-l", log, "-w", "-t", "60", "-s", "-o", opts, NULL };

		if (pg_cluster_run(pc, true, start) != 0) {
			fprintf(stderr, "pg_cluster: pg_ctl start failed\n");
			goto fail;
		}
	}
	if (pg_cluster_createdb(pc, PG_CLUSTER_DB, pc->uri, sizeof(pc->uri)))
		goto stop; /* it showed the logs */
	return 0;
fail:
	pg_cluster_show_logs(pc);
stop:
	pg_cluster_stop(pc);
	return -1;
}

/*
 * A test program that compares the two engines: one cluster for the whole group, a scratch directory for its
 * SQLite files, and a counter its tests number their databases by. cmocka's group setup and teardown:
 *
 *   static int group_setup(void **state) { return pg_engines_setup(state, "test_x"); }
 *   static int group_teardown(void **state) { return pg_engines_teardown(state); }
 */
struct pg_engines {
	struct pg_cluster pc;
	char dir[64]; /* /tmp/NAME.XXXXXX */
	unsigned n;
};

static inline int pg_engines_setup(void **state, const char *name)
{
	struct pg_engines *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	snprintf(e->dir, sizeof(e->dir), "/tmp/%s.XXXXXX", name);
	if (!mkdtemp(e->dir) || pg_cluster_start(&e->pc)) {
		free(e);
		return -1;
	}
	*state = e;
	return 0;
}

static inline int pg_engines_teardown(void **state)
{
	struct pg_engines *e = *state;
	char cmd[128];
	int rc;

	if (!e)
		return 0;
	rc = pg_cluster_stop(&e->pc);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", e->dir);
	if (system(cmd))
		rc = -1;
	free(e);
	return rc;
}

#endif /* TRACER_TESTS_PG_CLUSTER_H */
