# Test workloads: programs whose call paths and counts the tests know.
# Frame pointers everywhere, no inlining or sibling calls, so a stack is
# exactly the calls in the source.
WL_CFLAGS := -O0 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
             -fno-optimize-sibling-calls -fno-inline -Wall -Wextra -Werror
WL_DIR    := $(BUILD)/tests/workloads
WORKLOADS := $(WL_DIR)/paths $(WL_DIR)/manypaths $(WL_DIR)/usdt $(WL_DIR)/phases $(WL_DIR)/deep \
             $(WL_DIR)/snoop $(WL_DIR)/cxx $(WL_DIR)/jit $(WL_DIR)/sysc $(WL_DIR)/victim \
             $(WL_DIR)/libvictim.so $(WL_DIR)/spawner $(WL_DIR)/zeroret $(WL_DIR)/threads \
             $(WL_DIR)/ia32 $(WL_DIR)/cfipaths \
             $(WL_DIR)/unprobeable $(WL_DIR)/sigpaths $(WL_DIR)/vdsopaths \
             $(WL_DIR)/firstinsn $(WL_DIR)/manymaps $(WL_DIR)/spin $(WL_DIR)/reuse \
             $(WL_DIR)/farcode $(WL_DIR)/labels $(WL_DIR)/uclash $(WL_DIR)/semleaf \
             $(WL_DIR)/cfipaths_o2 $(WL_DIR)/latelib

# cfipaths as distributions build code: optimized, no frame pointers (its
# leaf_a, entry_a, sys_a and the rest keep no frame), but no sibling calls,
# which would merge the paths it counts apart
WL_O2_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls \
                -Wall -Wextra -Werror

$(WL_DIR)/usdt: tests/workloads/usdt.c tests/workloads/usdt_sem.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -o $@ $^

# hostile.bats copies both into a directory of their own: found by $ORIGIN
$(WL_DIR)/libvictim.so: tests/workloads/victimlib.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -shared -fPIC -o $@ $<

$(WL_DIR)/victim: tests/workloads/victim.c $(WL_DIR)/libvictim.so
	$(CC) $(WL_CFLAGS) -rdynamic -o $@ $< -L$(WL_DIR) -lvictim -Wl,-rpath,'$$ORIGIN'

# without libc, yet dynamically linked: ld.so runs, then its own loop at once
$(WL_DIR)/spin: tests/workloads/spin.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -nostdlib -fno-stack-protector -o $@ $<

# far_away 8 GiB above the rest: code spanning more than 4 GiB (a
# .debug_frame, whose addresses are absolute: an .eh_frame's reach 2 GiB)
$(WL_DIR)/farcode: tests/workloads/farcode.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -mcmodel=large -fno-asynchronous-unwind-tables \
		-nostdlib -fno-stack-protector -static -no-pie -Wl,--section-start=farcode=0x200000000 -o $@ $<

# 32-bit, without libc (so without gcc-multilib): its own _start, exit by int $0x80
$(WL_DIR)/ia32: tests/workloads/ia32.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -m32 -nostdlib -static -fno-pie -no-pie -fno-stack-protector -o $@ $<

$(WL_DIR)/%: tests/workloads/%.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -o $@ $<

$(WL_DIR)/%: tests/workloads/%.cc | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CXX) $(WL_CFLAGS) -o $@ $<

# The same workloads, static, for the test VMs (their initramfs has no libc).
STATIC_WORKLOADS := $(WL_DIR)/static/paths $(WL_DIR)/static/usdt $(WL_DIR)/static/snoop \
                    $(WL_DIR)/static/sysc $(WL_DIR)/static/phases \
                    $(WL_DIR)/static/cfipaths $(WL_DIR)/static/mapupd \
                    $(WL_DIR)/static/semleaf $(WL_DIR)/static/deep \
                    $(WL_DIR)/static/cfipaths_o2 $(WL_DIR)/static/vdsopaths

$(WL_DIR)/static/usdt: tests/workloads/usdt.c tests/workloads/usdt_sem.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -static -o $@ $^

$(WL_DIR)/cfipaths_o2: tests/workloads/cfipaths.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_O2_CFLAGS) -o $@ $<

$(WL_DIR)/static/cfipaths_o2: tests/workloads/cfipaths.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_O2_CFLAGS) -static -o $@ $<

$(WL_DIR)/static/%: tests/workloads/%.c | $(BUILD)/.test-deps
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -static -o $@ $<
