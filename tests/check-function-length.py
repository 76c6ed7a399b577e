#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""No function in plugins/ over 150 lines without a reason (TAP).

A function of a plugin's parent side longer than LIMIT lines (from the line
that names it to its closing brace) must say why it is one function in the
comment right above it or the first comment in its body: a sentence with
"one function" in it.  An orchestrator otherwise reads as a sequence of
named steps, each a function, with one abort path.

Code that runs in a CLONE_VM child of the Linux backend (the
plugins/linux/sbx-linux-child*.c units) is exempt: it cannot call helpers
freely (every one must be child code too, checked on the objects by
tests/linux/check-child-objects.py) and its error paths are a goto ladder
by design.

The reading is GNU style as the project writes it: a definition is a line
that starts with the function's name and " (", whose parameter list is
followed by a "{" alone on a line; the body ends at the next "}" alone on a
line.

Usage: check-function-length.py SOURCE_ROOT
"""
import os
import re
import sys

LIMIT = 150
DIRS = ("plugins",)
CHILD_RE = re.compile(r"^plugins/linux/sbx-linux-child[^/]*\.c$")
DEFINITION_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) \(")
REASON_RE = re.compile(r"\bone\s+function\b", re.I)


def functions(lines):
    """(name, first line index, last line index) of every definition."""
    i = 0
    while i < len(lines):
        m = DEFINITION_RE.match(lines[i])
        if m:
            j = i
            while j < len(lines) and lines[j] != "{" and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and lines[j] == "{":
                k = j + 1
                while k < len(lines) and lines[k] != "}":
                    k += 1
                yield m.group(1), i, k
                i = k
        i += 1


def comment_above(lines, first):
    """The comment that ends right above the definition's return type."""
    k = first - 1
    while k >= 0 and lines[k].strip() and not lines[k].rstrip().endswith("*/"):
        k -= 1   # the return type (and attributes) above the name
    if k < 0 or not lines[k].rstrip().endswith("*/"):
        return ""
    end = k
    while k >= 0 and "/*" not in lines[k]:
        k -= 1
    return "\n".join(lines[max(k, 0):end + 1])


def first_body_comment(lines, first, last):
    body = "\n".join(lines[first:last + 1])
    m = re.search(r"/\*.*?\*/", body, re.S)
    return m.group(0) if m else ""


def self_test():
    """The reading on a source written for it."""
    long_body = ["  x++;"] * (LIMIT + 5)
    src = (["/* Short. */", "static int", "short_one (int x)", "{", "  return x;", "}", "",
            "/* Why: one function, as the steps share the frame. */", "static int",
            "long_reasoned (int x)", "{"] + long_body + ["}", "", "int", "long_bare (int x,",
            "           int y)", "{"] + long_body + ["}", "", "int proto (int x);"])
    found = {}
    for name, first, last in functions(src):
        found[name] = (last - first + 1,
                       bool(REASON_RE.search(comment_above(src, first))
                            or REASON_RE.search(first_body_comment(src, first, last))))
    return (set(found) == {"short_one", "long_reasoned", "long_bare"}
            and found["long_reasoned"][1] and not found["long_bare"][1]
            and found["long_bare"][0] > LIMIT and found["short_one"][0] == 4)


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    results = [(self_test(), "the reading finds definitions, their length and a reason", [])]
    n_functions = 0
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(".c"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                for func, first, last in functions(lines):
                    n_functions += 1
                    length = last - first + 1
                    if length <= LIMIT:
                        continue
                    if CHILD_RE.match(rel):
                        results.append((True, "%s: %s is %d lines, child code" % (rel, func, length), []))
                    elif (REASON_RE.search(comment_above(lines, first))
                          or REASON_RE.search(first_body_comment(lines, first, last))):
                        results.append((True, "%s: %s is %d lines, its comment says why" % (rel, func, length), []))
                    else:
                        results.append((False, "%s: %s is %d lines (over %d) and no comment says why it is "
                                        "one function: split it into named steps, or state the reason"
                                        % (rel, func, length, LIMIT), []))
    results.append((n_functions > 500, "the plugins were read: %d functions" % n_functions, []))
    print("1..%d" % len(results))
    failed = 0
    for i, (ok, what, why) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
