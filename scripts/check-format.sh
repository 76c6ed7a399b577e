#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Holds C sources to .clang-format (clang-format 14, Debian's clang-format-14).
#   check-format.sh [SOURCE_ROOT]              the files in scripts/format-files.txt
#   check-format.sh --all [SOURCE_ROOT]        every tracked .c/.h file
#   check-format.sh --fix [--all] [SOURCE_ROOT] rewrite them instead of checking
# Prints TAP (one line per file; a failing file shows its diff) and exits
# non-zero when a file differs from what clang-format makes of it, or when a
# listed file is missing (the list must follow renames).
set -eu

fix=0 all=0
while [ $# -gt 0 ]; do
  case $1 in
    --fix) fix=1; shift ;;
    --all) all=1; shift ;;
    *) break ;;
  esac
done
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "1..0 # SKIP $CLANG_FORMAT is not installed (scripts/setup.sh installs clang-format-14)"
  exit 0
fi

if [ "$all" -eq 1 ]; then
  files=$(git ls-files '*.c' '*.h' | grep -v '^tests/fuzz/corpus/')
else
  files=$(grep -v '^#' scripts/format-files.txt | grep -v '^$')
fi

if [ "$fix" -eq 1 ]; then
  # shellcheck disable=SC2086
  "$CLANG_FORMAT" -i --style=file $files
  exit 0
fi

n=0 failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in $files; do
  n=$((n + 1))
  if [ ! -f "$f" ]; then
    echo "not ok $n - $f: listed but missing"
    failed=$((failed + 1))
    continue
  fi
  "$CLANG_FORMAT" --style=file "$f" > "$out"
  if cmp -s "$f" "$out"; then
    echo "ok $n - $f"
  else
    echo "not ok $n - $f: differs from clang-format (scripts/check-format.sh --fix)"
    diff -u "$f" "$out" | head -40 | sed 's/^/# /'
    failed=$((failed + 1))
  fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
