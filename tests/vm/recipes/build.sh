#!/bin/bash
# Recipe: a Linux 4.3.0, 4.4.178, 4.5.7, 4.6.2, 4.7.4 or 4.8.15 x86_64 test kernel for testing stackcount and
# stacksnoop (boots under qemu TCG; everything built in, no modules): the kernels of
# the cfi walker's stand-in era that ../shared/kernels lacks, built as its recipes
# build theirs.  Boot them with VM_MORE_KERNELS="OUT ..." make vmtest (the README's
# Kernels section); OUT's name names the kernel in the results.
#
# Usage: build.sh VER SRC OUT
#   VER  4.3.0, 4.4.178, 4.5.7, 4.6.2, 4.7.4 or 4.8.15
#   SRC  kernel source (required): either a git dir holding vanilla VER at commit
#        $REV (it is only read, via `git archive`, into $WORKDIR/linux-VER) or an
#        unpacked tree (tweaks below are then applied to it in place; they are
#        idempotent).  Known good: git snapshots (their git dirs) of
#        github MichaelTong/linux-4.4.178, whose one commit 443dfc7e "add vanilla
#        linux-4.4.178" is the release's tree; of github xing393939/linux-4.6.2, whose
#        first commit 6bcd5b16 "init" is the release's tree (its later commits are NOT
#        used); and of github squirrel20/linux-4.8.15,
#        whose commit 4fdc4ec5 "linux 4.8.15" is the release's tree as imported
#        (netfilter's case-twin files, xt_DSCP.h beside xt_dscp.h and the like, look
#        merged by a case-insensitive file system: this config builds none of them);
#        its later commits are NOT used.  Also of github everestdavid/sound-linux-4.5.7,
#        whose commit 931861d2 is the release's tree with an audio codec's driver,
#        firmware and board configs added (sound/, firmware/, arch/x86/configs/:
#        none of it built here); and of github calebwilliamsd/linux-4.7.4-casio,
#        whose one commit 01851de9 "CASIO" holds 4.7.4 (EXTRAVERSION -casio-testing);
#        and of github YoungjaeLee/linux-4.3-cxlbdev, whose commit dc98e805 "Initial
#        commit" holds 4.3 (EXTRAVERSION -cxlbdev-rc; its later commits, a block
#        driver for a POWER accelerator, are NOT used).
#   OUT  where bzImage, System.map, config (and vmlinux) go (required).
# Env: REV (commit to export from a git SRC, default: the one named above),
#      WORKDIR (scratch: exported tree + O= build dir, default ${TMPDIR:-/tmp}/stackwalk-ksrc),
#      JOBS (default nproc), KCC (compiler, default gcc = Debian 12's gcc-12).
# Re-running is safe: the export happens once, the O= build is incremental.
# Needs (Debian 12): apt-get install build-essential bc git patch python3
set -euo pipefail
for t in make "${KCC:-gcc}" bc git patch python3; do
  command -v "$t" >/dev/null || { echo "missing tool: $t" >&2; exit 1; }
done
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 3 ] || { echo "usage: $0 VER SRC OUT  (VER: 4.3.0, 4.4.178, 4.5.7, 4.6.2, 4.7.4 or 4.8.15; SRC: git dir or unpacked tree; OUT: output dir)" >&2; exit 2; }
VER=$1
SRC=$2
OUT=$3
case $VER in
4.4.178) rev=443dfc7e93666adc78c5a9e9afcc242d83456e4c ;;
4.6.2) rev=6bcd5b161f0b75276a35d13ae2c8fec952b37304 ;;
4.8.15) rev=4fdc4ec5104cb007aaee57898ccac1f5169a290b ;;
4.5.7) rev=931861d2b5483ccb6435fbba20fcfad2e489d48c ;;
4.7.4) rev=01851de9bbf82552133ba1f39b71a06a1d6b7a23 ;;
4.3.0) rev=dc98e805a1fa66fd97bf326188708f2918ff60bc ;;
*) echo "$0: no recipe for $VER: 4.3.0, 4.4.178, 4.5.7, 4.6.2, 4.7.4 or 4.8.15" >&2; exit 2 ;;
esac
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/stackwalk-ksrc}
JOBS=${JOBS:-$(nproc)}
KCC=${KCC:-gcc}
REV=${REV:-$rev}
FRAG=$HERE/config.frag
BUILD=$WORKDIR/build-$VER

