#!/bin/bash
# Usage: mkinitramfs.sh OUT.cpio.gz [ITEM...]
# Builds a gzip'd newc initramfs: busybox-static, an /init, and the ITEMs.
# ITEM is one of
#   SRC         copied to /stackwalk/$(basename SRC)
#   DEST=SRC    copied to DEST: an absolute path in the image, or a path
#               relative to /stackwalk (e.g. run-tests=build/t/runner.sh)
# SRC may be a directory (copied recursively); modes are kept, so make
# binaries and scripts executable. The image has no libc: binaries must be
# static, scripts must use #!/bin/sh (busybox).
#
# /init mounts proc, sysfs, devtmpfs, debugfs, tracefs and bpffs, prints
#   STACKWALK-VM-START <uname -r>
# runs /stackwalk/run-tests (cwd /stackwalk, output on the console), or a
# built-in smoke check if there is none, prints
#   STACKWALK-VM-END status=<its exit status>
# and powers off. Kernel command-line words of the form VAR=value that the
# kernel does not know reach run-tests as environment variables.
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/lib.sh"
[[ $# -ge 1 ]] || { echo "usage: $0 OUT.cpio.gz [SRC | DEST=SRC]..." >&2; exit 2; }
need_pkgs busybox-static cpio

out=$(realpath -m "$1")
shift
mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "$out.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,stackwalk}
cp /bin/busybox "$stage/bin/busybox"
for applet in $(/bin/busybox --list-full); do
	[[ -e $stage/$applet ]] || ln -s /bin/busybox "$stage/$applet"
done
# The kernel opens /dev/console for /init before anything is mounted.
# (Kernels since 5.x also carry this node in their built-in initramfs.)
mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true

for item in "$@"; do
	if [[ $item == *=* ]]; then
		dest=${item%%=*} src=${item#*=}
		[[ $dest == /* ]] || dest=/stackwalk/$dest
	else
		src=$item dest=/stackwalk/$(basename "$item")
	fi
	[[ -e $src ]] || { echo "mkinitramfs: no such file: $src" >&2; exit 1; }
	mkdir -p "$(dirname "$stage$dest")"
	cp -a "$src" "$stage$dest"
done

cat >"$stage/init" <<'INIT'
#!/bin/sh
# PID 1 of the stackwalk test VM, written by tests/vm/mkinitramfs.sh.
# Never exit: PID 1 exiting panics the kernel.
export PATH=/stackwalk:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
# Absent on some kernels (and tracefs lives under debugfs before 4.1).
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null

smoke() {
	cat /proc/version && [ -d /proc/self ] && [ -d /sys/kernel ]
}

echo "STACKWALK-VM-START $(uname -r)"
cd /stackwalk
if [ -e /stackwalk/run-tests ]; then
	/stackwalk/run-tests
else
	smoke
fi
status=$?
echo "STACKWALK-VM-END status=$status"
# The serial driver sends queued output from interrupts, which power-off
# stops: stty sets the (unchanged) mode with TCSADRAIN, which waits for the
# console to drain. Never seen lost under qemu, but the marker is the verdict.
stty "$(stty -g)"
poweroff -f
# Only if power-off failed: with qemu -no-reboot a reboot ends qemu too.
reboot -f
INIT
chmod 755 "$stage/init"

(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	gzip -9n >"$out.new"
mv "$out.new" "$out"
