#!/usr/bin/env bats
# A traced program computes the same: a uprobe is never placed on an
# instruction the kernel would misrun (VEX/EVEX-encoded: it runs them as
# the jump their opcode byte is in one-byte code) or refuse only once the
# binary is mapped (lock prefix, with -- COMMAND).  Of a wildcard they are
# skipped and named; alone, one is an error naming it, and nothing runs.

load helpers

SN=$TOP/build/stacksnoop

teardown() {
	teardown_processes
	[ -n "${UP_PID:-}" ] && kill "$UP_PID" 2>/dev/null
	return 0
}

# firstinsn's fi_evex is AVX-512F; without it, it would die of SIGILL
need_avx512() {
	grep -qw avx512f /proc/cpuinfo || skip "this CPU has no AVX-512F"
}

# refused TOOL 'stderr' args...: exit 1, that one line, nothing on
# stdout, no probe left, and the command after -- never ran.
refused() {
	local tool=$1 msg=$2
	shift 2
	run --separate-stderr "$TOP/build/$tool" "$@" -- touch "$BATS_TEST_TMPDIR/ran"
	echo "status $status, stdout: $output, stderr: $stderr"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "$tool: $msg" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	[ -z "$(leftover_probes)" ]
}

@test "the instruction check: what the kernel refuses, and every VEX/EVEX instruction" {
	run "$TOP/build/tests/test_insn"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "40 passed, 0 failed" ]
}

@test "a wildcard over EVEX-, VEX- and lock-first functions: the program computes the same, each skipped one named" {
	need_avx512
	run --separate-stderr "$SC" -U "$W/firstinsn:fi_*" -- "$W/firstinsn" 100
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | normalize) <<EOF
Tracing 1 functions for "$W/firstinsn:fi_*"... Hit Ctrl-C to end.
fi_evex: 100 of 100 right
fi_vex: 100 of 100 right
fi_sink: 200 of 200

  fi_plain
  main
  [unknown]
  __libc_start_main
  _start
    100

Detaching...
EOF
	[ "$stderr" = "stackcount: skipped 3 of 4 functions that cannot be probed: fi_evex, fi_vex (first instruction VEX/EVEX-encoded, which kernels misemulate in a uprobe); fi_locked (first instruction lock-prefixed, which uprobes refuse)" ]
	[ -z "$(leftover_probes)" ]
}

@test "one EVEX- or VEX-first function: one error line naming it and why, nothing attached or run" {
	for f in fi_evex fi_vex; do
		refused stackcount "cannot attach to $f in $W/firstinsn: its first instruction is VEX/EVEX-encoded, which kernels misemulate in a uprobe" \
			-U "$W/firstinsn:$f"
		refused stacksnoop "cannot attach to $f in $W/firstinsn: its first instruction is VEX/EVEX-encoded, which kernels misemulate in a uprobe" \
			"$W/firstinsn:$f"
	done
}

@test "a lock-prefixed function with -- COMMAND: refused before it runs, not traced and never fired" {
	refused stackcount "cannot attach to fi_locked in $W/firstinsn: its first instruction is lock-prefixed, which uprobes refuse" \
		-U "$W/firstinsn:fi_locked"
	refused stacksnoop "cannot attach to fi_locked in $W/firstinsn: its first instruction is lock-prefixed, which uprobes refuse" \
		"$W/firstinsn:fi_locked"
}

@test "a lock-prefixed function in a wildcard with -- COMMAND: skipped and named, the rest traced" {
	run --separate-stderr "$SC" -U "$W/unprobeable:probe_*" -- sh -c "echo 2 | $W/unprobeable"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | normalize) <<EOF
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
EOF
	[ "$stderr" = "stackcount: skipped 1 of 3 functions that cannot be probed: probe_locked (first instruction lock-prefixed, which uprobes refuse)" ]
	[ -z "$(leftover_probes)" ]
}

# A wildcard over all of libc: 3,000-odd uprobes, each a perf event of
# its own, would take minutes to detach, holding the kernel's probe lock.
# Where the kernel has uprobe_multi links, auto's walker (cfi: all its
# tail-calling programs loaded for links) attaches them through a few
# links, and detaches them in seconds; elsewhere they go one by one.
@test "c:* with auto: through multi-probe links where the kernel has them; every function named or skipped" {
	run --separate-stderr timeout -s KILL 120 "$SC" --debug -U 'c:*' -- /bin/true
	[ "$status" -eq 0 ]
	[[ "$stderr" =~ ^stackcount:\ skipped\ [0-9]+\ of\ [0-9]+\ functions\ that\ cannot\ be\ probed:\  ]]
	[ "$(wc -l <<< "$stderr")" -eq 1 ]
	grep -q '^walker: cfi ' <<< "$output"
	local att n
	att=$(grep '^attached' <<< "$output")
	n=$(sed -n 's/^Tracing \([0-9]*\) functions for "c:\*".*/\1/p' <<< "$output")
	if grep -q '^uprobe_multi links (6.6) *yes$' <("$SC" --kernel-features); then
		[[ "$att" == "attached $n of "[0-9]*" probes: $n through "[12]" multi-probe links, 0 one by one" ]]
	fi
	[ -z "$(leftover_probes)" ]
}
