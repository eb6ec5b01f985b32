# stackwalk: stackcount and stacksnoop on eBPF, every kernel from 4.1.
#
#   make          install missing build packages, build build/stackcount
#                 and build/stacksnoop
#   make demo     build, then count stacks of a tracepoint for a few seconds
#   make test     install missing test packages, build, then run every test
#                 (bats, and qemu VMs if possible)
#   make bench    per-event, start-up and memory costs (see README)
#   make fuzz     fuzz the readers of untrusted files for FUZZ_SECONDS (60)
#   make install  the binaries, manual pages and bash completion under
#                 $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall
#   make deb      build/stackwalk_VERSION_amd64.deb
#
# Everything generated goes to build/.

# The release: --version, the installed manual pages and the package all
# take it from here.
VERSION   := 0.1.0

BUILD     ?= build
# make predefines CC as cc: ?= alone would never choose gcc
ifeq ($(origin CC),default)
CC        := gcc
endif
CXX       ?= g++
CLANG     ?= clang
BPFTOOL   ?= bpftool
PYTHON    ?= python3
INSTALL   ?= install
PREFIX    ?= /usr/local
DESTDIR   ?=

CFLAGS    := -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
             -I$(BUILD)/gen -I$(BUILD)/bpf -Isrc
LDFLAGS   := -static
LDLIBS    := -lbpf -lelf -llzma -lz -liberty
# -mcpu=v1: no JLT/JLE (4.14) or JMP32 (5.1); the fp walker loads on 4.1.
# Expanded when used: on a fresh machine gcc comes with the build packages.
BPFCFLAGS  = -O2 -g -target bpf -mcpu=v1 -D__TARGET_ARCH_x86 -Wall -Werror \
             -I/usr/include/$(shell $(CC) -dumpmachine) -Ibpf -I$(BUILD)/gen

WALKERS   := getstack cfi stackmap fp cfi41
# the walkers' objects, and peek: calibration's reader of kernel memory
BPF_OBJS  := $(WALKERS:%=$(BUILD)/bpf/%.bpf.o) $(BUILD)/bpf/peek.bpf.o
SKELS     := $(WALKERS:%=$(BUILD)/bpf/%.skel.h) $(BUILD)/bpf/peek.skel.h
GEN       := $(BUILD)/gen/fp_key.h $(BUILD)/gen/fp_walk.h
SW_SRCS   := src/session.c src/session_opts.c src/session_unwind.c src/session_cmd.c src/session_lost.c src/explain.c src/walker.c src/walker_read.c src/walker_events.c src/walkers.c \
             src/walker_cfi.c src/walker_cfi41.c src/walker_getstack.c src/walker_stackmap.c src/walker_fp.c src/unwind.c src/uframe.c src/vma_calib.c src/needed.c src/cfi.c src/cfi_cache.c src/cfi_disk.c src/kept.c src/vec.c src/htab.c src/tracepipe.c src/probe.c src/insn.c src/output.c src/frame.c src/out_json.c src/pprof.c src/svg.c src/deltas.c src/cmd.c \
             src/calib.c src/task_calib.c src/elf_file.c src/debuginfo.c src/debuginfod.c src/demangle.c src/perfmap.c src/usdt.c src/libpath.c src/ksyms.c \
             src/procs.c src/sideband.c src/symbolize.c src/untrusted.c src/outfile.c src/elf_image.c \
             compat/kfeatures.c compat/kbtf.c compat/kversion.c compat/tracefs.c compat/attach.c \
             compat/semaphore.c compat/mapkeys.c
SW_OBJS   := $(SW_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/sources.o $(BUILD)/obj/flamegraph_js.o

# Debian packages the build needs (llvm for the objcopy that slims the
# embedded BPF objects; libc6-dev and linux-libc-dev come with
# zlib1g-dev), and those only the tests need: bats; g++ for the cxx
# workload; sdt.h for the USDT workloads and the symbol unit test's
# fixtures; man-db to render the pages; xz for MiniDebugInfo fixtures;
# clang's libFuzzer and sanitizer runtimes for make fuzz; lintian to check
# the package; binutils' readelf and objcopy, and elfutils' libdw, for the
# unwind table test; elfutils' debuginfod server and client for the
# debug-file fetch tests; jq, go tool pprof and Chromium to read the JSON, pprof
# and SVG outputs (formats.bats).
BUILD_PKGS := clang llvm libbpf-dev libelf-dev zlib1g-dev liblzma-dev libiberty-dev \
              bpftool python3 gcc make
TEST_PKGS  := bats g++ systemtap-sdt-dev man-db xz-utils libclang-rt-dev lintian \
              binutils libdw-dev jq golang-go chromium gdb strace debuginfod

.PHONY: all deps test-deps test-build demo test vmtest vmtest-deps bench install uninstall deb clean FORCE
all: $(BUILD)/stackcount $(BUILD)/stacksnoop

# Installs only what is missing, so a ready machine pays one dpkg query.
define install_missing
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq $$missing >/dev/null; \
	fi
	@mkdir -p $(@D) && touch $@
endef

# Each stamp is remade when the Makefile, and so maybe its list, changes.
deps: $(BUILD)/.deps
$(BUILD)/.deps: Makefile
	$(call install_missing,$(BUILD_PKGS))
test-deps: $(BUILD)/.test-deps
$(BUILD)/.test-deps: Makefile | $(BUILD)/.deps
	$(call install_missing,$(TEST_PKGS))

$(GEN): gen/walker.py | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(PYTHON) gen/walker.py $(BUILD)/gen/fp_key.h $(BUILD)/gen/fp_walk.h

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(GEN) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CLANG) $(BPFCFLAGS) -c $< -o $@

