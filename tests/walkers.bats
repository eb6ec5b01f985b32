#!/usr/bin/env bats
# Every walker counts exactly the stacks the workloads make, and all agree.

load helpers

teardown() {
	teardown_processes
}

WALKERS="getstack stackmap fp cfi"

# The stacks of walker $1 from the frame-pointer walkers' (stdin, text or
# folded): the cfi walker's unwind tables go on past main's caller
# (__libc_start_call_main, [unknown] without libc's debug file) to
# __libc_start_main and _start, where the frame-pointer chain ends.
past_main() {
	if [ "$1" != cfi ]; then
		cat
		return
	fi
	awk '{ sub(/;\[unknown\];main;/, ";_start;__libc_start_main;[unknown];main;"); print }
	     prev == "  main" && $0 == "  [unknown]" { print "  __libc_start_main"; print "  _start" }
	     { prev = $0 }'
}

# stackcount -U ARGS... with every walker: each exits 0 and prints exactly
# what function $1 does.
every_walker() {
	local expected=$1 w
	shift
	for w in $WALKERS; do
		run --separate-stderr "$SC" -U --walker $w "$@"
		[ "$status" -eq 0 ]
		diff -u <("$expected" | past_main $w) <(echo "$output" | normalize)
	done
}

expected_work() {
	cat <<EOF
Tracing 1 functions for "$W/paths:work"... Hit Ctrl-C to end.

  work
  via_a
  main
  [unknown]
    2

  work
  via_b
  main
  [unknown]
    4

  work
  via_a
  deep3
  deep2
  main
  [unknown]
    6

Detaching...
EOF
}

# via_a and via_b differ only in work's caller, which a walker that starts
# at the frame pointer drops at a probe on work's first instruction.
@test "getstack: exact stacks and counts, caller at function entry kept" {
	run --separate-stderr "$SC" -U --walker getstack "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 0 ]
	diff -u <(expected_work) <(echo "$output" | normalize)
}

@test "stackmap: exact stacks and counts, caller at function entry kept" {
	run --separate-stderr "$SC" -U --walker stackmap "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 0 ]
	diff -u <(expected_work) <(echo "$output" | normalize)
}

@test "fp: exact stacks and counts, caller at function entry kept" {
	run --separate-stderr "$SC" -U --walker fp "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 0 ]
	diff -u <(expected_work) <(echo "$output" | normalize)
}

expected_guarded() {
	cat <<EOF
Tracing 1 functions for "$W/paths:guarded"... Hit Ctrl-C to end.

  guarded
  via_c
  main
  [unknown]
    2

  guarded
  via_d
  main
  [unknown]
    4

Detaching...
EOF
}

# guarded() starts with endbr64, as all CET-built code (Debian's libstdc++,
# say): a kernel adds the caller there only when built with IBT, whatever
# it does at push %rbp, so each shape is calibrated on its own.
@test "a function that starts with endbr64: exact stacks, caller kept, every walker" {
	every_walker expected_guarded "$W/paths:guarded" -- "$W/paths" 2
}

expected_new() {
	cat <<EOF
Tracing 1 functions for "stdc++:_Znwm"... Hit Ctrl-C to end.

  operator new(unsigned long)
  shapes::fresh(int)
  main
  [unknown]
    1

  operator new(unsigned long)
  shapes::fresh(double)
  main
  [unknown]
    2

Detaching...
EOF
}

# The same in a shared library: Debian builds libstdc++ for CET, so its
# operator new starts with endbr64 (checked first: else this proves less).
@test "operator new in libstdc++, which starts with endbr64: caller kept, every walker" {
	lib=$(ldd "$W/cxx" | awk '$1 ~ /^libstdc\+\+/ { print $3 }')
	at=$(nm -D --defined-only "$lib" | awk '$3 ~ /^_Znwm@/ { print $1 }')
	objdump -d --start-address=0x$at --stop-address=$((0x$at + 4)) "$lib" |
		grep -q $'\tendbr64'
	every_walker expected_new "stdc++:_Znwm" -- "$W/cxx"
}

