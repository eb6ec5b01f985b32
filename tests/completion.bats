#!/usr/bin/env bats
# bash completion: the options each tool takes, walker names, releases,
# live PIDs after -p, and COMMAND's words after --.

load helpers

COMPLETION=$TOP/src/completion.bash

setup() {
	# shellcheck source=../src/completion.bash
	source "$COMPLETION"
	cd "$BATS_TEST_TMPDIR"
}

# comp WORD...: what the tool named by the first word offers for the
# last word (the one under the cursor), one a line.
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	"_$1"
	if ((${#COMPREPLY[@]})); then
		printf '%s\n' "${COMPREPLY[@]}"
	fi
}

# The options --help lists: from each line that starts with one, the
# short and long names before the description.
help_options() {
	"$TOP/build/$1" --help | sed -nE 's/^  (-[^ ].*)$/\1/p' | sed -E 's/   .*//' |
		grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' | tr -d ' ,' | sort
}

@test "sourcing it registers both tools" {
	[ "$(builtin complete -p stackcount)" = "complete -F _stackcount stackcount" ]
	[ "$(builtin complete -p stacksnoop)" = "complete -F _stacksnoop stacksnoop" ]
}

@test "a lone dash offers exactly the options each tool's --help lists" {
	for tool in stackcount stacksnoop; do
		diff -u <(help_options $tool) <(comp $tool - | sort)
	done
	# the lists differ where the tools do
	[ "$(comp stackcount --fo)" = "--folded" ]
	[ "$(comp stacksnoop --fo)" = "" ]
	[ "$(comp stacksnoop --e)" = "--explain" ]
	[ "$(comp stackcount --e)" = "" ]
}

@test "an option is completed from its start" {
	[ "$(comp stackcount --wa)" = "--walker" ]
	[ "$(comp stacksnoop --perf)" = "--perf-buffer-pages" ]
	diff -u <(printf '%s\n' --kernel-stacks-only --kernel-features) \
		<(comp stackcount t:sched:sched_switch --ker)
}

@test "--walker offers the walker names --help lists, as a word or after =" {
	names=$("$TOP/build/stackcount" --help | sed -nE 's/.*--walker \{([a-z,]+)\}.*/\1/p' |
		tr ',' '\n' | sort)
	[ "$names" = "$(printf '%s\n' auto cfi fp getstack stackmap)" ]
	diff -u <(echo "$names") <(comp stackcount --walker '' | sort)
	diff -u <(echo "$names") <(comp stacksnoop --walker = | sort)
	[ "$(comp stackcount --walker g)" = "getstack" ]
	[ "$(comp stackcount -K --walker = s)" = "stackmap" ]
}

@test "--legacy= offers the releases it takes; --legacy alone takes none" {
	diff -u <(printf '%s\n' 4.1 4.2 4.3 4.4 4.5) <(comp stackcount --legacy =)
	[ "$(comp stacksnoop --legacy = 4.4)" = "4.4" ]
	# a separate word is the pattern, a path
	touch notes
	[ "$(comp stackcount --legacy '')" = "notes" ]
}

@test "-p and --pid offer the PIDs alive, and only them" {
	# a PID namespace of our own: the shell is 1, sleep 2, nothing else
	run unshare --pid --fork --mount-proc bash -c '
		source "$1"
		sleep 100 &
		sleeper=$!
		for w in -p --pid; do
			COMP_WORDS=(stackcount "$w" "") COMP_CWORD=2
			_stackcount
			echo "$w: ${COMPREPLY[*]}"
		done
		COMP_WORDS=(stacksnoop -p 2) COMP_CWORD=2
		_stacksnoop
		echo "2: ${COMPREPLY[*]}"
		kill $sleeper
		wait $sleeper
		COMP_WORDS=(stackcount -p "") COMP_CWORD=2
		_stackcount
		echo "after kill: ${COMPREPLY[*]}"' bash "$COMPLETION"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' '-p: 1 2' '--pid: 1 2' '2: 2' 'after kill: 1')" ]
}

@test "numbers are not guessed: -c, -i, -D and the sizes offer nothing" {
	touch 1file
	for opt in -c --cpu -i --interval -D --duration --stack-storage-size; do
		[ "$(comp stackcount "$opt" '')" = "" ]
	done
	[ "$(comp stacksnoop --perf-buffer-pages '')" = "" ]
}

@test "--pprof and --svg are completed as paths" {
	mkdir flames.d
	touch flame.svg
	for opt in --pprof --svg; do
		diff -u <(printf '%s\n' flame.svg flames.d) <(comp stackcount "$opt" fl | sort)
	done
}

@test "the pattern is completed as a path" {
	mkdir app.d
	touch app
	diff -u <(printf '%s\n' app app.d) <(comp stackcount -U a | sort)
}

@test "after --: a command, then its files, and never our options" {
	mkdir bin
	printf '#!/bin/sh\n' > bin/swcomp-one
	printf '#!/bin/sh\n' > bin/swcomp-two
	chmod +x bin/swcomp-one bin/swcomp-two
	PATH=$PWD/bin:$PATH
	diff -u <(printf '%s\n' swcomp-one swcomp-two) \
		<(comp stackcount -U ./app:work -- swcomp | sort)
	touch -- --walkerfile
	[ "$(comp stackcount -U ./app:work -- swcomp-one --walker)" = "--walkerfile" ]
	diff -u <(printf '%s\n' --walkerfile bin | sort) \
		<(comp stacksnoop t:a:b -- swcomp-one -p '' | sort)
}
