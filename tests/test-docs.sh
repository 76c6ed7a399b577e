#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: every public symbol of Sbx-1.0 is documented (gi-docgen check reports
# missing summaries, parameters and return values as warnings).
#   test-docs.sh GIR_FILE
set -u
echo "1..1"
out=$(gi-docgen check "$1" 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
if echo "$out" | grep -q -E "WARNING|ERROR|CRITICAL"; then
  echo "not ok 1 /docs/gi-docgen-check"
  echo "$out" | grep -E "WARNING|ERROR|CRITICAL" | sed 's/^/# /'
else
  echo "ok 1 /docs/gi-docgen-check"
fi
