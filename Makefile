# tracer — top-level build. Output goes to build/.
#
#   make            libraries and binaries (build/)
#   make check      every test, normal and ASan/UBSan builds, fuzz smoke runs
#   make bench      every benchmark (make bench-<name> for one)
#   make fuzz       longer fuzzing runs (FUZZ_SECONDS per target)
#   make deps       install the Debian packages the build and tests need
#   make install    binaries, units, sysusers.d, tmpfiles.d, config, SELinux module (DESTDIR, PREFIX)
#   make deb        the Debian package, in $(BUILD)/deb (docs/install.md)

CC       ?= gcc
CLANG    ?= clang
BUILD    ?= build

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wpointer-arith -Wformat=2 -Wundef -Wvla -Wcast-qual -Wwrite-strings \
            -Wimplicit-fallthrough
CPPFLAGS += -D_GNU_SOURCE -Iinclude -isystem $(BUILD)/bpf # generated skeletons: not our warnings
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -fno-strict-aliasing -fstack-protector-strong -fPIE \
            -D_FORTIFY_SOURCE=2
LDFLAGS  += -pie -Wl,-z,relro,-z,now
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# V=1 shows full command lines.
ifeq ($(V),1)
Q :=
else
Q := @
endif

FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 10

# shm/: the ring's producer side (the collector's), its consumer side (the processor's), what both share.
SHM_SRC  := shm/ring_producer.c shm/ring_producer_extra.c shm/ring_consumer.c shm/handover_peer.c \
            shm/handover_producer.c shm/handover_consumer.c
