#!/usr/bin/env bats
# Every option of bcc's stackcount, asserted on exact content.

load helpers

teardown() {
	teardown_processes
}

# Offset of the return address after the call of $3 inside $2, in binary $1.
ret_offset() {
	local fn_addr line next
	fn_addr=$(nm "$1" | awk -v f="$2" '$3 == f { print $1 }')
	line=$(objdump -d --no-show-raw-insn "$1" |
		sed -n "/<$2>:/,/^$/p" | grep -A1 "call.*<$3>" | tail -n1)
	next=${line%%:*}
	printf '0x%x\n' $((0x${next// /} - 0x$fn_addr))
}

@test "-s: offsets of the probed instruction and of each return address" {
	run --separate-stderr "$SC" -U -s "$W/paths:work" -- "$W/paths" 1
	[ "$status" -eq 0 ]
	a=$(ret_offset "$W/paths" via_a work)
	m=$(ret_offset "$W/paths" main via_a)
	block=$(echo "$output" | sed -n '3,8p' | normalize)
	expected=$(printf '  work+0x0\n  via_a+%s\n  main+%s\n' "$a" "$m")
	[ "$(echo "$block" | head -3)" = "$expected" ]
}

# With -v every frame of the workload sits at its symbol's address plus
# the offset shown, all moved by one load bias (the binary is PIE); the
# cfi walker (auto's here) says how it found each: frame 0 in the
# registers, each caller by the unwind tables.
@test "-v: raw addresses, one load bias for every frame of the binary, how each was found" {
	run --separate-stderr "$SC" -U -v -s "$W/paths:work" -- "$W/paths" 1
	[ "$status" -eq 0 ]
	biases=$(echo "$output" | awk 'NF == 3 && $3 ~ /\+0x/' | while read -r addr how sym; do
		name=${sym%%+*}; off=${sym#*+}
		[ "$name" = "[unknown]" ] && continue
		vaddr=$(nm "$W/paths" | awk -v f="$name" '$3 == f { print $1 }')
		[ -n "$vaddr" ] || continue
		printf '%x\n' $((0x$addr - 0x$vaddr - off))
	done | sort -u)
	echo "biases: $biases"
	[ "$(echo "$biases" | wc -l)" -eq 1 ]
	[ $((0x$biases % 4096)) -eq 0 ]
	# an unnamed frame shows the module and the offset in it
	echo "$output" | grep -Eq '^  [0-9a-f]+ +cfi +\[unknown\] \(libc\.so\.6\+0x[0-9a-f]+\)$'
	# work <- via_a <- main, work <- via_b <- main, work <- via_a <- deep3
	# <- deep2 <- main; each then from __libc_start_call_main up to _start
	diff -u - <(echo "$output" | awk '/^  [0-9a-f]+ / { printf "%s ", $2 } /^    [0-9]+$/ { print "" }') <<'EOF'
regs cfi cfi cfi cfi cfi 
regs cfi cfi cfi cfi cfi 
regs cfi cfi cfi cfi cfi cfi cfi 
EOF
}

@test "-f: folded lines, comm first, user frames from the root" {
	run --separate-stderr "$SC" -f -U "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output") <<'EOF'
paths;_start;__libc_start_main;[unknown];main;via_a;work 2
paths;_start;__libc_start_main;[unknown];main;via_b;work 4
paths;_start;__libc_start_main;[unknown];main;deep2;deep3;via_a;work 6
EOF
}

# The kernel frames are the running kernel's; their shape is not.
check_syscall_kernel_frames() {
	local k
	k=$(echo "$1" | sed '/^    --$/,$d' | grep '^  [^ ]')
	echo "$k" | grep -qx '  do_syscall_64'
	[ "$(echo "$k" | tail -n1)" = "  entry_SYSCALL_64_after_hwframe" ]
}

@test "tracepoint: exact count, kernel frames through the syscall entry, user frames named" {
	for w in getstack stackmap; do
		run --separate-stderr "$SC" -d --walker $w t:syscalls:sys_enter_getppid -- "$W/paths" 3
		[ "$status" -eq 0 ]
		[ "$(echo "$output" | grep -c '^    [0-9]')" -eq 1 ]
		echo "$output" | grep -qx '    3'
		check_syscall_kernel_frames "$output"
		diff -u - <(echo "$output" | sed -n '/^    --$/,/^    [0-9]/p' | normalize) <<'EOF'
    --
  getppid
  main
  [unknown]
    3
EOF
	done
}

@test "tracepoint wildcards: every sys_enter event, getppid's exact" {
	n=$(ls -d /sys/kernel/tracing/events/syscalls/sys_enter_* | wc -l)
	run --separate-stderr "$SC" -U 't:syscalls:sys_enter_*' -- "$W/paths" 5
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | head -n1)" = "Tracing $n functions for \"t:syscalls:sys_enter_*\"... Hit Ctrl-C to end." ]
	diff -u - <(echo "$output" | awk 'BEGIN { RS = "" } /(^|\n)  getppid\n/' | normalize) <<'EOF'
  getppid
  syscalls
  main
  [unknown]
  __libc_start_main
  _start
    5
EOF
}

@test "-K: kernel frames only, merged across processes, no comm line" {
	run --separate-stderr "$SC" -K t:syscalls:sys_enter_getppid -- "$W/paths" 2
	[ "$status" -eq 0 ]
	check_syscall_kernel_frames "$output"
	! echo "$output" | grep -q 'paths \[' || false
	! echo "$output" | grep -qx '  getppid' || false
	echo "$output" | grep -qx '    2'
}

@test "-P with -K: stacks per process, with the comm line" {
	run --separate-stderr "$SC" -P -K t:syscalls:sys_enter_getppid -- "$W/paths" 2
	[ "$status" -eq 0 ]
	echo "$output" | normalize | grep -qx '    paths \[PID\]'
	[ "$(echo "$output" | normalize | grep -A1 'paths \[PID\]' | tail -n1)" = "    2" ]
}

@test "-U: user frames only" {
	run --separate-stderr "$SC" -U t:syscalls:sys_enter_getppid -- "$W/paths" 2
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | normalize) <<'EOF'
Tracing 1 functions for "t:syscalls:sys_enter_getppid"... Hit Ctrl-C to end.

  getppid
  syscalls
  main
  [unknown]
  __libc_start_main
  _start
    2

Detaching...
EOF
}

