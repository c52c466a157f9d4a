#!/usr/bin/env python3
"""
bench_sample.py - the measuring half of bench/bench-sample.sh (run that
script, which checks the tools and builds the binaries first).

stint record -m sample against perf record, on the same binaries
(bench/cpu_work.c built with and without frame pointers), in one run:

  1. slowdown of the program's own work: work_ns (which cpu_work measures
     around its work loop) under the profiler / work_ns alone, at each rate
     (-F 1000, -F 10000 by default) for
       fp:    stint --call-graph fp   vs  perf record -g             (cpu_work-fp)
       dwarf: stint (dwarf default)   vs  perf record --call-graph dwarf
                                                                      (cpu_work-nofp)
     both on the task-clock.  Every variant runs RUNS times, round-robin (the
     order rotates from one round to the next, so a noisy moment of the
     shared machine hits all variants alike); medians are reported.  The
     wall time of the whole command (start-up, perf's exit, stint's
     unwinding after the program) and the CPU time of all the processes
     are secondary columns.
  2. report time on a recording of ~REPORT_SAMPLES samples of cpu_work-nofp
     (DWARF): stint report -i FILE vs perf report -i FILE --stdio.
  3. exclusive percentages of hot_a/hot_b/hot_c: stint's exclusive samples
     vs perf report --no-children Self, on the 1 kHz DWARF recordings of
     step 1, pooled over the runs; cpu_work --shares gives the truth.
     (perf's Self keeps the samples of inlined code on the symbol holding
     it, so stint's side is the exclusive samples of the addresses in each
     hot_X, from --by address: its function rows give them to spin, which
     is inlined into hot_X.)
  4. inlined code: inline_work (tests/progs/s_inline.c, static functions
     inlined at -O2) recorded by each tool with DWARF stacks; inclusive %
     of each inlined function, stint vs perf report --inline --children,
     and the report times (stint report vs perf report --inline
     --children --stdio).
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

HOT = ["hot_a", "hot_b", "hot_c"]


def die(msg):
    sys.stderr.write("bench: %s\n" % msg)
    sys.exit(1)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd, cwd, quiet_out=False):
    """Run cmd; return (wall seconds, CPU seconds of it and its children,
    stdout, stderr).  Dies if it fails."""
    c0 = children_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL if quiet_out else subprocess.PIPE,
                       stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    cpu = children_cpu() - c0
    out = "" if quiet_out else p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        die("'%s' failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, err[-2000:]))
    return dt, cpu, out, err


def output_of(cmd, cwd):
    return run(cmd, cwd)[2]


def rm(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def med(xs):
    return statistics.median(xs) if xs else None


def work_ns(out, cmd):
    m = re.search(r"work_ns=(\d+)", out)
    if not m:
        die("no work_ns= in the output of '%s': %r" % (" ".join(cmd), out[-500:]))
    return int(m.group(1))


class Variant:
    def __init__(self, name, tool, build, rate=None, graph=None):
        self.name = name      # e.g. "stint-dwarf-1000"
        self.tool = tool      # alone, stint, perf
        self.build = build    # fp, nofp
        self.rate = rate
        self.graph = graph    # fp, dwarf
        self.work = []        # work_ns per run (s)
        self.wall = []        # whole command (s)
        self.cpu = []         # CPU of all processes (s)
        self.samples = []     # samples the tool says it recorded
        self.lost = []        # lost samples (stint: + stacks cut short, as text)
        self.notes = []


def data_file(v, a):
    return os.path.join(a.out, "%s.data" % v.name)


def variant_cmd(v, a, rounds, rate=None, path=None):
    prog = [os.path.join(a.out, "cpu_work-" + v.build), str(rounds)]
    rate = rate or v.rate
    path = path or data_file(v, a)
    if v.tool == "alone":
        return prog
    if v.tool == "stint":
        return [a.stint, "record", "-m", "sample", "-F", str(rate), "--call-graph", v.graph,
                "-o", path, "--"] + prog
    if v.tool == "perf":
        g = ["-g"] if v.graph == "fp" else ["--call-graph", "dwarf"]
        return ["perf", "record", "-e", "task-clock", "-F", str(rate)] + g + \
            ["-o", path, "--"] + prog
    raise ValueError(v.tool)


def clean(path):
    """Outside the timed region: remove what the previous run left, and get
    it written back now rather than during the next run."""
    rm(path)
    rm(path + ".old")
    for d in glob.glob(os.path.join(os.path.dirname(path), ".stint-spool-*")):
        rm(d)
    os.sync()


def parse_tool_err(v, err):
    """(samples, lost text) from the line the recorder prints."""
    if v.tool == "stint":
        m = re.search(r"recorded (\d+) samples \((\d+) lost, (\d+) stacks? cut short\)", err)
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
    elif v.tool == "perf":
        m = re.search(r"\((\d+) samples\)", err)
        if m:  # lost samples: only perf report says (see report_side)
            return int(m.group(1)), None, None
    return None, None, None


def hot_samples(v, path, a):
    """{hot function: exclusive samples, "_total": all samples} of a recording."""
    res = {}
    if v.tool == "stint":
        # the samples whose address is in the symbol hot_X, as perf's Self
        # counts them (stint's function rows give them to spin, inlined
        # into each hot_X: doc/numbers.md (sampling))
        js = json.loads(output_of([a.stint, "report", "-i", path, "--format", "json", "--by", "address"],
                                  a.out))
        res["_total"] = js["samples"]
        for r in js["addresses"]:
            m = re.match(r"^0x[0-9a-f]+ (\S+)\+0x", r["name"])
            if m and m.group(1) in HOT:
                res[m.group(1)] = res.get(m.group(1), 0) + r["exclusive_samples"]
    else:
        txt = output_of(["perf", "report", "-i", path, "--no-children", "--stdio", "-n",
                         "-g", "none", "--sort", "symbol"], a.out)
        total = 0
        for ln in txt.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+\[(.)\]\s+(\S+)", ln)
            if not m:
                continue
            total += int(m.group(2))
            if m.group(4) in HOT:
                res[m.group(4)] = res.get(m.group(4), 0) + int(m.group(2))
        res["_total"] = total
    for h in HOT:
        res.setdefault(h, 0)
    return res


def one_run(v, a, timed=True):
    path = data_file(v, a)
    clean(path)
    cmd = variant_cmd(v, a, a.rounds)
    wall, cpu, out, err = run(cmd, a.out)
    w = work_ns(out, cmd) / 1e9
    if timed:
        v.work.append(w)
        v.wall.append(wall)
        v.cpu.append(cpu)
        s, lost, cut = parse_tool_err(v, err)
        if s is not None:
            v.samples.append(s)
            v.lost.append((lost, cut))
        if v.graph == "dwarf" and v.rate == a.pct_rate:  # the percentages, from the same runs
            a.pct[v.tool].append(hot_samples(v, path, a))
    return w, wall


def calibrate(a):
    """Rounds of cpu_work for WORK_MS of work, alone; the true shares."""
    prog = os.path.join(a.out, "cpu_work-nofp")
    probe = 1000
    best = min(work_ns(output_of([prog, str(probe)], a.out), [prog]) for _ in range(3))
    per_round = best / probe
    a.rounds = max(1, int(round(a.work_ms * 1e6 / per_round)))
    out = output_of([prog, "--shares", str(max(1, a.rounds // 20))], a.out)
    a.truth = {h: float(re.search(h + r"=([\d.]+)", out).group(1)) for h in HOT}
    # the report recording: REPORT_SAMPLES samples at REPORT_RATE
    a.report_rounds = max(1, int(round(a.report_samples / a.report_rate * 1e9 / per_round)))
    print("cpu_work: %.1f µs per round alone; %d rounds ≈ %d ms of work; shares (alone, "
          "--shares): %s" % (per_round / 1e3, a.rounds, a.work_ms,
                             " ".join("%s=%.2f%%" % (h, a.truth[h]) for h in HOT)), flush=True)


def measure(vs, a):
    print("warm-up round (not counted)...", flush=True)
    for v in vs:
        one_run(v, a, timed=False)
    a.pct = {"stint": [], "perf": []}
    for r in range(a.runs):
        k = r % len(vs)
        order = vs[k:] + vs[:k]
        cells = []
        for v in order:
            w, wall = one_run(v, a)
            cells.append("%s %.3f/%.3f" % (v.name, w, wall))
        print("   run %d/%d (work/wall s): %s" % (r + 1, a.runs, "  ".join(cells)), flush=True)


def report_side(a):
    """One DWARF recording of ~REPORT_SAMPLES samples by each tool, then the
    report commands, alternating."""
    res = {}
    paths = {}
    for tool in ("stint", "perf"):
        v = Variant("report-" + tool, tool, "nofp", a.report_rate, "dwarf")
        path = data_file(v, a)
        clean(path)
        cmd = variant_cmd(v, a, a.report_rounds)
        wall, cpu, out, err = run(cmd, a.out)
        s, lost, cut = parse_tool_err(v, err)
        res[tool] = {"record_wall": wall, "work": work_ns(out, cmd) / 1e9, "samples": s,
                     "lost": lost, "cut": cut, "bytes": os.path.getsize(path), "times": []}
        paths[tool] = path
    print("report recordings: stint %s samples, perf %s samples; report runs..."
          % (res["stint"]["samples"], res["perf"]["samples"]), flush=True)
    cmds = {"stint": [a.stint, "report", "-i", paths["stint"]],
            "perf": ["perf", "report", "-i", paths["perf"], "--stdio"]}
    for tool in ("stint", "perf"):  # warm (page cache, perf's symbol caches)
        txt = run(cmds[tool], a.out)[2]
        if tool == "perf":
            m = re.search(r"Total Lost Samples: (\d+)", txt)
            res["perf"]["lost"] = int(m.group(1)) if m else None
    for r in range(a.report_runs):
        order = ["stint", "perf"] if r % 2 == 0 else ["perf", "stint"]
        for tool in order:
            res[tool]["times"].append(run(cmds[tool], a.out, quiet_out=True)[0])
    res["paths"] = paths
    return res


INLINED = ["hash_values", "mix_round", "sort_values", "swap_down"]


def perf_inline_children(path, a):
    """{function: children %} of perf report --inline --children (inlined ones without the suffix),
    of inline_work's samples only."""
    txt = output_of(["perf", "report", "-i", path, "--inline", "--children", "--stdio", "-g", "none",
                     "--comms", "inline_work", "--percentage", "relative"], a.out)
    rows = {}
    for ln in txt.splitlines():
        m = re.match(r"^\s+([\d.]+)%\s+([\d.]+)%\s.*?\[\.\]\s+(.*?)(\s+\(inlined\))?\s*$", ln)
        if m:
            rows.setdefault(m.group(3), float(m.group(1)))
    return rows


