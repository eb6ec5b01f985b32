#!/usr/bin/env bats
# The outputs for programs and people: JSON, pprof and SVG, each checked
# against the text output of the same workload, stack by stack.

load helpers

SN=$TOP/build/stacksnoop

teardown() {
	teardown_processes
	[ -n "${SN_PID:-}" ] && kill -INT "$SN_PID" 2>/dev/null && wait "$SN_PID" 2>/dev/null
	return 0
}

# The text output's stacks, as stackcount prints them between its Tracing
# and Detaching lines, PIDs normalized.
text_stacks() {
	sed -e '1,2d' -e '/^Detaching\.\.\.$/d' | normalize
}

# stackcount --json's stacks laid out as the text output lays them out:
# kernel frames ("func [module]" for a module's), "--" with -d ($1 = 1),
# user frames, "comm [PID]" with -P (the pid then), the count.
json_as_text() {
	jq -r --argjson d "${1:-0}" '.stacks[] |
		(.frames[] | select(.kind == "kernel") |
			"  " + .name + (if .module and .offset != null then " [" + .module + "]" else "" end)),
		(if $d == 1 then "    --" else empty end),
		(.frames[] | select(.kind == "user") | "  " + .name),
		(if .pid then "    \(.comm) [PID]" else empty end),
		"    \(.count)", ""'
}

