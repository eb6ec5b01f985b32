# Unit test of the symbol layer: build/tests/test_syms and its fixtures.
# Included by the top Makefile, which provides CC, CFLAGS and BUILD.
# Run as root:  build/tests/test_syms   (or: make test-syms)

SYMS_SRCS := src/elf_file.c src/debuginfo.c src/demangle.c src/perfmap.c src/usdt.c src/ksyms.c src/procs.c \
	     src/sideband.c src/symbolize.c src/libpath.c src/untrusted.c src/vec.c src/htab.c
SYMS_HDRS := $(SYMS_SRCS:.c=.h)
# the tool links libelf and zlib statically; so does its test
SYMS_LIBS ?= -static -lelf -llzma -lz -liberty
# the fixture is an ordinary dynamic program: it must map libraries
SYMS_FX_FLAGS = -std=gnu11 -O2 -g -Wall -Wextra -Werror -rdynamic
SYMS_SDT_H = $(firstword $(wildcard /usr/include/sys/sdt.h \
		/usr/include/*/sys/sdt.h))

$(BUILD)/tests/test_syms: tests/unit/test_syms.c $(SYMS_SRCS) $(SYMS_HDRS) \
		$(BUILD)/tests/fx_pie $(BUILD)/tests/fx_nopie
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Isrc -o $@ tests/unit/test_syms.c $(SYMS_SRCS) \
		$(SYMS_LIBS)

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

$(BUILD)/tests/test_demangle: tests/unit/test_demangle.c src/demangle.c src/demangle.h src/htab.c src/htab.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ tests/unit/test_demangle.c src/demangle.c src/htab.c -static -liberty
