#!/usr/bin/env python3
"""
run_export.py - tests of `stint export`: each format is written from real
recordings, its numbers are checked against `stint report --format json` on
the same data file, and it is read back with the tool that reads it where
Debian has one:

  folded     no Debian or offline npm reader runs headless (Debian has no
             flamegraph package; npm's speedscope is a browser bundle and
             npm's "inferno" is a UI library), so the lines are parsed here
  pprof      Go pprof, built by the setup test from Debian's
             golang-github-google-pprof-dev with golang-go (offline); Debian's
             google-pprof (gperftools) reads only the legacy format, not
             protobuf.  The protobuf is also decoded here, field by field.
  callgrind  callgrind_annotate (Debian's valgrind)
  chrome     JSON parsed here: nesting per thread, counts against the report

Usage: run_export.py --stint STINT --progs DIR --demo DEMO --work DIR TEST
       run_export.py --list
A test whose tool is missing prints "SKIP: reason" and exits 77, which CTest reports as skipped.
"""
import argparse
import collections
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402  (the e2e suites' shared module)
from harness import TestFailure, check  # noqa: E402
from harness import TestSkip as Skip  # noqa: E402

TIMEOUT = 120


def near(a, b, tol, what):
    check(abs(a - b) <= tol, "%s: %s vs %s (tolerance %s)" % (what, a, b, tol))


# ---------------------------------------------------------------------------
# Running stint and the tools
# ---------------------------------------------------------------------------

class Ctx(harness.Ctx):
    """harness.Ctx over a work dir the tests share (its recordings, Go pprof)."""

    def __init__(self, args):
        self.demo = os.path.abspath(args.demo)
        self.work = os.path.abspath(args.work)
        os.makedirs(self.work, exist_ok=True)
        harness.Ctx.__init__(self, os.path.abspath(args.stint), os.path.abspath(args.progs), self.work)

    def run(self, argv, expect=0, timeout=TIMEOUT, **kw):
        """harness.Ctx.run: text output, expecting status 0 unless told."""
        return harness.Ctx.run(self, argv, expect=expect, timeout=timeout, **kw)

    # The recordings the tests share: made by the setup test, or on first use.
    RECORDINGS = {
        "instr_demo": ("instrument", "demo"),
        "instr_threads": ("instrument", "e2e_threads"),
        "sample_split": ("sample", "s_split"),
        "sample_recurse": ("sample", "s_recurse"),
        "sample_inline": ("sample", "s_inline"),
        "instr_lines": ("instrument", "e2e_line_costs"),
        "instr_nest": ("instrument", "e2e_chrome_nest"),
        "instr_fork": ("instrument", "e2e_forker"),
        "instr_twofiles": ("instrument", "e2e_twofiles"),
    }

    def data(self, name):
        path = os.path.join(self.work, name + ".data")
        if not os.path.exists(path):
            method, prog = self.RECORDINGS[name]
            exe = self.demo if prog == "demo" else self.prog(prog)
            tmp = path + ".part"
            self.run([self.stint, "record", "-m", method, "-o", tmp, "--", exe])
            os.rename(tmp, path)
        return path

    def report(self, data, *opts):
        p = self.run([self.stint, "report", "-i", data, "--format", "json"] + list(opts))
        return json.loads(p.stdout)

    def export(self, data, fmt, *opts, binary=False):
        # per test: ctest runs tests in parallel on the shared recordings
        out = os.path.join(self.outdir, "%s.%s%s" % (os.path.basename(data), fmt, "".join(opts).replace("/", "_")))
        self.run([self.stint, "export", "--format", fmt, "-i", data, "-o", out] + list(opts))
        with open(out, "rb") as f:
            b = f.read()
        return (b if binary else b.decode()), out

    def pprof_tool(self):
        """Go pprof: the one the setup built, else one on PATH that reads protobuf."""
        built = os.path.join(self.work, "pprof")
        if os.access(built, os.X_OK):
            return built
        p = shutil.which("pprof")
        return p


def func_rows(rep):
    """name -> row, names merged over modules as the tools merge them."""
    out = {}
    for r in rep["functions"]:
        if r["name"] in out:
            old = out[r["name"]]
            out[r["name"]] = {k: (old[k] + r[k] if isinstance(r[k], (int, float)) and not k.endswith("_pct")
                                  else old[k]) for k in r}
        else:
            out[r["name"]] = dict(r)
    return out


def hottest(rep, key):
    return max(rep["functions"], key=lambda r: r[key])


# ---------------------------------------------------------------------------
# Folded stacks
# ---------------------------------------------------------------------------

def parse_folded(text):
    paths = []
    for line in text.splitlines():
        m = re.match(r"^(\S.*) (\d+)$", line)
        check(m is not None, "folded line is malformed: %r" % line)
        paths.append((m.group(1).split(";"), int(m.group(2))))
    check(paths, "folded output is empty")
    return paths


def folded_sums(paths):
    excl, incl = collections.Counter(), collections.Counter()
    for frames, v in paths:
        excl[frames[-1]] += v
        for f in set(frames):
            incl[f] += v
    return excl, incl


def test_folded_instrumentation(c):
    data = c.data("instr_demo")
    rep = c.report(data)
    rows = func_rows(rep)
    for value, key in (("elapsed", "elapsed_exclusive"), ("application", "application_exclusive")):
        text, _ = c.export(data, "folded", "--value", value)
        paths = parse_folded(text)
        excl, incl = folded_sums(paths)
        tol = len(paths) + 2  # each path's value is rounded to whole ns
        for name, r in rows.items():
            near(excl.get(name, 0), r[key], tol, "folded %s exclusive of %s" % (value, name))
        if value == "elapsed":
            for name, r in rows.items():
                near(incl.get(name, 0), r["elapsed_inclusive"], tol, "folded inclusive of %s" % name)
    print("folded (instrumentation): %d functions agree with the report" % len(rows))
    # -o - is standard output, as for stint html (it wrote a file named -)
    text, _ = c.export(data, "folded")
    cwd = tempfile.mkdtemp(dir=c.outdir)
    p = subprocess.run([c.stint, "export", "--format", "folded", "-i", data, "-o", "-"], cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    check(p.returncode == 0 and p.stdout == text and not os.listdir(cwd),
          "export -o -: exit %d, %d bytes on standard output (the file: %d), files made: %s" % (
              p.returncode, len(p.stdout), len(text), os.listdir(cwd)))


def test_folded_sampling(c):
    for rec in ("sample_split", "sample_recurse"):
        data = c.data(rec)
        rep = c.report(data)
        paths = parse_folded(c.export(data, "folded")[0])
        excl, incl = folded_sums(paths)
        check(sum(v for _, v in paths) == rep["session"]["exclusive_samples"],
              "folded total %d != %d samples" % (sum(v for _, v in paths), rep["session"]["exclusive_samples"]))
        for name, r in func_rows(rep).items():
            check(excl.get(name, 0) == r["exclusive_samples"],
                  "%s: folded exclusive %d != report %d" % (name, excl.get(name, 0), r["exclusive_samples"]))
            check(incl.get(name, 0) == r["inclusive_samples"],
                  "%s: folded inclusive %d != report %d" % (name, incl.get(name, 0), r["inclusive_samples"]))
    print("folded (sampling): exclusive and inclusive samples agree exactly")


# ---------------------------------------------------------------------------
# pprof
# ---------------------------------------------------------------------------

def pb_fields(buf):
    """Decode one protobuf message into {field: [values]} (bytes for length-delimited)."""
    out = collections.defaultdict(list)
    i = 0

    def varint():
        nonlocal i
        v, shift = 0, 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    while i < len(buf):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            out[field].append(varint())
        elif wire == 2:
            n = varint()
            out[field].append(buf[i:i + n])
            i += n
        elif wire == 1:
            out[field].append(int.from_bytes(buf[i:i + 8], "little"))
            i += 8
        elif wire == 5:
            out[field].append(int.from_bytes(buf[i:i + 4], "little"))
            i += 4
        else:
            raise TestFailure("protobuf: unknown wire type %d" % wire)
    return out


def pb_ints(vals):
    """A repeated integer field, packed (bytes) or not."""
    res = []
    for v in vals:
        if isinstance(v, bytes):
            j = 0
            while j < len(v):
                x, shift = 0, 0
                while True:
                    b = v[j]
                    j += 1
                    x |= (b & 0x7F) << shift
                    shift += 7
                    if not b & 0x80:
                        break
                res.append(x)
        else:
            res.append(v)
    return res


def decode_profile(gz):
    """perftools.profiles.Profile, by the field numbers of profile.proto."""
    check(gz[:2] == b"\x1f\x8b", "pprof output is not gzipped")
    p = pb_fields(gzip.decompress(gz))
    strings = [s.decode() for s in p[6]]
    check(strings and strings[0] == "", "string_table[0] must be empty")
    types = []
    for vt in p[1]:
        f = pb_fields(vt)
        types.append((strings[f[1][0] if f[1] else 0], strings[f[2][0] if f[2] else 0]))
    funcs = {}
    for fb in p[5]:
        f = pb_fields(fb)
        funcs[f[1][0]] = strings[f[2][0]] if f[2] else ""
    maps = {}
    for mb in p[3]:
        f = pb_fields(mb)
        maps[f[1][0]] = (strings[f[5][0]] if f[5] else "", strings[f[6][0]] if f[6] else "",
                         f[2][0] if f[2] else 0, f[3][0] if f[3] else 0)
    locs, where = {}, {}
    for lb in p[4]:
        f = pb_fields(lb)
        lines = [pb_fields(x) for x in f[4]]
        check(lines, "location %d has no line" % f[1][0])
        # one frame per Line: the inlined functions innermost first, then the holder
        locs[f[1][0]] = [funcs[ln[1][0]] for ln in lines]
        check(f[2] and f[2][0] in maps, "location %d has no mapping" % f[1][0])
        where[f[1][0]] = (f[3][0] if f[3] else 0, maps[f[2][0]], [ln[2][0] if ln[2] else 0 for ln in lines])
    samples = []
    for sb in p[2]:
        f = pb_fields(sb)
        samples.append(([fn for x in pb_ints(f[1]) for fn in locs[x]], pb_ints(f[2])))
    default = strings[p[14][0]] if p[14] else ""
    decode_profile.maps = list(maps.values())  # in the file's order: pprof takes the first for the program
    decode_profile.where = where  # per location: (address, mapping, lines), for the line test
    decode_profile.locs = locs    # per location: its functions
    decode_profile.sample_locs = [pb_ints(pb_fields(sb)[1]) for sb in p[2]]
    return types, samples, default


def pprof_sums(samples, k):
    flat, cum = collections.Counter(), collections.Counter()
    for stack, vals in samples:
        flat[stack[0]] += vals[k]
        for f in set(stack):
            cum[f] += vals[k]
    return flat, cum


def pprof_top(c, tool, path, index):
    """name -> (flat, cum) from `pprof -top`, raw units."""
    p = c.run([tool, "-top", "-nodecount=100000", "-nodefraction=0", "-unit=ns", "-sample_index=" + index, path])
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)(?:ns)?\s+\S+%\s+(.+)$", line)
        if m:
            out[m.group(3).strip()] = (int(m.group(1)), int(m.group(2)))
    check(out, "pprof -top printed no rows:\n%s" % p.stdout[:2000])
    return out


def first_mapping_is(c, exe, path):
    """pprof takes the first mapping for the program ("File:", "Build ID:"): the executable's, not
    libc's (a library's came first in instrumentation recordings, where modules are numbered in
    the order their functions were met)."""
    first = decode_profile.maps[0][0]
    check(os.path.realpath(first) == os.path.realpath(exe), "mapping 0 is %s, not the program %s" % (first, exe))
    tool = c.pprof_tool()
    if tool:
        p = c.run([tool, "-top", "-nodecount=1", path])
        check(("File: %s\n" % os.path.basename(exe)) in p.stdout, "pprof -top names another file:\n%s" % p.stdout[:300])


def test_pprof_instrumentation(c):
    data = c.data("instr_demo")
    rep = c.report(data)
    rows = func_rows(rep)
    gz, path = c.export(data, "pprof", binary=True)
    types, samples, default = decode_profile(gz)
    check(types == [("calls", "count"), ("elapsed", "nanoseconds"), ("application", "nanoseconds")],
          "sample types %s" % types)
    check(default == "elapsed", "default sample type %r" % default)
    tol = len(samples) + 2
    for k, key in ((0, "calls"), (1, "elapsed_exclusive"), (2, "application_exclusive")):
        flat, cum = pprof_sums(samples, k)
        for name, r in rows.items():
            near(flat.get(name, 0), r[key], 0 if k == 0 else tol, "decoded %s of %s" % (key, name))
            if k == 1:
                near(cum.get(name, 0), r["elapsed_inclusive"], tol, "decoded cum (EI) of %s" % name)
            if k == 2:
                near(cum.get(name, 0), r["application_inclusive"], tol, "decoded cum (AI) of %s" % name)
    print("pprof (instrumentation): decoded profile agrees with the report")
    first_mapping_is(c, c.demo, path)
    tool = c.pprof_tool()
    if not tool:
        raise Skip("no Go pprof (setup builds it from golang-github-google-pprof-dev); "
                   "the decoded profile was checked")
    top = pprof_top(c, tool, path, "elapsed")
    hot = hottest(rep, "elapsed_exclusive")
    first = max(top.items(), key=lambda kv: kv[1][0])
    check(first[0] == hot["name"], "pprof's hottest is %s, report's %s" % (first[0], hot["name"]))
    for name, r in rows.items():
        if name in top:
            near(top[name][0], r["elapsed_exclusive"], tol, "pprof flat of %s" % name)
            near(top[name][1], r["elapsed_inclusive"], tol, "pprof cum of %s" % name)
    calls = pprof_top(c, tool, path, "calls")
    for name, r in rows.items():
        if r["calls"]:
            check(calls.get(name, (0, 0))[0] == r["calls"],
                  "pprof calls of %s: %s, report %d" % (name, calls.get(name), r["calls"]))
    print("pprof (instrumentation): %s reads it; flat, cum and calls agree" % tool)


def test_pprof_sampling(c):
    data = c.data("sample_recurse")
    rep = c.report(data)
    rows = func_rows(rep)
    gz, path = c.export(data, "pprof", binary=True)
    types, samples, default = decode_profile(gz)
    check(types == [("samples", "count"), ("cpu", "nanoseconds")], "sample types %s" % types)
    flat, cum = pprof_sums(samples, 0)
    for name, r in rows.items():
        check(flat.get(name, 0) == r["exclusive_samples"], "decoded samples of %s" % name)
        check(cum.get(name, 0) == r["inclusive_samples"], "decoded cum of %s (recursion once)" % name)
    hz = json.loads(c.run([c.stint, "report", "-i", data, "--format", "json"]).stdout).get("frequency_hz")
    for stack, vals in samples:
        if hz:
            near(vals[1], vals[0] * 1e9 / hz, 1, "cpu ns of a sample")
    print("pprof (sampling): decoded profile agrees with the report")
    first_mapping_is(c, c.prog("s_recurse"), path)
    tool = c.pprof_tool()
    if not tool:
        raise Skip("no Go pprof; the decoded profile was checked")
    top = pprof_top(c, tool, path, "samples")
    r = rows["recurse"]
    check(top["recurse"] == (r["exclusive_samples"], r["inclusive_samples"]),
          "pprof recurse %s, report %d/%d" % (top["recurse"], r["exclusive_samples"], r["inclusive_samples"]))
    print("pprof (sampling): %s reads it; recurse counted once" % tool)


def clean_line_key(key):
    """file:line with the file cleaned as pprof prints it ("./elf/x.c" -> "elf/x.c")."""
    f, _, ln = key.rpartition(":")
    return "%s:%s" % (os.path.normpath(f), ln)


def pprof_line_rows(c, tool, path, *extra):
    """file:line -> [flat, cum] from `pprof -top -lines` in samples (functions of one line summed)."""
    p = c.run([tool, "-top", "-lines", "-nodecount=100000", "-nodefraction=0", "-sample_index=samples"] +
              list(extra) + [path])
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+\S+ (\S+:\d+)( \(inline\))?$", line)
        if m:
            row = out.setdefault(clean_line_key(m.group(3)), [0, 0])
            row[0] += int(m.group(1))
            row[1] += int(m.group(2))
    check(out, "pprof -top -lines printed no line rows:\n%s" % p.stdout[:2000])
    return out


def test_pprof_lines(c):
    """Sampling pprof carries addresses, lines and inline frames: pprof -lines and -list agree
    with `stint report --by line` (s_inline: code inlined two deep, no frame of its own)."""
    data = c.data("sample_inline")
    rep = c.report(data)
    gz, path = c.export(data, "pprof", binary=True)
    _, samples, _ = decode_profile(gz)
    where = decode_profile.where
    check(all(a for a, _, _ in where.values()), "a location without an address")
    check(len({a for a, _, _ in where.values()}) > 10, "too few distinct addresses: %d" % len(where))
    exe = [m for _, m, _ in where.values() if m[0].endswith("/s_inline")]
    check(exe and exe[0][1] and exe[0][2] < exe[0][3], "the executable's mapping lacks build-id or range: %s" % exe[:1])
    check(any(len(ls) >= 3 for _, _, ls in where.values()), "no location with two inlined functions")
    # the decoded stacks give the inlined functions their samples, as the report
    flat, cum = pprof_sums(samples, 0)
    for name, r in func_rows(rep).items():
        check(flat.get(name, 0) == r["exclusive_samples"], "decoded flat of %s" % name)
        check(cum.get(name, 0) == r["inclusive_samples"], "decoded cum of %s" % name)
    tool = c.pprof_tool()
    if not tool:
        raise Skip("no Go pprof; the decoded profile was checked")
    rows = pprof_line_rows(c, tool, path)
    lines = {}
    for r in rep["lines"]:  # keys as pprof prints them; lines whose names meet add up
        row = lines.setdefault(clean_line_key(r["name"]), {"exclusive_samples": 0, "inclusive_samples": 0})
        row["exclusive_samples"] += r["exclusive_samples"]
        row["inclusive_samples"] += r["inclusive_samples"]
    for key, r in lines.items():
        got = rows.get(key, [0, 0])
        check(got[0] == r["exclusive_samples"], "%s: pprof flat %d, report exclusive %d" % (
            key, got[0], r["exclusive_samples"]))
        check(got[1] == r["inclusive_samples"], "%s: pprof cum %d, report inclusive %d" % (
            key, got[1], r["inclusive_samples"]))
    hot = [k for k, r in lines.items() if r["exclusive_samples"] and "s_inline.c" in k]
    check(len(hot) >= 4, "samples on %d lines of s_inline.c only" % len(hot))
    # -list: the source annotated per line, the inlined mix_round's lines included
    # run from /: pprof trims a source path's prefix shared with its working directory
    p = c.run([tool, "-list", "^mix_round$", "-sample_index=samples", path], cwd="/")
    text = p.stdout
    listed = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+|\.)\s+(\d+|\.)\s+(\d+):", line)
        if m and m.group(1) != ".":
            listed[int(m.group(3))] = int(m.group(1))
    src = [r for r in rep["lines"] if r["exclusive_samples"] and r["name"].rsplit(":", 1)[1].isdigit()
           and int(r["name"].rsplit(":", 1)[1]) in listed and "s_inline.c" in r["name"]]
    check(len(listed) >= 2, "pprof -list mix_round shows samples on %d lines:\n%s" % (len(listed), text[:2000]))
    for r in src:
        ln = int(r["name"].rsplit(":", 1)[1])
        check(listed[ln] == r["exclusive_samples"], "-list line %d: %d, report %d" % (
            ln, listed[ln], r["exclusive_samples"]))
    check(sum(listed.values()) == func_rows(rep)["mix_round"]["exclusive_samples"], "-list mix_round total")
    # a filter selects the same samples as the report's
    frep = c.report(data, "--function", "sort_values")
    gz, fpath = c.export(data, "pprof", "--function", "sort_values", binary=True)
    _, fs, _ = decode_profile(gz)
    check(sum(v[0] for _, v in fs) == func_rows(frep)["sort_values"]["inclusive_samples"],
          "--function sort_values: %d samples, report %d" % (sum(v[0] for _, v in fs),
                                                          func_rows(frep)["sort_values"]["inclusive_samples"]))
    print("pprof (lines): %d lines agree with report --by line (flat and cum), -list mix_round per line" % len(lines))


