#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The "package" phase of scripts/test.sh: the Debian packages of this tree,
# built, linted, installed into this machine, used from the installed files
# as root and as an unprivileged user, then purged, checking that nothing is
# left.  Prints one "ok - ..." or "not ok - ..." line per check (test.sh
# counts them); exits non-zero when a check failed.
#
#   scripts/test-package.sh [UNPRIVILEGED_USER]
#
# Needs root for the install part (without it the packages are only built
# and linted).  Packages of ours already installed (a run that was killed)
# are replaced and purged like the fresh ones.
set -u
cd "$(dirname "$0")/.."
SRC=$(pwd)
TEST_USER=${1:-sbx-ci}
PACKAGES="libsbx-1-0 libsbx-1-dev gir1.2-sbx-1.0 sbx sbx-plugin-linux sbx-plugins-base libsbx-1-doc"
FAILED=0
START=$(date +%s)

ok () { echo "ok - package: $1"; }
not_ok () {
  echo "not ok - package: $1"; shift
  for line in "$@"; do printf '%s\n' "$line" | sed 's/^/#   /'; done
  FAILED=1
}
elapsed () { echo $(( $(date +%s) - START )); }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sbx-package.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
chmod 0755 "$WORK"

# 1. Build: a copy of the working tree (uncommitted work too, no build
#    trees), because dpkg-buildpackage writes the packages next to it.
mkdir "$WORK/sbx"
tar -C "$SRC" --exclude='./_build*' --exclude='./.git' -cf - . | tar -C "$WORK/sbx" -xf -
if (cd "$WORK/sbx" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1; then
  ok "dpkg-buildpackage -us -uc -b built the packages ($(elapsed) s)"
else
  not_ok "dpkg-buildpackage -us -uc -b failed" "$(tail -40 "$WORK/build.log")"
  exit 1
fi
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debs=""
missing=""
for p in $PACKAGES; do
  f=$(ls "$WORK"/"${p}"_*_"$arch".deb "$WORK"/"${p}"_*_all.deb 2>/dev/null | head -n 1)
  if [ -n "$f" ]; then debs="$debs $f"; else missing="$missing $p"; fi
done
if [ -z "$missing" ]; then ok "every binary package was built: $PACKAGES"
else not_ok "binary packages missing:$missing" "$(ls "$WORK")"; fi
if grep -q "dpkg-gensymbols: warning" "$WORK/build.log"; then
  not_ok "debian/libsbx-1-0.symbols is out of date (new or lost symbols)" \
    "$(sed -n '/dpkg-gensymbols: warning/,/^ dh_/p' "$WORK/build.log" | head -40)"
else
  ok "the exported symbols match debian/libsbx-1-0.symbols"
fi

# 2. Lint: no error and no warning (information tags are allowed).
if command -v lintian >/dev/null 2>&1; then
  # Its own TMPDIR: lintian leaves mldbm-* files behind in the one it uses.
  mkdir "$WORK/lintian-tmp"
  if TMPDIR=$WORK/lintian-tmp lintian --display-info --tag-display-limit 0 --fail-on error,warning \
       "$WORK"/sbx_*_"$arch".changes >"$WORK/lintian.log" 2>&1; then
    ok "lintian: no errors, no warnings ($(grep -c '^I: ' "$WORK/lintian.log") information tags; $(elapsed) s)"
  else
    not_ok "lintian reports errors or warnings" "$(grep -v '^N: ' "$WORK/lintian.log" | head -40)"
  fi
else
  not_ok "lintian is not installed (scripts/setup.sh installs it)"
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "# package: not root; the packages are built and linted, not installed"
  [ "$FAILED" -eq 0 ]; exit
fi

# 3. Install into this machine.
# shellcheck disable=SC2086
if out=$(dpkg -i $debs 2>&1); then ok "dpkg -i installed the packages"
else not_ok "dpkg -i failed" "$out"; fi
for p in $PACKAGES; do dpkg -L "$p" 2>/dev/null; done | sort -u >"$WORK/files"
if [ "$(wc -l <"$WORK/files")" -gt 20 ]; then ok "the packages installed $(wc -l <"$WORK/files") paths"
else not_ok "the packages list too few files" "$(cat "$WORK/files")"; fi

# 4. Use the installed files: /usr/bin/sbx with no SBX_PLUGIN_PATH finds its
#    plugins in /usr/lib/<triplet>/sbx-1/plugins and runs a sandboxed
#    command at level full, as root and as the unprivileged user.
plugindir=/usr/lib/$multiarch/sbx-1/plugins
# run COMMAND...: in the workspace $ws, as $who ($AS is the command prefix
# that switches to that user), with nothing pointing sbx at other files.
run () {
  # shellcheck disable=SC2086
  (cd "$ws" && $AS env -u SBX_PLUGIN_PATH -u SBX_BACKEND -u LD_LIBRARY_PATH -u GI_TYPELIB_PATH "$@")
}
check_installed () {
  who=$1; shift
  AS="$*"
  ws=$WORK/ws-$who
  mkdir "$ws"
  [ "$who" = root ] || chown "$TEST_USER" "$ws"
  if out=$(run /usr/bin/sbx doctor 2>&1); then
    ok "$who: sbx doctor exits 0"
  else
    not_ok "$who: sbx doctor failed" "$out"
  fi
  json=$(run /usr/bin/sbx doctor --json 2>&1)
  verdict=$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
plugindir = sys.argv[1]
loaded = sorted(p["name"] for p in d["plugins"] if p["path"].startswith(plugindir + "/") and p.get("state") == "loaded")
print(d["build"]["plugindir"] == plugindir, ",".join(loaded), d["default_sandboxed"]["report"]["level"])
' "$plugindir" 2>&1)
  if [ "$verdict" = "True egress-http,linux,report-jsonl,unconfined full" ]; then
    ok "$who: sbx doctor --json: built-in plugin directory $plugindir, plugins egress-http, linux, report-jsonl, unconfined loaded from it, level full"
  else
    not_ok "$who: sbx doctor --json does not show the installed plugins at level full" "$verdict" "$json"
  fi
  if out=$(run /usr/bin/sbx run --report -- true 2>&1) \
     && printf '%s\n' "$out" | grep -q '^level: *full$' \
     && printf '%s\n' "$out" | grep -q '^backend: *linux-userns$'; then
    ok "$who: sbx run --report -- true ran at level full (linux-userns)"
  else
    not_ok "$who: sbx run --report -- true" "$out"
  fi
  # Positive control for the sandbox the packages installed: the same
  # write outside the workspace succeeds without sbx and is refused in it.
  target=$WORK/outside-$who
  mkdir "$target"; [ "$who" = root ] || chown "$TEST_USER" "$target"
  if run sh -c "echo x > '$target/plain'" 2>/dev/null && [ -f "$target/plain" ] \
     && ! run /usr/bin/sbx run -- sh -c "echo x > '$target/sandboxed'" 2>/dev/null \
     && [ ! -e "$target/sandboxed" ]; then
    ok "$who: a write outside the workspace works without sbx and is refused under the installed sbx"
  else
    not_ok "$who: write outside the workspace: plain=$(ls "$target")"
  fi
  # In a user namespace that does not map root (a Flatpak app, a program sbx
  # itself runs, unshare -r), root's files show the overflow uid: the
  # built-in plugins load when /usr is mounted read-only there, as in those,
  # and the command runs confined; on a writable /usr they are refused, with
  # the reason.  Positive control: the same command without the namespace.
  if [ "$who" != root ]; then
    ro_usr='mount --bind /usr /usr && mount -o remount,bind,ro /usr && exec "$@"'
    if out=$(run unshare -U -r -m sh -c "$ro_usr" sh /usr/bin/sbx run --report -- sh -c 'echo nested-ok' 2>&1) \
       && printf '%s\n' "$out" | grep -qx nested-ok && printf '%s\n' "$out" | grep -q '^level: *full$'; then
      ok "$who: in a user namespace that does not map root, with /usr read-only, the installed plugins load and sbx run runs at level full"
    else
      not_ok "$who: sbx run in a user namespace with a read-only /usr" "$out"
    fi
    if out=$(run unshare -U -r -m /usr/bin/sbx doctor 2>&1); \
       printf '%s\n' "$out" | grep -q "plugin directory '$plugindir' is owned by uid [0-9]*.*only on a read-only mount"; then
      ok "$who: in a user namespace that does not map root, with /usr writable, the built-in plugin directory is refused and doctor says why"
    else
      not_ok "$who: sbx doctor in a user namespace with a writable /usr" "$out"
    fi
  fi
  # sbx inside sbx: the inner sbx finds its plugins (the outer sandbox shows
  # /usr read-only, root's files as the overflow uid for the unprivileged
  # user), falls to the rung its host allows (no user namespaces inside:
  # linux-landlock) and confines: a write the outer sandbox allows (the
  # control) is refused by the inner one, whose workspace is a subdirectory.
  mkdir "$ws/inner"; [ "$who" = root ] || chown "$TEST_USER" "$ws/inner"
  if out=$(run /usr/bin/sbx run -- /usr/bin/sbx run --workspace "$ws/inner" --report -- \
             sh -c "echo nested-ok; echo x > '$ws/by-inner' || echo inner-refused" 2>&1) \
     && printf '%s\n' "$out" | grep -qx nested-ok && printf '%s\n' "$out" | grep -qx inner-refused \
     && printf '%s\n' "$out" | grep -q '^backend: *linux-landlock$' && [ ! -e "$ws/by-inner" ] \
     && run /usr/bin/sbx run -- sh -c "echo x > '$ws/by-outer'" && [ -f "$ws/by-outer" ]; then
    ok "$who: sbx inside sbx runs at linux-landlock and refuses a write the outer sandbox allows"
  else
    not_ok "$who: sbx inside sbx" "$out"
  fi
  if out=$(run /usr/bin/python3 -c '
import gi
gi.require_version("Sbx", "1.0")
from gi.repository import Sbx
print(Sbx.Level.to_string(Sbx.Level.FULL))
' 2>&1) && [ "$out" = full ]; then
    ok "$who: PyGObject loads the installed Sbx-1.0 typelib"
  else
    not_ok "$who: the installed typelib" "$out"
  fi
}
check_installed root
if id "$TEST_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$TEST_USER"; then
  UHOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
  check_installed "$TEST_USER" runuser -u "$TEST_USER" -- env -i HOME="$UHOME" PATH=/usr/bin:/bin LANG=C.UTF-8
else
  not_ok "cannot create the unprivileged user $TEST_USER"
fi

# The -dev package: the README's C example builds against the installed
# headers and pkg-config file and runs.
if out=$(cc -o "$WORK/run-hello" examples/run-hello.c $(pkg-config --cflags --libs sbx-1) 2>&1) \
   && mkdir "$WORK/hello-ws" "$WORK/hello-scratch" \
   && out=$(cd "$WORK/hello-ws" && env -u SBX_PLUGIN_PATH "$WORK/run-hello" "$WORK/hello-ws" "$WORK/hello-scratch" 2>&1) \
   && printf '%s\n' "$out" | grep -qx "output: hello from the sandbox"; then
  ok "examples/run-hello.c builds with pkg-config sbx-1 $(pkg-config --modversion sbx-1) and runs"
else
  not_ok "examples/run-hello.c against the installed libsbx-1-dev" "$out"
fi

# The -dev package's plugin SDK (sbx-plugin-1: the ABI header and the
# author's helpers): examples/plugin-skeleton builds against the installed
# headers and pkg-config file alone, and the installed sbx-conformance
# passes it.
if out=$(meson setup "$WORK/skeleton" examples/plugin-skeleton 2>&1 && meson compile -C "$WORK/skeleton" 2>&1) \
   && ! grep -o -- '-I[^ ]*' "$WORK/skeleton/build.ninja" | grep -v -e '^-I/usr/include' -e '^-I\.' -e "^-I$SRC" -e '\.p$' -e 'plugin-skeleton$' | grep -q . \
   && grep -q -- '-I/usr/include/sbx-plugin-1' "$WORK/skeleton/build.ninja" \
   && out=$(env -u SBX_PLUGIN_PATH -u SBX_BACKEND /usr/bin/sbx-conformance "$WORK/skeleton/sbx-plugin-skeleton.so" 2>&1) \
   && printf '%s\n' "$out" | grep -q '^ok .* skeleton env-scrub/supervisor-secret-hidden' \
   && ! printf '%s\n' "$out" | grep -q '^not ok'; then
  ok "examples/plugin-skeleton builds with pkg-config sbx-plugin-1 $(pkg-config --modversion sbx-plugin-1) and passes the installed sbx-conformance"
else
  not_ok "examples/plugin-skeleton against the installed sbx-plugin-1" "$out"
fi

# Man pages and completion where the system looks for them.
if [ "$(man -w sbx 2>&1)" = /usr/share/man/man1/sbx.1.gz ] && [ "$(man -w 5 sbx-profile 2>&1)" = /usr/share/man/man5/sbx-profile.5.gz ] \
   && out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 sbx 2>&1 >/dev/null) && [ -z "$out" ] \
   && out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 5 sbx-profile 2>&1 >/dev/null) && [ -z "$out" ]; then
  ok "man sbx and man sbx-profile render without warnings"
