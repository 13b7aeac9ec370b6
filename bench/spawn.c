/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workloads for the overhead benchmark (bench/overhead.sh):
 *   spawn storm N [WORKERS]   fork+exec /bin/true N times, WORKERS in parallel, empty environment
 *   spawn storm-env N [WORKERS]   the same, /bin/true gets this process's environment
 *   spawn burn MS             spin MS milliseconds of CPU time
 * Each prints its own wall time as "elapsed_ns N" on stdout, so the
 * benchmark measures the workload, not tracer's start-up and report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"

extern char **environ;

static int storm_worker(long n, char *const *envp)
{
	static char name[] = "true";
	char *const argv[] = { name, NULL };

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return -1;
		if (pid == 0) {
			execve("/bin/true", argv, envp);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return -1;
	}
	return 0;
}

static int storm(long n, long workers, char *const *envp)
{
	int failed = 0;

	for (long w = 0; w < workers; w++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0)
			_exit(storm_worker(n / workers + (w < n % workers), envp) ? 1 : 0);
	}
	for (long w = 0; w < workers; w++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed = 1;
	}
	return failed ? -1 : 0;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int burn(long ms)
{
	uint64_t end = cpu_ns() + (uint64_t)ms * 1000000ULL;
	volatile uint64_t x = 0;

	while (cpu_ns() < end)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i * 2654435761u;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t start = ring_now_ns();
	int rc;

	static char *const no_env[] = { NULL };

	if (argc >= 3 && !strcmp(argv[1], "storm"))
		rc = storm(atol(argv[2]), argc >= 4 ? atol(argv[3]) : 2, no_env);
	else if (argc >= 3 && !strcmp(argv[1], "storm-env"))
		rc = storm(atol(argv[2]), argc >= 4 ? atol(argv[3]) : 2, environ);
	else if (argc == 3 && !strcmp(argv[1], "burn"))
		rc = burn(atol(argv[2]));
	else {
		fprintf(stderr, "usage: spawn storm|storm-env N [WORKERS] | spawn burn MS\n");
		return 2;
	}
	if (rc) {
		fprintf(stderr, "spawn: workload failed: %s\n", strerror(errno));
		return 1;
	}
	printf("elapsed_ns %llu\n", (unsigned long long)(ring_now_ns() - start));
	return 0;
}
