#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Cross-builds the win32-restricted backend and its tests with mingw-w64,
# from the plugin SDK (core/sdk/sbx) alone (no GLib: Debian ships none for mingw),
# and runs the tests under wine when --run is given.
#
#   scripts/build-win32.sh OUTDIR [--run]
#
# Builds OUTDIR/sbx-plugin-win32.dll (exporting only sbx_plugin_win32_entry),
# OUTDIR/test-abi-layout.exe (the ABI layout frozen for win64 LLP64),
# OUTDIR/test-win32.exe and OUTDIR/test-win32-child.exe.  With --run, both
# test programs run under wine64 in a private prefix OUTDIR/wineprefix and
# their TAP goes to stdout; the exit status is theirs.
set -eu

out=${1:?usage: build-win32.sh OUTDIR [--run]}
run=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
cc=${SBX_MINGW_CC:-x86_64-w64-mingw32-gcc}

command -v "$cc" >/dev/null 2>&1 || {
  echo "build-win32: $cc not found. Hint: apt-get install mingw-w64" >&2
  exit 1
}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The SDK's headers laid out as installed (include/sbx-plugin-1/sbx/...), so
# the plugin includes <sbx/sbx-plugin-abi.h> exactly as a third party does.
mkdir -p "$out/include/sbx"
cp "$src"/core/sdk/sbx/*.h "$out/include/sbx/"

# The house warnings that apply to plain C, as errors.
cflags="-std=c11 -O2 -g0 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
        -Werror=shadow -Werror=strict-prototypes -Werror=missing-prototypes -Werror=format=2
        -Werror=vla -Werror=undef -Werror=implicit-function-declaration -Wno-format-zero-length
        -D_WIN32_WINNT=0x0A00 -DUNICODE -D_UNICODE
        -I$out/include -I$out/include/sbx -I$src/plugins/win32"
plugin_src="$src/plugins/win32/sbx-win32-plan.c $src/plugins/win32/sbx-win32-plugin.c $src/plugins/win32/sbx-win32-spawn.c"

# shellcheck disable=SC2086
$cc $cflags -o "$out/test-abi-layout.exe" "$src/tests/abi/test-abi-layout.c"
# shellcheck disable=SC2086
$cc $cflags -shared -o "$out/sbx-plugin-win32.dll" $plugin_src -ladvapi32
# shellcheck disable=SC2086
$cc $cflags -o "$out/test-win32.exe" "$src/tests/win32/test-win32.c" $plugin_src -ladvapi32 -lshell32
# shellcheck disable=SC2086
$cc $cflags -Wno-missing-prototypes -o "$out/test-win32-child.exe" "$src/tests/win32/test-win32-child.c" -lshell32

# The DLL exports the entry symbol and nothing else (SBX_PLUGIN_EXPORT).
objdump=${SBX_MINGW_OBJDUMP:-x86_64-w64-mingw32-objdump}
exports=$("$objdump" -p "$out/sbx-plugin-win32.dll" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | grep -c '^[[:space:]]*\[ *[0-9]' || true)
if ! "$objdump" -p "$out/sbx-plugin-win32.dll" | grep -q 'sbx_plugin_win32_entry' || [ "$exports" -ne 1 ]; then
  echo "build-win32: sbx-plugin-win32.dll must export exactly sbx_plugin_win32_entry (found $exports exports)" >&2
  exit 1
fi
echo "build-win32: built $out/sbx-plugin-win32.dll (1 export), test-abi-layout.exe, test-win32.exe" >&2

[ "$run" = "--run" ] || exit 0

wine=${SBX_WINE:-}
if [ -z "$wine" ]; then
  for w in wine64 /usr/lib/wine/wine64 wine; do
    if command -v "$w" >/dev/null 2>&1; then wine=$w; break; fi
  done
fi
[ -n "$wine" ] || { echo "build-win32: wine64 not found. Hint: apt-get install wine64" >&2; exit 1; }

# wine keeps its server directory under TMPDIR: a private one, so nothing of
# it lands in the caller's.
mkdir -p "$out/tmp"
export WINEPREFIX="$out/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" TMPDIR="$out/tmp"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  "$wine" wineboot --init >/dev/null 2>&1 || true
fi
status=0
"$wine" "$out/test-abi-layout.exe" | tr -d '\r' || status=1
"$wine" "$out/test-win32.exe" | tr -d '\r' || status=1
# The wineserver of this prefix exits after its last client; wait for it so
# nothing of ours outlives the phase.
wineserver=$(dirname "$(command -v "$wine")")/wineserver
[ -x "$wineserver" ] || wineserver=wineserver
WINEPREFIX="$out/wineprefix" "$wineserver" -w 2>/dev/null || true
exit $status
