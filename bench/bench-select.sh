#!/usr/bin/env bash
# bench-select.sh - what a record-time selection saves on a program patched
# at load (plain -O2, Capstone): stint record with no selection against
# stint record --function main on bench/fib.c's fib workload, where every
# other call is fib's.  Medians of the CPU time (user + system of the
# command and all it started) of RUNS rounds, round-robin, and the ratio of
# the time each adds to the program alone.
#
#   bash bench/bench-select.sh             # RUNS=7, FIB_N=32
#
# Environment (all optional): STINT (default build/stint), RUNS, FIB_N.
# Builds into bench/out/ (gitignored).  See bench/README.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
RUNS="${RUNS:-7}"
FIB_N="${FIB_N:-32}"
bench_check RUNS FIB_N
${CC:-gcc} -O2 -g -o "$out/fib-plain" "$here/fib.c"
exec python3 - "$STINT" "$out" "$RUNS" "$FIB_N" <<'PY'
import os, resource, statistics, subprocess, sys
stint, out, runs, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
data = os.path.join(out, "select.data")
variants = [("alone", ["./fib-plain", "fib", n]),
            ("stint", [stint, "record", "-q", "-f", "-o", data, "--", "./fib-plain", "fib", n]),
            ("stint --function main", [stint, "record", "-q", "-f", "-o", data, "--function", "main", "--",
                                       "./fib-plain", "fib", n])]
cpu = {k: [] for k, _ in variants}
def run(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("bench: '%s' failed: %s" % (" ".join(cmd), p.stderr.decode(errors="replace")[-800:]))
    return r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
for _, cmd in variants:  # warm-up
    run(cmd)
for r in range(runs):
    k = r % len(variants)
    for name, cmd in variants[k:] + variants[:k]:
        cpu[name].append(run(cmd))
med = {k: statistics.median(v) for k, v in cpu.items()}
al = med["alone"]
print("fib(%s) plain -O2, %d runs, CPU time medians (min..max):" % (n, runs))
for k, _ in variants:
    print("  %-24s %.3f s (%.3f..%.3f)   added %.3f s" % (k, med[k], min(cpu[k]), max(cpu[k]), med[k] - al))
full, sel = med["stint"] - al, med["stint --function main"] - al
print("added by --function main / added with no selection: %.3f" % (sel / full if full > 0 else float("nan")))
PY
