/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Splitting a process's precise CPU time into user and system time the way
 * wait4() reports it: the kernel's cputime_adjust() (kernel/sched/cputime.c)
 * scales the tick-sampled utime/stime to the precise sum_exec_runtime.
 */
#ifndef TRACER_COMMON_CPUTIME_H
#define TRACER_COMMON_CPUTIME_H

#include <stdint.h>

/*
 * rtime: precise total (runtime_ns); utime, stime: tick-sampled split.
 * Writes the scaled user and system times; *user + *sys == rtime always.
 * As the kernel: stime == 0 gives all to user, utime == 0 all to system,
 * else sys = rtime * stime / (stime + utime), exact in 128-bit arithmetic.
 */
void cputime_adjust(uint64_t utime, uint64_t stime, uint64_t rtime, uint64_t *user, uint64_t *sys);

#endif /* TRACER_COMMON_CPUTIME_H */