# ---------------------------------------------------------------------------
# Callgrind
# ---------------------------------------------------------------------------

def annotate(c, path, inclusive=False):
    tool = shutil.which("callgrind_annotate")
    if not tool:
        raise Skip("no callgrind_annotate (Debian's valgrind)")
    p = c.run([tool, "--inclusive=" + ("yes" if inclusive else "no"), "--threshold=100", path])
    text = p.stdout
    check("WARNING" not in p.stderr, "callgrind_annotate warned: %s" % p.stderr)
    m = re.search(r"^\s*([\d,]+)\s.*PROGRAM TOTALS", text, re.M)
    check(m is not None, "no PROGRAM TOTALS in:\n%s" % text[:2000])
    total = int(m.group(1).replace(",", ""))
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s.*?\s(\S+):(\S+) \[", line)
        if m:
            rows[m.group(3)] = rows.get(m.group(3), 0) + int(m.group(1).replace(",", ""))
    return total, rows


def test_callgrind_instrumentation(c):
    data = c.data("instr_demo")
    rep = c.report(data)
    rows = func_rows(rep)
    text, path = c.export(data, "callgrind")
    check(re.search(r"^events: Elapsed Application$", text, re.M), "no events: line")
    nfn = text.count("\nfn=")
    total, self_rows = annotate(c, path)
    tol = nfn * 2 + 2
    near(total, sum(r["elapsed_exclusive"] for r in rep["functions"]), tol, "callgrind total")
    hot = hottest(rep, "elapsed_exclusive")
    first = max(self_rows.items(), key=lambda kv: kv[1])
    check(first[0] == hot["name"], "callgrind_annotate's hottest is %s, report's %s" % (first[0], hot["name"]))
    near(first[1], hot["elapsed_exclusive"], tol, "self of %s" % hot["name"])
    _, incl = annotate(c, path, inclusive=True)
    for name in ("main", "sort_numbers", "fib"):  # fib recursive: its "fib" is the outermost level
        near(incl[name], rows[name]["elapsed_inclusive"], tol, "inclusive of %s" % name)
    # recursion levels are split as callgrind does: fib + fib'2 is fib's self time
    near(self_rows.get("fib", 0) + self_rows.get("fib'2", 0), rows["fib"]["elapsed_exclusive"], tol, "self of fib")
    print("callgrind (instrumentation): callgrind_annotate reads it; totals, self and inclusive agree")


def callgrind_listing(c, path, cwd):
    """callgrind_annotate --inclusive=yes run in cwd: [(file:function, inclusive Elapsed)] of its
    function list, one entry per row."""
    tool = shutil.which("callgrind_annotate")
    if not tool:
        raise Skip("no callgrind_annotate (Debian's valgrind)")
    p = c.run([tool, "--inclusive=yes", "--threshold=100", path], cwd=cwd)
    check("WARNING" not in p.stderr, "callgrind_annotate warned: %s" % p.stderr)
    rows = []
    for line in p.stdout.split("Auto-annotated")[0].splitlines():
        m = re.match(r"^\s*([\d,]+)\s.*?\s(\S.*?):(\S+) \[", line)
        if m:
            rows.append(("%s:%s" % (m.group(2).strip(), m.group(3)), int(m.group(1).replace(",", ""))))
    check(rows, "callgrind_annotate listed no function:\n%s" % p.stdout[:2000])
    return rows


def test_callgrind_fork_and_paths(c):
    """A forked child's copy of the fork frame is a call of its caller there too (it had no calls=
    line: fork's inclusive cost was less than its self cost, main's less than the report's);
    cfi=/cob= only where they differ from fl=/ob=, as valgrind writes them (callgrind_annotate
    strips its working directory from fl= but not cfi=: run from a directory above the sources,
    it listed every function twice)."""
    data = c.data("instr_fork")
    rep = c.report(data)
    rows = func_rows(rep)
    text, path = c.export(data, "callgrind")
    tol = text.count("\nfn=") * 2 + 2
    for cwd in ("/", os.path.dirname(os.path.dirname(rows["main"]["file"]))):
        listing = callgrind_listing(c, path, cwd)
        dup = [n for n, k in collections.Counter(n.rsplit(":", 1)[1] for n, _ in listing).items() if k > 1]
        check(not dup, "run in %s, callgrind_annotate lists twice: %s" % (cwd, dup))
        incl = {n.rsplit(":", 1)[1]: v for n, v in listing}
        for name in ("fork", "main", "child_main"):
            near(incl.get(name, 0), rows[name]["elapsed_inclusive"], tol, "inclusive of %s (run in %s)" % (name, cwd))
    # no cfi=/cob= naming the file/object in force
    names, cur = {"fl": {}, "ob": {}}, {"fl": None, "ob": None}
    calls = collections.Counter()
    cfn = None
    for line in text.splitlines():
        m = re.match(r"^(fl|fi|fe|ob|cfi|cfl|cob|cfn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            key, ident, name = m.groups()
            kind = {"fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl", "cob": "ob"}.get(key, key)
            if kind in names and name is not None:
                names[kind][ident] = name
            if key in ("fl", "ob"):
                cur[key] = ident
            elif key in ("cfi", "cfl", "cob"):
                check(ident != cur[kind], "%s=(%s) %s repeats the %s= in force" % (
                    key, ident, names[kind].get(ident), kind))
            elif key == "cfn":
                cfn = name if name is not None else names.setdefault("fn", {}).get(ident)
            if key == "cfn" and name is not None:
                names.setdefault("fn", {})[ident] = name
        m = re.match(r"^fn=\((\d+)\) (.*)$", line)
        if m:
            names.setdefault("fn", {})[m.group(1)] = m.group(2)
        m = re.match(r"^calls=(\d+)", line)
        if m:
            calls[cfn] += int(m.group(1))
    check(calls["fork"] == rows["fork"]["calls"], "calls of fork: %d, report %d" % (calls["fork"], rows["fork"]["calls"]))
    print("callgrind (fork, paths): fork's and main's inclusive as the report's, each function listed once")


def test_callgrind_sampling(c):
    for rec, fn in (("sample_split", "heavy"), ("sample_recurse", "recurse")):
        data = c.data(rec)
        rep = c.report(data)
        rows = func_rows(rep)
        _, path = c.export(data, "callgrind")
        total, self_rows = annotate(c, path)
        check(total == rep["session"]["exclusive_samples"], "total %d != %d samples" % (
            total, rep["session"]["exclusive_samples"]))
        _, incl = annotate(c, path, inclusive=True)
        check(incl.get(fn) == rows[fn]["inclusive_samples"], "inclusive of %s: %s, report %d" % (
            fn, incl.get(fn), rows[fn]["inclusive_samples"]))
        self_all = self_rows.get(fn, 0) + self_rows.get(fn + "'2", 0)
        check(self_all == rows[fn]["exclusive_samples"], "self of %s: %d, report %d" % (
            fn, self_all, rows[fn]["exclusive_samples"]))
    print("callgrind (sampling): callgrind_annotate reads it; samples agree")


def annotate_source(c, path, inclusive=False, show=None):
    """callgrind_annotate --auto=yes: (functions listed as [(file, fn)], {file: {line: cost}});
    show: the one event to show, where there are several."""
    tool = shutil.which("callgrind_annotate")
    if not tool:
        raise Skip("no callgrind_annotate (Debian's valgrind)")
    p = c.run([tool, "--auto=yes", "--threshold=100", "--inclusive=" + ("yes" if inclusive else "no")] +
              (["--show=" + show] if show else []) + [path], cwd="/")
    text = p.stdout
    check("WARNING" not in p.stderr, "callgrind_annotate warned: %s" % p.stderr)
    funcs, per_line = [], {}
    src, ln, in_list = None, 0, False
    for line in text.splitlines():
        if line.startswith("-- Auto-annotated source: "):
            src = line[len("-- Auto-annotated source: "):].strip()
            per_line[src] = {}
            in_list = False
            continue
        if re.match(r"^\S*\s*file:function$", line.strip()) or line.strip().endswith("file:function"):
            in_list = True
            continue
        if in_list:
            m = re.match(r"^\s*([\d,]+)\s.*?\s(\S+):(\S+) \[", line)
            if m:
                funcs.append((m.group(2), m.group(3)))
            elif line.startswith("-- "):
                in_list = False
            continue
        if src is None:
            continue
        m = re.match(r"^-- line (\d+) -+$", line)
        if m:
            ln = int(m.group(1))
            continue
        if line.startswith("-----") or not line.strip() or line.startswith("Samples") or line.startswith("--"):
            continue
        m = re.match(r"^\s*([\d,]+|\.)(?: \(\s*[\d.]+%\))?\s\s(.*)$", line)
        if not m:
            continue
        if m.group(2).strip() in ("events annotated", "PROGRAM TOTALS"):
            src = None  # the summary after the last source
            continue
        if m.group(2).lstrip().startswith("=> "):
            continue  # a call's cost, under the line it is made on
        if m.group(1) != ".":
            per_line[src][ln] = int(m.group(1).replace(",", ""))
        ln += 1
    return funcs, per_line


def test_callgrind_lines(c):
    """Sampling callgrind carries self costs per source line and calls per call line:
    callgrind_annotate --auto=yes annotates the source as `stint report --by line`."""
    data = c.data("sample_inline")
    rep = c.report(data)
    text, path = c.export(data, "callgrind")
    funcs, per_line = annotate_source(c, path)
    names = [fn for _, fn in funcs]
    check(len(names) == len(set(names)), "a function listed under two files: %s" % funcs)
    src = [f for f in per_line if f.endswith("s_inline.c")]
    check(src, "s_inline.c not annotated (sources: %s)" % list(per_line))
    got = per_line[src[0]]
    want = {}
    for r in rep["lines"]:
        f, _, ln = r["name"].rpartition(":")
        if f.endswith("s_inline.c") and r["exclusive_samples"]:
            want[int(ln)] = r["exclusive_samples"]
    check(len(want) >= 4, "report has samples on %d lines of s_inline.c" % len(want))
    check(got == want, "per-line self samples: callgrind_annotate %s, report %s" % (sorted(got.items()),
                                                                                   sorted(want.items())))
    # a call made on an inlined call site's line: main -> hash_values at its call line
    check(re.search(r"^cfn=\(\d+\) hash_values\ncalls=\d+ \d+\n\d+ \d+$", text, re.M),
          "no call of hash_values with its call line")
    # instrumentation: one file per function too (lines are the functions' first lines)
    _, ipath = c.export(c.data("instr_demo"), "callgrind")
    ifuncs, _ = annotate_source(c, ipath)
    inames = [fn for _, fn in ifuncs]
    check(len(inames) == len(set(inames)), "instrumentation: a function under two files: %s" % ifuncs)
    print("callgrind (lines): %d lines of s_inline.c agree with report --by line; one file per function" % len(want))


def test_instr_lines(c):
    """Instrumentation with call sites: pprof's locations and callgrind's positions carry
    the values per source line, equal to `stint report --by line` (tests/progs/line_costs.c)."""
    data = c.data("instr_lines")
    rep = c.report(data, "--by", "line")
    want = {}
    for r in rep["lines"]:
        if os.path.basename(r["file"]) == "line_costs.c":
            want[r["line"]] = r
    check(len(want) >= 5, "report --by line has %d lines of line_costs.c" % len(want))
    # pprof: flat = the line's exclusive, cum = its inclusive (each sample once)
    gz, ppath = c.export(data, "pprof", binary=True)
    types, samples, _ = decode_profile(gz)
    check([t[0] for t in types] == ["calls", "elapsed", "application"], "sample types: %s" % types)
    where, locs = decode_profile.where, decode_profile.locs
    flat, cum = collections.Counter(), collections.Counter()
    for (stack, vals), ids in zip(samples, decode_profile.sample_locs):
        at = [where[x][2][0] for x in ids if locs[x][0] in ("main", "run", "spin5", "cpu_ms")]
        if ids and locs[ids[0]][0] in ("main", "run", "spin5", "cpu_ms"):
            flat[where[ids[0]][2][0]] += vals[1]
        for ln in set(at):
            cum[ln] += vals[1]
    tol = len(samples) + 2
    for ln, r in want.items():
        near(flat.get(ln, 0), r["elapsed_exclusive"], tol, "pprof flat of line %d" % ln)
        near(cum.get(ln, 0), r["elapsed_inclusive"], tol, "pprof cum of line %d" % ln)
    tool = c.pprof_tool()
    if tool:  # Go pprof reads it, and -list shows the lines of run()
        p = c.run([tool, "-list", "^run$", "-sample_index=elapsed", "-unit=ns", ppath], cwd="/")
        text = p.stdout
        listed = {}
        for line in text.splitlines():
            m = re.match(r"^\s*(\d+|\.)(?:ns)?\s+(\d+|\.)(?:ns)?\s+(\d+):", line)
            if m and m.group(2) != ".":
                listed[int(m.group(3))] = int(m.group(2))
        check(len(listed) >= 3, "pprof -list run shows %d lines:\n%s" % (len(listed), text[:2000]))
        for ln, v in listed.items():
            near(v, want[ln]["elapsed_inclusive"], tol, "pprof -list run, cum of line %d" % ln)
    # callgrind: self cost per line, as callgrind_annotate --auto=yes shows it
    _, cpath = c.export(data, "callgrind")
    _, per_line = annotate_source(c, cpath, show="Elapsed")
    src = [f for f in per_line if f.endswith("line_costs.c")]
    check(src, "line_costs.c not annotated (sources: %s)" % list(per_line))
    got = per_line[src[0]]
    for ln, r in want.items():
        if r["elapsed_exclusive"] >= 1:
            near(got.get(ln, 0), r["elapsed_exclusive"], 2, "callgrind self of line %d" % ln)
    print("instrumentation lines: pprof (flat, cum, -list) and callgrind per line agree with report --by line")


# ---------------------------------------------------------------------------
# Chrome trace events
# ---------------------------------------------------------------------------

def load_trace(text):
    try:
        t = json.loads(text)
    except ValueError as e:
        raise TestFailure("chrome trace is not valid JSON: %s" % e)
    check(isinstance(t.get("traceEvents"), list), "no traceEvents array")
    return t


def check_nesting(events):
    """Complete events of each thread must nest: no partial overlaps, to the ns (times are printed
    in µs with 3 decimals; a slice rounded apart from its duration ended 1 ns past its caller)."""
    per = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            check(e["dur"] >= 0, "negative dur: %s" % e)
            per[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), -round(e["dur"] * 1000), e))
    for key, lst in per.items():
        lst.sort(key=lambda x: (x[0], x[1]))
        stack = []
        for ts, negdur, e in lst:
            end = ts - negdur
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack:
                check(end <= stack[-1], "thread %s: %s overlaps its parent's end %d ns" % (key, e, stack[-1]))
            stack.append(end)
    return per


