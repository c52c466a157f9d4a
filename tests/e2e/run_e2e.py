#!/usr/bin/env python3
"""run_e2e.py - end-to-end tests of stint (instrumentation method).

Each test records one of the small programs of tests/progs with the real
`stint record -m instrument`, reads `stint report --format json` and checks
it against what the program is known to do (doc/numbers.md, doc/numbers.md):
exact call counts, times within tolerances wide enough for a noisy shared
machine, exit statuses, thread and process rows, demangled C++ names, and
the error messages of the usual mistakes.

    run_e2e.py --stint build/stint --progs build/tests TESTNAME
    run_e2e.py --list

Exit status 0 when the test passes, 1 with a message on stderr when it fails.
Python 3 standard library only.
"""
import difflib
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import (HERE, PROG_SOURCES, RECORD_TIMEOUT, TestFailure, TestSkip, again_if_host_stole,  # noqa: E402,F401
                     check, check_cpu_time, func, function_list, function_rows, module_matches, one_line_error)


def ms(ns):
    return "%.2f ms" % (ns / 1e6)


# ---------------------------------------------------------------------------
# Running stint
# ---------------------------------------------------------------------------

class Ctx(harness.Ctx):
    """One test's view of stint, the programs and a private temp dir."""

    def capstone(self):
        """Whether stint can patch programs that have no patch site (Capstone built in and
        installed): a plain program records, instead of failing with a line naming Capstone."""
        if not hasattr(self, "_capstone"):
            data = os.path.join(self.tmp, "capstone-probe.data")
            p = self.run([self.stint, "record", "-m", "instrument", "-o", data, "--", self.prog("e2e_plain_prog")])
            self._capstone = p.returncode == 0 and "Capstone" not in p.stderr
            if os.path.exists(data):
                os.unlink(data)
        return self._capstone

    def load_variants(self):
        """The builds of a test program not made for instrumentation that stint patches: through
        the compiler's patch sites, and plain -O2 when Capstone is there."""
        return PATCH_VARIANTS + (("plain",) if self.capstone() else ())

    def need_capstone(self):
        if not self.capstone():
            raise TestSkip("stint cannot patch plain programs here (no Capstone)")

    def prog(self, name):
        path = os.path.join(self.progs, name)
        if os.path.exists(path):
            return path
        if name == "e2e_cxx_names":
            return self.build_cxx_at_run_time(path)
        raise TestFailure("test program %s is missing (build the tests first)" % path)

    def build_cxx_at_run_time(self, wanted):
        """CMake had no C++ compiler: compile the C++ program with g++ now."""
        gxx = shutil.which("g++")
        check(gxx is not None, "%s is not built and there is no g++ to build it" % wanted)
        out = os.path.join(self.tmp, "e2e_cxx_names")
        src = os.path.join(PROG_SOURCES, "cxx_names.cpp")
        self.run([gxx, "-g", "-O2", "-finstrument-functions", "-o", out, src], expect=0)
        return out

    def record(self, prog_argv, expect_status=0, data=None, options=(), timeout=RECORD_TIMEOUT):
        """stint record -m instrument -o DATA [options] -- PROG ARGS; returns (proc, data)."""
        return self.record_with("instrument", prog_argv, data or os.path.join(self.tmp, "stint.data"),
                                expect_status, options, timeout)

    def report_json(self, data, options=(), allow_stderr=False, timeout=RECORD_TIMEOUT):
        return self.report_json_checked(data, check_report_invariants, options, allow_stderr, timeout)

    def record_and_report(self, prog_argv, expect_status=0, options=()):
        rec, data = self.record(prog_argv, expect_status, options=options)
        return rec, self.report_json(data)


# ---------------------------------------------------------------------------
# Reading a report
# ---------------------------------------------------------------------------

VALUES = ("elapsed_inclusive", "elapsed_exclusive", "application_inclusive", "application_exclusive")


def calls(rep, name, module=None):
    rows = function_rows(rep, name, module)
    check(len(rows) <= 1, "several function rows named %r: %s" % (name, rows))
    return rows[0]["calls"] if rows else 0


def expect_calls(rep, expected, module=None):
    """expected: {function name: exact number of calls}."""
    wrong = []
    for name, n in expected.items():
        got = calls(rep, name, module)
        if got != n:
            wrong.append("%s: %d calls, expected %d" % (name, got, n))
    check(not wrong, "wrong call counts: %s\n  functions: %s" % ("; ".join(wrong), function_list(rep)))


def ratio(row, num, den):
    return row[num] / row[den] if row[den] > 0 else 0.0


def check_report_invariants(rep):
    """What holds for every instrumentation report (doc/numbers.md, instrumentation)."""
    for key in ("method", "session", "functions", "modules", "threads", "processes"):
        check(key in rep, "report JSON has no %r key" % key)
    check(rep["method"] == "instrumentation", "method is %r" % rep["method"])
    sess = rep["session"]
    slack = lambda v: 1e-6 * abs(v) + 64  # JSON rounds every value to whole ns
    check(sess["application_inclusive"] <= sess["elapsed_inclusive"] + slack(sess["elapsed_inclusive"]),
          "session AI %d > session EI %d" % (sess["application_inclusive"], sess["elapsed_inclusive"]))
    problems = []
    for kind in ("functions", "modules"):
        for r in rep[kind]:
            ei, ee, ai, ae = (r[k] for k in VALUES)
            what = "%s %s[%s]" % (kind[:-1], r["name"], r["module"])
            if min(ei, ee, ai, ae) < 0:
                problems.append("%s has a negative value" % what)
            if ee > ei + slack(ei):
                problems.append("%s: EE %d > EI %d" % (what, ee, ei))
            if ai > ei + slack(ei):
                problems.append("%s: AI %d > EI %d" % (what, ai, ei))
            if ae > ai + slack(ai) or ae > ee + slack(ee):
                problems.append("%s: AE %d > AI %d or EE %d" % (what, ae, ai, ee))
            if ei > sess["elapsed_inclusive"] + slack(sess["elapsed_inclusive"]):
                problems.append("%s: EI %d > session EI %d" % (what, ei, sess["elapsed_inclusive"]))
            if ai > sess["application_inclusive"] + slack(sess["application_inclusive"]):
                problems.append("%s: AI %d > session AI %d" % (what, ai, sess["application_inclusive"]))
            if kind == "functions" and r["calls"] > 0:
                # (avg is value / calls: for a recursive function, or one whose frame a
                # fork child inherited, it may lie outside [min, max]; see check_avg_in_range)
                for k in VALUES:
                    if not (r[k + "_min"] <= r[k + "_max"] + 1 and r[k + "_max"] <= r[k] + slack(r[k])):
                        problems.append("%s: %s min %s / max %s / total %s out of order" % (
                            what, k, r[k + "_min"], r[k + "_max"], r[k]))
    for k in ("elapsed_exclusive", "application_exclusive"):
        total = sum(r[k] for r in rep["functions"])
        inc = "elapsed_inclusive" if k == "elapsed_exclusive" else "application_inclusive"
        if total > sess[inc] + slack(sess[inc]) + 64 * len(rep["functions"]):
            problems.append("sum of function %s %d > session %s %d" % (k, total, inc, sess[inc]))
    for kind in ("threads", "processes"):
        for k in ("elapsed_inclusive", "application_inclusive"):
            total = sum(r[k] for r in rep[kind])
            if abs(total - sess[k]) > slack(sess[k]) + 2 * len(rep[kind]):
                problems.append("sum of %s %s %d != session %d" % (kind, k, total, sess[k]))
    check(not problems, "report inconsistent:\n  " + "\n  ".join(problems[:20]))


def check_avg_in_range(rep, names):
    """For functions neither recursive nor inherited across fork: min <= avg <= max."""
    for n in names:
        r = func(rep, n)
        for k in VALUES:
            check(r[k + "_min"] <= r[k + "_avg"] + 1 <= r[k + "_max"] + 2,
                  "%s: %s min/avg/max %s/%s/%s out of order" % (n, k, r[k + "_min"], r[k + "_avg"], r[k + "_max"]))


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------

TESTS, test = harness.registry()


@test
def test_threads_named(c):
    """Three named threads plus main: exact calls, one row per thread with its name."""
    _, rep = c.record_and_report([c.prog("e2e_threads")])
    expect_calls(rep, {"alpha_step": 100, "beta_step": 200, "gamma_step": 300, "main_step": 7,
                       "alpha_main": 1, "beta_main": 1, "gamma_main": 1, "main": 1})
    for n in ("alpha_step", "main"):
        check(func(rep, n)["module"] == "e2e_threads",
              "%s's module is %r, expected the executable e2e_threads" % (n, func(rep, n)["module"]))
    threads = rep["threads"]
    check(len(threads) == 4, "expected 4 thread rows, got %d: %s" % (len(threads), threads))
    names = sorted(t["name"] for t in threads)
    check(names == sorted(["alpha", "beta", "gamma", "e2e_threads"]),
          "thread names %s, expected alpha, beta, gamma and e2e_threads (main thread)" % names)
    check(len({t["tid"] for t in threads}) == 4, "thread ids are not distinct: %s" % threads)
    check(len(rep["processes"]) == 1, "expected one process, got %s" % rep["processes"])
    pid = rep["processes"][0]["pid"]
    check(all(t["pid"] == pid for t in threads), "threads do not all belong to pid %d" % pid)
    main_thread = [t for t in threads if t["name"] == "e2e_threads"][0]
    check(main_thread["tid"] == pid, "the main thread's tid %d is not the pid %d" % (main_thread["tid"], pid))
    for t in threads:
        check(t["elapsed_inclusive"] > 0, "thread %s has no time" % t["name"])
    check_avg_in_range(rep, ["alpha_step", "beta_step", "gamma_step", "main_step"])
    # each worker's step function has its thread's time inside its thread body
    for who in ("alpha", "beta", "gamma"):
        step, body = func(rep, who + "_step"), func(rep, who + "_main")
        check(step["elapsed_inclusive"] <= body["elapsed_inclusive"],
              "%s_step EI %d > %s_main EI %d" % (who, step["elapsed_inclusive"], who, body["elapsed_inclusive"]))


@test
def test_report_same_for_any_jobs(c):
    """The commands replay a recording's threads several at once (STINT_JOBS): a recording of
    three programs and 45 threads (a shell patched at load, named threads, short-lived ones, a
    fork) reads the same with 1, 2 and 5 workers, in every view, format and command that
    reads it (function numbers come out in one order whichever thread met a name first)."""
    script = "%s; %s; %s" % (c.prog("e2e_threads"), c.prog("e2e_many_threads"), c.prog("e2e_forker"))
    _, data = c.record(["/bin/sh", "-c", script])
    views = [["report", "--format", "csv"], ["report", "--format", "json"], ["report", "--by", "module"],
             ["report", "--by", "thread", "--format", "csv"], ["report", "--tree", "--threshold", "0"],
             ["report", "--tree", "--format", "json"], ["report", "--per-call", "--no-pager"],
             ["report", "--function", "*_step", "--format", "csv"], ["callers", "worker_step"],
             ["callees", "main [e2e_forker]"], ["export", "--format", "folded"],
             ["export", "--format", "callgrind"]]
    for v in views:
        outs = []
        for jobs in ("1", "2", "5"):
            env = dict(os.environ, STINT_JOBS=jobs)
            p = c.run([c.stint] + v[:1] + ["-i", data] + v[1:], expect=0, env=env)
            outs.append(p.stdout)
        check(outs[0], "%s printed nothing" % " ".join(v))
        check(outs[0] == outs[1] == outs[2], "%s: the output differs with STINT_JOBS 1, 2 and 5:\n%s" % (
            " ".join(v), "\n".join(difflib.unified_diff(outs[0].splitlines(), outs[2].splitlines(),
                                                        lineterm="", n=1))[:2000]))


@test
def test_many_threads(c):
    """40 short-lived threads (10 at a time): every thread and every call kept."""
    _, rep = c.record_and_report([c.prog("e2e_many_threads")])
    expect_calls(rep, {"worker_body": 40, "worker_step": 1000, "main": 1})
    check(len(rep["threads"]) == 41, "expected 41 thread rows, got %d" % len(rep["threads"]))
    check(len({t["tid"] for t in rep["threads"]}) == 41, "thread ids not distinct")


@test
def test_thread_id_reused(c):
    """A thread that gets the id an earlier thread of the program had (the
    kernel gives ids again once pid_max wraps: 32768 here): both threads'
    calls are kept.  Before, the later thread's buffer file took the same
    name and emptied the earlier one's (its calls were lost)."""
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    if pid_max > 1 << 20:
        raise TestSkip("pid_max %d: reusing a thread id would take a million threads" % pid_max)
    rec, rep = c.record_and_report([c.prog("e2e_tid_reuse")])
    m = re.search(r"recorded=(\d+) reused=(\d+)", rec.stdout)
    check(m, "the program printed no recorded=N reused=R: %r" % rec.stdout)
    n, reused = int(m.group(1)), int(m.group(2))
    if not reused:
        raise TestSkip("other processes took the ids: no thread of the program got one again")
    expect_calls(rep, {"recorded": n, "step": n, "main": 1})
    check(len(rep["threads"]) == n + 1, "%d thread rows for %d recorded threads and main" % (len(rep["threads"]), n))


@test
def test_threads_more_than_descriptors(c):
    """More threads than stint record may have file descriptors (its
    RLIMIT_NOFILE set to 256 here; a program that starts threads one after
    the other for hours has tens of thousands): every thread's calls reach
    the data file.  Before, the recorder kept each thread buffer open until
    it wrote the file, ran out, and left the recording in its spool."""
    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    n = 600
    argv = [c.stint, "record", "-o", os.path.join(c.tmp, "stint.data"), "--", c.prog("e2e_tid_reuse"), str(n)]
    c.log.append("(RLIMIT_NOFILE 256) " + " ".join(argv))
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       preexec_fn=low_limit, timeout=RECORD_TIMEOUT * 3)
    check(p.returncode == 0, "record failed (status %d): %s" % (p.returncode, p.stderr.strip()))
    rep = c.report_json(os.path.join(c.tmp, "stint.data"))
    expect_calls(rep, {"recorded": n, "step": n, "main": 1})
    check(len(rep["threads"]) == n + 1, "%d thread rows for %d threads and main" % (len(rep["threads"]), n))


@test
def test_signal_handler_calls(c):
    """An instrumented SIGALRM handler interrupting the program (and its probes) 300 times:
    the report has exactly the calls the program counted."""
    rec, rep = c.record_and_report([c.prog("e2e_signal_handler")])
    m = re.search(r"alarms=(\d+) steps=(\d+)", rec.stdout)
    check(m, "the program's output line 'alarms=N steps=M' is missing: %r" % rec.stdout)
    alarms, steps = int(m.group(1)), int(m.group(2))
    expect_calls(rep, {"on_alarm": alarms, "busy_step": steps, "main": 1})


@test
def test_default_output_file(c):
    """record without -o writes stint.data in the current directory; report without -i reads it."""
    work = os.path.join(c.tmp, "cwd")
    os.mkdir(work)
    c.run([c.stint, "record", "-q", "--", c.prog("e2e_exit_code"), "0"], expect=0, cwd=work)
    check(os.listdir(work) == ["stint.data"], "the working directory holds %s, expected stint.data only" % os.listdir(work))
    p = c.run([c.stint, "report", "--format", "json"], expect=0, cwd=work)
    rep = json.loads(p.stdout)
    expect_calls(rep, {"tiny": 1, "main": 1})


@test
def test_fork_children(c):
    """fork without exec: two process entries, each process's calls counted once."""
    _, rep = c.record_and_report([c.prog("e2e_forker")])
    # main's frame is inherited by the child, not entered again: one call
    expect_calls(rep, {"before_fork": 2, "child_main": 1, "child_work": 30, "parent_work": 20, "main": 1})
    # the child's time in the frames it inherited is no call's: the per-call
    # values are the parent's one call of each (avg > max before)
    for name in ("main", "fork"):
        for row in function_rows(rep, name):
            for v in ("elapsed_inclusive", "elapsed_exclusive", "application_inclusive", "application_exclusive"):
                lo, avg, hi = row[v + "_min"], row[v + "_avg"], row[v + "_max"]
                # (exactly: printed whole, min and max once held a one-call avg of x.1)
                check(lo <= avg <= hi, "%s: %s per call avg %s outside min %s .. max %s" % (name, v, avg, lo, hi))
    procs = rep["processes"]
    check(len(procs) == 2, "expected 2 process rows (parent, child), got %d: %s" % (len(procs), procs))
    check(procs[0]["pid"] != procs[1]["pid"], "parent and child have the same pid: %s" % procs)
    for p in procs:
        check("e2e_forker" in p["command"], "process command %r does not name e2e_forker" % p["command"])
        check(p["elapsed_inclusive"] > 0, "process %d has no time" % p["pid"])
    check(len(rep["threads"]) == 2, "expected 2 thread rows, got %s" % rep["threads"])
    check({t["pid"] for t in rep["threads"]} == {p["pid"] for p in procs},
          "thread pids %s do not match the process pids %s" % (
              [t["pid"] for t in rep["threads"]], [p["pid"] for p in procs]))


@test
def test_fork_exec(c):
    """fork + exec of another instrumented program: the exec'd program is a new process entry."""
    target = c.prog("e2e_exec_target")
    _, rep = c.record_and_report([c.prog("e2e_fork_exec"), target])
    expect_calls(rep, {"launcher_step": 3, "child_before_exec": 1})
    expect_calls(rep, {"exec_target_work": 40, "main": 1}, module="e2e_exec_target")
    expect_calls(rep, {"main": 1}, module="e2e_fork_exec")
    procs = rep["processes"]
    shown = [(p["pid"], p["command"]) for p in procs]
    first_word = lambda p: os.path.basename(p["command"].split()[0]) if p["command"] else ""
    execd = [p for p in procs if first_word(p) == "e2e_exec_target"]
    launcher = [p for p in procs if first_word(p) == "e2e_fork_exec"]
    check(len(execd) == 1, "expected one process row for the exec'd e2e_exec_target, got %s" % shown)
    check(len(launcher) == 2 and len(procs) == 3,
          "expected 3 process rows (parent and forked child of e2e_fork_exec, exec'd e2e_exec_target), got %s" % shown)
    check(len({p["pid"] for p in launcher}) == 2 and execd[0]["pid"] in {p["pid"] for p in launcher},
          "the exec'd program should keep the forked child's pid, distinct from the parent's: %s" % shown)
    check(execd[0]["command"].split()[-1] == "40",
          "the exec'd process command %r lacks its argument 40" % execd[0]["command"])
    check(execd[0]["elapsed_inclusive"] > 0, "the exec'd process has no time")


def spool_info(path):
    with open(path) as f:
        return dict(l.split(" ", 1) for l in f.read().splitlines() if " " in l)


@test
def test_calibration_once_per_recording(c):
    """The probes' start-up calibration is made by the first process of a
    recording and taken by the processes started after it (a third of each
    one's start-up otherwise): run by the runtime alone on a spool, the
    launcher leaves its costs in <spool>/calib and the program it execs
    reports exactly those (a measured cost equal to the tick is a copy).  A
    calib file that is not one is measured over, never believed."""
    runtime = os.path.join(os.path.dirname(c.stint), "libstint-rt.so")
    check(os.path.exists(runtime), "no runtime next to stint: %s" % runtime)
    target = c.prog("e2e_exec_target")
    absurd = b"stcalib1" + struct.pack("<II6Q", 2, 0, 1 << 40, 0, 0, 0, 0, 0)  # 1e9 ticks an event
    for k, garbage in enumerate((None, absurd, b"stcalib1" + b"\xff" * 56, b"stcalib1\x02")):
        spool = os.path.join(c.tmp, "spool%d" % k)
        os.mkdir(spool)
        if garbage:
            with open(os.path.join(spool, "calib"), "wb") as f:
                f.write(garbage)
        env = dict(os.environ, LD_PRELOAD=runtime, STINT_SPOOL=spool)
        env.pop("STINT_RECORDER", None)
        c.run([c.prog("e2e_fork_exec"), target], expect=0, env=env)
        calib = os.path.join(spool, "calib")
        check(os.path.exists(calib), "the launcher left no <spool>/calib: %s" % sorted(os.listdir(spool)))
        with open(calib, "rb") as f:
            raw = f.read()
        check(len(raw) == 64 and raw[:8] == b"stcalib1", "<spool>/calib is %d bytes: %r" % (len(raw), raw[:16]))
        have, zero, fn, fn_tail, lib = struct.unpack("<II3Q", raw[8:40])
        check(have & (1 << 1) and fn > 0 and zero == 0, "calib holds no function-event cost: have %#x" % have)
        infos = {}
        for name in os.listdir(spool):
            if name.endswith(".info"):
                info = spool_info(os.path.join(spool, name))
                infos[name] = info
        execd = [i for n, i in infos.items()
                 if open(os.path.join(spool, n[:-5] + ".cmdline"), "rb").read().startswith(target.encode())]
        check(len(execd) == 1, "expected one exec'd process in the spool, got %d of %s" % (len(execd), list(infos)))
        check(int(execd[0]["cost"]) == fn, "the exec'd program's cost %s is not the launcher's start-up %d" % (
            execd[0]["cost"], fn))
        if have & (1 << 3):
            check(int(execd[0]["lib_cost"]) == lib, "the exec'd program's library-call cost %s, calib says %d" % (
                execd[0]["lib_cost"], lib))
        check(len(infos) == 3, "expected 3 processes (launcher, its fork, the exec'd program): %s" % list(infos))


def patch_reports(spool):
    """The .patch files of a spool: {module path: the report's lines, sorted}."""
    out = {}
    for name in os.listdir(spool):
        if ".patch." in name:
            with open(os.path.join(spool, name)) as f:
                lines = f.read().splitlines()
            if lines and lines[0].startswith("module\t"):
                out[lines[0].split("\t")[1]] = [lines[0]] + sorted(lines[1:])
    return out


