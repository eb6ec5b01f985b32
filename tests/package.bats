#!/usr/bin/env bats
# The Debian package `make deb` builds: what it holds, lintian's verdict,
# and an install and removal that leave the machine as it was.

load helpers

setup_file() {
	VERSION=$("$TOP/build/stackcount" --version | sed -n 's/^stackcount (stackwalk) //p')
	export VERSION DEB=$TOP/build/stackwalk_${VERSION}_amd64.deb
}

teardown_file() {
	# a test that failed half way must not leave the package behind
	if [ -e "$BATS_FILE_TMPDIR/installed" ]; then
		dpkg --purge stackwalk > /dev/null
	fi
}

# What the package installs, and `make install` with PREFIX=/usr.
installed_files() {
	cat <<EOF
/usr/sbin/stackcount
/usr/sbin/stacksnoop
/usr/share/bash-completion/completions/stackcount
/usr/share/bash-completion/completions/stacksnoop
/usr/share/doc/stackwalk/changelog.gz
/usr/share/doc/stackwalk/copyright
/usr/share/lintian/overrides/stackwalk
/usr/share/man/man8/stackcount.8.gz
/usr/share/man/man8/stacksnoop.8.gz
EOF
}

@test "make install puts every file under DESTDIR and PREFIX; make uninstall takes them away" {
	d=$BATS_TEST_TMPDIR/stage
	run make -s -C "$TOP" --no-print-directory install DESTDIR="$d" PREFIX=/opt/sw
	[ "$status" -eq 0 ]
	diff -u <(installed_files | grep -v -e /doc/ -e /lintian/ | sed 's|^/usr/|/opt/sw/|; s|\.gz$||') \
		<(cd "$d" && find . ! -type d | sed 's|^\.||' | sort)
	[ "$(readlink "$d/opt/sw/share/bash-completion/completions/stacksnoop")" = stackcount ]
	[ "$(stat -c %a "$d/opt/sw/sbin/stackcount")" = 755 ]
	[ "$(stat -c %a "$d/opt/sw/share/man/man8/stackcount.8")" = 644 ]
	run make -s -C "$TOP" --no-print-directory uninstall DESTDIR="$d" PREFIX=/opt/sw
	[ "$status" -eq 0 ]
	[ "$(cd "$d" && find . ! -type d)" = "" ]
}

@test "the package is named and versioned as --version says" {
	[ -n "$VERSION" ]
	run dpkg-deb -f "$DEB" Package Version Architecture
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' 'Package: stackwalk' "Version: $VERSION" 'Architecture: amd64')" ]
}

@test "it holds exactly the binaries, pages, completion and Debian's files" {
	diff -u <(installed_files) \
		<(dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | sort)
	# the completion for stacksnoop is stackcount's
	dpkg-deb -c "$DEB" | grep -q ' \./usr/share/bash-completion/completions/stacksnoop -> stackcount$'
}

@test "lintian reports no error" {
	run --separate-stderr lintian "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(grep '^E:' <<< "$output")" ]
}

@test "installed: the tools run, the pages render, the completion works; removed: all gone" {
	if dpkg-query -W -f='${Status}' stackwalk 2> /dev/null | grep -q 'ok installed'; then
		skip "a stackwalk package is installed here already: not replacing it"
	fi
	while read -r f; do
		[ ! -e "$f" ] || { echo "$f is there before the install"; false; }
	done < <(installed_files)

	run dpkg -i "$DEB"
	[ "$status" -eq 0 ]
	touch "$BATS_FILE_TMPDIR/installed"
	[ "$(dpkg-query -W -f='${Status} ${Version}' stackwalk)" = "install ok installed $VERSION" ]

	# stripped, the binaries say and do what the built ones do
	for tool in stackcount stacksnoop; do
		run /usr/sbin/$tool --help
		[ "$status" -eq 0 ]
		diff -u <("$TOP/build/$tool" --help) <(echo "$output")
		[ "$(PATH=/usr/sbin:/usr/bin /usr/bin/env $tool --version)" = "$tool (stackwalk) $VERSION" ]
	done
	run --separate-stderr /usr/sbin/stackcount -P -U "$W/paths:work" -- "$W/paths" 1
	[ "$status" -eq 0 ]
	diff -u <("$SC" -P -U "$W/paths:work" -- "$W/paths" 1 | normalize) <(echo "$output" | normalize)
	[ "$(grep -c '^    paths \[[0-9]*\]$' <<< "$output")" -eq 3 ]

	# found by name in the manual, NAME as written, version in the footer
	for tool in stackcount stacksnoop; do
		page=$(MANWIDTH=200 man 8 $tool 2> /dev/null)
		name=$(sed -n '/^\.SH NAME$/{n;s/\\-/-/;p}' "$TOP/man/man8/$tool.8")
		[ "$(grep -A1 -x NAME <<< "$page" | tail -n1)" = "       $name" ]
		grep -q "^stackwalk $VERSION  .*  ${tool^^}(8)\$" <<< "$page"
	done

	# bash-completion's loader finds each tool's completion by its name
	cmp /usr/share/bash-completion/completions/stackcount "$TOP/src/completion.bash"
	[ "$(readlink -f /usr/share/bash-completion/completions/stacksnoop)" = \
		/usr/share/bash-completion/completions/stackcount ]
	run bash -c 'source /usr/share/bash-completion/completions/stacksnoop
		COMP_WORDS=(stacksnoop --walker "") COMP_CWORD=2
		_stacksnoop
		echo "${COMPREPLY[*]}"'
	[ "$output" = "auto cfi getstack stackmap fp" ]

	# the cfi walker kept the tables of that run; a purge takes them too
	[ -d /var/cache/stackwalk ]
	run dpkg --purge stackwalk
	[ "$status" -eq 0 ]
	rm "$BATS_FILE_TMPDIR/installed"
	[ ! -e /var/cache/stackwalk ]
	run --separate-stderr dpkg-query -W stackwalk
	[ "$status" -eq 1 ]
	[ "$stderr" = "dpkg-query: no packages found matching stackwalk" ]
	while read -r f; do
		[ ! -e "$f" ] && [ ! -L "$f" ] || { echo "$f is left after the removal"; false; }
	done < <(installed_files)
	[ ! -e /usr/share/doc/stackwalk ]
}
