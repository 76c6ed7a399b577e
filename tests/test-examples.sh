#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: runs the README's examples (C and Python) against the real plugins of
# this build, so the README cannot drift from the API.
#   test-examples.sh RUN_HELLO_BINARY EXAMPLES_SRCDIR TYPELIB_DIR SANITIZED
set -u
# Debian's python3 carries PyGObject (python3-gi); a python3 from elsewhere
# on PATH (pyenv, venv) usually does not.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
run_hello=$1; srcdir=$2; typelib_dir=$3; sanitized=$4

# The examples use the default registry: point it at this build's plugins.
SBX_PLUGIN_PATH=$SBX_TEST_PLUGIN_DIRS
export SBX_PLUGIN_PATH
unset SBX_BACKEND

ws=$(mktemp -d /tmp/sbx-example-ws.XXXXXX)
scratch=$(mktemp -d /tmp/sbx-example-scratch.XXXXXX)
trap 'rm -rf "$ws" "$scratch"' EXIT
n=0
echo "1..7"

check_output () {
  # $1 = test name, $2 = output file, $3 = exit status
  n=$((n + 1))
  if grep -q "no backend\|BACKEND_UNAVAILABLE\|No backend" "$2"; then
    echo "ok $n $1 # SKIP no sandboxing backend on this host: $(head -1 "$2")"
  elif [ "$3" -eq 0 ] && grep -qx "output: hello from the sandbox" "$2" \
       && grep -qx "exit code: 0" "$2" && grep -q "^level: \(full\|degraded\)$" "$2" \
       && grep -q "^guarantees: .*write-boundary" "$2" \
       && [ -z "$(ls -A "$scratch")" ]; then
    echo "ok $n $1"
  else
    echo "not ok $n $1 (exit $3)"; sed 's/^/# /' "$2"
    echo "# scratch left: $(ls -A "$scratch")"
  fi
}

out=$(mktemp)
"$run_hello" "$ws" "$scratch" >"$out" 2>&1; st=$?
check_output "/examples/c/run-hello" "$out" "$st"

if [ "$sanitized" = "true" ]; then
  n=$((n + 1)); echo "ok $n /examples/python/run-hello # SKIP python cannot load a sanitizer-instrumented library"
elif ! $PY -c 'import gi' 2>/dev/null; then
  n=$((n + 1)); echo "ok $n /examples/python/run-hello # SKIP PyGObject not installed"
elif [ ! -f "$typelib_dir/Sbx-1.0.typelib" ]; then
  n=$((n + 1)); echo "ok $n /examples/python/run-hello # SKIP introspection disabled in this build"
else
  GI_TYPELIB_PATH=$typelib_dir LD_LIBRARY_PATH=$typelib_dir \
    $PY "$srcdir/run-hello.py" "$ws" "$scratch" >"$out" 2>&1; st=$?
  # The registry's snapshots through the typelib: the backend that ran is listed.
  if [ "$st" -eq 0 ] && ! grep -q "^backends: .*linux-" "$out"; then st=1; fi
  check_output "/examples/python/run-hello" "$out" "$st"
fi

# Grants through the typelib: a gated command refused without a grant, run
# once with it, the second use refused with Sbx.GrantError.REPLAY.
if [ "$sanitized" = "true" ]; then
  n=$((n + 1)); echo "ok $n /examples/python/grant-once # SKIP python cannot load a sanitizer-instrumented library"
elif ! $PY -c 'import gi' 2>/dev/null; then
  n=$((n + 1)); echo "ok $n /examples/python/grant-once # SKIP PyGObject not installed"
elif [ ! -f "$typelib_dir/Sbx-1.0.typelib" ]; then
  n=$((n + 1)); echo "ok $n /examples/python/grant-once # SKIP introspection disabled in this build"
else
  GI_TYPELIB_PATH=$typelib_dir LD_LIBRARY_PATH=$typelib_dir \
    $PY "$srcdir/grant-once.py" "$ws" "$scratch" >"$out" 2>&1; st=$?
  n=$((n + 1))
  if grep -q "no backend\|BACKEND_UNAVAILABLE\|No backend" "$out"; then
    echo "ok $n /examples/python/grant-once # SKIP no sandboxing backend on this host: $(head -1 "$out")"
  elif [ "$st" -eq 0 ] && grep -qx "without a grant: required" "$out" \
       && grep -qx "output: approved once" "$out" && grep -qx "second use: replay" "$out" \
       && [ -z "$(ls -A "$scratch")" ]; then
    echo "ok $n /examples/python/grant-once"
  else
    echo "not ok $n /examples/python/grant-once (exit $st)"; sed 's/^/# /' "$out"
  fi
fi
# Denials through the typelib: the refusal arrives as Sbx.Process::denied
# and in the result with the grant that opens it; that grant opens exactly
# that server (which answers: the positive control).
n=$((n + 1))
if [ "$sanitized" = "true" ]; then
  echo "ok $n /examples/python/denials # SKIP python cannot load a sanitizer-instrumented library"
elif ! $PY -c 'import gi' 2>/dev/null; then
  echo "ok $n /examples/python/denials # SKIP PyGObject not installed"
elif [ ! -f "$typelib_dir/Sbx-1.0.typelib" ]; then
  echo "ok $n /examples/python/denials # SKIP introspection disabled in this build"
