#!/usr/bin/env bash
# make bench: what stacks cost per event, at start and in memory, measured
# side by side in one run against the floor and bpftrace.  Every figure is
# the median of ROUNDS alternating runs, [min-max] beside it.
set -u
cd "$(dirname "$0")/../.."
B=build
SC=$B/stackcount
SPIN=$B/tests/bench/spin
FLOOR=$B/tests/bench/floor
MEASURE=$B/tests/bench/measure
SPAWNER=$B/tests/workloads/spawner
# Debian's python3.11 itself (a pyenv shim on PATH would be a script): no
# frame pointers, the stack a CFI walk is for
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=
ROUNDS=${ROUNDS:-7}
N=${N:-200000}
TP=syscalls:sys_enter_getppid
TMP=$(mktemp -d)
BPFTRACE=$(command -v bpftrace || true)

declare -A runs	# config -> space-separated values
declare -A pyproc	# name -> pid of a waiting python3.11 (start-up runs)

# The kernel times every BPF program run while this is on: the programs'
# own cost per event, apart from the probe's, which all tracers share.
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$STATS_WAS; rm -rf "$TMP"
	[ ${#pyproc[@]} = 0 ] || kill "${pyproc[@]}" 2> /dev/null' EXIT

last_prog_id() {
	bpftool prog show -j | python3 -c 'import json, sys
print(max([p["id"] for p in json.load(sys.stdin)] or [0]))'
}

# ns per run of the busiest program loaded after id $1, from progs.json,
# which the workload wrote while the tracer was still attached.  The kernel
# times a run around the program it enters (__bpf_prog_run in
# include/linux/filter.h); a tail call jumps into the next program without
# coming back there, so the cfi walker's tail-called walk programs keep a
# run_cnt of 0 and their time is in the first program's: the figure is the
# whole chain's, per event, like the other walkers' one program's.
prog_ns() {
	python3 - "$1" "$TMP/progs.json" <<'PY'
import json, sys
try:
    progs = [p for p in json.load(open(sys.argv[2])) if p["id"] > int(sys.argv[1])
             and p.get("run_cnt", 0) > 0]
    p = max(progs, key=lambda p: p["run_cnt"])
    print("%.1f" % (p["run_time_ns"] / p["run_cnt"]))
except (OSError, ValueError, KeyError):
    print("nan")
PY
}

workload() {	# KIND [CALLS]: spin getppid|call, or py: spin.py getppid
	case $1 in
	py) echo "$PY tests/bench/spin.py getppid ${2:-$N}" ;;
	*) echo "$SPIN $1 ${2:-$N}" ;;
	esac
}

# spin_under KIND CMD...: CMD runs the workload (as SPIN_CMD); its ns/call
spin_under() {
	local kind=$1
	shift
	rm -f "$TMP/ns"
	SPIN_CMD="$(workload "$kind")" "$@" > /dev/null 2> "$TMP/err" < /dev/null
	if [ -s "$TMP/ns" ]; then cat "$TMP/ns"; else echo nan; fi
}

spin_cmd() {	# the workload, its one line of output kept apart
	echo "sh -c 'exec \$SPIN_CMD > $TMP/ns'"
}

export SPIN_AT_END="bpftool prog show -j > $TMP/progs.json"

per_event() {	# NAME KIND TRACER...
	local name=$1 kind=$2 v id
	shift 2
	id=$(last_prog_id)
	rm -f "$TMP/progs.json"
	v=$(spin_under "$kind" sh -c "$* -- $(spin_cmd)")
	runs[$name]="${runs[$name]:-} $v"
	runs[$name.prog]="${runs[$name.prog]:-} $(prog_ns "$id")"
}

baseline() {	# NAME KIND
	local v
	v=$(SPIN_AT_END= SPIN_CMD="$(workload "$2")" sh -c "exec \$SPIN_CMD" 2>/dev/null)
	runs[$1]="${runs[$1]:-} $v"
}

