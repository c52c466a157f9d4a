#!/usr/bin/env python3
"""
bench_instrument.py - the measuring half of bench/bench-instrument.sh (run
that script, which checks the tools and builds the binaries first).

For each workload it runs every variant RUNS times, round-robin (the order
rotates from one round to the next, so a noisy moment of the shared machine
hits all variants alike), times the whole command with the wall clock, and
reports medians and, above all, ratios of medians:

  alone    the -finstrument-functions binary with glibc's no-op hooks
  floor    the same binary, LD_PRELOAD=floor.so (TSC into a TLS ring)
  stint    stint record -m instrument -o FILE  (same binary)
  stint-b  the same with a second stint (--stint-b, STINT_B): an A/B of two
           builds, e.g. before and after a change to the probes
  uftrace  uftrace record -d DIR               (same binary)
  plain    the binary built without instrumentation (-O2)
  gprof    the -pg binary (writes gmon.out at exit)

added(X) = median(X) - median(alone), except gprof: median(gprof) -
median(plain).  Then the report side: stint report -i FILE against uftrace
report -d DIR on the last recordings, and the bytes each stores per event.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time


def die(msg):
    sys.stderr.write("bench: %s\n" % msg)
    sys.exit(1)


def run(cmd, cwd, env=None, capture_err=False, expect_ok=True):
    """Run cmd, stdout discarded; return (seconds, stderr text)."""
    full_env = os.environ.copy()
    if env:
        full_env.update(env)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=full_env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE if capture_err else subprocess.DEVNULL)
    dt = time.perf_counter() - t0
    err = p.stderr.decode(errors="replace") if capture_err else ""
    if expect_ok and p.returncode != 0:
        if not capture_err:  # run it again to show why
            p2 = subprocess.run(cmd, cwd=cwd, env=full_env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
            err = p2.stderr.decode(errors="replace")
        die("'%s' failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, err[-2000:]))
    return dt, err


def output_of(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        die("'%s' failed (exit %d):\n%s" % (" ".join(cmd), p.returncode,
                                            p.stderr.decode(errors="replace")[-2000:]))
    return p.stdout.decode(errors="replace")


def rm(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def med(xs):
    return statistics.median(xs)


def fmt_s(x):
    return "%.3f s" % x


def fmt_ratio(x):
    if x is None:
        return "n/a"
    return "%.2f" % x


def ratio(a, b):
    # a ratio of two added times only means something if the denominator
    # stands clear of the noise
    if b is None or a is None or b <= 0:
        return None
    return a / b


class Workload:
    def __init__(self, name, label, args, out, variants):
        self.name = name
        self.label = label
        self.args = args  # argv after the binary
        self.out = out
        self.variants = variants
        self.times = {v: [] for v in variants}
        self.stint_in_program = []  # duration of the program under stint (ns), per run
        self.stint_err = ""
        self.calls = None  # instrumented calls, as the program computes them


def variant_cmd(w, v, a):
    """(argv, env, cwd) of variant v of workload w."""
    o = a.out
    inst = [os.path.join(o, "fib-inst")] + w.args
    if v == "alone":
        return inst, None, o
    if v == "floor":
        return inst, {"LD_PRELOAD": os.path.join(o, "floor.so")}, o
    if v == "stint":
        return [a.stint, "record", "-m", "instrument", "-o", stint_file(w, a), "--"] + inst, None, o
    if v == "stint-b":
        return [a.stint_b, "record", "-m", "instrument", "-o", stint_file(w, a, v), "--"] + inst, None, o
    if v == "uftrace":
        return ["uftrace", "record", "-d", uftrace_dir(w, a, v)] + inst, None, o
    if v == "uftrace-nolib":
        return ["uftrace", "record", "--no-libcall", "-d", uftrace_dir(w, a, v)] + inst, None, o
    if v == "plain":
        return [os.path.join(o, "fib-plain")] + w.args, None, o
    if v == "gprof":
        # gmon.out lands in the working directory
        return [os.path.join(o, "fib-pg")] + w.args, None, os.path.join(o, "gprof-" + w.name)
    raise ValueError(v)


def stint_file(w, a, v="stint"):
    return os.path.join(a.out, "%s-%s.data" % (v, w.name))


def uftrace_dir(w, a, v="uftrace"):
    return os.path.join(a.out, "%s-%s.data" % (v, w.name))


def clean_before(w, v, a):
    """Outside the timed region: remove what the previous run left."""
    if v in ("stint", "stint-b"):
        rm(stint_file(w, a, v))
        for d in glob.glob(os.path.join(a.out, ".stint-spool-*")):
            rm(d)
    elif v.startswith("uftrace"):
        rm(uftrace_dir(w, a, v))
        rm(uftrace_dir(w, a, v) + ".old")
    elif v == "gprof":
        d = os.path.join(a.out, "gprof-" + w.name)
        os.makedirs(d, exist_ok=True)
        rm(os.path.join(d, "gmon.out"))
    # the GBs the recorders wrote reach the disk now, not during the next run
    os.sync()


def stint_json(w, a):
    txt = output_of([a.stint, "report", "-i", stint_file(w, a), "--format", "json"], a.out)
    return json.loads(txt)


def one_run(w, v, a, timed=True):
    clean_before(w, v, a)
    cmd, env, cwd = variant_cmd(w, v, a)
    dt, err = run(cmd, cwd, env, capture_err=(v == "stint"))
    if v == "stint":
        w.stint_err = err
    if timed:
        w.times[v].append(dt)
        if v == "stint":  # how long the program itself ran under stint
            w.stint_in_program.append(stint_json(w, a)["duration_ns"] / 1e9)
    return dt


def measure(w, a):
    # the call count, and a warm-up round (page cache, CPU frequency) not counted
    line = output_of([os.path.join(a.out, "fib-inst")] + w.args, a.out)
    m = re.search(r"calls (\d+)", line)
    if not m:
        die("unexpected output of fib-inst: %r" % line)
    w.calls = int(m.group(1))
    print("== %s: %s  (%d instrumented calls, %d runs)" % (w.name, w.label, w.calls, a.runs),
          flush=True)
    for v in w.variants:
        one_run(w, v, a, timed=False)
    for r in range(a.runs):
        order = w.variants[r % len(w.variants):] + w.variants[:r % len(w.variants)]
        cells = []
        for v in order:
            dt = one_run(w, v, a)
            cells.append("%s %.3f" % (v, dt))
        print("   run %d/%d: %s" % (r + 1, a.runs, "  ".join(cells)), flush=True)


def uftrace_calls(text):
    """Sum of the Calls column of `uftrace report`, kernel rows left out."""
    total = 0
    for ln in text.splitlines():
        m = re.match(r"\s*[\d.]+\s+\S+\s+[\d.]+\s+\S+\s+(\d+)\s+(\S.*)$", ln)
        if m and not m.group(2).startswith("linux:"):
            total += int(m.group(1))
    return total


def report_side(w, a):
    """Time the reports on the last recordings; bytes per event."""
    res = {}
    sf, ud = stint_file(w, a), uftrace_dir(w, a)
    js = stint_json(w, a)
    res["stint_events"] = js["events"]
    res["stint_bytes"] = os.path.getsize(sf)
    m = re.search(r"([\d.]+) bytes/event", w.stint_err)
    res["stint_stream_bpe"] = float(m.group(1)) if m else None
    utext = output_of(["uftrace", "report", "-d", ud], a.out)
    ucalls = uftrace_calls(utext)
    res["uftrace_calls"] = ucalls
    res["uftrace_bytes"] = sum(os.path.getsize(f) for f in glob.glob(os.path.join(ud, "*.dat")))
    res["uftrace_events"] = 2 * ucalls
    ts, tu = [], []
    for r in range(a.report_runs):
        pair = [("stint", [a.stint, "report", "-i", sf], ts),
                ("uftrace", ["uftrace", "report", "-d", ud], tu)]
        if r % 2:
            pair.reverse()
        for _, cmd, acc in pair:
            acc.append(run(cmd, a.out)[0])
    res["stint_report"] = ts
    res["uftrace_report"] = tu
    gd = os.path.join(a.out, "gprof-" + w.name)
    if os.path.exists(os.path.join(gd, "gmon.out")):
        res["gprof_report"] = med([run(["gprof", "-b", os.path.join(a.out, "fib-pg"), "gmon.out"],
                                       gd)[0] for _ in range(a.report_runs)])
    return res


def summarize(w, res, a):
    """Rows of the summary, as (label, value) pairs, plus the verdicts."""
    t = {v: med(w.times[v]) for v in w.variants}
    spread = {v: (min(w.times[v]), max(w.times[v])) for v in w.variants}
    alone = t["alone"]
    added = {v: t[v] - alone for v in w.variants if v not in ("alone", "plain", "gprof")}
    if "gprof" in t:
        added["gprof"] = t["gprof"] - t["plain"]
    inst_events = 2 * w.calls
    s = {"t": t, "spread": spread, "added": added, "inst_events": inst_events}
    s["stint_floor"] = ratio(added.get("stint"), added.get("floor"))
    s["uftrace_floor"] = ratio(added.get("uftrace"), added.get("floor"))
    s["uftrace_nolib_floor"] = ratio(added.get("uftrace-nolib"), added.get("floor"))
    s["gprof_floor"] = ratio(added.get("gprof"), added.get("floor"))
    s["stint_uftrace"] = ratio(added.get("stint"), added.get("uftrace"))
    s["stint_b_floor"] = ratio(added.get("stint-b"), added.get("floor"))
    s["stint_stint_b"] = ratio(added.get("stint"), added.get("stint-b"))
    s["in_program"] = med(w.stint_in_program) if w.stint_in_program else None
    s["rep_stint"] = med(res["stint_report"])
    s["rep_uftrace"] = med(res["uftrace_report"])
    s["rep_ratio"] = ratio(s["rep_stint"], s["rep_uftrace"])
    s["stint_bpe"] = res["stint_bytes"] / res["stint_events"] if res["stint_events"] else None
    s["uftrace_bpe"] = (res["uftrace_bytes"] / res["uftrace_events"]
                        if res["uftrace_events"] else None)
    return s


def verdict(x, target):
    if x is None:
        return "n/a"
    return "met" if x <= target else "MISSED"


def render(ws, results, summaries, a, md):
    """The summary as text (md=False) or markdown (md=True)."""
    L = []
    if md:
        L.append("### stint instrumentation benchmark")
        L.append("")
    else:
        L.append("=" * 78)
        L.append("SUMMARY")
    L.append(("%s runs per variant (median), wall time of the whole command; %s. %s" %
              (a.runs, a.machine, a.when)))
    L.append("")
    for w in ws:
        s, res = summaries[w.name], results[w.name]
        ev = s["inst_events"]
        head = "%s — %s: %d instrumented calls, %d probe events" % (w.name, w.label, w.calls, ev)
        L.append(("#### " if md else "--- ") + head)
        L.append("")
        rows = [("variant", "median", "min..max", "added", "added/event", "added ÷ floor")]
        for v in w.variants:
            med_t = s["t"][v]
            lo, hi = s["spread"][v]
            add = s["added"].get(v)
            if v in ("alone", "plain"):
                per, rf = "", ""
            elif v == "gprof":  # one mcount per call, relative to the plain build
                per = "%.1f ns/call" % (add / w.calls * 1e9)
                rf = fmt_ratio(s["gprof_floor"])
            else:
                n = ev  # each tool per the events it records (libcalls included)
                if v == "uftrace" and res["uftrace_events"]:
                    n = res["uftrace_events"]
                elif v in ("stint", "stint-b") and res["stint_events"]:
                    n = res["stint_events"]
                per = "%.1f ns" % (add / n * 1e9)
                rf = {"floor": "1.00", "stint": fmt_ratio(s["stint_floor"]),
                      "stint-b": fmt_ratio(s["stint_b_floor"]),
                      "uftrace": fmt_ratio(s["uftrace_floor"]),
                      "uftrace-nolib": fmt_ratio(s["uftrace_nolib_floor"])}[v]
            name = {"alone": "alone (no-op hooks)", "plain": "plain -O2 (no -finstrument)",
                    "gprof": "gprof (-pg, vs plain)", "floor": "floor (TSC→TLS ring)",
                    "stint": "stint record", "stint-b": "stint record (B: %s)" % a.stint_b,
                    "uftrace": "uftrace record",
                    "uftrace-nolib": "uftrace record --no-libcall"}[v]
            rows.append((name, fmt_s(med_t), "%.3f..%.3f" % (lo, hi),
                         "" if add is None else "%+.3f s" % add, per, rf))
        L += table(rows, md)
        L.append("")
        if s["stint_stint_b"] is not None:
            L.append("A/B: stint's added time ÷ stint-b's: %s" % fmt_ratio(s["stint_stint_b"]))
            L.append("")
        if s["in_program"] is not None:
            ip = s["in_program"] - s["t"]["alone"]
            L.append("stint's added time: %.3f s while the program runs (probes: %.1f ns/event,"
                     " %s × the floor), %.3f s after it (stint start + turning the spool into"
                     " the data file)." % (ip, ip / res["stint_events"] * 1e9,
                                           fmt_ratio(ratio(ip, s["added"].get("floor"))),
                                           s["t"]["stint"] - s["in_program"]))
            L.append("")
        rows = [("", "stint", "uftrace", "stint ÷ uftrace")]
        rows.append(("report time (median of %d)" % a.report_runs, fmt_s(s["rep_stint"]),
                     fmt_s(s["rep_uftrace"]), fmt_ratio(s["rep_ratio"])))
        rows.append(("events stored", "%d" % res["stint_events"], "%d" % res["uftrace_events"], ""))
        rows.append(("data size", "%.1f MB" % (res["stint_bytes"] / 1e6),
                     "%.1f MB" % (res["uftrace_bytes"] / 1e6),
                     fmt_ratio(ratio(res["stint_bytes"], res["uftrace_bytes"]))))
        rows.append(("bytes/event (file)", fmt_ratio(s["stint_bpe"]), fmt_ratio(s["uftrace_bpe"]),
                     fmt_ratio(ratio(s["stint_bpe"], s["uftrace_bpe"]))))
        if res["stint_stream_bpe"] is not None:
            rows.append(("bytes/event (event stream)", "%.2f" % res["stint_stream_bpe"], "", ""))
        L += table(rows, md)
        if "gprof_report" in res:
            L.append("")
            L.append("(gprof -b on its gmon.out: %s)" % fmt_s(res["gprof_report"]))
        L.append("")
        L.append("targets: stint_added ÷ floor_added ≤ 1.5: %s (%s);  stint report ÷ uftrace"
                 " report ≤ 0.2: %s (%s)" % (fmt_ratio(s["stint_floor"]),
                                             verdict(s["stint_floor"], 1.5),
                                             fmt_ratio(s["rep_ratio"]),
                                             verdict(s["rep_ratio"], 0.2)))
        if w.name == "lib" and res["uftrace_events"] > ev:
            L.append("note: uftrace also probes the %d library calls (strlen, memcpy, ...) here;"
                     " stint recorded %d events, the floor probes only the instrumented"
                     " functions. Compare per event, or with the --no-libcall row."
                     % (res["uftrace_calls"] - w.calls, res["stint_events"]))
        L.append("")
    return L


def table(rows, md):
    if md:
        out = ["| " + " | ".join(rows[0]) + " |",
               "|" + "|".join("---" if i == 0 else "---:" for i in range(len(rows[0]))) + "|"]
        for r in rows[1:]:
            out.append("| " + " | ".join(r) + " |")
        return out
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for k, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, len(r))]
        out.append("  ".join(cells).rstrip())
        if k == 0:
            out.append("  ".join("-" * wd for wd in widths))
    return out


def machine():
    cpu = "unknown CPU"
    try:
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "%s, %d CPUs, Linux %s" % (cpu, os.cpu_count() or 0, platform.release())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--stint", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--report-runs", type=int, default=None)
    p.add_argument("--fib-n", type=int, default=36)
    p.add_argument("--lib-n", type=int, default=20000000)
    p.add_argument("--workloads", default="fib,lib")
    p.add_argument("--versions", default="")
    p.add_argument("--stint-b", default="")
    a = p.parse_args()
    a.out = os.path.abspath(a.out)
    a.stint = os.path.abspath(a.stint)
    a.stint_b = os.path.abspath(a.stint_b) if a.stint_b else ""
    b = ["stint-b"] if a.stint_b else []
    if a.runs < 1:
        die("--runs must be at least 1")
    if a.report_runs is None:
        a.report_runs = a.runs
    a.machine = machine()
    a.when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M") + (
        "; " + a.versions if a.versions else "")

    all_w = {
        "fib": Workload("fib", "recursive fib(%d), pure calls" % a.fib_n, ["fib", str(a.fib_n)],
                        a.out, ["alone", "floor", "stint"] + b + ["uftrace", "plain", "gprof"]),
        "lib": Workload("lib", "%d iterations of a function calling strlen+memcpy" % a.lib_n,
                        ["lib", str(a.lib_n)], a.out,
                        ["alone", "floor", "stint"] + b + ["uftrace", "uftrace-nolib", "plain",
                                                          "gprof"]),
    }
    names = [n.strip() for n in a.workloads.split(",") if n.strip()]
    for n in names:
        if n not in all_w:
            die("unknown workload '%s' (fib, lib)" % n)
    ws = [all_w[n] for n in names]
    results, summaries = {}, {}
    for w in ws:
        measure(w, a)
        print("   reports (%d runs each)..." % a.report_runs, flush=True)
        results[w.name] = report_side(w, a)
        summaries[w.name] = summarize(w, results[w.name], a)
    text = render(ws, results, summaries, a, md=False)
    print("\n".join(text))
    mdpath = os.path.join(a.out, "summary.md")
    with open(mdpath, "w") as f:
        f.write("\n".join(render(ws, results, summaries, a, md=True)) + "\n")
    print("markdown: %s" % mdpath)
    if not os.environ.get("KEEP_DATA"):  # GBs of recordings: gone unless asked for
        for w in ws:
            for v in w.variants:
                clean_before(w, v, a)
    else:
        print("recordings kept in %s" % a.out)


if __name__ == "__main__":
    main()
