# SPDX-License-Identifier: MIT
# bash completion for stackcount and stacksnoop: their options, the walker
# names after --walker, the releases after --legacy=, live PIDs after -p,
# files after --pprof and --svg, and after -- a command and its files.
# Installed as .../bash-completion/completions/stackcount, with stacksnoop a
# link to it: bash-completion loads a completion by the name of the command.

# _stackwalk_complete TOOL_OPTION...: COMPREPLY for the word under the cursor.
_stackwalk_complete()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' eq='' i p

	COMPREPLY=()
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# bash splits "--walker=fp" into three words: --walker, =, fp
	if [[ $cur == = ]]; then
		cur='' eq=1
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]} eq=1
	fi

	# past --, the words are COMMAND's
	for ((i = 1; i < COMP_CWORD; i++)); do
		[[ ${COMP_WORDS[i]} == -- ]] || continue
		if ((i == COMP_CWORD - 1)); then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur")
		else
			compopt -o filenames 2> /dev/null || true
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return 0
	done

	case $prev in
	-p | --pid)
		# no command run for it, so no process of ours in the list
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			[[ $p == "$cur"* ]] && COMPREPLY+=("$p")
		done
		return 0
		;;
	--walker)
		mapfile -t COMPREPLY < <(compgen -W "auto cfi getstack stackmap fp" -- "$cur")
		return 0
		;;
	--pprof | --svg)
		compopt -o filenames 2> /dev/null || true
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	-c | --cpu | -i | --interval | -D | --duration | --stack-storage-size | --unwind-memory | \
		--file-memory | \
		--perf-buffer-pages)
		return 0	# a number: nothing to offer
		;;
	esac
	# --legacy takes its release only as --legacy=VERSION
	if [[ $prev == --legacy && $eq ]]; then
		mapfile -t COMPREPLY < <(compgen -W "4.1 4.2 4.3 4.4 4.5" -- "$cur")
	elif [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$* -h --help -p --pid -c --cpu
			-D --duration -r --regexp -K --kernel-stacks-only
			-U --user-stacks-only --debug --walker --stack-storage-size --unwind-memory
			--file-memory --legacy --kernel-features --no-demangle --no-debuginfod --version" -- "$cur")
	else
		# the pattern: a path is the start of one (./app:func)
		compopt -o filenames 2> /dev/null || true
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
	return 0
}

_stackcount()
{
	_stackwalk_complete -i --interval -T --timestamp -s --offset -P --perpid \
		-v --verbose -d --delimited -f --folded --json --pprof --svg
}

_stacksnoop()
{
	_stackwalk_complete -s --offset -v --verbose -d --delimited --explain \
		--perf-buffer-pages --json
}

complete -F _stackcount stackcount
complete -F _stacksnoop stacksnoop