@test
def test_patch_scan_once_per_recording(c):
    """Patching a program at load scans its code whole, and hooking its
    library calls scans it for the GOT slots it uses as data; the first
    process of a recording leaves what it found in the spool (cs.<hash>,
    got.<hash>, of the code read) and the later processes of the same
    program take it: the same functions
    patched and refused (jump_in still, for the loop that jumps into its
    first bytes), the program's output unchanged, and the file not written
    again.  A file cut short or not one is ignored and written anew.  Run by
    the runtime alone on a spool; also on Debian's bash (stripped), if there."""
    c.need_capstone()
    runtime = os.path.join(os.path.dirname(c.stint), "libstint-rt.so")
    subjects = [([c.prog("e2e_patch_refuse_plain")], "jump_in\tjump")]
    bash = debian_binary("bash")
    if bash:
        subjects.append(([bash, "-c", "x=$(echo hi); echo \"[$x]\""], None))
    for k, (argv, must) in enumerate(subjects):
        spool = os.path.join(c.tmp, "spool%d" % k)
        os.mkdir(spool)
        env = dict(os.environ, LD_PRELOAD=runtime, STINT_SPOOL=spool)
        env.pop("STINT_RECORDER", None)
        plain = c.run(argv, expect=0)

        def run():
            for name in os.listdir(spool):  # one process's reports at a time
                if ".patch." in name:
                    os.unlink(os.path.join(spool, name))
            p = c.run(argv, expect=0, env=env)
            check(p.stdout == plain.stdout, "%s printed %r patched, %r plain" % (argv[0], p.stdout, plain.stdout))
            return patch_reports(spool)

        first = run()
        check(first, "%s: no module was patched: %s" % (argv[0], sorted(os.listdir(spool))))
        if must:
            check(any(must in r for r in first.values()), "%s: no %r among the refusals: %s" % (argv[0], must, first))
        kept = sorted(n for n in os.listdir(spool) if n.startswith(("cs.", "got.")))
        check(any(n.startswith("cs.") for n in kept) and all(re.fullmatch(r"(cs|got)\.[0-9a-f]{16}", n) for n in kept),
              "%s: the scan was not kept in the spool: %s" % (argv[0], sorted(os.listdir(spool))))
        check(any(n.startswith("got.") for n in kept),
              "%s: the GOT scan (data references to library functions) was not kept: %s" % (argv[0], kept))
        inodes = {n: os.stat(os.path.join(spool, n)).st_ino for n in kept}
        second = run()
        check(second == first, "%s: patched otherwise with the scan kept:\n%s\nagainst\n%s" % (argv[0], second, first))
        check({n: os.stat(os.path.join(spool, n)).st_ino for n in kept} == inodes,
              "%s: the second process scanned again (the kept scan was rewritten)" % argv[0])
        path = os.path.join(spool, kept[0])
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(size // 2)
        third = run()
        check(third == first, "%s: patched otherwise after the kept scan was cut short" % argv[0])
        check(os.path.getsize(path) == size, "%s: a kept scan cut short was not written anew" % argv[0])


def kept_cs_files(cache):
    return sorted(n for n in os.listdir(cache) if re.fullmatch(r"cs\.[0-9a-f]{16}", n))


@test
def test_patch_scan_kept_across_recordings(c):
    """stint record keeps the scans of patching at load (cs.<hash>,
    got.<hash>) in the user's cache, $XDG_CACHE_HOME/stint else
    ~/.cache/stint (made 0700), and later recordings take them: a file
    there changed to name a jump into counted_fn's first bytes gets
    counted_fn refused, which shows it is read.  It is not read with
    --no-cache, nor from a cache directory others can reach, nor when the
    file is not the user's (root only) or cut short; the recording then
    scans again and its own result replaces the file."""
    c.need_capstone()
    prog = c.prog("e2e_patch_refuse_plain")
    data = os.path.join(c.tmp, "k.data")
    xdg = os.path.join(c.tmp, "xdg")
    os.environ["XDG_CACHE_HOME"] = xdg
    cache = os.path.join(xdg, "stint")

    def functions(options=()):
        c.record([prog], data=data, options=("-f",) + tuple(options))
        return {f["name"] for f in c.report_json(data)["functions"] if f["module"] == os.path.basename(prog)}

    plain = functions()
    check("counted_fn" in plain and "jump_in" not in plain, "unexpected patching of %s: %s" % (prog, plain))
    check(os.path.isdir(cache) and stat.S_IMODE(os.stat(cache).st_mode) == 0o700,
          "no cache directory %s of mode 0700 after a recording" % cache)
    files = kept_cs_files(cache)
    check(len(files) == 1 and any(n.startswith("got.") for n in os.listdir(cache)),
          "expected one cs.<hash> (the program's scan) and its got.<hash> in the cache: %s" % os.listdir(cache))
    path = os.path.join(cache, files[0])
    with open(path, "rb") as f:
        orig = f.read()
    check(orig[:8] == b"stkept1\0" and orig[8:10] == b"cs", "%s has no kept file's head: %r" % (path, orig[:16]))
    nfns, stripped, ntargets, nentries, ninsn, nloop = struct.unpack("<6Q", orig[32:80])
    body = orig[80:]
    targets = list(struct.unpack("<%dQ" % ntargets, body[:8 * ntargets]))
    rest = body[8 * ntargets:]
    sym = c.run(["nm", prog], expect=0).stdout
    fn = [int(l.split()[0], 16) for l in sym.splitlines() if l.endswith(" counted_fn")]
    check(len(fn) == 1, "no counted_fn in nm's output of %s" % prog)
    targets = sorted(targets + [fn[0] + 1])  # (offsets from the load address: the symbol's value)
    payload = struct.pack("<6Q", nfns, stripped, ntargets + 1, nentries, ninsn, nloop) + \
        struct.pack("<%dQ" % len(targets), *targets) + rest
    crafted = orig[:24] + struct.pack("<Q", len(payload)) + payload

    def plant(content):
        with open(path, "wb") as f:
            f.write(content)
        os.chmod(path, 0o600)

    plant(crafted)
    refused = functions()
    check("counted_fn" not in refused and "main" in refused,
          "the cache's scan was not taken: counted_fn still patched (%s)" % sorted(refused))
    why = c.run([c.stint, "report", "-i", data, "--why"], expect=0).stdout
    check(re.search(r"counted_fn\s+a jump lands inside its first", why), "counted_fn not refused for the jump:\n%s" % why)
    check(open(path, "rb").read() == crafted, "a scan taken from the cache was written again")

    check("counted_fn" in functions(["--no-cache"]), "--no-cache still took the cache's scan")
    check(open(path, "rb").read() == crafted, "--no-cache wrote to the cache")

    os.chmod(cache, 0o755)
    check("counted_fn" in functions(), "a cache directory others can read was used")
    os.chmod(cache, 0o700)
    check("counted_fn" not in functions(), "the cache was not used again once private")

    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)
        check("counted_fn" in functions(), "a cached file of another user's was taken")
        check(os.stat(path).st_uid == 0 and open(path, "rb").read() == orig,
              "the scan made anew did not replace another user's file in the cache")
        plant(crafted)

    plant(crafted[:len(crafted) // 2])
    check("counted_fn" in functions(), "a cached file cut short was taken")
    check(open(path, "rb").read() == orig, "a cached file cut short was not replaced by the new scan")

    # without XDG_CACHE_HOME: ~/.cache/stint, made private
    home = os.path.join(c.tmp, "home")
    os.mkdir(home)
    del os.environ["XDG_CACHE_HOME"]
    os.environ["HOME"] = home
    functions()
    hc = os.path.join(home, ".cache", "stint")
    check(os.path.isdir(hc) and stat.S_IMODE(os.stat(hc).st_mode) == 0o700 and kept_cs_files(hc),
          "no ~/.cache/stint of mode 0700 holding the scan: %s" % (os.listdir(hc) if os.path.isdir(hc) else None))


@test
def test_deep_recursion(c):
    """Recursion 5000 deep (3 times): exact calls, inclusive time counted once."""
    _, rep = c.record_and_report([c.prog("e2e_recursion")])
    expect_calls(rep, {"recurse": 15000, "leaf_work": 3, "main": 1})
    rec, leaf, main = func(rep, "recurse"), func(rep, "leaf_work"), func(rep, "main")
    check(rec["elapsed_inclusive"] <= main["elapsed_inclusive"] * 1.0001 + 100,
          "recurse EI %s > main EI %s: recursion counted more than once" % (
              ms(rec["elapsed_inclusive"]), ms(main["elapsed_inclusive"])))
    check(rec["elapsed_inclusive"] >= leaf["elapsed_inclusive"],
          "recurse EI %s < leaf_work EI %s" % (ms(rec["elapsed_inclusive"]), ms(leaf["elapsed_inclusive"])))
    check(rec["elapsed_inclusive"] >= 0.5 * main["elapsed_inclusive"],
          "recurse EI %s is less than half of main's %s" % (ms(rec["elapsed_inclusive"]), ms(main["elapsed_inclusive"])))
    # the largest single call of recurse is one whole outermost recursion at most
    check(rec["elapsed_inclusive_max"] <= rec["elapsed_inclusive"] + 100,
          "recurse max EI per call %d > its total EI %d" % (rec["elapsed_inclusive_max"], rec["elapsed_inclusive"]))
    # each average per call lies between the minimum and the maximum (the total, which counts
    # the recursion once, divided by the calls was far below the minimum)
    for f in rep["functions"]:
        for k in ("elapsed_inclusive", "elapsed_exclusive", "application_inclusive", "application_exclusive"):
            if f["calls"]:
                check(f[k + "_min"] - 1 <= f[k + "_avg"] <= f[k + "_max"] + 1,
                      "%s: %s average %s outside [%s, %s]" % (f["name"], k, f[k + "_avg"], f[k + "_min"], f[k + "_max"]))


@test
def test_recursive_callers_rows(c):
    """callers/callees of a recursive function: the row of the function as its own caller had
    exclusive time and no inclusive time (recurse: EI 0, EE all of the inner calls'), a row with
    EE > EI.  The calls stay under the caller that made them, the time goes under the caller of
    the outermost call; the rows still add up to the function's values, and EE <= EI in every
    row.  The HTML page's edges count the same."""
    _, data = c.record([c.prog("e2e_recursion")])
    for cmd in ("callers", "callees"):
        p = c.run([c.stint, cmd, "-i", data, "--format", "json", "recurse"], expect=0)
        j = json.loads(p.stdout)
        fn = j["function"]
        rows = {r["name"]: r for r in j["callers"] + j["callees"]}
        check(rows["recurse"]["calls"] == 14997 and rows["recurse"]["elapsed_exclusive"] == 0,
              "%s: recurse as its own caller/callee: %s" % (cmd, rows["recurse"]))
        for r in rows.values():
            for i, e in (("elapsed_inclusive", "elapsed_exclusive"), ("application_inclusive", "application_exclusive")):
                check(r[e] <= r[i] + 1, "%s: the row %s has %s %d > %s %d" % (cmd, r["name"], e, r[e], i, r[i]))
        if cmd == "callers":
            for k in ("elapsed_inclusive", "elapsed_exclusive", "calls"):
                got = sum(r[k] for r in j["callers"])
                check(abs(got - fn[k]) <= 1, "callers' %s add up to %d, the function's is %d" % (k, got, fn[k]))
            check(rows["main"]["elapsed_exclusive"] == fn["elapsed_exclusive"],
                  "main's row does not hold recurse's exclusive time: %s" % rows["main"])
    # the same edge seen from main: callees(main) gave recurse only its outermost call's time
    p = c.run([c.stint, "callees", "-i", data, "--format", "json", "main"], expect=0)
    under = [r for r in json.loads(p.stdout)["callees"] if r["name"] == "recurse"]
    p = c.run([c.stint, "callers", "-i", data, "--format", "json", "recurse"], expect=0)
    over = [r for r in json.loads(p.stdout)["callers"] if r["name"] == "main"]
    check(len(under) == 1 and len(over) == 1 and all(
        under[0][k] == over[0][k] for k in ("calls", "elapsed_inclusive", "elapsed_exclusive")),
          "main -> recurse: callees(main) %s, callers(recurse) %s" % (under, over))


@test
def test_deep_excursion_then_escape(c):
    """A longjmp, and a C++ catch, after the stack went 510 or more frames deeper than the
    landing point and came back (pugixml's depth-limit test, a Lua error after a deep load):
    the runtime's slots of the landing point's frames had been taken by the excursion's, and
    the escape closed main and the catching function too; every later call was a root.  Now
    the frames are kept past the slots: main holds everything, the catchers each one call."""
    for depth in (100, 600, 5000):
        _, data = c.record([c.prog("e2e_deep_escape"), str(depth)])
        rep = c.report_json(data)
        expect_calls(rep, {"main": 1, "jump_catcher(int)": 1, "throw_catcher(int)": 1, "after_escape(int)": 10,
                           "descend(int)": 2 * (depth + 1)})
        main = func(rep, "main")
        for name in ("jump_catcher(int)", "throw_catcher(int)", "after_escape(int)", "descend(int)"):
            check(func(rep, name)["elapsed_inclusive"] <= main["elapsed_inclusive"],
                  "depth %d: %s outside main (EI %d > main's %d)" % (
                      depth, name, func(rep, name)["elapsed_inclusive"], main["elapsed_inclusive"]))
        p = c.run([c.stint, "callers", "-i", data, "--format", "json", "after_escape(int)"], expect=0)
        callers = [(r["name"], r["calls"]) for r in json.loads(p.stdout)["callers"]]
        check(callers == [("main", 10)], "depth %d: after_escape's callers %s" % (depth, callers))
        # a longjmp from the bottom itself: its own library-call frame had taken the slot of a
        # frame it had to close, and the closing stopped there
        p = c.run([c.stint, "callers", "-i", data, "--format", "json", "after_landing()"], expect=0)
        callers = [(r["name"], r["calls"]) for r in json.loads(p.stdout)["callers"]]
        check(callers == [("jump_direct(int)", 1)], "depth %d: after_landing's callers %s" % (depth, callers))


FORK_LONGJMP = r"""
#include <setjmp.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static jmp_buf jb;
__attribute__((noinline)) int after(int x) { return x + 1; }
__attribute__((noinline)) int middle(int n)
{
    if (n > 0)
        return middle(n - 1) + 1;
    pid_t p = fork();
    if (p == 0)
        longjmp(jb, 1); /* the child, past the frames it inherited */
    waitpid(p, NULL, 0);
    return 0;
}
__attribute__((noinline)) int catcher(void)
{
    if (setjmp(jb)) {
        after(2);
        exit(0);
    }
    return middle(3);
}
int main(void) { return catcher() == 3 ? 0 : 1; }
"""


@test
def test_fork_child_longjmp_closes_inherited(c):
    """A fork child that longjmps above the frames it inherited (middle x 4, then fork): those
    frames had no stack pointer in the child, so the jump left them open and the child's
    after() counted under middle.  The child's stack is a copy at the same addresses: the
    inherited frames keep their stack pointers, and after() is catcher's."""
    src = os.path.join(c.tmp, "fkj.c")
    with open(src, "w") as f:
        f.write(FORK_LONGJMP)
    prog = os.path.join(c.tmp, "fkj")
    c.run(["gcc", "-O1", "-finstrument-functions", "-o", prog, src], expect=0)
    _, data = c.record([prog])
    p = c.run([c.stint, "callers", "-i", data, "--format", "json", "after"], expect=0)
    callers = [(r["name"], r["calls"]) for r in json.loads(p.stdout)["callers"]]
    check(callers == [("catcher", 1)], "after's callers in the child: %s" % callers)


SELF_SEGV = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
__attribute__((noinline)) void report_crash(void) { puts("reporting"); fflush(stdout); }
int main(void)
{
    report_crash();
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGSEGV;
    si.si_code = SEGV_MAPERR; /* as a crash reporter sends it on */
    syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), SIGSEGV, &si);
    puts("still running");
    return 0;
}
"""


@test
def test_self_sent_fault_kills(c):
    """A program that sends itself SIGSEGV with a kernel's code (a crash reporter passing a fault
    on, rt_tgsigqueueinfo with SEGV_MAPERR) dies of it, as without stint: the runtime's handler
    returned, taking it for a fault that would come again, and the program ran on, exit 0."""
    src = os.path.join(c.tmp, "selfsegv.c")
    with open(src, "w") as f:
        f.write(SELF_SEGV)
    prog = os.path.join(c.tmp, "selfsegv")
    c.run(["gcc", "-O1", "-finstrument-functions", "-o", prog, src], expect=0)
    alone = subprocess.run([prog], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    rec, data = c.record([prog], expect_status=128 + signal.SIGSEGV)
    check(alone.returncode == -signal.SIGSEGV and b"still running" not in alone.stdout,
          "the program alone: %d %r" % (alone.returncode, alone.stdout))
    check("still running" not in rec.stdout, "the program ran on after its SIGSEGV: %r" % rec.stdout)
    check(calls(c.report_json(data), "report_crash") == 1, "the recording lost the call before the signal")


@test
def test_out_of_memory_one_line(c):
    """Short of memory, every command of the analysis says so in one line and exits with an
    error status: no silent abort() (doc: lib/util.h, the error policy)."""
    with open(c.stint, "rb") as f:
        if b"__asan_init" in f.read():
            raise TestSkip("AddressSanitizer needs a large address space")
    _, data = c.record([c.prog("e2e_deep_recursion")])
    failed = 0
    for mb in (400, 200, 120, 80, 60, 40, 30):
        def limit(mb=mb):
            resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
        for args in (["report", "--format", "json"], ["report", "--tree", "--format", "json"],
                     ["export", "--format", "callgrind"]):
            p = c.run([c.stint] + args + ["-i", data], expect=None, timeout=DEEP_TIMEOUT, preexec_fn=limit)
            if p.returncode == 0:
                continue
            failed += 1
            check(p.returncode > 0, "%s under %d MB died of signal %d, not with a message" % (
                " ".join(args), mb, -p.returncode))
            one_line_error(p, ["out of memory"], " ".join(args) + " under %d MB" % mb)
    check(failed > 0, "no command ran short of memory even with 30 MB of address space")


@test
def test_sleep_vs_compute(c):
    """A 50 ms sleeper has AI ~ 0, EI ~ 50 ms; a computing function has AI ~ EI."""
    again_if_host_stole(lambda: sleep_vs_compute(c), "sleep_vs_compute")


def sleep_vs_compute(c):
    rec, rep = c.record_and_report([c.prog("e2e_sleep_compute")])
    expect_calls(rep, {"sleepy": 1, "nap_10ms": 5, "crunch": 1, "crunch_block": 2000, "main": 1})
    m = re.search(r"crunch cpu_ns=(\d+) wall_ns=(\d+)", rec.stdout)
    check(m, "the program's output line 'crunch cpu_ns=... wall_ns=...' is missing: %r" % rec.stdout)
    cpu_ns, wall_ns = int(m.group(1)), int(m.group(2))
    sleepy, nap, crunch = func(rep, "sleepy"), func(rep, "nap_10ms"), func(rep, "crunch")
    ei = sleepy["elapsed_inclusive"]
    check(40e6 <= ei <= 500e6, "sleepy EI %s, expected 40..500 ms (5 x usleep(10 ms))" % ms(ei))
    check(ratio(sleepy, "application_inclusive", "elapsed_inclusive") < 0.2,
          "sleepy AI %s / EI %s >= 0.2: sleeping counted as application time" % (
              ms(sleepy["application_inclusive"]), ms(ei)))
    check(ratio(nap, "application_inclusive", "elapsed_inclusive") < 0.2,
          "nap_10ms AI %s / EI %s >= 0.2" % (ms(nap["application_inclusive"]), ms(nap["elapsed_inclusive"])))
    check_avg_in_range(rep, ["nap_10ms", "crunch_block"])
    check(nap["elapsed_inclusive_min"] >= 8e6,
          "nap_10ms shortest call %s, expected >= 8 ms (usleep(10000))" % ms(nap["elapsed_inclusive_min"]))
    check(crunch["elapsed_inclusive"] > 1e6, "crunch EI %s is implausibly small" % ms(crunch["elapsed_inclusive"]))
    # Application time is time on the CPU: it can not exceed the thread's CPU time
    check_cpu_time(crunch["application_inclusive"] <= 1.1 * cpu_ns + 0.5e6,
          "crunch AI %s exceeds the CPU time the thread spent in it (%s)" % (
              ms(crunch["application_inclusive"]), ms(cpu_ns)))
    check(crunch["application_inclusive"] >= 0.5 * cpu_ns,
          "crunch AI %s is less than half the CPU time the thread spent in it (%s): "
          "computing not counted as application time" % (ms(crunch["application_inclusive"]), ms(cpu_ns)))
    # AI/EI > 0.5 is what a compute function shows when it gets the CPU; on a busy
    # machine, where crunch waited for a CPU (rightly not application time), the
    # bound scales with the share of the CPU it got.
    share = cpu_ns / wall_ns if wall_ns else 1.0
    bound = 0.5 if share >= 0.8 else 0.5 * share
    check(ratio(crunch, "application_inclusive", "elapsed_inclusive") > bound,
          "crunch AI %s / EI %s <= %.2f (it had %.0f%% of a CPU): computing not counted as application time" % (
              ms(crunch["application_inclusive"]), ms(crunch["elapsed_inclusive"]), bound, 100 * share))
    sess = rep["session"]
    check(sess["application_inclusive"] < sess["elapsed_inclusive"] - 30e6,
          "session AI %s not at least 30 ms below session EI %s" % (
              ms(sess["application_inclusive"]), ms(sess["elapsed_inclusive"])))
    main = func(rep, "main")
    check(abs(main["elapsed_inclusive_pct"] - 100.0 * main["elapsed_inclusive"] / sess["elapsed_inclusive"]) < 0.01,
          "main EI%% %.4f does not match EI/session EI" % main["elapsed_inclusive_pct"])
    check(main["elapsed_inclusive_pct"] > 90, "main EI%% %.2f, expected > 90" % main["elapsed_inclusive_pct"])


@test
def test_libcalls(c):
    """Calls into libc from an instrumented function appear as functions of libc.so.6
    (PLT hooking: expected to fail until that feature lands)."""
    _, rep = c.record_and_report([c.prog("e2e_libcalls")])
    expect_calls(rep, {"use_libc": 1, "main": 1})
    check(calls(rep, "cmp_ints") > 0, "cmp_ints (called back by qsort) has no calls")
    check(any(module_matches(m["name"], "libc.so") for m in rep["modules"]),
          "no module row for libc.so.6; modules: %s" % [m["name"] for m in rep["modules"]])
    expect_calls(rep, {"usleep": 3, "malloc": 10, "free": 10, "qsort": 1}, module="libc.so")
    use, us = func(rep, "use_libc"), func(rep, "usleep", "libc.so")
    check(us["elapsed_inclusive"] >= 2.5e6, "usleep EI %s, expected >= 3 x 1 ms" % ms(us["elapsed_inclusive"]))
    check(ratio(us, "application_inclusive", "elapsed_inclusive") < 0.2,
          "usleep AI/EI %.2f >= 0.2" % ratio(us, "application_inclusive", "elapsed_inclusive"))
    check(use["elapsed_exclusive"] < 0.5 * use["elapsed_inclusive"],
          "use_libc EE %s is not well below its EI %s: usleep's time was not given to usleep" % (
              ms(use["elapsed_exclusive"]), ms(use["elapsed_inclusive"])))
    check(func(rep, "qsort", "libc.so")["elapsed_inclusive"] >= func(rep, "cmp_ints")["elapsed_inclusive"],
          "qsort EI < EI of cmp_ints, which it calls")


@test
def test_no_libcalls_option(c):
    """record --no-libcalls: no function of a shared library in the report."""
    _, data = c.record([c.prog("e2e_libcalls")], options=["--no-libcalls"])
    rep = c.report_json(data)
    expect_calls(rep, {"use_libc": 1, "main": 1})
    lib = [r for r in rep["functions"] if ".so" in r["module"]]
    check(not lib, "library functions reported despite --no-libcalls: %s" % lib)


# --- library calls: jumping out of them, calls counted once, vfork, GOT forms, binding ---

def escape_common(c, mode):
    """Run e2e_escapes MODE plain and recorded: the same output, exact calls.
    Returns (report, {function: calls the program counted itself})."""
    plain = c.run([c.prog("e2e_escapes_plain"), mode], expect=0)
    rec, data = c.record([c.prog("e2e_escapes"), mode])
    check(rec.stdout == plain.stdout,
          "e2e_escapes %s printed something else under stint (the profiler changed the program):\n"
          "  plain:    %r\n  recorded: %r\n  stderr: %s" % (mode, plain.stdout[-600:], rec.stdout[-600:],
                                                         rec.stderr.strip()))
    check("lost track" not in rec.stderr, "stint complained: %s" % rec.stderr.strip())
    rep = c.report_json(data)
    counted = {}
    for line in plain.stdout.splitlines():
        if line.startswith("calls "):
            _, name, n = line.split()
            counted[name] = int(n)
    expect = {}
    for row in rep["functions"]:
        base = row["name"].split("(")[0]
        if base in counted:
            expect[row["name"]] = counted[base]
    check(len(expect) >= 3, "too few of the program's functions in the report: %s" % function_list(rep))
    expect_calls(rep, expect)
    expect_calls(rep, {"main": 1, "catch_level(int)": 5, "throw_level(int)": 15})
    # library calls made after the escapes are still recorded, and nest
    qs, plain_cmp = func(rep, "qsort", "libc.so"), func(rep, "cmp_plain(void const*, void const*)")
    check(plain_cmp["calls"] > 0 and qs["elapsed_inclusive"] >= plain_cmp["elapsed_inclusive"],
          "qsort EI %d < EI %d of the comparator it calls, after the escapes" % (
              qs["elapsed_inclusive"], plain_cmp["elapsed_inclusive"]))
    check(calls(rep, "__cxa_throw", "libstdc++.so") == 5, "__cxa_throw: %d calls, expected 5" %
          calls(rep, "__cxa_throw", "libstdc++.so"))
    return rep, counted


def lib_calls(rep, *names):
    """Calls of library functions that may share one address (longjmp, siglongjmp)."""
    return sum(r["calls"] for r in rep["functions"] if r["name"] in names and ".so" in r["module"])


@test
def test_escape_qsort_longjmp(c):
    """longjmp out of a qsort comparator 300 times, then a C++ throw: same output, exact calls."""
    rep, _ = escape_common(c, "qsort")
    check(calls(rep, "qsort", "libc.so") == 301, "qsort: %d calls, expected 301" % calls(rep, "qsort", "libc.so"))
    check(lib_calls(rep, "longjmp", "_longjmp") == 300, "longjmp: %d calls, expected 300" % lib_calls(rep, "longjmp", "_longjmp"))
    check(lib_calls(rep, "_setjmp", "setjmp") == 300, "setjmp: %d calls, expected 300" % lib_calls(rep, "_setjmp", "setjmp"))
    rnd, qs = func(rep, "escape_round(int)"), func(rep, "qsort", "libc.so")
    check(qs["elapsed_inclusive"] <= func(rep, "main")["elapsed_inclusive"] + 100, "qsort EI > main EI")
    # the 300 escaped qsort calls close at the longjmp, inside escape_round: all of qsort's
    # time but the final sort's lies within escape_round's
    last = sum(r["elapsed_inclusive"] for r in rep["functions"] if r["name"].startswith("cmp_plain"))
    check(qs["elapsed_inclusive"] <= rnd["elapsed_inclusive"] + 3 * last + 0.1 * qs["elapsed_inclusive"] + 1e5,
          "qsort EI %d well above escape_round EI %d: escaped qsort frames outlived their caller" % (
              qs["elapsed_inclusive"], rnd["elapsed_inclusive"]))
    check(rnd["elapsed_inclusive"] >= 0.9 * sum(r["elapsed_inclusive"] for r in rep["functions"]
                                                if r["name"].startswith("cmp_escape")),
          "escape_round EI < its comparators' EI: escaped frames left open")


@test
def test_escape_signal_handler(c):
    """siglongjmp out of a signal handler run inside raise(), 300 times: same output, exact calls."""
    rep, _ = escape_common(c, "signal")
    check(calls(rep, "raise", "libc.so") == 300, "raise: %d calls, expected 300" % calls(rep, "raise", "libc.so"))
    check(lib_calls(rep, "siglongjmp", "longjmp") == 300,
          "siglongjmp: %d calls, expected 300" % lib_calls(rep, "siglongjmp", "longjmp"))
    check(lib_calls(rep, "__sigsetjmp", "sigsetjmp") == 300,
          "sigsetjmp: %d calls, expected 300" % lib_calls(rep, "__sigsetjmp", "sigsetjmp"))
    sr, raise_ = func(rep, "signal_round()"), func(rep, "raise", "libc.so")
    check(raise_["elapsed_inclusive"] <= sr["elapsed_inclusive"] + 100,
          "raise EI %d > EI %d of signal_round, its caller: escaped raise frames were left open" % (
              raise_["elapsed_inclusive"], sr["elapsed_inclusive"]))


@test
def test_escape_errlib(c):
    """A library that longjmps by itself (libpng style) 300 times, then a C++ throw: same output."""
    rep, _ = escape_common(c, "errlib")
    check(calls(rep, "errlib_process", "libe2e_errlib.so") == 300,
          "errlib_process: %d calls, expected 300" % calls(rep, "errlib_process", "libe2e_errlib.so"))
    er, ep = func(rep, "errlib_round()"), func(rep, "errlib_process", "libe2e_errlib.so")
    check(ep["elapsed_inclusive"] <= er["elapsed_inclusive"] + 100,
          "errlib_process EI %d > EI %d of errlib_round, its caller: escaped frames left open" % (
              ep["elapsed_inclusive"], er["elapsed_inclusive"]))


@test
def test_escape_ucontext(c):
    """Two ucontext generators yielding from qsort comparators, driven from a qsort comparator."""
    rep, counted = escape_common(c, "ucontext")
    check(calls(rep, "qsort", "libc.so") == 4, "qsort: %d calls, expected 4" % calls(rep, "qsort", "libc.so"))
    expect_calls(rep, {"getcontext": 3, "makecontext": 2, "setcontext": 3}, module="libc.so")
    resumes = calls(rep, "resume(int)")
    check(resumes > 0 and calls(rep, "swapcontext", "libc.so") == resumes + counted["cmp_gen"],
          "swapcontext: %d calls, expected %d (resume) + %d (yields)" % (
              calls(rep, "swapcontext", "libc.so"), resumes, counted["cmp_gen"]))


@test
def test_counted_once_calls(c):
    """exit, _exit, pthread_exit, dlopen, dlsym, setjmp, longjmp: each call counted once."""
    _, rep = c.record_and_report([c.prog("e2e_deep_exit"), "exit"], expect_status=3)
    expect_calls(rep, {"exit": 1}, module="libc.so")
    _, rep = c.record_and_report([c.prog("e2e_deep_exit"), "_exit"], expect_status=4)
    expect_calls(rep, {"_exit": 1}, module="libc.so")
    _, rep = c.record_and_report([c.prog("e2e_thread_exit")])
    expect_calls(rep, {"pthread_exit": 1}, module="libc.so")
    plugin = os.path.join(c.progs, "libe2e_plugin.so")
    _, rep = c.record_and_report([c.prog("e2e_dlopen_host"), plugin])
    expect_calls(rep, {"dlopen": 1, "dlsym": 1}, module="libc.so")
    _, rep = c.record_and_report([c.prog("e2e_longjmp_skip")])
    check(lib_calls(rep, "_setjmp", "setjmp") == 10, "setjmp: %d calls, expected 10" % lib_calls(rep, "_setjmp", "setjmp"))
    check(lib_calls(rep, "longjmp", "_longjmp") == 10, "longjmp: %d calls, expected 10" % lib_calls(rep, "longjmp", "_longjmp"))


@test
def test_thread_exit_in_callback(c):
    """pthread_exit from a qsort comparator: the thread's cleanup handler still runs (the unwinder
    gets through the probed qsort call), pthread_exit and qsort counted once."""
    rec, rep = c.record_and_report([c.prog("e2e_thread_exit_cb")])
    check(rec.stdout.strip() == "cleaned 1", "the cleanup handler did not run under stint: %r" % rec.stdout)
    expect_calls(rep, {"worker": 1, "cmp_quit": 1, "main": 1})
    expect_calls(rep, {"pthread_exit": 1, "qsort": 1}, module="libc.so")


@test
def test_cancel_blocked_in_library_call(c):
    """Threads cancelled while blocked in read, usleep and pthread_cond_wait, called from frames
    with no cleanup of their own: every destructor and cleanup handler runs, as without stint.
    glibc unwinds a cancelled thread with libgcc_s's own _Unwind_ForcedUnwind, which the runtime's
    interposers never see; it stopped at the library call's return thunk (no unwind information),
    and the thread ended with none of its C++ destructors run (cleanups 0 of 4).  Patched at load
    too, where it also stopped at a patched function's swapped return address (1 of 4)."""
    progs = ["e2e_cancel_blocked"] + (["e2e_cancel_blocked_plain"] if c.capstone() else [])
    for name in progs:
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        check(alone == "cancelled 3, cleanups 4 of 4\n", "%s alone printed %r" % (name, alone))
        rec, data = c.record([prog], data=os.path.join(c.tmp, name + ".data"))
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        expect_calls(rep, {"wait_read()": 1, "wait_sleep()": 1, "wait_cond()": 1, "main": 1}, module=name)
        expect_calls(rep, {"read": 1, "pthread_cancel": 3}, module="libc.so")


@test
def test_debugger_backtrace(c):
    """gdb's backtrace of a program stopped inside a probed library call's callback (an abort in
    qsort's comparator), with stint's runtime in it as record puts it there: every frame from
    cmp to main, through the library call's return thunk and, patched at load, the functions'
    return stubs, which carry unwind information.  gdb stopped at the first of them.  And stopped
    in the trampolines the thunks and stubs lead to (rt_plt_thunk_common, rt_patch_return), as a
    signal may stop a thread there: every frame to main (gdb stopped there before)."""
    if not shutil.which("gdb"):
        raise TestSkip("gdb is not installed")
    progs = ["e2e_debugger_stack"] + (["e2e_debugger_stack_plain"] if c.capstone() else [])

    def backtrace(name, stop_at, expect):
        # gdb stopped at the abort, or at the first hit of a breakpoint in stint's trampolines
        spool = os.path.join(c.tmp, "%s-%s.spool" % (name, stop_at or "abort"))
        os.mkdir(spool)
        env = ["LD_PRELOAD=" + os.path.join(os.path.dirname(c.stint), "libstint-rt.so"),
               "STINT_SPOOL=" + spool, "STINT_PLT=1", "STINT_CLOCK=tsc"]
        cmd = ["gdb", "-q", "-nx", "-batch"] + [a for e in env for a in ("-ex", "set env " + e.replace("=", " ", 1))]
        cmd += ["-ex", "handle SIGUSR1 SIGUSR2 nostop noprint"]
        if stop_at:
            cmd += ["-ex", "set breakpoint pending on", "-ex", "break " + stop_at]
        cmd += ["-ex", "run", "-ex", "bt", "-ex", "kill", "--args", c.prog(name)]
        p = c.run(cmd)
        frames = [l for l in p.stdout.splitlines() if l.startswith("#")]
        order = []
        for f in frames:
            m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(", f)
            name_at = m.group(1).replace("__GI_", "").lstrip("_") if m else ""  # glibc's debug names
            for fn in expect:
                if name_at.startswith(fn) and fn not in order:
                    order.append(fn)
        check(order == expect and (not stop_at or (frames and stop_at in frames[0])),
              "%s: gdb's backtrace%s found %s, expected %s:\n%s" % (
                  name, " in " + stop_at if stop_at else "", order, ", ".join(expect),
                  "\n".join(frames) or p.stdout + p.stderr))

    for name in progs:
        backtrace(name, None, ["abort", "cmp", "qsort", "outer", "main"])
        # a signal's unwinder may start inside the trampolines themselves
        backtrace(name, "rt_plt_thunk_common", ["rt_plt_thunk_common", "outer", "main"])
        if name.endswith("_plain"):
            backtrace(name, "rt_patch_return", ["rt_patch_return", "qsort", "outer", "main"])


@test
def test_vfork_sigchld_handler(c):
    """vfork in a loop with a SIGCHLD handler that calls the program's functions as each child
    ends (gdb's way of starting the program it debugs): the program runs as alone, every call is
    counted, each child is a process of its own.  The handler ran while the runtime put the
    parent's recording state back, on the child's, and the program died of SIGSEGV in 3 to 5
    runs of 10 patched at load, gdb in 6 of 8."""
    n = 150
    progs = ["e2e_vfork_sigchld"] + (["e2e_vfork_sigchld_plain"] if c.capstone() else [])
    for name in progs:
        alone = subprocess.run([c.prog(name), str(n)], stdout=subprocess.PIPE, universal_newlines=True,
                               timeout=RECORD_TIMEOUT)
        for run in range(3):
            rec, rep = c.record_and_report([c.prog(name), str(n)])
            check(rec.stdout == alone.stdout, "%s (run %d) printed %r, alone %r" % (
                name, run + 1, rec.stdout, alone.stdout))
            expect_calls(rep, {"parent_after": n, "child_setup": n, "scale": 4 * n + calls(rep, "on_child_end")})
            check(calls(rep, "on_child_end") >= 1, "%s: the SIGCHLD handler's calls are missing" % name)
            check(len(rep["processes"]) == n + 1, "%s: %d processes, expected %d" % (
                name, len(rep["processes"]), n + 1))


@test
def test_process_title_kept(c):
    """A forked worker that writes its title over its arguments (setproctitle, as nginx's workers
    do): the report names it by that title, as ps does, not by its parent's command line; the
    title's padding NULs are not shown as spaces."""
    prog = c.prog("e2e_retitle")
    rec, rep = c.record_and_report([prog, "x" * 40])
    check(rec.stdout == "worker 0\n", "e2e_retitle printed %r" % rec.stdout)
    cmds = sorted(p["command"] for p in rep["processes"])
    check("retitle: worker" in cmds and any(x.startswith(prog) for x in cmds),
          "process commands %r: expected the parent's command line and the worker's title" % cmds)
    expect_calls(rep, {"worker_step": 10})


@test
def test_dlopen_again_probed(c):
    """A plugin dlclosed and loaded again (at the same address): its library calls are probed again."""
    plugin = os.path.join(c.progs, "libe2e_plugin.so")
    _, rep = c.record_and_report([c.prog("e2e_dlopen_host"), plugin, "twice"])
    expect_calls(rep, {"host_step": 2, "main": 1}, module="e2e_dlopen_host")
    expect_calls(rep, {"usleep": 2, "dlopen": 2, "dlclose": 1}, module="libc.so")


def big_plugin_source(n):
    """A library of n small functions not built for instrumentation, and plugin_entry (returns 7,
    as e2e_dlopen_host wants) calling every 500th of them."""
    out = ["volatile unsigned long sink;"]
    for i in range(n):
        out.append("__attribute__((noinline)) unsigned long f%d(unsigned long x) "
                   "{ if (x & 1) sink += x * %d; return x + %d + (x >> 3); }" % (i, i + 1, i))
    out.append("int plugin_entry(void) { unsigned long x = 1;")
    out += [" x = f%d(x);" % i for i in range(0, n, 500)]
    out.append(" sink += x; return 7; }")
    return "\n".join(out) + "\n"


@test
def test_patching_in_dlopen_is_overhead(c):
    """A library dlopen maps is scanned and patched inside dlopen (before its constructors run):
    that is the profiler's time, which compensation removes, not dlopen's.  It was charged to
    dlopen: a Python script importing 21 extension modules showed dlopen as its hottest function
    (18 % of the session, against 6 ms sampled).  With --no-cache the scan of 3000 functions
    takes tens of ms; dlopen's own mapping well under one."""
    c.need_capstone()
    gcc = shutil.which("gcc")
    if not gcc:
        raise TestSkip("no gcc to build the test library")
    src = os.path.join(c.tmp, "big.c")
    with open(src, "w") as f:
        f.write(big_plugin_source(3000))
    lib = os.path.join(c.tmp, "libe2e_big.so")
    c.run([gcc, "-O2", "-shared", "-fPIC", "-o", lib, src], expect=0, timeout=180)  # building the subject: a loaded machine takes long
    _, data = c.record([c.prog("e2e_dlopen_host_plain"), lib], options=["--no-cache"], timeout=100)
    comp = c.report_json(data)
    raw = c.report_json(data, options=["--no-compensation"])
    expect_calls(comp, {"plugin_entry": 1, "f0": 1, "f2500": 1, "f1": 0}, module="libe2e_big.so")
    expect_calls(comp, {"dlopen": 1}, module="libc.so")
    ee = {}
    for name, rep in (("compensated", comp), ("raw", raw)):
        rows = function_rows(rep, "dlopen", "libc.so")
        ee[name] = rows[0]["elapsed_exclusive"]
    check(ee["raw"] > 0 and ee["compensated"] <= ee["raw"] / 4,
          "dlopen's exclusive time is %s compensated against %s raw: the scan and the patching inside it "
          "were not removed as the profiler's time" % (ms(ee["compensated"]), ms(ee["raw"])))


@test
def test_startup_scan_is_overhead(c):
    """The scan of a large program patched at load, in the runtime's constructor before main
    (gcc's cc1: 25 MB of code, seconds with --no-cache), is the profiler's time: compensation
    removes it whole, and the functions the runtime calls meanwhile (libc's malloc and free,
    which its qsort and dlsym call through libc's probed PLT) are not the program's calls.
    Before, those calls split the constructor's time, and all of it but the last part was the
    program's: cc1plus --version showed 2.5 s of Elapsed time with 111 ms of it the profiler's
    own, and 6 calls of free at its root."""
    c.need_capstone()
    gcc = shutil.which("gcc")
    if not gcc:
        raise TestSkip("no gcc: its cc1 is the large program")
    cc1 = subprocess.run([gcc, "-print-prog-name=cc1"], stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    if not os.path.isabs(cc1) or not os.access(cc1, os.X_OK):
        raise TestSkip("gcc has no cc1 here (%r)" % cc1)
    # (seconds of scan, more in the sanitizers' build and on a loaded machine)
    _, data = c.record([cc1, "--version"], options=["--no-cache"], timeout=150)
    rep = c.report_json(data)
    raw = c.report_json(data, options=["--no-compensation"])
    cc = rep["compensation"]
    raw_ns = raw["session"]["elapsed_inclusive"]
    check(cc["overhead_ns"] >= 0.5 * raw_ns,
          "the profiler's own time is %s of %s raw: the start-up scan was charged to the program" % (
              ms(cc["overhead_ns"]), ms(raw_ns)))
    check(rep["session"]["elapsed_inclusive"] <= 0.25 * raw_ns,
          "cc1 --version: %s compensated against %s raw" % (ms(rep["session"]["elapsed_inclusive"]), ms(raw_ns)))


@test
def test_vfork_exec(c):
    """vfork + exec: the child's calls and its exec are its own process entry, not the parent's."""
    target = c.prog("e2e_exec_target")
    # without library-call probes too: the child still gets its own entry
    _, data = c.record([c.prog("e2e_vfork_exec"), target], options=["--no-libcalls"])
    rep = c.report_json(data)
    check(len(rep["processes"]) == 3, "--no-libcalls: expected 3 process rows, got %s" % (
        [(p["pid"], p["command"]) for p in rep["processes"]]))
    for pid in {p["pid"] for p in rep["processes"]}:
        out = c.run([c.stint, "report", "-i", data, "--format", "json", "--pid", str(pid)], expect=0)
        r = json.loads(out.stdout)
        check(calls(r, "launcher_step") == 0 or calls(r, "child_before_exec") == 0,
              "--no-libcalls: the vfork child's calls are in its parent's process: %s" % function_list(r))
        check(not [x for x in r["functions"] if ".so" in x["module"]],
              "--no-libcalls: library functions reported: %s" % function_list(r))
    _, data = c.record([c.prog("e2e_vfork_exec"), target])
    rep = c.report_json(data)
    expect_calls(rep, {"launcher_step": 3, "child_before_exec": 1, "after_wait": 1})
    expect_calls(rep, {"exec_target_work": 40}, module="e2e_exec_target")
    procs = rep["processes"]
    shown = [(p["pid"], p["command"]) for p in procs]
    check(len(procs) == 3, "expected 3 process rows (parent, vfork child, exec'd target), got %s" % shown)
    first_word = lambda p: os.path.basename(p["command"].split()[0]) if p["command"] else ""
    launcher = sorted((p for p in procs if first_word(p) == "e2e_vfork_exec"), key=lambda p: p["pid"])
    check(len(launcher) == 2, "expected 2 e2e_vfork_exec processes, got %s" % shown)
    per = {}
    for p in launcher:
        # (not report_json: the child's pid also has the exec'd program's entry)
        out = c.run([c.stint, "report", "-i", data, "--format", "json", "--pid", str(p["pid"])], expect=0)
        r = json.loads(out.stdout)
        per[p["pid"]] = {k: calls(r, k) for k in ("launcher_step", "child_before_exec", "after_wait")}
        per[p["pid"]]["execl"] = calls(r, "execl", "libc.so")
        per[p["pid"]]["vfork"] = calls(r, "vfork", "libc.so")
    parent = [pid for pid, v in per.items() if v["launcher_step"] == 3]
    child = [pid for pid, v in per.items() if v["child_before_exec"] == 1]
    check(len(parent) == 1 and len(child) == 1 and parent != child,
          "the vfork child's calls are not in a process of their own: %s" % per)
    p, ch = per[parent[0]], per[child[0]]
    check(p == {"launcher_step": 3, "child_before_exec": 0, "after_wait": 1, "execl": 0, "vfork": 1},
          "parent's calls %s: expected launcher_step 3, after_wait 1, vfork 1, nothing of the child's" % p)
    check(ch["execl"] == 1 and ch["after_wait"] == 0 and ch["launcher_step"] == 0,
          "vfork child's calls %s: expected child_before_exec 1 and execl 1 only" % ch)


@test
def test_instrumented_library(c):
    """Calls into a library built with -finstrument-functions are counted once (its own probes)."""
    _, rep = c.record_and_report([c.prog("e2e_instlib_host")])
    expect_calls(rep, {"instlib_work": 7, "instlib_leaf": 7}, module="libe2e_instlib.so")
    expect_calls(rep, {"strlen": 7, "usleep": 1}, module="libc.so")
    rows = function_rows(rep, "instlib_work")
    check(len(rows) == 1, "instlib_work has %d rows: %s" % (len(rows), function_list(rep)))


@test
def test_fno_plt_calls(c):
    """-fno-plt (GOT-indirect calls, lazy and -z now): library calls recorded, &free unchanged."""
    plain = c.run([c.prog("e2e_fnoplt_plain")], expect=0)
    check("identity same" in plain.stdout, "the uninstrumented program says %r" % plain.stdout)
    for prog in ("e2e_fnoplt", "e2e_fnoplt_now"):
        rec, data = c.record([c.prog(prog)])
        check(rec.stdout == plain.stdout, "%s printed %r under stint, %r without" % (prog, rec.stdout, plain.stdout))
        rep = c.report_json(data)
        expect_calls(rep, {"use_libc": 1, "main": 1})
        expect_calls(rep, {"usleep": 3, "malloc": 10, "qsort": 1}, module="libc.so")
        us = func(rep, "usleep", "libc.so")
        check(us["elapsed_inclusive"] >= 2.5e6, "%s: usleep EI %s, expected >= 3 x 1 ms" % (prog, ms(us["elapsed_inclusive"])))


LAZY_LIB_V1 = "int lazy_present(void) { return 7; }\nint lazy_gone(void) { return 8; }\n"
LAZY_LIB_V2 = "int lazy_present(void) { return 7; }\n"
LAZY_PROG = r'''
#include <stdio.h>
#include <stdlib.h>
int lazy_present(void);
int lazy_gone(void);
__attribute__((noipa)) int pick(int argc) { return argc > 5 ? lazy_gone() : lazy_present(); }
int main(int argc, char **argv)
{
	(void)argv;
	const char *b = getenv("LD_BIND_NOW");
	printf("value %d bind_now %s\n", pick(argc), b ? b : "unset");
	fflush(stdout);
	return system("exit 0") == 0 ? 0 : 9;
}
'''


@test
def test_lazy_binding_kept(c):
    """A program relying on lazy binding (a symbol its library no longer has, never called) runs
    as without stint, and LD_BIND_NOW is not set for it or its children."""
    gcc = shutil.which("gcc")
    if not gcc:
        print("SKIP: no gcc to build the test program")
        return
    d1, d2 = os.path.join(c.tmp, "v1"), os.path.join(c.tmp, "v2")
    os.mkdir(d1)
    os.mkdir(d2)
    for d, src in ((d1, LAZY_LIB_V1), (d2, LAZY_LIB_V2)):
        with open(os.path.join(d, "lazy.c"), "w") as f:
            f.write(src)
        c.run([gcc, "-shared", "-fPIC", "-O2", "-Wl,-soname,libe2e_lazy.so", "-o",
               os.path.join(d, "libe2e_lazy.so"), os.path.join(d, "lazy.c")], expect=0)
    src = os.path.join(c.tmp, "lazy_prog.c")
    with open(src, "w") as f:
        f.write(LAZY_PROG)
    prog = os.path.join(c.tmp, "lazy_prog")
    c.run([gcc, "-O2", "-g", "-finstrument-functions", "-Wl,-z,lazy", "-o", prog, src, "-L" + d1, "-le2e_lazy"], expect=0)
    env = dict(os.environ, LD_LIBRARY_PATH=d2)
    env.pop("LD_BIND_NOW", None)
    plain = c.run([prog], env=env)
    check(plain.returncode == 0 and "value 7 bind_now unset" in plain.stdout,
          "the program does not run lazily without stint here: %d %r %r" % (plain.returncode, plain.stdout, plain.stderr))
    data = os.path.join(c.tmp, "stint.data")
    rec = c.run([c.stint, "record", "-m", "instrument", "-o", data, "--", prog], env=env)
    check(rec.returncode == 0 and rec.stdout == plain.stdout,
          "under stint the program exited %d printing %r (without: %r)\n  stderr: %s" % (
              rec.returncode, rec.stdout, plain.stdout, rec.stderr.strip()))
    rep = c.report_json(data)
    expect_calls(rep, {"pick": 1, "main": 1})
    expect_calls(rep, {"lazy_present": 1}, module="libe2e_lazy.so")
    expect_calls(rep, {"printf": 1, "system": 1}, module="libc.so")


@test
def test_crash_sigsegv(c):
    """SIGSEGV: record exits 139, the calls before the crash are all kept."""
    rec, data = c.record([c.prog("e2e_crash_segv")], expect_status=139)
    check("signal 11" in rec.stderr or "Segmentation" in rec.stderr,
          "record's stderr does not say the program died of signal 11: %s" % rec.stderr.strip())
    rep = c.report_json(data)
    expect_calls(rep, {"before_crash": 7, "crash_here": 1, "main": 1})
    crash = func(rep, "crash_here")
    check(func(rep, "main")["elapsed_inclusive"] >= crash["elapsed_inclusive"], "main EI < crash_here EI")


def core_first_function(core, prog):
    """The function of prog (from its .symtab) that the faulting thread of an ELF core was in
    (NT_PRSTATUS's rip, placed in the file by NT_FILE), or what the rip was instead."""
    with open(core, "rb") as f:
        b = f.read()
    check(b[:4] == b"\x7fELF" and struct.unpack_from("<H", b, 16)[0] == 4, "%s is no ELF core" % core)
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phnum, = struct.unpack_from("<H", b, 0x38)
    rip, files = None, []
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", b, phoff + i * 56)
        at, end = p_offset, p_offset + p_filesz
        while p_type == 4 and at + 12 <= end:  # PT_NOTE
            namesz, descsz, ntype = struct.unpack_from("<III", b, at)
            desc = at + 12 + (namesz + 3) // 4 * 4
            if ntype == 1 and rip is None:  # NT_PRSTATUS, the dumping thread's first
                rip, = struct.unpack_from("<Q", b, desc + 112 + 16 * 8)  # pr_reg's rip
            elif ntype == 0x46494c45:  # NT_FILE
                count, page = struct.unpack_from("<QQ", b, desc)
                names = b[desc + 16 + count * 24:desc + descsz].split(b"\0")
                for k in range(count):
                    start, stop, pgoff = struct.unpack_from("<QQQ", b, desc + 16 + k * 24)
                    files.append((start, stop, pgoff * page, names[k].decode(errors="replace")))
            at = desc + (descsz + 3) // 4 * 4
    check(rip is not None, "%s has no NT_PRSTATUS note" % core)
    real = os.path.realpath(prog)
    for start, stop, off, name in files:
        if start <= rip < stop:
            if os.path.realpath(name) != real:
                return "0x%x in %s" % (rip, name)
            pos = rip - start + off
            syms = [(o, n) for n, o in harness.elf_symbols(prog).items() if o <= pos]
            return max(syms)[1] if syms else "0x%x in %s" % (rip, name)
    return "0x%x (no file)" % rip


@test
def test_crash_core_first_frame(c):
    """A fault (SIGSEGV from a null pointer) with core dumps allowed: the core's faulting frame is
    the program's (crash_here; gdb's bt starts there), the crash still recorded (exit 139, the
    calls kept).  The runtime's handler sent the signal again itself: the core's stack began
    pthread_sigmask, rt_fatal, <signal handler called>, crash_here.  Now it stamps the time,
    restores the default action and returns, and the instruction faults again."""
    with open("/proc/sys/kernel/core_pattern") as f:
        pattern = f.read().strip()
    if pattern.startswith("|") or "/" in pattern:
        raise TestSkip("core files go to %r, not the program's directory" % pattern)
    prog = c.prog("e2e_crash_segv")
    where = os.path.join(c.tmp, "cores")
    os.mkdir(where)
    data = os.path.join(c.tmp, "crash.data")

    def cores_on():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    # (a sanitizer build of stint sets its own core limit to 0 at start, which the program
    # inherits, unless told not to)
    env = dict(os.environ, ASAN_OPTIONS=":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
                                                                 "disable_coredump=0"])))
    rec = c.run([c.stint, "record", "-o", data, "--", prog], cwd=where, preexec_fn=cores_on, env=env)
    check(rec.returncode == 139, "record exited %d, expected 139: %s" % (rec.returncode, rec.stderr.strip()))
    expect_calls(c.report_json(data), {"before_crash": 7, "crash_here": 1, "main": 1})
    cores = [n for n in os.listdir(where) if n.startswith("core")]
    check(len(cores) == 1, "no core file (or several) in %s: %s" % (where, os.listdir(where)))
    core = os.path.join(where, cores[0])
    first = core_first_function(core, prog)
    check(first == "crash_here", "the core's faulting thread was at %s, not in crash_here" % first)
    gdb = shutil.which("gdb")
    if gdb:
        p = c.run([gdb, "-batch", "-nx", "-ex", "bt", prog, core], timeout=120)
        frames = [l for l in p.stdout.splitlines() if l.startswith("#")]
        check(frames and " crash_here " in frames[0] + " " and any(" main " in l + " " for l in frames[:3]),
              "gdb's bt of the core:\n%s" % p.stdout[-2000:])


