# mk/install.mk - make install / uninstall, the Debian package (make deb) and their checks.
# Included by the top-level Makefile after BINARIES is defined (it uses BUILD, Q and BINARIES).
# docs/install.md says what goes where and why.
#
#   make install   [DESTDIR=] [PREFIX=/usr/local] [SYSCONFDIR=/etc] [UNITDIR=...] ...
#   make uninstall (same variables as the install it undoes)
#   make install-check   install into $(BUILD)/stage, uninstall, the stage must be empty again
#   make deb             $(BUILD)/deb/tracer_VERSION_ARCH.deb with dpkg-buildpackage, from a copy of the tree
#   make deb-check       make deb, then tests/package/check-deb.sh (as root it installs and purges the package)

PREFIX       ?= /usr/local
SYSCONFDIR   ?= /etc
BINDIR       ?= $(PREFIX)/bin
SBINDIR      ?= $(PREFIX)/sbin
# systemd reads units from /usr/local/lib/systemd/system too. The Debian package sets
# UNITDIR=/lib/systemd/system: bookworm's systemd.pc says so and its dh_installsystemd
# only looks there (Debian 12 ships no unit under /usr/lib/systemd/system).
UNITDIR      ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR  ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR  ?= $(PREFIX)/lib/tmpfiles.d
DOCDIR       ?= $(PREFIX)/share/doc/tracer
MANDIR       ?= $(PREFIX)/share/man
# tracer cost's price table: the binary looks for it at ../share/tracer/prices.csv from its own directory.
DATADIR      := $(PREFIX)/share/tracer
SELINUXDIR   ?= $(PREFIX)/share/selinux/packages
SELINUXIFDIR ?= $(PREFIX)/share/selinux/devel/include/contrib
# install notes here every directory it had to create, so that uninstall removes those
# (once empty) and no other. Empty: nothing noted (the package: dpkg owns directories).
INSTALL_DIRS_LIST ?= $(PREFIX)/share/tracer/install-dirs

