#!/usr/bin/env python3
"""check_probe_paths.py - the probes of patched functions keep the program's
vector registers, checked on the built runtime.

The trampolines of functions patched at load (and of -pg -mfentry and patch
sites) save the general registers only (arch/x86_64/arch_save.inc): the
runtime is built with -mgeneral-regs-only, and every call out of it that a
probe can reach (the C library, whose string functions use xmm and ymm
registers) runs inside RT_VEC_KEEP (runtime/rt.c), which saves and restores
them with XSAVE.  A call to libc added on a probe's path without it would
silently change what a program computes, in the rare run that takes that
path.  This reads `objdump -d` of libstint-rt.so, follows the direct calls
and jumps from the trampolines, and fails when it reaches

  - a call through the PLT (out of the runtime) or an indirect call,
  - an instruction naming an xmm, ymm or zmm register,

except inside the functions listed in KEEPERS (each calls rt_vec_hold
around its calls out), whose callees are not followed, and DIES (the
program is ended).  A function reached that calls rt_vec_hold but is not in
KEEPERS fails too: this list is the review of every such place.  Keepers
are the functions that call out (a chunk switch, the notes' writes), not the
slow path that may lead to them: the slow path runs at every call site new
to the address cache, and an XSAVE/XRSTOR there cost a Lua run a tenth of
its time.

usage: check_probe_paths.py BUILD_DIR
"""
import os
import re
import shutil
import subprocess
import sys

# rt_patch_entry is __fentry__, at the same address: objdump names it so
ROOTS = ["__fentry__", "rt_patch_entry_tramp", "rt_patch_return", "rt_plt_entry", "rt_plt_thunk_common",
         "__cyg_profile_func_enter", "__cyg_profile_func_exit"]
KEEPERS = {"rt_next_chunk", "rt_notes_write", "rt_thread_start", "rt_clock_mono", "rt_rusage_switches",
           "rt_sel_decide_kept", "rt_recalibrate", "rt_plt_vfork_prepare_kept",
           "rt_plt_restore_slots_kept", "rt_populate_kept", "rt_spill_grow_kept"}
DIES = {"rt_patch_die"}
# trampolines whose indirect jumps leave for the library function they were
# called for, with the registers as the program left them
WRAPPERS = {"rt_plt_entry"}
HOLD = "rt_vec_hold"


def base(name):
    # gcc's clones and split parts: rt_after.cold, rt_probe_slow.constprop.0
    return name.split(".")[0]


def disassemble_runtime(usage):
    """(path, `objdump -d` text) of BUILD_DIR/libstint-rt.so, BUILD_DIR the one argument
    (usage and exit otherwise; exit 77, a skip, without objdump)."""
    if len(sys.argv) != 2:
        sys.exit(usage)
    lib = os.path.join(sys.argv[1], "libstint-rt.so")
    if not shutil.which("objdump"):
        print("SKIP: objdump (binutils) is missing")
        sys.exit(77)
    return lib, subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], capture_output=True,
                               text=True, check=True).stdout


def functions(out):
    """{function: its instruction lines} of `objdump -d` text (none for PLT entries)."""
    body, fn = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            fn = m.group(1)
            body[fn] = []
        elif fn is not None and not fn.endswith("@plt"):
            body[fn].append(line)
    return body


def direct_target(line):
    """The function a direct call or jump goes to, or None."""
    m = re.search(r"\s(call|jmp|j[a-z]+)\s+[0-9a-f]+ <([^>+]+)(\+0x[0-9a-f]+)?>", line)
    return m.group(2) if m else None


def main():
    lib, out = disassemble_runtime(__doc__)
    calls, vec, indirect = {}, {}, {}
    for fn, lines in functions(out).items():
        calls[fn], vec[fn], indirect[fn] = set(), [], []
        for line in lines:
            g = direct_target(line)
            if g and g != fn:
                calls[fn].add(g)
            if re.search(r"\b(call|jmp)\s+\*", line):
                indirect[fn].append(line.strip())
            if re.search(r"%[xyz]mm", line):
                vec[fn].append(line.strip())
    missing = [r for r in ROOTS if r not in calls]
    if missing:
        sys.exit("FAIL: %s has no %s (built without symbols?)" % (lib, ", ".join(missing)))
    bad = []
    parent, seen, todo = {}, set(), list(ROOTS)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        if base(f) in KEEPERS or base(f) in DIES or f.endswith("@plt"):
            continue
        for g in sorted(calls.get(f, ())):
            if g not in seen:
                parent.setdefault(g, f)
                todo.append(g)

    def path(f):
        p = [f]
        while p[-1] in parent:
            p.append(parent[p[-1]])
        return " <- ".join(p)

    for f in sorted(seen):
        if base(f) in KEEPERS or base(f) in DIES:
            continue
        if HOLD in calls.get(f, ()):
            bad.append("%s calls %s but is not in KEEPERS: review it, then list it (%s)" % (f, HOLD, path(f)))
        if f.endswith("@plt"):
            bad.append("a call out of the runtime without RT_VEC_KEEP: %s" % path(f))
        for ins in indirect.get(f, []):
            if f in WRAPPERS and re.search(r"\bjmp\s+\*", ins):
                continue
            bad.append("an indirect call without RT_VEC_KEEP in %s: %s (%s)" % (f, ins, path(f)))
        for ins in vec.get(f, [])[:3]:
            bad.append("a vector register in %s: %s (%s)" % (f, ins, path(f)))
    if bad:
        print("\n".join("FAIL: " + b for b in bad))
        sys.exit(1)
    print("ok: %d functions reachable from the probes, no call out but through %s" %
          (len(seen), ", ".join(sorted(KEEPERS & {base(f) for f in seen}))))


if __name__ == "__main__":
    main()
