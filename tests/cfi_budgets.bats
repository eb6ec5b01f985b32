#!/usr/bin/env bats
# What another user's binaries and processes can make the cfi walker's
# unwind tables cost: memory bounded by --unwind-memory, one table for one
# content however often it is mapped, and no user's tables or mappings
# pushing out the ones that matter.

load helpers
load nobody

setup() {
	nobody_home
}

teardown() {
	exec 7>&-
	teardown_processes
	[ -n "${MM_PID:-}" ] && kill "$MM_PID" 2>/dev/null
	return 0
}

# A .debug_frame of SIZE bytes on stdout that is valid CFI: a CIE, then one
# FDE over [START, START + LEN) whose instructions fill the rest, all
# DW_CFA_nop (a zero byte).
debug_frame() {	# START LEN SIZE
	python3 - "$@" <<'PY'
import struct, sys
start, length, size = (int(a, 0) for a in sys.argv[1:4])
body = struct.pack('<IB', 0xffffffff, 1) + b'\0' + bytes([1, 0x78, 16, 0x0c, 7, 8, 0x90, 1])
body += b'\0' * (-(len(body) + 4) % 8)
cie = struct.pack('<I', len(body)) + body
fde_len = size - len(cie) - 4
out = sys.stdout.buffer
out.write(cie + struct.pack('<IIQQ', fde_len, 0, start, length))
pad = fde_len - 20
while pad > 0:
    n = min(pad, 1 << 20)
    out.write(bytes(n))
    pad -= n
PY
}

@test "a .debug_frame that inflates to 64 MiB is refused uninflated, as not fitting" {
	local main
	main=$(nm -S "$H/victim" | awk '$4 == "main" { print "0x" $1, "0x" $2 }')
	# shellcheck disable=SC2086
	debug_frame $main $((64 << 20)) > "$BATS_TEST_TMPDIR/df"
	as_nobody objcopy --add-section .debug_frame="$BATS_TEST_TMPDIR/df" \
		"$H/victim" "$H/big"
	as_nobody objcopy --compress-debug-sections=zlib "$H/big" "$H/app"
	rm "$BATS_TEST_TMPDIR/df" "$H/big"
	# the file is small, what it inflates to is not
	[ "$(stat -c %s "$H/app")" -lt 200000 ]
	bounded 2 /usr/bin/time -o "$BATS_TEST_TMPDIR/rss" -f %M \
		"$SC" -D 2 -U -f t:syscalls:sys_enter_getppid -- "${NOBODY[@]}" "$H/app" 3
	[ "$status" -eq 0 ]
	[ "$output" = "app;_start;__libc_start_main;[unknown];main;calls;work;lib_entry;lib_inner;lib_call;getppid 3" ]
	[ "$stderr" = "stackcount: the unwind tables of 1 binaries (0 rows, CFI that inflates to 64 MiB) did not fit in --unwind-memory 8 MiB: their frames are found by frame pointers; give more" ]
	echo "peak RSS $(cat "$BATS_TEST_TMPDIR/rss") KB"
	# 69 MB before: the section inflated, then parsed
	[ "$(cat "$BATS_TEST_TMPDIR/rss")" -lt 40000 ]
}

# manymaps run by nobody, N mappings of its code made, commands by fd 7.
start_manymaps() {	# N
	mkfifo "$BATS_TEST_TMPDIR/mm.in"
	"${NOBODY[@]}" "$W/manymaps" "$1" < "$BATS_TEST_TMPDIR/mm.in" \
		> "$BATS_TEST_TMPDIR/mm.out" &
	MM_PID=$!
	exec 7> "$BATS_TEST_TMPDIR/mm.in"
}

# What stackcount prints for N calls of manymaps' sys_a at getppid.
sys_a_stacks() {	# N
	cat <<OUT
Tracing 1 functions for "t:syscalls:sys_enter_getppid"... Hit Ctrl-C to end.

  syscall
  sys_a
  main
  [unknown]
  __libc_start_main
  _start
    $1

Detaching...
OUT
}

