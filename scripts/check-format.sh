#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Holds C sources to the house style of uncrustify.cfg (uncrustify 0.72,
# Debian's uncrustify; then scripts/format-fixup.py, see there).
#   check-format.sh [--root DIR] [FILE...]      check FILEs, by default every
#                                               .c/.h under core/ plugins/
#                                               tools/ tests/ bench/ examples/
#                                               except those listed in
#                                               scripts/format-exclude.txt
#   check-format.sh --all [--root DIR]          the same, the excluded ones too
#   check-format.sh --fix [--all] [--root DIR] [FILE...]
#                                               rewrite them instead
# FILEs are relative to the source root (or absolute).  Prints TAP (one line
# per file; a failing file shows its diff) and exits non-zero when a file
# differs from what uncrustify makes of it, or when an entry of the exclude
# list names no file (the list must follow renames and shrink, not rot).
set -eu

fix=0 all=0 root=
while [ $# -gt 0 ]; do
  case $1 in
    --fix) fix=1; shift ;;
    --all) all=1; shift ;;
    --root) root=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "check-format.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -n "$root" ] || root=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$root" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cfg=$root/uncrustify.cfg
fixup=$here/format-fixup.py

UNCRUSTIFY=${UNCRUSTIFY:-uncrustify}
if ! command -v "$UNCRUSTIFY" >/dev/null 2>&1; then
  echo "1..0 # SKIP $UNCRUSTIFY is not installed (scripts/setup.sh installs uncrustify)"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The exclude list: one path per line (a trailing * matches a prefix).
excluded () {
  [ -f "$root/scripts/format-exclude.txt" ] || return 1
  while read -r pat; do
    case $pat in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2254
    case $1 in $pat) return 0 ;; esac
  done < "$root/scripts/format-exclude.txt"
  return 1
}

n=0 failed=0
if [ $# -gt 0 ]; then
  for f in "$@"; do echo "$f"; done > "$tmp/files"
else
  (cd "$root" && find core plugins tools tests bench examples \
     -path tests/fuzz/corpus -prune -o \( -name '*.c' -o -name '*.h' \) -type f -print 2>/dev/null) \
    | LC_ALL=C sort > "$tmp/all"
  : > "$tmp/files"
  while read -r f; do
    if [ "$all" -eq 0 ] && excluded "$f"; then continue; fi
    echo "$f" >> "$tmp/files"
  done < "$tmp/all"
  # Every entry of the exclude list must still name a file.
  if [ -f "$root/scripts/format-exclude.txt" ] && [ "$fix" -eq 0 ]; then
    while read -r pat; do
      case $pat in ''|'#'*) continue ;; esac
      matched=0
      while read -r f; do
        # shellcheck disable=SC2254
        case $f in $pat) matched=1; break ;; esac
      done < "$tmp/all"
      n=$((n + 1))
      if [ "$matched" -eq 1 ]; then
        echo "ok $n - exclude entry $pat names a file"
      else
        echo "not ok $n - exclude entry $pat names no file: drop it from scripts/format-exclude.txt"
        failed=$((failed + 1))
      fi
    done < "$root/scripts/format-exclude.txt"
  fi
fi

# One uncrustify run over every file (a process per file is most of the
# time), its output under $tmp/out with the same relative paths.
: > "$tmp/paths"
while read -r f; do
  case $f in /*) echo "$f" ;; *) echo "$root/$f" ;; esac >> "$tmp/paths"
done < "$tmp/files"
mkdir -p "$tmp/out"
uncrustify_ok=1
if [ -s "$tmp/paths" ]; then
  # Missing files are reported below; uncrustify is given the others.
  while read -r path; do [ -f "$path" ] && echo "$path"; done < "$tmp/paths" > "$tmp/present"
  if [ -s "$tmp/present" ]; then
    if ! "$UNCRUSTIFY" -q -c "$cfg" --prefix "$tmp/out" -F "$tmp/present" 2> "$tmp/err"; then
      uncrustify_ok=0
    fi
    # shellcheck disable=SC2046
    (cd "$tmp/out" && find . -type f -print0 | xargs -0 -r python3 "$fixup") || uncrustify_ok=0
  fi
fi

while read -r f; do
  case $f in /*) path=$f ;; *) path=$root/$f ;; esac
  out=$tmp/out/$path
  n=$((n + 1))
  if [ ! -f "$path" ]; then
    echo "not ok $n - $f: no such file"
    failed=$((failed + 1))
    continue
  fi
  if [ "$uncrustify_ok" -eq 0 ] || [ ! -f "$out" ]; then
    echo "not ok $n - $f: uncrustify failed"
    sed 's/^/# /' "$tmp/err"
    failed=$((failed + 1))
    continue
  fi
  if cmp -s "$path" "$out"; then
    echo "ok $n - $f"
  elif [ "$fix" -eq 1 ]; then
    cat "$out" > "$path"
    echo "ok $n - $f # reformatted"
  else
    echo "not ok $n - $f: differs from uncrustify.cfg (scripts/check-format.sh --fix $f)"
    diff -u "$path" "$out" | head -40 | sed 's/^/# /'
    failed=$((failed + 1))
  fi
done < "$tmp/files"
echo "1..$n"
[ "$failed" -eq 0 ]
