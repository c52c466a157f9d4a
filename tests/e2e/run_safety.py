#!/usr/bin/env python3
"""run_safety.py - stint against an attacker and an unlucky user.

Each test plays one case of the issue "Safe with hostile files and faults"
with the real stint: another user who can write the output directory swaps
the spool for a symbolic link or plants links where outputs are written;
`stint recover` pointed at directories that are not spools, or at other
users' spools; a data file whose module path is made to run a shell
command, or whose source file is /dev/zero; `stint record` killed with
SIGKILL; a program that starts a daemon; Ctrl-C typed on a real terminal
(a pty); set-user-ID and static programs; a 3,000-character output path;
a program that changes directory; a library unloaded and another loaded at
its address; a data file truncated while stint reads it.

    run_safety.py --stint build/stint --progs build/tests TESTNAME
    run_safety.py --list

Exit status 0 when the test passes, 77 when it cannot run here (ctest shows
it as skipped: e.g. a test that needs root to act as another user), 1 with
a message on stderr when it fails.  Python 3 standard library only.
"""
import glob
import json
import os
import pty
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import RECORD_TIMEOUT, TestFailure, TestSkip, check, function_list, one_line_error  # noqa: E402
from run_e2e import Ctx, calls  # noqa: E402

NOBODY = 65534


Skip = TestSkip  # a test that cannot run here (exit 77)


def need_root(what):
    if os.geteuid() != 0:
        raise Skip("needs root to act as another user (%s)" % what)


def as_nobody(argv):
    """argv run as user and group nobody (util-linux setpriv)."""
    if not shutil.which("setpriv"):
        raise Skip("no setpriv to run a command as another user")
    return ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"] + argv


def open_to_all(c):
    """Let other users reach the test's temp dir (mkdtemp makes it 0700)."""
    os.chmod(c.tmp, 0o755)


