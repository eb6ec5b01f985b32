#!/bin/sh
# Runs inside a test VM (busybox sh, static binaries in /stackwalk) and
# prints TAP.  One suite for every kernel: each test runs where the kernel
# can do what it tests, and where it cannot, the test is that the tool says
# so in one line and exits non-zero.  SW_KERNEL names the kernel: a release
# from ../shared/kernels, "cloud" (Debian's 6.1: kprobes, ORC), "cloud612"
# (Debian's 6.12, the same kind, booted on one CPU with full preemption),
# "fp" (6.1 built with frame pointers) or "fp612" (6.12 built with frame
# pointers, the function tracer and fprobe: kprobe_multi links, kprobes
# through ftrace).  /dev/vda, if there, is a fresh ext4 disk.
cd /stackwalk || exit 1
SC=./stackcount
SN=./stacksnoop
n=0
failed=0
REL=$(uname -r)
# 4.9.337 -> 4009337: sublevels pass 255 on these kernels
VER=$(echo "$REL" | awk -F'[.-]' '{ printf "%d", $1 * 1000000 + $2 * 1000 + $3 }')
ge() { [ "$VER" -ge $(($1 * 1000000 + $2 * 1000)) ]; }
# Debian's cloud kernels: ORC, no frame pointers, the disk driver a module
case $SW_KERNEL in cloud*) CLOUD=yes ;; *) CLOUD=no ;; esac

# t NAME FUNCTION [ARGS...]: one TAP line; the output as comments on failure.
# SW_ONLY=FUNCTION[,FUNCTION...] (run.sh's VM_TESTS) runs only those.
t() {
	name=$1
	shift
	case ",${SW_ONLY:-$1}," in *",$1,"*) ;; *) return 0 ;; esac
	"$@" > /tmp/t.out 2>&1
	st=$?
	n=$((n + 1))
	if [ $st -eq 0 ]; then
		echo "ok $n - $SW_KERNEL: $name"
	else
		echo "not ok $n - $SW_KERNEL: $name"
		sed 's/^/# /' /tmp/t.out
		failed=$((failed + 1))
	fi
}

# sc OUT ARGS...: stackcount, PIDs normalized, stderr in OUT.err, status
# kept.  A run in which the kernel skipped probe runs (said on 6.7+: a BPF
# map syscall, perhaps of the tool's own preempted thread, held the CPU,
# as on the 1-CPU preempt=full 6.12) is run again, up to twice: its
# stacks are not the test's to judge.  SKIPS_OK=1: they are.
sc() {
	out=$1
	shift
	for try in 1 2 3; do
		$SC "$@" > "$out.raw" 2> "$out.err"
		st=$?
		[ -z "${SKIPS_OK:-}" ] && grep -q ' skipped by the kernel, ' "$out.err" || break
	done
	sed -E 's/ \[[0-9]+\]$/ [PID]/' "$out.raw" > "$out"
	cat "$out" "$out.err"
	return $st
}

# wait_for PATTERN FILE: bounded wait until FILE has a line matching PATTERN
wait_for() {
	i=0
	until grep -q "$1" "$2" 2> /dev/null; do
		i=$((i + 1))
		[ $i -gt 600 ] && { echo "timed out waiting for '$1' in $2"; return 1; }
		sleep 0.1
	done
}

# bg TOOL OUT READY ARGS...: TOOL in the background until READY is printed
bg() {
	tool=$1 out=$2 ready=$3
	shift 3
	$tool "$@" > "$out.raw" 2> "$out.err" &
	BG=$!
	wait_for "$ready" "$out.raw"
}

# bg_stop OUT: Ctrl-C the background tool and normalize its output
bg_stop() {
	kill -INT $BG
	wait $BG
	st=$?
	sed -E 's/ \[[0-9]+\]$/ [PID]/' "$1.raw" > "$1"
	cat "$1" "$1.err"
	return $st
}

# Frames after main are glibc's start-up code, reached through frame
# pointers it never set: every walker must agree on them, no test names them.
upto_main() {
	awk '/^  main$/ { print; skip = 1; next } /^    / { skip = 0 } !skip { print }' "$1"
}

# same FILE...: identical, and holding at least one counted stack
same() {
	grep -q '^    [0-9]' "$1" || { echo "no stack counted in $1"; return 1; }
	for f in "$@"; do
		diff -u "$1" "$f" || return 1
	done
}

# expect FILE: FILE equals what the test wrote on stdin
expect() {
	cat > /tmp/expected
	diff -u /tmp/expected "$1"
}

# refused OUT MESSAGE ARGS...: stackcount exits non-zero with one line
refused() {
	out=$1 msg=$2
	shift 2
	$SC "$@" > "$out" 2>&1 && { cat "$out"; echo "exit status 0"; return 1; }
	echo "stackcount: $msg" | expect "$out"
}

kernel_frames() {
	sed -n '3,$p' "$1" | sed '/^    --$/,$d' | grep '^  [^ ]'
}

no_probes_left() {
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		for f in kprobe_events uprobe_events; do
			[ -s $d/$f ] && { cat $d/$f; return 1; }
		done
	done
	return 0
}

# ---- what each kernel is, as its source and the tests found it ----

if ge 4 17; then
	GETPPID=__x64_sys_getppid SYNC='ksys_sync __x64_sys_sync'
else
	GETPPID=sys_getppid SYNC=sys_sync
fi

# The getppid frame: aliases share its address (the cloud kernel's
# __ia32_sys_getppid, listed first), and the 64-bit name is the one shown.
FIRST=$GETPPID
# The syscall entry below a syscall function: the last kernel frames.
# (The cloud kernel's x64_sys_call jumps to the function, a tail call.)
case $SW_KERNEL:$REL in
*:4.1.*)	ENTRY='  system_call_fastpath' ;;
*:4.[2-8].*|*:4.14.*) ENTRY='  entry_SYSCALL_64_fastpath' ;;
*:4.9.*) ENTRY='  do_syscall_64
  entry_SYSCALL_64_after_swapgs' ;;
fp*:*)	ENTRY='  x64_sys_call
  do_syscall_64
  entry_SYSCALL_64_after_hwframe' ;;
*)	ENTRY='  do_syscall_64
  entry_SYSCALL_64_after_hwframe' ;;
esac
ROOT_SYSCALL=$(echo "$ENTRY" | tail -n1 | sed 's/^  //')

# The walker auto picks (../shared/kernels/README.md)
# (with -K, where cfi has no user frames to walk: KAUTO)
if ge 4 9; then AUTO=cfi; elif ge 4 6; then AUTO=stackmap; else AUTO=fp; fi
if ge 4 18; then KAUTO=getstack; elif ge 4 6; then KAUTO=stackmap; else KAUTO=fp; fi
# Walkers that can take kernel frames here (the fp walker needs frame pointers)
UWALKERS=fp
ge 4 6 && UWALKERS="$UWALKERS stackmap"
ge 4 18 && UWALKERS="$UWALKERS getstack"
KWALKERS=$UWALKERS
[ $CLOUD = yes ] && KWALKERS=${UWALKERS#fp }
# cfi walks user frames only: its kernel frames are getstack's (4.18+) or
# the stack map's (4.9-4.17); before 4.9 a stand-in walks uprobes alone
ge 4 3 && UWALKERS="$UWALKERS cfi"
DWALKERS=$KWALKERS
ge 4 9 && DWALKERS="$DWALKERS cfi"
# before 4.9, the cfi walker's stand-in (src/walker_cfi41.c), as it says why,
# and how it finds the frames past the fifth caller (4.2+: by tail calls)
if ge 4 2; then
	CFI41_WHY="no stack maps, per-CPU maps or map value offsets (4.2-4.8): user callers from unwind tables, 5 a program by tail calls, 56 counted alone, 26 beside kernel frames or in an event"
	CFI41_PAST='cfi    '
else
	CFI41_WHY='no tail calls (4.1): the first 5 user callers from unwind tables, then frame pointers'
	CFI41_PAST='fp     '
fi
CFI41_WHY="$CFI41_WHY; kernel frames by a second probe's frame-pointer walk"
# a syscall's event with its user registers: BPF on syscalls:* is 4.14+
SYSEV=t:syscalls:sys_enter_getppid
ge 4 14 || SYSEV=$GETPPID

# ---- the kernel ----

features() {
	# all probed, none kept: the table as the kernel gives it
	STACKWALK_CACHE_DIR= $SC --kernel-features > /tmp/feat.out || return 1
	cat /tmp/feat.out
	# what holds for the boot, kept by one run and read by the next: the same
	$SC --kernel-features > /dev/null && $SC --kernel-features > /tmp/feat.kept || return 1
	grep -v '^kept by' /tmp/feat.out > /tmp/feat.a
	grep -v '^kept by' /tmp/feat.kept > /tmp/feat.b
	grep -q '^kept by a run since boot *yes: ' /tmp/feat.kept &&
		diff -u /tmp/feat.a /tmp/feat.b || return 1
	grep -q "^walker  *$AUTO: " /tmp/feat.out || return 1
	# Debian's 6.1 and 6.12 have BTF, so bpf_find_vma; ours have none: the
	# cfi walker reads each PC's VMA from the maple tree there (cfi_traced)
	case $SW_KERNEL in
	cloud*) grep -q '^bpf_find_vma (5.17) *yes$' /tmp/feat.out || return 1 ;;
	fp*) grep -q '^bpf_find_vma (5.17) *no$' /tmp/feat.out || return 1 ;;
	esac
	# booted preempt=full: each walk's state is its thread's, not the CPU's
	if [ "$SW_KERNEL" = cloud612 ]; then
		grep -q '^uprobe programs preemptible (6.0) *yes (full, debugfs sched/preempt)$' /tmp/feat.out &&
			grep -q '^walk state *per thread$' /tmp/feat.out || return 1
	fi
	[ -r "expect/features-$REL" ] || return 0
	# the shared kernels are fixed images: their whole table is known
	diff -u "expect/features-$REL" /tmp/feat.out
}

# ---- kernel functions ----