@test "more than 128 executable mappings: libc's kept, those left out counted once each" {
	start_manymaps 150
	# its code, libc, ld.so, the vDSO and 150 copies: 26 past the 128
	start_sc -U -p "$MM_PID" t:syscalls:sys_enter_getppid
	echo "map 50" >&7
	wait_for '^mapped 200$' "$BATS_TEST_TMPDIR/mm.out"
	echo "call 5" >&7
	wait_for '^called$' "$BATS_TEST_TMPDIR/mm.out"
	stop_sc
	exec 7>&-
	cat "$BATS_TEST_TMPDIR/sc.out" "$BATS_TEST_TMPDIR/sc.err"
	# through glibc's syscall(), which keeps no frame: its CFI says sys_a
	sys_a_stacks 5 | diff - "$BATS_TEST_TMPDIR/sc.out"
	# at the start, and all of them at the end: never each read again
	diff - "$BATS_TEST_TMPDIR/sc.err" <<'ERR'
stackcount: 0 processes and 26 mappings had no room in the unwind maps: their frames are found by frame pointers
stackcount: 0 processes and 76 mappings had no room in the unwind maps: their frames are found by frame pointers
ERR
}

@test "a process rewriting its vDSO's CFI 500 times, mapping a file each time: one table for it, its stacks whole" {
	start_manymaps 0
	# its vDSO rewritten before the run: the one it has at the start
	echo "rewrite 1" >&7
	wait_for '^rewrote 1$' "$BATS_TEST_TMPDIR/mm.out"
	/usr/bin/time -o "$BATS_TEST_TMPDIR/rss" -f %M "$SC" --debug -U \
		-p "$MM_PID" t:syscalls:sys_enter_getppid \
		> "$BATS_TEST_TMPDIR/sc.out" 2> "$BATS_TEST_TMPDIR/sc.err" &
	local timed=$!
	wait_for '^Tracing' "$BATS_TEST_TMPDIR/sc.out"
	echo "rewrite 500" >&7
	wait_for '^rewrote 501$' "$BATS_TEST_TMPDIR/mm.out"
	echo "call 3" >&7
	wait_for '^called$' "$BATS_TEST_TMPDIR/mm.out"
	# time(1) waits on, and ignores SIGINT: stackcount is its child
	kill -INT "$(pgrep -P "$timed")"
	wait "$timed"
	cat "$BATS_TEST_TMPDIR/sc.err"
	# its code, libc, ld.so, its vDSO as it was first read: every later
	# rewrite is more than its user may have, and the file one table
	grep '^unwind tables' "$BATS_TEST_TMPDIR/sc.out" |
		sed -E 's/, [0-9]+ rows.*; ([0-9]+ processes)/; \1/; s/; [0-9.]+ ms$//' \
		> "$BATS_TEST_TMPDIR/tables"
	diff - "$BATS_TEST_TMPDIR/tables" <<'OUT'
unwind tables: 4 binaries; 1 processes, 4 mappings
unwind tables at the end: 4 binaries; 1 processes, 3 mappings
OUT
	[ "$(cat "$BATS_TEST_TMPDIR/sc.err")" = "stackcount: 0 processes and 1 mappings had no room in the unwind maps: their frames are found by frame pointers" ]
	sys_a_stacks 3 | diff - <(sed -n '/^Tracing/,/^Detaching/p' "$BATS_TEST_TMPDIR/sc.out")
	echo "peak RSS $(cat "$BATS_TEST_TMPDIR/rss") KB"
	[ "$(cat "$BATS_TEST_TMPDIR/rss")" -lt 40000 ]
}

# A copy of libc with no build-id: a table of its own, not libc's.
libc_copy() {	# DIR [RUN-AS...]
	local dir=$1
	shift
	"$@" mkdir "$dir"
	"$@" objcopy --remove-section .note.gnu.build-id \
		"$(ldd "$W/cfipaths" | awk '/libc.so.6/ { print $3 }')" "$dir/libc.so.6"
}

