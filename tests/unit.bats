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

@test "the kernel's BTF read in passes: every member's offset equals libbpf's whole parse; cut files refused" {
	[ -r /sys/kernel/btf/vmlinux ] || skip "this kernel has no BTF"
	run "$TOP/build/tests/test_kbtf"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$(echo "$output" | tail -n1)" == *" passed, 0 failed" ]]
}

@test "C++ and Rust (legacy and v0) names demangled, each once" {
	run "$TOP/build/tests/test_demangle"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "unwind rows from CFI equal readelf's and libdw's, every row of every binary" {
	run "$TOP/build/tests/test_cfi"
	echo "$output" | tail -n 30
	[ "$status" -eq 0 ]
	[[ "$(echo "$output" | tail -n1)" == *" passed, 0 failed" ]]
	# each binary compared says so, to both: none was left out
	for f in libc.so.6 libstdc++.so.6 /usr/bin/sort fx_cfi_dbg.stripped \
		test_cfi_vdso workloads/paths workloads/cxx; do
		echo "$output" | grep -q "$f.* match readelf"
		echo "$output" | grep -q "$f.* match libdw"
	done
}

@test "cfi_dump: a binary's rows, and one address's row in words" {
	run "$TOP/build/tests/cfi_dump" "$TOP/build/tests/fx_cfi"
	[ "$status" -eq 0 ]
	echo "${lines[0]}"
	[[ "${lines[0]}" == *"/fx_cfi: "*" FDEs of .eh_frame, 0 skipped, 0 overlapping" ]]
	# as many rows as the first line says, the fixture's one signal frame among them
	[ "${#lines[@]}" -eq $(( $(echo "${lines[0]}" | awk '{ print $2 }') + 1 )) ]
	addr=$(echo "$output" | awk '$2 == "signal:" { print $1 }')
	[ "$(echo "$addr" | wc -w)" -eq 1 ]
	run "$TOP/build/tests/cfi_dump" -e "$TOP/build/tests/fx_cfi" "$addr"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "$addr signal: rip=[rsp+168] rsp=[rsp+160] rbp=[rsp+120]
                 a signal frame (__restore_rt): the kernel saved the interrupted registers in the ucontext at %rsp: %rip at +168, %rsp at +160, %rbp at +120" ]
	run "$TOP/build/tests/cfi_dump" /nonexistent
	[ "$status" -eq 1 ]
	[ "$output" = "cfi_dump: /nonexistent: No such file or directory" ]
}
