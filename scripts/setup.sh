#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs everything sbx needs to build, test and benchmark on Debian 12.
# Uses sudo only when not already root.
set -eu

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

PACKAGES="
  build-essential pkg-config meson ninja-build git python3
  libglib2.0-dev libjson-glib-dev libseccomp-dev
  gobject-introspection libgirepository1.0-dev python3-gi gjs gi-docgen
  clang llvm libclang-rt-14-dev uncrustify
  bubblewrap hyperfine util-linux passwd procps bash vim-tiny
  python3-dbusmock dbus-daemon
  coreutils grep sed findutils tar make gcc
  scdoc man-db groff-base bash-completion python3-jsonschema
  debhelper dpkg-dev lintian
  curl openssl tinyproxy glib-networking
  tmux python3-pip
  mingw-w64 wine64
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static
"
# arm64 multiarch libraries for the aarch64 cross build (scripts/cross-aarch64.sh).
ARM64_PACKAGES="libglib2.0-dev:arm64 libjson-glib-dev:arm64 libseccomp-dev:arm64"

if [ "${SBX_SKIP_APT:-0}" != "1" ]; then
  export DEBIAN_FRONTEND=noninteractive
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
  fi
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $PACKAGES $ARM64_PACKAGES >/dev/null
  # npm only drives one staging test (/stage/tool/npm), which skips without
  # it.  Debian's npm conflicts with a nodejs from elsewhere (NodeSource's
  # ships its own npm), so it is installed only where npm is missing, and a
  # refusal is said, never fatal.
  if ! command -v npm >/dev/null 2>&1; then
    $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null 2>&1 \
      || echo "setup: Debian's npm could not be installed; /stage/tool/npm will skip" >&2
  fi
fi

# /dev/fuse as a standard Debian host has it.  udev's default rule
# (50-udev-default.rules: KERNEL=="fuse", MODE="0666") lets every user open
# it, which is what an unprivileged caller's rung-1 view needs to observe
# denials outside the view (docs/linux-backend.md, "Denials outside the
# view").  Where /dev is not managed by udev (containers, some VMs) the
# node stays 0600 and those runs report "fs-denials: not observed"; the
# test machine is set up like the standard host, and the not-observed path
# is tested on its own (sbx inside sbx has no /dev/fuse).
if [ -c /dev/fuse ] && [ ! -e /run/udev/control ] && [ "$(stat -c %a /dev/fuse)" != 666 ]; then
  $SUDO chmod 0666 /dev/fuse
  echo "setup: /dev/fuse set to mode 0666, as udev's default rule on Debian does" >&2
fi
