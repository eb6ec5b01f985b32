#!/usr/bin/env bats
# What 4.1-4.5 kernels enforce, checked on the objects themselves.

load helpers

LIMITS=$TOP/build/legacy_limits
FX=$TOP/build/tests/fixtures

@test "the fp walker fits every 4.x limit" {
	run "$LIMITS" "$TOP/build/bpf/fp.bpf.o"
	[ "$status" -eq 0 ]
	# every program of the walker was looked at
	for p in fp_kprobe fp_kprobe_k fp_kprobe_v41 fp_kprobe_v41_p fp_tp fp_tp_k fp_user_kp \
		 fp_user_tp fp_uprobe fp_uprobe_entry; do
		echo "$output" | grep -q ": $p: .* insns, "
	done
}

# rule broken -> what legacy_limits must say
@test "each 4.x limit, broken on purpose, fails the check" {
	while read -r fx msg; do
		run "$LIMITS" "$FX/$fx.bpf.o"
		echo "$fx: $output"
		[ "$status" -eq 1 ]
		echo "$output" | grep -q -- "$msg"
		echo "$output" | grep -qx ".*: 1 violation(s) of 4.x limits"
	done <<'EOF2'
loop a loop: 4.x verifiers refuse back-edges
stack 600 bytes of stack, 4.x allows 512
key 600-byte key, 4.x allows 512
global global data (5.2+)
percpu map type 6 is newer than 4.4
helper helper 67 is not in 4.4
v41 helper 14 is not in 4.1
call call to a BPF function (4.16+)
walk verifier may walk [0-9]* instructions, 4.x allows 32768
long [0-9]* instructions, 4.x allows 4096
core CO-RE relocations
jlt jump opcode 0xad is 4.14+
spill a map value stored to the stack before its NULL check
EOF2
}

# 4.1's cfi walk (bpf/cfi41.bpf.c) is checked for all but the walk, which
# only the VM tests' real 4.1 counts (its pruning is not modelled here)
@test "the 4.1 cfi walker fits every 4.1 limit but the walk's" {
	run "$LIMITS" --pruned "$TOP/build/bpf/cfi41.bpf.o"
	[ "$status" -eq 0 ]
	for p in cfi41_kprobe_u cfi41_drop; do
		echo "$output" | grep -q ": $p: .* insns, "
	done
	run "$LIMITS" --pruned "$FX/walk.bpf.o"
	[ "$status" -eq 0 ]
	while read -r fx msg; do
		run "$LIMITS" --pruned "$FX/$fx.bpf.o"
		echo "$fx: $output"
		[ "$status" -eq 1 ]
		echo "$output" | grep -q -- "$msg"
	done <<'EOF2'
long [0-9]* instructions, 4.x allows 4096
spill a map value stored to the stack before its NULL check
stack 600 bytes of stack, 4.x allows 512
EOF2
}

# make -o keeps the planted object: the check itself must stop the build.
# FIXTURE MESSAGE PASSING WALKER: the build of WALKER's object as FIXTURE
# fails saying MESSAGE, and as PASSING goes through.
build_refuses() {
	local b=$BATS_TEST_TMPDIR/b
	mkdir -p "$b/bpf"
	cp "$1" "$b/bpf/$4.bpf.o"
	run make -s -C "$TOP" --no-print-directory BUILD="$b" -o "$b/bpf/$4.bpf.o" "$b/bpf/$4.checked"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$2"* ]]
	[ ! -e "$b/bpf/$4.checked" ]
	cp "$3" "$b/bpf/$4.bpf.o"
	run make -s -C "$TOP" --no-print-directory BUILD="$b" -o "$b/bpf/$4.bpf.o" "$b/bpf/$4.checked"
	[ "$status" -eq 0 ]
}

@test "the build refuses a walker over the limits" {
	build_refuses "$FX/loop.bpf.o" "a loop: 4.x verifiers refuse back-edges" \
		"$TOP/build/bpf/fp.bpf.o" fp
}

# The cfi walk's programs, and getstack's, 4.18-5.1 load only within
# 4,096 instructions each (loops are theirs to take); 4.1's cfi walk too.
@test "the build refuses a 4.18+ walker program, or 4.1's cfi walk, over 4,096 instructions" {
	build_refuses "$FX/long.bpf.o" "/cfi.bpf.o: prog: 6303 instructions, 4.x allows 4096" \
		"$FX/loop.bpf.o" cfi
	build_refuses "$FX/long.bpf.o" "/getstack.bpf.o: prog: 6303 instructions, 4.x allows 4096" \
		"$FX/loop.bpf.o" getstack
	build_refuses "$FX/long.bpf.o" "/cfi41.bpf.o: prog: 6303 instructions, 4.x allows 4096" \
		"$FX/walk.bpf.o" cfi41
}

# Forced legacy mode: the fp object, attached through tracefs probe events
# under debugfs, as a 4.4 kernel requires -- the same stacks as ever.
@test "forced legacy mode: the core user-stack tests give identical output" {
	for target in work leaf; do
		"$SC" -U --walker fp "$W/paths:$target" -- "$W/paths" 2 | normalize > "$BATS_TEST_TMPDIR/modern"
		STACKWALK_LEGACY=4.4 "$SC" -U "$W/paths:$target" -- "$W/paths" 2 \
			2> "$BATS_TEST_TMPDIR/err" | normalize > "$BATS_TEST_TMPDIR/legacy"
		diff -u "$BATS_TEST_TMPDIR/modern" "$BATS_TEST_TMPDIR/legacy"
	done
	"$SC" -U -s --walker fp "$W/manypaths:target" -- "$W/manypaths" 10 | normalize > "$BATS_TEST_TMPDIR/modern"
	"$SC" --legacy -U -s "$W/manypaths:target" -- "$W/manypaths" 10 | normalize > "$BATS_TEST_TMPDIR/legacy"
	diff -u "$BATS_TEST_TMPDIR/modern" "$BATS_TEST_TMPDIR/legacy"
	[ -z "$(leftover_probes)" ]
}

