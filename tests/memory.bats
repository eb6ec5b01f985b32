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
    2
  work
  via_a
  main
  [unknown]
    3
  work
  via_a
  main
  [unknown]
    4
Detaching...
EOF2
}
