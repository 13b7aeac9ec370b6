/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The clocks, read one way everywhere: nanoseconds as uint64_t.
 *
 *   mono_ns()           CLOCK_MONOTONIC: intervals, deadlines, the records' ts_ns
 *   real_ns()           CLOCK_REALTIME: times a person or another host reads
 *   mono_to_real_ns()   add to a CLOCK_MONOTONIC time (mod 2^64) for CLOCK_REALTIME
 *
 * clock_gettime is the vDSO, no system call, for these two clocks: cheap in
 * a loop and allowed by every seccomp filter here anyway. shm/ has its own
 * ring_now_ns() (CLOCK_MONOTONIC): it depends on nothing.
 */
#ifndef TRACER_COMMON_CLOCK_H
#define TRACER_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, from a realtime read between two monotonic ones. */
static inline uint64_t mono_to_real_ns(void)
{
	uint64_t m1 = mono_ns(), r = real_ns(), m2 = mono_ns();

	return r - (m1 + (m2 - m1) / 2);
}

#endif /* TRACER_COMMON_CLOCK_H */
