# The fuzz target of the readers of untrusted files (tests/fuzz/fuzz.c),
# with clang's libFuzzer under ASan and UBSan, linked dynamically.
# Included by the top Makefile.
#
#   make fuzz                  fuzz for FUZZ_SECONDS; new inputs are kept in
#                              build/fuzz/corpus, a crash in build/fuzz/crash-*
#   build/fuzz/fuzz FILE...    run those inputs only (a crash, to debug it)
#
# tests/fuzz.bats runs a fixed number of inputs of it within `make test`.
# Inputs are written as files to TMPDIR, on tmpfs here: on a disk, the
# journal makes it three times slower.

FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_BIN     := $(FUZZ_DIR)/fuzz
FUZZ_SEEDS   := $(FUZZ_DIR)/seeds
FUZZ_SRCS    := src/elf_file.c src/debuginfo.c src/debuginfod.c src/perfmap.c src/untrusted.c src/elf_image.c src/usdt.c src/vec.c \
                src/cfi.c
FUZZ_CFLAGS  := -std=gnu11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

$(FUZZ_BIN): tests/fuzz/fuzz.c $(FUZZ_SRCS) $(FUZZ_SRCS:.c=.h) bpf/cfi.h | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz.c $(FUZZ_SRCS) -lelf -llzma -lz

# The stamp is beside the seeds: libFuzzer takes every file in the folder.
$(FUZZ_SEEDS).done: tests/fuzz/seeds.sh $(addprefix $(WL_DIR)/,paths usdt libvictim.so ia32 cxx) \
		$(BUILD)/tests/fx_cfi $(BUILD)/tests/fx_cfi_dbg
	tests/fuzz/seeds.sh $(FUZZ_SEEDS) $(WL_DIR) $(BUILD)/tests
	@touch $@

.PHONY: fuzz
fuzz: $(FUZZ_BIN) $(FUZZ_SEEDS).done
	@mkdir -p $(FUZZ_DIR)/corpus
	TMPDIR=/dev/shm $(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(FUZZ_DIR)/ \
		$(FUZZ_DIR)/corpus $(FUZZ_SEEDS)
