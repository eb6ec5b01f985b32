#!/usr/bin/env bats
# The cfi walker: user stacks unwound from .eh_frame are the stacks gdb's
# `bt` unwinds, frame by frame, in Debian's own binaries (built without
# frame pointers) and where a frame-pointer walk loses a caller even in
# code with frame pointers (tests/workloads/cfipaths.c).  gdb is the judge
# (tests/gdb_bt.sh); every run is without address space randomization, so
# that both see the same addresses.

load helpers

GDB_BT=$TOP/tests/gdb_bt.sh
SN=$TOP/build/stacksnoop

# The cfi walker loads on every kernel these host suites run on (4.18+):
# a refusal is a failure, never a skip.
need_cfi() {
	"$SC" --walker cfi --kernel-features > /dev/null
}

# COUNT ADDRESS... a line, sorted: each distinct stack gdb unwound at
# BREAKSPEC ($1) as tests/gdb_bt.sh gives them (to the outermost frame),
# and how often.  FORKED=1: COMMAND forks once, and gdb judges the parent
# in one run, then the child in another.
gdb_stacks() {
	local spec=$1
	shift 2
	{ "$GDB_BT" --all "$spec" -- "$@" &&
		if [ "${FORKED:-0}" = 1 ]; then "$GDB_BT" --all --child "$spec" -- "$@"; fi; } \
		> "$BATS_TEST_TMPDIR/gdb.hits" 2> "$BATS_TEST_TMPDIR/gdb.err" ||
		{ cat "$BATS_TEST_TMPDIR/gdb.err" >&2; return 1; }
	sort "$BATS_TEST_TMPDIR/gdb.hits" | uniq -c | awk '{ c = $1; $1 = ""; print c $0 }' | sort
}

# The same from stackcount -P --json -U --walker cfi PATTERN ($1) -- COMMAND,
# run as gdb runs programs; .total, the events counted, in $BATS_TEST_TMPDIR/total.
cfi_stacks() {
	local pattern=$1
	shift 2
	setarch -R "$SC" -P -U --json --walker cfi "$pattern" -- "$@" \
		> "$BATS_TEST_TMPDIR/sc.json" 2> "$BATS_TEST_TMPDIR/sc.err" ||
		{ cat "$BATS_TEST_TMPDIR/sc.err" >&2; return 1; }
	jq -r '.total' "$BATS_TEST_TMPDIR/sc.json" > "$BATS_TEST_TMPDIR/total"
	jq -r '.stacks[] | "\(.count) " +
		([.frames[] | select(.kind == "user") | .address | ltrimstr("0x")] | join(" "))' \
		"$BATS_TEST_TMPDIR/sc.json" | sort
}

# BREAKSPEC PATTERN -- COMMAND...: stackcount counts exactly the stacks gdb
# unwinds, frame by frame, each as often, and every event has its stack.
same_as_gdb() {
	gdb_stacks "$1" "${@:3}" > "$BATS_TEST_TMPDIR/gdb.stacks"
	cfi_stacks "$2" "${@:3}" > "$BATS_TEST_TMPDIR/cfi.stacks"
	# two empty sides agree on nothing: gdb must have stopped there
	[ -s "$BATS_TEST_TMPDIR/gdb.stacks" ]
	diff -u "$BATS_TEST_TMPDIR/gdb.stacks" "$BATS_TEST_TMPDIR/cfi.stacks"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/gdb.hits")" -eq "$(cat "$BATS_TEST_TMPDIR/total")" ]
}

# stackcount -f -U --walker WALKER PATTERN -- cfipaths prints exactly the
# stacks on stdin (in C order)
cfipaths_folded() {
	run --separate-stderr "$SC" -f -U --walker "$1" "$2" -- "$W/cfipaths" "${@:3}"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | LC_ALL=C sort)
}

# ---- the workload and the judge, without the cfi walker ----

# gdb --names stacks of cfipaths (arguments $2...) at $1, names only,
# counted; main's caller named as with libc's debug file or without
gdb_names() {
	"$GDB_BT" --names "$1" -- "$W/cfipaths" "${@:2}" 2> "$BATS_TEST_TMPDIR/gdb.err" |
		sed -E 's/(^| )[0-9a-f]+:/\1/g; s/ \?\?@libc\.so\.6$/ __libc_start_call_main/' |
		sort | uniq -c
}

@test "gdb: cfipaths makes exactly the stacks it says, at each of its probes" {
	diff -u - <(gdb_names '-probe-stap cfipaths:frameless') <<'EOF'
      1 frameless leaf_a main __libc_start_call_main
      2 frameless leaf_b main __libc_start_call_main
EOF
	diff -u - <(gdb_names '*entered') <<'EOF'
      3 entered entry_a main __libc_start_call_main
      4 entered entry_b main __libc_start_call_main
EOF
	diff -u - <(gdb_names syscall:getppid) <<'EOF'
      5 syscall sys_a main __libc_start_call_main
      6 syscall sys_b main __libc_start_call_main
EOF
	diff -u - <(gdb_names '-probe-stap cfipaths:rbpsaved' rbp) <<'EOF'
      1 rbp_saved saved_a main __libc_start_call_main
      2 rbp_saved saved_b main __libc_start_call_main
EOF
}

