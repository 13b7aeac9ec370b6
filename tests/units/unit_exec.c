/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test helper: run a command under the system call filter a systemd unit
 * would give it, where systemd is not PID 1 and cannot start the unit.
 *
 *   unit_exec ALLOWED_FILE -- CMD [ARGS...]
 *
 * ALLOWED_FILE holds one system call name per line: the unit's
 * SystemCallFilter= resolved into names (tests/units/unit-syscalls.py).
 * As systemd does with SystemCallErrorNumber=EPERM, every other call fails
 * with EPERM; no_new_privs is set (NoNewPrivileges=yes). Names this
 * libseccomp does not know are skipped, as systemd skips them.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char name[128];
	scmp_filter_ctx ctx;
	FILE *f;
	int err = 0, n = 0;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: unit_exec ALLOWED_FILE -- CMD [ARGS...]\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!f || !ctx) {
		fprintf(stderr, "unit_exec: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	while (!err && fscanf(f, "%127s", name) == 1) {
		int nr = seccomp_syscall_resolve_name(name);

		if (nr == __NR_SCMP_ERROR)
			continue;
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		n++;
	}
	fclose(f);
	if (!err && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		err = -errno;
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	if (err || n == 0) {
		fprintf(stderr, "unit_exec: cannot install the unit's filter (%d names): %s\n", n, strerror(-err));
		return 2;
	}
	execv(argv[3], argv + 3);
	fprintf(stderr, "unit_exec: cannot run %s: %s\n", argv[3], strerror(errno));
	return 2;
}
