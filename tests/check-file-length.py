#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""No C file over 1,000 lines without a reason at its top (TAP).

Every .c and .h file under core/, plugins/, tools/, tests/ and bench/ that is
longer than LIMIT lines must say why in the comment that opens it (the first
comment after the SPDX line): a sentence saying it is over a thousand lines
(or longer than the 1,000-line guide) and why one file is right, as
core/plugin/sbx-registry.c does.  A test file may instead say that it holds the
cases of one module (one GTest binary per concept), naming the module.  A
long file is otherwise a module that has not been split along its seams.

PENDING lists files that are being split on other branches, each with its
reason; a pending file that is no longer long (or no longer exists) fails the
check, so the list cannot outlive its reason.

Usage: check-file-length.py SOURCE_ROOT
"""
import os
import re
import sys

LIMIT = 1000
DIRS = ("core", "plugins", "tools", "tests", "bench")

# path -> reason.  Remove an entry when the file is split.
PENDING = {
}

REASON_RE = re.compile(
    r"(over|longer than)\b[^.]{0,60}?\b(a thousand|thousand|1,000)\b", re.I | re.S)
CASES_RE = re.compile(r"\bthe cases of one\b", re.I)


def top_comment(text):
    """The first /* ... */ block that is not the SPDX line."""
    for m in re.finditer(r"/\*.*?\*/", text, re.S):
        body = m.group(0)
        if "SPDX-License-Identifier" in body and body.count("\n") == 0:
            continue
        # Only a comment that opens the file counts: nothing but
        # preprocessor lines and blank lines before it.
        before = text[:m.start()]
        code = [l for l in before.split("\n")
                if l.strip() and not l.lstrip().startswith(("#", "/*", "*", "//"))]
        if code:
            return ""
        return body
    return ""


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    n = 0
    failed = 0
    seen_pending = set()

    def result(ok, what):
        nonlocal n, failed
        n += 1
        print(("ok" if ok else "not ok") + " %d - %s" % (n, what))
        if not ok:
            failed += 1

    files = []
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames[:] = sorted(x for x in dirnames if x != "corpus")
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    for rel in sorted(files):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n")
        if lines <= LIMIT:
            continue
        if rel in PENDING:
            seen_pending.add(rel)
            result(True, "%s: %d lines, pending: %s" % (rel, lines, PENDING[rel]))
            continue
        comment = top_comment(text)
        if REASON_RE.search(comment):
            result(True, "%s: %d lines, its top comment says why" % (rel, lines))
        elif rel.startswith("tests/") and CASES_RE.search(comment):
            result(True, "%s: %d lines, the cases of one module" % (rel, lines))
        else:
            result(False, "%s: %d lines (over %d) and its top comment does not say why "
                   "one file is right: split it along its seams, or state the reason"
                   % (rel, lines, LIMIT))
    for rel in sorted(set(PENDING) - seen_pending):
        result(False, "%s is in PENDING but is not over %d lines (or is gone): drop it from "
               "PENDING in tests/check-file-length.py" % (rel, LIMIT))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