else
  not_ok "installed man pages" "$(man -w sbx 2>&1)" "$out"
fi
if out=$(bash -c '. /usr/share/bash-completion/bash_completion; _completion_loader sbx; COMP_WORDS=(sbx r); COMP_CWORD=1; _sbx; echo "${COMPREPLY[*]}"' 2>&1) \
   && [ "$out" = run ]; then
  ok "bash-completion loads the installed completion: sbx r -> run"
else
  not_ok "installed completion: sbx r -> '$out'"
fi

# The API reference of libsbx-1-doc: the pages tests/packaging checks in a
# build tree, here as installed (the guides of docs/meson.build included).
guides=$(sed -n "s/^  '\([a-z-]*\.md\)',\$/\1/p" docs/meson.build)
if out=$(sh tests/packaging/test-api-reference.sh /usr/share/doc/sbx-1 $guides 2>&1) \
   && ! printf '%s\n' "$out" | grep -q '^not ok' && [ -n "$guides" ]; then
  ok "libsbx-1-doc: the gi-docgen reference and the guides ($(echo $guides)) are in /usr/share/doc/sbx-1"
else
  not_ok "libsbx-1-doc: the installed API reference" "$out"
fi

# 5. Purge: nothing of the packages is left.
# shellcheck disable=SC2086
if out=$(dpkg --purge $PACKAGES 2>&1); then ok "dpkg --purge removed the packages"
else not_ok "dpkg --purge failed" "$out"; fi
left=""
while IFS= read -r f; do
  # Directories the packages share with the system stay.
  if [ -e "$f" ] && [ ! -d "$f" ]; then left="$left $f"; fi
done <"$WORK/files"
for d in "$plugindir" /usr/lib/"$multiarch"/sbx-1 /usr/share/sbx-1 /usr/share/doc/sbx-1 /usr/include/sbx-1 /usr/include/sbx-plugin-1; do
  [ -e "$d" ] && left="$left $d"
done
status=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' $PACKAGES 2>/dev/null | grep -v '^un ' | grep -v '^$' || true)
if [ -z "$left" ] && [ -z "$status" ]; then ok "nothing of the packages is left after the purge"
else not_ok "left after the purge:" "$left" "$status"; fi

echo "# package: phase took $(elapsed) s"
[ "$FAILED" -eq 0 ]
