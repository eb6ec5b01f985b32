#!/usr/bin/env bats
# -- COMMAND and the processes it starts, whatever they do and whatever
# happens to the tool: on 4.18-5.16 the cfi walker holds the command at
# each exec while its loader maps libraries (ptrace), and none of that
# may leave it stopped, touch a process it starts, or keep the tool from
# ending.  5.17+ holds nothing, nor does a kernel whose VMAs BPF can read
# (4.18-5.16's lists, 6.1+'s maple tree): these tests walk as where it
# cannot (STACKWALK_NO_FIND_VMA=1 STACKWALK_NO_VMA_LISTS=1), but the
# last two, which are that nothing holds the command there.

load helpers

export STACKWALK_NO_FIND_VMA=1 STACKWALK_NO_VMA_LISTS=1

GETPPID=t:syscalls:sys_enter_getppid

teardown() {
	local p
	exec 7>&- 8>&-
	# a test that failed with the tool stopped: it must hear the SIGINT
	[ -n "${SC_PID:-}" ] && kill -CONT "$SC_PID" 2>/dev/null
	# what an unfixed tool leaves behind: stopped, or spinning untraced
	for p in ${LEFT:-}; do
		kill -KILL "$p" 2>/dev/null || true
	done
	teardown_processes
}

# Whether "$@" comes true within $1 seconds (tried every 0.05 s).
within() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# Process $1's state letter (R, S, t, T, Z...), none once it is gone.
state_of() {
	sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null || true
}

has_child() {
	[ -n "$(ps -o pid= --ppid "$1")" ]
}

# The pid of $1's child, once there is one (within 30 s).
child_of() {
	within 30 has_child "$1" || return 1
	ps -o pid= --ppid "$1" | tr -d ' '
}

# Whether process $1 waits to read a pipe (pipe_read, or anon_pipe_read
# since 6.15).
reading() {
	case $(cat "/proc/$1/wchan" 2>/dev/null) in
	pipe_read | anon_pipe_read) return 0 ;;
	esac
	return 1
}

is_state() {
	[ "$(state_of "$1")" = "$2" ]
}

spinning() {
	[ "$(readlink "/proc/$1/exe")" = "$W/spin" ] && is_state "$1" R
}

gone_or_zombie() {
	case $(state_of "$1") in
	'' | Z) return 0 ;;
	esac
	return 1
}

# Whether process $1 ends (gone, or a zombie for its parent) within 30 s.
ends() {
	within 30 gone_or_zombie "$1" && return 0
	echo "process $1 did not end: state $(state_of "$1")" >&2
	return 1
}

# Whether our child $1 (the tool) ends within 30 s: its exit status into status.
tool_ends() {
	ends "$1" || return 1
	status=0
	wait "$1" || status=$?
}

# The tool killed (SIGKILL) before it let COMMAND go: COMMAND never runs,
# and its process ends.  Unfixed, the child went on to PTRACE_TRACEME,
# which made init its tracer, and stopped at its exec for ever (state t).
@test "SIGKILL while COMMAND waits to start: it never starts, its process ends, never left stopped" {
	local d=$BATS_TEST_TMPDIR cmd
	# stdout a full pipe: the tool waits to write "Tracing...", which
	# comes before COMMAND is let go, however fast it starts
	mkfifo "$d/out"
	exec 8<> "$d/out"
	head -c 65536 /dev/zero >&8
	"$SC" -U --walker cfi "$GETPPID" -- sh -c "echo ran > $d/ran" \
		> "$d/out" 2> "$d/sc.err" 8>&- &
	SC_PID=$!
	cmd=$(child_of "$SC_PID")
	LEFT="${LEFT:-} $cmd"
	# the child waits for the byte that lets it go
	within 30 reading "$cmd"
	# not yet exec'd: still the tool's image
	[ "$(readlink "/proc/$cmd/exe")" = "$SC" ]
	kill -KILL "$SC_PID"
	wait "$SC_PID" || true
	SC_PID=
	ends "$cmd"
	[ ! -e "$d/ran" ]
}

# COMMAND (sh) execs while the tool is stopped: it is held at that exec,
# its tracer stopped.  Then the tool is killed: it runs on, untraced, to
# its end.  Unfixed, a first stop it was held at became a SIGSTOP it then
# took for itself: stopped for ever (state T).
@test "SIGKILL while COMMAND is held at an exec: it runs on untraced to the end" {
	local d=$BATS_TEST_TMPDIR cmd
	mkfifo "$d/in"
	"$SC" -U --walker cfi "$GETPPID" -- \
		sh -c "read x < $d/in; exec sh -c 'echo done > $d/done'" \
		> "$d/sc.out" 2> "$d/sc.err" &
	SC_PID=$!
	# sh has opened the fifo: past its loader, running
	exec 7> "$d/in"
	cmd=$(child_of "$SC_PID")
	LEFT="${LEFT:-} $cmd"
	kill -STOP "$SC_PID"
	exec 7>&-
	# at its exec, stopped for a tracer that is stopped itself
	within 30 is_state "$cmd" t
	kill -KILL "$SC_PID"
	wait "$SC_PID" || true
	SC_PID=
	ends "$cmd"
	[ "$(cat "$d/done")" = done ]
}

