#!/usr/bin/env python3
"""run_lines.py - end-to-end tests of the instrumentation values per source
line and per call-site address (doc/numbers.md, "Lines and instructions").

tests/progs/line_costs.c has known costs per line of run(): the SPIN line
polls the thread's CPU-time clock for 20 ms of CPU time, the SLEEP line
sleeps 10 ms, the CALL line calls a 5 ms (CPU time) spin twice.  It is
recorded as built with -finstrument-functions and through the patch sites of
-pg -mfentry and -fpatchable-function-entry=5 builds.  The checks:

- calls per line exactly (the SPIN line's calls are the polls the program
  prints; library calls count on the line that made them);
- what holds by definition, whatever the machine's load: the Inclusive
  values of the lines of run() add up to run()'s own Inclusive values, the
  line calling run() has run()'s Inclusive values, EE <= EI and AE <= AI;
- times within bounds wide enough for a loaded machine (recorded with
  --no-compensation, so the CPU time the program measured, probes
  included, is what the lines show): the SPIN line's AI is about 20 ms of
  CPU time, the CALL line's about 10, the SLEEP line's EI at least 10 ms
  and its AI (off the CPU) near zero.

    run_lines.py --stint build/stint --progs build/tests TESTNAME
    run_lines.py --list
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_e2e import Ctx, TestFailure, TestSkip, check, ms, func, PROG_SOURCES  # noqa: E402
from harness import again_if_host_stole, check_cpu_time  # noqa: E402

SOURCE = os.path.join(PROG_SOURCES, "line_costs.c")


def marked_lines():
    """Line numbers of the SPIN, SLEEP and CALL markers, and run()'s span."""
    marks, run_first, run_last = {}, None, None
    with open(SOURCE) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"/\* (SPIN|SLEEP|CALL) \*/", text)
            if m:
                marks[m.group(1)] = n
            if text.startswith("E2E_FN unsigned long run(void)"):
                run_first = n
            if run_first and run_last is None and n > run_first and text.startswith("}"):
                run_last = n
            if text.strip().startswith("unsigned long polls = run();"):
                marks["MAIN"] = n
    check(len(marks) == 4 and run_first and run_last, "markers not found in %s" % SOURCE)
    return marks, run_first, run_last


def line_rows(rep):
    """{line number: row} of the rows of line_costs.c."""
    rows = {}
    for r in rep["lines"]:
        if os.path.basename(r["file"]) == "line_costs.c":
            check(r["line"] not in rows, "line %d has two rows" % r["line"])
            rows[r["line"]] = r
    return rows


def check_lines(c, prog, libcalls):
    # the Application times below are compared with the CPU time the program
    # spun for: a run spoilt by the machine gets a second one (harness.py)
    return again_if_host_stole(lambda: check_lines_once(c, prog, libcalls), "lines of %s" % prog)