def test_chrome_instrumentation(c):
    for rec in ("instr_threads", "instr_demo"):
        data = c.data(rec)
        rep = c.report(data)
        t = load_trace(c.export(data, "chrome")[0])
        ev = t["traceEvents"]
        check_nesting(ev)
        calls = collections.Counter(e["name"] for e in ev if e["ph"] == "X" and e.get("cat") != "os")
        for name, r in func_rows(rep).items():
            check(calls.get(name, 0) == r["calls"], "%s: %d slices, report %d calls" % (
                name, calls.get(name, 0), r["calls"]))
        names = sorted(e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name")
        check(names == sorted(th["name"] for th in rep["threads"]), "thread names %s vs report %s" % (
            names, [th["name"] for th in rep["threads"]]))
        tids = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "X"}
        check(tids <= {(th["pid"], th["tid"]) for th in rep["threads"]}, "slices on unknown threads")
        check(t["otherData"]["events_left_out"] == 0, "events left out below the cap")
        if rec == "instr_demo":
            off = [e for e in ev if e["ph"] == "X" and e["name"] == "off-CPU"]
            check(off, "no off-CPU slice in the demo, which sleeps in usleep")
            sl = [e for e in ev if e["ph"] == "X" and e["name"] == "usleep"]
            check(any(u["ts"] - 0.002 <= o["ts"] and o["ts"] + o["dur"] <= u["ts"] + u["dur"] + 0.002
                      for o in off for u in sl), "no off-CPU slice inside usleep")
            u = func_rows(rep)["usleep"]
            near(sum(e["dur"] for e in sl) * 1000, u["elapsed_inclusive"], 0.05 * u["elapsed_inclusive"] + 50000,
                 "usleep duration (ns, uncompensated)")
    print("chrome (instrumentation): valid JSON, nested per thread, one slice per call, threads named")


