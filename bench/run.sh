#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# sbx's costs as ratios, every one measured side by side in one run:
#
#  start-up (hyperfine, against bench-baseline: a bare GObject program that
#  links GIO and json-glib and prints a line)
#    sbx --version, sbx profile show --default, sbx doctor
#    the same interleaved (bench-startup), wall and CPU medians, and the
#    instruction counts of the first two (callgrind, when installed)
#  one sandboxed /bin/true (hyperfine, against running it plainly)
#    unshare -Urnmp --fork      the namespace floor
#    bwrap                      bubblewrap with confinement like sbx's rung 1
#    sbx run                    sbx run -- /bin/true, embedded default profile
#  the library (bench-spawn: one executor set, executors reused)
#    creation                   a new executor set and its first executor (the
#                               compile), 50 times
#    round trip                 sbx_executor_run() of /bin/true, call to return,
#                               against fork+exec+wait of it
#    exec latency               call to the moment the target runs (bench-stamp
#                               reads CLOCK_MONOTONIC), against fork+exec
#    throughput                 8 threads over 4 executors, against 8 threads
#                               doing fork+exec+wait
#    both rungs: linux-userns (level full) and linux-landlock (degraded)
#  one sbx run by phase (bench-phases: plugins, profile, select, compile,
#  run, close, in fresh processes; medians)
#
# Run as root, it measures as root and then, as the unprivileged user
# SBX_BENCH_USER (default sbx-ci, skipped with a note when it does not
# exist), everything again; the two tables print one after the other.
#
# Usage: bench/run.sh [BUILD_DIR]   (default _build; builds it if needed)
# Environment: SBX_BENCH_RUNS (default 300), SBX_BENCH_WARMUP (default 30),
#   SBX_BENCH_USER, SBX_BENCH_AS_USER (internal: set for the second pass).
# Needs hyperfine, bwrap, unshare and python3 (scripts/setup.sh installs
# them).  Numbers depend on the machine and its load: run it on an idle host;
# the ratios are what to compare.  Nothing here is a test: no timed
# assertion anywhere.
set -eu
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${1:-_build}
RUNS=${SBX_BENCH_RUNS:-300}
WARMUP=${SBX_BENCH_WARMUP:-30}
BENCH_USER=${SBX_BENCH_USER:-sbx-ci}