def check_lines_once(c, prog, libcalls):
    marks, first, last = marked_lines()
    rec, data = c.record([c.prog(prog)])
    m = re.search(r"polls=(\d+)", rec.stdout)
    check(m is not None, "the program did not print polls=N: %r" % rec.stdout)
    polls = int(m.group(1))
    rep = c.report_json(data, ["--by", "line", "--no-compensation"])
    check("lines" in rep and "addresses" in rep, "report --by line has no lines/addresses arrays")
    rows = line_rows(rep)
    # without library-call probes (--no-libcalls) nanosleep is no event:
    # the sleep is run()'s own code up to the next call, on the CALL line
    for k in ("SPIN", "SLEEP", "CALL", "MAIN") if libcalls else ("SPIN", "CALL", "MAIN"):
        check(marks[k] in rows, "no row for the %s line %d; rows: %s" % (k, marks[k], sorted(rows)))
    check(libcalls or marks["SLEEP"] not in rows, "SLEEP line: a row, with no event on it")
    spin, call, main = (rows[marks[k]] for k in ("SPIN", "CALL", "MAIN"))
    sleep = rows.get(marks["SLEEP"]) if libcalls else call
    ei, ee, ai, ae = ("elapsed_inclusive", "elapsed_exclusive", "application_inclusive",
                      "application_exclusive")
    # calls made on each line, exactly
    check(spin["calls"] == polls, "SPIN line: %d calls, the program polled %d times" % (spin["calls"], polls))
    check(call["calls"] == 2, "CALL line: %d calls, expected 2 (spin5 twice)" % call["calls"])
    check(main["calls"] == 1, "the line calling run(): %d calls, expected 1" % main["calls"])
    check(not libcalls or sleep["calls"] == 1, "SLEEP line: %d calls, expected 1 (nanosleep)" % sleep["calls"])
    if libcalls:  # clock_gettime, called in cpu_ms(): on cpu_ms's line
        cpu = func(rep, "cpu_ms")
        gt = [r for r in rows.values() if r["line"] < first and r["calls"] == cpu["calls"]]
        check(gt, "no line of cpu_ms() made its %d calls of clock_gettime" % cpu["calls"])
    # by definition, under any load
    for r in rows.values():
        check(r[ee] <= r[ei] + 1 and r[ae] <= r[ai] + 1 and r[ai] <= r[ei] + 1,
              "line %d: EE <= EI, AE <= AI, AI <= EI do not hold: %s" % (r["line"], r))
    run = func(rep, "run")
    for k in (ei, ai, ee, ae):
        total = sum(r[k] for n, r in rows.items() if first <= n <= last)
        want = run[k] if k in (ei, ai) else None
        if want is not None:
            check(abs(total - want) <= 1000 + want * 1e-4,
                  "the lines of run() add up to %s %s, run() has %s" % (k, ms(total), ms(want)))
    # its one call's inclusive time, and main()'s own code charged to it
    check(abs(main[ei] - main[ee] - run[ei]) <= 1000 + run[ei] * 1e-4,
          "the line calling run(): EI - EE %s, run() has EI %s" % (ms(main[ei] - main[ee]), ms(run[ei])))
    # times, with bounds a loaded machine keeps
    check_cpu_time(15e6 <= spin[ai] <= 60e6, "SPIN line: AI %s, expected about 20 ms of CPU time" % ms(spin[ai]))
    check(spin[ei] >= 19e6, "SPIN line: EI %s, expected at least 20 ms" % ms(spin[ei]))
    check_cpu_time(7.5e6 <= call[ai] <= 30e6, "CALL line: AI %s, expected about 10 ms" % ms(call[ai]))
    check(call[ei] >= (9.5e6 if libcalls else 19.5e6),
          "CALL line: EI %s, expected at least %d ms" % (ms(call[ei]), 10 if libcalls else 20))
    check(call[ae] <= 2e6, "CALL line: AE %s, expected next to nothing (its own code)" % ms(call[ae]))
    check(sleep[ei] >= 9.5e6, "SLEEP line: EI %s, expected at least 10 ms" % ms(sleep[ei]))
    if libcalls:
        check(sleep[ai] <= 3e6, "SLEEP line: AI %s, expected near 0 (it sleeps)" % ms(sleep[ai]))
    else:
        check(call[ee] >= 9.5e6, "CALL line: EE %s, expected the 10 ms sleep" % ms(call[ee]))
    # percentages of the session's values, as for functions
    sess = rep["session"]
    for k in (ei, ee):
        check(abs(spin[k + "_pct"] - 100.0 * spin[k] / sess[ei]) < 0.01, "SPIN line: %s_pct is off" % k)
    # per call site: the calls of each address add up to those of its line
    spin_addrs = [a for a in rep["addresses"] if "run+" in a["name"] and a["calls"] == polls]
    check(spin_addrs, "no call-site address in run() with the SPIN line's %d calls" % polls)
    return rep, data, marks


TESTS = {}


def test(fn):
    TESTS[fn.__name__[len("test_"):]] = fn
    return fn


@test
def test_lines_finstrument(c):
    """-finstrument-functions build: per-line calls exact, the four values within bounds."""
    check_lines(c, "e2e_line_costs", libcalls=True)


@test
def test_lines_fentry(c):
    """-pg -mfentry build, instrumented through its patch sites: the same per line."""
    check_lines(c, "e2e_line_costs_fentry", libcalls=True)


@test
def test_lines_patchable(c):
    """-fpatchable-function-entry=5 build: the same per line."""
    check_lines(c, "e2e_line_costs_patch", libcalls=True)


