#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Real programs' own test suites, run three ways on the same machine and
# compared case by case: outside any sandbox, inside bubblewrap with
# confinement like sbx's rung 1, and inside `sbx run` with the embedded
# default profile.  A difference between the last two is a program that
# bubblewrap runs and sbx breaks: it must be one the profile means (then the
# report says so) or it is a bug.  Results go to docs/compat.md by hand.
#
#   bench/compat.sh [BUILD_DIR] [python] [git]     (default: _build python git)
#
#   python   CPython's regression tests for the modules in PY_TESTS below
#            (Debian's libpython3.11-testsuite), `python3 -m test -j2` with a
#            JUnit file; counted per test case
#   git      git's own test scripts t0*, t1*, t3* from Debian's source
#            package, built once; counted per test script (a script fails
#            when one of its cases fails) and per case
#
# Environment: SBX_COMPAT_CONFIGS (default "outside bwrap sbx"),
#   SBX_COMPAT_PY_TESTS (a list of test modules instead of PY_TESTS),
#   SBX_COMPAT_GIT_TESTS (a glob list instead of "t0*.sh t1*.sh t3*.sh"),
#   SBX_COMPAT_DIR (work directory, default BUILD_DIR/compat).
# Run it as the unprivileged user the comparison is about (as root, the
# sandboxes' uid 0 hides permission failures).  It installs what it needs
# with apt-get only when run as root.  Nothing here is a test: it prints
# tables; no assertion.
set -eu
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=_build
case ${1:-} in python|git|"") ;; *) BUILD=$1; shift ;; esac
WHAT=${*:-python git}
case $BUILD in /*) ;; *) BUILD="$SRC/$BUILD" ;; esac
CONFIGS=${SBX_COMPAT_CONFIGS:-"outside bwrap sbx"}
WORK=${SBX_COMPAT_DIR:-$BUILD/compat}
SBX="$BUILD/tools/sbx"
PLUGINS="$BUILD/plugins/linux"
PY=/usr/bin/python3

# The CPython modules of the comparison: the process, socket, IPC, file
# system and concurrency parts of the library, where a sandbox shows.
PY_TESTS=${SBX_COMPAT_PY_TESTS:-"test_os test_subprocess test_socket test_asyncio
  test_multiprocessing_spawn test_multiprocessing_forkserver test_concurrent_futures
  test_logging test_pathlib test_shutil test_tempfile test_signal test_select
  test_selectors test_socketserver test_fcntl test_posix test_pty test_threading
  test_thread test_mmap test_io test_fileio test_glob test_stat test_pwd test_grp
  test_resource test_time test_sysconfig test_zipfile test_tarfile test_uuid
  test_platform"}
GIT_TESTS=${SBX_COMPAT_GIT_TESTS:-"t0*.sh t1*.sh t3*.sh"}

if [ "$(id -u)" -eq 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  case " $WHAT " in *" python "*)
    dpkg -s libpython3.11-testsuite >/dev/null 2>&1 || apt-get install -y -qq libpython3.11-testsuite >/dev/null ;;
  esac
fi
[ -x "$SBX" ] || { echo "no sbx in $BUILD (build it first)"; exit 1; }
mkdir -p "$WORK"

# One command line per configuration.  $1 is the workspace (the command's
# cwd, read-write), the rest the command.  bubblewrap gets what the
# issue's comparison gave it: every namespace, read-only /usr and /etc, fresh
# /proc, /dev and /tmp, the workspace read-write, a new session.
run_in () {
  config=$1; ws=$2; shift 2
  case $config in
    outside)
      (cd "$ws" && env HOME="$ws/home" TMPDIR=/tmp "$@") ;;
    bwrap)
      bwrap --unshare-all --die-with-parent --new-session \
        --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin \
        --symlink usr/lib /lib --symlink usr/lib64 /lib64 --ro-bind /etc /etc \
        --proc /proc --dev /dev --tmpfs /tmp --bind "$ws" "$ws" --chdir "$ws" \
        --setenv HOME "$ws/home" --setenv TMPDIR /tmp "$@" ;;
    sbx)
      (cd "$ws" && SBX_PLUGIN_PATH="$PLUGINS" "$SBX" run --no-pty -- "$@") ;;
    *)
      echo "unknown configuration $config" >&2; return 2 ;;
  esac
}

# Counts of a JUnit file: "cases passed failed skipped".
junit_counts () {
  "$PY" - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 0 0 0"); sys.exit(0)
cases = root.iter("testcase")
n = p = f = s = 0
for c in cases:
    n += 1
    if c.find("failure") is not None or c.find("error") is not None:
        f += 1
    elif c.find("skipped") is not None:
        s += 1
    else:
        p += 1
print(n, p, f, s)
EOF
}

# The failed cases of a JUnit file, one "module.Class.test" a line.
junit_failed () {
  "$PY" - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    sys.exit(0)
for c in root.iter("testcase"):
    if c.find("failure") is not None or c.find("error") is not None:
        print(c.get("name", "?"))
EOF
}

compat_python () {
  echo "== CPython $($PY -c 'import platform; print(platform.python_version())') regression tests as $(id -un): $(echo $PY_TESTS | wc -w) modules"
  printf '%-10s %8s %8s %8s %8s  %s\n' config cases passed failed skipped "modules that did not complete"
  for config in $CONFIGS; do
    ws="$WORK/python-$config"
    rm -rf "$ws"; mkdir -p "$ws/home"
    # shellcheck disable=SC2086
    run_in "$config" "$ws" "$PY" -m test -j2 --timeout 900 --junit-xml "$ws/junit.xml" $PY_TESTS \
      >"$ws/log.txt" 2>&1 || true
    set -- $(junit_counts "$ws/junit.xml")
    # Modules that crashed (an uncaught exception at import or set-up) or
    # timed out: their cases are missing from the JUnit file.
    broken=$(sed -n 's/^test \(test_[a-z0-9_]*\) \(crashed\|timed out\).*/\1/p' "$ws/log.txt" | sort -u | tr '\n' ' ')
    printf '%-10s %8s %8s %8s %8s  %s\n' "$config" "${1:-0}" "${2:-0}" "${3:-0}" "${4:-0}" "$broken"
    junit_failed "$ws/junit.xml" | sort > "$ws/failed.txt"
    # A failed subtest (self.subTest) fails its module but is no case of
    # the JUnit file: the log's "test X failed" lines name every module
    # that failed, so a module failing by subtests alone still shows.
    sed -n 's/^test \(test_[a-z0-9_]*\) failed.*/\1/p' "$ws/log.txt" | sort -u > "$ws/failed-modules.txt"
  done
  for config in $CONFIGS; do
    printf '%-10s modules failed (log): %s\n' "$config" "$(tr '\n' ' ' < "$WORK/python-$config/failed-modules.txt")"
  done
  for config in $CONFIGS; do
    [ "$config" = outside ] && continue
    only=$(comm -13 "$WORK/python-outside/failed.txt" "$WORK/python-$config/failed.txt" 2>/dev/null | head -40)
    if [ -n "$only" ]; then
      echo "-- failed in $config but not outside:"
      echo "$only" | sed 's/^/   /'
    fi
  done
}