def test_chrome_cap(c):
    data = c.data("instr_demo")
    full = load_trace(c.export(data, "chrome")[0])
    total = full["otherData"]["events"]
    check(full["otherData"]["events_left_out"] == 0 and full["otherData"]["max_events"] == 4000000,
          "the default export is not capped at 4,000,000 events: %s" % full["otherData"])
    whole = load_trace(c.export(data, "chrome", "--max-events", "0")[0])
    check(whole["otherData"]["max_events"] == 0 and whole["otherData"]["events"] == total,
          "--max-events 0 does not write the whole run: %s" % whole["otherData"])
    out = os.path.join(c.outdir, "capped.json")
    p = c.run([c.stint, "export", "--format", "chrome", "-i", data, "-o", out, "--max-events", "1000"])
    with open(out) as f:
        t = load_trace(f.read())
    ev = t["traceEvents"]
    left = t["otherData"]["events_left_out"]
    err = p.stderr
    check(left > 0 and ("left out %d" % left) in err and "--max-events" in err,
          "no warning on stderr with the %d events left out: %r" % (left, err))
    p = c.run([c.stint, "export", "--format", "chrome", "-i", data, "-o", out])
    check(p.stderr == "", "a warning without --max-events: %r" % p.stderr)
    slices = [e for e in ev if e["ph"] == "X"]
    # the cut-off is refined down to the nanosecond: the cap is nearly reached
    check(900 < len(slices) <= 1000, "%d slices with --max-events 1000" % len(slices))
    check(t["otherData"]["events"] == len(slices), "otherData.events %d != %d" % (t["otherData"]["events"], len(slices)))
    check(t["otherData"]["events_left_out"] == total - len(slices), "events_left_out %d, expected %d" % (
        t["otherData"]["events_left_out"], total - len(slices)))
    note = [e for e in ev if e["ph"] == "i" and "left out" in e["name"]]
    check(len(note) == 1 and note[0]["args"]["left_out"] == total - len(slices), "no left-out note: %s" % note)
    check(max(e["ts"] for e in slices) <= note[0]["ts"] + 0.002, "a slice starts after the cut-off")
    check_nesting(ev)
    print("chrome (cap): %d of %d events written, the rest said" % (len(slices), total))