@test "forced legacy mode attaches through uprobe_events under debugfs" {
	start_phases
	start_sc --legacy -U -p "$PHASES_PID" "$W/phases:work"
	grep -q "^p:stackwalk/sw_${SC_PID}_[0-9]* " /sys/kernel/debug/tracing/uprobe_events
	phase 3
	stop_sc
	stop_phases
	grep -qx '    3' "$BATS_TEST_TMPDIR/sc.out"
	[ -z "$(leftover_probes)" ]
}

@test "forced legacy mode refuses what 4.4 lacks, with the reason" {
	run --separate-stderr "$SC" --legacy -U t:sched:sched_switch
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cannot run BPF on tracepoints (4.7+"* ]]
	run --separate-stderr "$SC" --legacy --walker getstack -U "$W/paths:work"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"forced legacy mode runs the fp walker only"* ]]
	run --separate-stderr "$SC" --legacy=4.1 -P -K "$W/paths:work"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "stackcount: this kernel cannot run BPF on uprobes (4.3+, CONFIG_UPROBE_EVENTS, and forced legacy mode emulates an older one), so user functions cannot be traced" ]
	# BPF on uprobes came with 4.3: that is said before what -U needs
	run --separate-stderr "$SC" --legacy=4.1 -U "$W/paths:work" -- "$W/paths" 1
	[ "$status" -eq 1 ]
	[ "$stderr" = "stackcount: this kernel cannot run BPF on uprobes (4.3+, CONFIG_UPROBE_EVENTS, and forced legacy mode emulates an older one), so user functions cannot be traced" ]
}

# A run killed with SIGKILL cannot remove its probe events; they name their
# owner, and the next run removes those whose owner is gone.
@test "SIGKILL leaves legacy probe events behind; the next start removes them" {
	start_phases
	start_sc --legacy -U -p "$PHASES_PID" "$W/phases:work"
	victim=$SC_PID
	kill -KILL "$victim"
	wait "$victim" || true
	SC_PID=
	grep -q "stackwalk/sw_${victim}_" /sys/kernel/debug/tracing/uprobe_events
	run "$SC" --legacy -U "$W/paths:work" -- "$W/paths" 1
	[ "$status" -eq 0 ]
	stop_phases
	! grep -q "stackwalk/sw_${victim}_" /sys/kernel/debug/tracing/uprobe_events || false
	[ -z "$(leftover_probes)" ]
}

@test "--kernel-features in forced legacy mode masks what 4.4 lacked" {
	run "$SC" --legacy=4.4 --kernel-features
	[ "$status" -eq 0 ]
	echo "$output" | grep -qx 'forced legacy mode                 4.4 (features newer than it masked off)'
	echo "$output" | grep -qx 'get_stack (4.18)                   no'
	echo "$output" | grep -qx 'STACK_TRACE map, get_stackid (4.6) no'
	echo "$output" | grep -qx 'tracefs                            /sys/kernel/debug/tracing'
	echo "$output" | grep -qx 'walker                             fp: forced legacy mode'
}

semaphore_of_phases() {
	echo 0 >&7
	PHASES_SEM=$((${PHASES_SEM:-0} + 1))
	wait_for '^semaphore' "$BATS_TEST_TMPDIR/phases.out" "$PHASES_SEM"
	grep '^semaphore' "$BATS_TEST_TMPDIR/phases.out" | tail -n1 | cut -d' ' -f2
}

# Before 4.20 the kernel leaves USDT semaphores to the tracer.
@test "forced legacy mode sets a USDT semaphore in -p's process, and unsets it" {
	start_phases
	[ "$(semaphore_of_phases)" -eq 0 ]
	start_sc --legacy -U -p "$PHASES_PID" "u:$W/phases:step"
	[ "$(semaphore_of_phases)" -eq 1 ]
	phase 5
	stop_sc
	[ "$(semaphore_of_phases)" -eq 0 ]
	stop_phases
	grep -qx '    5' "$BATS_TEST_TMPDIR/sc.out"
}

@test "forced legacy mode sets a -- COMMAND's USDT semaphores at its start" {
	run --separate-stderr "$SC" --legacy -f -U "u:$W/usdt:t*" -- "$W/usdt" 3
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'usdt;[unknown];main;tick_site 3\nusdt;[unknown];main;tock_site 6')" ]
	run --separate-stderr "$SC" --legacy -U "u:$W/usdt:t*"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"which this kernel does not set (4.20+ does); give -p PID or -- COMMAND"* ]]
}

# A fresh machine has neither mounted; old kernels keep tracefs in debugfs.
@test "tracefs, or debugfs in legacy mode, is mounted when absent" {
	umount /sys/kernel/debug/tracing 2>/dev/null || true
	umount /sys/kernel/debug 2>/dev/null || skip "debugfs is busy"
	run "$SC" --legacy -U "$W/paths:work" -- "$W/paths" 1
	[ "$status" -eq 0 ]
	grep -q ' /sys/kernel/debug debugfs ' /proc/mounts
	umount /sys/kernel/debug/tracing 2>/dev/null || true
	umount /sys/kernel/debug 2>/dev/null || skip "debugfs is busy"
	umount /sys/kernel/tracing 2>/dev/null || true
	# --kernel-features only looks (options.bats); tracing mounts
	run "$SC" -D 1 t:sched:sched_switch
	[ "$status" -eq 0 ]
	grep -q ' /sys/kernel/tracing tracefs ' /proc/mounts
}
