#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Comments state the rule, not where it came from (TAP).

A reader of the project cannot look up an issue tracker number, a finding
of a review ("upstream Q11"), a rule number of a style guide ("R14") or
the notes of a working session, so none of them may stand in a comment
under core/, plugins/, tools/ or tests/, or anywhere in docs/.  Checked: the
comments of C files, the '#' comments of Python, shell and meson files, and
the whole text of Markdown and other documentation.

PENDING lists files that other branches are editing, each with its reason;
a pending file that no longer cites anything fails, so the list cannot
outlive its reason.

Usage: check-citations.py SOURCE_ROOT
"""
import os
import re
import sys

DIRS = ("core", "plugins", "tools", "tests", "docs")

CITATIONS = [
    (re.compile(r"\bissues?\s+#?\d+\b", re.I), "an issue number"),
    (re.compile(r"\bupstream\s+Q\d+\b", re.I), "a review finding"),
    (re.compile(r"\bQ\d+(/Q?\d+)*\b"), "a review finding"),
    (re.compile(r"\bR\d{1,2}\b"), "a style-guide rule number"),
    (re.compile(r"/work/(coord|notes|briefs|shared|wt)\b"), "a working session's file"),
    (re.compile(r"\bsession notes?\b|\bstop\d+\.md\b|\bclosing note\b", re.I),
     "a working session's notes"),
]

# path -> reason.  Remove an entry when its file is reworded.
PENDING = {
}

C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(\\.|[^\"\\\n])*\"|'(\\.|[^'\\\n])*'", re.S)


def commentary(path, text):
    """(line number, text) of the parts of @text that are prose."""
    if path.endswith((".c", ".h")):
        for m in C_COMMENT.finditer(text):
            if m.group(0).startswith(("/*", "//")):
                yield text.count("\n", 0, m.start()) + 1, m.group(0)
    elif path.endswith((".py", ".sh", "meson.build")):
        for i, line in enumerate(text.split("\n"), 1):
            pos = line.find("#")
            if pos >= 0 and (pos == 0 or line[:pos].strip() == "" or line[pos - 1] == " "):
                yield i, line[pos:]
    elif path.endswith((".md", ".txt", ".toml.in", ".scd", ".scd.in")):
        for i, line in enumerate(text.split("\n"), 1):
            yield i, line


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    this = os.path.relpath(os.path.abspath(__file__), os.path.abspath(root))
    n = 0
    failed = 0
    cited = set()
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames[:] = sorted(x for x in dirnames if x not in ("corpus", "__pycache__"))
            for name in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                if rel == this:
                    continue
                try:
                    with open(os.path.join(root, rel), encoding="utf-8") as f:
                        text = f.read()
                except (UnicodeDecodeError, OSError):
                    continue
                hits = []
                for line, prose in commentary(rel, text):
                    for regex, what in CITATIONS:
                        m = regex.search(prose)
                        if m:
                            hits.append("%s:%d: %s (%s)" % (rel, line + prose.count("\n", 0, m.start()),
                                                              m.group(0), what))
                if not hits:
                    continue
                cited.add(rel)
                n += 1
                if rel in PENDING:
                    print("ok %d - %s: pending: %s" % (n, rel, PENDING[rel]))
                    for h in hits:
                        print("#   " + h)
                    continue
                failed += 1
                print("not ok %d - %s cites what a reader cannot look up: state the rule instead"
                      % (n, rel))
                for h in hits:
                    print("#   " + h)
    for rel in sorted(set(PENDING) - cited):
        n += 1
        failed += 1
        print("not ok %d - %s is in PENDING but cites nothing: drop it from PENDING in "
              "tests/check-citations.py" % (n, rel))
    n += 1
    print("ok %d - every file under %s checked" % (n, ", ".join(DIRS)))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
