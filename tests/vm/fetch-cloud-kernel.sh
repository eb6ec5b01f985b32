#!/bin/bash
# Usage: fetch-cloud-kernel.sh OUT_DIR SERIES [PACKAGE]
# Fetches Debian's newest cloud kernel of SERIES (6.1:
# linux-image-6.1.0-*-cloud-amd64-unsigned; 6.12:
# linux-image-6.12.*-cloud-amd64-unsigned, Debian 13's kernel, which
# Debian 12 also carries) or PACKAGE, to pin one, without installing it,
# and leaves in OUT_DIR: vmlinuz, config and VERSION ("package version").
# Debian's System.map is a stub (symbols are in the -dbg package): use
# /proc/kallsyms in the VM.
# vmlinuz is written last, so make treats a half-done fetch as not done.
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/lib.sh"
[[ $# -ge 2 && $2 =~ ^[0-9]+\.[0-9]+$ ]] ||
	{ echo "usage: $0 OUT_DIR SERIES [PACKAGE]  (SERIES: 6.1, 6.12)" >&2; exit 2; }
out=$(realpath -m "$1") series=$2 pinned=${3:-}
mkdir -p "$out" "$VM_BUILD"
# 6.1.0-NN (Debian 12's own) or 6.12.NN+debNN: a dot after the series
# keeps 6.1 from matching 6.12
names="linux-image-${series}.*-cloud-amd64-unsigned"
newest() {
	apt-cache search --names-only "^linux-image-${series//./\\.}\\.[0-9][-+.0-9a-z]*-cloud-amd64-unsigned\$" |
		cut -d' ' -f1 | sort -V | tail -n1
}

tmp=$out/tmp
rm -rf "$tmp" && mkdir -p "$tmp"
# Running as root into a root-owned dir: skip apt's _apt sandbox warning.
download() { (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$1"); }

pkg=${pinned:-$(newest)}
# Stale or missing package lists: either no candidate, or one the mirror has
# already dropped. Refresh once and pick again.
if [[ -z $pkg ]] || ! download "$pkg"; then
	(flock 9 && apt-get update -q) 9>"$VM_BUILD/.apt.lock" >&2
	pkg=${pinned:-$(newest)}
	[[ -n $pkg ]] || { echo "vm: no $names in apt" >&2; exit 1; }
	download "$pkg"
fi

deb=$(echo "$tmp"/*.deb)
# shellcheck disable=SC2016 # ${...} is dpkg's syntax, not the shell's
dpkg-deb --show --showformat='${Package} ${Version}\n' "$deb" >"$out/VERSION"
dpkg-deb -x "$deb" "$tmp/x"
cp "$tmp"/x/boot/config-* "$out/config"
cp "$tmp"/x/boot/vmlinuz-* "$out/vmlinuz.new"
mv "$out/vmlinuz.new" "$out/vmlinuz"
rm -rf "$tmp" # the modules are useless here: the VMs load none
echo "vm: cloud kernel $(cat "$out/VERSION")" >&2
