/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test builds only (make builds $(BUILD)/testbin/ with -DTRACER_TEST_TRIGGERS;
 * the installed binaries have none of this, which tests/e2e/test_sandbox.sh
 * checks): once a daemon's sandbox is in force, do what
 * $TRACER_TEST_TRIGGER says, so a test can prove from inside that the
 * sandbox refuses it:
 *
 *   syscall:NAME[:A0[:A1[:A2]]]  make the system call (numbers as arguments);
 *                                 a forbidden one kills the process (SIGSYS)
 *   open:PATH                     open PATH with the daemon's own read-only flags
 *   create:PATH                   create PATH for writing
 *   connect:IPV4:PORT             a TCP connection
 *
 * Each prints one line "<7>test trigger: WHAT = RESULT" (0 or -errno) and
 * exits 0; a system call that comes back exits 3.
 */
#ifndef TRACER_COMMON_TESTTRIGGER_H
#define TRACER_COMMON_TESTTRIGGER_H

#ifdef TRACER_TEST_TRIGGERS
void test_trigger(const char *who, int read_flags);
#define TEST_TRIGGER(who, read_flags) test_trigger(who, read_flags)
#else
#define TEST_TRIGGER(who, read_flags) ((void)0)
#endif

#endif /* TRACER_COMMON_TESTTRIGGER_H */