# The static builds the VM tests run (tests/vm/run-tests.sh: cfi_callers,
# cfi_kprobe_d, cfi_snoop, cfi_fork, cfi_deep) on every kernel from 4.9:
# gdb's whole stacks there (--all: past main's caller, to _start) are the
# ones those tests expect, frame for frame.  __libc_start_main_impl is
# __libc_start_main's address, which the tool names by its alias.
gdb_static() {
	"$GDB_BT" --all --names "$@" 2> "$BATS_TEST_TMPDIR/gdb.err" |
		sed -E 's/(^| )[0-9a-f]+:/\1/g; s/__libc_start_main_impl/__libc_start_main/' |
		sort | uniq -c
}

# deep N's frames, innermost first, on one line, as cfi_deep expects them
deep_frames() {
	local d line=target
	for ((d = $1; d >= 0; d--)); do
		line+=" down$((d % 3))"
	done
	echo "$line main __libc_start_call_main __libc_start_main _start"
}

@test "gdb: the static workloads the VM runs make the stacks its cfi tests expect" {
	S="$W/static"
	# as the tests' workloads are built, and as distributions build code
	# (-O2, no frame pointers)
	for b in cfipaths cfipaths_o2; do
		diff -u - <(gdb_static '-probe-stap cfipaths:frameless' -- "$S/$b") <<'EOF'
      1 frameless leaf_a main __libc_start_call_main __libc_start_main _start
      2 frameless leaf_b main __libc_start_call_main __libc_start_main _start
EOF
		diff -u - <(gdb_static '*entered' -- "$S/$b") <<'EOF'
      3 entered entry_a main __libc_start_call_main __libc_start_main _start
      4 entered entry_b main __libc_start_call_main __libc_start_main _start
EOF
		diff -u - <(gdb_static syscall:getppid -- "$S/$b") <<'EOF'
      5 syscall sys_a main __libc_start_call_main __libc_start_main _start
      6 syscall sys_b main __libc_start_call_main __libc_start_main _start
EOF
	done
	diff -u - <(gdb_static '-probe-stap cfipaths:frameless' -- "$S/cfipaths" fork) <<'EOF'
      1 frameless leaf_a in_parent main __libc_start_call_main __libc_start_main _start
      2 frameless leaf_b in_parent main __libc_start_call_main __libc_start_main _start
EOF
	# the stacks of the most frames a key holds on 4.9 (30) and 4.14 (48)
	for n in 24 42; do
		diff -u <(printf '      2 %s\n' "$(deep_frames $n)") \
			<(gdb_static '*target' -- "$S/deep" $n)
	done
}

# What the cfi walker is for: in syscall(), a frame-pointer walk goes
# straight to main, merging both chains.  At a USDT probe, whose address
# is known before it fires, the walkers without CFI of their own take the
# caller where the probe's CFI row says (src/uframe.c): in frameless()
# every walker, where rbp_saved() has saved %rbp and cleared it only fp,
# which reads it back; the kernel's unwinder starts from the cleared %rbp.
@test "fp, getstack, stackmap: a USDT probe's caller from its CFI row; syscall() loses it" {
	for w in fp getstack stackmap; do
		cfipaths_folded $w "u:$W/cfipaths:frameless" <<'EOF'
cfipaths;[unknown];main;leaf_a;frameless 1
cfipaths;[unknown];main;leaf_b;frameless 2
EOF
	done
	cfipaths_folded fp "u:$W/cfipaths:rbpsaved" rbp <<'EOF'
cfipaths;[unknown];main;saved_a;rbp_saved 1
cfipaths;[unknown];main;saved_b;rbp_saved 2
EOF
	for w in getstack stackmap; do
		cfipaths_folded $w "u:$W/cfipaths:rbpsaved" rbp <<<"cfipaths;rbp_saved 3"
	done
	cfipaths_folded fp t:syscalls:sys_enter_getppid <<<"cfipaths;[unknown];main;syscall 11"
}

# Two USDT probes at the same offset in their pages, whose CFI rows put
# the return address at different depths: the rules' map holds one rule
# per offset (bpf/stackwalk.h, SW_UFRAMES), so neither gets one, and the
# run says so rather than lose main silently.
@test "fp, getstack, stackmap: USDT probes whose caller rules share a key get none, said in one line" {
	local msg="stackcount: 2 probes inside functions share their offset in a page with one whose CFI row differs, and get no caller rule: where the %rbp chain skips their callers, those are lost; trace them in separate runs"
	for w in fp getstack stackmap; do
		run --separate-stderr "$SC" -f -U --walker $w "u:$W/uclash:clash_b" -- "$W/uclash" 2
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[ "$output" = "uclash;[unknown];main;clash_b 2" ]
		run --separate-stderr "$SC" -f -U --walker $w "u:$W/uclash:*" -- "$W/uclash" 3
		[ "$status" -eq 0 ]
		[ "$stderr" = "$msg" ]
		[ "$(sort <<<"$output")" = "$(printf '%s\n' 'uclash;[unknown];clash_a 3' 'uclash;[unknown];clash_b 3')" ]
	done
}

# ---- the cfi walker ----

