#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The format check can fail: a copy of a file that conforms passes, the same
# copy with each of a few house-style breaks fails (naming the file), and
# --fix turns every broken copy back into the original, byte for byte.
#   check-format-selftest.sh SOURCE_ROOT
set -eu

root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
check=$root/scripts/check-format.sh
if ! command -v "${UNCRUSTIFY:-uncrustify}" >/dev/null 2>&1; then
  echo "1..0 # SKIP uncrustify is not installed (scripts/setup.sh installs uncrustify)"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
orig=$root/core/base/sbx-guarantees.c
n=0 failed=0

ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n - $1"; failed=$((failed + 1)); }

cp "$orig" "$tmp/good.c"
if sh "$check" --root "$root" "$tmp/good.c" > "$tmp/log" 2>&1; then
  ok "a conforming file passes"
else
  not_ok "a conforming file passes"; sed 's/^/# /' "$tmp/log"
fi

# Each break is one sed edit of a line that must exist in the original.
while IFS='|' read -r name expr; do
  sed "$expr" "$orig" > "$tmp/bad.c"
  if cmp -s "$orig" "$tmp/bad.c"; then
    not_ok "$name: the edit changed nothing (the sample line moved?)"
    continue
  fi
  if sh "$check" --root "$root" "$tmp/bad.c" > "$tmp/log" 2>&1; then
    not_ok "$name: the check passed a misformatted file"
  elif ! grep -q "^not ok .*bad.c: differs from uncrustify.cfg" "$tmp/log"; then
    not_ok "$name: the check failed without naming the file"; sed 's/^/# /' "$tmp/log"
  else
    ok "$name: the check fails"
  fi
  sh "$check" --fix --root "$root" "$tmp/bad.c" > /dev/null 2>&1 || true
  if cmp -s "$orig" "$tmp/bad.c"; then
    ok "$name: --fix restores the original"
  else
    not_ok "$name: --fix does not restore the original"
    diff -u "$orig" "$tmp/bad.c" | head -20 | sed 's/^/# /'
  fi
done <<'EOF'
brace on the line of its if|/^    if (g_str_equal (text, level_names\[i\]))$/{s/$/ {/;n;d;}
no space before a call's parenthesis|s/^  g_return_val_if_fail (text != NULL, FALSE);/  g_return_val_if_fail(text != NULL, FALSE);/
four-space indentation|s/^  return level_names\[level\];/    return level_names[level];/
return type on the line of the name|/^const char \*$/{N;s/\n/ /;}
space inside parentheses|s/^  if ((guint) level >= G_N_ELEMENTS (level_names))/  if ( (guint) level >= G_N_ELEMENTS (level_names) )/
EOF
echo "1..$n"
[ "$failed" -eq 0 ]
