#!/usr/bin/env bats
# What 4.1-4.5 kernels enforce, checked on the objects themselves.

load helpers

LIMITS=$TOP/build/legacy_limits
FX=$TOP/build/tests/fixtures

@test "the fp walker fits every 4.x limit" {
	run "$LIMITS" "$TOP/build/bpf/fp.bpf.o"
	[ "$status" -eq 0 ]
	# every program of the walker was looked at
	for p in fp_kprobe fp_kprobe_k fp_kprobe_k_v41 fp_tp fp_tp_k fp_user_kp \
		 fp_user_tp fp_uprobe fp_uprobe_entry; do
		echo "$output" | grep -q ": $p: .* insns, "
	done
}

# rule broken -> what legacy_limits must say
@test "each 4.x limit, broken on purpose, fails the check" {
	while read -r fx msg; do
		run "$LIMITS" "$FX/$fx.bpf.o"
		echo "$fx: $output"
		[ "$status" -eq 1 ]
		echo "$output" | grep -q -- "$msg"
		echo "$output" | grep -qx ".*: 1 violation(s) of 4.x limits"
	done <<'EOF2'
loop a loop: 4.x verifiers refuse back-edges
stack 600 bytes of stack, 4.x allows 512
key 600-byte key, 4.x allows 512
global global data (5.2+)
percpu map type 6 is newer than 4.4
helper helper 67 is not in 4.4
v41 helper 14 is not in 4.1
call call to a BPF function (4.16+)
walk verifier may walk [0-9]* instructions, 4.x allows 32768
long [0-9]* instructions, 4.x allows 4096
core CO-RE relocations
jlt jump opcode 0xad is 4.14+
EOF2
}

# make -o keeps the planted object: the check itself must stop the build
@test "the build refuses a walker over the limits" {
	b=$BATS_TEST_TMPDIR/b
	mkdir -p "$b/bpf"
	cp "$FX/loop.bpf.o" "$b/bpf/fp.bpf.o"
	run make -s -C "$TOP" --no-print-directory BUILD="$b" -o "$b/bpf/fp.bpf.o" "$b/bpf/fp.checked"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"a loop: 4.x verifiers refuse back-edges"* ]]
	[ ! -e "$b/bpf/fp.checked" ]
	cp "$TOP/build/bpf/fp.bpf.o" "$b/bpf/fp.bpf.o"
	run make -s -C "$TOP" --no-print-directory BUILD="$b" -o "$b/bpf/fp.bpf.o" "$b/bpf/fp.checked"
	[ "$status" -eq 0 ]
}