# Past main's caller the tables go on to __libc_start_main and _start,
# whose return address is undefined: the outermost frame.
@test "cfi: cfipaths' exact stacks by name, at each of its three probes" {
	need_cfi
	cfipaths_folded cfi "u:$W/cfipaths:frameless" <<'EOF'
cfipaths;_start;__libc_start_main;[unknown];main;leaf_a;frameless 1
cfipaths;_start;__libc_start_main;[unknown];main;leaf_b;frameless 2
EOF
	cfipaths_folded cfi "$W/cfipaths:entered" <<'EOF'
cfipaths;_start;__libc_start_main;[unknown];main;entry_a;entered 3
cfipaths;_start;__libc_start_main;[unknown];main;entry_b;entered 4
EOF
	cfipaths_folded cfi t:syscalls:sys_enter_getppid <<'EOF'
cfipaths;_start;__libc_start_main;[unknown];main;sys_a;syscall 5
cfipaths;_start;__libc_start_main;[unknown];main;sys_b;syscall 6
EOF
}

@test "cfi: cfipaths, every stack frame by frame as gdb unwinds it" {
	need_cfi
	same_as_gdb '-probe-stap cfipaths:frameless' "u:$W/cfipaths:frameless" -- "$W/cfipaths"
	same_as_gdb '*entered' "$W/cfipaths:entered" -- "$W/cfipaths"
	same_as_gdb syscall:getppid t:syscalls:sys_enter_getppid -- "$W/cfipaths"
}

@test "cfi: cfipaths built -O2 without frame pointers, every stack frame by frame as gdb unwinds it" {
	need_cfi
	same_as_gdb '-probe-stap cfipaths:frameless' "u:$W/cfipaths_o2:frameless" -- "$W/cfipaths_o2"
	same_as_gdb '*entered' "$W/cfipaths_o2:entered" -- "$W/cfipaths_o2"
	same_as_gdb syscall:getppid t:syscalls:sys_enter_getppid -- "$W/cfipaths_o2"
}

# Debian's sort has no frame pointers, nor has libc: every malloc from
# setlocale, stdio and sort itself, to _start.  -o: stdout stays empty.
# A child of fork without exec maps what its parent maps: the kernel side
# gives it its parent's tables, so its first event is walked whole.
@test "cfi: a child of fork and its parent, every stack frame by frame as gdb unwinds it" {
	need_cfi
	FORKED=1 same_as_gdb '-probe-stap cfipaths:frameless' "u:$W/cfipaths:frameless" -- "$W/cfipaths" fork
	FORKED=1 same_as_gdb '*entered' "$W/cfipaths:entered" -- "$W/cfipaths" fork
	FORKED=1 same_as_gdb syscall:getppid t:syscalls:sys_enter_getppid -- "$W/cfipaths" fork
	# by name: in_child's paths are the child's, in_parent's the parent's
	cfipaths_folded cfi "u:$W/cfipaths:frameless" fork <<'EOF'
cfipaths;_start;__libc_start_main;[unknown];main;in_child;leaf_a;frameless 1
cfipaths;_start;__libc_start_main;[unknown];main;in_child;leaf_b;frameless 2
cfipaths;_start;__libc_start_main;[unknown];main;in_parent;leaf_a;frameless 1
cfipaths;_start;__libc_start_main;[unknown];main;in_parent;leaf_b;frameless 2
EOF
}

# Debian's bash and python3.11 (no frame pointers) fork without exec: a
# $(...) subshell, a multiprocessing worker; their stacks are the child's.
@test "cfi: Debian's bash, a \$(...) subshell's kill stacks as gdb unwinds them" {
	need_cfi
	FORKED=1 same_as_gdb syscall:kill t:syscalls:sys_enter_kill -- \
		/bin/bash -c 'x=$(for i in 1 2 3 4 5; do kill -0 $$; done)'
	[ "$(cat "$BATS_TEST_TMPDIR/total")" = 5 ]
}

@test "cfi: Debian's python3.11, a multiprocessing worker (fork) as gdb unwinds it" {
	need_cfi
	FORKED=1 same_as_gdb syscall:getppid t:syscalls:sys_enter_getppid -- \
		/usr/bin/python3.11 -c 'import multiprocessing as mp, os
mp.set_start_method("fork")
p = mp.Process(target=lambda: [os.getppid() for i in range(4)])
p.start(); p.join()'
	[ "$(cat "$BATS_TEST_TMPDIR/total")" = 4 ]
}

# A process whose maps the tool has not read yet (here: the tool is
# stopped while the process runs) has no tables: the kernel's frame-pointer
# walk stands in, and each such event is counted and said, never passed
# off as unwound (frameless' caller is lost, as in a frame-pointer walk).
sc_stopped_during() {	# OUT ARGS...: stackcount ARGS, stopped while cfipaths runs
	local out=$1
	shift
	"$SC" "$@" > "$BATS_TEST_TMPDIR/$out" 2> "$BATS_TEST_TMPDIR/$out.err" &
	SC_PID=$!
	wait_for '^Tracing' "$BATS_TEST_TMPDIR/$out"
	kill -STOP "$SC_PID"
	"$W/cfipaths"
	kill -CONT "$SC_PID"
	kill -INT "$SC_PID"
	wait "$SC_PID"
	SC_PID=
}

