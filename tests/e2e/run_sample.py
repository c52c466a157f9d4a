#!/usr/bin/env python3
"""run_sample.py - end-to-end tests of stint's sampling method.

Each test records one of the small programs tests/progs/s_*.c with the real
`stint record -m sample`, reads `stint report --format json` (and, for some,
the table, `--by line`, `--by address` and `stint annotate`) and checks it
against what the program is known to do (doc/numbers.md (sampling), in
doc/numbers.md): CPU shares of functions, whole call stacks with and
without frame pointers, recursion counted once, thread, process and module
rows, source lines, the in-process fallback sampler, crashes, errors and
attaching to a running process.  The programs burn CPU by iteration counts,
so their shares do not depend on the machine's load; the tolerances are
wide enough for a noisy shared 2-core machine.

    run_sample.py --stint build/stint --progs build/tests TESTNAME
    run_sample.py --list

Exit status 0 when the test passes, 77 (prints "SKIP: reason") because it
needs perf events and perf_event_open is not permitted here), 1 with a
message on stderr when it fails.  Python 3 standard library only.
"""
import ctypes
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import (HERE, PROG_SOURCES, RECORD_TIMEOUT, TestFailure, TestSkip, check,  # noqa: E402,F401
                     func, function_list, function_rows, module_matches, one_line_error)

# Functions that may be the outermost frame of a complete user stack.
ROOTS = ("_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl")


# ---------------------------------------------------------------------------
# Are perf events permitted?
# ---------------------------------------------------------------------------

_PERF_NR = {"x86_64": 298, "aarch64": 241, "i686": 336, "i386": 336, "ppc64le": 319, "s390x": 331,
            "riscv64": 241}


def perf_unavailable():
    """None when perf_event_open works for us here, else the reason why not."""
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            paranoid = int(f.read().strip())
    except (OSError, ValueError):
        return "cannot read /proc/sys/kernel/perf_event_paranoid (no perf events in this kernel?)"
    if paranoid > 2 and os.geteuid() != 0:
        return "perf_event_paranoid is %d (> 2): perf events are not permitted" % paranoid
    nr = _PERF_NR.get(platform.machine())
    if nr is None:
        return None  # cannot probe on this architecture; trust the paranoid level
    # struct perf_event_attr (PERF_ATTR_SIZE_VER0 = 64 bytes): a software
    # task-clock counter of this process, user space only.
    attr = (ctypes.c_ubyte * 128)()
    ctypes.memmove(attr, (1).to_bytes(4, "little") + (64).to_bytes(4, "little") +
                   (1).to_bytes(8, "little"), 16)  # type SOFTWARE, size, config TASK_CLOCK
    flags = (1 << 0) | (1 << 5) | (1 << 6)  # disabled, exclude_kernel, exclude_hv
    ctypes.memmove(ctypes.byref(attr, 40), flags.to_bytes(8, "little"), 8)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        fd = libc.syscall(ctypes.c_long(nr), ctypes.byref(attr), ctypes.c_int(0), ctypes.c_int(-1),
                          ctypes.c_int(-1), ctypes.c_ulong(0))
    except Exception as e:  # no ctypes support: trust the paranoid level
        return None
    if fd < 0:
        err = ctypes.get_errno()
        return "perf_event_open fails here: %s" % os.strerror(err)
    os.close(fd)
    return None


def need_perf():
    why = perf_unavailable()
    if why:
        raise TestSkip(why)


# ---------------------------------------------------------------------------
# Running stint
# ---------------------------------------------------------------------------

class Ctx(harness.Ctx):
    """One test's view of stint, the programs and a private temp dir."""

    def record(self, prog_argv, expect_status=0, options=(), name="stint.data"):
        """stint record -m sample -o DATA [options] -- PROG ARGS; returns (proc, data)."""
        return self.record_with("sample", prog_argv, os.path.join(self.tmp, name), expect_status, options)

    def report_json(self, data, options=()):
        return self.report_json_checked(data, check_report_invariants, options)

    def record_and_report(self, prog_argv, expect_status=0, options=(), min_samples=100):
        rec, data = self.record(prog_argv, expect_status, options=options)
        rep = self.report_json(data)
        check(rep["samples"] >= min_samples,
              "only %d samples kept, expected at least %d (record said: %s)" % (
                  rep["samples"], min_samples, rec.stderr.strip()))
        return rec, data, rep


# ---------------------------------------------------------------------------
# Reading a report
# ---------------------------------------------------------------------------

def incl(rep, name):
    """Inclusive samples of a function (0 when it has no row)."""
    return sum(r["inclusive_samples"] for r in function_rows(rep, name))


def excl(rep, name):
    return sum(r["exclusive_samples"] for r in function_rows(rep, name))


def pct(rep, n):
    return 100.0 * n / rep["samples"] if rep["samples"] else 0.0


def near(value, want, tol):
    return abs(value - want) <= tol


def check_report_invariants(rep):
    """What holds for every sampling report (doc/numbers.md, sampling and the interface)."""
    for key in ("method", "samples", "lost_samples", "cut_stacks", "session", "functions", "modules",
                "threads", "processes", "lines", "addresses", "unwinding", "cut_stack_copy", "attached"):
        check(key in rep, "report JSON has no %r key" % key)
    check(rep["method"] == "sampling", "method is %r, expected 'sampling'" % rep["method"])
    n = rep["samples"]
    sess = rep["session"]
    check(sess["inclusive_samples"] == n and sess["exclusive_samples"] == n,
          "session has %d/%d inclusive/exclusive samples, expected the %d kept samples" % (
              sess["inclusive_samples"], sess["exclusive_samples"], n))
    problems = []
    for kind in ("functions", "modules", "threads", "processes", "lines", "addresses"):
        for r in rep[kind]:
            for k in ("name", "module", "inclusive_samples", "exclusive_samples", "inclusive_pct", "exclusive_pct"):
                if k not in r:
                    problems.append("a %s row has no %r key: %s" % (kind, k, r))
                    break
            else:
                i, e = r["inclusive_samples"], r["exclusive_samples"]
                what = "%s row %s[%s]" % (kind, r["name"], r["module"])
                if e < 0 or e > i:
                    problems.append("%s: exclusive %d not within [0, inclusive %d]" % (what, e, i))
                if i > n:
                    problems.append("%s: inclusive %d > %d samples (recursion counted twice?)" % (what, i, n))
                if n and (abs(r["inclusive_pct"] - 100.0 * i / n) > 0.01 or
                          abs(r["exclusive_pct"] - 100.0 * e / n) > 0.01):
                    problems.append("%s: percentages %.4f/%.4f are not 100*%d/%d and 100*%d/%d" % (
                        what, r["inclusive_pct"], r["exclusive_pct"], i, n, e, n))
    for kind in ("functions", "modules", "threads", "processes"):
        total = sum(r["exclusive_samples"] for r in rep[kind])
        if total != n:
            problems.append("exclusive samples of the %s add up to %d, not the %d samples" % (kind, total, n))
    for kind in ("lines", "addresses"):
        total = sum(r["exclusive_samples"] for r in rep[kind])
        if total > n:
            problems.append("exclusive samples of the %s add up to %d > %d samples" % (kind, total, n))
    for t in rep["threads"]:
        if not all(k in t for k in ("tid", "pid", "name")):
            problems.append("thread row without tid/pid/name: %s" % t)
    for p in rep["processes"]:
        if not all(k in p for k in ("pid", "command")):
            problems.append("process row without pid/command: %s" % p)
    check(not problems, "report inconsistent:\n  " + "\n  ".join(problems[:20]))


def check_split(rep, tol):
    """s_split: heavy 75%, light 25% (exclusive), split_work and main ~100% inclusive."""
    h, l = pct(rep, excl(rep, "heavy")), pct(rep, excl(rep, "light"))
    check(near(h, 75, tol) and near(l, 25, tol),
          "exclusive %% of heavy %.1f and light %.1f, expected 75 and 25 (+-%d)\n  functions: %s" % (
              h, l, tol, function_list(rep)))
    for n in ("heavy", "light", "split_work", "main"):
        check(func(rep, n)["module"] == "s_split",
              "%s's module is %r, expected the executable s_split" % (n, func(rep, n)["module"]))
    sw = func(rep, "split_work")
    check(sw["inclusive_pct"] >= 95, "split_work (caller of heavy and light) inclusive %.1f%%, expected ~100%%\n"
          "  functions: %s" % (sw["inclusive_pct"], function_list(rep)))
    check(sw["exclusive_pct"] <= 3, "split_work exclusive %.1f%%, expected ~0 (it only calls)" % sw["exclusive_pct"])
    check(func(rep, "main")["inclusive_pct"] >= 95,
          "main inclusive %.1f%%, expected >= 95%%\n  functions: %s" % (
              func(rep, "main")["inclusive_pct"], function_list(rep)))


def check_chain(rep, unwinding):
    """s_chain_*: chain_leaf's samples have c, b, a and main on their stacks; complete stacks."""
    check(rep["unwinding"] == unwinding, "unwinding is %r, expected %r" % (rep["unwinding"], unwinding))
    leaf = excl(rep, "chain_leaf")
    check(pct(rep, leaf) >= 85, "chain_leaf has %d exclusive samples of %d, expected ~all\n  functions: %s" % (
        leaf, rep["samples"], function_list(rep)))
    short = []
    for n in ("chain_c", "chain_b", "chain_a", "main"):
        if incl(rep, n) < 0.9 * leaf:
            short.append("%s %d" % (n, incl(rep, n)))
    check(not short, "callers missing from chain_leaf's stacks (inclusive samples, expected >= 90%% of "
          "chain_leaf's %d): %s\n  functions: %s" % (leaf, ", ".join(short), function_list(rep)))
    check(rep["cut_stacks"] < 0.05 * rep["samples"],
          "%d of %d stacks cut short (expected < 5%%)" % (rep["cut_stacks"], rep["samples"]))
    # every complete stack starts at _start (or glibc's __libc_start_*): one of them
    # must be on (nearly) every stack, else some other function was taken for a root
    root = max(incl(rep, r) for r in ROOTS)
    check(root >= 0.95 * rep["samples"],
          "only %d of %d samples have _start/__libc_start_* at their root: other functions were roots "
          "(stacks cut short)\n  functions: %s" % (root, rep["samples"], function_list(rep)))
    for r in rep["functions"]:
        if r["name"] not in ROOTS and r["name"] != "main" and not r["name"].startswith("chain_"):
            check(r["inclusive_pct"] < 5, "unexpected function %s[%s] on %.1f%% of the stacks\n  functions: %s" % (
                r["name"], r["module"], r["inclusive_pct"], function_list(rep)))