@test "-d: the delimiter sits between kernel and user frames, and not with -U" {
	run --separate-stderr "$SC" -d t:syscalls:sys_enter_getppid -- "$W/paths" 1
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(echo "$output" | grep -c -x '    --')" -eq 1 ]
	[ "$(echo "$output" | grep -B1 -A1 -x '    --' | sed -n '1p;3p')" = \
	  "$(printf '  entry_SYSCALL_64_after_hwframe\n  getppid')" ]
	run --separate-stderr "$SC" -d -U t:syscalls:sys_enter_getppid -- "$W/paths" 1
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	diff -u - <(echo "$output" | normalize) <<'EOF'
Tracing 1 functions for "t:syscalls:sys_enter_getppid"... Hit Ctrl-C to end.

  getppid
  syscalls
  main
  [unknown]
  __libc_start_main
  _start
    1

Detaching...
EOF
}

@test "-f -d: the folded delimiter, kernel frames from the entry point" {
	run --separate-stderr "$SC" -f -d t:syscalls:sys_enter_getppid -- "$W/paths" 4
	[ "$status" -eq 0 ]
	[[ "$output" == "paths;_start;__libc_start_main;[unknown];main;syscalls;getppid;-;entry_SYSCALL_64_after_hwframe;do_syscall_64;"*" 4" ]]
}