@test "cfi: events of a process whose maps were not read yet are counted and said" {
	need_cfi
	sc_stopped_during sc.out -U --walker cfi "u:$W/cfipaths:frameless"
	# 5.17+: libc's frames by the table every other process's libc
	# loaded, found from their VMA; before, none of the process's
	local libc=
	if "$SC" --kernel-features | grep -q '^bpf_find_vma (5.17) *yes$'; then
		libc=$'\n  __libc_start_main\n  _start'
	fi
	diff - <(sed -n '/^Tracing/,$p' "$BATS_TEST_TMPDIR/sc.out" | normalize) <<OUT
Tracing 1 functions for "u:$W/cfipaths:frameless"... Hit Ctrl-C to end.

  frameless
  main
  [unknown]$libc
    3

Detaching...
OUT
	grep -qx "the user frames of 3 events were found by frame pointers where unwind tables were not loaded yet (a process, or a library, that came after its maps were read), so callers of code without frame pointers may be missing or wrong" \
		"$BATS_TEST_TMPDIR/sc.out.err"
}

# Where BPF finds no mappings itself (no bpf_find_vma, no list built
# from the VMAs: as STACKWALK_NO_FIND_VMA=1 STACKWALK_NO_VMA_LISTS=1 make
# it), such events are the kernel's unwinder's: -v says each frame past
# the first is a frame-pointer step.
@test "cfi: -v, events no list or VMA covers: each frame past the first a frame-pointer step" {
	need_cfi
	STACKWALK_NO_FIND_VMA=1 STACKWALK_NO_VMA_LISTS=1 \
		sc_stopped_during sc.out -v -U --walker cfi "u:$W/cfipaths:frameless"
	diff -u - <(awk '/^  [0-9a-f]+ / { print $2, $3 }' "$BATS_TEST_TMPDIR/sc.out" | LC_ALL=C sort -u) <<'EOF'
fp [unknown]
fp main
regs frameless
EOF
	grep -qx "the user frames of 3 events were found by frame pointers where unwind tables were not loaded yet (a process, or a library, that came after its maps were read), so callers of code without frame pointers may be missing or wrong" \
		"$BATS_TEST_TMPDIR/sc.out.err"
}

# CFI that a walk of %rsp and %rbp cannot follow (a CFA from %rbx), or
# that puts the CFA at %rsp itself, ends the walk there: counted, said,
# explained, never a caller guessed by a frame-pointer step.
@test "cfi: a CFA from %rbx, or one not above %rsp, ends the walk there, counted and said" {
	need_cfi
	run --separate-stderr "$SC" -f -U --walker cfi "u:$W/cfipaths:*cfa" -- "$W/cfipaths" cut
	[ "$status" -eq 0 ]
	diff - <(echo "$output" | LC_ALL=C sort) <<'EOF'
cfipaths;low_cfa 1
cfipaths;rbx_cfa 1
EOF
	[ "$stderr" = "2 user stacks end early: the walk met CFI it cannot follow (a CFA from a register other than %rsp and %rbp, or an expression) or a CFA not above the frame's own, and left the callers beyond out rather than guess them" ]
	run --separate-stderr "$SN" --explain "u:$W/cfipaths:*cfa" -- "$W/cfipaths" cut
	[ "$status" -eq 0 ]
	diff - <(echo "$output" | sed 1d | cut -c20- | sed -E 's/^ip: [0-9a-f]+ /ip: /') <<'EOF'

ip: regs rbx_cfa
    the CFI here is a rule no row can hold (an expression, or a register other than %rsp and %rbp): the walk ends here rather than guess
    the walk ends: that rule leads to no frame above this one, and a guess could be wrong

ip: regs low_cfa
    CFA = %rsp+0: not above %rsp, so no return address lies below it: the walk ends here
    the walk ends: that rule leads to no frame above this one, and a guess could be wrong
EOF
}

@test "cfi: Debian's sort, each malloc's stack as gdb unwinds it, each as often" {
	need_cfi
	seq 1 50 | shuf --random-source=<(yes) > "$BATS_TEST_TMPDIR/numbers"
	same_as_gdb '*malloc' c:malloc -- /usr/bin/sort -n "$BATS_TEST_TMPDIR/numbers" \
		-o "$BATS_TEST_TMPDIR/sorted"
}

# Debian's python3.11 (libpython linked in, no frame pointers): the write
# of os.write, 20-odd frames through the interpreter.
@test "cfi: Debian's python3, a write's stack as gdb unwinds it" {
	need_cfi
	same_as_gdb '*write' c:write -- /usr/bin/python3 -c 'import os; os.write(2, b"x\n")'
}

# A kernel event's user stack, in Debian's python3.11: the user registers
# saved at the syscall, then the tables (python's main tail-calls
# Py_BytesMain, so gdb and the walker both go from it to libc's start).
@test "cfi: a sys_enter_write in Debian's python3.11, its user stack as gdb unwinds it" {
	need_cfi
	same_as_gdb syscall:write t:syscalls:sys_enter_write -- /usr/bin/python3.11 \
		-c 'import os; os.write(2, b"x\n")'
}

