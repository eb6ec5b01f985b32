#!/usr/bin/env bats
# Bad input: one line on stderr naming the problem and what to do, a
# non-zero exit, nothing on stdout, and no probe left behind in tracefs.

load helpers

teardown() {
	teardown_processes
	[ -n "${UP_PID:-}" ] && kill "$UP_PID" 2>/dev/null
	return 0
}

# expect_error STATUS 'stderr glob' stackcount-args...
expect_error() {
	local want=$1 msg=$2
	shift 2
	run --separate-stderr "$SC" "$@"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq "$want" ]
	[ -z "$output" ]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	[[ "$stderr" == stackcount:\ $msg ]]
	[ -z "$(leftover_probes)" ]
}

@test "unknown option" {
	expect_error 2 "unknown option '--bogus'; see stackcount --help" --bogus x
	expect_error 2 "unknown option '-x'; see stackcount --help" -x x
}

@test "option without its argument, or a bad number" {
	expect_error 2 "option '-p' needs an argument*" -p
	expect_error 2 "invalid PID 'abc'*" -p abc x
	expect_error 2 "invalid interval '0'; give a whole number of seconds" -i 0 x
	expect_error 2 "unknown walker 'bogus'*" --walker bogus x
}

@test "no pattern, or two" {
	expect_error 2 "no pattern given*"
	expect_error 2 "unexpected argument 'b'*" a b
	expect_error 2 "no command after --*" x --
}

@test "malformed patterns" {
	expect_error 2 "too many ':'-separated parts in \"a:b:c:d\"*" a:b:c:d
	expect_error 2 "unknown probe type 'x' in \"x:lib:f\"*" x:lib:f
	expect_error 1 "incomplete pattern \"t:foo\"; a tracepoint is t:category:event" t:foo
	expect_error 2 "incomplete pattern \"u:c:\"*" u:c:
	expect_error 2 "\"(\" is not a valid regular expression*" -r 't:sched:('
}

@test "nothing matched: function, tracepoint, library, USDT" {
	expect_error 1 "no function matches \"nosuch*\" in $W/paths*" "$W/paths:nosuch*"
	expect_error 1 "no tracepoint matches \"sched:nosuch\"*" t:sched:nosuch
	expect_error 1 "cannot find library or executable \"nosuchlib\"*" nosuchlib:foo
	expect_error 1 "no USDT probe matches \"nosuch\" in $W/usdt; list them with: readelf -n*" "u:$W/usdt:nosuch"
}

@test "missing PID" {
	pid=$(sh -c 'echo $$')	# a process that has just exited
	expect_error 1 "no process with PID $pid; check the PID (ps -e)" -p "$pid" "$W/paths:work"
}

@test "-K with -U" {
	expect_error 2 "-K and -U are mutually exclusive*" -K -U t:sched:sched_switch
}

@test "kernel without kprobes: kernel functions are refused, tracepoints suggested" {
	grep -qx 'kprobes *no' <("$SC" --kernel-features) || skip "this kernel has kprobes"
	expect_error 1 "this kernel has no kprobes (CONFIG_KPROBES is not set), so kernel functions cannot be traced; trace a tracepoint instead, e.g. t:syscalls:sys_enter_*" submit_bio
	expect_error 1 "this kernel has no kprobes*" 'p::vfs_*'
}

@test "a walker the kernel cannot run kernel frames with" {
	grep -q 'ORC' <("$SC" --kernel-features) || skip "this kernel has frame pointers"
	expect_error 1 "the fp walker cannot walk kernel frames: this kernel has no frame pointers (CONFIG_UNWINDER_ORC=y); use -U for user frames, or another walker" --walker fp t:sched:sched_switch
}

# unprobeable waits for its N on a fifo: a uprobe is checked where it is
# put in place, in a process that maps the binary, so attach while it waits.
start_unprobeable() {
	local i
	mkfifo "$BATS_TEST_TMPDIR/up.in"
	"$W/unprobeable" < "$BATS_TEST_TMPDIR/up.in" > /dev/null &
	UP_PID=$!
	exec 8> "$BATS_TEST_TMPDIR/up.in"
	for ((i = 0; i < 600; i++)); do
		[ "$(readlink "/proc/$UP_PID/exe")" = "$W/unprobeable" ] && return 0
		sleep 0.1
	done
	return 1
}

# run it: N rounds, then it exits
finish_unprobeable() {
	echo "$1" >&8
	exec 8>&-
	wait "$UP_PID"
}

@test "one function uprobes refuse: one error line naming it and why" {
	start_unprobeable
	expect_error 1 "cannot attach to probe_locked in $W/unprobeable: uprobes cannot be placed on its first instruction (ENOTSUPP)" \
		-U -p "$UP_PID" "$W/unprobeable:probe_locked"
	finish_unprobeable 1
}

@test "a wildcard skips what uprobes refuse, says so once, and traces the rest" {
	start_unprobeable
	start_sc -U -p "$UP_PID" "$W/unprobeable:probe_*"
	finish_unprobeable 2
	stop_sc
	diff -u - "$BATS_TEST_TMPDIR/sc.out" <<EOF2
Tracing 2 functions for "$W/unprobeable:probe_*"... Hit Ctrl-C to end.

  probe_a
  main
  [unknown]
    2

  probe_b
  main
  [unknown]
    4

Detaching...
EOF2
	diff -u - "$BATS_TEST_TMPDIR/sc.err" <<'EOF2'
stackcount: skipped 1 of 3 functions that cannot be probed: probe_locked (not supported)
EOF2
	[ -z "$(leftover_probes)" ]
}
