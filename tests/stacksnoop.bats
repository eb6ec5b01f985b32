#!/usr/bin/env bats
# stacksnoop: the stack of every event, in order, on every delivery path.

load helpers

SN=$TOP/build/stacksnoop

teardown() {
	teardown_processes
}

# stacksnoop ... -- snoop, its own stdout (its pid) kept apart
snoop() {
	run --separate-stderr "$SN" "$@" -- sh -c "exec $W/snoop \$SNOOP_N > $BATS_TEST_TMPDIR/pid"
}

without_time() {
	sed -E 's/^[0-9]+\.[0-9]{9} +//'
}

# one event's lines: "ip:" for its first frame, "rN:" for each caller
event_lines() {
	local i=0 f
	printf '\nip: ADDR %s\n' "$1"
	shift
	for f in "$@"; do
		printf 'r%d: ADDR %s\n' $((i++)) "$f"
	done
}

# the three events, each stack going on past main with the frames $@:
# [unknown] is main's caller, libc's __libc_start_call_main (a local
# symbol); the cfi walker goes on to __libc_start_main and _start, as
# gdb's bt does, where the frame-pointer walkers stop
expected_three() {
	echo 'TIME(s)            STACK'
	event_lines target first main "$@"
	event_lines target second main "$@"
	event_lines target third_inner third main "$@"
}

addresses_out() {
	sed -E 's/^(ip|r[0-9]+): [0-9a-f]+ /\1: ADDR /'
}

# three calls, three paths, in order; the caller at entry in each
@test "three events through three paths: three stacks, in order, time increasing" {
	for w in getstack stackmap fp cfi; do
		snoop -U --walker $w "$W/snoop:target"
		[ "$status" -eq 0 ]
		past_main=('[unknown]')
		[ $w = cfi ] && past_main+=(__libc_start_main _start)
		diff -u <(expected_three "${past_main[@]}") <(echo "$output" | without_time | addresses_out)
		times=$(echo "$output" | grep -E '^[0-9]+\.[0-9]{9} +$' | cut -d' ' -f1)
		[ "$(echo "$times" | wc -l)" -eq 3 ]
		[ "$(echo "$times" | sort -n)" = "$times" ]
		[ "$(echo "$times" | sort -u | wc -l)" -eq 3 ]
	done
}

@test "-v: the COMM, PID and CPU of each event" {
	[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
	run --separate-stderr "$SN" -v -U "$W/snoop:target" -- \
		taskset -c 1 sh -c "exec $W/snoop > $BATS_TEST_TMPDIR/pid"
	[ "$status" -eq 0 ]
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	[ "$(echo "$output" | head -n1)" = "TIME(s)            COMM         PID    CPU STACK" ]
	# three events: a line each, then 6, 6 and 7 frames (expected_three)
	[ "$(echo "$output" | sed -n '2,$p' | wc -l)" -eq 22 ]
	[ -z "$(echo "$output" | sed -n '2,$p' | grep -vE "^[0-9.]+ +snoop +$pid +1 +")" ]
	# the columns exactly as bcc's: %-18.9f %-12.12s %-6d %-3d
	l=$(echo "$output" | sed -n 3p)
	printf -v want '%-18s %-12.12s %-6s %-3s ip: ' "${l%% *}" snoop "$pid" 1
	[ "${l:0:${#want}}" = "$want" ]
}

@test "-s: offsets of the probed instruction and of each return address" {
	snoop -s -U "$W/snoop:target"
	echo "$output" | without_time | sed -n 3,5p | grep -Eq '^ip: [0-9a-f]+ target\+0x0$'
	echo "$output" | without_time | sed -n 4p | grep -Eq '^r0: [0-9a-f]+ first\+0x[0-9a-f]+$'
}

# 4.1-4.3 have no perf_event_output: the same stacks through trace_pipe
# (legacy means the fp walker: the stacks it sends through the perf buffer)
@test "forced legacy 4.3: trace_printk lines through trace_pipe, the same stacks" {
	snoop -U --walker fp "$W/snoop:target"
	echo "$output" | without_time > "$BATS_TEST_TMPDIR/perf"
	snoop --legacy=4.3 -U "$W/snoop:target"
	[ "$status" -eq 0 ]
	echo "$output" | without_time > "$BATS_TEST_TMPDIR/printk"
	diff -u <(addresses_out < "$BATS_TEST_TMPDIR/perf") <(addresses_out < "$BATS_TEST_TMPDIR/printk")
	[ "$(grep -c '^ip:' "$BATS_TEST_TMPDIR/printk")" -eq 3 ]
	snoop --legacy=4.4 -U "$W/snoop:target"
	diff -u <(addresses_out < "$BATS_TEST_TMPDIR/perf") <(echo "$output" | without_time | addresses_out)
	[ -z "$(leftover_probes)" ]
}

# many events in one read: each keeps its own frames (the batch grows)
@test "thousands of events: every one printed with its own stack" {
	SNOOP_N=3000 snoop -U "$W/snoop:target"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(echo "$output" | grep -c ' ip: [0-9a-f]* target$')" -eq 3003 ]
	[ "$(echo "$output" | grep -c ' r0: [0-9a-f]* main$')" -eq 3000 ]
	SNOOP_N=1000 snoop --legacy=4.3 -U "$W/snoop:target"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c ' ip: [0-9a-f]* target$')" -eq 1003 ]
	[ "$(echo "$output" | grep -c ' r0: [0-9a-f]* main$')" -eq 1000 ]
}

