#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's test command.  On a fresh Debian 12 machine it installs the
# dependencies, then runs the whole suite:
#   1. gcc build, every test, as the invoking user (root in CI);
#   2. the same suite as an unprivileged user (created if needed), from a copy
#      of the tree that user owns — root hides bugs (DAC override, mount
#      without a user namespace);
#   3. an AddressSanitizer + UndefinedBehaviorSanitizer build, every test;
#   4. the libFuzzer targets for a bounded time (clang), when built;
#   5. the Debian packages built, linted, installed, used as root and as the
#      unprivileged user, and purged (scripts/test-package.sh);
#   6. win32: the win32-restricted backend cross-built with mingw-w64 from
#      the ABI header alone, its tests run under wine64 (scripts/build-win32.sh);
#   7. aarch64: the Linux plugin and the core cross-built for aarch64
#      (Debian's cross toolchain and arm64 multiarch libraries), the unit
#      tests that need no namespaces run under qemu-user (scripts/cross-aarch64.sh).
# The last line is "N passed, N failed" counting test cases over all phases.
#
# Environment: SBX_TEST_USER (unprivileged user, default sbx-ci),
# SBX_FUZZ_SECONDS (default 60), SBX_SKIP_APT=1, SBX_TEST_PHASES (default
# "root unpriv asan fuzz package win32 aarch64").  SBX_TEST_OWN_TMP is
# test.sh's own (set when it re-executes itself in its mount namespace).
set -u
cd "$(dirname "$0")/.."
SRC=$(pwd)

if [ "${SBX_TEST_OWN_TMP:-0}" != 1 ]; then
  ./scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
fi

# As root: the rest runs in a mount namespace of its own, whose /tmp and
# /var/tmp each phase replaces with fresh mounts (see the leftover check
# below).  Mount events stay inside it (private propagation).
if [ "$(id -u)" -eq 0 ] && [ "${SBX_TEST_OWN_TMP:-0}" != 1 ]; then
  exec unshare --mount --propagation private env SBX_TEST_OWN_TMP=1 sh "$SRC/scripts/test.sh" "$@"
