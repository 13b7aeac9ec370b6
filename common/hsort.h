/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place heapsort with qsort's interface. The processor cannot use
 * glibc's qsort: for large arrays it asks the kernel for the machine's
 * memory (sysinfo, refused by the processor's seccomp filter: SIGSYS) and
 * may allocate. O(n log n), no allocation, no recursion; not stable.
 */
#ifndef TRACER_COMMON_HSORT_H
#define TRACER_COMMON_HSORT_H

#include <stddef.h>

#define HSORT_MAX_SIZE 64 /* bytes per element, at most */

void hsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif /* TRACER_COMMON_HSORT_H */
