#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Per-spawn cost of /bin/true, in one run, as ratios against running it
# plainly:
#   plain            /bin/true
#   unshare          unshare -Urnmp --fork /bin/true      (the namespace floor)
#   bwrap            bubblewrap with confinement like sbx's rung 1
#   sbx run          sbx run -- /bin/true, embedded default profile
#   library          bench-spawn: one executor, many spawns (C harness)
#   library rung 2   the same with SBX_BACKEND-style selection of linux-landlock
#
# Usage: bench/run.sh [BUILD_DIR]   (default _build; builds it if needed)
# Environment: SBX_BENCH_RUNS (default 300), SBX_BENCH_WARMUP (default 30).
# Needs hyperfine, bwrap and unshare (scripts/setup.sh installs them).
# Numbers depend on the machine and its load: run it on an idle host; the
# ratios are what to compare.
set -eu
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${1:-_build}
RUNS=${SBX_BENCH_RUNS:-300}
WARMUP=${SBX_BENCH_WARMUP:-30}

if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" >/dev/null
fi
ninja -C "$BUILD" >/dev/null

SBX="$SRC/$BUILD/tools/sbx"
BENCH="$SRC/$BUILD/bench/bench-spawn"
PLUGINS="$SRC/$BUILD/plugins/linux"
TRUE_BIN=$(command -v true)
[ -x /bin/true ] && TRUE_BIN=/bin/true

for tool in hyperfine bwrap unshare python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "bench: $tool is missing (scripts/setup.sh installs it)"; exit 1; }
done

WS=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-ws.XXXXXX")
OUT=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-out.XXXXXX")
trap 'rm -rf "$WS" "$OUT"' EXIT INT TERM
cd "$WS"

# bubblewrap with confinement close to rung 1: all namespaces, a read-only
# runtime view, the workspace read/write, fresh /proc and /dev, a private
# /tmp, a new session, no capabilities.  (Its seccomp needs a compiled BPF
# program fd; without one bwrap loads none, so it does a little less.)
BWRAP="bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL \
 --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin \
 --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
 --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache --ro-bind-try /etc/passwd /etc/passwd \
 --ro-bind-try /etc/group /etc/group --ro-bind-try /etc/nsswitch.conf /etc/nsswitch.conf \
 --ro-bind-try /etc/hosts /etc/hosts --ro-bind-try /etc/resolv.conf /etc/resolv.conf \
 --proc /proc --dev /dev --tmpfs /tmp --bind $WS $WS --chdir $WS $TRUE_BIN"

echo "sbx spawn benchmark: $RUNS runs of $TRUE_BIN per command, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
SBX_PLUGIN_PATH="$PLUGINS" hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style none \
  --export-json "$OUT/hyperfine.json" \
  -n plain "$TRUE_BIN" \
  -n unshare "unshare -Urnmp --fork $TRUE_BIN" \
  -n bwrap "$BWRAP" \
  -n "sbx run" "$SBX run -- $TRUE_BIN" >/dev/null 2>&1

"$BENCH" --runs "$RUNS" --warmup "$WARMUP" --plugin-dir "$PLUGINS" -- "$TRUE_BIN" > "$OUT/library.txt"
"$BENCH" --runs "$RUNS" --warmup "$WARMUP" --plugin-dir "$PLUGINS" --backend linux-landlock \
  -- "$TRUE_BIN" > "$OUT/library-rung2.txt"

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
res = json.load(open(out + "/hyperfine.json"))["results"]
rows = [(r["command"], r["median"] * 1000, r["mean"] * 1000) for r in res]
for name, label in (("library.txt", "library"), ("library-rung2.txt", "library rung 2")):
    f = open(out + "/" + name).read().split()
    # "<backend> <level> mean M median D min N (R runs)"
    rows.append(("%s (%s, %s)" % (label, f[0], f[1]), float(f[5]), float(f[3])))
base = rows[0][1]
print("%-38s %10s %10s %8s" % ("command", "median ms", "mean ms", "ratio"))
for name, median, mean in rows:
    print("%-38s %10.3f %10.3f %7.2fx" % (name, median, mean, median / base))
get = {n.split(" (")[0]: m for n, m, _ in rows}
print()
print("library / unshare floor: %.2f (target <= 1)" % (get["library"] / get["unshare"]))
print("sbx run / bwrap:         %.2f (target < 1)" % (get["sbx run"] / get["bwrap"]))
PY