def test_chrome_compensated(c):
    """The trace's times are compensated for the probe cost as every view's: a function's
    slices add up to its Elapsed Inclusive in the report, with and without --no-compensation."""
    data = c.data("instr_demo")
    checked = 0
    for opts in ([], ["--no-compensation"]):
        rep = c.report(data, *opts)
        rows = func_rows(rep)
        t = load_trace(c.export(data, "chrome", *opts)[0])
        dur = collections.Counter()
        for e in t["traceEvents"]:
            if e["ph"] == "X" and e.get("cat") != "os":
                dur[e["name"]] += e["dur"] * 1000.0
        for name, r in rows.items():
            if name == "fib" or not r["calls"]:  # recursive: its slices nest
                continue
            near(dur[name], r["elapsed_inclusive"], r["calls"] * 0.6 + 2,
                 "%s: slices (ns) vs report elapsed inclusive %s" % (name, " ".join(opts)))
            checked += 1
        if not opts:
            check(t["otherData"]["times"].startswith("probe cost compensated"), "otherData.times %r" % t["otherData"])
    # compensation matters in this recording: cmp is called thousands of times
    raw = func_rows(c.report(data, "--no-compensation"))["cmp"]["elapsed_inclusive"]
    cmpd = func_rows(c.report(data))["cmp"]["elapsed_inclusive"]
    check(raw - cmpd > func_rows(c.report(data))["cmp"]["calls"] * 0.6 + 2,
          "compensation too small to tell apart: %s vs %s" % (raw, cmpd))
    print("chrome (compensation): %d function totals agree with the report, compensated and not" % checked)


