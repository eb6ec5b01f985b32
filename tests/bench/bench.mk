# Benchmarks: speed and memory, measured, never asserted in a test.
BENCH_DIR := $(BUILD)/tests/bench

$(BUILD)/tests/bench_symbols: tests/bench/bench_symbols.c $(SYMS_SRCS) $(SYMS_HDRS) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ tests/bench/bench_symbols.c $(SYMS_SRCS) $(SYMS_LIBS)

# unwind tables: rows, bytes and build time per binary and per process
$(BUILD)/tests/bench_cfi: tests/bench/bench_cfi.c tests/unit/unit.h $(SYMS_SRCS) $(SYMS_HDRS) \
		$(CFI_SRCS) $(CFI_HDRS) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ tests/bench/bench_cfi.c $(SYMS_SRCS) $(CFI_SRCS) $(SYMS_LIBS)

.PHONY: bench-symbols
bench-symbols: $(BUILD)/tests/bench_symbols
	@$(BUILD)/tests/bench_symbols

$(BENCH_DIR)/spin: tests/bench/spin.c
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -o $@ $<

$(BENCH_DIR)/measure: tests/bench/measure.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $<

$(BENCH_DIR)/floor.bpf.o: tests/bench/floor.bpf.c | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CLANG) $(BPFCFLAGS) -c $< -o $@

$(BENCH_DIR)/floor.skel.h: $(BENCH_DIR)/floor.bpf.o
	$(BPFTOOL) gen skeleton $< name floor_bpf > $@

$(BENCH_DIR)/floor: tests/bench/floor.c $(BENCH_DIR)/floor.skel.h \
		compat/attach.c compat/tracefs.c compat/kfeatures.c compat/kbtf.c compat/kversion.c \
		src/elf_file.c src/debuginfo.c src/debuginfod.c src/untrusted.c src/elf_image.c src/vec.c
	$(CC) $(CFLAGS) -I$(BENCH_DIR) -o $@ tests/bench/floor.c compat/attach.c \
		compat/tracefs.c compat/kfeatures.c compat/kbtf.c compat/kversion.c src/elf_file.c \
		src/debuginfo.c src/debuginfod.c src/untrusted.c src/elf_image.c src/vec.c $(LDFLAGS) $(LDLIBS)

# bpftrace runs beside us when Debian has it
$(BENCH_DIR)/.bpftrace:
	@command -v bpftrace > /dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace > /dev/null; }
	@mkdir -p $(@D) && touch $@

# the benchmark's own programs: built by make test too, so that a change of
# the modules they call cannot leave make bench broken unseen
BENCH_PROGS := $(BENCH_DIR)/spin $(BENCH_DIR)/measure $(BENCH_DIR)/floor \
	       $(BUILD)/tests/bench_symbols $(BUILD)/tests/bench_cfi

.PHONY: bench
bench: $(BUILD)/stackcount $(BENCH_PROGS) $(WL_DIR)/spawner $(BENCH_DIR)/.bpftrace bench-symbols
	@tests/bench/run.sh