if [ -z "${SBX_BENCH_AS_USER:-}" ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" >/dev/null
  fi
  ninja -C "$BUILD" >/dev/null
fi
case $BUILD in /*) ;; *) BUILD="$SRC/$BUILD" ;; esac

SBX="$BUILD/tools/sbx"
BENCH="$BUILD/bench/bench-spawn"
BASELINE="$BUILD/bench/bench-baseline"
PLUGINS="$BUILD/plugins/linux"
TRUE_BIN=$(command -v true)
[ -x /bin/true ] && TRUE_BIN=/bin/true

for tool in hyperfine bwrap unshare python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "bench: $tool is missing (scripts/setup.sh installs it)"; exit 1; }
done

WS=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-ws.XXXXXX")
OUT=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-out.XXXXXX")
trap 'rm -rf "$WS" "$OUT"' EXIT INT TERM
chmod 0755 "$WS" "$OUT"
cd "$WS"
# The exec-latency target lives in the workspace: the sandbox sees it there.
cp "$BUILD/bench/bench-stamp" "$WS/bench-stamp"

# bubblewrap with confinement close to rung 1: all namespaces, a read-only
# runtime view, the workspace read/write, fresh /proc and /dev, a private
# /tmp, a new session, no capabilities.  (Its seccomp needs a compiled BPF
# program fd; without one bwrap loads none, and no Landlock: it does less.)
BWRAP="bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL \
 --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin \
 --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
 --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache --ro-bind-try /etc/passwd /etc/passwd \
 --ro-bind-try /etc/group /etc/group --ro-bind-try /etc/nsswitch.conf /etc/nsswitch.conf \
 --ro-bind-try /etc/hosts /etc/hosts --ro-bind-try /etc/resolv.conf /etc/resolv.conf \
 --proc /proc --dev /dev --tmpfs /tmp --bind $WS $WS --chdir $WS $TRUE_BIN"

echo "sbx benchmark as $(id -un): $RUNS runs per command, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
SBX_PLUGIN_PATH="$PLUGINS" hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style none \
  --export-json "$OUT/startup.json" \
  -n baseline "$BASELINE" \
  -n "sbx --version" "$SBX --version" \
  -n "sbx profile show" "$SBX profile show --default" \
  -n "sbx doctor" "$SBX doctor" >/dev/null 2>&1
# The same start-up commands interleaved (bench-startup: each round runs
# every command once, so load drift hits all alike), wall and CPU medians;
# and, with valgrind installed, their instruction counts (callgrind:
# deterministic, whatever the load).  Not doctor's: under valgrind its
# namespace probe fails, so the count would not be of the path it takes.
SBX_PLUGIN_PATH="$PLUGINS" "$BUILD/bench/bench-startup" "$RUNS" "$WARMUP" \
  baseline "$BASELINE" version "$SBX --version" show "$SBX profile show --default" doctor "$SBX doctor" \
  > "$OUT/startup-interleaved.txt"
: > "$OUT/instructions.txt"
if command -v valgrind >/dev/null 2>&1 && [ "${SBX_BENCH_CALLGRIND:-1}" != 0 ]; then
  for spec in "baseline $BASELINE" "version $SBX --version" "show $SBX profile show --default"; do
    set -- $spec
    name=$1
    shift
    count=$(SBX_PLUGIN_PATH="$PLUGINS" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null \
      | sed -n 's/.*Collected : //p' | tail -1)
    echo "$name $count" >> "$OUT/instructions.txt"
  done
fi
SBX_PLUGIN_PATH="$PLUGINS" hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style none \
  --export-json "$OUT/spawn.json" \
  -n plain "$TRUE_BIN" \
  -n unshare "unshare -Urnmp --fork $TRUE_BIN" \
  -n bwrap "$BWRAP" \
  -n "sbx run" "$SBX run -- $TRUE_BIN" >/dev/null 2>&1

"$BENCH" --runs "$RUNS" --warmup "$WARMUP" --create 50 --plugin-dir "$PLUGINS" --stamp "$WS/bench-stamp" \
  --threads 8 --executors 4 -- "$TRUE_BIN" > "$OUT/library.txt"
"$BENCH" --runs "$RUNS" --warmup "$WARMUP" --create 50 --plugin-dir "$PLUGINS" --backend linux-landlock \
  --stamp "$WS/bench-stamp" --threads 8 --executors 4 -- "$TRUE_BIN" > "$OUT/library-rung2.txt"

# One sbx run split into phases, in fresh processes (bench-phases).
PHASE_RUNS=$((RUNS / 5 > 10 ? RUNS / 5 : 10))
i=0
while [ $i -lt "$PHASE_RUNS" ]; do
  SBX_PLUGIN_PATH="$PLUGINS" "$BUILD/bench/bench-phases" "$TRUE_BIN" >> "$OUT/phases.txt"
  i=$((i + 1))
done

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]

def hf(name):
    return [(r["command"], r["median"] * 1000, r["mean"] * 1000)
            for r in json.load(open(out + "/" + name))["results"]]

def kv(name):
    d = {}
    for line in open(out + "/" + name):
        k, v = line.split()
        d[k] = v
    return d

def table(title, rows):
    base = rows[0][1]
    print("%-44s %10s %10s %8s" % (title, "median ms", "mean ms", "ratio"))
    for name, median, mean in rows:
        print("%-44s %10.3f %10.3f %7.2fx" % (name, median, mean, median / base))
    print()

startup = hf("startup.json")
spawn = hf("spawn.json")
table("start-up", startup)
inter = {}
for line in open(out + "/startup-interleaved.txt"):
    _, name, wall, cpu = line.split()[:4]
    inter[name] = (float(wall), float(cpu))
print("%-44s %10s %10s %8s %8s" % ("start-up, interleaved (bench-startup)", "wall ms", "CPU ms", "wall", "CPU"))
for name in ("baseline", "version", "show", "doctor"):
    wall, cpu = inter[name]
    print("%-44s %10.3f %10.3f %7.2fx %7.2fx" % (name, wall, cpu, wall / inter["baseline"][0], cpu / inter["baseline"][1]))
print()
counts = {}
for line in open(out + "/instructions.txt"):
    parts = line.split()
    if len(parts) == 2:
        counts[parts[0]] = int(parts[1].replace(",", ""))
if "baseline" in counts:
    print("%-44s %10s %8s" % ("start-up instructions (callgrind)", "M", "ratio"))
    for name in ("baseline", "version", "show"):
        if name in counts:
            print("%-44s %10.2f %7.2fx" % (name, counts[name] / 1e6, counts[name] / counts["baseline"]))
    print()
table("one sandboxed /bin/true", spawn)
get = {n: m for n, m, _ in spawn + startup}
lib = {}
for name in ("library.txt", "library-rung2.txt"):
    d = kv(name)
    label = "%s, %s" % (d["backend"], d["level"])
    lib[name] = d
    f = lambda k: float(d[k])
    print("  executor creation (new set + first executor, the compile): median %.3f ms, mean %.3f ms\n" % (
        f("library.create.median"), f("library.create.mean")))
    table("library (%s)" % label, [
        ("fork+exec+wait /bin/true", f("plain.roundtrip.median"), f("plain.roundtrip.mean")),
        ("sbx_executor_run /bin/true", f("library.roundtrip.median"), f("library.roundtrip.mean")),
        ("fork+exec: call to target running", f("plain.exec.median"), f("plain.exec.mean")),
        ("executor: call to target running", f("library.exec.median"), f("library.exec.mean")),
    ])
    print("  throughput, %s threads: %s executors %.0f spawns/s, plain fork+exec %.0f spawns/s (%.2fx)\n" % (
        d["threads"], d["executors"], f("library.throughput"), f("plain.throughput"),
        f("library.throughput") / f("plain.throughput")))

phases = {}
order = []
for line in open(out + "/phases.txt"):
    _, name, ms = line.split()
    if name not in phases:
        order.append(name)
    phases.setdefault(name, []).append(float(ms))
med = lambda xs: sorted(xs)[len(xs) // 2]
total = sum(med(phases[n]) for n in order)
print("one sbx run by phase (bench-phases, %d fresh processes, medians)" % len(phases[order[0]]))
for n in order:
    print("  %-10s %8.3f ms" % (n, med(phases[n])))
print("  %-10s %8.3f ms  (sbx run median minus the phases: exec, dynamic linking, GLib, options)" % (
    "start-up", get["sbx run"] - total))
print()

full = lib["library.txt"]
ratio = lambda a, b: a / b
print("ratios (goal in brackets)")
print("  sbx run / bwrap:                      %.2f  (<= 0.8)" % ratio(get["sbx run"], get["bwrap"]))
print("  sbx --version / baseline:             %.2f  (<= 1.2)" % ratio(get["sbx --version"], get["baseline"]))
print("  sbx profile show / baseline:          %.2f  (<= 1.2)" % ratio(get["sbx profile show"], get["baseline"]))
print("  sbx doctor / baseline:                %.2f  (<= 1.2)" % ratio(get["sbx doctor"], get["baseline"]))
print("  interleaved wall (CPU) / baseline:    --version %.2f (%.2f), profile show %.2f (%.2f), doctor %.2f (%.2f)" % tuple(
    inter[n][i] / inter["baseline"][i] for n in ("version", "show", "doctor") for i in (0, 1)))
if "baseline" in counts and "show" in counts:
    print("  instructions / baseline:              --version %.2f, profile show %.2f" % (
        counts["version"] / counts["baseline"], counts["show"] / counts["baseline"]))
print("  library exec latency / fork+exec:     %.2f  (<= 1.25, %s)" % (
    ratio(float(full["library.exec.median"]), float(full["plain.exec.median"])), full["level"]))
# The minimum of each side: on a loaded host the medians carry the
# scheduler's delays (a sandboxed spawn hands off between more processes
# than fork+exec), the minimums what the path itself costs.
print("  library exec latency / fork+exec, min: %.2f  (%s)" % (
    ratio(float(full["library.exec.min"]), float(full["plain.exec.min"])), full["level"]))
rung2 = lib["library-rung2.txt"]
print("  the same at %s: median %.2f, min %.2f" % (
    rung2["level"], ratio(float(rung2["library.exec.median"]), float(rung2["plain.exec.median"])),
    ratio(float(rung2["library.exec.min"]), float(rung2["plain.exec.min"]))))
print("  library round trip / fork+exec+wait:  %.2f" % ratio(
    float(full["library.roundtrip.median"]), float(full["plain.roundtrip.median"])))
print("  library round trip / unshare floor:   %.2f  (<= 1)" % ratio(
    float(full["library.roundtrip.median"]), get["unshare"]))
print("  throughput 8 threads, 4 executors / fork+exec: %.2f" % ratio(
    float(full["library.throughput"]), float(full["plain.throughput"])))
PY

# The unprivileged pass: the same script as SBX_BENCH_USER, on the same
# build (read-only for that user), with its own temporary directories.
if [ -z "${SBX_BENCH_AS_USER:-}" ] && [ "$(id -u)" -eq 0 ]; then
  echo
  if id "$BENCH_USER" >/dev/null 2>&1 && command -v runuser >/dev/null 2>&1; then
    UHOME=$(getent passwd "$BENCH_USER" | cut -d: -f6)
    runuser -u "$BENCH_USER" -- env -i HOME="$UHOME" PATH="$PATH" LANG="${LANG:-C.UTF-8}" \
      SBX_BENCH_RUNS="$RUNS" SBX_BENCH_WARMUP="$WARMUP" SBX_BENCH_AS_USER=1 \
      sh "$SRC/bench/run.sh" "$BUILD"
  else
    echo "bench: no unprivileged user $BENCH_USER (set SBX_BENCH_USER): unprivileged pass skipped"
  fi
fi
