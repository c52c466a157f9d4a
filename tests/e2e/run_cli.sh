#!/usr/bin/env bash
# run_cli.sh - the command line's conventions (git's and perf's): help for a
# command, the version, "did you mean" for a typo, exit statuses.
#     run_cli.sh STINT
set -u
stint=$1
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
echo "cli: ok"
