/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-processor's confinement: who it becomes, which files and TCP
 * ports it may reach (Landlock), which system calls it may make (seccomp).
 * main() calls them in the order docs/security.md gives: confine_user()
 * before connecting to the collector, confine() once the spool and the
 * ring are open.
 */
#ifndef TRACER_PROCESSOR_CONFINE_H
#define TRACER_PROCESSOR_CONFINE_H

#include <fcntl.h>

#include "options.h"

/*
 * Rereading the rules files on SIGHUP: openat with exactly these flags
 * (read-only: nothing can be created, truncated or written through it).
 * Which files the processor's user may read is up to the file system; it
 * runs as an unprivileged user of its own.
 */
#define CONFINE_RULES_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* Become o->user: no capability, no supplementary group, no_new_privs (common/priv.c). 0, or -1 with a message. */
int confine_user(const struct options *o);

/* Landlock's file and TCP rules, then the seccomp allowlist of the mode (run, or daemon with delivery). 0 or -1. */
int confine(const struct options *o);

#endif /* TRACER_PROCESSOR_CONFINE_H */