getppid_block() {	# COUNT [USER FRAMES...]: one stack of -K or -d output
	count=$1
	shift
	echo "  $FIRST"
	echo "$ENTRY"
	if [ $# -gt 0 ]; then
		echo "    --"
		for f in "$@"; do echo "  $f"; done
	fi
	echo "    $count"
}

traced() {	# PATTERN BLOCK...: the whole output, stacks as given
	echo "Tracing 1 functions for \"$1\"... Hit Ctrl-C to end."
	shift
	for b in "$@"; do
		echo
		echo "$b"
	done
	echo
	echo "Detaching..."
}

getppid_stack() {	# COUNT: the expected -K output
	traced "$GETPPID" "$(getppid_block $1)"
}

kprobe_exact() {	# WALKER: the function's frames to the syscall entry, 3 calls
	if ge 4 2; then
		sc /tmp/k.$1 -K --walker $1 $GETPPID -- ./paths 3 || return 1
	else
		bg $SC /tmp/k.$1 '^Tracing' -K --walker $1 $GETPPID || return 1
		./paths 3
		bg_stop /tmp/k.$1 || return 1
	fi
	getppid_stack 3 | expect /tmp/k.$1
}

kprobe_user_exact() {	# WALKER: -d, user frames from code with frame pointers
	sc /tmp/d.$1 -d --walker $1 $GETPPID -- ./sysc 2 || return 1
	upto_main /tmp/d.$1 > /tmp/d.$1.m
	traced "$GETPPID" "$(getppid_block 2 raw_getppid from_a main)" \
		"$(getppid_block 4 raw_getppid from_b main)" | expect /tmp/d.$1.m
}

kernel_frames_equal() {	# PATTERN: every walker's kernel frames, with addresses
	for w in $KWALKERS; do
		sc /tmp/f.$w -v -K --walker $w "$1" -- ./paths 3 || return 1
	done
	set -- $(for w in $KWALKERS; do echo /tmp/f.$w; done)
	same "$@"
}

# Kernel functions' entries through one kprobe_multi link (where the
# kernel has fprobe and ORC: Debian's 6.12) against perf kprobes one by
# one (STACKWALK_NO_LINKS=1): every walker's stacks the same, kernel
# frames address by address but the first, user frames by name.  The
# first is where each kind of probe says the function was entered: a
# kprobe one byte past its ftrace call's address, fprobe five (past the
# call).
kprobe_links() {
	pat="${GETPPID%pid}*"
	for w in $DWALKERS; do
		for v in '-v -K' -d; do
			# cfi walks user frames: -d only
			[ $w = cfi ] && [ "$v" != -d ] && continue
			sc /tmp/l.$w $v --walker $w "$pat" -- ./sysc 2 || return 1
			export STACKWALK_NO_LINKS=1
			sc /tmp/n.$w $v --walker $w "$pat" -- ./sysc 2
			st=$?
			unset STACKWALK_NO_LINKS
			[ $st = 0 ] || return 1
			for f in /tmp/l.$w /tmp/n.$w; do
				awk 'prev == "" && /^  [0-9a-f]+ / { $1 = "  ENTRY" } { print; prev = $0 }' \
					$f > $f.1
			done
			same /tmp/n.$w.1 /tmp/l.$w.1 || return 1
		done
	done
	sc /tmp/m.out --debug -K "$pat" -- ./sysc 2 || return 1
	if $SC --kernel-features | grep -q '^kprobe_multi links (5.18) *yes$'; then
		grep -q '^attached \([0-9]*\) of \1 probes: \1 through 1 multi-probe links, 0 one by one$' /tmp/m.out
	else
		grep -q '^attached \([0-9]*\) of \1 probes: 0 through 0 multi-probe links, \1 one by one$' /tmp/m.out
	fi
}

kprobe_skipped() {	# runs the kernel skips: a BPF map syscall holds the CPU
	SKIPS_OK=1
	sc /tmp/m.out -K htab_map_update_elem -- ./mapupd 5
	st=$? SKIPS_OK=
	[ $st = 0 ] || return 1
	printf 'Tracing 1 functions for "htab_map_update_elem"... Hit Ctrl-C to end.\n\nDetaching...\n' |
		expect /tmp/m.out || return 1
	# 6.7+ counts each run it skipped; before, nothing does
	if ge 6 7; then
		echo "5 stacks lost: 5 skipped by the kernel, which runs no tracing program inside another on one CPU, nor a kprobe one during a BPF map syscall"
	fi | expect /tmp/m.out.err
}

kprobe_wildcards() {
	sc /tmp/w.glob "${GETPPID%id}*" -K -- ./paths 2 &&
	traced "${GETPPID%id}*" "$(getppid_block 2)" | expect /tmp/w.glob &&
	sc /tmp/w.re -K -r "${GETPPID%d}.\$" -- ./paths 2 &&
	traced "${GETPPID%d}.\$" "$(getppid_block 2)" | expect /tmp/w.re
}

sys_name_hint() {	# 4.17+: sys_NAME is gone; say what it is called now
	refused /tmp/h.out 'no kernel function matches "sys_getppid": since 4.17 the syscall functions are named __x64_sys_*; try __x64_sys_getppid' sys_getppid
}

fp_refused_on_orc() {
	refused /tmp/r.out "the fp walker cannot walk kernel frames: this kernel has no frame pointers (ORC lookup code (__orc_find) in kallsyms); use -U for user frames, or another walker" --walker fp -K $GETPPID
}

fastpath_refused() {	# 4.14.5: the kernel's user unwinder starts from a stale %rbp
	refused /tmp/fp.out "--walker stackmap: this kernel's syscall fast path leaves a stale %rbp in the saved user registers, so its unwinder gets user frames of kernel events wrong; use --walker fp, or -K" --walker stackmap -d $GETPPID -- ./sysc 1
}

# ---- the seeds' examples, on a disk ----

disk_io() {	# files written, renamed and synced on /mnt
	for i in 1 2 3; do
		echo "file $i" > /mnt/f$i
		mv /mnt/f$i /mnt/g$i
		sync
	done
}

# Every kernel stack of submit_bio ends at its real root, and both kinds
# of root are there: the sync syscall's, and the writeback threads'.
submit_bio_roots() {
	bg $SC /tmp/b.out '^Tracing' -K submit_bio || return 1
	disk_io
	bg_stop /tmp/b.out || return 1
	awk '/^  [^ ]/ { last = $1 } /^    [0-9]/ { print last }' /tmp/b.out | sort -u > /tmp/b.roots
	# 6.4+: ret_from_fork is C, called by ret_from_fork_asm, the root
	root=ret_from_fork
	ge 6 4 && root=ret_from_fork_asm
	printf '%s\n' $root "$ROOT_SYSCALL" | sort | expect /tmp/b.roots
}

# The seed's stacksnoop example: sync(2) syncs each file system twice
# (without, then with waiting), and each is this chain; the 2016 walker
# dropped sync_fs_one_sb, the caller at ext4_sync_fs's entry.
sync_fs_chain() {
	if ge 4 2; then
		$SN ext4_sync_fs -- sync > /tmp/s.raw 2>&1 || { cat /tmp/s.raw; return 1; }
	else
		bg $SN /tmp/s '^TIME' ext4_sync_fs || return 1
		sync
		bg_stop /tmp/s > /dev/null || return 1
		cat /tmp/s.err >> /tmp/s.raw
	fi
	cat /tmp/s.raw
	sed -E 's/^[0-9]+\.[0-9]+ +//; s/: [0-9a-f]+ /: /' /tmp/s.raw > /tmp/s.ev
	{
		echo "TIME(s)            STACK"
		for i in 1 2; do
			echo
			echo "ip: ext4_sync_fs"
			echo "r0: sync_fs_one_sb"
			# 6.12's iterate_supers is a wrapper of a function of flags
			{ ge 6 12 && echo "  __iterate_supers"; echo "  iterate_supers"
			  for f in $SYNC; do echo "  $f"; done; echo "$ENTRY"; } |
				awk '{ printf "r%d: %s\n", NR, $1 }'
		done
	} | expect /tmp/s.ev
}

# ---- user functions and USDT (4.3+) ----

expected_work() {
	cat <<EOF
Tracing 1 functions for "./paths:$1"... Hit Ctrl-C to end.

  $1
  $2
  main
    2

  $1
  $3
  main
    4
EOF
}

uprobe_exact() {	# WALKER: the caller at work's entry kept
	sc /tmp/p.$1 -U --walker $1 ./paths:work -- ./paths 2 || return 1
	upto_main /tmp/p.$1 > /tmp/p.$1.m
	{
		expected_work work via_a via_b
		echo
		printf '  work\n  via_a\n  deep3\n  deep2\n  main\n    6\n\nDetaching...\n'
	} | expect /tmp/p.$1.m
}

uprobe_endbr_exact() {	# WALKER: a function starting with endbr64
	sc /tmp/e.$1 -U --walker $1 ./paths:guarded -- ./paths 2 || return 1
	upto_main /tmp/e.$1 > /tmp/e.$1.m
	{ expected_work guarded via_c via_d; printf '\nDetaching...\n'; } | expect /tmp/e.$1.m
}

# WALKER: a USDT probe's caller from its CFI row (src/uframe.c), where
# the %rbp chain skips it: in frameless() for every walker, in the static
# build and in the one linked against Debian's libc, and for fp,
# which reads the saved %rbp back, in rbp_saved(), which cleared it
usdt_frameless() {
	for b in cfipaths cfipaths_dyn; do
		sc /tmp/f.$1 -f -U --walker $1 u:./$b:frameless -- ./$b || return 1
		sed -nE "s/^$b;(.*;)?main;/$b;...;main;/p" /tmp/f.$1 | sort > /tmp/f.m
		printf '%s\n' "$b;...;main;leaf_a;frameless 1" "$b;...;main;leaf_b;frameless 2" |
			expect /tmp/f.m || return 1
	done
	[ $1 = fp ] || return 0
	sc /tmp/f.$1 -f -U --walker $1 u:./cfipaths:rbpsaved -- ./cfipaths rbp || return 1
	sed -nE 's/^cfipaths;(.*;)?main;/cfipaths;...;main;/p' /tmp/f.$1 | sort > /tmp/f.m
	printf '%s\n' 'cfipaths;...;main;saved_a;rbp_saved 1' 'cfipaths;...;main;saved_b;rbp_saved 2' |
		expect /tmp/f.m
}

# A USDT probe behind a semaphore in a leaf that keeps no frame: the
# semaphore set (by the kernel from 4.20, by the tool before), the probe
# fired each call, and its caller given by every walker
usdt_semleaf() {	# WALKER
	sc /tmp/s.$1 -f -U --walker $1 u:./semleaf:guarded -- ./semleaf || return 1
	[ "$(grep -c '^fired$' /tmp/s.$1)" = 3 ] || return 1
	sed -nE 's/^semleaf;(.*;)?main;/semleaf;...;main;/p' /tmp/s.$1 | sort > /tmp/s.m
	printf '%s\n' 'semleaf;...;main;g_a;guarded 1' 'semleaf;...;main;g_b;guarded 2' |
		expect /tmp/s.m
}

usdt_semaphore() {	# tock fires only while the tool holds its semaphore
	sc /tmp/u.out -f -U 'u:./usdt:t*' -- ./usdt 3 || return 1
	sed -E 's/^usdt;.*;main;/usdt;...;main;/' /tmp/u.out | sort > /tmp/u.m
	expect /tmp/u.m <<EOF
usdt;...;main;tick_site 3
usdt;...;main;tock_site 6
EOF
}

# cfipaths: the callers a frame-pointer walk loses (a frameless function,
# a function's first instruction, glibc's syscall()), found from each
# function's unwind table, to _start as on the host (tests/cfi.bats)
cfipaths_stacks() {	# BINARY PATTERN: BINARY's folded stacks there
	sc /tmp/c.out -f -U --walker cfi "$2" -- ./$1 || return 1
	grep "^$1;" /tmp/c.out | sort > /tmp/c.m
	expect /tmp/c.m
}

cfi_callers() {	# BINARY: cfipaths static, built as the tests' workloads or -O2
	R="$1;_start;__libc_start_main;__libc_start_call_main;main"
	printf '%s\n' "$R;leaf_a;frameless 1" "$R;leaf_b;frameless 2" |
		cfipaths_stacks $1 "u:./$1:frameless" || return 1
	printf '%s\n' "$R;entry_a;entered 3" "$R;entry_b;entered 4" |
		cfipaths_stacks $1 "./$1:entered" || return 1
	printf '%s\n' "$R;sys_a;syscall 5" "$R;sys_b;syscall 6" |
		cfipaths_stacks $1 $SYSEV
}

# A kprobe in the syscall, -d: its kernel frames, then glibc's syscall()
# and every caller above it, to _start
cfi_kprobe_d() {	# STATIC DYNAMIC: the two builds of cfipaths
	sc /tmp/k.out -d --walker cfi $GETPPID -- ./$1 || return 1
	U='main __libc_start_call_main __libc_start_main _start'
	traced "$GETPPID" "$(getppid_block 5 syscall sys_a $U)" \
		"$(getppid_block 6 syscall sys_b $U)" | expect /tmp/k.out || return 1
	# dynamic: glibc's syscall() and __libc_start_call_main, unnamed
	# without libc's debug file, in Debian's libc
	sc /tmp/k.out -d --walker cfi $GETPPID -- ./$2 || return 1
	U='main [unknown] __libc_start_main _start'
	traced "$GETPPID" "$(getppid_block 5 syscall sys_a $U)" \
		"$(getppid_block 6 syscall sys_b $U)" | expect /tmp/k.out
}

# 4.18-5.16: a process's list, built in BPF from its VMAs, has all that
# the frontend's would (the vDSO too), so the frontend never replaces it.
# A replacement read before the process mapped more code dropped that
# code: BPF rebuilt the list at the mmap, then lost it to ours, and each
# frame there took a frame-pointer step (glibc's syscall() hid its caller).
cfi_lists_kept() {
	rm -f /tmp/lk.in
	mkfifo /tmp/lk.in
	exec 7<> /tmp/lk.in
	# stdin given on the command itself: a shell gives an asynchronous one /dev/null
	$SC --debug --walker cfi ./phases:work -- ./phases < /tmp/lk.in \
		> /tmp/lk.raw 2> /tmp/lk.err 7>&- &
	BG=$!
	wait_for '^Tracing' /tmp/lk.raw || return 1
	echo 2 >&7
	wait_for '^done 2' /tmp/lk.raw || { cat /tmp/lk.raw /tmp/lk.err; return 1; }
	echo 3 >&7
	wait_for '^done 3' /tmp/lk.raw || return 1
	exec 7>&-
	wait $BG || { cat /tmp/lk.raw /tmp/lk.err; return 1; }
	grep '^process lists: built in BPF' /tmp/lk.raw | grep -q 'the vDSO by mm_struct.context.vdso +' ||
		{ cat /tmp/lk.raw; return 1; }
	grep '^unwind tables at the end: .* replaced' /tmp/lk.raw |
		expect_line 'unwind tables at the end: 0 lists built in BPF replaced by ours' || return 1
	sed -n '/^Tracing/,$p' /tmp/lk.raw | grep -v '^done \|^unwind tables\|^tables kept' |
		sed -E 's/ \[[0-9]+\]$/ [PID]/' > /tmp/lk.out
	expect /tmp/lk.out <<EOF
Tracing 1 functions for "./phases:work"... Hit Ctrl-C to end.

  work
  via_a
  main
  __libc_start_call_main
  __libc_start_main
  _start
    5

Detaching...
EOF
}

# A syscall made inside the vDSO (its clock_gettime has no CPU-time clock):
# the first frame is vDSO code, stepped by the vDSO's own CFI, which a
# -- COMMAND's list takes from the kernel's vDSO (4.18-5.16: the list BPF
# built, cfi_lists_kept), then every caller, 2 by via_a, 3 by via_b.  Not
# main's: glibc's start-up reads the clock itself where getrandom() finds
# the kernel's entropy not ready yet (a fresh virtual machine's).
cfi_vdso() {
	sc /tmp/vd.out -f -U --walker cfi t:syscalls:sys_enter_clock_gettime -- ./vdsopaths || return 1
	grep ';main;' /tmp/vd.out | sort > /tmp/vd.s
	expect /tmp/vd.s <<EOF
vdsopaths;_start;__libc_start_main;__libc_start_call_main;main;via_a;__clock_gettime;clock_gettime 2
vdsopaths;_start;__libc_start_main;__libc_start_call_main;main;via_b;__clock_gettime;clock_gettime 3
EOF
}

# stacksnoop, cfi: each event's whole stack (4.9-4.17: the key as counted,
# sent by the walk's last program)
cfi_snoop() {
	$SN --walker cfi u:./cfipaths:frameless -- ./cfipaths > /tmp/cs.out 2>&1 ||
		{ cat /tmp/cs.out; return 1; }
	snoop_events /tmp/cs.out > /tmp/cs.ev
	{
		echo 'TIME(s)            STACK'
		for leaf in leaf_a leaf_b leaf_b; do
			echo
			printf 'ip: frameless\nr0: %s\nr1: main\nr2: __libc_start_call_main\nr3: __libc_start_main\nr4: _start\n' $leaf
		done
	} | expect /tmp/cs.ev
}

# 4.3-4.8: an event's record holds the fp key's 26 user frames, so a
# uprobe's chain ends there: a stack of 26 whole, one deeper cut and said
cfi_snoop_deep() {
	for n in 20 21; do
		$SN --walker cfi ./deep:target -- ./deep $n > /tmp/sd.out 2> /tmp/sd.err ||
			{ cat /tmp/sd.out /tmp/sd.err; return 1; }
		snoop_events /tmp/sd.out > /tmp/sd.ev
		{
			echo target
			i=$n
			while [ $i -ge 0 ]; do echo down$((i % 3)); i=$((i - 1)); done
			printf 'main\n__libc_start_call_main\n__libc_start_main\n_start\n'
		} | head -n 26 | awk '{ printf "%s: %s\n", NR == 1 ? "ip" : "r" NR - 2, $1 }' > /tmp/sd.f
		[ $n = 21 ] && echo '[truncated]' >> /tmp/sd.f
		{ echo 'TIME(s)            STACK'; for e in 1 2; do echo; cat /tmp/sd.f; done; } |
			expect /tmp/sd.ev || return 1
		if [ $n = 21 ]; then
			echo "2 events had stacks deeper than the cfi walker holds: shown cut, ending in [truncated]"
		fi | expect /tmp/sd.err || return 1
	done
}

# The same program linked against Debian's libc and ld.so (in the image at
# their paths): tables for three binaries, found where the loader put them
cfi_callers_dynamic() {	# BINARY
	b=$1
	R="$b;_start;__libc_start_main;[unknown];main"
	for p in "u:./$b:frameless leaf_a;frameless 1 leaf_b;frameless 2" \
		 "./$b:entered entry_a;entered 3 entry_b;entered 4" \
		 "$SYSEV sys_a;syscall 5 sys_b;syscall 6"; do
		set -- $p
		sc /tmp/c.out -f -U --walker cfi "$1" -- ./$b || return 1
		grep "^$b;" /tmp/c.out | sort > /tmp/c.m
		printf '%s\n' "$R;$2 $3" "$R;$4 $5" | expect /tmp/c.m || return 1
	done
}

cfi_fork() {	# a child of fork (no exec) walked whole from its first event
	sc /tmp/c.out -f -U --walker cfi u:./cfipaths:frameless -- ./cfipaths fork || return 1
	grep '^cfipaths;' /tmp/c.out | sort > /tmp/c.m
	R='cfipaths;_start;__libc_start_main;__libc_start_call_main;main'
	printf '%s\n' "$R;in_child;leaf_a;frameless 1" "$R;in_child;leaf_b;frameless 2" \
		"$R;in_parent;leaf_a;frameless 1" "$R;in_parent;leaf_b;frameless 2" |
		expect /tmp/c.m
}

# Another process updates a BPF map over and over, each update a long
# copy the kernel runs with perf events' programs held off: on one CPU
# that preempts anywhere, COMMAND's shell and cfipaths often run in the
# middle of one.  The programs that follow their forks must run all the
# same (raw tracepoints): one a fork went without would lose a child.
cfi_follow_busy() {
	./mapupd 0 1048576 &
	hog=$!
	sc /tmp/c.out -f -U --walker cfi u:./cfipaths:frameless -- sh -c '
		i=0; while [ $i -lt 40 ]; do ./cfipaths fork || exit 1; i=$((i + 1)); done'
	st=$?
	kill $hog
	wait $hog
	[ $st = 0 ] || return 1
	grep '^cfipaths;' /tmp/c.out | sort > /tmp/c.m
	R='cfipaths;_start;__libc_start_main;__libc_start_call_main;main'
	printf '%s\n' "$R;in_child;leaf_a;frameless 40" "$R;in_child;leaf_b;frameless 80" \
		"$R;in_parent;leaf_a;frameless 40" "$R;in_parent;leaf_b;frameless 80" |
		expect /tmp/c.m && : | expect /tmp/c.out.err
}

# TracerPid of COMMAND and of a process it starts, into /tmp/cmd and /tmp/kid
# ("tool" where the tool is it, as COMMAND's parent)
tracer_pids() {
	sc /tmp/c.out -U --walker cfi "$GETPPID" -- sh -c '
		tp() { while read -r k v; do [ "$k" = TracerPid: ] && echo "$v"; done < "/proc/$1/status"; }
		t=$(tp $$); [ "$t" = "$PPID" ] && t=tool; echo "$t" > /tmp/cmd
		(tp self > /tmp/kid); exit 0'
}

# COMMAND runs untraced: each PC's VMA is found by bpf_find_vma (5.17+
# with BTF) or read from the maple tree (6.1+ without BTF: the fp
# kernels), or lists are built in BPF from the VMAs (4.18-6.0, where a
# task's VMAs are a list); --debug says which.  STACKWALK_NO_VMA_LISTS=1
# shows the fallback, COMMAND held by the tool at its execs.
cfi_traced() {
	if $SC --kernel-features | grep -q '^bpf_find_vma (5.17) *yes$'; then
		T=0
	elif ! ge 4 18; then
		# a list too large to build in BPF
		T=tool
	else
		T=0
		sc /tmp/c.dbg --debug -U --walker cfi "$GETPPID" -- ./sysc 1 || return 1
		if ge 6 1; then
			grep -q "^process mappings: each PC's VMA read from the process's maple tree (offsets measured on this process: " /tmp/c.dbg || return 1
		else
			grep -q '^process lists: built in BPF from their VMAs' /tmp/c.dbg || return 1
		fi
	fi
	tracer_pids || return 1
	echo $T | expect /tmp/cmd && echo 0 | expect /tmp/kid || return 1
	[ $T = 0 ] && $SC --kernel-features | grep -q '^bpf_find_vma (5.17) *yes$' && return 0
	export STACKWALK_NO_VMA_LISTS=1
	tracer_pids
	st=$?
	unset STACKWALK_NO_VMA_LISTS
	[ $st = 0 ] && echo tool | expect /tmp/cmd && echo 0 | expect /tmp/kid
}

# A process started while the tool is stopped (SIGSTOP) has no table of
# its binary when it runs: its list, made at exec (BPF, 4.18-5.16) or its
# VMAs (5.17+), names the mapping without one; every event is walked by
# frame pointers, counted and said
# A child of fork that runs on after its parent ran exec (sh): its
# mappings are still its own image's.  4.18+ copies the parent's list at
# fork (or finds each frame's table by its VMA, 5.17+): every caller.
# 4.2-4.17 walks the child with its parent's list by reference, which it
# takes only while that is the one the child forked with: the parent's
# new image's list is not, so the child's frames are frame-pointer steps
# (leaf_a and leaf_b are lost), counted and said, never looked up in the
# other image's tables.
cfi_forkexec() {
	sc /tmp/fe.out -f -U --walker cfi u:./cfipaths:frameless -- ./cfipaths forkexec || return 1
	grep '^cfipaths;' /tmp/fe.out | sort > /tmp/fe.m
	R='cfipaths;_start;__libc_start_main;__libc_start_call_main;main;forkexec;in_child'
	if ge 4 18; then
		printf '%s\n' "$R;leaf_a;frameless 1" "$R;leaf_b;frameless 2" | expect /tmp/fe.m
		return
	fi
	echo 'cfipaths;__libc_start_call_main;main;forkexec;in_child;frameless 3' |
		expect /tmp/fe.m || return 1
	{
		echo "the user frames of 3 events were found by frame pointers where unwind tables were not loaded yet (a process, or a library, that came after its maps were read), so callers of code without frame pointers may be missing or wrong"
		# 4.1-4.8: glibc's %rbp, no frame's, ends the steps (cfi_untabled_41)
		ge 4 9 && echo "3 user stacks end early: the walk met CFI it cannot follow (a CFA from a register other than %rsp and %rbp, or an expression) or a CFA not above the frame's own, and left the callers beyond out rather than guess them"
	} | expect /tmp/fe.out.err
}

# The tool stopped (by its command) while cfipaths_o2 runs: no list of the
# process comes from the frontend, so BPF alone finds each frame's table,
# by its VMA (bpf_find_vma; the maple tree read on 6.1+ without BTF) or
# in the list it built at exec (4.18-5.16).  A frame-pointer step would
# lose leaf_a and leaf_b, which keep no frame.
cfi_stopped() {
	R='cfipaths_o2;_start;__libc_start_main;__libc_start_call_main;main'
	sc /tmp/st.out -f -U --walker cfi u:./cfipaths_o2:frameless -- \
		sh -c "kill -STOP \$PPID; $PWD/cfipaths_o2; kill -CONT \$PPID" || return 1
	grep '^cfipaths_o2;' /tmp/st.out | sort > /tmp/st.m
	printf '%s\n' "$R;leaf_a;frameless 1" "$R;leaf_b;frameless 2" | expect /tmp/st.m &&
		: | expect /tmp/st.out.err
}

cfi_untabled() {
	bg $SC /tmp/u.out '^Tracing' -U --walker cfi u:./cfipaths:frameless || return 1
	kill -STOP $BG
	./cfipaths rooted
	kill -CONT $BG
	bg_stop /tmp/u.out || return 1
	# Walked from a list or the VMAs (found by bpf_find_vma or in the
	# maple tree), the frame-pointer steps end where one would not lie
	# above the last: the walk's own check, said.  rooted hands its
	# callees such a frame pointer; above main, glibc's %rbp would decide.
	R='  frameless
  rooted'
	printf 'Tracing 1 functions for "u:./cfipaths:frameless"... Hit Ctrl-C to end.\n\n%s\n    3\n\nDetaching...\n' \
		"$R" | expect /tmp/u.out || return 1
	{
		echo "the user frames of 3 events were found by frame pointers where unwind tables were not loaded yet (a process, or a library, that came after its maps were read), so callers of code without frame pointers may be missing or wrong"
		echo "3 user stacks end early: the walk met CFI it cannot follow (a CFA from a register other than %rsp and %rbp, or an expression) or a CFA not above the frame's own, and left the callers beyond out rather than guess them"
	} | expect /tmp/u.out.err
}

# 4.18-5.16 without lists built in BPF: COMMAND held while its loader maps
# its libraries, each table read before its code runs
cfi_held() {
	export STACKWALK_NO_VMA_LISTS=1
	cfi_callers_dynamic cfipaths_dyn
	st=$?
	unset STACKWALK_NO_VMA_LISTS
	return $st
}

cfi_links() {	# a wildcard, cfi: its tail-calling programs loaded for links (6.6+)
	sc /tmp/m.out --debug -f -U --walker cfi './cfipaths:ent*' -- ./cfipaths || return 1
	if $SC --kernel-features | grep -q '^uprobe_multi links (6.6) *yes$'; then
		grep -q '^attached 3 of 3 probes: 3 through [12] multi-probe links, 0 one by one$' /tmp/m.out
	else
		grep -q '^attached 3 of 3 probes: 0 through 0 multi-probe links, 3 one by one$' /tmp/m.out
	fi || return 1
	grep '^cfipaths;' /tmp/m.out | sort > /tmp/m.m
	R='cfipaths;_start;__libc_start_main;__libc_start_call_main;main'
	printf '%s\n' "$R;entry_a 3" "$R;entry_a;entered 3" "$R;entry_b 4" "$R;entry_b;entered 4" |
		sort | expect /tmp/m.m
}

cfi_cut() {	# CFI no row holds, a CFA not above %rsp: the walk ends, counted
	sc /tmp/c.out -f -U --walker cfi 'u:./cfipaths:*cfa' -- ./cfipaths cut || return 1
	sort /tmp/c.out > /tmp/c.m
	printf '%s\n' "cfipaths;low_cfa 1" "cfipaths;rbx_cfa 1" |
		expect /tmp/c.m || return 1
	echo "2 user stacks end early: the walk met CFI it cannot follow (a CFA from a register other than %rsp and %rbp, or an expression) or a CFA not above the frame's own, and left the callers beyond out rather than guess them" |
		expect /tmp/c.out.err
}

ia32_walkers() {	# a 32-bit task: fp says it leaves it, getstack walks it
	sc /tmp/i.out --walker fp -U ./ia32:work -- ./ia32 || return 1
	echo "3 events of 32-bit tasks not walked: the fp walker reads 64-bit frames; use --walker getstack or stackmap for them" |
		expect /tmp/i.out.err || return 1
	sc /tmp/i.out --walker getstack -f -U ./ia32:work -- ./ia32 || return 1
	echo "ia32;[unknown];_start;via_a;work 3" | expect /tmp/i.out
}

# 4.9-4.17: a uprobe's user frames, 127 as from 4.18: past the 32 tail
# calls of a chain more probes carry the walk on, and the frames past the
# key's 48 are interned as chunks (56 before 4.9, the stand-in's counting
# key, bpf/cfi41.bpf.c): a stack of that many whole, one frame more cut,
# marked and said (deep N: target <- down(N % 3) ... down0 <- main)
cfi_deep() {
	if ge 4 9; then max=127; else max=56; fi
	deep_cut ./deep:target $max '' 2
}

# deep_frames N LEAF: deep N's frames at target (LEAF: one below it), leaf first
deep_frames() {
	[ -n "$2" ] && echo "$2"
	echo target
	i=$1
	while [ $i -ge 0 ]; do echo down$((i % 3)); i=$((i - 1)); done
	printf 'main\n__libc_start_call_main\n__libc_start_main\n_start\n'
}

# deep_cut PROBE MAX LEAF EVENTS: PROBE's stacks (LEAF: a frame below
# target's, where it calls getppid() at deep N N) of MAX frames whole,
# then of one more, cut, marked and said
deep_cut() {
	whole=$(($2 - 6))
	[ -n "$3" ] && whole=$((whole - 1))
	for n in $whole $((whole + 1)); do
		sc /tmp/dp.out -f -U --walker cfi $1 -- ./deep $n ${3:+$n} || return 1
		grep '^deep;' /tmp/dp.out > /tmp/dp.m
		deep_frames $n "$3" | head -n $2 | sed '1!G;h;$!d' | tr '\n' ';' > /tmp/dp.f
		s=$(cat /tmp/dp.f)
		if [ $n -gt $whole ]; then
			echo "deep;[truncated];${s%;} $4" | expect /tmp/dp.m || return 1
			echo "$4 events had stacks deeper than the cfi walker holds: shown cut, ending in [truncated]" |
				expect /tmp/dp.out.err || return 1
		else
			echo "deep;${s%;} $4" | expect /tmp/dp.m || return 1
			expect /tmp/dp.out.err < /dev/null || return 1
		fi
	done
}

# 4.9-4.17: a kprobe's stack (getppid() called by deep's target) of 127
# frames as a uprobe's (cfi_deep); a syscall tracepoint's (4.14+), whose
# event takes one program before 4.15, of the key's 48, one chain's
cfi_deep_kp() {
	deep_cut $GETPPID 127 __getppid 10 || return 1
	# stacksnoop: each event's 127 frames, sent by the same chains
	$SN -U --walker cfi $GETPPID -- ./deep 120 120 > /tmp/dk.out 2> /tmp/dk.err ||
		{ cat /tmp/dk.out /tmp/dk.err; return 1; }
	snoop_events /tmp/dk.out > /tmp/dk.ev
	deep_frames 120 __getppid | awk '{ printf "%s: %s\n", NR == 1 ? "ip" : "r" NR - 2, $1 }' > /tmp/dk.f
	{ echo 'TIME(s)            STACK'; for e in $(seq 10); do echo; cat /tmp/dk.f; done; } |
		expect /tmp/dk.ev || return 1
	ge 4 14 || return 0
	deep_cut t:syscalls:sys_enter_getppid 48 __getppid 10
}

cfi_refused() {	# before 4.9: one line; auto takes another walker
	refused /tmp/cr.out "--walker cfi: it unwinds user frames, and this run records none; use --walker auto" \
		--walker cfi -K $GETPPID
}

# cmd_said TOOL COMMAND ERR: what TOOL said of -- COMMAND in ERR (4.1:
# that the processes it starts are not followed; else nothing)
cmd_said() {
	if ge 4 2; then
		expect "$3" < /dev/null
	else
		echo "$1: this kernel has no bpf_get_current_pid_tgid (4.2+) to see forks with, so only $2 itself is traced, not the processes it starts" |
			expect "$3"
	fi
}

# expect_line LINE: standard input is that one line
expect_line() {
	cat > /tmp/got
	echo "$1" | expect /tmp/got
}

# 4.1, no tail calls: one program takes a kprobe's user frames, the first
# five callers by CFI, then frame pointers.  cfipaths' stacks through
# glibc's syscall() whole to _start, as gdb gives them on the host
# (tests/cfi.bats), built both ways, static and dynamic; auto takes it
# for -U.
cfi_callers_41() {
	for b in cfipaths cfipaths_o2; do
		R="$b;_start;__libc_start_main;__libc_start_call_main;main"
		printf '%s\n' "$R;sys_a;syscall 5" "$R;sys_b;syscall 6" |
			cfipaths_stacks $b $GETPPID || return 1
	done
	for b in cfipaths_dyn cfipaths_o2_dyn; do
		R="$b;_start;__libc_start_main;[unknown];main"
		printf '%s\n' "$R;sys_a;syscall 5" "$R;sys_b;syscall 6" |
			cfipaths_stacks $b $GETPPID || return 1
	done
	sc /tmp/c.out --debug -U $GETPPID -- ./cfipaths_o2 || return 1
	grep '^walker: ' /tmp/c.out |
		expect_line "walker: cfi ($CFI41_WHY)"
}

# -d: the kernel frames by a second probe of the function, whose program
# 4.1 runs before the user side's (newest first), and counted by a third,
# run after it: programs run in another order would pair each event's
# kernel frames with the last one's user frames, or miss them, and the
# stacks or counts would be off
cfi_kprobe_d_41() {
	cfi_kprobe_d cfipaths cfipaths_dyn || return 1
	cfi_kprobe_d cfipaths_o2 cfipaths_o2_dyn || return 1
	sc /tmp/c.out --debug -d $GETPPID -- ./cfipaths_o2 || return 1
	grep '^walker: ' /tmp/c.out |
		expect_line "walker: cfi ($CFI41_WHY)"
}

read_null_block() {	# CALLER COUNT: one stack of cfipaths null, -d, on 4.1.52
	printf '  %s\n' read_null __vfs_read vfs_read SyS_read $ROOT_SYSCALL
	echo '    --'
	printf '  %s\n' syscall $1 main __libc_start_call_main __libc_start_main _start
	echo "    $2"
}

# A kprobe three calls below the system call's function (read_null): the
# user's %rbp is where the kernel chain ends, found by a probe of its own
# that runs first.  In cfipaths, built with frame pointers, the frames
# above glibc's syscall() take their CFA from %rbp.
cfi_deep_41() {
	for b in cfipaths cfipaths_o2; do
		R="$b;_start;__libc_start_main;__libc_start_call_main;main"
		sc /tmp/n.out -f -U --walker cfi read_null -- ./$b null || return 1
		grep "^$b;" /tmp/n.out | sort > /tmp/n.m
		printf '%s\n' "$R;sys_a;syscall 5" "$R;sys_b;syscall 6" |
			expect /tmp/n.m || return 1
	done
	# -d: the kernel frames as 4.1.52 has them (only this kernel runs it)
	sc /tmp/n.out -d --walker cfi read_null -- ./cfipaths null || return 1
	traced read_null "$(read_null_block sys_a 5)" "$(read_null_block sys_b 6)" |
		expect /tmp/n.out
}

# -v: how each frame was found: the event's registers, five callers by
# CFI, then frame-pointer steps (deep is built with frame pointers)
cfi_tags_41() {
	sc /tmp/t.out -v -U --walker cfi $GETPPID -- ./deep 8 9 || return 1
	sed -E 's/^  [0-9a-f]+ +/  /' /tmp/t.out.raw |
		awk '/ main$/ { print; skip = 1; next } /^    [0-9]/ { skip = 0 } !skip' > /tmp/t.m
	expect /tmp/t.m <<EOF || return 1
Tracing 1 functions for "$GETPPID"... Hit Ctrl-C to end.

  regs   __getppid
  cfi    target
  cfi    down2
  cfi    down1
  cfi    down0
  cfi    down2
  ${CFI41_PAST}down1
  ${CFI41_PAST}down0
  ${CFI41_PAST}down2
  ${CFI41_PAST}down1
  ${CFI41_PAST}down0
  ${CFI41_PAST}main
    10

Detaching...
EOF
	cmd_said stackcount ./deep /tmp/t.out.err
}

# Two processes whose maps the tool read, released together, 6,000 calls
# each on two CPUs: each walk's state is its CPU's, so every stack is
# whole to _start and under its own process.  They live on until the
# output is printed: 4.1 has no hook to keep the maps of a process that
# was running before the tool and has exited.
cfi_race_41() {
	rm -f /tmp/r41.a /tmp/r41.b /tmp/r41.out
	mkfifo /tmp/r41.a /tmp/r41.b /tmp/r41.out
	./sysc 2000 /tmp/r41.a /tmp/r41.out & A=$!
	./sysc 2000 /tmp/r41.b /tmp/r41.out & B=$!
	exec 8> /tmp/r41.a 9> /tmp/r41.b
	bg $SC /tmp/r41 '^Tracing' -U -P $GETPPID || return 1
	printf x >&8
	printf x >&9
	head -c 2 /tmp/r41.out > /dev/null
	bg_stop /tmp/r41
	st=$?
	printf x >&8
	printf x >&9
	exec 8>&- 9>&-
	wait $A && wait $B && [ $st -eq 0 ] || return 1
	U='main __libc_start_call_main __libc_start_main _start'
	for p in $A $B; do
		for f in "from_a 2000" "from_b 4000"; do
			set -- $f
			printf '  raw_getppid\n  %s\n' $1
			printf '  %s\n' $U
			printf '    sysc [%s]\n    %s\n\n' $p $2
		done
	done > /tmp/r41.want
	awk -v a="$A" -v b="$B" 'BEGIN { RS = ""; ORS = "\n\n" }
		index($0, "sysc [" a "]") || index($0, "sysc [" b "]")' /tmp/r41.raw |
		sort_blocks > /tmp/r41.got
	sort_blocks < /tmp/r41.want | expect /tmp/r41.got || return 1
	expect /tmp/r41.err < /dev/null
}

# sort_blocks: blank-line separated blocks in a fixed order
sort_blocks() {
	awk 'BEGIN { RS = "" } { gsub(/\n/, "\001"); print }' | sort |
		awk '{ gsub(/\001/, "\n"); print; print "" }'
}

# A process that came after the tool read every process's maps, and ran
# while the tool was stopped (so before it could read them as the kernel
# reported them): its frames by frame pointers, counted and said
cfi_untabled_41() {
	bg $SC /tmp/un '^Tracing' -P -U $GETPPID || return 1
	kill -STOP $BG
	./cfipaths_o2
	kill -CONT $BG
	bg_stop /tmp/un || return 1
	proc_blocks /tmp/un cfipaths_o2 > /tmp/un.m
	printf '  syscall\n    cfipaths_o2 [PID]\n    11\n\n' | expect /tmp/un.m || return 1
	echo "the user frames of 11 events were found by frame pointers where unwind tables were not loaded yet (a process, or a library, that came after its maps were read), so callers of code without frame pointers may be missing or wrong" |
		expect /tmp/un.err
}

cfi_explain() {	# each user frame's rule, as the walk used it, to main
	$SN --explain ./cfipaths:entered -- ./cfipaths > /tmp/x.out 2>&1 || { cat /tmp/x.out; return 1; }
	# the first event's lines, the time and addresses left out
	awk 'NR > 2 && NF == 1 { exit } NR > 2' /tmp/x.out | cut -c20- |
		sed -E 's/^(ip|r[0-9]+): [0-9a-f]+ /\1: ADDR /' | sed '/ main$/q' > /tmp/x.m
	expect /tmp/x.m <<'EOF'
ip: ADDR regs entered
    CFA = %rsp+8: the return address is on top of the stack; %rbp still holds the caller's
r0: ADDR cfi entry_a
    CFA = %rbp+16: the function keeps a frame pointer; the return address is at %rbp+8; the caller's %rbp is saved at CFA-16
r1: ADDR cfi main
EOF
}

# ---- two processes on one CPU that preempts fully (cloud612) ----

# A uprobe's BPF program runs with migration disabled, yet on a kernel
# that preempts fully it can be preempted anywhere, between its tail calls
# too: 6.12's bpf_prog_run_array_uprobe() and uprobe_prog_run() take only
# rcu_read_lock(), which leaves preemption on under PREEMPT_RCU. On one
# CPU the other process's events then run their programs, on the same
# per-CPU memory, before the first event's walk goes on. `cfipaths race N`
# makes both processes hit the probe a few thousand times; any event of
# one walked with the other's state or key shows as a stack mixed from
# both, or counted under the other's pid (-P): no count is then exact.

one_cpu_full_preemption() {
	cpus=$(grep -c '^processor' /proc/cpuinfo)
	grep -q '(full)' /sys/kernel/debug/sched/preempt && [ "$cpus" -eq 1 ] && return 0
	echo "want 1 CPU and full preemption: $cpus CPUs, preemption $(cat /sys/kernel/debug/sched/preempt)"
	return 1
}

RACE_N=1000

race_block() {	# FUNCTION CALLER WHO COUNT [FRAMES AFTER main...]: one -P stack
	printf '  %s\n  %s\n  %s\n  race\n  main\n' "$1" "$2" "$3"
	count=$4
	shift 4
	for f in "$@"; do echo "  $f"; done
	printf '    cfipaths [PID]\n    %s\n' "$count"
}

cfi_race() {	# every stack whole, to _start, and each under its own process
	one_cpu_full_preemption || return 1
	sc /tmp/rc.out -P -U --walker cfi 'u:./cfipaths:frameless' -- ./cfipaths race $RACE_N ||
		return 1
	set -- __libc_start_call_main __libc_start_main _start
	traced 'u:./cfipaths:frameless' \
		"$(race_block frameless leaf_a in_child $RACE_N "$@")" \
		"$(race_block frameless leaf_a in_parent $RACE_N "$@")" \
		"$(race_block frameless leaf_b in_child $((2 * RACE_N)) "$@")" \
		"$(race_block frameless leaf_b in_parent $((2 * RACE_N)) "$@")" | expect /tmp/rc.out
}

getstack_race() {	# getstack builds its key in per-CPU memory too
	one_cpu_full_preemption || return 1
	sc /tmp/rg.out -P -U --walker getstack ./cfipaths:entered -- ./cfipaths race $RACE_N ||
		return 1
	upto_main /tmp/rg.out > /tmp/rg.m
	traced ./cfipaths:entered \
		"$(race_block entered entry_a in_child $((3 * RACE_N)))" \
		"$(race_block entered entry_a in_parent $((3 * RACE_N)))" \
		"$(race_block entered entry_b in_child $((4 * RACE_N)))" \
		"$(race_block entered entry_b in_parent $((4 * RACE_N)))" | expect /tmp/rg.m
}

uprobes_refused() {	# 4.1-4.2
	refused /tmp/ur.out "this kernel cannot run BPF on uprobes (4.3+, CONFIG_UPROBE_EVENTS), so user functions cannot be traced" ./paths:work
}

# ---- tracepoints (4.7+) ----

sysc_user() {	# PATTERN N: the -U output of `sysc N`'s calls, to main
	echo "Tracing 1 functions for \"$1\"... Hit Ctrl-C to end."
	printf '\n  raw_getppid\n  from_a\n  main\n    %d\n' $2
	printf '\n  raw_getppid\n  from_b\n  main\n    %d\n' $(($2 * 2))
	printf '\nDetaching...\n'
}

syscall_tp_exact() {	# 4.14+: the user frames of sys_enter_getppid
	sc /tmp/tp.out -U t:syscalls:sys_enter_getppid -- ./sysc 2 || return 1
	upto_main /tmp/tp.out > /tmp/tp.m
	sysc_user t:syscalls:sys_enter_getppid 2 | expect /tmp/tp.m
}

syscall_tp_refused() {	# 4.7-4.13
	refused /tmp/tr.out "this kernel cannot run BPF on syscalls:* tracepoints (4.14+); trace t:raw_syscalls:sys_enter, or the kernel function sys_NAME, instead" t:syscalls:sys_enter_getppid
}

tp_refused() {	# before 4.7
	refused /tmp/tq.out "this kernel cannot run BPF on tracepoints (4.7+); trace a kernel function instead, e.g. sys_getppid" t:sched:sched_process_exec
}

tp_exec_once() {	# one exec, one event, every walker's kernel frames alike
	kernel_frames_equal t:sched:sched_process_exec &&
	grep -c '^    [0-9]' /tmp/f.$KAUTO | grep -qx 1 && grep -qx '    1' /tmp/f.$KAUTO
}

# ---- options ----

opt_P() {
	sc /tmp/o.P -K -P $GETPPID -- ./paths 3 || return 1
	traced $GETPPID "$(getppid_block 3 | awk '/^    [0-9]+$/ { print "    paths [PID]" } 1')" |
		expect /tmp/o.P
}

opt_c() {	# only the CPU named: the same run pinned to CPU 0, seen from 0 and 1
	sc /tmp/o.c0 -K -c 0 $GETPPID -- taskset 1 ./paths 3 || return 1
	getppid_stack 3 | expect /tmp/o.c0 || return 1
	# cloud612 boots with one CPU: there is no CPU 1 to see it from
	[ "$(grep -c '^processor' /proc/cpuinfo)" -eq 1 ] &&
		{ refused /tmp/o.c1 "-c 1: this machine's online CPUs are 0; give one of them" \
			-K -c 1 $GETPPID; return; }
	sc /tmp/o.c1 -K -c 1 $GETPPID -- taskset 1 ./paths 3 || return 1
	printf 'Tracing 1 functions for "%s"... Hit Ctrl-C to end.\n\nDetaching...\n' $GETPPID |
		expect /tmp/o.c1
}

opt_p() {	# -p: a process that was running before, and only it
	rm -f /tmp/ph.in
	mkfifo /tmp/ph.in
	./phases < /tmp/ph.in > /tmp/ph.out &
	ph=$!
	exec 7> /tmp/ph.in
	./paths 1 > /dev/null
	bg $SC /tmp/o.p '^Tracing' -U -p $ph ./phases:work || return 1
	./paths 1 > /dev/null	# another process's work: not counted
	echo 3 >&7
	wait_for '^done 3' /tmp/ph.out || return 1
	bg_stop /tmp/o.p || return 1
	exec 7>&-
	wait $ph
	upto_main /tmp/o.p > /tmp/o.p.m
	expect /tmp/o.p.m <<EOF
Tracing 1 functions for "./phases:work"... Hit Ctrl-C to end.

  work
  via_a
  main
    3

Detaching...
EOF
}

opt_i() {	# -i 1: every interval's counts add up to the calls made
	sc /tmp/o.i -K -P -i 1 $GETPPID -- sh -c './paths 2; sleep 1.2; ./paths 3' || return 1
	# busybox sh asks for its parent once, as it starts
	awk '/^    [a-z]+ \[PID\]$/ { who = $1 } /^    [0-9]+$/ { n[who] += $1 }
	     END { for (w in n) print w, n[w] }' /tmp/o.i | sort > /tmp/o.i.sum
	expect /tmp/o.i.sum <<EOF
paths 5
sh 1
EOF
}

# A child of vfork runs while its parent waits in the kernel's fork: seen
# by the fork hook before it runs (4.2-4.6: at wake_up_new_task, not at
# the fork's return), every call of its counted
opt_vfork() {	# [ARGS]: the walker's, -K by default
	if [ $# -eq 0 ]; then set -- -K; fi
	sc /tmp/o.v -P "$@" $GETPPID -- ./sysc vfork 2 || return 1
	awk '/^    [a-z]+ \[PID\]$/ { who = $1 } /^    [0-9]+$/ { n[who] += $1 }
	     END { for (w in n) print w, n[w] }' /tmp/o.v > /tmp/o.v.sum
	echo 'sysc 6' | expect /tmp/o.v.sum
}

opt_D() {	# -D 1: ends by itself, nothing counted
	sc /tmp/o.D -K -D 1 $GETPPID || return 1
	printf 'Tracing 1 functions for "%s"... Hit Ctrl-C to end.\n\nDetaching...\n' $GETPPID |
		expect /tmp/o.D
}

# 4.1: -- COMMAND traces the command's own process (found from its task),
# and one line says that the processes it starts are not followed
# and another process's calls while it runs are not counted.  The command
# is a shell waiting on a fifo (its own getppid at start is counted too:
# only sysc's stacks are compared).
cmd_41() {
	rm -f /tmp/c41.in
	mkfifo /tmp/c41.in
	$SC -U $GETPPID -- sh -c 'read x < /tmp/c41.in; exec ./sysc 1' \
		> /tmp/c41.raw 2> /tmp/c41.err &
	BG=$!
	wait_for '^Tracing' /tmp/c41.raw || return 1
	./sysc 1	# another process's calls: not counted
	echo go > /tmp/c41.in
	wait $BG || { cat /tmp/c41.raw /tmp/c41.err; return 1; }
	cat /tmp/c41.raw /tmp/c41.err
	upto_main /tmp/c41.raw |
		awk 'BEGIN { RS = "" } /raw_getppid|^Tracing|^Detaching/ {
			printf "%s%s\n", n++ ? "\n" : "", $0 }' |
		awk 'NF { for (; b > 0; b--) print ""; print; next } { b++ }' > /tmp/c41.m
	sysc_user $GETPPID 1 | expect /tmp/c41.m || return 1
	echo "stackcount: this kernel has no bpf_get_current_pid_tgid (4.2+) to see forks with, so only sh itself is traced, not the processes it starts" |
		expect /tmp/c41.err
}

# proc_blocks FILE NAME: the stacks of -P output that NAME's processes made
proc_blocks() {
	awk -v who="    $2 [PID]" 'BEGIN { RS = ""; ORS = "\n\n" } index($0 "\n", "\n" who "\n")' "$1"
}

# 4.1: the process of a kprobe's event is the task whose thread_info is at
# the base of its kernel stack, and one program walks kernel then user
# frames (no tail calls): -P system-wide, sysc's stacks exact to main
# (the fp walker's: auto gives -d to cfi, whose tables a process started
# later has only once the tool has read its maps)
user_frames_41() {
	bg $SC /tmp/u41 '^Tracing' -P -d --walker fp $GETPPID || return 1
	./sysc 2
	bg_stop /tmp/u41 || return 1
	upto_main /tmp/u41 > /tmp/u41.m
	proc_blocks /tmp/u41.m sysc > /tmp/u41.s
	{
		getppid_block 2 raw_getppid from_a main | awk '/^    [0-9]+$/ { print "    sysc [PID]" } 1'
		echo
		getppid_block 4 raw_getppid from_b main | awk '/^    [0-9]+$/ { print "    sysc [PID]" } 1'
		echo
	} | expect /tmp/u41.s || return 1
	expect /tmp/u41.err < /dev/null
}

# held_sysc: HELD is a process that runs `sysc 1` once release_sysc says so
held_sysc() {
	rm -f /tmp/held.in
	mkfifo /tmp/held.in
	sh -c 'read x; exec ./sysc 1' < /tmp/held.in &
	HELD=$!
	exec 7> /tmp/held.in
}

release_sysc() {
	echo go >&7
	exec 7>&-
	wait $HELD
}

# 4.1: -p, a process that was running before, and only it; -U
opt_p_41() {
	held_sysc
	bg $SC /tmp/p41 '^Tracing' -U -p $HELD $GETPPID || return 1
	./sysc 1	# another process's calls: not counted
	kill -STOP $BG
	release_sysc
	kill -CONT $BG
	bg_stop /tmp/p41 || return 1
	upto_main /tmp/p41 > /tmp/p41.m
	sysc_user $GETPPID 1 | expect /tmp/p41.m || return 1
	# -U takes the cfi walker: the list read of the shell went at its
	# exec, and sysc ran while the tool, stopped, could not read its new
	# maps: its frames are frame-pointer steps, said
	echo "the user frames of 3 events were found by frame pointers where unwind tables were not loaded yet (a process, or a library, that came after its maps were read), so callers of code without frame pointers may be missing or wrong" |
		expect /tmp/p41.err
}

# ---- stacksnoop ----

snoop_events() {	# FILE: the events' lines, times and addresses left out
	sed -E 's/^[0-9]+\.[0-9]+ +//; s/: [0-9a-f]+ /: /' "$1"
}

getppid_events() {	# N: the expected stacksnoop output of N getppid calls
	echo "TIME(s)            STACK"
	for i in $(seq $1); do
		echo
		echo "ip: $FIRST"
		echo "$ENTRY" | awk '{ printf "r%d: %s\n", NR - 1, $1 }'
	done
}

snoop_kprobe() {	# perf output (4.4+), or trace_pipe lines (4.1-4.3)
	if ge 4 2; then
		$SN $GETPPID -- ./paths 2 > /tmp/n.out 2>&1 || { cat /tmp/n.out; return 1; }
	else
		bg $SN /tmp/n '^TIME' $GETPPID || return 1
		./paths 2
		bg_stop /tmp/n > /dev/null || return 1
		cat /tmp/n.raw /tmp/n.err > /tmp/n.out
	fi
	cat /tmp/n.out
	snoop_events /tmp/n.out > /tmp/n.ev
	getppid_events 2 | expect /tmp/n.ev
}

# 4.1: stacksnoop -d -p, each frame printed to trace_pipe as one program
# reads it: only the process named, kernel then user frames (the fp
# walker's: auto gives cfi a kprobe's user frames, and the shell's exec
# drops its tables until the tool has read sysc's maps)
snoop_p_41() {
	held_sysc
	bg $SN /tmp/s41 '^TIME' -d -p $HELD --walker fp $GETPPID || return 1
	./sysc 1	# another process's calls: not shown
	release_sysc
	bg_stop /tmp/s41 > /dev/null || return 1
	cat /tmp/s41.raw /tmp/s41.err > /tmp/s41.out
	cat /tmp/s41.out
	# frames after main: as in upto_main
	snoop_events /tmp/s41.out |
		awk '/ main$/ { print; skip = 1; next } /^$/ { skip = 0 } !skip' > /tmp/s41.ev
	{
		echo "TIME(s)            STACK"
		for f in from_a from_b from_b; do
			echo
			echo "ip: $FIRST"
			echo "$ENTRY" | awk '{ printf "r%d: %s\n", NR - 1, $1 }'
			n=$(echo "$ENTRY" | wc -l)
			printf -- '--\nr%d: raw_getppid\nr%d: %s\nr%d: main\n' $n $((n + 1)) $f $((n + 2))
		done
	} | expect /tmp/s41.ev
}

# 4.1, stacksnoop, cfi: the user side's program hands its frames to one
# that prints the kernel walk's, then those, to trace_pipe, tagged
cfi_snoop_41() {
	$SN -d --walker cfi read_null -- ./cfipaths_o2 null > /tmp/cs.out 2> /tmp/cs.err ||
		{ cat /tmp/cs.out /tmp/cs.err; return 1; }
	snoop_events /tmp/cs.out > /tmp/cs.ev
	{
		echo 'TIME(s)            STACK'
		for caller in sys_a sys_a sys_a sys_a sys_a sys_b sys_b sys_b sys_b sys_b sys_b; do
			echo
			printf 'ip: read_null\nr0: __vfs_read\nr1: vfs_read\nr2: SyS_read\nr3: %s\n--\n' $ROOT_SYSCALL
			printf 'r4: syscall\nr5: %s\nr6: main\nr7: __libc_start_call_main\nr8: __libc_start_main\nr9: _start\n' $caller
		done
	} | expect /tmp/cs.ev || return 1
	cmd_said stacksnoop ./cfipaths_o2 /tmp/cs.err || return 1
	# -v: each user frame tagged as stackcount -v tags it (cfi_tags_41),
	# the frames past main left out
	$SN -v -U --walker cfi $GETPPID -- ./deep 8 9 > /tmp/cs.out 2> /tmp/cs.err ||
		{ cat /tmp/cs.out /tmp/cs.err; return 1; }
	sed -E '1d; s/^[0-9.]+ +deep +[0-9]+ +[0-9]+ +//; s/: [0-9a-f]+ /: /' /tmp/cs.out |
		awk '/ main$/ { print; skip = 1; next } /^$/ { skip = 0 } !skip' > /tmp/cs.ev
	for i in $(seq 10); do
		echo
		echo 'ip: regs __getppid'
		printf 'r0: cfi target\nr1: cfi down2\nr2: cfi down1\nr3: cfi down0\nr4: cfi down2\n'
		how=${CFI41_PAST%% *}
		printf 'r5: %s down1\nr6: %s down0\nr7: %s down2\nr8: %s down1\nr9: %s down0\nr10: %s main\n' $how $how $how $how $how $how
	done | expect /tmp/cs.ev
}

snoop_explain_kernel() {	# the kernel chain from a kprobe, explained
	$SN --explain $GETPPID -- ./paths 1 > /tmp/x.out 2>&1
	cat /tmp/x.out
	grep -q 'where the kprobe fired' /tmp/x.out &&
	first=$(echo "$ENTRY" | head -n1 | sed 's/^  //') &&
	grep -Eq "^      \\[%rsp = [0-9a-f]+\\] = [0-9a-f]+ $first\\+0x" /tmp/x.out &&
	if grep -q 'syscall fast path, stale %rbp  *yes' /tmp/feat.out; then
		# the fast path's chain ends in the user's frame pointer
		grep -Eq "^    stop: the frame at [0-9a-f]+ returns below __START_KERNEL_map: the chain has$" /tmp/x.out
	else
		grep -qx "    stop: the saved %rbp is 0, which marks the outermost frame" /tmp/x.out
	fi
}

explain_orc_refused() {
	$SN --explain $GETPPID > /tmp/xr.out 2>&1 && return 1
	echo "stacksnoop: the fp walker cannot walk kernel frames: this kernel has no frame pointers (ORC lookup code (__orc_find) in kallsyms); --explain a user function or USDT probe instead" |
		expect /tmp/xr.out
}

explain_refused() {	# before 4.4: fp's reads need perf output
	$SN --explain $GETPPID > /tmp/xr.out 2>&1 && return 1
	echo "stacksnoop: --explain needs bpf_perf_event_output (4.4+), which this kernel lacks" |
		expect /tmp/xr.out
}

# ---- forced legacy mode (6.1 only: a quick check beside the real ones) ----

legacy_kprobe() {	# --legacy: kprobe_events in debugfs, as on 4.4
	sc /tmp/l.gs -U --walker getstack $GETPPID -- ./sysc 3
	sc /tmp/l.legacy --legacy -U $GETPPID -- ./sysc 3
	upto_main /tmp/l.gs > /tmp/l.gs.m
	upto_main /tmp/l.legacy > /tmp/l.legacy.m
	same /tmp/l.gs.m /tmp/l.legacy.m
}

snoop_legacy() {	# VERSION ARGS...: trace_pipe (4.1-4.3) against perf output
	v=$1
	shift
	# the fp walker both ways: forced legacy runs nothing else
	$SN --walker fp "$@" $GETPPID -- ./paths 2 > /tmp/n.perf 2>&1
	$SN --legacy=$v "$@" $GETPPID -- ./paths 2 > /tmp/n.legacy 2>&1
	cat /tmp/n.legacy
	snoop_events /tmp/n.perf > /tmp/n.perf.e
	snoop_events /tmp/n.legacy | grep -v 'only .* itself is traced' > /tmp/n.legacy.e
	[ "$(grep -c 'ip: ' /tmp/n.perf.e)" -eq 2 ] && diff -u /tmp/n.perf.e /tmp/n.legacy.e
}

# ---- the matrix ----

echo 1 > /proc/sys/net/core/bpf_jit_enable	# off by default before 5.10
# where the tools keep what they may between runs (src/kept.c), as on a host
mkdir -p /var/cache
echo "# kernel $REL ($SW_KERNEL)"
DISK=no
if [ -b /dev/vda ]; then
	mkdir -p /mnt && mount -t ext4 /dev/vda /mnt && DISK=yes
fi

t "kernel features: the table tells the truth, auto picks $AUTO" features
for w in $KWALKERS; do
	t "kprobe, $w: exact count, the function's frames to the syscall entry" kprobe_exact $w
done
ge 4 6 && t "kprobe: every walker's kernel frames equal, address by address" kernel_frames_equal $GETPPID
ge 4 2 && t "kprobe: wildcards and -r" kprobe_wildcards
ge 4 18 && t "kprobe: a wildcard through one multi-probe link where the kernel has them, every walker's stacks as one by one" kprobe_links
ge 4 6 && t "kprobe: runs the kernel skipped (a BPF map syscall on the CPU) counted and said where it counts them (6.7+)" kprobe_skipped
ge 4 17 && t "kprobe: sys_getppid is named __x64_sys_getppid since 4.17" sys_name_hint
[ $CLOUD = yes ] && t "kprobe: fp refuses kernel frames without frame pointers" fp_refused_on_orc
if ge 4 2; then
	for w in $DWALKERS; do
		# fp and cfi take the user's %rbp from the kernel's frame chain
		case $w in
		fp|cfi) ;;
		*) grep -q 'syscall fast path, stale %rbp  *yes' /tmp/feat.out && continue ;;
		esac
		t "kprobe, $w: -d, user frames of a syscall exact" kprobe_user_exact $w
	done
	# (before 4.6 there is no stack map to refuse)
	ge 4 6 && grep -q 'syscall fast path, stale %rbp  *yes' /tmp/feat.out &&
		t "kprobe: -d, stackmap refused (stale %rbp); auto takes cfi" fastpath_refused &&
		t "kprobe, auto: -d, user frames of a syscall exact" kprobe_user_exact auto
