#!/usr/bin/env python3
"""check_probe_stack.py - the probes use little of the program's stack,
checked on the built runtime.

A probe runs on whatever stack the program's function runs on: a
coroutine's of a few KiB (makecontext), a signal handler's alternate stack
(SIGSTKSZ, 8 KiB, of which the kernel's signal frame takes a part).  Its
rare paths (a chunk switch, a new thread, the cost measured again, a new
function's address written) run there too, so a path buffer of 4 KiB on
one of them made a coroutine on a 4 KiB stack fault where it ran fine
alone (e2e.small_stacks).  This reads `objdump -d` of libstint-rt.so,
takes each function's frame (its pushes, its `sub $N,%rsp`, the return
address) and follows the direct calls and jumps from the probes' entry
points, keepers included, to the deepest chain of the runtime's own
frames, which must stay under BUDGET bytes.  Calls out of the runtime
(the C library's system-call wrappers, which use a few hundred bytes) are
not counted; a cycle (the calibration calls probes) is followed once.

usage: check_probe_stack.py BUILD_DIR
"""
import re
import sys

from check_probe_paths import ROOTS, direct_target, disassemble_runtime, functions

BUDGET = 2048


def main():
    lib, out = disassemble_runtime(__doc__)
    calls, frame = {}, {}
    for fn, lines in functions(out).items():
        calls[fn], frame[fn] = set(), 8  # the return address
        for line in lines:
            if re.search(r"\spush\s+%", line):
                frame[fn] += 8
            m = re.search(r"\ssub\s+\$0x([0-9a-f]+),%rsp", line)
            if m:
                frame[fn] += int(m.group(1), 16)
            g = direct_target(line)
            if g and g != fn and not g.endswith("@plt"):
                calls[fn].add(g)
    missing = [r for r in ROOTS if r not in calls]
    if missing:
        sys.exit("FAIL: %s has no %s (built without symbols?)" % (lib, ", ".join(missing)))

    deepest = {}

    def depth(f, on_path):
        """(bytes, chain) of the deepest chain of frames from f."""
        if f in deepest:
            return deepest[f]
        on_path.add(f)
        best, chain = 0, []
        for g in sorted(calls.get(f, ())):
            if g in on_path:
                continue
            d, c = depth(g, on_path)
            if d > best:
                best, chain = d, c
        on_path.discard(f)
        # a jump to another function (a tail call, a .cold part) replaces
        # this frame rather than adding to it: counted as a call, which
        # can only overstate
        r = (frame.get(f, 8) + best, [f] + chain)
        deepest[f] = r
        return r

    sys.setrecursionlimit(10000)
    worst = max((depth(r, set()) for r in ROOTS), key=lambda x: x[0])
    line = "%d bytes: %s" % (worst[0], " -> ".join("%s (%d)" % (f, frame.get(f, 8)) for f in worst[1]))
    if worst[0] > BUDGET:
        print("FAIL: the probes' deepest path takes more than %d bytes of the program's stack, %s"
              % (BUDGET, line))
        sys.exit(1)
    print("ok: the probes' deepest path of the runtime's own frames, %s" % line)


if __name__ == "__main__":
    main()
