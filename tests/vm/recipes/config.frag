# Config fragment for the Linux 4.4.178 and 4.8.15 test kernels (x86_64, qemu TCG).
# Applied on top of `make ARCH=x86_64 tinyconfig`, then `make olddefconfig`.
# Everything is built in (=y); nothing is =m.
#
# --- base / size choices (tinyconfig picks -Os, xz and SLOB; use ordinary ones) ---
CONFIG_64BIT=y
CONFIG_SMP=y
CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE=y
# CONFIG_CC_OPTIMIZE_FOR_SIZE is not set
CONFIG_KERNEL_GZIP=y
# CONFIG_KERNEL_XZ is not set
CONFIG_SLUB=y
# CONFIG_SLOB is not set
# --- console, early boot, initramfs ---
CONFIG_PRINTK=y
CONFIG_EARLY_PRINTK=y
CONFIG_BUG=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_RD_GZIP=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
# --- pseudo filesystems ---
CONFIG_PROC_FS=y
CONFIG_PROC_SYSCTL=y
CONFIG_SYSFS=y
CONFIG_DEVTMPFS=y
CONFIG_DEVTMPFS_MOUNT=y
CONFIG_DEBUG_FS=y
CONFIG_SHMEM=y
CONFIG_TMPFS=y
# --- syscalls userland (busybox, the tool, libc) expects ---
CONFIG_MULTIUSER=y
CONFIG_FUTEX=y
CONFIG_EPOLL=y
CONFIG_SIGNALFD=y
CONFIG_TIMERFD=y
CONFIG_EVENTFD=y
CONFIG_AIO=y
CONFIG_SYSVIPC=y
CONFIG_FILE_LOCKING=y
CONFIG_ADVISE_SYSCALLS=y
CONFIG_ELF_CORE=y
# --- symbols / introspection (the tool symbolizes kernel stacks via /proc/kallsyms) ---
CONFIG_KALLSYMS=y
CONFIG_KALLSYMS_ALL=y
CONFIG_IKCONFIG=y
CONFIG_IKCONFIG_PROC=y
# --- power-off: ACPI so `poweroff -f` ends qemu (reboot -f + -no-reboot works too) ---
CONFIG_ACPI=y
# --- tracing / BPF ---
# In 4.4 and 4.8 both KPROBES (arch/Kconfig) and BPF_JIT (net/Kconfig) "depends on MODULES",
# so module support is switched on, but no module is built (nothing is =m).
CONFIG_MODULES=y
CONFIG_DEBUG_KERNEL=y
CONFIG_FRAME_POINTER=y
CONFIG_PERF_EVENTS=y
CONFIG_KPROBES=y
CONFIG_UPROBES=y
CONFIG_FTRACE=y
CONFIG_FUNCTION_TRACER=y
CONFIG_DYNAMIC_FTRACE=y
# 4.4 and 4.8 names (renamed KPROBE_EVENTS / UPROBE_EVENTS in 4.11)
CONFIG_KPROBE_EVENT=y
CONFIG_UPROBE_EVENT=y
CONFIG_BPF=y
CONFIG_BPF_SYSCALL=y
CONFIG_BPF_EVENTS=y
# BPF_JIT lives under `if NET` in 4.4 and 4.8
CONFIG_NET=y
CONFIG_UNIX=y
CONFIG_BPF_JIT=y
# --- block stack for a virtio ext4 disk ---
CONFIG_PCI=y
CONFIG_PCI_MSI=y
CONFIG_VIRTIO=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_PCI_LEGACY=y
CONFIG_BLOCK=y
CONFIG_BLK_DEV=y
CONFIG_VIRTIO_BLK=y
CONFIG_EXT4_FS=y
CONFIG_JBD2=y
# --- keep it module-free: CRYPTO_ECHAINIV is "default m" (it then pulls AEAD,
# DRBG, HMAC, SHA256... in as =m); nothing here needs it ---
# CONFIG_CRYPTO_ECHAINIV is not set
# --- 4.8 specifics (4.4 has no such option) ---
# objtool stack validation is optional in 4.8; keep it off (fewer host-tool moving parts)
# CONFIG_STACK_VALIDATION is not set
# --- syscall tracepoints (t:syscalls:sys_enter_*) ---
CONFIG_FTRACE_SYSCALLS=y