@test "--json -P: the text output's stacks and counts, frame by frame (user functions)" {
	run --separate-stderr "$SC" -P -U "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 0 ]
	text=$(echo "$output" | text_stacks)
	run --separate-stderr "$SC" -P -U --json "$W/paths:work" -- \
		sh -c "echo \$\$ > $BATS_TEST_TMPDIR/pid; exec $W/paths 2"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	# one document, on one line
	[ "$(echo "$output" | wc -l)" -eq 1 ]
	json=$(echo "$output" | json_as_text)
	diff -u <(echo "$text") <(echo "$json")
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	doc=$output
	q() { echo "$doc" | jq -c "$@"; }
	[ "$(q '[.tool, .pattern, .walker != null, .probes, .total]')" = \
	  "[\"stackcount\",\"$W/paths:work\",true,1,12]" ]
	[ "$(q '[.stacks[] | [.count, .comm, .pid]]')" = \
	  "[[2,\"paths\",$pid],[4,\"paths\",$pid],[6,\"paths\",$pid]]" ]
	# every loss counter, each 0
	[ "$(q '.lost | to_entries | map("\(.key)=\(.value)") | join(" ")')" = \
	  '"counts_map_full=0 kernel_stack_collisions=0 user_stack_collisions=0 stack_map_full=0 follow_map_full=0 perf_buffer_full=0 tail_call_failed=0 chunk_map_full=0 ia32_not_walked=0 user_stacks_without_tables=0 user_stacks_cut=0 user_stacks_vma_busy=0 walk_state_map_full=0 walks_not_carried_on=0 skipped_by_kernel=0 process_hooks_skipped_by_kernel=0 truncated_stacks=0 partial_stacks=0 trace_lines_overwritten=0 mapping_records=0"' ]
	# the frame where work fired: the probe's address, offset 0, in paths
	work=$(nm "$W/paths" | awk '$3 == "work" { print $1 }')
	[ "$(q '.stacks[0].frames[0] | [.kind, .name, .offset, .module, .path, .module_offset]')" = \
	  "[\"user\",\"work\",0,\"paths\",\"$W/paths\",\"$(printf '0x%x' $((0x$work)))\"]" ]
	# a return address: its offset in the caller, and one load bias for both
	via_a=$(nm "$W/paths" | awk '$3 == "via_a" { print $1 }')
	ret=$(objdump -d --no-show-raw-insn "$W/paths" | sed -n '/<via_a>:/,/^$/p' |
		grep -A1 'call.*<work>' | tail -n1)
	ret=${ret%%:*}
	ret=$((0x${ret// /}))
	[ "$(q '.stacks[0].frames[1] | [.name, .offset, .module_offset]')" = \
	  "[\"via_a\",$((ret - 0x$via_a)),\"$(printf '0x%x' $ret)\"]" ]
	bias=$(q -r '.stacks[0].frames[:2] | map((.address | ltrimstr("0x")) + " " + (.module_offset | ltrimstr("0x"))) | .[]' |
		while read -r a o; do printf '%x\n' $((0x$a - 0x$o)); done | sort -u)
	[ "$(echo "$bias" | wc -l)" -eq 1 ]
}

@test "--json: kernel and user frames of a tracepoint, with their kinds, as the text output" {
	run --separate-stderr "$SC" -d --walker getstack t:syscalls:sys_enter_getppid -- "$W/paths" 3
	[ "$status" -eq 0 ]
	text=$(echo "$output" | text_stacks)
	run --separate-stderr "$SC" -d --json --walker getstack t:syscalls:sys_enter_getppid -- "$W/paths" 3
	[ "$status" -eq 0 ]
	json=$(echo "$output" | json_as_text 1)
	diff -u <(echo "$text") <(echo "$json")
	# kernel addresses as strings: a number would lose their low bits
	echo "$output" | jq -e '[.stacks[0].frames[] | select(.kind == "kernel") | .address | test("^0xffff[0-9a-f]{12}$")] | all'
	[ "$(echo "$output" | jq -c '[.stacks[0].frames[].kind] | unique')" = '["kernel","user"]' ]
}

@test "--json -i: one document per interval, each with its own counts; -T adds the time" {
	start_phases
	start_json() {
		"$SC" "$@" > "$BATS_TEST_TMPDIR/sc.out" 2> "$BATS_TEST_TMPDIR/sc.err" &
		SC_PID=$!
	}
	start_json --json -T -U -i 1 -p "$PHASES_PID" "$W/phases:work"
	# attached once the first (empty) interval is out
	wait_for '"stacks":\[\]' "$BATS_TEST_TMPDIR/sc.out"
	phase 5
	wait_for '"total":5,' "$BATS_TEST_TMPDIR/sc.out"
	phase 7
	wait_for '"total":7,' "$BATS_TEST_TMPDIR/sc.out"
	stop_sc
	stop_phases
	[ "$(jq -c 'select(.total > 0) | [.total, [.stacks[].count]]' "$BATS_TEST_TMPDIR/sc.out")" = \
	  "$(printf '[5,[5]]\n[7,[7]]')" ]
	jq -e '.time | test("^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]$")' "$BATS_TEST_TMPDIR/sc.out" > /dev/null
}

@test "--json and -f together: a usage error" {
	run --separate-stderr "$SC" --json -f "$W/paths:work"
	[ "$status" -eq 2 ]
	[ "$stderr" = "stackcount: --json and -f are two formats of the output; give one" ]
}

@test "stacksnoop --json: one object per event, in order, frames as the text output names them" {
	run --separate-stderr "$SN" --json "$W/snoop:target" -- \
		sh -c "exec $W/snoop > $BATS_TEST_TMPDIR/pid"
	[ "$status" -eq 0 ]
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	diff -u - <(echo "$output" | jq -c '[.comm, .pid, .tid, [.frames[] | .kind + ":" + .name]]') <<EOF
["snoop",$pid,$pid,["user:target","user:first","user:main","user:[unknown]","user:__libc_start_main","user:_start"]]
["snoop",$pid,$pid,["user:target","user:second","user:main","user:[unknown]","user:__libc_start_main","user:_start"]]
["snoop",$pid,$pid,["user:target","user:third_inner","user:third","user:main","user:[unknown]","user:__libc_start_main","user:_start"]]
EOF
	# times in order, as numbers
	echo "$output" | jq -s -e '[.[].time] | . == sort and (.[0] | type) == "number"'
}

@test "stacksnoop --json | jq: each event arrives while tracing goes on" {
	local t=$BATS_TEST_TMPDIR b
	start_phases
	# a second process of the same program, whose calls the test counts
	mkfifo "$t/b.in" "$t/sn.pipe"
	"$W/phases" < "$t/b.in" > "$t/b.out" &
	b=$!
	exec 8> "$t/b.in"
	jq -c --unbuffered '[.pid, [.frames[].name]]' < "$t/sn.pipe" > "$t/sn.out" &
	JQ_PID=$!
	"$SN" --json "$W/phases:work" > "$t/sn.pipe" 2> "$t/sn.err" &
	SN_PID=$!
	# no header: attached once a call of the first shows
	for ((i = 0; i < 100; i++)); do
		phase 1
		[ -s "$t/sn.out" ] && break
		sleep 0.1
	done
	# the second's two calls, each shown while tracing goes on
	echo 2 >&8
	wait_for '^done 2' "$t/b.out"
	wait_for "^\[$b," "$t/sn.out" 2
	kill -INT "$SN_PID"
	wait "$SN_PID"
	wait "$JQ_PID"
	exec 8>&-
	wait "$b"
	stop_phases
	# those two, and no more
	diff -u - <(grep "^\[$b," "$t/sn.out") <<EOF
[$b,["work","via_a","main","[unknown]","__libc_start_main","_start"]]
[$b,["work","via_a","main","[unknown]","__libc_start_main","_start"]]
EOF
}

@test "--json: the losses the text output reports, by cause" {
	run --separate-stderr "$SC" --json -U --walker stackmap --stack-storage-size 1 \
		"$W/snoop:target" -- sh -c "exec $W/snoop > /dev/null"
	[ "$status" -eq 0 ]
	[[ "$stderr" == "2 stacks lost: 2 to "* ]]
	# the cause the line names, and no other
	case $stderr in
	*"to user stack id collisions"*) key=user_stack_collisions ;;
	*"to a full stack map"*) key=stack_map_full ;;
	esac
	[ "$(echo "$output" | jq -c --arg k "$key" '[.lost[$k], ([.lost[]] | add), .total]')" = "[2,2,1]" ]
}

pprof() {
	HOME=$BATS_TEST_TMPDIR GOCACHE=$BATS_TEST_TMPDIR/gocache go tool pprof "$@"
}

# pprof -traces laid out as the text output: frames, "comm [PID]" from the
# comm label with a pid label (-P), the count.
traces_as_text() {
	awk '
	function flush(i) {
		if (cnt != "") {
			for (i = 1; i <= nf; i++)
				print "  " f[i]
			if (comm != "" && pid)
				print "    " comm " [PID]"
			print "    " cnt
			print ""
		}
		nf = 0; cnt = ""; comm = ""; pid = 0
	}
	/^-----------\+/ { flush(); started = 1; next }
	!started { next }
	/^ +comm: / { sub(/^ +comm: +/, ""); comm = $0; next }
	/^ +pid: / { pid = 1; next }
	/^ +[0-9]+   / { cnt = $1; sub(/^ +[0-9]+   /, ""); f[++nf] = $0; next }
	{ sub(/^ +/, ""); f[++nf] = $0 }
	END { flush() }'
}

# Stacks in the text output's layout, one line each, sorted.
one_line() {
	awk 'BEGIN { RS = ""; FS = "\n" } { s = $1; for (i = 2; i <= NF; i++) s = s "|" $i; print s }' | sort
}

@test "--pprof -P: go tool pprof shows the text output's stacks and counts (user functions)" {
	run --separate-stderr "$SC" -P -U --pprof "$BATS_TEST_TMPDIR/p.pb.gz" "$W/paths:work" -- \
		sh -c "echo \$\$ > $BATS_TEST_TMPDIR/pid; exec $W/paths 2"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	text=$(echo "$output" | text_stacks | one_line)
	[ "$(echo "$text" | wc -l)" -eq 3 ]
	# gzip, then the protobuf
	[ "$(head -c2 "$BATS_TEST_TMPDIR/p.pb.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ]
	run pprof -traces "$BATS_TEST_TMPDIR/p.pb.gz"
	[ "$status" -eq 0 ]
	diff -u <(echo "$text") <(echo "$output" | traces_as_text | one_line)
	echo "$output" | grep -qx "stackcount $W/paths:work"
	echo "$output" | grep -qx 'Type: events'
	# the program's mapping, by its path and build-id, holds its frames
	run pprof -raw "$BATS_TEST_TMPDIR/p.pb.gz"
	[ "$status" -eq 0 ]
	id=$(readelf -n "$W/paths" | awk '/Build ID/ { print $3 }')
	m=$(echo "$output" | sed -n "s|^\([0-9]*\): 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* $W/paths $id \[FN\]$|\1|p")
	[ -n "$m" ]
	[ "$(echo "$output" | awk -v m="M=$m" '$3 == m { print $4 }' | LC_ALL=C sort -u | tr '\n' ' ')" = \
	  "_start deep2 deep3 main via_a via_b work " ]
	echo "$output" | grep -q "^events/count$"
	# each sample labelled with its process
	[ "$(echo "$output" | grep -E '^ +(comm|pid):' | sort | uniq -c | tr -s ' ')" = \
	  "$(printf ' 3 comm:[paths]\n 3 pid:[%s]' "$pid")" ]
}

@test "--pprof: kernel and user frames of a tracepoint as the text output; the kernel its own mapping" {
	run --separate-stderr "$SC" --walker getstack --pprof "$BATS_TEST_TMPDIR/p.pb.gz" \
		t:syscalls:sys_enter_getppid -- "$W/paths" 3
	[ "$status" -eq 0 ]
	text=$(echo "$output" | text_stacks | one_line)
	run pprof -traces "$BATS_TEST_TMPDIR/p.pb.gz"
	[ "$status" -eq 0 ]
	diff -u <(echo "$text") <(echo "$output" | traces_as_text | one_line)
	run pprof -raw "$BATS_TEST_TMPDIR/p.pb.gz"
	echo "$output" | grep -Eq '^[0-9]+: 0xffff800000000000/0xffffffffffffffff/0x0 \[kernel\.kallsyms\] '
	k=$(echo "$output" | sed -n 's/^\([0-9]*\): .* \[kernel\.kallsyms\] .*/\1/p')
	[ "$(echo "$output" | awk -v m="M=$k" '$3 == m && $4 == "do_syscall_64"' | wc -l)" -eq 1 ]
}

@test "--pprof: two runs' profiles merge (go tool pprof -proto a b), counts adding up stack by stack" {
	"$SC" -U --pprof "$BATS_TEST_TMPDIR/a.pb.gz" "$W/paths:work" -- "$W/paths" 2 > /dev/null
	"$SC" -U --pprof "$BATS_TEST_TMPDIR/b.pb.gz" "$W/paths:work" -- "$W/paths" 3 > /dev/null
	pprof -proto "$BATS_TEST_TMPDIR/a.pb.gz" "$BATS_TEST_TMPDIR/b.pb.gz" > "$BATS_TEST_TMPDIR/m.pb.gz"
	run pprof -top "$BATS_TEST_TMPDIR/m.pb.gz"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^Showing nodes accounting for 30, 100% of 30 total$'
	# each stack once per run (the pid labels differ): summed by frames
	run pprof -traces "$BATS_TEST_TMPDIR/m.pb.gz"
	diff -u - <(echo "$output" | traces_as_text | grep -vx '    paths \[PID\]' |
		awk 'BEGIN { RS = ""; FS = "\n" } { s = ""; for (i = 1; i < NF; i++) s = s $i; n[s] += $NF }
		     END { for (s in n) print n[s] + 0, s }' | sort -n) <<'EOF'
5   work  via_a  main  [unknown]  __libc_start_main  _start
10   work  via_b  main  [unknown]  __libc_start_main  _start
15   work  via_a  deep3  deep2  main  [unknown]  __libc_start_main  _start
EOF
}

@test "--pprof: the lost stacks as a comment, the line the text output says" {
	run --separate-stderr "$SC" -U --walker stackmap --stack-storage-size 1 \
		--pprof "$BATS_TEST_TMPDIR/p.pb.gz" "$W/snoop:target" -- sh -c "exec $W/snoop > /dev/null"
	[ "$status" -eq 0 ]
	[[ "$stderr" == "2 stacks lost: 2 to "* ]]
	run pprof -raw "$BATS_TEST_TMPDIR/p.pb.gz"
	diff -u - <(echo "$output" | sed -n 's/^Comment: //p') <<EOF
stackcount $W/snoop:target
$stderr
EOF
}

@test "--pprof to a path that cannot be written: said before tracing" {
	run --separate-stderr "$SC" -U --pprof /nonexistent/p.pb.gz "$W/paths:work" -- "$W/paths" 1
	[ "$status" -eq 1 ]
	[ "$output" = "" ]
	[ "$stderr" = "stackcount: cannot create /nonexistent/p.pb.gz: No such file or directory; give --pprof a path that can be written" ]
}

# Chromium, headless, on the SVG $1 with the URL fragment $2: the report
# its script writes (JSON), and with $3 a screenshot at the SVG's size.
chromium_run() {
	local h
	h=$(sed -n 's/^<svg .* height="\([0-9]*\)" viewBox=.*/\1/p' "$1")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$BATS_TEST_TMPDIR/chromium" --force-device-scale-factor=1 \
		--window-size="1200,$h" "${@:4}" "file://$1#$2" 2>/dev/null
}

svg_report() {
	chromium_run "$1" "report${2:+&$2}" "" --dump-dom |
		sed -n 's/.*<desc id="report">\(.*\)<\/desc>.*/\1/p' |
		sed -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&amp;/\&/g'
}

svg_screenshot() {
	chromium_run "$1" "report${2:+&$2}" "" --screenshot="$3" > /dev/null
	[ -s "$3" ]
}

# The runs of one colour on row $2 of the PNG $1: "X0 X1 R,G,B".
png_runs() {
	python3 "$TOP/tests/png_runs.py" "$1" "$2"
}

@test "--svg: the text output's stacks as a flame graph, drawn by Chromium without script errors, root full width, widths by count" {
	local t=$BATS_TEST_TMPDIR
	run --separate-stderr "$SC" -f -U "$W/paths:work" -- "$W/paths" 2
	folded=$output
	run --separate-stderr "$SC" -f -U --svg "$t/f.svg" "$W/paths:work" -- "$W/paths" 2
	[ "$status" -eq 0 ]
	# stdout is as without --svg
	[ "$output" = "$folded" ]
	report=$(svg_report "$t/f.svg")
	[ "$(echo "$report" | jq -c '.errors')" = "[]" ]
	# every box: its name, depth and count; the process at the root, as -f
	diff -u - <(echo "$report" | jq -r '.frames[] | "\(.depth) \(.name) \(.count) \(.kind)"' | sort) <<'EOF'
0 all 12 r
1 paths 12 p
2 _start 12 u
3 __libc_start_main 12 u
4 [unknown] 12 u
5 main 12 u
6 deep2 6 u
6 via_a 2 u
6 via_b 4 u
7 deep3 6 u
7 work 2 u
7 work 4 u
8 via_a 6 u
9 work 6 u
EOF
	# the root spans the graph's whole width, 10 px in from each side
	[ "$(echo "$report" | jq -c '.frames[] | select(.depth == 0) | [.x, .w]')" = "[10,1180]" ]
	# a box's width is its share of the counts, within one pixel
	echo "$report" | jq -e '.frames[] | select(.name == "via_b") | (.w - 1180 * 4 / 12) | fabs <= 1'
	# and so Chromium draws them
	svg_screenshot "$t/f.svg" "" "$t/f.png"
	root_y=$(echo "$report" | jq '.frames[] | select(.depth == 0) | .y')
	root_fill=$(echo "$report" | jq -r '.frames[] | select(.depth == 0) | .fill' | tr -d 'rgb() ')
	png_runs "$t/f.png" "$root_y" | grep -qx "10 1189 $root_fill"
	read -r x y fill < <(echo "$report" | jq -r '.frames[] | select(.name == "via_b") | "\(.x) \(.y) \(.fill | gsub("[rgb() ]"; ""))"')
	w=$(png_runs "$t/f.png" "$y" | awk -v x="$x" -v c="$fill" '$1 == x && $3 == c { print $2 - $1 + 1 }')
	echo "via_b drawn $w px wide"
	awk -v w="$w" 'BEGIN { d = w - 1180 * 4 / 12; exit !(d <= 1 && d >= -1) }'
}

@test "--svg: search highlights the boxes that match, and says their share" {
	local t=$BATS_TEST_TMPDIR
	"$SC" -U --svg "$t/f.svg" "$W/paths:work" -- "$W/paths" 2 > /dev/null
	report=$(svg_report "$t/f.svg" "search=via_b")
	[ "$(echo "$report" | jq -c '.errors')" = "[]" ]
	[ "$(echo "$report" | jq -c '[.frames[] | select(.match) | [.name, .fill]]')" = '[["via_b","rgb(230,0,230)"]]' ]
	[ "$(echo "$report" | jq -r '.matched')" = "Matched: 33.33% (4 of 12 events)" ]
	# nested matches count once: via_a's boxes hold 8 events, work's all 12
	[ "$(svg_report "$t/f.svg" "search=^(via_a|work)$" | jq -r '.matched')" = "Matched: 100.00% (12 of 12 events)" ]
	[ "$(svg_report "$t/f.svg" "search=via_a" | jq -r '.matched')" = "Matched: 66.67% (8 of 12 events)" ]
	# drawn highlighted: via_b's box, and only it, in the search colour
	svg_screenshot "$t/f.svg" "search=via_b" "$t/s.png"
	read -r x y < <(echo "$report" | jq -r '.frames[] | select(.name == "via_b") | "\(.x) \(.y)"')
	png_runs "$t/s.png" "$y" | grep -qx "$x $((x + 392)) 230,0,230"
	[ "$(for y in $(echo "$report" | jq '[.frames[].y] | unique | .[]'); do
		png_runs "$t/s.png" "$y"; done | grep -c ' 230,0,230$')" -eq 1 ]
}

@test "--svg: a click zooms into a box, its callers span the width, the rest hidden" {
	local t=$BATS_TEST_TMPDIR
	"$SC" -U --svg "$t/f.svg" "$W/paths:work" -- "$W/paths" 2 > /dev/null
	report=$(svg_report "$t/f.svg" "zoom=deep2")
	[ "$(echo "$report" | jq -c '.errors')" = "[]" ]
	diff -u - <(echo "$report" | jq -r '.frames[] | "\(.depth) \(.name) \(.x) \(.w)"' | sort) <<'EOF'
0 all 10 1180
1 paths 10 1180
2 _start 10 1180
3 __libc_start_main 10 1180
4 [unknown] 10 1180
5 main 10 1180
6 deep2 10 1180
7 deep3 10 1180
8 via_a 10 1180
9 work 10 1180
EOF
}

@test "--svg: kernel and user frames in their own colours, the -- boundary between, names escaped" {
	local t=$BATS_TEST_TMPDIR
	"$SC" --walker getstack --svg "$t/k.svg" t:syscalls:sys_enter_getppid -- "$W/paths" 3 > /dev/null
	report=$(svg_report "$t/k.svg")
	[ "$(echo "$report" | jq -c '.errors')" = "[]" ]
	# root, process, user frames, the boundary, kernel frames, bottom up
	[ "$(echo "$report" | jq -r '[.frames | sort_by(.depth)[] | .kind] | join("")' | tr -s uk)" = "rpudk" ]
	[ "$(echo "$report" | jq -r '.frames[] | select(.kind == "d") | "\(.name) \(.count)"')" = "-- 3" ]
	# warm kernel, cool user: each family by its channels
	echo "$report" | jq -e '[.frames[] | select(.kind == "k") | .fill | [scan("[0-9]+") | tonumber] |
		.[0] >= 215 and .[2] <= 80] | all and length >= 2'
	echo "$report" | jq -e '[.frames[] | select(.kind == "u") | .fill | [scan("[0-9]+") | tonumber] |
		.[2] >= 195 and .[0] <= 145] | all and length >= 2'
	# C++ names hold < and >: escaped in the file, whole in the document
	"$SC" -U --svg "$t/c.svg" "$W/cxx:work" -- "$W/cxx" > /dev/null
	grep -qF 'shapes::Box&lt;int&gt;::open(int)' "$t/c.svg"
	report=$(svg_report "$t/c.svg")
	[ "$(echo "$report" | jq -c '.errors')" = "[]" ]
	[ "$(echo "$report" | jq -r '.frames[] | select(.name | startswith("shapes::Box<")) | "\(.name) \(.count)"' | sort)" = \
	  "$(printf 'shapes::Box<double>::open(double) 1\nshapes::Box<int>::open(int) 1\nshapes::Box<int>::open(int) 1')" ]
}