def ps(us):
    """A trace time (µs) in whole picoseconds."""
    return int(round(us * 1e6))


def read_sorted(slices, key):
    """Nest one thread's slices as trace viewers do from times: sorted by key, each slice inside
    the innermost open one that ends after it starts.  slices: (name, ts, dur, index) in ps.
    Returns (name, start, end, parent name or None, children's total) per slice, and overlaps."""
    out, stack, bad = [], [], 0
    for name, ts, dur, _ in sorted(slices, key=key):
        while stack and stack[-1][2] <= ts and not (dur == 0 and stack[-1][1] == ts == stack[-1][2]):
            stack.pop()
        if stack and ts + dur > stack[-1][2]:
            bad += 1
        fr = [name, ts, ts + dur, stack[-1][0] if stack else None, 0]
        if stack:
            stack[-1][4] += dur
        stack.append(fr)
        out.append(fr)
    return out, bad


def read_speedscope(slices):
    """Nest one thread's slices as speedscope 1.25's trace-event importer does: complete events
    sorted by start then longer first (stably), split into begin and end queues sorted by time
    (stably); at one instant a begin goes first if it has the name of the next end, else the
    end; an end is matched to the open frame of its name among the ends of that instant."""
    order = sorted(slices, key=lambda s: (s[1], -s[2]))
    begins = sorted(((ts, name) for name, ts, dur, _ in order), key=lambda b: b[0])
    ends = sorted(((ts + dur, name) for name, ts, dur, _ in order), key=lambda e: e[0])
    out, stack, bad, bi = [], [], 0, 0
    ends = collections.deque(ends)
    while bi < len(begins) or ends:
        take_b = bool(ends) is False or (bi < len(begins) and (
            begins[bi][0] < ends[0][0] or (begins[bi][0] == ends[0][0] and begins[bi][1] == ends[0][1])))
        if take_b:
            ts, name = begins[bi]
            bi += 1
            fr = [name, ts, None, stack[-1][0] if stack else None, 0]
            stack.append(fr)
            continue
        if stack:
            top = stack[-1][0]
            for j in range(1, len(ends)):
                if ends[j][0] > ends[0][0]:
                    break
                if ends[j][1] == top:
                    ends[0], ends[j] = ends[j], ends[0]
                    break
        ts, name = ends.popleft()
        if not stack or stack[-1][0] != name:
            bad += 1
            continue
        fr = stack.pop()
        fr[2] = ts
        if stack:
            stack[-1][4] += ts - fr[1]
        out.append(fr)
    return out, bad + len(stack)