# work starts with push %rbp, guarded with endbr64: in one run, each target
# gets the program its own shape's calibration calls for.
@test "push %rbp and endbr64 targets in one run: each keeps its caller, every walker" {
	for w in $WALKERS; do
		run --separate-stderr "$SC" -f -r -U --walker $w "$W/paths:^(work|guarded)\$" -- "$W/paths" 2
		[ "$status" -eq 0 ]
		diff -u - <(echo "$output" | LC_ALL=C sort) < <(past_main $w <<'EOF2'
paths;[unknown];main;deep2;deep3;via_a;work 6
paths;[unknown];main;via_a;work 2
paths;[unknown];main;via_b;work 4
paths;[unknown];main;via_c;guarded 2
paths;[unknown];main;via_d;guarded 4
EOF2
)
	done
}

# Someone else's system-wide uprobe on work plants its int3 in every
# mapping of the file that may execute, a reader's included: the bytes we
# read to decide how the kernel unwinds at work's entry must not be it.
@test "another tracer's uprobe on the same function changes nothing" {
	start_sc -U "$W/paths:work"
	for w in $WALKERS; do
		run --separate-stderr "$SC" -U --walker $w "$W/paths:work" -- "$W/paths" 2
		[ "$status" -eq 0 ]
		diff -u <(expected_work | past_main $w) <(echo "$output" | normalize)
	done
	stop_sc
}

# leaf() does not start with push %rbp: kernels that add the caller for
# such functions themselves do not here, so each walker must.
@test "all walkers agree at a function without its own frame" {
	for w in $WALKERS; do
		"$SC" -U --walker $w "$W/paths:leaf" -- "$W/paths" 3 | normalize > "$BATS_TEST_TMPDIR/$w"
	done
	grep -qx '  leaf' "$BATS_TEST_TMPDIR/fp"
	[ "$(grep -c '^  via_b$' "$BATS_TEST_TMPDIR/fp")" -eq 1 ]
	diff -u "$BATS_TEST_TMPDIR/getstack" "$BATS_TEST_TMPDIR/stackmap"
	diff -u "$BATS_TEST_TMPDIR/getstack" "$BATS_TEST_TMPDIR/fp"
	diff -u <(past_main cfi < "$BATS_TEST_TMPDIR/getstack") "$BATS_TEST_TMPDIR/cfi"
}

# manypaths: 4096 paths, path p taken p%3+1 times, its bits spelled by
# which of lvl's two call sites each frame returns to.
check_manypaths() {
	awk '
	/^  target\+/ { n = 0; next }
	/^  lvl\+/ { f[n++] = $1; next }
	/^    [0-9]+$/ && n {
		bits = ""
		for (i = n - 1; i >= 1; i--) bits = bits f[i] " "
		cnt[++stacks] = $1; path[stacks] = bits
		for (i = 1; i < n; i++) site[f[i]] = 1
		n = 0
	}
	END {
		# the two sites other than the call of target (frame 0 of lvl)
		k = 0
		for (s in site) if (s != f0) sites[k++] = s
		ok = 0
		for (one = 0; one < 2 && !ok; one++) {
			good = 1; delete seen
			for (j = 1; j <= stacks; j++) {
				m = split(path[j], fr, " "); p = 0
				for (i = 1; i <= m; i++) p = p * 2 + (fr[i] == sites[one])
				if (p in seen || cnt[j] != p % 3 + 1) { good = 0; break }
				seen[p] = 1
			}
			ok = good
		}
		printf "%d stacks, %s\n", stacks, ok ? "every count exact" : "WRONG"
		exit !(ok && stacks == 4096)
	}' f0="$1"
}

# manypaths 12 with stackcount's options $@: every path, its exact count
manypaths_exact() {
	run --separate-stderr "$SC" -U -s "$@" "$W/manypaths:target" -- "$W/manypaths" 12
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	site0=$(echo "$output" | awk '/^  target\+/ { getline; print $1; exit }')
	echo "$output" | check_manypaths "$site0"
}

@test "auto: a few thousand distinct stacks, each with its exact count" {
	manypaths_exact
}

lost_of() {
	sed -nE 's/^([0-9]+) stacks lost: .*/\1/p'
}

counted_of() {
	awk '/^    [0-9]+$/ { s += $1 } END { print s + 0 }'
}

