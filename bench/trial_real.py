#!/usr/bin/env python3
"""trial_real.py - the checks and figures of bench/trial-real.sh (which
builds the programs into --out first; see its header)."""
import argparse
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time

LUA_SCRIPT = r"""
-- errors through longjmp, coroutines (yield throws), C callbacks, recursion
local n = 0
for i = 1, 20000 do
  local ok = pcall(function(x) if x % 3 == 0 then error("bad " .. x) end return x end, i)
  if not ok then n = n + 1 end
end
print("errors", n)
local co = coroutine.wrap(function() for i = 1, 50000 do coroutine.yield(i) end end)
local s = 0
for i = 1, 50000 do s = s + co() end
print("co", s)
local t = {}
for i = 1, 30000 do t[i] = (i * 7919) % 30011 end
table.sort(t, function(a, b) return a > b end)
print("sort", t[1], t[#t])
local c = 0
string.rep("hello world ", 5000):gsub("%w+", function(w) c = c + #w end)
print("gsub", c)
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
print("fib", fib(24))
print(coroutine.resume(coroutine.create(function() error("in co") end)))
local p = io.popen("echo child; exit 3") print(p:read("a")) print(p:close())
os.exit(3)
"""

SQL = """CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE cnt(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM cnt WHERE x<200000)
INSERT INTO t SELECT x, printf('row%d', x*7 % 1000), x*1.5 FROM cnt;
CREATE INDEX tb ON t(b);
SELECT b, count(*), sum(c) FROM t GROUP BY b ORDER BY 2 DESC, 1 LIMIT 5;
SELECT count(*) FROM t WHERE b LIKE 'row1%';
SELECT json_object('a', 1, 'b', json_array(1,2,3));
SELECT * FROM nosuch;
SELECT 1/0, abs(-9223372036854775807-1);
"""

failures = []


def fail(msg):
    failures.append(msg)
    print("  FAIL " + msg)