# Every header of include/ and the stages (STAGES, below): an object is rebuilt when any changes.
SHM_HDR   = $(wildcard include/*.h $(addsuffix /*.h,$(STAGES)) tests/*.h)
# The privileged collector links only what it runs (docs/security.md counts it from the binary): its own
# tracer.conf reader (collector/conf.c) over the line layer it shares with common/config.c (common/conf_lines.c),
# not config.c; the producer half of shm/ (libtracer_shm.a).
COLLECTOR_SRC := collector/main.c collector/conf.c collector/sandbox.c collector/load.c collector/rules.c \
                 common/conf_lines.c common/readfile.c common/priv.c common/scfilter.c common/landlock.c \
                 common/notify.c common/version.c
# The kernel programs' tests (tests/test_bpf_*.c) load them through the collector's own loader.
BPF_TEST_SRC := collector/load.c collector/rules.c tests/bpf_harness.c

# ---- stages -------------------------------------------------------------
# One folder per stage of the data flow (docs/architecture.md), each a static
# library compiled with its own include path: a folder sees include/, itself
# and the folders listed for it, so an include against the data flow fails
# to build. Each folder's README says what it owns and what it may use.
STAGES := common shm records naming model attrib report delivery status lake analysis view ingest web cli collector processor
USES_common    :=
USES_shm       :=
USES_records   :=
USES_naming    :=
USES_model     := records naming common
USES_attrib    := model records naming common
USES_report    := attrib model records naming common
USES_delivery  := records naming shm common
USES_status    := records common
USES_lake      := records common
USES_analysis  := common
USES_view      := analysis lake records common
USES_ingest    := lake common
USES_web       := view analysis lake records common
USES_cli       := view analysis lake status records common
USES_collector := shm common
USES_processor := report attrib model records naming delivery status shm common
# Tests, benchmarks and fuzz targets reach into every stage.
USES_tests     := $(STAGES) tests
USES_bench     := $(STAGES)
stage_inc = $(addprefix -I,$(firstword $(subst /, ,$(1))) $(USES_$(firstword $(subst /, ,$(1)))))

# Libraries, in link order (a library before those it uses). common/testtrigger.c: test builds only.
LIB_STAGES := processor ingest web view analysis lake delivery report attrib model naming status records common
lib_src = $(filter-out %/main.c common/testtrigger.c,$(wildcard $(1)/*.c))
LIBS     := $(LIB_STAGES:%=$(BUILD)/libtracer_%.a)
ALL_LIB_SRC := $(foreach l,$(LIB_STAGES),$(call lib_src,$(l)))
PROC_SRC := processor/main.c
CLI_SRC  := $(wildcard cli/*.c)
# Libraries of the delivery path: io_uring (spool), libsodium (signatures), zlib (compression, crc32),
# libcurl (upload), SQLite and libmicrohttpd with GnuTLS (ingest).
PROC_LDLIBS := -lseccomp -luring -lsodium -lz -lcurl
# libpq (libpq-dev): the lake's PostgreSQL backend (lake/sql.c), so whatever links the lake.
PQ_CFLAGS := $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
PQ_LIBS   := $(shell pkg-config --libs libpq 2>/dev/null || echo -lpq)
CPPFLAGS  += $(PQ_CFLAGS)
INGEST_LDLIBS := -lmicrohttpd -lgnutls -lsqlite3 $(PQ_LIBS) -lsodium -lz -lseccomp
LAKE_LDLIBS := -lsqlite3 $(PQ_LIBS) -lsodium -lz
# bpf/*.bpf.c are linked into one object (they share maps), one skeleton: tracer.skel.h.
# shared.bpf.c defines the shared maps and must come first: libbpf 1.1's
# linker cannot relocate a map used by an earlier object that declares it extern.
BPF_OBJS := $(BUILD)/bpf/shared.bpf.o \
            $(filter-out %/shared.bpf.o,$(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(wildcard bpf/*.bpf.c)))
BPF_SKELS := $(BUILD)/bpf/tracer.skel.h
BPFTOOL  ?= bpftool
BTF      ?= /sys/kernel/btf/vmlinux

TESTS    := $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
TEST_LIBS := $(LIBS) $(BUILD)/libtracer_shm.a
TEST_LDLIBS := -lcmocka -luring -lsodium -lz -lcurl -lmicrohttpd -lgnutls -lsqlite3 $(PQ_LIBS) -lseccomp -lm
FUZZERS  := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
BENCHES  := ring overhead agent kernel delivery live tune html real fleet export

# Packages for build, tests, fuzzing and benchmarks (later issues add to it).
DEB_PKGS := build-essential clang llvm libclang-rt-14-dev pkg-config libcmocka-dev python3 help2man lintian \
            libbpf-dev bpftool libelf-dev zlib1g-dev liburing-dev libsodium-dev \
            libcurl4-openssl-dev libseccomp-dev libmicrohttpd-dev libgnutls28-dev libsqlite3-dev \
            cppcheck procps iproute2 util-linux snakemake bwa samtools cwltool sqlite3 openssl \
            systemd selinux-policy-dev checkpolicy semodule-utils policycoreutils dpkg-dev debhelper \
            libbpf-tools stress-ng chromium-headless-shell postgresql-15 libpq-dev \
            munge slurmctld slurmd slurm-client prometheus protobuf-compiler python3-protobuf

.PHONY: layout-check readme-check units-check audit-check demo all check e2e test test-asan fuzz-smoke fuzz bench $(addprefix bench-,$(BENCHES)) deps lint clean

BINARIES := $(BUILD)/tracer-collector $(BUILD)/tracer-processor $(BUILD)/tracer $(BUILD)/tracer-ingest $(BUILD)/tracer-web

all: $(BUILD)/libtracer_shm.a $(BINARIES) $(BUILD)/tests/e2e/workload $(BUILD)/tests/e2e/probe_state

# ---- kernel programs (CO-RE, against the running kernel's BTF) ---------
$(BUILD)/bpf/vmlinux.h: $(BTF)
	@mkdir -p $(dir $@)
	@echo "  BTF     $@"
	$(Q)$(BPFTOOL) btf dump file $(BTF) format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.bpf.h) include/records.h include/record_header.h \
		include/kernel_rules.h \
		$(BUILD)/bpf/vmlinux.h
	@echo "  BPF     $<"
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I$(BUILD)/bpf -Iinclude -c -o $@ $<

$(BUILD)/bpf/tracer.o: $(BPF_OBJS)
	@echo "  BPFLINK $@"
	$(Q)$(BPFTOOL) gen object $@ $^

$(BUILD)/bpf/tracer.skel.h: $(BUILD)/bpf/tracer.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name tracer_bpf > $@.tmp && mv $@.tmp $@

# ---- the collector ------------------------------------------------------
$(COLLECTOR_SRC:%.c=$(BUILD)/obj/%.o): $(BPF_SKELS)
# Each function and object in a section of its own, and the linker drops those nothing calls: the helpers of
# common/ the collector does not use (Landlock's rw and port rules, ...) are not in its binary.
GC_SECTIONS := -ffunction-sections -fdata-sections
$(COLLECTOR_SRC:%.c=$(BUILD)/obj/%.o) $(SHM_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/testobj/collector/main.o: \
	CFLAGS += $(GC_SECTIONS)

$(BUILD)/tracer-collector: $(COLLECTOR_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/libtracer_shm.a
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -Wl,--gc-sections -o $@ $^ -lbpf -lelf -lz -lseccomp

# Its tracer.conf reader, tested against the general parser (common/config.c, in libtracer_common.a).
$(BUILD)/tests/test_collector_conf: $(BUILD)/obj/collector/conf.o
$(BUILD)/asan/tests/test_collector_conf: $(BUILD)/asan/obj/collector/conf.o
# tracer export table's writer (cli/ is a program, not a library: its object, before the libraries it calls).
$(BUILD)/tests/test_cli_export_table: $(BUILD)/obj/tests/test_cli_export_table.o $(BUILD)/obj/cli/cmd_export_table.o \
		$(TEST_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LDLIBS)
$(BUILD)/asan/tests/test_cli_export_table: $(BUILD)/asan/obj/tests/test_cli_export_table.o \
		$(BUILD)/asan/obj/cli/cmd_export_table.o $(TEST_LIBS:$(BUILD)/%=$(BUILD)/asan/%)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LDLIBS)

# ---- the stages' libraries ------------------------------------------------
define stage_lib
$(BUILD)/libtracer_$(1).a: $$(patsubst %.c,$(BUILD)/obj/%.o,$$(call lib_src,$(1)))
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^
$(BUILD)/asan/libtracer_$(1).a: $$(patsubst %.c,$(BUILD)/asan/obj/%.o,$$(call lib_src,$(1)))
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^
endef
$(foreach l,$(LIB_STAGES),$(eval $(call stage_lib,$(l))))
$(BUILD)/libtracer_view.a: $(BUILD)/gen/html_page.o
$(BUILD)/asan/libtracer_view.a: $(BUILD)/asan/gen/html_page.o
$(BUILD)/libtracer_web.a: $(BUILD)/gen/web_assets.o
$(BUILD)/asan/libtracer_web.a: $(BUILD)/asan/gen/web_assets.o

# ---- the processor, the CLI, the ingest ---------------------------------
PROC_LIBS := $(addprefix $(BUILD)/libtracer_,processor.a delivery.a report.a attrib.a model.a naming.a status.a records.a \
               common.a) \
             $(BUILD)/libtracer_shm.a
$(BUILD)/tracer-processor: $(PROC_SRC:%.c=$(BUILD)/obj/%.o) $(PROC_LIBS)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PROC_LDLIBS)

$(BUILD)/tracer: $(CLI_SRC:%.c=$(BUILD)/obj/%.o) $(addprefix $(BUILD)/libtracer_,view.a analysis.a lake.a status.a records.a common.a)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LAKE_LDLIBS) -lcurl -lm

$(BUILD)/tracer-ingest: $(BUILD)/obj/ingest/main.o $(addprefix $(BUILD)/libtracer_,ingest.a lake.a records.a common.a)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(INGEST_LDLIBS)

$(BUILD)/tracer-web: $(BUILD)/obj/web/main.o $(addprefix $(BUILD)/libtracer_,web.a view.a analysis.a lake.a status.a \
		records.a common.a)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(INGEST_LDLIBS) -lm

# Test builds of the daemons, for tests/e2e/test_sandbox.sh only, never installed: the same objects but
# main.c compiled with TRACER_TEST_TRIGGERS, which, once the sandbox is in force, makes the system call
# or opens the file $TRACER_TEST_TRIGGER names (common/testtrigger.h).
$(BUILD)/testobj/%.o: %.c $(SHM_HDR) $(BPF_SKELS)
	@mkdir -p $(dir $@)
	@echo "  CC test $<"
	$(Q)$(CC) $(CPPFLAGS) $(call stage_inc,$<) -Icommon $(CFLAGS) -DTRACER_TEST_TRIGGERS -c -o $@ $<

$(BUILD)/testbin/tracer-collector: $(BUILD)/testobj/collector/main.o $(BUILD)/testobj/common/testtrigger.o \
		$(filter-out %/collector/main.o,$(COLLECTOR_SRC:%.c=$(BUILD)/obj/%.o)) $(BUILD)/libtracer_shm.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -Wl,--gc-sections -o $@ $^ -lbpf -lelf -lz -lseccomp

$(BUILD)/testbin/tracer-processor: $(BUILD)/testobj/processor/main.o $(BUILD)/testobj/common/testtrigger.o \
		$(PROC_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PROC_LDLIBS)

$(BUILD)/testbin/tracer-web: $(BUILD)/testobj/web/main.o $(BUILD)/testobj/common/testtrigger.o \
		$(addprefix $(BUILD)/libtracer_,web.a view.a analysis.a lake.a status.a records.a common.a)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(INGEST_LDLIBS) -lm

# A command under a unit's SystemCallFilter=, where systemd cannot start the unit (tests/units/unit_exec.c).
$(BUILD)/testbin/unit_exec: $(BUILD)/obj/tests/units/unit_exec.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lseccomp

TESTBINS := $(BUILD)/testbin/tracer-collector $(BUILD)/testbin/tracer-processor $(BUILD)/testbin/tracer-web \
            $(BUILD)/testbin/unit_exec

# ---- the HTML report's page ----------------------------------------------
# view/html/report.{html,css,js} as C strings, with the sha256 of the page's <style> and <script> in its
# Content-Security-Policy (view/html/embed.py computes them from the bytes the page carries); in
# libtracer_view.a with view/html.c, which writes the page around a run's report.
HTML_PAGE_SRC := view/html/report.html view/html/report.css view/html/report.js
$(BUILD)/gen/html_page.c: $(HTML_PAGE_SRC) view/html/embed.py
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)python3 view/html/embed.py $(HTML_PAGE_SRC) $@

$(BUILD)/gen/html_page.o: $(BUILD)/gen/html_page.c view/html_page.h
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) -Iview $(CFLAGS) -c -o $@ $<

$(BUILD)/asan/gen/html_page.o: $(BUILD)/gen/html_page.c view/html_page.h
	@mkdir -p $(dir $@)
	@echo "  CC san  $<"
	$(Q)$(CC) $(CPPFLAGS) -Iview $(filter-out -O2 -D_FORTIFY_SOURCE=2,$(CFLAGS)) $(SAN_FLAGS) -c -o $@ $<

# ---- tracer-web's static files ----------------------------------------------
# The dashboard's pages (web/page/) and the HTML report's script and style, as C arrays (web/assets.h).
WEB_ASSET_SRC = $(sort $(wildcard web/page/*.html web/page/*.css web/page/*.js)) view/html/report.js \
                view/html/report.css
$(BUILD)/gen/web_assets.c: $(WEB_ASSET_SRC) web/embed_assets.py
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)python3 web/embed_assets.py $@ $(WEB_ASSET_SRC)

$(BUILD)/gen/web_assets.o: $(BUILD)/gen/web_assets.c web/assets.h
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) -Iweb $(CFLAGS) -c -o $@ $<

$(BUILD)/asan/gen/web_assets.o: $(BUILD)/gen/web_assets.c web/assets.h
	@mkdir -p $(dir $@)
	@echo "  CC san  $<"
	$(Q)$(CC) $(CPPFLAGS) -Iweb $(filter-out -O2 -D_FORTIFY_SOURCE=2,$(CFLAGS)) $(SAN_FLAGS) -c -o $@ $<

# ---- systemd units ------------------------------------------------------
# systemd/*.service.in name the binaries' directory @SBINDIR@ (@BINDIR@: tracer's); for the checks
# they point at this build's binaries (make install writes the real paths).
UNITS := tracer-collector tracer-processor tracer-ingest tracer-web tracer-export-otlp
$(BUILD)/systemd/%.service: systemd/%.service.in
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@SBINDIR@|$(abspath $(BUILD))|g' -e 's|@BINDIR@|$(abspath $(BUILD))|g' -e 's|@SYSCONFDIR@|/etc|g' \
		-e 's|@DOCDIR@|$(abspath docs)|g' $< > $@

units-check: $(BINARIES) $(UNITS:%=$(BUILD)/systemd/%.service)
	@tests/units/check-units.sh $(BUILD)

# docs/security.md's audit tables (files, line counts, at most 2100; the strict count beside it) are what
# $(BUILD)/tracer-collector is built from, read from its debug line table; the collector's system calls there
# match the code.
audit-check: $(BUILD)/tracer-collector
	@tests/audit/check-security-doc.sh $(BUILD)

# Workloads for the end-to-end tests (tests/e2e/).
$(BUILD)/tests/e2e/%: $(BUILD)/obj/tests/e2e/%.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^

# ---- libraries --------------------------------------------------------
$(BUILD)/obj/%.o: %.c $(SHM_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(call stage_inc,$<) $(CFLAGS) -c -o $@ $<

$(BUILD)/asan/obj/%.o: %.c $(SHM_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC san  $<"
	$(Q)$(CC) $(CPPFLAGS) $(call stage_inc,$<) $(filter-out -O2 -D_FORTIFY_SOURCE=2,$(CFLAGS)) $(SAN_FLAGS) -c -o $@ $<

# Every binary's --version, tracer-web's /metrics (tracer_build_info) and tracer export otlp's scope name the
# build: the package's version (debian/changelog) and the commit (git describe, no index refresh written;
# "unknown" outside a git checkout), compiled into one object, common/version.o, which every binary links.
# It alone is rebuilt when either changes: build/gen/build_id is rewritten (when make reads this file) only then.
TRACER_VERSION := $(or $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog 2>/dev/null),unknown)
TRACER_COMMIT := $(or $(shell git --no-optional-locks describe --always --dirty --abbrev=12 2>/dev/null),unknown)
$(shell mkdir -p $(BUILD)/gen && (echo '$(TRACER_VERSION) $(TRACER_COMMIT)' | cmp -s - $(BUILD)/gen/build_id || \
	echo '$(TRACER_VERSION) $(TRACER_COMMIT)' > $(BUILD)/gen/build_id))
BUILD_ID_OBJS := $(BUILD)/obj/common/version.o $(BUILD)/asan/obj/common/version.o
$(BUILD_ID_OBJS): $(BUILD)/gen/build_id
BUILD_ID_DEFS := -DTRACER_VERSION='"$(TRACER_VERSION)"' -DTRACER_COMMIT='"$(TRACER_COMMIT)"'
$(BUILD_ID_OBJS): CPPFLAGS += $(BUILD_ID_DEFS)

# Both sides of the ring, one object per side: a program links only the objects of what it calls
# (the collector: ring_producer.o, handover_producer.o, handover_peer.o). rm first: no stale member stays.
$(BUILD)/libtracer_shm.a: $(SHM_SRC:%.c=$(BUILD)/obj/%.o)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/asan/libtracer_shm.a: $(SHM_SRC:%.c=$(BUILD)/asan/obj/%.o)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# ---- tests ------------------------------------------------------------
$(BPF_TEST_SRC:%.c=$(BUILD)/obj/%.o) $(BPF_TEST_SRC:%.c=$(BUILD)/asan/obj/%.o): $(BPF_SKELS)
BPF_TEST_OBJS := $(patsubst tests/%.c,%.o,$(wildcard tests/test_bpf_*.c)) bpf_harness.o
$(BPF_TEST_OBJS:%=$(BUILD)/obj/tests/%) $(BPF_TEST_OBJS:%=$(BUILD)/asan/obj/tests/%): $(BPF_SKELS)
# The tests that run the real binaries share tests/daemon_harness.c.
DAEMON_TESTS := test_processor_main test_ingest_main test_cli_report test_bpf_rules test_cli_status \
                test_cli_export_state
# They run the programs of this build: building one of them builds those first (order-only: a program's
# rebuild does not relink the test), so `make BUILD/tests/test_X` in a fresh build dir does not skip.
$(DAEMON_TESTS:%=$(BUILD)/tests/%): $(BUILD)/obj/tests/daemon_harness.o | $(BINARIES)
$(DAEMON_TESTS:%=$(BUILD)/asan/tests/%): $(BUILD)/asan/obj/tests/daemon_harness.o | $(BINARIES)
$(BUILD)/tests/test_bpf_%: $(BUILD)/obj/tests/test_bpf_%.o $(BPF_TEST_SRC:%.c=$(BUILD)/obj/%.o) $(TEST_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LDLIBS) -lbpf -lelf -lz

$(BUILD)/asan/tests/test_bpf_%: $(BUILD)/asan/obj/tests/test_bpf_%.o $(BPF_TEST_SRC:%.c=$(BUILD)/asan/obj/%.o) \
		$(TEST_LIBS:$(BUILD)/%=$(BUILD)/asan/%)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LDLIBS) -lbpf -lelf -lz

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/test_%.o $(TEST_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LDLIBS)

$(BUILD)/asan/tests/test_%: $(BUILD)/asan/obj/tests/test_%.o $(TEST_LIBS:$(BUILD)/%=$(BUILD)/asan/%)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LDLIBS)

# The daemon tests (DAEMON_TESTS) run the programs of this build: order-only, so they are rebuilt first, and not
# run as tests themselves.
test: $(TESTS:%=$(BUILD)/tests/%) | $(BINARIES)
	@tests/run-tests.sh $^

test-asan: $(TESTS:%=$(BUILD)/asan/tests/%) | $(BINARIES)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		TRACER_TEST_SANITIZED=1 tests/run-tests.sh $^

# ---- fuzzing (clang libFuzzer) ----------------------------------------
# The same sources as the libraries (whose builds enforce the stages' include paths), in one program.
# common/version.c among them: the build's version and commit, as for BUILD_ID_OBJS.
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_check.h $(SHM_SRC) $(ALL_LIB_SRC) $(BUILD)/gen/html_page.c \
		$(BUILD)/gen/web_assets.c $(BUILD)/gen/build_id \
		$(SHM_HDR)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $@"
	$(Q)$(CLANG) $(CPPFLAGS) $(BUILD_ID_DEFS) $(addprefix -I,$(USES_tests)) -std=gnu11 $(WARN) -g -O1 \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $< $(SHM_SRC) $(ALL_LIB_SRC) \
		$(BUILD)/gen/html_page.c $(BUILD)/gen/web_assets.c $(FUZZ_EXTRA_SRC) $(PROC_LDLIBS) $(INGEST_LDLIBS) -lm

# A target's sources beyond those: the collector's rules parser (collector/load.h includes the skeleton).
$(BUILD)/fuzz/fuzz_collector_rules: FUZZ_EXTRA_SRC := collector/rules.c
$(BUILD)/fuzz/fuzz_collector_rules: collector/rules.c $(BPF_SKELS)
# The collector's tracer.conf reader, against the general parser (common/config.c, in ALL_LIB_SRC).
$(BUILD)/fuzz/fuzz_collector_conf: FUZZ_EXTRA_SRC := collector/conf.c
$(BUILD)/fuzz/fuzz_collector_conf: collector/conf.c collector/conf.h

fuzz-smoke: $(FUZZERS:%=$(BUILD)/fuzz/%)
	@tests/run-fuzz.sh $(FUZZ_SMOKE_SECONDS) $^

fuzz: $(FUZZERS:%=$(BUILD)/fuzz/%)
	@tests/run-fuzz.sh $(FUZZ_SECONDS) $^

# ---- benchmarks -------------------------------------------------------
$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BUILD)/libtracer_shm.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^

# The spool recovery benchmark calls the spool directly: the processor's library and its libraries.
$(BUILD)/bench/spool_recovery_bench: $(BUILD)/obj/bench/spool_recovery_bench.o $(PROC_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PROC_LDLIBS)

# The live runs benchmark (issue 14): the processor's session, steps, runs and live records, and the lake's
# store, in one process. $(BUILD)/asan/bench/live_bench: the same under ASan/UBSan.
LIVE_BENCH_LIBS := $(addprefix $(BUILD)/libtracer_,lake.a report.a attrib.a model.a naming.a records.a common.a)
$(BUILD)/bench/live_bench: $(BUILD)/obj/bench/live_bench.o $(LIVE_BENCH_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LAKE_LDLIBS)

$(BUILD)/asan/bench/live_bench: $(BUILD)/asan/obj/bench/live_bench.o $(LIVE_BENCH_LIBS:$(BUILD)/%=$(BUILD)/asan/%)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(LAKE_LDLIBS)

# tracer tune over 1,000 runs x 100 steps (issue 15): the CLI's loader (cli/ is a program: its object, before
# the libraries it calls), the lake's reads and the analysis, on a lake the benchmark makes with SQLite.
TUNE_BENCH_LIBS := $(addprefix $(BUILD)/libtracer_,view.a analysis.a lake.a records.a common.a)
$(BUILD)/bench/tune_bench: $(BUILD)/obj/bench/tune_bench.o $(TUNE_BENCH_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LAKE_LDLIBS) -lcurl -lm

$(BUILD)/asan/bench/tune_bench: $(BUILD)/asan/obj/bench/tune_bench.o \
		$(TUNE_BENCH_LIBS:$(BUILD)/%=$(BUILD)/asan/%)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(LAKE_LDLIBS) -lm

# The HTML report of a 100,000-process run (issue 16): the page's data and the page (view/html_data.c,
# view/html.c) from a report the benchmark writes; bench/html.sh opens the page in headless Chromium.
HTML_BENCH_LIBS := $(addprefix $(BUILD)/libtracer_,view.a status.a records.a common.a)
$(BUILD)/bench/html_bench: $(BUILD)/obj/bench/html_bench.o $(HTML_BENCH_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^

# The fleet simulator (issue 26): HOSTS hosts' records sealed and sent to the ingests with libcurl's multi
# interface; report/'s heartbeat and host writers, delivery/upload.c's backoff and Retry-After (and so its libraries).
FLEET_SIM_LIBS := $(addprefix $(BUILD)/libtracer_,delivery.a report.a attrib.a model.a naming.a status.a records.a \
                    common.a) $(BUILD)/libtracer_shm.a
$(BUILD)/bench/fleet_sim: $(BUILD)/obj/bench/fleet_sim.o $(FLEET_SIM_LIBS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PROC_LDLIBS)

# The kernel benchmark's calibration: empty programs on tracer's hooks (the statistics' own cost per
# call) and the loader that holds them attached. Built for the benchmarks only, never installed.
$(BUILD)/bench/calib.bpf.o: bench/calib.bpf.c
	@mkdir -p $(dir $@)
	@echo "  BPF     $<"
	$(Q)$(CLANG) -g -O2 -target bpf -Wall -Werror -c -o $@ $<

$(BUILD)/bench/calib: $(BUILD)/obj/bench/calib.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lbpf -lelf -lz

bench: $(addprefix bench-,$(BENCHES))

bench-ring: $(BUILD)/bench/ring_bench
	$(BUILD)/bench/ring_bench

bench-overhead: all $(BUILD)/bench/spawn
	bench/overhead.sh $(BUILD)

bench-agent: all $(BUILD)/bench/spawn
	bench/agent.sh $(BUILD)

bench-kernel: all $(BUILD)/bench/spawn $(BUILD)/bench/calib $(BUILD)/bench/calib.bpf.o
	bench/kernel.sh $(BUILD)

bench-delivery: all $(BUILD)/bench/delivery_bench $(BUILD)/bench/spool_recovery_bench
	bench/delivery.sh $(BUILD)

bench-live: $(BUILD)/bench/live_bench
	$(if $(filter postgresql,$(DB)),bench/with_pg.sh )$(BUILD)/bench/live_bench

bench-tune: $(BUILD)/bench/tune_bench $(BUILD)/tracer
	TRACER=$(BUILD)/tracer $(BUILD)/bench/tune_bench

bench-html: $(BUILD)/bench/html_bench
	bench/html.sh $(BUILD)

# tracer export table processes over a 1,000,000-process lake (issue 28): bench-tune's generator (RUNS=5000),
# peak RSS under 64 MiB in CSV and NDJSON, against tracer export table runs and sqlite3's count.
bench-export: $(BUILD)/bench/tune_bench $(BUILD)/tracer
	bench/export.sh $(BUILD)

# HOSTS simulated hosts into INGESTS tracer-ingests on one lake (issue 26); bench/fleet.sh starts them.
bench-fleet: all $(BUILD)/bench/fleet_sim
	bench/fleet.sh $(BUILD)

# The real pipeline (tests/e2e/data/Snakefile.align) plain and under the three daemons (issue 25).
bench-real: all
	bench/real.sh $(BUILD)

# ---- everything CI runs -----------------------------------------------
# The README's first command: a small real pipeline under tracer run.
# keys, a local tracer-ingest with a SQLite lake, the pipeline under tracer run, the report from the lake.
demo: all
	@demo/demo.sh $(BUILD)

# End-to-end tests: the real binaries on the real kernel (root and BPF needed; they say why they skip).
e2e: all $(TESTBINS) $(BUILD)/bench/fleet_sim
	@tests/e2e/run.sh $(BUILD)

check: deps
	@$(MAKE) --no-print-directory all lint layout-check readme-check test test-asan fuzz-smoke e2e units-check selinux-check audit-check install-check deb-check
	@echo "make check: all passed"

# An include against the data flow does not build: ingest/ cannot see the process model, nor the
# collector the lake, nor the lake the processor's stages; and the rule still lets each see its own.
LAYOUT_DENIED  := ingest:proctab.h collector:store.h lake:steps.h records:config.h cli:deliver.h
LAYOUT_ALLOWED := ingest:store.h cli:status.h processor:steps.h model:decode.h
layout_probe = echo '\#include "$(word 2,$(subst :, ,$(1)))"' | \
	$(CC) $(CPPFLAGS) $(call stage_inc,$(word 1,$(subst :, ,$(1)))/x.c) -fsyntax-only -x c - 2>/dev/null
layout-check:
	@$(foreach p,$(LAYOUT_DENIED),if $(call layout_probe,$(p)); then \
		echo "layout-check: $(p): a stage may include what its USES_ list does not give it"; exit 1; fi;)
	@$(foreach p,$(LAYOUT_ALLOWED),$(call layout_probe,$(p)) || \
		{ echo "layout-check: $(p): a stage cannot include what its USES_ list gives it"; exit 1; };)
	@echo "layout-check: includes against the data flow fail, along it build"

# Every source file is named by its folder's README.md (tests/docs/check-readmes.sh says which count).
readme-check:
	@tests/docs/check-readmes.sh

lint:
	@cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--inline-suppr --std=c11 -D_GNU_SOURCE -Iinclude $(addprefix -I,$(STAGES)) \
		--suppress=missingIncludeSystem $(STAGES) tests bench

deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ] && [ "$$(id -u)" != 0 ]; then \
		echo "deps: missing packages: $$missing; run 'sudo make deps'" >&2; exit 1; \
	elif [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "deps: all installed"; fi

clean:
	rm -rf $(BUILD)

.SECONDARY:

include mk/selinux.mk
include mk/man.mk
include mk/install.mk
