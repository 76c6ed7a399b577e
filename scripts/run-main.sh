#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's main-job command.  On a fresh Debian 12 machine: installs the
# dependencies, builds sbx, then runs a real command (a shell that compiles and
# runs a C program, and tries two things the profile forbids) under the
# embedded default profile, printing the compile report — what this host
# actually enforced — before the command's own output.
set -eu
cd "$(dirname "$0")/.."
SRC=$(pwd)
./scripts/setup.sh
./scripts/build.sh

# Run the build tree's sbx with this build's plugins (an installed sbx finds
# them in its plugin directory instead).
SBX_PLUGIN_PATH=$(for d in "$SRC"/_build/plugins/*/; do printf '%s:' "${d%/}"; done)
export SBX_PLUGIN_PATH

# The workspace: a fresh directory, the only place the command may write.
WS=$(mktemp -d "${TMPDIR:-/tmp}/sbx-demo.XXXXXX")
trap 'rm -rf "$WS"' EXIT
cd "$WS"

set +e
"$SRC/_build/tools/sbx" run --report -- sh -c '
  echo "== inside: $(id -un) (uid $(id -u)), cwd $PWD, HOME $HOME"
  printf "int main(void) { return 42; }\n" > prog.c
  cc prog.c -o prog && ./prog; echo "== compiled and ran a C program in the workspace: exit $?"
  touch /etc/sbx-demo 2>/dev/null && echo "== wrote /etc (unexpected)" || echo "== write outside the workspace: denied"
  ls "'"$HOME"'" >/dev/null 2>&1 && echo "== read the real HOME (unexpected)" || echo "== read the real HOME: denied"
  python3 -c "import socket; socket.create_connection((\"1.1.1.1\", 443), 3)" 2>&1 \
    | tail -1 | sed "s/^/== connect to 1.1.1.1:443: /"
  echo "== processes visible: $(ps -e -o comm= | tr "\n" " ")"
'
status=$?
echo "sbx run exited with $status"
exit $status
