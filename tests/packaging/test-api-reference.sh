#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: the gi-docgen reference of Sbx-1.0 was generated with its classes,
# the guides of docs/ as pages, a devhelp index and a search index.
#   test-api-reference.sh HTML_DIR GUIDE.md...
set -u
HTML=$1; shift
n=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1"; shift; for line in "$@"; do printf "%s\n" "$line" | sed "s/^/# /"; done; }
for f in index.html class.ExecutorSet.html class.Executor.html struct.Profile.html \
         func.guarantee_to_string.html sbx-1.devhelp2 index.json; do
  if [ -s "$HTML/$f" ]; then ok "/api-reference/$f"; else not_ok "/api-reference/$f" "missing in $HTML"; fi
done
for guide in "$@"; do
  page=$(basename "$guide" .md).html
  if [ -s "$HTML/$page" ] && grep -q "$page" "$HTML/index.html" && ! grep -q "Unknown document" "$HTML/$page"; then
    ok "/api-reference/guide/$page"
  else
    not_ok "/api-reference/guide/$page" "the guide is missing, untitled or not linked from index.html"
  fi
done
echo "1..$n"
