# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the typelib tests share (test-typelib-fs-denials.py,
test-typelib-file-ask.py): TAP output, and the Sbx-1.0 typelib loaded
from the build with the test plugins, or the whole test skipped with the
reason (a sanitizer build, no PyGObject or typelib)."""
import os
import sys


class Tap:
    """Numbers TAP results; the details follow a result as comments."""

    def __init__(self):
        self.n = 0

    def __call__(self, ok, name, details=(), skip=None):
        self.n += 1
        if skip is not None:
            print(f"ok {self.n} {name} # SKIP {skip}")
        else:
            print(f"{'ok' if ok else 'not ok'} {self.n} {name}")
            for detail in details:
                for line in str(detail).splitlines() or [""]:
                    print(f"# {line}")
        sys.stdout.flush()

    def plan(self):
        print(f"1..{self.n}")


def skip_all(reason):
    print(f"1..0 # SKIP {reason}")
    sys.exit(0)


def load_sbx(sanitized):
    """(GLib, Sbx) from the typelib the build made, the plugins the test
    environment names (SBX_TEST_PLUGIN_DIRS); exits skipping when they
    cannot be had."""
    if sanitized == "true":
        skip_all("sanitizer build: python3 cannot load an ASan-built libsbx-1")
    os.environ["SBX_PLUGIN_PATH"] = os.environ.get("SBX_TEST_PLUGIN_DIRS", "")
    os.environ.pop("SBX_BACKEND", None)
    try:
        import gi
        gi.require_version("Sbx", "1.0")
        from gi.repository import GLib, Sbx
    except (ImportError, ValueError) as e:
        skip_all(f"PyGObject or the Sbx-1.0 typelib is unavailable: {e}")
    return GLib, Sbx
