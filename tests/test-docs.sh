#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: the API reference of Sbx-1.0 is complete and its links hold.
#  1. every public symbol is documented (gi-docgen check reports missing
#     summaries, parameters and return values as warnings);
#  2. the reference generates with --fatal-warnings, as the package build
#     does: a link to a symbol that does not exist ([method@Sbx.X.gone]) is
#     a warning there, and `check` does not resolve links.
#   test-docs.sh GIR_FILE
set -u
echo "1..2"
out=$(gi-docgen check "$1" 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
if echo "$out" | grep -q -E "WARNING|ERROR|CRITICAL"; then
  echo "not ok 1 /docs/gi-docgen-check"
  echo "$out" | grep -E "WARNING|ERROR|CRITICAL" | sed 's/^/# /'
else
  echo "ok 1 /docs/gi-docgen-check"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/sbx-docs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
if out=$(gi-docgen generate --quiet --fatal-warnings --no-namespace-dir \
           --add-include-path="$(dirname "$1")" --output-dir="$dir/html" "$1" 2>&1); then
  echo "ok 2 /docs/gi-docgen-generate-links"
else
  echo "not ok 2 /docs/gi-docgen-generate-links"
  echo "$out" | sed 's/\x1b\[[0-9;]*m//g; s/^/# /'
fi
