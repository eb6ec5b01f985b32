#!/usr/bin/env bats
# Bad input: one line on stderr naming the problem and what to do, a
# non-zero exit, nothing on stdout, and no probe left behind in tracefs.

load helpers

teardown() {
	teardown_processes
	[ -n "${UP_PID:-}" ] && kill "$UP_PID" 2>/dev/null
	return 0
}

# expect_error_of TOOL STATUS 'stderr glob' args...
expect_error_of() {
	local tool=$1 want=$2 msg=$3
	shift 3
	run --separate-stderr "$TOP/build/$tool" "$@"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq "$want" ]
	[ -z "$output" ]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	[[ "$stderr" == $tool:\ $msg ]]
	[ -z "$(leftover_probes)" ]
}

# expect_error STATUS 'stderr glob' stackcount-args...
expect_error() {
	expect_error_of stackcount "$@"
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
	expect_error 2 "incomplete pattern \"t:foo\"; a tracepoint is t:category:event" t:foo
	expect_error 2 "incomplete pattern \"t:a\"; a tracepoint is t:category:event" t:a
	expect_error 2 "incomplete pattern \"u:a\"; a USDT probe is u:lib:probe" u:a
	expect_error 2 "incomplete pattern \"u:c:\"*" u:c:
	expect_error 2 "\"(\" is not a valid regular expression*" -r 't:sched:('
}

@test "nothing matched: function, tracepoint, library, USDT" {
	expect_error 1 "no function matches \"nosuch*\" in $W/paths*" "$W/paths:nosuch*"
	expect_error 1 "no tracepoint matches \"sched:nosuch\"*" t:sched:nosuch
	expect_error 1 "cannot find library or executable \"nosuchlib\"*" nosuchlib:foo
	expect_error 1 "no USDT probe matches \"nosuch\" in $W/usdt; list them with: readelf -n*" "u:$W/usdt:nosuch"
}

@test "a library that is cut short, missing, or a symlink loop" {
	local d=$BATS_TEST_TMPDIR
	head -c 3000 "$W/paths" > "$d/cut"
	expect_error 1 "cannot read $d/cut as ELF: its headers or sections lie past its end (3000 bytes), so it was cut short; give the whole file" "$d/cut:work"
	ln -s loop2 "$d/loop1"
	ln -s loop1 "$d/loop2"
	expect_error 1 "cannot open \"$d/loop1\": a loop of symbolic links; check the path" "$d/loop1:work"
	expect_error 1 "cannot open \"$d/nosuch.so\": no such file; check the path" "$d/nosuch.so:work"
}

@test "missing PID" {
	pid=$(sh -c 'echo $$')	# a process that has just exited
	expect_error 1 "no process with PID $pid; check the PID (ps -e)" -p "$pid" "$W/paths:work"
}

@test "-c: a CPU that is not online" {
	cpus=$(cat /sys/devices/system/cpu/online)
	last=$(sed 's/.*[-,]//' /sys/devices/system/cpu/possible)
	expect_error 2 "-c $((last + 1)): this machine's online CPUs are $cpus; give one of them" -c $((last + 1)) t:sched:sched_switch -- true
	expect_error_of stacksnoop 2 "-c $((last + 1)): this machine's online CPUs are $cpus; give one of them" -c $((last + 1)) t:sched:sched_switch -- true
}

# The fp walker's counts map: 16777216 elements of 512 bytes as the kernel
# charges them (a 64-byte header, the 440-byte key, the 8-byte count).
@test "--stack-storage-size whose maps could take over a quarter of memory" {
	limit=$(($(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) * 1024 / 4))
	need=$((16777216 * 512))
	[ "$need" -gt "$limit" ] || skip "this machine has over 32 GiB"
	expect_error 2 "--stack-storage-size 16777216: the maps for that many stacks can take $need bytes, more than a quarter of this machine's memory ($limit bytes); give a smaller size" --walker fp --stack-storage-size 16777216 -U "$W/paths:work" -- true
}

@test "-K with -U" {
	expect_error 2 "-K and -U are mutually exclusive*" -K -U t:sched:sched_switch
}