# --- 1. source -----------------------------------------------------------------
if [ -d "$SRC/objects" ]; then                     # a git dir: export $REV once
  TREE=$WORKDIR/linux-$VER
  if [ ! -f "$TREE/.test-exported" ]; then
    rm -rf "$TREE"; mkdir -p "$TREE"
    git --git-dir="$SRC" archive "$REV" | tar -x -C "$TREE"
    touch "$TREE/.test-exported"
  fi
else
  TREE=$SRC
fi
v=$(sed -n 's/^VERSION = //p;s/^PATCHLEVEL = //p;s/^SUBLEVEL = //p' "$TREE/Makefile" | paste -sd.)
[ "$v" = "$VER" ] || { echo "source at $TREE is $v, not $VER" >&2; exit 1; }

# --- 2. tweaks to the tree (each idempotent; why is in the comment) --------------
# apply_patch NAME < diff: applies a -p1 diff once (skips it if already applied).
apply_patch() {
  local d; d=$(cat)
  if printf '%s\n' "$d" | patch -d "$TREE" -p1 -R --dry-run -s -f >/dev/null 2>&1; then
    echo "tweak $1: already applied"
  else
    printf '%s\n' "$d" | patch -d "$TREE" -p1 -N -s -f && echo "tweak $1: applied"
  fi
}

# Tweak 1 (scripts/recordmcount.h): binutils >= 2.36 (Debian 12 has 2.40) no longer
# emits section symbols that nothing references, so an object whose .text holds only
# __weak functions (kernel/elfcore.o) has no local/global symbol for recordmcount to
# use as a base and the build dies with "Cannot find symbol for section 1: .text.".
# Instead of failing, leave such a section's __fentry__ calls unrecorded: with
# DYNAMIC_FTRACE __fentry__ is a bare `ret`, so they are harmless; those few weak
# functions just aren't ftrace-traceable.  Needed only because FUNCTION_TRACER is on.
apply_patch recordmcount-no-secsym <<'PATCH'
--- a/scripts/recordmcount.h
+++ b/scripts/recordmcount.h
@@ -441,9 +441,10 @@
 			return symp - sym0;
 		}
 	}
-	fprintf(stderr, "Cannot find symbol for section %d: %s.\n",
-		txtndx, txtname);
-	fail_file();
+	/* binutils >= 2.36 drops unused section symbols, so a section whose
+	 * only functions are weak has no usable base symbol: leave its
+	 * __fentry__ calls unrecorded (they call a plain `ret` stub). */
+	return ~0u;
 }
 
 
@@ -534,6 +535,8 @@
 				&shdr0[symsec_sh_link = w(relhdr->sh_link)],
 				ehdr);
 