fi
# A source tree under /tmp or /var/tmp (a clone in /tmp) would vanish under
# the phases' private /tmp: in the namespace it is seen at /mnt/sbx-src
# instead (a tmpfs of the namespace on /mnt holds the mountpoint), and the
# suite runs from there.
if [ "${SBX_TEST_OWN_TMP:-0}" = 1 ]; then
  case $SRC/ in
    /tmp/*|/var/tmp/*)
      if mount -t tmpfs -o mode=0755 sbx-suite-src /mnt && mkdir /mnt/sbx-src \
         && mount --bind "$SRC" /mnt/sbx-src; then
        SRC=/mnt/sbx-src
        cd "$SRC" || exit 1
      fi
      ;;
  esac
fi

PHASES=${SBX_TEST_PHASES:-"root unpriv asan fuzz package win32 aarch64"}
FUZZ_SECONDS=${SBX_FUZZ_SECONDS:-60}
TEST_USER=${SBX_TEST_USER:-sbx-ci}
LOGS=""
EXTRA_PASSED=0
EXTRA_FAILED=0
STATUS=0

note () { printf '\n=== %s\n' "$*"; }

# meson test with output shown on failure; appends the testlog to LOGS.
run_suite () {
  build=$1; shift
  if meson test -C "$build" --print-errorlogs --num-processes 2 "$@"; then :; else STATUS=1; fi
  if [ -f "$build/meson-logs/testlog.json" ]; then
    LOGS="$LOGS $build/meson-logs/testlog.json"
  else
    EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
  fi
}

build_or_fail () {
  build=$1; shift
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$@" || return 1
  fi
  ninja -C "$build"
}

# Nothing may be left behind by the suite, and nothing another user of the
# machine does may fail it.  Each phase runs with a private TMPDIR (tests,
# GLib's isolated dirs and sbx's default scratch all live under it) that
# must end empty.  Only a few tests write outside TMPDIR on purpose (a
# scratch root under /var/tmp, which must not lie under /tmp).
#
# As root, the whole suite runs in a mount namespace of its own (test.sh
# re-executes itself under unshare at the top) and every phase gets fresh
# directories bound on /tmp and /var/tmp: only the suite's own processes can
# write there, so each must end empty (every entry counts, not only sbx's
# names), and a phase whose processes still hold one (a process left
# running) fails too.  Another user's `sbx run` meanwhile writes the
# machine's /tmp, which this check never reads.  A directory that holds the
# source tree itself (a clone in /tmp) cannot be covered: it is checked
# like the unprivileged case below.
#
# Without root there is no mount namespace to make: the machine's /tmp and
# /var/tmp are checked for the names sbx creates there (executor-set
# scratch, the Linux backend's fallback roots and init copies, the tests'
# own), new since the phase began AND owned by the invoking user, so other
# users' runs cannot fail the suite.
OWN_TMP=${SBX_TEST_OWN_TMP:-0}
PRIVATE_DIRS=""          # bound privately for the phase: every entry counts
LISTED_DIRS=""           # checked by sbx's names and the invoking user
TMP_SNAPSHOT="$SRC/_build-tmp-snapshot"   # outside every checked directory
SUITE_TMP=""
PHASE_TMP=""
tmp_listing () {
  for dir in "$@"; do
    find "$dir" -mindepth 1 -maxdepth 1 -user "$(id -u)" -printf "$dir/%f\n" 2>/dev/null
  done | while read -r entry; do
    case ${entry##*/} in sandbox-executors-*|sbx-linux-root-*|sbx-init-*|sbx-ws-*|sbx-test-*) echo "$entry" ;; esac
  done | sort
}
tmp_snapshot () {
  PRIVATE_DIRS=""
  LISTED_DIRS=""
  if [ "$OWN_TMP" = 1 ]; then
    # Fresh directories of the machine's own /tmp file system (so the
    # suite sees the same kind of /tmp as before), bound in the suite's
    # namespace only; /var/tmp first: once /tmp is covered, $SUITE_TMP is
    # out of sight.
    SUITE_TMP=$(mktemp -d /tmp/sbx-suite.XXXXXX)
    for dir in /var/tmp /tmp; do
      case $SRC/ in
        "$dir"/*) LISTED_DIRS="$LISTED_DIRS $dir"; continue ;;
      esac
      fresh="$SUITE_TMP/$(echo "${dir#/}" | tr / -)"
      mkdir "$fresh"; chmod 1777 "$fresh"
      if mount --bind "$fresh" "$dir"; then
        PRIVATE_DIRS="$PRIVATE_DIRS $dir"
      else
        echo "not ok - phase $1: cannot bind a private $dir"
        EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
        LISTED_DIRS="$LISTED_DIRS $dir"
      fi
    done
  else
    LISTED_DIRS="/tmp /var/tmp"
  fi
  # shellcheck disable=SC2086
  [ -z "$LISTED_DIRS" ] || tmp_listing $LISTED_DIRS > "$TMP_SNAPSHOT"
  PHASE_TMP=$(mktemp -d /tmp/sbx-phase.XXXXXX)
  chmod 0777 "$PHASE_TMP"; chmod +t "$PHASE_TMP"   # the unprivileged phase writes here too
  export TMPDIR="$PHASE_TMP"
}
tmp_check () {
  unset TMPDIR
  inside=$(cd "$PHASE_TMP" && find . -mindepth 1 -maxdepth 2 2>/dev/null | sed 's|^\./||' | sort)
  rm -rf "$PHASE_TMP"
  left=$(for dir in $PRIVATE_DIRS; do find "$dir" -mindepth 1 -maxdepth 1 -printf "$dir/%f\n"; done
         # shellcheck disable=SC2086
         [ -z "$LISTED_DIRS" ] || tmp_listing $LISTED_DIRS | comm -13 "$TMP_SNAPSHOT" -)
  rm -f "$TMP_SNAPSHOT"
  busy=""
  for dir in $PRIVATE_DIRS; do
    if ! umount "$dir" 2>/dev/null; then
      busy="$busy $dir"
      umount -l "$dir"
    fi
  done
  if [ -n "$SUITE_TMP" ]; then rm -rf "$SUITE_TMP"; SUITE_TMP=""; fi
  if [ -n "$left" ] || [ -n "$inside" ] || [ -n "$busy" ]; then
    echo "not ok - phase $1 left entries behind:"
    [ -n "$left" ] && echo "$left" | sed 's|^|#   /tmp or /var/tmp: |'
    [ -n "$inside" ] && echo "$inside" | sed 's|^|#   its TMPDIR: |'
    [ -n "$busy" ] && echo "#   still in use by a process of the phase:$busy"
    EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
  else
    what="its TMPDIR is empty"
    [ -z "$PRIVATE_DIRS" ] || what="$what; its private$PRIVATE_DIRS empty and unused"
    [ -z "$LISTED_DIRS" ] || what="$what; no new sbx names of $(id -un) in$LISTED_DIRS"
    echo "ok - phase $1 left nothing behind ($what)"
    EXTRA_PASSED=$((EXTRA_PASSED + 1))
  fi
}

for phase in $PHASES; do
  tmp_snapshot "$phase"
  case $phase in
    root)
      note "phase 1: gcc build, tests as $(id -un)"
      if build_or_fail _build; then run_suite _build; else EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1; fi
      ;;
    unpriv)
      if [ "$(id -u)" -ne 0 ]; then
        note "phase 2: already unprivileged ($(id -un)); phase 1 covered it"
        tmp_check "$phase"; continue
      fi
      note "phase 2: tests as unprivileged user $TEST_USER"
      if ! id "$TEST_USER" >/dev/null 2>&1; then
        useradd --create-home --shell /bin/sh "$TEST_USER" || { EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1; tmp_check "$phase"; continue; }
      fi
      UHOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
      UDIR=$(mktemp -d /tmp/sbx-unpriv.XXXXXX)
      # A copy of the working tree (not only what git tracks, so uncommitted
      # work is tested too), owned by the user; build trees are not copied.
      tar -C "$SRC" --exclude='./_build*' --exclude='./.git' -cf - . | tar -C "$UDIR" -xf -
      chown -R "$TEST_USER" "$UDIR"
      chmod 0755 "$UDIR"
      if runuser -u "$TEST_USER" -- env -i HOME="$UHOME" TMPDIR="$PHASE_TMP" PATH="/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 \
           sh -c "cd '$UDIR' && meson setup _build >/dev/null && ninja -C _build >/dev/null"; then
        if runuser -u "$TEST_USER" -- env -i HOME="$UHOME" TMPDIR="$PHASE_TMP" PATH="/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 \
             sh -c "cd '$UDIR' && meson test -C _build --print-errorlogs --num-processes 2"; then :; else STATUS=1; fi
        if [ -f "$UDIR/_build/meson-logs/testlog.json" ]; then
          cp "$UDIR/_build/meson-logs/testlog.json" "_build-unpriv-testlog.json"
          LOGS="$LOGS _build-unpriv-testlog.json"
        else
          EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
        fi
      else
        echo "unprivileged build failed"; EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
      fi
      rm -rf "$UDIR"
      ;;
    asan)
      note "phase 3: AddressSanitizer + UndefinedBehaviorSanitizer"
      # b_lundef=false: plugins are shared modules whose sanitizer symbols come
      # from the executable.
      if build_or_fail _build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug; then
        ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:fast_unwind_on_malloc=0" \
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
        LSAN_OPTIONS="suppressions=$SRC/tests/lsan.supp:print_suppressions=0" \
          run_suite _build-asan
      else
        EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
      fi
      ;;
    fuzz)
      if ! command -v clang >/dev/null 2>&1; then
        note "phase 4: clang not available, fuzzing skipped"
        tmp_check "$phase"; continue
      fi
      note "phase 4: libFuzzer targets, ${FUZZ_SECONDS}s each"
      if CC=clang build_or_fail _build-fuzz -Dfuzzing=true -Db_lundef=false -Dintrospection=disabled; then
        for fuzzer in _build-fuzz/tests/fuzz/fuzz-*; do
          [ -f "$fuzzer" ] && [ -x "$fuzzer" ] || continue   # skip meson's .p directories
          name=$(basename "$fuzzer")
          corpus=$(mktemp -d /tmp/sbx-corpus.XXXXXX)
          cp "$SRC"/data/profiles/*.json "$SRC"/tests/fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null || true
          if ASAN_OPTIONS="detect_leaks=1" "$fuzzer" -max_total_time="$FUZZ_SECONDS" -timeout=10 \
               -rss_limit_mb=2048 -artifact_prefix="_build-fuzz/$name-" "$corpus" >"_build-fuzz/$name.log" 2>&1; then
            echo "ok - $name ran ${FUZZ_SECONDS}s without a crash or leak"
            EXTRA_PASSED=$((EXTRA_PASSED + 1))
          else
            echo "not ok - $name found a problem:"; tail -40 "_build-fuzz/$name.log"
            EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
          fi
          rm -rf "$corpus"
        done
      else
        EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
      fi
      ;;
    package)
      note "phase 5: Debian packages: build, lintian, install, run as root and $TEST_USER, purge"
      # Each "ok - "/"not ok - " line of the script is one test case.
      if ./scripts/test-package.sh "$TEST_USER" >_build-package.log 2>&1; then pkg_status=0; else pkg_status=1; fi
      cat _build-package.log
      EXTRA_PASSED=$((EXTRA_PASSED + $(grep -c '^ok - ' _build-package.log)))
      pkg_failed=$(grep -c '^not ok - ' _build-package.log)
      # A script that failed without saying which check did is one failure.
      if [ "$pkg_failed" -eq 0 ] && [ "$pkg_status" -ne 0 ]; then pkg_failed=1; fi
      EXTRA_FAILED=$((EXTRA_FAILED + pkg_failed))
      [ "$pkg_failed" -eq 0 ] || STATUS=1
      ;;
    win32|aarch64)
      # TAP from a cross build run under wine or qemu-user: each "ok" and
      # "not ok" line counts (a SKIP is a pass that says why, as in meson).
      if [ "$phase" = win32 ]; then
        note "phase 6: win32-restricted cross-built with mingw-w64, tests under wine64"
        cmd="./scripts/build-win32.sh _build-win32 --run"
      else
        note "phase 7: aarch64 cross build, namespace-free unit tests under qemu-user"
        cmd="./scripts/cross-aarch64.sh _build-aarch64"
      fi
      started=$(date +%s)
      if $cmd > "_build-$phase.tap" 2>&1; then phase_ok=1; else phase_ok=0; fi
      grep -E '^(not )?ok |# SKIP|^Bail out' "_build-$phase.tap" || true
      p=$(grep -cE '^ok ' "_build-$phase.tap" || true)
      f=$(grep -cE '^not ok |^Bail out' "_build-$phase.tap" || true)
      EXTRA_PASSED=$((EXTRA_PASSED + p)); EXTRA_FAILED=$((EXTRA_FAILED + f))
      if [ "$phase_ok" -ne 1 ] || [ "$p" -eq 0 ]; then
        echo "not ok - phase $phase failed:"; tail -30 "_build-$phase.tap"
        EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
      fi
      echo "# phase $phase took $(( $(date +%s) - started ))s"
      ;;
    *)
      echo "unknown phase $phase"; EXTRA_FAILED=$((EXTRA_FAILED + 1)); STATUS=1
      ;;
  esac
  tmp_check "$phase"
done

note "summary"
# shellcheck disable=SC2086
set -- $(python3 scripts/count-tap.py $LOGS)
PASSED=$(( ${1:-0} + EXTRA_PASSED ))
FAILED=$(( ${2:-0} + EXTRA_FAILED ))
SKIPPED=${3:-0}
echo "($SKIPPED skipped)"
if [ "$PASSED" -eq 0 ]; then
  echo "no test ran: that is a failure"; FAILED=$((FAILED + 1)); STATUS=1
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ] && [ "$STATUS" -eq 0 ]