# The fp walker must load on 4.1-4.5, and the getstack and cfi walkers'
# programs on 4.18-5.1's 4,096 instructions each, and cfi41's on 4.1
# (but for the verifier's walk, which only 4.1 itself can count: see
# gen/legacy_limits.c): the build fails if any could not.
$(BUILD)/bpf/fp.checked: $(BUILD)/bpf/fp.bpf.o $(BUILD)/legacy_limits
	$(BUILD)/legacy_limits $< > $@.log || { cat $@.log; exit 1; }
	@touch $@

$(BUILD)/bpf/getstack.checked $(BUILD)/bpf/cfi.checked: $(BUILD)/bpf/%.checked: $(BUILD)/bpf/%.bpf.o $(BUILD)/legacy_limits
	$(BUILD)/legacy_limits --insns $< > $@.log || { cat $@.log; exit 1; }
	@touch $@

$(BUILD)/bpf/cfi41.checked: $(BUILD)/bpf/cfi41.bpf.o $(BUILD)/legacy_limits
	$(BUILD)/legacy_limits --pruned $< > $@.log || { cat $@.log; exit 1; }
	@touch $@

$(BUILD)/legacy_limits: gen/legacy_limits.c | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -o $@ $< -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic

# The tools embed each object without its line records and DWARF (see
# gen/bpf_slim.py); build/bpf/NAME.bpf.o keeps them for bpftool and llvm-objdump.
$(BUILD)/bpf/%.slim.o: $(BUILD)/bpf/%.bpf.o gen/bpf_slim.py
	$(PYTHON) gen/bpf_slim.py $< $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.slim.o
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(BUILD)/gen/sources.c: gen/embed.py bpf/stackwalk.h bpf/common.bpf.h \
		bpf/getstack.bpf.h bpf/getstack.bpf.c bpf/cfi.bpf.c \
		bpf/stackmap.bpf.c bpf/fp.bpf.c bpf/cfi41.bpf.c bpf/task41.bpf.h bpf/printk.bpf.h bpf/cfi.h bpf/cfi_maps.bpf.h bpf/cfi_walk.bpf.h $(GEN)
	$(PYTHON) gen/embed.py $@ \
		cfi=bpf/stackwalk.h,bpf/common.bpf.h,bpf/cfi.h,bpf/cfi_maps.bpf.h,bpf/cfi_walk.bpf.h,bpf/getstack.bpf.h,bpf/cfi.bpf.c \
		getstack=bpf/stackwalk.h,bpf/common.bpf.h,bpf/getstack.bpf.h,bpf/getstack.bpf.c \
		stackmap=bpf/stackwalk.h,bpf/common.bpf.h,bpf/stackmap.bpf.c \
		fp=bpf/stackwalk.h,bpf/common.bpf.h,bpf/printk.bpf.h,$(BUILD)/gen/fp_key.h,$(BUILD)/gen/fp_walk.h,bpf/task41.bpf.h,bpf/fp.bpf.c \
		cfi41=bpf/stackwalk.h,bpf/common.bpf.h,bpf/printk.bpf.h,$(BUILD)/gen/fp_key.h,$(BUILD)/gen/fp_walk.h,bpf/task41.bpf.h,bpf/cfi.h,bpf/cfi_maps.bpf.h,bpf/cfi41.bpf.c

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

# Rewritten only when VERSION changes, and so only then rebuilds anything.
$(BUILD)/gen/version.h: FORCE
	@mkdir -p $(@D)
	@echo '#define STACKWALK_VERSION "$(VERSION)"' > $@.new
	@cmp -s $@.new $@ && rm $@.new || mv $@.new $@
$(BUILD)/obj/src/session.o $(BUILD)/obj/src/session_opts.o: $(BUILD)/gen/version.h

