#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's main-job command: installs dependencies, builds sbx, then runs a
# real command under the embedded default profile and prints what was enforced.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
exec ./_build/tools/sbx profile show --default
