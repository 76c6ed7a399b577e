#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# What the view supervisor (the FUSE root of the rung-1 view, issue 29)
# costs, with and without it in one run, on one build: "tmpfs" runs sbx in
# a mount namespace where /dev/fuse is /dev/null (the probe cannot mount
# FUSE, so the spawn keeps the tmpfs root, as a host without FUSE does, and
# its report says denials are not observed), "fuse" in one where an
# unrelated scratch file is (the same wrapper, the same cost), so the
# difference is the view supervisor's alone:
#
#  sbx run latency   `sbx run --no-pty -- /bin/true`, tmpfs against fuse
#                    and /bin/true plainly; interleaved (bench-startup: each
#                    round runs every command once, order rotated), median
#                    and minimum wall time and median CPU time
#  file-heavy build  zlib's ./configure, make and make check under `sbx run`,
#                    tmpfs and fuse alternating, SBX_VIEW_BUILD_ROUNDS times
#                    each (default 3; 0 skips it); the source comes from
#                    `apt-get source zlib` (skipped with a note without a
#                    deb-src entry)
#
# Root only (the wrappers make mount namespaces).
# Usage: bench/run-view.sh [BUILD_DIR]
# Environment: SBX_BENCH_RUNS (default 300), SBX_BENCH_WARMUP (default 30),
#   SBX_VIEW_BUILD_ROUNDS.
# Run it on an idle host; the differences are what to compare.  Nothing
# here is a test: no timed assertion anywhere.
set -eu
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${1:-_build}
RUNS=${SBX_BENCH_RUNS:-300}
WARMUP=${SBX_BENCH_WARMUP:-30}
ROUNDS=${SBX_VIEW_BUILD_ROUNDS:-3}

if [ "$(id -u)" != 0 ]; then
  echo "bench/run-view.sh: skipped: it needs root (mount namespaces hide /dev/fuse)"
  exit 0
fi
case $BUILD in /*) ;; *) BUILD="$SRC/$BUILD" ;; esac
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" >/dev/null

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-view-XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT INT TERM
: > "$SCRATCH/unrelated"
# wrap.sh FILE ARGS...: `sbx run ARGS...` in a mount namespace with
# /dev/null bound over FILE.
cat > "$SCRATCH/wrap.sh" <<EOF
#!/bin/sh
f=\$1; shift
exec unshare -m --propagation private /bin/sh -c 'mount --bind /dev/null "\$0" && exec "\$@"' "\$f" \\
  env SBX_PLUGIN_PATH="$BUILD/plugins/linux" LD_LIBRARY_PATH="$BUILD/core" "$BUILD/tools/sbx" run "\$@"
EOF
chmod +x "$SCRATCH/wrap.sh"

# The workspace: an empty directory (the default profile's workspace is
# the working directory).
WS="$SCRATCH/ws"
mkdir -p "$WS"
cd "$WS"
TRUE_BIN=$(command -v true)
[ -x /bin/true ] && TRUE_BIN=/bin/true

# Each wrapper does what it says: the report names the root it got.
"$SCRATCH/wrap.sh" /dev/fuse --no-pty --report=json -- "$TRUE_BIN" >/dev/null 2>"$SCRATCH/tmpfs.report" || true
"$SCRATCH/wrap.sh" "$SCRATCH/unrelated" --no-pty --report=json -- "$TRUE_BIN" >/dev/null 2>"$SCRATCH/fuse.report" || true
if ! grep -q "answered by the view supervisor" "$SCRATCH/fuse.report" \
   || grep -q "answered by the view supervisor" "$SCRATCH/tmpfs.report"; then
  echo "bench/run-view.sh: the view supervisor is not available here (or could not be hidden):"
  grep -o '"detail" *: *"[^"]*FUSE[^"]*"' "$SCRATCH/fuse.report" "$SCRATCH/tmpfs.report" || true
  exit 1
fi

echo "sbx run latency, interleaved: $RUNS rounds after $WARMUP (load: $(cut -d' ' -f1-3 /proc/loadavg))"
"$BUILD/bench/bench-startup" "$RUNS" "$WARMUP" \
  plain "$TRUE_BIN" \
  tmpfs "$SCRATCH/wrap.sh /dev/fuse --no-pty -- $TRUE_BIN" \
  fuse "$SCRATCH/wrap.sh $SCRATCH/unrelated --no-pty -- $TRUE_BIN" \
  > "$SCRATCH/latency.txt"
python3 - "$SCRATCH/latency.txt" <<'EOF'
import sys
rows = {}
for line in open(sys.argv[1]):
    _, name, wall, cpu, wall_min = line.split()
    rows[name] = (float(wall), float(cpu), float(wall_min))
print("%-10s %12s %12s %12s" % ("", "median ms", "min ms", "CPU ms"))
for name in ("plain", "tmpfs", "fuse"):
    print("%-10s %12.3f %12.3f %12.3f" % ((name,) + (rows[name][0], rows[name][2], rows[name][1])))
b, a = rows["tmpfs"], rows["fuse"]
print("fuse - tmpfs: median %+.3f ms, min %+.3f ms, CPU %+.3f ms" % (a[0] - b[0], a[2] - b[2], a[1] - b[1]))
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
    for which in tmpfs fuse; do
      if [ "$which" = tmpfs ]; then hide=/dev/fuse; else hide="$SCRATCH/unrelated"; fi
      rm -rf "$WS/zlib"
      cp -a "$SCRATCH/pkg/zlib" "$WS/zlib"
      start=$(now_ms)
      (cd "$WS/zlib" && "$SCRATCH/wrap.sh" "$hide" --no-pty -- /bin/sh -c \
        './configure >/dev/null && make -j2 >/dev/null && make check >/dev/null')
      echo "$which $(( $(now_ms) - start ))" >> "$SCRATCH/zlib.txt"
    done
  done
  python3 - "$SCRATCH/zlib.txt" <<'EOF'
import sys, statistics
t = {"tmpfs": [], "fuse": []}
for line in open(sys.argv[1]):
    k, v = line.split()
    t[k].append(float(v) / 1000)
for k in ("tmpfs", "fuse"):
    print("%-10s %s s (median %.2f)" % (k, " ".join("%.2f" % x for x in t[k]), statistics.median(t[k])))
print("fuse / tmpfs (medians): %.3f" % (statistics.median(t["fuse"]) / statistics.median(t["tmpfs"])))
EOF
fi