@test "tracepoint, -d: kernel frames, the delimiter, user frames" {
	run --separate-stderr "$SN" -d t:syscalls:sys_enter_getppid -- "$W/paths" 2
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^[0-9.]* *$')" -eq 2 ]
	echo "$output" | without_time | grep -B1 -x -- '--' | grep -q 'entry_SYSCALL_64_after_hwframe$'
	echo "$output" | without_time | grep -A1 -x -- '--' | grep -Eq '^r[0-9]+: [0-9a-f]+ getppid$'
}

# a frame pointer chain, each link read where the last one pointed
@test "--explain --walker fp: the exact chain of frame pointers and return addresses" {
	snoop --explain --walker fp "$W/snoop:target"
	[ "$status" -eq 0 ]
	block=$(echo "$output" | awk '/how the user stack was walked/ { n++ } n == 3')
	echo "$block"
	echo "$block" | grep -Eq '^    %rip = [0-9a-f]+ target\+0x0: where the uprobe fired$'
	echo "$block" | grep -Eq '^      \[%rsp = [0-9a-f]+\] = [0-9a-f]+ third_inner\+0x[0-9a-f]+$'
	# frames: [%rbp = A] = B [+8] = ..., then [%rbp = B] = C ...: a chain
	frames=$(echo "$block" | grep -E '^      \[%rbp = ')
	[ "$(echo "$frames" | wc -l)" -eq 3 ]
	echo "$frames" | awk '{ print $3, $5 }' | tr -d ']' | awk '
		NR > 1 && $1 != next_fp { exit 1 } { next_fp = $2 }'
	echo "$frames" | sed -n 1p | grep -q ' third+0x'
	echo "$frames" | sed -n 2p | grep -q ' main+0x'
	# main's caller in libc keeps no frame pointer: the walk ends where the
	# last saved %rbp points, at no frame
	last=$(echo "$frames" | tail -n1 | awk '{ print $5 }')
	diff -u <(printf '    stop: nothing can be read at %%rbp = %s: code built without frame pointers\n          used %%rbp for something else, so the chain breaks there\n' "$last") \
		<(echo "$block" | tail -n2)
}

# With --explain, a user event is the cfi walker's where it runs: under
# each frame, the rule of the unwind table row at its address, which found
# its caller.  The workload's functions keep frame pointers
# (tests/workloads/workloads.mk), libc's start-up code has rules of its
# build's, and _start's ends the stack.
@test "--explain on a user event: the cfi walker's, each frame's unwind rule under it" {
	snoop --explain "$W/snoop:target"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# the third event: its lines, addresses out, the indentation kept (the
	# STACK column starts after the %-18.9f time and a space)
	block=$(echo "$output" | cut -c20- | addresses_out | awk 'BEGIN { RS = "" } NR == 4')
	echo "$block"
	fp_rule="    CFA = %rbp+16: the function keeps a frame pointer; the return address is at %rbp+8; the caller's %rbp is saved at CFA-16"
	diff -u - <(echo "$block" | sed '10d;12d') <<EOF
ip: ADDR regs target
    CFA = %rsp+8: the return address is on top of the stack; %rbp still holds the caller's
r0: ADDR cfi third_inner
$fp_rule
r1: ADDR cfi third
$fp_rule
r2: ADDR cfi main
$fp_rule
r3: ADDR cfi [unknown]
r4: ADDR cfi __libc_start_main
r5: ADDR cfi _start
    the return address is undefined: this is the outermost frame, the stack ends here
EOF
	# libc's two: a rule each, whichever its build made
	[ "$(echo "$block" | sed -n '10p;12p' | grep -cE '^    CFA = %r[sb]p\+[0-9]+: ')" -eq 2 ]
}

# events that do not fit in the buffer are counted, not dropped silently
@test "a high event rate into a one-page buffer: printed plus lost is every event" {
	SNOOP_N=300000 snoop -U --perf-buffer-pages 1 "$W/snoop:target"
	[ "$status" -eq 0 ]
	printed=$(echo "$output" | grep -c '^[0-9.]* *ip: ')
	lost=$(echo "$stderr" | sed -nE 's/^([0-9]+) events lost: .*to a full perf buffer.*/\1/p')
	echo "printed $printed lost $lost"
	[ "$lost" -gt 0 ]
	[ $((printed + lost)) -eq 300003 ]
}

@test "bad input: one line on stderr, non-zero, nothing left in tracefs" {
	for args in "--bogus x" "a:b:c:d" "$W/snoop:nosuch" "t:sched:nosuch" \
		    "-p 999999 $W/snoop:target" "-K -U t:sched:sched_switch" \
		    "--explain -d $W/snoop:target" "--perf-buffer-pages 3 x"; do
		run --separate-stderr "$SN" $args
		echo "$args -> $status: $stderr"
		[ "$status" -ne 0 ]
		[ -z "$output" ]
		[ "$(echo "$stderr" | wc -l)" -eq 1 ]
		[[ "$stderr" == stacksnoop:\ * ]]
	done
	[ -z "$(leftover_probes)" ]
}