def inline_side(a):
    """Record inline_work with each tool (DWARF, REPORT_RATE) and time the
    reports; compare the inlined functions' inclusive % on one run that both
    tools sample (perf record -- stint record -- inline_work), so that the
    machine's load, which moves the shares from run to run, does not enter
    the comparison."""
    prog = os.path.join(a.out, "inline_work")
    alone = run([prog], a.out)[1]
    # S_SCALE for ~REPORT_SAMPLES samples at REPORT_RATE
    scale = max(0.2, a.report_samples / a.report_rate / max(alone, 0.05))
    env_prog = ["env", "S_SCALE=%.2f" % scale, prog]
    res = {"scale": scale, "times": {"stint": [], "perf": []}}
    paths = {}
    for tool in ("stint", "perf"):
        path = os.path.join(a.out, "inline-%s.data" % tool)
        clean(path)
        if tool == "stint":
            cmd = [a.stint, "record", "-m", "sample", "-F", str(a.report_rate), "-o", path, "--"] + env_prog
        else:
            cmd = ["perf", "record", "-e", "task-clock:u", "-F", str(a.report_rate), "--call-graph", "dwarf",
                   "-o", path, "--"] + env_prog
        err = run(cmd, a.out)[3]
        res[tool + "_samples"] = parse_tool_err(Variant("x", tool, "nofp"), err)[0]
        paths[tool] = path
    both = {t: os.path.join(a.out, "inline-both-%s.data" % t) for t in ("stint", "perf")}
    for path in both.values():
        clean(path)
    run(["perf", "record", "-q", "-e", "task-clock:u", "-F", str(a.rate_both), "--call-graph", "dwarf",
         "-o", both["perf"], "--", a.stint, "record", "-m", "sample", "-F", str(a.rate_both), "-o", both["stint"],
         "--"] + env_prog, a.out)
    paths.update({"both-" + t: p for t, p in both.items()})
    js = json.loads(output_of([a.stint, "report", "-i", both["stint"], "--format", "json"], a.out))
    res["stint"] = {f: 0.0 for f in INLINED}
    for r in js["functions"]:
        if r["name"] in INLINED:
            res["stint"][r["name"]] += r["inclusive_pct"]
    res["both_samples"] = js["samples"]
    res["perf"] = perf_inline_children(both["perf"], a)
    cmds = {"stint": [a.stint, "report", "-i", paths["stint"]],
            "perf": ["perf", "report", "-i", paths["perf"], "--inline", "--children", "--stdio"]}
    for tool in cmds:  # warm
        run(cmds[tool], a.out, quiet_out=True)
    for r in range(a.report_runs):
        for tool in (("stint", "perf") if r % 2 == 0 else ("perf", "stint")):
            res["times"][tool].append(run(cmds[tool], a.out, quiet_out=True)[0])
    res["paths"] = paths
    print("inline recordings: stint %s samples, perf %s samples" % (res["stint_samples"], res["perf_samples"]),
          flush=True)
    return res