# Past a signal frame the caller is the interrupted PC, saved in the
# ucontext at __restore_rt, not a return address (tests/workloads/sigpaths.c).
@test "cfi: through a signal frame (__restore_rt) as gdb unwinds it" {
	need_cfi
	same_as_gdb '*on_signal' "$W/sigpaths:on_signal" -- "$W/sigpaths"
}

# -v: how each user frame was found; the frame after the signal frame
# came from the registers the kernel saved.
@test "cfi: -v says how each user frame was found: regs, cfi, signal" {
	need_cfi
	run --separate-stderr "$SC" -v -U "$W/sigpaths:on_signal" -- "$W/sigpaths"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | awk '/^  [0-9a-f]+ / { print $2, $3 }' | head -n 10) <<'EOF'
regs on_signal
cfi handler
cfi [unknown]
signal [unknown]
cfi raise
cfi sender
cfi main
cfi [unknown]
cfi __libc_start_main
cfi _start
EOF
}

# stacksnoop --explain: the rule at each user frame, the first one at the
# probed instruction, the others a byte before each return address.
@test "cfi: stacksnoop --explain shows the unwind rule of each user frame" {
	need_cfi
	run --separate-stderr "$SN" --explain "$W/cfipaths:entered" -- "$W/cfipaths"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | awk 'NR > 2 && NF == 1 { exit } NR > 2' | cut -c20- |
		sed -E 's/^(ip|r[0-9]+): [0-9a-f]+ /\1: ADDR /') <<'EOF'
ip: ADDR regs entered
    CFA = %rsp+8: the return address is on top of the stack; %rbp still holds the caller's
r0: ADDR cfi entry_a
    CFA = %rbp+16: the function keeps a frame pointer; the return address is at %rbp+8; the caller's %rbp is saved at CFA-16
r1: ADDR cfi main
    CFA = %rbp+16: the function keeps a frame pointer; the return address is at %rbp+8; the caller's %rbp is saved at CFA-16
r2: ADDR cfi [unknown]
    CFA = %rsp+160: the return address is at %rsp+152, above the 152 bytes the function has pushed or reserved; %rbp still holds the caller's
r3: ADDR cfi __libc_start_main
    CFA = %rsp+80: the return address is at %rsp+72, above the 72 bytes the function has pushed or reserved; the caller's %rbp is saved at CFA-48
r4: ADDR cfi _start
    the return address is undefined: this is the outermost frame, the stack ends here
EOF
}

# A table that does not fit is said, never dropped silently: 1 MiB holds
# python3.11's own table (about 105,000 rows), not every library's beside
# it.  The process has libstdc++ loaded and waits before the run starts,
# so that its maps, all of them, are read at the start (-p): with
# -- COMMAND a library mapped just before the process ended may be heard
# of only once it is gone, when no table is read, nor needed.
@test "cfi: --unwind-memory: a table that does not fit is named in a warning, the run goes on" {
	need_cfi
	local T=$BATS_TEST_TMPDIR
	mkfifo "$T/py.in"
	/usr/bin/python3.11 -c 'import ctypes, os, sys
ctypes.CDLL("libstdc++.so.6")
print("loaded", flush=True)
sys.stdin.readline()
os.getppid()' < "$T/py.in" > "$T/py.out" &
	PY_PID=$!
	exec 7> "$T/py.in"
	wait_for '^loaded$' "$T/py.out"
	start_sc -U --unwind-memory 1 -p "$PY_PID" t:syscalls:sys_enter_getppid
	echo go >&7
	exec 7>&-
	wait "$PY_PID"
	stop_sc
	[[ "$(cat "$T/sc.err")" =~ ^stackcount:\ the\ unwind\ tables\ of\ [0-9]+\ binaries\ \([0-9]+\ rows\)\ did\ not\ fit\ in\ --unwind-memory\ 1\ MiB:\ their\ frames\ are\ found\ by\ frame\ pointers\;\ give\ more$ ]]
	[ "$(grep -c '^    1$' "$T/sc.out")" -eq 1 ]
}

@test "cfi: a table no walk can search (code spanning 8 GiB) is named in a warning, its frames found by frame pointers" {
	need_cfi
	run --separate-stderr "$SC" -U --walker cfi t:syscalls:sys_enter_getppid -- "$W/farcode"
	[ "$status" -eq 0 ]
	diff - <(echo "$output" | normalize) <<OUT
Tracing 1 functions for "t:syscalls:sys_enter_getppid"... Hit Ctrl-C to end.

  far_away
  main
  _start
    3

Detaching...
OUT
	[ "$stderr" = "stackcount: the unwind tables of 1 binaries ($W/farcode) are past what a walk can search (more than 1048576 rows, or code spanning more than 4 GiB): their frames are found by frame pointers" ]
	# --explain: each frame-pointer step said as the walk took it
	run --separate-stderr "$SN" --explain "$W/farcode:far_away" -- "$W/farcode"
	[ "$status" -eq 0 ]
	for i in 1 2 3; do
		cat <<'EOF'

ip: regs far_away
    CFA = %rsp+8: the return address is on top of the stack; %rbp still holds the caller's (no CFI here, but a function's first instruction needs none)
r0: cfi main
    no unwind rule covered this address when the event fired: a frame-pointer step, the return address at %rbp+8
r1: fp _start
    no CFI covers this address: only the frame pointer can lead on
