# Shared by the bats suites: where things are, and how to drive them.
bats_require_minimum_version 1.5.0


TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

# Debug symbols a machine happens to have installed (libc6-dbg, say) would
# name frames the tests expect as [unknown]: none, unless a test says so.
export STACKWALK_DEBUG_DIR=${BATS_SUITE_TMPDIR:-/tmp}/no-debug-files
# Nor servers the machine is set to ask (Debian sets this for login shells).
unset DEBUGINFOD_URLS
SC=$TOP/build/stackcount
W=$TOP/build/tests/workloads

# A system-wide cfi run reports, about every process on the machine, what
# depends on what else runs there: tables too big or past the room, events
# of processes that started before their maps were read, runs the kernel
# skipped where one traced event fired inside another's program (an
# irq_work tracepoint, say).  $1 without those.
without_host_lines() {
	grep -vE '^[a-z]+: the unwind tables of |^the user frames of [0-9]+ events were found by frame pointers|^[0-9]+ user stacks end early: |^[0-9]+ events had user frames found by frame pointers: |^[0-9]+ stacks lost: [0-9]+ skipped by the kernel, ' <<< "$1" || true
}

# PIDs change from run to run; everything else in the output must not.
normalize() {
	sed -E 's/ \[[0-9]+\]$/ [PID]/'
}

# Probe events we leave in tracefs (there must be none once a run ends).
leftover_probes() {
	local d
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		cat "$d/kprobe_events" "$d/uprobe_events" 2>/dev/null || true
	done
}

# Wait (bounded) until file $2 has at least $3 (default 1) lines matching $1.
wait_for() {
	local i n
	for ((i = 0; i < 600; i++)); do
		n=$(grep -c -- "$1" "$2" 2>/dev/null || true)
		[ "${n:-0}" -ge "${3:-1}" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for '$1' in $2" >&2
	cat "$2" >&2
	return 1
}

# phases: a workload that runs N calls of work() per number it reads.
start_phases() {
	mkfifo "$BATS_TEST_TMPDIR/phases.in"
	"$W/phases" < "$BATS_TEST_TMPDIR/phases.in" > "$BATS_TEST_TMPDIR/phases.out" &
	PHASES_PID=$!
	exec 7> "$BATS_TEST_TMPDIR/phases.in"
	PHASES_DONE=0
}

phase() {
	echo "$1" >&7
	PHASES_DONE=$((PHASES_DONE + 1))
	wait_for '^done' "$BATS_TEST_TMPDIR/phases.out" "$PHASES_DONE"
}

stop_phases() {
	exec 7>&-
	wait "$PHASES_PID" 2>/dev/null || true
}

# stackcount in the background, output in $BATS_TEST_TMPDIR/sc.{out,err}.
start_sc() {
	"$SC" "$@" > "$BATS_TEST_TMPDIR/sc.out" 2> "$BATS_TEST_TMPDIR/sc.err" &
	SC_PID=$!
	wait_for '^Tracing' "$BATS_TEST_TMPDIR/sc.out"
}

stop_sc() {
	kill -INT "$SC_PID"
	wait "$SC_PID"
}

teardown_processes() {
	[ -n "${SC_PID:-}" ] && kill -INT "$SC_PID" 2>/dev/null && wait "$SC_PID" 2>/dev/null
	[ -n "${PHASES_PID:-}" ] && kill "$PHASES_PID" 2>/dev/null
	return 0
}

# -i -T on phases, with stackcount's options $@: counts in order, 5 then
# 7, never the sum, each interval with its time.
check_interval_counts() {
	start_phases
	start_sc -U -i 1 -T "$@" -p "$PHASES_PID" "$W/phases:work"
	phase 5
	wait_for '^    5$' "$BATS_TEST_TMPDIR/sc.out"
	phase 7
	wait_for '^    7$' "$BATS_TEST_TMPDIR/sc.out"
	stop_sc
	stop_phases
	out=$BATS_TEST_TMPDIR/sc.out
	# counts in order: 5 then 7, never the sum
	[ "$(grep -E '^    [0-9]+$' "$out" | tr -d ' ' | tr '\n' ' ')" = "5 7 " ]
	# a time before each interval's stacks
	[ "$(grep -cE '^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]$' "$out")" -ge 2 ]
	# each count's interval (its paragraph) starts with its time
	for n in 5 7; do
		awk -v n="$n" 'BEGIN { RS = "" } $0 ~ "\n    " n "$"' "$out" | head -n1 |
			grep -qE '^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]$'
	done
	[ "$(tail -n1 "$out")" = "Detaching..." ]
}
