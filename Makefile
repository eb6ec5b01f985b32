# stackwalk: stackcount and stacksnoop on eBPF, every kernel from 4.1.
#
#   make          install missing build packages, build build/stackcount
#   make demo     build, then count stacks of a tracepoint for a few seconds
#   make test     build, then run every test (bats, and qemu VMs if possible)
#   make bench    per-event, start-up and memory costs (see README)
#   make fuzz     fuzz the readers of untrusted files for FUZZ_SECONDS (60)
#
# Everything generated goes to build/.

BUILD     := build
CC        := gcc
CXX       := g++
CLANG     ?= clang
BPFTOOL   ?= bpftool
PYTHON    ?= python3

CFLAGS    := -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
             -I$(BUILD)/gen -I$(BUILD)/bpf -Isrc
LDFLAGS   := -static
LDLIBS    := -lbpf -lelf -llzma -lz -liberty
# -mcpu=v1: no JLT/JLE (4.14) or JMP32 (5.1); the fp walker loads on 4.1
BPFCFLAGS := -O2 -g -target bpf -mcpu=v1 -D__TARGET_ARCH_x86 -Wall -Werror \
             -I/usr/include/$(shell $(CC) -dumpmachine) -Ibpf -I$(BUILD)/gen

WALKERS   := getstack stackmap fp
BPF_OBJS  := $(WALKERS:%=$(BUILD)/bpf/%.bpf.o)
SKELS     := $(WALKERS:%=$(BUILD)/bpf/%.skel.h)
GEN       := $(BUILD)/gen/fp_key.h $(BUILD)/gen/fp_walk.h
SW_SRCS   := src/session.c src/explain.c src/walker.c src/walker_read.c src/walker_events.c src/walkers.c \
             src/walker_getstack.c src/walker_stackmap.c src/walker_fp.c src/vec.c src/htab.c src/tracepipe.c src/probe.c src/output.c src/frame.c src/out_json.c src/pprof.c src/svg.c src/deltas.c src/cmd.c \
             src/calib.c src/elf_file.c src/debuginfo.c src/demangle.c src/perfmap.c src/usdt.c src/libpath.c src/ksyms.c \
             src/procs.c src/sideband.c src/symbolize.c src/untrusted.c \
             compat/kfeatures.c compat/kversion.c compat/tracefs.c compat/attach.c \
             compat/semaphore.c
SW_OBJS   := $(SW_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/sources.o $(BUILD)/obj/flamegraph_js.o

# Debian packages the build and the tests need.
DEPS      := clang llvm libbpf-dev libelf-dev zlib1g-dev bpftool python3 \
             gcc make systemtap-sdt-dev bats file man-db liblzma-dev libiberty-dev \
             g++ xz-utils
# Only for make fuzz and make test: clang's libFuzzer and sanitizer runtimes.
FUZZ_DEPS := libclang-rt-dev
# Only for make test: formats.bats reads the outputs with these.
TEST_PKGS := jq golang-go chromium

.PHONY: all deps test-deps demo test vmtest vmtest-deps bench clean
all: $(BUILD)/stackcount $(BUILD)/stacksnoop

# Installs only what is missing, so a ready machine pays one dpkg query.
deps: $(BUILD)/.deps
test-deps: $(BUILD)/.test-deps
$(BUILD)/.fuzz-deps: DEPS := $(FUZZ_DEPS)
$(BUILD)/.test-deps: DEPS := $(TEST_PKGS)
$(BUILD)/.deps $(BUILD)/.fuzz-deps $(BUILD)/.test-deps: Makefile
	@missing=$$(for p in $(DEPS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq $$missing >/dev/null; \
	fi
	@mkdir -p $(@D) && touch $@

$(GEN): gen/walker.py | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(PYTHON) gen/walker.py $(BUILD)/gen/fp_key.h $(BUILD)/gen/fp_walk.h

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c bpf/common.bpf.h bpf/stackwalk.h $(GEN) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CLANG) $(BPFCFLAGS) -c $< -o $@

# The fp walker must load on 4.1-4.5: the build fails if it could not.
$(BUILD)/bpf/fp.checked: $(BUILD)/bpf/fp.bpf.o $(BUILD)/legacy_limits
	$(BUILD)/legacy_limits $< > $@.log || { cat $@.log; exit 1; }
	@touch $@

$(BUILD)/legacy_limits: tests/legacy_limits.c | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -o $@ $< -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(BUILD)/gen/sources.c: gen/embed.py bpf/stackwalk.h bpf/common.bpf.h \
		bpf/getstack.bpf.c bpf/stackmap.bpf.c bpf/fp.bpf.c $(GEN)
	$(PYTHON) gen/embed.py $@ \
		getstack=bpf/stackwalk.h,bpf/common.bpf.h,bpf/getstack.bpf.c \
		stackmap=bpf/stackwalk.h,bpf/common.bpf.h,bpf/stackmap.bpf.c \
		fp=bpf/stackwalk.h,bpf/common.bpf.h,$(BUILD)/gen/fp_key.h,$(BUILD)/gen/fp_walk.h,bpf/fp.bpf.c

$(BUILD)/obj/sources.o: $(BUILD)/gen/sources.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# the script every --svg flame graph carries
$(BUILD)/gen/flamegraph_js.c: gen/embed_text.py gen/embed.py src/flamegraph.js
	@mkdir -p $(@D)
	$(PYTHON) gen/embed_text.py $@ sw_svg_script src/flamegraph.js

$(BUILD)/obj/flamegraph_js.o: $(BUILD)/gen/flamegraph_js.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c $(SKELS) $(GEN) $(wildcard src/*.h compat/*.h bpf/*.h) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# One mechanism, two front ends.
$(BUILD)/stackcount $(BUILD)/stacksnoop: $(BUILD)/%: $(BUILD)/obj/src/%.o $(SW_OBJS) $(BUILD)/bpf/fp.checked
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

# A tracepoint that fires on any machine: every context switch, for 3 s.
demo: $(BUILD)/stackcount
	$(BUILD)/stackcount -d -D 3 t:sched:sched_switch

include tests/workloads/workloads.mk
include tests/fixtures/fixtures.mk
include tests/unit/unit.mk
include tests/vm/vm.mk
include tests/bench/bench.mk
include tests/fuzz/fuzz.mk

TEST_DEPS := $(BUILD)/stackcount $(BUILD)/stacksnoop $(WORKLOADS) $(BUILD)/legacy_limits $(FIXTURE_OBJS) \
             $(BUILD)/tests/test_syms $(BUILD)/tests/test_compat $(BUILD)/tests/test_demangle \
             $(FUZZ_BIN) $(FUZZ_SEEDS).done

test: $(TEST_DEPS) $(BUILD)/.test-deps vmtest-deps
	@tests/run.sh

# The kernel matrix: Debian's cloud 6.1 (kprobes, ORC) and a 6.1 built with
# frame pointers, booted under qemu with the static tool and workloads.
vmtest-deps: $(BUILD)/stackcount $(BUILD)/stacksnoop $(STATIC_WORKLOADS) $(VM_KERNELS)
vmtest: vmtest-deps
	@tests/vm/run.sh

# Built by pattern rules, but not to be deleted as intermediates.
.SECONDARY: $(BPF_OBJS) $(SKELS)

clean:
	rm -rf $(BUILD)/obj $(BUILD)/bpf $(BUILD)/gen $(BUILD)/stackcount $(BUILD)/stacksnoop \
		$(BUILD)/tests $(BUILD)/legacy_limits $(BUILD)/fuzz
