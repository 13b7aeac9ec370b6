/* SPDX-License-Identifier: Apache-2.0 */
#ifndef TRACER_COLLECTOR_SANDBOX_H
#define TRACER_COLLECTOR_SANDBOX_H

/*
 * Become user (name or uid), with no capabilities; open nothing but in the
 * directory of rules_file (NULL: nothing); confine to the copy loop's syscalls.
 */
int sandbox_collector(const char *user, const char *rules_file);

#endif
