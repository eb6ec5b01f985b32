#!/bin/bash
# Usage: smoke.sh KERNEL...
# Boots each KERNEL with an initramfs whose run-tests is smoke.c (static),
# then prints the FACT lines of every boot side by side. Fails if any boot
# fails (see boot.sh for what counts as failing).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/lib.sh"
out=$VM_BUILD/smoke
mkdir -p "$out"
gcc -static -O2 -Wall -Wextra -o "$out/smoke" "$here/smoke.c"
"$here/mkinitramfs.sh" "$out/smoke.cpio.gz" "run-tests=$out/smoke"

rc=0
for k in "$@"; do
	VM_LOG=$out/$(basename "$(dirname "$(realpath "$k")")").log \
		"$here/boot.sh" "$k" "$out/smoke.cpio.gz" 300 >/dev/null || rc=1
done
for k in "$@"; do
	log=$out/$(basename "$(dirname "$(realpath "$k")")").log
	echo "== $k"
	grep -Eo '(FACT .*|boot: (start marker|qemu exited|OK|FAIL).*)' "$log" || true
done
exit $rc