def cpu_seconds(pid):
    """User + system CPU time of a running process, from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def marker_line(src, marker):
    with open(os.path.join(PROG_SOURCES, src)) as f:
        for i, l in enumerate(f, 1):
            if marker in l:
                return i
    raise TestFailure("marker %s not found in %s" % (marker, src))


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------

TESTS, test = harness.registry()


@test
def test_cpu_split(c):
    """heavy/light 3:1: exclusive 75/25 (+-10), caller ~100% inclusive and ~0 exclusive."""
    rec, _, rep = c.record_and_report([c.prog("s_split")], min_samples=200)
    check("split done" in rec.stdout, "the program's output did not come through: %r" % rec.stdout)
    check(rep["event"] == "task-clock", "default event is %r, expected task-clock" % rep["event"])
    check(rep["frequency_hz"] == 1000, "default frequency %r, expected 1000 Hz" % rep["frequency_hz"])
    check(rep["exit_status"] == 0, "exit_status %r" % rep["exit_status"])
    check_split(rep, 10)
    check(len(rep["threads"]) == 1 and len(rep["processes"]) == 1,
          "expected 1 thread and 1 process row: %s %s" % (rep["threads"], rep["processes"]))
    proc = rep["processes"][0]
    check(rep["threads"][0]["pid"] == proc["pid"] == rep["threads"][0]["tid"],
          "thread/process ids disagree: %s %s" % (rep["threads"], rep["processes"]))
    check("s_split" in proc["command"], "process command %r does not name s_split" % proc["command"])
    exe = [m for m in rep["modules"] if m["name"] == "s_split"]
    check(len(exe) == 1 and exe[0]["exclusive_pct"] >= 95,
          "module s_split should have ~all exclusive samples: %s" % rep["modules"])


@test
def test_stripped_functions(c):
    """s_split stripped with `strip` (no symbol table): a function's samples make one row, named
    by the file offset of its code range from the call-frame information (its .eh_frame FDE),
    which is the function's own start: every row of the module is such a start (of a function or
    a part split off), and heavy/light/split_work keep their shares under those names, not one
    row per sampled address."""
    plain, stripped = c.prog("s_split"), c.prog("s_split_stripped")
    syms = harness.elf_symbols(plain)
    check(not harness.elf_symbols(stripped), "s_split_stripped still has a symbol table")
    _, _, rep = c.record_and_report([stripped], min_samples=200)
    starts = {"0x%x" % off: name for name, off in syms.items()}
    rows = [r for r in rep["functions"] if r["module"] == "s_split_stripped"]
    stray = ["%s (%d samples)" % (r["name"], r["inclusive_samples"]) for r in rows if r["name"] not in starts]
    check(not stray, "rows of s_split_stripped named by no function's start: %s\n  functions: %s" % (
        ", ".join(stray), function_list(rep)))
    named = {starts[r["name"]]: r for r in rows}
    for n in ("heavy", "light", "split_work", "main"):
        check(n in named, "no row at %s's start (0x%x)\n  functions: %s" % (n, syms[n], function_list(rep)))
    h, l = pct(rep, named["heavy"]["exclusive_samples"]), pct(rep, named["light"]["exclusive_samples"])
    check(near(h, 75, 10) and near(l, 25, 10), "exclusive %% at heavy's start %.1f and light's %.1f, expected "
          "75 and 25 (+-10)\n  functions: %s" % (h, l, function_list(rep)))
    check(named["split_work"]["inclusive_pct"] >= 95, "split_work's row inclusive %.1f%%, expected ~100%%" %
          named["split_work"]["inclusive_pct"])


@test
def test_loader_start_whole(c):
    """Samples taken while the dynamic loader starts a process (30 runs of /bin/true, 20 kHz)
    end at ld.so's _start, a symbol without a size and code without call-frame information:
    those stacks are whole (not counted as cut short) and their root is named _start, not an
    address (it was an address row, and every such stack counted as cut short)."""
    need_perf()
    _, _, rep = c.record_and_report(["/bin/bash", "-c", "for i in $(seq 30); do /bin/true; done"],
                                    options=["-F", "20000"], min_samples=50)
    loader = [r for r in rep["functions"] if r["module"].startswith("ld-linux")]
    if not loader:
        raise TestSkip("no sample fell in the dynamic loader here")
    unnamed = ["%s (%d)" % (r["name"], r["inclusive_samples"]) for r in loader if r["name"].startswith("0x")]
    check(not unnamed, "ld.so rows named by address: %s\n  functions: %s" % (unnamed, function_list(rep)))
    start = [r for r in loader if r["name"] == "_start"]
    check(start and start[0]["inclusive_samples"] >= 0.5 * sum(r["exclusive_samples"] for r in loader),
          "ld.so's _start is not at the root of the loader's stacks: %s" % function_list(rep))
    check(rep["cut_stacks"] <= 0.05 * rep["samples"], "%d of %d stacks cut short" % (
        rep["cut_stacks"], rep["samples"]))


@test
def test_sleep_not_sampled(c):
    """A function sleeping 2 x 300 ms gets (almost) no samples: sampling follows CPU time."""
    _, _, rep = c.record_and_report([c.prog("s_sleep")], min_samples=100)
    sl = incl(rep, "sleeper")
    check(pct(rep, sl) < 5, "sleeper has %d inclusive samples of %d (%.1f%%), expected < 5%%\n  functions: %s" % (
        sl, rep["samples"], pct(rep, sl), function_list(rep)))
    comp = excl(rep, "compute")
    check(pct(rep, comp) >= 85, "compute has %.1f%% exclusive, expected ~100%%\n  functions: %s" % (
        pct(rep, comp), function_list(rep)))
    # 600 ms of the run were spent asleep: far fewer samples than wall-clock milliseconds
    wall_ms = rep["duration_ns"] / 1e6
    check(wall_ms >= 600, "duration %.0f ms, but the program sleeps 600 ms" % wall_ms)
    check(rep["samples"] < 0.7 * wall_ms * rep["frequency_hz"] / 1000.0,
          "%d samples in %.0f ms of which 600 asleep: the sleep was sampled" % (rep["samples"], wall_ms))


@test
def test_stacks_dwarf_nofp(c):
    """main->a->b->c->leaf built -fomit-frame-pointer: whole stacks by DWARF unwinding."""
    _, _, rep = c.record_and_report([c.prog("s_chain_nofp")], min_samples=200)
    check_chain(rep, "dwarf")


@test
def test_stacks_fp(c):
    """The same chain built -fno-omit-frame-pointer, unwound with --call-graph fp."""
    need_perf()
    _, _, rep = c.record_and_report([c.prog("s_chain_fp")], options=["--call-graph", "fp"], min_samples=200)
    check_chain(rep, "fp")


@test
def test_recursion_once(c):
    """recurse 51 deep burning at the bottom: each sample counts it once (inclusive == its samples)."""
    _, _, rep = c.record_and_report([c.prog("s_recurse")], min_samples=200)
    r = func(rep, "recurse")
    n = rep["samples"]
    check(r["inclusive_pct"] <= 100 and r["inclusive_samples"] <= n,
          "recurse inclusive %d (%.1f%%) > %d samples: recursion counted more than once" % (
              r["inclusive_samples"], r["inclusive_pct"], n))
    # recurse calls nothing else: the samples with recurse on the stack are
    # exactly those whose top frame is recurse
    check(abs(r["inclusive_samples"] - r["exclusive_samples"]) <= 1,
          "recurse inclusive %d != exclusive %d (+-1): the samples with recurse on the stack are those "
          "it is on top of\n  functions: %s" % (r["inclusive_samples"], r["exclusive_samples"], function_list(rep)))
    check(r["exclusive_pct"] >= 85, "recurse exclusive %.1f%%, expected ~100%%" % r["exclusive_pct"])
    check(incl(rep, "main") >= r["inclusive_samples"] - 1,
          "main inclusive %d < recurse inclusive %d" % (incl(rep, "main"), r["inclusive_samples"]))
    check(rep["cut_stacks"] < 0.05 * n, "%d of %d stacks cut short" % (rep["cut_stacks"], n))
    # the recursive call site is on each stack 50 times: once per sample per line / address
    src_lines = [l for l in rep["lines"] if l["name"].endswith("s_recurse.c:%d" % marker_line(
        "s_recurse.c", "recurse(depth - 1, n)"))]
    check(src_lines, "no line row for the recursive call site; lines: %s" % [l["name"] for l in rep["lines"][:20]])
    check(src_lines[0]["inclusive_samples"] >= 0.9 * r["inclusive_samples"],
          "the recursive call line has %d inclusive samples, recurse %d" % (
              src_lines[0]["inclusive_samples"], r["inclusive_samples"]))
    mod = [m for m in rep["modules"] if m["name"] == "s_recurse"]
    check(mod and mod[0]["inclusive_samples"] <= n, "module s_recurse: %s" % mod)


@test
def test_threads_named(c):
    """Three named workers burning 1:2:3: thread rows with names, shares 1/6, 2/6, 3/6 (+-8)."""
    _, _, rep = c.record_and_report([c.prog("s_threads")], min_samples=200)
    check(len(rep["processes"]) == 1, "expected one process row: %s" % rep["processes"])
    pid = rep["processes"][0]["pid"]
    threads = rep["threads"]
    names = [t["name"] for t in threads]
    for t in threads:
        check(t["pid"] == pid, "thread %s has pid %s, the process is %s" % (t, t["pid"], pid))
    check(len({t["tid"] for t in threads}) == len(threads), "thread ids not distinct: %s" % threads)
    workers = {}
    for w in ("s_w1", "s_w2", "s_w3"):
        rows = [t for t in threads if t["name"] == w]
        check(len(rows) == 1, "expected one thread row named %s, thread names: %s" % (w, names))
        check(rows[0]["tid"] != pid, "worker %s has the main thread's tid" % w)
        workers[w] = rows[0]["exclusive_samples"]
    total = sum(workers.values())
    check(total >= 0.9 * rep["samples"], "workers have %d of %d samples, expected ~all" % (total, rep["samples"]))
    shares = {w: 100.0 * v / total for w, v in workers.items()}
    want = {"s_w1": 100 / 6.0, "s_w2": 200 / 6.0, "s_w3": 300 / 6.0}
    bad = ["%s %.1f%% (expected %.1f)" % (w, shares[w], want[w]) for w in want if not near(shares[w], want[w], 8)]
    check(not bad, "worker thread shares wrong: %s" % ", ".join(bad))
    check(pct(rep, excl(rep, "thread_burn")) >= 85, "thread_burn exclusive %.1f%%\n  functions: %s" % (
        pct(rep, excl(rep, "thread_burn")), function_list(rep)))
    p = c.run([c.stint, "report", "-i", os.path.join(c.tmp, "stint.data"), "--by", "thread"], expect=0)
    for w in want:
        check(w in p.stdout, "table --by thread lacks %s:\n%s" % (w, p.stdout))


@test
def test_fork_child(c):
    """A forked child burning 3 parts in child_work: two process rows, child_work's samples in the child."""
    rec, _, rep = c.record_and_report([c.prog("s_fork")], min_samples=200)
    m = re.search(r"child (\d+)", rec.stdout)
    check(m, "s_fork did not print its child's pid: %r" % rec.stdout)
    child = int(m.group(1))
    procs = {p["pid"]: p for p in rep["processes"]}
    check(len(procs) == 2 and child in procs, "expected two process rows, the child %d among them: %s" % (
        child, rep["processes"]))
    parent = [p for p in procs if p != child][0]
    cw, pw = excl(rep, "child_work"), excl(rep, "parent_work")
    n = rep["samples"]
    check(near(pct(rep, cw), 75, 10) and near(pct(rep, pw), 25, 10),
          "child_work %.1f%%, parent_work %.1f%%, expected 75 and 25 (+-10)\n  functions: %s" % (
              pct(rep, cw), pct(rep, pw), function_list(rep)))
    cs, ps = procs[child]["exclusive_samples"], procs[parent]["exclusive_samples"]
    check(abs(cs - cw) <= 0.05 * n + 2,
          "child process %d has %d samples but child_work %d: child_work not attributed to the child" % (
              child, cs, cw))
    check(abs(ps - pw) <= 0.05 * n + 2,
          "parent process %d has %d samples but parent_work %d" % (parent, ps, pw))
    ct = [t for t in rep["threads"] if t["pid"] == child]
    check(len(ct) == 1 and ct[0]["tid"] == child, "expected one thread row of the child: %s" % rep["threads"])
    check(all(t["pid"] in procs for t in rep["threads"]), "thread rows of unknown processes: %s" % rep["threads"])


@test
def test_filters_every_view(c):
    """A filter selects samples and every view is computed from them (issue 8 item 2): under
    --pid, --tid, --function and --module, each view's exclusive column adds up to 100% of the
    selection; --by line/--by address under --pid count only that process; ancestors of the
    --function get only the samples through it."""
    rec, data, rep = c.record_and_report([c.prog("s_fork")], min_samples=200)
    child = int(re.search(r"child (\d+)", rec.stdout).group(1))
    procs = {p["pid"]: p["exclusive_samples"] for p in rep["processes"]}
    cw = func(rep, "child_work")["inclusive_samples"]
    keys = {"function": "functions", "module": "modules", "thread": "threads", "process": "processes",
            "line": "lines", "address": "addresses"}
    filters = [["--pid", str(child)], ["--tid", str(child)], ["--function", "child_work"],
               ["--module", "libc*"], ["--function", "child_work", "--just-my-code"]]
    for flt in filters:
        for by, key in keys.items():
            sel = c.report_json(data, ["--by", by] + flt)
            n = sel["samples"]
            check(sel.get("selection", {}).get("run_samples") == rep["samples"],
                  "%s: selection %s, expected run_samples %d" % (flt, sel.get("selection"), rep["samples"]))
            total = sum(r["exclusive_samples"] for r in sel[key])
            pcts = sum(r["exclusive_pct"] for r in sel[key])
            check(total == n and abs(pcts - 100.0) < 0.1,
                  "%s --by %s: exclusive column adds up to %d samples (%.1f%%), the selection has %d" % (
                      " ".join(flt), by, total, pcts, n))
            if flt[0] in ("--pid", "--tid"):
                check(n == procs[child], "%s: %d samples selected, the child process has %d" % (flt, n, procs[child]))
            if flt[0] == "--function":
                check(n == cw, "--function child_work selects %d samples, child_work has %d" % (n, cw))
    sel = c.report_json(data, ["--function", "child_work"])
    for r in sel["functions"]:
        check(r["inclusive_samples"] <= cw,
              "--function child_work: %s has %d inclusive samples, more than the %d through child_work" % (
                  r["name"], r["inclusive_samples"], cw))
    check("parent_work" not in [r["name"] for r in sel["functions"]], "--function child_work kept parent_work")
    m = func(sel, "main")
    check(m["inclusive_samples"] >= 0.9 * cw, "main has %d inclusive samples of the %d through child_work" % (
        m["inclusive_samples"], cw))
    p = c.run([c.stint, "report", "-i", data, "--function", "child_work", "--no-pager"], expect=0)
    check("# selection:   function child_work: %d of %d samples" % (cw, rep["samples"]) in p.stdout,
          "the table does not say what the filter selected:\n%s" % p.stdout[:1500])


def build_id(path):
    """The GNU build ID of an ELF file, in hex, from `readelf -n` (None if none)."""
    p = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", p.stdout)
    return m.group(1) if m else None


@test
def test_compressed_debug_file_each_process(c):
    """libc's separate debug file (Debian's libc6-dbg keeps its DWARF
    compressed) gives source lines to the samples in libc of every process:
    the recorder inflates it once and every process image reads that copy
    (symbol/sym.c).  Three sort runs under one shell: each has samples on
    lines of libc's sources."""
    libc = os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")
    bid = build_id(libc) if os.path.exists(libc) else None
    debug = bid and "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    if not debug or not os.path.exists(debug):
        raise TestSkip("no separate debug file for libc (Debian package libc6-dbg)")
    sort = shutil.which("sort", path="/usr/bin:/bin")
    if not sort:
        raise TestSkip("no sort (coreutils)")
    data = os.path.join(c.tmp, "nums.txt")
    with open(data, "w") as f:
        f.write("\n".join(str((i * 7919) % 300007) for i in range(300000)) + "\n")
    script = "for i in 1 2 3; do %s %s -o /dev/null; done" % (sort, data)
    _, out, rep = c.record_and_report(["/bin/sh", "-c", script], min_samples=100)
    sorts = [p["pid"] for p in rep["processes"] if p["command"].startswith(sort) or "sort" in p["command"].split()[0]]
    check(len(sorts) == 3, "expected 3 sort processes: %s" % [(p["pid"], p["command"]) for p in rep["processes"]])
    for pid in sorts:
        lines = c.report_json(out, ["--by", "line", "--pid", str(pid), "--module", "libc*"])["lines"]
        named = [l for l in lines if re.search(r"\.(c|S|h):\d+$", l["name"])]
        check(named and sum(l["exclusive_samples"] for l in named) >= 0.5 * sum(l["exclusive_samples"] for l in lines),
              "sort process %d: its samples in libc have no source lines: %s" % (pid, [l["name"] for l in lines[:8]]))


@test
def test_shared_libs(c):
    """lib_work in libs_work.so (linked) and plugin_work in libs_plugin.so (dlopen'ed, then closed)."""
    plugin = c.prog("libs_plugin.so")
    _, _, rep = c.record_and_report([c.prog("s_libs"), plugin], min_samples=200)
    for fn, mod in (("lib_work", "libs_work.so"), ("plugin_work", "libs_plugin.so")):
        rows = function_rows(rep, fn)
        check(len(rows) == 1, "expected one row for %s: functions: %s" % (fn, function_list(rep)))
        check(rows[0]["module"] == mod, "%s's module is %r, expected %s" % (fn, rows[0]["module"], mod))
        check(near(rows[0]["exclusive_pct"], 50, 15), "%s has %.1f%% exclusive, expected ~50%%\n  functions: %s" % (
            fn, rows[0]["exclusive_pct"], function_list(rep)))
        mrow = [m for m in rep["modules"] if m["name"] == mod]
        check(len(mrow) == 1, "no module row %s: %s" % (mod, [m["name"] for m in rep["modules"]]))
        check(mrow[0]["exclusive_samples"] >= rows[0]["exclusive_samples"],
              "module %s has %d exclusive samples, its function %s %d" % (
                  mod, mrow[0]["exclusive_samples"], fn, rows[0]["exclusive_samples"]))
        check(incl(rep, "main") >= 0.95 * rep["samples"], "main inclusive %d of %d: stacks through %s cut?" % (
            incl(rep, "main"), rep["samples"], mod))


@test
def test_annotate_file_end(c):
    """annotate of a function whose hot line is the file's last: the header's line range ends at the file's end."""
    _, data, rep = c.record_and_report([c.prog("s_tail")], min_samples=100)
    hot = marker_line("s_tail.c", "/* S_HOT_TAIL */")
    with open(os.path.join(PROG_SOURCES, "s_tail.c")) as f:
        nlines = len(f.read().splitlines())
    check(hot == nlines, "s_tail.c: the hot line %d should be the last (%d)" % (hot, nlines))
    p = c.run([c.stint, "annotate", "-i", data, "tail_spin"], expect=0)
    m = re.search(r"^# .*s_tail\.c, lines (\d+)-(\d+)$", p.stdout, re.M)
    check(m, "annotate tail_spin: no '# FILE, lines A-B' header:\n%s" % p.stdout)
    lo, hi = int(m.group(1)), int(m.group(2))
    check(lo <= hot <= hi <= nlines, "annotate tail_spin announces lines %d-%d; the file has %d, the hot line is %d:\n%s" % (
        lo, hi, nlines, hot, p.stdout))
    check("S_HOT_TAIL" in p.stdout, "annotate does not print the hot line's source:\n%s" % p.stdout)


