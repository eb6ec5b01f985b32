#!/usr/bin/env bats
# The manual pages render cleanly.

load helpers

@test "man -l man/man8/stackcount.8 renders without warnings" {
	run bash -c "MANWIDTH=80 man -l '$TOP/man/man8/stackcount.8' 2>&1 >/dev/null"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run bash -c "groff -man -ww -z '$TOP/man/man8/stackcount.8' 2>&1"
	[ -z "$output" ]
	MANWIDTH=80 man -l "$TOP/man/man8/stackcount.8" | grep -q -- '--walker'
}
