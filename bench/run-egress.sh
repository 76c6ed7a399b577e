#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Egress tunnel cost, in one run, as ratios against direct loopback:
#   connect latency  fresh connection + 1-byte round trip, median
#                    (goal: tunnel <= 1.5x direct)
#   throughput       bytes through one connection until the server has
#                    counted them, best of 3 (goal: tunnel >= 0.9x direct)
# Both sides are measured in the same process, interleaved, against the same
# loopback servers; the tunnel goes through the http-connect proxy engine
# (plugins/egress-http, direct route, one authorized execution).
#
# Usage: bench/run-egress.sh [BUILD_DIR]   (default _build; builds it if needed)
# Environment: SBX_BENCH_RUNS (default 300), SBX_BENCH_WARMUP (default 30),
#   SBX_BENCH_MEGABYTES (default 512).
# Numbers depend on the machine and its load: run it on an idle host; the
# ratios are what to compare.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-_build}
RUNS=${SBX_BENCH_RUNS:-300}
WARMUP=${SBX_BENCH_WARMUP:-30}
MEGABYTES=${SBX_BENCH_MEGABYTES:-512}

if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" >/dev/null
fi
ninja -C "$BUILD" >/dev/null
BENCH="$BUILD/bench/bench-egress"
[ -x "$BENCH" ] || { echo "bench: $BENCH is missing (egress-http-connect disabled?)"; exit 1; }

echo "sbx egress benchmark: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$BENCH" --runs "$RUNS" --warmup "$WARMUP" --megabytes "$MEGABYTES"