@test
def test_crash_abort(c):
    """abort(): record exits 134 (128 + SIGABRT), the calls before it all kept."""
    _, data = c.record([c.prog("e2e_crash_abort")], expect_status=134)
    rep = c.report_json(data)
    expect_calls(rep, {"step": 4, "give_up": 1, "main": 1})


@test
def test_crash_time_until_signal(c):
    """The time a function spends between its last probe and a fatal SIGSEGV or
    SIGABRT (a few ms of pure computing) is counted: frames close at the death."""
    for prog, fn, status in (("e2e_crash_segv", "crash_here", 139), ("e2e_crash_abort", "give_up", 134)):
        _, data = c.record([c.prog(prog)], expect_status=status, data=os.path.join(c.tmp, prog + ".data"))
        rep = c.report_json(data)
        r = func(rep, fn)
        check(r["calls"] == 1, "%s: %d calls" % (fn, r["calls"]))
        check(r["elapsed_inclusive"] >= 0.3e6,
              "%s of %s has EI %s, expected >= 0.3 ms (it computed ~2M iterations before dying of "
              "signal %d): the time after the last probe is lost" % (fn, prog, ms(r["elapsed_inclusive"]), status - 128))


@test
def test_self_sigkill(c):
    """The program SIGKILLs itself after 1000 calls: exit 137, all 1000 calls kept."""
    rec, data = c.record([c.prog("e2e_self_kill")], expect_status=137)
    rep = c.report_json(data)
    expect_calls(rep, {"tick": 1000, "die_now": 1, "main": 1})
    check(func(rep, "die_now")["elapsed_inclusive"] >= 0, "die_now missing")


@test
def test_killed_externally(c):
    """The test SIGKILLs a looping program after 0.3 s: exit 137, the calls made are in the file."""
    counter = os.path.join(c.tmp, "counter")
    data = os.path.join(c.tmp, "stint.data")
    argv = [c.stint, "record", "-m", "instrument", "-o", data, "--", c.prog("e2e_kill_me"), counter]
    c.log.append(" ".join(argv))
    rec = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        pid, deadline = 0, time.time() + 10
        while time.time() < deadline:
            if os.path.exists(counter) and os.path.getsize(counter) >= 16:
                with open(counter, "rb") as f:
                    pid = struct.unpack("<QQ", f.read(16))[0]
                if pid:
                    break
            if rec.poll() is not None:
                raise TestFailure("record exited early (%s): %s" % (rec.returncode, rec.stderr.read()))
            time.sleep(0.01)
        check(pid, "e2e_kill_me did not start within 10 s")
        time.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        out, err = rec.communicate(timeout=RECORD_TIMEOUT)
    finally:
        if rec.poll() is None:  # the test failed before the program died: stop both
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            rec.kill()
            rec.wait()
    with open(counter, "rb") as f:
        _, started = struct.unpack("<QQ", f.read(16))
    check(rec.returncode == 137, "record exited %d, expected 137 (128 + SIGKILL); stderr: %s" % (
        rec.returncode, err.strip()))
    check(os.path.isfile(data), "no data file after the program was killed")
    rep = c.report_json(data)
    got = calls(rep, "tick")
    check(started > 1000, "the program only started tick %d times in 0.3 s" % started)
    check(got in (started, started + 1),
          "tick has %d calls in the report, but the program started it %d times" % (got, started))
    check(calls(rep, "main") == 1, "main has %d calls, expected 1" % calls(rep, "main"))
    check(rep["session"]["elapsed_inclusive"] >= 0.25e9,
          "session EI %s, expected >= 250 ms (killed after 0.3 s)" % ms(rep["session"]["elapsed_inclusive"]))


@test
def test_patched_loop_to_entry(c):
    """A function whose loop jumps back to its first instruction (a loop with no prologue before
    it, as gcc -O2 makes of a list walk) is left unpatched and listed by --why: patched, each turn
    passed its entry probe and counted as a call (a list walk called 1000 times: 5500 calls)."""
    c.need_capstone()
    _, data = c.record([c.prog("e2e_loop_entry")], options=["--no-cache"])
    rep = c.report_json(data)
    expect_calls(rep, {"main": 1, "outer": 100, "loop_entry": 0})
    why = c.run([c.stint, "report", "-i", data, "--why", "--no-pager"], expect=0).stdout
    check(re.search(r"loop_entry +a jump inside it goes back to its first instruction", why),
          "--why does not say why loop_entry is not instrumented:\n%s" % why[:1500])
    # the same when the scan is kept for later recordings, and taken by the next one
    for n in range(2):
        _, data = c.record([c.prog("e2e_loop_entry")], data=os.path.join(c.tmp, "again%d.data" % n))
        expect_calls(c.report_json(data), {"main": 1, "outer": 100, "loop_entry": 0})


@test
def test_patched_handler_tail_call(c):
    """A signal handler's tail call (gcc -O2 makes the handler's last call a jump) is counted when
    the handler interrupted a patched function's shadow-stack code: as a call of no length there.
    6 % of them went uncounted (a SIGALRM every 2 ms, in_handler 935 of 1000)."""
    for v in c.load_variants():
        name = "e2e_handler_tail_" + v
        rec, data = c.record([c.prog(name)], data=os.path.join(c.tmp, name + ".data"))
        m = re.match(r"handler (\d+) in_handler (\d+) spin_step (\d+)", rec.stdout)
        check(m, "%s printed %r" % (name, rec.stdout))
        handler, inner, spin = (int(x) for x in m.groups())
        check(handler > 50, "%s: only %d signals in 0.5 s" % (name, handler))
        expect_calls(c.report_json(data), {"handler": handler, "in_handler": inner, "spin_step": spin})


@test
def test_patched_tail_jumps(c):
    """Mutual recursion by tail jumps (gcc -O2: is_even -> is_odd -> is_even ... as jmps, one
    return for the chain) patched at load, through -pg -mfentry and NOP sites, and -pg alone: every
    function has the callers and calls of the -finstrument-functions build (main -> is_even 3010,
    is_even -> is_odd and is_odd -> is_even 30,030), a chain left by longjmp is closed (landed's
    caller is main), and a C++ exception thrown out of a chain is caught as without stint and
    closes it (after_catch's caller is main; before, main -> ping 100 calls for 20).  The function a tail jump entered was its jumper's caller's callee, the jumper
    closed at the jump: main -> is_even 33,040 calls, main -> is_odd 30,030."""
    ref = c.prog("e2e_tail_chain")
    want = callers_of_all(c, ref, ("is_even", "is_odd", "leaf", "bail", "landed"))
    check(want["is_even"] == {"main": 3010, "is_odd": 30030} and want["is_odd"] == {"is_even": 30030} and
          want["landed"] == {"main": 10}, "the -finstrument-functions build's callers: %s" % want)
    variants = c.load_variants() + (("pg",) if c.capstone() else ())
    for v in variants:
        prog = c.prog("e2e_tail_chain_" + v)
        objdump = shutil.which("objdump")
        if objdump:  # (the test's own assumption: the calls are jumps)
            dis = c.run([objdump, "-d", "--no-show-raw-insn", prog], expect=0).stdout
            body = dis.split("<is_odd>:\n", 1)[1].split("\n\n", 1)[0]
            check(re.search(r"jmp +[0-9a-f]+ <is_even", body), "%s: is_odd does not jump to is_even:\n%s" % (
                prog, body))
        got = callers_of_all(c, prog, want)
        check(got == want, "%s: callers %s\n  the -finstrument-functions build's: %s" % (prog, got, want))
    # a C++ exception thrown out of a chain: caught in main, the chain closed there
    ref = c.prog("e2e_tail_throw")
    want = callers_of_all(c, ref, ("ping", "pong", "thrower", "after_catch"))
    check(want["ping"] == {"main": 20, "pong": 80} and want["after_catch"] == {"main": 20},
          "the -finstrument-functions build's callers: %s" % want)
    for v in c.load_variants():
        prog = c.prog("e2e_tail_throw_" + v)
        got = callers_of_all(c, prog, want, "caught 10\n")
        check(got == want, "%s: callers %s\n  the -finstrument-functions build's: %s" % (prog, got, want))


def callers_of_all(c, prog, names, output=None):
    """{function: {caller: calls}} of a recording of prog (which prints output, if given)."""
    data = os.path.join(c.tmp, os.path.basename(prog) + ".data")
    rec, _ = c.record([prog], data=data)
    check(output is None or rec.stdout == output, "%s printed %r, not %r" % (prog, rec.stdout, output))
    out = {}
    for name in names:
        p = c.run([c.stint, "callers", "-i", data, "--format", "json", name], expect=0)
        out[name] = {r["name"]: r["calls"] for r in json.loads(p.stdout)["callers"]}
    return out


@test
def test_backtrace_same(c):
    """A program that walks its own stack (glibc's backtrace(), _Unwind_Backtrace) finds the same
    frames under stint as alone, built with -finstrument-functions and patched at load: the
    probes' swapped return addresses (library calls' thunks, rt_patch_return) are put back while
    it walks.  backtrace() found 1 frame of 6 (stint's library), _Unwind_Backtrace 3 of 7."""
    names = ["e2e_backtrace_show"] + ["e2e_backtrace_show_" + v for v in c.load_variants()]
    for name in names:
        alone = c.run([c.prog(name)], expect=0).stdout
        check(alone.startswith("backtrace") and " show lvl2 lvl1 main" in alone,
              "%s alone printed %r (the test's own assumption)" % (name, alone))
        rec, _ = c.record([c.prog(name)], data=os.path.join(c.tmp, name + ".data"))
        check(rec.stdout == alone, "%s printed under stint:\n%s\nalone:\n%s" % (name, rec.stdout, alone))


def run_killed_waiting(c, data, sig, preexec=None, env_note="", inspect=None):
    """e2e_killed_waiting under stint, signalled with sig once it waits (inspect(pid) first, if
    given); (proc, stdout)."""
    ready = os.path.join(c.tmp, "ready")
    if os.path.exists(ready):
        os.unlink(ready)
    argv = [c.stint, "record", "-m", "instrument", "-f", "-o", data, "--", c.prog("e2e_killed_waiting"), ready]
    c.log.append(" ".join(argv) + env_note)
    rec = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           preexec_fn=preexec)
    try:
        deadline = time.time() + 20
        while not os.path.exists(ready) and time.time() < deadline and rec.poll() is None:
            time.sleep(0.01)
        check(os.path.exists(ready), "e2e_killed_waiting did not start waiting within 20 s")
        with open(ready) as f:
            pid = int(f.read())
        time.sleep(0.4)
        if inspect:
            inspect(pid)
        for s in sig if isinstance(sig, tuple) else (sig,):
            os.kill(pid, s)
            time.sleep(0.1)
        out, err = rec.communicate(timeout=RECORD_TIMEOUT)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    return rec, out, err


@test
def test_killed_while_waiting(c):
    """A program killed by a signal another process sends (SIGTERM, SIGINT, SIGHUP: kill, Ctrl-C,
    a hangup) while it waits in a call: the call lasted until then.  It ended at its entry (sleep 5
    stopped by SIGINT after 1.5 s: nanosleep 0 ns), as only faults were stamped.  The program is
    told the default action is there (sigaction, signal), as without stint, and dies of the
    signal: stint exits 128 + N (dies of SIGINT itself, as a shell's loop needs)."""
    data = os.path.join(c.tmp, "killed.data")
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        rec, out, err = run_killed_waiting(c, data, sig)
        want = -sig if sig == signal.SIGINT else 128 + sig
        check(rec.returncode == want, "%s: record exited %d, expected %d; stderr: %s" % (
            sig.name, rec.returncode, want, err.strip()))
        check(out.strip() == "TERM dfl INT dfl HUP dfl USR1 dfl", "%s: the program was told %r" % (sig.name, out.strip()))
        rep = c.report_json(data)
        expect_calls(rep, {"main": 1, "wait_here": 1})
        waited = func(rep, "wait_here")["elapsed_inclusive"]
        sleep = function_rows(rep, "nanosleep", "libc.so")
        check(waited >= 0.35e9, "%s: wait_here lasted %s, but it waited >= 400 ms before the signal" % (
            sig.name, ms(waited)))
        check(sleep and sleep[0]["calls"] == 1 and sleep[0]["elapsed_inclusive"] >= 0.35e9,
              "%s: nanosleep %s, expected 1 call of >= 400 ms" % (sig.name, sleep))


@test
def test_exit_from_another_thread(c):
    """The process ends in one thread (exit(), or a SIGTERM it sends itself) after 300 ms while
    main waits in pthread_join, a thread in pause() and one computing without calls: their calls
    lasted until the process ended.  They were closed at their last probe: pthread_join and
    pause 0 ns, keep_busy under a microsecond.  The blocked calls' time is OS time (AI ~ 0)."""
    for how, status in (("exit", 3), ("term", 128 + signal.SIGTERM)):
        _, rep = c.record_and_report([c.prog("e2e_exit_elsewhere"), how], expect_status=status)
        expect_calls(rep, {"main": 1, "wait_forever": 1, "keep_busy": 1, "finish": 1})
        ended = func(rep, "finish")["elapsed_inclusive"]
        check(ended >= 0.28e9, "%s: finish lasted %s, but it slept 300 ms" % (how, ms(ended)))
        rows = [(name, function_rows(rep, name, "libc.so") if name in ("pthread_join", "pause") else
                 function_rows(rep, name)) for name in ("pthread_join", "pause", "main", "wait_forever", "keep_busy")]
        for name, r in rows:
            check(len(r) == 1 and r[0]["calls"] == 1, "%s: %s: expected one call, found %s" % (how, name, r))
            check(r[0]["elapsed_inclusive"] >= 0.9 * ended,
                  "%s: %s lasted %s, but the process ended %s after it began (finish)" % (
                      how, name, ms(r[0]["elapsed_inclusive"]), ms(ended)))
        for name, r in rows[:2]:
            check(r[0]["application_inclusive"] <= 0.1 * r[0]["elapsed_inclusive"],
                  "%s: %s blocked for %s but has AI %s: its wait is OS time" % (
                      how, name, ms(r[0]["elapsed_inclusive"]), ms(r[0]["application_inclusive"])))


@test
def test_quiet_thread_buffer_small(c):
    """A thread that wrote a few records costs little to start: its buffer's mappings fault in
    only the pages touched (no read-around: VmFlags 'rr'), and the recorder allocates and
    prefaults its next chunk only once records pass the first page of the current one.  Each thread
    had 128 KiB or more zero-filled around each first touch and a 512 KiB next chunk allocated
    and faulted by the recorder: 2,000 threads started at once took 5-13 s instead of 0.1 s."""
    data = os.path.join(c.tmp, "quiet.data")
    seen = {}

    def inspect(pid):
        with open("/proc/%d/smaps" % pid) as f:
            text = f.read()
        flags, current = [], None
        for line in text.splitlines():
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                current = line.split()[-1] if len(line.split()) >= 6 else ""
            elif line.startswith("VmFlags:") and current and ".stint-spool-" in current and current.endswith(".buf"):
                flags.append((current, line.split()[1:]))
        seen["flags"] = flags
        spools = [os.path.join(c.tmp, n) for n in os.listdir(c.tmp) if n.startswith(".stint-spool-")]
        seen["bufs"] = []
        for d in spools:
            for n in os.listdir(d):
                if n.endswith(".buf"):
                    path = os.path.join(d, n)
                    # the process's first thread calibrates the probes in its buffer (batches of
                    # records, then taken back): past its first page, its next chunk comes ahead
                    m = re.match(r"p(\d+)-\d+\.t(\d+)\.buf$", n)
                    busy = not m or m.group(1) == m.group(2)
                    seen["bufs"].append((n, os.stat(path).st_blocks * 512, busy))

    rec, out, err = run_killed_waiting(c, data, signal.SIGTERM, inspect=inspect)
    check(seen.get("flags"), "no mapping of a spool buffer in the program's smaps")
    for path, fl in seen["flags"]:
        check("rr" in fl, "mapping of %s reads around its faults (VmFlags %s)" % (os.path.basename(path), " ".join(fl)))
    check(seen.get("bufs"), "no buffer file in the spool")
    for name, allocated, busy in seen["bufs"]:
        check(busy or allocated <= 384 << 10, "%s: %d KiB allocated for a thread of a few records (the "
              "first chunk is 256 KiB; the next was allocated ahead)" % (name, allocated >> 10))
    check(any(not busy for _, _, busy in seen["bufs"]), "no buffer of a thread but the first: %s" % seen["bufs"])
    rep = c.report_json(data)
    expect_calls(rep, {"main": 1, "wait_here": 1, "quiet_call": 1})


@test
def test_library_call_names(c):
    """Library calls are named and selected by the name the program calls: glibc's memcpy and
    memmove land in one function (its IFUNCs chose it), and memset and strlen in functions the
    library's dynamic symbols do not name.  memmove's calls were reported as memcpy's, and
    --function memset (memcpy, strlen, 'mem*') recorded nothing, --not-function memset left it
    in.  Built with -finstrument-functions and plain (patched at load)."""
    libc = "libc.so"
    for prog in ("e2e_lib_aliases", "e2e_lib_aliases_plain"):
        _, rep = c.record_and_report([c.prog(prog)])
        expect_calls(rep, {"move_it": 3, "copy_it": 1, "fill_it": 2, "measure_it": 1})
        expect_calls(rep, {"memmove": 3, "memcpy": 1, "memset": 2, "strlen": 1}, libc)
        for sel, want, gone in ((["--function", "memset"], {"memset": 2}, ["memmove", "memcpy", "strlen", "malloc"]),
                                (["--function", "mem*"], {"memset": 2, "memmove": 3, "memcpy": 1}, ["strlen", "malloc"]),
                                (["--not-function", "memset"], {"memmove": 3, "memcpy": 1, "strlen": 1}, ["memset"])):
            _, data = c.record([c.prog(prog)], options=sel, data=os.path.join(c.tmp, "sel.data"))
            r = c.report_json(data)
            expect_calls(r, want, libc)
            left = [n for n in gone if function_rows(r, n, libc)]
            check(not left, "%s %s: functions not selected were recorded: %s" % (prog, " ".join(sel), left))


@test
def test_static_functions_two_files(c):
    """A static function "work" in each of two source files of one program, instrumented: two
    rows with their own calls (3 and 1) and files, labelled FILE:NAME in the table, and
    'FILE:NAME' picks one for callers and annotate.  They were one row of 4 calls."""
    os.environ["S_SCALE"] = "0.01"
    try:
        _, data = c.record([c.prog("e2e_twofiles")])
    finally:
        del os.environ["S_SCALE"]
    rep = c.report_json(data)
    got = sorted((os.path.basename(r.get("file", "")), r["calls"]) for r in function_rows(rep, "work"))
    check(got == [("s_twofiles_a.c", 3), ("s_twofiles_b.c", 1)], "work's rows (file, calls): %s" % got)
    p = c.run([c.stint, "report", "-i", data, "--no-pager", "--color=never"], expect=0)
    check("s_twofiles_a.c:work [e2e_twofiles]" in p.stdout and "s_twofiles_b.c:work [e2e_twofiles]" in p.stdout,
          "the table does not tell the two apart:\n%s" % p.stdout[:2000])
    p = c.run([c.stint, "report", "-i", data, "--tree", "--threshold", "0", "--no-pager", "--color=never"], expect=0)
    check("s_twofiles_a.c:work [e2e_twofiles]" in p.stdout and "s_twofiles_b.c:work [e2e_twofiles]" in p.stdout,
          "the tree does not tell the two apart:\n%s" % p.stdout[-1500:])
    p = c.run([c.stint, "callers", "-i", data, "work"], expect=None)
    check(p.returncode == 2 and "s_twofiles_a.c:work" in p.stderr and "s_twofiles_b.c:work" in p.stderr,
          "callers work: exit %d, expected a refusal naming both: %s" % (p.returncode, p.stderr))
    p = c.run([c.stint, "callers", "-i", data, "--format", "json", "s_twofiles_b.c:work"], expect=0)
    j = json.loads(p.stdout)
    check(j["function"]["calls"] == 1 and [r["name"] for r in j["callers"]] == ["b_entry"],
          "callers s_twofiles_b.c:work: %s" % p.stdout[:1500])
    p = c.run([c.stint, "annotate", "-i", data, "s_twofiles_a.c:work"], expect=0)
    check("s_twofiles_a.c, lines" in p.stdout and "s_twofiles_b.c" not in p.stdout,
          "annotate s_twofiles_a.c:work shows the other's source:\n%s" % p.stdout[:1500])


@test
def test_file_name_with_space_selects(c):
    """--function "FILE:NAME" with a space in the file's name ("main prog.c:leaf") matched
    nothing: the FILE: part was taken for no file when it had a space."""
    src = os.path.join(c.tmp, "main prog.c")
    with open(src, "w") as f:
        f.write("volatile double s;\n__attribute__((noinline)) void leaf(void) { for (int i = 0; i < 1000; i++) s += i; }\n"
                "int main(void) { for (int i = 0; i < 100; i++) leaf(); return 0; }\n")
    prog = os.path.join(c.tmp, "spaced")
    c.run(["gcc", "-O2", "-g", "-finstrument-functions", "-o", prog, src], expect=0)
    _, data = c.record([prog])
    p = c.run([c.stint, "report", "-i", data, "--format", "json", "--function", "main prog.c:leaf"], expect=0)
    rows = json.loads(p.stdout)["functions"]
    check([r["calls"] for r in rows if r["name"] == "leaf"] == [100], "--function 'main prog.c:leaf': %s" % rows)
    c.run([c.stint, "callers", "-i", data, "main prog.c:leaf"], expect=0)


@test
def test_selection_matching_nothing(c):
    """A record-time selection that matches no function the program calls: said, not taken
    for a build problem.  Instrumented: a warning, the recording kept (exit 0).  Patched at
    load: one error line naming the selection (it said the program was not built with
    -finstrument-functions, which it needs not be)."""
    p, data = c.record([c.prog("e2e_lib_aliases")], options=["--function", "no_such_fn"])
    check("matched no function" in p.stderr and "no_such_fn" in p.stderr,
          "record said nothing of the selection matching nothing: %s" % p.stderr.strip())
    p = c.run([c.stint, "record", "-f", "-o", os.path.join(c.tmp, "plain.data"), "--function", "no_such_fn", "--",
               c.prog("e2e_lib_aliases_plain")], expect=None)
    one_line_error(p, ["matched no function", "no_such_fn"], "record --function no_such_fn of a plain program")
    check("-finstrument-functions" not in p.stderr, "the error blames the build: %s" % p.stderr.strip())


@test
def test_ignored_signals_stay_ignored(c):
    """Signals stint is started with ignored (nohup's SIGHUP; SIGINT of a command a shell runs in
    the background) stay ignored for the program, as without stint: a hangup does not end it.
    stint's own handlers gave it the default action at exec."""
    def ignore():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    data = os.path.join(c.tmp, "nohup.data")
    rec, out, err = run_killed_waiting(c, data, (signal.SIGHUP, signal.SIGINT, signal.SIGTERM), preexec=ignore,
                                       env_note="  (SIGHUP and SIGINT ignored)")
    check(out.strip() == "TERM dfl INT ign HUP ign USR1 dfl", "the program was told %r, expected SIGINT and SIGHUP ignored" %
          out.strip())
    check(rec.returncode == 128 + signal.SIGTERM, "record exited %d: the program did not live on to SIGTERM "
          "(expected %d); stderr: %s" % (rec.returncode, 128 + signal.SIGTERM, err.strip()))


@test
def test_fork_child_signalled_at_once(c):
    """A child signalled from the moment fork() makes it (its parent sends SIGUSR1 again and
    again until the child runs its own code): its handler runs as without stint.  It ran in the
    child before the runtime had rebuilt the child's recording state, probed on the parent's,
    and the child died of SIGSEGV."""
    prog = [c.prog("e2e_group_signal"), "storm"]
    alone = c.run(prog, expect=0).stdout
    check(alone.strip() == "child exited 0", "the program alone printed %r" % alone)
    for i in range(3):
        rec, data = c.record(prog, data=os.path.join(c.tmp, "storm%d.data" % i))
        check(rec.stdout == alone, "under stint the program printed %r, alone %r" % (rec.stdout, alone))
        rep = c.report_json(data)
        check(len(rep["processes"]) == 2, "%d processes recorded, expected the parent and its child" %
              len(rep["processes"]))


def spools_left(d):
    return [n for n in os.listdir(d) if n.startswith(".stint-spool-")]


@test
def test_group_signal_once(c):
    """A program that signals its own process group (kill(0, SIG), stint record in the group):
    stint lives on, whatever the signal, passes none on (the program got it already: its
    handler runs once), and writes the data file.  stint died of SIGUSR1 (status 138, no data
    file, a spool left, the program running on), and SIGTERM, SIGINT and SIGHUP reached the
    program twice ("parent got=2")."""
    sigs = [signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGHUP,
            signal.SIGQUIT, signal.SIGPIPE, signal.SIGVTALRM, signal.SIGPROF, signal.SIGIO, signal.SIGXCPU,
            signal.SIGXFSZ, signal.SIGPWR, signal.SIGRTMIN, signal.SIGRTMIN + 5, signal.SIGRTMAX]
    for sig in sigs:
        name = signal.Signals(sig).name if sig in signal.Signals.__members__.values() else "SIG%d" % sig
        data = os.path.join(c.tmp, "group%d.data" % sig)
        # a session of its own: kill(0) reaches stint and the program, not the test
        p = c.run([c.stint, "record", "-o", data, "--", c.prog("e2e_group_signal"), "group", str(int(sig))],
                  start_new_session=True)
        check(p.returncode == 0, "%s: record exited %d (expected the program's 0); stderr: %s" % (
            name, p.returncode, p.stderr.strip()))
        check(sorted(p.stdout.split()) == ["child", "got=1", "got=1", "parent"],
              "%s: the program printed %r, expected each process to get the signal once" % (name, p.stdout))
        check(os.path.isfile(data), "%s: no data file" % name)
        check(not spools_left(c.tmp), "%s: a spool was left: %s" % (name, spools_left(c.tmp)))
        rep = c.report_json(data)
        check(len(rep["processes"]) == 2, "%s: %d processes recorded" % (name, len(rep["processes"])))


@test
def test_signal_dispositions_kept(c):
    """The program gets the action of every signal it would get without stint: default, or
    ignored where stint was started with it ignored (SIGPIPE, SIGUSR2, SIGHUP here), although
    stint catches them all."""
    prog = [c.prog("e2e_group_signal"), "dispositions"]

    def ignore():
        for sig in (signal.SIGPIPE, signal.SIGUSR2, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)

    for preexec, what in ((None, "none ignored"), (ignore, "SIGPIPE, SIGUSR2 and SIGHUP ignored")):
        alone = c.run(prog, expect=0, preexec_fn=preexec).stdout
        rec = c.run([c.stint, "record", "-f", "-o", os.path.join(c.tmp, "disp.data"), "--"] + prog, expect=0,
                    preexec_fn=preexec)
        check(rec.stdout == alone, "%s: the program was told (d default, i ignored, h handler, from signal 1)\n"
              "  under stint %s  alone       %s" % (what, rec.stdout, alone))


