/* SPDX-License-Identifier: Apache-2.0 */
#include "cputime.h"

void cputime_adjust(uint64_t utime, uint64_t stime, uint64_t rtime, uint64_t *user, uint64_t *sys)
{
	unsigned __int128 scaled;

	/* The kernel: "If either stime or utime are 0, assume all runtime is userspace" (or system). */
	if (stime == 0) {
		*user = rtime;
		*sys = 0;
		return;
	}
	if (utime == 0) {
		*user = 0;
		*sys = rtime;
		return;
	}
	/*
	 * mul_u64_u64_div_u64(stime, rtime, stime + utime): the product needs
	 * 128 bits and so may the sum; the quotient is at most rtime because
	 * stime <= stime + utime, so it fits 64 bits.
	 */
	scaled = (unsigned __int128)stime * rtime / ((unsigned __int128)stime + utime);
	*sys = scaled > rtime ? rtime : (uint64_t)scaled;
	*user = rtime - *sys;
}
