# mk/selinux.mk - the SELinux policy module (selinux/, docs/selinux.md).
# Included by the top-level Makefile; uses $(BUILD) and $(Q) from it.
#
#   $(BUILD)/selinux/tracer.pp  compiled with Debian's policy development
#                               files (selinux-policy-dev, checkpolicy,
#                               semodule-utils); any m4 or checkmodule
#                               warning fails the build
#   selinux-check               the package, then selinux/check-module.sh on
#                               it and segenxml on the interface docs
#
# The devel Makefile writes tmp/ and tracer.pp into its working directory,
# so it runs in a copy of the sources under $(BUILD)/selinux, with none of
# our make's variables (MAKEFLAGS cleared) and NAME given rather than read
# from /etc/selinux/config.

BUILD ?= build
SELINUX_DEVEL_MK ?= /usr/share/selinux/devel/Makefile
SELINUX_SEGENXML ?= /usr/share/selinux/devel/include/support/segenxml.py
SELINUX_SRC := selinux/tracer.te selinux/tracer.if selinux/tracer.fc

.PHONY: selinux-check

$(BUILD)/selinux/tracer.pp: $(SELINUX_SRC)
	@echo "  SEMOD   $@"
	@test -f $(SELINUX_DEVEL_MK) || { echo "selinux: $(SELINUX_DEVEL_MK) missing: apt-get install selinux-policy-dev" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(Q)rm -rf $(dir $@)tmp $@ && cp $(SELINUX_SRC) $(dir $@)
	$(Q)cd $(dir $@) && MAKEFLAGS= $(MAKE) --no-print-directory -f $(SELINUX_DEVEL_MK) NAME=default tracer.pp \
		>build.log 2>&1; \
		rc=$$?; cat build.log; \
		if [ $$rc -ne 0 ]; then echo "selinux: the module did not compile (see above)" >&2; rm -f tracer.pp; exit 1; fi; \
		if grep -Eiq 'warning|error' build.log; then \
			echo "selinux: warnings are errors here (see above)" >&2; rm -f tracer.pp; exit 1; fi

selinux-check: $(BUILD)/selinux/tracer.pp
	$(Q)selinux/check-module.sh $(BUILD)/selinux
	$(Q)cd $(BUILD)/selinux && python3 $(SELINUX_SEGENXML) -w -m ./tracer >tracer.xml 2>segenxml.log; \
		rc=$$?; cat segenxml.log; \
		if [ $$rc -ne 0 ] || [ -s segenxml.log ]; then \
			echo "selinux: tracer.if's documentation comments do not parse (see above)" >&2; exit 1; fi; \
		python3 -c 'import sys, xml.dom.minidom as m; m.parseString("<layer>" + open(sys.argv[1]).read() + "</layer>")' \
			tracer.xml || { echo "selinux: tracer.if's documentation is not well-formed XML" >&2; exit 1; }; \
		echo "  ok    tracer.if: $$(grep -c '^<interface' tracer.xml) interfaces documented"