# Where each binary of BINARIES goes. install refuses to run when BINARIES has one
# this list does not place.
INSTALL_BIN  := tracer
INSTALL_SBIN := tracer-collector tracer-processor tracer-ingest tracer-web
INSTALL_UNITS := $(patsubst systemd/%.in,%,$(wildcard $(addprefix systemd/*.,$(addsuffix .in,service socket path timer))))
INSTALL_DOCS := README.md $(wildcard docs/*.md)
INSTALL_CONF := $(SYSCONFDIR)/tracer/tracer.conf
# The SELinux module (mk/selinux.mk builds it) is installed when its sources are in the tree.
SELINUX_PP   := $(if $(wildcard selinux/tracer.te),$(BUILD)/selinux/tracer.pp)
# The man pages (mk/man.mk): $(MANDIR)/manN/NAME.N.
INSTALL_MAN  = $(foreach p,$(notdir $(MAN_PAGES)),$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(p))
UNPLACED_BINARIES := $(filter-out $(addprefix $(BUILD)/,$(INSTALL_BIN) $(INSTALL_SBIN)),$(BINARIES))

# Every file install puts in place but the config (kept when changed) and the directory list.
INSTALLED_FILES = $(addprefix $(BINDIR)/,$(INSTALL_BIN)) $(addprefix $(SBINDIR)/,$(INSTALL_SBIN)) \
	$(addprefix $(UNITDIR)/,$(INSTALL_UNITS)) $(SYSUSERSDIR)/tracer.conf $(TMPFILESDIR)/tracer.conf \
	$(addprefix $(DOCDIR)/,$(notdir $(INSTALL_DOCS))) $(SELINUXDIR)/tracer.pp $(SELINUXIFDIR)/tracer.if \
	$(DATADIR)/prices.csv $(INSTALL_MAN)

.PHONY: install install-build uninstall install-check deb deb-check

# What install installs, built (debian/rules' build step too).
install-build: $(BINARIES) $(addprefix $(BUILD)/,$(INSTALL_BIN) $(INSTALL_SBIN)) $(SELINUX_PP) $(MAN_PAGES)

# One shell: mkdirs() creates each missing directory (and missing parents, outermost
# first) with mode 0755 and remembers it in $created, which ends up in INSTALL_DIRS_LIST.
install: install-build
	$(Q)set -e; \
	if [ -n "$(UNPLACED_BINARIES)" ]; then \
		echo "install: $(UNPLACED_BINARIES) is built but mk/install.mk does not place it (INSTALL_BIN, INSTALL_SBIN)" >&2; \
		exit 1; fi; \
	for v in PREFIX=$(PREFIX) SYSCONFDIR=$(SYSCONFDIR) UNITDIR=$(UNITDIR); do \
		case "$${v#*=}" in /*) ;; *) echo "install: $$v is not an absolute path" >&2; exit 1;; esac; done; \
	created=; \
	mkdirs() { \
		for d in "$$@"; do \
			new=; p="$$d"; \
			while [ "$$p" != / ] && [ ! -d "$(DESTDIR)$$p" ]; do new="$$p $$new"; p=$$(dirname "$$p"); done; \
			for n in $$new; do install -d -m 0755 "$(DESTDIR)$$n"; created="$$created $$n"; done; \
		done; }; \
	[ -z "$(DESTDIR)" ] || install -d "$(DESTDIR)"; \
	mkdirs $(BINDIR) $(SBINDIR) $(UNITDIR) $(SYSUSERSDIR) $(TMPFILESDIR) $(DOCDIR) $(DATADIR) $(SYSCONFDIR)/tracer \
		$(sort $(dir $(INSTALL_MAN))) \
		$(if $(SELINUX_PP),$(SELINUXDIR) $(SELINUXIFDIR)); \
	for b in $(INSTALL_BIN); do echo "  INSTALL $(DESTDIR)$(BINDIR)/$$b"; \
		install -D -m 0755 $(BUILD)/$$b "$(DESTDIR)$(BINDIR)/$$b"; done; \
	for b in $(INSTALL_SBIN); do echo "  INSTALL $(DESTDIR)$(SBINDIR)/$$b"; \
		install -D -m 0755 $(BUILD)/$$b "$(DESTDIR)$(SBINDIR)/$$b"; done; \
	mkdir -p $(BUILD)/install; \
	for u in $(INSTALL_UNITS); do \
		sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
			-e 's|@DOCDIR@|$(DOCDIR)|g' systemd/$$u.in > $(BUILD)/install/$$u; \
		if grep -n '@[A-Za-z_]*@' $(BUILD)/install/$$u >&2; then \
			echo "install: systemd/$$u.in: a placeholder mk/install.mk does not know (above)" >&2; exit 1; fi; \
		echo "  INSTALL $(DESTDIR)$(UNITDIR)/$$u"; \
		install -D -m 0644 $(BUILD)/install/$$u "$(DESTDIR)$(UNITDIR)/$$u"; done; \
	echo "  INSTALL $(DESTDIR)$(SYSUSERSDIR)/tracer.conf"; \
	install -D -m 0644 systemd/tracer.sysusers "$(DESTDIR)$(SYSUSERSDIR)/tracer.conf"; \
	echo "  INSTALL $(DESTDIR)$(TMPFILESDIR)/tracer.conf"; \
	install -D -m 0644 systemd/tracer.tmpfiles "$(DESTDIR)$(TMPFILESDIR)/tracer.conf"; \
	for f in $(INSTALL_DOCS); do install -D -m 0644 $$f "$(DESTDIR)$(DOCDIR)/$${f##*/}"; done; \
	for p in $(INSTALL_MAN); do echo "  INSTALL $(DESTDIR)$$p"; \
		install -D -m 0644 $(BUILD)/man/$${p##*/} "$(DESTDIR)$$p"; done; \
	echo "  INSTALL $(DESTDIR)$(DATADIR)/prices.csv"; \
	install -D -m 0644 data/prices.csv "$(DESTDIR)$(DATADIR)/prices.csv"; \
	echo "  INSTALL $(DESTDIR)$(DOCDIR)/ ($(words $(INSTALL_DOCS)) documents)"; \
	conf="$(DESTDIR)$(INSTALL_CONF)"; \
	if [ -e "$$conf" ] || [ -L "$$conf" ]; then \
		cmp -s docs/tracer.conf.example "$$conf" || \
			echo "  KEEP    $$conf: it exists and differs from docs/tracer.conf.example, which was not installed"; \
	else echo "  INSTALL $$conf"; install -D -m 0644 docs/tracer.conf.example "$$conf"; fi; \
	if [ -n "$(SELINUX_PP)" ]; then \
		echo "  INSTALL $(DESTDIR)$(SELINUXDIR)/tracer.pp"; \
		install -D -m 0644 $(SELINUX_PP) "$(DESTDIR)$(SELINUXDIR)/tracer.pp"; \
		install -D -m 0644 selinux/tracer.if "$(DESTDIR)$(SELINUXIFDIR)/tracer.if"; \
	else echo "  SKIP    SELinux module: no selinux/tracer.te in this tree"; fi; \
	if [ -n "$(INSTALL_DIRS_LIST)" ]; then \
		list="$(DESTDIR)$(INSTALL_DIRS_LIST)"; \
		mkdirs "$$(dirname "$(INSTALL_DIRS_LIST)")"; \
		{ [ ! -f "$$list" ] || cat "$$list"; for n in $$created; do echo "$$n"; done; } | \
			awk '!seen[$$0]++' > "$$list.tmp"; \
		chmod 0644 "$$list.tmp"; mv -f "$$list.tmp" "$$list"; \
	fi

# Removes the files install puts in place; the config only when it is still the example
# (a changed one is kept, like a dpkg conffile, and named); then the directories install
# noted as created, innermost first, and tracer's own (DOCDIR, SYSCONFDIR/tracer), each
# only once empty. It does not stop services or remove users and state (/var/lib/tracer*).
uninstall:
	$(Q)set -e; \
	for f in $(INSTALLED_FILES); do \
		if [ -e "$(DESTDIR)$$f" ] || [ -L "$(DESTDIR)$$f" ]; then echo "  RM      $(DESTDIR)$$f"; rm -f "$(DESTDIR)$$f"; fi; \
	done; \
	conf="$(DESTDIR)$(INSTALL_CONF)"; \
	if [ -f "$$conf" ]; then \
		if cmp -s docs/tracer.conf.example "$$conf"; then echo "  RM      $$conf"; rm -f "$$conf"; \
		else echo "  KEEP    $$conf: changed since it was installed; remove it by hand if it is no longer wanted"; fi; \
	fi; \
	dirs=; \
	if [ -n "$(INSTALL_DIRS_LIST)" ] && [ -f "$(DESTDIR)$(INSTALL_DIRS_LIST)" ]; then \
		dirs=$$(tac "$(DESTDIR)$(INSTALL_DIRS_LIST)"); rm -f "$(DESTDIR)$(INSTALL_DIRS_LIST)"; fi; \
	for d in $(DOCDIR) $(SYSCONFDIR)/tracer $$dirs; do \
		[ ! -d "$(DESTDIR)$$d" ] || rmdir --ignore-fail-on-non-empty "$(DESTDIR)$$d"; done

# install, then uninstall, into a stage: the stage must be empty again. Then a changed
# config: a second install keeps it, uninstall keeps it and removes everything else.
# The sub-makes read the same makefiles as this one.
INSTALL_STAGE = $(abspath $(BUILD))/stage
INSTALL_MAKE_ARGS = --no-print-directory -f $(firstword $(MAKEFILE_LIST)) DESTDIR=$(INSTALL_STAGE) PREFIX=/usr
install-check: install-build
	$(Q)rm -rf $(INSTALL_STAGE) && mkdir -p $(INSTALL_STAGE)
	$(Q)$(MAKE) $(INSTALL_MAKE_ARGS) install >/dev/null
	$(Q)set -e; s=$(INSTALL_STAGE); \
	for f in usr/bin/tracer usr/sbin/tracer-collector usr/sbin/tracer-processor usr/sbin/tracer-ingest usr/sbin/tracer-web \
			usr/lib/systemd/system/tracer-collector.service usr/lib/sysusers.d/tracer.conf \
			usr/lib/tmpfiles.d/tracer.conf usr/share/doc/tracer/README.md etc/tracer/tracer.conf; do \
		[ -f "$$s/$$f" ] || { echo "install-check: install did not put /$$f in place" >&2; exit 1; }; done; \
	tests/package/check-man.sh $$s/usr/share/man docs/tracer.conf.example $$s/usr/bin $$s/usr/sbin; \
	echo "install-check: installed $$(find $$s -type f | wc -l) files into $$s"
	$(Q)$(MAKE) $(INSTALL_MAKE_ARGS) uninstall >/dev/null
	$(Q)left=$$(find $(INSTALL_STAGE) -mindepth 1); if [ -n "$$left" ]; then \
		echo "install-check: uninstall left behind:" >&2; echo "$$left" >&2; exit 1; fi
	$(Q)echo "install-check: uninstall left the stage empty"
	$(Q)$(MAKE) $(INSTALL_MAKE_ARGS) install >/dev/null
	$(Q)echo '# changed by install-check' >> $(INSTALL_STAGE)/etc/tracer/tracer.conf
	$(Q)$(MAKE) $(INSTALL_MAKE_ARGS) install > $(INSTALL_STAGE).log
	$(Q)grep 'KEEP.*tracer.conf' $(INSTALL_STAGE).log >/dev/null || \
		{ echo "install-check: a second install did not say it kept the changed config" >&2; exit 1; }
	$(Q)grep -q '^# changed by install-check' $(INSTALL_STAGE)/etc/tracer/tracer.conf || \
		{ echo "install-check: a second install overwrote the changed config" >&2; exit 1; }
	$(Q)$(MAKE) $(INSTALL_MAKE_ARGS) uninstall >/dev/null
	$(Q)left=$$(cd $(INSTALL_STAGE) && find . -type f); if [ "$$left" != ./etc/tracer/tracer.conf ]; then \
		echo "install-check: after uninstall with a changed config, expected only ./etc/tracer/tracer.conf, found:" >&2; \
		echo "$$left" >&2; exit 1; fi
	$(Q)rm -rf $(INSTALL_STAGE) $(INSTALL_STAGE).log
	$(Q)echo "install-check: a changed config survives install and uninstall"

# ---- the Debian package (debian/) ---------------------------------------
# dpkg-buildpackage writes into the parent of the source directory: it runs on a copy of
# the tree's sources in $(BUILD)/deb/src, so the .deb, tracer-dbgsym (debug symbols),
# .buildinfo and .changes land in $(BUILD)/deb and the tree and its parent stay as they are.
# The copy: what git tracks or would track (untracked, not ignored) under these paths
# (without git: every file there but objects). A new stage directory is in STAGES
# (Makefile); any other new source directory goes in this list, or the package's build
# fails for want of it.
DEB_DIR       = $(BUILD)/deb
DEB_SRC_PATHS  = Makefile README.md mk debian bpf include $(STAGES) docs systemd selinux data
DEB_VERSION    = $(shell dpkg-parsechangelog -l debian/changelog -S Version)
DEB_ARCH       = $(shell dpkg-architecture -qDEB_HOST_ARCH 2>/dev/null)
DEB_FILE       = $(DEB_DIR)/tracer_$(DEB_VERSION)_$(DEB_ARCH).deb

deb:
	@echo "  DEB     dpkg-buildpackage in $(DEB_DIR)/src (log: $(DEB_DIR)/build.log)"
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	$(Q)set -e; \
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files --cached --others --exclude-standard -- $(DEB_SRC_PATHS); \
	else \
		find $(wildcard $(DEB_SRC_PATHS)) -type f ! -name '*.o'; \
	fi | while IFS= read -r f; do [ ! -f "$$f" ] || printf '%s\n' "$$f"; done > $(DEB_DIR)/src.list; \
	tar -cf - -T $(DEB_DIR)/src.list | tar -xf - -C $(DEB_DIR)/src
	$(Q)cd $(DEB_DIR)/src && \
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u CFLAGS -u CPPFLAGS -u LDFLAGS \
		dpkg-buildpackage -b -us -uc -Jauto > ../build.log 2>&1 || { \
		tail -n 40 ../build.log >&2; \
		echo "make deb: dpkg-buildpackage failed; the whole log: $(DEB_DIR)/build.log" >&2; exit 1; }
	$(Q)test -f $(DEB_FILE) || { echo "make deb: dpkg-buildpackage made no $(DEB_FILE)" >&2; exit 1; }
	$(Q)ls $(DEB_DIR)/*.deb $(DEB_DIR)/*.ddeb 2>/dev/null | sed 's/^/  DEB     /'

deb-check: deb
	$(Q)tests/package/check-deb.sh $(BUILD)