bpftrace_event() {	# NAME KIND PROGRAM
	local name=$1 kind=$2 prog=$3 v id
	id=$(last_prog_id)
	rm -f "$TMP/progs.json"
	# the workload's line comes first; bpftrace prints its maps at exit
	v=$("$BPFTRACE" -q -e "$prog" -c "$(workload "$kind")" 2> /dev/null < /dev/null |
		grep -m1 -E '^[0-9.]+$')
	runs[$name]="${runs[$name]:-} ${v:-nan}"
	runs[$name.prog]="${runs[$name.prog]:-} $(prog_ns "$id")"
}

# A tracer of an earlier row may still be detaching in the background
# (a child waits out RCU grace periods, holding the kernel's tracing
# locks that attaching takes): the next start would be timed waiting for
# it.  At most 5 s.
settle() {
	local i
	for i in $(seq 100); do
		pgrep -x stackcount > /dev/null || pgrep -x stacksnoop > /dev/null ||
			pgrep -x bpftrace > /dev/null || return 0
		sleep 0.05
	done
}

# A light load of getppid calls while start-up is measured, so that
# stacks are read and named at the end, as in real use.  CMD's output is
# left in $TMP/ss.out.
start_stop() {	# NAME CMD...: wall minus one second, and peak RSS
	local name=$1 out
	shift
	settle
	( for i in $(seq 40); do SPIN_AT_END= $SPIN getppid 50 > /dev/null; sleep 0.02; done ) &
	local load=$!
	"$MEASURE" "$@" > "$TMP/ss.out" 2> "$TMP/m" < /dev/null
	wait $load
	out=$(tail -n1 "$TMP/m")
	runs[$name.ms]="${runs[$name.ms]:-} $(awk '{ printf "%.1f", $1 - 1000 }' <<< "$out")"
	runs[$name.rss]="${runs[$name.rss]:-} $(awk '{ print $2 }' <<< "$out")"
}

# -- COMMAND must run as fast as untraced: 300 execs of /bin/true timed
# inside the command (ms), so that the tool's own start is not counted.
EXECS_CMD="sh -c 's=\$(date +%s%N); i=0; while [ \$i -lt 300 ]; do /bin/true; i=\$((i + 1)); done; echo \$(( (\$(date +%s%N) - s) / 1000000 )) > $TMP/execs'"
execs() {	# NAME [ENV=VALUE] [TRACER...]: one run's ms
	local name=$1
	shift
	rm -f "$TMP/execs"
	env "$@" sh -c "$EXECS_CMD" > /dev/null 2>&1 < /dev/null
	runs[$name]="${runs[$name]:-} $(cat "$TMP/execs" 2> /dev/null || echo nan)"
}

# A python3.11 that ran CODE (something that maps libstdc++), then calls
# getppid every 10 ms: the -p process whose unwind tables the cfi walker
# builds at start, with stacks to read and name at the end.
py_proc() {	# NAME CODE: its pid in pyproc[NAME], or 1 if CODE failed
	local pid
	"$PY" -c "$2
import os, time
print('ready', flush=True)
while True:
    os.getppid()
    time.sleep(0.01)" > "$TMP/$1.ready" 2> /dev/null < /dev/null &
	pid=$!
	until grep -q ready "$TMP/$1.ready"; do
		kill -0 $pid 2> /dev/null || { wait $pid; return 1; }
		sleep 0.1
	done
	pyproc[$1]=$pid
}

# start-up of -U -p PYPID with getstack and with cfi, both with --debug
# (it only prints), and the cfi run's line about its unwind tables
py_start_stop() {	# NAME
	local w pid=${pyproc[$1]}
	for w in getstack cfi; do
		start_stop "$1.$w" "$SC" --debug --walker $w -D 1 -U -p "$pid" "t:$TP"
	done
	sed -n 's/^unwind tables: \(.*\); [0-9.]* ms$/\1/p' "$TMP/ss.out" > "$TMP/$1.tables"
	runs[$1.tables]="${runs[$1.tables]:-} $(sed -n 's/^unwind tables: .*; \([0-9.]*\) ms$/\1/p' "$TMP/ss.out")"
}