def test_chrome_nesting(c):
    """Trace viewers rebuild the call tree from the slices' times alone (a stable sort by start,
    longer first; speedscope's importer; a reader that breaks ties the other way): each must get
    the report's tree.  Compensation leaves fact(n) the start and end of its only call, and leaf
    called in a loop starts as the previous call ends: written at their ends, children before
    parents, a viewer drew leaf as the caller of fact, and off-CPU as the caller of the call it
    was in; two zero-length off-CPU slices opened each thread."""
    data = c.data("instr_nest")
    rep = c.report(data)
    rows = func_rows(rep)
    tree = json.loads(c.run([c.stint, "report", "-i", data, "--tree", "--threshold", "0", "--format", "json"]).stdout)
    edges = set()

    def walk(node, parent):
        edges.add((parent, node["name"]))
        for ch in node.get("children", []):
            walk(ch, node["name"])
    for root in tree["roots"]:
        walk(root, None)
    t = load_trace(c.export(data, "chrome")[0])
    per, every = collections.defaultdict(list), collections.defaultdict(list)
    for i, e in enumerate(t["traceEvents"]):
        if e["ph"] == "X":
            s = (e["name"], ps(e["ts"]), ps(e["dur"]), i)
            every[(e["pid"], e["tid"])].append(s)
            if e.get("cat") != "os":
                per[(e["pid"], e["tid"])].append(s)
            else:
                check(e["dur"] > 0, "a zero-length off-CPU slice: %s" % e)
    readers = (("sorted by start, longer first, then file order",
                lambda sl: read_sorted(sl, lambda s: (s[1], -s[2], s[3]))),
               ("sorted by start, longer first, then reverse file order",
                lambda sl: read_sorted(sl, lambda s: (s[1], -s[2], -s[3]))),
               ("speedscope", read_speedscope))
    for what, reader in readers:
        ee, kids_of = collections.Counter(), collections.Counter()
        for key, sl in per.items():
            frames, bad = reader(sl)
            check(bad == 0, "%s: %d slices of thread %s do not nest" % (what, bad, key))
            for name, start, end, parent, kids in frames:
                ee[name] += (end - start - kids) / 1000.0
                kids_of[parent] += 1
                check(end == start or (parent, name) in edges,
                      "%s: %s drawn as called by %s, which the report's tree does not have" % (what, name, parent))
        for name, r in rows.items():
            # each slice's ends are rounded to the ns (and moved by a picosecond to nest)
            near(ee[name], r["elapsed_exclusive"], r["calls"] + kids_of[name] + 2,
                 "%s: exclusive ns of %s" % (what, name))
        # off-CPU is drawn inside the call it was in, never around one
        for key, sl in every.items():
            frames, bad = reader(sl)
            check(bad == 0, "%s: slices of thread %s with off-CPU do not nest" % (what, key))
            for name, start, end, parent, kids in frames:
                check(parent != "off-CPU", "%s: %s drawn inside off-CPU" % (what, name))
    naps = [e for e in t["traceEvents"] if e["ph"] == "X" and e["name"] == "nap"]
    check(len(naps) == 3, "%d nap slices" % len(naps))
    print("chrome (nesting): three readers rebuild the report's tree and exclusive times")


def test_chrome_sampling(c):
    data = c.data("sample_split")
    rep = c.report(data)
    t = load_trace(c.export(data, "chrome")[0])
    frames = t.get("stackFrames")
    check(isinstance(frames, dict) and frames, "no stackFrames")
    samples = [e for e in t["traceEvents"] if e["ph"] == "i" and e.get("cat") == "sample"]
    check(len(samples) == rep["session"]["exclusive_samples"], "%d sample events, report %d samples" % (
        len(samples), rep["session"]["exclusive_samples"]))
    excl, incl = collections.Counter(), collections.Counter()
    for s in samples:
        sf = str(s["sf"])
        check(sf in frames, "sf %s not in stackFrames" % sf)
        check(frames[sf]["name"] == s["name"], "sample name %s is not its leaf frame" % s["name"])
        excl[frames[sf]["name"]] += 1
        seen = set()
        while sf is not None:
            seen.add(frames[sf]["name"])
            p = frames[sf].get("parent")
            sf = str(p) if p is not None else None
        for n in seen:
            incl[n] += 1
    for name, r in func_rows(rep).items():
        check(excl.get(name, 0) == r["exclusive_samples"], "%s: %d exclusive, report %d" % (
            name, excl.get(name, 0), r["exclusive_samples"]))
        check(incl.get(name, 0) == r["inclusive_samples"], "%s: %d inclusive, report %d" % (
            name, incl.get(name, 0), r["inclusive_samples"]))
    ts = [s["ts"] for s in samples]
    check(ts == sorted(ts), "samples of one thread out of time order")
    print("chrome (sampling): one event per sample, stacks agree with the report")


# ---------------------------------------------------------------------------
# Names and order
# ---------------------------------------------------------------------------

