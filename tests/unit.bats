#!/usr/bin/env bats
# The symbol layer on its own (tests/unit/test_syms.c): ELF, kallsyms,
# process maps, the perf sideband, library lookup, USDT notes.

load helpers

@test "symbol layer: every unit check passes" {
	run "$TOP/build/tests/test_syms"
	echo "$output" | tail -n 5
	[ "$status" -eq 0 ]
	[[ "$(echo "$output" | tail -n1)" == *" passed, 0 failed" ]]
}

@test "kernel version codes through Ubuntu's and Debian's labels" {
	run "$TOP/build/tests/test_compat"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "C++ and Rust (legacy and v0) names demangled, each once" {
	run "$TOP/build/tests/test_demangle"
	echo "$output"
	[ "$status" -eq 0 ]
}
