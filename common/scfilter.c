/* SPDX-License-Identifier: Apache-2.0 */
/* The one seccomp filter builder (common/scfilter.h). */
#include "scfilter.h"

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

static int add_rule(scmp_filter_ctx ctx, const struct sc_arg_rule *r)
{
	int nr = seccomp_syscall_resolve_name(r->name);
	uint32_t action = r->err ? SCMP_ACT_ERRNO((uint32_t)r->err) : SCMP_ACT_ALLOW;
	int err;

	if (nr == __NR_SCMP_ERROR) /* not a syscall of this architecture (or this libseccomp) */
		return 0;
	if (r->arg == SC_ANY_ARG)
		err = seccomp_rule_add(ctx, action, nr, 0);
	else if (r->mask)
		err = seccomp_rule_add(ctx, action, nr, 1, SCMP_CMP((unsigned)r->arg, SCMP_CMP_MASKED_EQ, r->mask, r->value));
	else
		err = seccomp_rule_add(ctx, action, nr, 1, SCMP_CMP((unsigned)r->arg, SCMP_CMP_EQ, r->value, 0));
	if (err)
		fprintf(stderr, "<3>seccomp: cannot add the rule for %s: %s\n", r->name, strerror(-err));
	return err;
}

/*
 * libseccomp needs the seccomp() syscall for SCMP_ACT_KILL_PROCESS (and
 * TSYNC). A service manager's own filter may refuse it (systemd 252's
 * @system-service set does not list it): say so, rather than "no memory".
 */
static void explain_init_failure(const char *who)
{
	errno = 0;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL) < 0 && errno != EINVAL)
		fprintf(stderr, "<3>the seccomp() syscall is refused here (%s): under systemd, allow it with "
			"SystemCallFilter=seccomp in the unit (a filter can only take away); %s does not "
			"run without its own filter\n", strerror(errno), who);
	else
		fprintf(stderr, "<3>libseccomp cannot build a filter that kills the process (kernel 4.14 or later "
			"needed)\n");
}

int sc_install(const char *const *const *names, const struct sc_arg_rule *const *rules, unsigned flags,
	       const char *who, const char *what)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int err = 0;

	if (!ctx) {
		explain_init_failure(who);
		return -EPERM;
	}
	if (flags & SC_TSYNC)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!err && (flags & SC_NNP_SET))
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	for (size_t i = 0; !err && names[i]; i++)
		for (const char *const *n = names[i]; !err && *n; n++)
			err = add_rule(ctx, &(struct sc_arg_rule){ .name = *n, .arg = SC_ANY_ARG });
	for (size_t i = 0; !err && rules && rules[i]; i++)
		for (const struct sc_arg_rule *r = rules[i]; !err && r->name; r++)
			err = add_rule(ctx, r);
	if (!err)
		err = seccomp_load(ctx);
	if (err)
		fprintf(stderr, "<3>cannot install the %s seccomp filter: %s\n", what, strerror(err < 0 ? -err : err));
	seccomp_release(ctx);
	return err < 0 ? err : (err ? -EIO : 0);
}
