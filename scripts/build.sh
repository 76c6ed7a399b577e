#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Configures (once) and builds sbx in _build.  Used by run-main.sh and test.sh.
set -eu
cd "$(dirname "$0")/.."
BUILD=${SBX_BUILD_DIR:-_build}
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" --prefix=/usr/local "$@" >/dev/null
fi
ninja -C "$BUILD" >/dev/null
