#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: the sbx-conformance program as a plugin author runs it: exit status,
# TAP on stdout, JSON summary.  It passes on the bundled unconfined backend
# and fails on mock-broken-read, naming read-boundary.
#   test-conformance-tool.sh SBX_CONFORMANCE UNCONFINED_SO BROKEN_SO
set -u
tool=$1; unconfined=$2; broken=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-conformance-tool.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
echo "1..3"
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1"; shift; for text in "$@"; do printf '%s\n' "$text" | sed 's/^/# /'; done; }

"$tool" "$broken" --json "$tmp/broken.json" >"$tmp/broken.tap" 2>"$tmp/broken.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^not ok .* mock-broken-read read-boundary/read-host-file' "$tmp/broken.tap" \
   && ! grep '^not ok' "$tmp/broken.tap" | grep -v ' read-boundary/' | grep -q . \
   && grep -q '^1\.\.[0-9]' "$tmp/broken.tap" \
   && grep -q '"failed":\["read-boundary"\]' "$tmp/broken.json" && grep -q '"ok":false' "$tmp/broken.json"; then
  ok "/conformance-tool/broken-read-fails-naming-read-boundary"
else
  not_ok "/conformance-tool/broken-read-fails-naming-read-boundary" "exit $rc" "$(cat "$tmp/broken.tap" "$tmp/broken.err")"
fi

"$tool" "$unconfined" >"$tmp/unconfined.tap" 2>"$tmp/unconfined.json"
rc=$?
if [ "$rc" -eq 0 ] && ! grep -q '^not ok' "$tmp/unconfined.tap" \
   && grep -q '^ok .* unconfined env-scrub/supervisor-secret-hidden' "$tmp/unconfined.tap" \
   && grep -q '"ok":true' "$tmp/unconfined.json"; then
  ok "/conformance-tool/unconfined-passes"
else
  not_ok "/conformance-tool/unconfined-passes" "exit $rc" "$(cat "$tmp/unconfined.tap" "$tmp/unconfined.json")"
fi

# A file that is not a plugin is a usage error (2), not a pass.
: >"$tmp/not-a-plugin.so"
"$tool" "$tmp/not-a-plugin.so" >"$tmp/bad.tap" 2>"$tmp/bad.err"
rc=$?
if [ "$rc" -eq 2 ]; then
  ok "/conformance-tool/not-a-plugin-name-is-an-error"
else
  not_ok "/conformance-tool/not-a-plugin-name-is-an-error" "exit $rc" "$(cat "$tmp/bad.tap" "$tmp/bad.err")"
fi