def fmt_ratio(x):
    return "n/a" if x is None else "%.2f" % x


def fmt_s(x):
    return "n/a" if x is None else "%.3f s" % x


def verdict_le(x, target, spread_overlaps=False):
    if x is None or target is None:
        return "n/a"
    if x <= target:
        return "met"
    return "MISSED (within the run-to-run spread)" if spread_overlaps else "MISSED"


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


def pooled_pct(runs):
    """{hot: percent} over all the runs' samples together, and the per-run
    min..max of each."""
    total = sum(r["_total"] for r in runs)
    pooled = {h: (100.0 * sum(r[h] for r in runs) / total if total else None) for h in HOT}
    spread = {h: (min(100.0 * r[h] / r["_total"] for r in runs if r["_total"]),
                  max(100.0 * r[h] / r["_total"] for r in runs if r["_total"])) for h in HOT}
    return pooled, spread, total


def render(vs, rep, a, md):
    L = []
    if md:
        L.append("### stint sampling benchmark")
        L.append("")
    else:
        L.append("=" * 78)
        L.append("SUMMARY")
    L.append("%d runs per variant (median); %s. %s" % (a.runs, a.machine, a.when))
    L.append("")
    byname = {v.name: v for v in vs}
    verdicts = []

    # ---- 1. slowdown
    L.append(("#### " if md else "--- ") + "1. slowdown of the program's own work "
             "(cpu_work, %d rounds ≈ %d ms alone, task-clock)" % (a.rounds, a.work_ms))
    L.append("")
    rows = [("variant", "work (median)", "min..max", "slowdown", "added µs/sample", "samples",
             "wall (whole cmd)", "wall ÷ alone", "CPU, all procs")]
    base = {"fp": byname["alone-fp"], "nofp": byname["alone-nofp"]}
    slow = {}
    for v in vs:
        w = med(v.work)
        b = base[v.build]
        sd = w / med(b.work)
        slow[v.name] = sd
        smp = med(v.samples) if v.samples else None
        per = ("%.1f" % ((w - med(b.work)) / smp * 1e6)) if smp else ""
        label = {"alone": "alone (%s build)" % ("-fno-omit-frame-pointer" if v.build == "fp"
                                                 else "-fomit-frame-pointer"),
                 "stint": "stint --call-graph %s -F %s" % (v.graph, v.rate),
                 "perf": "perf %s -F %s" % ("-g" if v.graph == "fp" else "--call-graph dwarf",
                                            v.rate)}[v.tool]
        lost = ""
        if v.tool == "stint" and v.lost and any(l or c for l, c in v.lost):
            lost = " (lost %d, cut %d)" % (med([l for l, _ in v.lost]), med([c for _, c in v.lost]))
        rows.append((label, "%.3f s" % w, "%.3f..%.3f" % (min(v.work), max(v.work)),
                     "%.3f" % sd, per, ("%d" % smp if smp else "") + lost,
                     fmt_s(med(v.wall)), "%.2f" % (med(v.wall) / med(b.wall)),
                     fmt_s(med(v.cpu))))
    L += table(rows, md)
    L.append("")
    L.append("slowdown = median work_ns under the tool ÷ median work_ns alone (same build); "
             "added µs/sample = (work − alone work) ÷ samples; wall = the whole command, with "
             "start-up, perf's exit and stint's unwinding after the program; CPU = user+sys of "
             "the tool and the program together.")
    L.append("")
    rows = [("unwinding", "rate", "stint slowdown", "perf slowdown", "stint ÷ perf (added)",
             "target: stint ≤ perf")]
    for graph in ("fp", "dwarf"):
        for rate in a.rates:
            s = byname["stint-%s-%d" % (graph, rate)]
            p = byname["perf-%s-%d" % (graph, rate)]
            ss, ps = slow[s.name], slow[p.name]
            overl = min(s.work) <= max(p.work)
            added_ratio = (ss - 1) / (ps - 1) if ps > 1.0005 else None
            vd = verdict_le(ss, ps, overl)
            verdicts.append(("slowdown %s %d Hz" % (graph, rate), vd))
            rows.append((graph, "%d Hz" % rate, "%.3f" % ss, "%.3f" % ps, fmt_ratio(added_ratio),
                         vd))
    L += table(rows, md)
    L.append("")

    # ---- 2. report time
    st, pt = med(rep["stint"]["times"]), med(rep["perf"]["times"])
    rr = st / pt if pt else None
    vd = verdict_le(rr, 0.2)
    verdicts.append(("report ≤ 0.2 × perf report", vd))
    L.append(("#### " if md else "--- ") + "2. report time (DWARF, cpu_work-nofp, -F %d, %d rounds)"
             % (a.report_rate, a.report_rounds))
    L.append("")
    rows = [("", "stint", "perf", "stint ÷ perf")]
    rows.append(("report (median of %d)" % a.report_runs, fmt_s(st), fmt_s(pt), fmt_ratio(rr)))
    rows.append(("report min..max",
                 "%.3f..%.3f" % (min(rep["stint"]["times"]), max(rep["stint"]["times"])),
                 "%.3f..%.3f" % (min(rep["perf"]["times"]), max(rep["perf"]["times"])), ""))
    rows.append(("samples in the recording", str(rep["stint"]["samples"]),
                 str(rep["perf"]["samples"]), ""))
    rows.append(("lost / stacks cut short", "%s / %s" % (rep["stint"]["lost"], rep["stint"]["cut"]),
                 "%s / -" % rep["perf"]["lost"], ""))
    rows.append(("data file", "%.1f MB" % (rep["stint"]["bytes"] / 1e6),
                 "%.1f MB" % (rep["perf"]["bytes"] / 1e6),
                 fmt_ratio(rep["stint"]["bytes"] / rep["perf"]["bytes"])))
    rows.append(("record: work / whole command", "%.3f / %.3f s" % (rep["stint"]["work"],
                                                                     rep["stint"]["record_wall"]),
                 "%.3f / %.3f s" % (rep["perf"]["work"], rep["perf"]["record_wall"]), ""))
    L += table(rows, md)
    L.append("")
    L.append("target: stint report ≤ 0.2 × perf report --stdio: %s (%s). stint unwinds when the "
             "recording ends, perf report unwinds each time it runs: the record row shows where "
             "each tool pays for it." % (fmt_ratio(rr), vd))
    L.append("")

    # ---- 3. percentages
    L.append(("#### " if md else "--- ") + "3. exclusive percentages (DWARF, -F %d, cpu_work-nofp, "
             "the %d runs of part 1 pooled)" % (a.pct_rate, a.runs))
    L.append("")
    sp, sspread, stot = pooled_pct(a.pct["stint"])
    pp, pspread, ptot = pooled_pct(a.pct["perf"])
    rows = [("function", "truth (--shares)", "stint exclusive_pct", "per run", "perf Self%",
             "per run", "|stint − perf|", "target ≤ 2 points")]
    for h in HOT:
        d = abs(sp[h] - pp[h])
        vd = verdict_le(d, 2.0)
        verdicts.append(("%% %s" % h, vd))
        rows.append((h, "%.2f" % a.truth[h], "%.2f" % sp[h],
                     "%.1f..%.1f" % sspread[h], "%.2f" % pp[h], "%.1f..%.1f" % pspread[h],
                     "%.2f" % d, vd))
    L += table(rows, md)
    L.append("")
    L.append("samples pooled: stint %d, perf %d (perf's include its few kernel samples: "
             "-e task-clock samples the kernel too when permitted). stint: exclusive_samples ÷ "
             "samples of the addresses inside hot_X in `stint report --format json --by address` (the "
             "function rows give them to spin, inlined into each hot_X); perf: the Samples column of `perf report "
             "--no-children --stdio -n -g none --sort symbol`." % (stot, ptot))
    L.append("")
    # ---- 4. inlined code
    inl = a.inline
    L.append(("#### " if md else "--- ") + "4. inlined code (inline_work = tests/progs/s_inline.c at -O2, "
             "S_SCALE=%.2f, DWARF)" % inl["scale"])
    L.append("")
    L.append("inclusive %%: one run sampled by both tools at %d Hz (perf record -- stint record -- "
             "inline_work; perf report --inline --children --comms inline_work --percentage relative), "
             "%d samples by stint:" % (a.rate_both, inl["both_samples"]))
    L.append("")
    rows = [("inlined function", "stint inclusive_pct", "perf --inline --children", "|stint − perf|",
             "target ≤ 2 points")]
    for f in INLINED:
        sv, pv = inl["stint"].get(f), inl["perf"].get(f)
        d = abs(sv - pv) if sv is not None and pv is not None else None
        vd = verdict_le(d, 2.0)
        verdicts.append(("inline %% %s" % f, vd))
        rows.append((f, "%.2f" % sv if sv is not None else "n/a", "%.2f" % pv if pv is not None else "n/a",
                     "%.2f" % d if d is not None else "n/a", vd))
    L += table(rows, md)
    L.append("")
    st, pt = med(inl["times"]["stint"]), med(inl["times"]["perf"])
    rr = st / pt if pt else None
    vd = verdict_le(rr, 0.2)
    verdicts.append(("inline report ≤ 0.2 × perf report --inline", vd))
    L.append("report time: a recording by each tool at -F %d:" % a.report_rate)
    L.append("")
    rows = [("", "stint report", "perf report --inline --children --stdio", "stint ÷ perf")]
    rows.append(("median of %d" % a.report_runs, fmt_s(st), fmt_s(pt), fmt_ratio(rr)))
    rows.append(("samples", str(inl["stint_samples"]), str(inl["perf_samples"]), ""))
    L += table(rows, md)
    L.append("")
    L.append("stint resolves the inline chains once, when the recording ends (stored per sampled address "
             "in the data file); perf report resolves them each time it runs.")
    L.append("")
    L.append("verdicts: " + "; ".join("%s: %s" % (k, v) for k, v in verdicts))
    L.append("")
    return L


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
    p.add_argument("--rates", default="1000,10000")
    p.add_argument("--work-ms", type=int, default=1000)
    p.add_argument("--report-samples", type=int, default=20000)
    p.add_argument("--report-rate", type=int, default=10000)
    p.add_argument("--versions", default="")
    a = p.parse_args()
    a.out = os.path.abspath(a.out)
    a.stint = os.path.abspath(a.stint)
    if a.runs < 1:
        die("--runs must be at least 1")
    if a.report_runs is None:
        a.report_runs = a.runs
    a.rates = [int(x) for x in a.rates.split(",") if x.strip()]
    a.pct_rate = 1000 if 1000 in a.rates else a.rates[0]
    a.rate_both = 4000  # part 4's shared run: ~4 samples per CPU ms from each tool
    a.machine = machine()
    a.when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M") + (
        "; " + a.versions if a.versions else "")

    calibrate(a)
    vs = [Variant("alone-fp", "alone", "fp"), Variant("alone-nofp", "alone", "nofp")]
    for rate in a.rates:
        for graph, build in (("fp", "fp"), ("dwarf", "nofp")):
            for tool in ("stint", "perf"):
                vs.append(Variant("%s-%s-%d" % (tool, graph, rate), tool, build, rate, graph))
    measure(vs, a)
    rep = report_side(a)
    a.inline = inline_side(a)
    text = render(vs, rep, a, md=False)
    print("\n".join(text))
    mdpath = os.path.join(a.out, "sample-summary.md")
    with open(mdpath, "w") as f:
        f.write("\n".join(render(vs, rep, a, md=True)) + "\n")
    print("markdown: %s" % mdpath)
    if not os.environ.get("KEEP_DATA"):
        for v in vs:
            clean(data_file(v, a))
        for path in list(rep["paths"].values()) + list(a.inline["paths"].values()):
            clean(path)
    else:
        print("recordings kept in %s" % a.out)


if __name__ == "__main__":
    main()
