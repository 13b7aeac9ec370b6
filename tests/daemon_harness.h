/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The real binaries (tracer, tracer-collector, tracer-processor,
 * tracer-ingest) run from cmocka tests: found next to the test
 * executable, started with the stderr and the descriptors the test gives
 * them, waited for with a bound, stopped, and what they wrote read back.
 * Everything it waits for has a bound: a binary that hangs fails the test,
 * it does not hang the run. Its own failures fail the test (cmocka).
 */
#ifndef TRACER_TESTS_DAEMON_HARNESS_H
#define TRACER_TESTS_DAEMON_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The binary NAME of the build the test executable belongs to
 * (BUILD/NAME for BUILD/tests/test_x and BUILD/asan/tests/test_x), into
 * path: 0, or -1 when it is not built.
 */
int daemon_find(const char *name, char *path, size_t cap);

/* What the started binary gets besides its arguments. Start from DAEMON_IO. */
struct daemon_io {
	const char *stderr_path; /* its stderr: this file, created (0600) and truncated, or */
	int stderr_fd;           /* this descriptor (-1: the test's own) */
	int stdout_fd;           /* its stdout (-1: the test's own) */
	int inherit[2];          /* descriptors it keeps across exec (close-on-exec cleared), -1: none */
	int (*in_child)(void *arg); /* run in the child just before exec; non-zero: the child exits with it */
	void *arg;
};

#define DAEMON_IO { .stderr_fd = -1, .stdout_fd = -1, .inherit = { -1, -1 } }

/* fork and exec argv[0] (NULL-terminated argv); the child exits 127 if exec fails. Returns its pid. */
pid_t daemon_start(const char *const *argv, const struct daemon_io *io);

/* Wait up to ms for pid to end: its wait status, or -1 when it is still running. */
int daemon_wait(pid_t pid, int ms);

/*
 * Send sig, then wait up to ms for pid to end: its wait status, or -1 when
 * it did not end (it is then killed with SIGKILL and reaped).
 */
int daemon_stop(pid_t pid, int sig, int ms);

/* Run argv to its end, within ms (else it is killed and the test fails): its wait status. */
int daemon_run(const char *const *argv, const struct daemon_io *io, int ms);

/*
 * Run argv to its end, within ms (else it is killed and the test fails),
 * with its stdout and stderr read into out and err (NUL-terminated, cut
 * at their cap - 1 bytes): its exit code, as daemon_exit_code.
 */
int daemon_capture(const char *const *argv, char *out, size_t out_cap, char *err, size_t err_cap, int ms);

/* A wait status as the shell's $?: the exit status, or 128 + the signal. */
int daemon_exit_code(int status);

/*
 * The binary's ready line: waits up to ms for fd to be readable, reads
 * once into buf (NUL-terminated). The bytes read (0: it closed fd
 * without a word), or -1 when nothing came in time.
 */
ssize_t daemon_ready(int fd, int ms, char *buf, size_t cap);

/* A file's text, NUL-terminated, cut at cap - 1 bytes; "" when it cannot be read. */
void daemon_read_file(const char *path, char *buf, size_t cap);

/* Everything a file descriptor holds (a memfd: from offset 0), allocated, NUL-terminated. */
char *daemon_read_fd(int fd);

#endif /* TRACER_TESTS_DAEMON_HARNESS_H */
