#!/bin/sh
# Runs inside a test VM (busybox sh, static binaries in /stackwalk) and
# prints TAP.  SW_KERNEL says which kernel this is: "cloud" (Debian's 6.1:
# kprobes on ftrace, ORC) or "fp" (6.1 built with frame pointers).
cd /stackwalk || exit 1
SC=./stackcount
n=0
failed=0

# t NAME FUNCTION [ARGS...]: one TAP line; the output as comments on failure
t() {
	name=$1
	shift
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

# sc OUT ARGS...: stackcount, PIDs normalized, stderr in OUT.err
sc() {
	out=$1
	shift
	$SC "$@" 2> "$out.err" | sed -E 's/ \[[0-9]+\]$/ [PID]/' > "$out"
	cat "$out" "$out.err"
}

# Frames after main are glibc's start-up code, reached through frame
# pointers it never set: every walker must agree on them, no test names them.
upto_main() {
	awk '/^  main$/ { print; skip = 1; next } /^    / { skip = 0 } !skip { print }' "$1"
}

# agree FILE...: identical, and holding at least one counted stack
agree() {
	grep -q '^    [0-9]' "$1" || return 1
	for f in "$@"; do
		diff -u "$1" "$f" || return 1
	done
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

# ---- kernel functions ----

kprobe_shape() {	# getppid's kprobe stack: entry to syscall entry, 3 calls
	sc /tmp/k.gs -K --walker getstack __x64_sys_getppid -- ./paths 3
	k=$(kernel_frames /tmp/k.gs)
	# __x64_, __ia32_ and __do_sys_getppid are one function, one address
	echo "$k" | head -n1 | grep -Eqx '  __(x64|ia32|do)_sys_getppid' &&
	echo "$k" | grep -qx '  do_syscall_64' &&
	[ "$(echo "$k" | tail -n1)" = "  entry_SYSCALL_64_after_hwframe" ] &&
	[ "$(grep -c '^    [0-9]' /tmp/k.gs)" -eq 1 ] && grep -qx '    3' /tmp/k.gs
}

kprobe_wildcards() {
	sc /tmp/w.glob '__x64_sys_getpp*' -- ./paths 2 &&
	head -n1 /tmp/w.glob | grep -qx 'Tracing 1 functions for "__x64_sys_getpp\*"... Hit Ctrl-C to end.' &&
	sc /tmp/w.re -r '__x64_sys_getppi.$' -- ./paths 2 &&
	head -n1 /tmp/w.re | grep -qx 'Tracing 1 functions for "__x64_sys_getppi.\$"... Hit Ctrl-C to end.' &&
	grep -qx '    2' /tmp/w.re &&
	# several functions at once: one stack per function
	sc /tmp/w.many -K '__x64_sys_getp*id' -- ./paths 2 &&
	[ "$(sed -n 's/^Tracing \([0-9]*\) functions.*/\1/p' /tmp/w.many)" -ge 3 ]
}

kprobe_walkers_agree() {	# WALKERS...: the same full stacks (-d)
	for w in "$@"; do
		sc /tmp/a.$w -d --walker $w __x64_sys_getppid -- ./paths 3
		upto_main /tmp/a.$w > /tmp/a.$w.m
	done
	set -- $(for w in "$@"; do echo /tmp/a.$w.m; done)
	agree "$@"
}

kprobe_user_frames_agree() {	# user frames of a kernel event, every walker
	for w in getstack stackmap fp; do
		sc /tmp/u.$w -U --walker $w __x64_sys_getppid -- ./paths 3
		upto_main /tmp/u.$w > /tmp/u.$w.m
	done
	sed -n '3,6p' /tmp/u.fp.m | grep -q '^  main$' &&
	agree /tmp/u.getstack.m /tmp/u.stackmap.m /tmp/u.fp.m
}

legacy_kprobe() {	# --legacy: kprobe_events in debugfs, as on 4.4
	sc /tmp/l.gs -U --walker getstack __x64_sys_getppid -- ./paths 3
	$SC --legacy -U __x64_sys_getppid > /tmp/l.bg 2>&1 &
	pid=$!
	i=0
	until grep -q '^Tracing' /tmp/l.bg || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done
	grep -q "stackwalk/sw_${pid}_" /sys/kernel/debug/tracing/kprobe_events || return 1
	./paths 3
	kill -INT $pid
	wait $pid
	sc /tmp/l.legacy --legacy -U __x64_sys_getppid -- ./paths 3
	upto_main /tmp/l.gs > /tmp/l.gs.m
	upto_main /tmp/l.legacy > /tmp/l.legacy.m
	agree /tmp/l.gs.m /tmp/l.legacy.m
}

fp_refused_on_orc() {
	! $SC --walker fp -K __x64_sys_getppid > /tmp/r.out 2>&1 &&
	grep -q 'cannot walk kernel frames: this kernel has no frame pointers' /tmp/r.out
}

# ---- frame pointers: the fp walker against the kernel's own unwinder ----

kernel_frames_equal() {		# PATTERN: -K, fp and getstack, frame by frame
	sc /tmp/f.gs -v -K --walker getstack "$1" -- ./paths 3
	sc /tmp/f.fp -v -K --walker fp "$1" -- ./paths 3
	sc /tmp/f.sm -v -K --walker stackmap "$1" -- ./paths 3
	[ "$(kernel_frames /tmp/f.gs | wc -l)" -ge 3 ] &&
	agree /tmp/f.gs /tmp/f.fp /tmp/f.sm
}

caller_at_entry() {	# x64_sys_call calls __x64_sys_getppid: it is frame 1
	sc /tmp/c.fp -K --walker fp __x64_sys_getppid -- ./paths 1
	kernel_frames /tmp/c.fp | sed -n 2p | grep -qx '  x64_sys_call'
}

legacy_41() {	# 4.1: no pid helper, no tail calls -- kernel counting only
	! $SC --legacy=4.1 -p 1 __x64_sys_getppid > /tmp/o.p 2>&1 &&
	grep -q -- '-p needs bpf_get_current_pid_tgid' /tmp/o.p || return 1
	$SC --legacy=4.1 __x64_sys_getppid > /tmp/o.bg 2>&1 &
	pid=$!
	i=0
	until grep -q '^Tracing' /tmp/o.bg || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done
	./paths 4
	kill -INT $pid
	wait $pid
	sed -E 's/ \[[0-9]+\]$/ [PID]/' /tmp/o.bg > /tmp/o.41
	cat /tmp/o.41
	sc /tmp/o.gs -K --walker getstack __x64_sys_getppid -- ./paths 4
	agree /tmp/o.gs /tmp/o.41
}

# ---- user functions and USDT ----

uprobe_walkers_agree() {	# the kernel's user unwinder, calibrated, vs ours
	for w in getstack stackmap fp; do
		sc /tmp/p.$w -U --walker $w ./paths:work -- ./paths 2
		upto_main /tmp/p.$w > /tmp/p.$w.m
	done
	grep -c '^  via_a$' /tmp/p.fp.m | grep -qx 2 &&
	agree /tmp/p.getstack.m /tmp/p.stackmap.m /tmp/p.fp.m
}

usdt_counts() {
	sc /tmp/s.out -f -U 'u:./usdt:t*' -- ./usdt 3
	grep -q ';main;tick_site 3$' /tmp/s.out && grep -q ';main;tock_site 6$' /tmp/s.out
}

# ---- stacksnoop ----

SN=./stacksnoop

snoop_events() {	# FILE: the events' lines, without their times
	sed -E 's/^[0-9]+\.[0-9]+ +//' "$1" | grep -v '^TIME'
}

snoop_kprobe() {	# a kernel function's events, one stack each
	$SN __x64_sys_getppid -- ./paths 2 > /tmp/n.out 2>&1
	cat /tmp/n.out
	[ "$(grep -c 'ip: ' /tmp/n.out)" -eq 2 ] &&
	snoop_events /tmp/n.out | grep -q 'r[0-9]*: [0-9a-f]* entry_SYSCALL_64_after_hwframe$'
}

snoop_legacy() {	# VERSION ARGS...: trace_pipe (4.1-4.3) against perf output
	v=$1
	shift
	$SN "$@" __x64_sys_getppid -- ./paths 2 > /tmp/n.perf 2>&1
	$SN --legacy=$v "$@" __x64_sys_getppid -- ./paths 2 > /tmp/n.legacy 2>&1
	cat /tmp/n.legacy
	snoop_events /tmp/n.perf > /tmp/n.perf.e
	snoop_events /tmp/n.legacy | grep -v 'only .* itself is traced' > /tmp/n.legacy.e
	[ "$(grep -c 'ip: ' /tmp/n.perf.e)" -eq 2 ] && diff -u /tmp/n.perf.e /tmp/n.legacy.e
}

snoop_legacy_41() {	# 4.1: no pid helper, so system-wide
	$SN __x64_sys_getppid -- ./paths 2 > /tmp/o.perf 2>&1
	$SN --legacy=4.1 __x64_sys_getppid > /tmp/o.bg 2>&1 &
	pid=$!
	i=0
	until grep -q '^TIME' /tmp/o.bg || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done
	./paths 2
	kill -INT $pid
	wait $pid
	cat /tmp/o.bg
	snoop_events /tmp/o.perf > /tmp/o.perf.e
	snoop_events /tmp/o.bg > /tmp/o.bg.e
	diff -u /tmp/o.perf.e /tmp/o.bg.e
}

snoop_explain_kernel() {	# the kernel chain from a kprobe, explained
	$SN --explain __x64_sys_getppid -- ./paths 1 > /tmp/x.out 2>&1
	cat /tmp/x.out
	grep -q 'where the kprobe fired' /tmp/x.out &&
	grep -Eq '^      \[%rsp = [0-9a-f]+\] = [0-9a-f]+ x64_sys_call\+0x' /tmp/x.out &&
	grep -Eq '\[\+8\] = [0-9a-f]+ do_syscall_64\+0x' /tmp/x.out &&
	grep -q 'stop: ' /tmp/x.out
}

features() {	# WHAT: the unwinder line of --kernel-features
	$SC --kernel-features && $SC --kernel-features | grep -q "^kernel unwinder  *$1"
}

echo "# kernel $(uname -r) ($SW_KERNEL)"
case $SW_KERNEL in
cloud)
	t "kernel features: ORC, found from kallsyms" features ORC
	t "kprobe: exact count, frames from the function to the syscall entry" kprobe_shape
	t "kprobe: wildcards and -r, with the true number of functions" kprobe_wildcards
	t "kprobe: getstack and stackmap agree, kernel and user frames" kprobe_walkers_agree getstack stackmap
	t "kprobe: fp refuses kernel frames without frame pointers" fp_refused_on_orc
	t "kprobe: user frames agree across every walker" kprobe_user_frames_agree
	t "kprobe, forced legacy mode: kprobe_events in debugfs, same stacks" legacy_kprobe
	t "uprobe: every walker agrees, the caller at entry kept" uprobe_walkers_agree
	t "USDT: exact counts, semaphore set by the kernel" usdt_counts
	t "stacksnoop: a kernel function's events, one stack each" snoop_kprobe
	;;
fp)
	t "kernel features: frame pointers, from /proc/config.gz" features 'frame pointers'
	t "kprobe: exact count, frames from the function to the syscall entry" kprobe_shape
	t "kprobe at entry: fp equals getstack and stackmap frame by frame" kernel_frames_equal __x64_sys_getppid
	t "kprobe at entry: the caller is frame 1 (x64_sys_call)" caller_at_entry
	t "tracepoint: fp equals getstack frame by frame (sched_process_exec)" kernel_frames_equal t:sched:sched_process_exec
	t "tracepoint: fp equals getstack frame by frame (raw_syscalls:sys_enter)" kernel_frames_equal t:raw_syscalls:sys_enter
	t "kprobe: every walker agrees on kernel and user frames (-d)" kprobe_walkers_agree getstack stackmap fp
	t "kprobe: user frames agree across every walker" kprobe_user_frames_agree
	t "kprobe, forced legacy mode: kprobe_events in debugfs, same stacks" legacy_kprobe
	t "kprobe, forced legacy 4.1: kernel counting, -p refused" legacy_41
	t "uprobe: every walker agrees, the caller at entry kept" uprobe_walkers_agree
	t "stacksnoop: a kernel function's events, one stack each" snoop_kprobe
	t "stacksnoop, forced legacy 4.4: perf output, the same events" snoop_legacy 4.4
	t "stacksnoop, forced legacy 4.3: trace_pipe, kernel and user frames" snoop_legacy 4.3 -d
	t "stacksnoop, forced legacy 4.1: trace_pipe, kernel frames, system-wide" snoop_legacy_41
	t "stacksnoop --explain: a kprobe's kernel chain, the caller from %rsp" snoop_explain_kernel
	;;
esac
t "no probe left in tracefs" no_probes_left
echo "1..$n"
[ $failed -eq 0 ]
