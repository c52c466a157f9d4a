#!/usr/bin/env bash
# run_cli.sh - the command line's conventions (git's and perf's): help for a
# command, the version, "did you mean" for a typo, exit statuses.
# On a terminal: a pager, names cut to the width, colour; none of it in a pipe.
#     run_cli.sh STINT PROGRAM
set -u
stint=$1 prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$stint" help report 2>&1); rc=$?
[ $rc -eq 0 ] || fail "stint help report exited $rc"
grep -q "usage: stint report" <<<"$out" || fail "stint help report: no usage of report: $out"
out2=$("$stint" report --help 2>&1)
[ "$out" = "$out2" ] || fail "stint help report differs from stint report --help"

for v in -v --version version; do
	out=$("$stint" $v 2>&1); rc=$?
	[ $rc -eq 0 ] || fail "stint $v exited $rc"
	grep -Eq "^stint version [0-9]+\.[0-9]+" <<<"$out" || fail "stint $v printed: $out"
done

out=$("$stint" reprot 2>&1); rc=$?
[ $rc -eq 2 ] || fail "a typo exited $rc, not 2"
grep -q "'reprot' is not a stint command" <<<"$out" || fail "typo message: $out"
grep -q "report" <<<"$(tail -n 1 <<<"$out")" || fail "no 'did you mean report': $out"

# a path or a word given with escape codes: echoed as \xNN, one line (it moved the
# cursor, retitled the terminal, cleared the screen)
check_escaped() {
	out=$("$stint" "$@" 2>&1); rc=$?
	[ $rc -eq 2 ] || fail "stint $* exited $rc, not 2"
	[ "$(wc -l <<<"$out")" -eq 1 ] || fail "stint $*: not one line: $out"
	LC_ALL=C grep -q $'[\001-\037\177]\|\302[\200-\237]' <<<"$out" && fail "a control character echoed: $(od -c <<<"$out")"
	grep -q '\\x1b\|\\x0a\|\\x9b' <<<"$out" || fail "the escape code not shown: $out"
}
check_escaped report -i "$tmp/a"$'\033]0;PWNED\007\033[2J'
check_escaped html -i "$tmp/b"$'\n'"x" -o "$tmp/x.html"
check_escaped reprot$'\033[2J'
check_escaped callers -i "$tmp/c"$'\302\233'"31m" f

out=$("$stint" help nosuchthing 2>&1); rc=$?
[ $rc -eq 2 ] || fail "help of an unknown command exited $rc"

