#!/usr/bin/env bats
# The fuzz target of the readers of untrusted files (tests/fuzz/fuzz.c),
# built by `make fuzz` or `make test`: a fixed number of inputs from a fixed
# seed, so that every run tries the same files, however busy the machine;
# then each input in tests/fuzz/regress, which a fixed bug once failed on.

load helpers

RUNS=50000

# Where the fuzzer writes each input as files: tmpfs, three times faster
# than a disk for files written and removed every 0.3 ms.
setup() {
	FILES=$(mktemp -d /dev/shm/stackwalk-fuzz-test.XXXXXX)
}

teardown() {
	rm -rf "$FILES"
}

@test "fuzzing the ELF, debug file, MiniDebugInfo, perf map and raw CFI section readers: 50000 inputs, no crash, leak or sanitizer report" {
	local t=$BATS_TEST_TMPDIR
	mkdir "$t/corpus"
	# -timeout: an input that takes 10 s (0.3 ms is usual) is a hang
	TMPDIR=$FILES run timeout 250 "$TOP/build/fuzz/fuzz" -runs=$RUNS -seed=1 \
		-timeout=10 -artifact_prefix="$t/" "$t/corpus" "$TOP/build/fuzz/seeds"
	echo "$output" | grep -v '^#' | tail -n 40
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\n'"Done $RUNS runs in "* ]]
	[ -z "$(grep -E 'ERROR|runtime error|Sanitizer|fuzz: ' <<< "$output")" ]
	# no crash-*, leak-*, timeout-* or oom-* input written, no file left
	[ -z "$(ls "$t" | grep -v '^corpus$')" ]
	[ -z "$(ls -A "$FILES")" ]
}

@test "fuzz inputs that once crashed or tripped a sanitizer (tests/fuzz/regress): each runs clean" {
	local t=$BATS_TEST_TMPDIR n
	n=$(ls "$TOP/tests/fuzz/regress" | wc -l)
	TMPDIR=$FILES run timeout 100 "$TOP/build/fuzz/fuzz" -artifact_prefix="$t/" \
		"$TOP"/tests/fuzz/regress/*
	echo "$output" | tail -n 20
	[ "$status" -eq 0 ]
	[ "$(grep -c '^Executed .* in [0-9]* ms$' <<< "$output")" -eq "$n" ]
	[ -z "$(grep -E 'ERROR|runtime error|Sanitizer|^fuzz: ' <<< "$output")" ]
	[ -z "$(ls "$t")" ]
	[ -z "$(ls -A "$FILES")" ]
}