elif ! command -v curl >/dev/null 2>&1; then
  echo "ok $n /examples/python/denials # SKIP curl not installed"
else
  GI_TYPELIB_PATH=$typelib_dir LD_LIBRARY_PATH=$typelib_dir \
    $PY "$srcdir/denials.py" "$ws" "$scratch" >"$out" 2>&1; st=$?
  if grep -q "no backend\|BACKEND_UNAVAILABLE\|No backend\|network-boundary\|target-network" "$out"; then
    echo "ok $n /examples/python/denials # SKIP no backend with a private network here: $(head -1 "$out")"
  elif [ "$st" -eq 0 ] && [ "$(grep -c '^signal: denied connect 127.0.0.1:[0-9]* (network is gated); --approve network.proxy-target.v1:tcp:127.0.0.1:[0-9]* would open it$' "$out")" -eq 1 ] \
       && grep -q '^result: denied connect ' "$out" \
       && grep -q '^grant: network.proxy-target.v1:tcp:127.0.0.1:[0-9]*$' "$out" \
       && grep -q '^output: hello from port [0-9]*$' "$out" \
       && grep -qx 'denials after the grant: 0' "$out" \
       && [ -z "$(ls -A "$scratch")" ]; then
    echo "ok $n /examples/python/denials"
  else
    echo "not ok $n /examples/python/denials (exit $st)"; sed 's/^/# /' "$out"
  fi
fi

# The desktop-style agent: the streaming lines arrive while the tool runs,
# the gated start is approved through the callback (stdin is not a
# terminal), the report follows; then a live network approval: the tool's
# connection to a local server is asked while it runs and allowed once by
# the callback (skipped without curl or the sandbox's own network).  Once with a workspace and scratch root,
# once without arguments (its own workspace, the default scratch root under
# $XDG_RUNTIME_DIR).
check_agent () {
  # $1 = test name, $2 = output file, $3 = exit status, $4 = scratch dir
  n=$((n + 1))
  if grep -q "no backend\|BACKEND_UNAVAILABLE\|No backend" "$2"; then
    echo "ok $n $1 # SKIP no sandboxing backend on this host: $(head -1 "$2")"
  elif [ "$3" -eq 0 ] && [ "$(grep -c '^tool: step [123]  (while it runs)$' "$2")" -eq 3 ] \
       && grep -qx "exit code: 0" "$2" && grep -qx "lines streamed: 3" "$2" \
       && grep -qx "report: run" "$2" \
       && grep -qx "live approval: tool said hello from the local server, exit code 0\|live approval: skipped .*" "$2" \
       && [ -z "$(ls -A "$4")" ]; then
    echo "ok $n $1"
  else
    echo "not ok $n $1 (exit $3)"; sed 's/^/# /' "$2"
    echo "# scratch left: $(ls -A "$4")"
  fi
}

runtime=$(mktemp -d /tmp/sbx-example-runtime.XXXXXX)
trap 'rm -rf "$ws" "$scratch" "$runtime"' EXIT
if [ "$sanitized" = "true" ]; then
  for t in agent agent-defaults; do
    n=$((n + 1)); echo "ok $n /examples/python/$t # SKIP python cannot load a sanitizer-instrumented library"
  done
elif ! $PY -c 'import gi' 2>/dev/null; then
  for t in agent agent-defaults; do
    n=$((n + 1)); echo "ok $n /examples/python/$t # SKIP PyGObject not installed"
  done
elif [ ! -f "$typelib_dir/Sbx-1.0.typelib" ]; then
  for t in agent agent-defaults; do
    n=$((n + 1)); echo "ok $n /examples/python/$t # SKIP introspection disabled in this build"
  done
else
  GI_TYPELIB_PATH=$typelib_dir LD_LIBRARY_PATH=$typelib_dir \
    $PY "$srcdir/agent.py" "$ws" "$scratch" </dev/null >"$out" 2>&1; st=$?
  grep -q "approved automatically" "$out" || st=97
  check_agent "/examples/python/agent" "$out" "$st" "$scratch"
  XDG_RUNTIME_DIR=$runtime GI_TYPELIB_PATH=$typelib_dir LD_LIBRARY_PATH=$typelib_dir \
    $PY "$srcdir/agent.py" </dev/null >"$out" 2>&1; st=$?
  grep -q "^containment: " "$out" || st=98
  check_agent "/examples/python/agent-defaults" "$out" "$st" "$runtime/sbx"
fi

if [ "$sanitized" = "true" ]; then
  n=$((n + 1)); echo "ok $n /examples/gjs/agent # SKIP gjs cannot load a sanitizer-instrumented library"
elif ! command -v gjs >/dev/null 2>&1; then
  n=$((n + 1)); echo "ok $n /examples/gjs/agent # SKIP gjs not installed (Debian package gjs)"
elif [ ! -f "$typelib_dir/Sbx-1.0.typelib" ]; then
  n=$((n + 1)); echo "ok $n /examples/gjs/agent # SKIP introspection disabled in this build"
else
  GI_TYPELIB_PATH=$typelib_dir LD_LIBRARY_PATH=$typelib_dir \
    gjs -m "$srcdir/agent.js" "$ws" "$scratch" </dev/null >"$out" 2>&1; st=$?
  check_agent "/examples/gjs/agent" "$out" "$st" "$scratch"
fi
rm -f "$out"
