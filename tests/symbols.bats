#!/usr/bin/env bats
# Every frame that can be named is named correctly, whatever happened to
# the binary or the process; anything else is [unknown], never a wrong name.

load helpers

setup() {
	D=$BATS_TEST_TMPDIR
}

# the end-of-run line for 3 frames whose file had gone with its process
GONE3="stackcount: 3 frames are [unknown]: their binary, deleted or replaced at its path (or run from a memfd), could only be read through its process, which had ended before the kernel's record of its mapping was read"

teardown() {
	teardown_processes
	# lazily: the tool's detaching child may still map a file of it
	[ -n "${MNT:-}" ] && umount -l "$MNT" 2>/dev/null
	[ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
	# the jit workload's maps only: other processes' are not ours to remove
	grep -l jitted_hot_loop /tmp/perf-*.map 2>/dev/null | xargs -r rm -f
}

folded_via_b() {	# BINARY [ARGS...]: stackcount -f on via_b of BINARY
	run --separate-stderr "$SC" -f -U "$1:via_b" -- "$@"
}

# A copy of paths (or of $2) with every symbol table stripped; its debug
# file beside.
stripped() {
	cp "${2:-$W/paths}" "$D/$1"
	objcopy --only-keep-debug "$D/$1" "$D/$1.debug"
	strip --strip-all "$D/$1"
	! nm "$D/$1" 2>/dev/null | grep -q via_b || false
}

@test "a stripped binary without debug information: [unknown], module+offset with -v" {
	stripped bare
	rm "$D/bare.debug"
	run --separate-stderr "$SC" -U -v t:syscalls:sys_enter_getppid -- "$D/bare" 1
	echo "$output" | grep -Eq '^  [0-9a-f]+ +cfi +\[unknown\] \(bare\+0x[0-9a-f]+\)$'
	run --separate-stderr "$SC" -U "$D/bare:via_b"
	[ "$status" -eq 1 ]
	[ "$stderr" = "stackcount: no function matches \"via_b\" in $D/bare, which is stripped, and no debug file of it was found; install its debug symbols, or set DEBUGINFOD_URLS to a debuginfod server that has them" ]
}

@test "debug file by build-id: attaching and naming through it" {
	stripped byid
	id=$(readelf -n "$D/byid" | awk '/Build ID/ { print $3 }')
	mkdir -p "$D/debug/.build-id/${id:0:2}"
	mv "$D/byid.debug" "$D/debug/.build-id/${id:0:2}/${id:2}.debug"
	STACKWALK_DEBUG_DIR=$D/debug folded_via_b "$D/byid" 2
	[ "$status" -eq 0 ]
	[ "$output" = "byid;_start;__libc_start_main;[unknown];main;via_b 4" ]
}

@test "debug file by .gnu_debuglink, checked by its CRC" {
	stripped bylink
	objcopy --add-gnu-debuglink="$D/bylink.debug" "$D/bylink"
	folded_via_b "$D/bylink" 2
	[ "$status" -eq 0 ]
	[ "$output" = "bylink;_start;__libc_start_main;[unknown];main;via_b 4" ]
	# a debug file that is not the one linked (its CRC differs) is not used
	echo x >> "$D/bylink.debug"
	run --separate-stderr "$SC" -U "$D/bylink:via_b"
	[ "$status" -eq 1 ]
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# elfutils' debuginfod serving the files of directory $1 on $PORT, once it
# has indexed debug file $2 (bounded: the scan of one file takes moments).
start_debuginfod() {
	local i id
	PORT=$(free_port)
	debuginfod -F "$1" -p "$PORT" -d "$D/index.sqlite" -t 0 -g 0 \
		> "$D/debuginfod.log" 2>&1 &
	SERVER_PID=$!
	id=$(readelf -n "$2" | awk '/Build ID/ { print $3 }')
	for ((i = 0; i < 300; i++)); do
		# a cache of its own per try: a miss is remembered for 10 minutes
		DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$D/ready$i \
			debuginfod-find debuginfo "$id" > /dev/null 2>&1 && return 0
		sleep 0.1
	done
	cat "$D/debuginfod.log"
	return 1
}

@test "debug file from a debuginfod server only: probed and named through it, cached as gdb caches it" {
	# static: glibc's own functions are named from the same debug file
	stripped remote "$W/static/paths"
	mkdir "$D/served"
	mv "$D/remote.debug" "$D/served/"
	start_debuginfod "$D/served" "$D/served/remote.debug"
	export DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$D/cache
	folded_via_b "$D/remote" 2
	[ "$status" -eq 0 ]
	[ "$output" = "remote;_start;__libc_start_main;__libc_start_call_main;main;via_b 4" ]
	[ -z "$stderr" ]
	id=$(readelf -n "$D/remote" | awk '/Build ID/ { print $3 }')
	cmp "$D/cache/$id/debuginfo" "$D/served/remote.debug"
	# from the cache, as gdb and perf would take it, with the server gone
	kill "$SERVER_PID"
	wait "$SERVER_PID" || true
	SERVER_PID=
	folded_via_b "$D/remote" 1
	[ "$status" -eq 0 ]
	[ "$output" = "remote;_start;__libc_start_main;__libc_start_call_main;main;via_b 2" ]
	# off: not asked, so not found
	run --separate-stderr "$SC" --no-debuginfod -U "$D/remote:via_b"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no function matches \"via_b\" in $D/remote, which is stripped"* ]]
}