$(BUILD)/obj/%.o: %.c $(SKELS) $(GEN) $(wildcard src/*.h compat/*.h bpf/*.h) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# One mechanism, two front ends.
$(BUILD)/stackcount $(BUILD)/stacksnoop: $(BUILD)/%: $(BUILD)/obj/src/%.o $(SW_OBJS) $(BUILD)/bpf/fp.checked $(BUILD)/bpf/getstack.checked $(BUILD)/bpf/cfi.checked $(BUILD)/bpf/cfi41.checked
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

# The installed pages carry the version in their footer.
MAN_PAGES := $(BUILD)/man/man8/stackcount.8 $(BUILD)/man/man8/stacksnoop.8
$(BUILD)/man/man8/%.8: man/man8/%.8 $(BUILD)/gen/version.h
	@mkdir -p $(@D)
	sed '1s/^\(\.TH .*\) "stackwalk" /\1 "stackwalk $(VERSION)" /' $< > $@

# install_tree DIR: what is installed, under DIR (a PREFIX). bash-completion
# loads a completion by the command's name: stacksnoop's is a link.
COMPLETIONS := share/bash-completion/completions
define install_tree
	$(INSTALL) -d $(1)/sbin $(1)/share/man/man8 $(1)/$(COMPLETIONS)
	$(INSTALL) -m 0755 $(BUILD)/stackcount $(BUILD)/stacksnoop $(1)/sbin
	$(INSTALL) -m 0644 $(MAN_PAGES) $(1)/share/man/man8
	$(INSTALL) -m 0644 src/completion.bash $(1)/$(COMPLETIONS)/stackcount
	ln -sfn stackcount $(1)/$(COMPLETIONS)/stacksnoop
endef

install: $(BUILD)/stackcount $(BUILD)/stacksnoop $(MAN_PAGES) src/completion.bash
	$(call install_tree,$(DESTDIR)$(PREFIX))

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,sbin/stackcount sbin/stacksnoop \
		share/man/man8/stackcount.8 share/man/man8/stacksnoop.8 \
		$(COMPLETIONS)/stackcount $(COMPLETIONS)/stacksnoop)

# Staged by the install above, finished by gen/deb.sh: no debian/ folder, and
# the package holds exactly what `make install` puts on a machine.
DEB_ARCH       := amd64
DEB            := $(BUILD)/stackwalk_$(VERSION)_$(DEB_ARCH).deb
DEB_ROOT       := $(BUILD)/deb
DEB_MAINTAINER ?= The stackwalk authors <maintainers@users.noreply.a-seed-85d4642b.example>
deb: $(DEB)
$(DEB): $(BUILD)/stackcount $(BUILD)/stacksnoop $(MAN_PAGES) src/completion.bash \
		gen/deb.sh LICENSE Makefile
	rm -rf $(DEB_ROOT)
	$(call install_tree,$(DEB_ROOT)/usr)
	CC="$(CC)" gen/deb.sh $(DEB_ROOT) $(VERSION) $(DEB_ARCH) "$(DEB_MAINTAINER)" $@ \
		$(patsubst -l%,lib%.a,$(LDLIBS)) libc.a libgcc.a libgcc_eh.a

# A tracepoint that fires on any machine: every context switch, for 3 s.
demo: $(BUILD)/stackcount
	$(BUILD)/stackcount -d -D 3 t:sched:sched_switch

include tests/workloads/workloads.mk
include tests/fixtures/fixtures.mk
include tests/unit/unit.mk
include tests/vm/vm.mk
include tests/bench/bench.mk
include tests/fuzz/fuzz.mk

TEST_DEPS := $(BUILD)/.test-deps $(DEB) $(BUILD)/stackcount $(BUILD)/stacksnoop $(WORKLOADS) $(STATIC_WORKLOADS) $(BUILD)/legacy_limits $(FIXTURE_OBJS) \
             $(BUILD)/tests/test_syms $(BUILD)/tests/test_compat $(BUILD)/tests/test_kbtf $(BUILD)/tests/test_demangle $(BUILD)/tests/test_insn \
             $(FUZZ_BIN) $(FUZZ_SEEDS).done $(BUILD)/tests/test_cfi $(BUILD)/tests/cfi_dump \
             $(BENCH_PROGS)

# everything the host suites need, without running them (bats tests/FILE.bats)
test-build: $(TEST_DEPS)

test: $(TEST_DEPS) vmtest-deps
	@tests/run.sh

# The kernel matrix: Debian's cloud 6.1 and 6.12 (kprobes, ORC) and a 6.1
# built with frame pointers, booted under qemu with the static tool and
# workloads.
vmtest-deps: $(BUILD)/stackcount $(BUILD)/stacksnoop $(STATIC_WORKLOADS) $(WL_DIR)/ia32 $(WL_DIR)/cfipaths $(WL_DIR)/cfipaths_o2 $(VM_KERNELS)
vmtest: vmtest-deps
	@tests/vm/run.sh

# Built by pattern rules, but not to be deleted as intermediates.
.SECONDARY: $(BPF_OBJS) $(SKELS)

clean:
	rm -rf $(BUILD)/obj $(BUILD)/bpf $(BUILD)/gen $(BUILD)/stackcount $(BUILD)/stacksnoop \
		$(BUILD)/tests $(BUILD)/legacy_limits $(BUILD)/fuzz $(BUILD)/man $(DEB_ROOT) $(BUILD)/stackwalk_*.deb