@test "stackmap with a small map: every event is counted or reported lost" {
	run --separate-stderr "$SC" -U -s --walker stackmap --stack-storage-size 1024 \
		"$W/manypaths:target" -- "$W/manypaths" 12
	[ "$status" -eq 0 ]
	lost=$(echo "$stderr" | lost_of)
	counted=$(echo "$output" | counted_of)
	echo "counted $counted lost $lost: $stderr"
	[ "$lost" -gt 0 ]
	[ $((counted + lost)) -eq 8191 ]
	[[ "$stderr" == *"stack id collisions"* ]]
}

# the self-probe that calibrates the kernel's unwinder must not keep a slot
@test "stackmap with room for one stack: it holds the workload's" {
	run --separate-stderr "$SC" -f -U --walker stackmap --stack-storage-size 1 \
		"$W/snoop:target" -- sh -c "exec $W/snoop > /dev/null"
	[ "$status" -eq 0 ]
	[ "$output" = "snoop;[unknown];main;first;target 1" ]
	[[ "$stderr" == "2 stacks lost: 2 to "* ]]
}

@test "fp with a small counts map: the overflow is reported, not dropped" {
	run --separate-stderr "$SC" -U -s --walker fp --stack-storage-size 1024 \
		"$W/manypaths:target" -- "$W/manypaths" 12
	[ "$status" -eq 0 ]
	lost=$(echo "$stderr" | lost_of)
	counted=$(echo "$output" | counted_of)
	[ $((counted + lost)) -eq 8191 ]
	[ "$(echo "$output" | grep -c '^    [0-9]')" -eq 1024 ]
	[[ "$stderr" == *"to a full counts map"* ]]
}

expected_usdt() {
	cat <<EOF
Tracing 2 functions for "u:$W/usdt:t*"... Hit Ctrl-C to end.

  tick_site
  main
  [unknown]
    3

  tock_site
  main
  [unknown]
    6

Detaching...
EOF
}

# tock fires only while its semaphore is set: its count proves we set it.
@test "USDT with and without a semaphore, exact counts, every walker" {
	every_walker expected_usdt "u:$W/usdt:t*" -- "$W/usdt" 3
}

@test "a USDT probe by exact name" {
	run --separate-stderr "$SC" -U "u:$W/usdt:tock" -- "$W/usdt" 4
	[ "$status" -eq 0 ]
	[[ "$output" == *"Tracing 1 functions"* ]]
	[ "$(echo "$output" | counted_of)" -eq 8 ]
}

@test "no probe is left in tracefs after any of these runs" {
	[ -z "$(leftover_probes)" ]
}

@test "USDT semaphore in a running process (-p), set by the kernel" {
	start_phases
	start_sc -U -p "$PHASES_PID" "u:$W/phases:step"
	phase 4
	stop_sc
	stop_phases
	diff -u - <(sed -n '3,$p' "$BATS_TEST_TMPDIR/sc.out") <<'EOF2'
  work
  via_a
  main
  [unknown]
  __libc_start_main
  _start
    4

Detaching...
EOF2
}

# ---- getstack with small hash keys, as on 4.18-5.10 (forced here):
# each side of a stack interned as chunks of 63 frames ----

@test "getstack, small keys: exact stacks and counts, caller at function entry kept" {
	STACKWALK_SMALL_KEYS=1 run --separate-stderr "$SC" -U --walker getstack "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	diff -u <(expected_work) <(echo "$output" | normalize)
}

@test "getstack, small keys: a few thousand distinct stacks, each with its exact count" {
	STACKWALK_SMALL_KEYS=1 manypaths_exact --walker getstack
}

# deep N: target, down(N % 3) ... down1, down0, main, [unknown]; the
# kernel's unwinder gives at most 127 frames (this kernel adds the caller
# at a function's entry itself), and a side that fills them ends in
# [truncated]: it may go on (deep 123's does, into libc).
expected_deep() {
	local d
	{
		echo "  target"
		for ((d = $1; d >= 0; d--)); do
			echo "  down$((d % 3))"
		done
		printf '  main\n  [unknown]\n'
	} | head -n 127
	[ $(($1 + 4)) -lt 127 ] || echo "  [truncated]"
	printf '    2\n'
}

