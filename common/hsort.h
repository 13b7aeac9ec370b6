/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place heapsort with qsort's interface (and qsort_r's, with a context
 * for the comparison). The processor cannot use glibc's qsort: for large
 * arrays it asks the kernel for the machine's memory (sysinfo, refused by
 * the processor's seccomp filter: SIGSYS) and may allocate. O(n log n), no
 * allocation, no recursion; not stable: give equal elements an order of
 * their own (a tie-breaker) where the order shows.
 */
#ifndef TRACER_COMMON_HSORT_H
#define TRACER_COMMON_HSORT_H

#include <stddef.h>

#define HSORT_MAX_SIZE 64 /* bytes per element, at most */

void hsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* cmp(a, b, ctx), as glibc's qsort_r. */
void hsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *ctx);

#endif /* TRACER_COMMON_HSORT_H */
