#!/usr/bin/env bats
# Files and processes of another user (nobody) that try to hang, spin,
# crash or fool root's stackcount and stacksnoop.  Every attack must leave
# the tool ending within its -D plus 2 s (timeout -s KILL is the hard
# bound, as a hung tool ignores SIGTERM), printing its counts, saying which
# file it skipped in one line, and printing no control byte.

load helpers
load nobody

SNOOP=$TOP/build/stacksnoop

setup() {
	nobody_home
}

teardown() {
	exec 8>&- 9>&-
	[ -n "${NS_PID:-}" ] && kill "$NS_PID" 2>/dev/null
	[ -n "${VICTIM_PID:-}" ] && kill "$VICTIM_PID" 2>/dev/null
	[ -f "$H/jitpid" ] && rm -f "/tmp/perf-$(cat "$H/jitpid").map"
	teardown_processes
}

# Neither the output nor stderr holds a byte a terminal acts on.
no_control_bytes() {
	! printf '%s%s' "$output" "$stderr" | tr -d '\n' | LC_ALL=C grep -q '[[:cntrl:]]' || false
}

# stderr is one line, "TOOL: skipping WHAT: WHY".
one_warning() {	# TOOL WHAT WHY
	echo "stderr: $stderr"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[ "$stderr" = "$1: skipping $2: $3" ]
}

# The status of a run that was not killed, did not crash and succeeded.
finished() {
	echo "status $status"
	[ "$status" -eq 0 ]
}

# The outcome of the tool started in the background as run's: its status,
# and $BATS_TEST_TMPDIR/$1.out and .err.
collect() {
	status=0
	wait "$SC_PID" || status=$?
	SC_PID=
	output=$(cat "$BATS_TEST_TMPDIR/$1.out")
	stderr=$(cat "$BATS_TEST_TMPDIR/$1.err")
}

# $H/app: victim stripped of every symbol table but .dynsym.
stripped_app() {
	as_nobody strip --strip-all -o "$H/app" "$H/victim"
}

# $H/app with a .gnu_debuglink naming app.debug, which is then removed.
linked_app() {
	as_nobody objcopy --only-keep-debug "$H/victim" "$H/app.debug"
	stripped_app
	as_nobody objcopy --add-gnu-debuglink="$H/app.debug" "$H/app"
	as_nobody rm "$H/app.debug"
}

# stackcount -U at getppid for 3 calls of app run by nobody.
count_app() {
	bounded 2 "$SC" -D 2 -U -f t:syscalls:sys_enter_getppid -- \
		"${NOBODY[@]}" "$H/app" 3
	echo "$output"
	finished
	[[ "$output" == "app;"*";main;calls;work;lib_entry;lib_inner;lib_call;getppid 3" ]]
	no_control_bytes
}

@test "F1: a .gnu_debuglink naming a FIFO, on the probe target" {
	linked_app
	as_nobody mkfifo "$H/app.debug"
	bounded 2 "$SC" -D 2 -f -U "$H/app:work" -- "${NOBODY[@]}" "$H/app" 3
	finished
	[ "$output" = "app;_start;__libc_start_main;[unknown];main;calls;work 3" ]
	one_warning stackcount "$H/app.debug" "a FIFO, not a regular file"
	no_control_bytes
}

@test "F1: a .gnu_debuglink naming a FIFO, named at print time" {
	linked_app
	as_nobody mkfifo "$H/app.debug"
	count_app
	one_warning stackcount "$H/app.debug" "a FIFO, not a regular file"
}

@test "F1: a .gnu_debuglink of ../../dev/zero, and a symlink to it" {
	local name=../../../../../../../../../../../../../../../../dev/zero
	stripped_app
	# name, NUL padding to 4 bytes, any CRC: objcopy writes basenames only
	as_nobody sh -c "{ printf '%s' '$name'; head -c $((60 - ${#name})) /dev/zero;
		printf '\\1\\2\\3\\4'; } > '$H/link'"
	as_nobody objcopy --add-section .gnu_debuglink="$H/link" "$H/app"
	count_app
	one_warning stackcount "$H/$name" "a character device, not a regular file"

	linked_app
	as_nobody ln -s /dev/zero "$H/app.debug"
	count_app
	one_warning stackcount "$H/app.debug" "a character device, not a regular file"
}

# Section $1 of $H/app made SHT_NOBITS (8): it claims sh_size bytes, and
# none of them are in the file.
nobits_section() {
	local shoff idx
	shoff=$(readelf -h "$H/app" | awk '/Start of section headers/ { print $5 }')
	idx=$(readelf -SW "$H/app" | sed -n "s/^ *\[ *\([0-9]*\)\] $1 .*/\1/p")
	[ -n "$shoff" ] && [ -n "$idx" ]
	printf '\x08' | as_nobody dd of="$H/app" bs=1 seek=$((shoff + idx * 64 + 4)) \
		conv=notrunc status=none
	readelf -SW "$H/app" | grep -Eq "\] $1 +NOBITS "
}

