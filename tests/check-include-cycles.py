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
     use is the dependency.  A macro a header defines as a call
     ("#define SBX_GRANT_ERROR (sbx_grant_error_quark ())") is a use of
     that function wherever the macro is used, and G_DEFINE_QUARK (x, y)
     defines y_quark.  A cycle (A needs B and B, directly or not, A) is two
     files that cannot be read, tested or replaced one without the other:
     the architecture is one module where the file list says two.
  3. Includes (the graphs INCLUDES_CHECKED names): each private header
     (*-private.h) belongs to a module: the .c file of its name
     (sbx-foo-private.h and sbx-foo-bar-private.h belong to sbx-foo.c when
     there is no sbx-foo-bar.c), or none, and then it is a module of its
     own, as a header that declares no function (a type's representation)
     always is.
     A file that includes a private header makes its module depend on the
     header's, and these dependencies join the calls of check 2: a private
     header that includes more than its declarations need, or a .c that
     includes the header of a module above it, closes a cycle as a call
     does.  Public headers are the library's API and their includes are
     types; the layer folders' include directories (core/meson.build)
     bound them.

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
    # core/: none.  The executor's error helpers have a module of their own
    # (sbx-executor-error.c), a grant binding's lifetime lives beside its
    # definition with the grant error domain below both
    # (sbx-grant-error.c), and SbxProfile's ref/unref beside its boxed type.
    # plugins/linux: none.  The clone primitives live below spawn and zygote
    # (sbx-linux-clone.c) and the Landlock builder only borrows the plan.
}

# The graphs whose private headers join the module graph (check 3).  The
# plugins' private headers are still each plugin's shared declarations:
# they join when the plugin work on other branches has split them.
INCLUDES_CHECKED = {"core"}

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


QUARK_RE = re.compile(r'^G_DEFINE_QUARK\s*\([^,]*,\s*(\w+)\s*\)', re.M)
PROTOTYPE_RE = re.compile(r'^[A-Za-z_][\w \t*]*?[\s*]([a-z_][a-z0-9_]*)\s*\(', re.M)
MACRO_CALL_RE = re.compile(r'^#\s*define\s+([A-Z][A-Z0-9_]*)\s+\(?\s*([a-z_][a-z0-9_]*)\s*\(', re.M)


def exported_definitions(text):
    names = [m.group(1) + "_quark" for m in QUARK_RE.finditer(text)]
    return names + definitions_by_style(text)


def definitions_by_style(text):
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


def uses(text, cleanup, macros=None):
    """Identifiers @text uses, with the free functions its autoptrs run and
    the functions the call macros it uses expand to."""
    names = {m.group(2) for m in IDENT_RE.finditer(text) if m.group(1) is None}
    for m in AUTO_RE.finditer(text):
        if m.group(1) in cleanup:
            names.add(cleanup[m.group(1)])
    for name in list(names):
        if macros and name in macros:
            names.add(macros[name])
    return names


def module_edges(text):
    """{A: {B: [names A uses from B]}} for the files of @text (name ->
    stripped contents): the .c files are the modules, the headers give the
    autoptr free functions."""
    cleanup, macros = {}, {}
    for h in sorted(f for f in text if f.endswith(".h")):
        for typ, func in CLEANUP_RE.findall(text[h]):
            cleanup[typ] = func
        for name, func in MACRO_CALL_RE.findall(text[h]):
            macros[name] = func
    sources = sorted(f for f in text if f.endswith(".c"))
    defined_in = {}
    for c in sources:
        for name in exported_definitions(text[c]):
            defined_in.setdefault(name, set()).add(c)
    edges = {}
    for c in sources:
        for name in sorted(uses(text[c], cleanup, macros)):
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
    "e.h": "#define THING_ERROR (thing_error_quark ())\n",
    "quark.c": "G_DEFINE_QUARK (thing-error-quark, thing_error)\n",
    "macro.c": "void\nmacro (GError **e)\n{\n  g_set_error (e, THING_ERROR, 1, \"x\");\n}\n",
}
# Includes of private headers: to the module of the header's name, or to
# the header itself when it declares no function.
SELF_TEST_INCLUDES = {
    "a.c": '#include "b-extra-private.h"\n#include "rep-private.h"\n#include "b.h"\n',
    "b.c": "",
    "b.h": "void b_public (void);\n",
    "b-extra-private.h": "void b_fn (void);\n",
    "rep-private.h": "struct R\n{\n  int x;\n};\n",
}
SELF_TEST_INCLUDE_EDGES = {("a.c", "b.c"), ("a.c", "rep-private.h")}
SELF_TEST_EDGES = {
    ("calls.c", "thing.c"), ("value.c", "thing.c"), ("auto.c", "thing.c"),
    ("macro.c", "quark.c"),
}


def header_module(header, sources, text):
    """The module a private header belongs to: the .c of its name, words
    dropped from the end until one exists, or the header itself.  A header
    that declares no function (a representation: a type's structure, shared
    by the files that implement it) is always a module of its own, so that
    those files can all read the structure and still call each other one
    way."""
    if not PROTOTYPE_RE.search(text):
        return header
    stem = header[:-len(".h")]
    if stem.endswith("-private"):
        stem = stem[:-len("-private")]
    while True:
        if stem + ".c" in sources:
            return stem + ".c"
        if "-" not in stem:
            return header
        stem = stem.rsplit("-", 1)[0]


def include_edges(raw, sources):
    """{module: {module: [why]}} from includes of private headers."""
    def module(f):
        return f if f.endswith(".c") else header_module(f, sources, strip(raw[f]))
    edges = {}
    for f in sorted(raw):
        for inc in INCLUDE_RE.findall(raw[f]):
            if inc.endswith("-private.h") and inc in raw and module(inc) != module(f):
                edges.setdefault(module(f), {}).setdefault(module(inc), []).append(
                    "%s includes %s" % (f, inc))
    return edges


def self_test(tests):
    text = {f: strip(body) for f, body in SELF_TEST.items()}
    edges = module_edges(text)
    found = {(a, b) for a in edges for b in edges[a]}
    cycle = components({"a.c": {"b.c": []}, "b.c": {"c.c": []}, "c.c": {"a.c": []}, "d.c": {"a.c": []}})
    inc = include_edges(SELF_TEST_INCLUDES, [f for f in SELF_TEST_INCLUDES if f.endswith(".c")])
    inc_found = {(a, b) for a in inc for b in inc[a]}
    tests.append((inc_found == SELF_TEST_INCLUDE_EDGES,
                  "the reading assigns a private header to the module of its name, or to itself "
                  "when it declares no function, and leaves public headers out",
                  ["expected %s" % sorted(SELF_TEST_INCLUDE_EDGES), "found %s" % sorted(inc_found)]
                  if inc_found != SELF_TEST_INCLUDE_EDGES else [], None))
    tests.append((found == SELF_TEST_EDGES and cycle == [frozenset({"a.c", "b.c", "c.c"})],
                  "the reading finds calls, functions passed as values and autoptr free functions, "
                  "call macros and quarks, "
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

    # 2. Modules using each other, 3. with the private headers they include.
    edges = module_edges(text)
    for f, deps in (include_edges(raw, sources) if graph in INCLUDES_CHECKED else {}).items():
        for d, why in deps.items():
            edges.setdefault(f, {}).setdefault(d, []).extend(why)
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