fi
if [ $CLOUD = yes ]; then
	echo "# $SW_KERNEL: no disk tests, its virtio_blk is a module"
elif [ $DISK = yes ]; then
	t "submit_bio: every kernel stack ends at ret_from_fork or the syscall entry" submit_bio_roots
	t "stacksnoop ext4_sync_fs: the seed's chain, the caller at entry kept" sync_fs_chain
else
	t "the ext4 disk is mounted" false
fi

if ge 4 3; then
	for w in $UWALKERS; do
		t "uprobe, $w: exact stacks, the caller at entry kept" uprobe_exact $w
		t "uprobe, $w: a function that starts with endbr64" uprobe_endbr_exact $w
		[ $w = cfi ] ||
			t "USDT, $w: the caller the %rbp chain skips, from the probe's CFI row, static and dynamic" usdt_frameless $w
		t "USDT, $w: behind a semaphore in a frameless leaf, set, fired, its caller kept" usdt_semleaf $w
	done
	t "USDT: exact counts, the semaphore set" usdt_semaphore
else
	t "uprobes: refused before 4.3, in one line" uprobes_refused
fi

if ge 4 9; then
	t "cfi: a frameless function, a first instruction, glibc's syscall(): every caller, to _start" cfi_callers cfipaths
	t "cfi, -O2 without frame pointers: the same callers" cfi_callers cfipaths_o2
	t "cfi, a kprobe in a syscall, -d: kernel frames, then every user caller to _start, static and dynamic" cfi_kprobe_d cfipaths cfipaths_dyn
	t "cfi, -O2 without frame pointers, a kprobe in a syscall, -d: the same, static and dynamic" cfi_kprobe_d cfipaths_o2 cfipaths_o2_dyn
	t "stacksnoop, cfi: each event's whole stack, to _start" cfi_snoop
	t "stacksnoop --explain, cfi: each user frame's unwind rule" cfi_explain
	t "cfi: a child of fork and its parent, every caller from the first event" cfi_fork
	t "cfi: a child of fork that runs on once its parent ran exec: its own image's tables, or none, said" cfi_forkexec
	t "cfi, dynamic: the same callers through Debian's libc and ld.so" cfi_callers_dynamic cfipaths_dyn
	t "cfi, dynamic, -O2 without frame pointers: the same callers" cfi_callers_dynamic cfipaths_o2_dyn
	t "cfi: CFI it cannot follow ends the walk there, counted and said" cfi_cut
	t "cfi: a process whose binary has no table yet: each event counted and said" cfi_untabled
	ge 4 18 && t "cfi: the tool stopped while COMMAND runs: each frame's table found by BPF alone, every caller" cfi_stopped
	ge 4 18 && ! ge 5 17 &&
		t "cfi, -- COMMAND: the process's list as BPF built it, the vDSO's table in it, never replaced by the frontend's" cfi_lists_kept
	ge 4 14 && t "cfi: a syscall from inside the vDSO, every caller from the vDSO's own CFI" cfi_vdso
	t "cfi, -- COMMAND: never traced by the tool where BPF finds its mappings, nor what it starts" cfi_traced
	ge 5 17 || t "cfi, dynamic, STACKWALK_NO_VMA_LISTS=1: COMMAND held while its loader runs, the same callers" cfi_held
	t "cfi, a uprobe wildcard: through multi-probe links where the kernel has them, every stack exact" cfi_links
	ge 4 18 || t "cfi, 4.9-4.17: a uprobe's stack of 127 frames whole (carried on by more probes, interned past the key's 48), one more cut, marked and said" cfi_deep
	ge 4 18 || t "cfi, 4.9-4.17: a kprobe's stack of 127 frames whole (carried on by more probes, interned past the key's 48), one more cut, marked and said, in stackcount and stacksnoop; a tracepoint's of 48" cfi_deep_kp
