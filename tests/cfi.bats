#!/usr/bin/env bats
# The cfi walker: user stacks unwound from .eh_frame are the stacks gdb's
# `bt` unwinds, frame by frame, in Debian's own binaries (built without
# frame pointers) and where a frame-pointer walk loses a caller even in
# code with frame pointers (tests/workloads/cfipaths.c).  gdb is the judge
# (tests/gdb_bt.sh); every run is without address space randomization, so
# that both see the same addresses.

load helpers

GDB_BT=$TOP/tests/gdb_bt.sh

# Until the cfi walker is in, the tests that need it say so.
need_cfi() {
	local err
	err=$("$SC" --walker cfi --kernel-features 2>&1 > /dev/null) && return 0
	[[ "$err" == *"unknown walker 'cfi'"* ]] && skip "cfi walker not merged yet"
	echo "$err" >&2
	return 1
}

# COUNT ADDRESS... a line, sorted: each distinct stack gdb unwound at
# BREAKSPEC ($1) as tests/gdb_bt.sh gives them (to the outermost frame),
# and how often.
gdb_stacks() {
	local spec=$1
	shift 2
	"$GDB_BT" --all "$spec" -- "$@" > "$BATS_TEST_TMPDIR/gdb.hits" 2> "$BATS_TEST_TMPDIR/gdb.err" ||
		{ cat "$BATS_TEST_TMPDIR/gdb.err" >&2; return 1; }
	sort "$BATS_TEST_TMPDIR/gdb.hits" | uniq -c | awk '{ c = $1; $1 = ""; print c $0 }' | sort
}

# The same from stackcount --json -U --walker cfi PATTERN ($1) -- COMMAND,
# run as gdb runs programs; .total, the events counted, in $BATS_TEST_TMPDIR/total.
cfi_stacks() {
	local pattern=$1
	shift 2
	setarch -R "$SC" -U --json --walker cfi "$pattern" -- "$@" \
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
	diff -u "$BATS_TEST_TMPDIR/gdb.stacks" "$BATS_TEST_TMPDIR/cfi.stacks"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/gdb.hits")" -eq "$(cat "$BATS_TEST_TMPDIR/total")" ]
}

# stackcount -f -U --walker WALKER PATTERN -- cfipaths prints exactly the
# stacks on stdin (in C order)
cfipaths_folded() {
	run --separate-stderr "$SC" -f -U --walker "$1" "$2" -- "$W/cfipaths"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | LC_ALL=C sort)
}

# ---- the workload and the judge, without the cfi walker ----

# gdb --names stacks of cfipaths at $1, names only, counted; main's caller
# named as with libc's debug file or without
gdb_names() {
	"$GDB_BT" --names "$1" -- "$W/cfipaths" 2> "$BATS_TEST_TMPDIR/gdb.err" |
		sed -E 's/(^| )[0-9a-f]+:/\1/g; s/ \?\?@libc\.so\.6$/ __libc_start_call_main/' |
		sort | uniq -c
}

@test "gdb: cfipaths makes exactly the stacks it says, at each of its three probes" {
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
}

# What the cfi walker is for: at the frameless function's probe and in
# syscall(), a frame-pointer walk goes straight to main, merging both
# chains (at entered's first instruction the walkers add the caller).
@test "fp: cfipaths' frameless probe and syscall() lose the caller a CFI walk finds" {
	cfipaths_folded fp "u:$W/cfipaths:frameless" <<<"cfipaths;[unknown];main;frameless 3"
	cfipaths_folded fp t:syscalls:sys_enter_getppid <<<"cfipaths;[unknown];main;syscall 11"
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

# Debian's sort has no frame pointers, nor has libc: every malloc from
# setlocale, stdio and sort itself, to _start.  -o: stdout stays empty.
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