def wait_for(cond, what, timeout=15, proc=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        if proc is not None and proc.poll() is not None:
            raise TestFailure("stint exited (%s) before %s: %s" % (
                proc.returncode, what, proc.stderr.read() if proc.stderr else ""))
        time.sleep(0.01)
    raise TestFailure("timed out waiting for %s" % what)


def spools_in(d):
    return sorted(glob.glob(os.path.join(d, ".stint-spool-*")))


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def read_pid(path):
    with open(path) as f:
        return int(f.read().split()[0])


def killed_recorder_spool(c, outdir, while_running=None):
    """Record e2e_wait_file, SIGKILL stint while the program runs, (call while_running(spool
    directory) then,) let the program end; returns (spool directory, program pid)."""
    release = os.path.join(c.tmp, "release-%d" % len(c.log))
    pidfile = os.path.join(c.tmp, "pid-%d" % len(c.log))
    data = os.path.join(outdir, "killed.data")
    argv = [c.stint, "record", "-o", data, "--", c.prog("e2e_wait_file"), release, pidfile]
    c.log.append(" ".join(argv))
    rec = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        wait_for(lambda: os.path.exists(pidfile) and os.path.getsize(pidfile) > 0, "the program to start",
                 proc=rec)
        pid = read_pid(pidfile)
        time.sleep(0.3)
        rec.kill()  # SIGKILL to stint only: the program runs on
        rec.wait()
        if while_running:
            sp = spools_in(outdir)
            check(len(sp) == 1, "expected one spool in %s, found %s" % (outdir, os.listdir(outdir)))
            while_running(sp[0])
    finally:
        open(release, "w").close()
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    wait_for(lambda: not alive(pid), "the program to end after its release file")
    check(not os.path.exists(data), "a data file appeared although stint was killed")
    sp = spools_in(outdir)
    check(len(sp) == 1, "expected one spool kept in %s, found %s" % (outdir, os.listdir(outdir)))
    return sp[0], pid


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------

TESTS, test = harness.registry()


@test
def test_spool_swapped_for_link(c):
    """Another user who can write the output directory renames the spool while
    the program runs and puts a link to a directory of root's in its place:
    nothing in that directory is touched, and the recording is complete."""
    need_root("the attacker")
    open_to_all(c)
    shared = os.path.join(c.tmp, "shared")
    victim = os.path.join(c.tmp, "victim")
    os.mkdir(shared)
    os.chmod(shared, 0o777)  # writable by all, not sticky
    os.mkdir(victim)
    precious = os.path.join(victim, "precious")
    with open(precious, "w") as f:
        f.write("root's file\n")
    release, pidfile = os.path.join(c.tmp, "release"), os.path.join(c.tmp, "pid")
    data = os.path.join(shared, "out.data")
    argv = [c.stint, "record", "-o", data, "--", c.prog("e2e_wait_file"), release, pidfile]
    c.log.append(" ".join(argv))
    rec = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        wait_for(lambda: os.path.exists(pidfile) and spools_in(shared), "the program and its spool", proc=rec)
        spool = spools_in(shared)[0]
        check(os.path.basename(spool) != ".stint-spool-%d" % rec.pid,
              "the spool's name is predictable (stint's pid): %s" % spool)
        time.sleep(0.2)
        p = c.run(as_nobody(["sh", "-c", 'mv "$1" "$2" && ln -s "$3" "$1"', "sh", spool,
                             os.path.join(shared, "moved"), victim]))
        check(p.returncode == 0, "the attacker could not swap the spool: %s" % p.stderr)
        time.sleep(0.2)
        open(release, "w").close()
        out, err = rec.communicate(timeout=RECORD_TIMEOUT)
    finally:
        open(release, "w").close()
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    check(os.path.exists(precious), "record deleted %s through the planted link" % precious)
    check(os.listdir(victim) == ["precious"], "files appeared in the link's target: %s" % os.listdir(victim))
    check(rec.returncode == 0, "record exited %d: %s" % (rec.returncode, err))
    rep = c.report_json(data)
    check(calls(rep, "main") == 1 and calls(rep, "tick") > 0,
          "the recording is incomplete: %s" % function_list(rep))


@test
def test_recover_refuses_non_spool(c):
    """A directory with a file named 'session' is not a spool: refused with one
    line, nothing written, nothing deleted."""
    d = os.path.join(c.tmp, "notaspool")
    os.mkdir(d, 0o700)
    for name, text in (("session", "kind instrument\n"), ("thesis.tex", "years of work\n"),
                       ("p1-2.info", "pid 1\n")):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    out = os.path.join(c.tmp, "out.data")
    p = c.run([c.stint, "recover", d, "-o", out])
    one_line_error(p, ["not a stint spool"], "recover of a directory that is not a spool")
    check(sorted(os.listdir(d)) == ["p1-2.info", "session", "thesis.tex"],
          "recover changed the directory: %s" % os.listdir(d))
    check(not os.path.exists(out), "recover wrote %s" % out)
    # a link to a directory is not followed either
    link = os.path.join(c.tmp, "link")
    os.symlink(d, link)
    p = c.run([c.stint, "recover", link, "-o", out])
    one_line_error(p, ["not a"], "recover of a link")


@test
def test_recover_leaves_foreign_files(c):
    """Recovering a real spool removes the spool's own files only: another file
    stays (and so does the directory), and a link named like a spool file is
    neither read nor is its target removed."""
    outdir = os.path.join(c.tmp, "out")
    os.mkdir(outdir)
    spool, _ = killed_recorder_spool(c, outdir)
    keep = os.path.join(c.tmp, "keep")
    with open(keep, "w") as f:
        f.write("keep me\n")
    with open(os.path.join(spool, "notes.txt"), "w") as f:
        f.write("mine\n")
    os.symlink(keep, os.path.join(spool, "p1-2.t3.buf"))
    os.symlink(keep, os.path.join(spool, "p1-2.info"))
    out = os.path.join(c.tmp, "rec.data")
    p = c.run([c.stint, "recover", spool, "-o", out], expect=0)
    check(os.path.exists(keep) and open(keep).read() == "keep me\n", "recover touched the link's target")
    check(os.listdir(spool) == ["notes.txt"], "recover left %s (expected only notes.txt)" % os.listdir(spool))
    rep = c.report_json(out)
    check(calls(rep, "tick") > 0, "nothing recovered: %s" % function_list(rep))


@test
def test_recover_keeps_unread_buffers(c):
    """recover deletes nothing it did not turn into the data file.  A spool whose only thread
    buffer cannot be read (not a buffer of this stint): one line, exit 2, no data file, every file
    kept (before: "recovered 0 processes, 0 threads", exit 0, the buffer deleted).  One readable
    buffer and one not: the data file of what could be read, one line naming the other, exit 3,
    the spool kept."""
    outdir = os.path.join(c.tmp, "out")
    os.mkdir(outdir)
    spool, _ = killed_recorder_spool(c, outdir)
    bufs = sorted(glob.glob(os.path.join(spool, "*.buf")))
    check(len(bufs) == 1, "expected one thread buffer, found %s" % os.listdir(spool))
    good = bufs[0]
    # a second thread's buffer, unreadable: the first one's bytes without its magic
    bad = good[:good.rindex(".t")] + ".t999999.buf"
    shutil.copy(good, bad)
    with open(bad, "r+b") as f:
        f.write(b"NOTABUF!")
    before = sorted(os.listdir(spool))
    out = os.path.join(c.tmp, "rec.data")
    p = c.run([c.stint, "recover", spool, "-o", out])
    check(p.returncode == 3, "recover with an unreadable buffer exited %d, expected 3; stderr: %s" % (
        p.returncode, p.stderr.strip()))
    lines = [l for l in p.stderr.splitlines() if "could not be read" in l]
    check(len(lines) == 1 and os.path.basename(bad) in lines[0] and "kept" in lines[0],
          "recover did not say which buffer it could not read: %s" % p.stderr)
    check(sorted(os.listdir(spool)) == before, "recover changed the spool: %s" % os.listdir(spool))
    rep = c.report_json(out)
    check(calls(rep, "tick") > 0, "the readable buffer was not recovered: %s" % function_list(rep))
    # the readable one gone too: nothing to recover, nothing deleted
    os.unlink(good)
    os.unlink(out)
    before = sorted(os.listdir(spool))
    p = c.run([c.stint, "recover", spool, "-o", out])
    one_line_error(p, ["could be read", "kept"], "recover of a spool with no readable buffer")
    check(p.returncode == 2, "recover exited %d, expected 2" % p.returncode)
    check(sorted(os.listdir(spool)) == before, "recover changed the spool: %s" % os.listdir(spool))
    check(not os.path.exists(out), "recover wrote %s" % out)


@test
def test_recover_refuses_others_spool(c):
    """A spool that belongs to another user is refused, and left alone."""
    need_root("another user's spool")
    outdir = os.path.join(c.tmp, "out")
    os.mkdir(outdir)
    spool, _ = killed_recorder_spool(c, outdir)
    before = sorted(os.listdir(spool))
    os.chown(spool, NOBODY, NOBODY)
    out = os.path.join(c.tmp, "rec.data")
    p = c.run([c.stint, "recover", spool, "-o", out])
    one_line_error(p, ["not a spool of yours"], "recover of another user's spool")
    check(sorted(os.listdir(spool)) == before, "recover changed another user's spool")
    check(not os.path.exists(out), "recover wrote %s" % out)


@test
def test_output_tmp_link_not_followed(c):
    """Links planted where record, export, html and recover used to write their
    temporary files ('<output>.tmp'): the files they point to stay as they were."""
    victim = os.path.join(c.tmp, "victim")
    with open(victim, "w") as f:
        f.write("root only\n")
    os.chmod(victim, 0o600)
    outs = {k: os.path.join(c.tmp, k) for k in ("rec.data", "app.folded", "page.html", "recovered.data")}
    for path in outs.values():
        os.symlink(victim, path + ".tmp")
    _, data = c.record([c.prog("e2e_threads")], data=outs["rec.data"])
    c.run([c.stint, "export", "-i", data, "--format", "folded", "-o", outs["app.folded"]], expect=0)
    c.run([c.stint, "html", "-i", data, "-o", outs["page.html"]], expect=0)
    outdir = os.path.join(c.tmp, "out")
    os.mkdir(outdir)
    spool, _ = killed_recorder_spool(c, outdir)
    c.run([c.stint, "recover", spool, "-o", outs["recovered.data"]], expect=0)
    check(open(victim).read() == "root only\n", "a planted link was followed: the victim file changed")
    for k, path in outs.items():
        check(os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) > 0,
              "%s was not written" % path)
        check(os.path.islink(path + ".tmp"), "the planted link %s.tmp was replaced" % path)
    c.report_json(outs["recovered.data"])
    # the output itself a link: replaced by the new file, its target untouched
    os.symlink(victim, os.path.join(c.tmp, "linked.folded"))
    c.run([c.stint, "export", "-i", data, "--format", "folded", "-o",
           os.path.join(c.tmp, "linked.folded")], expect=0)
    check(open(victim).read() == "root only\n", "export wrote through a link at its output")
    leftovers = [n for n in os.listdir(c.tmp) if n.startswith(".")]
    check(not leftovers, "temporary files left behind: %s" % leftovers)


