# For the suites where the attacker is another user (nobody) and the tool
# runs as root: nobody's own directory $H, commands run as nobody, runs
# bounded in time.

NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

as_nobody() {
	"${NOBODY[@]}" "$@"
}

# $H: a directory of nobody's in the test's own, reachable by nobody, with
# nobody's copies of the victim workload and its library.
nobody_home() {
	local d
	H=$BATS_TEST_TMPDIR/nobody
	mkdir "$H"
	chown nobody:nogroup "$H"
	d=$BATS_TEST_TMPDIR
	while [ "$d" != / ] && [ "$d" != /tmp ]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
	as_nobody cp "$W/victim" "$W/libvictim.so" "$H/"
}

# bounded D CMD...: run CMD (which has -D D) for at most D + 2 s.
bounded() {
	local d=$1
	shift
	run --separate-stderr timeout -s KILL $((d + 2)) "$@"
}