# User frames in the stack the workload's calls hit, as WALKER finds it:
# the depth behind each per-event figure.
frames() {	# WALKER PROBE KIND
	SPIN_AT_END= "$SC" -f -U --walker "$1" "$2" -- $(workload "$3" 210) \
		2> /dev/null < /dev/null | awk '/;/ && $NF + 0 > best {
			best = $NF + 0; s = $0; sub(/ [0-9]+$/, "", s)
			n = split(s, f, ";") - 1 }
		END { print n ? n : "-" }'
}

# RSS of a -p trace (its process waits) before and after $1 unrelated
# processes, each a fork, exec, mmaps and exit the sideband hears of.
many_processes() {	# N: sets runs[procs.before] and runs[procs.after], KB
	local n=$1 victim sc lines
	sleep 3600 &
	victim=$!
	$SC -U -i 1 -p "$victim" t:syscalls:sys_enter_getppid > "$TMP/p.out" 2>&1 &
	sc=$!
	until grep -q '^Tracing' "$TMP/p.out" 2> /dev/null; do sleep 0.1; done
	runs[procs.before]=$(awk '$1 == "VmHWM:" { print $2 }' /proc/$sc/status)
	$SPAWNER "$n" > /dev/null
	# two more intervals: the second drained after every process exited
	lines=$(wc -l < "$TMP/p.out")
	until [ "$(wc -l < "$TMP/p.out")" -ge $((lines + 2)) ]; do sleep 0.1; done
	runs[procs.after]=$(awk '$1 == "VmHWM:" { print $2 }' /proc/$sc/status)
	kill -INT $sc
	wait $sc
	kill $victim
	wait $victim 2> /dev/null
}

stat() {	# CONFIG: "median [min-max]"
	local v=${runs[$1]:-}
	[ -n "$v" ] || { echo "-"; return; }
	tr ' ' '\n' <<< "$v" | grep -v '^$' | sort -g |
		awk '{ a[NR] = $1 } END {
			if (a[1] == "nan") { print "failed"; exit }
			m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			printf "%.0f [%.0f-%.0f]", m, a[1], a[NR] }'
}

median() {
	tr ' ' '\n' <<< "${runs[$1]:-}" | grep -v '^$' | sort -g |
		awk '{ a[NR] = $1 } END { if (!NR) print "nan"; else print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

added() {	# CONFIG BASE: "median [min-max]" of CONFIG's runs minus BASE's median
	local base v
	base=$(median "$2")
	v=${runs[$1]:-}
	[ -n "$v" ] || { echo "-"; return; }
	tr ' ' '\n' <<< "$v" | grep -v '^$' | sort -g |
		awk -v b="$base" '{ a[NR] = $1 - b } END {
			if (a[1] != a[1] || NR == 0) { print "failed"; exit }
			m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			printf "%.0f [%.0f-%.0f]", m, a[1], a[NR] }'
}

sc_config() {	# tracer arguments of a stackcount configuration
	case $2 in
	ku) echo "$SC --walker $1 $3" ;;
	k) echo "$SC --walker $1 -K $3" ;;
	u) echo "$SC --walker $1 -U $3" ;;
	esac
}

fp_kernel=no
"$SC" --kernel-features | grep -q '^kernel unwinder *frame pointers' && fp_kernel=yes
AUTO=$("$SC" --kernel-features | sed -n 's/^walker  *\([a-z]*\):.*/\1/p')
WALKERS="getstack stackmap fp"
"$SC" --kernel-features | grep -q '^get_stack (4.18) *yes' && WALKERS="$WALKERS cfi"

PYPROCS=
if [ -n "$PY" ]; then
	# a module of Debian's that pulls in libstdc++, else libstdc++ itself
	py_proc apt "import apt_pkg" && PYPROCS="apt"
	py_proc ctypes "import ctypes; ctypes.CDLL('libstdc++.so.6')" &&
		PYPROCS="$PYPROCS ctypes"
fi