@test "-c: only events on that CPU" {
	[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
	run --separate-stderr "$SC" -c 1 -U "$W/paths:via_b" -- taskset -c 1 "$W/paths" 3
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	diff -u - <(echo "$output" | normalize) <<EOF
Tracing 1 functions for "$W/paths:via_b"... Hit Ctrl-C to end.

  via_b
  main
  [unknown]
  __libc_start_main
  _start
    6

Detaching...
EOF
	run --separate-stderr "$SC" -c 0 -U "$W/paths:via_b" -- taskset -c 1 "$W/paths" 3
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	diff -u - <(echo "$output") <<EOF
Tracing 1 functions for "$W/paths:via_b"... Hit Ctrl-C to end.

Detaching...
EOF
}

@test "-p: only that process, no comm line" {
	start_phases
	"$W/phases" <<< "7" > /dev/null	# another process running the same code
	start_sc -U -p "$PHASES_PID" "$W/phases:work"
	phase 5
	"$W/phases" <<< "9" > /dev/null
	phase 6
	stop_sc
	stop_phases
	diff -u - <(sed -n '3,$p' "$BATS_TEST_TMPDIR/sc.out") <<'EOF'
  work
  via_a
  main
  [unknown]
  __libc_start_main
  _start
    11

Detaching...
EOF
}

@test "-p a thread id: its process is traced, and said" {
	local d=$BATS_TEST_TMPDIR
	mkfifo "$d/threads.in"
	"$W/threads" < "$d/threads.in" > "$d/threads.out" &
	PHASES_PID=$!
	exec 7> "$d/threads.in"
	wait_for '^tid ' "$d/threads.out"
	tid=$(sed -n 's/^tid //p' "$d/threads.out")
	[ "$tid" -ne "$PHASES_PID" ]
	start_sc -U -p "$tid" "$W/threads:work"
	echo 4 >&7
	wait_for '^done 4$' "$d/threads.out"
	stop_sc
	exec 7>&-
	wait "$PHASES_PID"
	[ "$(cat "$d/sc.err")" = "stackcount: -p $tid is a thread of process $PHASES_PID: tracing $PHASES_PID" ]
	# worker's callers: libc's start_thread and clone3, local symbols
	diff -u - <(sed -n '3,$p' "$d/sc.out") <<'EOF'
  work
  via_a
  worker
  [unknown]
  [unknown]
    4

Detaching...
EOF
}

@test "-i -T: each interval prints its own counts, with the time" {
	check_interval_counts
}

@test "-D: ends by itself after the duration, with the counts" {
	start_phases
	phase 4
	"$SC" -U -D 1 -p "$PHASES_PID" "$W/phases:work" > "$BATS_TEST_TMPDIR/d.out" &
	pid=$!
	wait_for '^Tracing' "$BATS_TEST_TMPDIR/d.out"
	phase 3
	wait "$pid"
	stop_phases
	grep -qx '    3' "$BATS_TEST_TMPDIR/d.out"
	[ "$(tail -n1 "$BATS_TEST_TMPDIR/d.out")" = "Detaching..." ]
}

@test "-- COMMAND: its exit status is ours" {
	run "$SC" -U "$W/paths:work" -- sh -c "exit 7"
	[ "$status" -eq 7 ]
	run -127 "$SC" -U "$W/paths:work" -- /nonexistent/cmd
	[ "$status" -eq 127 ]
	[[ "$output" == *"cannot run /nonexistent/cmd"* ]]
}

# The cfi walker holds COMMAND, and what it starts, while their loader
# runs: one whose loader gives up (a library gone) ends held, with 127,
# and one that forks and dies of a signal still gives its status.
@test "-- COMMAND held while its loader runs: its end there, and a child's, keep their status" {
	local d=$BATS_TEST_TMPDIR
	echo 'int gone(void) { return 0; }' > "$d/gone.c"
	echo 'int gone(void); int main(void) { return gone(); }' > "$d/needs.c"
	gcc -shared -fPIC -o "$d/libgone.so" "$d/gone.c"
	gcc -o "$d/needs" "$d/needs.c" -L"$d" -lgone
	rm "$d/libgone.so"
	run -127 --separate-stderr "$SC" -U --walker cfi t:syscalls:sys_enter_getppid -- "$d/needs"
	[ "$status" -eq 127 ]
	[[ "$stderr" == *"libgone.so: cannot open shared object file"* ]]
	run --separate-stderr "$SC" -U --walker cfi t:syscalls:sys_enter_getppid -- \
		sh -c "$d/needs; sh -c 'kill -USR1 \$\$'"
	[ "$status" -eq 138 ]
}

# stackcount -- phases, which ignores SIGTERM, counting 3 calls; then one
# Ctrl-C: the counts are printed, and phases is sent SIGTERM.
start_stubborn() {
	local d=$BATS_TEST_TMPDIR
	mkfifo "$d/in"
	"$SC" -U "$W/phases:work" -- sh -c 'trap "" TERM; exec "$0"' "$W/phases" \
		< "$d/in" > "$d/sc.out" 2> "$d/sc.err" &
	SC_PID=$!
	exec 7> "$d/in"
	wait_for '^Tracing' "$d/sc.out"
	echo 3 >&7
	wait_for '^done 3$' "$d/sc.out"
	CMD_PID=$(ps -o pid= --ppid "$SC_PID" | tr -d ' ')
	kill -INT "$SC_PID"
	wait_for '^Detaching' "$d/sc.out"
}

# Whether PID $1 ends within $2 seconds; if not, its COMMAND is killed, so
# that the test fails rather than hangs.
ends_within() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$CMD_PID"
	return 1
}