@test
def test_output_device_kept(c):
    """An output that is a device (/dev/null, the usual place to throw a result away): export,
    html and the other writers write to it as it is; record refuses it in one line (a data file
    is made beside it and renamed over it).  The writers' rename made root's /dev/null a regular
    file."""
    dev = os.path.join(c.tmp, "null")
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as e:
        raise Skip("cannot make a character device here (%s)" % e)
    # (a small recording: the chrome export of tiny_calls' 6 M events took 44 s of the
    # sanitizers' build, past the time limit on a loaded machine)
    _, data = c.record([c.prog("e2e_threads")])
    for argv in (["export", "--format", "folded"], ["export", "--format", "chrome"], ["export", "--format", "callgrind"],
                 ["html"]):
        p = c.run([c.stint] + argv + ["-i", data, "-o", dev])
        check(p.returncode == 0, "%s -o %s exited %d: %s" % (" ".join(argv), dev, p.returncode, p.stderr))
        check(stat.S_ISCHR(os.lstat(dev).st_mode), "%s -o %s replaced the device with a file" % (" ".join(argv), dev))
    check(not [n for n in os.listdir(c.tmp) if n.startswith(".null")], "temporary files left: %s" % os.listdir(c.tmp))
    p = c.run([c.stint, "record", "-o", dev, "--", c.prog("e2e_tiny_calls")])
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "not a regular file" in p.stderr,
          "record -o DEVICE: exit %d, %r" % (p.returncode, p.stderr))
    check(stat.S_ISCHR(os.lstat(dev).st_mode), "record -o %s replaced the device with a file" % dev)


