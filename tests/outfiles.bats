#!/usr/bin/env bats
# What root's stackcount and stacksnoop write, and where, when another user
# (nobody) prepares the places and names: the --svg and --pprof files are
# never written through a link or into a FIFO, a full disk is said as one,
# signals end the tool at every step, and a name cannot forge a frame of
# the folded output nor a line of the other outputs.

load helpers
load nobody

SNOOP=$TOP/build/stacksnoop

setup() {
	nobody_home
}

teardown() {
	[ -n "${MNT:-}" ] && umount "$MNT"
	[ -n "${READER_PID:-}" ] && kill "$READER_PID" 2>/dev/null
	teardown_processes
}

# A short run of root's stackcount, its files given as $@.
short_run() {
	bounded 5 "$SC" -K "$@" t:syscalls:sys_enter_getppid -- "$W/victim" 1
	echo "status $status, stderr: $stderr"
}

# It refused: status 1, stderr the one line $1, no probe left.
refused() {
	[ "$status" -eq 1 ]
	[ "$stderr" = "$1" ]
	[ -z "$(leftover_probes)" ]
}

# Root's file that nobody's link points at.
victim_file() {
	V=$BATS_TEST_TMPDIR/secret
	echo secret > "$V"
	chmod 600 "$V"
}

@test "O1: --svg and --pprof through nobody's symbolic link are refused" {
	victim_file
	as_nobody ln -s "$V" "$H/out.svg"
	as_nobody ln -s "$V" "$H/out.pb.gz"
	short_run --svg "$H/out.svg"
	refused "stackcount: --svg $H/out.svg: a symbolic link, not a regular file; give another path"
	short_run --pprof "$H/out.pb.gz"
	refused "stackcount: --pprof $H/out.pb.gz: a symbolic link, not a regular file; give another path"
	[ "$(cat "$V")" = secret ]
	[ "$(stat -c %a "$V")" = 600 ]
	[ "$(ls -A "$H" | sort | tr '\n' ' ')" = "libvictim.so out.pb.gz out.svg victim " ]
}

@test "O2: a directory link of nobody's on the way to --svg is refused" {
	mkdir "$BATS_TEST_TMPDIR/etc"
	echo secret > "$BATS_TEST_TMPDIR/etc/out.svg"
	as_nobody ln -s "$BATS_TEST_TMPDIR/etc" "$H/dir"
	short_run --svg "$H/dir/out.svg"
	refused "stackcount: --svg $H/dir/out.svg: a symbolic link of another user is on its way; give another path"
	[ "$(cat "$BATS_TEST_TMPDIR/etc/out.svg")" = secret ]
	# root's own links are followed
	ln -s "$BATS_TEST_TMPDIR/etc" "$BATS_TEST_TMPDIR/rootdir"
	short_run --svg "$BATS_TEST_TMPDIR/rootdir/out.svg"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(head -c 5 "$BATS_TEST_TMPDIR/etc/out.svg")" = "<?xml" ]
}

@test "O3: a FIFO as --svg or --pprof is refused at once, not waited on" {
	as_nobody mkfifo "$H/out.svg"
	short_run --svg "$H/out.svg"
	refused "stackcount: --svg $H/out.svg: a FIFO, not a regular file; give another path"
	short_run --pprof "$H/out.svg"
	refused "stackcount: --pprof $H/out.svg: a FIFO, not a regular file; give another path"
}

@test "O4: nobody's file as --svg is refused, and left as it was" {
	as_nobody sh -c "echo mine > $H/out.svg"
	short_run --svg "$H/out.svg"
	refused "stackcount: --svg $H/out.svg: owned by another user; give another path"
	[ "$(cat "$H/out.svg")" = mine ]
}

@test "O5: --svg and --pprof replace root's file by a new one, mode 0644 whatever the umask" {
	local f=$BATS_TEST_TMPDIR/out.svg p=$BATS_TEST_TMPDIR/out.pb.gz
	echo old > "$f"
	chmod 600 "$f"
	ln "$f" "$BATS_TEST_TMPDIR/hardlink"
	umask 077
	short_run --svg "$f" --pprof "$p"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(stat -c %a "$f") $(stat -c %a "$p")" = "644 644" ]
	[ "$(head -c 5 "$f")" = "<?xml" ]
	gzip -t "$p"
	# the old file was replaced, not written through
	[ "$(cat "$BATS_TEST_TMPDIR/hardlink")" = old ]
	[ "$(ls -A "$BATS_TEST_TMPDIR" | grep -c '^\.out')" = 0 ]
}

@test "O6: a full disk is the same line for --svg and --pprof, and no file is left" {
	MNT=$BATS_TEST_TMPDIR/full
	mkdir "$MNT"
	mount -t tmpfs -o size=64k tmpfs "$MNT"
	dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null || true
	short_run --svg "$MNT/out.svg"
	refused "stackcount: cannot write $MNT/out.svg: No space left on device"
	short_run --pprof "$MNT/out.svg"
	refused "stackcount: cannot write $MNT/out.svg: No space left on device"
	[ "$(ls -A "$MNT")" = fill ]
}

@test "O7: a ';' in a comm or a symbol name cannot forge a frame of the folded output" {
	local bin='vic;tim'
	as_nobody objcopy --redefine-sym 'lib_inner=in;ner' "$H/libvictim.so"
	as_nobody mv "$H/victim" "$H/$bin"
	bounded 2 "$SC" -D 2 -U -f t:syscalls:sys_enter_getppid -- "${NOBODY[@]}" "$H/$bin" 2
	echo "status $status: $output / $stderr"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = 'vic\x3btim;_start;__libc_start_main;[unknown];main;calls;work;lib_entry;in\x3bner;lib_call;getppid 2' ]
}