check_stubborn_counted() {
	[ "$(grep -c '^    [0-9]' "$BATS_TEST_TMPDIR/sc.out")" -eq 1 ]
	grep -qx '    3' "$BATS_TEST_TMPDIR/sc.out"
}

@test "-- COMMAND that ignores SIGTERM: a second Ctrl-C kills it" {
	start_stubborn
	kill -INT "$SC_PID"
	ends_within "$SC_PID" 3
	run wait "$SC_PID"
	[ "$status" -eq 137 ]
	[ "$(cat "$BATS_TEST_TMPDIR/sc.err")" = "stackcount: sh had not ended on SIGTERM at the second signal: killed it (SIGKILL)" ]
	check_stubborn_counted
}

@test "-- COMMAND that ignores SIGTERM: killed after 5 s" {
	start_stubborn
	ends_within "$SC_PID" 10
	run wait "$SC_PID"
	[ "$status" -eq 137 ]
	[ "$(cat "$BATS_TEST_TMPDIR/sc.err")" = "stackcount: sh did not end within 5 s of SIGTERM: killed it (SIGKILL)" ]
	check_stubborn_counted
}

@test "-- COMMAND: the processes it starts are traced, others are not" {
	"$W/paths" 1 &
	run --separate-stderr "$SC" -f -U "$W/paths:via_b" -- sh -c "$W/paths 2; $W/paths 3"
	[ "$status" -eq 0 ]
	[ "$output" = "paths;_start;__libc_start_main;[unknown];main;via_b 10" ]
}

@test "--walker fp on a 32-bit task: its events are dropped and said, getstack walks them" {
	# a kernel without IA32 emulation runs none (Debian's cloud kernel in
	# tests/vm/run-tests.sh does: the same test there)
	run "$W/ia32"
	[ "$status" -ne 126 ] || skip "this kernel runs no 32-bit programs (IA32 emulation off)"
	run --separate-stderr "$SC" --walker fp -U "$W/ia32:work" -- "$W/ia32"
	[ "$status" -eq 0 ]
	[ "$stderr" = "3 events of 32-bit tasks not walked: the fp walker reads 64-bit frames; use --walker getstack or stackmap for them" ]
	diff -u - <(echo "$output") <<EOF
Tracing 1 functions for "$W/ia32:work"... Hit Ctrl-C to end.

Detaching...
EOF
	run --separate-stderr "$SC" --walker getstack -f -U "$W/ia32:work" -- "$W/ia32"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "ia32;[unknown];_start;via_a;work 3" ]
}

@test "--debug: the walker chosen, why, its BPF source and its unwind tables" {
	run --separate-stderr "$SC" --debug -U "$W/paths:work" -- "$W/paths" 1
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | head -n1)" = "walker: cfi (bpf_get_stack and tail calls (4.18+): user frames from unwind tables, exact raw-frame keys)" ]
	echo "$output" | grep -qx '/\* ---- cfi_walk.bpf.h ---- \*/'
	# paths's tables: before it starts (5.17+), or once its loader has
	# mapped its libraries, its process read
	[ "$(echo "$output" | grep -cE '^unwind tables: [0-9]+ binaries, [0-9]+ rows, [0-9]+ of 8388608 bytes; [01] processes, [0-9]+ mappings; [0-9.]+ ms$')" -eq 1 ]
	run --separate-stderr "$SC" --debug --walker getstack -U "$W/paths:work" -- "$W/paths" 1
	[ "$(echo "$output" | head -n1)" = "walker: getstack (chosen with --walker)" ]
	echo "$output" | grep -q 'bpf_get_stack(ctx'
	! echo "$output" | grep -q '^unwind tables' || false
	run --separate-stderr "$SC" --debug --walker fp -U "$W/paths:work" -- "$W/paths" 1
	[ "$(echo "$output" | head -n1)" = "walker: fp (chosen with --walker)" ]
	echo "$output" | grep -q 'Generated by gen/walker.py'
}

# The running kernel's build configuration, where it can be read.
kernel_config() {
	zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null || true
}

# feature_line NAME VALUE: the line --kernel-features prints for it
feature_line() {
	printf '%-34s %s' "$1" "$2"
}

