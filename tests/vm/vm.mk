# Test VMs: kernels other than the host's, booted under qemu (TCG only).
# Included from the top Makefile; paths are relative to the repo root.
#
#   make vm-kernels   fetch Debian's cloud kernels (6.1 and 6.12), build
#                     the fp kernels (6.1; 6.12 with fprobe) (all cached:
#                     a second run does nothing)
#   make vm-smoke     boot them with a static probe program, print facts
#   make vm-clean     remove build/vm (kernels included)
#
# To run tests in a VM from a recipe:
#   $(VM_MKINITRAMFS) OUT.cpio.gz [FILE | DEST=SRC]...
#       FILE -> /stackwalk/<basename>; DEST=SRC -> DEST (relative = under
#       /stackwalk). /stackwalk/run-tests is run by /init; the exit status
#       is the VM's verdict. Binaries must be static, scripts #!/bin/sh.
#   $(VM_BOOT) KERNEL OUT.cpio.gz [TIMEOUT_S]
#       0 = runner passed, 1 = runner failed, 2 = VM failed (no boot,
#       no markers, timeout, panic). Console on stdout and in build/vm/log/.
# or in one step: $(call vm_run,KERNEL,OUT.cpio.gz,ITEMS...)

VM_DIR          := $(BUILD)/vm
VM_CLOUD_KERNEL := $(VM_DIR)/cloud/vmlinuz
VM_CLOUD612_KERNEL := $(VM_DIR)/cloud612/vmlinuz
VM_FP_KERNEL    := $(VM_DIR)/fp/bzImage
VM_FP612_KERNEL := $(VM_DIR)/fp612/bzImage
VM_FP_VMLINUX   := $(VM_DIR)/fp/obj/vmlinux
VM_KERNELS      := $(VM_CLOUD_KERNEL) $(VM_CLOUD612_KERNEL) $(VM_FP_KERNEL) $(VM_FP612_KERNEL)
VM_MKINITRAMFS  := tests/vm/mkinitramfs.sh
VM_BOOT         := tests/vm/boot.sh

vm_run = $(VM_MKINITRAMFS) $(2) $(3) && $(VM_BOOT) $(1) $(2)

.PHONY: vm-kernels vm-smoke vm-clean
vm-kernels: $(VM_KERNELS)

# No prerequisites: the first fetch pins the version (see
# $(VM_DIR)/cloud*/VERSION); `make vm-clean`, or VM_CLOUD_PKG=... and
# VM_CLOUD612_PKG=... (a package name), to change it.
$(VM_CLOUD_KERNEL):
	tests/vm/fetch-cloud-kernel.sh $(@D) 6.1 $(VM_CLOUD_PKG)

$(VM_CLOUD612_KERNEL):
	tests/vm/fetch-cloud-kernel.sh $(@D) 6.12 $(VM_CLOUD612_PKG)

$(VM_FP_KERNEL): tests/vm/fp-kernel.config tests/vm/build-fp-kernel.sh
	tests/vm/build-fp-kernel.sh $(@D) 6.1 tests/vm/fp-kernel.config

$(VM_FP612_KERNEL): tests/vm/fp-kernel.config tests/vm/fp612-kernel.config tests/vm/build-fp-kernel.sh
	tests/vm/build-fp-kernel.sh $(@D) 6.12 tests/vm/fp-kernel.config tests/vm/fp612-kernel.config

vm-smoke: $(VM_KERNELS)
	tests/vm/smoke.sh $(VM_KERNELS)

vm-clean:
	rm -rf $(VM_DIR)