for ((r = 1; r <= ROUNDS; r++)); do
	echo "round $r of $ROUNDS..." >&2
	baseline tp.base getppid
	per_event tp.floor.count getppid "$FLOOR count tp $TP"
	per_event tp.floor.stack getppid "$FLOOR stack tp $TP"
	for w in $WALKERS; do
		for s in ku k u; do
			[ $w = fp ] && [ $s != u ] && [ $fp_kernel = no ] && continue
			# cfi's kernel frames are bpf_get_stack's, as getstack's
			[ $w = cfi ] && [ $s = k ] && continue
			per_event "tp.$w.$s" getppid "$(sc_config $w $s t:$TP)"
		done
	done
	[ -n "$BPFTRACE" ] && bpftrace_event tp.bpftrace.ku getppid \
		"tracepoint:$TP /pid == cpid/ { @[kstack, ustack] = count(); }"
	[ -n "$BPFTRACE" ] && bpftrace_event tp.bpftrace.k getppid \
		"tracepoint:$TP /pid == cpid/ { @[kstack] = count(); }"
	[ -n "$BPFTRACE" ] && bpftrace_event tp.bpftrace.u getppid \
		"tracepoint:$TP /pid == cpid/ { @[ustack] = count(); }"

	baseline up.base call
	per_event up.floor.count call "$FLOOR count up $SPIN:bench_fn"
	per_event up.floor.stack call "$FLOOR stack up $SPIN:bench_fn"
	for w in $WALKERS; do
		per_event "up.$w.u" call "$(sc_config $w u $SPIN:bench_fn)"
	done
	[ -n "$BPFTRACE" ] && bpftrace_event up.bpftrace.u call \
		"uprobe:$SPIN:bench_fn /pid == cpid/ { @[ustack] = count(); }"

	if [ -n "$PY" ]; then
		baseline py.base py
		per_event py.floor.count py "$FLOOR count tp $TP"
		per_event py.floor.stack py "$FLOOR stack tp $TP"
		for w in getstack fp cfi; do
			[[ " $WALKERS " = *" $w "* ]] &&
				per_event "py.$w.u" py "$(sc_config $w u t:$TP)"
		done
		[ -n "$BPFTRACE" ] && bpftrace_event py.bpftrace.u py \
			"tracepoint:$TP /pid == cpid/ { @[ustack] = count(); }"
	fi

	execs execs.base
	execs execs.auto "$SC" -U "t:$TP" --
	[ "$AUTO" = cfi ] && execs execs.ptrace STACKWALK_NO_FIND_VMA=1 STACKWALK_NO_VMA_LISTS=1 "$SC" -U "t:$TP" --
	start_stop stackcount "$SC" -D 1 "t:$TP"
	# auto's choice may be cfi: tables for every process at start
	[ "$AUTO" = getstack ] || start_stop getstack "$SC" --walker getstack -D 1 "t:$TP"
	[ -n "$BPFTRACE" ] && start_stop bpftrace "$BPFTRACE" -q -e \
		"tracepoint:$TP { @[kstack, ustack] = count(); } interval:s:1 { exit(); }"
	if [[ " $WALKERS " = *" cfi "* ]]; then
		for p in $PYPROCS; do py_start_stop "$p"; done
	fi
done

# A wildcard over all of libc: thousands of uprobes (a few uprobe_multi
# links on 6.6+), each put in place in every process that maps libc.
# Opt-in (BENCH_LIBC=1): on the 6.18 host this was measured on, every
# process's printf misbehaved while they were attached (a kernel's uprobes
# bug; see the README's Cost section), so it is not run unasked.
wild_ms=- wild_n= wild_rc=-
: > "$TMP/wild.err"
if [ "${BENCH_LIBC:-0}" = 1 ]; then
	echo "stackcount -U 'c:*' -- /bin/true..." >&2
	wild_start=$(date +%s%N)
	"$SC" -U 'c:*' -- /bin/true > "$TMP/wild.out" 2> "$TMP/wild.err" < /dev/null
	wild_rc=$?
	wild_ms=$(( ($(date +%s%N) - wild_start) / 1000000 ))
	wild_n=$(sed -n 's/^Tracing \([0-9]*\) functions.*/\1/p' "$TMP/wild.out")
fi

row() {	# LABEL K+U K U
	printf '  %-30s %-20s %-20s %-20s\n' "$@"
}

