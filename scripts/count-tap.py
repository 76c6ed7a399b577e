#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Counts test cases across one or more meson testlog.json files.

Each TAP "ok" line is one passed case, each "not ok" one failed case (a TODO
"not ok" is neither; "ok ... # SKIP" is a skip).  A test program that meson
marks as failed but that printed no "not ok" line (a crash, a timeout, a
non-TAP test) counts as one failed case, so nothing can fail silently.

Usage: count-tap.py [--label NAME] testlog.json ... ; prints per-log lines on
stderr and "PASSED FAILED SKIPPED" on stdout.
"""
import json
import re
import sys

OK = re.compile(r"^ok\b")
NOT_OK = re.compile(r"^not ok\b")
SKIP = re.compile(r"#\s*skip", re.IGNORECASE)
TODO = re.compile(r"#\s*todo", re.IGNORECASE)

def count(path):
    passed = failed = skipped = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            out = rec.get("stdout") or rec.get("stdo") or ""
            result = rec.get("result", "")
            p = fl = sk = 0
            for l in out.splitlines():
                if NOT_OK.match(l):
                    if TODO.search(l):
                        continue
                    fl += 1
                elif OK.match(l):
                    if SKIP.search(l):
                        sk += 1
                    else:
                        p += 1
            if result not in ("OK", "EXPECTEDFAIL", "SKIP") and fl == 0:
                fl = 1
                print(f"  {rec.get('name')}: {result} without a failing TAP line", file=sys.stderr)
            if p == 0 and fl == 0 and sk == 0 and result == "OK":
                # A non-TAP test that passed is one case.
                p = 1
            if fl:
                print(f"  FAILED: {rec.get('name')} ({result})", file=sys.stderr)
            passed += p
            failed += fl
            skipped += sk
    return passed, failed, skipped

def main(argv):
    total = [0, 0, 0]
    for path in argv[1:]:
        p, f, s = count(path)
        print(f"{path}: {p} passed, {f} failed, {s} skipped", file=sys.stderr)
        total[0] += p
        total[1] += f
        total[2] += s
    print(total[0], total[1], total[2])

if __name__ == "__main__":
    main(sys.argv)
