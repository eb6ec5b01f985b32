# Unit test of the symbol layer: build/tests/test_syms and its fixtures.
# Included by the top Makefile, which provides CC, CFLAGS and BUILD.
# Run as root:  build/tests/test_syms   (or: make test-syms)

SYMS_SRCS := src/elf_file.c src/debuginfo.c src/debuginfod.c src/demangle.c src/perfmap.c src/usdt.c src/ksyms.c src/procs.c \
	     src/sideband.c src/symbolize.c src/libpath.c src/untrusted.c src/elf_image.c src/vec.c src/htab.c
SYMS_HDRS := $(SYMS_SRCS:.c=.h)
# the tool links libelf and zlib statically; so does its test
SYMS_LIBS ?= -static -lelf -llzma -lz -liberty
# the fixture is an ordinary dynamic program: it must map libraries
SYMS_FX_FLAGS = -std=gnu11 -O2 -g -Wall -Wextra -Werror -rdynamic
SYMS_SDT_H = $(firstword $(wildcard /usr/include/sys/sdt.h \
		/usr/include/*/sys/sdt.h))

$(BUILD)/tests/test_syms: tests/unit/test_syms.c tests/unit/unit.h $(SYMS_SRCS) $(SYMS_HDRS) \
		$(BUILD)/tests/fx_pie $(BUILD)/tests/fx_nopie | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DSIDEBAND_TEST_HOOK -Isrc -o $@ tests/unit/test_syms.c \
		$(SYMS_SRCS) $(SYMS_LIBS)

$(BUILD)/tests/fx_%.sem.o: tests/unit/test_syms.c | $(BUILD)/.test-deps
	@test -n "$(SYMS_SDT_H)" || \
		{ echo "sys/sdt.h missing: apt-get install systemtap-sdt-dev" >&2; exit 1; }
	@mkdir -p $(@D)
	$(CC) $(SYMS_FX_FLAGS) $(if $(filter nopie,$*),-fno-pie,-fPIE) \
		-DSYMS_FIXTURE_SEM -c -o $@ $<

$(BUILD)/tests/fx_pie: tests/unit/test_syms.c $(BUILD)/tests/fx_pie.sem.o
	$(CC) $(SYMS_FX_FLAGS) -fPIE -pie -DSYMS_FIXTURE -o $@ $^

$(BUILD)/tests/fx_nopie: tests/unit/test_syms.c $(BUILD)/tests/fx_nopie.sem.o
	$(CC) $(SYMS_FX_FLAGS) -fno-pie -no-pie -DSYMS_FIXTURE -o $@ $^

.PHONY: test-syms
test-syms: $(BUILD)/tests/test_syms
	$(BUILD)/tests/test_syms

$(BUILD)/tests/test_compat: tests/unit/test_compat.c compat/kversion.c compat/kfeatures.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ tests/unit/test_compat.c compat/kversion.c

$(BUILD)/tests/test_kbtf: tests/unit/test_kbtf.c compat/kbtf.c compat/kbtf.h tests/unit/unit.h | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ tests/unit/test_kbtf.c compat/kbtf.c -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic

$(BUILD)/tests/test_demangle: tests/unit/test_demangle.c src/demangle.c src/demangle.h src/htab.c src/htab.h | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ tests/unit/test_demangle.c src/demangle.c src/htab.c -static -liberty

# Unwind tables: build/tests/test_cfi compares every row with readelf's
# frames-interp listing and libdw's frames; build/tests/cfi_dump prints a
# binary's rows.
CFI_SRCS := src/cfi.c src/cfi_cache.c src/cfi_disk.c src/kept.c
CFI_HDRS := $(CFI_SRCS:.c=.h) bpf/cfi.h
# the fixture's CFI is hand-written: what a compiler would not promise
CFI_FX_FLAGS = -std=gnu11 -O1 -g -Wall -Wextra -Werror -DCFI_FIXTURE
CFI_FIXTURES := $(BUILD)/tests/fx_cfi $(BUILD)/tests/fx_cfi_dbg $(BUILD)/tests/fx_cfi_dbg.stripped

# libdw, the second oracle (tests/unit/cfi_libdw.c), linked dynamically:
# its static archive wants every compression library libelf can use
CFI_TEST_LIBS ?= -ldw -lelf -llzma -lz -liberty

$(BUILD)/tests/test_cfi: tests/unit/test_cfi.c tests/unit/cfi_sigframe.c tests/unit/cfi_libdw.c \
		tests/unit/cfi_libdw.h tests/unit/unit.h $(SYMS_SRCS) \
		$(SYMS_HDRS) $(CFI_SRCS) $(CFI_HDRS) $(CFI_FIXTURES) | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Isrc -o $@ tests/unit/test_cfi.c tests/unit/cfi_sigframe.c \
		tests/unit/cfi_libdw.c $(SYMS_SRCS) $(CFI_SRCS) $(CFI_TEST_LIBS)

$(BUILD)/tests/cfi_dump: tests/unit/cfi_dump.c $(SYMS_SRCS) $(SYMS_HDRS) $(CFI_SRCS) $(CFI_HDRS) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Isrc -o $@ tests/unit/cfi_dump.c $(SYMS_SRCS) $(CFI_SRCS) \
		$(SYMS_LIBS)

$(BUILD)/tests/fx_cfi: tests/unit/test_cfi.c
	@mkdir -p $(@D)
	$(CC) $(CFI_FX_FLAGS) -o $@ $<

# crt's code in .eh_frame, the fixture's own in .debug_frame
$(BUILD)/tests/fx_cfi_dbg: tests/unit/test_cfi.c
	@mkdir -p $(@D)
	$(CC) $(CFI_FX_FLAGS) -DCFI_FIXTURE_DEBUG_FRAME -fno-asynchronous-unwind-tables \
		-o $@ $<

# stripped of both: only its debug file (compressed) has CFI
$(BUILD)/tests/fx_cfi_dbg.stripped: $(BUILD)/tests/fx_cfi_dbg
	objcopy --only-keep-debug --compress-debug-sections=zlib $< $(BUILD)/tests/fx_cfi_dbg.debug
	objcopy --strip-debug --remove-section=.eh_frame --remove-section=.eh_frame_hdr \
		--add-gnu-debuglink=$(BUILD)/tests/fx_cfi_dbg.debug $< $@

.PHONY: test-cfi
test-cfi: $(BUILD)/tests/test_cfi
	$(BUILD)/tests/test_cfi

$(BUILD)/tests/test_insn: tests/unit/test_insn.c tests/unit/unit.h src/insn.c src/insn.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ tests/unit/test_insn.c src/insn.c
