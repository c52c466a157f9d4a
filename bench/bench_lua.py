#!/usr/bin/env python3
"""bench_lua.py - how close stint's compensated exclusive shares come to
perf's sampled shares on a real program (Lua 5.3 running bench/lua_work.lua).
Run through bench/bench-lua.sh, which fetches Lua's sources and builds the two
binaries: lua-inst (-O2 -g -finstrument-functions) and lua-plain (-O2 -g).

For each of RUNS rounds: perf samples lua-plain (`perf record -e cpu-clock:u`)
and stint records lua-inst (`stint record -m instrument`).  Shares:
- stint: compensated Application Exclusive of each function / session AI
  (Application time leaves out the intervals in which the thread was off
  the CPU, as perf's cpu-clock samples do: on a loaded machine Elapsed
  shares would mostly measure who was current when the thread waited);
- perf: self samples of each function / all samples, each sample's address
  resolved to the innermost function with addr2line -i (so that a function
  that gcc inlined counts as itself, as its probes make it in lua-inst).
Functions of shared libraries are summed per library on both sides (stint
names a library function as the program called it, perf by the symbol that
ran).  The gap: the sum, over stint's 20 largest exclusive shares, of
|stint share - perf share|, in percentage points; medians over the rounds
are printed, with the plain and instrumented run times for context.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

TOP = 20


def cpu_time(argv):
    """User + system CPU seconds of a command (its wall time means little on a shared machine)."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit("%s failed" % " ".join(argv))
    return ru.ru_utime + ru.ru_stime


def run(argv, **kw):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def key_of(name, module, exe_base):
    return name if module == exe_base else "[%s]" % module


def stint_shares(stint, out, lua, script, exe_base, extra):
    data = os.path.join(out, "lua.stint")
    t0 = time.perf_counter()
    run([stint, "record", "-m", "instrument", "-o", data, "--", lua, script])
    took = time.perf_counter() - t0
    rep = json.loads(run([stint, "report", "-i", data, "--format", "json"] + extra).stdout)
    total = rep["session"]["application_inclusive"]
    shares = collections.Counter()
    for r in rep["functions"]:
        shares[key_of(r["name"], r["module"], exe_base)] += 100.0 * r["application_exclusive"] / total
    os.unlink(data)
    return shares, took, rep.get("compensation", {}), total


def perf_shares(out, lua, script, exe_base, by_symbol=False):
    data = os.path.join(out, "lua.perf")
    t0 = time.perf_counter()
    run(["perf", "record", "-q", "-e", "cpu-clock:u", "-F", "10000", "-o", data, "--", lua, script])
    took = time.perf_counter() - t0
    if by_symbol:
        # against a recording of the same binary patched at load, whose
        # functions are its symbols: inlined code counts for its holder
        rep = run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym", "--stdio", "-q",
                   "--percentage", "relative"]).stdout
        counts = collections.Counter()
        for line in rep.splitlines():
            parts = line.split()
            if len(parts) < 4 or not parts[0].endswith("%"):
                continue
            base = os.path.basename(parts[1])
            counts[parts[3] if base == exe_base else "[%s]" % base] += float(parts[0][:-1])
        os.unlink(data)
        return counts, took, -1
    # every sample's address and module, then the innermost function at it
    script_out = run(["perf", "script", "-i", data, "-F", "ip,dso", "--no-inline"]).stdout
    counts = collections.Counter()
    exe_ips = collections.Counter()
    total = 0
    for line in script_out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        ip, dso = parts[0], parts[1].strip("()")
        total += 1
        base = os.path.basename(dso)
        if base == exe_base:
            exe_ips[ip] += 1
        else:
            counts["[%s]" % base] += 1
    # addr2line on the executable (not PIE-relocated: built -no-pie)
    ips = list(exe_ips)
    if ips:
        a2l = run(["addr2line", "-f", "-i", "-e", lua] + ["0x" + i for i in ips]).stdout.splitlines()
        # with -i, each address gives (function, file:line) pairs, innermost
        # first; the pairs of one address end where the next begins: resolve
        # one address at a time for a reliable split instead
        if len(a2l) != 2 * len(ips):
            names = {}
            for ip in ips:
                o = run(["addr2line", "-f", "-i", "-e", lua, "0x" + ip]).stdout.splitlines()
                names[ip] = o[0] if o else "??"
        else:
            names = {ip: a2l[2 * k] for k, ip in enumerate(ips)}
        for ip, n in exe_ips.items():
            counts[names[ip]] += n
    os.unlink(data)
    return collections.Counter({k: 100.0 * v / total for k, v in counts.items()}), took, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--stint", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--script", required=True)
    ap.add_argument("--report-options", default="")
    ap.add_argument("--patched", action="store_true",
                    help="record lua-plain, patched at load, instead of lua-inst")
    a = ap.parse_args()
    plain = os.path.join(a.out, "lua-plain")
    inst = plain if a.patched else os.path.join(a.out, "lua-inst")
    extra = a.report_options.split()
    gaps, rows = [], []
    t_plain, t_inst, t_perf, ai = [], [], [], []
    comp = {}
    for i in range(a.runs):
        t_plain.append(cpu_time([plain, a.script]))
        ps, tp, nsamples = perf_shares(a.out, plain, a.script, "lua-plain", by_symbol=a.patched)
        ss, ti, comp, sess_ai = stint_shares(a.stint, a.out, inst, a.script, os.path.basename(inst), extra)
        ai.append(sess_ai / 1e9)
        t_perf.append(tp)
        t_inst.append(ti)
        top = [k for k, _ in ss.most_common(TOP)]
        gap = sum(abs(ss[k] - ps.get(k, 0.0)) for k in top)
        gaps.append(gap)
        rows.append((top, ss, ps))
        print("  round %d/%d: gap %.2f points (perf: %d samples)" % (i + 1, a.runs, gap, nsamples), flush=True)
    med = statistics.median(gaps)
    k = gaps.index(sorted(gaps)[len(gaps) // 2])
    top, ss, ps = rows[k]
    print()
    print("%-28s %8s %8s %8s" % ("function (median round)", "stint %", "perf %", "gap"))
    for name in top:
        print("%-28s %8.2f %8.2f %8.2f" % (name[:28], ss[name], ps.get(name, 0.0), ss[name] - ps.get(name, 0.0)))
    print()
    print("lua-plain: %.3f s of CPU; stint's session Application time of %s: %.3f s (%+.1f%%)" % (
        statistics.median(t_plain), os.path.basename(inst), statistics.median(ai),
        100.0 * (statistics.median(ai) / statistics.median(t_plain) - 1)))
    print("wall: lua-plain under perf %.3f s; %s under stint record %.3f s (medians)" % (
        statistics.median(t_perf), os.path.basename(inst), statistics.median(t_inst)))
    if comp:
        print("compensation: %s" % json.dumps(comp))
    print("top-%d exclusive-share gap, stint vs perf: %.2f points (median of %d; rounds: %s)" % (
        TOP, med, a.runs, ", ".join("%.2f" % g for g in gaps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
