#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Proves that the modules of core/ and of each plugin depend on each other
along a DAG (TAP).

The graphs: core/, and every directory under plugins/ that holds C files
(plugins/linux, plugins/linux/init, plugins/egress-http, ...), each on its
own: a plugin is a module of its own, built and loaded apart from the core,
so its files are only compared with each other.  Two checks per graph:

  1. Headers: a header of the directory that includes, directly or not,
     itself (hidden at build time by #pragma once or an include guard, so
     only a check finds it).
  2. Modules: one node per .c file; A depends on B when A uses a function
     that B defines and exports.  A definition is a non-static one as GNU
     style writes it: the name at the start of a line, " (", the parameter
     list, then the body's "{" (a prototype ends in ";" and defines
     nothing), with no "static" on the line before.  A use is the name as
     an identifier anywhere in A's code (comments, strings and character
     literals removed, members after "." or "->" skipped): a call, and also
     a function passed as a value (a GDestroyNotify, a callback,
     g_clear_pointer's free function), which binds A to B just as well.  A
     g_autoptr (T) (g_auto, g_autolist, g_autoslist, g_autoqueue) in A uses
     the free function a header of the directory declares for T with
     G_DEFINE_AUTOPTR_CLEANUP_FUNC and its siblings.  This is what "the
     include graph" means for a C library: a header is only the door, the
     use is the dependency.  A cycle (A needs B and B, directly or not, A)
     is two files that cannot be read, tested or replaced one without the
     other: the architecture is one module where the file list says two.

KNOWN lists the cycles that are being removed elsewhere, each with its
reason; a known cycle that no longer exists fails the check, so the list
cannot outlive its reason, and any other cycle fails it as a new one.

Usage: check-include-cycles.py SOURCE_ROOT
"""
import os
import re
import sys

# graph (directory relative to SOURCE_ROOT) -> {frozenset of modules in the
# cycle: reason}.  Remove an entry with the cycle it names.
KNOWN = {
    # core/: by calls alone a DAG (the executor-shared state has its own
    # module below every other executor module, and the set's close reaches
    # processes through the close hooks they register).  Three pairs bind
    # each other through a function used as a value or an autoptr, which the
    # check reads since it covers the plugins; each is a helper that lives
    # with its first caller, and the core-layers work on another branch
    # moves it beside its type (the reason strings name that work).
    "core": {
        # sbx-executor.c frees retained handles with a function of
        # sbx-executor-grants.c (a GDestroyNotify), which calls
        # sbx_executor_fail and friends back.
        frozenset({"sbx-executor.c", "sbx-executor-grants.c"}):
            "pending, issue 27 part 2: sbx_executor_fail moves to a module of its own",
        # sbx-grant-binding.c frees its bindings (g_autoptr) with
        # sbx_grant_binding_free of sbx-grant.c, which fails through
        # sbx_grant_fail of sbx-grant-binding.c.
        frozenset({"sbx-grant.c", "sbx-grant-binding.c"}):
            "pending, issue 27 part 2: a type's new/free live beside its definition",
        # SbxProfile's boxed type (sbx-profile.c) names sbx_profile_ref and
        # sbx_profile_unref, defined in sbx-profile-validate.c.
        frozenset({"sbx-profile.c", "sbx-profile-validate.c"}):
            "pending, issue 27 part 2: sbx_profile_new/ref/unref move beside the type",
    },
    # Pending: plugins/linux is being split on another branch, which
    # removes both cycles (the reason strings name that work).
    "plugins/linux": {
        # The zygote uses the clone primitives that live in the spawn file
        # (sbx_linux_stacks_new/free, sbx_linux_fd_above_stdio) while spawn
        # starts warm processes through the zygote.
        frozenset({"sbx-linux-spawn.c", "sbx-linux-zygote.c"}):
            "pending, issue 28 part 1: the clone primitives move below spawn and zygote",
        # The builder frees the plan with sbx_landlock_plan_free of
        # sbx-landlock.c (through g_clear_pointer) while the plan's
        # constructor there drives the builder (ll_emit_allow_axis, ...).
        frozenset({"sbx-landlock.c", "sbx-landlock-builder.c"}):
            "pending, issue 28 part 1: no two files of a plugin use each other",
    },
}

# The graphs whose size proves the parser still reads them: directory ->
# (more modules than, more dependencies than).  A graph that suddenly reads
# as unconnected means definitions or uses are no longer found.
READ = {
    "core": (10, 10),
    "plugins/linux": (10, 10),
    "plugins/egress-http": (5, 5),
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DEFINITION_RE = re.compile(r'^([a-z_][a-z0-9_]*) \(', re.M)
IDENT_RE = re.compile(r'(->|\.)?\s*\b([A-Za-z_][A-Za-z0-9_]*)\b')
CLEANUP_RE = re.compile(
    r'\bG_DEFINE_AUTO(?:PTR)?_CLEANUP_(?:FUNC|CLEAR_FUNC|FREE_FUNC)\s*\(\s*(\w+)\s*,\s*(\w+)')
AUTO_RE = re.compile(r'\bg_auto(?:ptr|list|slist|queue)?\s*\(\s*(\w+)\s*\)')
TOKEN_RE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def strip(text):
    """Comments, string and character literals out (one left-to-right pass,
    so a quote inside a comment or a comment opener inside a string is not
    taken for what it is not), so none of them counts as a use.  Newlines
    are kept so lines still match the source."""
    def repl(m):
        s = m.group(0)
        if s.startswith("/*") or s.startswith("//"):
            return " " + "\n" * s.count("\n")
        return s[0] + s[0]
    return TOKEN_RE.sub(repl, text)


def matching_paren(text, start):
    """Index just after the ")" that closes the "(" at @start, or -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def exported_definitions(text):
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    names = []
    for i, line in enumerate(lines):
        m = DEFINITION_RE.match(line)
        if not m or (i > 0 and re.match(r'^\s*(static|G_GNUC_\w+\s+static)\b', lines[i - 1])):
            continue
        end = matching_paren(text, offsets[i] + m.end() - 1)
        if end > 0 and text[end:].lstrip().startswith("{"):
            names.append(m.group(1))
    return names


def uses(text, cleanup):
    """Identifiers @text uses, with the free functions its autoptrs run."""
    names = {m.group(2) for m in IDENT_RE.finditer(text) if m.group(1) is None}
    for m in AUTO_RE.finditer(text):
        if m.group(1) in cleanup:
            names.add(cleanup[m.group(1)])
    return names


def module_edges(text):
    """{A: {B: [names A uses from B]}} for the files of @text (name ->
    stripped contents): the .c files are the modules, the headers give the
    autoptr free functions."""
    cleanup = {}
    for h in sorted(f for f in text if f.endswith(".h")):
        for typ, func in CLEANUP_RE.findall(text[h]):
            cleanup[typ] = func
    sources = sorted(f for f in text if f.endswith(".c"))
    defined_in = {}
    for c in sources:
        for name in exported_definitions(text[c]):
            defined_in.setdefault(name, set()).add(c)
    edges = {}
    for c in sources:
        for name in sorted(uses(text[c], cleanup)):
            for d in defined_in.get(name, ()):
                if d != c:
                    edges.setdefault(c, {}).setdefault(d, []).append(name)
    return edges


# The reading itself, on sources written for it: which of them depend on
# which.  A reading that misses a kind of use, or takes a comment for one,
# fails here before it can pass a real cycle or report a false one.
SELF_TEST = {
    "t.h": "G_DEFINE_AUTOPTR_CLEANUP_FUNC (Thing, thing_unref)\n",
    "thing.c": "void\nthing_unref (Thing *t)\n{\n}\n\n"
               "void\nthing_free_cb (gpointer p)\n{\n}\n\n"
               "int\nthing_call (int x,\n            int y)\n{\n  return x;\n}\n\n"
               "static int\nthing_private (void)\n{\n  return 0;\n}\n\n"
               "void\nthing_mentioned (void)\n{\n}\n",
    "calls.c": "void\ncalls (void)\n{\n  thing_call (1, 2);\n}\n",
    "value.c": "void\nvalue (GHashTable *h)\n{\n  g_hash_table_new_full (NULL, NULL, NULL, thing_free_cb);\n}\n",
    "auto.c": "void\nauto_use (void)\n{\n  g_autoptr(Thing) t = NULL;\n}\n",
    "quiet.c": "/* thing_call (), thing_mentioned */\n"
               "void\nquiet (S *s)\n{\n  // thing_unref (t);\n"
               "  puts (\"thing_call (1, 2) and 'thing_free_cb'\");\n  char q = '\"';\n"
               "  s->thing_mentioned (); s.thing_unref = 0;\n  thing_private ();\n"
               "  proto_only ();\n}\n",
    "proto.c": "void\nproto_only (void);\n",
}
SELF_TEST_EDGES = {
    ("calls.c", "thing.c"), ("value.c", "thing.c"), ("auto.c", "thing.c"),
}


def self_test(tests):
    text = {f: strip(body) for f, body in SELF_TEST.items()}
    edges = module_edges(text)
    found = {(a, b) for a in edges for b in edges[a]}
    cycle = components({"a.c": {"b.c": []}, "b.c": {"c.c": []}, "c.c": {"a.c": []}, "d.c": {"a.c": []}})
    tests.append((found == SELF_TEST_EDGES and cycle == [frozenset({"a.c", "b.c", "c.c"})],
                  "the reading finds calls, functions passed as values and autoptr free functions, "
                  "and no use in comments, strings, members, static or undefined functions",
                  ["expected %s" % sorted(SELF_TEST_EDGES), "found %s" % sorted(found),
                   "cycles %s" % [sorted(c) for c in cycle]]
                  if found != SELF_TEST_EDGES else [], None))


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


def check_graph(root, graph, tests):
    directory = os.path.join(root, graph)
    # core/ is one graph over all its layer folders (a layer is a folder,
    # not a module boundary the calls could hide behind); a plugin
    # directory is one graph of its own files.
    paths = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames.sort()
        for f in filenames:
            if f.endswith((".c", ".h")):
                paths.setdefault(f, os.path.join(dirpath, f))
        if graph != "core":
            break
    files = sorted(paths)
    raw, text = {}, {}
    for f in files:
        with open(paths[f], encoding="utf-8") as fh:
            source = fh.read()
        raw[f] = re.sub(r'/\*.*?\*/', ' ', source, flags=re.S)   # include lines keep their strings
        text[f] = strip(source)
    sources = [f for f in files if f.endswith(".c")]
    headers = [f for f in files if f.endswith(".h")]

    # 1. Headers including themselves.
    hedges = {}
    for h in headers:
        for inc in INCLUDE_RE.findall(raw[h]):
            if inc in text and inc.endswith(".h") and inc != h:
                hedges.setdefault(h, {})[inc] = ["%s includes %s" % (h, inc)]
    hcycles = components(hedges)
    tests.append((not hcycles, "%s: no header includes itself" % graph,
                  ["%s" % ", ".join(sorted(c)) for c in hcycles], None))

    # 2. Modules using each other.
    edges = module_edges(text)
    cycles = components(edges)
    known = KNOWN.get(graph, {})
    known_left = dict(known)
    for comp in sorted(cycles, key=sorted):
        why = ["%s -> %s: %s" % (a, b, ", ".join(edges[a][b][:6]))
               for a in sorted(comp) for b in sorted(edges.get(a, {})) if b in comp]
        reason = known.get(comp)
        if reason is not None:
            del known_left[comp]
        tests.append((reason is not None, "%s: cycle among %s" % (graph, ", ".join(sorted(comp))),
                      why, reason))
    for comp, reason in sorted(known_left.items(), key=lambda kv: sorted(kv[0])):
        tests.append((False, "%s: known cycle among %s is gone: remove it from KNOWN"
                      % (graph, ", ".join(sorted(comp))), [reason], None))
    n_deps = sum(len(v) for v in edges.values())
    if graph in READ:
        min_sources, min_deps = READ[graph]
        tests.append((len(sources) > min_sources and n_deps > min_deps,
                      "%s: the graph was read: %d modules, %d dependencies"
                      % (graph, len(sources), n_deps), [], None))
    else:
        tests.append((True, "%s: %d modules, %d dependencies" % (graph, len(sources), n_deps),
                      [], None))


def main(argv):
    if len(argv) != 2:
        print("usage: check-include-cycles.py SOURCE_ROOT", file=sys.stderr)
        return 2
    root = argv[1]
    graphs = ["core"]
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "plugins")):
        dirnames.sort()
        if any(f.endswith(".c") for f in filenames):
            graphs.append(os.path.relpath(dirpath, root))
    tests = []
    self_test(tests)
    for graph in graphs:
        check_graph(root, graph, tests)
    for graph in sorted(set(KNOWN) | set(READ)):
        if graph not in graphs:
            tests.append((False, "%s is named in KNOWN or READ but holds no C file" % graph,
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