EOF
	done | diff - <(echo "$output" | sed 1d | cut -c20- | sed -E 's/^(ip|r[0-9]): [0-9a-f]+ /\1: /')
}

@test "cfi: --unwind-memory takes 1 to 1024 MiB, else one line and exit 2" {
	run --separate-stderr "$SC" --unwind-memory 0 -U t:syscalls:sys_enter_getppid
	[ "$status" -eq 2 ]
	[ "$stderr" = "stackcount: invalid --unwind-memory '0'; give MiB for unwind tables, 1 to 1024" ]
}

# deep N: target, down(N % 3) ... down0, main, then libc's start to
# _start; at most 127 frames, which the walk reaches four frames a
# program, tail call by tail call: a frame lost, repeated or out of place
# where one program hands over to the next breaks the cycle of names.
expected_cfi_deep() {
	local d
	{
		echo "  target"
		for ((d = $1; d >= 0; d--)); do
			echo "  down$((d % 3))"
		done
		printf '  main\n  [unknown]\n  __libc_start_main\n  _start\n'
	} | head -n 127
	# deeper than the walk holds: said so, never passed off as whole
	[ $(($1 + 6)) -le 127 ] || echo "  [truncated]"
	printf '    2\n'
}

@test "cfi: deep stacks across the walk's tail calls, frame by frame, big and small keys" {
	need_cfi
	# 3, 4, 5 frames past a program's 4; 106; 127 exactly; 205 cut to 127
	for n in 0 1 2 100 121 200; do
		for small in 0 1; do
			STACKWALK_SMALL_KEYS=$small run --separate-stderr "$SC" -U --walker cfi \
				"$W/deep:target" -- "$W/deep" "$n"
			[ "$status" -eq 0 ]
			if [ $((n + 6)) -le 127 ]; then
				[ -z "$stderr" ]
			else
				[ "$stderr" = "2 events had stacks deeper than the cfi walker holds: shown cut, ending in [truncated]" ]
			fi
			diff -u <(expected_cfi_deep "$n") <(echo "$output" | sed '1,2d' | head -n -2 | normalize)
		done
	done
	# every output ends the cut side so: folded, JSON
	run --separate-stderr "$SC" -f -U --walker cfi "$W/deep:target" -- "$W/deep" 200
	[[ "$output" == "deep;[truncated];down0;down1;down2;"* ]]
	run --separate-stderr "$SC" --json -U --walker cfi "$W/deep:target" -- "$W/deep" 200
	[ "$(jq -c '[.stacks[0].frames[-1].name, (.stacks[0].frames | length), .lost.truncated_stacks]' <<< "$output")" = '["[truncated]",128,2]' ]
}

# Where the kernel may preempt a uprobe program (6.0+ with full
# preemption; proven on one CPU in tests/vm/run-tests.sh, cloud612), each
# walk keeps its state in its thread's map entry.  Here that mode, forced:
# two processes at once, every stack exact, counted and sent, across the
# walk's tail calls.
@test "walk state per thread: exact stacks, counted and sent, cfi and getstack, across tail calls" {
	need_cfi
	export STACKWALK_WALK_STATE=task
	"$SC" --kernel-features | grep -qx 'walk state  *per thread (STACKWALK_WALK_STATE)'
	cfipaths_folded cfi "u:$W/cfipaths:frameless" race 50 <<'EOF2'
cfipaths;_start;__libc_start_main;[unknown];main;race;in_child;leaf_a;frameless 50
cfipaths;_start;__libc_start_main;[unknown];main;race;in_child;leaf_b;frameless 100
cfipaths;_start;__libc_start_main;[unknown];main;race;in_parent;leaf_a;frameless 50
cfipaths;_start;__libc_start_main;[unknown];main;race;in_parent;leaf_b;frameless 100
EOF2
	cfipaths_folded getstack "$W/cfipaths:entered" race 50 <<'EOF2'
cfipaths;[unknown];main;race;in_child;entry_a;entered 150
cfipaths;[unknown];main;race;in_child;entry_b;entered 200
cfipaths;[unknown];main;race;in_parent;entry_a;entered 150
cfipaths;[unknown];main;race;in_parent;entry_b;entered 200
EOF2
	run --separate-stderr "$SC" -U --walker cfi "$W/deep:target" -- "$W/deep" 121
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	diff -u <(expected_cfi_deep 121) <(echo "$output" | sed '1,2d' | head -n -2 | normalize)
	# stacksnoop: each event's own stack; its first two frames after the probe's
	run --separate-stderr "$SN" -U --walker cfi "u:$W/cfipaths:frameless" -- "$W/cfipaths" race 20
	[ "$status" -eq 0 ]
	diff -u - <(first_two_callers) <<'EOF2'
     20 leaf_a in_child
     20 leaf_a in_parent
     40 leaf_b in_child
     40 leaf_b in_parent
EOF2
	run --separate-stderr "$SN" -U --walker getstack "$W/cfipaths:entered" -- "$W/cfipaths" race 20
	[ "$status" -eq 0 ]
	diff -u - <(first_two_callers) <<'EOF2'
     60 entry_a in_child
     60 entry_a in_parent
     80 entry_b in_child
     80 entry_b in_parent
EOF2
}