# What holds on any machine, derived from the machine: its version, its
# build configuration and its tracefs, not this host's answers.
@test "--kernel-features: the host kernel's table and the walker it gets" {
	run --separate-stderr "$SC" --kernel-features
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	IFS=.- read -r major minor _ <<< "$(uname -r)"
	v=$((major * 256 + minor))
	yes_from() { [ "$v" -ge "$1" ] && echo yes || echo no; }
	echo "$output" | grep -qx "$(feature_line 'get_stack (4.18)' "$(yes_from $((4 * 256 + 18)))")"
	echo "$output" | grep -qx "$(feature_line 'hash keys over 512 bytes (5.11)' "$(yes_from $((5 * 256 + 11)))")"
	# task_struct.stack from BTF: where a program finds the user registers
	if [ -r /sys/kernel/btf/vmlinux ]; then
		echo "$output" | grep -Eqx 'task_struct\.stack +\+[0-9]+ \(BTF\)'
	else
		echo "$output" | grep -qx "$(feature_line task_struct.stack 'unknown (no BTF): found from the BPF stack')"
	fi
	config=$(kernel_config)
	if [ -n "$config" ]; then
		kprobes=no
		# the tool's kprobes: kprobe_events in tracefs, or the kprobe PMU
		echo "$config" | grep -qx 'CONFIG_KPROBES=y' &&
			echo "$config" | grep -qx 'CONFIG_KPROBE_EVENTS=y' && kprobes=yes
		echo "$output" | grep -qx "$(feature_line kprobes "$kprobes")"
		if echo "$config" | grep -qx 'CONFIG_UNWINDER_ORC=y'; then
			unw='ORC (CONFIG_UNWINDER_ORC=y)'
		elif echo "$config" | grep -qx 'CONFIG_UNWINDER_FRAME_POINTER=y'; then
			unw='frame pointers (CONFIG_UNWINDER_FRAME_POINTER=y)'
		elif echo "$config" | grep -qx 'CONFIG_FRAME_POINTER=y'; then
			unw='frame pointers (CONFIG_FRAME_POINTER=y)'
		else
			unw='guess (CONFIG_FRAME_POINTER is not set)'
		fi
		echo "$output" | grep -qx "$(feature_line 'kernel unwinder' "$unw")"
	fi
	if [ "$v" -ge $((5 * 256 + 11)) ]; then
		echo "$output" | grep -qx "$(feature_line walker 'cfi: bpf_get_stack and tail calls (4.18+): user frames from unwind tables, exact raw-frame keys')"
	elif [ "$v" -ge $((4 * 256 + 18)) ]; then
		echo "$output" | grep -qx "$(feature_line walker 'cfi: bpf_get_stack and tail calls (4.18+): user frames from unwind tables, hash keys are at most 512 bytes: exact interned chunks of frames')"
	fi
}

