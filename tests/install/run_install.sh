#!/usr/bin/env bash
# run_install.sh - `cmake --install` into a temporary prefix gives a working
# tool: the installed stint records with its installed runtime, `man` finds
# every page, and the bash completion completes commands, options and the
# function names of a data file.
#     run_install.sh BUILD_DIR PROGRAM_TO_RECORD
set -u
build=$1 prog=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || fail "cmake --install failed"
stint=$tmp/prefix/bin/stint
[ -x "$stint" ] || fail "no bin/stint"

cd "$tmp"
"$stint" record -q -o "$tmp/t.data" -- "$prog" >/dev/null 2>&1 || fail "the installed stint could not record $prog"
"$stint" report -i "$tmp/t.data" --format csv >/dev/null || fail "the installed stint could not report"

if command -v man >/dev/null; then
	for page in stint stint-record stint-report stint-export stint-annotate; do
		MANPATH=$tmp/prefix/share/man man -w "$page" >/dev/null 2>&1 || fail "man $page: not found under the prefix"
		MANWIDTH=80 man -l "$tmp/prefix/share/man/man1/$page.1" 2>/dev/null | grep -q . || fail "man $page renders nothing"
	done
else
	[ -s "$tmp/prefix/share/man/man1/stint-record.1" ] || fail "no stint-record.1"
fi

comp=$tmp/prefix/share/bash-completion/completions/stint
[ -r "$comp" ] || fail "no bash completion installed"
[ -r "$tmp/prefix/share/zsh/site-functions/_stint" ] || fail "no zsh completion installed"
out=$(PATH=$tmp/prefix/bin:$PATH bash -c '
	source "$1"
	complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _stint_complete; echo "${COMPREPLY[*]}"; }
	echo "cmds: $(complete_words stint rep)"
	echo "opts: $(complete_words stint report --b)"
	echo "by: $(complete_words stint report --by th)"
	echo "fns: $(complete_words stint callers -i "$2" ma)"
' _ "$comp" "$tmp/t.data")
grep -q "^cmds: report$" <<<"$out" || fail "completing 'rep': $out"
grep -q "^opts: .*--by" <<<"$out" || fail "completing 'report --b': $out"
grep -q "^by: thread$" <<<"$out" || fail "completing '--by th': $out"
grep -q "^fns: .*main" <<<"$out" || fail "completing function names: $out"
echo "install: ok"