# Found by make fuzz: the link's name was read from address 0 (SIGSEGV).
@test "a .gnu_debuglink and a .gnu_debugdata with no bytes in the file (SHT_NOBITS)" {
	linked_app
	as_nobody sh -c "echo x | xz > '$H/x.xz'"
	as_nobody objcopy --add-section .gnu_debugdata="$H/x.xz" "$H/app"
	nobits_section .gnu_debuglink
	nobits_section .gnu_debugdata
	count_app
	[ -z "$stderr" ]
}

# The sideband once opened what any process of another mount namespace
# mapped, whatever was traced; now only the traced processes' files are
# opened, so an unrelated process's FIFO is never touched, not even warned of.
@test "F1: a .gnu_debuglink FIFO in another user's namespace, tracing an unrelated -p" {
	linked_app
	as_nobody mkfifo "$H/app.debug"
	as_nobody mkdir "$H/ns" "$H/src"
	as_nobody mv "$H/app" "$H/app.debug" "$H/libvictim.so" "$H/src/"
	as_nobody mkfifo "$H/in"
	start_phases
	timeout -s KILL 5 "$SC" -D 3 -U -p "$PHASES_PID" t:syscalls:sys_enter_getppid \
		> "$BATS_TEST_TMPDIR/sc.out" 2> "$BATS_TEST_TMPDIR/sc.err" &
	SC_PID=$!
	wait_for '^Tracing' "$BATS_TEST_TMPDIR/sc.out"
	"${NOBODY[@]}" unshare -Urm sh -c "mount -t tmpfs tmpfs '$H/ns' &&
		cp -a '$H/src/.' '$H/ns/' && exec '$H/ns/app'" < "$H/in" > "$H/ns.out" &
	NS_PID=$!
	exec 9> "$H/in"
	echo 1 >&9
	wait_for '^done 1' "$H/ns.out"
	phase -2
	collect sc
	finished
	echo "$output" | grep -qx '    2'
	[ -z "$stderr" ]
	no_control_bytes
}

# jit 3 as $1 (root or nobody); then, as nobody, script $2 with MAP as $1,
# on its map once it has exited, before the tool prints.  jit is named on
# COMMAND's line, so its table is in before it runs (one only a script
# names gets it when it maps, maybe after its first events: counted and
# said, which these tests are not about).
jit_attack() {
	printf '%s\n' "$2" > "$H/attack.sh"
	cat > "$H/jit.sh" <<EOF
"\$1" 3 & p=\$!
echo \$p > $H/jitpid
wait \$p
rm -f /tmp/perf-\$p.map
$([ "$1" = nobody ] || echo "${NOBODY[*]}") sh $H/attack.sh /tmp/perf-\$p.map
EOF
	chmod 644 "$H/jit.sh" "$H/attack.sh"
	if [ "$1" = nobody ]; then
		bounded 3 "$SC" -D 3 -f -U "$W/jit:work" -- "${NOBODY[@]}" sh "$H/jit.sh" "$W/jit"
	else
		bounded 3 "$SC" -D 3 -f -U "$W/jit:work" -- sh "$H/jit.sh" "$W/jit"
	fi
	echo "$output"
	finished
	[ "$output" = "jit;_start;__libc_start_main;[unknown];main;[unknown];work 3" ]
	MAP=/tmp/perf-$(cat "$H/jitpid").map
	no_control_bytes
}

@test "F2: /tmp/perf-PID.map as a FIFO" {
	jit_attack nobody 'mkfifo "$1"'
	one_warning stackcount "$MAP" "a FIFO, not a regular file"
}

@test "F2: /tmp/perf-PID.map as a symlink to /dev/zero" {
	jit_attack nobody 'ln -s /dev/zero "$1"'
	one_warning stackcount "$MAP" "a symbolic link, not a regular file"
}

@test "F2: a perf map another user wrote for root's process is not believed" {
	jit_attack root 'printf "0 7fffffffffff evil\n" > "$1"'
	one_warning stackcount "$MAP" "owned by neither its process's user nor root"
}

# victim in the background as nobody, reading numbers from $H/in (fd 8).
start_victim() {
	as_nobody mkfifo "$H/in"
	"${NOBODY[@]}" "$H/victim" < "$H/in" > "$H/victim.out" &
	VICTIM_PID=$!
	exec 8> "$H/in"
}