# stacksnoop's $output: "r0 r1" names of each event, counted
first_two_callers() {
	echo "$output" | awk '$2 == "r0:" { r0 = $4 } $2 == "r1:" { print r0, $4 }' | sort | uniq -c
}

# A package upgrade renames a new file over a running program's: the
# process maps the old inode, deleted.  -p PID BIN:FUNC probes that copy
# (through /proc/PID/map_files) and says so in one line, where it used to
# probe the new file and count nothing; the copy's frames are named, and
# walked by its own unwind table.
@test "cfi: a binary replaced on disk while its process runs: -p probes the copy it runs, said; its frames named and whole" {
	need_cfi
	local T=$BATS_TEST_TMPDIR range
	cp "$W/manymaps" "$T/app"
	mkfifo "$T/mm.in"
	"$T/app" 0 < "$T/mm.in" > "$T/mm.out" &
	MM_PID=$!
	exec 7> "$T/mm.in"
	# the same program again, as an upgrade that changed nothing installs it
	cp "$T/app" "$T/app.new"
	mv -f "$T/app.new" "$T/app"
	range=$(grep -F "$T/app (deleted)" "/proc/$MM_PID/maps" | head -n 1 | cut -d' ' -f1)
	start_sc -U -p "$MM_PID" "$T/app:sys_a"
	echo "call 3" >&7
	wait_for '^called$' "$T/mm.out"
	stop_sc
	[ "$(cat "$T/sc.err")" = "stackcount: process $MM_PID runs $T/app as it was before it was deleted or replaced on disk: probing that copy (/proc/$MM_PID/map_files/$range)" ]
	replaced_stacks sys_a "$T/app:sys_a" | diff -u - "$T/sc.out"
	start_sc -U -p "$MM_PID" t:syscalls:sys_enter_getppid
	echo "call 3" >&7
	# the second "called": the first is the run before's
	wait_for '^called$' "$T/mm.out" 2
	stop_sc
	[ ! -s "$T/sc.err" ]
	replaced_stacks "syscall sys_a" t:syscalls:sys_enter_getppid | diff -u - "$T/sc.out"
	exec 7>&-
	wait "$MM_PID"
}

# stackcount's output for 3 calls of manymaps' sys_a: FRAMES, then main's
replaced_stacks() {	# FRAMES PATTERN
	printf 'Tracing 1 functions for "%s"... Hit Ctrl-C to end.\n\n' "$2"
	printf '  %s\n' $1 main '[unknown]' __libc_start_main _start
	printf '    3\n\nDetaching...\n'
}

# System-wide (no -p, no COMMAND): a process that ran before tracing
# began is read at the start; one started after needs nothing read at
# all where the kernel finds each PC's file (bpf_find_vma, 5.17+): the
# probed binary's table and libc's are in before either calls.  Both are
# named and whole, each under its own pid.
@test "cfi: system-wide, a process started before the run and one started after, both named and whole" {
	need_cfi
	local T=$BATS_TEST_TMPDIR
	mkfifo "$T/a.in" "$T/b.in"
	"$W/manymaps" 0 < "$T/a.in" > "$T/a.out" &
	MM_PID=$!
	exec 7> "$T/a.in"
	start_sc -P -U "$W/manymaps:sys_a"
	"$W/manymaps" 0 < "$T/b.in" > "$T/b.out" &
	local late=$!
	exec 8> "$T/b.in"
	echo "call 2" >&7
	wait_for '^called$' "$T/a.out"
	echo "call 3" >&8
	wait_for '^called$' "$T/b.out"
	stop_sc
	exec 7>&- 8>&-
	wait "$MM_PID" "$late"
	local stack='  sys_a
  main
  [unknown]
  __libc_start_main
  _start'
	if "$SC" --kernel-features | grep -q '^bpf_find_vma (5.17) *yes$'; then
		[ ! -s "$T/sc.err" ]
		diff -u - "$T/sc.out" <<OUT
Tracing 1 functions for "$W/manymaps:sys_a"... Hit Ctrl-C to end.

$stack
    manymaps [$MM_PID]
    2

$stack
    manymaps [$late]
    3

Detaching...
OUT
	else
		# 4.18-5.16: the late one's list comes from the sideband, in time or not (counted)
		grep -qxF "    manymaps [$MM_PID]" "$T/sc.out"
		[ "$(grep -B5 -xF "    manymaps [$MM_PID]" "$T/sc.out" | head -n 5)" = "$stack" ]
	fi
}

