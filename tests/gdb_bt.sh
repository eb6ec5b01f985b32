#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gdb as the judge of user stacks:
#
#   tests/gdb_bt.sh [--names] [--all] [--child] BREAKSPEC -- COMMAND [ARG ...]
#
# runs COMMAND under gdb, with a breakpoint at BREAKSPEC (e.g. '*malloc',
# '-probe-stap PROVIDER:NAME'; or syscall:NAME, each entry into that
# syscall, as its tracepoint sees the user stack), and prints one line per
# hit: the pc of each frame gdb's `bt` unwinds, in hex, innermost first,
# outer frames by their return address; up to and including main's caller
# (__libc_start_call_main), or with --all up to gdb's outermost frame.
# --names writes each frame as ADDRESS:NAME, for a human.  Nothing else
# goes to stdout: gdb's messages and COMMAND's own output go to stderr;
# COMMAND's stdin is /dev/null.  Exits with COMMAND's status, or 2 if gdb
# could not run it to its end.
#
# The breakpoint is set once libc is mapped and before any of its code
# runs (tests/gdb_bt.py says why).  gdb unwinds with the .eh_frame of each
# object, the same tables a CFI walker reads: debug files and debuginfod
# are turned off, so the stacks are the same whatever is installed, and
# names are those of the objects' symbol tables.  Only the process COMMAND
# starts is followed, not its children; with --child, the child of its
# first fork instead, from the fork on (the hits before it are the
# parent's: a workload judged this way has none).
#
# Addresses are those of a run without address space randomization, as
# gdb runs programs; a stack tool's run to compare with must be too:
# `setarch -R stackcount ... -- COMMAND` (or randomize_va_space=0).  gdb
# itself is started under setarch -R, so that this holds even where gdb
# cannot turn randomization off itself.  COMMAND's environment is the
# caller's.
set -u

names=0
all=0
follow=parent
while [ $# -gt 0 ]; do
	case $1 in
	--names) names=1; shift ;;
	--all) all=1; shift ;;
	--child) follow=child; shift ;;
	*) break ;;
	esac
done
if [ $# -lt 3 ] || [ "$2" != "--" ]; then
	echo "usage: $0 [--names] [--all] [--child] BREAKSPEC -- COMMAND [ARG ...]" >&2
	exit 2
fi
spec=$1
shift 2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gdb starts COMMAND through $SHELL (without a shell gdb 13 splits
# arguments at their spaces): /bin/sh, whichever shell the caller uses,
# while COMMAND gets the caller's SHELL, and not gdb's LINES and COLUMNS.
env=()
for v in LINES COLUMNS SHELL; do
	if [ -n "${!v+set}" ]; then
		env+=(-ex "set environment $v=${!v}")
	else
		env+=(-ex "unset environment $v")
	fi
done

GDB_BT_SPEC=$spec GDB_BT_OUT=$tmp/hits GDB_BT_STATUS=$tmp/status \
GDB_BT_NAMES=$names GDB_BT_ALL=$all SHELL=/bin/sh \
	setarch -R gdb -nx -batch \
	-ex 'set pagination off' -ex 'set confirm off' \
	-ex 'set debuginfod enabled off' -ex "set debug-file-directory $tmp/none" \
	-ex 'set disable-randomization on' -ex 'set startup-with-shell on' \
	-ex 'set backtrace past-main on' -ex 'set backtrace limit unlimited' \
	-ex "set follow-fork-mode $follow" \
	"${env[@]}" \
	-x "$(dirname "$0")/gdb_bt.py" --args "$@" < /dev/null >&2
if [ ! -s "$tmp/status" ]; then
	echo "$0: gdb did not run $1 to its end; its messages are above" >&2
	exit 2
fi
cat "$tmp/hits"
exit "$(cat "$tmp/status")"
