#!/usr/bin/env python3
"""
bench_patch.py - the measuring half of bench/bench-patch.sh.

Variants, each run RUNS times round-robin (the order rotating per round),
wall clock of the whole command, stdout discarded:

  alone          the binary by itself (fentry: glibc's __fentry__; patch: NOPs)
  stint          stint record -m instrument -o FILE -- BINARY
  uftrace        uftrace record -d DIR BINARY (fentry), uftrace record -P . (patch)

for BINARY = fib-fentry (-pg -mfentry), fib-patch
(-fpatchable-function-entry=5) and fib-plain (plain -O2: stint moves the
first instructions with Capstone, uftrace -P . does the same with its
dynamic patching), plus stint on fib-inst
(-finstrument-functions) for reference.  added = median(tool) -
median(alone of that binary); the headline is added(stint) / added(uftrace).
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time


CPU = {}  # (build, tool) -> CPU times (user + system of the command and all it started)


def run(cmd, cwd, key=None):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("bench: '%s' failed: %s" % (" ".join(cmd), p.stderr.decode(errors="replace")[-1500:]))
    if key:
        CPU.setdefault(key, []).append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return dt


def summary(lines, path):
    """Print the summary's lines and keep them in path."""
    text = "\n".join(lines) + "\n"
    print(text)
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fib-n", type=int, default=34)
    a = ap.parse_args()
    out = a.out
    n = str(a.fib_n)
    data, udir = os.path.join(out, "patch.data"), os.path.join(out, "patch.uftrace")

    def clean():
        for p in (data,):
            if os.path.exists(p):
                os.unlink(p)
        shutil.rmtree(udir, ignore_errors=True)
        subprocess.run(["sync"])

    variants = [
        ("fentry", "alone", ["./fib-fentry", "fib", n]),
        ("fentry", "stint", [a.stint, "record", "-q", "-m", "instrument", "-o", data, "--", "./fib-fentry", "fib", n]),
        ("fentry", "uftrace", ["uftrace", "record", "-d", udir, "./fib-fentry", "fib", n]),
        ("patch", "alone", ["./fib-patch", "fib", n]),
        ("patch", "stint", [a.stint, "record", "-q", "-m", "instrument", "-o", data, "--", "./fib-patch", "fib", n]),
        ("patch", "uftrace", ["uftrace", "record", "-P", ".", "-d", udir, "./fib-patch", "fib", n]),
        ("plain", "alone", ["./fib-plain", "fib", n]),
        ("plain", "stint", [a.stint, "record", "-q", "-m", "instrument", "-o", data, "--", "./fib-plain", "fib", n]),
        ("plain", "uftrace", ["uftrace", "record", "-P", ".", "-d", udir, "./fib-plain", "fib", n]),
        ("inst", "alone", ["./fib-inst", "fib", n]),
        ("inst", "stint", [a.stint, "record", "-q", "-m", "instrument", "-o", data, "--", "./fib-inst", "fib", n]),
    ]
    times = {(b, t): [] for b, t, _ in variants}
    for _, _, cmd in variants:  # warm-up, untimed
        clean()
        run(cmd, out)
    for r in range(a.runs):
        k = r % len(variants)
        for b, t, cmd in variants[k:] + variants[:k]:
            clean()
            times[(b, t)].append(run(cmd, out, (b, t)))
    clean()
    med = {k: statistics.median(v) for k, v in times.items()}
    calls = 0
    f0, f1 = 1, 1
    for _ in range(a.fib_n):
        f0, f1 = f1, f0 + f1
    calls = 2 * f0 - 1 + 1  # fib's calls, and main
    lines = ["# stint vs uftrace on binaries not built with -finstrument-functions",
             "", "fib(%s): %d calls, %d events; %d runs, medians (min..max) of the whole command" % (
                 n, calls, 2 * calls, a.runs), "",
             "| build | alone | stint | uftrace | stint added | uftrace added | stint ÷ uftrace (added) | stint ns/event |",
             "|---|---|---|---|---|---|---|---|"]
    for b, label in (("fentry", "-pg -mfentry"), ("patch", "-fpatchable-function-entry=5"),
                     ("plain", "plain -O2 (Capstone; uftrace -P .)"),
                     ("inst", "-finstrument-functions (reference)")):
        al, st = med[(b, "alone")], med[(b, "stint")]
        uf = med.get((b, "uftrace"))
        sa = st - al
        ua = uf - al if uf is not None else None
        span = lambda k: "%.3f s (%.3f..%.3f)" % (med[k], min(times[k]), max(times[k]))
        lines.append("| %s | %s | %s | %s | %.3f s | %s | %s | %.1f |" % (
            label, span((b, "alone")), span((b, "stint")), span((b, "uftrace")) if uf is not None else "-",
            sa, "%.3f s" % ua if ua is not None else "-",
            "**%.2f**" % (sa / ua) if ua else "-", sa * 1e9 / (2 * calls)))
    # CPU time: on a loaded machine the wall clock mostly measures waiting
    # for a CPU; the processor time of everything the command ran does not
    cmed = {k: statistics.median(v) for k, v in CPU.items()}
    lines += ["", "CPU time (user + system of the command and every process it started), medians:", "",
              "| build | alone | stint | uftrace | stint added | uftrace added | stint ÷ uftrace (added) |",
              "|---|---|---|---|---|---|---|"]
    for b, label in (("fentry", "-pg -mfentry"), ("patch", "-fpatchable-function-entry=5"),
                     ("plain", "plain -O2 (Capstone; uftrace -P .)"),
                     ("inst", "-finstrument-functions (reference)")):
        al, st, uf = cmed[(b, "alone")], cmed[(b, "stint")], cmed.get((b, "uftrace"))
        sa, ua = st - al, (uf - al if uf is not None else None)
        lines.append("| %s | %.3f s | %.3f s | %s | %.3f s | %s | %s |" % (
            label, al, st, "%.3f s" % uf if uf is not None else "-", sa,
            "%.3f s" % ua if ua is not None else "-", "**%.2f**" % (sa / ua) if ua else "-"))
    summary(lines, os.path.join(out, "patch-summary.md"))


if __name__ == "__main__":
    main()
