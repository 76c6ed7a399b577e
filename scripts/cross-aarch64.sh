#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Cross-builds sbx (core, the Linux plugin with its aarch64 seccomp tables
# and init, the darwin and win32 compilers, the tests) for aarch64 and runs
# the unit tests that need no namespaces under qemu-user, as TAP on stdout.
#
#   scripts/cross-aarch64.sh BUILDDIR
#
# Under qemu-user a test program's system calls are qemu's own on the host:
# namespaces, Landlock and seccomp cannot be exercised (qemu refuses to
# install seccomp filters, and anything it did install would filter qemu).
# So only these run: the ABI layout, guarantees, paths, fingerprints,
# profiles (parse, JSON, restrict), the policy compiler, the SBPL compiler,
# the win32 plan, and the seccomp program VERDICTS (the tests' BPF
# interpreter run over the aarch64 program: /seccomp/exact/* and
# /seccomp/program/*, not /seccomp/live/*), with libseccomp told the API
# level of a current kernel (it cannot probe one through qemu).  GTest
# subprocess cases are skipped (see below).
set -eu

build=${1:?usage: cross-aarch64.sh BUILDDIR}
src=$(cd "$(dirname "$0")/.." && pwd)

for tool in aarch64-linux-gnu-gcc qemu-aarch64-static; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "cross-aarch64: $tool not found. Hint: apt-get install gcc-aarch64-linux-gnu qemu-user-static" >&2
    exit 1
  }
done
PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config --exists glib-2.0 json-glib-1.0 libseccomp || {
  echo "cross-aarch64: arm64 libraries missing. Hint: dpkg --add-architecture arm64 && apt-get update &&" \
       "apt-get install libglib2.0-dev:arm64 libjson-glib-dev:arm64 libseccomp-dev:arm64" >&2
  exit 1
}

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --cross-file "$src/scripts/cross/aarch64-linux-gnu.ini" \
    -Dintrospection=disabled -Ddocumentation=false -Dfuzzing=false >"$build.setup.log" 2>&1 || {
    cat "$build.setup.log" >&2; exit 1; }
fi
ninja -C "$build" >"$build.ninja.log" 2>&1 || { tail -40 "$build.ninja.log" >&2; exit 1; }

# The binaries really are aarch64.
file "$build/plugins/linux/sbx-plugin-linux.so" | grep -q 'ARM aarch64' || {
  echo "cross-aarch64: the Linux plugin is not an aarch64 object" >&2; exit 1; }
file "$build/tools/sbx" | grep -q 'ARM aarch64' || {
  echo "cross-aarch64: sbx is not an aarch64 program" >&2; exit 1; }
echo "ok - aarch64 cross build: sbx, libsbx-1 and sbx-plugin-linux.so are aarch64 objects"

# A private TMPDIR, removed afterwards, so nothing a test run under qemu
# leaves (a case that aborts keeps its fixture) reaches the caller's.
rm -rf "$build/tmp"
mkdir -p "$build/tmp"
export TMPDIR="$build/tmp"
export G_TEST_SRCDIR="$src/tests" G_TEST_BUILDDIR="$build/tests" G_DEBUG=gc-friendly,fatal-criticals
export SBX_PLUGIN_PATH=/dev/null XDG_CONFIG_HOME=/dev/null SBX_TEST_SRCDIR="$src/tests"
status=0
run () {
  name=$1; shift
  echo "# $name"
  # Each case line is prefixed with the binary's name, so counts stay
  # per case and failures say where they came from.
  if qemu-aarch64-static "$build/tests/$name" "$@" >"$build/$name.tap" 2>"$build/$name.err"; then :; else
    status=1
    echo "not ok - $name exited with failure under qemu-user:"; tail -20 "$build/$name.err"
  fi
  grep -E '^(not )?ok ' "$build/$name.tap" | sed "s|^\(\(not \)\{0,1\}ok [0-9]*\)|\1 $name:|"
}
run test-abi-layout
# GTest subprocess cases re-exec the test binary, which needs binfmt_misc
# for qemu (absent in containers): they are skipped here, named, and run in
# every native phase.
for t in guarantees path fingerprint profile profile-restrict policy; do
  run "test-$t" --tap
done
run test-profile-json --tap -s /profile/json/default-profile/removed-cwd
run test-sbpl --tap -s /sbpl/reader/detects-unconditional-allow
run test-win32
SBX_TEST_SECCOMP_API_LEVEL=6 run test-seccomp --tap -p /seccomp/exact/default-program -p /seccomp/exact/arch-guards \
  -p /seccomp/exact/socket-matrix -p /seccomp/program/reports-and-bits
# The aarch64 seccomp table (generated under qemu at build time) against a
# run-time generation.
SBX_TEST_SECCOMP_API_LEVEL=6 run test-seccomp-table --tap
rm -rf "$build/tmp"
exit $status
