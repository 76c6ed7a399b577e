#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""TAP: `sbx --version` and `sbx doctor --json` name the build.

    test-build-info.py SBX VERSION PLUGINDIR BACKENDS EGRESS REPORTERS

The last three are comma-separated lists of what meson built; both outputs
must state exactly these values.
"""
import json
import subprocess
import sys

SBX, VERSION, PLUGINDIR = sys.argv[1], sys.argv[2], sys.argv[3]
BUILT = {key: [x for x in value.split(",") if x]
         for key, value in zip(("backends", "egress", "reporters"), sys.argv[4:7])}
n = 0


def report(ok, name, details=()):
    global n
    n += 1
    print(f"{'ok' if ok else 'not ok'} {n} {name}")
    for line in details:
        print(f"# {line}")


proc = subprocess.run([SBX, "--version"], capture_output=True, text=True, check=False)
lines = proc.stdout.splitlines()
expected = [f"sbx {VERSION}", f"plugin directory: {PLUGINDIR}"] + [
    f"{key} built: {','.join(BUILT[key]) or '(none)'}" for key in ("backends", "egress", "reporters")]
report(proc.returncode == 0 and lines == expected and proc.stderr == "",
       "/build-info/version", [f"got: {lines!r}", f"expected: {expected!r}", proc.stderr])

proc = subprocess.run([SBX, "doctor", "--json"], capture_output=True, text=True, check=False)
try:
    build = json.loads(proc.stdout)["build"]
except (ValueError, KeyError) as e:
    build = None
    report(False, "/build-info/doctor-json", [f"no build object: {e}", proc.stdout[:200]])
if build is not None:
    want = {"version": VERSION, "plugindir": PLUGINDIR, **BUILT}
    report(build == want, "/build-info/doctor-json", [f"got: {build!r}", f"expected: {want!r}"])
    report(len(BUILT["backends"]) > 0, "/build-info/some-backend-built")
print(f"1..{n}")