@test "O8: stacksnoop -v cuts an escaped comm where an escape ends" {
	local bin=$'a\x01\x02\x03\x04\x05' lines
	as_nobody mv "$H/victim" "$H/$bin"
	bounded 2 "$SNOOP" -v -U -D 2 t:syscalls:sys_enter_getppid -- "${NOBODY[@]}" "$H/$bin" 1
	echo "status $status: $output / $stderr"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	lines=$(wc -l <<< "$output")
	[ "$(grep -c '^[0-9.]* *a\\x01\\x02    [0-9]' <<< "$output")" -eq $((lines - 1)) ]
	[ "$(grep -c '^[0-9.]* *a\\x01\\x02    [0-9]* *[0-9]* *ip: [0-9a-f]* [a-z ]*getppid$' <<< "$output")" -eq 1 ]
}

# CMD... with its standard output on /dev/full, bounded.
to_full() {
	run --separate-stderr sh -c 'exec timeout -s KILL 10 "$@" > /dev/full' sh "$@"
}

@test "O9: with standard output on /dev/full, the error alone is said" {
	to_full "$SC" -U -f t:syscalls:sys_enter_getppid -- "$W/victim" 1
	[ "$status" -eq 1 ]
	[ "$stderr" = "stackcount: cannot write the output: No space left on device" ]
	to_full "$SNOOP" -U t:syscalls:sys_enter_getppid -- "$W/victim" 1
	[ "$status" -eq 1 ]
	[ "$stderr" = "stacksnoop: cannot write the output: No space left on device" ]
	[ -z "$(leftover_probes)" ]
}

# stackcount with $@, its output into a pipe whose reader takes the first
# 4 KiB and then reads no more (it holds the pipe open: no EPIPE).  The
# output, 200 KiB, cannot all fit: the tool is writing, or stuck writing.
stuck_reader() {
	local T=$BATS_TEST_TMPDIR
	mkfifo "$T/pipe"
	{ head -c 4096 > /dev/null; touch "$T/read"; exec sleep 600; } < "$T/pipe" &
	READER_PID=$!
	"$SC" "$@" > "$T/pipe" 2> "$T/sc.err" &
	SC_PID=$!
	for ((i = 0; i < 600; i++)); do
		[ -e "$T/read" ] && return 0
		sleep 0.1
	done
	return 1
}

# The tool started in the background (SC_PID), sent $1: it ends (its
# probes removed, one by one in tracefs: seconds on a loaded machine)
# within 60 s, with status $2, saying $3 alone, and no probe left.
ended_by() {
	local i
	kill -"$1" "$SC_PID"
	for ((i = 0; i < 600; i++)); do
		kill -0 "$SC_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$SC_PID" 2>/dev/null && echo "still running 60 s after SIG$1"
	status=0
	wait "$SC_PID" || status=$?
	SC_PID=
	[ -z "${READER_PID:-}" ] || kill "$READER_PID"
	stderr=$(cat "$BATS_TEST_TMPDIR/sc.err")
	echo "status $status, stderr: $stderr"
	[ "$status" -eq "$2" ]
	[ "$stderr" = "$3" ]
	[ -z "$(leftover_probes)" ]
}

@test "O10: SIGTERM ends stackcount stuck writing to a reader that reads no more, probes removed" {
	stuck_reader --legacy -s -U "$W/manypaths:target" -- "$W/manypaths" 10
	ended_by TERM 143 "stackcount: this kernel has no kprobes to see forks with, so only $W/manypaths itself is traced, not the processes it starts
stackcount: stopped by SIGTERM before the output was complete"
}

@test "O11: SIGINT while stuck writing: --svg and --pprof, written before, are whole" {
	local f=$BATS_TEST_TMPDIR/out.svg p=$BATS_TEST_TMPDIR/out.pb.gz
	stuck_reader -s -U --svg "$f" --pprof "$p" "$W/manypaths:target" -- "$W/manypaths" 10
	ended_by INT 130 "stackcount: stopped by SIGINT before the output was complete"
	[ "$(tail -n 1 "$f")" = "</svg>" ]
	gzip -t "$p"
	[ "$(ls -A "$BATS_TEST_TMPDIR" | grep -c '^\.out')" = 0 ]
}

@test "O12: SIGTERM while attaching thousands of tracefs probes ends the start at once, quietly, none left" {
	local i st=
	# an earlier run's probes are removed in the background, under the
	# kernel's probe lock that creating ours takes: those gone first
	for ((i = 0; i < 1200; i++)); do
		pgrep -x stackcount > /dev/null || pgrep -x stacksnoop > /dev/null ||
			pgrep -f "^$W/" > /dev/null || break
		sleep 0.1
	done
	# the tool stops itself (SIGSTOP) with 100 of its probes attached, so
	# that SIGTERM comes while the other 2,000 are not, however fast the
	# machine makes them
	STACKWALK_ATTACH_STOP=100 "$SC" --legacy -D 60 'c:*' > "$BATS_TEST_TMPDIR/sc.out" \
		2> "$BATS_TEST_TMPDIR/sc.err" &
	SC_PID=$!
	for ((i = 0; i < 6000; i++)); do
		st=$(awk '{ print $3 }' "/proc/$SC_PID/stat" 2>/dev/null)
		[ "$st" = T ] && break
		sleep 0.01
	done
	[ "$st" = T ]
	[ "$(leftover_probes | grep -cF "sw_${SC_PID}_")" -lt 2000 ]
	kill -TERM "$SC_PID"
	kill -CONT "$SC_PID"
	ended_by TERM 143 ""
	[ "$(cat "$BATS_TEST_TMPDIR/sc.out")" = "" ]
}
