/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp allowlists of the daemons that serve HTTP (common/scfilter.h). */
#include "scfilter.h"

#include <errno.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

static int add_names(scmp_filter_ctx ctx, const char *const *names)
{
	for (const char *const *n = names; *n; n++) {
		int nr = seccomp_syscall_resolve_name(*n);
		int err;

		if (nr == __NR_SCMP_ERROR) /* not a syscall of this architecture (or this libseccomp) */
			continue;
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		if (err) {
			fprintf(stderr, "<3>seccomp: cannot allow %s: %s\n", *n, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int add_rules(scmp_filter_ctx ctx, const struct sc_arg_rule *rules)
{
	for (const struct sc_arg_rule *r = rules; r->name; r++) {
		int nr = seccomp_syscall_resolve_name(r->name);
		uint32_t action = r->err ? SCMP_ACT_ERRNO((uint32_t)r->err) : SCMP_ACT_ALLOW;
		int err;

		if (nr == __NR_SCMP_ERROR)
			continue;
		if (r->arg < 0)
			err = seccomp_rule_add(ctx, action, nr, 0);
		else if (r->mask)
			err = seccomp_rule_add(ctx, action, nr, 1,
					       SCMP_CMP((unsigned)r->arg, SCMP_CMP_MASKED_EQ, r->mask, r->value));
		else
			err = seccomp_rule_add(ctx, action, nr, 1,
					       SCMP_CMP((unsigned)r->arg, SCMP_CMP_EQ, r->value, 0));
		if (err) {
			fprintf(stderr, "<3>seccomp: cannot add the rule for %s: %s\n", r->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * libseccomp needs the seccomp() syscall for SCMP_ACT_KILL_PROCESS and
 * TSYNC. A service manager's own filter may refuse it (systemd 252's
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

int sc_install(const char *const *const *names, const struct sc_arg_rule *const *rules, const char *who,
	       const char *what)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int err;

	if (!ctx) {
		explain_init_failure(who);
		return -EPERM;
	}
	err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	/* priv_drop() has set no_new_privs; libseccomp's own prctl would be outside an earlier filter. */
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	for (size_t i = 0; !err && names[i]; i++)
		err = add_names(ctx, names[i]);
	for (size_t i = 0; !err && rules[i]; i++)
		err = add_rules(ctx, rules[i]);
	if (!err)
		err = seccomp_load(ctx);
	if (err)
		fprintf(stderr, "<3>cannot install the %s seccomp filter: %s\n", what, strerror(err < 0 ? -err : err));
	seccomp_release(ctx);
	return err < 0 ? err : (err ? -EIO : 0);
}