# What holds until a reboot is kept by the first run (src/kept.c): the
# next reads it back, every answer as probed; an entry another user could
# have written, a torn one, or one reached through a symlink is not read.
@test "--kernel-features: what holds for the boot kept by one run, read back by the next, the same table" {
	d=$BATS_TEST_TMPDIR/kept
	kept() { grep '^kept by a run since boot ' | sed 's/ *\([a-z]*\):.*/ \1/'; }
	STACKWALK_CACHE_DIR= "$SC" --kernel-features > "$BATS_TEST_TMPDIR/none"
	for run in first second; do
		STACKWALK_CACHE_DIR=$d "$SC" --kernel-features > "$BATS_TEST_TMPDIR/$run"
	done
	[ "$(kept < "$BATS_TEST_TMPDIR/none")" = "kept by a run since boot no" ]
	[ "$(kept < "$BATS_TEST_TMPDIR/first")" = "kept by a run since boot no" ]
	[ "$(kept < "$BATS_TEST_TMPDIR/second")" = "kept by a run since boot yes" ]
	diff -u <(grep -v '^kept by' "$BATS_TEST_TMPDIR/none") \
		<(grep -v '^kept by' "$BATS_TEST_TMPDIR/second")
	# the one entry there, named by a hash of the tool's build-id
	f=$(echo "$d"/*)
	[[ $f =~ /[0-9a-f]{16}$ ]]
	[ "$(stat -c '%U %a' "$f")" = "root 600" ]
	# each spoils the entry, the run after it probes and keeps a good one
	spoil() {
		case $1 in
		group) chmod g+w "$f" ;;
		torn) truncate -s -1 "$f" ;;
		flipped) printf 'x' | dd of="$f" bs=1 seek=200 conv=notrunc 2> /dev/null ;;
		link) mv "$f" "$d/elsewhere"; ln -s elsewhere "$f" ;;
		esac
	}
	for how in group torn flipped link; do
		spoil $how
		[ "$(STACKWALK_CACHE_DIR=$d "$SC" --kernel-features | kept)" = "kept by a run since boot no" ]
		[ "$(STACKWALK_CACHE_DIR=$d "$SC" --kernel-features | kept)" = "kept by a run since boot yes" ]
	done
	# a walk as if none were kept: its stacks (options.bats, -P) the same
	run --separate-stderr env STACKWALK_CACHE_DIR=$d "$SC" -U -P 'c:getpp*d' -- "$W/paths" 2
	[ "$status" -eq 0 ]
	kept_out=$output
	run --separate-stderr env STACKWALK_CACHE_DIR= "$SC" -U -P 'c:getpp*d' -- "$W/paths" 2
	[ "$status" -eq 0 ]
	[ "$(echo "$kept_out" | normalize)" = "$(echo "$output" | normalize)" ]
}

@test "lib as a library name (c), with wildcards, the caller at entry kept" {
	run --separate-stderr "$SC" -U 'c:getpp*d' -- "$W/paths" 2
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output" | normalize) <<'EOF2'
Tracing 1 functions for "c:getpp*d"... Hit Ctrl-C to end.

  getppid
  syscalls
  main
  [unknown]
  __libc_start_main
  _start
    2

Detaching...
EOF2
}

@test "lib as an executable found on PATH" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cp "$W/paths" "$BATS_TEST_TMPDIR/bin/sw-paths"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run --separate-stderr "$SC" -f -U sw-paths:via_b -- sw-paths 3
	[ "$status" -eq 0 ]
	[ "$output" = "sw-paths;_start;__libc_start_main;[unknown];main;via_b 6" ]
}

# in a mount namespace of its own, with tracefs and debugfs unmounted
@test "--kernel-features changes nothing: tracefs is mounted only when tracing starts" {
	run unshare -m sh -c 'umount -l /sys/kernel/tracing 2>/dev/null
		umount -l /sys/kernel/debug 2>/dev/null
		"$0" --kernel-features | grep "^tracefs"
		grep -cE " (tracefs|debugfs) " /proc/self/mounts
		"$0" -D 1 t:sched:sched_switch > /dev/null 2>&1
		grep -E " (tracefs|debugfs) " /proc/self/mounts | cut -d" " -f1-3' "$SC"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tracefs                            not mounted (mounted when tracing starts)" ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = "tracefs /sys/kernel/tracing tracefs" ]
	[ "${#lines[@]}" -eq 3 ]
}

# sysc 1, run 50 times: in each process, raw_getppid once from from_a and
# twice from from_b.  Without -P a call path is one entry however many
# processes took it (bcc's -P: "display stacks separately for each
# process"); with -P, one per process, each under its comm [pid].
fifty_sysc() {
	run --separate-stderr "$SC" "$@" -U "$W/sysc:raw_getppid" -- \
		sh -c "for i in \$(seq 50); do $W/sysc 1; done"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "-P: without it, one call path of 50 processes is one entry in every output; with it, one per process" {
	fifty_sysc
	diff -u - <(echo "$output") <<EOF
Tracing 1 functions for "$W/sysc:raw_getppid"... Hit Ctrl-C to end.

  raw_getppid
  from_a
  main
  [unknown]
  __libc_start_main
  _start
    50

  raw_getppid
  from_b
  main
  [unknown]
  __libc_start_main
  _start
    100

Detaching...
EOF
	fifty_sysc -f
	diff -u - <(echo "$output") <<EOF
sysc;_start;__libc_start_main;[unknown];main;from_a;raw_getppid 50
sysc;_start;__libc_start_main;[unknown];main;from_b;raw_getppid 100
EOF
	# no pid, and no user address, which differs from process to process
	fifty_sysc --json
	[ "$(jq -c '[.total, [.stacks[] | [.count, .comm, .pid, ([.frames[] | .address] | unique), [.frames[1].name]]]]' <<< "$output")" = \
	  '[150,[[50,"sysc",null,[null],["from_a"]],[100,"sysc",null,[null],["from_b"]]]]' ]
	fifty_sysc -P
	[ "$(grep -cE '^    sysc \[[0-9]+\]$' <<< "$output")" -eq 100 ]
	[ "$(grep -E '^    sysc \[[0-9]+\]$' <<< "$output" | sort -u | wc -l)" -eq 50 ]
	[ "$(grep -E '^    [0-9]+$' <<< "$output" | sort | uniq -c | tr -s ' ')" = "$(printf ' 50 1\n 50 2')" ]
}
