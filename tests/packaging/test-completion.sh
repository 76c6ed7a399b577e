#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: the bash completion of sbx, driven as bash drives it (COMP_WORDS split
# at COMP_WORDBREAKS, COMP_CWORD, the _sbx function, COMPREPLY), with and
# without the bash-completion package loaded.
#   test-completion.sh SBX COMPLETION_FILE PROFILES_DIR
set -u
SBX=$1 COMPLETION=$2 PROFILES=$3
export SBX_PLUGIN_PATH
# The backends: the real plugins of this build, found next to the program.
build_root=$(cd "$(dirname "$SBX")/.." && pwd)
SBX_PLUGIN_PATH=$(for d in "$build_root"/plugins/*/; do printf '%s:' "${d%/}"; done)

n=0
ok () { n=$((n + 1)); echo "ok $n $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n $1"; shift; for line in "$@"; do printf "%s\n" "$line" | sed "s/^/# /"; done; }

# complete MODE LINE...: prints the candidates for the command line LINE
# (the cursor at its end), one per line, sorted.  MODE "plain" sources only
# the completion file; "bash-completion" loads the package first.
complete_line () {
  mode=$1; shift
  bash --norc --noprofile -c '
    mode=$1 completion=$2 sbx=$3 line=$4
    if [ "$mode" = bash-completion ]; then
      [ -r /usr/share/bash-completion/bash_completion ] || exit 3
      . /usr/share/bash-completion/bash_completion
    fi
    . "$completion"
    # Split the line as readline does: at blanks, and at each character
    # of COMP_WORDBREAKS other than quotes, which becomes a word itself.
    COMP_LINE=$line COMP_POINT=${#line}
    COMP_WORDS=() word=""
    for (( i = 0; i < ${#line}; i++ )); do
      c=${line:i:1}
      case $c in
        " ") [ -n "$word" ] && COMP_WORDS+=( "$word" ); word="" ;;
        "="|":") [ -n "$word" ] && COMP_WORDS+=( "$word" ); COMP_WORDS+=( "$c" ); word="" ;;
        *) word+=$c ;;
      esac
    done
    COMP_WORDS+=( "$word" )
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMP_WORDS[0]=$sbx
    _sbx sbx "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}" | sort -u | sed "/^\$/d"
  ' complete-test "$mode" "$COMPLETION" "$SBX" "$*"
}

# expect NAME MODE "EXPECTED (space-separated, sorted)" LINE...
expect () {
  name=$1 mode=$2 expected=$3; shift 3
  got=$(complete_line "$mode" "$@" | tr '\n' ' ' | sed 's/ $//')
  if [ "$got" = "$expected" ]; then ok "/completion/$mode/$name"
  else not_ok "/completion/$mode/$name" "line: $*" "expected: $expected" "got: $got"; fi
}

# contains NAME MODE WORD LINE...: WORD is among the candidates.
contains () {
  name=$1 mode=$2 word=$3; shift 3
  if complete_line "$mode" "$@" | grep -q -x -e "$word"; then ok "/completion/$mode/$name"
  else not_ok "/completion/$mode/$name" "line: $*" "expected $word among: $(complete_line "$mode" "$@" | tr '\n' ' ')"; fi
}

if ! "$SBX" --help >/dev/null 2>&1; then
  echo "1..1"; echo "not ok 1 $SBX --help fails"; exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-test-completion.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$PROFILES"/*.json "$tmp"/
mkdir "$tmp/subdir"
touch "$tmp/notes.txt"
cd "$tmp" || exit 1

for mode in plain bash-completion; do
  if [ "$mode" = bash-completion ] && [ ! -r /usr/share/bash-completion/bash_completion ]; then
    n=$((n + 1)); echo "ok $n /completion/bash-completion # SKIP the bash-completion package is not installed"
    continue
  fi
  # Positive control: an empty word offers every command, so a completion
  # that answers nothing cannot pass the tests below.
  expect commands "$mode" "doctor help profile run stage" sbx ""
  expect run "$mode" "run" sbx r
  expect profile-subcommand "$mode" "show" sbx profile s
  expect profile-subcommands "$mode" "check explain learn restrict show" sbx profile ""
  expect help-topic "$mode" "profile" sbx help p
  expect global-option "$mode" "--version" sbx --v
  expect run-option "$mode" "--profile" sbx run --pro
  expect run-pty-option "$mode" "--pty" sbx run --pt
  expect run-no-pty-option "$mode" "--no-pty" sbx run --no-p
  expect doctor-options "$mode" "--clean --help --json" sbx doctor --
  expect network-words "$mode" "allow deny" sbx run --network ""
  expect allow-host-option "$mode" "--allow-host" sbx run --allow-h
  expect upstream-proxy-option "$mode" "--upstream-proxy" sbx run --upstream
  expect network-words-after-equals "$mode" "allow deny" sbx run --network=""
  expect report-format "$mode" "json" sbx run --report=j
  # Profile files: *.json and directories, not other files.
  expect profile-files "$mode" "default.json" sbx run --profile def
  expect profile-files-after-equals "$mode" "default.json" sbx run --profile=def
  expect profile-check-files "$mode" "review-readonly.json" sbx profile check rev
  expect no-other-files "$mode" "" sbx profile check notes
  expect workspace-dirs "$mode" "subdir" sbx run --workspace su
  expect short-option-value "$mode" "subdir" sbx profile show -w su
  # The command of sbx run and, past it, nothing of sbx's own.
  contains command-word "$mode" "true" sbx run --timeout 5 tru
  contains command-after-dashdash "$mode" "true" sbx run -- tru
  expect no-sbx-options-past-command "$mode" "" sbx run true --pro
  # sbx profile learn: its options, BASE (a file or "default"), then the
  # command as for run.
  expect learn-options "$mode" "--output" sbx profile learn --out
  expect learn-base "$mode" "default default.json" sbx profile learn --profile def
  expect learn-output-file "$mode" "review-readonly.json" sbx profile learn --output rev
  contains learn-command-word "$mode" "true" sbx profile learn --profile default.json tru
  contains learn-command-after-dashdash "$mode" "true" sbx profile learn -- tru
  expect no-sbx-options-past-learn-command "$mode" "" sbx profile learn true --pro
done

# Backend names: what the loaded plugins offer, for any --backend option.
backends=$(bash --norc -c '. "$1"; _sbx_program=$2 _sbx_backends' backends "$COMPLETION" "$SBX" | sort | tr '\n' ' ' | sed 's/ $//')
expected=$("$SBX" doctor --json | /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(b["name"] for b in json.load(sys.stdin)["backends"])))')
if [ -n "$expected" ] && [ "$backends" = "$expected" ]; then ok "/completion/backend-names ($backends)"
else not_ok "/completion/backend-names" "expected: $expected" "got: $backends"; fi

echo "1..$n"
