#!/usr/bin/env bash
# bench-compensation.sh - how well stint's probe-cost compensation recovers
# the time of a parent of tiny callees (bench/tiny_calls.c: parent() calls
# a ~20 ns function 3 million times).
#
# Not a test: a script a developer runs (the test suite checks only the
# arithmetic of compensation, e2e.compensation_exact).  Each round runs the
# plain build (-O2) and records the instrumented one (-O2
# -finstrument-functions); it compares the plain run's CPU time of the loop
# (its own CLOCK_THREAD_CPUTIME_ID) with stint's compensated Application
# Inclusive time of parent(), which leaves out the intervals in which the
# thread was off the CPU.  Target: within 5%.  Medians of RUNS rounds.
#
#   bash bench/bench-compensation.sh          # 7 rounds
#   RUNS=15 CALLS=10000000 bash bench/bench-compensation.sh
#   PATCHED=1 bash bench/bench-compensation.sh  # record the plain build,
#                                # patched at load (Capstone), instead
#   DEPENDENT=1 bash bench/bench-compensation.sh  # each call takes the
#                                # previous one's result (no overlap)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/out"
STINT="${STINT:-$root/build/stint}"
RUNS="${RUNS:-7}"
CALLS="${CALLS:-3000000}"
PATCHED="${PATCHED:-0}"
DEPENDENT="${DEPENDENT:-0}"
[ -x "$STINT" ] || { echo "bench-compensation: no stint at '$STINT' (build it, or set STINT=)" >&2; exit 1; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ && "$CALLS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-compensation: RUNS and CALLS are positive numbers" >&2; exit 1; }
mkdir -p "$out"
CC="${CC:-gcc}"
$CC -O2 -g -o "$out/tiny-plain" "$here/tiny_calls.c"
$CC -O2 -g -finstrument-functions -o "$out/tiny-inst" "$here/tiny_calls.c"
exec python3 - "$STINT" "$out" "$RUNS" "$CALLS" "$PATCHED" "$DEPENDENT" <<'PY'
import json, os, re, statistics, subprocess, sys
stint, out, runs, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
mode = ["dependent"] if sys.argv[6] == "1" else []
parent = "parent_dependent" if mode else "parent"
recorded = "tiny-plain" if sys.argv[5] == "1" else "tiny-inst"
print("recording %s (%s)%s" % (recorded, "patched at load" if recorded == "tiny-plain" else "-finstrument-functions",
                               ", each call taking the previous result" if mode else ""))
data = os.path.join(out, "tiny.stint")
plain, comp, raw = [], [], []
for i in range(runs):
    p = subprocess.run([os.path.join(out, "tiny-plain"), calls] + mode, stdout=subprocess.PIPE, universal_newlines=True, check=True)
    plain.append(float(re.search(r"parent_cpu_ns=(\d+)", p.stdout).group(1)))
    subprocess.run([stint, "record", "-m", "instrument", "-o", data, "--", os.path.join(out, recorded), calls] + mode,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    for opts, acc in (([], comp), (["--no-compensation"], raw)):
        rep = json.loads(subprocess.run([stint, "report", "-i", data, "--format", "json"] + opts,
                                        stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout)
        acc.append([f for f in rep["functions"] if f["name"] == parent][0]["application_inclusive"])
    print("  round %d/%d: plain %.1f ms, stint compensated %.1f ms (%+.1f%%), raw %.1f ms" % (
        i + 1, runs, plain[-1] / 1e6, comp[-1] / 1e6, 100 * (comp[-1] / plain[-1] - 1), raw[-1] / 1e6), flush=True)
os.unlink(data)
pm, cm, rm = statistics.median(plain), statistics.median(comp), statistics.median(raw)
err = 100 * (cm / pm - 1)
print("parent of %s tiny calls: plain %.1f ms CPU; stint AI compensated %.1f ms (%+.1f%%), raw %.1f ms (%+.0f%%) "
      "(medians of %d)" % (calls, pm / 1e6, cm / 1e6, err, rm / 1e6, 100 * (rm / pm - 1), runs))
print("target: compensated within 5%%: %s" % ("met" if abs(err) <= 5 else "MISSED"))
PY