@test "getstack and stackmap, big and small keys: deep stacks frame by frame, a full side marked cut" {
	# 63, 64, 126 frames; 127 (full); 104; 203 cut to 127
	for n in 59 60 122 123 100 200; do
		for how in getstack:0 getstack:1 stackmap:0; do
			STACKWALK_SMALL_KEYS=${how#*:} run --separate-stderr "$SC" -U \
				--walker "${how%:*}" "$W/deep:target" -- "$W/deep" "$n"
			[ "$status" -eq 0 ]
			if [ $((n + 4)) -lt 127 ]; then
				[ -z "$stderr" ]
			else
				[ "$stderr" = "2 events had stacks that filled the 127 frames the kernel's unwinder gives the ${how%:*} walker: shown ending in [truncated], as they may go deeper" ]
			fi
			diff -u <(expected_deep "$n") <(echo "$output" | sed '1,2d' | head -n -2 | normalize)
		done
	done
	# every output ends the full side so: folded, JSON, stacksnoop
	run --separate-stderr "$SC" -f -U --walker getstack "$W/deep:target" -- "$W/deep" 200
	[[ "$output" == "deep;[truncated];down0;down1;down2;"* ]]
	run --separate-stderr "$SC" --json -U --walker getstack "$W/deep:target" -- "$W/deep" 200
	[ "$(jq -c '[.stacks[0].frames[-1].name, (.stacks[0].frames | length), .lost.truncated_stacks]' <<< "$output")" = '["[truncated]",128,2]' ]
	run --separate-stderr "$TOP/build/stacksnoop" -U --walker getstack "$W/deep:target" -- "$W/deep" 200
	[ "$(grep -c ' \[truncated\]$' <<< "$output")" -eq 2 ]
}

@test "getstack, small keys: kernel and user frames of a tracepoint as with large keys" {
	for small in 0 1; do
		STACKWALK_SMALL_KEYS=$small "$SC" -d --walker getstack t:syscalls:sys_enter_getppid \
			-- "$W/paths" 3 | normalize > "$BATS_TEST_TMPDIR/$small"
	done
	grep -qx '  do_syscall_64' "$BATS_TEST_TMPDIR/1"
	diff -u "$BATS_TEST_TMPDIR/0" "$BATS_TEST_TMPDIR/1"
}

# one stack in two processes: shared chunks, a count each
@test "getstack, small keys: -P keeps each process's count" {
	STACKWALK_SMALL_KEYS=1 run --separate-stderr "$SC" -P -U --walker getstack \
		"$W/paths:via_b" -- sh -c "$W/paths 2; $W/paths 3"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | normalize) <<EOF
Tracing 1 functions for "$W/paths:via_b"... Hit Ctrl-C to end.

  via_b
  main
  [unknown]
    paths [PID]
    4

  via_b
  main
  [unknown]
    paths [PID]
    6

Detaching...
EOF
}

# check_interval_counts's output, times and blank lines aside: each
# interval's one stack, the user frames $@, and its count
interval_stacks_are() {
	diff -u <(
		echo "Tracing 1 functions for \"$W/phases:work\"... Hit Ctrl-C to end."
		for n in 5 7; do
			printf '  %s\n' "$@"
			printf '    %s\n' "$n"
		done
		echo "Detaching..."
	) <(grep -vE '^$|^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]$' "$BATS_TEST_TMPDIR/sc.out")
}

@test "getstack, small keys: -i prints each interval's own counts, chunks kept" {
	STACKWALK_SMALL_KEYS=1 check_interval_counts --walker getstack
	interval_stacks_are work via_a main '[unknown]'
}

@test "cfi, small keys: -i prints each interval's own counts, chunks kept" {
	STACKWALK_SMALL_KEYS=1 check_interval_counts --walker cfi
	interval_stacks_are work via_a main '[unknown]' __libc_start_main _start
}