# Cut libvictim.so after its last loaded segment: the victim runs on, and
# the .symtab and .strtab the tool read (past a 32 KiB pad) are gone.
cut_lib() {
	local type off va pa filesz rest end=0
	while read -r type off va pa filesz rest; do
		[ "$type" = LOAD ] && [ $((off + filesz)) -gt "$end" ] && end=$((off + filesz))
	done < <(readelf -lW "$H/libvictim.so")
	as_nobody truncate -s "$end" "$H/libvictim.so"
}

@test "F3: a library truncated after it was read (stackcount -i 1)" {
	start_victim
	timeout -s KILL 7 "$SC" -U -i 1 -D 5 -p "$VICTIM_PID" t:syscalls:sys_enter_getppid \
		> "$BATS_TEST_TMPDIR/sc.out" 2> "$BATS_TEST_TMPDIR/sc.err" &
	SC_PID=$!
	wait_for '^Tracing' "$BATS_TEST_TMPDIR/sc.out"
	echo 2 >&8
	wait_for '^  lib_inner' "$BATS_TEST_TMPDIR/sc.out"
	cut_lib
	echo 3 >&8
	wait_for '^done 3' "$H/victim.out"
	collect sc
	echo "$output"
	finished
	[ "$(grep -c '^  lib_inner$' <<< "$output")" -eq 2 ]
	grep -qx '    3' <<< "$output"
	[ -z "$stderr" ]
	no_control_bytes
}

@test "F3: a library truncated after it was read (system-wide stacksnoop)" {
	start_victim
	timeout -s KILL 7 "$SNOOP" -U -D 5 t:syscalls:sys_enter_getppid \
		> "$BATS_TEST_TMPDIR/sn.out" 2> "$BATS_TEST_TMPDIR/sn.err" &
	SC_PID=$!
	wait_for '^TIME' "$BATS_TEST_TMPDIR/sn.out"
	echo 1 >&8
	wait_for ' lib_inner$' "$BATS_TEST_TMPDIR/sn.out"
	cut_lib
	echo 1 >&8
	wait_for '^done' "$H/victim.out" 2
	collect sn
	finished
	[ "$(grep -c ' lib_inner$' <<< "$output")" -eq 2 ]
	[ -z "$(without_host_lines "$stderr")" ]
	no_control_bytes
}

# nobody's process maps as code a file of its own too large to read while
# nobody may change it: the cfi walker's tables (begun in a thread of
# their own before the kernel is probed) skip it, said once when the
# walker takes them.
@test "F3: a 300 MB file nobody maps as code: the unwind tables skip it, said once" {
	as_nobody truncate -s 300M "$H/big"
	"${NOBODY[@]}" /usr/bin/python3 -c '
import mmap, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC, flags=mmap.MAP_PRIVATE)
print("ready", flush=True)
time.sleep(60)' "$H/big" > "$BATS_TEST_TMPDIR/big.out" &
	VICTIM_PID=$!
	wait_for '^ready$' "$BATS_TEST_TMPDIR/big.out"
	local range
	range=$(awk -v f="$H/big" '$6 == f { print $1 }' "/proc/$VICTIM_PID/maps")
	bounded 1 "$SC" --walker cfi -D 1 -p "$VICTIM_PID" t:syscalls:sys_enter_getppid
	finished
	one_warning stackcount "/proc/$VICTIM_PID/map_files/$range" \
		"larger than 256 MiB, and users other than root can write it"
	no_control_bytes
}

@test "F4: MiniDebugInfo that decompresses to 200 MB is cut at 64 MiB" {
	stripped_app
	as_nobody sh -c "head -c 200M /dev/zero | xz -0 > '$H/bomb.xz'"
	as_nobody objcopy --add-section .gnu_debugdata="$H/bomb.xz" "$H/app"
	bounded 2 /usr/bin/time -o "$BATS_TEST_TMPDIR/rss" -f %M \
		"$SC" -D 2 -U -f t:syscalls:sys_enter_getppid -- "${NOBODY[@]}" "$H/app" 3
	finished
	[[ "$output" == "app;"*";main;calls;work;lib_entry;lib_inner;lib_call;getppid 3" ]]
	one_warning stackcount ".gnu_debugdata of $H/app" \
		"it decompresses to more than 64 MiB, or needs more to decompress"
	echo "peak RSS $(cat "$BATS_TEST_TMPDIR/rss") KB"
	[ "$(cat "$BATS_TEST_TMPDIR/rss")" -lt 100000 ]
	no_control_bytes
}

