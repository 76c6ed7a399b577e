#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# What the view supervisor (the FUSE root of the rung-1 view, issue 29)
# costs, before and after in one run:
#
#  sbx run latency   `sbx run --no-pty -- /bin/true` of BUILD_DIR against the
#                    same of a build of BASE_REV (default: the last commit
#                    before the view supervisor, whose root was a tmpfs),
#                    and /bin/true plainly; interleaved (bench-startup: each
#                    round runs every command once, order rotated), median
#                    and minimum wall time and median CPU time
#  file-heavy build  zlib's ./configure, make and make check under `sbx run`
#                    of both builds, alternating, SBX_VIEW_BUILD_ROUNDS times
#                    each (default 3; 0 skips it); the source comes from
#                    `apt-get source zlib` (skipped with a note without a
#                    deb-src entry)
#
# BASE_REV is built from this repository's history into a scratch
# directory (no introspection, no tests), removed at the end.
#
# Usage: bench/run-view.sh [BUILD_DIR] [BASE_REV]
# Environment: SBX_BENCH_RUNS (default 300), SBX_BENCH_WARMUP (default 30),
#   SBX_VIEW_BUILD_ROUNDS.
# Run it on an idle host; the differences are what to compare.  Nothing
# here is a test: no timed assertion anywhere.
set -eu
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${1:-_build}
BASE_REV=${2:-65e9f67}
RUNS=${SBX_BENCH_RUNS:-300}
WARMUP=${SBX_BENCH_WARMUP:-30}
ROUNDS=${SBX_VIEW_BUILD_ROUNDS:-3}

case $BUILD in /*) ;; *) BUILD="$SRC/$BUILD" ;; esac
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" >/dev/null

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-view-XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT INT TERM
git -C "$SRC" archive --format=tar "$BASE_REV" | tar -C "$SCRATCH" -xf - --one-top-level=base
meson setup "$SCRATCH/base/_build" "$SCRATCH/base" -Dintrospection=disabled -Dtests=false \
  -Dman=disabled >/dev/null
ninja -C "$SCRATCH/base/_build" tools/sbx plugins/linux/sbx-plugin-linux.so >/dev/null
BASE="$SCRATCH/base/_build"

# The workspace: an empty directory (the default profile's workspace is
# the working directory).
WS="$SCRATCH/ws"
mkdir -p "$WS"
cd "$WS"
TRUE_BIN=$(command -v true)
[ -x /bin/true ] && TRUE_BIN=/bin/true

echo "sbx run latency, interleaved: $RUNS rounds after $WARMUP (load: $(cut -d' ' -f1-3 /proc/loadavg))"
"$BUILD/bench/bench-startup" "$RUNS" "$WARMUP" \
  plain "$TRUE_BIN" \
  before "/usr/bin/env SBX_PLUGIN_PATH=$BASE/plugins/linux LD_LIBRARY_PATH=$BASE/core $BASE/tools/sbx run --no-pty -- $TRUE_BIN" \
  after "/usr/bin/env SBX_PLUGIN_PATH=$BUILD/plugins/linux LD_LIBRARY_PATH=$BUILD/core $BUILD/tools/sbx run --no-pty -- $TRUE_BIN" \
  > "$SCRATCH/latency.txt"
python3 - "$SCRATCH/latency.txt" <<'EOF'
import sys
rows = {}
for line in open(sys.argv[1]):
    _, name, wall, cpu, wall_min = line.split()
    rows[name] = (float(wall), float(cpu), float(wall_min))
print("%-10s %12s %12s %12s" % ("", "median ms", "min ms", "CPU ms"))
for name in ("plain", "before", "after"):
    print("%-10s %12.3f %12.3f %12.3f" % ((name,) + (rows[name][0], rows[name][2], rows[name][1])))
b, a = rows["before"], rows["after"]
print("after - before: median %+.3f ms, min %+.3f ms, CPU %+.3f ms" % (a[0] - b[0], a[2] - b[2], a[1] - b[1]))
EOF

now_ms () { date +%s%N | cut -c1-13; }

if [ "$ROUNDS" -gt 0 ]; then
  # zlib's source as Debian ships it (the newest version the mirror serves)
  mkdir -p "$SCRATCH/pkg"
  for v in $(apt-cache showsrc zlib 2>/dev/null | sed -n 's/^Version: //p'); do
    (cd "$SCRATCH/pkg" && apt-get source -qq --download-only "zlib=$v" >/dev/null 2>&1) && break
    rm -f "$SCRATCH"/pkg/zlib_*
  done
  if [ -z "$(ls "$SCRATCH"/pkg/zlib_*.dsc 2>/dev/null)" ] \
     || ! (cd "$SCRATCH/pkg" && dpkg-source -x --no-check ./zlib_*.dsc zlib >/dev/null 2>&1); then
    echo "zlib build: skipped (apt-get source zlib failed: no deb-src entry?)"
    exit 0
  fi
  echo "zlib ./configure && make -j2 && make check under sbx run, $ROUNDS rounds each, alternating"
  for r in $(seq "$ROUNDS"); do
    for which in before after; do
      if [ "$which" = before ]; then B=$BASE; else B=$BUILD; fi
      rm -rf "$WS/zlib"
      cp -a "$SCRATCH/pkg/zlib" "$WS/zlib"
      start=$(now_ms)
      (cd "$WS/zlib" && SBX_PLUGIN_PATH="$B/plugins/linux" LD_LIBRARY_PATH="$B/core" \
        "$B/tools/sbx" run --no-pty -- sh -c './configure >/dev/null && make -j2 >/dev/null && make check >/dev/null')
      echo "$which $(( $(now_ms) - start ))" >> "$SCRATCH/zlib.txt"
    done
  done
  python3 - "$SCRATCH/zlib.txt" <<'EOF'
import sys, statistics
t = {"before": [], "after": []}
for line in open(sys.argv[1]):
    k, v = line.split()
    t[k].append(float(v) / 1000)
for k in ("before", "after"):
    print("%-10s %s s (median %.2f)" % (k, " ".join("%.2f" % x for x in t[k]), statistics.median(t[k])))
print("after / before (medians): %.3f" % (statistics.median(t["after"]) / statistics.median(t["before"])))
EOF
fi