def run(argv, stdin=None):
    """(exit status, stdout+stderr, CPU seconds of the children)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, p.stdout.decode("utf-8", "replace"), cpu


def run_in(argv, infile):
    if infile is None:
        return run(argv)
    with open(infile) as f:
        return run(argv, stdin=f)


def normal(text, name):
    # timings change from run to run; stint's own last line is not the program's
    text = "\n".join(l for l in text.splitlines() if not l.startswith("stint: "))
    return re.sub(r"\(\d+ ms( total)?\)", "(N ms)", text) if name.startswith("gtest") else text


def report(stint, data):
    p = subprocess.run([stint, "report", "-i", data, "--format", "json"], stdout=subprocess.PIPE)
    return json.loads(p.stdout)


def invariants(rep, name):
    rows = [("session", rep["session"])]
    for k in ("functions", "modules", "threads", "processes"):
        rows += [(r.get("name", k), r) for r in rep.get(k, [])]
    bad = []
    for n, r in rows:
        ei, ee = r["elapsed_inclusive"], r["elapsed_exclusive"]
        ai, ae = r["application_inclusive"], r["application_exclusive"]
        if min(ei, ee, ai, ae) < 0 or ee > ei or ae > ai or ai > ei or ae > ee:
            bad.append((n, ei, ee, ai, ae))
    if bad:
        fail("%s: %d rows break never-negative / incl >= excl / Application <= Elapsed: %s" % (
            name, len(bad), bad[:3]))
    return len(rows)


def calls_of(rep, module):
    return {f["name"]: f["calls"] for f in rep["functions"] if f["module"] == module}


def perf_shares(out, argv, infile):
    if not shutil.which("perf"):
        return None
    pdata = os.path.join(out, "perf.data")
    with open(infile) if infile else open(os.devnull) as f:
        p = subprocess.run(["perf", "record", "-q", "-F", "4000", "-o", pdata, "--"] + argv, stdin=f,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if p.returncode not in (0, 1, 3):
        return None
    p = subprocess.run(["perf", "report", "-i", pdata, "--stdio", "--no-children", "--sort", "symbol", "-q"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    shares = {}
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if m:
            shares[m.group(2)] = shares.get(m.group(2), 0.0) + float(m.group(1))
    return shares


def trial(args, name, plain, inst, argv_tail, infile, exact_calls):
    print("== %s" % name)
    out = args.out
    alone = [run_in([plain] + argv_tail, infile) for _ in range(3)]
    status, text, _ = alone[0]
    cpu = statistics.median(a[2] for a in alone)
    data = os.path.join(out, name + ".data")
    st, got, _ = run_in([args.stint, "record", "-q", "-f", "-o", data, "--", plain] + argv_tail, infile)
    if st != status:
        fail("%s: exit status %d under stint, %d alone" % (name, st, status))
    if normal(got, name) != normal(text, name):
        fail("%s: the output differs under stint" % name)
    rep = report(args.stint, data)
    n = invariants(rep, name)
    s = rep["session"]
    comp = rep.get("compensation", {})
    print("  same output and exit status (%d); %d rows checked" % (status, n))
    print("  plain run: %.1f ms CPU (median of 3); stint, compensated: session EI %.1f ms, AI %.1f ms "
          "(%+.0f%%); %.1f ns/event on the %s path, %.1f ns inside a call" % (
              cpu * 1e3, s["elapsed_inclusive"] / 1e6, s["application_inclusive"] / 1e6,
              100.0 * (s["application_inclusive"] / 1e9 - cpu) / cpu if cpu else 0.0,
              comp.get("cost_per_event_ns", 0), comp.get("cost_path", "?"), comp.get("cost_in_call_ns", 0)))
    mod = os.path.basename(plain)
    for m in rep.get("patched_modules", []):
        if m["module"] == mod:
            print("  patched at load: %d of %d functions" % (m["instrumented"], m["functions"]))
    if inst:
        idata = os.path.join(out, name + "-inst.data")
        run_in([args.stint, "record", "-q", "-f", "-o", idata, "--", inst] + argv_tail, infile)
        a, b = calls_of(rep, mod), calls_of(report(args.stint, idata), os.path.basename(inst))
        common = [k for k in a if k in b]
        # a table keyed by pointers hashes by address: a few calls either way
        differ = [(k, a[k], b[k]) for k in common if abs(a[k] - b[k]) > max(3, a[k] // 1000)]
        print("  calls: %d functions in both builds, %d differ%s" % (
            len(common), len(differ), (": %s" % differ[:6]) if differ else ""))
        if exact_calls and differ:
            fail("%s: calls of the plain build differ from the -finstrument-functions build's" % name)
    shares = perf_shares(out, [plain] + argv_tail, infile)
    if shares:
        # perf samples CPU time: against Application Exclusive, the time on the CPU
        top = sorted(rep["functions"], key=lambda f: -f["application_exclusive"])[:10]
        gap = sum(abs(f["application_exclusive_pct"] - shares.get(f["name"], 0.0)) for f in top)
        print("  top 10 Application Exclusive shares, stint vs perf's self %% (gap %.1f points; "
              "the C library's functions have other names in perf):" % gap)
        for f in top[:5]:
            print("    %-34s stint %5.2f%%  perf %5.2f%%" % (f["name"][:34], f["application_exclusive_pct"],
                                                        shares.get(f["name"], 0.0)))


# Redis (Debian's redis-server, a stripped binary patched at load): a server
# with background threads, a fork (BGSAVE) and a shutdown by command.  Its own
# INFO commandstats counts every command it ran: the ground truth for the
# calls of the functions that carry them out.
REDIS_COMMANDS = {"set": "setCommand", "get": "getCommand", "lpush": "lpushCommand",
                  "lpop": "lpopCommand", "bgsave": "bgsaveCommand"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def redis_cli(port, *cmd):
    p = subprocess.run(["redis-cli", "-p", str(port)] + list(cmd), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    return p.stdout.decode("utf-8", "replace")


def redis_session(args, server_argv, data):
    """Start the server (under stint when data is set), load it, BGSAVE, shut
    it down.  (exit status, requests per second by test, commandstats)"""
    out = args.out
    port = free_port()
    argv = server_argv + ["--port", str(port), "--save", "", "--appendonly", "no", "--dir", out,
                          "--dbfilename", "trial-redis.rdb"]
    if data and data.endswith(".uftrace"):
        shutil.rmtree(data, ignore_errors=True)
        argv = ["uftrace", "record", "-d", data, "-P", "."] + argv
    elif data:
        argv = [args.stint, "record", "-q", "-f", "-o", data, "--"] + argv
    log = open(os.path.join(out, "redis.log"), "w")
    server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while "PONG" not in redis_cli(port, "ping"):
        if server.poll() is not None or time.time() > deadline:
            server.kill()
            server.wait()
            return None, {}, {}
        time.sleep(0.2)
    bench = subprocess.run(["redis-benchmark", "-p", str(port), "-q", "-n", str(args.redis_requests),
                            "-t", "set,get,lpush,lpop"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    rps = {}
    for m in re.finditer(r"(\w+): ([\d.]+) requests per second", bench.stdout.decode("utf-8", "replace")):
        rps[m.group(1).lower()] = float(m.group(2))
    redis_cli(port, "bgsave")
    while "rdb_bgsave_in_progress:0" not in redis_cli(port, "info", "persistence"):
        time.sleep(0.1)
    stats = {}
    for m in re.finditer(r"cmdstat_(\w+):calls=(\d+)", redis_cli(port, "info", "commandstats")):
        stats[m.group(1)] = int(m.group(2))
    redis_cli(port, "shutdown", "nosave")
    try:
        status = server.wait(timeout=120)
    except subprocess.TimeoutExpired:
        server.kill()
        status = server.wait()
    log.close()
    return status, rps, stats


def redis_trial(args):
    print("== redis")
    server = shutil.which("redis-server")
    if not server or not shutil.which("redis-benchmark"):
        print("  skipped: no redis-server / redis-benchmark (Debian redis-server, redis-tools)")
        return
    status, rps, _ = redis_session(args, [server], None)
    data = os.path.join(args.out, "redis.data")
    st, srps, stats = redis_session(args, [server], data)
    if st is None:
        fail("redis: the server did not answer under stint")
        return
    if st != status:
        fail("redis: exit status %s under stint, %s alone" % (st, status))
    rep = report(args.stint, data)
    n = invariants(rep, "redis")
    print("  shut down with status %d under stint (%s alone); %d rows checked" % (st, status, n))
    calls = {}
    for f in rep["functions"]:
        calls[f["name"]] = calls.get(f["name"], 0) + f["calls"]
    for cmd, fn in sorted(REDIS_COMMANDS.items()):
        want, got = stats.get(cmd, 0), calls.get(fn, 0)
        print("  %-14s %7d calls; INFO commandstats: %d %s" % (fn, got, want, cmd.upper()))
        if got != want:
            fail("redis: %s called %d times, the server ran %d %s commands" % (fn, got, want, cmd.upper()))
    saves = [f for f in rep["functions"] if f["name"] == "rdbSaveRio"]
    procs = rep.get("processes", [])
    print("  %d processes (the BGSAVE child included), %d threads; rdbSaveRio %d call(s)" % (
        len(procs), len(rep.get("threads", [])), sum(f["calls"] for f in saves)))
    if len(procs) < 2 or sum(f["calls"] for f in saves) != 1:
        fail("redis: the BGSAVE child's save is not recorded once")
    # the same load under uftrace, which patches the same binary at load
    urps = {}
    if shutil.which("uftrace"):
        _, urps, _ = redis_session(args, [server], os.path.join(args.out, "redis.uftrace"))
    print("  requests per second (the benchmark's client shares the machine), and the time")
    print("  per request against the server alone:")
    for t in sorted(rps):
        if t in srps and rps[t] and srps[t]:
            line = "    %-6s alone %8.0f   stint %8.0f (%.2fx)" % (t.upper(), rps[t], srps[t], rps[t] / srps[t])
            if urps.get(t):
                line += "   uftrace -P . %8.0f (%.2fx)" % (urps[t], rps[t] / urps[t])
            print(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--redis-requests", type=int, default=20000)
    args = ap.parse_args()
    out = args.out
    script = os.path.join(out, "trial.lua")
    with open(script, "w") as f:
        f.write(LUA_SCRIPT)
    sql = os.path.join(out, "trial.sql")
    with open(sql, "w") as f:
        f.write(SQL)
    p = lambda n: os.path.join(out, n)  # noqa: E731
    trial(args, "lua", p("lua-plain"), p("lua-inst"), [script], None, True)
    trial(args, "sqlite", p("sqlite-plain"), p("sqlite-inst"), [":memory:"], sql, False)
    if os.path.exists(p("gtest-death-plain")):
        trial(args, "gtest-death", p("gtest-death-plain"), None, [], None, False)
    redis_trial(args)
    print("\n%d check(s) failed" % len(failures) if failures else "\nall checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