@test "debuginfod down: the run works, and one line says which names are missing and why" {
	stripped remote "$W/static/paths"
	export DEBUGINFOD_URLS=http://127.0.0.1:$(free_port) DEBUGINFOD_CACHE_PATH=$D/cache
	run --separate-stderr "$SC" -f -U t:syscalls:sys_enter_getppid -- "$D/remote" 1
	[ "$status" -eq 0 ]
	# the stack walked whole, its frames unnamed (static: no .dynsym)
	[ "$output" = "remote;[unknown];[unknown];[unknown];[unknown];[unknown];[unknown] 1" ]
	[ "$stderr" = "stackcount: the debug symbols of 1 binary ($D/remote) were not fetched, so its frames may show as [unknown]: the servers of DEBUGINFOD_URLS could not be asked: Connection refused; fix that, or pass --no-debuginfod not to ask" ]
}

@test "debuginfod that never answers: each fetch bounded, a progress line on a terminal, then one line" {
	stripped remote "$W/static/paths"
	PORT=$(free_port)
	# accepts, and says nothing
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
print("listening", flush=True)
c = [s.accept() for _ in range(8)]; time.sleep(600)' "$PORT" > "$D/server.out" &
	SERVER_PID=$!
	wait_for '^listening' "$D/server.out"
	export DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$D/cache DEBUGINFOD_TIMEOUT=1
	script -qec "$SC -f -U t:syscalls:sys_enter_getppid -- $D/remote 1" /dev/null > "$D/tty"
	# the line while it waited, wiped before the stacks
	grep -aq "^stackcount: fetching the debug file of $D/remote from debuginfod\.\.\."$'\r\033\[K'"remote;" "$D/tty"
	grep -aq "^stackcount: the debug symbols of 1 binary ($D/remote) were not fetched, so its frames may show as \[unknown\]: a fetch took longer than 1 s; fix that" "$D/tty"
}

# Fedora's MiniDebugInfo: the symbols .dynsym lacks, xz-compressed inside
@test "MiniDebugInfo (.gnu_debugdata)" {
	cp "$W/paths" "$D/mini"
	nm -D "$D/mini" --format=posix --defined-only | awk '{ print $1 }' | sort > "$D/dyn"
	nm "$D/mini" --format=posix --defined-only | awk '$2 ~ /[Tt]/ { print $1 }' | sort > "$D/funcs"
	comm -13 "$D/dyn" "$D/funcs" > "$D/keep"
	objcopy --only-keep-debug "$D/mini" "$D/m.debug"
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$D/keep" "$D/m.debug" "$D/m.syms"
	strip --strip-all -R .comment "$D/mini"
	xz -c "$D/m.syms" > "$D/m.xz"
	objcopy --add-section .gnu_debugdata="$D/m.xz" "$D/mini"
	! nm "$D/mini" 2>/dev/null | grep -q via_b || false
	folded_via_b "$D/mini" 3
	[ "$status" -eq 0 ]
	[ "$output" = "mini;_start;__libc_start_main;[unknown];main;via_b 6" ]
}

@test "JIT-compiled code named from /tmp/perf-PID.map" {
	run --separate-stderr "$SC" -f -U "$W/jit:work" -- "$W/jit" 3
	[ "$status" -eq 0 ]
	[ "$output" = "jit;_start;__libc_start_main;[unknown];main;jitted_hot_loop;work 3" ]
	# without the map, the JIT frame is [unknown], not a neighbour's name
	run --separate-stderr "$SC" -f -U "$W/jit:work" -- sh -c '"$0" 3 & p=$!; wait $p; rm -f /tmp/perf-$p.map' "$W/jit"
	[ "$output" = "jit;_start;__libc_start_main;[unknown];main;[unknown];work 3" ]
}

