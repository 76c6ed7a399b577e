#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Proves that the modules of core/ depend on each other along a DAG (TAP).

Two graphs are checked:

  1. Headers: a header of core/ that includes, directly or not, itself
     (hidden at build time by #pragma once or an include guard, so only a
     check finds it).
  2. Modules: one node per .c file of core/; A depends on B when A calls a
     function that B defines and exports (a non-static definition, found as
     GNU style writes it: the name at the start of a line followed by " (",
     with no "static" on the line before).  This is what "the include graph"
     means for a C library: a header is only the door, the call is the
     dependency.  A cycle (A needs B and B, directly or not, A) is two files
     that cannot be read, tested or replaced one without the other: the
     architecture is one module where the file list says two.

KNOWN lists the cycles that are being removed elsewhere, each with its
reason; a known cycle that no longer exists fails the check, so the list
cannot outlive its reason.

Usage: check-include-cycles.py CORE_DIR
"""
import os
import re
import sys

# (frozenset of modules in the cycle) -> reason.  Remove an entry with the
# cycle it names.
KNOWN = {
    # Empty: core/ is a DAG.  The executor-shared state has its own module
    # (sbx-executor-shared.c) below every other executor module, and the
    # set's close reaches processes through the close hooks they register.
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DEFINITION_RE = re.compile(r'^([a-z_][a-z0-9_]*) \(', re.M)
CALL_RE = re.compile(r'\b([A-Za-z_][A-Za-z0-9_]*)\s*\(')


def strip(text):
    """Comments and string literals out, so neither counts as a call."""
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def exported_definitions(text):
    lines = text.split("\n")
    names = []
    for i, line in enumerate(lines):
        m = DEFINITION_RE.match(line)
        if m and not (i > 0 and re.match(r'^\s*(static|G_GNUC_\w+\s+static)\b', lines[i - 1])):
            names.append(m.group(1))
    return names


def components(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(set(edges) | {w for v in edges for w in edges[v]}):
        if v not in index:
            visit(v)
    return out


def main(argv):
    if len(argv) != 2:
        print("usage: check-include-cycles.py CORE_DIR", file=sys.stderr)
        return 2
    core = argv[1]
    files = sorted(f for f in os.listdir(core) if f.endswith((".c", ".h")))
    raw, text = {}, {}
    for f in files:
        with open(os.path.join(core, f), encoding="utf-8") as fh:
            raw[f] = re.sub(r'/\*.*?\*/', ' ', fh.read(), flags=re.S)
            text[f] = strip(raw[f])
    sources = [f for f in files if f.endswith(".c")]
    headers = [f for f in files if f.endswith(".h")]
    tests = []

    # 1. Headers including themselves.
    hedges = {}
    for h in headers:
        for inc in INCLUDE_RE.findall(raw[h]):
            if inc in text and inc.endswith(".h") and inc != h:
                hedges.setdefault(h, {})[inc] = ["%s includes %s" % (h, inc)]
    hcycles = components(hedges)
    tests.append((not hcycles, "no header of core/ includes itself",
                  ["%s" % ", ".join(sorted(c)) for c in hcycles], None))

    # 2. Modules calling each other.
    defined_in = {}
    for c in sources:
        for name in exported_definitions(text[c]):
            defined_in.setdefault(name, set()).add(c)
    edges = {}
    for c in sources:
        for name in sorted(set(CALL_RE.findall(text[c]))):
            for d in defined_in.get(name, ()):
                if d != c:
                    edges.setdefault(c, {}).setdefault(d, []).append(name)
    cycles = components(edges)
    known_left = dict(KNOWN)
    for comp in sorted(cycles, key=sorted):
        why = ["%s -> %s: %s" % (a, b, ", ".join(edges[a][b][:6]))
               for a in sorted(comp) for b in sorted(edges.get(a, {})) if b in comp]
        reason = KNOWN.get(comp)
        if reason is not None:
            del known_left[comp]
        tests.append((reason is not None, "cycle among %s" % ", ".join(sorted(comp)), why,
                      reason))
    for comp, reason in sorted(known_left.items(), key=lambda kv: sorted(kv[0])):
        tests.append((False, "known cycle among %s is gone: remove it from KNOWN"
                      % ", ".join(sorted(comp)), [reason], None))
    n_deps = sum(len(v) for v in edges.values())
    tests.append((len(sources) > 10 and n_deps > len(sources),
                  "the graph was read: %d modules, %d dependencies" % (len(sources), n_deps),
                  [], None))

    print("1..%d" % len(tests))
    failed = 0
    for i, (ok, name, why, known) in enumerate(tests, 1):
        if ok and known:
            name += " (a known exception: %s)" % known
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        for line in why:
            print("#   %s" % line)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
