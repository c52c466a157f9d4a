#!/usr/bin/env python3
"""check_layers.py - the build's layers, checked on the built libraries.

Each folder of the tools is one static library (CMakeLists.txt); a layer may
call only into the layers listed for it below.  This reads every library's
defined and undefined symbols with nm and fails, naming the symbol, when a
library calls a function or uses data that only a layer it may not use
defines.  The runtime (libstint-rt.so, libstint-sampler.so) lives inside the
profiled program and may use none of them but arch/ (its trampolines and
header).

It also reads the #include "../FOLDER/..." lines of every folder's sources
and fails when a folder includes one it may not use (INCLUDES: the layers
above, the commands all of them, the runtime arch/ and the header-only
file-format definitions), or when the folders' includes form a cycle.

usage: check_layers.py BUILD_DIR [SOURCE_DIR]
"""
import os
import subprocess
import sys

# layer -> the layers it may use (arch, lib and format are below everything)
ALLOWED = {
    "arch": set(),
    "lib": set(),
    "format": {"lib"},
    "symbol": {"arch", "format", "lib"},
    "analysis": {"format", "lib"},
    "recorder": {"arch", "symbol", "format", "lib"},
    "output": {"analysis", "format", "lib"},
}
# folder -> the folders its sources may #include from
INCLUDES = dict(ALLOWED)
INCLUDES["cmd"] = set(ALLOWED)
INCLUDES["runtime"] = {"arch", "format"}  # format: fmt_event.h, fmt_spool.h, fmt_sample.h only
RUNTIME = ["libstint-rt.so", "libstint-sampler.so"]
# what the instrumentation runtime, inside the program, never calls by name:
# a program or its allocator may define them (gperftools' tcmalloc defines
# mmap, munmap, mremap), and the runtime must not call into the program
# (runtime/rt_sys.h: memory mappings by system call)
RUNTIME_NEVER = {"mmap", "mmap64", "munmap", "mremap", "mprotect", "madvise", "malloc", "calloc", "realloc",
                 "free", "posix_memalign", "aligned_alloc", "sbrk", "brk"}


def nm(path, *flags):
    out = subprocess.run(["nm", *flags, path], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip() and not line.endswith(":")]


def include_graph(src):
    """folder -> {folder it includes from: a file and line that does}"""
    graph = {}
    for folder in INCLUDES:
        top = os.path.join(src, folder)
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith((".c", ".h", ".S", ".inc")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, errors="replace") as f:
                    for no, line in enumerate(f, 1):
                        line = line.strip()
                        if not line.startswith("#include \""):
                            continue
                        target = os.path.normpath(os.path.join(dirpath, line.split('"')[1]))
                        to = os.path.relpath(target, src).split(os.sep)[0]
                        if to != folder and to in INCLUDES:
                            graph.setdefault(folder, {}).setdefault(to, "%s:%d" % (os.path.relpath(path, src), no))
    return graph


def check_includes(src):
    graph = include_graph(src)
    bad = []
    for folder, tos in sorted(graph.items()):
        for to, where in sorted(tos.items()):
            if to not in INCLUDES[folder]:
                bad.append("%s includes from %s (%s; allowed: %s)" % (
                    folder, to, where, ", ".join(sorted(INCLUDES[folder])) or "none"))
    # a cycle: depth-first search for a back edge
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, {})):
            if state.get(m) == 1:
                bad.append("the includes form a cycle: " + " -> ".join(stack[stack.index(m):] + [m]))
            elif not state.get(m):
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if not state.get(n):
            visit(n)
    edges = sum(len(t) for t in graph.values())
    return bad, edges


def main():
    build = sys.argv[1]
    src = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
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
            o = owner.get(f[-1].split("@")[0]) if f else None
            if o and o != "arch":
                bad.append("%s uses %s of the tools' layer %s" % (so, f[-1], o))
            if f and so != "libstint-sampler.so" and f[-1].split("@")[0] in RUNTIME_NEVER:
                bad.append("%s calls %s by name, which the program may define" % (so, f[-1]))
    include_bad, edges = check_includes(src)
    bad += include_bad
    for b in bad:
        print("check_layers: " + b)
    if bad:
        return 1
    print("check_layers: %d layers, %d cross-layer symbols, %d include edges between folders, all allowed, "
          "no cycle" % (len(ALLOWED), sum(len(u & ours) for u in undefined.values()), edges))
    return 0


if __name__ == "__main__":
    sys.exit(main())