@test
def test_lines_annotate(c):
    """--by line puts heavy's hot loop line on top; annotate heavy shows it with most samples; --by address."""
    _, data, rep = c.record_and_report([c.prog("s_split")], min_samples=200)
    hot = marker_line("s_split.c", "/* S_HOT_HEAVY */")
    want = "s_split.c:%d" % hot
    line_rep = c.report_json(data, ["--by", "line"])
    top = line_rep["lines"][0]
    check(top["name"].endswith(want) and top["module"] == "s_split",
          "top line row is %s[%s], expected ...%s\n  lines: %s" % (
              top["name"], top["module"], want, [(l["name"], l["exclusive_samples"]) for l in line_rep["lines"][:8]]))
    check(abs(top["exclusive_samples"] - excl(rep, "heavy")) <= 0.05 * rep["samples"] + 2,
          "hot line has %d exclusive samples, heavy %d" % (top["exclusive_samples"], excl(rep, "heavy")))
    p = c.run([c.stint, "report", "-i", data, "--by", "line", "--format", "csv", "--limit", "1"], expect=0)
    rows = p.stdout.splitlines()
    check(len(rows) == 2 and want in rows[1], "CSV --by line --limit 1: expected the hot line:\n%s" % p.stdout)
    p = c.run([c.stint, "report", "-i", data, "--by", "line"], expect=0)
    check(want in p.stdout, "table --by line lacks %s:\n%s" % (want, p.stdout))
    # annotate
    p = c.run([c.stint, "annotate", "-i", data, "heavy"], expect=0)
    counts = {}
    for l in p.stdout.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s", l)
        if m:
            counts[int(m.group(3))] = (int(m.group(1)), int(m.group(2)))
    check(hot in counts, "annotate heavy shows no samples on line %d:\n%s" % (hot, p.stdout))
    best = max(counts, key=lambda k: counts[k][1])
    check(best == hot, "annotate heavy: line %d has the most exclusive samples, expected %d:\n%s" % (
        best, hot, p.stdout))
    check("S_HOT_HEAVY" in p.stdout, "annotate does not print the source text:\n%s" % p.stdout)
    # addresses
    addr = c.report_json(data, ["--by", "address"])["addresses"]
    heavy_addr = [a for a in addr if re.search(r"\bheavy\+0x[0-9a-f]+", a["name"])]
    check(heavy_addr, "no --by address rows inside heavy: %s" % [a["name"] for a in addr[:10]])
    check(addr[0] in heavy_addr, "top address row %s is not in heavy" % addr[0]["name"])
    s = sum(a["exclusive_samples"] for a in heavy_addr)
    check(s == excl(rep, "heavy"), "exclusive samples of heavy's addresses add up to %d, heavy has %d" % (
        s, excl(rep, "heavy")))
    p = c.run([c.stint, "report", "-i", data, "--by", "address"], expect=0)
    check("heavy+0x" in p.stdout, "table --by address lacks heavy+0x...:\n%s" % p.stdout)


@test
def test_inproc_split(c):
    """The in-process fallback sampler (--sampler inproc): heavy/light 75/25 (+-12)."""
    # (CPU-time timers fire at most once per kernel tick: with CONFIG_HZ=250
    # the in-process sampler takes ~250 samples per CPU second, not 1000)
    rec, data, rep = c.record_and_report([c.prog("s_split")], options=["--sampler", "inproc"], min_samples=60)
    cpu_s = rep["duration_ns"] / 1e9
    if rep["samples"] < 0.5 * cpu_s * rep["frequency_hz"]:
        print("note: %d samples in %.2f s at %d Hz: the in-process sampler ran at ~%.0f Hz" % (
            rep["samples"], cpu_s, rep["frequency_hz"], rep["samples"] / cpu_s))
    check("in-process" in rep["unwinding"], "JSON unwinding %r does not mention the in-process sampler" %
          rep["unwinding"])
    check_split(rep, 12)
    p = c.run([c.stint, "report", "-i", data], expect=0)
    header = "\n".join(l for l in p.stdout.splitlines() if l.startswith("#"))
    check("in-process" in header, "table header does not mention the in-process sampler:\n%s" % header)


@test
def test_inproc_chosen_when_perf_denied(c):
    """Where perf events are not permitted, record -m sample chooses the
    in-process sampler by itself, says so on stderr and in the report header
    (STINT_DENY_PERF stands in for perf_event_paranoid 3 or seccomp, which do
    not stop root)."""
    data = os.path.join(c.tmp, "stint.data")
    env = dict(os.environ, STINT_DENY_PERF="1")
    p = c.run([c.stint, "record", "-m", "sample", "-o", data, "--", c.prog("s_split")], expect=0, env=env)
    check("in-process sampler" in p.stderr, "record did not say it fell back: %s" % p.stderr.strip())
    rep = c.report_json(data)
    check("not permitted" in rep["unwinding"], "JSON unwinding %r does not say why" % rep["unwinding"])
    check_split(rep, 12)
    p = c.run([c.stint, "record", "-m", "sample", "-p", str(os.getpid()), "--duration", "0.1",
               "-o", data], env=env)
    check(p.returncode != 0 and "not permitted" in p.stderr,
          "attaching without perf events should fail with one clear line: %s" % p.stderr.strip())


@test
def test_err_missing_program(c):
    """-m sample on a program that does not exist: non-zero exit, one line naming it, no data file; on a
    file without execute permission or a directory: one line saying so (either method)."""
    missing = os.path.join(c.tmp, "no-such-program")
    for extra in ([], ["--sampler", "inproc"]):
        data = os.path.join(c.tmp, "missing.data")
        p = c.run([c.stint, "record", "-m", "sample", "-o", data] + extra + ["--", missing])
        one_line_error(p, ["no-such-program"], "record -m sample %s of a missing program" % " ".join(extra))
        check(p.returncode == 127, "record of a missing program exited %d, a shell's 127" % p.returncode)
        check(not os.path.exists(data), "a data file was written for a missing program")
    # a file that is there but cannot be run: say so, not that it cannot be found (both methods)
    plain = os.path.join(c.tmp, "not-executable.sh")
    with open(plain, "w") as f:
        f.write("echo hi\n")
    os.chmod(plain, 0o644)
    for method in ("sample", "instrument"):
        data = os.path.join(c.tmp, "plain.data")
        p = c.run([c.stint, "record", "-m", method, "-o", data, "--", plain])
        line = one_line_error(p, ["not-executable.sh", "not executable"], "record -m %s of a file without x" % method)
        check("cannot find" not in line, "record -m %s says it cannot find an existing file: %r" % (method, line))
        check(p.returncode == 126, "record -m %s of a file without x exited %d, a shell's 126" % (method, p.returncode))
    p = c.run([c.stint, "record", "-m", "sample", "-o", os.path.join(c.tmp, "dir.data"), "--", c.tmp])
    one_line_error(p, ["is a directory"], "record -m sample of a directory")
    check(p.returncode == 126, "record of a directory exited %d, a shell's 126" % p.returncode)
    # a script whose "#!" interpreter is missing: found, not run: 127 as a shell and env say
    script = os.path.join(c.tmp, "bad-interpreter")
    with open(script, "w") as f:
        f.write("#!/nonexistent/interpreter\necho hi\n")
    os.chmod(script, 0o755)
    for method in ("sample", "instrument"):
        p = c.run([c.stint, "record", "-m", method, "-o", os.path.join(c.tmp, "bi.data"), "--", script])
        one_line_error(p, ["bad-interpreter"], "record -m %s of a script whose interpreter is missing" % method)
        check(p.returncode == 127, "record -m %s of a script whose interpreter is missing exited %d, a shell's 127" % (
            method, p.returncode))
    # a script without "#!" runs with /bin/sh, as a shell and execvp run it
    script = os.path.join(c.tmp, "no-shebang")
    with open(script, "w") as f:
        f.write("echo script ran \"$1\"\n")
    os.chmod(script, 0o755)
    for method in ("sample", "instrument"):
        p = c.run([c.stint, "record", "-m", method, "-o", os.path.join(c.tmp, "s.data"), "--", script, "x y"])
        check(p.returncode == 0 and p.stdout == "script ran x y\n",
              "record -m %s of a script without #!: exit %d, printed %r: %s" % (method, p.returncode, p.stdout,
                                                                                 p.stderr.strip()))


@test
def test_crash_sigsegv(c):
    """A program dying of SIGSEGV after 0.2 s of CPU: status 139, samples kept (perf and inproc)."""
    rec, data, rep = c.record_and_report([c.prog("s_crash")], expect_status=139, min_samples=80)
    check(rep["exit_status"] == 139, "report exit_status %r, expected 139" % rep["exit_status"])
    check(pct(rep, excl(rep, "crash_burn")) >= 80, "crash_burn exclusive %.1f%%\n  functions: %s" % (
        pct(rep, excl(rep, "crash_burn")), function_list(rep)))
    check(incl(rep, "main") >= 0.9 * rep["samples"], "main inclusive %d of %d" % (incl(rep, "main"), rep["samples"]))
    # the in-process sampler must keep what its preloaded library spooled before the crash too
    _, data2 = c.record([c.prog("s_crash")], expect_status=139, options=["--sampler", "inproc"], name="inproc.data")
    rep2 = c.report_json(data2)
    check(rep2["exit_status"] == 139, "inproc: report exit_status %r, expected 139" % rep2["exit_status"])
    check(rep2["samples"] >= 20 and pct(rep2, excl(rep2, "crash_burn")) >= 80,
          "inproc: %d samples kept of a run crashing after 0.2 s of CPU, crash_burn %.1f%%\n  functions: %s" % (
              rep2["samples"], pct(rep2, excl(rep2, "crash_burn")), function_list(rep2)))


@test
def test_event_cycles(c):
    """-e cycles: works where there is a hardware PMU, else fails with one clear line."""
    need_perf()
    data = os.path.join(c.tmp, "cycles.data")
    p = c.run([c.stint, "record", "-m", "sample", "-e", "cycles", "-o", data, "--", c.prog("s_split")])
    if p.returncode == 0:
        rep = c.report_json(data)
        check(rep["event"] == "cycles", "event %r, expected cycles" % rep["event"])
        check(rep["samples"] >= 100, "only %d samples with -e cycles" % rep["samples"])
        check_split(rep, 10)
        print("note: this machine has a PMU; -e cycles recorded %d samples" % rep["samples"])
        return
    line = one_line_error(p, ["cycles"], "record -e cycles")
    check(re.search(r"PMU|hardware|not supported|not available|no such", line, re.I),
          "the -e cycles error does not say why (no hardware PMU): %r" % line)
    check("split done" not in p.stdout, "the program ran although recording could not start")
    check(not os.path.exists(data), "a data file was written although recording failed")


@test
def test_attach_pid(c):
    """record -m sample -p PID --duration 0.5 on a running CPU burner: its hot function sampled."""
    need_perf()
    prog = subprocess.Popen([c.prog("s_attach"), "4"], stdout=subprocess.PIPE, universal_newlines=True)
    try:
        line = prog.stdout.readline()
        m = re.match(r"ready (\d+)", line)
        check(m, "s_attach printed %r" % line)
        pid = int(m.group(1))
        check(pid == prog.pid, "s_attach says pid %d, it is %d" % (pid, prog.pid))
        time.sleep(0.2)
        data = os.path.join(c.tmp, "attach.data")
        t0, cpu0 = time.time(), cpu_seconds(pid)
        p = c.run([c.stint, "record", "-m", "sample", "-p", str(pid), "--duration", "0.5", "-o", data])
        took, cpu_ms = time.time() - t0, 1000 * (cpu_seconds(pid) - cpu0)
        check(p.returncode == 0, "record -p exited %d: %s" % (p.returncode, p.stderr.strip()))
        check(took < 3.5, "record -p --duration 0.5 took %.1f s" % took)
        check(prog.poll() is None, "the attached program ended (status %s) when stint detached" % prog.returncode)
    finally:
        if prog.poll() is None:
            prog.kill()
        prog.wait()
    rep = c.report_json(data)
    # about one sample per CPU millisecond the program used while stint was attached
    # (the program may get little CPU on a loaded machine: compare with what it got)
    n = rep["samples"]
    check(n >= 30 and n >= 0.4 * cpu_ms - 20 and n <= 1.2 * cpu_ms + 30,
          "%d samples at 1000 Hz while the program used %.0f ms of CPU during the %.1f s of record -p" % (
              n, cpu_ms, took))
    check(0.3e9 <= rep["duration_ns"] <= 3e9, "duration %.2f s, expected ~0.5 s" % (rep["duration_ns"] / 1e9))
    check(pct(rep, excl(rep, "attach_hot")) >= 80, "attach_hot exclusive %.1f%%\n  functions: %s" % (
        pct(rep, excl(rep, "attach_hot")), function_list(rep)))
    check([p["pid"] for p in rep["processes"]] == [pid], "process rows %s, expected pid %d" % (
        rep["processes"], pid))
    check(func(rep, "attach_hot")["module"] == "s_attach", "attach_hot module %r" % func(rep, "attach_hot")["module"])


@test
def test_inproc_lifecycle(c):
    """The in-process sampler on a program that chdir()s before starting a thread, with the
    default relative data file (the thread's samples are kept, nothing is written elsewhere);
    on a program dying of int3 (SIGTRAP), whose status 133 passes through; and on children
    started with environments that lack LD_PRELOAD."""
    work = os.path.join(c.tmp, "cwd")
    os.mkdir(work)
    p = c.run([c.stint, "record", "-m", "sample", "--sampler", "inproc", "--", c.prog("e2e_chdir_threads"),
               "spin"], expect=0, cwd=work)
    check(os.listdir(work) == ["stint.data"], "the working directory holds %s, expected stint.data only" %
          os.listdir(work))
    rep = c.report_json(os.path.join(work, "stint.data"))
    check(len(rep["threads"]) >= 2, "expected the main and the worker thread, got %s" % rep["threads"])
    check(incl(rep, "worker_spin") >= 10, "worker_spin (the thread started after chdir) has %d samples\n"
          "  functions: %s" % (incl(rep, "worker_spin"), function_list(rep)))
    rec, data = c.record([c.prog("e2e_crash_trap"), "int3"], expect_status=133,
                         options=["--sampler", "inproc"], name="int3.data")
    check("survived" not in rec.stdout, "the program survived int3: %r" % rec.stdout)
    # children started with environments of their own (posix_spawn, execve, ...) are sampled too
    rec, data = c.record([c.prog("e2e_spawn_env"), c.prog("e2e_env_child")],
                         options=["--sampler", "inproc"], name="spawn.data")
    rep = c.report_json(data)
    children = [p for p in rep["processes"] if "e2e_spawn_env" not in p["command"]]
    check(len(children) == 7, "expected 7 env_child processes, got %s" % [p["command"] for p in rep["processes"]])


@test
def test_raw_fork_children(c):
    """Processes made through syscall() (SYS_fork, SYS_clone with SIGCHLD, SYS_clone3), each
    burning ~90 ms in child_work, under perf and the in-process sampler: each child is a
    process with its samples. The in-process sampler's children were not sampled (no
    pthread_atfork handler runs in them, and their timer is not inherited) and nothing said so."""
    prog = c.prog("e2e_raw_fork_plain")
    alone = c.run([prog, "spin"], expect=0).stdout
    children = alone.count("exited 7")
    check(children >= 2, "alone printed %r" % alone)
    for extra in ([], ["--sampler", "inproc"]):
        rec, data = c.record([prog, "spin"], options=extra, name="raw%d.data" % len(extra))
        check(sorted(rec.stdout.splitlines()) == sorted(alone.splitlines()),
              "%s: printed %r instead of %r" % (extra, rec.stdout, alone))
        rep = c.report_json(data)
        # (the parent, which only waits, may have no sample: no row then)
        check(len(rep["processes"]) in (children, children + 1), "%s: processes %s" % (extra, rep["processes"]))
        check(incl(rep, "child_work") >= 20 * children, "%s: child_work has %d samples\n  functions: %s" % (
            extra, incl(rep, "child_work"), function_list(rep)))