@test "F5: control bytes in symbol names and comm are escaped, text and folded" {
	local bin=$'\e[31mvictim' sym=$'\e]0;pwned\a\e[2Jinner'
	as_nobody objcopy --redefine-sym "lib_inner=$sym" "$H/libvictim.so"
	as_nobody mv "$H/victim" "$H/$bin"
	bounded 2 "$SC" -D 2 -U -f t:syscalls:sys_enter_getppid -- "${NOBODY[@]}" "$H/$bin" 2
	finished
	no_control_bytes
	[[ "$output" == '\x1b[31mvictim;'*';work;lib_entry;\x1b]0\x3bpwned\x07\x1b[2Jinner;lib_call;getppid 2' ]]
	bounded 2 "$SC" -D 2 -P -U t:syscalls:sys_enter_getppid -- "${NOBODY[@]}" "$H/$bin" 2
	finished
	no_control_bytes
	grep -qxF '  \x1b]0;pwned\x07\x1b[2Jinner' <<< "$output"
	grep -qxF '    \x1b[31mvictim [PID]' <<< "$(normalize <<< "$output")"
	bounded 2 "$SNOOP" -v -U -D 2 t:syscalls:sys_enter_getppid -- "${NOBODY[@]}" "$H/$bin" 1
	finished
	no_control_bytes
	grep -qF ' \x1b]0;pwned\x07\x1b[2Jinner' <<< "$output"
	grep -qF ' \x1b[31mvict ' <<< "$output"
}

@test "F11: a FIFO as the probe target" {
	as_nobody mkfifo "$H/fifo"
	bounded 1 "$SC" -D 1 "$H/fifo:foo"
	echo "status $status: $stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "stackcount: cannot read $H/fifo: a FIFO, not a regular file" ]
}

# The symbol layer built with UBSan, aborting at the first report.
@test "F16: an empty perf map is no undefined behaviour" {
	local srcs=() f
	# the symbol layer's sources, as the unit tests' build lists them
	for f in $(sed -n '/^SYMS_SRCS/,/[^\\]$/p' "$TOP/tests/unit/unit.mk" |
		   grep -o 'src/[a-z_]*\.c'); do
		srcs+=("$TOP/$f")
	done
	cat > "$BATS_TEST_TMPDIR/empty_map.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "procs.h"
#include "symbolize.h"

int main(void)
{
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sym_result r;
	struct symbolizer *s;
	struct procs *p;
	char path[64];
	FILE *f;
	int e;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f || fclose(f) || procs_new(&p) || symbolizer_new(&s, p))
		return 2;
	e = symbolizer_user(s, getpid(), (uintptr_t)jit, false, &r);
	unlink(path);
	printf("%d %s\n", e, r.name ? r.name : "(none)");
	return 0;
}
EOF
	gcc -std=gnu11 -g -D_GNU_SOURCE -fsanitize=undefined,nonnull-attribute \
		-fno-sanitize-recover=all \
		-I"$TOP/src" -o "$BATS_TEST_TMPDIR/empty_map" "$BATS_TEST_TMPDIR/empty_map.c" \
		"${srcs[@]}" -lelf -llzma -lz -liberty
	run "$BATS_TEST_TMPDIR/empty_map"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "-2 (none)" ]
}

@test "F8: output to a full disk: one line, non-zero status" {
	local tool name
	for tool in "$SC -D 1 -U t:syscalls:sys_enter_getppid" \
		    "$SC -D 1 -f -U t:syscalls:sys_enter_getppid -- $W/paths 1" \
		    "$SNOOP -D 1 -U t:syscalls:sys_enter_getppid"; do
		name=$(basename "${tool%% *}")
		bounded 1 sh -c "exec $tool > /dev/full"
		echo "$tool: status $status: $stderr"
		[ "$status" -eq 1 ]
		[ "$(without_host_lines "$stderr")" = "$name: cannot write the output: No space left on device" ]
	done
}

# "$@" into head -1: its status in $rc, how long it outlived head in $lag (ms).
into_head() {
	local t=$BATS_TEST_TMPDIR
	{ timeout -s KILL 10 "$@"; echo $? > "$t/rc"; date +%s%N > "$t/tool_end"; } |
		{ head -1 > "$t/head.out"; date +%s%N > "$t/head_end"; }
	rc=$(cat "$t/rc")
	lag=$((($(cat "$t/tool_end") - $(cat "$t/head_end")) / 1000000))
	echo "$*: status $rc, ended $lag ms after head; head read: $(cat "$t/head.out")"
}

@test "F8: | head -1 ends the tool within 1 s of head" {
	start_phases
	into_head "$SNOOP" -p "$PHASES_PID" -U t:syscalls:sys_enter_getppid
	[ "$rc" -eq 0 ]
	[ "$lag" -lt 1000 ]
	into_head "$SC" -i 1 -U t:syscalls:sys_enter_getppid
	[ "$rc" -eq 0 ]
	[ "$lag" -lt 1000 ]
}