@test "C++: namespaced, templated and overloaded frames, exactly and apart" {
	run --separate-stderr "$SC" -f -U "$W/cxx:work" -- "$W/cxx"
	[ "$status" -eq 0 ]
	diff -u - <(echo "$output") <<'EOF2'
cxx;_start;__libc_start_main;[unknown];main;shapes::Box<double>::open(double);shapes::twice(double);work 1
cxx;_start;__libc_start_main;[unknown];main;shapes::Box<int>::open(int);shapes::twice(int);work 1
cxx;_start;__libc_start_main;[unknown];main;shapes::Widget::poke(char const*);shapes::Box<int>::open(int);shapes::twice(int);work 1
EOF2
	run --separate-stderr "$SC" -f -U --no-demangle "$W/cxx:work" -- "$W/cxx"
	echo "$output" | grep -q ';_ZN6shapes3BoxIdE4openEd;_ZN6shapes5twiceEd;work 1$'
}

@test "C++: names of 1130 and 1135 characters print whole, and stay apart" {
	id=$(printf 'n%.0s' $(seq 544))ok
	long="shapes::Long<shapes::$id>::open(shapes::$id"
	[ "${#long}" -eq 1129 ]
	run --separate-stderr "$SC" -f -U "$W/cxx:work" -- "$W/cxx" long
	[ "$status" -eq 0 ]
	diff -u <(printf 'cxx;_start;__libc_start_main;[unknown];main;%s);work 1\n' "$long"
		  printf 'cxx;_start;__libc_start_main;[unknown];main;%s, int);work 1\n' "$long") <(echo "$output")
	run --separate-stderr "$TOP/build/stacksnoop" -U "$W/cxx:work" -- "$W/cxx" long
	[ "$status" -eq 0 ]
	diff -u <(printf 'r0: %s)\nr0: %s, int)\n' "$long" "$long") \
		<(echo "$output" | sed -nE 's/^[0-9.]+ +(r0): [0-9a-f]+ /\1: /p')
}

# Hundreds of processes that exec and exit while tracing: every one named
# from the kernel's mmap records, none from a late /proc read.
@test "an exec storm: every short-lived process fully named" {
	run --separate-stderr "$SC" -f -U "$W/paths:via_b" -- \
		sh -c "for i in \$(seq 300); do $W/paths 1; done"
	[ "$status" -eq 0 ]
	[ "$output" = "paths;_start;__libc_start_main;[unknown];main;via_b 600" ]
}

# stackcount opens the files that name the stacks counted by 0.5, 1, 2...
# s into tracing (src/stackcount.c: name_ahead), reading each process's
# maps then, system-wide; a library mapped after that is named from the
# kernel's mmap record.  -P: the workload's stacks apart from others'.
@test "a library mapped after the stacks were named ahead: every frame named" {
	mkfifo "$D/in"
	"$W/latelib" "$W/libvictim.so" < "$D/in" > "$D/out" &
	PHASES_PID=$!
	exec 7> "$D/in"
	start_sc --debug -P -U t:syscalls:sys_enter_getppid
	echo 3 >&7
	wait_for '^done 3' "$D/out"
	# a pass begun after the workload's stack was counted: the second
	# one said from now (the first may have read the counts before)
	n=$(grep -c 'stacks opened, [0-9]* ms into tracing' "$BATS_TEST_TMPDIR/sc.err" || true)
	wait_for 'stacks opened, [0-9]* ms into tracing' "$BATS_TEST_TMPDIR/sc.err" $((n + 2))
	echo 0 >&7
	wait_for '^done 0' "$D/out"
	stop_sc
	exec 7>&-
	sed -n '/^Tracing/,/^Detaching/p' "$BATS_TEST_TMPDIR/sc.out" |
		awk -v RS= "/latelib \\[$PHASES_PID\\]/ { print; print \"\" }" |
		sed "s/\\[$PHASES_PID\\]/[PID]/" > "$D/mine"
	diff -u - "$D/mine" <<'EOF2'
  getppid
  lib_call
  lib_inner
  lib_entry
  main
  [unknown]
  __libc_start_main
  _start
    latelib [PID]
    1

  getppid
  ask
  main
  [unknown]
  __libc_start_main
  _start
    latelib [PID]
    3

EOF2
}