@test "one user's binaries cannot take the room of root's: a quarter of --unwind-memory each" {
	local rows i
	for i in 1 2 3 4 5; do
		libc_copy "$H/c$i" "${NOBODY[@]}"
	done
	libc_copy "$BATS_TEST_TMPDIR/root"
	rows=$("$TOP/build/tests/cfi_dump" "$H/c1/libc.so.6" | head -n1 |
	       sed -E 's/^[^:]*: ([0-9]+) rows.*/\1/')
	# 1 MiB, 131072 rows: nobody may have 32768, one copy; root's copy
	# is loaded last, after nobody's five
	[ "$rows" -le 32768 ]
	# nobody's five cats live on, each waiting for a writer, until the
	# tool has ended (their output is not the run's, which would wait for
	# it): a process that ended before its mappings were read needs no
	# tables (nothing of it can fire), so a short one's copy may never be
	# tried, as happened under load.  And cfipaths starts only once each
	# cat has mapped its copy: one still in setpriv or env when the run
	# ended was never tried either (CI, once)
	as_nobody mkfifo "$H/hold"
	cat > "$BATS_TEST_TMPDIR/run.sh" <<SH
for i in 1 2 3 4 5; do
	${NOBODY[*]} env LD_LIBRARY_PATH=$H/c\$i cat $H/hold > /dev/null 2>&1 &
	n=0
	until grep -q "$H/c\$i/libc.so.6" /proc/\$!/maps 2> /dev/null; do
		n=\$((n + 1))
		[ \$n -le 1000 ] || exit 1
		sleep 0.01
	done
done
LD_LIBRARY_PATH=$BATS_TEST_TMPDIR/root exec $W/cfipaths
SH
	# the command is held at each exec, as on 4.18-5.16, so that cfipaths'
	# tables are loaded before its code runs; nobody's come with their
	# mappings, or at the end
	STACKWALK_NO_FIND_VMA=1 STACKWALK_NO_VMA_LISTS=1 run --separate-stderr "$SC" -U -f --unwind-memory 1 \
		t:syscalls:sys_enter_getppid -- sh "$BATS_TEST_TMPDIR/run.sh"
	# a writer lets them go
	timeout 10 sh -c ": > '$H/hold'"
	[ "$status" -eq 0 ]
	echo "$output"
	echo "$stderr"
	# root's libc copy had room: syscall() leads to its caller
	diff - <(grep '^cfipaths;' <<< "$output") <<'OUT'
cfipaths;_start;__libc_start_main;[unknown];main;sys_a;syscall 5
cfipaths;_start;__libc_start_main;[unknown];main;sys_b;syscall 6
OUT
	[ "$stderr" = "stackcount: the unwind tables of 4 binaries ($((4 * rows)) rows) did not fit in --unwind-memory 1 MiB: their frames are found by frame pointers; give more" ]
}

# A -- COMMAND that is another user's program: its libraries (here its own
# $ORIGIN one, nobody's too) are found and their tables loaded before it
# runs, as for root's: victim, libvictim.so, libc and ld.so.  Only one
# other user's file was read before (its .interp and .dynamic were never
# read), and its library's table came with the mapping, after its first
# events, or not.
@test "another user's program as -- COMMAND: its libraries' tables loaded before it runs" {
	bounded 5 "$SC" --debug -D 5 -U -f t:syscalls:sys_enter_getppid -- "$H/victim" 3
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(grep '^unwind tables: ' <<< "$output" | sed -E 's/, [0-9]+ rows.*//')" = "unwind tables: 4 binaries" ]
	[ "$(grep '^victim;' <<< "$output")" = "victim;_start;__libc_start_main;[unknown];main;calls;work;lib_entry;lib_inner;lib_call;getppid 3" ]
}