def test_static_functions_two_files(c):
    """Two static functions "work" in two source files, which the report labels
    s_twofiles_a.c:work and s_twofiles_b.c:work: folded and chrome gave both the name "work"
    and pprof (which merges functions by name) added them up as one."""
    data = c.data("instr_twofiles")
    rep = c.report(data)
    want = {"%s:work" % os.path.basename(r["file"]): r for r in rep["functions"] if r["name"] == "work"}
    check(sorted(want) == ["s_twofiles_a.c:work", "s_twofiles_b.c:work"], "report rows of work: %s" % sorted(want))
    paths = parse_folded(c.export(data, "folded")[0])
    excl, _ = folded_sums(paths)
    check("work" not in excl, "folded has a frame named plain 'work'")
    for label, r in want.items():
        near(excl.get(label, 0), r["elapsed_exclusive"], len(paths) + 2, "folded exclusive of %s" % label)
    t = load_trace(c.export(data, "chrome")[0])
    calls = collections.Counter(e["name"] for e in t["traceEvents"] if e["ph"] == "X")
    for label, r in want.items():
        check(calls[label] == r["calls"], "chrome: %d slices of %s, report %d calls" % (calls[label], label, r["calls"]))
    check(calls["work"] == 0, "chrome has %d slices named plain 'work'" % calls["work"])
    gz, path = c.export(data, "pprof", binary=True)
    _, samples, _ = decode_profile(gz)
    flat, _ = pprof_sums(samples, 1)
    for label, r in want.items():
        near(flat.get(label, 0), r["elapsed_exclusive"], len(samples) + 2, "pprof flat of %s" % label)
    tool = c.pprof_tool()
    if tool:
        top = pprof_top(c, tool, path, "elapsed")
        for label, r in want.items():
            check(label in top, "pprof -top has no %s: %s" % (label, sorted(top)))
    print("static functions: folded, chrome and pprof name them FILE:NAME as the report")


def test_folded_grouped(c):
    """Folded lines come depth first, each path's extensions after it, so a viewer that draws
    lines in file order (speedscope's time order) draws each frame once: main's paths were
    split by the threads' and the forked child's (main;... thr;... main;child_work...)."""
    for rec in ("instr_fork", "instr_threads", "sample_split"):
        paths = parse_folded(c.export(c.data(rec), "folded")[0])
        for depth in range(1, 1 + max(len(f) for f, _ in paths)):
            seen, prev = set(), None
            for frames, _ in paths:
                key = tuple(frames[:depth]) if len(frames) >= depth else None
                if key is not None and key != prev:
                    check(key not in seen, "%s: the lines of %s are not together" % (rec, ";".join(key)))
                    seen.add(key)
                prev = key if key is not None else prev
    print("folded: every call path's lines together")


# ---------------------------------------------------------------------------
# Filters and errors
# ---------------------------------------------------------------------------

def test_filters(c):
    data = c.data("instr_threads")
    rep = c.report(data)
    beta = [th for th in rep["threads"] if th["name"] == "beta"][0]
    t = load_trace(c.export(data, "chrome", "--tid", str(beta["tid"]))[0])
    check({e["tid"] for e in t["traceEvents"] if e["ph"] == "X"} == {beta["tid"]}, "--tid kept other threads")
    calls = collections.Counter(e["name"] for e in t["traceEvents"] if e["ph"] == "X")
    check(calls["beta_step"] == 200 and calls["alpha_step"] == 0, "--tid beta: %s" % dict(calls))
    t = load_trace(c.export(data, "chrome", "--function", "gamma_main")[0])
    calls = collections.Counter(e["name"] for e in t["traceEvents"] if e["ph"] == "X")
    check(calls["gamma_step"] == 300 and calls["gamma_main"] == 1 and calls["beta_step"] == 0,
          "--function gamma_main: %s" % dict(calls))
    # the aggregate formats follow the view: the same numbers as the report's filter
    frep = c.report(data, "--tid", str(beta["tid"]))
    paths = parse_folded(c.export(data, "folded", "--tid", str(beta["tid"]))[0])
    excl, _ = folded_sums(paths)
    for name, r in func_rows(frep).items():
        near(excl.get(name, 0), r["elapsed_exclusive"], len(paths) + 2, "--tid folded %s" % name)
    sdata = c.data("sample_split")
    srep = c.report(sdata)
    paths = parse_folded(c.export(sdata, "folded", "--function", "heavy")[0])
    check(all("heavy" in f for f, _ in paths), "--function heavy kept paths without heavy")
    check(sum(v for _, v in paths) == func_rows(srep)["heavy"]["inclusive_samples"], "--function heavy total")
    print("filters: --tid and --function select the same data as the report")


def test_errors(c):
    data = c.data("sample_split")
    for argv, want in (([], "format"), (["--format", "svg"], "unknown export format"),
                       (["--format", "folded", "-i", os.path.join(c.work, "missing.data")], "missing.data"),
                       (["--format", "folded", "--value", "cpu"], "unknown value")):
        if "-i" not in argv:
            argv = argv + ["-i", data]
        p = c.run([c.stint, "export"] + argv, expect=None)
        err = p.stderr
        check(p.returncode != 0 and want in err, "%s: exit %d, stderr %r" % (argv, p.returncode, err))
    out = os.path.join(c.outdir, "no-such-dir", "x.pb.gz")
    p = c.run([c.stint, "export", "--format", "pprof", "-i", data, "-o", out], expect=None)
    check(p.returncode != 0 and "cannot write" in p.stderr, "bad -o: %r" % p.stderr)
    print("errors: one line each, non-zero exit")


def test_setup(c):
    """Record the shared data files and build Go pprof from Debian's source package."""
    for name in Ctx.RECORDINGS:  # fresh: the stint under test may read files differently
        old = os.path.join(c.work, name + ".data")
        if os.path.exists(old):
            os.unlink(old)
        c.data(name)
    src = "/usr/share/gocode/src/github.com/google/pprof"
    go = shutil.which("go")
    target = os.path.join(c.work, "pprof")
    if os.access(target, os.X_OK):
        print("Go pprof already built: %s" % target)
    elif go and os.path.isdir(src):
        env = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off", GOFLAGS="", GOPROXY="off",
                   GOCACHE=os.path.join(c.work, "gocache"))
        p = c.run([go, "build", "-o", target, "github.com/google/pprof"], expect=None, env=env)
        if p.returncode != 0:
            print("SKIP: building Go pprof failed (pprof read-back falls back to decoding here): %s" %
                  p.stderr[-1000:])
        else:
            print("built Go pprof from %s: %s" % (src, target))
    else:
        print("no golang-go or golang-github-google-pprof-dev: pprof is checked by decoding only")


TESTS = collections.OrderedDict([("setup", test_setup)] + [
    (n[5:], f) for n, f in sorted(globals().items()) if n.startswith("test_") and n != "test_setup"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stint")
    ap.add_argument("--progs")
    ap.add_argument("--demo")
    ap.add_argument("--work")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("tests", nargs="*")
    a = ap.parse_args()
    if a.list:
        print("\n".join(TESTS))
        return 0
    if not (a.stint and a.progs and a.demo and a.work):
        ap.error("--stint, --progs, --demo and --work are needed")
    c = Ctx(a)
    failed = skipped = ran = 0
    for name in a.tests or list(TESTS):
        ran += 1
        c.outdir = os.path.join(c.work, name)
        os.makedirs(c.outdir, exist_ok=True)
        try:
            TESTS[name](c)
            print("PASS: %s" % name)
        except Skip as e:
            print("SKIP: %s: %s" % (name, e))
            skipped += 1
        except TestFailure as e:
            print("FAIL: %s: %s" % (name, e))
            failed += 1
    if failed:
        return 1
    return 77 if skipped == ran else 0  # all skipped: CTest reports a skip, not a pass


if __name__ == "__main__":
    sys.exit(main())