@test
def test_inproc_small_stacks(c):
    """The in-process sampler's signals on a coroutine of 8 KiB (makecontext): its handler
    unwound on the interrupted stack (libunwind's cursor and DWARF parsing, the frames, the
    encoded sample: several KiB) and the program died of SIGSEGV, which alone runs fine. The
    handler now works on a stack of the thread's own."""
    prog = c.prog("e2e_small_stack_plain")
    args = [prog, "8192", "16384", "40"]
    alone = c.run(args, expect=0).stdout
    check(alone.startswith("coroutine "), "alone printed %r" % alone)
    rec, data = c.record(args, options=["--sampler", "inproc"])
    check(rec.stdout == alone, "printed %r instead of %r" % (rec.stdout, alone))
    rep = c.report_json(data)
    check(incl(rep, "co_main") >= 10, "co_main has %d samples\n  functions: %s" % (
        incl(rep, "co_main"), function_list(rep)))


def wait_until(cond, what, timeout=30):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > timeout:
            raise TestFailure("waited %d s for %s" % (timeout, what))
        time.sleep(0.05)


@test
def test_inproc_recorder_killed(c):
    """kill -9 of stint record with the in-process sampler: the program runs on unharmed and
    its spool stops growing (the sampler checks the recorder every 64 samples)."""
    out = os.path.join(c.tmp, "out")
    os.mkdir(out)
    stop, done = os.path.join(c.tmp, "stop"), os.path.join(c.tmp, "done")
    argv = [c.stint, "record", "-m", "sample", "--sampler", "inproc", "-o", os.path.join(out, "stint.data"),
            "--", c.prog("e2e_long_runner"), stop, done]
    c.log.append(" ".join(argv))
    rec = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files = lambda: [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs]
    sizes = lambda: sorted((p, os.path.getsize(p)) for p in files() if os.path.exists(p))
    pid = None
    try:
        # sampling for real: samples after the 56-byte header of the thread's file
        wait_until(lambda: any(p.endswith(".smp") and os.path.getsize(p) > 56 for p in files()),
                   "the first samples")
        smp = [p for p in files() if p.endswith(".smp")][0]
        pid = int(re.match(r"p(\d+)-", os.path.basename(smp)).group(1))
        rec.kill()
        rec.wait()
        # enough CPU time for the sampler to notice (64 samples at 250..1000 Hz)
        cpu0 = cpu_seconds(pid)
        wait_until(lambda: cpu_seconds(pid) - cpu0 >= 0.5, "the orphaned program to compute 0.5 s")
        before, cpu1 = sizes(), cpu_seconds(pid)
        wait_until(lambda: cpu_seconds(pid) - cpu1 >= 0.3, "the orphaned program to compute 0.3 s more")
        check(sizes() == before, "the spool grew after the recorder died (0.3 s of the program's CPU "
              "time):\n  %s\n  %s" % (before, sizes()))
        open(stop, "w").close()
        wait_until(lambda: os.path.exists(done) and open(done).read().endswith("\n"), "the program to finish")
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
        open(stop, "w").close()
        if pid:
            for _ in range(200):
                try:
                    os.kill(pid, 0)
                except OSError:
                    break
                time.sleep(0.05)



@test
def test_inproc_blocked_threads(c):
    """The in-process sampler on workers started with every signal blocked (as liblzma starts
    them): they are sampled, 1:3 as they burn; a worker that blocks every signal with the raw
    system call cannot be and is counted as not sampled (JSON, header, record's summary), also
    when it still runs as the process exits."""
    rec, data, rep = c.record_and_report([c.prog("s_signals"), "blocked"], options=["--sampler", "inproc"],
                                         min_samples=60)
    check("blocked ok" in rec.stdout, "s_signals blocked said: %r" % rec.stdout)
    light, heavy = excl(rep, "blocked_light"), excl(rep, "blocked_heavy")
    check(light + heavy >= 60, "the workers started with every signal blocked have %d + %d samples "
          "(expected about 4 parts of %d)\n  functions: %s" % (light, heavy, rep["samples"], function_list(rep)))
    share = 100.0 * heavy / (light + heavy)
    check(near(share, 75, 12), "blocked_heavy has %.1f%% of the two workers' samples, expected 75 (+-12)" % share)
    busy = sorted((t["exclusive_samples"] for t in rep["threads"] if t["exclusive_samples"] > 2), reverse=True)
    check(len(busy) == 2 and near(100.0 * busy[0] / (light + heavy), 75, 12),
          "expected two sampled worker threads, 3:1; thread rows: %s" % rep["threads"])
    check(excl(rep, "raw_blocked") <= 2, "raw_blocked (its thread blocked every signal with the raw system "
          "call) has %d samples" % excl(rep, "raw_blocked"))
    check(rep.get("unsampled_threads") == 1, "unsampled_threads is %r, expected 1 (the raw_blocked worker)" %
          rep.get("unsampled_threads"))
    check("1 thread could not be sampled" in rec.stderr, "record did not say a thread could not be sampled: %s" %
          rec.stderr.strip())
    p = c.run([c.stint, "report", "-i", data], expect=0)
    header = "\n".join(l for l in p.stdout.splitlines() if l.startswith("#"))
    check(re.search(r"NOT SAMPLED: 1 thread\b", header), "the header does not count the thread not sampled:\n%s" %
          header)
    # a thread still running when the process exits: judged by its CPU time then
    rec, data, rep = c.record_and_report([c.prog("s_signals"), "exiting"], options=["--sampler", "inproc"],
                                         min_samples=30)
    check("exiting ok" in rec.stdout, "s_signals exiting said: %r" % rec.stdout)
    check(rep["unsampled_threads"] == 1 and any(t["name"] == "s_rawspin" for t in rep["threads"]),
          "s_rawspin (raw-blocked, running at exit): unsampled_threads %r, threads %s" % (
              rep["unsampled_threads"], rep["threads"]))


@test
def test_inproc_own_handlers(c):
    """The in-process sampler on a program with signal handlers of its own: a SIGPROF handler that
    re-raises with the default action (as GNU sort's) does not kill it; its own ITIMER_PROF ticks on
    its own handler; a handler on every real-time signal runs once per raise (the sampler's signal
    among them); its samples are kept; the header says what kernel time the sampler could not see."""
    rec, data, rep = c.record_and_report([c.prog("s_signals"), "handlers"], options=["--sampler", "inproc"],
                                         min_samples=60)
    check("handlers ok" in rec.stdout, "s_signals handlers said: %r" % rec.stdout)
    check(pct(rep, excl(rep, "handlers_burn")) >= 80, "handlers_burn exclusive %.1f%%\n  functions: %s" % (
        pct(rep, excl(rep, "handlers_burn")), function_list(rep)))
    for k in ("system_call_samples", "user_time_ns", "system_time_ns", "unsampled_threads"):
        check(k in rep, "the report JSON of an in-process recording has no %r" % k)
    check(rep["unsampled_threads"] == 0, "unsampled_threads %r, expected 0" % rep["unsampled_threads"])
    check(rep["user_time_ns"] >= 0.5 * rep["samples"] * 1e9 / rep["frequency_hz"],
          "user time %d ns for %d samples at %d Hz" % (rep["user_time_ns"], rep["samples"], rep["frequency_hz"]))
    p = c.run([c.stint, "report", "-i", data], expect=0)
    header = "\n".join(l for l in p.stdout.splitlines() if l.startswith("#"))
    check("system calls not kept" in header and "system time" in header,
          "the header does not say what kernel time the sampler saw:\n%s" % header)



@test
def test_inproc_system_time(c):
    """CPU-time timers count system time too: the in-process sampler's samples taken in system calls
    (s_syscalls reads /dev/zero, nearly all kernel time) are counted, not charged to the program's
    code (as perf without --kernel keeps none there); with --kernel they are kept, charged to the call."""
    rec, data, rep = c.record_and_report([c.prog("s_syscalls")], options=["--sampler", "inproc"], min_samples=30)
    periods = rep["system_time_ns"] * rep["frequency_hz"] / 1e9
    check(periods >= 20, "s_syscalls spent only %.0f ms in the kernel" % (rep["system_time_ns"] / 1e6))
    check(rep["system_call_samples"] >= 0.4 * periods,
          "%d samples in system calls counted, for %.0f ms of system time (%.0f periods)" % (
              rep["system_call_samples"], rep["system_time_ns"] / 1e6, periods))
    in_read = incl(rep, "sys_burn")
    check(in_read <= 0.1 * rep["samples"] + 2, "sys_burn (reading /dev/zero) has %d of the %d samples kept: "
          "kernel time charged to user code\n  functions: %s" % (in_read, rep["samples"], function_list(rep)))
    check(pct(rep, excl(rep, "user_burn")) >= 80, "user_burn exclusive %.1f%%\n  functions: %s" % (
        pct(rep, excl(rep, "user_burn")), function_list(rep)))
    p = c.run([c.stint, "report", "-i", data], expect=0)
    header = "\n".join(l for l in p.stdout.splitlines() if l.startswith("#"))
    check("%d samples in system calls not kept" % rep["system_call_samples"] in header,
          "the header does not count the samples in system calls:\n%s" % header)
    _, data2 = c.record([c.prog("s_syscalls")], options=["--sampler", "inproc", "--kernel"], name="kernel.data")
    rep2 = c.report_json(data2)
    check(rep2["system_call_samples"] == 0 and incl(rep2, "sys_burn") >= 0.4 * periods,
          "--kernel: %d samples in system calls left out, sys_burn has %d (system time %.0f periods)" % (
              rep2["system_call_samples"], incl(rep2, "sys_burn"), periods))


def xz_input(path, size):
    """size bytes of text from a fixed vocabulary (compresses about 3:1, at xz's usual speed)."""
    import random
    r = random.Random(8)
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randrange(3, 10)))
             for _ in range(4000)]
    lines = [" ".join(r.choice(words) for _ in range(12)) for _ in range(20000)]
    with open(path, "w") as f:
        n = 0
        while n < size:
            l = "%d %s\n" % (n, lines[r.randrange(len(lines))])
            f.write(l)
            n += len(l)


def thread_shares(rep):
    """Each thread's share (%) of the samples, largest first."""
    n = rep["samples"]
    return sorted((100.0 * t["exclusive_samples"] / n for t in rep["threads"]), reverse=True)


@test
def test_inproc_xz_threads(c):
    """xz -T2 (liblzma's workers start with every signal blocked): the in-process sampler's
    both workers sampled, per-thread shares close to perf's (stint record -m sample), its
    output intact."""
    xz = shutil.which("xz")
    if not xz:
        raise TestSkip("xz is not installed (Debian's xz-utils)")
    need_perf()
    src = os.path.join(c.tmp, "input.txt")
    xz_input(src, 8 * 1000 * 1000)
    # two blocks of the same size: each worker compresses one, so the split
    # of the work between the threads is the same in both runs (with xz's
    # default blocks it varies from run to run, and the shares with it)
    argv = [xz, "-T2", "-1", "--block-size=4000000", "-c", src]
    ref = subprocess.run(argv, stdout=subprocess.PIPE, timeout=RECORD_TIMEOUT).stdout
    reps = {}
    for sampler in ("inproc", "perf"):
        data = os.path.join(c.tmp, sampler + ".data")
        cmd = [c.stint, "record", "-m", "sample", "--sampler", sampler, "-o", data, "--"] + argv
        c.log.append(" ".join(cmd))
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=RECORD_TIMEOUT * 2)
        check(p.returncode == 0, "%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")))
        check(p.stdout == ref, "xz -T2 wrote other bytes under the %s sampler" % sampler)
        reps[sampler] = c.report_json(data)
    ip, pf = reps["inproc"], reps["perf"]
    check(len(pf["threads"]) >= 2, "perf saw %d threads of xz -T2, expected (at least) the 2 workers" %
          len(pf["threads"]))
    check(ip["samples"] >= 0.5 * pf["samples"], "the in-process sampler kept %d samples, perf %d" % (
        ip["samples"], pf["samples"]))
    check(ip["unsampled_threads"] == 0, "%d threads not sampled" % ip["unsampled_threads"])
    si, sp = thread_shares(ip), thread_shares(pf)
    si += [0.0] * (len(sp) - len(si))
    sp += [0.0] * (len(si) - len(sp))
    diffs = [abs(a - b) for a, b in zip(si, sp)]
    # Both workers must be sampled (before the fix they got nothing).  The
    # two recordings are two runs, and how the CPU time of a run splits
    # between its workers varies with the machine's load by several points,
    # so the shares are compared loosely here; the 5-point figure of a quiet
    # machine is measured side by side in bench/ (README, closing note).
    check(len(si) >= 2 and si[1] >= 20, "a worker of xz -T2 was barely sampled: in-process %s" %
          ["%.1f" % x for x in si])
    check(max(diffs) <= 15, "per-thread shares differ by %.1f points: in-process %s, perf %s" % (
        max(diffs), ["%.1f" % x for x in si], ["%.1f" % x for x in sp]))
    print("note: xz -T2 thread shares in-process %s (%d samples), perf %s (%d samples)" % (
        ["%.1f" % x for x in si if x], ip["samples"], ["%.1f" % x for x in sp if x], pf["samples"]))


@test
def test_inproc_sort_unharmed(c):
    """GNU sort (it catches SIGPROF and re-raises it) under the in-process sampler: exit 0, the
    same output as without stint, samples kept."""
    sort = shutil.which("sort")
    if not sort:
        raise TestSkip("sort (coreutils) is not installed")
    src = os.path.join(c.tmp, "input.txt")
    import random
    r = random.Random(5)
    with open(src, "w") as f:
        for i in range(300000):
            f.write("%08d %s\n" % (r.randrange(10 ** 8), "".join(r.choice("abcdefghij") for _ in range(16))))
    ref = subprocess.run([sort, src], stdout=subprocess.PIPE, timeout=RECORD_TIMEOUT).stdout
    data = os.path.join(c.tmp, "sort.data")
    cmd = [c.stint, "record", "-m", "sample", "--sampler", "inproc", "-o", data, "--", sort, src]
    c.log.append(" ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=RECORD_TIMEOUT * 2)
    check(p.returncode == 0, "sort under the in-process sampler exited %d: %s" % (
        p.returncode, p.stderr.decode(errors="replace")))
    check(p.stdout == ref, "sort wrote %d bytes under the in-process sampler, %d without" % (
        len(p.stdout), len(ref)))
    rep = c.report_json(data)
    check(rep["samples"] >= 20, "only %d samples of sort" % rep["samples"])


INLINED = ("hash_values", "mix_round", "sort_values", "swap_down")


def elf_offset_to_vaddr(path):
    """A function turning a file offset of the ELF file into its virtual address (readelf -lW)."""
    p = subprocess.run(["readelf", "-lW", path], stdout=subprocess.PIPE, universal_newlines=True)
    loads = []
    for l in p.stdout.splitlines():
        f = l.split()
        if f and f[0] == "LOAD":
            loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # offset, vaddr, filesz

    def conv(off):
        for o, v, n in loads:
            if o <= off < o + n:
                return off - o + v
        return off
    return conv


def innermost_functions(path, vaddrs):
    """addr2line -i -f: the innermost (inlined) function at each address."""
    p = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", path] + ["0x%x" % a for a in vaddrs],
                       stdout=subprocess.PIPE, universal_newlines=True)
    out, cur, first = {}, None, False
    for l in p.stdout.splitlines():
        if re.match(r"^0x[0-9a-f]+$", l):
            cur, first = int(l, 16), True
        elif first and cur is not None:
            out[cur] = l.strip()
            first = False
    return out


