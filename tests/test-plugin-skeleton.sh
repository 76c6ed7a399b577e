#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: a third party's view of the plugin ABI.  Installs this build into a
# staging directory (meson install --destdir), builds examples/plugin-skeleton
# out of tree against the staged sbx-plugin-1 alone (PKG_CONFIG_PATH and
# PKG_CONFIG_SYSROOT_DIR, the usual way to build against a DESTDIR), loads the
# result with SBX_PLUGIN_PATH and runs commands through it with the built sbx.
# Last, sbx-conformance judges the skeleton by its claims.
#   test-plugin-skeleton.sh MESON BUILD_ROOT SKELETON_SRCDIR SBX SBX_CONFORMANCE
set -u
meson=$1; build_root=$2; skel_src=$3; sbx=$4; conformance=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-skeleton-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
echo "1..7"
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1"; shift; for text in "$@"; do printf '%s\n' "$text" | sed 's/^/# /'; done; }
bail () { echo "Bail out! $1"; exit 1; }
[ -x "$sbx" ] || bail "no sbx program at $sbx"

# 1. install into the staging prefix
dest=$tmp/dest
if "$meson" install -C "$build_root" --no-rebuild --quiet --destdir "$dest" >"$tmp/install.log" 2>&1; then
  ok "/skeleton/install-into-staging-prefix"
else
  not_ok "/skeleton/install-into-staging-prefix" "$(tail -5 "$tmp/install.log")"
  bail "cannot install"
fi
pc=$(find "$dest" -name sbx-plugin-1.pc | head -1)
hdr=$(find "$dest" -path '*/include/sbx-plugin-1/sbx/sbx-plugin-abi.h' | head -1)
[ -n "$pc" ] && [ -n "$hdr" ] || bail "the staged prefix has no sbx-plugin-1.pc or sbx/sbx-plugin-abi.h"

# 2. the skeleton builds out of tree against the staged package alone
pcdir=$(dirname "$pc")
skel=$tmp/skeleton-build
if env PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_SYSROOT_DIR="$dest" \
     "$meson" setup "$skel" "$skel_src" >"$tmp/setup.log" 2>&1 \
   && "$meson" compile -C "$skel" >"$tmp/compile.log" 2>&1 \
   && [ -f "$skel/sbx-plugin-skeleton.so" ]; then
  # The header came from the staged prefix, not from sbx's source tree.
  foreign=$(grep -o -- '-I[^ ]*' "$skel/build.ninja" | sort -u | sed 's/^-I//' \
             | while read -r dir; do
                 case "$dir" in
                   "$dest"/*|"$skel_src"|*examples/plugin-skeleton|.|*.p) ;;
                   *) echo "$dir" ;;
                 esac
               done)
  if grep -q -- "-I$dest/" "$skel/build.ninja" && [ -z "$foreign" ]; then
    ok "/skeleton/builds-out-of-tree-from-installed-prefix"
  else
    not_ok "/skeleton/builds-out-of-tree-from-installed-prefix" "include directories outside the staged prefix: $foreign"
  fi
else
  not_ok "/skeleton/builds-out-of-tree-from-installed-prefix" "$(tail -20 "$tmp/setup.log" "$tmp/compile.log" 2>/dev/null)"
  bail "the skeleton does not build"
fi
# Only the plugin in its directory, with the permissions the loader wants.
plugins=$tmp/plugins
mkdir -m 0755 "$plugins" && cp "$skel/sbx-plugin-skeleton.so" "$plugins/" && chmod 0644 "$plugins/sbx-plugin-skeleton.so" \
  || bail "cannot lay out the plugin directory"

ws=$tmp/ws
mkdir "$ws"
profile=$tmp/unconfined.json
cat >"$profile" <<JSON
{ "version": 1,
  "workspace": { "root": "$ws", "read": "allow", "write": "allow" },
  "host": { "read": "allow", "write": "allow" },
  "network": "allow", "command": "allow", "home": "isolated",
  "isolation": "unconfined", "ack-unconfined": true }
JSON
run_sbx () {
  (cd "$ws" && env SBX_PLUGIN_PATH="$plugins" SBX_BACKEND=skeleton SKELETON_TEST_SECRET=s3cret-value \
     "$sbx" run --report=json --profile "$profile" -- "$@")
}

# 3. sbx doctor sees it loaded
# (doctor's exit status says whether a Sandboxed profile can run: it cannot,
# the skeleton is unconfined-only.)
env SBX_PLUGIN_PATH="$plugins" "$sbx" doctor --json >"$tmp/doctor.json" 2>&1
if grep -q '"name":"skeleton","path":"[^"]*/sbx-plugin-skeleton.so","state":"loaded"' "$tmp/doctor.json" \
   && grep -q '"unconfined_only":true' "$tmp/doctor.json"; then
  ok "/skeleton/loaded-by-doctor"
else
  not_ok "/skeleton/loaded-by-doctor" "$(head -c 2000 "$tmp/doctor.json")"
fi

# 4. a command runs through it: output, exit status, the report names it
run_sbx sh -c 'echo "hello from the skeleton"; exit 3' >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 3 ] && grep -qx "hello from the skeleton" "$tmp/out" \
   && grep -q '"backend":"skeleton"' "$tmp/err" && grep -q '"level":"none"' "$tmp/err"; then
  ok "/skeleton/runs-a-command"
else
  not_ok "/skeleton/runs-a-command" "exit $rc" "$(cat "$tmp/out" "$tmp/err")"
fi

# 5. env-scrub, its one claim: the supervisor's secret does not reach the
# child; positive control: the same command outside sbx sees it.
outside=$(env SKELETON_TEST_SECRET=s3cret-value sh -c 'echo "${SKELETON_TEST_SECRET-unset}"')
inside=$(run_sbx sh -c 'echo "${SKELETON_TEST_SECRET-unset}"' 2>/dev/null)
if [ "$outside" = "s3cret-value" ] && [ "$inside" = "unset" ]; then
  ok "/skeleton/env-scrub"
else
  not_ok "/skeleton/env-scrub" "outside: $outside" "inside: $inside"
fi

# 6. exec failures map to the CLI contract (127 not found)
run_sbx no-such-program-for-the-skeleton >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 127 ] && grep -q "no-such-program-for-the-skeleton" "$tmp/err"; then
  ok "/skeleton/exec-not-found-is-127"
else
  not_ok "/skeleton/exec-not-found-is-127" "exit $rc" "$(cat "$tmp/err")"
fi

# 7. sbx-conformance passes it: it claims env-scrub only, and that holds
"$conformance" "$plugins/sbx-plugin-skeleton.so" >"$tmp/conformance.tap" 2>"$tmp/conformance.json"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^ok .* skeleton env-scrub/supervisor-secret-hidden' "$tmp/conformance.tap" \
   && ! grep -q '^not ok' "$tmp/conformance.tap" && grep -q '"ok":true' "$tmp/conformance.json"; then
  ok "/skeleton/conformance"
else
  not_ok "/skeleton/conformance" "exit $rc" "$(cat "$tmp/conformance.tap" "$tmp/conformance.json")"
fi