def outside_signal(c, sig, wait_sig, data):
    """e2e_group_signal wait WAIT_SIG under stint; sig sent to stint (not the program) once it
    waits.  (returncode, stdout, stderr)"""
    ready = os.path.join(c.tmp, "ready-%d" % sig)
    argv = [c.stint, "record", "-f", "-o", data, "--", c.prog("e2e_group_signal"), "wait", str(int(wait_sig)), ready]
    c.log.append(" ".join(argv))
    rec = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        deadline = time.time() + RECORD_TIMEOUT
        while not os.path.exists(ready) and time.time() < deadline and rec.poll() is None:
            time.sleep(0.01)
        check(os.path.exists(ready), "e2e_group_signal did not start waiting")
        os.kill(rec.pid, sig)
        try:
            out, err = rec.communicate(timeout=RECORD_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise TestFailure("%s to stint: the program still waits %d s later (stint record exited %s)" % (
                signal.Signals(sig).name, RECORD_TIMEOUT, rec.poll()))
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
        try:  # the program, left running by a stint that died
            with open(ready) as f:
                os.kill(int(f.read()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
    return rec.returncode, out, err


@test
def test_outside_signal_forwarded(c):
    """A signal another process sends to stint record goes to the program, which stint stands
    for: a handled SIGUSR1 or SIGTERM runs the program's handler (once), an unhandled SIGUSR2
    ends it as it would without stint (status 128 + 12, its recording kept)."""
    data = os.path.join(c.tmp, "outside.data")
    for sig in (signal.SIGUSR1, signal.SIGTERM):
        code, out, err = outside_signal(c, sig, sig, data)
        check(code == 0 and out.strip() == "got=1", "%s to stint: record exited %d, the program printed %r; "
              "stderr: %s" % (sig.name, code, out, err.strip()))
    code, out, err = outside_signal(c, signal.SIGUSR2, signal.SIGUSR1, data)
    check(code == 128 + signal.SIGUSR2, "SIGUSR2 to stint: record exited %d, expected %d (the program dies of it); "
          "stderr: %s" % (code, 128 + signal.SIGUSR2, err.strip()))
    rep = c.report_json(data)
    check(calls(rep, "tick") > 0, "the program's recording was not kept: %s" % function_list(rep))
    check(not spools_left(c.tmp), "a spool was left: %s" % spools_left(c.tmp))


@test
def test_second_sigterm_named(c):
    """A program that ignores SIGTERM, and SIGTERM sent to stint record again and again: the
    second ends the recording (status 128 + 15, the program left running), and stint says it
    stopped waiting at SIGTERM, not "at Ctrl-C"; the report says the program has no exit status
    (it said "exit status 143", stint's own)."""
    ready, release = os.path.join(c.tmp, "ready"), os.path.join(c.tmp, "release")
    data = os.path.join(c.tmp, "term.data")
    argv = [c.stint, "record", "-o", data, "--", c.prog("e2e_group_signal"), "ignore", str(int(signal.SIGTERM)),
            ready, release]
    c.log.append(" ".join(argv))
    rec = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        wait_for_file(ready, rec, "e2e_group_signal ignoring SIGTERM")
        # again and again until stint ends: two sent at once may reach it as one
        deadline = time.time() + RECORD_TIMEOUT
        while rec.poll() is None and time.time() < deadline:
            os.kill(rec.pid, signal.SIGTERM)
            time.sleep(0.3)
        check(rec.poll() is not None, "record still runs after %d s of SIGTERMs" % RECORD_TIMEOUT)
        open(release, "w").close()  # the program left running holds the pipes
        out, err = rec.communicate(timeout=RECORD_TIMEOUT)
    finally:
        open(release, "w").close()
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    check(rec.returncode == 128 + signal.SIGTERM, "record exited %d, expected %d; stderr: %s" % (
        rec.returncode, 128 + signal.SIGTERM, err.strip()))
    check("stopped waiting at SIGTERM" in err and "Ctrl-C" not in err, "record said: %s" % err.strip())
    rep = c.report_json(data)
    check(calls(rep, "tick") > 0, "not recorded: %s" % function_list(rep))
    # the program's exit status is not known: 143 is stint's own (the report said "exit status 143")
    check(rep.get("left_running") is True, "the data file does not say the program ran on: %s" % {
        k: rep.get(k) for k in ("exit_status", "left_running")})
    text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
    check("no exit status" in text and "exit status 143" not in text, "the report's header: %s" % text[:600])


@test
def test_sigpipe_closed_output(c):
    """stint record writing its summary to a closed pipe (`stint record ... 2>&1 | head -c0`) gets
    EPIPE, not SIGPIPE: it finishes the data file and leaves no spool.  The program still dies
    of SIGPIPE writing to that pipe, as without stint (or gets EPIPE where it was started with
    SIGPIPE ignored)."""
    def closed_pipe():
        r, w = os.pipe()
        os.close(r)
        return w

    def run(argv, out, err, preexec=None):
        c.log.append(" ".join(argv) + "  (output to a closed pipe)")
        p = subprocess.Popen(argv, stdout=out, stderr=err, preexec_fn=preexec)
        try:
            return p.wait(timeout=RECORD_TIMEOUT)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()

    def ignore():
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)

    prog = c.prog("e2e_group_signal")
    data = os.path.join(c.tmp, "pipe.data")
    # the summary alone goes to the closed pipe
    w = closed_pipe()
    code = run([c.stint, "record", "-f", "-o", data, "--", prog, "dispositions"], subprocess.DEVNULL, w)
    os.close(w)
    check(code == 0, "record with its stderr a closed pipe exited %d, expected 0" % code)
    check(os.path.isfile(data) and not spools_left(c.tmp), "data file %s, spools %s" % (
        os.path.isfile(data), spools_left(c.tmp)))
    c.report_json(data)
    # the program's output too: it dies of SIGPIPE, as alone
    w = closed_pipe()
    alone = run([prog, "write"], w, w)
    check(alone == -signal.SIGPIPE, "the program alone exited %d, expected SIGPIPE" % alone)
    code = run([c.stint, "record", "-f", "-o", data, "--", prog, "write"], w, w)
    check(code == 128 + signal.SIGPIPE, "record exited %d, expected %d (the program dies of SIGPIPE)" % (
        code, 128 + signal.SIGPIPE))
    check(not spools_left(c.tmp), "a spool was left: %s" % spools_left(c.tmp))
    rep = c.report_json(data)
    check(calls(rep, "tick") > 0, "the program's recording was not kept: %s" % function_list(rep))
    # started with SIGPIPE ignored, the program gets EPIPE and exits 4, as alone
    code = run([c.stint, "record", "-f", "-o", data, "--", prog, "write"], w, w, preexec=ignore)
    os.close(w)
    check(code == 4, "record with SIGPIPE ignored exited %d, expected the program's 4" % code)


def deep_exit_common(c, mode, status):
    _, rep = c.record_and_report([c.prog("e2e_deep_exit"), mode], expect_status=status)
    expect_calls(rep, {"main": 1, "descend": 8, "bottom_work": 1,
                       "at_exit_handler": 1 if mode == "exit" else 0})
    d, b, m = func(rep, "descend"), func(rep, "bottom_work"), func(rep, "main")
    check(b["elapsed_inclusive"] >= 4e6, "bottom_work EI %s, expected >= 4 ms" % ms(b["elapsed_inclusive"]))
    check(d["elapsed_inclusive"] >= b["elapsed_inclusive"],
          "descend EI %s < bottom_work EI %s: the open descend frames were not closed at the end" % (
              ms(d["elapsed_inclusive"]), ms(b["elapsed_inclusive"])))
    check(m["elapsed_inclusive"] >= d["elapsed_inclusive"], "main EI < descend EI")
    return rep


@test
def test_exit_from_deep(c):
    """exit(3) 8 frames deep: status 3, atexit handler counted, open frames closed at the end."""
    rep = deep_exit_common(c, "exit", 3)
    d, h, b = func(rep, "descend"), func(rep, "at_exit_handler"), func(rep, "bottom_work")
    check(h["elapsed_inclusive"] >= 1.5e6, "at_exit_handler EI %s, expected >= 2 ms" % ms(h["elapsed_inclusive"]))
    check(d["elapsed_inclusive"] >= b["elapsed_inclusive"] + h["elapsed_inclusive"] * 0.99,
          "descend EI %s does not include the atexit handler's %s (frames still open during exit)" % (
              ms(d["elapsed_inclusive"]), ms(h["elapsed_inclusive"])))


@test
def test_underscore_exit_from_deep(c):
    """_exit(4) 8 frames deep: status 4, no atexit handler, open frames closed."""
    deep_exit_common(c, "_exit", 4)


@test
def test_pthread_exit_from_deep(c):
    """pthread_exit 3 frames deep in a named thread: exact calls, its frames closed when it ended."""
    _, rep = c.record_and_report([c.prog("e2e_thread_exit")])
    expect_calls(rep, {"quitter_main": 1, "quit_level": 3, "after_join": 1, "main": 1})
    names = sorted(t["name"] for t in rep["threads"])
    check(names == ["e2e_thread_exit", "quitter"], "thread names %s, expected e2e_thread_exit and quitter" % names)
    q, after = func(rep, "quit_level"), func(rep, "after_join")
    check(after["elapsed_inclusive"] >= 15e6, "after_join EI %s, expected >= 20 ms" % ms(after["elapsed_inclusive"]))
    check(q["elapsed_inclusive"] > 0, "quit_level has no time")
    check(q["elapsed_inclusive"] < 0.5 * after["elapsed_inclusive"],
          "quit_level EI %s is stretched over main's later after_join (%s): the quitter's open frames "
          "were not closed when the thread ended" % (ms(q["elapsed_inclusive"]), ms(after["elapsed_inclusive"])))
    quitter = [t for t in rep["threads"] if t["name"] == "quitter"][0]
    check(q["elapsed_inclusive"] <= quitter["elapsed_inclusive"] + 100,
          "quit_level EI %s > its thread's EI %s" % (ms(q["elapsed_inclusive"]), ms(quitter["elapsed_inclusive"])))


@test
def test_dlopen_plugin(c):
    """An instrumented library loaded with dlopen: its functions under its own module, its libc calls probed."""
    plugin = os.path.join(c.progs, "libe2e_plugin.so")
    check(os.path.exists(plugin), "%s is missing (build the tests first)" % plugin)
    _, rep = c.record_and_report([c.prog("e2e_dlopen_host"), plugin])
    expect_calls(rep, {"host_step": 2, "main": 1}, module="e2e_dlopen_host")
    expect_calls(rep, {"plugin_entry": 1, "plugin_step": 12}, module="libe2e_plugin.so")
    mods = {m["name"]: m for m in rep["modules"]}
    check("libe2e_plugin.so" in mods, "no module row for libe2e_plugin.so: %s" % sorted(mods))
    pm, entry = mods["libe2e_plugin.so"], func(rep, "plugin_entry")
    check(pm["calls"] == 13, "module libe2e_plugin.so has %d calls, expected 13" % pm["calls"])
    check(abs(pm["elapsed_inclusive"] - entry["elapsed_inclusive"]) <= 0.001 * entry["elapsed_inclusive"] + 100,
          "module libe2e_plugin.so EI %d != EI of plugin_entry %d, the outermost of its functions" % (
              pm["elapsed_inclusive"], entry["elapsed_inclusive"]))
    # the plugin's own call into libc (probing set up after dlopen)
    check(calls(rep, "usleep", "libc.so") == 1,
          "usleep called from the dlopen'ed plugin: %d calls in libc, expected 1; functions: %s" % (
              calls(rep, "usleep", "libc.so"), function_list(rep)))


def landed_callers(c, prog):
    """landed, called where the longjmp lands, has jump_driver as its only caller."""
    _, data = c.record([c.prog(prog)])
    p = c.run([c.stint, "callers", "-i", data, "--format", "json", "landed"], expect=0)
    got = {r["name"]: r["calls"] for r in json.loads(p.stdout)["callers"]}
    check(got == {"jump_driver": 10}, "%s: callers of landed %s, expected jump_driver 10 times" % (prog, got))


@test
def test_longjmp_skipping_frames(c):
    """longjmp skipping 3 instrumented frames 10 times: exact calls, skipped frames closed at the
    jump (the call made where it lands is its landing function's, not the left frames')."""
    _, rep = c.record_and_report([c.prog("e2e_longjmp_skip")])
    expect_calls(rep, {"jump_driver": 1, "outer": 10, "middle": 10, "inner": 10, "after_jump": 3, "main": 1,
                       "landed": 10})
    landed_callers(c, "e2e_longjmp_skip")
    after, inner, drv = func(rep, "after_jump"), func(rep, "inner"), func(rep, "jump_driver")
    check(after["elapsed_inclusive"] >= 45e6, "after_jump EI %s, expected >= 60 ms" % ms(after["elapsed_inclusive"]))
    check(inner["elapsed_inclusive"] <= drv["elapsed_inclusive"] + 100,
          "inner EI %s > jump_driver EI %s: the frames skipped by longjmp outlived jump_driver" % (
              ms(inner["elapsed_inclusive"]), ms(drv["elapsed_inclusive"])))
    check(inner["elapsed_inclusive"] < 0.5 * after["elapsed_inclusive"],
          "inner EI %s includes after_jump's time (%s): frames skipped by longjmp not closed" % (
              ms(inner["elapsed_inclusive"]), ms(after["elapsed_inclusive"])))
    check(func(rep, "main")["elapsed_inclusive"] >= after["elapsed_inclusive"], "main EI < after_jump EI")


@test
def test_exit_status_passthrough(c):
    """record exits with the program's own status."""
    prog = c.prog("e2e_exit_code")
    for status in (0, 42):
        _, rep = c.record_and_report([prog, str(status)], expect_status=status)
        expect_calls(rep, {"tiny": 1, "main": 1})


@test
def test_cxx_demangled_names(c):
    """C++: class method, constructor, templates and namespaces under their demangled names."""
    _, rep = c.record_and_report([c.prog("e2e_cxx_names"), "names"])
    expect_calls(rep, {"Foo::bar(int)": 10, "Foo::Foo(int)": 1, "int twice<int>(int)": 4,
                       "double twice<double>(double)": 2, "geometry::area(double, double)": 3, "main": 1})
    mangled = [r["name"] for r in rep["functions"] if r["name"].startswith("_Z")]
    check(not mangled, "mangled names in the report: %s" % mangled)


@test
def test_cxx_exception_through_frames(c):
    """C++ exception thrown through 3 instrumented frames 5 times: calls exact, frames closed."""
    _, rep = c.record_and_report([c.prog("e2e_cxx_names"), "exceptions"])
    expect_calls(rep, {"level_a(int)": 5, "level_b(int)": 5, "level_c(int)": 5, "after_catch()": 2, "main": 1})
    after, lc = func(rep, "after_catch()"), func(rep, "level_c(int)")
    check(after["elapsed_inclusive"] >= 30e6, "after_catch EI %s, expected >= 40 ms" % ms(after["elapsed_inclusive"]))
    check(lc["elapsed_inclusive"] < 0.5 * after["elapsed_inclusive"],
          "level_c EI %s includes after_catch's time %s: frames unwound by the exception not closed" % (
              ms(lc["elapsed_inclusive"]), ms(after["elapsed_inclusive"])))


@test
def test_cxx_exception_from_library(c):
    """std::bad_alloc thrown inside libstdc++ (operator new, a probed library call) 5 times:
    the program still works, calls exact, the unwound library frames closed."""
    _, rep = c.record_and_report([c.prog("e2e_cxx_names"), "libthrow"])
    expect_calls(rep, {"alloc_huge(int)": 5, "after_catch()": 2, "main": 1})
    check(calls(rep, "operator new(unsigned long)", "libstdc++.so") == 5,
          "operator new(unsigned long) in libstdc++: %d calls, expected 5; functions: %s" % (
              calls(rep, "operator new(unsigned long)", "libstdc++.so"), function_list(rep)))
    after, alloc = func(rep, "after_catch()"), func(rep, "alloc_huge(int)")
    check(after["elapsed_inclusive"] >= 30e6, "after_catch EI %s, expected >= 40 ms" % ms(after["elapsed_inclusive"]))
    check(alloc["elapsed_inclusive"] < 0.5 * after["elapsed_inclusive"],
          "alloc_huge EI %s includes after_catch's %s: frames unwound from the library not closed" % (
              ms(alloc["elapsed_inclusive"]), ms(after["elapsed_inclusive"])))
    new = func(rep, "operator new(unsigned long)", "libstdc++.so")
    check(new["elapsed_inclusive"] <= alloc["elapsed_inclusive"] + 100,
          "operator new EI %s > EI of its caller alloc_huge %s" % (ms(new["elapsed_inclusive"]), ms(alloc["elapsed_inclusive"])))


# --- programs not built for instrumentation: their patch sites ---------------
# Each program also built as NAME_fentry (-pg -mfentry) and NAME_patch
# (-fpatchable-function-entry=5), at -O2 (tests/CMakeLists.txt).

PATCH_VARIANTS = ("fentry", "patch")


def program_counts(rep, module):
    """{function: calls} of the functions of one module."""
    return {r["name"]: r["calls"] for r in rep["functions"] if r["module"] == module}


@test
def test_patched_same_output_and_counts(c):
    """patch_mix (register classes, tail calls, recursion, longjmp, a signal handler, threads,
    fork) built with -pg -mfentry (also with -fcf-protection, and -mnop-mcount) and with
    -fpatchable-function-entry=5 (and =8 with -fcf-protection): under stint it prints
    what it prints alone, and every function has the calls of the -finstrument-functions build."""
    ref = c.prog("e2e_patch_mix")
    alone = c.run([ref], expect=0).stdout
    check("child status 0" in alone, "e2e_patch_mix printed %r" % alone)
    rec, data = c.record([ref])
    want = program_counts(c.report_json(data), "e2e_patch_mix")
    check(want.get("fib", 0) > 1000 and want.get("on_signal") == 3, "reference counts %s" % want)
    # also: endbr64 before the sites, NOP sites of -mnop-mcount, 8 NOPs
    for v in c.load_variants() + ("fentry_cet", "nop", "patch8"):
        name = "e2e_patch_mix_" + v
        prog = c.prog(name)
        out = c.run([prog], expect=0).stdout
        check(out == alone, "%s alone printed\n%s\nnot what the -finstrument-functions build printed:\n%s" % (
            name, out, alone))
        rec, data = c.record([prog], data=os.path.join(c.tmp, v + ".data"))
        check(rec.stdout == alone, "%s under stint printed\n%s\ninstead of\n%s" % (name, rec.stdout, alone))
        got = program_counts(c.report_json(data), name)
        check(got == want, "%s: calls %s\n  the -finstrument-functions build's: %s" % (
            name, sorted(got.items()), sorted(want.items())))
        text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
        if v == "plain":
            # every function of the program is patched at load
            m = re.search(r"# instrumented: (\d+) of (\d+) functions of %s, patched at load" % name, text)
            check(m and m.group(1) == m.group(2) and int(m.group(1)) == len(want),
                  "%s: the header should say %d of %d functions patched at load:\n%s" % (
                      name, len(want), len(want), text[:1500]))
            continue
        m = re.search(r"# instrumented: (\d+) of (\d+) functions", text)
        check(m, "%s: the report header does not say how many functions are instrumented:\n%s" % (
            name, text[:1500]))
        check(int(m.group(1)) == len(want) and int(m.group(2)) > int(m.group(1)),
              "%s: header says %s of %s functions, expected %d of more" % (name, m.group(1), m.group(2), len(want)))
        check("# not instrumented (no patch site): " in text and "_start" in text,
              "%s: the header does not name the functions left out (_start):\n%s" % (name, text[:1500]))


@test
def test_patched_threads_and_signals(c):
    """Threads, 40 short-lived threads and a signal handler, through patch sites: exact calls."""
    for v in c.load_variants():
        _, rep = c.record_and_report([c.prog("e2e_threads_" + v)])
        expect_calls(rep, {"alpha_step": 100, "beta_step": 200, "gamma_step": 300, "main_step": 7,
                           "alpha_main": 1, "beta_main": 1, "gamma_main": 1, "main": 1})
        check(len(rep["threads"]) == 4, "%s: expected 4 thread rows, got %d" % (v, len(rep["threads"])))
        _, rep = c.record_and_report([c.prog("e2e_many_threads_" + v)])
        expect_calls(rep, {"worker_body": 40, "worker_step": 1000, "main": 1})
        rec, rep = c.record_and_report([c.prog("e2e_signal_handler_" + v)])
        m = re.search(r"alarms=(\d+) steps=(\d+)", rec.stdout)
        check(m, "the program's output line 'alarms=N steps=M' is missing: %r" % rec.stdout)
        expect_calls(rep, {"on_alarm": int(m.group(1)), "busy_step": int(m.group(2)), "main": 1})


@test
def test_patched_longjmp(c):
    """longjmp skipping 3 patched frames 10 times: exact calls, the skipped frames closed."""
    for v in c.load_variants():
        _, rep = c.record_and_report([c.prog("e2e_longjmp_skip_" + v)])
        expect_calls(rep, {"jump_driver": 1, "outer": 10, "middle": 10, "inner": 10, "after_jump": 3, "main": 1,
                           "landed": 10})
        landed_callers(c, "e2e_longjmp_skip_" + v)
        after, inner = func(rep, "after_jump"), func(rep, "inner")
        check(inner["elapsed_inclusive"] < 0.5 * after["elapsed_inclusive"],
              "%s: inner EI %s includes after_jump's time (%s): frames skipped by longjmp not closed" % (
                  v, ms(inner["elapsed_inclusive"]), ms(after["elapsed_inclusive"])))


@test
def test_patched_cxx_exceptions(c):
    """C++ through patch sites: names; exceptions thrown through 3 patched frames (the unwinder
    meets real return addresses) and from inside libstdc++: calls exact, unwound frames closed."""
    for v in c.load_variants():
        prog = c.prog("e2e_cxx_names_" + v)
        _, rep = c.record_and_report([prog, "names"])
        expect_calls(rep, {"Foo::bar(int)": 10, "Foo::Foo(int)": 1, "int twice<int>(int)": 4,
                           "double twice<double>(double)": 2, "geometry::area(double, double)": 3, "main": 1})
        _, rep = c.record_and_report([prog, "exceptions"])
        expect_calls(rep, {"level_a(int)": 5, "level_b(int)": 5, "level_c(int)": 5, "after_catch()": 2, "main": 1})
        after, lc = func(rep, "after_catch()"), func(rep, "level_c(int)")
        check(lc["elapsed_inclusive"] < 0.5 * after["elapsed_inclusive"],
              "%s: level_c EI %s includes after_catch's time %s: unwound frames not closed" % (
                  v, ms(lc["elapsed_inclusive"]), ms(after["elapsed_inclusive"])))
        _, rep = c.record_and_report([prog, "libthrow"])
        expect_calls(rep, {"alloc_huge(int)": 5, "after_catch()": 2, "main": 1})


def defined_functions(path):
    """The demangled names of the functions defined in an ELF file (nm -C)."""
    out = subprocess.run(["nm", "-C", "--defined-only", path], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return {l.split(" ", 2)[2] for l in out.splitlines() if len(l.split(" ", 2)) == 3 and l.split(" ")[1] in "tTwW"}


@test
def test_patched_cxx_rethrow(c):
    """A rethrow from a catch block, a destructor catching its own exception while another
    unwinds through it, std::rethrow_exception, through patched frames: the same output as
    the -finstrument-functions build, and its calls for every function not inlined."""
    ref = c.prog("e2e_patch_cxx")
    alone = c.run([ref], expect=0).stdout
    check("caught 12" in alone, "e2e_patch_cxx printed %r" % alone)
    _, data = c.record([ref])
    want = program_counts(c.report_json(data), "e2e_patch_cxx")
    for v in c.load_variants():
        name = "e2e_patch_cxx_" + v
        prog = c.prog(name)
        rec, data = c.record([prog], data=os.path.join(c.tmp, v + ".data"))
        check(rec.stdout == alone, "%s under stint printed\n%s\ninstead of\n%s" % (name, rec.stdout, alone))
        got = program_counts(c.report_json(data), name)
        defined = defined_functions(prog)
        expected = {k: n for k, n in want.items() if k in defined}
        check(len(expected) >= 8, "%s: only %s of the reference's functions are defined in it" % (name, sorted(expected)))
        check(got == expected, "%s: calls %s\n  the -finstrument-functions build's (not inlined here): %s" % (
            name, sorted(got.items()), sorted(expected.items())))
        # every catch block's first call, 6 an iteration of outer_loop(4): counted as the library
        # call it is (it was left out, as the runtime interposes it)
        rep = c.report_json(data)
        check(calls(rep, "__cxa_begin_catch", "libstdc++.so") == 24 and
              calls(rep, "__cxa_end_catch", "libstdc++.so") == 24,
              "%s: __cxa_begin_catch %d and __cxa_end_catch %d calls, expected 24 each" % (
                  name, calls(rep, "__cxa_begin_catch", "libstdc++.so"), calls(rep, "__cxa_end_catch", "libstdc++.so")))


@test
def test_patched_unwind_direct(c):
    """An exception raised straight through _Unwind_RaiseException (as Rust's panics are), through
    patched frames and shims that make an indirect call in their first bytes: the program's
    output is unchanged (it aborted: the unwinder met a swapped return address, or a moved
    call's return address in a trampoline), the calls are exact, the shim whose call returns
    inside the first bytes is left unpatched, and the calls of the catch block are the catching
    function's (the thrower's frames close where the unwinder lands)."""
    for v in c.load_variants():
        name = "e2e_unwind_direct_" + v
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        check(alone == "caught 50\n", "%s printed %r" % (name, alone))
        rec, data = c.record([prog], data=os.path.join(c.tmp, v + ".data"))
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        expect_calls(rep, {"catcher": 50, "deeper": 50, "raise_foreign": 50, "in_catch": 50}, module=name)
        check(calls(rep, "shim_past") in (0, 25) and calls(rep, "shim_in") == 0,
              "%s: shim_past %d calls (25, or 0 if not patched), shim_in %d (0: it must be left alone)" % (
                  name, calls(rep, "shim_past"), calls(rep, "shim_in")))
        for callee, caller in (("in_catch", "catcher"), ("getppid", "in_catch")):
            p = c.run([c.stint, "callers", "-i", data, "--format", "json", callee], expect=0)
            got = {r["name"]: r["calls"] for r in json.loads(p.stdout)["callers"]}
            check(got == {caller: 50}, "%s: callers of %s %s, expected %s 50 times" % (name, callee, got, caller))


@test
def test_patched_libstdcxx(c):
    """libstdc++ patched too (STINT_PATCH_LIBS=libstdc++), under a C++ program that throws,
    rethrows and catches: the same output as alone, and libstdc++'s functions counted.  The
    runtime crashed before main (a lookup of libstdc++'s weak _ITM_addUserCommitAction through a
    module handle glibc had not made), and record blamed a build without instrumentation."""
    c.need_capstone()
    prog = c.prog("e2e_patch_cxx_plain")
    alone = c.run([prog], expect=0).stdout
    env = dict(os.environ, STINT_PATCH_LIBS="libstdc++")
    data = os.path.join(c.tmp, "cxxlib.data")
    rec = c.run([c.stint, "record", "-m", "instrument", "-o", data, "--", prog], expect=0, env=env)
    check(rec.stdout == alone, "under stint with libstdc++ patched it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    lib = [m for m in rep.get("patched_modules", []) if m["module"].startswith("libstdc++")]
    check(lib and lib[0]["instrumented"] > 1000, "libstdc++ was not patched: %s" % rep.get("patched_modules"))
    check(any(r["module"].startswith("libstdc++") and r["calls"] > 0 for r in rep["functions"]),
          "none of libstdc++'s functions has calls")


@test
def test_patched_fork_exec(c):
    """fork + exec, both programs instrumented through patch sites: each process its calls."""
    for v in c.load_variants():
        target = c.prog("e2e_exec_target_" + v)
        _, rep = c.record_and_report([c.prog("e2e_fork_exec_" + v), target])
        expect_calls(rep, {"launcher_step": 3, "child_before_exec": 1, "main": 1}, module="e2e_fork_exec_" + v)
        expect_calls(rep, {"exec_target_work": 40, "main": 1}, module="e2e_exec_target_" + v)
        check(len(rep["processes"]) == 3, "%s: expected 3 process rows, got %d" % (v, len(rep["processes"])))


@test
def test_patched_dlopen(c):
    """A library with patch sites loaded with dlopen: its functions patched before they run.
    Closed and loaded again (at the same address, as a rule), it is patched again: before,
    the second load was taken for the first, already patched, and its calls went unrecorded
    (a plugin loaded 1000 times counted the calls of its first load only)."""
    for v in c.load_variants():
        plugin = os.path.join(c.progs, "libe2e_plugin_%s.so" % v)
        check(os.path.exists(plugin), "%s is missing (build the tests first)" % plugin)
        for times in (1, 2):
            extra = ["twice"] if times == 2 else []
            _, rep = c.record_and_report([c.prog("e2e_dlopen_host_" + v), plugin] + extra)
            expect_calls(rep, {"host_step": 2, "main": 1}, module="e2e_dlopen_host_" + v)
            expect_calls(rep, {"plugin_entry": times, "plugin_step": 12 * times}, module="libe2e_plugin_%s.so" % v)


@test
def test_patched_dlopen_constructor(c):
    """A library loaded with dlopen, plain (patched with Capstone) or with NOP patch sites, is
    patched before its constructors run: the constructor's 3 calls of the library's own
    lib_helper are counted with the 2 made later."""
    for v in ["patch"] + (["plain"] if c.capstone() else []):
        lib = os.path.join(c.progs, "libe2e_ctor_lib_%s.so" % v)
        check(os.path.exists(lib), "%s is missing (build the tests first)" % lib)
        prog = c.prog("e2e_ctor_host_" + v)
        alone = c.run([prog, lib], expect=0).stdout
        rec, data = c.record([prog, lib], data=os.path.join(c.tmp, v + ".data"))
        check(rec.stdout == alone, "%s: under stint it printed %r instead of %r" % (v, rec.stdout, alone))
        rep = c.report_json(data)
        expect_calls(rep, {"lib_helper": 5, "lib_work": 1}, module="libe2e_ctor_lib_%s.so" % v)


@test
def test_patched_coroutines(c):
    """Generators on makecontext stacks side by side, switched with swapcontext inside patched
    frames (one left unfinished): same output as alone (no 'lost track' abort), exact calls."""
    c.need_capstone()
    prog = c.prog("e2e_coroutines_plain")
    alone = c.run([prog], expect=0).stdout
    check("finished=110" in alone, "e2e_coroutines_plain printed %r" % alone)
    rec, data = c.record([prog])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    expect_calls(rep, {"gen_yield": 32, "gen_step": 32, "gen_inner": 3, "gen_body": 3, "resume": 34, "main": 1})


@test
def test_patched_go_left_alone(c):
    """A module of Go code (its .go.buildinfo section) is not patched at all: Go's runtime
    stops the program at a return address it does not know ("unknown pc", seen on a cgo
    program); its functions are listed with reason go, and the program runs as alone."""
    c.need_capstone()
    prog = c.prog("e2e_go_marker_plain")
    alone = c.run([prog], expect=0).stdout
    rec, data = c.record([prog])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    check(calls(rep, "go_work") == 0, "go_work of a Go module was patched: %d calls" % calls(rep, "go_work"))
    mods = {m["module"]: m for m in rep.get("patched_modules", [])}
    m = mods.get("e2e_go_marker_plain")
    check(m and m["instrumented"] == 0 and m["not_instrumented"] and
          all(f["reason"] == "go" for f in m["not_instrumented"]),
          "the Go module's functions are not all refused as go: %s" % m)
    text = c.run([c.stint, "report", "-i", data, "--no-pager", "--why"], expect=0).stdout
    check("Go code" in text, "--why does not say Go code:\n%s" % text[:1500])


@test
def test_patched_v8_left_alone(c):
    """A module holding V8 (node's JavaScript engine: its symbols name the embedded builtins) is not
    patched: V8's code calls the module's C++ functions and its garbage collector looks their
    return addresses up in its own tables.  node (NodeSource's build, V8 inside the program)
    aborted at once ("lost track of a patched function's return address"), and with its builtins
    left out at its first garbage collection.  A marked C module here, and node itself where it is
    installed: the same output as alone, its calls into libraries still recorded."""
    c.need_capstone()
    prog = c.prog("e2e_v8_marker_plain")
    alone = c.run([prog], expect=0).stdout
    rec, data = c.record([prog])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    check(calls(rep, "v8_work") == 0, "v8_work of a V8 module was patched: %d calls" % calls(rep, "v8_work"))
    m = {m["module"]: m for m in rep.get("patched_modules", [])}.get("e2e_v8_marker_plain")
    check(m and m["instrumented"] == 0 and m["not_instrumented"] and
          all(f["reason"] == "v8" for f in m["not_instrumented"]),
          "the V8 module's functions are not all refused as v8: %s" % m)
    text = c.run([c.stint, "report", "-i", data, "--no-pager", "--why"], expect=0).stdout
    check("V8" in text, "--why does not say V8:\n%s" % text[:1500])
    node = shutil.which("node")
    if not node:
        return
    script = os.path.join(c.tmp, "gc.js")
    with open(script, "w") as f:  # enough allocation for several garbage collections
        f.write("const m = new Map(); for (let i = 0; i < 200000; i++) m.set('k' + i, {i});\n"
                "const a = [...m.keys()].sort(); console.log(a.length, a[0], a[a.length - 1]);\n")
    alone = c.run([node, script], expect=0).stdout
    rec, data = c.record([node, script], data=os.path.join(c.tmp, "node.data"), timeout=120)
    check(rec.stdout == alone, "node under stint printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data, timeout=120)
    check(any(".so" in r["module"] and r["calls"] > 0 for r in rep["functions"]),
          "node's library calls were not recorded")


@test
def test_patched_jvm_left_alone(c):
    """A module holding HotSpot, the Java virtual machine (its symbols name JVM_handle_linux_signal)
    is not patched: the VM walks its own native frames by their return addresses, and java with
    STINT_PATCH_LIBS=libjvm died of SIGSEGV in frame::sender, then abort.  A marked C program here,
    and java itself where it is installed, with every library named: the same output and status
    as alone, its libjvm.so left alone as "jvm"."""
    c.need_capstone()
    prog = c.prog("e2e_jvm_marker_plain")
    alone = c.run([prog], expect=0).stdout
    rec, data = c.record([prog])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    check(calls(rep, "jvm_work") == 0, "jvm_work of a JVM module was patched: %d calls" % calls(rep, "jvm_work"))
    m = {m["module"]: m for m in rep.get("patched_modules", [])}.get("e2e_jvm_marker_plain")
    check(m and m["instrumented"] == 0 and m["not_instrumented"] and
          all(f["reason"] == "jvm" for f in m["not_instrumented"]),
          "the JVM module's functions are not all refused as jvm: %s" % m)
    text = c.run([c.stint, "report", "-i", data, "--no-pager", "--why"], expect=0).stdout
    check("Java virtual machine" in text, "--why does not say Java virtual machine:\n%s" % text[:1500])
    java = shutil.which("java")
    if not java:
        return
    src = os.path.join(c.tmp, "Work.java")
    with open(src, "w") as f:  # threads, allocation for a few collections, an exception, a status
        f.write("public class Work { public static void main(String[] a) throws Exception {\n"
                "  Thread[] t = new Thread[3]; long[] r = new long[3];\n"
                "  for (int i = 0; i < 3; i++) { final int k = i; t[i] = new Thread(() -> {\n"
                "    java.util.List<String> l = new java.util.ArrayList<>();\n"
                "    for (int j = 0; j < 200000; j++) { l.add(\"s\" + j); if (l.size() > 1000) l.clear(); }\n"
                "    r[k] = l.size(); }); t[i].start(); }\n"
                "  for (Thread x : t) x.join();\n"
                "  try { Object o = null; o.hashCode(); } catch (NullPointerException e) { System.out.println(\"npe\"); }\n"
                "  System.out.println(r[0] + r[1] + r[2]); System.exit(3); } }\n")
    alone = subprocess.run([java, src], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=RECORD_TIMEOUT)
    env = dict(os.environ, STINT_PATCH_LIBS="all")
    data = os.path.join(c.tmp, "java.data")
    c.log.append("STINT_PATCH_LIBS=all stint record -o %s -- java %s" % (data, src))
    p = subprocess.run([c.stint, "record", "-m", "instrument", "-o", data, "--", java, src], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=300)
    check(p.returncode == alone.returncode == 3 and p.stdout == alone.stdout,
          "java under stint: exit %d, printed %r; alone: exit %d, %r\n%s" % (
              p.returncode, p.stdout, alone.returncode, alone.stdout, p.stderr[-1500:]))
    rep = c.report_json(data, timeout=120)
    jvm = [m for m in rep.get("patched_modules", []) if m["module"] == "libjvm.so"]
    check(jvm and jvm[0]["instrumented"] == 0, "libjvm.so was patched: %s" % jvm)


@test
def test_patched_go_program(c):
    """A real Go program calling C (cgo) from goroutines whose stacks grow, built with the go tool
    where it is installed: under stint it prints the same and exits 0 (it stopped with Go's
    "unknown pc" while moving a stack: its patched functions' return addresses), and its Go
    module is listed as left alone."""
    c.need_capstone()
    go = shutil.which("go")
    if not go:
        raise TestSkip("the go tool is not installed (Debian golang-go)")
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "progs", "go_cgo.go")
    prog = os.path.join(c.tmp, "go_cgo")
    env = dict(os.environ, GOCACHE=os.path.join(c.tmp, "gocache"), GOPATH=os.path.join(c.tmp, "gopath"),
               GO111MODULE="off", CGO_ENABLED="1", GOFLAGS="")
    b = subprocess.run([go, "build", "-o", prog, src], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env, cwd=c.tmp, timeout=600)
    if b.returncode != 0:
        raise TestSkip("go build failed here: %s" % b.stderr.strip()[-300:])
    alone = c.run([prog], expect=0).stdout
    check(alone.startswith("go cgo "), "go_cgo printed %r" % alone)
    rec, data = c.record([prog])
    check(rec.stdout == alone, "under stint it printed %r instead of %r (stderr %s)" % (
        rec.stdout, alone, rec.stderr[-400:]))
    rep = c.report_json(data)
    m = [m for m in rep.get("patched_modules", []) if m["module"] == "go_cgo"]
    check(m and m[0]["instrumented"] == 0 and all(f["reason"] == "go" for f in m[0]["not_instrumented"]),
          "the Go program's functions are not all left alone as Go code: %s" % m)


@test
def test_patched_refusals(c):
    """Functions that cannot be patched safely (2 bytes with no padding after, a loop into its
    first bytes, from the function or from the part split off it, no symbol size) are left alone
    and listed with the reason; the program's output is unchanged and the others are counted."""
    c.need_capstone()
    prog = c.prog("e2e_patch_refuse_plain")
    alone = c.run([prog], expect=0).stdout
    rec, data = c.record([prog])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    expect_calls(rep, {"counted_fn": 5, "main": 1, "tiny_b": 5})
    for n in ("tiny_a", "jump_in", "no_size", "cold_back"):
        check(calls(rep, n) == 0, "%s was refused but has calls" % n)
    mods = {m["module"]: m for m in rep.get("patched_modules", [])}
    m = mods.get("e2e_patch_refuse_plain")
    check(m, "no patched_modules entry for the program: %s" % rep.get("patched_modules"))
    why = {f["name"]: f["reason"] for f in m["not_instrumented"]}
    check(why == {"tiny_a": "short", "jump_in": "jump", "no_size": "nosize", "cold_back": "jump"},
          "refused functions and reasons: %s" % why)
    check(m["instrumented"] == 3 and m["functions"] == 7, "N of M: %s" % m)
    text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
    check(re.search(r"# instrumented: 3 of 7 functions of e2e_patch_refuse_plain, patched at load "
                    r"\(stint report --why lists the other 4\)", text), "header:\n%s" % text[:1200])
    text = c.run([c.stint, "report", "-i", data, "--no-pager", "--why"], expect=0).stdout
    for n, words in (("tiny_a", "ends before 5 bytes"), ("jump_in", "a jump lands inside"),
                     ("no_size", "no size")):
        check(re.search(r"#\s+%s\s+.*%s" % (n, words), text), "--why does not say %s: %s:\n%s" % (
            n, words, text[:1500]))


@test
def test_patched_odd_starts(c):
    """First instructions real -O2 code begins functions with are moved, not refused: an SSE
    load or compare from a RIP-relative constant after a 0x66 prefix (Capstone 4 reports its
    displacement as 16 bits); the output is unchanged and every call is counted."""
    c.need_capstone()
    prog = c.prog("e2e_patch_starts_plain")
    alone = c.run([prog], expect=0).stdout
    rec, data = c.record([prog])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    mods = {m["module"]: m for m in rep.get("patched_modules", [])}
    m = mods.get("e2e_patch_starts_plain")
    check(m, "no patched_modules entry for the program: %s" % rep.get("patched_modules"))
    why = {f["name"]: f["reason"] for f in m["not_instrumented"]}
    check(not why, "functions refused: %s" % why)
    expect_calls(rep, {"sse_first": 5, "cmp_first": 5, "main": 1})


@test
def test_patched_libc_run_as_program(c):
    """The C library run as a program (it prints its version) is not patched: the runtime
    runs on it, and patching it while the runtime called into it crashed the program."""
    c.need_capstone()
    libc = subprocess.run(["gcc", "-print-file-name=libc.so.6"], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout.strip()
    libc = os.path.realpath(libc) if libc.startswith("/") else ""
    if not os.access(libc, os.X_OK):
        raise TestSkip("no executable libc.so.6 found (gcc -print-file-name)")
    alone = c.run([libc], expect=0).stdout
    check("GNU C Library" in alone, "libc.so.6 printed %r" % alone[:200])
    rec, _ = c.record([libc], expect_status=0)
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout[:300], alone[:300]))


@test
def test_patched_avx_registers(c):
    """A program built with AVX2 (-O3 -ffast-math -mavx2), patched at load and with
    -pg -mfentry, prints the same under stint: __m256d arguments and results survive the
    probes' slow paths (thread start, chunk switches, whose C library calls end with
    vzeroupper), and so do the ymm arguments of libmvec's vector sin (a probed library call)."""
    for name in ("e2e_patch_avx_plain", "e2e_patch_avx_fentry"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        if "no avx2" in alone:
            raise TestSkip("the CPU has no AVX2")
        check(alone.startswith("wrong sums 0,"), "%s alone printed %r" % (name, alone))
        rec, data = c.record([prog])
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        check(calls(rep, "addv") == 400000, "addv: %d calls" % calls(rep, "addv"))


@test
def test_patched_xmm_registers(c):
    """tests/progs/patch_xmm.c, patched at load and built with -pg -mfentry: a caller keeps
    xmm0-15 across 400000 calls of a patched function (as GCC's -fipa-ra lets a caller do),
    on two threads, across chunk switches, and with --function (the selection's slow path):
    no register half changes under stint. The trampolines save the general registers only;
    before, the return trampoline also put the return address into xmm15's upper half."""
    for name in ("e2e_patch_xmm_fentry", "e2e_patch_xmm_plain"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        check(alone.startswith("changed xmm halves 0,"), "%s alone printed %r" % (name, alone))
        for opts in ([], ["--function", "leaf"]):
            rec, data = c.record([prog], options=opts)
            check(rec.stdout == alone, "%s %s under stint printed %r instead of %r" % (name, opts, rec.stdout, alone))
            rep = c.report_json(data)
            check(calls(rep, "leaf") == 400000, "%s %s: leaf %d calls" % (name, opts, calls(rep, "leaf")))


@test
def test_libcall_vector_registers(c):
    """tests/progs/libcall_vec.c: 200000 rounds of calls into a library that is not
    instrumented, with arguments and results in xmm, ymm and x87 registers and a varargs
    call, built with -finstrument-functions and patched at load: the same results under
    stint (the library-call trampolines save the general registers only), every call
    counted."""
    for name in ("e2e_libcall_vec", "e2e_libcall_vec_plain"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        check(alone.startswith("wrong 0 of "), "%s alone printed %r" % (name, alone))
        rec, data = c.record([prog])
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        for fn in ("vl_sum8", "vl_pair", "vl_long", "vl_varargs"):
            check(calls(rep, fn) == 200000, "%s: %s %d calls" % (name, fn, calls(rep, fn)))


@test
def test_clone_child(c):
    """A child made with clone() without CLONE_VM on a two-page stack (no pthread_atfork
    handler runs in it; googletest's threadsafe death tests): it runs and exits as without
    stint (its first probe faulted on the parent's perf page, which the kernel does not
    copy) and is recorded as a process of its own, built with -finstrument-functions and
    patched at load. A second such child execs "true" through execvp, as googletest's
    do: the runtime's exec wrapper kept 4 KiB of buffers on that stack and the child died
    of SIGSEGV (5 of googletest's 75 death tests failed under stint)."""
    for name in ("e2e_clone_child", "e2e_clone_child_plain"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        check("child exited 7" in alone and "exec child exited 0" in alone, "%s alone printed %r" % (name, alone))
        rec, data = c.record([prog])
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        # the parent, the first child, the second before its exec, and true
        check(len(rep["processes"]) >= 3, "%s: processes %s" % (name, rep["processes"]))
        expect_calls(rep, {"child_work": 3, "child_main": 1, "main": 1})


@test
def test_raw_fork_child(c):
    """Processes made through syscall(): SYS_fork, SYS_clone with SIGCHLD and SYS_clone3
    without CLONE_VM (no pthread_atfork handler runs in them). Each child's first probe
    faulted on the parent's perf page, which the kernel does not copy: killed by SIGSEGV
    under stint, exit 7 without. Now each runs as without stint and is recorded as a
    process of its own, built with -finstrument-functions and patched at load."""
    for name in ("e2e_raw_fork", "e2e_raw_fork_plain"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        children = alone.count("exited 7")
        check(children >= 2 and "killed" not in alone, "%s alone printed %r" % (name, alone))
        rec, data = c.record([prog])
        check(sorted(rec.stdout.splitlines()) == sorted(alone.splitlines()),
              "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        check(len(rep["processes"]) == 1 + children, "%s: processes %s" % (name, rep["processes"]))
        expect_calls(rep, {"child_work": 3 * children, "child_main": children, "make_child": 3, "main": 1})


@test
def test_clone_shared_tls(c):
    """A child made with clone(CLONE_VM) without CLONE_SETTLS runs on the parent's memory
    with the parent's thread pointer, so its probes found the parent's recording state and
    wrote into the parent's buffer at the same time as the parent: the program crashed
    (SIGSEGV, or "lost track of a patched function's return address" when patched at load)
    or the data file was damaged. Now neither records while such a child may run: with
    CLONE_VFORK the parent resumes once the child is gone; otherwise the parent's recording
    ends at the clone, and the report says so. The child is counted as not recorded."""
    for name in ("e2e_clone_vm", "e2e_clone_vm_plain"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        for mode in ("concurrent", "vfork"):
            alone = c.run([prog, mode], expect=0).stdout
            check(alone.startswith("before "), "%s %s alone printed %r" % (name, mode, alone))
            rec, data = c.record([prog, mode])
            check(rec.stdout == alone, "%s %s under stint printed %r instead of %r"
                  % (name, mode, rec.stdout, alone))
            rep = c.report_json(data)
            text = c.run([c.stint, "report", "-i", data], expect=0).stdout
            check("DAMAGED" not in text, "%s %s: the report said:\n%s" % (name, mode, text))
            check(rep["unrecorded_threads"] == 1, "%s %s: unrecorded_threads %s"
                  % (name, mode, rep["unrecorded_threads"]))
            check("thread-local storage (clone with CLONE_VM)" in text, "%s %s: the report said:\n%s"
                  % (name, mode, text))
            if mode == "vfork":
                # recorded on both sides of the clone; none of the child's calls
                expect_calls(rep, {"before": 1, "after": 1, "run_leaves": 2, "leaf": 300000,
                                   "main": 1})
                check("shares its thread-local storage" not in text, "%s: the report said:\n%s"
                      % (name, text))
            else:
                expect_calls(rep, {"before": 1, "run_leaves": 1, "leaf": 100000, "main": 1})
                check(calls(rep, "after") == 0 and calls(rep, "child_main") == 0,
                      "%s: %s" % (name, function_list(rep)))
                check("it made a child with clone(CLONE_VM) that shares its thread-local storage" in text,
                      "%s: the report said:\n%s" % (name, text))


@test
def test_small_stacks(c):
    """Counted functions on small stacks: a coroutine on 4 KiB (makecontext) and a signal
    handler on an 8 KiB alternate stack (SIGSTKSZ), each with a guard page below. The
    probes' chunk switch kept a 4 KiB path buffer and printf's on the program's stack:
    the program died of SIGSEGV at its first chunk switch on the coroutine, built with
    -finstrument-functions and patched at load. Now it runs as alone, every call counted."""
    for name in ("e2e_small_stack", "e2e_small_stack_plain"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        args = [prog, "4096", "8192"]
        alone = c.run(args, expect=0).stdout
        check(alone.startswith("coroutine "), "%s alone printed %r" % (name, alone))
        rec, data = c.record(args)
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        expect_calls(rep, {"leaf": 2000000, "run_leaves": 21, "co_main": 1, "on_signal": 20, "main": 1})


@test
def test_small_thread_stacks(c):
    """Threads made with stacks of PTHREAD_STACK_MIN (16 KiB), one of which forks, then
    500 short threads. glibc takes a library's static TLS out of every thread's stack:
    the runtime's 120 KiB of it made pthread_create fail with EINVAL for any stack up to
    64 KiB (the program printed the error and stopped). Its per-thread state is now mapped
    at a thread's first probe and let go when the thread ends; before, two mappings per
    ended thread stayed behind (the program's /proc/self/maps grew by 800 lines)."""
    for name in ("e2e_small_threads", "e2e_small_threads_plain"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        check(alone.startswith("small stacks: ") and "grew by 0 lines" in alone,
              "%s alone printed %r" % (name, alone))
        rec, data = c.record([prog])
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        check(len(rep["processes"]) == 2, "%s: processes %s" % (name, rep["processes"]))
        expect_calls(rep, {"leaf": 4 * 50000 + 1000 + 500 * 10, "run_leaves": 5, "small_worker": 4,
                           "short_worker": 500, "main": 1})


@test
def test_patched_deep_recursion(c):
    """Recursion 100000 frames deep, five times: every call counted, with
    -finstrument-functions (past its 512 remembered frames, exits name their function) and
    patched at load, whose shadow stack of swapped return addresses had room for 1024
    frames and recorded none of the deeper calls (5115 counted of 500005); it now doubles
    as the stack deepens."""
    for name in ("e2e_patched_deep", "e2e_patched_deep_plain"):
        if name.endswith("_plain"):
            c.need_capstone()
        prog = c.prog(name)
        alone = c.run([prog], expect=0).stdout
        check(alone == "sum 500000\n", "%s alone printed %r" % (name, alone))
        rec, data = c.record([prog])
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        rep = c.report_json(data)
        expect_calls(rep, {"descend": 500005, "main": 1})


def has_cap_sys_resource():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> 24 & 1)  # CAP_SYS_RESOURCE
    return False


@test
def test_descriptors_used_up(c):
    """A program that lowers RLIMIT_NOFILE and opens files until EMFILE, then starts two
    threads: the runtime opens its spool files by raising the soft limit for the moment (it
    keeps no descriptor, so the program gets as many as alone). Before, the failed open of
    /proc/<recorder>/stat was taken for a killed recorder: recording stopped in the whole
    process, the two threads were missing and the report blamed a killed stint record. With
    the hard limit lowered too (and no CAP_SYS_RESOURCE), what cannot be recorded is said
    as it is: no file descriptor free, the threads not recorded counted."""
    prog = c.prog("e2e_spool_unreachable")
    for mode in (["fds"], ["fds-hard"]):
        alone = c.run([prog] + mode, expect=0).stdout
        check(alone.startswith("opened "), "alone printed %r" % alone)
        rec, data = c.record([prog] + mode)
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (mode, rec.stdout, alone))
        check("killed" not in rec.stderr and "disk" not in rec.stderr, "record said: %s" % rec.stderr)
        rep = c.report_json(data)
        text = c.run([c.stint, "report", "-i", data], expect=0).stdout
        check("killed" not in text and "disk" not in text, "the report said:\n%s" % text)
        if mode == ["fds"] or has_cap_sys_resource():
            check(len(rep["threads"]) == 3 and rep["unrecorded_threads"] == 0,
                  "%s: threads %s, unrecorded %s" % (mode, rep["threads"], rep["unrecorded_threads"]))
            expect_calls(rep, {"work": 300000, "worker": 3, "main": 1})
        else:
            check(rep["unrecorded_threads"] == 2, "unrecorded_threads %s" % rep["unrecorded_threads"])
            check("not recorded: 2 threads" in text and "no file descriptor free" in text,
                  "the report said:\n%s" % text)
            check("2 more threads were not recorded" in rec.stderr, "record said: %s" % rec.stderr)


@test
def test_setuid_drop(c):
    """A program run as root that gives up root's rights (setuid to 65534, as daemons do), or
    shuts itself in a chroot, before its work and before starting 2 threads: from then on
    it cannot open stint's spool. Before, its next chunk failed (recording stopped, "the disk is full"), the threads
    were lost and the functions first called after the switch had no names. Now later chunks
    come from growing the mapping over the chunk the recorder allocated ahead, names go into
    the buffer's notes area, and the threads take spare buffers made before the switch."""
    if os.geteuid() != 0:
        raise TestSkip("needs root, to give up its rights")
    prog = c.prog("e2e_spool_unreachable")
    jail = os.path.join(c.tmp, "jail")
    os.mkdir(jail)
    for mode, said in ((["setuid"], "uid 65534, in /"), (["chroot", jail], "uid 0, in a chroot")):
        alone = c.run([prog] + mode, expect=0).stdout
        check(alone.startswith(said), "alone printed %r" % alone)
        rec, data = c.record([prog] + mode)
        check(rec.stdout == alone, "%s: under stint printed %r instead of %r" % (mode, rec.stdout, alone))
        check("disk" not in rec.stderr and "not recorded" not in rec.stderr, "record said: %s" % rec.stderr)
        rep = c.report_json(data)
        check(len(rep["threads"]) == 3 and rep["unrecorded_threads"] == 0,
              "%s: threads %s, unrecorded %s" % (mode, rep["threads"], rep["unrecorded_threads"]))
        expect_calls(rep, {"work": 500000, "worker": 5, "main": 1})
    # 12 threads writing at once after the switch: each next chunk is made by the recorder, which
    # must keep ahead of them on a loaded machine (from 10 threads on, some stopped recording:
    # their chunk was prepared only once an eighth of the one before was written, and waited
    # for 50 ms at most)
    # (two busy loops beside it: the recorder's turn comes late, as on a loaded machine)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    heavy = []
    try:
        for k, mode in enumerate((["setuid", "heavy"], ["chroot", jail, "heavy"])):
            rec, data = c.record([prog] + mode, data=os.path.join(c.tmp, "heavy%d.data" % k))
            check("stopped recording" not in rec.stderr, "%s: record said: %s" % (mode, rec.stderr.strip()))
            heavy.append(data)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    for data in heavy:  # (reported once the hogs are gone: 12 M calls take a while in a sanitizer build)
        expect_calls(c.report_json(data, timeout=180), {"work": 12 * 10 * 100000, "worker": 120})
    # a child forked after the switch cannot make its files: not recorded, but counted, as the
    # process it is (it was called "1 thread"; after a chroot it was left out without a word: its
    # spool path was out of view, taken for a full disk)
    for mode in (["setuid", "fork"], ["chroot", jail, "fork"]):
        rec, data = c.record([prog] + mode)
        rep = c.report_json(data)
        check(len(rep["processes"]) == 1 and rep.get("unrecorded_processes") == 1 and rep["unrecorded_threads"] == 0,
              "%s: processes %s, unrecorded processes %s, threads %s" % (
                  mode, rep["processes"], rep.get("unrecorded_processes"), rep["unrecorded_threads"]))
        check("1 more process was not recorded" in rec.stderr and "thread was not" not in rec.stderr,
              "%s: record said: %s" % (mode, rec.stderr))
        text = c.run([c.stint, "report", "-i", data], expect=0).stdout
        check("# not recorded: 1 process," in text, "%s: the report says: %s" % (
            mode, [l for l in text.splitlines() if "not recorded" in l]))
        expect_calls(rep, {"work": 500000, "worker": 5, "main": 1})
    # a program exec'd after setuid cannot reach the spool: counted (it was left out without a word)
    rec, data = c.record([prog, "setuid", "exec"])
    check(rec.stdout == "exec'd\n", "exec after setuid printed %r" % rec.stdout)
    rep = c.report_json(data)
    check(rep.get("unrecorded_processes") == 1, "exec'd after setuid: unrecorded processes %s" % rep.get(
        "unrecorded_processes"))
    check("1 more process was not recorded" in rec.stderr, "exec after setuid: record said: %s" % rec.stderr)


@test
def test_seccomp_sandbox(c):
    """A program that shuts itself in a seccomp sandbox whose filter kills the process at
    open, mremap, fallocate, ftruncate, perf_event_open, prlimit64, kill or getrusage, installed
    with prctl and with seccomp(2) through syscall(): it died of SIGSYS under stint at the
    runtime's next chunk. Now it runs as alone; the runtime makes no system call from the
    filter on, and the thread that installed it records on into chunks mapped ahead (all of
    its 1000000 calls here); a thread started inside the sandbox is counted, not recorded.
    Through syscall() the program first makes libseccomp's check that seccomp(2) exists
    (strict mode with a flag, refused): the thread's recording ended there, as before a strict
    mode that turns the clock off, and 1 call of work was recorded."""
    prog = c.prog("e2e_seccomp_sandbox")
    for how in ("prctl", "syscall"):
        alone = c.run([prog, how], expect=0).stdout
        if "no seccomp" in alone:
            raise TestSkip("seccomp filters are not permitted here")
        rec, data = c.record([prog, how])
        check(rec.stdout == alone, "%s: under stint printed %r instead of %r" % (how, rec.stdout, alone))
        rep = c.report_json(data)
        check(rep["unrecorded_threads"] == 1, "%s: unrecorded %s" % (how, rep["unrecorded_threads"]))
        expect_calls(rep, {"work": 1000000, "worker": 1, "main": 1})


@test
def test_run_through_dynamic_linker(c):
    """stint record -- /lib64/ld-linux-x86-64.so.2 ./app: the dynamic linker run as a program
    loads the program and honours LD_PRELOAD; it was refused as statically linked. An
    -finstrument-functions program is recorded; a plain one is not patched (the program's
    file is not /proc/self/exe then: the linker's symbols were patched into the program)."""
    inst = c.prog("e2e_patch_mix")
    interp = subprocess.run(["readelf", "-p", ".interp", inst], stdout=subprocess.PIPE,
                            universal_newlines=True).stdout
    m = re.search(r"(/\S*ld-linux\S*)", interp)
    if not m or not os.access(m.group(1), os.X_OK):
        raise TestSkip("no dynamic linker to run: %r" % interp)
    ld = m.group(1)
    alone = c.run([ld, inst], expect=0).stdout
    rec, data = c.record([ld, inst])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    check(calls(rep, "main") == 1, "main was not recorded: %s" % function_list(rep))
    if c.capstone():
        plain = c.prog("e2e_patch_mix_plain")
        alone = c.run([ld, plain], expect=0).stdout
        rec = c.run([c.stint, "record", "-o", os.path.join(c.tmp, "p.data"), "--", ld, plain])
        check(rec.stdout == alone, "plain: under stint it printed %r instead of %r" % (rec.stdout, alone))


@test
def test_patched_library_calls(c):
    """A plain program patched at load: its calls into libc are recorded as those of the
    -finstrument-functions build (same libc functions, same calls)."""
    c.need_capstone()
    _, ref = c.record_and_report([c.prog("e2e_libcalls")])
    _, rep = c.record_and_report([c.prog("e2e_libcalls_plain")])
    want = {r["name"]: r["calls"] for r in ref["functions"] if "libc.so" in r["module"]}
    got = {r["name"]: r["calls"] for r in rep["functions"] if "libc.so" in r["module"]}
    check(want.get("qsort") == 1 and got == want, "libc calls %s\n  the -finstrument-functions build's: %s" % (
        sorted(got.items()), sorted(want.items())))
    expect_calls(rep, {"use_libc": 1, "main": 1})


@test
def test_patched_pg_mcount(c):
    """-pg without -mfentry (mcount after the prologue): patched at load like a plain build."""
    c.need_capstone()
    prog = c.prog("e2e_plain_pg")
    alone = c.run([prog], expect=0, cwd=c.tmp).stdout
    rec, data = c.record([prog], options=[])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    check(calls(rep, "main") == 1, "main: %d calls" % calls(rep, "main"))


@test
def test_patched_stripped(c):
    """A plain -O2 program stripped with `strip` (no .symtab): its functions are found from
    .eh_frame (called directly, through a pointer in data or taken in the code, main) and named
    by file offset; every function the unstripped build reports has a row at its offset with
    the same calls, the header counts as many functions, the output is the same, and the
    split-off cold part (checked.cold, run 3 times) is not patched."""
    c.need_capstone()
    plain, stripped = c.prog("e2e_stripped_plain"), c.prog("e2e_stripped_stripped")
    syms = harness.elf_symbols(plain)
    check("checked.cold" in syms, "the compiler did not split checked.cold off: %s" % sorted(syms))
    check(not harness.elf_symbols(stripped), "e2e_stripped_stripped still has a symbol table")
    alone = c.run([stripped], expect=0)
    check(alone.stderr.count("odd value") == 3, "e2e_stripped_stripped alone: %r" % alone.stderr)
    _, ref_data = c.record([plain], data=os.path.join(c.tmp, "plain.data"))
    ref = c.report_json(ref_data)
    rec, data = c.record([stripped])
    check(rec.stdout == alone.stdout, "under stint it printed %r instead of %r" % (rec.stdout, alone.stdout))
    check(rec.stderr.count("odd value") == 3, "under stint: %r" % rec.stderr[-500:])
    rep = c.report_json(data)
    want = {"0x%x" % syms[r["name"]]: (r["name"], r["calls"]) for r in ref["functions"]
            if r["module"] == "e2e_stripped_plain"}
    check(len(want) >= 8, "the unstripped build recorded only %s" % function_list(ref))
    got = {r["name"]: r["calls"] for r in rep["functions"] if r["module"] == "e2e_stripped_stripped"}
    wrong = ["%s (%s): %s calls, %d unstripped" % (k, n, got.get(k), calls_)
             for k, (n, calls_) in sorted(want.items()) if got.get(k) != calls_]
    check(not wrong, "stripped: %s\n  recorded: %s" % ("; ".join(wrong), function_list(rep)))
    check("0x%x" % syms["checked.cold"] not in got, "checked.cold was patched: %s" % function_list(rep))
    mods = {m["module"]: m for m in rep.get("patched_modules", [])}
    refmods = {m["module"]: m for m in ref.get("patched_modules", [])}
    m, rm = mods.get("e2e_stripped_stripped"), refmods.get("e2e_stripped_plain")
    check(m and rm and m["functions"] == rm["functions"] and m["instrumented"] == rm["instrumented"],
          "N of M: stripped %s, unstripped %s" % (m, rm))
    text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
    check(re.search(r"# instrumented: %d of %d functions of e2e_stripped_stripped, patched at load" % (
        m["instrumented"], m["functions"]), text), "header:\n%s" % text[:1200])


def redis_cli(port, *cmd):
    p = subprocess.run(["redis-cli", "-p", str(port)] + list(cmd), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=RECORD_TIMEOUT)
    return p.stdout.decode("utf-8", "replace")


@test
def test_patched_redis_server(c):
    """Debian's redis-server (stripped, patched at load; background threads, a fork for
    BGSAVE, shut down by a command) under a load of redis-benchmark: the calls of the
    functions that carry out SET, GET, LPUSH, LPOP and BGSAVE are the commands the server
    says it ran (INFO commandstats), the BGSAVE child is a process of its own with its save
    recorded, and the server exits as it does alone."""
    c.need_capstone()
    # (not resolved: redis-server is a link to redis-check-rdb, which tells by its name)
    server = shutil.which("redis-server", path="/usr/bin:/bin")
    if not server or not shutil.which("redis-benchmark") or not shutil.which("redis-cli"):
        raise TestSkip("no redis-server / redis-benchmark (Debian redis-server, redis-tools; scripts/deps.sh)")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    data = os.path.join(c.tmp, "redis.data")
    argv = [c.stint, "record", "-o", data, "--", server, "--port", str(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", c.tmp]
    c.log.append(" ".join(argv))
    log = open(os.path.join(c.tmp, "redis.log"), "w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + RECORD_TIMEOUT
        while "PONG" not in redis_cli(port, "ping"):
            check(proc.poll() is None, "redis-server under stint exited %s before answering" % proc.returncode)
            check(time.time() < deadline, "redis-server under stint did not answer within %d s" % RECORD_TIMEOUT)
            time.sleep(0.1)
        b = subprocess.run(["redis-benchmark", "-p", str(port), "-q", "-n", "2000", "-c", "4",
                            "-t", "set,get,lpush,lpop"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=4 * RECORD_TIMEOUT)
        check(b.returncode == 0, "redis-benchmark exited %d: %s" % (b.returncode, b.stdout[-300:]))
        redis_cli(port, "bgsave")
        deadline = time.time() + RECORD_TIMEOUT
        while "rdb_bgsave_in_progress:0" not in redis_cli(port, "info", "persistence"):
            check(time.time() < deadline, "BGSAVE did not end within %d s" % RECORD_TIMEOUT)
            time.sleep(0.1)
        stats = {m.group(1): int(m.group(2))
                 for m in re.finditer(r"cmdstat_(\w+):calls=(\d+)", redis_cli(port, "info", "commandstats"))}
        redis_cli(port, "shutdown", "nosave")
        status = proc.wait(timeout=4 * RECORD_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    check(status == 0, "stint record of redis-server exited %d (0 alone: SHUTDOWN)" % status)
    rep = c.report_json(data)
    for cmd, fn in (("set", "setCommand"), ("get", "getCommand"), ("lpush", "lpushCommand"),
                    ("lpop", "lpopCommand"), ("bgsave", "bgsaveCommand")):
        check(stats.get(cmd, 0) > 0, "the server ran no %s: %s" % (cmd.upper(), stats))
        check(calls(rep, fn) == stats[cmd], "%s: %d calls recorded, the server ran %d %s" % (
            fn, calls(rep, fn), stats[cmd], cmd.upper()))
    check(len(rep["processes"]) == 2, "processes: %s" % [p["command"] for p in rep["processes"]])
    check(calls(rep, "rdbSaveRio") == 1, "rdbSaveRio (the BGSAVE child's save): %d calls" % calls(rep, "rdbSaveRio"))
    check(len(rep["threads"]) >= 3, "threads: %s" % [t["name"] for t in rep["threads"]])


def debian_binary(name):
    path = shutil.which(name, path="/usr/bin:/bin")
    if path:
        path = os.path.realpath(path)
        with open(path, "rb") as f:
            if f.read(4) == b"\x7fELF":
                return path
    return None


@test
def test_patched_debian_binaries(c):
    """Debian's -O2 binaries, not built for instrumentation, patched at load: xz and gzip
    (compress and decompress, also with liblzma patched: STINT_PATCH_LIBS), bash (command
    substitution: a fork child whose runtime reads bash's own getenv) and python3 give
    byte-identical output to an unprofiled run; functions are counted where there are symbols."""
    c.need_capstone()
    data_in = os.path.join(c.tmp, "input.txt")
    rnd = random.Random(7)
    with open(data_in, "w") as f:
        for i in range(15000):
            f.write("%d %s\n" % (i, "".join(rnd.choice("abcdefgh ") for _ in range(30))))
    ran = []

    def same(argv, env=None, name="run"):
        p1 = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=RECORD_TIMEOUT)
        check(p1.returncode == 0, "%s alone exited %d: %s" % (argv, p1.returncode, p1.stderr[:300]))
        data = os.path.join(c.tmp, name + ".data")
        c.log.append("stint record -o %s -- %s" % (data, " ".join(argv)))
        p2 = subprocess.run([c.stint, "record", "-m", "instrument", "-o", data, "--"] + argv,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=RECORD_TIMEOUT)
        check(p2.returncode == 0, "%s under stint exited %d: %s" % (argv, p2.returncode, p2.stderr[-500:]))
        check(p1.stdout == p2.stdout, "%s printed %d bytes under stint, %d alone (or other bytes)" % (
            argv, len(p2.stdout), len(p1.stdout)))
        ran.append(os.path.basename(argv[0]))
        return c.report_json(data)

    def program_patched(rep, name):
        # Debian's xz and gzip are stripped: their functions come from .eh_frame
        m = [m for m in rep.get("patched_modules", []) if m["module"] == name]
        check(m and m[0]["instrumented"] > 20, "%s: its own functions were not patched: %s" % (
            name, rep.get("patched_modules")))
        check(any(r["module"] == name and r["calls"] > 0 for r in rep["functions"]),
              "%s: none of its own functions has calls" % name)

    xz = debian_binary("xz")
    if xz:
        program_patched(same([xz, "-c", "-6", data_in], name="xz"), os.path.basename(xz))
        env = dict(os.environ, STINT_PATCH_LIBS="liblzma")
        rep = same([xz, "-c", "-6", data_in], env=env, name="xz-lib")
        mods = {m["module"]: m for m in rep.get("patched_modules", [])}
        lz = [m for k, m in mods.items() if k.startswith("liblzma")]
        check(lz and lz[0]["instrumented"] > 20, "liblzma was not patched: %s" % rep.get("patched_modules"))
        check(calls(rep, "lzma_code") > 0, "lzma_code has no calls")
        with open(os.path.join(c.tmp, "in.xz"), "wb") as f:
            f.write(subprocess.run([xz, "-c", data_in], stdout=subprocess.PIPE).stdout)
        # a name up to a later dot (only the part before the first one matched before)
        rep = same([xz, "-dc", os.path.join(c.tmp, "in.xz")], env=dict(os.environ, STINT_PATCH_LIBS="liblzma.so"),
                   name="unxz")
        check(any(m["module"].startswith("liblzma") and m["instrumented"] > 20 for m in rep.get("patched_modules", [])),
              "STINT_PATCH_LIBS=liblzma.so: liblzma was not patched: %s" % rep.get("patched_modules"))
        program_patched(same([xz, "-dc", os.path.join(c.tmp, "in.xz")], name="unxz-prog"), os.path.basename(xz))
        # a misspelt name is said, once, and only it
        p = subprocess.run([c.stint, "record", "-m", "instrument", "-o", os.path.join(c.tmp, "typo.data"), "--",
                            xz, "-dc", os.path.join(c.tmp, "in.xz")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(os.environ, STINT_PATCH_LIBS="liblzma.so,libzma"), timeout=RECORD_TIMEOUT,
                           universal_newlines=True)
        said = [l for l in p.stderr.splitlines() if "STINT_PATCH_LIBS" in l]
        check(p.returncode == 0 and len(said) == 1 and "'libzma'" in said[0],
              "STINT_PATCH_LIBS=liblzma.so,libzma: expected one line naming 'libzma', got exit %d:\n%s" % (
                  p.returncode, p.stderr))
    gz = debian_binary("gzip")
    if gz:
        program_patched(same([gz, "-c", "-9", data_in], name="gzip"), os.path.basename(gz))
        with open(os.path.join(c.tmp, "in.gz"), "wb") as f:
            f.write(subprocess.run([gz, "-c", data_in], stdout=subprocess.PIPE).stdout)
        program_patched(same([gz, "-dc", os.path.join(c.tmp, "in.gz")], name="gunzip"), os.path.basename(gz))
    bash = debian_binary("bash")
    if bash:
        rep = same([bash, "-c", 'x=$(echo hi); for i in 1 2 3; do y="$y$x$i"; done; echo "[$y]"'], name="bash")
        check(any(m["instrumented"] > 500 for m in rep.get("patched_modules", [])),
              "bash: few functions patched: %s" % rep.get("patched_modules"))
    py = debian_binary("python3")
    if py:
        script = ("import json, hashlib, collections\n"
                  "d = {str(i): [i * i, str(i)[::-1]] for i in range(3000)}\n"
                  "s = json.dumps(d, sort_keys=True)\n"
                  "print(hashlib.sha256(s.encode()).hexdigest(), collections.Counter(s).most_common(3))\n")
        rep = same([py, "-c", script], name="python3")
        check(any(m["instrumented"] > 500 for m in rep.get("patched_modules", [])),
              "python3: few functions patched: %s" % rep.get("patched_modules"))
        check(calls(rep, "PyList_Append") > 0 or calls(rep, "PyDict_SetItem") > 0,
              "python3: no calls of its API functions recorded")
    if not ran:
        raise TestSkip("none of xz, gzip, bash, python3 is installed")


# --- error cases -------------------------------------------------------------

def cpu_time_no_switch_shows(cpu):
    """Nanoseconds CPU cpu spent so far in interrupts, soft interrupts and
    hypervisor steal (/proc/stat): time a thread loses without being
    switched out.  0 where /proc/stat does not say."""
    try:
        with open("/proc/stat") as f:
            for line in f:
                fields = line.split()
                if fields and fields[0] == "cpu" + cpu:
                    ticks = sum(int(x) for x in fields[6:9])  # irq, softirq, steal
                    return ticks * 1e9 / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        pass
    return 0.0


def preempted_tiny_calls(c, calls, options):
    """Shared by the perf and rusage variants: see test_preempted_tiny_calls."""
    cpus = sorted(os.sched_getaffinity(0))
    cpu = str(cpus[-1])
    if not shutil.which("taskset"):
        raise TestSkip("no taskset (util-linux) to pin a CPU hog")
    hog = subprocess.Popen(["taskset", "-c", cpu, c.prog("e2e_preempt_tiny"), "hog"])
    unseen0 = cpu_time_no_switch_shows(cpu)
    try:
        data = os.path.join(c.tmp, "stint.data")
        argv = ["taskset", "-c", cpu, c.stint, "record", "-m", "instrument", "-o", data] + list(options) + [
            "--", c.prog("e2e_preempt_tiny"), str(calls)]
        p = c.run(argv, expect=0, timeout=60)
    finally:
        unseen = cpu_time_no_switch_shows(cpu) - unseen0
        hog.kill()
        hog.wait()
    m = re.search(r"cpu_ns=(\d+) switches=(\d+)", p.stdout)
    check(m is not None, "the program printed no cpu_ns: %r" % p.stdout)
    cpu_ns, switches = float(m.group(1)), int(m.group(2))
    check(switches >= 5, "the hog on CPU %s preempted the program only %d times: nothing tested" % (cpu, switches))
    # (a sanitizer build reads tens of millions of events slowly)
    raw = c.report_json(data, options=["--no-compensation"], timeout=60)
    rep = c.report_json(data, timeout=60)
    expect_calls(rep, {"one_line": calls, "driver": 1})
    # An interval without an OS event ran on the CPU the whole time, so the
    # Application time of the session cannot exceed the CPU time the thread
    # had (plus the runtime's start-up in its constructor and the little
    # after main returns; the slack also covers hypervisor steal time, which
    # the TSC sees and the thread's CPU time does not).  Before the switch
    # counter was read around the clock, a preemption inside a probe left
    # the off-CPU time unflagged: 3-5 times the CPU time.
    ai = raw["session"]["application_inclusive"]
    check_cpu_time(ai <= 1.25 * cpu_ns + 30e6,
          "raw session AI %s is more than the thread's CPU time %s (getrusage, %d switches): "
          "off-CPU time counted as Application time" % (ms(ai), ms(cpu_ns), switches))
    # a call of a one-line function is a few ns: an Application Exclusive
    # of a millisecond can only be an off-CPU time slice left unflagged
    # -- unless the CPU itself was taken away without a context switch of the
    # thread (a hypervisor's steal time, interrupts): no counter the thread
    # can read sees that, so such time the pinned CPU had is allowed on top.
    worst = func(rep, "one_line")["application_exclusive_max"]
    check_cpu_time(worst <= 1e6 + unseen, "one_line: a call with AE %s (max per call); %d switches; %s of steal and "
          "interrupt time on CPU %s" % (ms(worst), switches, ms(unseen), cpu))
    # (without compensation a call may hold a chunk switch, the profiler's
    # time reported where it occurred: not checked there)


@test
def test_preempted_tiny_calls(c):
    """A one-line function called 6 M times while a CPU hog shares the CPU:
    the thread is preempted hundreds of times, often inside a probe, and
    every switch must flag the interval that holds the off-CPU time.  Checks
    what holds on any machine: session AI within the thread's own CPU time
    (getrusage, printed by the program), no one-line call with AE > 1 ms."""
    again_if_host_stole(lambda: preempted_tiny_calls(c, 6000000, []), "preempted_tiny_calls")


@test
def test_preempted_tiny_calls_rusage(c):
    """The same with --os-events rusage (two getrusage calls per probe, so
    fewer calls)."""
    again_if_host_stole(lambda: preempted_tiny_calls(c, 1000000, ["--os-events", "rusage"]),
                        "preempted_tiny_calls_rusage")


@test
def test_raw_time_is_wall_time(c):
    """main loops for 0.8 s by CLOCK_MONOTONIC with enough events to fill
    several spool chunks: without compensation, EI of main is the time the
    program measured itself (doc/numbers.md: the profiler's time inside the program is
    reported where it occurred, none dropped).  Before, each chunk switch
    restarted the thread's clock and 10-15% of the time vanished."""
    rec, data = c.record([c.prog("e2e_wall_loop"), "800"])
    m = re.search(r"main_ns=(\d+) calls=(\d+)", rec.stdout)
    check(m is not None, "the program printed no main_ns: %r" % rec.stdout)
    own, n = float(m.group(1)), int(m.group(2))
    raw = c.report_json(data, options=["--no-compensation"], timeout=60)
    expect_calls(raw, {"step": n, "main": 1})
    check(raw["events"] * 3 > 2 * (256 << 10) + (512 << 10),
          "only %d events: not enough to cross several spool chunks" % raw["events"])
    ei = func(raw, "main")["elapsed_inclusive"]
    check(abs(ei - own) <= 0.01 * own,
          "raw EI of main %s, but the program measured %s (%.2f%% off)" % (ms(ei), ms(own), 100.0 * (ei - own) / own))
    # with compensation the profiler's own time goes, and the report says how much
    comp = c.report_json(data, timeout=60)
    check(func(comp, "main")["elapsed_inclusive"] < ei, "compensation removed nothing from main")


@test
def test_compensation_exact(c):
    """Compensation's arithmetic, checked to the nanosecond from one recording
    (no timing: the accuracy figure is bench/bench-compensation.sh's).  The
    report says what it subtracted: probe events x cost + library-call events
    x their cost + the profiler's own time - what intervals too short could
    not give; the raw and compensated reports differ by exactly that; each
    leaf() call (the interval from its entry probe to its exit probe) loses
    exactly the part of two probes' cost the runtime measured inside an empty
    call, and each memset() call (between the two probes of a library call)
    one library-call cost.  The cost is the compiler's hooks'."""
    cc = check_compensation_exact(c, "e2e_comp_exact")
    check(cc["cost_path"] == "hooks", "a -finstrument-functions build compensated as %r" % cc["cost_path"])


@test
def test_compensation_patched_path(c):
    """A program patched at load (plain -O2 with Capstone, -pg -mfentry, patch sites) has its
    function probes' cost measured on their own path (entry trampoline, return-address swap,
    return trampoline: about twice the compiler's hooks), not the -finstrument-functions
    yardstick that left two thirds of that path in every interval; the arithmetic holds as for
    compensation_exact, and the report says which cost it used."""
    for v in c.load_variants():
        name = "e2e_comp_exact_" + v
        cc = check_compensation_exact(c, name)
        check(cc["cost_path"] == "patched", "%s: compensated with the cost of %r, not of its own probes' path" % (
            name, cc["cost_path"]))
        data = os.path.join(c.tmp, "comp_%s.data" % v)
        c.record([c.prog(name), "1000"], data=data)
        text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
        check("ns per event (functions patched at load; library calls" in text,
              "%s: the header does not say the cost is that of functions patched at load:\n%s" % (
                  name, text[:1200]))


@test
def test_compensation_measured_in_run(c):
    """The probe cost is measured again at each chunk switch of a run (the machine's state moves
    it by a third from one run to the next on a shared VM), and the data file keeps the median
    of the start-up's and the run's measurements: a run of 4 M events has several; the JSON
    gives their number and range, the header says them, and compensation's arithmetic holds
    with that cost.  The probes' general path does the same: a selection (--function), the
    rusage mode and the monotonic clock."""
    n = 1000000
    for opts in (["--function", "leaf", "--function", "parent"], ["--os-events", "rusage"],
                 ["--clock", "monotonic"]):
        _, d = c.record([c.prog("e2e_comp_exact"), str(n)], options=opts,
                        data=os.path.join(c.tmp, "mode.data"))
        cm = c.report_json(d)
        check(cm["compensation"]["calibrations"] >= 4, "%s: a run of %d events has %d calibrations" % (
            " ".join(opts), cm["events"], cm["compensation"]["calibrations"]))
    data = os.path.join(c.tmp, "long.data")
    c.record([c.prog("e2e_comp_exact"), str(n)], data=data)
    comp = c.report_json(data)
    cc = comp["compensation"]
    check(cc["calibrations"] >= 4, "a run of %d events has %d calibrations" % (comp["events"], cc["calibrations"]))
    check(0 < cc["cost_min_ns"] <= cc["cost_per_event_ns"] <= cc["cost_max_ns"],
          "the cost %.3f ns is not within its measurements' range %.3f..%.3f" % (
              cc["cost_per_event_ns"], cc["cost_min_ns"], cc["cost_max_ns"]))
    text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
    check("(median of %d measurements, " % cc["calibrations"] in text,
          "the header does not say the cost is a median of the run's measurements:\n%s" % text[:1200])
    expect_calls(comp, {"parent": 1, "leaf": n, "memset": n})
    want = (cc["probe_events"] * cc["cost_per_event_ns"] + cc["library_events"] * cc["cost_per_library_event_ns"]
            + cc["overhead_ns"] - cc["unsubtracted_ns"])
    check(abs(want - cc["subtracted_ns"]) <= 1e-6 * cc["subtracted_ns"] + 4,
          "subtracted %d ns, but events x costs + overhead - unsubtracted = %.0f ns" % (cc["subtracted_ns"], want))


def check_compensation_exact(c, name):
    n = 100000
    rec, data = c.record([c.prog(name), str(n)], data=os.path.join(c.tmp, name + ".data"))
    comp = c.report_json(data)
    raw = c.report_json(data, options=["--no-compensation"])
    expect_calls(comp, {"parent": 1, "leaf": n, "memset": n})
    cc = comp["compensation"]
    cost, lib_cost, in_call = cc["cost_per_event_ns"], cc["cost_per_library_event_ns"], cc["cost_in_call_ns"]
    check(cc["enabled"] and cost > 0 and lib_cost > 0, "no probe cost calibrated: %s" % cc)
    check(0 < in_call <= 2 * cost + 1e-6, "the cost inside a call, %.3f ns, is not within (0, 2 x %.3f ns]" % (
        in_call, cost))
    check(not raw["compensation"]["enabled"] and raw["compensation"]["subtracted_ns"] == 0,
          "--no-compensation still subtracts: %s" % raw["compensation"])
    # one probe event per entry and exit: of instrumented functions, and of library calls
    fn_calls = sum(r["calls"] for r in comp["functions"] if r["module"] == name)
    lib_calls = sum(r["calls"] for r in comp["functions"] if r["module"] != name)
    check(cc["probe_events"] == 2 * fn_calls and cc["library_events"] == 2 * lib_calls,
          "probe events %d / library events %d for %d calls / %d library calls" % (
              cc["probe_events"], cc["library_events"], fn_calls, lib_calls))
    want = (cc["probe_events"] * cost + cc["library_events"] * lib_cost + cc["overhead_ns"] - cc["unsubtracted_ns"])
    check(abs(want - cc["subtracted_ns"]) <= 1e-6 * cc["subtracted_ns"] + 4,
          "subtracted %d ns, but events x costs + overhead - unsubtracted = %.0f ns" % (cc["subtracted_ns"], want))
    diff = raw["session"]["elapsed_inclusive"] - comp["session"]["elapsed_inclusive"]
    check(abs(diff - cc["subtracted_ns"]) <= 2, "raw - compensated session EI %d ns != subtracted %d ns" % (
        diff, cc["subtracted_ns"]))
    # (plus any of the profiler's own time that fell into a call: a switch
    # to a new spool chunk after its entry record)
    for name, per in (("leaf", in_call), ("memset", lib_cost)):
        d = func(raw, name)["elapsed_exclusive"] - func(comp, name)["elapsed_exclusive"]
        check(n * per - 1e-6 * n * per - 2 <= d <= n * per + cc["overhead_ns"] + 2,
              "%s: raw - compensated EE %d ns, expected %d calls x %.6f ns = %.0f ns (+ up to %d ns overhead)" % (
                  name, d, n, per, n * per, cc["overhead_ns"]))
    # parent's own intervals hold probe costs too; never more than removed
    p_raw, p_comp = func(raw, "parent"), func(comp, "parent")
    check(p_comp["elapsed_inclusive"] < p_raw["elapsed_inclusive"], "nothing removed from parent")
    check(p_raw["elapsed_inclusive"] - p_comp["elapsed_inclusive"] <= cc["subtracted_ns"] + 2,
          "parent lost more than was subtracted in all")
    return cc


@test
def test_os_events_rusage(c):
    """--os-events rusage (the fallback where perf events are not permitted):
    a sleeper still has AI ~ 0 and the header names the detector."""
    rec, data = c.record([c.prog("e2e_sleep_compute")], options=["--os-events", "rusage"])
    rep = c.report_json(data)
    check("getrusage" in rep["os_event_detector"], "detector: %s" % rep["os_event_detector"])
    sleepy = func(rep, "sleepy")
    check(sleepy["elapsed_inclusive"] > 40e6, "sleepy EI %s, expected about 50 ms" % ms(sleepy["elapsed_inclusive"]))
    check(sleepy["application_inclusive"] < 0.2 * sleepy["elapsed_inclusive"],
          "sleepy: AI %s of EI %s with rusage detection" % (ms(sleepy["application_inclusive"]),
                                                            ms(sleepy["elapsed_inclusive"])))
    p = c.run([c.stint, "report", "-i", data], expect=0)
    check("getrusage" in p.stdout, "table header does not name the getrusage detector")


@test
def test_os_events_perf_denied(c):
    """Where perf events are not permitted, the runtime falls back to getrusage
    by itself and the header says why (STINT_DENY_PERF stands in for
    perf_event_paranoid 3, which does not stop root)."""
    env = dict(os.environ, STINT_DENY_PERF="1")
    data = os.path.join(c.tmp, "stint.data")
    c.run([c.stint, "record", "-o", data, "--", c.prog("e2e_sleep_compute")], expect=0, env=env)
    rep = c.report_json(data)
    check("not permitted" in rep["os_event_detector"], "detector: %s" % rep["os_event_detector"])
    sleepy = func(rep, "sleepy")
    check(sleepy["application_inclusive"] < 0.2 * sleepy["elapsed_inclusive"],
          "sleepy AI %s of EI %s with the fallback" % (ms(sleepy["application_inclusive"]),
                                                       ms(sleepy["elapsed_inclusive"])))


@test
def test_program_closes_descriptors(c):
    """A program that closes every descriptor it did not open and dup2s its own
    file onto the low numbers: every call is still recorded, the functions it
    first calls afterwards are named, and nothing lands in its file."""
    own = os.path.join(c.tmp, "program.out")
    rec, rep = c.record_and_report([c.prog("e2e_close_fds"), own])
    expect_calls(rep, {"early": 1, "late_work": 200000, "late_other": 1, "main": 1})
    check("program_file_size=0" in rec.stdout, "the program's file was written into: %s" % rec.stdout)
    check(os.path.getsize(own) == 0, "the program's file is %d bytes" % os.path.getsize(own))


@test
def test_clock_monotonic(c):
    """--clock monotonic (where the TSC is not usable): same calls, sane times."""
    rec, data = c.record([c.prog("e2e_threads")], options=["--clock", "monotonic"])
    rep = c.report_json(data)
    expect_calls(rep, {"alpha_step": 100, "beta_step": 200, "gamma_step": 300})
    check(rep["session"]["elapsed_inclusive"] > 0, "no time recorded")


@test
def test_disk_full_then_recover(c):
    """The disk fills while recording: one clear error naming a kept spool, and
    `stint recover` makes a reportable data file of it once there is room."""
    mnt = os.path.join(c.tmp, "small")
    os.mkdir(mnt)
    p = c.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt])
    if p.returncode != 0:
        raise TestSkip("cannot mount a small tmpfs here (%s)" % p.stderr.strip())
    try:
        data = os.path.join(mnt, "stint.data")
        p = c.run([c.stint, "record", "-m", "instrument", "-o", data, "--", c.prog("e2e_tiny_calls")])
        check(p.returncode != 0, "record on a full disk exited 0")
        # said while the program runs, then one line of error at the end
        running = [l for l in p.stderr.splitlines() if "stopped recording" in l]
        check(running and "disk is full" in running[0], "record did not warn while running: %s" % p.stderr)
        p.stderr = "\n".join(l for l in p.stderr.splitlines() if "stopped recording" not in l)
        one_line_error(p, ["No space left", "stint recover"], "record on a full disk")
        spools = [d for d in os.listdir(mnt) if d.startswith(".stint-spool-")]
        check(len(spools) == 1, "no spool kept: %s" % os.listdir(mnt))
        out = os.path.join(c.tmp, "recovered.data")
        c.run([c.stint, "recover", os.path.join(mnt, spools[0]), "-o", out], expect=0)
        rep = c.report_json(out)
        check(rep["events"] > 0, "the recovered file has no events")
        t = c.run([c.stint, "report", "-i", out], expect=0)
        check("disk filled" in t.stdout, "the report does not say the disk filled")
    finally:
        c.run(["umount", mnt])


@test
def test_disk_nearly_full(c):
    """The disk has almost no room when recording starts (a 2 MiB tmpfs filled to 80 KiB, then to
    4 KiB free): the program runs as without stint (at 4 KiB free the runtime stored into a
    header page it could not allocate and the program died of SIGBUS), the running warning comes
    once with a real thread id, and one line says nothing was recorded for want of room there,
    exit 2, no data file, no spool.  Before: "thread 0 stopped recording" every 2 ms, then
    "never started stint's runtime (a set-user-ID ...)", an empty data file and exit 0."""
    mnt = os.path.join(c.tmp, "small")
    os.mkdir(mnt)
    p = c.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt])
    if p.returncode != 0:
        raise TestSkip("cannot mount a small tmpfs here (%s)" % p.stderr.strip())
    try:
        prog = [c.prog("e2e_group_signal"), "storm"]  # a parent and its child
        alone = c.run(prog, expect=0).stdout
        for fill_kib in (1968, 2044):
            fill = os.path.join(mnt, "fill")
            with open(fill, "wb") as f:
                f.write(b"\0" * (fill_kib * 1024))
            st = os.statvfs(mnt)
            free = st.f_bavail * st.f_frsize // 1024
            data = os.path.join(mnt, "b.data")
            p = c.run([c.stint, "record", "-o", data, "--"] + prog)
            what = "record with %d KiB free" % free
            check(p.stdout == alone, "%s: the program printed %r, alone %r" % (what, p.stdout, alone))
            check(p.returncode == 2, "%s exited %d, expected 2; stderr: %s" % (what, p.returncode, p.stderr))
            lines = [l for l in p.stderr.splitlines() if l.strip()]
            running = [l for l in lines if "stopped recording" in l]
            final = [l for l in lines if l not in running]
            check(len(running) <= 1, "%s warned %d times while running:\n%s" % (what, len(running), p.stderr))
            check(not running or (mnt in running[0] and not re.search(r"thread 0\b", running[0])),
                  "%s: the running warning names no directory or no thread: %s" % (what, running))
            check(len(final) == 1 and "nothing was recorded" in final[0] and mnt in final[0] and "room" in final[0],
                  "%s should end with one line saying the disk of %s had no room:\n%s" % (what, mnt, p.stderr))
            check("never started" not in p.stderr and "set-user-ID" not in p.stderr,
                  "%s blamed the program: %s" % (what, p.stderr))
            check(sorted(os.listdir(mnt)) == ["fill"], "%s left %s" % (what, os.listdir(mnt)))
            os.unlink(fill)
    finally:
        c.run(["umount", mnt])


def tree_find(nodes, name):
    """Depth-first search of a --tree JSON forest for the first node called name."""
    for n in nodes:
        if n["name"] == name:
            return n
        found = tree_find(n["children"], name)
        if found:
            return found
    return None


@test
def test_view_tree_and_hot_path(c):
    """report --tree: paths with the four values (a path's values agree with the
    function table for functions called from one place); --hot-path expands the
    hottest call at each level; --threshold folds small paths."""
    rec, data = c.record([c.prog("e2e_libcalls")])
    rep = c.report_json(data)
    p = c.run([c.stint, "report", "-i", data, "--tree", "--threshold", "0", "--format", "json"], expect=0)
    tree = json.loads(p.stdout)
    use = tree_find(tree["roots"], "use_libc")
    check(use is not None, "use_libc is not in the tree")
    f = func(rep, "use_libc")
    for k in VALUES:
        check(abs(use[k] - f[k]) <= 1, "tree %s of use_libc %s != report's %s" % (k, use[k], f[k]))
    check(use["calls"] == 1, "use_libc calls in the tree: %s" % use["calls"])
    qs = tree_find(use["children"], "qsort")
    check(qs is not None and tree_find(qs["children"], "cmp_ints") is not None,
          "cmp_ints is not under qsort under use_libc")
    check(tree_find(qs["children"], "cmp_ints")["calls"] == calls(rep, "cmp_ints"), "cmp_ints calls differ")
    # hot path: one child per level, the hottest
    p = c.run([c.stint, "report", "-i", data, "--hot-path", "--format", "json"], expect=0)
    hot = json.loads(p.stdout)
    node, depth = hot["roots"][0], 0
    while node["children"]:
        check(len(node["children"]) == 1, "hot path shows %d children at depth %d" % (len(node["children"]), depth))
        node, depth = node["children"][0], depth + 1
    check(node["name"] == "usleep", "the hot path ends at %s, expected usleep (3 ms of sleep)" % node["name"])
    p = c.run([c.stint, "report", "-i", data, "--tree"], expect=0)
    check("use_libc" in p.stdout and "folded" in p.stdout, "text tree lacks use_libc or the folding note")


@test
def test_view_callers_callees(c):
    """callers/callees: cmp_ints is called by qsort only; use_libc calls usleep,
    malloc, free and qsort with their calls; the edge values add up."""
    rec, data = c.record([c.prog("e2e_libcalls")])
    rep = c.report_json(data)
    p = c.run([c.stint, "callers", "-i", data, "--format", "json", "cmp_ints"], expect=0)
    b = json.loads(p.stdout)
    check([r["name"] for r in b["callers"]] == ["qsort"], "callers of cmp_ints: %s" % b["callers"])
    check(b["callers"][0]["calls"] == calls(rep, "cmp_ints"), "cmp_ints calls under qsort")
    p = c.run([c.stint, "callees", "-i", data, "--format", "json", "use_libc"], expect=0)
    b = json.loads(p.stdout)
    got = {r["name"]: r["calls"] for r in b["callees"]}
    for name, n in {"usleep": 3, "malloc": 10, "free": 10, "qsort": 1}.items():
        check(got.get(name) == n, "callee %s of use_libc: %s calls, expected %d (%s)" % (name, got.get(name), n, got))
    total = sum(r["elapsed_inclusive"] for r in b["callees"])
    check(total <= b["function"]["elapsed_inclusive"] + 1, "callees' EI exceed the function's")
    p = c.run([c.stint, "callers", "-i", data, "no_such_function_xyz"])
    one_line_error(p, ["no_such_function_xyz"], "callers of a missing function")


@test
def test_view_callers_callees_width(c):
    """callers and callees take --width as report does: the table's names cut with '..' to N
    columns (0: whole; CSV and JSON whole); a bad value is one line.  They refused the option."""
    rec, data = c.record([c.prog("e2e_cxx_names"), "names"])
    whole = c.run([c.stint, "callees", "-i", data, "main"], expect=0).stdout
    longest = max(len(l) for l in whole.splitlines())
    check(longest > 110, "no name long enough to cut (longest line %d): %s" % (longest, whole))
    for cmd, fn in (("callees", "main"), ("callers", "Foo::bar(int)")):
        p = c.run([c.stint, cmd, "-i", data, "--width", "100", fn], expect=0)
        lines = p.stdout.splitlines()
        check(all(len(l) <= 100 for l in lines[:-1]), "%s --width 100: lines of %s columns:\n%s" % (
            cmd, [len(l) for l in lines], p.stdout))
        p0 = c.run([c.stint, cmd, "-i", data, "--width", "0", fn], expect=0)
        check(p0.stdout == c.run([c.stint, cmd, "-i", data, fn], expect=0).stdout,
              "%s --width 0 is not the whole table" % cmd)
        j = c.run([c.stint, cmd, "-i", data, "--format", "json", "--width", "40", fn], expect=0).stdout
        check(j == c.run([c.stint, cmd, "-i", data, "--format", "json", fn], expect=0).stdout,
              "%s --width changed the JSON" % cmd)
        p = c.run([c.stint, cmd, "-i", data, "--width", "wide", fn])
        one_line_error(p, ["--width", "wide"], "%s --width wide" % cmd)
    cut = c.run([c.stint, "callees", "-i", data, "--width", "100", "main"], expect=0).stdout
    check(any(l.endswith("..") for l in cut.splitlines()), "callees --width 100 cut no name:\n%s" % cut)
    p = c.run([c.stint, "callers", "-i", data, "--by", "line", "--width", "100", "Foo::bar(int)"], expect=0)


@test
def test_view_filters_just_my_code(c):
    """--just-my-code charges library time to the user function that called it;
    --module and --function keep matching rows; --tid selects a thread."""
    rec, data = c.record([c.prog("e2e_libcalls")])
    rep = c.report_json(data)
    jmc = c.report_json(data, options=["--just-my-code"])
    names = [f["name"] for f in jmc["functions"]]
    check("usleep" not in names and "qsort" not in names, "library functions left with --just-my-code: %s" % names)
    u, u0 = func(jmc, "use_libc"), func(rep, "use_libc")
    check(abs(u["elapsed_exclusive"] - (u0["elapsed_inclusive"] - func(rep, "cmp_ints")["elapsed_inclusive"])) < 0.01 * u0["elapsed_inclusive"] + 1000,
          "use_libc EE with --just-my-code %s, expected its EI less cmp_ints' (%s)" % (
              u["elapsed_exclusive"], u0["elapsed_inclusive"]))
    # the per-call figures are of each call's own code: the average between the minimum and the
    # maximum (the hidden time was in the average only, above the maximum)
    for f in jmc["functions"]:
        for k in ("elapsed_inclusive", "elapsed_exclusive", "application_inclusive", "application_exclusive"):
            if f["calls"]:
                check(f[k + "_min"] - 1 <= f[k + "_avg"] <= f[k + "_max"] + 1,
                      "--just-my-code: %s %s average %s outside [%s, %s]" % (
                          f["name"], k, f[k + "_avg"], f[k + "_min"], f[k + "_max"]))
    libc = c.report_json(data, options=["--module", "libc*"])
    for f in libc["functions"]:
        if f["module"].startswith("libc"):
            continue
        # callers of libc functions stay (their paths go through libc)
        check(f["name"] in ("main", "use_libc", "cmp_ints"), "unexpected row with --module libc*: %s" % f["name"])
    only = c.report_json(data, options=["--function", "cmp_*"])
    check(func(only, "cmp_ints")["calls"] == calls(rep, "cmp_ints"), "--function cmp_* lost calls")
    rec, data = c.record([c.prog("e2e_threads")])
    rep = c.report_json(data)
    alpha = [t for t in rep["threads"] if t["name"] == "alpha"][0]
    sel = c.report_json(data, options=["--tid", str(alpha["tid"])])
    check([t["tid"] for t in sel["threads"]] == [alpha["tid"]], "--tid kept threads %s" % sel["threads"])
    check(calls(sel, "alpha_step") == 100 and not function_rows(sel, "beta_step"),
          "--tid alpha: functions of other threads remain")


@test
def test_filter_naming_nothing(c):
    """--function or --module that matches nothing in the data file (a typo, another program's
    file) is an error of one line in every command that takes them: report, callers, export and
    html printed an empty report or wrote an empty file, exit 0, as if it were a measurement.
    diff accepts a function that is in one of its two files (a new or a removed function)."""
    rec, data = c.record([c.prog("e2e_libcalls")])
    out = os.path.join(c.tmp, "out")
    for args in (["report"], ["report", "--tree"], ["callers", "use_libc"], ["callees", "use_libc"],
                 ["export", "--format", "folded", "-o", out], ["html", "-o", out]):
        for flt, word in ((["--function", "no_such_fn"], "no_such_fn"), (["--module", "nomod*"], "nomod*"),
                          (["--module", "libc*", "--function", "use_libc"], "use_libc")):
            p = c.run([c.stint] + args + ["-i", data] + flt, expect=None)
            one_line_error(p, [word, "matches"], " ".join(args + flt))
            check(not p.stdout, "%s printed a report: %r" % (" ".join(args + flt), p.stdout[:200]))
    _, other = c.record([c.prog("e2e_recursion")], data=os.path.join(c.tmp, "other.data"))
    p = c.run([c.stint, "diff", data, other, "--function", "recurse"], expect=0)
    check("recurse" in p.stdout, "diff --function recurse, a function of the second file only: %r" % p.stdout)
    p = c.run([c.stint, "diff", data, other, "--function", "no_such_fn"], expect=None)
    one_line_error(p, ["no_such_fn", "neither"], "diff --function no_such_fn")


@test
def test_view_filters_selection(c):
    """A filter selects intervals and every view is computed from them (issue 8 item 2): with
    --function cmp_ints each ancestor (main, use_libc, qsort) has exactly the intervals through
    cmp_ints, one call each; every table's exclusive column, the folded export and callers add up
    to the selection; --tid selects one thread's intervals in every view."""
    rec, data = c.record([c.prog("e2e_libcalls")])
    rep = c.report_json(data)
    sel = c.report_json(data, options=["--function", "cmp_ints"])
    cmp = func(sel, "cmp_ints")
    check(abs(cmp["elapsed_inclusive"] - func(rep, "cmp_ints")["elapsed_inclusive"]) <= 1,
          "cmp_ints EI %s under its own filter, %s without" % (cmp["elapsed_inclusive"],
                                                                func(rep, "cmp_ints")["elapsed_inclusive"]))
    check(abs(sel["session"]["elapsed_inclusive"] - cmp["elapsed_inclusive"]) <= 1,
          "--function cmp_ints: the selection's EI %s is not cmp_ints' %s" % (
              sel["session"]["elapsed_inclusive"], cmp["elapsed_inclusive"]))
    for anc in ("main", "use_libc", "qsort"):
        a = func(sel, anc)
        for k in ("elapsed_inclusive", "application_inclusive"):
            check(abs(a[k] - cmp[k]) <= 1, "--function cmp_ints: ancestor %s has %s %s, cmp_ints %s" % (
                anc, k, a[k], cmp[k]))
        check(a["calls"] == 1 and abs(a["elapsed_inclusive_pct"] - 100) < 0.01,
              "--function cmp_ints: ancestor %s %s" % (anc, a))
    check(not function_rows(sel, "usleep") and not function_rows(sel, "malloc"),
          "--function cmp_ints kept functions off its paths: %s" % function_list(sel))
    check(sel["selection"]["run_elapsed_inclusive"] == rep["session"]["elapsed_inclusive"],
          "selection object %s, run EI %s" % (sel["selection"], rep["session"]["elapsed_inclusive"]))

    def sums(r, what, empty_stacks=False):
        # (a thread's intervals with an empty stack, before its first entry, belong to no function)
        for kind in ("functions", "modules", "threads", "processes"):
            for k, tot in (("elapsed_exclusive", "elapsed_inclusive"), ("application_exclusive", "application_inclusive")):
                s = sum(x[k] for x in r[kind])
                want = r["session"][tot]
                # (how long a thread runs before its first entry, its start in the runtime, is the
                # machine's load: 44 %% of alpha's time under CI's parallel tests; never more)
                if empty_stacks and kind in ("functions", "modules") and 0 < s <= want + len(r[kind]) + 1:
                    continue
                check(abs(s - want) <= len(r[kind]) + 1,
                      "%s: %s of the %s add up to %s, the selection has %s" % (what, k, kind, s, r["session"][tot]))

    for flt in (["--function", "cmp_ints"], ["--function", "usleep"], ["--module", "libc*"],
                ["--function", "cmp_ints", "--just-my-code"]):
        r = c.report_json(data, options=flt)
        sums(r, " ".join(flt))
        p = c.run([c.stint, "export", "-i", data, "--format", "folded"] + flt, expect=0)
        folded = sum(int(l.rsplit(" ", 1)[1]) for l in p.stdout.splitlines() if l.strip())
        check(abs(folded - r["session"]["elapsed_inclusive"]) <= 0.001 * r["session"]["elapsed_inclusive"] + 100,
              "%s: the folded export holds %s ns, the selection %s" % (" ".join(flt), folded,
                                                                      r["session"]["elapsed_inclusive"]))
    p = c.run([c.stint, "callers", "-i", data, "--format", "json", "--function", "cmp_ints", "use_libc"], expect=0)
    b = json.loads(p.stdout)
    check(abs(b["function"]["elapsed_inclusive"] - cmp["elapsed_inclusive"]) <= 1,
          "callers use_libc --function cmp_ints: %s, cmp_ints has %s" % (b["function"], cmp["elapsed_inclusive"]))
    # threads: one thread's intervals, in every view
    rec, data = c.record([c.prog("e2e_threads")])
    rep = c.report_json(data)
    alpha = [t for t in rep["threads"] if t["name"] == "alpha"][0]
    sel = c.report_json(data, options=["--tid", str(alpha["tid"])])
    check(sel["session"]["elapsed_inclusive"] == alpha["elapsed_inclusive"],
          "--tid alpha: selection %s, the thread %s" % (sel["session"], alpha))
    sums(sel, "--tid alpha", empty_stacks=True)
    check(calls(sel, "alpha_step") == 100 and not function_rows(sel, "beta_step"),
          "--tid alpha: functions of other threads remain")


DEEP_TIMEOUT = 600  # a hang guard for the views of 200,000-deep recursion, not a timing check


def json_balanced(text):
    """Whether text is one JSON value with balanced brackets and strings, checked
    without recursion (Python's json module cannot nest 200,000 levels)."""
    depth, in_str, esc, seen = 0, False, False, False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            seen = True
        elif ch in "]}":
            depth -= 1
            if depth < 0:
                return False
    return seen and depth == 0 and not in_str


@test
def test_deep_recursion_views(c):
    """Recursion 200,000 deep (and ping/pong 20,000 deep): every view and export works, with
    output linear in the data: the tree iterative with bounded indentation, folded and pprof
    stacks with recursion folded (each function once per path), bounded memory."""
    _, data = c.record([c.prog("e2e_deep_recursion")])
    depth = 200000
    out = os.path.join(c.tmp, "deep.out")

    def run(args, expect=0):
        return c.run([c.stint] + args + ["-i", data], expect=expect, timeout=DEEP_TIMEOUT)

    rep = c.report_json(data)
    expect_calls(rep, {"recurse": depth + 1, "ping": 10001, "pong": 10000, "main": 1})
    # the text tree: one row per node shown, indentation bounded
    p = run(["report", "--tree"])
    rows = p.stdout.count("recurse [")
    check(rows > depth // 2, "the tree shows only %d levels of recurse" % rows)
    longest = max(len(l) for l in p.stdout.splitlines())
    check(longest < 400, "a tree row is %d characters long: the indentation grows with the depth" % longest)
    check("(depth 200000)" in p.stdout or rows < depth, "the deepest rows do not say their depth")
    # JSON tree: nested as deep as the recursion, balanced, linear in size
    p = run(["report", "--tree", "--format", "json"])
    check(json_balanced(p.stdout), "report --tree --format json is not balanced JSON")
    check(len(p.stdout) < 600 * (depth + 20000), "the JSON tree is %d bytes" % len(p.stdout))
    # CSV tree: paths elided in the middle
    p = run(["report", "--tree", "--format", "csv"])
    longest = max(len(l) for l in p.stdout.splitlines())
    check(longest < 64 * 40 + 400, "a CSV tree row is %d characters long" % longest)
    # folded: recursion folded, so a handful of short lines
    p = run(["export", "--format", "folded"])
    lines = p.stdout.splitlines()
    check(0 < len(lines) < 100, "folded export has %d lines" % len(lines))
    for l in lines:
        stack = l.rsplit(" ", 1)[0].split(";")
        check(len(stack) == len(set(stack)), "a folded stack repeats a function: %s" % l[:200])
    check(any(l.startswith("deep;recurse ") for l in lines), "no deep;recurse stack (the thread's): %s" % lines[:5])
    check(any("ping;pong" in l for l in lines), "no ping;pong stack: %s" % lines[:5])
    # pprof, callgrind, chrome, html: complete and small enough
    run(["export", "--format", "pprof", "-o", out])
    check(0 < os.path.getsize(out) < 1 << 20, "pprof export is %d bytes" % os.path.getsize(out))
    run(["export", "--format", "callgrind", "-o", out])
    check(os.path.getsize(out) < 1 << 20, "callgrind export is %d bytes" % os.path.getsize(out))
    run(["export", "--format", "chrome", "--max-events", "20000", "-o", out])
    with open(out) as f:
        json.load(f)
    run(["html", "-o", out + ".html"])
    for what in ("callers", "callees"):
        run([what, "recurse"])
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    check(peak_mb < 3072, "a command needed %.0f MB" % peak_mb)
    print("deep recursion: tree %d rows, folded %d lines, peak RSS %.0f MB" % (rows, len(lines), peak_mb))


@test
def test_view_diff(c):
    """diff: the same program run with more work shows the change in calls and
    time of the function that did it, first."""
    rec, a = c.record([c.prog("e2e_recursion")], data=os.path.join(c.tmp, "a.data"))
    rec, b = c.record([c.prog("e2e_threads")], data=os.path.join(c.tmp, "b.data"))
    p = c.run([c.stint, "diff", "--format", "json", a, b], expect=0)
    d = json.loads(p.stdout)
    ra, rb = c.report_json(a), c.report_json(b)
    rows = {r["name"]: r for r in d["functions"]}
    check("alpha_step" in rows and not rows["alpha_step"]["in_a"], "alpha_step should be new in B")
    check(rows["alpha_step"]["delta_calls"] == 100, "alpha_step delta calls %s" % rows["alpha_step"]["delta_calls"])
    main = rows["main"]  # in the executable: matched by name across app-v1 and app-v2
    check(main["in_a"] and main["in_b"], "main of the two executables not matched: %s" % main)
    check(abs(main["a_elapsed_inclusive"] - func(ra, "main")["elapsed_inclusive"]) <= 1 and
          abs(main["b_elapsed_inclusive"] - func(rb, "main")["elapsed_inclusive"]) <= 1, "main values differ from the reports")
    changes = [abs(r["delta_elapsed_exclusive"]) for r in d["functions"]]
    check(changes == sorted(changes, reverse=True), "diff rows are not sorted by the size of the change")
    p = c.run([c.stint, "diff", a], expect=None)
    one_line_error(p, ["two data files"], "diff with one file")


@test
def test_err_missing_program(c):
    """record of a program that does not exist: non-zero, one line naming it."""
    name = "no_such_program_e2e_xyz"
    p = c.run([c.stint, "record", "-m", "instrument", "-o", os.path.join(c.tmp, "d"), "--", name])
    one_line_error(p, [name], "record of a missing program")
    check(p.returncode == 127, "record of a missing program exited %d, a shell's 127" % p.returncode)
    p = c.run([c.stint, "record", "-m", "instrument", "-o", os.path.join(c.tmp, "d"), "--", "/nonexistent/" + name])
    one_line_error(p, [name], "record of a missing path")
    check(p.returncode == 127, "record of a missing path exited %d, a shell's 127" % p.returncode)
    check(not os.path.exists(os.path.join(c.tmp, "d")), "a data file was written anyway")


@test
def test_err_not_instrumented(c):
    """record -m instrument of a program built without -finstrument-functions where Capstone
    is missing (STINT_NO_CAPSTONE stands in for that): one line naming Capstone and the
    rebuild options, no data file."""
    env = dict(os.environ, STINT_NO_CAPSTONE="1")
    p = c.run([c.stint, "record", "-m", "instrument", "-o", os.path.join(c.tmp, "d"), "--", c.prog("e2e_plain_prog")],
              env=env)
    one_line_error(p, ["Capstone", "-finstrument-functions", "-pg -mfentry", "-fpatchable-function-entry=5"],
                   "record of an uninstrumented program without Capstone")
    check(not os.path.exists(os.path.join(c.tmp, "d")), "a data file was written anyway")


@test
def test_err_crash_before_any_call(c):
    """A program that dies of a signal before any call is recorded (nothing patched: Capstone
    missing): record says it died of that signal and exits as it did (128 + 11), instead of
    blaming a build without -finstrument-functions."""
    env = dict(os.environ, STINT_NO_CAPSTONE="1")
    p = c.run([c.stint, "record", "-m", "instrument", "-o", os.path.join(c.tmp, "d"), "--",
               c.prog("e2e_crash_early_plain")], env=env)
    check(p.returncode == 128 + 11, "record exited %d, expected %d (the program's SIGSEGV)" % (p.returncode, 128 + 11))
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and "signal 11" in lines[0] and "-finstrument-functions" not in lines[0],
          "expected one line naming signal 11, got:\n%s" % p.stderr)


@test
def test_clock_turned_off(c):
    """A thread that turns its time-stamp counter off (seccomp's strict mode, prctl PR_SET_TSC;
    a thread and a forked child started after inherit it): the program prints the same and
    exits 0 under stint (a probe's clock read killed it with SIGSEGV), the calls before are
    recorded, and the report says why the recording stopped."""
    for prog in ("e2e_clock_off", "e2e_clock_off_plain"):
        for mode in ("strict", "tsc"):
            argv = [c.prog(prog), mode]
            alone = c.run(argv, expect=0).stdout
            for clock in ("tsc", "monotonic"):
                data = os.path.join(c.tmp, "%s-%s-%s.data" % (prog, mode, clock))
                rec = c.run([c.stint, "record", "-m", "instrument", "--clock", clock, "-o", data, "--"] + argv)
                check(rec.returncode == 0 and rec.stdout == alone,
                      "%s %s, --clock %s: exit %d, printed %r (alone: 0, %r)" % (
                          prog, mode, clock, rec.returncode, rec.stdout, alone))
                rep = c.report_json(data)
                check(calls(rep, "before_off") == 2, "%s %s: before_off %d calls, expected 2" % (
                    prog, mode, calls(rep, "before_off")))
                text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
                check("time-stamp counter" in text, "%s %s: the report does not say why the recording stopped" % (
                    prog, mode))
                check("time-stamp counter" in rec.stderr, "%s %s: record does not say why the recording stopped: %s" % (
                    prog, mode, rec.stderr.strip()))


@test
def test_file_size_limit(c):
    """A file size limit (RLIMIT_FSIZE, ulimit -f): growing a file past it raises SIGXFSZ, which
    ended the program under stint (its buffer files grew past it).  Lowered by the program below
    a first buffer: the same output and exit, the threads and child started after counted as not
    recorded; lowered below a later chunk: the thread stops recording there, flagged; set before
    stint: one line before the program runs, exit 2."""
    import resource
    prog = c.prog("e2e_file_limit")
    for n, limit in ((10, 100000), (3000000, 2000000)):
        argv = [prog, str(n), str(limit)]
        alone = c.run(argv, expect=0).stdout
        data = os.path.join(c.tmp, "fsz%d.data" % n)
        rec = c.run([c.stint, "record", "-o", data, "--"] + argv)
        check(rec.returncode == 0 and rec.stdout == alone, "limit %d: record exited %d, printed %r (alone: %r)" % (
            limit, rec.returncode, rec.stdout, alone))
        rep = c.report_json(data)
        text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
        if n == 10:
            check(calls(rep, "limited_work") == 10 and rep.get("unrecorded_threads", 0) >= 1,
                  "limit %d: limited_work %d calls (10), %s threads not recorded (1 or more)" % (
                      limit, calls(rep, "limited_work"), rep.get("unrecorded_threads")))
        else:
            check(0 < calls(rep, "limited_work") < n and "file size limit" in text,
                  "limit %d: limited_work %d calls (fewer than %d), and the report must name the limit:\n%s" % (
                      limit, calls(rep, "limited_work"), n, text[:1500]))
            check("file size limit" in rec.stderr, "limit %d: record does not say the thread stopped: %s" % (
                limit, rec.stderr.strip()))

    def low_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (200 * 1024, 200 * 1024))

    data = os.path.join(c.tmp, "before.data")
    p = subprocess.run([c.stint, "record", "-o", data, "--", prog, "10", "100000"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, preexec_fn=low_limit, timeout=RECORD_TIMEOUT)
    one_line_error(p, ["ulimit -f"], "record under a file size limit of 200 KiB")
    check(p.stdout == "", "the program ran anyway: %r" % p.stdout)
    check(not os.path.exists(data), "a data file was written anyway")


@test
def test_unprobed_library_calls(c):
    """A library function whose GOT entry the code also reads as data (its address taken; LLVM
    loads hot calls' entries into registers) is left alone, its calls not recorded: record names
    it, the report says how many, and the program's pointer comparison is unchanged."""
    prog = c.prog("e2e_got_data")
    alone = c.run([prog], expect=0).stdout
    check(alone == "got data 20 1\n", "e2e_got_data printed %r" % alone)
    rec, data = c.record([prog])
    check(rec.stdout == alone, "under stint it printed %r instead of %r" % (rec.stdout, alone))
    check("getppid" in rec.stderr and "not recorded" in rec.stderr and "getpid," not in rec.stderr,
          "record does not name getppid (alone) as not recorded: %s" % rec.stderr)
    rep = c.report_json(data)
    check(rep.get("unprobed_library_functions") == 1, "unprobed_library_functions %s, expected 1" % rep.get(
        "unprobed_library_functions"))
    check(lib_calls(rep, "getpid") == 10 and lib_calls(rep, "getppid") == 0,
          "getpid %d calls (10), getppid %d (0: left alone)" % (lib_calls(rep, "getpid"), lib_calls(rep, "getppid")))
    text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
    check("# not probed: 1 library function" in text, "the report's header does not say it:\n%s" % text[:1500])
    # a variable reached through an untyped symbol (a Python extension's PyExc_ValueError) is no
    # function: it was named as one whose calls are not recorded
    rec, data = c.record([c.prog("e2e_dataref_host")], data=os.path.join(c.tmp, "dataref.data"))
    check(rec.stdout == "counter 5\n", "e2e_dataref_host printed %r" % rec.stdout)
    check("host_counter" not in rec.stderr and "not recorded" not in rec.stderr,
          "record names the variable host_counter as a function: %s" % rec.stderr)
    check(not c.report_json(data).get("unprobed_library_functions"), "a variable counted as a function not probed")


@test
def test_plt_got_calls_probed(c):
    """The program of test_unprobed_library_calls linked without -fno-plt: GNU ld sends the calls of
    getppid, whose GOT entry the code also reads (its address taken), through a .plt.got stub
    (`jmp *getppid@GOT(%rip)`), in its 8-byte form and in IBT's 16-byte one.  The stub's jmp is
    rewritten, the GOT entry left alone: every call is recorded and the address comparison is
    unchanged, in an instrumented build and in one patched at load.  Before, those calls were
    never recorded (Debian's git: 41,411 calls of free in a `git log`)."""
    progs = ["e2e_got_data_pltgot", "e2e_got_data_ibt"]
    if c.capstone():
        progs.append("e2e_got_data_plain")
    for name in progs:
        prog = c.prog(name)
        pltgot = c.run(["objdump", "-d", "-j", ".plt.got", prog], expect=0).stdout
        check("<getppid@plt>:" in pltgot, "%s: getppid is not called through .plt.got:\n%s" % (name, pltgot))
        alone = c.run([prog], expect=0).stdout
        check(alone == "got data 20 1\n", "%s printed %r" % (name, alone))
        rec, data = c.record([prog], data=os.path.join(c.tmp, name + ".data"))
        check(rec.stdout == alone, "%s under stint printed %r instead of %r" % (name, rec.stdout, alone))
        check("not recorded" not in rec.stderr, "%s: record says calls are not recorded: %s" % (name, rec.stderr))
        rep = c.report_json(data)
        check(not rep.get("unprobed_library_functions"), "%s: unprobed_library_functions %s, expected 0" % (
            name, rep.get("unprobed_library_functions")))
        check(lib_calls(rep, "getpid") == 10 and lib_calls(rep, "getppid") == 10,
              "%s: getpid %d calls, getppid %d (10 each)" % (name, lib_calls(rep, "getpid"), lib_calls(rep, "getppid")))


@test
def test_err_bad_option_one_line(c):
    """An option a command does not know, or one missing its value: one line naming it, status 2,
    for every command (before: getopt's line and the whole usage, 25 lines).  export and html
    accept --no-pager, as report, callers and annotate do."""
    for cmd in ("record", "report", "callers", "callees", "diff", "export", "html", "annotate", "recover"):
        p = c.run([c.stint, cmd, "--no-such-option"])
        one_line_error(p, [cmd, "--no-such-option"], "stint %s --no-such-option" % cmd)
        check(p.returncode == 2, "stint %s --no-such-option exited %d, expected 2" % (cmd, p.returncode))
    for argv, opt in ((["report", "-i"], "-i"), (["export", "--format"], "--format"), (["report", "-Z"], "-Z")):
        p = c.run([c.stint] + argv)
        one_line_error(p, [opt], "stint " + " ".join(argv))
    _, data = c.record([c.prog("e2e_tiny_calls")])
    for argv in (["export", "--format", "folded", "-o", os.path.join(c.tmp, "f.txt")],
                 ["html", "-o", os.path.join(c.tmp, "p.html")]):
        c.run([c.stint] + argv + ["-i", data, "--no-pager"], expect=0)


@test
def test_err_pg_without_mfentry(c):
    """record -m instrument of a program built with -pg alone (mcount after the prologue)."""
    env = dict(os.environ, STINT_NO_CAPSTONE="1")
    p = c.run([c.stint, "record", "-m", "instrument", "-o", os.path.join(c.tmp, "d"), "--", c.prog("e2e_plain_pg")],
              env=env, cwd=c.tmp)
    one_line_error(p, ["-mfentry", "-pg", "Capstone"], "record of a -pg program")
    check(not os.path.exists(os.path.join(c.tmp, "d")), "a data file was written anyway")


def unwritable_output(c, out, what):
    before = set(os.listdir(c.tmp))
    t0 = time.time()
    p = c.run([c.stint, "record", "-m", "instrument", "-o", out, "--", c.prog("e2e_exit_code"), "0"])
    line = one_line_error(p, [], what)
    check(out in line or os.path.dirname(out) in line,
          "%s: the error %r names neither %s nor its directory" % (what, line, out))
    check(time.time() - t0 < 5, "record took %.1f s to notice the unwritable output" % (time.time() - t0))
    leftovers = sorted(set(os.listdir(c.tmp)) - before)
    check(not leftovers, "record left files behind: %s" % leftovers)
    return line


@test
def test_err_output_under_proc(c):
    """record -o /proc/x/stint.data: non-zero, one clear line, nothing left behind."""
    unwritable_output(c, "/proc/x/stint.data", "record with -o under /proc")


@test
def test_err_output_under_regular_file(c):
    """record -o FILE/stint.data where FILE is a regular file (root ignores permission bits)."""
    reg = os.path.join(c.tmp, "regular_file")
    with open(reg, "w") as f:
        f.write("x\n")
    unwritable_output(c, os.path.join(reg, "stint.data"), "record with -o under a regular file")


@test
def test_err_output_is_directory(c):
    """record -o DIR: non-zero, one clear line mentioning the directory."""
    d = os.path.join(c.tmp, "a_directory")
    os.mkdir(d)
    unwritable_output(c, d, "record with -o naming a directory")


@test
def test_err_output_bad_names(c):
    """record -o with a name the data file cannot have: empty, ending in '/', longer than the file
    system allows (a file name, a directory name), in a directory that does not exist, '.'.  One
    line, exit 2, and the program never runs (it would write a marker).  Before, the program ran,
    then stint failed to write, kept a spool and blamed a full disk."""
    marker = os.path.join(c.tmp, "marker")
    prog = [c.prog("e2e_wait_file"), c.prog("e2e_wait_file"), marker]  # (released at once)
    long_name = "n" * 300 + ".data"
    for out, must in (("", "empty"), ("x.data/", "x.data/"), (long_name, "305 bytes"),
                      (os.path.join("d" * 300, "x.data"), "d" * 300), ("nodir/x.data", "nodir"),
                      (".", "directory")):
        before = sorted(os.listdir(c.tmp))
        p = c.run([c.stint, "record", "-o", out, "--"] + prog, cwd=c.tmp)
        line = one_line_error(p, [must], "record -o %r" % out[:40])
        check(p.returncode == 2, "record -o %r exited %d, expected 2" % (out[:40], p.returncode))
        check("disk" not in line and "room" not in line, "record -o %r blamed the disk: %s" % (out[:40], line))
        check(not os.path.exists(marker), "record -o %r ran the program before refusing the output" % out[:40])
        check(sorted(os.listdir(c.tmp)) == before, "record -o %r left %s" % (
            out[:40], sorted(set(os.listdir(c.tmp)) - set(before))))


def record_output_replaced(c, out):
    """Record e2e_wait_file; while it runs, put a directory where the data file goes, then let the
    program end.  Returns the record's CompletedProcess-like (returncode, stderr)."""
    release, pidfile = os.path.join(c.tmp, "release"), os.path.join(c.tmp, "pid")
    argv = [c.stint, "record", "-o", out, "--", c.prog("e2e_wait_file"), release, pidfile]
    c.log.append(" ".join(argv))
    rec = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        wait_for_file(pidfile, rec, "e2e_wait_file under stint")
        os.mkdir(out)
        open(release, "w").close()
        _, err = rec.communicate(timeout=RECORD_TIMEOUT)
    finally:
        open(release, "w").close()
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    rec.stderr = err
    return rec


@test
def test_output_replaced_while_recording(c):
    """The data file cannot be written once the program ended (a directory was put at its name
    meanwhile): one line saying what failed, naming the kept spool and `stint recover`, with no
    hint to wait for room (the disk is not full).  `stint recover` then makes the whole data file:
    the largest buffer had already become it, in place, before the rename failed, and recover
    saw no thread in it ("recovered 0 processes, 0 threads", exit 0) and deleted it."""
    out = os.path.join(c.tmp, "out.data")
    rec = record_output_replaced(c, out)
    line = one_line_error(rec, [out, "Is a directory", "stint recover"], "record whose output became a directory")
    check("room" not in line and "disk" not in line, "record blamed the disk: %s" % line)
    spools = spools_left(c.tmp)
    check(len(spools) == 1, "the spool was not kept: %s" % os.listdir(c.tmp))
    data = os.path.join(c.tmp, "recovered.data")
    p = c.run([c.stint, "recover", os.path.join(c.tmp, spools[0]), "-o", data], expect=0)
    check("1 process, 1 thread" in p.stderr, "recover said: %s" % p.stderr.strip())
    rep = c.report_json(data)
    expect_calls(rep, {"main": 1})
    check(calls(rep, "tick") > 0, "tick not recovered: %s" % function_list(rep))
    check(not spools_left(c.tmp), "recover left the spool: %s" % spools_left(c.tmp))


@test
def test_err_report_missing_file(c):
    path = os.path.join(c.tmp, "does_not_exist.data")
    p = c.run([c.stint, "report", "-i", path, "--format", "json"])
    one_line_error(p, [path], "report of a missing file")
    check(p.stdout == "", "report of a missing file printed on stdout: %s" % p.stdout[:200])


@test
def test_err_report_foreign_file(c):
    """report of a file that is not a stint data file (text, then ELF)."""
    path = os.path.join(c.tmp, "foreign.txt")
    with open(path, "w") as f:
        f.write("this is not a stint data file\n" * 200)
    p = c.run([c.stint, "report", "-i", path, "--format", "json"])
    one_line_error(p, [path], "report of a text file")
    p = c.run([c.stint, "report", "-i", c.prog("e2e_plain_prog"), "--format", "json"])
    one_line_error(p, ["e2e_plain_prog"], "report of an ELF file")


@test
def test_err_report_empty_file(c):
    path = os.path.join(c.tmp, "empty.data")
    open(path, "w").close()
    p = c.run([c.stint, "report", "-i", path, "--format", "json"])
    one_line_error(p, [path], "report of an empty file")


@test
def test_err_data_file_not_regular(c):
    """A FIFO (or a device) given as the data file to every reading command: one line saying it
    is not a regular file, exit 2, at once.  Opening the FIFO waited for a writer forever."""
    fifo = os.path.join(c.tmp, "f.data")
    os.mkfifo(fifo)
    rec, good = c.record([c.prog("e2e_threads")])
    out = os.path.join(c.tmp, "out")
    for path in (fifo, "/dev/null"):
        for argv in (["report", "-i", path], ["callers", "-i", path, "main"], ["callees", "-i", path, "main"],
                     ["export", "-i", path, "--format", "folded", "-o", out],
                     ["html", "-i", path, "-o", out + ".html"], ["annotate", "-i", path, "main"],
                     ["diff", path, good], ["diff", good, path]):
            p = c.run([c.stint] + argv, timeout=10)
            one_line_error(p, [path, "not a regular file"], "stint " + " ".join(argv))
            check(p.returncode == 2, "stint %s exited %d, expected 2" % (" ".join(argv), p.returncode))
            check(not os.path.exists(out) and not os.path.exists(out + ".html"), "an output was written")


@test
def test_report_truncated_file(c):
    """A data file cut in half: report prints what is left, warns 'truncated' in one line on stderr,
    and exits 3 (a damaged file, reported as far as it could be read)."""
    _, data = c.record([c.prog("e2e_threads")])
    full = c.report_json(data)
    size = os.path.getsize(data)
    with open(data, "r+b") as f:
        f.truncate(size // 2)
    p = c.run([c.stint, "report", "-i", data, "--format", "json"])
    check(p.returncode == 3, "report of a truncated file exited %d, not 3: %s" % (p.returncode, p.stderr.strip()))
    check("truncated" in p.stderr, "report of a truncated file did not warn 'truncated' on stderr: %r" % p.stderr)
    check(len([l for l in p.stderr.splitlines() if l.strip()]) == 1, "not one line on stderr: %s" % p.stderr)
    try:
        rep = json.loads(p.stdout)
    except ValueError as e:
        raise TestFailure("report of a truncated file printed invalid JSON: %s" % e)
    check_report_invariants(rep)
    check("truncated" in rep.get("damage", ""), "the JSON has no 'damage' key saying truncated: %s" % rep.get("damage"))
    for r in rep["functions"]:
        fr = function_rows(full, r["name"], r["module"])
        check(fr and r["calls"] <= fr[0]["calls"],
              "%s has %d calls in the truncated file, more than in the full one" % (r["name"], r["calls"]))
    # cut inside the header too: must fail with one clear line
    with open(data, "r+b") as f:
        f.truncate(10)
    p = c.run([c.stint, "report", "-i", data, "--format", "json"])
    one_line_error(p, [data], "report of a file cut to 10 bytes")


@test
def test_report_consistent_views(c):
    """The CSV and table views agree with the JSON (calls per function, rows per thread)."""
    _, data = c.record([c.prog("e2e_threads")])
    rep = c.report_json(data)
    p = c.run([c.stint, "report", "-i", data, "--format", "csv"], expect=0)
    lines = p.stdout.splitlines()
    header = lines[0].split(",")
    check(header[:3] == ["name", "module", "calls"], "CSV header %s" % header)
    csv_calls = {}
    for l in lines[1:]:
        f = l.split(",")
        csv_calls[(f[0], f[1])] = int(f[2])
    js_calls = {(r["name"], r["module"]): r["calls"] for r in rep["functions"]}
    check(csv_calls == js_calls, "CSV calls %s != JSON calls %s" % (csv_calls, js_calls))
    p = c.run([c.stint, "report", "-i", data, "--by", "thread", "--format", "csv"], expect=0)
    check(len(p.stdout.splitlines()) == 1 + len(rep["threads"]), "CSV by thread rows != JSON threads")
    p = c.run([c.stint, "report", "-i", data], expect=0)
    check("alpha_step" in p.stdout and "gamma_step" in p.stdout, "table report lacks functions:\n" + p.stdout)


# ---------------------------------------------------------------------------
# Process and thread life cycle: early start, directories, the program's own
# allocator, thread ends, exec environments, fatal signals, spool limits,
# the recorder's death
# ---------------------------------------------------------------------------

@test
def test_crash_int3_and_sigsys(c):
    """int3 (SIGTRAP, also blocked) and a seccomp SIGSYS, which return past their instruction,
    and ud2 (SIGILL), a division by zero (SIGFPE): the program dies as without stint
    (133, 159, 132, 136), its calls before the trap kept."""
    for mode, status in (("int3", 133), ("sigsys", 159), ("int3-blocked", 133), ("ill", 132), ("fpe", 136)):
        rec, data = c.record([c.prog("e2e_crash_trap"), mode], expect_status=status,
                             data=os.path.join(c.tmp, mode + ".data"))
        check("survived" not in rec.stdout, "%s: the program survived its trap: %r" % (mode, rec.stdout))
        rep = c.report_json(data)
        expect_calls(rep, {"before_trap": 5, "trap_here": 1, "main": 1})


@test
def test_program_defines_malloc(c):
    """A program with its own (instrumented) malloc/free/calloc/realloc: the report
    counts exactly the program's calls; the profiler never calls into the program."""
    for opts in ([], ["--no-libcalls"]):
        _, data = c.record([c.prog("e2e_own_malloc")], options=opts)
        rep = c.report_json(data)
        expect_calls(rep, {"malloc": 10, "free": 10, "calloc": 0, "realloc": 0, "main": 1})


@test
def test_preinit_array_functions(c):
    """Instrumented functions running from .preinit_array, before libc sets environ:
    the process is recorded, those calls included."""
    rec, rep = c.record_and_report([c.prog("e2e_preinit")])
    check(len(rep["processes"]) == 1, "expected one process, got %s (record said: %s)" % (
        rep["processes"], rec.stderr.strip()))
    expect_calls(rep, {"early_init": 1, "early_step": 3, "main_step": 5, "main": 1})


@test
def test_program_changes_directory(c):
    """The program chdir()s, then starts a thread, fills several chunks and forks, with
    the default relative data file: every call kept, no thread flagged, nothing left behind."""
    work = os.path.join(c.tmp, "cwd")
    os.mkdir(work)
    p = c.run([c.stint, "record", "--", c.prog("e2e_chdir_threads")], expect=0, cwd=work)
    check(os.listdir(work) == ["stint.data"], "the working directory holds %s, expected stint.data only" %
          os.listdir(work))
    check("disk" not in p.stderr, "record blames the disk: %s" % p.stderr.strip())
    rep = c.report_json(os.path.join(work, "stint.data"))
    expect_calls(rep, {"worker_step": 300000, "main_step": 300000, "child_step": 10,
                       "worker_main": 1, "main": 1})
    check(len(rep["threads"]) == 3, "expected 3 threads (main, worker, child), got %s" % rep["threads"])
    table = c.run([c.stint, "report", "-i", os.path.join(work, "stint.data")], expect=0).stdout
    check("disk" not in table, "the report blames the disk:\n%s" % table[:2000])


@test
def test_thread_specific_data_destructors(c):
    """The program's thread-specific-data destructors run after its thread function
    returned, also in a second round: all their calls are recorded in that thread."""
    _, rep = c.record_and_report([c.prog("e2e_tsd_destructor")])
    expect_calls(rep, {"tsd_main": 1, "tsd_dtor": 1, "dtor_step": 3, "tsd_again": 2, "main": 1})
    check(len(rep["threads"]) == 2, "expected 2 threads, got %s" % rep["threads"])


@test
def test_children_with_own_environment(c):
    """Children started with an environment that lacks LD_PRELOAD and STINT_* (posix_spawn,
    posix_spawnp, execve, execle, execvpe, fexecve, execv after clearenv): each is recorded,
    and its environment is the program's plus only what stint needs."""
    rec, rep = c.record_and_report([c.prog("e2e_spawn_env"), c.prog("e2e_env_child")])
    check(rec.stderr.count("spawn_env") == 0 and "env_child" not in rec.stderr,
          "a child's environment was wrong: %s" % rec.stderr.strip())
    expect_calls(rep, {"launch_step": 7})
    expect_calls(rep, {"env_child_work": 7}, module="e2e_env_child")
    # (plus the program and its 5 fork children that exec'd: a fork is a process entry)
    children = [p for p in rep["processes"] if "e2e_spawn_env" not in p["command"]]
    check(len(children) == 7 and len(rep["processes"]) == 13,
          "expected 7 env_child processes of 13, got %d of %d: %s" % (
              len(children), len(rep["processes"]), [p["command"] for p in rep["processes"]]))


@test
def test_thread_beyond_chunk_table(c):
    """No per-thread limit but the disk: a thread that writes more chunks than the spool
    header's table holds (7.5 GiB; STINT_TEST_TABLE=1 shortens the table to one chunk here)
    keeps every event, and nothing says it stopped."""
    data = os.path.join(c.tmp, "stint.data")
    env = dict(os.environ, STINT_TEST_TABLE="1")
    p = c.run([c.stint, "record", "-o", data, "--", c.prog("e2e_chdir_threads")], expect=0, env=env)
    check("disk" not in p.stderr and "limit" not in p.stderr, "record says recording stopped: %s" % p.stderr)
    rep = c.report_json(data)
    expect_calls(rep, {"worker_step": 300000, "main_step": 300000, "child_step": 10, "main": 1})
    table = c.run([c.stint, "report", "-i", data], expect=0).stdout
    check("missing" not in table, "the report says events are missing:\n%s" % table[:2000])


@test
def test_notes_beyond_area(c):
    """Function addresses and call sites are told to the recorder through a notes area of
    each thread's buffer, and past its 130560 entries through the thread's .fns file:
    with STINT_TEST_NOTES=0 and =3 (every note, or all but the first 3, in the file), on
    threads and a fork child, every function still has its name; and in a program that
    SIGKILLs itself (the file is written through shared mappings, not write calls)."""
    for n in ("0", "3"):
        data = os.path.join(c.tmp, "notes%s.data" % n)
        env = dict(os.environ, STINT_TEST_NOTES=n)
        c.run([c.stint, "record", "-o", data, "--", c.prog("e2e_chdir_threads")], expect=0, env=env)
        rep = c.report_json(data)
        expect_calls(rep, {"worker_step": 300000, "main_step": 300000, "child_step": 10, "main": 1})
        unnamed = [f["name"] for f in rep["functions"] if f["name"].startswith("0x")]
        check(not unnamed, "STINT_TEST_NOTES=%s: functions without a name: %s" % (n, unnamed))
    # the file is written through mappings: a program that SIGKILLs itself keeps its names
    data = os.path.join(c.tmp, "killed.data")
    c.run([c.stint, "record", "-o", data, "--", c.prog("e2e_self_kill")], expect=137,
          env=dict(os.environ, STINT_TEST_NOTES="0"))
    rep = c.report_json(data)
    expect_calls(rep, {"tick": 1000, "die_now": 1, "main": 1})
    unnamed = [f["name"] for f in rep["functions"] if f["name"].startswith("0x")]
    check(not unnamed, "killed with STINT_TEST_NOTES=0: functions without a name: %s" % unnamed)


SPOOL_HDR_FLAGS = 32      # offset of the flags word in a spool buffer's header (fmt_spool.h)
SPOOL_HDR_NUSED = 64      # offset of nused
SPOOL_ORPHANED = 1 << 4   # FMT_SPOOL_ORPHANED


def spool_buffers(top):
    """The thread buffer files (*.buf) of the spool directories under top."""
    found = []
    for d, _, files in os.walk(top):
        found += [os.path.join(d, f) for f in files if f.endswith(".buf")]
    return found


def spool_word(path, off):
    with open(path, "rb") as f:
        f.seek(off)
        b = f.read(4)
    return struct.unpack("<I", b)[0] if len(b) == 4 else 0


def wait_for(cond, what, timeout=20):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > timeout:
            raise TestFailure("waited %d s for %s" % (timeout, what))
        time.sleep(0.05)


@test
def test_recorder_killed_program_runs_on(c):
    """kill -9 of stint record: the program runs on unharmed, and its spool stops growing
    (the runtime notices at its next chunk and marks the thread's buffer orphaned)."""
    out = os.path.join(c.tmp, "out")
    os.mkdir(out)
    stop, done = os.path.join(c.tmp, "stop"), os.path.join(c.tmp, "done")
    argv = [c.stint, "record", "-o", os.path.join(out, "stint.data"), "--", c.prog("e2e_long_runner"), stop, done]
    c.log.append(" ".join(argv))
    rec = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prog_pid = None
    try:
        # recording for real: the first chunk filled while stint record watched
        wait_for(lambda: any(spool_word(b, SPOOL_HDR_NUSED) >= 1 for b in spool_buffers(out)),
                 "the program's first spool chunk")
        buf = spool_buffers(out)[0]
        prog_pid = int(re.match(r"p(\d+)-", os.path.basename(buf)).group(1))
        rec.kill()
        rec.wait()
        wait_for(lambda: spool_word(buf, SPOOL_HDR_FLAGS) & SPOOL_ORPHANED,
                 "the runtime to mark its buffer orphaned after stint record was killed")
        sizes = lambda: sorted((p, os.stat(p).st_size, os.stat(p).st_blocks)
                               for p in glob_files(out))
        before = sizes()
        os.kill(prog_pid, 0)  # still running
        time.sleep(0.5)       # (more rounds of calls; the check below does not depend on how many)
        check(sizes() == before, "the spool grew after the recorder died:\n  %s\n  %s" % (before, sizes()))
        open(stop, "w").close()
        wait_for(lambda: os.path.exists(done) and open(done).read().endswith("\n"), "the program to finish")
        check(open(done).read().startswith("rounds "), "the program wrote %r" % open(done).read())
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
        open(stop, "w").close()
        if prog_pid:
            for _ in range(200):
                try:
                    os.kill(prog_pid, 0)
                except OSError:
                    break
                time.sleep(0.05)


def glob_files(top):
    return [os.path.join(d, f) for d, _, files in os.walk(top) for f in files]


# ---------------------------------------------------------------------------
# Launchers: an uninstrumented first program is followed into what it runs
# ---------------------------------------------------------------------------

def launcher_common(c, launcher_argv):
    """stint record -- LAUNCHER... select_prog: the program's calls all recorded, its output intact."""
    prog = c.prog("e2e_select_prog")
    direct = c.run([prog, "300"], expect=0).stdout
    p, data = c.record(launcher_argv + [prog, "300"], options=["--no-libcalls"])
    check(direct in p.stdout, "the program's output changed under the launcher: %r" % p.stdout)
    check("not built" not in p.stderr and "no ELF" not in p.stderr and "not an ELF" not in p.stderr, "record complained: %s" % p.stderr.strip())
    rep = c.report_json(data)
    expect_calls(rep, {"alpha_one": 10, "alpha_two": 20, "beta_one": 30, "chain_4": 1, "slow_sleep": 3,
                       "tiny_leaf": 300, "main": 1}, module="e2e_select_prog")
    check(any(r["command"].startswith(prog) for r in rep["processes"]),
          "no process row for the program: %s" % [r["command"] for r in rep["processes"]])
    return rep


@test
def test_launcher_taskset(c):
    """stint record -- taskset -c 0 ./app."""
    taskset = shutil.which("taskset")
    if not taskset:
        raise TestSkip("taskset is not installed")
    launcher_common(c, [taskset, "-c", "0"])


@test
def test_launcher_env(c):
    """stint record -- env X=1 ./app (env itself is found in PATH)."""
    launcher_common(c, ["env", "STINT_E2E_X=1"])


@test
def test_launcher_script(c):
    """stint record -- ./run.sh: a script that execs the program, and one that runs it as a child."""
    for name, body in (("exec.sh", 'exec "$@"\n'), ("child.sh", '"$@"\nstatus=$?\necho script-done\nexit $status\n')):
        path = os.path.join(c.tmp, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
        launcher_common(c, [path])


@test
def test_launcher_nothing_instrumented(c):
    """A launcher that runs only uninstrumented programs, where Capstone is missing (with it,
    the plain program is patched at load; STINT_NO_CAPSTONE stands in): one line saying so,
    and no data file."""
    taskset = shutil.which("taskset") or shutil.which("env")
    data = os.path.join(c.tmp, "d")
    env = dict(os.environ, STINT_NO_CAPSTONE="1")
    p = c.run([c.stint, "record", "-o", data, "--", taskset] + (["-c", "0"] if "taskset" in taskset else [])
              + [c.prog("e2e_plain_prog")], env=env)
    one_line_error(p, ["nor any program it ran", "-finstrument-functions"], "record of a launcher of nothing")
    check(not os.path.exists(data), "a data file was written anyway")


# ---------------------------------------------------------------------------
# Record-time selection (stint record --function, --not-function, --module,
# --depth, --min-duration: runtime/rt_select.c, doc/stint-record.md)
# ---------------------------------------------------------------------------

def select_record(c, options, args=(), extra=()):
    """Record select_prog with a selection, raw values (no compensation): the report JSON."""
    _, data = c.record([c.prog("e2e_select_prog")] + list(args), options=list(options) + list(extra))
    return data, c.report_json(data, ["--no-compensation"])


def check_exclusive_absorbs(rep, parent, children):
    """The parent's raw EI is its EE plus its recorded children's EI, to the ns the JSON rounds to:
    the calls left out are in its exclusive time, nothing is lost."""
    p = func(rep, parent)
    kids = sum(func(rep, k)["elapsed_inclusive"] for k in children if function_rows(rep, k))
    n = 1 + len(children)
    check(abs(p["elapsed_exclusive"] + kids - p["elapsed_inclusive"]) <= n,
          "%s: EE %d + children's EI %d != EI %d" % (parent, p["elapsed_exclusive"], kids, p["elapsed_inclusive"]))


@test
def test_select_function(c):
    """--function (repeatable): only the matching functions, with their exact calls; chain_3's
    unrecorded callee is its exclusive time; the report says what was selected."""
    data, rep = select_record(c, ["--function", "alpha_*", "--function", "chain_3"])
    names = sorted(r["name"] for r in rep["functions"])
    check(names == ["alpha_one", "alpha_two", "chain_3"], "functions recorded: %s" % function_list(rep))
    expect_calls(rep, {"alpha_one": 10, "alpha_two": 20, "chain_3": 1})
    r = func(rep, "chain_3")
    check(r["elapsed_exclusive"] == r["elapsed_inclusive"],
          "chain_3: EE %d != EI %d though chain_4 was not recorded" % (r["elapsed_exclusive"], r["elapsed_inclusive"]))
    check(rep.get("recorded_selection") == "--function 'alpha_*' --function 'chain_3'",
          "recorded_selection in the JSON is %r" % rep.get("recorded_selection"))
    p = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0)
    check("selected at record time: --function 'alpha_*' --function 'chain_3'" in p.stdout
          and "absent" in p.stdout, "the report header does not say what was selected:\n%s" % p.stdout[:1500])


@test
def test_select_not_function(c):
    """--not-function: those functions (and only those) are absent; a caller's exclusive time takes
    the left-out callee's whole time."""
    _, rep = select_record(c, ["--not-function", "alpha_", "--not-function", "chain_2"], extra=["--no-libcalls"])
    check(not function_rows(rep, "alpha_one") and not function_rows(rep, "alpha_two") and
          not function_rows(rep, "chain_2"), "left-out functions recorded: %s" % function_list(rep))
    expect_calls(rep, {"beta_one": 30, "chain_1": 1, "chain_3": 1, "chain_4": 1, "slow_sleep": 3,
                       "tiny_loop": 1, "tiny_leaf": 2000, "main": 1})
    check_exclusive_absorbs(rep, "chain_1", ["chain_3"])
    check_exclusive_absorbs(rep, "main", ["beta_one", "chain_1", "slow_sleep", "tiny_loop"])


@test
def test_select_module(c):
    """--module: the functions of the matching modules only (here the C library's calls)."""
    _, rep = select_record(c, ["--module", "libc*"])
    check(rep["functions"], "nothing recorded")
    others = [r for r in rep["functions"] if not r["module"].startswith("libc")]
    check(not others, "functions of other modules recorded: %s" % others[:5])
    check(calls(rep, "nanosleep") == 3, "nanosleep: %d calls, expected 3" % calls(rep, "nanosleep"))
    _, rep = select_record(c, ["--module", "e2e_select*"])
    check(all(r["module"] == "e2e_select_prog" for r in rep["functions"]),
          "--module e2e_select*: %s" % function_list(rep))
    expect_calls(rep, {"alpha_one": 10, "tiny_leaf": 2000, "chain_4": 1})


@test
def test_select_depth(c):
    """--depth N: calls at most N selected frames deep (main is 1), their exact counts; deeper
    ones are in their caller's exclusive time."""
    _, rep = select_record(c, ["--depth", "2"], extra=["--no-libcalls"])
    expect_calls(rep, {"main": 1, "chain_1": 1, "chain_2": 0, "tiny_loop": 1, "tiny_leaf": 0,
                       "slow_sleep": 3, "alpha_one": 10})
    check_exclusive_absorbs(rep, "chain_1", [])
    _, rep = select_record(c, ["--depth", "3"], extra=["--no-libcalls"])
    expect_calls(rep, {"chain_1": 1, "chain_2": 1, "chain_3": 0, "tiny_leaf": 2000})
    # with a name selection, depth counts selected frames only
    _, rep = select_record(c, ["--depth", "2", "--function", "chain_*"], extra=["--no-libcalls"])
    expect_calls(rep, {"chain_1": 1, "chain_2": 1, "chain_3": 0, "main": 0})


@test
def test_select_min_duration(c):
    """--min-duration 1ms (clock monotonic: ticks are ns): every recorded call lasted at least
    1 ms (raw); the 20 ms sleeps are all there; the tiny calls are gone, their time in their
    callers' exclusive time, and the session's time is whole."""
    _, rep = select_record(c, ["--min-duration", "1ms", "--clock", "monotonic"], args=["20000"],
                           extra=["--no-libcalls"])
    expect_calls(rep, {"slow_sleep": 3, "main": 1})
    for r in rep["functions"]:
        check(r["elapsed_inclusive_min"] >= 1000000,
              "%s: a recorded call lasted %d ns, under --min-duration 1ms" % (r["name"], r["elapsed_inclusive_min"]))
    # a tiny call is kept only if it lasted 1 ms (preempted on a loaded machine): rare
    check(calls(rep, "tiny_leaf") < 100, "tiny_leaf: %d of 20000 calls kept" % calls(rep, "tiny_leaf"))
    check(calls(rep, "alpha_one") + calls(rep, "beta_one") < 20, "tiny calls kept: %s" % function_list(rep))
    kids = [r["name"] for r in rep["functions"] if r["name"] not in ("main", "tiny_leaf", "chain_2",
                                                                      "chain_3", "chain_4")]
    kids.remove("main") if "main" in kids else None
    check_exclusive_absorbs(rep, "main", [k for k in kids])
    # nothing lost: the recorded functions' exclusive times add up to main's inclusive time
    total_ee = sum(r["elapsed_exclusive"] for r in rep["functions"])
    check(abs(total_ee - func(rep, "main")["elapsed_inclusive"]) <= len(rep["functions"]) + 1,
          "functions' EE add up to %d, main's EI is %d" % (total_ee, func(rep, "main")["elapsed_inclusive"]))
    check("--min-duration 1ms" in (rep.get("recorded_selection") or ""), "recorded_selection: %r" %
          rep.get("recorded_selection"))


@test
def test_select_patched(c):
    """A program instrumented through its NOP patch sites: --function leaves the other sites
    unpatched, the selected function's calls are all there; --depth 1 keeps main alone."""
    prog = c.prog("e2e_patch_mix_patch")
    _, data = c.record([prog], options=["--no-libcalls"])
    whole = c.report_json(data)
    n = calls(whole, "fib")
    check(n > 1, "fib not recorded without a selection: %s" % function_list(whole))
    _, data = c.record([prog], options=["--no-libcalls", "--function", "fib"], data=os.path.join(c.tmp, "f.data"))
    rep = c.report_json(data)
    check([r["name"] for r in rep["functions"]] == ["fib"], "--function fib recorded %s" % function_list(rep))
    expect_calls(rep, {"fib": n})
    _, data = c.record([prog], options=["--no-libcalls", "--depth", "1"], data=os.path.join(c.tmp, "d.data"))
    rep = c.report_json(data)
    mains = [r for r in rep["functions"] if r["name"] == "main"]
    # (thread_body ends in a tail call of fib, its callee as in a -finstrument-functions build)
    first = ("main", "thread_body", "on_signal", "on_alt_signal")
    others = [r for r in rep["functions"] if r["name"] not in first]
    check(mains and mains[0]["calls"] == 1 and not others,
          "--depth 1: %s (threads' and signal handlers' first frames aside)" % function_list(rep))


@test
def test_exception_closes_frames(c):
    """An exception caught in loop() leaves frames that no exit probe closes: a C function
    compiled without -fexceptions (no cleanup), and, built with clang, every instrumented
    frame (clang calls the exit probe only before a return).  They are closed where the
    exception lands: thrower's and mid's callers are what the program calls, and spin, called
    by loop after each catch, is loop's.  Left open, loop's later calls nested under the
    thrower (callers of thrower: thrower 90, loop 10; its inclusive time 90 % of the run)."""
    builds = [("gcc", c.prog("e2e_throw_through"))]
    clang, clangxx = shutil.which("clang"), shutil.which("clang++")
    if clang and clangxx:
        obj = os.path.join(c.tmp, "throw_mid.o")
        c.run([clang, "-O2", "-g", "-finstrument-functions", "-c", "-o", obj,
               os.path.join(PROG_SOURCES, "throw_mid.c")], expect=0)
        prog = os.path.join(c.tmp, "throw_through_clang")
        c.run([clangxx, "-O2", "-g", "-finstrument-functions", "-o", prog,
               os.path.join(PROG_SOURCES, "throw_through.cpp"), obj], expect=0)
        builds.append(("clang", prog))
    for cc, prog in builds:
        _, data = c.record([prog], data=os.path.join(c.tmp, cc + ".data"))
        rep = c.report_json(data)
        expect_calls(rep, {"loop(int)": 1, "mid": 100, "thrower": 100, "spin(long)": 100})
        for fn, want in (("thrower", {"mid": 100}), ("mid", {"loop(int)": 100}), ("spin(long)", {"loop(int)": 100})):
            p = c.run([c.stint, "callers", "-i", data, "--format", "json", fn], expect=0)
            got = {r["name"]: r["calls"] for r in json.loads(p.stdout)["callers"]}
            check(got == want, "%s build: callers of %s: %s, expected %s" % (cc, fn, got, want))
    if len(builds) == 1:
        raise TestSkip("the GCC build passed; no clang++ to build the clang one")


@test
def test_sigchld_ignored_exit_status(c):
    """stint started with SIGCHLD ignored (a shell's `trap '' CHLD`): the program's exit status
    is still stint's, in both modes, and the program still gets SIGCHLD ignored.  The kernel
    reaped the program: stint exited 130 for /bin/false (instrumentation), 0 (sampling)."""
    ignore = lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    for mode in ("instrument", "sample"):
        out = os.path.join(c.tmp, mode + ".data")
        for argv, want in ((["/bin/false"], 1), (["/bin/sh", "-c", "kill -SEGV $$"], 128 + signal.SIGSEGV)):
            p = c.run([c.stint, "record", "-f", "-m", mode, "-o", out, "--"] + argv, expect=None, preexec_fn=ignore)
            check(p.returncode == want, "-m %s, SIGCHLD ignored: %s exited %d, expected %d: %s" % (
                mode, argv[-1], p.returncode, want, p.stderr.strip()))
        p = c.run([c.stint, "record", "-f", "-m", mode, "-o", out, "--", "grep", "SigIgn", "/proc/self/status"],
                  expect=0, preexec_fn=ignore)
        m = re.search(r"SigIgn:\s*([0-9a-f]+)", p.stdout)
        check(m and int(m.group(1), 16) & (1 << (signal.SIGCHLD - 1)),
              "-m %s: the program does not get SIGCHLD ignored: %s" % (mode, p.stdout))


@test
def test_coroutine_resumed_elsewhere(c):
    """Two coroutines left inside instrumented code (one in a qsort comparator) and finished on
    another thread: the program runs as alone, in every build, and their calls are counted.
    Patched at load and through -pg -mfentry sites, stint aborted the program ("lost track of a
    patched function's return address"): the return addresses were on the first thread's
    shadow stack."""
    for suffix in ("", "_plain", "_fentry", "_patch"):
        prog = c.prog("e2e_coroutine_migrate" + suffix)
        if suffix == "_plain":
            c.need_capstone()
        alone = c.run([prog], expect=0).stdout
        rec, data = c.record([prog], data=os.path.join(c.tmp, "co%s.data" % suffix))
        check(rec.stdout == alone, "%s: printed %r, alone %r" % (prog, rec.stdout, alone))
        rep = c.report_json(data)
        expect_calls(rep, {"first_body": 1, "second_body": 1, "inner": 1, "yield_now": 2})
    # one fiber run by three threads in turn, calling from two sites: each return where its call was
    prog = c.prog("e2e_fiber_sites_patch")
    alone = c.run([prog], expect=0).stdout
    for k in range(3):
        rec, _ = c.record([prog], data=os.path.join(c.tmp, "sites%d.data" % k))
        check(rec.stdout == alone, "fiber_sites printed %r, alone %r" % (rec.stdout, alone))


@test
def test_installed_path_with_space(c):
    """stint installed in a directory whose path has a space and a colon ("/home/me/My
    Projects"): the dynamic loader splits LD_PRELOAD there, and the program printed its error,
    with nothing recorded.  Now the program runs as alone and its calls are recorded; the link
    stint made for the loader is gone afterwards."""
    where = os.path.join(c.tmp, "my tools:v2")
    os.makedirs(where)
    here = os.path.dirname(os.path.abspath(c.stint))
    for f in os.listdir(here):
        if f == os.path.basename(c.stint) or (f.startswith("libstint") and f.endswith(".so")):
            shutil.copy(os.path.join(here, f), where)
    stint = os.path.join(where, os.path.basename(c.stint))
    prog = c.prog("e2e_coroutine_migrate")
    alone = c.run([prog], expect=0)
    tmp = os.path.join(c.tmp, "tmpdir")
    os.makedirs(tmp)
    data = os.path.join(c.tmp, "space.data")
    p = c.run([stint, "record", "-o", data, "--", prog], expect=0, env=dict(os.environ, TMPDIR=tmp))
    check(p.stdout == alone.stdout and "ld.so" not in p.stderr and "cannot be preloaded" not in p.stderr,
          "the program did not run as alone: %r\n%s" % (p.stdout[:300], p.stderr))
    rep = c.report_json(data)
    expect_calls(rep, {"first_body": 1, "second_body": 1})
    check(os.listdir(tmp) == [], "the loader's link was left: %s" % os.listdir(tmp))


@test
def test_spool_removed_by_program(c):
    """A program that removes stint's spool directory while it runs (git clean -fdx, rm -rf in
    the directory it was started in): one line saying so.  It said the raw recording was
    kept, in the directory that no longer existed."""
    work = os.path.join(c.tmp, "work")
    os.makedirs(work)
    p = c.run([c.stint, "record", "--", "/bin/sh", "-c", "rm -rf .stint-spool-*; %s" % c.prog("e2e_tiny_calls")],
              cwd=work)
    line = one_line_error(p, ["removed stint's spool directory"], "record of a program removing the spool")
    check("kept" not in line, "the error says the recording is kept: %s" % line)


@test
def test_low_descriptor_limit(c):
    """stint started with a soft limit of 8 open files (ulimit -S -n 8) and a program of 41
    threads: stint raises its own limit to the hard one and the program keeps the 8 it was
    given.  Writing the data file failed (Too many open files), exit 2."""
    import resource

    def low():
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (8, hard))

    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 256:
        raise TestSkip("the hard limit of open files is below 256 here")
    data = os.path.join(c.tmp, "low.data")
    p = c.run([c.stint, "record", "-o", data, "--", c.prog("e2e_many_threads")], expect=0, preexec_fn=low)
    rep = c.report_json(data)
    check(len(rep["threads"]) > 20, "%d threads recorded: %s" % (len(rep["threads"]), p.stderr.strip()))
    p = c.run([c.stint, "record", "-o", data, "-f", "--", "/bin/sh", "-c", "ulimit -n"], expect=0, preexec_fn=low)
    check(p.stdout.strip() == "8", "the program's limit of open files is %r, not the 8 it was given" % p.stdout)


@test
def test_inlined_call_site_line(c):
    """An instrumented function inlined into its caller (outer) passes outer's return address as
    its call site, a line of main: callers --by line said "outer at inline_site.c:<main's
    line>".  Such a call's line is unknown: one row of its calls, no line of another function,
    and annotate lists it below the source."""
    _, data = c.record([c.prog("e2e_inline_site")])
    rep = c.report_json(data)
    expect_calls(rep, {"helper": 3, "outer": 1})
    p = c.run([c.stint, "callers", "-i", data, "helper", "--by", "line", "--format", "json"], expect=0)
    rows = json.loads(p.stdout)["callers"]
    src = open(os.path.join(PROG_SOURCES, "inline_site.c")).read().splitlines()
    outer_call = [i + 1 for i, l in enumerate(src) if "OUTER CALL" in l][0]
    check(all(r["line"] != outer_call for r in rows) and sum(r["calls"] for r in rows) == 3,
          "callers --by line of helper: %s (main's line %d is no line of outer)" % (rows, outer_call))
    p = c.run([c.stint, "annotate", "-i", data, "outer"], expect=0)
    check("line unknown" in p.stdout, "annotate outer does not list the inlined calls:\n%s" % p.stdout[-1500:])


@test
def test_exception_in_local_library(c):
    """A C program dlopen'ing (RTLD_LOCAL) a C++ library that throws and catches: it runs as
    alone, instrumented and patched at load.  stint's stand-ins for __cxa_throw and the
    unwinder looked the real functions up in the global scope only, where the C program has no
    libstdc++, and called address 0: SIGSEGV before any call was recorded."""
    plugin = os.path.join(c.progs, "libe2e_throw_plugin.so")
    for prog in ("e2e_throw_host", "e2e_throw_host_plain"):
        if prog.endswith("_plain"):
            c.need_capstone()
        alone = c.run([c.prog(prog), plugin], expect=0).stdout
        check(alone == "caught 10\n", "%s alone printed %r" % (prog, alone))
        rec, data = c.record([c.prog(prog), plugin], data=os.path.join(c.tmp, prog + ".data"))
        check(rec.stdout == alone, "%s under stint printed %r" % (prog, rec.stdout))
        rep = c.report_json(data)
        check(calls(rep, "main") == 1 and calls(rep, "dlopen") == 1, "not recorded: %s" % function_list(rep))
    # a Rust library that panics and catches, loaded and unloaded four times: its libgcc_s goes with
    # it, and the stand-ins kept the first one's functions (the third cycle jumped into it)
    rustc = shutil.which("rustc")
    if rustc:
        src = os.path.join(c.tmp, "plug.rs")
        with open(src, "w") as f:
            f.write("use std::panic;\n#[inline(never)] fn boom(n: i32) -> i32 { if n % 3 == 0 { panic!(\"boom\") } n }\n"
                    "#[no_mangle] pub extern \"C\" fn plugin_catches(n: i32) -> i32 {\n"
                    "    panic::set_hook(Box::new(|_| {}));\n    let mut c = 0;\n"
                    "    for i in 0..n { if panic::catch_unwind(|| boom(i)).is_err() { c += 1 } }\n    c\n}\n")
        lib = os.path.join(c.tmp, "libplug_rs.so")
        c.run([rustc, "-O", "--crate-type", "cdylib", "-o", lib, src], expect=0, timeout=300)
        for prog in ("e2e_throw_host", "e2e_throw_host_plain"):
            alone = c.run([c.prog(prog), lib, "4"], expect=0).stdout
            rec, _ = c.record([c.prog(prog), lib, "4"], data=os.path.join(c.tmp, prog + "-rs.data"))
            check(rec.stdout == alone, "%s with the Rust library printed %r, alone %r" % (prog, rec.stdout, alone))


@test
def test_program_defines_mmap(c):
    """A program whose library defines mmap and munmap (gperftools' tcmalloc does), patched at
    load: it runs as alone (its count of mmap calls too) and its calls are recorded.  The
    runtime called mmap by name while patching, reached the library's half-patched mmap, and
    the program died of SIGSEGV before main; then its headers' calls still counted."""
    c.need_capstone()
    prog = c.prog("e2e_own_mmap")
    alone = c.run([prog], expect=0).stdout
    rec, data = c.record([prog])
    check(rec.stdout == alone, "printed %r, alone %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    expect_calls(rep, {"work": 100, "main": 1})


@test
def test_nops_before_entries(c):
    """-fpatchable-function-entry=N,M with M > 0 lists NOPs M bytes before each entry: a call
    written there ran into the middle of the function (=7,2: SIGSEGV) or was never run (=10,5:
    nothing recorded, nothing said).  Such a program is patched at load as one without sites:
    it runs as alone, and its calls are those of the =5 build."""
    c.need_capstone()
    _, data = c.record([c.prog("e2e_patch_mix_patch")], options=["--no-libcalls"], data=os.path.join(c.tmp, "5.data"))
    want = {n: calls(c.report_json(data), n) for n in ("fib", "tail_a", "jump_deep", "main")}
    for prog in ("e2e_patch_mix_pfe72", "e2e_patch_mix_pfe105"):
        alone = c.run([c.prog(prog)], expect=0)
        rec, data = c.record([c.prog(prog)], options=["--no-libcalls"], data=os.path.join(c.tmp, prog + ".data"))
        check(rec.stdout == alone.stdout, "%s printed %r, alone %r" % (prog, rec.stdout[:200], alone.stdout[:200]))
        expect_calls(c.report_json(data), want)


@test
def test_clang_patch_sites(c):
    """clang's -fpatchable-function-entry=5 sites (nopl 0x8(%rax,%rax,1), where GCC's has a 0
    displacement) are the compiler's patch sites: the program is instrumented through them,
    every call counted.  They were not recognised, and the program was patched at load instead
    (with Capstone, where it is installed)."""
    clang = shutil.which("clang")
    if not clang:
        raise TestSkip("no clang to build the program")
    src = os.path.join(c.tmp, "pfe.c")
    with open(src, "w") as f:
        f.write("#include <stdio.h>\n"
                "volatile long fibs, twices;\n"
                "__attribute__((noinline)) long fib(long n) { fibs++; return n < 2 ? n : (fib(n - 1) + 1) * (fib(n - 2) + 3) % 1009; }\n"
                "__attribute__((noinline)) long twice(long n) { twices++; return 2 * fib(n); }\n"
                "int main(void) { long s = 0; for (int i = 0; i < 5; i++) s += twice(10);\n"
                "  printf(\"%ld %ld\\n\", fibs, twices); return s > 0 ? 0 : 1; }\n")
    prog = os.path.join(c.tmp, "pfe")
    c.run([clang, "-O2", "-g", "-fpatchable-function-entry=5", "-o", prog, src], expect=0)
    p = c.run(["objdump", "-d", "--no-show-raw-insn", prog], expect=0)
    check("nopl   0x8(%rax,%rax,1)" in p.stdout, "clang left no nopl 0x8 sites: %s" % p.stdout[:800])
    fibs, twices = (int(x) for x in c.run([prog], expect=0).stdout.split())
    _, data = c.record([prog], options=["--no-libcalls"])
    rep = c.report_json(data)
    expect_calls(rep, {"main": 1, "twice": twices, "fib": fibs})
    p = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0)
    check("through the patch sites its compiler left" in p.stdout,
          "not instrumented through its patch sites:\n%s" % p.stdout[:1200])


@test
def test_select_stripped_offset(c):
    """A stripped program's functions have no names, and the report names each by the file
    offset of its start: --function and --not-function take those names (fib, of
    e2e_stripped_stripped, selected alone with all its calls, or left out alone)."""
    c.need_capstone()
    plain, stripped = c.prog("e2e_stripped_plain"), c.prog("e2e_stripped_stripped")
    fib = "0x%x" % harness.elf_symbols(plain)["fib"]
    mod = os.path.basename(stripped)
    _, data = c.record([stripped], options=["--no-libcalls"])
    whole = {r["name"]: r["calls"] for r in c.report_json(data)["functions"] if r["module"] == mod}
    check(whole.get(fib, 0) > 1 and len(whole) > 3, "without a selection, %s: %s" % (fib, whole))
    _, data = c.record([stripped], options=["--no-libcalls", "--function", fib], data=os.path.join(c.tmp, "f.data"))
    rep = c.report_json(data)
    check([(r["name"], r["calls"]) for r in rep["functions"]] == [(fib, whole[fib])],
          "--function %s recorded %s, expected its %d calls alone" % (fib, function_list(rep), whole[fib]))
    _, data = c.record([stripped], options=["--no-libcalls", "--not-function", fib],
                       data=os.path.join(c.tmp, "n.data"))
    got = {r["name"]: r["calls"] for r in c.report_json(data)["functions"] if r["module"] == mod}
    want = dict((k, v) for k, v in whole.items() if k != fib)
    check(got == want, "--not-function %s recorded %s, expected %s" % (fib, got, want))


@test
def test_exec_unloadable_named(c):
    """A program the recorded one runs that cannot load stint's runtime is named, not left
    out without a word: a statically linked one (and, as root, a set-user-ID program of
    another user), exec'd by a fork child; it runs as without stint. An exec that fails
    names nothing; the spool is removed whole."""
    static = c.prog("e2e_static_target")
    runner = c.prog("e2e_fork_exec")
    rec, _ = c.record([runner, static])
    check("static target ran" in rec.stdout, "the static program's output is missing: %r" % rec.stdout)
    check(re.search(r"1 program it ran was not recorded, %s \(statically linked\)" % re.escape(static), rec.stderr),
          "record did not name the statically linked program:\n%s" % rec.stderr)
    check(not [n for n in os.listdir(c.tmp) if n.startswith(".stint-spool")], "a spool was left: %s" % os.listdir(c.tmp))
    p = c.run([c.stint, "record", "-f", "-o", os.path.join(c.tmp, "fail.data"), "--", runner,
               os.path.join(c.tmp, "no-such-program")])
    check("not recorded" not in p.stderr, "a failed exec was named as a program run:\n%s" % p.stderr)
    if os.geteuid() == 0:
        suid = os.path.join(c.tmp, "suid_target")
        shutil.copy(c.prog("e2e_exec_target"), suid)
        os.chown(suid, 65534, 65534)
        os.chmod(suid, 0o4755)
        os.chmod(c.tmp, 0o755)  # (the setuid program, as nobody, reaches its own file)
        rec, _ = c.record([runner, suid], data=os.path.join(c.tmp, "suid.data"))
        check(re.search(r"not recorded, %s \(set-user-ID\)" % re.escape(suid), rec.stderr),
              "record did not name the set-user-ID program:\n%s" % rec.stderr)


@test
def test_exec_foreign_programs(c):
    """32-bit programs and musl's dynamically linked ones cannot load stint's runtime (a 64-bit
    glibc library): run by a recorded program they get LD_PRELOAD without it, and run as alone
    (glibc's 32-bit loader printed an error into the program's output, musl's refused to start
    it: exit 127), named as not recorded; launched directly, record refuses them in one line
    (it said the program never started the runtime, after running it).  Built here with
    gcc -m32 and musl-gcc where they are installed (Debian gcc-multilib, musl-tools)."""
    src = os.path.join(c.tmp, "foreign.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\nint main(void) { printf("foreign ran\\n"); fprintf(stderr, "its stderr\\n"); '
                'return 3; }\n')
    built = []
    for name, cc in (("t32", ["gcc", "-m32", "-O2"]), ("musl", ["musl-gcc", "-O2"])):
        out = os.path.join(c.tmp, name)
        if shutil.which(cc[0]) and subprocess.run(cc + ["-o", out, src], stdout=subprocess.PIPE,
                                                  stderr=subprocess.PIPE).returncode == 0:
            built.append(out)
    if not built:
        raise TestSkip("neither gcc -m32 nor musl-gcc can build here (Debian gcc-multilib, musl-tools)")
    script = os.path.join(c.tmp, "run both")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n" + "".join("'%s'; echo \"rc=$?\"\n" % b for b in built))
    os.chmod(script, 0o755)
    alone = subprocess.run([script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    rec, _ = c.record([script])
    check(rec.stdout == alone.stdout and "rc=3" in rec.stdout,
          "under stint printed %r, alone %r" % (rec.stdout, alone.stdout))
    errs = [l for l in rec.stderr.splitlines() if not l.startswith("stint:")]
    check(errs == alone.stderr.splitlines(), "the programs' stderr under stint %r, alone %r" % (
        errs, alone.stderr.splitlines()))
    check(re.search(r"%d programs? it ran (was|were) not recorded" % len(built), rec.stderr),
          "record did not name the programs:\n%s" % rec.stderr)
    for b in built:
        p = c.run([c.stint, "record", "-o", os.path.join(c.tmp, "direct.data"), "--", b])
        check(p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1 and "-m sample" in p.stderr and
              not p.stdout, "record of %s: exit %d, stdout %r, stderr:\n%s" % (b, p.returncode, p.stdout, p.stderr))


@test
def test_command_quoted(c):
    """The session's command line is quoted as a shell needs it (a path with a space, arguments
    with spaces, a quote, a dollar sign, an empty one): split as a shell does, it gives the
    arguments back.  They were joined by spaces: ./script.sh a "b c" showed as ./script.sh a b c."""
    import shlex
    script = os.path.join(c.tmp, "a script.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho \"$#\"\n")
    os.chmod(script, 0o755)
    argv = [script, "a", "b c", "it's", "$HOME", ""]
    for method in ("instrument", "sample"):
        data = os.path.join(c.tmp, method + ".data")
        p = c.run([c.stint, "record", "-m", method, "-o", data, "--"] + argv)
        check(p.returncode == 0 and p.stdout == "5\n", "%s: exit %d, printed %r" % (method, p.returncode, p.stdout))
        cmd = json.loads(c.run([c.stint, "report", "-i", data, "--format", "json"], expect=0).stdout)["command"]
        check(shlex.split(cmd) == argv, "%s: command %r splits into %r, not the arguments %r" % (
            method, cmd, shlex.split(cmd), argv))


@test
def test_select_patched_bytes(c):
    """stint record --function alpha on a program patched at load (plain -O2 with Capstone, and
    through NOP patch sites: -fpatchable-function-entry, __mcount_loc): only alpha's entry bytes
    differ from the program file's, alpha's calls are all there; the header counts the others
    as not selected, not as refused."""
    variants = ["patch", "nop"] + (["plain"] if c.capstone() else [])
    for v in variants:
        prog = c.prog("e2e_patch_select_" + v)
        alone = c.run([prog], expect=0).stdout
        check("changed: alpha=0 beta=0 gamma=0 main=0" in alone, "%s alone printed %r" % (v, alone))
        rec, data = c.record([prog], options=["--no-libcalls"], data=os.path.join(c.tmp, v + "-all.data"))
        check("changed: alpha=1 beta=1 gamma=1 main=1" in rec.stdout,
              "%s without a selection printed %r" % (v, rec.stdout))
        rec, data = c.record([prog], options=["--no-libcalls", "--function", "alpha"],
                             data=os.path.join(c.tmp, v + ".data"))
        check("changed: alpha=1 beta=0 gamma=0 main=0" in rec.stdout,
              "%s with --function alpha printed %r" % (v, rec.stdout))
        check(rec.stdout.split("\n")[1:] == alone.split("\n")[1:], "%s: other output %r" % (v, rec.stdout))
        rep = c.report_json(data)
        check([r["name"] for r in rep["functions"]] == ["alpha"], "%s: recorded %s" % (v, function_list(rep)))
        expect_calls(rep, {"alpha": 7})
        if v == "plain":
            mods = {m["module"]: m for m in rep.get("patched_modules", [])}
            m = mods.get("e2e_patch_select_plain")
            check(m and m["instrumented"] == 1 and m["not_selected"] == m["functions"] - 1 and
                  not m["not_instrumented"], "patched_modules: %s" % rep.get("patched_modules"))
            text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
            check(re.search(r"# instrumented: 1 of %d functions of e2e_patch_select_plain, patched at load; "
                            r"%d not selected at record time\n" % (m["functions"], m["functions"] - 1), text),
                  "header:\n%s" % text[:1200])


@test
def test_select_options_checked(c):
    """Wrong selection options fail with one line; sampling refuses them."""
    prog = c.prog("e2e_select_prog")
    out = os.path.join(c.tmp, "d")
    for opts, words in ((["--min-duration", "10"], ["--min-duration", "10us"]),
                        (["--depth", "0"], ["--depth"]),
                        (["-m", "sample", "--function", "x"], ["--function", "sampling"])):
        p = c.run([c.stint, "record", "-o", out] + opts + ["--", prog])
        one_line_error(p, words, "record " + " ".join(opts))


# ---------------------------------------------------------------------------
# Attaching instrumentation to a running process (stint record -p PID:
# recorder/rec_inject.c, runtime/rt_attach.c)
# ---------------------------------------------------------------------------

def wait_for_file(path, proc, what, timeout=RECORD_TIMEOUT):
    t0 = time.time()
    while not os.path.exists(path):
        check(proc.poll() is None, "%s ended early (status %s)" % (what, proc.returncode))
        check(time.time() - t0 < timeout, "%s did not get ready in %d s" % (what, timeout))
        time.sleep(0.02)


def run_attach_target(c, attach=None):
    """attach_target until it is ready, attach(pid) if given, then stop it: (its output, attach's result)."""
    ready, stop = os.path.join(c.tmp, "ready"), os.path.join(c.tmp, "stop")
    for f in (ready, stop):
        if os.path.exists(f):
            os.unlink(f)
    proc = subprocess.Popen([c.prog("e2e_attach_target"), ready, stop], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True)
    try:
        wait_for_file(ready, proc, "attach_target")
        result = attach(proc.pid) if attach else None
        check(proc.poll() is None, "attach_target ended while attached (status %s)" % proc.returncode)
        with open(proc_maps_path(proc.pid)) as f:
            maps_after = f.read()
        open(stop, "w").close()
        out, err = proc.communicate(timeout=RECORD_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    check(proc.returncode == 0, "attach_target exited %d: %s" % (proc.returncode, err))
    return out, result, maps_after


def proc_maps_path(pid):
    return "/proc/%d/maps" % pid


@test
def test_attach_record_detach(c):
    """stint record -p PID --duration: a running -finstrument-functions program (3 threads) is
    attached, recorded and detached; its output checksum is the same as without stint, nothing of
    stint stays mapped in it, and the calls made in the window are recorded, with the frames open
    at attach (main, worker) entered implicitly (0 calls)."""
    base, _, _ = run_attach_target(c)
    data = os.path.join(c.tmp, "att.data")

    def attach(pid):
        # (0.3 s: the target's tight loop makes some 10 M events a second,
        # and the sanitizer build's report must read them within its time)
        return c.run([c.stint, "record", "-p", str(pid), "--duration", "0.3", "-o", data], expect=0)

    out, rec, maps = run_attach_target(c, attach)
    left = [n for n in os.listdir(c.tmp) if n.startswith(".stint-spool")]
    check(not left, "the spool is left behind in the output directory: %s" % left)
    check(out == base, "output changed by attaching: %r, without stint %r" % (out, base))
    check("errors 0" in out, "the program saw wrong results: %r" % out)
    check("stint" not in maps, "stint's runtime is still mapped after detaching:\n%s" %
          "\n".join(l for l in maps.splitlines() if "stint" in l))
    check("detached" in rec.stderr, "record did not say it detached: %s" % rec.stderr.strip())
    rep = c.report_json(data)
    check(rep.get("attached") is True, "the report does not say it was attached: %r" % rep.get("attached"))
    head = c.run([c.stint, "report", "-i", data], expect=0).stdout
    check("library calls not probed" in head,
          "the header prices library calls that attaching does not probe:\n%s" %
          "\n".join(l for l in head.splitlines() if "compensation" in l))
    # the program ran on: no exit status of it (it said 0)
    recorded = [l for l in head.splitlines() if l.startswith("# recorded:")]
    check(recorded and "attached to the running process" in recorded[0] and "exit status" not in recorded[0],
          "the header's recorded line: %s" % recorded)
    check(calls(rep, "round_value") > 0 and calls(rep, "walk") > 0, "no calls recorded: %s" % function_list(rep))
    check(len(rep["threads"]) == 3, "%d threads recorded, expected 3" % len(rep["threads"]))
    for name in ("main", "worker"):
        rows = function_rows(rep, name)
        check(rows and rows[0]["calls"] == 0 and rows[0]["elapsed_inclusive"] > 0,
              "%s, open at attach, is not an implicitly entered frame: %s" % (name, rows))
    w = func(rep, "worker")
    check(w["elapsed_inclusive"] >= 0.5 * func(rep, "round_value")["elapsed_inclusive"],
          "worker's inclusive time does not hold its threads' round_value calls")


@test
def test_attach_stopped_by_any_signal(c):
    """record -p stopped by a signal other than Ctrl-C or SIGTERM (a hangup: the terminal closed;
    SIGUSR1): stint detaches and writes what it recorded, and nothing of it stays in the process
    (those signals killed stint while attached, leaving its runtime in the process)."""
    for sig in (signal.SIGHUP, signal.SIGUSR1):
        data = os.path.join(c.tmp, "att-%d.data" % sig)

        def attach(pid):
            rec = subprocess.Popen([c.stint, "record", "-p", str(pid), "-o", data], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, universal_newlines=True)
            try:
                line = rec.stderr.readline()  # "recording process N until Ctrl-C"
                check("recording process" in line, "record -p said %r" % line)
                time.sleep(0.2)
                rec.send_signal(sig)
                _, err = rec.communicate(timeout=RECORD_TIMEOUT)
            finally:
                if rec.poll() is None:
                    rec.kill()
                    rec.wait()
            return rec.returncode, err

        out, (code, err), maps = run_attach_target(c, attach)
        check(code == 0, "record -p stopped by signal %d exited %d: %s" % (sig, code, err))
        check("stint" not in maps, "signal %d: stint's runtime is still mapped in the process:\n%s" % (
            sig, "\n".join(l for l in maps.splitlines() if "stint" in l)))
        check("errors 0" in out, "the program saw wrong results: %r" % out)
        rep = c.report_json(data)
        check(rep.get("attached") is True and calls(rep, "round_value") > 0,
              "signal %d: no attached recording with calls: %s" % (sig, function_list(rep)))


@test
def test_attach_refused_without_ptrace(c):
    """-p on a process that cannot be traced (here: one a tracer already holds, as under a
    debugger; the same refusal as kernel.yama.ptrace_scope): one line naming ptrace, and the
    process runs on untouched."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    ready, stop = os.path.join(c.tmp, "ready"), os.path.join(c.tmp, "stop")
    proc = subprocess.Popen([c.prog("e2e_attach_target"), ready, stop], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True,
                            preexec_fn=lambda: libc.ptrace(0, 0, None, None))  # PTRACE_TRACEME
    try:
        os.waitpid(proc.pid, 0)  # stopped at its exec
        libc.ptrace(7, proc.pid, None, None)  # PTRACE_CONT: it runs on, traced by this test
        wait_for_file(ready, proc, "attach_target")
        data = os.path.join(c.tmp, "d")
        p = c.run([c.stint, "record", "-p", str(proc.pid), "--duration", "1", "-o", data])
        one_line_error(p, ["ptrace", str(proc.pid)], "record -p of a traced process")
        check(not os.path.exists(data), "a data file was written anyway")
        check(proc.poll() is None, "the process did not survive the refused attach")
        open(stop, "w").close()
        out, _ = proc.communicate(timeout=RECORD_TIMEOUT)
        check("errors 0" in out, "the program saw wrong results: %r" % out)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@test
def test_attach_not_instrumented(c):
    """-p on a program built without -finstrument-functions: one line saying so; it runs on."""
    proc = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.2)
        data = os.path.join(c.tmp, "d")
        p = c.run([c.stint, "record", "-p", str(proc.pid), "--duration", "1", "-o", data])
        one_line_error(p, ["-finstrument-functions"], "record -p of an uninstrumented process")
        check(proc.poll() is None, "the process did not survive")
        with open(proc_maps_path(proc.pid)) as f:
            check("stint" not in f.read(), "stint's runtime stayed mapped")
    finally:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------

def main():
    return harness.main(TESTS, "e2e", "stint end-to-end tests", Ctx)


if __name__ == "__main__":
    sys.exit(main())