def perf_inline_children(perf, perf_data):
    """Children % per function of `perf report --inline --children` (inlined ones without the suffix)."""
    p = subprocess.run([perf, "report", "-i", perf_data, "--inline", "--children", "--stdio", "-g", "none",
                        "--comms", "s_inline", "--percentage", "relative"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    rows = {}
    for l in p.stdout.splitlines():
        m = re.match(r"^\s+([\d.]+)%\s+([\d.]+)%\s.*?\[\.\]\s+(.*?)(\s+\(inlined\))?\s*$", l)
        if m:
            rows.setdefault(m.group(3), float(m.group(1)))
    return rows, p


@test
def test_inline_functions(c):
    """Static functions inlined at -O2 (s_inline): each is on the stack (doc/numbers.md, sampling); exclusive samples
    go to the innermost inlined function (checked against addr2line -i of the sampled addresses),
    inclusive % within 2 points of `perf report --inline --children` on the same run; --by line and
    annotate credit the inlined call sites' lines."""
    need_perf()
    prog = c.prog("s_inline")
    perf = shutil.which("perf")
    perf_data = os.path.join(c.tmp, "perf.data")
    perf_why = None
    if perf is None:
        perf_why = "perf is not installed (scripts/deps.sh --bench installs it)"
    else:
        # perf samples the same run as stint (it follows stint's child), so both see the same execution
        data = os.path.join(c.tmp, "stint.data")
        p = c.run([perf, "record", "-q", "-F", "1000", "-e", "task-clock:u", "--call-graph", "dwarf", "-o", perf_data,
                   "--", c.stint, "record", "-m", "sample", "-o", data, "--", prog], timeout=60)
        if p.returncode != 0 or not os.path.exists(data):
            perf_why = "perf record failed here (%s)" % p.stderr.strip()[-200:]
    if perf_why:
        _, data = c.record([prog])
    rep = c.report_json(data)
    check(rep["samples"] >= 300, "only %d samples" % rep["samples"])
    for n in INLINED:
        r = func(rep, n)
        check(r["module"] == "s_inline", "%s's module is %r, expected s_inline (the code's)" % (n, r["module"]))
    # each function's samples: hash_values holds mix_round; hash + sort + finish cover main's
    for outer, inner in (("hash_values", "mix_round"), ("sort_values", "swap_down")):
        check(incl(rep, outer) >= incl(rep, inner) > 0, "%s inclusive %d < %s's %d\n  functions: %s" % (
            outer, incl(rep, outer), inner, incl(rep, inner), function_list(rep)))
        check(pct(rep, incl(rep, outer)) >= 15, "%s has %.1f%% inclusive, expected >= 15%%\n  functions: %s" % (
            outer, pct(rep, incl(rep, outer)), function_list(rep)))
    covered = incl(rep, "hash_values") + incl(rep, "sort_values") + incl(rep, "finish")
    check(covered >= 0.95 * rep["samples"], "hash_values + sort_values + finish cover %d of %d samples\n"
          "  functions: %s" % (covered, rep["samples"], function_list(rep)))
    check(pct(rep, excl(rep, "main")) < 5, "main keeps %.1f%% exclusive: inlined code still charged to it" % (
        pct(rep, excl(rep, "main"))))
    # exclusive: the innermost function addr2line -i names at each sampled address
    addr = c.report_json(data, ["--by", "address"])["addresses"]
    conv = elf_offset_to_vaddr(prog)
    mine = [(int(a["name"].split()[0], 16), a["exclusive_samples"]) for a in addr
            if a["module"] == "s_inline" and a["exclusive_samples"]]
    names = innermost_functions(prog, [conv(o) for o, _ in mine])
    want = {}
    for o, n in mine:
        f = names.get(conv(o), "??")
        want[f] = want.get(f, 0) + n
    bad = ["%s: stint %d, addr2line -i %d" % (f, excl(rep, f), want.get(f, 0))
           for f in set(want) | set(INLINED) | {"main", "finish"} if f != "??" and excl(rep, f) != want.get(f, 0)]
    check(not bad, "exclusive samples differ from the innermost functions addr2line -i gives for the sampled "
          "addresses:\n  " + "\n  ".join(bad))
    # inclusive % against perf report --inline --children on the same run
    if perf_why:
        print("note: part skipped, the comparison with perf report --inline --children: %s" % perf_why)
    else:
        rows, p = perf_inline_children(perf, perf_data)
        missing = [n for n in INLINED if n not in rows]
        if missing:
            print("note: part skipped, perf report --inline shows no %s here (perf without inline support?): %s" % (
                ", ".join(missing), p.stderr.strip()[-200:]))
        else:
            # two samplers of one run still take different samples: allowed
            # 2 points, or three standard deviations of the difference of
            # two shares of this many samples each where that is more
            nsamp = max(rep["samples"], 1)

            def tolerance(share):
                q = min(max(share / 100.0, 0.0), 1.0)
                return max(2.0, 300.0 * math.sqrt(2.0 * q * (1.0 - q) / nsamp))
            bad = ["%s: stint %.1f%%, perf %.1f%% (allowed %.1f points)" % (
                       n, pct(rep, incl(rep, n)), rows[n], tolerance(rows[n]))
                   for n in INLINED + ("finish",) if abs(pct(rep, incl(rep, n)) - rows[n]) > tolerance(rows[n])]
            check(not bad, "inclusive %% differ from perf report --inline --children beyond sampling noise:\n  " +
                  "\n  ".join(bad))
            print("note: inclusive %% stint/perf: %s" % ", ".join(
                "%s %.1f/%.1f" % (n, pct(rep, incl(rep, n)), rows[n]) for n in INLINED))
    # --by line: the inlined call sites have inclusive samples
    lines = {l["name"].rsplit("/", 1)[-1]: l for l in c.report_json(data, ["--by", "line"])["lines"]}
    for marker, fn in (("hash_values(s_iters", "hash_values"), ("sort_values(s_iters", "sort_values"),
                       ("mix_round(h ^", "mix_round"), ("swap_down(vals, i)", "swap_down")):
        key = "s_inline.c:%d" % marker_line("s_inline.c", marker)
        check(key in lines, "no --by line row for the call site %s of %s; lines: %s" % (key, fn, sorted(lines)))
        check(lines[key]["inclusive_samples"] >= 0.9 * incl(rep, fn),
              "call site %s has %d inclusive samples, the inlined %s %d" % (
                  key, lines[key]["inclusive_samples"], fn, incl(rep, fn)))
    # annotate: main shows its inlined call lines; an inlined function can be annotated
    call = marker_line("s_inline.c", "hash_values(s_iters")
    p = c.run([c.stint, "annotate", "-i", data, "main"], expect=0)
    counts = {int(m.group(3)): int(m.group(1)) for m in
              (re.match(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s", l) for l in p.stdout.splitlines()) if m}
    check(counts.get(call, 0) >= 0.9 * incl(rep, "hash_values"),
          "annotate main: line %d (hash_values inlined) has %d samples, expected ~%d:\n%s" % (
              call, counts.get(call, 0), incl(rep, "hash_values"), p.stdout))
    p = c.run([c.stint, "annotate", "-i", data, "mix_round"], expect=0)
    check("mix_round" in p.stdout.splitlines()[0] and "x ^= x >> 29" in p.stdout,
          "annotate of the inlined mix_round does not show its source:\n%s" % p.stdout)


@test
def test_plt_stubs(c):
    """Samples in PLT stubs are named NAME@plt (rand_r@plt), as perf does, in the classic .plt
    layout and in IBT's .plt.sec (s_plt_ibt, where the linker can make it): never a bare address."""
    progs = ["s_plt"] + (["s_plt_ibt"] if os.path.exists(os.path.join(c.progs, "s_plt_ibt")) else [])
    if len(progs) == 1:
        print("note: s_plt_ibt not built (the linker has no -z ibtplt): the .plt.sec layout is not tested")
    for name in progs:
        # the stub is one jump: where a CPU (a VM's) puts its timer interrupts after the jump's
        # target, it gets no sample, perf's neither; three runs, then perf is asked
        for attempt in range(3):
            _, data, rep = c.record_and_report([c.prog(name)], min_samples=150)
            stub = function_rows(rep, "rand_r@plt")
            if stub:
                break
        if not stub:
            perf = shutil.which("perf")
            seen = None
            if perf:
                pd = os.path.join(c.tmp, "plt.perf")
                p = c.run([perf, "record", "-q", "-e", "task-clock:u", "-o", pd, "--", c.prog(name)], expect=None)
                r = c.run([perf, "report", "-i", pd, "--stdio", "--sort", "sym"], expect=None) if p.returncode == 0 else None
                if r is not None and r.returncode == 0:
                    seen = len([l for l in r.stdout.splitlines() if "@plt" in l])
            check(seen == 0, "%s: no sample in rand_r@plt in 3 runs, where perf %s\n  functions: %s" % (
                name, "is not installed" if perf is None else "found samples in PLT stubs" if seen else
                "could not be run", function_list(rep)))
            raise TestSkip("%s: no sample fell in the PLT stub in 3 runs, nor in perf's run: this CPU "
                           "gives the one-jump stub no sample" % name)
        check(len(stub) == 1 and stub[0]["module"] == name,
              "%s: expected one function row rand_r@plt in module %s\n  functions: %s" % (
                  name, name, function_list(rep)))
        check(stub[0]["exclusive_samples"] > 0, "%s: rand_r@plt has no exclusive samples" % name)
        bare = [r for r in rep["functions"] if r["module"] == name and re.match(r"^0x[0-9a-f]+$", r["name"])]
        check(not bare, "%s: unnamed code in the executable: %s" % (
            name, ["%s %d" % (r["name"], r["exclusive_samples"]) for r in bare]))
        check(incl(rep, "plt_loop") >= 0.9 * rep["samples"], "%s: plt_loop inclusive %d of %d" % (
            name, incl(rep, "plt_loop"), rep["samples"]))


@test
def test_relative_source_paths(c):
    """A program compiled as make-based projects do, from the project's top directory with a
    source path that has a directory part (gcc -g src/hot.c): its lines name the file with the
    unit's compilation directory (src/hot.c was found by annotate only when run from there;
    perf, objdump -S and addr2line join the two)."""
    cc = shutil.which("gcc")
    if not cc:
        raise TestSkip("no gcc")
    proj = os.path.join(c.tmp, "proj")
    os.makedirs(os.path.join(proj, "src"))
    with open(os.path.join(proj, "src", "hot.c"), "w") as f:
        f.write("volatile unsigned long sink;\n"
                "__attribute__((noinline)) void hot(unsigned long n)\n"
                "{\n"
                "\tfor (unsigned long i = 0; i < n; i++)\n"
                "\t\tsink = sink * 6364136223846793005ul + i; /* HOT LINE */\n"
                "}\n"
                "int main(void) { hot(300000000ul); return 0; }\n")
    prog = os.path.join(c.tmp, "hot")
    c.run([cc, "-O2", "-g", "-o", prog, "src/hot.c"], expect=0, cwd=proj)
    _, data, rep = c.record_and_report([prog], min_samples=100)
    rows = c.report_json(data, ["--by", "line"])["lines"]
    files = set(r["name"].rsplit(":", 1)[0] for r in rows if ":" in r["name"] and r["module"] == "hot")
    check(files == {os.path.join(proj, "src", "hot.c")}, "the lines name %s, expected %s" % (
        sorted(files), os.path.join(proj, "src", "hot.c")))
    p = c.run([c.stint, "annotate", "-i", data, "hot"], expect=0, cwd="/")
    check("HOT LINE" in p.stdout, "annotate run from / did not find the source:\n%s" % p.stdout[:1500])


@test
def test_same_name_two_modules(c):
    """A static function "work" in the program and another in its library: the report keeps two
    rows, and annotate and callers never mix them.  annotate work printed the program's lines
    under the sum of both functions' samples; callers --module LIB picked the program's (0).
    Now: one name in several modules is asked to be named 'work [MODULE]', and --module
    chooses for callers."""
    _, data, rep = c.record_and_report([c.prog("s_samename")], min_samples=150)
    rows = {r["module"]: r for r in function_rows(rep, "work")}
    lib = [m for m in rows if m != "s_samename"]
    check("s_samename" in rows and len(lib) == 1, "expected two rows of work: %s" % function_list(rep))
    lib = lib[0]
    for cmd in (["annotate"], ["callers"]):
        p = c.run([c.stint] + cmd + ["-i", data, "work"], expect=None)
        check(p.returncode == 2 and "work [" + lib + "]" in p.stderr,
              "%s work: exit %d, expected a refusal naming the modules: %s" % (cmd[0], p.returncode, p.stderr))
    for mod, loop, other in (("s_samename", "THE PROGRAM'S LOOP", "THE LIBRARY'S LOOP"),
                             (lib, "THE LIBRARY'S LOOP", "THE PROGRAM'S LOOP")):
        p = c.run([c.stint, "annotate", "-i", data, "work [%s]" % mod], expect=0)
        check(loop in p.stdout and other not in p.stdout, "annotate 'work [%s]' shows the other's source:\n%s" % (
            mod, p.stdout[:1500]))
        m = re.search(r"# (\d+) of (\d+) samples inclusive", p.stdout)
        check(m and int(m.group(1)) == rows[mod]["inclusive_samples"],
              "annotate 'work [%s]' counts %s samples, the report %d" % (
                  mod, m.group(1) if m else "?", rows[mod]["inclusive_samples"]))
    p = c.run([c.stint, "callers", "-i", data, "--module", lib, "--format", "json", "work"], expect=0)
    check('"' + lib + '"' in p.stdout and "lib_entry" in p.stdout,
          "callers --module %s work: not the library's work:\n%s" % (lib, p.stdout[:1500]))
    # two programs of one file name (a/s_samename, b/s_samename): told apart by their paths; 'work
    # [s_samename]' counted both programs' samples under one header
    progs = []
    for d in ("a", "b"):
        os.makedirs(os.path.join(c.tmp, d), exist_ok=True)
        progs.append(os.path.join(c.tmp, d, "s_samename"))
        shutil.copy(c.prog("s_samename"), progs[-1])
    env = dict(os.environ, LD_LIBRARY_PATH=c.progs)
    two = os.path.join(c.tmp, "two.data")
    c.run([c.stint, "record", "-m", "sample", "-o", two, "--", "/bin/sh", "-c", "%s; %s" % tuple(progs)], expect=0,
          env=env)
    for cmd in (["annotate"], ["callers"]):
        p = c.run([c.stint] + cmd + ["-i", two, "work [s_samename]"], expect=None)
        check(p.returncode == 2 and progs[0] in p.stderr and progs[1] in p.stderr,
              "%s 'work [s_samename]' of two programs: exit %d, expected a refusal naming both paths: %s" % (
                  cmd[0], p.returncode, p.stderr))
    rep2 = c.report_json(two)
    mine = [r for r in function_rows(rep2, "work") if r["module"] == progs[0]]
    check(len(mine) == 1, "no row of work in %s: %s" % (progs[0], function_list(rep2)))
    p = c.run([c.stint, "annotate", "-i", two, "work [%s]" % progs[0]], expect=0)
    m = re.search(r"# (\d+) of (\d+) samples inclusive", p.stdout)
    check(m and int(m.group(1)) == mine[0]["inclusive_samples"], "annotate 'work [%s]' counts %s, the report %d" % (
        progs[0], m.group(1) if m else "?", mine[0]["inclusive_samples"]))


@test
def test_static_functions_two_files(c):
    """A static function "work" in each of two source files of one program: two rows, each
    with its own file, labelled FILE:NAME in the table; annotate, callers and diff never mix
    them, and 'FILE:NAME' picks one (as gdb names it).  Both were one row of their summed
    samples, annotate showing one file's lines under it; perf shows two rows."""
    _, data, rep = c.record_and_report([c.prog("s_twofiles")], min_samples=150)
    rows = {os.path.basename(r.get("file", "")): r for r in function_rows(rep, "work")}
    check(sorted(rows) == ["s_twofiles_a.c", "s_twofiles_b.c"],
          "expected a row of work per source file: %s" % [(r["name"], r.get("file")) for r in function_rows(rep, "work")])
    a, b = rows["s_twofiles_a.c"], rows["s_twofiles_b.c"]
    check(a["exclusive_samples"] > b["exclusive_samples"],
          "work of file A (3 units) has %d samples, of file B (1 unit) %d" % (a["exclusive_samples"], b["exclusive_samples"]))
    p = c.run([c.stint, "report", "-i", data, "--no-pager", "--color=never"], expect=0)
    check("s_twofiles_a.c:work [s_twofiles]" in p.stdout and "s_twofiles_b.c:work [s_twofiles]" in p.stdout,
          "the table does not tell the two apart:\n%s" % p.stdout[:2000])
    for cmd in (["annotate"], ["callers"]):
        p = c.run([c.stint] + cmd + ["-i", data, "work"], expect=None)
        check(p.returncode == 2 and "s_twofiles_a.c" in p.stderr and "s_twofiles_b.c" in p.stderr,
              "%s work: exit %d, expected a refusal naming both files: %s" % (cmd[0], p.returncode, p.stderr))
    for f, loop, other, row in (("s_twofiles_a.c", "FILE A'S LOOP", "FILE B'S LOOP", a),
                                ("s_twofiles_b.c", "FILE B'S LOOP", "FILE A'S LOOP", b)):
        p = c.run([c.stint, "annotate", "-i", data, f + ":work"], expect=0)
        check(loop in p.stdout and other not in p.stdout, "annotate %s:work shows the other's source:\n%s" % (
            f, p.stdout[:1500]))
        m = re.search(r"# (\d+) of (\d+) samples inclusive", p.stdout)
        check(m and int(m.group(1)) == row["inclusive_samples"], "annotate %s:work counts %s samples, the report %d" % (
            f, m.group(1) if m else "?", row["inclusive_samples"]))
    p = c.run([c.stint, "callers", "-i", data, "--format", "json", "s_twofiles_b.c:work"], expect=0)
    fn = json.loads(p.stdout)["function"]
    check(fn["inclusive_samples"] == b["inclusive_samples"], "callers s_twofiles_b.c:work counts %d samples, the report %d" % (
        fn["inclusive_samples"], b["inclusive_samples"]))
    p = c.run([c.stint, "report", "-i", data, "--tree", "--no-pager", "--color=never"], expect=0)
    check("s_twofiles_a.c:work" in p.stdout and "s_twofiles_b.c:work" in p.stdout,
          "the tree does not tell the two apart:\n%s" % p.stdout[-1500:])
    p = c.run([c.stint, "callers", "-i", data, "--no-pager", "s_twofiles_b.c:work"], expect=0)
    check(p.stdout.startswith("# s_twofiles_b.c:work ["), "callers' header: %s" % p.stdout[:200])
    sel = c.report_json(data, options=["--function", "s_twofiles_b.c:work"])
    check(sel["samples"] == b["inclusive_samples"], "--function s_twofiles_b.c:work selects %d samples, the row has %d" % (
        sel["samples"], b["inclusive_samples"]))
    p = c.run([c.stint, "diff", "--format", "json", data, data], expect=0)
    works = [r for r in json.loads(p.stdout)["functions"] if r["name"] == "work"]
    check(sorted(r.get("file") for r in works) == ["s_twofiles_a.c", "s_twofiles_b.c"] and
          all(r["in_a"] and r["in_b"] and r["delta_exclusive_pct"] == 0 for r in works),
          "diff of a file with itself mixes the two: %s" % works)


@test
def test_lines_without_aranges(c):
    """A program without .debug_aranges (clang emits none unless -gdwarf-aranges): its samples
    still have source lines, its functions their files, annotate the source.  libdw found no
    unit for any address of such a build: no line, no inlined frame, every function of one name
    one row."""
    prog = os.path.join(c.progs, "s_twofiles_noaranges")
    p = c.run(["readelf", "-S", prog], expect=0)
    check(".debug_aranges" not in p.stdout and ".debug_info" in p.stdout, "the test program still has .debug_aranges")
    _, data, rep = c.record_and_report([prog], min_samples=150)
    files = sorted(os.path.basename(r.get("file", "")) for r in function_rows(rep, "work"))
    check(files == ["s_twofiles_a.c", "s_twofiles_b.c"], "work's rows' files: %s" % files)
    p = c.run([c.stint, "report", "-i", data, "--by", "line", "--format", "json"], expect=0)
    lines = [r["name"] for r in json.loads(p.stdout)["lines"] if "s_twofiles_" in r["name"]]
    check(lines, "no source line of the program in --by line: %s" % p.stdout[:1500])
    p = c.run([c.stint, "annotate", "-i", data, "s_twofiles_b.c:work"], expect=0)
    check("FILE B'S LOOP" in p.stdout, "annotate shows no source:\n%s" % p.stdout[:1500])


@test
def test_inline_functions_split_dwarf(c):
    """The inlining program built with -gsplit-dwarf: its functions' DWARF is in a .dwo file
    beside the object, the program holding a skeleton unit (lines, no functions).  The inlined
    functions are on the stack, with their files, as without it: none was (the skeleton has no
    function to walk), every inlined function's samples its caller's."""
    _, data, rep = c.record_and_report([c.prog("s_inline_split")], min_samples=300)
    missing = [n for n in INLINED if not function_rows(rep, n)]
    check(not missing, "inlined functions missing with -gsplit-dwarf: %s\n  functions: %s" % (
        missing, function_list(rep)))
    for outer, inner in (("hash_values", "mix_round"), ("sort_values", "swap_down")):
        check(incl(rep, outer) >= incl(rep, inner) > 0, "%s inclusive %d < %s's %d\n  functions: %s" % (
            outer, incl(rep, outer), inner, incl(rep, inner), function_list(rep)))
    files = {r.get("file", "") for n in INLINED for r in function_rows(rep, n)}
    check(all(f.endswith("s_inline.c") for f in files), "inlined functions' files: %s" % files)


@test
def test_no_sample_said(c):
    """A program that runs less CPU time than one sampling period (/bin/true at -F 10): exit 0,
    and record says why there is no sample, with both samplers.  It said "recorded 0 samples
    of 0 processes", as if the program had not run."""
    for extra in ([], ["--sampler", "inproc"]):
        p = c.run([c.stint, "record", "-m", "sample", "-F", "10", "-o", os.path.join(c.tmp, "t.data")] + extra +
                  ["--", "/bin/true"], expect=0)
        check("no sample" in p.stderr and "-F 10" in p.stderr,
              "record %s of /bin/true does not say why there is no sample: %s" % (" ".join(extra), p.stderr.strip()))


HEADER_SRC = {
    "include/util.h": "static inline unsigned mix(unsigned x)\n{\n\tfor (int i = 0; i < 400; i++)\n"
                      "\t\tx = x * 2654435761u + (x >> 7);\n\treturn x;\n}\n",
    "src/a.c": "#include \"util.h\"\n__attribute__((noinline)) unsigned fa(unsigned n)\n"
               "{ unsigned s = 0; for (unsigned i = 0; i < n; i++) s += mix(i); return s; }\n",
    "lib/b.c": "#include \"util.h\"\n__attribute__((noinline)) unsigned fb(unsigned n)\n"
               "{ unsigned s = 0; for (unsigned i = 0; i < n; i++) s += mix(i * 3); return s; }\n",
    "main.c": "#include <stdio.h>\nunsigned fa(unsigned), fb(unsigned);\n"
              "int main(void) { unsigned s = 0; for (int k = 0; k < 30; k++) s += fa(20000 + k) + fb(20000 + k);\n"
              "printf(\"%u\\n\", s); return 0; }\n",
}


@test
def test_header_function_one_row(c):
    """An inline function of a header that units of two directories include by two relative
    paths ("../include/util.h" from src/, "include/util.h" from the top): one function, one row,
    whether the units' compilation directory is relative (-fdebug-prefix-map, Debian's -dbg
    packages: "./libio") or the build uses LTO (the declaration's name was joined to the
    directory of the unit holding the code, a file that does not exist).  Each was two rows."""
    gcc = shutil.which("gcc")
    if not gcc:
        raise TestSkip("no gcc to build the program")
    top = os.path.join(c.tmp, "proj")
    for rel, text in HEADER_SRC.items():
        os.makedirs(os.path.dirname(os.path.join(top, rel)), exist_ok=True)
        with open(os.path.join(top, rel), "w") as f:
            f.write(text)
    for name, extra in (("prefix_map", ["-fdebug-prefix-map=%s=." % top]), ("lto", ["-flto"])):
        flags = ["-g", "-O2"] + extra
        c.run([gcc] + flags + ["-I../include", "-c", "a.c", "-o", "../a.o"], expect=0, cwd=os.path.join(top, "src"))
        c.run([gcc] + flags + ["-Iinclude", "-c", "lib/b.c", "-o", "b.o"], expect=0, cwd=top)
        c.run([gcc] + flags + ["-c", "main.c", "-o", "main.o"], expect=0, cwd=top)
        prog = os.path.join(top, name)
        c.run([gcc] + flags + ["-o", prog, "main.o", "a.o", "b.o"], expect=0, cwd=top)
        _, data, rep = c.record_and_report([prog], min_samples=50)
        rows = function_rows(rep, "mix")
        files = [r.get("file", "") for r in rows]
        check(len(rows) == 1, "%s: mix is %d rows, files %s" % (name, len(rows), files))
        check(files[0].endswith("include/util.h") and (not files[0].startswith("/") or os.path.exists(files[0])),
              "%s: mix's file is %r" % (name, files[0]))


RUST_MIX = """mod geo {
    pub fn mix(x: u64, i: u64) -> u64 {
        let mut y = x;
        for j in 0..50u64 { y = y.rotate_left(5) ^ (i.wrapping_mul(j)); }
        y
    }
}
#[inline(never)]
fn hot_inlined(n: u64) -> u64 { let mut x = n; for i in 0..2000000u64 { x = geo::mix(x, i); } x }
#[inline(never)]
fn via_ptr(f: fn(u64, u64) -> u64, n: u64) -> u64 { let mut x = n; for i in 0..2000000u64 { x = f(x, i); } x }
fn main() {
    let a = std::env::args().count() as u64;
    println!("{}", hot_inlined(a) ^ via_ptr(std::hint::black_box(geo::mix), a));
}
"""

FORTRAN_MIX = """module heavy
  implicit none
contains
  function work_a(x) result(r)
    real(8), intent(in) :: x
    real(8) :: r
    integer :: i
    r = x
    do i = 1, 3000
      r = sqrt(r*r + 1.0d0) * 0.999d0
    end do
  end function
end module

program main
  use heavy
  implicit none
  real(8) :: x
  integer :: k
  x = 1.0d0
  do k = 1, 40000
    x = x * 1.0d-3 + work_a(x)
  end do
  print *, x
end program
"""


@test
def test_inlined_names_other_languages(c):
    """Functions of Rust (v0 mangling) and Fortran (module procedures) inlined in one place and
    called out of line in another: one row each, named as the symbol table names the
    out-of-line copy (m::geo::mix, __heavy_MOD_work_a).  The inlined copies were rows of their
    bare source names (mix, work_a).  Runs with the compilers there are."""
    ran = []
    rustc, gfortran = shutil.which("rustc"), shutil.which("gfortran")
    if rustc:
        src = os.path.join(c.tmp, "m.rs")
        with open(src, "w") as f:
            f.write(RUST_MIX)
        prog = os.path.join(c.tmp, "m_v0")
        c.run([rustc, "-C", "opt-level=3", "-g", "-C", "symbol-mangling-version=v0", "-o", prog, src], expect=0,
              timeout=300)
        _, _, rep = c.record_and_report([prog], min_samples=50)
        names = [r["name"] for r in rep["functions"]]
        check("m::geo::mix" in names and "mix" not in names,
              "rust v0: functions %s" % function_list(rep))
        check(pct(rep, incl(rep, "m::geo::mix")) >= 80, "m::geo::mix has %.1f%% inclusive: %s" % (
            pct(rep, incl(rep, "m::geo::mix")), function_list(rep)))
        ran.append("rustc")
    if gfortran:
        src = os.path.join(c.tmp, "p.f90")
        with open(src, "w") as f:
            f.write(FORTRAN_MIX)
        prog = os.path.join(c.tmp, "p_f90")
        c.run([gfortran, "-O2", "-g", "-o", prog, src], expect=0, cwd=c.tmp)
        _, _, rep = c.record_and_report([prog], min_samples=50)
        names = [r["name"] for r in rep["functions"]]
        check("__heavy_MOD_work_a" in names and "work_a" not in names, "fortran: functions %s" % function_list(rep))
        ran.append("gfortran")
    if not ran:
        raise TestSkip("neither rustc nor gfortran is installed")


NESTED_HOT = r"""
#include <stdio.h>
static inline __attribute__((always_inline)) double hot(double x)
{ double s = 0; for (int k = 0; k < 400; k++) s += x * k / (k + 1.5); return s; }
__attribute__((noinline)) double run_nested(int n)
{
    double acc = 0;
    __attribute__((noinline)) void step(int i) { acc += hot(i); }
    for (int i = 0; i < n; i++) step(i);
    return acc;
}
__attribute__((noinline)) double run_plain(int n)
{ double acc = 0; for (int i = 0; i < n; i++) acc += hot(i); return acc; }
int main(void) { printf("%f %f\n", run_nested(400000), run_plain(200000)); return 0; }
"""

LAMBDA_HOT = r"""
#include <cstdio>
static inline __attribute__((always_inline)) double hot(double x)
{ double s = 0; for (int k = 0; k < 400; k++) s += x * k / (k + 1.5); return s; }
__attribute__((noinline)) double run_lambda(int n)
{
    double acc = 0;
    auto f = [&](int i) __attribute__((noinline)) { acc += hot(i); };
    for (int i = 0; i < n; i++) f(i);
    return acc;
}
int main() { std::printf("%f\n", run_lambda(400000)); }
"""

OMP_HOT = r"""
#include <stdio.h>
static inline __attribute__((always_inline)) double hot(double x)
{ double s = 0; for (int k = 0; k < 400; k++) s += x * k / (k + 1.5); return s; }
__attribute__((noinline)) double region(int n)
{
    double t = 0;
#pragma omp parallel for reduction(+:t) num_threads(2)
    for (int i = 0; i < n; i++) t += hot(i);
    return t;
}
int main(void) { printf("%f\n", region(600000)); return 0; }
"""


@test
def test_inline_in_nested_functions(c):
    """Functions GCC nests in the function they come from: a nested C function, a C++ lambda's
    operator(), an OpenMP region's outlined body (region._omp_fn.0).  What was inlined into them
    was not found (their code was in no indexed function): hot() had only its run_plain copy's
    share, was missing from the lambda's program altogether, and the region's time was its
    outlined body's own.  Now hot() holds ~all the samples in each."""
    builds = [("nested", "gcc", NESTED_HOT, ".c", []), ("lambda", "g++", LAMBDA_HOT, ".cpp", []),
              ("omp", "gcc", OMP_HOT, ".c", ["-fopenmp"])]
    for name, cc, text, ext, flags in builds:
        src = os.path.join(c.tmp, name + ext)
        with open(src, "w") as f:
            f.write(text)
        prog = os.path.join(c.tmp, name)
        c.run([cc, "-O2", "-g", "-o", prog, src] + flags, expect=0)
        _, _, rep = c.record_and_report([prog], min_samples=100)
        hot = [r for r in rep["functions"] if r["name"].split("(")[0] == "hot"]
        check(len(hot) == 1, "%s: hot() is %d rows: %s" % (name, len(hot), function_list(rep)))
        share = pct(rep, hot[0]["exclusive_samples"])
        check(share >= 85, "%s: hot() has %.1f%% exclusive: %s" % (name, share, function_list(rep)))


TWO_LAMBDAS = r"""
#include <cstdio>
__attribute__((noinline)) double run_a(int n)
{ double acc = 0; auto f = [&](int i) { for (int k = 0; k < 300; k++) acc += i * k / (k + 1.5); };
  for (int i = 0; i < n; i++) f(i); return acc; }
__attribute__((noinline)) double run_b(int n)
{ double acc = 0; auto g = [&](int i) { for (int k = 0; k < 300; k++) acc += i * k / (k + 2.5); };
  for (int i = 0; i < n; i++) g(i); return acc; }
int main() { std::printf("%f %f\n", run_a(400000), run_b(200000)); }
"""


@test
def test_inlined_lambdas_named(c):
    """Two lambdas, each inlined into the function that made it (GCC gives their operator() no
    linkage name): both were one row named "operator()", no file.  Each is now named within
    its function (with its namespaces and parameters, as demangled) and the place that makes it
    (run_a(int)::{lambda@4:28}::operator()), two rows with their own shares (two lambdas of one
    function, or of one line, too)."""
    src = os.path.join(c.tmp, "lam.cpp")
    with open(src, "w") as f:
        f.write(TWO_LAMBDAS)
    prog = os.path.join(c.tmp, "lam")
    c.run(["g++", "-O2", "-g", "-o", prog, src], expect=0)
    _, _, rep = c.record_and_report([prog], min_samples=100)
    names = [r["name"] for r in rep["functions"]]
    check("operator()" not in names, "a bare operator() row: %s" % function_list(rep))
    def lambda_of(fn, line):
        return sum(r["exclusive_samples"] for r in rep["functions"]
                   if r["name"].startswith("%s(int)::{lambda@%d:" % (fn, line)) and r["name"].endswith("}::operator()"))
    a, b = lambda_of("run_a", 4), lambda_of("run_b", 7)
    check(pct(rep, a) > 45 and pct(rep, b) > 20, "the lambdas' rows: %s" % function_list(rep))


DEEP_REC = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long leaf(long x) { long s = 0; for (int i = 0; i < 300; i++) s += (x * i) ^ (s >> 3); return s; }
__attribute__((noipa)) long deep(int d, long x)
{
    volatile long pad[2];
    pad[0] = x;
    if (d == 0) return leaf(pad[0]);
    long r = deep(d - 1, x + 1);
    pad[1] = r;
    return pad[1] + (d & 1);
}
int main(int argc, char **argv)
{
    int depth = atoi(argv[1]), n = atoi(argv[2]);
    long t = 0;
    for (int i = 0; i < n; i++) t += deep(depth, i);
    printf("%ld\n", t);
    return 0;
}
"""


@test
def test_deep_stacks_counted(c):
    """Stacks deeper than the frames kept: DWARF unwinding stopped at 1024 frames, with a copy
    of the stack holding all 1500 (main at 64-77 %% inclusive, "0 stacks cut short"); with
    frame pointers the kernel keeps perf_event_max_stack frames (127) and drops the rest
    unmarked, also counted as whole.  Now 4096 frames are kept, and a stack cut by either limit
    is counted, and said."""
    src = os.path.join(c.tmp, "rec.c")
    with open(src, "w") as f:
        f.write(DEEP_REC)
    nofp, fp = os.path.join(c.tmp, "rec_nofp"), os.path.join(c.tmp, "rec_fp")
    c.run(["gcc", "-O2", "-g", "-o", nofp, src], expect=0)
    c.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", fp, src], expect=0)
    _, _, rep = c.record_and_report([nofp, "1500", "150000"], options=["--stack-size", "65000"])
    check(pct(rep, incl(rep, "main")) >= 99, "1500 frames deep: main has %.1f%% inclusive, %d cut: %s" % (
        pct(rep, incl(rep, "main")), rep["cut_stacks"], function_list(rep)))
    rec, _, rep = c.record_and_report([fp, "300", "150000"], options=["--call-graph", "fp"])
    # (a few samples without main are whole: start-up, exit)
    under = rep["samples"] - incl(rep, "main")
    check(rep["cut_stacks"] >= under - 5 and rep["cut_stacks"] > 0,
          "frame pointers, 300 deep: %d stacks without main, %d counted cut short" % (under, rep["cut_stacks"]))
    check("perf_event_max_stack" in rec.stderr, "record does not say where the frames were cut: %s" % rec.stderr)


@test
def test_deleted_program_said(c):
    """A program removed once it ran (a configure test, a test harness's binary) while the
    recording goes on: its stacks were said to stop "at code without unwind information
    (hand-written assembly, or code generated at run time)".  Now record and report say its
    file was removed before stint could read it."""
    src = os.path.join(c.tmp, "rec.c")
    with open(src, "w") as f:
        f.write(DEEP_REC)
    prog = os.path.join(c.tmp, "rec_built")
    c.run(["gcc", "-O2", "-g", "-o", prog, src], expect=0)
    script = os.path.join(c.tmp, "run.sh")
    tmp_prog = os.path.join(c.tmp, "tmp-rec")
    with open(script, "w") as f:
        f.write("#!/bin/sh\ncp %s %s && %s 50 400000 >/dev/null; rm -f %s\n" % (prog, tmp_prog, tmp_prog, tmp_prog))
    os.chmod(script, 0o755)
    rec, data, rep = c.record_and_report([script], min_samples=50)
    check("file was removed" in rec.stderr and "without unwind information" not in rec.stderr,
          "record's words for a deleted program: %s" % rec.stderr)
    text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
    check("whose file was removed" in text and "without unwind information" not in text,
          "the report's header for a deleted program:\n%s" % text[:1200])


@test
def test_clang_functions_files(c):
    """A clang build (DWARF 5, no .debug_aranges): each function has its file and its
    declaration's line, and the static "work" of each of two files is its own row.  clang names
    the unit's own file by index 0, which libdw's dwarf_decl_file refuses: the functions of the
    main files had no file, both "work"s were one row."""
    clang = shutil.which("clang")
    if not clang:
        raise TestSkip("no clang to build the program")
    prog = os.path.join(c.tmp, "twofiles_clang")
    c.run([clang, "-O2", "-g", "-I", PROG_SOURCES, "-o", prog, os.path.join(PROG_SOURCES, "s_twofiles_a.c"),
           os.path.join(PROG_SOURCES, "s_twofiles_b.c")], expect=0)
    _, data, rep = c.record_and_report([prog], min_samples=150)
    files = sorted(os.path.basename(r.get("file", "")) for r in function_rows(rep, "work"))
    check(files == ["s_twofiles_a.c", "s_twofiles_b.c"], "work's rows' files: %s" % files)
    # a function whose first instruction is a header's inline function's: its row gives its own
    # declaration (api at line 3), an inlined static one its file (helper)
    with open(os.path.join(c.tmp, "h.h"), "w") as f:
        f.write("static inline unsigned get(unsigned x)\n{\n\tfor (int i = 0; i < 40; i++)\n"
                "\t\tx = x * 2654435761u + (x >> 9);\n\treturn x;\n}\n")
    with open(os.path.join(c.tmp, "y.c"), "w") as f:
        f.write("#include <stdio.h>\n#include \"h.h\"\n__attribute__((noinline)) unsigned api(unsigned i)\n{\n"
                "\treturn get(i);\n}\nstatic unsigned helper(unsigned i) { return get(i + 1) ^ 7; }\n"
                "int main(void)\n{\n\tunsigned s = 0;\n\tfor (unsigned i = 0; i < 3000000; i++)\n"
                "\t\ts += api(i) + helper(i);\n\tprintf(\"%u\\n\", s);\n\treturn 0;\n}\n")
    prog = os.path.join(c.tmp, "y_clang")
    c.run([clang, "-O2", "-g", "-o", prog, "y.c"], expect=0, cwd=c.tmp)
    _, data, rep = c.record_and_report([prog], min_samples=100)
    places = {r["name"]: (os.path.basename(r.get("file", "")), r.get("line")) for r in rep["functions"]}
    check(places.get("api") == ("y.c", 3) and places.get("helper", ("y.c",))[0] == "y.c",
          "api's and helper's places: %s (api is declared at y.c:3)" % {k: places.get(k) for k in ("api", "helper")})


@test
def test_code_mapped_twice(c):
    """A program's code mapped a second time, away from its text, and run only there (what V8
    does with node's embedded builtins): its samples are named by the file's symbols, as perf
    names them.  Each sampled address was a row of its own, named by its offset (0x1257
    [s_text_again] 56 %, ...): libdwfl took the mapping's bias from where the file's first
    segment would be."""
    _, data, rep = c.record_and_report([c.prog("s_text_again")], min_samples=100)
    check(pct(rep, excl(rep, "spin_again")) >= 90, "spin_again has %.1f%% exclusive\n  functions: %s" % (
        pct(rep, excl(rep, "spin_again")), function_list(rep)))
    bare = [r["name"] for r in rep["functions"] if re.match(r"^0x[0-9a-f]+$", r["name"])]
    check(not bare, "bare addresses: %s" % bare)


@test
def test_static_cxx_function_one_row(c):
    """A static C++ function inlined in one loop and called out of line in another is one row,
    named as its symbol demangles: GCC gives it no linkage name in DWARF, and its inlined copy was
    a second row "mix" beside "mix(unsigned long, unsigned long)" (about half each)."""
    _, data, rep = c.record_and_report([c.prog("s_static_inline")], min_samples=150)
    rows = [r for r in rep["functions"] if r["name"].split("(")[0].endswith("mix")]
    check(len(rows) == 1 and rows[0]["name"] == "mix(unsigned long, unsigned long)",
          "expected one row mix(unsigned long, unsigned long): %s" % [(r["name"], r["exclusive_samples"]) for r in rows])
    check(pct(rep, rows[0]["exclusive_samples"]) >= 80, "mix has %.1f%% exclusive\n  functions: %s" % (
        pct(rep, rows[0]["exclusive_samples"]), function_list(rep)))


@test
def test_jit_perf_map(c):
    """Code a JIT made at run time, described in /tmp/perf-<pid>.map (node --perf-basic-prof, the
    JVM's perf-map-agent, LuaJIT): named by that file, as perf names it.  It was one [anon] row per
    sampled address (node's JavaScript functions in 52 rows)."""
    rec, data = c.record([c.prog("s_jit_map")])
    maps = [l for l in rec.stdout.splitlines() if l.startswith("/tmp/perf-")]
    try:
        rep = c.report_json(data)
        check(rep["samples"] >= 100, "only %d samples" % rep["samples"])
        check(pct(rep, excl(rep, "jitted_loop")) >= 90, "jitted_loop has %.1f%% exclusive\n  functions: %s" % (
            pct(rep, excl(rep, "jitted_loop")), function_list(rep)))
    finally:
        for m in maps:
            if os.path.isfile(m):
                os.unlink(m)


@test
def test_vdso_functions(c):
    """Samples in the vDSO (clock_gettime, the kernel's library with no file) are named by its
    symbols, as perf names them (__vdso_clock_gettime), in one row per function, not one bare
    address per sample, and the stacks unwind through it to the loop calling it."""
    _, data, rep = c.record_and_report([c.prog("s_vdso")], min_samples=150)
    rows = [r for r in rep["functions"] if r["module"] == "[vdso]"]
    if not rows:
        raise TestSkip("no sample in the vDSO: clock_gettime makes a system call here (the clock source)")
    bare = [r["name"] for r in rows if re.match(r"^0x[0-9a-f]+$", r["name"])]
    check(not bare, "unnamed code in the vDSO: %s\n  functions: %s" % (bare, function_list(rep)))
    named = [r for r in rows if "clock_gettime" in r["name"]]
    check(named, "no clock_gettime in the vDSO's rows: %s" % [r["name"] for r in rows])
    share = sum(r["exclusive_samples"] for r in rows) / float(rep["samples"])
    check(share >= 0.5, "the vDSO has %.0f%% of the samples, expected most" % (100 * share))
    check(incl(rep, "vdso_loop") >= 0.9 * rep["samples"], "vdso_loop inclusive %d of %d: stacks stop in the vDSO" % (
        incl(rep, "vdso_loop"), rep["samples"]))
    text = c.run([c.stint, "report", "-i", data, "--no-pager"], expect=0).stdout
    check(" [vdso]" in text and "[[vdso]]" not in text, "the module is shown as [vdso]:\n%s" % text[:1500])


@test
def test_stack_copy_cut(c):
    """recurse 51 deep with --stack-size 1024: the copied user stack runs out before main, so every
    stack is cut short: counted (cut_stacks, cut_stack_copy), and the header says to raise --stack-size;
    with the default copy none is."""
    need_perf()
    rec, data = c.record([c.prog("s_recurse")], options=["--stack-size", "1024"])
    rep = c.report_json(data)
    n = rep["samples"]
    check(n >= 200, "only %d samples" % n)
    check(rep["cut_stacks"] >= 0.9 * n, "%d of %d stacks counted as cut short with a 1024-byte stack copy "
          "(51 frames do not fit: expected ~all)\n  functions: %s" % (rep["cut_stacks"], n, function_list(rep)))
    check(rep.get("cut_stack_copy", 0) >= 0.9 * n and rep["cut_stack_copy"] <= rep["cut_stacks"],
          "cut_stack_copy %s, cut_stacks %d of %d: the stacks cut by the copy's size are not counted" % (
              rep.get("cut_stack_copy"), rep["cut_stacks"], n))
    check("--stack-size" in rec.stderr, "record did not say to raise --stack-size: %s" % rec.stderr.strip())
    p = c.run([c.stint, "report", "-i", data], expect=0)
    header = "\n".join(l for l in p.stdout.splitlines() if l.startswith("#"))
    check("--stack-size" in header and "1024" in header,
          "the report header does not say the 1024-byte stack copy ran out (--stack-size):\n%s" % header)
    _, data2 = c.record([c.prog("s_recurse")], name="full.data")
    rep2 = c.report_json(data2)
    check(rep2["cut_stacks"] < 0.05 * rep2["samples"] and rep2["cut_stack_copy"] == 0,
          "with the default 16 KiB copy %d of %d stacks cut short (%d by the copy's size)" % (
              rep2["cut_stacks"], rep2["samples"], rep2["cut_stack_copy"]))
    p = c.run([c.stint, "report", "-i", data2], expect=0)
    check("--stack-size" not in p.stdout, "the header speaks of --stack-size though no stack was cut:\n%s" %
          p.stdout[:800])


@test
def test_no_unwind_info(c):
    """hot loops without call-frame information: their stacks are cut short there (no unwinder
    finds the caller), counted as such under the program's name by record, report and JSON; and
    the frame-pointer fallback's caller read from a %rbp that is no frame pointer
    (0x1010101010101010) is no frame of any stack."""
    need_perf()
    rec, data, rep = c.record_and_report([c.prog("s_nocfi")], min_samples=200)
    n = rep["samples"]
    in_asm = sum(r["exclusive_samples"] for r in rep["functions"] if r["name"] in ("nocfi_spin", "nocfi_garbage"))
    check(in_asm >= 0.8 * n, "only %d of %d samples in nocfi_spin/nocfi_garbage\n  functions: %s" % (
        in_asm, n, function_list(rep)))
    for f in ("nocfi_spin", "nocfi_garbage"):
        check(function_rows(rep, f), "no row for %s\n  functions: %s" % (f, function_list(rep)))
    bogus = [r for r in rep["functions"] if r["name"].startswith("0x") or r["module"] in ("", "[unknown]")]
    check(not bogus, "rows no code can be: %s\n  functions: %s" % (
        ["%s [%s]" % (r["name"], r["module"]) for r in bogus], function_list(rep)))
    check(rep["cut_no_unwind_info"] >= 0.9 * in_asm and rep["cut_no_unwind_info"] <= rep["cut_stacks"],
          "cut_no_unwind_info %d, cut_stacks %d, %d samples in the loops without CFI" % (
              rep["cut_no_unwind_info"], rep["cut_stacks"], in_asm))
    check("without unwind information" in rec.stderr and "s_nocfi " in rec.stderr,
          "record did not say where stacks stop at code without unwind information: %s" % rec.stderr.strip())
    p = c.run([c.stint, "report", "-i", data], expect=0)
    header = [l for l in p.stdout.splitlines() if l.startswith("# cut short:")]
    check(any("without unwind information" in l and "s_nocfi " in l for l in header),
          "the report header does not say where stacks stop without unwind information:\n%s" % p.stdout[:900])
    # the in-process sampler (libunwind): no garbage caller either, and the stacks are cut short
    # (libunwind took nocfi_spin's guessed caller for the end of the stack)
    _, _, rep = c.record_and_report([c.prog("s_nocfi")], options=["--sampler", "inproc"], min_samples=60)
    in_asm = sum(r["exclusive_samples"] for r in rep["functions"] if r["name"] in ("nocfi_spin", "nocfi_garbage"))
    bogus = [r for r in rep["functions"] if r["name"].startswith("0x") or r["module"] in ("", "[unknown]")]
    check(not bogus and in_asm >= 0.8 * rep["samples"] and rep["cut_stacks"] >= 0.9 * in_asm,
          "in-process sampler: %d of %d samples in the loops, %d stacks cut short, rows no code can be: %s\n"
          "  functions: %s" % (in_asm, rep["samples"], rep["cut_stacks"],
                               ["%s [%s]" % (r["name"], r["module"]) for r in bogus], function_list(rep)))


@test
def test_process_titles(c):
    """a forked worker that writes its title over its arguments, and a child that execs sh -c:
    each process is named by its command line as ps shows it while it runs ("s_retitle: worker",
    "sh -c ..."), not by its comm or its parent's command line."""
    need_perf()
    prog = c.prog("s_retitle")
    rec, data, rep = c.record_and_report([prog, "x" * 40], min_samples=200)
    cmds = sorted(p["command"] for p in rep["processes"])
    check("s_retitle: worker" in cmds, "no process named by its title 's_retitle: worker': %r" % cmds)
    check(any(x.startswith("sh -c i=0;") for x in cmds), "the exec'd shell is not named by its command line: %r" % cmds)
    check(any(x == prog + " " + "x" * 40 for x in cmds), "the launched program is not named by its command line: %r" % cmds)


@test
def test_fork_child_maps_files(c):
    """a forked child (no exec) that maps a file twice, as PostgreSQL's parallel workers do: record
    ends with the program's status and a recording of both processes, each function in its own
    process (the recorder wrote past its copy of the parent's mappings and aborted, losing all)."""
    need_perf()
    rec, data, rep = c.record_and_report([c.prog("s_forkmap")], min_samples=150)
    check(rec.stdout == "done\n", "s_forkmap printed %r" % rec.stdout)
    check(len(rep["processes"]) == 2, "expected 2 processes, got %r" % [p["command"] for p in rep["processes"]])
    for f in ("child_work", "parent_work"):
        rows = function_rows(rep, f)
        check(rows and rows[0]["exclusive_samples"] >= 0.25 * rep["samples"],
              "%s has too few samples\n  functions: %s" % (f, function_list(rep)))


@test
def test_anon_code_apart(c):
    """code made at run time (//anon) on each side of the C library: qsort's functions are
    libc.so.6's, and no sample is in an "anon" module (all //anon mappings made one module, from
    the lowest to the highest, over libc)."""
    need_perf()
    rec, data, rep = c.record_and_report([c.prog("s_anon_code")], min_samples=100)
    if "no room" in rec.stdout:
        raise TestSkip("no room for code pages around libc")
    libc = sum(r["exclusive_samples"] for r in rep["functions"] if r["module"].startswith("libc.so"))
    anon = [r for r in rep["functions"] if r["module"] in ("anon", "//anon", "[anon]")]
    check(libc >= 0.3 * rep["samples"] and not anon,
          "%d of %d samples in libc.so, rows in an anon module: %s\n  functions: %s" % (
              libc, rep["samples"], ["%s [%s]" % (r["name"], r["module"]) for r in anon], function_list(rep)))


@test
def test_inproc_seccomp_strict(c):
    """the in-process sampler and a program that enters seccomp's strict mode (prctl, and
    seccomp(2) after libseccomp's failing check): the program runs as alone (the sampler's
    handler made system calls there, and the kernel killed it), the thread's samples from before
    are kept."""
    for how in ("prctl", "syscall"):
        alone = c.run([c.prog("s_strict"), how])
        if "no strict mode" in alone.stdout:
            raise TestSkip("seccomp's strict mode is not permitted here")
        rec, data = c.record([c.prog("s_strict"), how], options=["--sampler", "inproc"])
        check(rec.returncode == alone.returncode == 0 and rec.stdout == alone.stdout,
              "%s: under the in-process sampler exit %d, printed %r; alone exit %d, %r" % (
                  how, rec.returncode, rec.stdout, alone.returncode, alone.stdout))
        rep = c.report_json(data)
        check(function_rows(rep, "before_strict") and not function_rows(rep, "in_strict"),
              "%s: expected samples of before_strict only\n  functions: %s" % (how, function_list(rep)))


@test
def test_32bit_program(c):
    """a 32-bit program (gcc -m32, Debian gcc-multilib): its samples name its functions, each stack
    counted as cut short because 32-bit stacks are not unwound, and said so (every stack came out
    cut short with no reason given, and the [vdso] was named by stint's own 64-bit one)."""
    need_perf()
    src = os.path.join(c.tmp, "spin32.c")
    with open(src, "w") as f:
        f.write("#include <stdio.h>\nvolatile unsigned long sink;\n"
                "__attribute__((noinline)) void spin32_work(unsigned long n) { for (unsigned long i = 0; i < n; i++)"
                " sink = sink * 6364136223846793005ull + 1; }\n"
                "int main(void) { spin32_work(300000000ul); puts(\"done\"); return 0; }\n")
    prog = os.path.join(c.tmp, "spin32")
    b = subprocess.run(["gcc", "-m32", "-O2", "-g", "-o", prog, src], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if b.returncode != 0:
        raise TestSkip("gcc -m32 cannot build here (Debian gcc-multilib)")
    rec, data, rep = c.record_and_report([prog], min_samples=100)
    rows = function_rows(rep, "spin32_work")
    check(rows and rows[0]["exclusive_samples"] >= 0.8 * rep["samples"],
          "spin32_work has too few samples\n  functions: %s" % function_list(rep))
    check(rep["cut_32bit"] == rep["samples"] == rep["cut_stacks"],
          "cut_32bit %s, cut_stacks %s, samples %s" % (rep.get("cut_32bit"), rep["cut_stacks"], rep["samples"]))
    check("32-bit" in rec.stderr, "record does not say the 32-bit program's stacks are not unwound: %s" % rec.stderr)


@test
def test_reused_address(c):
    """libs_plugin.so loaded, closed, then libs_reuse.so loaded where it was: the samples in
    reuse_work are named by libs_reuse.so's symbols (the mapping in force when they were taken),
    not by the closed library's, in one row, and their stacks unwind through it to main."""
    need_perf()
    rec, _, rep = c.record_and_report([c.prog("s_remap"), c.prog("libs_plugin.so"), c.prog("libs_reuse.so")],
                                      min_samples=150)
    if "reused:" not in rec.stdout:
        raise TestSkip("the second library did not land where the first was: %s" % rec.stdout.strip())
    lib = [r for r in rep["functions"] if r["module"] in ("libs_reuse.so", "libs_plugin.so")]
    in_lib = sum(r["exclusive_samples"] for r in lib)
    check(in_lib >= 0.5 * rep["samples"], "only %d of %d samples in the libraries, expected most\n  functions: %s" % (
        in_lib, rep["samples"], function_list(rep)))
    rows = function_rows(rep, "reuse_work")
    check(len(rows) == 1 and rows[0]["module"] == "libs_reuse.so",
          "expected one row reuse_work [libs_reuse.so]\n  functions: %s" % function_list(rep))
    check(rows[0]["exclusive_samples"] >= 0.9 * in_lib,
          "reuse_work has %d of the %d samples in the libraries: the others were named after the library "
          "mapped there before\n  functions: %s" % (rows[0]["exclusive_samples"], in_lib, function_list(rep)))
    check(rep["cut_stacks"] < 0.05 * rep["samples"],
          "%d of %d stacks cut short (unwound with the closed library's call-frame information?)" % (
              rep["cut_stacks"], rep["samples"]))
    check(incl(rep, "main") >= 0.95 * rep["samples"], "main inclusive %d of %d: stacks through libs_reuse.so cut?" % (
        incl(rep, "main"), rep["samples"]))


@test
def test_attach_target_exits(c):
    """record -p PID --duration 5 on a process (two threads) that exits after ~1.2 s: its images were
    read when stint attached, so nothing is [unknown]; the header shows its real command line, that it
    was attached (not an exit status) and the thread names."""
    need_perf()
    prog = subprocess.Popen([c.prog("s_attach"), "1.2", "threads"], stdout=subprocess.PIPE,
                            universal_newlines=True)
    try:
        m = re.match(r"ready (\d+)", prog.stdout.readline())
        check(m, "s_attach did not say it is ready")
        pid = int(m.group(1))
        data = os.path.join(c.tmp, "attach.data")
        argv = [c.stint, "record", "-m", "sample", "-p", str(pid), "--duration", "5", "-o", data]
        c.log.append(" ".join(argv))
        rec = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        # reaped: gone, not a zombie, while stint is attached; with the CPU
        # time it got (on a loaded machine far less than 2 x 1.2 s)
        deadline = time.time() + RECORD_TIMEOUT
        while True:
            wpid, status, usage = os.wait4(prog.pid, os.WNOHANG)
            if wpid:
                prog.returncode = os.waitstatus_to_exitcode(status)
                break
            check(time.time() < deadline, "s_attach did not exit")
            time.sleep(0.02)
        cpu = usage.ru_utime + usage.ru_stime
        out, err = rec.communicate(timeout=RECORD_TIMEOUT)
        check(rec.returncode == 0, "record -p exited %d: %s" % (rec.returncode, err.strip()))
    finally:
        if prog.poll() is None:
            prog.kill()
            prog.wait()
    rep = c.report_json(data)
    n = rep["samples"]
    # 1000 a CPU second; a third of it at least (the attach itself takes
    # some of the target's first CPU time)
    want = min(100, int(0.3 * cpu * 1000))
    check(n >= want, "only %d samples of a process that used %.2f s of CPU (2 threads x 1.2 s)" % (n, cpu))
    check(rep["attached"] is True, "JSON attached is %r, expected true" % rep.get("attached"))
    unknown = [r for r in rep["functions"] if r["name"].startswith("0x") or "unknown" in r["module"]
               or r["module"] == ""]
    check(sum(r["exclusive_samples"] for r in unknown) <= 0.05 * n,
          "unnamed functions after the target exited: %s\n  functions: %s" % (
              ["%s[%s] %d" % (r["name"], r["module"], r["exclusive_samples"]) for r in unknown][:10],
              function_list(rep)))
    check(pct(rep, excl(rep, "attach_hot")) >= 80, "attach_hot exclusive %.1f%%\n  functions: %s" % (
        pct(rep, excl(rep, "attach_hot")), function_list(rep)))
    check(func(rep, "attach_hot")["module"] == "s_attach", "attach_hot module %r" % func(rep, "attach_hot")["module"])
    check(incl(rep, "attach_worker") >= 0.25 * n, "attach_worker inclusive %d of %d\n  functions: %s" % (
        incl(rep, "attach_worker"), n, function_list(rep)))
    check(rep["cut_stacks"] <= 0.05 * n, "%d of %d stacks cut short" % (rep["cut_stacks"], n))
    procs = rep["processes"]
    check([p["pid"] for p in procs] == [pid], "process rows %s, expected pid %d" % (procs, pid))
    check("s_attach 1.2 threads" in procs[0]["command"], "process command %r, expected the real command line" %
          procs[0]["command"])
    names = sorted(t["name"] for t in rep["threads"])
    check(names == ["att_worker", "s_attach"], "thread names %s, expected att_worker and s_attach" % names)
    p = c.run([c.stint, "report", "-i", data], expect=0)
    header = "\n".join(l for l in p.stdout.splitlines() if l.startswith("#"))
    check("s_attach 1.2 threads" in header and "-p %d" % pid not in header,
          "header does not show the target's command line:\n%s" % header)
    check("attached" in header and "exit status" not in header,
          "header does not say the process was attached to (or shows an exit status):\n%s" % header)
    check("att_worker" in header, "header does not name the threads:\n%s" % header)
    p = c.run([c.stint, "report", "-i", data, "--by", "thread"], expect=0)
    check("att_worker" in p.stdout, "table --by thread lacks att_worker:\n%s" % p.stdout)


# ---------------------------------------------------------------------------

def main():
    return harness.main(TESTS, "sample", "stint sampling end-to-end tests", Ctx,
                        progs_help="directory holding the built s_* programs")


if __name__ == "__main__":
    sys.exit(main())