out=$("$stint" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "no command exited $rc, not 2"
for bad in "report --pid abc" "report --tid -3" "report --tree --threshold nan" "html --min-share nan"; do
	out=$("$stint" $bad 2>&1); rc=$?
	[ $rc -ne 0 ] || fail "stint $bad was accepted"
	[ "$(wc -l <<<"$out")" -eq 1 ] || fail "stint $bad: not one error line: $out"
done
"$stint" report --help | grep -q '%%' && fail "a literal %% in report's help"
"$stint" html --help | grep -q '%%' && fail "a literal %% in html's help"
"$stint" record -q -o "$tmp/t.data" -- "$prog" >/dev/null 2>&1 || fail "could not record $prog"
out=$("$stint" report -i "$tmp/t.data")
grep -q "Elapsed incl" <<<"$out" || fail "the table's header does not name its columns: $out"
grep -q "^# columns:" <<<"$out" || fail "no legend in the header"
grep -q $'\033' <<<"$out" && fail "colour escapes in a pipe"
awk 'length > 100 && !/^#/' <<<"$out" | grep -q '\[libc.so.6\]$' || fail "names were shortened in a pipe"
out=$("$stint" report -i "$tmp/t.data" --width 100)
awk 'length > 100 && !/^#/' <<<"$out" | grep -q . && fail "--width 100 left longer lines"
out=$("$stint" diff "$tmp/t.data" "$tmp/t.data" --width 100) || fail "diff --width was refused"
awk 'length > 100 && /\[/ && !/^#/' <<<"$out" | grep -q . && fail "diff --width 100 left longer rows"
out=$("$stint" report -i "$tmp/t.data" --color=always)
grep -q $'\033\\[3[12]m' <<<"$out" || fail "--color=always: no colour"
out=$("$stint" report -i "$tmp/t.data" --color=never)
grep -q $'\033' <<<"$out" && fail "--color=never: colour"
# options of the other method, and options without their partner: one line, no recording
for bad in "-e cycles" "-F 99" "-g" "-p 1" "--call-graph fp" "--duration 2"; do
	out=$(cd "$tmp" && "$stint" record $bad -o "$tmp/bad.data" -- "$prog" 2>&1); rc=$?
	[ $rc -eq 2 ] || fail "record $bad in instrument mode exited $rc, not 2"
	[ "$(wc -l <<<"$out")" -eq 1 ] || fail "record $bad: not one line: $out"
	[ -e "$tmp/bad.data" ] && fail "record $bad recorded anyway"
done
out=$("$stint" record -m sample --duration 2 -o "$tmp/bad.data" -- "$prog" 2>&1)
[ $? -eq 2 ] || fail "--duration without -p was accepted: $out"
# a filter that selects nothing says so
out=$("$stint" report -i "$tmp/t.data" --tid 999999999 2>&1)
[ $? -ne 0 ] && grep -q "no thread 999999999" <<<"$out" || fail "--tid of no thread: $out"
out=$("$stint" callers main -i "$tmp/t.data" --pid 999999999 2>&1)
[ $? -ne 0 ] && grep -q "no process 999999999" <<<"$out" || fail "--pid of no process: $out"
# an existing data file is kept as FILE.old; -f overwrites
cp "$tmp/t.data" "$tmp/keep.data"
"$stint" record -q -o "$tmp/keep.data" -- "$prog" >/dev/null 2>&1
cmp -s "$tmp/t.data" "$tmp/keep.data.old" || fail "the previous data file was not kept as .old"
cp "$tmp/keep.data" "$tmp/second"
"$stint" record -q -f -o "$tmp/keep.data" -- "$prog" >/dev/null 2>&1
cmp -s "$tmp/t.data" "$tmp/keep.data.old" || fail "-f touched the .old file"
cmp -s "$tmp/second" "$tmp/keep.data" && fail "-f did not overwrite"
"$stint" report -i "$tmp/keep.data" >/dev/null || fail "the -f recording is not readable"

# --no-pager is accepted by every command that prints a view
"$stint" callers -i "$tmp/t.data" --no-pager main >/dev/null || fail "callers refused --no-pager"
"$stint" annotate -i "$tmp/t.data" --no-pager main >/dev/null || fail "annotate refused --no-pager"
"$stint" diff --no-pager "$tmp/t.data" "$tmp/t.data" >/dev/null || fail "diff refused --no-pager"

if command -v script >/dev/null; then
	# a terminal: the report goes through $PAGER
	out=$(PAGER='sed s/^/PAGED:/' script -qec "$stint report -i $tmp/t.data" /dev/null)
	grep -q "^PAGED:# stint report" <<<"$out" || fail "no pager on a terminal: $out"
	out=$(PAGER='sed s/^/PAGED:/' script -qec "$stint report --no-pager -i $tmp/t.data" /dev/null)
	grep -q "PAGED:" <<<"$out" && fail "--no-pager still paged"
	# callers and diff page their tables as report does
	for cmd in "callers -i $tmp/t.data main" "diff $tmp/t.data $tmp/t.data"; do
		out=$(PAGER='sed s/^/PAGED:/' script -qec "$stint $cmd" /dev/null)
		grep -q "^PAGED:" <<<"$out" || fail "stint $cmd: no pager on a terminal: $out"
		out=$(PAGER='sed s/^/PAGED:/' script -qec "$stint $cmd --no-pager" /dev/null)
		grep -q "PAGED:" <<<"$out" && fail "stint $cmd --no-pager still paged"
	done
else
	echo "SKIP: the pager on a terminal (no 'script' command)"
fi
echo "cli: ok"
