#!/usr/bin/env python3
"""
bench_spawn.py - the measuring half of bench/bench-spawn.sh.

Variants, run RUNS times round-robin (the order rotating per round), wall
clock and CPU time (user + system of everything the command started):

  alone          bash spawn_work.sh ROUNDS
  stint          stint record -m instrument --no-cache (bash and every
                 program it starts patched at load; the scans of their
                 code made anew, as in a first recording)
  stint, cached  stint record -m instrument, the scans taken from the
                 user's cache (recorder/rec_cache.c) as in later recordings
  uftrace        uftrace record -P . (the same, by uftrace's dynamic patching)
  stint sample   stint record -m sample (reference: no probes)
  perf           perf record -g (reference)

added = median(tool) - median(alone); the headline is added(stint) /
added(uftrace), for both stint variants.
"""
import argparse
import os
import shutil
import statistics
import subprocess

from bench_patch import CPU, run, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--commands-per-round", type=int, default=4,
                    help="processes the work script starts per round (spawn_work.sh: 4; compile_work.sh: 3)")
    a = ap.parse_args()
    out = a.out
    data, udir, pdata = (os.path.join(out, n) for n in ("spawn.data", "spawn.uftrace", "spawn.perf"))
    bash = shutil.which("bash", path="/usr/bin:/bin")
    work = [bash, a.work, str(a.rounds)]
    # a cache of scans of its own, filled by the untimed warm-up round
    os.environ["XDG_CACHE_HOME"] = os.path.join(out, "xdg")
    shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)

    def clean():
        for p in (data, pdata):
            if os.path.exists(p):
                os.unlink(p)
        shutil.rmtree(udir, ignore_errors=True)
        subprocess.run(["sync"])

    variants = [
        ("alone", work),
        ("stint", [a.stint, "record", "-q", "-m", "instrument", "--no-cache", "-o", data, "--"] + work),
        ("stint, cached", [a.stint, "record", "-q", "-m", "instrument", "-o", data, "--"] + work),
        ("uftrace", ["uftrace", "record", "-P", ".", "-d", udir] + work),
        ("stint sample", [a.stint, "record", "-q", "-m", "sample", "-o", data, "--"] + work),
        ("perf record -g", ["perf", "record", "-q", "-g", "-o", pdata, "--"] + work),
    ]
    times = {t: [] for t, _ in variants}
    for _, cmd in variants:  # warm-up, untimed
        clean()
        run(cmd, out)
    for r in range(a.runs):
        k = r % len(variants)
        for t, cmd in variants[k:] + variants[:k]:
            clean()
            times[t].append(run(cmd, out, t))
    clean()
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu = {k: statistics.median(v) for k, v in CPU.items()}
    procs = 1 + a.commands_per_round * a.rounds
    lines = ["# A script of %d short processes (bench/%s %d)" % (procs, os.path.basename(a.work), a.rounds), "",
             "%d runs, medians (min..max) of the whole command; added: beyond the script alone, "
             "per command of the script in the last column" % a.runs, "",
             "| tool | wall clock | × alone | CPU time | CPU added | per command |", "|---|---|---|---|---|---|"]
    for t, _ in variants:
        lines.append("| %s | %.3f s (%.3f..%.3f) | %.1f | %.3f s | %s | %s |" % (
            t, med[t], min(times[t]), max(times[t]), med[t] / med["alone"], cpu[t],
            "%.3f s" % (cpu[t] - cpu["alone"]) if t != "alone" else "-",
            "%.1f ms" % ((cpu[t] - cpu["alone"]) * 1e3 / procs) if t != "alone" else "-"))
    ua, cu = med["uftrace"] - med["alone"], cpu["uftrace"] - cpu["alone"]
    lines.append("")
    for t in ("stint", "stint, cached"):
        sa, ca = med[t] - med["alone"], cpu[t] - cpu["alone"]
        lines.append("%s ÷ uftrace, time added: wall clock **%.2f**, CPU **%.2f**" % (
            t, sa / ua if ua > 0 else float("nan"), ca / cu if cu > 0 else float("nan")))
    summary(lines, os.path.join(out, "spawn-summary.md"))


if __name__ == "__main__":
    main()
