/* SPDX-License-Identifier: Apache-2.0 */
#include "sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "landlock.h"
#include "priv.h"
#include "scfilter.h"
#include "load.h"

/*
 * Everything the collector does after start-up, and nothing more. No
 * socket, no connect, no exec, no kill: the copy loop needs none of them.
 * Rereading the rules file on SIGHUP needs openat, fstat, newfstatat
 * (its directory, cgroup directories), read and close; openat only with
 * the exact flags rules.c uses (read-only, no symlink, no blocking), so
 * nothing can be created, truncated or written through it.
 */
static const char *const collector_syscalls[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", /* the loop */
	"read",                                      /* signalfd */
	"write", "writev",                           /* stderr logs */
	"accept4", "sendmsg", "getsockopt", "close", /* ring handover to a (re)connecting processor */
	"futex",                                     /* waking the processor */
	"clock_gettime", "clock_nanosleep", "nanosleep",
	"munmap", "madvise", "brk",                  /* freeing at exit */
	"rt_sigreturn", "rt_sigprocmask", "restart_syscall",
	"newfstatat", "fstat", "getpid",
	"getrusage",                                 /* its own cost, reported when it stops */
	"exit", "exit_group",
	NULL,
};

static const struct sc_arg_rule reload_syscalls[] = {
	{ "openat", 2, 0, RULES_OPEN_FLAGS, 0 },
	{ NULL, 0, 0, 0, 0 },
};

/*
 * Landlock: the only files the collector can open from now on are in the
 * rules file's directory (read only); no TCP at all; no signal to, and no
 * abstract socket of, any process outside. Without --rules, no file.
 */
static int confine_files(const char *rules_file)
{
	struct landlock_spec s = { .nrw = 0 };

	if (!landlock_add_ro(&s, rules_file, true))
		return -E2BIG;
	return landlock_apply(&s, "tracer-collector") < 0 ? -EPERM : 0;
}

int sandbox_collector(const char *user, const char *rules_file)
{
	uid_t uid;
	gid_t gid;
	int err = priv_lookup_user(user, &uid, &gid);

	if (err) {
		fprintf(stderr, "<3>unknown user '%s' for the collector to run as: %s\n", user, strerror(-err));
		return err;
	}
	err = priv_drop(uid, gid);
	if (!err)
		err = confine_files(rules_file);
	if (!err)
		err = sc_install((const char *const *const[]){ collector_syscalls, NULL },
				 (const struct sc_arg_rule *const[]){ reload_syscalls, NULL }, 0, "tracer-collector",
				 "collector");
	return err;
}
