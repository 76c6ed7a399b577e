#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: the man pages render without warnings and document what the program
# and the schema define.
#   test-man.sh SBX SBX.1 SBX-PROFILE.5 SCHEMA.json
# - each page renders with man (groff warnings on: -ww) and nothing goes to
#   stderr;
# - the pages have the sections a man page needs;
# - sbx(1) names every command of `sbx --help`, every subcommand of
#   `sbx profile --help` and every option of each command's --help;
# - sbx-profile(5) names every member the schema defines.
set -u
SBX=$1 PAGE1=$2 PAGE5=$3 SCHEMA=$4
n=0
failed=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); failed=1; echo "not ok $n $1"; shift; for line in "$@"; do printf "%s\n" "$line" | sed "s/^/# /"; done; }

render () {
  # man -l: the page file itself; --warnings=all... is groff's -ww.
  LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings -E UTF-8 -l "$1" 2>"$tmp/err" | col -b >"$tmp/out"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-test-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if ! command -v man >/dev/null 2>&1; then
  echo "1..0 # SKIP man (man-db) is not installed: scripts/setup.sh installs it"
  exit 0
fi

for page in "$PAGE1" "$PAGE5"; do
  name=$(basename "$page")
  render "$page"
  if [ -s "$tmp/err" ]; then
    not_ok "/man/$name/renders-without-warnings" "$(cat "$tmp/err")"
  elif [ "$(wc -l <"$tmp/out")" -lt 40 ]; then
    not_ok "/man/$name/renders-without-warnings" "only $(wc -l <"$tmp/out") lines rendered"
  else
    ok "/man/$name/renders-without-warnings"
  fi
  missing=""
  case $name in
    *.1) sections="NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS EXIT*STATUS ENVIRONMENT FILES EXAMPLES SEE*ALSO" ;;
    *) sections="NAME SYNOPSIS DESCRIPTION MEMBERS VALIDATION FILES EXAMPLES SEE*ALSO" ;;
  esac
  for section in $sections; do
    grep -q "^$(echo "$section" | sed 's/\*/ /')\$" "$tmp/out" || missing="$missing $section"
  done
  if [ -n "$missing" ]; then not_ok "/man/$name/sections" "missing:$missing"; else ok "/man/$name/sections"; fi
  cp "$tmp/out" "$tmp/$name.txt"
done

# Every command, subcommand and option of the program is in sbx(1).
words=$("$SBX" --help | sed -n '/^Commands:/,/^$/{s/^  \([a-z][a-z-]*\) .*/\1/p}')
profile_subs=$("$SBX" profile --help | sed -n '/^Commands:/,/^$/{s/^  \([a-z][a-z-]*\) .*/\1/p}')
if [ -z "$words" ] || [ -z "$profile_subs" ]; then
  not_ok "/man/sbx.1/every-command" "could not read the commands from $SBX --help"
else
  missing=""
  for c in $words; do grep -q -E "^ {0,8}$c( |\$)" "$tmp/$(basename "$PAGE1").txt" || missing="$missing $c"; done
  for c in $profile_subs; do grep -q -E "^ {0,8}profile $c( |\$)" "$tmp/$(basename "$PAGE1").txt" || missing="$missing profile-$c"; done
  if [ -n "$missing" ]; then not_ok "/man/sbx.1/every-command" "not documented in COMMANDS:$missing"; else ok "/man/sbx.1/every-command"; fi
fi

options=""
for cmd in $words; do
  [ "$cmd" = help ] && continue
  if [ "$cmd" = profile ]; then
    for sub in $profile_subs; do options="$options $("$SBX" profile "$sub" --help | sed -n 's/^  *\(-[^ ,]*\)\(, \(--[^ =]*\)\)\{0,1\}.*/\1 \3/p' | sed 's/=.*//')"; done
  else
    options="$options $("$SBX" "$cmd" --help | sed -n 's/^  *\(-[^ ,]*\)\(, \(--[^ =]*\)\)\{0,1\}.*/\1 \3/p' | sed 's/=.*//')"
  fi
done
options="$options --version --help"
missing=""
count=0
for option in $(echo "$options" | tr ' ' '\n' | sort -u); do
  count=$((count + 1))
  grep -q -e "^ *\(-[a-zA-Z], \)\{0,1\}$option\([=, ]\|\[\|\$\)" "$tmp/$(basename "$PAGE1").txt" || missing="$missing $option"
done
if [ "$count" -lt 10 ]; then
  not_ok "/man/sbx.1/every-option" "only $count options read from --help"
elif [ -n "$missing" ]; then
  not_ok "/man/sbx.1/every-option" "options of --help not documented as an item of OPTIONS:$missing"
else
  ok "/man/sbx.1/every-option ($count options)"
fi

# Every member of the schema is in sbx-profile(5).
members=$(grep -o '"[a-z-]*": {' "$SCHEMA" | sed 's/"\([a-z-]*\)".*/\1/' | sort -u \
          | grep -v -x -e properties -e items -e if -e then -e '\$defs' -e access -e count -e allow-read-write)
missing=""
for member in $members; do
  grep -q -e "$member" "$tmp/$(basename "$PAGE5").txt" || missing="$missing $member"
done
if [ -z "$members" ]; then
  not_ok "/man/sbx-profile.5/every-member" "no member read from $SCHEMA"
elif [ -n "$missing" ]; then
  not_ok "/man/sbx-profile.5/every-member" "schema members not documented:$missing"
else
  ok "/man/sbx-profile.5/every-member"
fi

echo "1..$n"
exit 0