# The process sees the binary at a path that does not exist out here.
@test "a binary run through a private mount namespace (bind-mounted copy)" {
	mkdir -p "$D/src" "$D/view"
	cp "$W/paths" "$D/src/app"
	run --separate-stderr "$SC" -f -U "$D/src/app:via_b" -- unshare -m \
		sh -c "mount --bind $D/src $D/view && exec $D/view/app 2"
	[ "$status" -eq 0 ]
	[ "$output" = "app;_start;__libc_start_main;[unknown];main;via_b 4" ]
	[ ! -e "$D/view/app" ]
}

@test "a binary only a private mount namespace has (tmpfs), named while it runs" {
	mkfifo "$D/in"
	unshare -m sh -c "mount -t tmpfs tmpfs /mnt && cp $W/phases /mnt/ph && exec /mnt/ph" \
		< "$D/in" > "$D/out" &
	PHASES_PID=$!
	exec 7> "$D/in"
	start_sc -U -p "$PHASES_PID" t:syscalls:sys_enter_getppid
	echo -2 >&7
	echo 1 >&7
	wait_for '^done' "$D/out"
	stop_sc
	[ ! -e /mnt/ph ]
	exec 7>&-
	diff -u - <(sed -n '3,$p' "$BATS_TEST_TMPDIR/sc.out") <<'EOF2'
  getppid
  ask
  main
  [unknown]
  __libc_start_main
  _start
    2

Detaching...
EOF2
}

# A program run from a sealed memfd (as container runtimes run theirs) is
# mapped from "/memfd:NAME (deleted)", a file no path reaches: named and
# walked through /proc/PID/map_files, the same stack as from its file.
@test "a program run from a sealed memfd: every frame named, as from its file" {
	cat > "$D/memfd.py" <<'PY'
import fcntl, os, sys
fd = os.memfd_create("sealed", os.MFD_ALLOW_SEALING)
with open(sys.argv[1], "rb") as f:
    os.write(fd, f.read())
fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK |
            fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
os.dup2(fd, 9)
os.execv("/proc/self/fd/9", [sys.argv[1]] + sys.argv[2:])
PY
	# No path reaches the memfd: its table and its names come with the
	# kernel's record of the mapping, read while the process lives.  The
	# events before that record are walked by frame pointers (which paths
	# keeps: the same stack), counted and said; if it came only after the
	# process had exited too, the memfd's frames cannot be named.  Each
	# run is one of those, exactly; most name them, one of five at least
	# must.
	local late="events were found by frame pointers where unwind tables were not loaded yet (a process, or a library, that came after its maps were read), so callers of code without frame pointers may be missing or wrong"
	local named="9;_start;__libc_start_main;[unknown];main;syscalls;getppid 3"
	local names=0
	for i in 1 2 3 4 5; do
		run --separate-stderr "$SC" -f -U t:syscalls:sys_enter_getppid -- \
			/usr/bin/python3.11 "$D/memfd.py" "$W/paths" 3
		echo "status $status, output: $output, stderr: $stderr"
		[ "$status" -eq 0 ]
		# the kernel names a process exec'd from /proc/self/fd/9 "9"
		case "$stderr" in
		"") [ "$output" = "$named" ] ;;
		"the user frames of "[12]" $late") [ "$output" = "$named" ] ;;
		"the user frames of 3 $late") [ "$output" = "$named" ] ;;
		# its three frames unnamed, and said why
		"the user frames of 3 $late"$'\n'"$GONE3")
			[ "$output" = "9;[unknown];__libc_start_main;[unknown];[unknown];[unknown];getppid 3" ] ;;
		*) false ;;
		esac
		[ "$output" != "$named" ] || names=$((names + 1))
	done
	[ "$names" -gt 0 ]
}

