#!/usr/bin/env bash
# Usage: seeds.sh OUT_DIR WORKLOADS_DIR FIXTURES_DIR
# Writes the fuzzer's first inputs (tests/fuzz/fuzz.c says their format)
# into OUT_DIR, made from the test workloads, the unwind test's fixtures
# (FIXTURES_DIR/fx_cfi*) and a few small system binaries: each kind of file
# the readers meet, small enough to mutate quickly (DWARF stripped).
set -euo pipefail

out=$1
wl=$2
fx=$3
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

# le64 N: N as 8 bytes, little-endian
le64() {
	local i
	for i in 0 8 16 24 32 40 48 56; do
		printf "\\x$(printf %02x $(($1 >> i & 255)))"
	done
}

# cfi_seed NAME SELECTOR FILE SECTION: the section's bytes alone, behind
# its address (fuzz.c's sel & 8)
cfi_seed() {
	local addr
	addr=$(readelf -SW "$3" | sed -n 's/^ *\[ *[0-9]*\] //p' |
		awk -v s="$4" '$1 == s { print $3 }')
	[ -n "$addr" ] || { echo "seeds.sh: no $4 in $3" >&2; exit 1; }
	objcopy --dump-section "$4=$tmp/sect" "$3" "$tmp/junk"
	{ printf "\\x$1"; le64 "0x$addr"; cat "$tmp/sect"; } > "$out/$2"
}

# CFI sections as compilers and assemblers write them: C, C++ with its
# LSDAs, a shared library, 32-bit, hand-written rules in both kinds of
# section (tests/unit/test_cfi.c's fixture); and a few system binaries'.
for w in paths cxx libvictim.so ia32; do
	cfi_seed 08 "eh_frame-$w" "$wl/$w" .eh_frame
done
cfi_seed 08 eh_frame-fx_cfi "$fx/fx_cfi" .eh_frame
cfi_seed 18 debug_frame-fx_cfi "$fx/fx_cfi_dbg" .debug_frame
for f in /usr/bin/true /usr/bin/sort /lib/x86_64-linux-gnu/libz.so.1; do
	cfi_seed 08 "eh_frame-${f##*/}" "$f" .eh_frame
done
