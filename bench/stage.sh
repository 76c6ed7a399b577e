#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Staged runs (docs/staging.md): what staging costs.
#
#   bench/stage.sh [BUILD_DIR]      (default _build)
#
# 1. A file-heavy build: zlib's ./configure, make and make check (Debian's
#    source package, fetched once with apt-get source like compat.sh does for
#    git; without it, a generated project of SBX_BENCH_STAGE_FILES C files),
#    each round in a fresh copy of the sources, under `sbx run` unstaged and
#    `sbx run --stage` (then discarded), interleaved; the ratio of the
#    medians (goal <= 1.05).
# 2. Applying 10,000 changed files: a staged run rewrites 10,000 files of
#    the workspace, then `sbx stage apply` is timed.
#
# Environment: SBX_BENCH_RUNS (default 5), SBX_BENCH_STAGE_FILES (default
# 400), SBX_BENCH_DIR (work directory, default BUILD_DIR/bench-stage).
# Nothing here is a test: it prints figures; no assertion.
set -eu
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${1:-_build}
case $BUILD in /*) ;; *) BUILD="$SRC/$BUILD" ;; esac
RUNS=${SBX_BENCH_RUNS:-5}
NFILES=${SBX_BENCH_STAGE_FILES:-400}
WORK=${SBX_BENCH_DIR:-$BUILD/bench-stage}
SBX="$BUILD/tools/sbx"
export SBX_PLUGIN_PATH="$BUILD/plugins/linux"
export XDG_STATE_HOME="$WORK/state"
[ -x "$SBX" ] || { echo "no sbx in $BUILD (build it first)"; exit 1; }
rm -rf "$WORK/ws" "$WORK/state"
mkdir -p "$WORK"

now_ms () { date +%s%N | cut -c1-13; }
median () { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The sources: zlib when apt-get source can fetch it, else a generated project.
pristine="$WORK/src"
if [ ! -d "$pristine" ]; then
  mkdir -p "$WORK/pkg"
  # The newest source version the mirror still serves (a security update's
  # may be listed but gone).
  if [ -z "$(ls "$WORK"/pkg/zlib_*.dsc 2>/dev/null)" ]; then
    for v in $(apt-cache showsrc zlib 2>/dev/null | sed -n 's/^Version: //p'); do
      (cd "$WORK/pkg" && apt-get source -qq --download-only "zlib=$v" >/dev/null 2>&1) && break
      rm -f "$WORK"/pkg/zlib_*
    done
  fi
  if [ -n "$(ls "$WORK"/pkg/zlib_*.dsc 2>/dev/null)" ] \
     && (cd "$WORK/pkg" && rm -rf zlib && dpkg-source -x --no-check ./zlib_*.dsc zlib >/dev/null 2>&1); then
    mv "$WORK/pkg/zlib" "$pristine"
    BUILD_CMD='./configure >/dev/null && make -j2 >/dev/null && make check >/dev/null'
    echo "$BUILD_CMD" > "$WORK/build-cmd"
  else
    mkdir -p "$pristine"
    i=0
    while [ $i -lt "$NFILES" ]; do
      printf 'int f%d (int x) { return x * %d + 1; }\n' $i $i > "$pristine/f$i.c"
      i=$((i + 1))
    done
    printf 'int main (void) { return 0; }\n' > "$pristine/main.c"
    printf 'SRCS := $(wildcard *.c)\nprog: $(SRCS:.c=.o)\n\t$(CC) -o $@ $^\ncheck: prog\n\t./prog\n' > "$pristine/Makefile"
    echo 'make -j2 >/dev/null && make check >/dev/null' > "$WORK/build-cmd"
  fi
fi
BUILD_CMD=$(cat "$WORK/build-cmd")
echo "== file-heavy build: $BUILD_CMD ($(find "$pristine" -type f | wc -l) files), $RUNS rounds, as $(id -un)"

: > "$WORK/plain.ms"; : > "$WORK/staged.ms"
r=0
while [ $r -lt "$RUNS" ]; do
  for mode in plain staged; do
    rm -rf "$WORK/ws"; cp -a "$pristine" "$WORK/ws"
    flag=; [ $mode = staged ] && flag=--stage
    t0=$(now_ms)
    (cd "$WORK/ws" && "$SBX" run $flag -- sh -c "$BUILD_CMD" 2>"$WORK/$mode.err") \
      || { echo "$mode run failed:"; cat "$WORK/$mode.err"; exit 1; }
    t1=$(now_ms)
    echo $((t1 - t0)) >> "$WORK/$mode.ms"
    if [ $mode = staged ]; then
      for id in $("$SBX" stage list | cut -f1); do "$SBX" stage discard "$id" 2>/dev/null; done
    fi
  done
  r=$((r + 1))
done
plain=$(median < "$WORK/plain.ms"); staged=$(median < "$WORK/staged.ms")
echo "sbx run: median $plain ms; sbx run --stage: median $staged ms; ratio $(echo "$staged $plain" | awk '{ printf "%.3f", $1 / $2 }')"

echo "== apply of 10000 changed files"
rm -rf "$WORK/ws"; mkdir -p "$WORK/ws"
(cd "$WORK/ws" && i=0 && while [ $i -lt 100 ]; do mkdir d$i; j=0; while [ $j -lt 100 ]; do echo old > d$i/f$j; j=$((j + 1)); done; i=$((i + 1)); done)
(cd "$WORK/ws" && "$SBX" run --stage -- sh -c 'for f in d*/f*; do echo new > "$f"; done' 2>/dev/null)
id=$("$SBX" stage list | cut -f1)
t0=$(now_ms)
"$SBX" stage apply "$id" 2>/dev/null
t1=$(now_ms)
echo "sbx stage apply: $((t1 - t0)) ms for $(grep -l new "$WORK"/ws/d*/f* | wc -l) files"
rm -rf "$WORK/ws" "$WORK/state"