else
	t "cfi before 4.9: what it cannot walk refused, in one line" cfi_refused
fi
if [ "$SW_KERNEL" = cloud612 ]; then
	t "cfi, 1 CPU, full preemption: two processes at one probe, their walks apart" cfi_race
	t "getstack, 1 CPU, full preemption: two processes at one probe, their keys apart" getstack_race
	t "cfi, 1 CPU, full preemption: every child of COMMAND followed while another process's map updates hold the CPU" cfi_follow_busy
fi

if ge 4 14; then
	t "tracepoint: t:syscalls:sys_enter_getppid, user frames exact" syscall_tp_exact
elif ge 4 7; then
	t "tracepoint: t:syscalls:* refused before 4.14, in one line" syscall_tp_refused
fi
if ge 4 7; then
	t "tracepoint: one exec, one event, every walker's frames equal" tp_exec_once
else
	t "tracepoint: refused before 4.7, in one line" tp_refused
fi

if ge 4 2; then
	t "-P: the process in the key" opt_P
	t "-c: only the CPU named" opt_c
	t "-p: only the process named" opt_p
	t "-i: every interval's counts add up" opt_i
	t "-- COMMAND: a child of vfork followed from its first call" opt_vfork
else
	t "4.1: -c, the CPU from the thread_info at the stack's base" opt_c
	t "4.1: -- COMMAND, its own process only, said in one line" cmd_41
	t "4.1: -P, user frames of a syscall exact, the process from its task" user_frames_41
	t "4.1: -p -U: only the process named" opt_p_41