@test "--svg: the title says the pattern, the duration and the events; a tooltip on every box" {
	local t=$BATS_TEST_TMPDIR
	"$SC" -U --svg "$t/f.svg" "$W/paths:work" -- "$W/paths" 1 > /dev/null
	grep -Eqx "<text id=\"title\" x=\"600\" y=\"24\">stackcount $W/paths:work: 6 events in [0-9]+\.[0-9]{2} s</text>" "$t/f.svg"
	[ "$(grep -c '^<g class="f' "$t/f.svg")" -eq "$(grep -c '^<g class="f .*><title>.* ([0-9]* events\?, [0-9.]*%)</title><rect ' "$t/f.svg")" ]
	grep -qF '<title>via_b (2 events, 33.33%)</title>' "$t/f.svg"
}

@test "--svg: -P puts the process at the root, as -f does; none without it for kernel stacks" {
	local t=$BATS_TEST_TMPDIR
	"$SC" -K --svg "$t/k.svg" t:syscalls:sys_enter_getppid -- "$W/paths" 3 > /dev/null
	"$SC" -K -P --svg "$t/p.svg" t:syscalls:sys_enter_getppid -- "$W/paths" 3 > /dev/null
	[ "$(svg_report "$t/k.svg" | jq -r '[.frames | sort_by(.depth)[] | .kind] | join("")' | tr -s k)" = "rk" ]
	report=$(svg_report "$t/p.svg")
	[ "$(echo "$report" | jq -r '[.frames | sort_by(.depth)[] | .kind] | join("")' | tr -s k)" = "rpk" ]
	[ "$(echo "$report" | jq -r '.frames[] | select(.kind == "p") | "\(.name) \(.count)"')" = "paths 3" ]
}

@test "--svg with no events: a graph that says so, without script errors" {
	local t=$BATS_TEST_TMPDIR
	"$SC" -U --svg "$t/e.svg" "$W/paths:work" -- true > /dev/null
	grep -q '>stackcount .*: 0 events in ' "$t/e.svg"
	report=$(svg_report "$t/e.svg" "search=work")
	[ "$(echo "$report" | jq -c '[.errors, .frames, .matched]')" = '[[],[],"Matched: 0.00% (0 of 0 events)"]' ]
}