# Only the command is traced, never what it starts: a child's tracer is
# its own (strace here), and one that traces nothing has none; the
# command itself is the tool's, held at its execs.  The tables of what
# strace runs come with its mappings, not before: each event of cfipaths
# is walked whole to main, or counted as walked without them.
@test "-- COMMAND on 4.18-5.16: only the command is traced; strace inside it works" {
	local d=$BATS_TEST_TMPDIR n
	run --separate-stderr "$SC" -f -U --walker cfi "$GETPPID" -- sh -c \
		"grep TracerPid /proc/self/status > $d/kid; exec strace -f -qq -e trace=getppid -o $d/strace.out $W/cfipaths"
	[ "$status" -eq 0 ]
	[ "$(cat "$d/kid")" = "TracerPid:	0" ]
	[ "$(grep -c 'getppid()' "$d/strace.out")" -eq 11 ]
	n=$(sed -n 's/^stackcount: the user frames of \([0-9]*\) events* were found by frame pointers.*/\1/p' <<< "$stderr")
	[ "$stderr" = "" ] || [ -n "$n" ]
	diff -u - <(echo "$output" | grep '^cfipaths;.*;main;sys_[ab];syscall ' |
		awk '{ s += $NF } END { print s + 0 }') <<< "$((11 - ${n:-0}))"
}

# spin: no syscall once ld.so hands over, so its loader never seems done.
# -D 1 ends the run all the same (within 30 s however loaded the machine),
# and ends COMMAND as it always does: SIGTERM, its status ours.  Unfixed,
# the tool waited in the loader's ptrace step until spin's CPU limit.
@test "-- COMMAND spinning without a syscall right after its loader: -D 1 ends the run, and COMMAND" {
	local d=$BATS_TEST_TMPDIR cmd
	(ulimit -t 60 && exec "$SC" -D 1 -U --walker cfi "$W/paths:work" -- "$W/spin") \
		> "$d/sc.out" 2> "$d/sc.err" &
	SC_PID=$!
	cmd=$(child_of "$SC_PID")
	LEFT="${LEFT:-} $cmd"
	tool_ends "$SC_PID"
	SC_PID=
	[ "$status" -eq 143 ]
	[ ! -e "/proc/$cmd" ]
	diff -u - "$d/sc.out" <<EOF
Tracing 1 functions for "$W/paths:work"... Hit Ctrl-C to end.

Detaching...
EOF
	[ ! -s "$d/sc.err" ]
	[ -z "$(leftover_probes)" ]
}

# The same, spin exec'd by sh (held at that exec), without -D: SIGINT or
# SIGTERM end the run at once, and COMMAND with SIGTERM.
@test "-- COMMAND exec'ing into a spin without a syscall: SIGINT and SIGTERM end the run, and COMMAND" {
	local d=$BATS_TEST_TMPDIR sig cmd
	for sig in INT TERM; do
		(ulimit -t 60 && exec "$SC" -U --walker cfi "$W/paths:work" -- \
			sh -c 'exec "$0"' "$W/spin") > "$d/sc.out" 2> "$d/sc.err" &
		SC_PID=$!
		cmd=$(child_of "$SC_PID")
		LEFT="${LEFT:-} $cmd"
		wait_for '^Tracing' "$d/sc.out"
		# sh has exec'd spin, which spins (its loader done or not)
		within 30 spinning "$cmd"
		kill -"$sig" "$SC_PID"
		tool_ends "$SC_PID"
		SC_PID=
		[ "$status" -eq 143 ]
		[ ! -e "/proc/$cmd" ]
		[ "$(tail -n1 "$d/sc.out")" = "Detaching..." ]
		[ ! -s "$d/sc.err" ]
	done
	[ -z "$(leftover_probes)" ]
}