@test "options the pattern rules out are usage errors" {
	expect_error 2 "-K keeps kernel stacks only, and the events of user functions and USDT probes have none; drop -K" -K "$W/paths:work"
	expect_error_of stacksnoop 2 "-K keeps kernel stacks only, and the events of user functions and USDT probes have none; drop -K" -K "$W/paths:work"
	expect_error_of stacksnoop 2 "--explain shows the cfi or fp walker's steps; drop --walker getstack" --explain --walker getstack "$W/paths:work"
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

# usdt with no section headers and e_shstrndx = SHN_XINDEX, which then
# points into a section header that is not there
broken_shstrndx() {
	local f=$BATS_TEST_TMPDIR/noshdr
	cp "$W/usdt" "$f"
	# e_shoff (0x28, 8 bytes) = 0; e_shnum (0x3c) = 0; e_shstrndx (0x3e) = 0xffff
	printf '\0\0\0\0\0\0\0\0' | dd of="$f" bs=1 seek=40 conv=notrunc status=none
	printf '\0\0\377\377' | dd of="$f" bs=1 seek=60 conv=notrunc status=none
	echo "$f"
}

@test "an ELF file whose section header string table cannot be found: said, not an empty line" {
	f=$(broken_shstrndx)
	expect_error 1 "cannot read the section names of $f: its section header string table index (SHN_XINDEX) points into a section header that is not there" "u:$f:probe"
	# no section headers, so no symbol table: nothing to match
	expect_error 1 "no function matches \"work\" in $f, which is stripped, and no debug file of it was found; install its debug symbols, or set DEBUGINFOD_URLS to a debuginfod server that has them" "$f:work"
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
	expect_error 1 "cannot attach to probe_locked in $W/unprobeable: its first instruction is lock-prefixed, which uprobes refuse" \
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
  __libc_start_main
  _start
    2

  probe_b
  main
  [unknown]
  __libc_start_main
  _start
    4

Detaching...
EOF2
	diff -u - "$BATS_TEST_TMPDIR/sc.err" <<'EOF2'
stackcount: skipped 1 of 3 functions that cannot be probed: probe_locked (first instruction lock-prefixed, which uprobes refuse)
EOF2
	[ -z "$(leftover_probes)" ]
}

# x86 kernels refuse perf sampling of irq_vectors:irq_work_exit (its
# TRACE_EVENT_PERF_PERM), on every version we support
@test "a tracepoint perf may not sample: named alone, skipped in a wildcard" {
	expect_error 1 "cannot attach to tracepoint irq_vectors:irq_work_exit: the kernel does not let perf sample this tracepoint (EPERM)" \
		t:irq_vectors:irq_work_exit
	run --separate-stderr "$SC" -D 1 't:irq_vectors:irq_work_*'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 'Tracing 1 functions for "t:irq_vectors:irq_work_*"... Hit Ctrl-C to end.' ]
	[ "$(without_host_lines "$stderr")" = "stackcount: skipped 1 of 2 tracepoints that cannot be probed: irq_vectors:irq_work_exit (not permitted)" ]
	[ -z "$(leftover_probes)" ]
}

# paths has 18 functions; a link takes the targets of one program, and
# which of two programs a function's entry needs is calibrated per kernel
# (the cfi walker's programs tail-call one another: it loads them all for
# links, as a tail call must stay within one attach type)
@test "a wildcard attaches through multi-probe links where the kernel has them" {
	local w att
	for w in cfi getstack; do
		run --separate-stderr "$SC" --debug -U -D 1 --walker $w "$W/paths:*"
		[ "$status" -eq 0 ]
		att=$(grep '^attached' <<<"$output")
		if grep -q '^uprobe_multi links (6.6) *yes$' <("$SC" --kernel-features); then
			[[ "$att" == 'attached 18 of 18 probes: 18 through '[12]' multi-probe links, 0 one by one' ]]
		else
			[ "$att" = 'attached 18 of 18 probes: 0 through 0 multi-probe links, 18 one by one' ]
		fi
	done
	# forced legacy mode attaches through tracefs, one by one
	run --separate-stderr "$SC" --debug --legacy=4.4 -U -D 1 "$W/paths:*"
	[ "$(grep '^attached' <<<"$output")" = 'attached 18 of 18 probes: 0 through 0 multi-probe links, 18 one by one' ]
	# and STACKWALK_NO_LINKS=1 attaches each alone, said where the kernel has links
	STACKWALK_NO_LINKS=1 run --separate-stderr "$SC" --debug -U -D 1 "$W/paths:*"
	[ "$(grep '^attached' <<<"$output")" = 'attached 18 of 18 probes: 0 through 0 multi-probe links, 18 one by one' ]
	STACKWALK_NO_LINKS=1 run "$SC" --kernel-features
	grep -qx 'uprobe_multi links (6.6)           no (STACKWALK_NO_LINKS=1)' <<<"$output"
	STACKWALK_NO_LINKS=yes run --separate-stderr "$SC" --kernel-features
	[ "$status" -eq 2 ]
	[ "$stderr" = "stackcount: STACKWALK_NO_LINKS=yes: give 1 to attach every probe alone, as before multi-probe links, or 0" ]
	STACKWALK_NO_VMA_LISTS=on run --separate-stderr "$SC" --kernel-features
	[ "$status" -eq 2 ]
	[ "$stderr" = "stackcount: STACKWALK_NO_VMA_LISTS=on: give 1 to hold COMMAND while its loader runs, as where BPF cannot list a process's VMAs, or 0" ]
	[ -z "$(leftover_probes)" ]
}

@test "inside a PID namespace: one line saying why, not a load error or a silent nothing" {
	local msg="this is a PID namespace of its own, and BPF sees the host's process ids, which do not name processes here; run it in the host's (e.g. nsenter -t 1 -p -m)"
	run --separate-stderr unshare -p -f --mount-proc "$SC" -U "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "stackcount: $msg" ]
	run --separate-stderr unshare -p -f --mount-proc "$TOP/build/stacksnoop" "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "stacksnoop: $msg" ]
	[ -z "$(leftover_probes)" ]
}