fi
if ge 4 3 && ! ge 4 9; then
	t "4.3-4.8, cfi: a frameless function, a first instruction, glibc's syscall(): every caller, to _start" cfi_callers cfipaths
	t "4.3-4.8, cfi, -O2 without frame pointers: the same callers" cfi_callers cfipaths_o2
	t "4.3-4.8, cfi, dynamic: the same callers through Debian's libc and ld.so" cfi_callers_dynamic cfipaths_dyn
	t "4.3-4.8, cfi, dynamic, -O2 without frame pointers: the same callers" cfi_callers_dynamic cfipaths_o2_dyn
	t "4.3-4.8, cfi: a stack of the key's most frames whole, by tail calls, one more cut, marked and said" cfi_deep
	t "4.3-4.8, cfi, a kprobe's -U, -- COMMAND: a child of vfork followed from its first call" opt_vfork -U --walker cfi
	t "4.3-4.8, cfi: a child of fork and its parent, every caller from the first event" cfi_fork
	t "4.3-4.8, cfi: a child of fork that runs on once its parent ran exec: its own image's tables, or none, said" cfi_forkexec
fi
if ! ge 4 9; then
	t "4.1-4.8, cfi: a kprobe's -U, five callers by CFI: every caller to _start, static and dynamic, -O2 without frame pointers too" cfi_callers_41
	t "4.1-4.8, cfi, a kprobe in a syscall, -d: kernel frames by a second probe, then every user caller to _start, static and dynamic, -O2 too" cfi_kprobe_d_41
	t "4.1-4.8, cfi: a kprobe three calls below the system call: the user's %rbp from the kernel chain's end, every caller to _start" cfi_deep_41
	t "4.1-4.8, cfi: -v tags each frame: registers, CFI (4.1: five, then frame pointers)" cfi_tags_41
	t "4.1-4.8, cfi: a process started after the tool: frame pointers, counted and said" cfi_untabled_41
	t "4.1-4.8, cfi: two processes at one probe on two CPUs, their walks apart" cfi_race_41
