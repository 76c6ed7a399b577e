#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Proves the child-code rule of plugins/linux on the built objects (TAP).

Code that runs in a CLONE_VM child (the zygote, A, B, the probe children)
inherits the thread pointer of the thread that cloned it; the zygote lives on
after that thread has exited and its TLS is unmapped.  So the child-code units
(plugins/linux/sbx-linux-child*.c, built into libsbx-linux-child.a) must:

  1. read no thread-local storage: no %fs:/%gs: operand on x86 (the stack
     protector's canary is %fs:0x28, errno is a %fs-relative TLS variable),
     no tpidr_el0 read on aarch64;
  2. call nothing outside the child units: every undefined symbol of the
     archive is defined by another of its objects (no libc, no GLib, no
     __stack_chk_fail, no sanitizer runtime, no memset/memcpy);
  3. be the only place child code lives: no other .c file of plugins/linux
     carries SBX_CHILD_FUNC.

Usage: check-child-objects.py ARCHIVE SOURCE_DIR
"""
import os
import re
import subprocess
import sys

CHILD_SOURCES = ("sbx-linux-child.c", "sbx-linux-child-mount.c", "sbx-linux-child-lsm.c",
                 "sbx-linux-child-probe.c", "sbx-linux-child-egress.c", "sbx-linux-child-stage.c")
# Child code every CLONE_VM child depends on; a rename here must be deliberate.
REQUIRED_SYMBOLS = ("sbx_linux_child_a_main", "sbx_linux_child_zygote_main", "sbx_linux_raw_clone",
                    "sbx_linux_child_mount_view", "sbx_linux_child_enter_template",
                    "sbx_landlock_plan_apply", "sbx_seccomp_program_apply",
                    "sbx_linux_probe_ns_child", "sbx_linux_probe_lsm_child")
TLS_PATTERNS = {
    "x86_64": re.compile(r"%[fg]s:"),
    "aarch64": re.compile(r"\btpidr_el0\b"),
}

results = []


def check(ok, what, detail=""):
    results.append((ok, what, detail))


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    if len(sys.argv) != 3:
        print("Bail out! usage: check-child-objects.py ARCHIVE SOURCE_DIR")
        return 1
    archive, srcdir = sys.argv[1], sys.argv[2]
    machine = os.uname().machine
    tls = TLS_PATTERNS.get(machine)

    members = [m for m in run(["ar", "t", archive]).split() if m.endswith(".o")]
    check(sorted(os.path.basename(m).split(".c.o")[0] + ".c" for m in members) == sorted(CHILD_SOURCES),
          "the child archive holds exactly the child-code units",
          "members: %s" % ", ".join(members))

    # 1. No TLS access, function by function (names the culprit).
    disasm = run(["objdump", "-d", "--no-show-raw-insn", archive])
    offenders = []
    func = "?"
    for line in disasm.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            func = m.group(1)
            continue
        if tls is not None and tls.search(line):
            offenders.append("%s: %s" % (func, line.strip()))
    n_insns = sum(1 for line in disasm.splitlines() if re.match(r"^\s+[0-9a-f]+:\s", line))
    check(n_insns > 200, "the child objects were disassembled (%d instructions)" % n_insns)
    if tls is None:
        check(True, "# SKIP no TLS pattern known for %s" % machine)
    else:
        check(not offenders, "no thread-local storage access in child code",
              "\n".join(offenders[:20]))

    # 2. Undefined symbols are all defined inside the archive.
    undefined, defined = set(), set()
    for line in run(["nm", "--format=posix", archive]).splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[0].endswith(":") or parts[0].endswith("]:"):
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.upper() in ("T", "D", "R", "B"):
            defined.add(name)
    outside = sorted(undefined - defined)
    check(not outside, "child code calls nothing outside the child units",
          "undefined: %s" % ", ".join(outside))
    missing = [s for s in REQUIRED_SYMBOLS if s not in defined]
    check(not missing, "the child entry points are defined in the child archive",
          "missing: %s" % ", ".join(missing))

    # 3. Child code lives in child files only.
    strays = []
    for name in sorted(os.listdir(srcdir)):
        if name.endswith(".c") and name not in CHILD_SOURCES:
            with open(os.path.join(srcdir, name), encoding="utf-8") as f:
                for n, text in enumerate(f, 1):
                    if re.search(r"^\s*SBX_CHILD_FUNC\b", text):
                        strays.append("%s:%d" % (name, n))
    check(not strays, "no SBX_CHILD_FUNC function outside the child-code units",
          ", ".join(strays))

    print("TAP version 13")
    print("1..%d" % len(results))
    failed = 0
    for i, (ok, what, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
        if not ok:
            failed += 1
            for d in detail.splitlines():
                print("#   " + d)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