@test
def test_stdout_write_errors(c):
    """Every command that writes to standard output says when it could not (a full disk: /dev/full;
    a closed standard output) in one line, with status 2, as report does: callers, callees, diff,
    annotate and --help exited 0 with nothing written.  A pager that cannot be run is said too
    (the report was lost, status 0)."""
    _, data = c.record([c.prog("e2e_threads")])
    fn = c.report_json(data)["functions"][0]["name"]
    cmds = [["report", "-i", data, "--no-pager"], ["callers", "-i", data, "--no-pager", fn],
            ["callees", "-i", data, "--no-pager", fn], ["diff", "--no-pager", data, data],
            ["annotate", "-i", data, fn], ["export", "-f", "folded", "-i", data], ["--help"], ["report", "--help"]]
    for argv in cmds:
        c.run([c.stint] + argv, expect=0)  # (it works where it can write)
        for how, stdout in (("/dev/full", "full"), ("a closed standard output", "closed")):
            f = open("/dev/full", "w") if stdout == "full" else None
            try:
                p = subprocess.run([c.stint] + argv, stdout=f if f else subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   universal_newlines=True, timeout=60,
                                   **({} if f else {"preexec_fn": lambda: os.close(1)}))
            finally:
                if f:
                    f.close()
            check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1,
                  "stint %s to %s: exit %d, stderr %r" % (" ".join(argv), how, p.returncode, p.stderr))
    if shutil.which("script"):
        # a pager that does not exist, on a terminal (script(1) gives one)
        p = subprocess.run(["script", "-qec", "%s report -i %s" % (c.stint, data), "/dev/null"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=60,
                           env=dict(os.environ, PAGER="/nonexistent/pager", STINT_PAGER="/nonexistent/pager"))
        check(p.returncode != 0 and "pager could not be run" in p.stdout,
              "report with a pager that does not exist: exit %d, %r" % (p.returncode, p.stdout[-400:]))


@test
def test_export_interrupted_no_tmp(c):
    """Ctrl-C (SIGINT) while export writes its file: no temporary file stays."""
    _, data = c.record([c.prog("e2e_tiny_calls")])
    outdir = os.path.join(c.tmp, "exp")
    os.mkdir(outdir)
    out = os.path.join(outdir, "trace.json")
    for attempt in range(5):
        argv = [c.stint, "export", "-i", data, "--format", "chrome", "--max-events", "100000000", "-o", out]
        c.log.append(" ".join(argv))
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seen = False
        while p.poll() is None:
            if [n for n in os.listdir(outdir) if n != "trace.json"]:  # its temporary file
                seen = True
                p.send_signal(signal.SIGINT)
                break
            time.sleep(0.001)
        p.wait()
        if seen and p.returncode == -signal.SIGINT:
            left = os.listdir(outdir)
            check(left == [], "SIGINT during export left %s" % left)
            return
        for n in os.listdir(outdir):
            os.unlink(os.path.join(outdir, n))
    raise Skip("export always finished before it could be interrupted")


def build_c(c, src_text, out, flags):
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise Skip("no C compiler")
    src = os.path.join(c.tmp, os.path.basename(out) + ".c")
    with open(src, "w") as f:
        f.write(src_text)
    p = c.run([cc] + flags + ["-o", out, src])
    if p.returncode != 0:
        raise Skip("cannot build %s: %s" % (out, p.stderr.strip()[:300]))


SPIN_SRC = r'''
#line 1 "%s"
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void spin(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005ul + 1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000l + (b.tv_nsec - a.tv_nsec) < 300000000l);
}
int main(void) { spin(); return 0; }
'''


def sample_spin(c, prog):
    data = os.path.join(c.tmp, "s.data")
    c.run([c.stint, "record", "-m", "sample", "--sampler", "inproc", "-o", data, "--", prog], expect=0)
    return data


@test
def test_annotate_no_shell(c):
    """A module path made to run a shell command (as a path may legitimately
    hold quotes): annotate runs no shell, and disassembles the right file."""
    d = os.path.join(c.tmp, "a'; touch PWNED; echo '")
    os.mkdir(d)
    prog = os.path.join(d, "prog")
    build_c(c, SPIN_SRC % "spin.c", prog, ["-O1"])  # no -g: annotate falls back to the disassembly
    data = sample_spin(c, prog)
    p = c.run([c.stint, "annotate", "-i", data, "spin"], expect=0, cwd=c.tmp)
    check(not os.path.exists(os.path.join(c.tmp, "PWNED")), "annotate ran a shell command from the data file")
    insns = [l for l in p.stdout.splitlines() if ":\t" in l or ":  " in l]
    check(len(insns) >= 3, "no disassembly of spin from the quoted path:\n%s" % p.stdout)


@test
def test_annotate_source_not_regular(c):
    """A data file naming /dev/zero as the source file: annotate does not read
    it (it would never end), and shows the disassembly instead."""
    prog = os.path.join(c.tmp, "zprog")
    build_c(c, SPIN_SRC % "/dev/zero", prog, ["-O1", "-g"])
    data = sample_spin(c, prog)

    def limit():
        # an annotate that reads /dev/zero must not take the machine's memory;
        # AddressSanitizer needs a large address space (and caps allocations
        # itself)
        with open(c.stint, "rb") as f:
            if b"__asan_init" not in f.read():
                resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    p = c.run([c.stint, "annotate", "-i", data, "spin"], timeout=60, preexec_fn=limit)
    check(p.returncode == 0, "annotate exited %d: %s" % (p.returncode, p.stderr.strip()))
    check("/dev/zero" in p.stdout and "not found" in p.stdout,
          "annotate does not say the source is unreadable:\n%s" % p.stdout[:2000])


@test
def test_annotate_source_escapes(c):
    """The data file names the source file annotate prints: an escape sequence in it (a comment,
    a string literal; a file chosen by whoever wrote the data file) reached the terminal raw
    (title set, screen cleared).  Control characters are printed as '?', as the file's names are."""
    src_dir = os.path.join(c.tmp, "src")
    os.mkdir(src_dir)
    source = os.path.join(src_dir, "esc.c")
    prog = os.path.join(c.tmp, "escprog")
    build_c(c, SPIN_SRC % source, prog, ["-O1", "-g"])
    with open(os.path.join(c.tmp, "escprog.c")) as f:
        text = f.read().replace("for (int i = 0; i < 100000; i++)",
                                "for (int i = 0; i < 100000; i++) /* \x1b]0;PWNED\x07\x1b[2J\x9b31m */")
    with open(source, "w") as f:
        f.write(text.split("\n", 1)[1])  # without the #line
    data = sample_spin(c, prog)
    p = c.run([c.stint, "annotate", "-i", data, "spin"], expect=0)
    check("spin" in p.stdout and "PWNED" in p.stdout, "annotate did not print the source:\n%s" % p.stdout[:2000])
    check("\x1b" not in p.stdout and "\x07" not in p.stdout and "\x9b" not in p.stdout,
          "an escape sequence of the source reached the output: %r" % [l for l in p.stdout.splitlines() if "PWNED" in l])


@test
def test_source_read_as_data_owner(c):
    """A data file of another user names the source files annotate and html read: one naming a
    root-only file (#line "/root/secret", or the data file edited) put its lines into root's
    terminal and into a page made to be shared.  A source is now read only if the data file's
    owner could read it; annotate says why it is not shown.  The owner's own files and files
    anyone may read are shown as before."""
    need_root("a data file owned by another user")
    open_to_all(c)
    secret_dir = os.path.join(c.tmp, "src")
    os.mkdir(secret_dir)
    os.chmod(secret_dir, 0o755)
    source = os.path.join(secret_dir, "secret.c")
    prog = os.path.join(c.tmp, "spinprog")
    build_c(c, SPIN_SRC % source, prog, ["-O1", "-g", "-finstrument-functions"])
    with open(os.path.join(c.tmp, "spinprog.c")) as f:
        text = f.read().split("\n", 1)[1].replace("struct timespec a, b;", "struct timespec a, b; /* TOP-SECRET-LINE */")
    with open(source, "w") as f:
        f.write(text)
    data = os.path.join(c.tmp, "i.data")
    c.run([c.stint, "record", "-o", data, "--", prog], expect=0)
    page = os.path.join(c.tmp, "page.html")
    # (a file readable by all in a directory only root may enter, as /root: hidden too)
    # (and by the group's bits when the owner is in the file's group: 0640 shown, 0604 not)
    for mode, owner, shown, dirmode, group in ((0o600, 0, True, 0o755, 0), (0o600, NOBODY, False, 0o755, 0),
                                               (0o644, NOBODY, True, 0o755, 0), (0o644, NOBODY, False, 0o700, 0),
                                               (0o640, NOBODY, True, 0o755, NOBODY),
                                               (0o604, NOBODY, False, 0o755, NOBODY)):
        os.chown(source, 0, group)
        os.chmod(source, mode)
        os.chmod(secret_dir, dirmode)
        os.chown(data, owner, owner)
        p = c.run([c.stint, "annotate", "-i", data, "spin"], expect=0)
        check(("TOP-SECRET-LINE" in p.stdout) == shown,
              "annotate, source %o, data file of uid %d: the source %s" % (mode, owner, "hidden" if shown else "shown"))
        if not shown:
            check("another user's" in p.stdout, "annotate does not say why the source is not shown:\n%s" % p.stdout[:500])
        c.run([c.stint, "html", "-i", data, "-o", page], expect=0)
        check(("TOP-SECRET-LINE" in open(page).read()) == shown,
              "html, source %o, data file of uid %d: the source %s" % (mode, owner, "hidden" if shown else "shown"))


@test
def test_output_never_the_input(c):
    """export -o and html -o naming the data file being read (or the file a link given as input
    leads to) replaced the recording with its export, exit 0: refused in one line, the recording
    kept.  A link given as output is replaced, its target kept, as before."""
    prog = os.path.join(c.tmp, "spinprog")
    build_c(c, SPIN_SRC % "spin.c", prog, ["-O1", "-g"])
    data = sample_spin(c, prog)
    before = open(data, "rb").read()
    link = os.path.join(c.tmp, "link.data")
    os.symlink(data, link)
    for args, inp in ((["export", "--format", "folded", "-o", data], data), (["html", "-o", data], data),
                      (["export", "--format", "callgrind", "-o", data], link), (["html", "-o", data], link)):
        p = c.run([c.stint] + args + ["-i", inp])
        one_line_error(p, ["being read"], " ".join(args))
        check(open(data, "rb").read() == before, "%s -i %s changed the data file" % (" ".join(args), inp))
    p = c.run([c.stint, "html", "-i", data, "-o", link], expect=0)
    check(open(data, "rb").read() == before and not os.path.islink(link), "html -o LINK: the link's target changed")


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


@test
def test_failed_record_keeps_files(c):
    """A recording that fails before it starts (no such program, an unknown option value, a
    program that cannot run) leaves FILE and FILE.old as they were: the rotation to FILE.old
    happened first, and the older recording in FILE.old was lost."""
    out = os.path.join(c.tmp, "keep.data")
    for argv in (["--", os.path.join(c.tmp, "no-such-program")], ["-m", "bogus", "--", "/bin/true"],
                 ["--clock", "bogus", "--", "/bin/true"], ["--os-events", "bogus", "--", "/bin/true"],
                 ["-m", "sample", "--", os.path.join(c.tmp, "missing")], ["--", "/etc/passwd"], []):
        with open(out, "w") as f:
            f.write("newer\n")
        with open(out + ".old", "w") as f:
            f.write("older\n")
        p = c.run([c.stint, "record", "-o", out] + argv)
        # (a program not found: 127, one that cannot run: 126, as a shell says)
        want = 127 if "no-such-program" in " ".join(argv) or "missing" in " ".join(argv) else \
            126 if "/etc/passwd" in argv else 2
        check(p.returncode == want, "record %s exited %d, expected %d" % (" ".join(argv), p.returncode, want))
        check(read_text(out) == "newer\n" and read_text(out + ".old") == "older\n",
              "record %s, failing, moved or replaced the existing files: FILE %r, FILE.old %r" % (
                  " ".join(argv), read_text(out), read_text(out + ".old")))
    # a script whose #! interpreter is missing fails only at exec, once started: it moved FILE to
    # FILE.old and wrote nothing, each try pushing out the last good recording
    script = os.path.join(c.tmp, "bad-interp.sh")
    with open(script, "w") as f:
        f.write("#!/nonexistent/interp\necho hi\n")
    os.chmod(script, 0o755)
    for mode in ("instrument", "sample"):
        with open(out, "w") as f:
            f.write("newer\n")
        with open(out + ".old", "w") as f:
            f.write("older\n")
        p = c.run([c.stint, "record", "-m", mode, "-o", out, "--", script])
        check(p.returncode == 127, "-m %s, a missing interpreter: exit %d, expected 127" % (mode, p.returncode))
        one_line_error(p, ["/nonexistent/interp", "not found"], "a missing interpreter")
        check(read_text(out) == "newer\n" and read_text(out + ".old") == "older\n",
              "-m %s, a missing interpreter moved or replaced the files: FILE %r, FILE.old %r" % (
                  mode, read_text(out), read_text(out + ".old")))
    c.run([c.stint, "record", "-o", out, "--", "/bin/true"], expect=0)
    check(open(out + ".old").read() == "newer\n", "a recording that ran did not keep the previous file as .old")
    # two recordings to one name at once: both kept (the first to end as FILE.old); the one to
    # end last replaced the other's without keeping it
    os.unlink(out + ".old")
    procs = [subprocess.Popen([c.stint, "record", "-q", "-o", out, "--", c.prog("e2e_threads"), str(n)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for n in (3, 4)]
    for p in procs:
        p.wait(timeout=RECORD_TIMEOUT)
    commands = set()
    for f in (out, out + ".old"):
        commands.add(json.loads(c.run([c.stint, "report", "-i", f, "--format", "json"], expect=0).stdout)["command"])
    check(len(commands) == 2, "two recordings at once: one was lost (%s)" % commands)


@test
def test_recover_output_not_in_spool(c):
    """recover -o naming a file inside the spool: the spool is removed once recovered, and the
    data file went with it after "recovered ..., exit 0".  Refused in one line, the spool kept;
    a truncated thread buffer is damage (exit 3, the spool kept), not a thread of 0 ns."""
    outdir = os.path.join(c.tmp, "out")
    os.mkdir(outdir)
    spool, _ = killed_recorder_spool(c, outdir)
    before = sorted(os.listdir(spool))
    for name in ("session", "new.data"):
        p = c.run([c.stint, "recover", spool, "-o", os.path.join(spool, name)])
        one_line_error(p, ["inside the spool"], "recover -o SPOOL/%s" % name)
        check(sorted(os.listdir(spool)) == before, "recover -o SPOOL/%s changed the spool" % name)
    buf = sorted(glob.glob(os.path.join(spool, "*.buf")))[0]
    # cut inside its first chunk (1 MiB of header and notes, then 256 KiB; a next chunk the recorder
    # prepared ahead may follow)
    os.truncate(buf, (1 << 20) + (64 << 10))
    out = os.path.join(c.tmp, "rec.data")
    p = c.run([c.stint, "recover", spool, "-o", out])
    check(p.returncode == 3 and "cut short" in p.stderr and os.path.isdir(spool),
          "recover of a truncated buffer exited %d, spool %s: %s" % (
              p.returncode, "kept" if os.path.isdir(spool) else "removed", p.stderr.strip()))
    r = c.run([c.stint, "report", "-i", out])
    check(r.returncode == 3 and "damaged" in r.stderr, "the report of it does not say it is damaged: %d %s" % (
        r.returncode, r.stderr.strip()))


@test
def test_recorder_killed_then_recover(c):
    """stint record killed with SIGKILL while the program runs: the spool it
    leaves is recoverable (the session file is written at the start), with
    the right clock factor."""
    outdir = os.path.join(c.tmp, "out")
    os.mkdir(outdir)
    spool, _ = killed_recorder_spool(c, outdir)
    out = os.path.join(c.tmp, "rec.data")
    p = c.run([c.stint, "recover", spool, "-o", out], expect=0)
    check("did not finish" in p.stderr, "recover does not say the recording did not finish: %s" % p.stderr)
    rep = c.report_json(out)
    check(calls(rep, "main") == 1 and calls(rep, "tick") > 50, "recovered: %s" % function_list(rep))
    check(rep.get("left_running"), "the recovered file gives an exit status (%d) stint never saw" % rep["exit_status"])
    ei = rep["session"]["elapsed_inclusive"]
    # the program ran >= 0.3 s before stint was killed, and ended within the
    # test's 15 s; a wrong clock factor (ticks taken for ns) is off by ~1e9x
    check(0.25e9 <= ei <= 60e9, "recovered session time %.3f s: wrong clock factor" % (ei / 1e9))
    check(not os.path.exists(spool), "recover left the spool behind")


@test
def test_recover_refuses_live_spool(c):
    """recover run at once after stint record was killed, the program still running: it saved
    what was written so far (22 of 100 iterations), removed the spool under the program and
    exited 0.  Now it refuses in one line, naming the process, and the spool is kept; once the
    program has ended the recovery is whole."""
    outdir = os.path.join(c.tmp, "out")
    os.mkdir(outdir)
    out = os.path.join(c.tmp, "early.data")

    def early(spool):
        p = c.run([c.stint, "recover", spool, "-o", out])
        one_line_error(p, ["still records", "once the program has ended"], "recover of a live spool")
        check(os.path.isdir(spool) and not os.path.exists(out), "recover of a live spool removed it or wrote")
        # -f: what it recorded so far, the spool kept for the rest
        c.run([c.stint, "recover", "-f", spool, "-o", out], expect=0)
        check(os.path.isdir(spool) and os.path.exists(out), "recover -f of a live spool: spool or output missing")
        os.unlink(out)

    spool, _ = killed_recorder_spool(c, outdir, early)
    c.run([c.stint, "recover", spool, "-o", out], expect=0)
    check(calls(c.report_json(out), "main") == 1, "the recovery after the program's end is not whole")


@test
def test_daemon_not_waited_for(c):
    """A program that starts a daemon (setsid) and exits: record returns while
    the daemon still runs, says so, and writes the program's recording."""
    pidfile, release = os.path.join(c.tmp, "daemon.pid"), os.path.join(c.tmp, "release")
    try:
        rec, data = c.record([c.prog("e2e_daemonize"), pidfile, release])
        check(os.path.exists(pidfile), "the daemon did not start")
        dpid = read_pid(pidfile)
        check(alive(dpid), "record returned only after the daemon ended")
        check("detached" in rec.stderr, "record does not say a daemon was left running: %s" % rec.stderr)
        rep = c.report_json(data)
        check(calls(rep, "work") == 3, "work calls: %s" % function_list(rep))
    finally:
        open(release, "w").close()
    # sampling too (it said nothing of the daemon left running)
    os.unlink(pidfile)
    os.unlink(release)
    try:
        p = c.run([c.stint, "record", "-m", "sample", "-o", os.path.join(c.tmp, "s.data"), "--",
                   c.prog("e2e_daemonize"), pidfile, release], expect=0)
        check(os.path.exists(pidfile) and alive(read_pid(pidfile)), "sampling: the daemon did not run on")
        check("detached" in p.stderr, "sampling: record does not say a daemon was left running: %s" % p.stderr)
    finally:
        open(release, "w").close()


def run_on_pty(c, argv, script, timeout=RECORD_TIMEOUT, repeat=None):
    """Run argv as the foreground job of a new terminal; script(fd) types on
    it, then repeat (if given) is typed every half second until argv ends.
    Returns (exit status as a shell gives it, what was printed)."""
    c.log.append("(on a pty) " + " ".join(argv))
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    out = []

    def drain(t=0.0):
        while True:
            r, _, _ = select.select([fd], [], [], t)
            if not r:
                return
            try:
                b = os.read(fd, 4096)
            except OSError:
                return
            if not b:
                return
            out.append(b.decode(errors="replace"))
            t = 0.0

    try:
        script(fd, drain)
        deadline = time.time() + timeout
        last = time.time()
        while time.time() < deadline:
            drain(0.05)
            if repeat and time.time() - last >= 0.5:
                os.write(fd, repeat)
                last = time.time()
            w, st = os.waitpid(pid, os.WNOHANG)
            if w == pid:
                drain()
                os.close(fd)
                code = os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)
                return code, "".join(out)
        raise TestFailure("timed out on the pty; output so far:\n%s" % "".join(out))
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


@test
def test_ctrl_c_delivered_once(c):
    """Ctrl-C typed on the terminal reaches the program once: the terminal
    signals the whole foreground group, and stint does not send it again."""
    state = os.path.join(c.tmp, "state")
    data = os.path.join(c.tmp, "stint.data")

    def script(fd, drain):
        wait_for(lambda: (drain(), read_text(state) == "ready\n")[1], "the program to be ready")
        os.write(fd, b"\x03")
        wait_for(lambda: (drain(), read_text(state) not in ("", "ready\n"))[1], "the program's count")

    code, out = run_on_pty(c, [c.stint, "record", "-o", data, "--", c.prog("e2e_count_sigint"), state],
                           script)
    check(code == 0, "record exited %d: %s" % (code, out))
    check(read_text(state).strip() == "1", "the program got SIGINT %s times for one Ctrl-C" % read_text(state).strip())
    rep = c.report_json(data)
    check(calls(rep, "tick") > 0, "not recorded: %s" % function_list(rep))


@test
def test_ctrl_c_twice_ends_recording(c):
    """A program that ignores Ctrl-C: a second Ctrl-C ends the recording
    cleanly (status 130, a readable data file), leaving the program running."""
    state, release = os.path.join(c.tmp, "state"), os.path.join(c.tmp, "release")
    data = os.path.join(c.tmp, "stint.data")

    def script(fd, drain):
        wait_for(lambda: (drain(), read_text(state) == "ready\n")[1], "the program to be ready")
        os.write(fd, b"\x03")

    try:
        # more Ctrl-Cs follow, half a second apart (two typed at once may
        # reach stint as one signal)
        code, out = run_on_pty(c, [c.stint, "record", "-o", data, "--", c.prog("e2e_count_sigint"), state,
                                   "ignore", release], script, repeat=b"\x03")
    finally:
        open(release, "w").close()
    check(code == 130, "record exited %d, expected 130: %s" % (code, out))
    check("stopped waiting" in out, "record does not say it stopped waiting: %s" % out)
    rep = c.report_json(data)
    check(calls(rep, "tick") > 0, "not recorded: %s" % function_list(rep))


@test
def test_program_sigint_passed_on(c):
    """A program that dies of SIGINT (Ctrl-C): stint exited 130, which tells a shell, make or xargs
    that the program handled the signal, so `for f in *; do stint record -- ./t $f; done` went on
    to the next file after Ctrl-C.  stint now writes the data file, then dies of SIGINT itself,
    as the program did (perf record does the same); the recording is kept."""
    for mode in ("instrument", "sample"):
        data = os.path.join(c.tmp, mode + ".data")
        p = c.run([c.stint, "record", "-q", "-m", mode, "-o", data, "--", "/bin/sh", "-c",
                   "%s 2; kill -INT $$" % c.prog("e2e_threads")])
        check(p.returncode == -signal.SIGINT, "-m %s: record exited %d, expected to die of SIGINT: %s" % (
            mode, p.returncode, p.stderr))
        c.run([c.stint, "report", "-i", data, "--format", "json"], expect=0)
    p = c.run([c.stint, "record", "-q", "-o", os.path.join(c.tmp, "t.data"), "--", "/bin/sh", "-c", "kill -TERM $$"])
    check(p.returncode == 143, "a program killed by SIGTERM: record exited %d, expected 143" % p.returncode)


@test
def test_setuid_target_explained(c):
    """A set-user-ID program run by another user loads no LD_PRELOAD: record
    says so in one line instead of "recorded 0 processes"."""
    need_root("a set-user-ID program of root's run by nobody")
    open_to_all(c)
    prog = os.path.join(c.tmp, "suid_prog")
    shutil.copy(c.prog("e2e_threads"), prog)
    os.chmod(prog, 0o4755)
    out = os.path.join(c.tmp, "o")
    os.mkdir(out)
    os.chmod(out, 0o777)
    p = c.run(as_nobody([c.stint, "record", "-o", os.path.join(out, "x.data"), "--", prog]))
    if "Permission denied" in p.stderr and "stint" not in p.stderr:
        raise Skip("nobody cannot run %s here" % c.stint)
    one_line_error(p, ["set-user-ID"], "record of a set-user-ID program")


@test
def test_static_target_explained(c):
    """A statically linked -finstrument-functions program: one line saying
    why it cannot be recorded."""
    prog = os.path.join(c.tmp, "static_prog")
    build_c(c, "volatile int x;\nvoid f(void) { x++; }\nint main(void) { f(); return 0; }\n", prog,
            ["-static", "-finstrument-functions", "-O1"])
    p = c.run([c.stint, "record", "-o", os.path.join(c.tmp, "x.data"), "--", prog])
    one_line_error(p, ["statically linked"], "record of a static program")


@test
def test_long_output_path(c):
    """An output path of more than 3,000 characters: recorded as usual."""
    d = c.tmp
    while len(d) < 3100:
        d = os.path.join(d, "d" * 200)
    os.makedirs(d)
    data = os.path.join(d, "stint.data")
    check(len(data) > 3000, "path too short")
    rec, data = c.record([c.prog("e2e_threads")], data=data)
    check("recorded 1 process," in rec.stderr, "record says: %s" % rec.stderr)
    rep = c.report_json(data)
    check(len(rep["processes"]) == 1 and len(rep["threads"]) == 4,
          "%d processes, %d threads recorded" % (len(rep["processes"]), len(rep["threads"])))


@test
def test_chdir_then_thread(c):
    """The program changes directory, then starts a thread: with a relative
    output path, both threads are recorded whole."""
    argv = [c.stint, "record", "-o", "rel.data", "--", c.prog("e2e_chdir_thread")]
    c.run(argv, expect=0, cwd=c.tmp)
    rep = c.report_json(os.path.join(c.tmp, "rel.data"))
    check(len(rep["threads"]) == 2, "%d threads recorded, expected 2" % len(rep["threads"]))
    check(calls(rep, "step") == 10, "step calls: %s" % function_list(rep))


@test
def test_dlclose_address_reused(c):
    """A library unloaded, another loaded at its address, then the first again:
    each one's calls keep their own names (module maps are ordered in time)."""
    rec, data = c.record([c.prog("e2e_reload_host"), c.progs])
    if "same" not in rec.stdout:
        raise Skip("the loader did not put the second library where the first was")
    rep = c.report_json(data)
    wrong = []
    for name, mod, n in (("a_entry", "libe2e_reload_a.so", 2), ("a_step", "libe2e_reload_a.so", 6),
                         ("b_entry", "libe2e_reload_b.so", 1), ("b_step", "libe2e_reload_b.so", 5)):
        if calls(rep, name, mod) != n:
            wrong.append("%s[%s] %d calls, expected %d" % (name, mod, calls(rep, name, mod), n))
    check(not wrong, "%s\n  functions: %s" % ("; ".join(wrong), function_list(rep)))


@test
def test_data_file_truncated_while_read(c):
    """The data file shrinks while stint reads it (a program still writing it,
    a full disk): the pages of stint's mapping past the new end raise SIGBUS
    when read.  The LD_PRELOAD library e2e_truncate_on_map cuts the file to
    4096 bytes as soon as stint has mapped it.  Every reading command must end
    with one line naming the file and exit 2, not with "Bus error"."""
    seed = os.path.join(HERE, "..", "fuzz", "corpus", "ok-real-sample-recurse.data")
    data = os.path.join(c.tmp, "shrinking.data")
    shim = os.path.join(c.progs, "libe2e_truncate_on_map.so")
    check(os.path.exists(shim), "%s is missing (build the tests first)" % shim)
    env = dict(os.environ, LD_PRELOAD=shim, STINT_TEST_TRUNCATE=data)
    # a sanitizer build's runtime wants to be the first library loaded
    env["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
    for argv in (["report", "-i", data], ["report", "-i", data, "--tree"],
                 ["export", "-i", data, "--format", "folded", "-o", os.path.join(c.tmp, "out.folded")]):
        shutil.copyfile(seed, data)
        check(os.path.getsize(data) > 8192, "the seed file is too small to be cut at 4096 bytes")
        p = c.run([c.stint] + argv, env=env)
        check(os.path.getsize(data) == 4096, "the preloaded library did not truncate %s" % data)
        check(p.returncode == 2, "stint %s exited %d (expected 2: an error); stderr: %s" % (
            argv[0], p.returncode, p.stderr.strip()))
        one_line_error(p, [data, "truncated while being read"], "stint " + " ".join(argv))
    check(not [f for f in os.listdir(c.tmp) if "folded" in f], "export left a file behind: %s" % os.listdir(c.tmp))


@test
def test_output_names_descriptor(c):
    """-o /dev/stdout with standard output a regular file (stint html -o /dev/stdout > page.html):
    the writers made a file beside the name and renamed it over the link, so as root the system's
    /dev/stdout became a regular file and the user's redirection stayed empty.  Here a link of
    the user's to /proc/self/fd/1 stands for it: the output goes to the descriptor (at its
    offset: >> appends), the link stays; record refuses such a name and '-' in one line (it made
    a file named '-'); the data file is its owner's only, as perf.data is."""
    _, data = c.record([c.prog("e2e_threads")])
    check(stat.S_IMODE(os.stat(data).st_mode) == 0o600, "the data file's mode is %o, not 600" % (
        stat.S_IMODE(os.stat(data).st_mode)))
    link = os.path.join(c.tmp, "to-stdout")
    os.symlink("/proc/self/fd/1", link)
    for argv in (["export", "--format", "folded"], ["html"]):
        out = os.path.join(c.tmp, "redirected")
        with open(out, "w") as f:
            f.write("KEPT\n")
        with open(out, "a") as f:
            p = subprocess.run([c.stint] + argv + ["-i", data, "-o", link], stdout=f, stderr=subprocess.PIPE,
                               text=True, timeout=RECORD_TIMEOUT)
        check(p.returncode == 0, "%s -o LINK exited %d: %s" % (argv[0], p.returncode, p.stderr))
        check(os.path.islink(link), "%s -o LINK replaced the link with a file" % argv[0])
        text = open(out, errors="replace").read()
        check(text.startswith("KEPT\n") and len(text) > 100,
              "%s -o LINK: the redirected file holds %d bytes: %r" % (argv[0], len(text), text[:80]))
    # another descriptor: written at its offset, never opened again with O_TRUNC (3>>log.txt
    # was emptied); one open for reading only, or not open, is refused and left as it was
    log = os.path.join(c.tmp, "log.txt")
    with open(log, "w") as f:
        f.write("KEPT\n")
    for mode, ok in (("a", True), ("r", False)):
        with open(log, "w") as f:
            f.write("KEPT\n")
        with open(log, mode) as f:
            fd = f.fileno()
            p = subprocess.run([c.stint, "export", "--format", "folded", "-i", data, "-o", "/dev/fd/%d" % fd],
                               pass_fds=(fd,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=RECORD_TIMEOUT)
        text = open(log).read()
        check((p.returncode == 0) == ok and text.startswith("KEPT\n") and (len(text) > 20) == ok,
              "export -o /dev/fd/N open %r: exit %d, the file holds %r" % (mode, p.returncode, text[:60]))
    p = c.run([c.stint, "export", "--format", "folded", "-i", data, "-o", "/dev/fd/9"])
    one_line_error(p, ["/dev/fd/9"], "export -o a descriptor not open")
    for name in (link, "-"):
        p = c.run([c.stint, "record", "-o", name, "--", c.prog("e2e_threads")], cwd=c.tmp)
        one_line_error(p, ["not to a descriptor"], "record -o %s" % name)
        check(os.path.islink(link) and not os.path.exists(os.path.join(c.tmp, "-")),
              "record -o %s made a file" % name)

# ---------------------------------------------------------------------------

def main():
    return harness.main(TESTS, "safety", "stint safety tests", Ctx)


if __name__ == "__main__":
    sys.exit(main())
