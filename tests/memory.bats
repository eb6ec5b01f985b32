#!/usr/bin/env bats
# Memory: what the tool keeps must follow what it traces, not how many
# processes the system starts.

load helpers

teardown() {
	teardown_processes
}

# kB of a /proc/PID/status field (VmHWM: the peak resident set so far)
status_kb() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

@test "-p: 5,000 unrelated processes leave the RSS as it was, the stack exact" {
	start_phases
	start_sc -U -i 1 -p "$PHASES_PID" "$W/phases:work"
	phase 2
	wait_for '^    2$' "$BATS_TEST_TMPDIR/sc.out"
	before=$(status_kb "$SC_PID" VmHWM)
	"$W/spawner" 5000 > "$BATS_TEST_TMPDIR/spawner.out"
	[ "$(cat "$BATS_TEST_TMPDIR/spawner.out")" = "spawned 5000" ]
	# each interval drains the mapping records before reading the counts:
	# the one that shows 4 began after the one that showed 3 had read the
	# calls made after every spawned process had exited
	phase 3
	wait_for '^    3$' "$BATS_TEST_TMPDIR/sc.out"
	phase 4
	wait_for '^    4$' "$BATS_TEST_TMPDIR/sc.out"
	after=$(status_kb "$SC_PID" VmHWM)
	stop_sc
	stop_phases
	echo "VmHWM before $before kB, after $after kB" >&3
	[ $((after - before)) -lt 2048 ]
	# every interval's stack, exact: nothing else was counted
	diff -u - <(grep -v '^$' "$BATS_TEST_TMPDIR/sc.out" | sed 1d) <<'EOF2'
  work
  via_a
  main
  [unknown]
  __libc_start_main
  _start
    2
  work
  via_a
  main
  [unknown]
  __libc_start_main
  _start
    3
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

# Processes started, 50 at a time, until stackcount says it is tracing.
flood_until_tracing() {
	until grep -q '^Tracing' "$1" 2> /dev/null; do
		"$W/spawner" 50 > /dev/null
	done
}

@test "-- COMMAND after a slow start on a busy system: exact frames, or the loss said" {
	out=$BATS_TEST_TMPDIR/sc.out
	flood_until_tracing "$out" &
	flood=$!
	# one page a CPU fills with a few processes' records; the million-stack
	# map takes seconds to create, while the flood runs
	STACKWALK_SIDEBAND_PAGES=1 "$SC" -U --walker stackmap \
		--stack-storage-size 1000000 "$W/paths:via_b" -- "$W/paths" 3 \
		> "$out" 2> "$BATS_TEST_TMPDIR/sc.err"
	wait "$flood"
	cat "$BATS_TEST_TMPDIR/sc.err"
	if [ "$(sed -n '3,$p' "$out" | normalize)" = "  via_b
  main
  [unknown]
    6

Detaching..." ]; then
		echo "frames exact" >&3
	else
		sed -n '3,$p' "$out"
		grep -qx '  \[unknown\]' "$out"
		[ "$(wc -l < "$BATS_TEST_TMPDIR/sc.err")" -eq 1 ]
		grep -Eqx '[1-9][0-9]* process mapping records lost: some user frames may show as \[unknown\]' \
			"$BATS_TEST_TMPDIR/sc.err"
		echo "loss said: $(cat "$BATS_TEST_TMPDIR/sc.err")" >&3
	fi
}