# table CELL: both probes' rows, each cell "CELL CONFIG BASE"
table() {
	local cell=$1 w
	echo "tracepoint $TP"
	row "" "kernel+user" "kernel only" "user only"
	row "floor: count only" "$($cell tp.floor.count tp.base)" "" ""
	row "floor: stack helpers" "$($cell tp.floor.stack tp.base)" "" ""
	for w in $WALKERS; do
		if [ $w = fp ] && [ $fp_kernel = no ]; then
			row "stackcount --walker fp" "n/a: no kernel FP" "n/a: no kernel FP" \
				"$($cell tp.fp.u tp.base)"
		elif [ $w = cfi ]; then
			row "stackcount --walker cfi" "$($cell tp.cfi.ku tp.base)" \
				"getstack's" "$($cell tp.cfi.u tp.base)"
		else
			row "stackcount --walker $w" "$($cell tp.$w.ku tp.base)" \
				"$($cell tp.$w.k tp.base)" "$($cell tp.$w.u tp.base)"
		fi
	done
	[ -n "$BPFTRACE" ] && row "bpftrace $($BPFTRACE --version | awk '{ print $2 }')" \
		"$($cell tp.bpftrace.ku tp.base)" "$($cell tp.bpftrace.k tp.base)" \
		"$($cell tp.bpftrace.u tp.base)"
	echo "uprobe on a function's entry"
	row "floor: count only" "" "" "$($cell up.floor.count up.base)"
	row "floor: stack helpers" "" "" "$($cell up.floor.stack up.base)"
	for w in $WALKERS; do
		row "stackcount --walker $w" "" "" "$($cell up.$w.u up.base)"
	done
	[ -n "$BPFTRACE" ] && row "bpftrace" "" "" "$($cell up.bpftrace.u up.base)"
	[ -n "$PY" ] || return 0
	echo "tracepoint $TP, from $PY (no frame pointers)"
	row "floor: count only" "$($cell py.floor.count py.base)" "" ""
	row "floor: stack helpers" "$($cell py.floor.stack py.base)" "" ""
	for w in getstack fp cfi; do
		[[ " $WALKERS " = *" $w "* ]] &&
			row "stackcount --walker $w" "" "" "$($cell py.$w.u py.base)"
	done
	[ -n "$BPFTRACE" ] && row "bpftrace" "" "" "$($cell py.bpftrace.u py.base)"
	return 0
}

program() {	# CONFIG BASE: the program's own time per event
	stat "$1.prog"
}

echo
echo "Per event, ns added to each traced call: median [min-max] of $ROUNDS rounds of $N calls"
echo "(untraced: getppid() $(stat tp.base) ns, bench_fn() $(stat up.base) ns${PY:+, os.getppid() in python3.11 $(stat py.base) ns})"
table added
echo
echo "Per event, ns in the BPF program itself (kernel.bpf_stats_enabled), same runs"
table program
echo
echo "Start-up plus tear-down (ms beyond -D 1's second) and peak RSS (KB)"
printf '  %-30s %-20s %-20s\n' "" "overhead ms" "peak RSS KB"
printf '  %-30s %-20s %-20s\n' "stackcount -D 1 (auto: $AUTO)" "$(stat stackcount.ms)" \
	"$(stat stackcount.rss)"
[ "$AUTO" = getstack ] || printf '  %-30s %-20s %-20s\n' "  --walker getstack" \
	"$(stat getstack.ms)" "$(stat getstack.rss)"
[ -n "$BPFTRACE" ] && printf '  %-30s %-20s %-20s\n' "bpftrace (interval 1 s)" \
	"$(stat bpftrace.ms)" "$(stat bpftrace.rss)"
for p in $PYPROCS; do
	case $p in
	apt) echo "-U -p PID: python3.11 that imported apt_pkg (libapt-pkg, libstdc++)" ;;
	ctypes) echo "-U -p PID: python3.11 that loaded libstdc++ through ctypes" ;;
	esac
	for w in getstack cfi; do
		printf '  %-30s %-20s %-20s\n' "stackcount --walker $w" \
			"$(stat $p.$w.ms)" "$(stat $p.$w.rss)"
	done
	echo "  cfi's tables (--debug): $(cat "$TMP/$p.tables"); built in $(stat $p.tables) ms"
