#!/usr/bin/env bats
# The manual pages render cleanly, and document what the tools take.

load helpers

@test "man -l renders both pages without warnings" {
	for page in stackcount stacksnoop; do
		f=$TOP/man/man8/$page.8
		run bash -c "MANWIDTH=80 man -l '$f' 2>&1 >/dev/null"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		run bash -c "groff -man -ww -z '$f' 2>&1"
		[ -z "$output" ]
	done
}

# every long option --help lists is in the page
@test "each page documents every option its tool's --help lists" {
	for tool in stackcount stacksnoop; do
		page=$(MANWIDTH=200 man -l "$TOP/man/man8/$tool.8" 2>/dev/null)
		for opt in $("$TOP/build/$tool" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
			echo "$page" | grep -q -- "$opt" || { echo "$tool.8 lacks $opt"; false; }
		done
	done
}