# Unwind tables kept between runs (src/cfi_disk.c): what a run built, the
# next reads back, and walks with it as gdb unwinds; an entry that others
# may write, a torn one or a symbolic link is not read, nor a directory
# that others may write; a binary changed in place is built again.
@test "cfi: tables kept between runs: read back, stacks as gdb's; others' entries, torn ones, changed binaries not taken" {
	need_cfi
	local D=$BATS_TEST_TMPDIR/cache P=$BATS_TEST_TMPDIR/paths e
	export STACKWALK_CACHE_DIR=$D
	cp "$W/cfipaths_o2" "$P"
	# how many of the start's tables (the binary, libc, ld.so) were read
	# back; then its uprobes gone (its child detaches them), so that gdb
	# finds none on P and P may be rewritten
	kept() {
		"$SC" --debug -U --walker cfi "$P:entered" -- "$P" 2> /dev/null |
			sed -n 's/^tables kept from earlier runs (\(.*\)): \(.*\)$/\1: \2/p' |
			head -n 1
		for e in $(seq 200); do pgrep -x stackcount > /dev/null || break; sleep 0.05; done
	}
	[ "$(kept)" = "$D: 0 of 3" ]
	[ "$(kept)" = "$D: 3 of 3" ]
	same_as_gdb '*entered' "$P:entered" -- "$P"
	same_as_gdb syscall:getppid t:syscalls:sys_enter_getppid -- "$P"
	# each is written anew once refused
	chmod g+w "$D"/*
	[ "$(kept)" = "$D: 0 of 3" ]
	[ "$(kept)" = "$D: 3 of 3" ]
	for e in "$D"/*; do truncate -s -8 "$e"; done
	[ "$(kept)" = "$D: 0 of 3" ]
	for e in "$D"/*; do mv "$e" "$e.real"; ln -s "$e.real" "$e"; done
	[ "$(kept)" = "$D: 0 of 3" ]
	rm -r "$D"
	mkdir -m 0777 "$D"
	[ "$(kept)" = "" ]
	[ -z "$(ls -A "$D")" ]
	rm -r "$D"
	[ "$(kept)" = "$D: 0 of 3" ]
	# the same inode, other bytes: built again, walked as gdb unwinds them
	cat "$W/cfipaths" > "$P"
	[ "$(kept)" = "$D: 2 of 3" ]
	same_as_gdb '*entered' "$P:entered" -- "$P"
}

# python3.11's own USDT probes (a semaphore, set for the run): before the
# cfi walker every frame past the probe was [unknown]; now the
# interpreter's frames, each as gdb unwinds it.
@test "cfi: python3.11's function__entry USDT probe, its stack as gdb unwinds it" {
	need_cfi
	same_as_gdb '-probe-stap python:function__entry' 'u:/usr/bin/python3.11:function__entry' \
		-- /usr/bin/python3.11 -S -c 'def f(): pass
f()'
}

# A syscall made inside the vDSO (its clock_gettime has no CPU-time
# clock): the registers are in vDSO code, whose CFI is read from the
# process's memory (tests/workloads/vdsopaths.c).
@test "cfi: a syscall from inside the vDSO, its stack as gdb unwinds it" {
	need_cfi
	same_as_gdb syscall:clock_gettime t:syscalls:sys_enter_clock_gettime -- "$W/vdsopaths"
}

# The vDSO has no file: its frames are named from the kernel's vDSO as
# this process has it, once the traced process's bytes were seen equal
# (while it lives, or when it was mapped at exec; if it ended before its
# mapping was read, as a short one may, named from ours all the same, a
# line on stderr counting them), and by the name gdb gives
# (clock_gettime, not its alias __vdso_clock_gettime).
@test "cfi: a frame inside the vDSO named as gdb names it" {
	need_cfi
	diff -u - <("$GDB_BT" --names syscall:clock_gettime -- "$W/vdsopaths" 2>/dev/null |
		awk '{ sub(/^[0-9a-f]+:/, "", $1); sub(/^[0-9a-f]+:/, "", $2); print $1, $2 }' | sort | uniq -c) <<'EOF2'
      5 clock_gettime clock_gettime
EOF2
	run --separate-stderr "$SC" -f -U t:syscalls:sys_enter_clock_gettime -- "$W/vdsopaths"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | LC_ALL=C sort) <<'EOF2'
vdsopaths;_start;__libc_start_main;[unknown];main;via_a;clock_gettime;clock_gettime 2
vdsopaths;_start;__libc_start_main;[unknown];main;via_b;clock_gettime;clock_gettime 3
EOF2
}

# Past a signal frame the PC is the interrupted instruction, not a return
# address: a fault on first_fault's first byte is named first_fault, not
# before_fault, whose last byte precedes it (tests/workloads/sigpaths.c),
# in folded, JSON and stacksnoop's output alike.
@test "cfi: a fault on a function's first byte: the interrupted frame named at its own PC" {
	need_cfi
	run --separate-stderr "$SC" -f -U "$W/sigpaths:on_signal" -- "$W/sigpaths" first
	[ "$status" -eq 0 ]
	[ "$output" = "sigpaths;_start;__libc_start_main;[unknown];main;faulter;first_fault;[unknown];on_ill;on_signal 4" ]
	run --separate-stderr "$SC" --json -U "$W/sigpaths:on_signal" -- "$W/sigpaths" first
	# four raw stacks (two calls of on_signal, two of faulter), one by name
	[ "$(jq -c '[.stacks[] | [.frames[].name]] | unique' <<< "$output")" = '[["on_signal","on_ill","[unknown]","first_fault","faulter","main","[unknown]","__libc_start_main","_start"]]' ]
	run --separate-stderr "$SN" -U "$W/sigpaths:on_signal" -- "$W/sigpaths" first
	[ "$status" -eq 0 ]
	[ "$(awk '$2 == "r2:" { print $4 }' <<< "$output" | sort | uniq -c)" = "      4 first_fault" ]
}
