#!/bin/bash
# Usage: boot.sh KERNEL INITRAMFS [TIMEOUT_S]
# Boots KERNEL with INITRAMFS (from mkinitramfs.sh) under qemu TCG (KVM hangs
# on these machines), streams the serial console to stdout and to a log
# (default build/vm/log/<kernel dir>-<initramfs name>.log, or $VM_LOG).
# Extra kernel command line: $VM_APPEND (VAR=value words become run-tests'
# environment). CPUs: $VM_SMP (default 2). Extra qemu arguments:
# $VM_QEMU_ARGS (word-split).
# Exit status: 0 if the runner reported status 0; 1 if it reported another
# status; 2 if the VM failed (no start marker: kernel or /init did not come
# up; no end marker: runner never reported; timeout; kernel panic).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/lib.sh"
[[ $# -ge 2 ]] || { echo "usage: $0 KERNEL INITRAMFS [TIMEOUT_S]" >&2; exit 2; }
kernel=$1 initrd=$2 limit=${3:-300}
for f in "$kernel" "$initrd"; do [[ -r $f ]] || { echo "boot: cannot read $f" >&2; exit 2; }; done
need_pkgs qemu-system-x86

name=$(basename "$(dirname "$(realpath "$kernel")")")-$(basename "$initrd" .cpio.gz)
log=${VM_LOG:-$VM_BUILD/log/$name.log}
mkdir -p "$(dirname "$log")"
exec 3>"$log"

t0=${EPOCHREALTIME/./}
elapsed() { local us=$((${EPOCHREALTIME/./} - t0)); printf '%d.%02ds' $((us / 1000000)) $((us % 1000000 / 10000)); }
say() { echo "boot: $*" >&2; echo "boot: $*" >&3; }
# stdin from /dev/null: with -nographic qemu would otherwise put the
# caller's terminal in raw mode.
set +e
# shellcheck disable=SC2086 # VM_QEMU_ARGS is split into words on purpose
timeout --kill-after=10 "$limit" qemu-system-x86_64 -accel tcg -cpu max -smp "${VM_SMP:-2}" -m 1G \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 quiet ${VM_APPEND:-}" \
	-nographic -no-reboot -net none ${VM_QEMU_ARGS:-} </dev/null 2>&1 |
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		printf '%s\n' "$line"
		printf '%s\n' "$line" >&3
		[[ $line != *STACKWALK-VM-START* ]] || say "start marker after $(elapsed)"
	done
qemu_rc=${PIPESTATUS[0]}
set -e
say "qemu exited $qemu_rc after $(elapsed)"

fail() { say "FAIL ($kernel, $initrd): $*; log: $log"; exit 2; }
grep -q 'STACKWALK-VM-START' "$log" || fail "no start marker: the kernel or /init did not come up"
end=$(grep -o 'STACKWALK-VM-END status=[0-9]*' "$log" | tail -n1 || true)
((qemu_rc != 124 && qemu_rc != 137)) || fail "timed out after ${limit}s${end:+ (after the end marker: power-off hung)}"
[[ -n $end ]] || fail "no end marker: the runner never reported"
! grep -q 'Kernel panic' "$log" || fail "kernel panic"
((qemu_rc == 0)) || fail "qemu exited $qemu_rc"
status=${end##*=}
((status == 0)) || { say "FAIL ($kernel): runner status $status; log: $log"; exit 1; }
say "OK ($kernel)"
