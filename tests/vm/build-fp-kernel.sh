#!/bin/bash
# Usage: build-fp-kernel.sh OUT_DIR VERSION FRAGMENT...
# Builds a frame-pointer test kernel from Debian's linux-source-VERSION:
# `make tinyconfig`, the FRAGMENTs appended (for a symbol set in more than
# one, the last says), `make olddefconfig`, bzImage.
# Leaves OUT_DIR/bzImage (copied last, so make sees a failed build as not
# done), OUT_DIR/config, OUT_DIR/System.map; vmlinux stays in OUT_DIR/obj.
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/lib.sh"
out=$(realpath -m "$1")
ver=$2
shift 2
src=$out/src obj=$out/obj
tarball=/usr/src/linux-source-$ver.tar.xz

need_pkgs linux-source-$ver make gcc bc bison flex libelf-dev libssl-dev cpio xz-utils

# Extract once; a stamp, not the dir, marks a complete extraction.
if [[ ! -f $src/.extracted ]]; then
	rm -rf "$src" && mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	touch "$src/.extracted"
fi

# The fragments as one: each symbol's last line (set or "is not set") kept.
mkdir -p "$obj"
frag=$obj/fragment.config
awk '{ sym = "" }
     match($0, /^CONFIG_[A-Za-z0-9_]+=/) { sym = substr($0, 1, RLENGTH - 1) }
     match($0, /^# CONFIG_[A-Za-z0-9_]+ is not set/) { sym = $2 }
     sym != "" { last[sym] = $0; if (!(sym in seen)) { seen[sym] = 1; order[++n] = sym } }
     END { for (i = 1; i <= n; i++) print last[order[i]] }' "$@" > "$frag"

# ARCH=x86_64, not x86: with ARCH=x86, tinyconfig turns 64BIT off.
# Fixed build user, host, number and date keep `uname -v` the same on
# every machine and every rebuild.
KBUILD_BUILD_TIMESTAMP=$(date -u -r "$tarball")
export KBUILD_BUILD_USER=stackwalk KBUILD_BUILD_HOST=vm KBUILD_BUILD_VERSION=1 KBUILD_BUILD_TIMESTAMP
kmake() { make -s -C "$src" O="$obj" ARCH=x86_64 "$@"; }

# olddefconfig silently drops options whose dependencies are unmet: every
# `=...` line of the fragment must be in .config verbatim, and every
# `is not set` one must not be =y.
check_config() {
	local bad=0 line sym
	while IFS= read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)= ]]; then
			grep -qxF "$line" "$obj/.config" ||
				{ echo "vm: wanted $line, got: $(grep "^${BASH_REMATCH[1]}=" "$obj/.config" || echo unset)" >&2; bad=1; }
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set ]]; then
			sym=${BASH_REMATCH[1]}
			! grep -q "^$sym=" "$obj/.config" ||
				{ echo "vm: wanted $sym unset, got: $(grep "^$sym=" "$obj/.config")" >&2; bad=1; }
		fi
	done <"$frag"
	((bad == 0)) || { echo "vm: $obj/.config does not match $frag" >&2; return 1; }
}

# Both steps report every symbol a fragment re-assigns: keep that noise in
# a log, shown only on failure.
{ kmake tinyconfig && cat "$frag" >>"$obj/.config" && kmake olddefconfig; } \
	>"$obj/config.log" 2>&1 || { cat "$obj/config.log" >&2; exit 1; }
check_config # before the build too: fail in seconds, not minutes
kmake -j"$(nproc)" bzImage
check_config

cp "$obj/.config" "$out/config"
cp "$obj/System.map" "$out/System.map"
cp "$obj/arch/x86/boot/bzImage" "$out/bzImage.new"
mv "$out/bzImage.new" "$out/bzImage"
echo "vm: fp kernel $(cat "$obj/include/config/kernel.release")" >&2
