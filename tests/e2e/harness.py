"""harness.py - what the end-to-end suites share (run_e2e.py, run_sample.py,
run_safety.py): running commands with a log and a timeout in a private temp
dir, check() and the failure and skip exceptions, one-line errors, reading
rows of a report's JSON, the test registry and the runner that gives each
suite its command line and exit statuses (0 passed, 1 failed, 77 skipped:
CTest's SKIP_RETURN_CODE).  Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

RECORD_TIMEOUT = 20  # seconds; every test must stay well under ~20 s
HERE = os.path.dirname(os.path.abspath(__file__))
PROG_SOURCES = os.path.join(os.path.dirname(HERE), "progs")


class TestFailure(Exception):
    pass


class TestSkip(Exception):
    """The test cannot run here; CTest reports it as skipped (exit 77)."""


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


class CpuTimeFailure(TestFailure):
    """A TSC interval came out longer than the CPU time the thread had in it."""


def check_cpu_time(cond, msg):
    """check() for a comparison of TSC time with the thread's CPU time: the
    failure again_if_host_stole() gives a second run."""
    if not cond:
        raise CpuTimeFailure(msg)


def again_if_host_stole(attempt, what):
    """attempt() records a run and compares a TSC interval with the thread's
    CPU time; if it fails, run it once more and fail only if both fail.  In a
    VM the hypervisor takes a vCPU away without a context switch the guest
    sees (steal time): the TSC runs on, the thread's CPU time does not, and
    /proc/stat tells it only in 10 ms ticks.  Such a burst spoils one run; a
    fault of the profiler (an unflagged preemption) shows in both.  Only the
    checks made with check_cpu_time() get the second run."""
    try:
        return attempt()
    except CpuTimeFailure as first:
        print("%s: %s -- running it again (hypervisor steal time spoils one run, a fault both)" % (what, first))
        try:
            return attempt()
        except CpuTimeFailure as second:
            raise TestFailure("%s (the run before: %s)" % (second, first))


def one_line_error(p, must_mention=(), what="command"):
    """A failing command: non-zero status, one line on stderr naming the culprit."""
    check(p.returncode != 0, "%s succeeded (status 0) but should fail; stderr: %s" % (what, p.stderr.strip()))
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(len(lines) == 1, "%s should fail with one line on stderr, printed %d:\n%s" % (
        what, len(lines), p.stderr))
    for m in must_mention:
        check(m in lines[0], "%s error %r does not mention %r" % (what, lines[0], m))
    check("Traceback" not in p.stderr and "Sanitizer" not in p.stderr, "crash output: %s" % p.stderr)
    return lines[0]


# ---------------------------------------------------------------------------
# Running stint
# ---------------------------------------------------------------------------

class Ctx:
    """One test's view of stint, the programs and a private temp dir.  The
    suites add record() and report_json() for their method."""

    def __init__(self, stint, progs, tmp):
        self.stint = stint
        self.progs = progs
        self.tmp = tmp
        self.log = []  # commands run, shown when a test fails

    def prog(self, name):
        path = os.path.join(self.progs, name)
        check(os.path.exists(path), "test program %s is missing (build the tests first)" % path)
        return path

    def run(self, argv, expect=None, timeout=RECORD_TIMEOUT, **kw):
        self.log.append(" ".join(argv))
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout, universal_newlines=True, **kw)
        except subprocess.TimeoutExpired:
            raise TestFailure("timed out after %d s: %s" % (timeout, " ".join(argv)))
        if expect is not None and p.returncode != expect:
            raise TestFailure("%s\n  exited %d, expected %d\n  stderr: %s" % (
                " ".join(argv), p.returncode, expect, p.stderr.strip()))
        return p

    def record_with(self, method, prog_argv, data, expect_status=0, options=(), timeout=RECORD_TIMEOUT):
        """stint record -m METHOD -o DATA [options] -- PROG ARGS; returns (proc, data)."""
        argv = [self.stint, "record", "-m", method, "-o", data] + list(options) + ["--"] + prog_argv
        p = self.run(argv, timeout=timeout)
        check(p.returncode == expect_status,
              "record of %s exited %d, expected %d (the program's status)\n  stderr: %s" % (
                  os.path.basename(prog_argv[0]), p.returncode, expect_status, p.stderr.strip()))
        check(os.path.isfile(data), "record did not write the data file %s" % data)
        return p, data

    def report_json_checked(self, data, invariants, options=(), allow_stderr=False, timeout=RECORD_TIMEOUT):
        """stint report --format json, parsed; invariants(rep) checks it."""
        p = self.run([self.stint, "report", "-i", data, "--format", "json"] + list(options), expect=0,
                     timeout=timeout)
        if not allow_stderr:
            check(p.stderr.strip() == "", "report printed on stderr: %s" % p.stderr.strip())
        try:
            rep = json.loads(p.stdout)
        except ValueError as e:
            raise TestFailure("report --format json is not valid JSON (%s):\n%s" % (e, p.stdout[:2000]))
        invariants(rep)
        return rep


# ---------------------------------------------------------------------------
# Reading a report
# ---------------------------------------------------------------------------

def module_matches(actual, wanted):
    """Module names are the ELF file's base name; "libc.so" matches "libc.so.6"."""
    return actual == wanted or (wanted.endswith(".so") and actual.startswith(wanted + "."))


