#!/usr/bin/env bats
# Memory against other users' files: what a file that users other than
# root can write makes root's tool hold is bounded, file by file (only the
# parts it uses are read) and all together (--file-memory), and what did
# not fit is said in one line at the end.

load helpers
load nobody

setup() {
	nobody_home
}

teardown() {
	[ -f "$H/jitpid" ] && rm -f "/tmp/perf-$(cat "$H/jitpid").map"
	teardown_processes
}

# run CMD... (bounded), and its peak resident set in $peak_kb: /usr/bin/time
# gives the largest of the tool's and its COMMAND's processes'.
run_peak() {
	run --separate-stderr /usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/peak" \
		timeout -s KILL 120 "$@"
	peak_kb=$(tail -1 "$BATS_TEST_TMPDIR/peak")
	echo "status $status, peak $peak_kb kB"
	echo "output: $output"
	echo "stderr: $stderr"
}

# COMMAND for stackcount: nobody runs the script $H/$1.
nobody_script() {
	chmod 644 "$H/$1"
	echo "${NOBODY[@]}" sh "$H/$1"
}

@test "six sparse 250 MB executables of nobody's: peak RSS under 64 MB, stacks exact" {
	local cmd=
	for i in 1 2 3 4 5 6; do
		as_nobody cp "$H/victim" "$H/victim$i"
		as_nobody truncate -s 250M "$H/victim$i"
		cmd+="$H/victim$i 2; "
	done
	# each named on the command line, so its table is in before it runs
	# (one that only a script names gets it when it maps, maybe after its
	# first events: counted and said, which this test is not about)
	run_peak "$SC" -f -U "$H/libvictim.so:lib_entry" -- "${NOBODY[@]}" sh -c "$cmd"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	diff -u - <(printf '%s\n' "$output") <<'EOF'
victim1;_start;__libc_start_main;[unknown];main;calls;work;lib_entry 2
victim2;_start;__libc_start_main;[unknown];main;calls;work;lib_entry 2
victim3;_start;__libc_start_main;[unknown];main;calls;work;lib_entry 2
victim4;_start;__libc_start_main;[unknown];main;calls;work;lib_entry 2
victim5;_start;__libc_start_main;[unknown];main;calls;work;lib_entry 2
victim6;_start;__libc_start_main;[unknown];main;calls;work;lib_entry 2
EOF
	# each file was read whole and kept: 1.5 GB
	[ "$peak_kb" -lt 65536 ]
}

@test "a file past --file-memory: its frames [unknown], the others named, one line" {
	# 2 MiB of MiniDebugInfo to read: more than the whole room
	as_nobody sh -c "head -c 2M /dev/zero > '$H/blob' &&
		objcopy --add-section .gnu_debugdata='$H/blob' '$H/victim' '$H/big'"
	echo "exec $H/big 2" > "$H/run.sh"
	# the command held at its exec, as on 4.18-5.16, so that its
	# library's table is in before its code runs (its loader cannot be
	# read ahead: it does not fit)
	STACKWALK_NO_FIND_VMA=1 STACKWALK_NO_VMA_LISTS=1 run_peak "$SC" --file-memory 1 -f -U "$H/libvictim.so:lib_entry" -- \
		$(nobody_script run.sh)
	[ "$status" -eq 0 ]
	# big's _start, main, calls and work
	[ "$stderr" = "stackcount: 1 file that users other than root can write did not fit in --file-memory 1 MiB, which left 4 frames [unknown]; give more" ]
	diff -u - <(printf '%s\n' "$output") <<'EOF'
big;[unknown];__libc_start_main;[unknown];[unknown];[unknown];[unknown];lib_entry 2
EOF
}

@test "--file-memory 0 is refused in one line" {
	run --separate-stderr "$SC" --file-memory 0 -U t:syscalls:sys_enter_getppid
	[ "$status" -eq 2 ]
	[ "$stderr" = "stackcount: invalid --file-memory '0'; give MiB for other users' files, 1 to 4096" ]
	[ -z "$output" ]
}

# jit 100000 run by nobody, whose map nobody then makes 100 MB (6,666,666
# more lines of 15 bytes) with jit's own line first or last ($1).  Its
# many calls keep it alive long enough for the tool to learn whose it is
# (a perf map is believed only if its process's user or root wrote it):
# with 3 it could end first under load, and its map was skipped.
jit_big_map() {
	cat > "$H/grow.sh" <<'EOF'
line=$(cat "$1")
rm -f "$1"
{
	if [ "$2" = first ]; then echo "$line"; fi
	yes '0 1 jit_filler' | head -n 6666666
	if [ "$2" = last ]; then echo "$line"; fi
} > "$1"
EOF
	# jit named on COMMAND's line: its table is in before it runs
	cat > "$H/jit.sh" <<EOF
"\$1" 100000 & p=\$!
echo \$p > $H/jitpid
wait \$p
sh $H/grow.sh /tmp/perf-\$p.map $1
EOF
	run_peak "$SC" -f -U "$W/jit:work" -- $(nobody_script jit.sh) "$W/jit"
	[ "$status" -eq 0 ]
	[ "$(wc -l < "/tmp/perf-$(cat "$H/jitpid").map")" -eq 6666667 ]
	# the map read whole took 450-530 MB; 64 MiB of it fit
	[ "$peak_kb" -lt 131072 ]
}

@test "a 100 MB perf map of nobody's: peak RSS under 128 MB, a name in the part read is exact" {
	jit_big_map first
	[ "$output" = "jit;_start;__libc_start_main;[unknown];main;jitted_hot_loop;work 100000" ]
	[ "$stderr" = "stackcount: 1 perf map that users other than root can write did not fit in --file-memory 64 MiB, which left 0 frames [unknown]; give more" ]
}

@test "a 100 MB perf map of nobody's: a name past --file-memory is [unknown], and counted" {
	jit_big_map last
	[ "$output" = "jit;_start;__libc_start_main;[unknown];main;[unknown];work 100000" ]
	[ "$stderr" = "stackcount: 1 perf map that users other than root can write did not fit in --file-memory 64 MiB, which left 1 frame [unknown]; give more" ]
}