# zeroret: target <- cut <- main, then a 0 return address and a garbage
# frame behind it; a 0 return address ends a stack, as in bcc, bpftrace, gdb
@test "a 0 return address ends the stack: no [unknown] root, nothing after it, every walker" {
	for w in $WALKERS; do
		run --separate-stderr "$SC" -f -U --walker "$w" "$W/zeroret:target" -- "$W/zeroret"
		echo "$w: $output"
		[ "$status" -eq 0 ]
		[ "$output" = "zeroret;main;cut;target 1" ]
		run --separate-stderr "$TOP/build/stacksnoop" -U --walker "$w" "$W/zeroret:target" -- "$W/zeroret"
		echo "$w: $output"
		[ "$status" -eq 0 ]
		diff -u <(printf 'ip: target\nr0: cut\nr1: main\n') \
			<(echo "$output" | sed -nE 's/^[0-9.]+ +(ip|r[0-9]+): [0-9a-f]+ /\1: /p')
	done
}

# deep 70 200: 10 getppid() calls at depth 70 from one call site, and
# between them one getpid() 127 user frames deep whose tracepoint sits one
# kernel frame deeper: its frames reach past where the next shallower
# event's helper call zeroes the per-CPU key.  Pinned to one CPU, so that
# every event reuses the same scratch key.
deep_interval_counts() {
	run --separate-stderr "$SC" --walker getstack -f -i 1 \
		-r 't:syscalls:sys_(exit_getppid|enter_getpid)' -- taskset -c 0 "$W/deep" 70 200
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk '{ print $1 }' | sort -u | wc -l)" -eq 2 ]
	[ "$(echo "$output" | awk '$1 ~ /;getppid;/ { n += $2 } END { print n }')" -eq 10 ]
	[ "$(echo "$output" | awk '$1 ~ /;(__)?getpid;/ { n += $2 } END { print n }')" -eq 1 ]
}

@test "getstack: -i counts a deep stack's frames once, whatever a deeper event left behind" {
	deep_interval_counts
}

@test "getstack, small keys: -i counts a deep stack's frames once, whatever a deeper event left behind" {
	STACKWALK_SMALL_KEYS=1 deep_interval_counts
}

# 4096 stacks of one chunk each, in order: the first 1024 fill the counts,
# the next 1024 fill the chunk map (twice the storage size)
@test "getstack, small keys, small maps: each loss counted, by cause" {
	STACKWALK_SMALL_KEYS=1 run --separate-stderr "$SC" -U -s --walker getstack \
		--stack-storage-size 1024 "$W/manypaths:target" -- "$W/manypaths" 12
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^    [0-9]')" -eq 1024 ]
	[ "$(echo "$output" | counted_of)" -eq 2047 ]
	[ "$stderr" = "6144 stacks lost: 2048 to a full counts map, 4096 to a full chunk map; raise --stack-storage-size (now 1024)" ]
}

@test "--kernel-features with STACKWALK_SMALL_KEYS=1: small keys, and the walker's mode" {
	STACKWALK_SMALL_KEYS=1 run "$SC" --kernel-features
	[ "$status" -eq 0 ]
	echo "$output" | grep -qx 'hash keys over 512 bytes (5.11)    no (STACKWALK_SMALL_KEYS=1)'
	echo "$output" | grep -qx 'walker                             cfi: bpf_get_stack and tail calls (4.18+): user frames from unwind tables, hash keys are at most 512 bytes: exact interned chunks of frames'
	STACKWALK_SMALL_KEYS=2 run --separate-stderr "$SC" --kernel-features
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"STACKWALK_SMALL_KEYS=2: give 1 to count with hash keys of at most 512 bytes"* ]]
}

# A walker auto picked that the kernel then refuses (a verifier's limit on
# some kernel) gives way to the next of auto's list, said in one line; one
# the user chose is an error.
@test "auto: a walker the kernel refuses gives way to the next, said in one line" {
	STACKWALK_REFUSE_WALKER=cfi run --separate-stderr "$SC" -f -U "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 0 ]
	[ "$stderr" = "stackcount: the kernel refused the cfi walker (its verifier rejected a program); using the getstack walker" ]
	diff -u - <(echo "$output" | LC_ALL=C sort) <<'EOF2'
paths;[unknown];main;deep2;deep3;via_a;work 6
paths;[unknown];main;via_a;work 2
paths;[unknown];main;via_b;work 4
EOF2
	STACKWALK_REFUSE_WALKER=cfi run --separate-stderr "$SC" -f -U --walker cfi "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 1 ]
	[ "$stderr" = "stackcount: cannot load the cfi walker: Permission denied; try --debug, or another --walker" ]
	[ -z "$(leftover_probes)" ]
}