done
[ "${BENCH_LIBC:-0}" = 1 ] && printf '  %-30s %s\n' "stackcount -U 'c:*' -- true" \
	"$wild_ms ms, one run: ${wild_n:-no} functions traced, status $wild_rc, $(grep -c . "$TMP/wild.err") warning lines"
echo
echo "300 execs of /bin/true in sh, ms inside the command: untraced, under -- COMMAND"
printf '  %-30s %s\n' "untraced" "$(stat execs.base)"
printf '  %-30s %s\n' "stackcount -U -- (auto: $AUTO)" "$(stat execs.auto)"
[ "$AUTO" = cfi ] && printf '  %-30s %s\n' "  held (ptrace)" "$(stat execs.ptrace)"
echo
PROCS=${PROCS:-50000}
many_processes "$PROCS"
echo "Peak RSS (KB) of stackcount -U -p PID, PID waiting, before and after $PROCS"
echo "unrelated processes (/bin/true) ran"
printf '  %-30s %-20s %-20s\n' "" "before" "after"
printf '  %-30s %-20s %-20s\n' "stackcount -p" "${runs[procs.before]}" "${runs[procs.after]}"
echo
# the tables a CFI walk needs: under 100 ms and 30 MB for python3.11's is the aim
"$B/tests/bench_cfi"
echo
echo "User frames per stack as each walker found it (one run each): the depth"
echo "behind the per-event figures"
printf '  %-30s' ""
for w in $WALKERS; do printf ' %-9s' $w; done
echo
declare -A depth	# workload.walker -> frames
frames_row() {	# KEY LABEL PROBE KIND
	local w
	printf '  %-30s' "$2"
	for w in $WALKERS; do
		depth[$1.$w]=$(frames $w "$3" "$4")
		printf ' %-9s' "${depth[$1.$w]}"
	done
	echo
}
frames_row tp "spin, tracepoint" "t:$TP" getppid
frames_row up "spin, uprobe" "$SPIN:bench_fn" call
[ -n "$PY" ] && frames_row py "python3.11 spin.py, tracepoint" "t:$TP" py
echo
ratios() {	# LABEL CONFIG FLOOR BPFTRACE BASE
	local b
	b=$(median "$5")
	awk -v l="$1" -v g="$(median "$2")" -v f="$(median "$3")" \
		-v t="$(median "$4")" -v b="$b" -v gp="$(median "$2.prog")" \
		-v fp="$(median "$3.prog")" -v tp="$(median "$4.prog")" 'BEGIN {
		printf "%s: added %.2fx the stack-helper floor", l, (g - b) / (f - b)
		if (t == t && t != "nan") printf ", %.2fx bpftrace", (g - b) / (t - b)
		printf "; program %.2fx floor", gp / fp
		if (tp == tp && tp != "nan") printf ", %.2fx bpftrace", gp / tp
		printf "\n" }'
}
ratios "getstack, tracepoint, kernel+user" tp.getstack.ku tp.floor.stack tp.bpftrace.ku tp.base
ratios "getstack, uprobe, user" up.getstack.u up.floor.stack up.bpftrace.u up.base
vs_fp() {	# LABEL KEY: cfi's user walk over fp's, at the depths each found
	awk -v l="$1" -v b="$(median $2.base)" -v c="$(median $2.cfi.u)" \
		-v f="$(median $2.fp.u)" -v cp="$(median $2.cfi.u.prog)" \
		-v fp="$(median $2.fp.u.prog)" -v dc="${depth[$2.cfi]}" \
		-v df="${depth[$2.fp]}" 'BEGIN {
		printf "%s: added %.2fx the fp walk; program %.2fx", l,
			(c - b) / (f - b), cp / fp
		if (dc == df) printf " (%s frames each)\n", dc
		else printf " (cfi %s frames, fp %s)\n", dc, df }'
}
if [[ " $WALKERS " = *" cfi "* ]]; then
	vs_fp "cfi, uprobe, user" up
	vs_fp "cfi, tracepoint, user" tp
	[ -n "$PY" ] && vs_fp "cfi, tracepoint, user, python3.11" py
fi
exit 0
