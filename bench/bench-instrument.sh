#!/usr/bin/env bash
# bench-instrument.sh - the instrumentation overhead benchmark of stint.
#
# Not a test: a script a developer runs to see what stint's probes and its
# report cost, side by side with uftrace, gprof and a "floor" probe (the
# cheapest possible instrumentation: bench/floor.c), on the SAME binaries, in
# one run, median of several runs, and reported as RATIOS (the machine may be
# shared and noisy; absolute times are only there for context).
#
#   bash bench/bench-instrument.sh                 # 5 runs, both workloads
#   RUNS=9 bash bench/bench-instrument.sh          # more runs
#   STINT=/path/to/stint bash bench/bench-instrument.sh
#   STINT_B=/path/to/old/build/stint bash bench/bench-instrument.sh   # A/B of two builds
#   WORKLOADS=fib FIB_N=37 bash bench/bench-instrument.sh
#
# Environment (all optional):
#   STINT        stint binary (default: build/stint of this repository)
#   STINT_BASE   a second stint binary (another build, e.g. of the previous
#                commit) measured as one more variant: an A/B in one run
#   RUNS         runs per variant, the median is reported (default 5)
#   REPORT_RUNS  runs of each report command (default: RUNS)
#   FIB_N        fib(N) of the "fib" workload (default 36: ~48M calls)
#   LIB_N        iterations of the "lib" workload (default 20000000)
#   WORKLOADS    comma-separated: fib,lib (default both)
#   KEEP_DATA    set to keep the last recordings in bench/out/ (deleted otherwise)
#
# Builds into bench/out/ (gitignored), which also receives the recordings
# (a few GB for uftrace at the defaults: they are deleted between runs) and
# the summary as markdown: bench/out/summary.md.  See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/out"
STINT="${STINT:-$root/build/stint}"
STINT_BASE="${STINT_BASE:-}"
RUNS="${RUNS:-5}"
REPORT_RUNS="${REPORT_RUNS:-$RUNS}"
FIB_N="${FIB_N:-36}"
LIB_N="${LIB_N:-20000000}"
WORKLOADS="${WORKLOADS:-fib,lib}"

# ---- the tools -----------------------------------------------------------
missing=()
need() { # need COMMAND PACKAGE
	command -v "$1" >/dev/null 2>&1 || missing+=("$1 (Debian package $2)")
}
need gcc gcc
need gprof binutils
need uftrace uftrace
need python3 python3
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench: missing tools:" >&2
	for m in "${missing[@]}"; do echo "  - $m" >&2; done
	echo "install them with:  bash scripts/deps.sh --bench   (uftrace, linux-perf and the build tools)" >&2
	exit 1
fi
case "$(uname -m)" in
x86_64) ;;
*) echo "bench: floor.c reads the TSC (__rdtsc): x86_64 only, not $(uname -m)" >&2; exit 1 ;;
esac
if [ ! -x "$STINT" ]; then
	echo "bench: no stint at '$STINT'." >&2
	echo "  build it:  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j1" >&2
	echo "  or point to one:  STINT=/path/to/stint bash bench/bench-instrument.sh" >&2
	exit 1
fi
if [ -n "$STINT_BASE" ] && [ ! -x "$STINT_BASE" ]; then
	echo "bench: STINT_BASE '$STINT_BASE' is not an executable stint" >&2
	exit 1
fi
for v in RUNS REPORT_RUNS FIB_N LIB_N; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v must be a positive number, not '${!v}'" >&2; exit 1; }
done

# ---- build ---------------------------------------------------------------
mkdir -p "$out"
echo "building into $out"
CC="${CC:-gcc}"
$CC -O2 -g -o "$out/fib-plain" "$here/fib.c"
$CC -O2 -g -finstrument-functions -o "$out/fib-inst" "$here/fib.c"
$CC -O2 -g -pg -o "$out/fib-pg" "$here/fib.c"
$CC -O2 -fPIC -shared -o "$out/floor.so" "$here/floor.c"

# a sanity check on each build, so a broken one fails here and clearly
expected="$("$out/fib-plain" fib 20)"
for b in fib-inst fib-pg; do
	got="$(cd "$out" && "./$b" fib 20)"
	[ "$got" = "$expected" ] || { echo "bench: $b prints '$got', expected '$expected'" >&2; exit 1; }
done
got="$(cd "$out" && LD_PRELOAD="$out/floor.so" ./fib-inst fib 20)"
[ "$got" = "$expected" ] || { echo "bench: the floor probe broke fib-inst: '$got'" >&2; exit 1; }
rm -f "$out/gmon.out"

versions="stint $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo '+dirty')"
versions+=", $($CC --version | head -1), $(uftrace --version | head -1 | cut -d' ' -f1-2)"

exec python3 "$here/bench_instrument.py" --out "$out" --stint "$STINT" --runs "$RUNS" \
	--report-runs "$REPORT_RUNS" --fib-n "$FIB_N" --lib-n "$LIB_N" --workloads "$WORKLOADS" \
	--versions "$versions" --stint-base "$STINT_BASE"