# A child of COMMAND dies in its loader (a library gone: 127); its pid is
# then given to a new child (clone3's set_tid), which must run as any
# other, never stopped.  Unfixed, the dead child's pid stayed in the list
# of processes seen, and the new one's first ptrace stop, taken for a
# signal, was passed on: a SIGSTOP its parent saw.
@test "-- COMMAND: a pid reused after a process died in its loader is never stopped" {
	local d=$BATS_TEST_TMPDIR
	# victim without the libvictim.so it finds beside it
	cp "$W/victim" "$d/"
	run --separate-stderr timeout -s KILL 60 "$SC" -U --walker cfi "$GETPPID" -- \
		"$W/reuse" "$d/victim"
	[ "$status" -ne 77 ] || skip "clone3 cannot set a pid here: $stderr"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output") <<EOF
Tracing 1 functions for "$GETPPID"... Hit Ctrl-C to end.
loader: exit 127
same pid: ran
same pid: exit 0

Detaching...
EOF
	[ "$stderr" = "$d/victim: error while loading shared libraries: libvictim.so: cannot open shared object file: No such file or directory" ]
}

# 5.17+: the command's tables are in before it starts and each frame's is
# found from its VMA, so nothing holds it: a tracer inside it works, and
# a SIGSTOP stops it as it would untraced.  The environment given: how
# the walk finds VMAs.
untraced() {
	local d=$BATS_TEST_TMPDIR
	env "$@" "$SC" -f -U --walker cfi "$GETPPID" -- \
		strace -f -qq -e trace=getppid -o "$d/strace.out" "$W/cfipaths" \
		> "$d/out" 2> "$d/err"
	[ ! -s "$d/err" ]
	diff -u - <(grep '^cfipaths;' "$d/out" | LC_ALL=C sort) <<'OUT'
cfipaths;_start;__libc_start_main;[unknown];main;sys_a;syscall 5
cfipaths;_start;__libc_start_main;[unknown];main;sys_b;syscall 6
OUT
	[ "$(grep -c 'getppid()' "$d/strace.out")" -eq 11 ]
	# a command that stops itself is stopped (T), not held by a tracer (t)
	env "$@" "$SC" -U --walker cfi "$GETPPID" -- \
		sh -c "echo stopping > $d/sh.out; kill -STOP \$\$; echo resumed >> $d/sh.out" \
		> "$d/sc.out" 2> "$d/sc.err" &
	SC_PID=$!
	local sh=$(child_of "$SC_PID")
	within 30 is_state "$sh" T
	[ "$(cat "$d/sh.out")" = stopping ]
	kill -CONT "$sh"
	wait_for '^resumed$' "$d/sh.out"
	# the command's end is the tool's
	wait "$SC_PID"
	SC_PID=
	[ ! -s "$d/sc.err" ]
}

@test "-- COMMAND on 5.17+: strace inside it works, SIGSTOP stops it, every stack exact" {
	STACKWALK_NO_FIND_VMA=0 "$SC" --kernel-features | grep -q '^bpf_find_vma (5.17) *yes$' ||
		skip "this kernel has no bpf_find_vma (5.17): the command is held there"
	untraced STACKWALK_NO_FIND_VMA=0 STACKWALK_NO_VMA_LISTS=0
}

# Without bpf_find_vma on 6.1+ (a kernel without BTF; here, the variable)
# each PC's VMA is read from the process's maple tree, at offsets measured
# at start: nothing holds the command either.  The command stops the tool
# while cfipaths_o2 runs, so that no list of it is written: each frame's
# table is found from its VMA alone (leaf_a and leaf_b keep no frame, a
# frame-pointer step loses them).
@test "-- COMMAND on 6.1+ without bpf_find_vma: VMAs read from the maple tree, nothing held, every stack exact" {
	local r=$(uname -r)
	[ "${r%%.*}" -gt 6 ] || { [ "${r%%.*}" -eq 6 ] && [ "$(cut -d. -f2 <<< "$r")" -ge 1 ]; } ||
		skip "before 6.1 a task's VMAs are a list: the VM tests build it in BPF"
	local d=$BATS_TEST_TMPDIR
	STACKWALK_NO_VMA_LISTS=0 "$SC" --debug -f -U --walker cfi "u:$W/cfipaths_o2:frameless" -- \
		sh -c "kill -STOP \$PPID; $W/cfipaths_o2; kill -CONT \$PPID" > "$d/o2" 2> "$d/o2.err"
	[ ! -s "$d/o2.err" ]
	grep -q "^process mappings: each PC's VMA read from the process's maple tree (offsets measured on this process: " "$d/o2"
	diff -u - <(grep '^cfipaths_o2;' "$d/o2" | LC_ALL=C sort) <<'OUT'
cfipaths_o2;_start;__libc_start_main;[unknown];main;leaf_a;frameless 1
cfipaths_o2;_start;__libc_start_main;[unknown];main;leaf_b;frameless 2
OUT
	untraced STACKWALK_NO_FIND_VMA=1 STACKWALK_NO_VMA_LISTS=0
}
