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
echo "1..3"

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
rm -f "$out"
