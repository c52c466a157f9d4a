#!/usr/bin/env python3
"""check_layers.py - the build's layers, checked on the built libraries.

Each folder of the tools is one static library (CMakeLists.txt); a layer may
call only into the layers listed for it below.  This reads every library's
defined and undefined symbols with nm and fails, naming the symbol, when a
library calls a function or uses data that only a layer it may not use
defines.  The runtime (libstint-rt.so, libstint-sampler.so) lives inside the
profiled program and may use none of them.

usage: check_layers.py BUILD_DIR
"""
import os
import subprocess
import sys

# layer -> the layers it may use (lib and format are below everything)
ALLOWED = {
    "lib": set(),
    "format": {"lib"},
    "symbol": {"format", "lib"},
    "analysis": {"format", "lib"},
    "recorder": {"symbol", "format", "lib"},
    "output": {"analysis", "format", "lib"},
}
RUNTIME = ["libstint-rt.so", "libstint-sampler.so"]


def nm(path, *flags):
    out = subprocess.run(["nm", *flags, path], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip() and not line.endswith(":")]


def main():
    build = sys.argv[1]
    defined, undefined = {}, {}
    for layer in ALLOWED:
        path = os.path.join(build, "libstint-%s.a" % layer)
        if not os.path.exists(path):
            print("check_layers: %s is missing (build first)" % path, file=sys.stderr)
            return 2
        defs, undefs = set(), set()
        for f in nm(path):
            if len(f) == 2 and f[0] == "U":
                undefs.add(f[1])
            elif len(f) == 3 and f[1] in "TDBRCVW":
                defs.add(f[2])
        defined[layer], undefined[layer] = defs, undefs - defs
    owner = {}
    for layer, defs in defined.items():
        for s in defs:
            owner.setdefault(s, layer)
    bad = []
    for layer, undefs in undefined.items():
        for s in sorted(undefs):
            o = owner.get(s)
            if o and o != layer and o not in ALLOWED[layer]:
                bad.append("%s uses %s of %s (allowed: %s)" % (layer, s, o, ", ".join(sorted(ALLOWED[layer])) or "none"))
    ours = set(owner)
    for so in RUNTIME:
        path = os.path.join(build, so)
        if not os.path.exists(path):
            continue
        for f in nm(path, "-D", "--undefined-only"):
            if f and f[-1].split("@")[0] in ours:
                bad.append("%s uses %s of the tools' layer %s" % (so, f[-1], owner[f[-1].split("@")[0]]))
    for b in bad:
        print("check_layers: " + b)
    if bad:
        return 1
    print("check_layers: %d layers, %d cross-layer symbols, all allowed" % (
        len(ALLOWED), sum(len(u & ours) for u in undefined.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
