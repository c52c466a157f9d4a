# bash completion for stint: subcommands, their options, and function names
# read from the data file for the commands that take one.
_stint_functions()
{
	local input=stint.data i
	for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
		case ${COMP_WORDS[i]} in
		-i | --input) input=${COMP_WORDS[i + 1]} ;;
		esac
	done
	[ -r "$input" ] || return
	stint report -i "$input" --format csv 2>/dev/null | awk -F, 'NR > 1 { gsub(/"/, "", $1); print $1 }'
}

_stint_complete()
{
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="record report callers callees diff export html annotate recover help version"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	case $prev in
	-i | --input | -o | --output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--by) COMPREPLY=($(compgen -W "function module thread process line address" -- "$cur")); return ;;
	--format)
		if [ "$cmd" = export ]; then
			COMPREPLY=($(compgen -W "folded pprof callgrind chrome" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "table csv json" -- "$cur"))
		fi
		return ;;
	-m | --method) COMPREPLY=($(compgen -W "instrument sample" -- "$cur")); return ;;
	--function) COMPREPLY=($(compgen -W "$(_stint_functions)" -- "$cur")); return ;;
	help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		# the options are those the command's own help lists
		COMPREPLY=($(compgen -W "$(stint "$cmd" --help 2>&1 | grep -oE -- '--?[a-zA-Z][-a-zA-Z]*' | sort -u)" -- "$cur"))
		return
	fi
	case $cmd in
	callers | callees | annotate) COMPREPLY=($(compgen -W "$(_stint_functions)" -- "$cur")) ;;
	record) COMPREPLY=($(compgen -c -- "$cur")) ;;
	*) COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
}
complete -F _stint_complete stint
