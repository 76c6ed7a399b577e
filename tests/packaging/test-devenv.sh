#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: `meson devenv -C BUILD` gives an environment where the build tree's
# sbx, libsbx-1, plugins, typelib and man pages are used uninstalled.
#   test-devenv.sh BUILD_ROOT BACKENDS(comma-separated) gir|no-gir|sanitized
set -u
BUILD=$1 BACKENDS=$2 GIR=$3
n=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1"; shift; for line in "$@"; do printf "%s\n" "$line" | sed "s/^/# /"; done; }

if ! command -v meson >/dev/null 2>&1; then
  echo "1..0 # SKIP meson is not on PATH"; exit 0
fi
# What the user has set must not help: no plugin path of ours, and a PATH
# without the build tree.
unset SBX_PLUGIN_PATH GI_TYPELIB_PATH LD_LIBRARY_PATH MANPATH
devenv () { meson devenv -C "$BUILD" "$@"; }

# The program on PATH is the build tree's.
out=$(devenv sh -c 'command -v sbx' 2>&1)
if [ "$out" = "$BUILD/tools/sbx" ]; then ok "/devenv/sbx-on-path"
else not_ok "/devenv/sbx-on-path" "command -v sbx: $out (expected $BUILD/tools/sbx)"; fi

# Positive control: outside the devenv this sbx finds none of the build's
# plugins (it looks in the compiled-in directory only).
json=$(SBX_PLUGIN_PATH= "$BUILD/tools/sbx" doctor --json 2>/dev/null)
outside=$(printf '%s' "$json" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(",".join(b["name"] for b in d["backends"] if "/sbx-1/plugins" not in b.get("path", "")))' 2>&1)

# Inside: every backend built is loaded, from the build tree.
json=$(devenv sbx doctor --json 2>/dev/null)
inside=$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
paths = {p["name"]: p["path"] for p in d["plugins"]}
print(",".join(sorted(b["name"] for b in d["backends"] if paths.get(b["plugin"], "").startswith(sys.argv[1] + "/"))))
' "$BUILD" 2>&1)
expected=$(echo "$BACKENDS" | tr ',' '\n' | sort | tr '\n' ',' | sed 's/,$//')
if [ "$inside" = "$expected" ] && [ -n "$expected" ]; then ok "/devenv/plugins-from-build-tree ($inside)"
else not_ok "/devenv/plugins-from-build-tree" "backends loaded from $BUILD: '$inside', built: '$expected'" "(outside the devenv: '$outside')"; fi

# A sandboxed command runs through the build tree's plugins.
if out=$(cd "$BUILD" && devenv sbx run -- true 2>&1); then ok "/devenv/sbx-run"
else not_ok "/devenv/sbx-run" "$out"; fi

# The typelib: PyGObject finds Sbx-1.0 and the library it names.
if [ "$GIR" = sanitized ]; then
  n=$((n + 1)); echo "ok $n /devenv/typelib # SKIP sanitizer build: python3 cannot load an ASan-built libsbx-1 (the runtime must come first)"
elif [ "$GIR" = gir ]; then
  if /usr/bin/python3 -c 'import gi' 2>/dev/null; then
    if out=$(devenv /usr/bin/python3 -c '
import gi
gi.require_version("Sbx", "1.0")
from gi.repository import Sbx
print(Sbx.Level.FULL.value_nick if hasattr(Sbx.Level.FULL, "value_nick") else int(Sbx.Level.FULL))
' 2>&1); then ok "/devenv/typelib ($out)"
    else not_ok "/devenv/typelib" "$out"; fi
  else
    n=$((n + 1)); echo "ok $n /devenv/typelib # SKIP python3-gi is not installed"
  fi
fi

# The man pages.
if [ -f "$BUILD/data/man/man1/sbx.1" ] && command -v man >/dev/null 2>&1; then
  out=$(devenv man -w sbx 2>&1)
  if [ "$out" = "$BUILD/data/man/man1/sbx.1" ]; then ok "/devenv/man"
  else not_ok "/devenv/man" "man -w sbx: $out"; fi
fi

echo "1..$n"
