#!/usr/bin/env bash
# bench-sample.sh - the sampling benchmark of stint.
#
# Not a test: a script a developer runs to see what `stint record -m sample`
# and `stint report` cost, side by side with perf (perf record / perf
# report), on the SAME binaries, in one run, median of several runs, and
# reported as RATIOS (the machine may be shared and noisy; absolute times
# are only there for context).  The workload, bench/cpu_work.c, times its
# own work (clock_gettime around the work loop), so the slowdown measured is
# that of the program, without the profilers' start-up and exit.
#
#   bash bench/bench-sample.sh                     # 5 runs, -F 1000 and -F 10000
#   RUNS=9 bash bench/bench-sample.sh              # more runs
#   STINT=/path/to/stint bash bench/bench-sample.sh
#   WORK_MS=2000 RATES=1000,4000 bash bench/bench-sample.sh
#
# Environment (all optional):
#   STINT           stint binary (default: build/stint of this repository)
#   RUNS            runs per variant, the median is reported (default 5)
#   REPORT_RUNS     runs of each report command (default: RUNS)
#   RATES           comma-separated sampling rates, Hz (default 1000,10000)
#   WORK_MS         work per run, calibrated in rounds of cpu_work (default 1000)
#   REPORT_SAMPLES  samples in the recording the reports read (default 20000)
#   REPORT_RATE     its sampling rate, Hz (default 10000: ~2 s of work)
#   KEEP_DATA       set to keep the last recordings in bench/out/
#
# Builds into bench/out/ (gitignored), which also receives the recordings
# (perf's DWARF ones are ~80 MB per second at 10 kHz; deleted between runs)
# and the summary as markdown: bench/out/sample-summary.md.  Takes ~2-3
# minutes at the defaults.  See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/out"
STINT="${STINT:-$root/build/stint}"
RUNS="${RUNS:-5}"
REPORT_RUNS="${REPORT_RUNS:-$RUNS}"
RATES="${RATES:-1000,10000}"
WORK_MS="${WORK_MS:-1000}"
REPORT_SAMPLES="${REPORT_SAMPLES:-20000}"
REPORT_RATE="${REPORT_RATE:-10000}"

# ---- the tools -----------------------------------------------------------
missing=()
need() { # need COMMAND PACKAGE
	command -v "$1" >/dev/null 2>&1 || missing+=("$1 (Debian package $2)")
}
need gcc gcc
need perf linux-perf
need python3 python3
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench: missing tools:" >&2
	for m in "${missing[@]}"; do echo "  - $m" >&2; done
	echo "install them with:  bash scripts/deps.sh --bench   (uftrace, linux-perf and the build tools)" >&2
	exit 1
fi
if [ ! -x "$STINT" ]; then
	echo "bench: no stint at '$STINT'." >&2
	echo "  build it:  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j1" >&2
	echo "  or point to one:  STINT=/path/to/stint bash bench/bench-sample.sh" >&2
	exit 1
fi
for v in RUNS REPORT_RUNS WORK_MS REPORT_SAMPLES REPORT_RATE; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v must be a positive number, not '${!v}'" >&2; exit 1; }
done
[[ "$RATES" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "bench: RATES must be like 1000,10000, not '$RATES'" >&2; exit 1; }

# perf must be allowed to sample this user's processes (perf_event_paranoid
# <= 2, or root), and so must stint's perf sampler: try it once
if ! perf record -q -e task-clock -F 1000 -o /dev/null -- true >/dev/null 2>&1; then
	echo "bench: 'perf record -e task-clock' does not work here (see /proc/sys/kernel/perf_event_paranoid," >&2
	echo "  now $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?'); it must be 2 or less, or run as root)" >&2
	exit 1
fi

# ---- build ---------------------------------------------------------------
mkdir -p "$out"
echo "building into $out"
CC="${CC:-gcc}"
$CC -O2 -g -fno-omit-frame-pointer -o "$out/cpu_work-fp" "$here/cpu_work.c"
$CC -O2 -g -fomit-frame-pointer -o "$out/cpu_work-nofp" "$here/cpu_work.c"
# inlined code: static functions inlined at -O2 (part 4 of the summary)
$CC -O2 -g -I"$root/tests/progs" -o "$out/inline_work" "$root/tests/progs/s_inline.c"

# a sanity check on each build: same checksum
a="$("$out/cpu_work-fp" 10 | sed 's/.*checksum=//')"
b="$("$out/cpu_work-nofp" 10 | sed 's/.*checksum=//')"
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "bench: the two cpu_work builds disagree ('$a' vs '$b')" >&2; exit 1; }

versions="stint $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo '+dirty')"
versions+=", $($CC --version | head -1), perf $(perf --version | cut -d' ' -f3)"

exec python3 "$here/bench_sample.py" --out "$out" --stint "$STINT" --runs "$RUNS" \
	--report-runs "$REPORT_RUNS" --rates "$RATES" --work-ms "$WORK_MS" \
	--report-samples "$REPORT_SAMPLES" --report-rate "$REPORT_RATE" --versions "$versions"
