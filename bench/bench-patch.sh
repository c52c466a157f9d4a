#!/usr/bin/env bash
# bench-patch.sh - what instrumenting through compiler patch sites costs:
# stint record against uftrace record on the SAME binaries, built without
# -finstrument-functions (bench/fib.c with -pg -mfentry, and with
# -fpatchable-function-entry=5; and plain -O2, which stint patches at load
# with Capstone and uftrace with its dynamic patching, -P .), medians of
# several runs, as ratios.
#
#   bash bench/bench-patch.sh              # RUNS=5, FIB_N=34
#   RUNS=9 FIB_N=36 bash bench/bench-patch.sh
#
# Environment (all optional): STINT (default build/stint), RUNS (5), FIB_N
# (34).  Builds into bench/out/ (gitignored); the summary also goes to
# bench/out/patch-summary.md.  See bench/README.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
RUNS="${RUNS:-5}"
FIB_N="${FIB_N:-34}"
bench_need gcc uftrace python3
bench_check RUNS FIB_N
CC="${CC:-gcc}"
# -pg at compile time only: no gcrt1.o, no gmon.out (glibc's __fentry__ is
# then what the binary calls when run alone)
$CC -O2 -g -pg -mfentry -c -o "$out/fib-fentry.o" "$here/fib.c"
$CC -o "$out/fib-fentry" "$out/fib-fentry.o"
$CC -O2 -g -fpatchable-function-entry=5 -o "$out/fib-patch" "$here/fib.c"
$CC -O2 -g -o "$out/fib-plain" "$here/fib.c"
$CC -O2 -g -finstrument-functions -o "$out/fib-inst" "$here/fib.c"
exec python3 "$here/bench_patch.py" --stint "$STINT" --out "$out" --runs "$RUNS" --fib-n "$FIB_N"
