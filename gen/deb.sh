#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes the Debian package from a tree staged by `make install` with
# PREFIX=/usr, as Debian's own helpers would leave it: binaries stripped,
# manual pages and changelog compressed with gzip -9n, the licence and the
# md5sums beside them, every file root's.
#
#   gen/deb.sh ROOT VERSION ARCH MAINTAINER OUT.deb LIB.a...
#
# LIB.a: the static libraries the binaries link (found with $CC), named in
# Built-Using: glibc's and elfutils' licences ask that their source be
# findable from what they were linked into.
set -euo pipefail
root=$1 version=$2 arch=$3 maintainer=$4 out=$5
shift 5
doc=$root/usr/share/doc/stackwalk
cc=${CC:-gcc}

strip --remove-section=.comment --remove-section=.note "$root"/usr/sbin/*
gzip -9n "$root"/usr/share/man/man8/*.8
install -d -m 0755 "$doc" "$root/DEBIAN"

# A release made from a checkout is dated by its last commit, so that two
# builds of one commit make the same changelog.
when=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2> /dev/null || date +%s)}
{
	echo "stackwalk ($version) unstable; urgency=medium"
	echo
	echo "  * Release $version."
	echo
	echo " -- $maintainer  $(date -R -u -d "@$when")"
} | gzip -9n > "$doc/changelog.gz"

{
	echo "stackwalk: stackcount and stacksnoop on eBPF."
	echo
	cat LICENSE
	echo
	echo "On Debian systems, the full text of the GNU General Public License"
	echo "version 2 can be found in /usr/share/common-licenses/GPL-2."
	echo
	echo "The binaries are linked statically with the libraries listed in the"
	echo "package's Built-Using field; the terms of each are in its Debian"
	echo "package's copyright file."
} > "$doc/copyright"
chmod 0644 "$doc/changelog.gz" "$doc/copyright"

# lintian holds static linking to be an error unless a package says why
install -d -m 0755 "$root/usr/share/lintian/overrides"
cat > "$root/usr/share/lintian/overrides/stackwalk" <<'EOF'
# One binary that runs on every kernel from 4.1 with nothing else installed
# is what the tools are for: they are static by design.
stackwalk: statically-linked-binary [usr/sbin/stackcount]
stackwalk: statically-linked-binary [usr/sbin/stacksnoop]
# zlib comes in with libelf, static for the same reason; Built-Using names it.
stackwalk: embedded-library zlib [usr/sbin/stackcount]
stackwalk: embedded-library zlib [usr/sbin/stacksnoop]
EOF
chmod 0644 "$root/usr/share/lintian/overrides/stackwalk"

built_using=$(
	for lib in "$@"; do
		path=$(realpath "$("$cc" -print-file-name="$lib")")
		dpkg -S "$path" | cut -d: -f1
	done | sort -u | xargs dpkg-query -W -f='${source:Package} (= ${source:Version})\n' |
		sort -u | paste -sd, | sed 's/,/, /g'
)

cat > "$root/DEBIAN/control" <<EOF
Package: stackwalk
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Built-Using: $built_using
Suggests: debuginfod
Section: devel
Priority: optional
Description: stackcount and stacksnoop: stacks of kernel and user events, with eBPF
 stackcount counts the events of kernel functions, user functions,
 tracepoints or USDT probes by their full kernel and user stack, summarised
 in the kernel, and prints each distinct stack with its count. stacksnoop
 prints the stack of every event as it happens.
 .
 They take the command lines of bcc's tools of the same names, and run on
 every Linux kernel from 4.1 on: each is one static binary that needs no
 compiler, kernel headers or Python at run time.
EOF
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
# the unwind tables kept between runs go with a purge (stackcount(8), FILES)
cat > "$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = purge ]; then
	rm -rf /var/cache/stackwalk
fi
EOF
chmod 0755 "$root/DEBIAN/postrm"

dpkg-deb --root-owner-group -Zxz --build "$root" "$out"
