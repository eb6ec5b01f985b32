#!/usr/bin/env bash
# Usage: seeds.sh OUT_DIR WORKLOADS_DIR
# Writes the fuzzer's first inputs (tests/fuzz/fuzz.c says their format)
# into OUT_DIR, made from the test workloads: each kind of file the readers
# meet, small enough to mutate quickly (DWARF stripped).
set -euo pipefail

out=$1
wl=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out"

# seed NAME SELECTOR FILE [DEBUG_FILE]: with a debug file, the ELF file's
# length goes first (u32, little-endian)
seed() {
	local n
	{
		printf "\\x$1"
		if [ $# -eq 4 ]; then
			n=$(stat -c %s "$3")
			printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((n & 255)) \
				$((n >> 8 & 255)) $((n >> 16 & 255)) $((n >> 24 & 255)))"
			cat "$3" "$4"
		else
			cat "$3"
		fi
	} > "$out/$2"
}

# Files with their .symtab, USDT notes, a shared library, 32-bit, C++.
for w in paths usdt libvictim.so ia32 cxx; do
	strip --strip-debug -R .comment -o "$tmp/$w" "$wl/$w"
	seed 01 "elf-$w" "$tmp/$w"
done
# Mapped as root's, read into memory as a user's: the same file both ways.
seed 05 elf-paths-read "$tmp/paths"

# Stripped, its symbols in a debug file found by build-id, or by a
# .gnu_debuglink whose CRC is right (named as fuzz.c writes it).
objcopy --only-keep-debug "$tmp/paths" "$tmp/f.debug"
strip --strip-all -R .comment -o "$tmp/stripped" "$tmp/paths"
seed 02 debug-by-build-id "$tmp/stripped" "$tmp/f.debug"
objcopy --add-gnu-debuglink="$tmp/f.debug" "$tmp/stripped" "$tmp/linked"
seed 03 debug-by-link "$tmp/linked" "$tmp/f.debug"

# MiniDebugInfo: the functions .dynsym lacks, xz-compressed inside.  No
# check in the xz stream, so that a changed byte decompresses to a changed
# ELF file instead of a rejected stream.
cp "$tmp/paths" "$tmp/mini"
objcopy --only-keep-debug -R .comment "$tmp/mini" "$tmp/mini.syms"
xz --check=none -c "$tmp/mini.syms" > "$tmp/mini.xz"
strip --strip-all -R .comment "$tmp/mini"
objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/mini"
seed 01 minidebuginfo "$tmp/mini"

# A perf map as JITs write it: nested, repeated, and a line that is not one.
cat > "$tmp/map" <<'EOF'
7f0000001000 40 jit_one
7f0000001010 8 jit_inner
7f0000002000 100 LazyCompile:~work /srv/app.js:12
7f0000002000 100 LazyCompile:*work /srv/app.js:12
not a line
7f0000003000 0 empty
EOF
seed 00 perf-map "$tmp/map"
