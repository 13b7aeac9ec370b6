# mk/man.mk - the man pages, generated so that they cannot drift from the programs (docs/install.md):
# each binary's from its own --help and --version (help2man), tracer.conf(5) from docs/tracer.conf.example
# (mk/conf_man.py), the file install puts in /etc/tracer. Included by the top-level Makefile after BINARIES.
#
#   make man         $(BUILD)/man/*.{1,5,8}
#   make man-check   tests/package/check-man.sh: each page's options are its binary's --help's

MAN_PAGES := $(BUILD)/man/tracer.1 $(BUILD)/man/tracer-collector.8 $(BUILD)/man/tracer-processor.8 \
	$(BUILD)/man/tracer-ingest.8 $(BUILD)/man/tracer-web.8 $(BUILD)/man/tracer.conf.5
MAN_NAME_tracer := trace a pipeline, report on its runs and query the lake
MAN_NAME_tracer-collector := load tracer's BPF programs and serve their records on a shared-memory ring
MAN_NAME_tracer-processor := decode the collector's records into runs, report them and upload them
MAN_NAME_tracer-ingest := receive signed batches over HTTP(S) and store them in the lake
MAN_NAME_tracer-web := a read-only web dashboard over the lake

.PHONY: man man-check
man: $(MAN_PAGES)

# SOURCE_DATE_EPOCH (dpkg-buildpackage sets it from debian/changelog): the page's date, for reproducible builds.
$(BUILD)/man/%.1 $(BUILD)/man/%.8: $(BUILD)/%
	@mkdir -p $(dir $@)
	@echo "  MAN     $@"
	$(Q)help2man --no-info --section=$(subst .,,$(suffix $@)) --name="$(MAN_NAME_$*)" --output=$@.tmp $< && \
		mv $@.tmp $@

$(BUILD)/man/tracer.conf.5: docs/tracer.conf.example mk/conf_man.py debian/changelog
	@mkdir -p $(dir $@)
	@echo "  MAN     $@"
	$(Q)python3 mk/conf_man.py docs/tracer.conf.example $(TRACER_VERSION) $@

man-check: $(MAN_PAGES) $(BINARIES)
	$(Q)tests/package/check-man.sh $(BUILD)/man docs/tracer.conf.example $(BUILD)