def function_rows(rep, name, module=None):
    return [r for r in rep["functions"]
            if r["name"] == name and (module is None or module_matches(r["module"], module))]


def function_list(rep, limit=25):
    """The report's functions for a message: every one with its calls
    (instrumentation), or the limit with most samples (sampling)."""
    if rep.get("method") == "sampling":
        rows = sorted(rep["functions"], key=lambda r: -r["inclusive_samples"])[:limit]
        return ", ".join("%s[%s] %d/%d" % (r["name"], r["module"], r["inclusive_samples"], r["exclusive_samples"])
                         for r in rows) + " (inclusive/exclusive samples of %d)" % rep["samples"]
    return ", ".join("%s[%s]x%d" % (r["name"], r["module"], r["calls"]) for r in rep["functions"])


def func(rep, name, module=None):
    rows = function_rows(rep, name, module)
    if len(rows) != 1:
        raise TestFailure("expected one function row named %r%s, found %d; functions: %s" % (
            name, " in module %s" % module if module else "", len(rows), function_list(rep)))
    return rows[0]


# ---------------------------------------------------------------------------
# The tests and the runner
# ---------------------------------------------------------------------------

def registry():
    """(TESTS, test): a suite's tests by name, and the decorator that adds
    test_NAME as NAME."""
    tests = {}

    def test(fn):
        tests[fn.__name__[len("test_"):]] = fn
        return fn
    return tests, test


def main(tests, suite, description, ctx_class, progs_help="directory holding the built e2e_* programs"):
    """Run the one test named on the command line (or --list the names):
    exit 0 when it passes, 77 when it cannot run here, 1 when it fails."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--stint", help="path of the stint executable")
    ap.add_argument("--progs", help=progs_help)
    ap.add_argument("--list", action="store_true", help="list the test names")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir of the test")
    ap.add_argument("test", nargs="?")
    a = ap.parse_args()
    if a.list:
        for name in tests:
            print(name)
        return 0
    if not (a.stint and a.progs and a.test):
        ap.error("--stint, --progs and a test name are required (or --list)")
    if a.test not in tests:
        print("unknown test %r; --list shows the names" % a.test, file=sys.stderr)
        return 1
    stint = os.path.abspath(a.stint)
    if not os.access(stint, os.X_OK):
        print("FAIL %s.%s: stint executable %s not found" % (suite, a.test, stint), file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="stint-%s-%s-" % (suite, a.test))
    # each test its own cache of code scans (stint record keeps them across
    # recordings, recorder/rec_cache.c): none taken from another test
    os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
    c = ctx_class(stint, os.path.abspath(a.progs), tmp)
    t0 = time.time()
    try:
        tests[a.test](c)
    except TestSkip as e:
        print("SKIP: %s.%s: %s" % (suite, a.test, e))
        shutil.rmtree(tmp, ignore_errors=True)
        return 77  # CTest's SKIP_RETURN_CODE: reported as skipped, not passed
    except TestFailure as e:
        print("FAIL %s.%s: %s" % (suite, a.test, e), file=sys.stderr)
        print("  commands run:\n    " + "\n    ".join(c.log), file=sys.stderr)
        print("  temp dir kept: %s" % tmp, file=sys.stderr)
        return 1
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS %s.%s (%.1f s)" % (suite, a.test, time.time() - t0))
    return 0


def elf_symbols(path):
    """{name: file offset} of the FUNC symbols of an ELF64 little-endian file's .symtab."""
    with open(path, "rb") as f:
        b = f.read()
    shoff, = struct.unpack_from("<Q", b, 0x28)
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phnum, = struct.unpack_from("<H", b, 0x38)
    shnum, = struct.unpack_from("<H", b, 0x3c)
    loads = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", b, phoff + i * 56)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
    secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * 64) for i in range(shnum)]
    out = {}
    for s in secs:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s[6]]
        for k in range(s[5] // 24):
            st_name, st_info, _, st_shndx, st_value, _ = struct.unpack_from("<IBBHQQ", b, s[4] + k * 24)
            if st_info & 0xf != 2 or st_shndx == 0:
                continue
            name = b[strtab[4] + st_name:b.index(b"\0", strtab[4] + st_name)].decode()
            for va, off, sz in loads:
                if va <= st_value < va + sz:
                    out[name] = st_value - va + off
    return out