compat_git () {
  src="$WORK/git-src"
  if [ ! -x "$src/git" ]; then
    if [ "$(id -u)" -eq 0 ]; then
      if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ /etc/apt/sources.list; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
          > /etc/apt/sources.list.d/sbx-compat-src.sources
        apt-get update -qq
      fi
      apt-get build-dep -y -qq git >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK/git-pkg"; mkdir -p "$WORK/git-pkg"
    (cd "$WORK/git-pkg" && apt-get source -qq git >/dev/null 2>&1)
    rm -rf "$src"
    mv "$(find "$WORK/git-pkg" -mindepth 1 -maxdepth 1 -type d -name 'git-*' | head -1)" "$src"
    make -C "$src" -j2 NO_GETTEXT=1 >/dev/null
  fi
  echo "== git $("$src/git" --version | cut -d' ' -f3) test scripts ($GIT_TESTS) as $(id -un)"
  printf '%-10s %8s %8s %8s %10s %10s\n' config scripts failed cases "cases-fail" "cases-skip"
  for config in $CONFIGS; do
    # Inside the workspace: the sandboxes write only there.
    out="$src/compat-$config"
    rm -rf "$out"; mkdir -p "$out"
    # Each script runs in its own trash directory under t/; the results
    # directory counts its cases.
    # shellcheck disable=SC2086
    (cd "$src/t" && rm -rf test-results trash\ directory.* && \
      run_in "$config" "$src" sh -c "cd t && for s in $GIT_TESTS; do sh \"\$s\" >\"$out/\$s.out\" 2>&1 || echo \"\$s\" >>\"$out/failed-scripts\"; done" ) || true
    scripts=$(cd "$src/t" && ls $GIT_TESTS | wc -l)
    failed=$( [ -f "$out/failed-scripts" ] && wc -l < "$out/failed-scripts" || echo 0)
    cases=$(cat "$out"/*.out | grep -cE '^(ok|not ok) ' || true)
    cfail=$(cat "$out"/*.out | grep -E '^not ok ' | grep -vc '# TODO' || true)
    cskip=$(cat "$out"/*.out | grep -cE '^ok .*# skip' || true)
    printf '%-10s %8s %8s %8s %10s %10s\n' "$config" "$scripts" "$failed" "$cases" "$cfail" "$cskip"
  done
}

for what in $WHAT; do
  case $what in
    python) compat_python ;;
    git) compat_git ;;
    *) echo "unknown suite $what"; exit 2 ;;
  esac
done
