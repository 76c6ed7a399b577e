#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Report entries use the ABI header's feature names, never a spelling (TAP).

core/sdk/sbx/sbx-plugin-envelope.h defines SBX_ABI_FEATURE_* for the report feature
names that carry a meaning across plugins (one per guarantee bit, plus the
shared ones).  A report call in the core or a bundled plugin that passes
one of those names as a string literal can drift from it unnoticed
("write_boundary", "network-boundaries"); through the constant it cannot.

Checked: every call of a report function (host->report, sbx_linux_report,
report, reportf, report_guarantee, module_report, add_entry) in core/,
plugins/ and tools/ whose feature argument is a string literal equal to a
name the header defines.

PENDING lists files whose owners rewrite them at merge (run this script
with --fix on them, then drop them from the list); a pending file that is
already clean fails the check, so the list cannot outlive its reason.

Usage: check-feature-names.py SOURCE_ROOT [--fix FILE...]
"""
import os
import re
import sys

PENDING = {}

DEFINE_RE = re.compile(r'^#define\s+SBX_ABI_FEATURE_([A-Z_]+)\s+"([a-z0-9-]+)"', re.M)
CALL_RE = re.compile(r'(\b(?:report|reportf|report_guarantee|module_report|sbx_linux_report|add_entry)'
                     r'|->report)(\s*\([^;"()]*?)"([a-z0-9-]+)"')


def load_names(root):
    with open(os.path.join(root, "core", "sdk", "sbx", "sbx-plugin-envelope.h"), encoding="utf-8") as fh:
        return {value: "SBX_ABI_FEATURE_" + name for name, value in DEFINE_RE.findall(fh.read())}


def offenders(text, names):
    return [(text.count("\n", 0, m.start()) + 1, m.group(3))
            for m in CALL_RE.finditer(text) if m.group(3) in names]


def fix(text, names):
    return CALL_RE.sub(lambda m: m.group(1) + m.group(2) + names[m.group(3)]
                       if m.group(3) in names else m.group(0), text)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    names = load_names(root)
    if len(argv) > 2 and argv[2] == "--fix":
        for path in argv[3:]:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            fixed = fix(text, names)
            if fixed != text:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(fixed)
                print("rewrote %s" % path)
        return 0

    tests = [(len(names) >= 8, "the header defines the feature names (%d found)" % len(names), [])]
    for top in ("core", "plugins", "tools"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")) or f == "sbx-plugin-abi.h":
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as fh:
                    found = offenders(fh.read(), names)
                if rel in PENDING:
                    tests.append((bool(found), "%s: pending (%s)" % (rel, PENDING[rel]),
                                  [] if found else ["clean now: remove it from PENDING"]))
                elif found:
                    tests.append((False, "%s: feature names spelled out" % rel,
                                  ["line %d: \"%s\" (use %s)" % (n, v, names[v]) for n, v in found]))
    for rel in PENDING:
        if not os.path.exists(os.path.join(root, rel)):
            tests.append((False, "%s: pending but gone (remove it from PENDING)" % rel, []))
    tests.append((True, "every other report call uses the header's names", []))

    print("1..%d" % len(tests))
    failed = 0
    for i, (ok, name, why) in enumerate(tests, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        for line in why:
            print("#   %s" % line)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