# ext4 gives a freed inode's number to the next file it creates: a
# program deleted once it has run, another copied in after it, gets the
# same (device, inode), told apart only by the inode's generation.  Each
# must be named as itself (the first, deleted and gone when the stacks
# are named, cannot be: [unknown], never the second's names), and the
# second walked by its own table or none, never the first's.
@test "a file given a deleted program's inode number (ext4): each named as itself" {
	MNT=$D/mnt
	mkdir "$MNT"
	truncate -s 16M "$D/fs.img"
	mkfs.ext4 -q "$D/fs.img"
	mount -o loop "$D/fs.img" "$MNT"
	cp "$W/paths" "$MNT/a"
	cat > "$D/run.sh" <<'EOF'
stat -c %i "$1" > "$4"
"$1" 2
rm "$1"
cp "$2" "$3"
stat -c %i "$3" >> "$4"
"$3" 1
EOF
	run --separate-stderr "$SC" -f -U t:syscalls:sys_enter_getppid -- \
		sh "$D/run.sh" "$MNT/a" "$W/sysc" "$MNT/b" "$D/inodes"
	echo "status $status, inodes $(cat "$D/inodes"), stderr: $stderr"
	[ "$status" -eq 0 ]
	# the case this is about: one inode number, two files
	[ "$(sort -u "$D/inodes" | wc -l)" -eq 1 ]
	# a's own frames: not nameable once a is gone, and never b's names
	[ "$(echo "$output" | grep '^a;' | grep -cE ';(main|syscalls|from_a|from_b|raw_getppid)[; ]')" -eq 0 ]
	[ "$(echo "$output" | awk '/^a;/ { n += $NF } END { print n }')" -eq 2 ]
	# b's: its own names.  Its first events may come before its table
	# (walked by frame pointers then, which sysc keeps to main) or find its
	# memory map being changed: what lies beyond main differs, said on
	# stderr; main and up are the same either way
	diff -u - <(echo "$output" | grep '^b;' | sed -E 's/^b;.*;main;/b;...;main;/' |
		LC_ALL=C sort) <<'EOF'
b;...;main;from_a;raw_getppid 1
b;...;main;from_b;raw_getppid 2
EOF
	# a's three frames [unknown], said why
	echo "$stderr" | grep -qxF "$GONE3"
	echo "$stderr" | while IFS= read -r line; do
		case "$line" in
		"$GONE3") ;;
		"" | "the user frames of "[123]" events were found by frame pointers where unwind tables were not loaded yet"*) ;;
		[123]" events had user frames found by frame pointers: their process's memory map was being changed"*) ;;
		[123]" user stacks end early: the walk met CFI it cannot follow"*) ;;
		*) echo "unexpected: $line"; false ;;
		esac
	done
}

# labels: assembly whose symbols have no size (a function without .size,
# a label without .type), and a label inside a sized function before its
# call.  gdb names the first two as far as the next symbol and the call
# in the sized one by the function; so must every walker's frames.
@test "symbols without a size (hand-written assembly): named as gdb names them" {
	"$TOP/tests/gdb_bt.sh" --names target -- "$W/labels" 2>/dev/null |
		sed -E 's/[0-9a-f]+://g; s/ [^ ]*$//' | sort -u > "$D/gdb"
	[ "$(cat "$D/gdb")" = "target nosize_fn bare_label sized_fn main" ]
	for w in getstack fp; do
		run --separate-stderr "$SC" -f -U --walker "$w" "$W/labels:target" -- "$W/labels"
		[ "$status" -eq 0 ]
		[ "$output" = "labels;[unknown];main;sized_fn;bare_label;nosize_fn;target 2" ]
	done
}

# paths calls getppid through its PLT: a probe on the entry, by the name
# gdb gives it, and that frame named so, whatever the walker.
@test "a PLT entry: probed and named as gdb names it (getppid@plt)" {
	"$TOP/tests/gdb_bt.sh" --names 'getppid@plt' -- "$W/paths" 1 2>/dev/null |
		sed -E 's/[0-9a-f]+://g; s/ [^ ]*$//' > "$D/gdb"
	[ "$(cat "$D/gdb")" = "getppid@plt syscalls main" ]
	for w in cfi getstack fp; do
		run --separate-stderr "$SC" -f -U --walker "$w" "$W/paths:getppid@plt" -- "$W/paths" 3
		echo "$w: $output $stderr"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$output" == "paths;"*";main;syscalls;getppid@plt 3" ]]
	done
}

# glibc calls its own ifuncs (strrchr, memcpy...) through PLT entries whose
# GOT slot an IRELATIVE relocation fills: no symbol, only the resolver's
# address, which gdb and objdump show as *ABS*+0xADDEND@plt.
@test "IRELATIVE PLT entries (glibc calling its own ifuncs): probed, and named as gdb names them" {
	run --separate-stderr "$SC" --json -U 'c:*ABS*@plt' -- "$W/paths" 1
	[ "$status" -eq 0 ]
	jq -r '.stacks[].frames[0] | "\(.name) \(.module_offset) \(.path)"' <<< "$output" > "$D/ours"
	cat "$D/ours"
	[ -s "$D/ours" ]
	while read -r name off path; do
		[[ "$name" == '*ABS*+0x'*'@plt' ]]
		gdb -batch -ex "info symbol $off" "$path" 2>/dev/null | tail -1 > "$D/gdb"
		cat "$D/gdb"
		[[ "$(cat "$D/gdb")" == "$name in section .plt of "* ]]
	done < "$D/ours"
}
