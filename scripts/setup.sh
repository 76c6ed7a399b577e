#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs everything sbx needs to build, test and benchmark on Debian 12.
# Uses sudo only when not already root.
set -eu

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

PACKAGES="
  build-essential pkg-config meson ninja-build git python3
  libglib2.0-dev libjson-glib-dev libseccomp-dev
  gobject-introspection libgirepository1.0-dev python3-gi gi-docgen
  clang llvm libclang-rt-14-dev
  bubblewrap hyperfine util-linux passwd procps
  python3-dbusmock dbus-daemon
  coreutils grep sed findutils tar make gcc
  scdoc man-db groff-base bash-completion python3-jsonschema
  debhelper dpkg-dev lintian
  curl openssl tinyproxy glib-networking
"

if [ "${SBX_SKIP_APT:-0}" != "1" ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
fi
