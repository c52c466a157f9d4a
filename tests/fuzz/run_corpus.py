#!/usr/bin/env python3
"""run_corpus.py - every reading command over every file of the malformed-file
corpus (tests/fuzz/corpus, written by make_corpus.c).

For each file and command: no crash (no signal, no sanitizer report), at
most one line on stderr per file read besides html's "wrote" line, exit 0 for ok-* files
and 2 (nothing reportable) or 3 (damaged, reported as far as readable) for
bad-* files; every text output is UTF-8 and JSON output parses as JSON, and no table
or tree writes an escape character to the terminal.

usage: run_corpus.py --stint PATH [--corpus DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SANITIZER = (b"AddressSanitizer", b"LeakSanitizer", b"runtime error:", b"UndefinedBehaviorSanitizer")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stint", required=True)
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus"))
    a = ap.parse_args()
    files = sorted(f for f in os.listdir(a.corpus) if f.startswith(("ok-", "bad-")))
    if not files:
        print("no corpus files in %s" % a.corpus)
        return 1
    failures = []
    runs = 0
    with tempfile.TemporaryDirectory(prefix="stint-corpus-") as tmp:
        for name in files:
            path = os.path.join(a.corpus, name)
            ok = name.startswith("ok-")
            p = subprocess.run([a.stint, "report", "-i", path, "--format", "json"], capture_output=True)
            method = None
            if p.returncode in (0, 3):
                try:
                    method = json.loads(p.stdout.decode("utf-8"))["method"]
                except (ValueError, KeyError) as e:
                    failures.append("%s: report --format json: not JSON: %s" % (name, e))
            bys = ["function", "module", "thread", "process"]
            if method == "sampling":
                bys += ["line", "address"]
            out = os.path.join(tmp, "out")
            cmds = []
            for by in bys:
                for fmt in ("table", "csv", "json"):
                    cmds.append((["report", "-i", path, "--by", by, "--format", fmt, "--per-call"], fmt))
            for fmt in ("table", "csv", "json"):
                cmds.append((["report", "-i", path, "--tree", "--threshold", "0", "--format", fmt], fmt))
                cmds.append((["report", "-i", path, "--tree", "--hot-path", "--format", fmt], fmt))
            cmds.append((["report", "-i", path, "--just-my-code", "--function", "*a*"], "table"))
            for exp in ("folded", "pprof", "callgrind", "chrome"):
                cmds.append((["export", "-i", path, "--format", exp, "-o", out], "file-json" if exp == "chrome" else "file"))
            cmds.append((["html", "-i", path, "-o", out], "file-html"))
            cmds.append((["diff", "--format", "json", path, path], "json"))
            for argv, kind in cmds:
                runs += 1
                what = "%s: stint %s" % (name, " ".join(x if x != path else "FILE" for x in argv))
                p = subprocess.run([a.stint] + argv, capture_output=True, timeout=300)
                err_lines = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith(b"stint: wrote ")]
                if p.returncode < 0:
                    failures.append("%s: killed by signal %d" % (what, -p.returncode))
                    continue
                if any(s in p.stderr for s in SANITIZER):
                    failures.append("%s: sanitizer report:\n%s" % (what, p.stderr.decode("utf-8", "replace")[:3000]))
                    continue
                if len(err_lines) > (2 if argv[0] == "diff" else 1):  # diff reads two files
                    failures.append("%s: %d lines on stderr: %r" % (what, len(err_lines), p.stderr[:500]))
                # (a valid file may have no function whose name has an 'a')
                no_match = argv[-2:] == ["--function", "*a*"] and len(err_lines) == 1 and \
                    err_lines[0].startswith(b"stint: no function matches") and p.returncode == 2
                if ok and (p.returncode != 0 or err_lines) and not no_match:
                    failures.append("%s: a valid file gave exit %d: %r" % (what, p.returncode, p.stderr[:300]))
                if not ok and p.returncode not in (2, 3):
                    failures.append("%s: a damaged file gave exit %d (expected 2 or 3)" % (what, p.returncode))
                if p.returncode not in (0, 3):
                    continue
                data = p.stdout
                if kind.startswith("file"):
                    data = open(out, "rb").read() if kind != "file" or os.path.exists(out) else b""
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as e:
                    if kind != "file":  # pprof is binary
                        failures.append("%s: output is not UTF-8: %s" % (what, e))
                    continue
                if kind == "file-html":  # the page's data: JSON inside <script>
                    start = text.find('id="stint-data">')
                    text = text[start + len('id="stint-data">'):text.find("</script>", start)]
                    if start < 0 or "<" in text:
                        failures.append("%s: the page's data block is missing or holds '<'" % what)
                if kind in ("json", "file-json", "file-html"):
                    try:
                        json.loads(text)
                    except (ValueError, RecursionError) as e:
                        failures.append("%s: output is not valid JSON: %s" % (what, e))
                if kind == "table" and "\x1b" in text:
                    failures.append("%s: an escape character reaches the terminal" % what)
                if os.path.exists(out):
                    os.unlink(out)
    for f in failures:
        print("FAIL " + f)
    print("%d files, %d runs, %d failures" % (len(files), runs, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
