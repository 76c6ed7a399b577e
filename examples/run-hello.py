#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's Python example (PyGObject + the Sbx-1.0 typelib).  Run by the
# test suite with GI_TYPELIB_PATH pointing at the build tree.
#   run-hello.py WORKSPACE SCRATCH
import sys

import gi
gi.require_version("Sbx", "1.0")
from gi.repository import Sbx

workspace, scratch = sys.argv[1], sys.argv[2]

profile = Sbx.Profile.new_default(workspace)
options = Sbx.ExecutorSetOptions.new()
options.set_scratch_root(scratch)
options.set_max_executors(4)

executor_set = Sbx.ExecutorSet.new(profile, options)
executor = executor_set.for_key("demo")
try:
    result = executor.run(workspace, ["sh", "-c", "echo hello from the sandbox"], None, None)
    print("output:", result.get_output().get_data().decode(), end="")
    print("exit code:", result.get_exit_status())
    print("level:", Sbx.level_to_string(executor.get_level()))
    print("guarantees:", ", ".join(Sbx.guarantees_to_strv(executor.get_guarantees())))
    # The registry lists snapshots: one record per extension of a loaded plugin.
    backends = [ext.get_name() for ext in Sbx.Registry.get_default().list_extensions()
                if ext.get_kind() == Sbx.ExtensionKind.BACKEND]
    print("backends:", ", ".join(backends))
except gi.repository.GLib.Error as error:
    # Domain and code survive: e.g. sbx-executor-error-quark / not-found.
    print("sbx refused:", error.domain, error.code, error.message, file=sys.stderr)
    sys.exit(1)
finally:
    executor_set.close(None)
