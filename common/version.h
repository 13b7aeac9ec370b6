/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The build's version (debian/changelog) and commit (git describe), in
 * one object that every binary links, the collector too: a new commit
 * rebuilds version.o alone (the Makefile's BUILD_ID_OBJS).
 */
#ifndef TRACER_COMMON_VERSION_H
#define TRACER_COMMON_VERSION_H

#include <stdio.h>

extern const char tracer_version[], tracer_commit[];

/* --version: "PROG VERSION\ncommit COMMIT\n" on standard output (help2man reads the first line). */
static inline void version_print(const char *prog)
{
	printf("%s %s\ncommit %s\n", prog, tracer_version, tracer_commit);
}

#endif /* TRACER_COMMON_VERSION_H */
