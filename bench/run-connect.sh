#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# connect(2) latency inside the sandbox against outside, TCP and unix, as
# ratios in one run.  Inside, every connect goes through the connect
# supervisor (a seccomp user notification answered by the spawning
# process: docs/linux-backend.md); bench-connect listens and connects
# inside the sandbox itself (its own sockets), outside on the host.
# Both rungs with `--network=allow` (the host's network namespace; TCP
# sockets exist at rung 2 too), and rung 1 with the default deny (its own
# network namespace, where the sandbox's own sockets need no /proc walk).
#
# Usage: bench/run-connect.sh [BUILD_DIR]   (default _build; builds it if needed)
# Environment: SBX_BENCH_RUNS (default 2000), SBX_BENCH_WARMUP (default 200).
# Numbers depend on the machine and its load; the ratios are what to compare.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-_build}
RUNS=${SBX_BENCH_RUNS:-2000}
WARMUP=${SBX_BENCH_WARMUP:-200}

if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" >/dev/null
fi
ninja -C "$BUILD" >/dev/null
BENCH="$(pwd)/$BUILD/bench/bench-connect"
SBX="$(pwd)/$BUILD/tools/sbx"
export SBX_PLUGIN_PATH="$(pwd)/$BUILD/plugins/linux"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-connect-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cp "$BENCH" "$DIR/bench-connect"

run () {   # label, command... (run in DIR: the workspace)
  label=$1
  shift
  (cd "$DIR" && "$@" "$DIR/bench-connect" "$RUNS" "$WARMUP" "$DIR" > "$DIR/$label.out")
}

run outside env
run rung1 env SBX_BACKEND=linux-userns "$SBX" run --workspace="$DIR" --network=allow --
run rung1-deny env SBX_BACKEND=linux-userns "$SBX" run --workspace="$DIR" --
run rung2 env SBX_BACKEND=linux-landlock "$SBX" run --workspace="$DIR" --network=allow --

python3 - "$DIR" <<'PY'
import sys, os
d = sys.argv[1]
def load(label):
    out = {}
    for line in open(os.path.join(d, label + ".out")):
        kind, med, low = line.split()
        out[kind] = (int(med), int(low))
    return out
base = load("outside")
print("connect(2) latency, median (minimum) in microseconds, and the ratio to outside")
print("%-11s %-20s %-20s" % ("", "tcp", "unix"))
for label in ("outside", "rung1", "rung1-deny", "rung2"):
    r = load(label)
    cells = []
    for kind in ("tcp", "unix"):
        med, low = r[kind]
        cells.append("%.1f (%.1f) x%.1f" % (med / 1000, low / 1000, med / base[kind][0]))
    print("%-11s %-20s %-20s" % (label, cells[0], cells[1]))
PY