fi
t "-D: ends by itself" opt_D

t "stacksnoop: a kernel function's events, one stack each" snoop_kprobe
ge 4 2 || t "stacksnoop, 4.1: -d -p, only the process named, user frames exact" snoop_p_41
if ! ge 4 9; then
	t "stacksnoop, 4.1-4.8, cfi: -d, kernel frames, then every user caller to _start; -v tags each frame" cfi_snoop_41
	# 4.3: through trace_pipe
	ge 4 3 && t "stacksnoop, 4.3-4.8, cfi: a uprobe's events, each stack whole to _start" cfi_snoop
	ge 4 3 && t "stacksnoop --explain, 4.3-4.8, cfi: each user frame's unwind rule" cfi_explain
	ge 4 3 && t "stacksnoop, 4.3-4.8, cfi: an event's 26 user frames whole, one deeper cut, marked and said" cfi_snoop_deep
fi
if [ $CLOUD = yes ]; then
	t "stacksnoop --explain: refused without kernel frame pointers" explain_orc_refused
elif ge 4 4; then
	t "stacksnoop --explain: the kernel chain, the caller from %rsp" snoop_explain_kernel
else
	t "stacksnoop --explain of a kernel function: refused before 4.4, in one line" explain_refused
fi

# Debian's kernels run 32-bit programs (IA32 emulation); ours do not
if [ $CLOUD = yes ]; then
	t "a 32-bit task: fp drops its events and says so, getstack walks them" ia32_walkers
fi

if [ "$SW_KERNEL" = fp ]; then
	t "kprobe, forced legacy mode: kprobe_events in debugfs, same stacks" legacy_kprobe
	t "stacksnoop, forced legacy 4.3: trace_pipe, kernel and user frames" snoop_legacy 4.3 -d
fi
[ $DISK = yes ] && umount /mnt
t "no probe left in tracefs" no_probes_left
echo "1..$n"
[ $failed -eq 0 ]