+			if (recsym == ~0u)
+				continue;
 			rel_entsize = _w(relhdr->sh_entsize);
 			mlocp = sift_rel_mcount(mlocp,
 				(void *)mlocp - (void *)mloc0, &mrelp,
PATCH

# Tweaks 2 and 3: all but 4.4.178 (which has both, from later stable releases).
if [ "$VER" != 4.4.178 ]; then

# Tweak 2 (scripts/Kbuild.include): backport of upstream 9564a8cf422d "Kbuild: fix #
# escaping in .cmd files for future Make" (4.4.178, 4.9.x and later kernels already
# have it).  GNU make 4.3 (Debian 12) treats `\#` differently, so every saved command
# line compares as changed and each re-run rebuilds everything ("due to command
# line change").  Without it the build still succeeds; it just never is incremental.
# The variable goes in by sed: the lines around it differ between releases.
grep -q '^pound   := ' "$TREE/scripts/Kbuild.include" ||
  sed -i 's/^space   := $(empty) $(empty)$/&\npound   := \\#/' "$TREE/scripts/Kbuild.include"
apply_patch kbuild-pound-escaping <<'PATCH'
--- a/scripts/Kbuild.include
+++ b/scripts/Kbuild.include
@@ -232,11 +233,11 @@
 
 # Replace >$< with >$$< to preserve $ when reloading the .cmd file
 # (needed for make)
-# Replace >#< with >\#< to avoid starting a comment in the .cmd file
+# Replace >#< with >$(pound)< to avoid starting a comment in the .cmd file
 # (needed for make)
 # Replace >'< with >'\''< to be able to enclose the whole string in '...'
 # (needed for the shell)
-make-cmd = $(call escsq,$(subst \#,\\\#,$(subst $$,$$$$,$(cmd_$(1)))))
+make-cmd = $(call escsq,$(subst $(pound),$$(pound),$(subst $$,$$$$,$(cmd_$(1)))))
 
 # Find any prerequisites that is newer than target or that does not exist.
 # PHONY targets skipped in both cases.
PATCH

# Tweak 3 (arch/x86/Makefile): backport of upstream e3d03598e8ae "x86/build/64: Force
# the linker to use 2MB page size" (4.4.178 and 4.9.x have it).
# binutils >= 2.31 defaults x86-64's max page size to 4 KiB, the vmlinux LOAD
# segment then loses its 2 MiB alignment and the kernel faults in startup_64 at
# its first virtual-address instruction (a triple fault, no output at all).
apply_patch ld-2mb-page-size <<'PATCH'
--- a/arch/x86/Makefile
+++ b/arch/x86/Makefile
@@ -171,4 +171,13 @@
 
 LDFLAGS := -m elf_$(UTS_MACHINE)
 
+#
+# The 64-bit kernel must be aligned to 2MB.  Pass -z max-page-size=0x200000 to
+# the linker to force 2MB page size regardless of the default page size used
+# by the linker.
+#
+ifdef CONFIG_X86_64
+LDFLAGS += $(call ld-option, -z max-page-size=0x200000)
+endif
+
 # Speed up the build
PATCH

fi

# Tweak 4 (Makefile): backport of upstream 8ae94224c9d7 "kbuild: add -fno-PIE" where
# the tree lacks it (4.3.0, 4.5.7, 4.7.4): gcc-12 builds position-independent code by default,
# which the kernel's code model refuses ("code model kernel does not support PIC mode").
if ! grep -qi 'fno-pie' "$TREE/Makefile"; then
  sed -i -e 's/^\(\t\t   -std=gnu89\)$/\1 $(call cc-option,-fno-PIE)/' \
    -e 's/^KBUILD_AFLAGS   := -D__ASSEMBLY__$/& $(call cc-option,-fno-PIE)/' "$TREE/Makefile"
  grep -qi 'fno-pie' "$TREE/Makefile" && echo "tweak no-pie: applied"
fi

# --- 3. config -----------------------------------------------------------------
mkdir -p "$BUILD" "$OUT"
K=(make -C "$TREE" O="$BUILD" ARCH=x86_64 CC="$KCC" HOSTCC="$KCC")
"${K[@]}" tinyconfig >"$BUILD/config.log" 2>&1
cat "$FRAG" >> "$BUILD/.config"
"${K[@]}" olddefconfig >>"$BUILD/config.log" 2>&1
need="SERIAL_8250 SERIAL_8250_CONSOLE BLK_DEV_INITRD RD_GZIP BINFMT_ELF BINFMT_SCRIPT
PROC_FS SYSFS DEVTMPFS DEBUG_FS TRACING FTRACE KPROBES KPROBE_EVENT UPROBES UPROBE_EVENT
BPF_SYSCALL BPF_EVENTS BPF_JIT PERF_EVENTS FRAME_POINTER FUTEX EPOLL SHMEM TMPFS MULTIUSER
PRINTK TTY FTRACE_SYSCALLS PCI VIRTIO_PCI VIRTIO_BLK BLOCK EXT4_FS JBD2 KALLSYMS"
bad=0
for o in $need; do
  grep -qx "CONFIG_$o=y" "$BUILD/.config" || { echo "config: CONFIG_$o is not =y" >&2; bad=1; }
done
if grep -q '=m$' "$BUILD/.config"; then echo "config: something is =m" >&2; bad=1; fi
[ $bad = 0 ] || exit 1

# --- 4. build ------------------------------------------------------------------
start=$(date +%s)
"${K[@]}" -j"$JOBS" bzImage
echo "build took $(( $(date +%s) - start ))s"

# --- 5. outputs ----------------------------------------------------------------
cp "$BUILD/arch/x86/boot/bzImage" "$OUT/bzImage"
cp "$BUILD/System.map" "$OUT/System.map"
cp "$BUILD/.config" "$OUT/config"
cp "$BUILD/vmlinux" "$OUT/vmlinux" 2>/dev/null || true
echo "outputs in $OUT"