@test
def test_lines_views(c):
    """callers --by line, annotate, csv and the table show the same per-line values."""
    rep, data, marks = check_lines(c, "e2e_line_costs", libcalls=True)
    rows = line_rows(rep)
    # stint callers spin5 --by line: one row, the CALL line, 2 calls, spin5's inclusive time
    p = c.run([c.stint, "callers", "spin5", "--by", "line", "-i", data, "--format", "json",
               "--no-compensation"], expect=0)
    cj = json.loads(p.stdout)
    callers = [r for r in cj["callers"] if r["line"] == marks["CALL"]]
    check(len(callers) == 1, "callers spin5 --by line: no single row for the CALL line: %s" % cj["callers"])
    sp = func(rep, "spin5")
    check(callers[0]["calls"] == 2, "callers --by line: %d calls from the CALL line" % callers[0]["calls"])
    check(abs(callers[0]["elapsed_inclusive"] - sp["elapsed_inclusive"]) <= 1000 + sp["elapsed_inclusive"] * 1e-4,
          "callers --by line: EI %s, spin5 has %s" % (ms(callers[0]["elapsed_inclusive"]),
                                                     ms(sp["elapsed_inclusive"])))
    # stint annotate run: the source with the four values per line
    p = c.run([c.stint, "annotate", "run", "-i", data, "--no-compensation"], expect=0)
    out = p.stdout
    for k in ("SPIN", "SLEEP", "CALL"):
        want = [ln for ln in out.splitlines() if re.match(r"\s*[\d.]+ \S+.*\s%d\s" % marks[k], ln)]
        check(want, "annotate run: no values on the %s line %d:\n%s" % (k, marks[k], out[-3000:]))
    check("while (cpu_ms() - t0 < 20.0) polls++;" in out, "annotate run: the source is not shown")
    # csv: the same calls per line
    p = c.run([c.stint, "report", "-i", data, "--by", "line", "--format", "csv", "--no-compensation"], expect=0)
    head = p.stdout.splitlines()[0].split(",")
    check(head[:3] == ["name", "module", "calls"], "csv --by line header: %s" % head)
    spin_csv = [ln for ln in p.stdout.splitlines() if ("line_costs.c:%d," % marks["SPIN"]) in ln]
    check(spin_csv and spin_csv[0].split(",")[2] == str(rows[marks["SPIN"]]["calls"]),
          "csv --by line: the SPIN line's calls differ: %s" % spin_csv)


@test
def test_lines_old_format(c):
    """A data file of format version 1 (no call sites): --by line says so in one line."""
    rec, data = c.record([c.prog("e2e_line_costs")])
    with open(data, "r+b") as f:  # the header's format and reader versions: 1
        f.seek(8)
        f.write(b"\x01\x00\x00\x00\x01\x00\x00\x00")
    p = c.run([c.stint, "report", "-i", data, "--by", "line"])
    err = p.stderr.strip().splitlines()
    # (this file's events, which do carry sites, also read as damaged)
    check(p.returncode == 2 and err and "version 1" in err[-1] and "again" in err[-1],
          "report --by line of a version 1 file: exit %d, stderr %r" % (p.returncode, err))


def main():
    ap = argparse.ArgumentParser(description="stint per-line end-to-end tests")
    ap.add_argument("--stint")
    ap.add_argument("--progs")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("test", nargs="?")
    a = ap.parse_args()
    if a.list:
        for name in TESTS:
            print(name)
        return 0
    if not (a.stint and a.progs and a.test) or a.test not in TESTS:
        ap.error("--stint, --progs and a known test name are required (or --list)")
    tmp = tempfile.mkdtemp(prefix="stint-lines-%s-" % a.test)
    c = Ctx(os.path.abspath(a.stint), os.path.abspath(a.progs), tmp)
    t0 = time.time()
    try:
        TESTS[a.test](c)
    except TestSkip as e:
        print("SKIP e2e.%s: %s" % (a.test, e))
        shutil.rmtree(tmp, ignore_errors=True)
        return 77
    except TestFailure as e:
        print("FAIL e2e.%s: %s" % (a.test, e), file=sys.stderr)
        print("  commands run:\n    " + "\n    ".join(c.log), file=sys.stderr)
        print("  temp dir kept: %s" % tmp, file=sys.stderr)
        return 1
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS e2e.%s (%.1f s)" % (a.test, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
