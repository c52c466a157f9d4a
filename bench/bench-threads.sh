#!/usr/bin/env bash
# bench-threads.sh - what instrumentation adds to starting many threads at
# once (bench/thread_start.c: 2,000 threads, each one call, all alive
# together): the seconds the pthread_create loop takes under stint record and
# under uftrace record, each as a ratio to the program alone; medians of
# RUNS runs, the three alternated.  Each thread's recording begins with its
# first probe (a buffer file, its mappings, a perf event): this is that cost.
#
#   bash bench/bench-threads.sh            # RUNS=5, THREADS=2000
#
# Environment (all optional): STINT (default build/stint), RUNS (5), THREADS
# (2000).  The spool and data files go to bench/out/ (gitignored), on the
# disk the user's would be.  See bench/README.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
RUNS="${RUNS:-5}"
THREADS="${THREADS:-2000}"
bench_need gcc uftrace python3
bench_check RUNS THREADS
prog="$out/thread_start"
gcc -O2 -g -finstrument-functions -pthread -o "$prog" "$here/thread_start.c"
cd "$out"
alone=() stint=() uft=()
for ((r = 0; r < RUNS; r++)); do
	alone+=("$("$prog" "$THREADS")")
	stint+=("$("$STINT" record -q -f -o "$out/threads.data" -- "$prog" "$THREADS")")
	uft+=("$(uftrace record -d "$out/threads.uftrace" "$prog" "$THREADS" 2>/dev/null)")
done
rm -rf "$out/threads.data" "$out/threads.uftrace" "$out/threads.uftrace.old"
python3 - "$THREADS" "${alone[*]}" "${stint[*]}" "${uft[*]}" <<'PY' | tee "$out/threads-summary.md"
import statistics, sys
n = sys.argv[1]
a, s, u = ([float(x) for x in arg.split()] for arg in sys.argv[2:5])
ma, ms, mu = statistics.median(a), statistics.median(s), statistics.median(u)
print("starting %s threads (pthread_create loop), medians of %d runs: alone %.3f s, stint %.3f s (%.1fx), "
      "uftrace %.3f s (%.1fx)" % (n, len(a), ma, ms, ms / ma, mu, mu / ma))
print("stint runs %s; uftrace runs %s" % (" ".join("%.2f" % x for x in s), " ".join("%.2f" % x for x in u)))
PY
