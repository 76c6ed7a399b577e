#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A gated command, approved once (PyGObject + the Sbx-1.0 typelib): the
# grant runs it, and a second use of the same token is refused with
# Sbx.GrantError.REPLAY.  Run by the test suite with GI_TYPELIB_PATH
# pointing at the build tree.
#   grant-once.py WORKSPACE SCRATCH
import sys

import gi
gi.require_version("Sbx", "1.0")
from gi.repository import GLib, Sbx

workspace, scratch = sys.argv[1], sys.argv[2]

config = Sbx.ProfileConfig.new()
config.set_workspace(workspace, Sbx.Access.ALLOW, Sbx.Access.ALLOW)
config.set_host(Sbx.Access.DENY, Sbx.Access.DENY)
config.set_network(Sbx.Access.DENY)
config.set_command(Sbx.Access.GATED)
profile = Sbx.Profile.new(config)

options = Sbx.ExecutorSetOptions.new()
options.set_scratch_root(scratch)
options.set_max_executors(4)
executor_set = Sbx.ExecutorSet.new(profile, options)
executor = executor_set.for_key("demo")
argv = ["sh", "-c", "echo approved once"]
try:
    # Without a grant, a gated command is refused: the signal to ask a human.
    try:
        executor.run(workspace, argv, None, None)
        print("ran without a grant", file=sys.stderr)
        sys.exit(1)
    except GLib.Error as error:
        if not error.matches(Sbx.grant_error_quark(), Sbx.GrantError.REQUIRED):
            raise
        print("without a grant: required")

    # The approval: one token for exactly this argv, this directory, this execution.
    command = Sbx.grant_command_for_argv(argv)
    token = executor.issue_grant("exec-1", command, workspace,
                                 Sbx.GRANT_CLASS_COMMAND_START, None, None)
    run_options = Sbx.RunOptions.new()
    run_options.set_execution_id("exec-1")
    run_options.set_grants([token])
    result = executor.run(workspace, argv, run_options, None)
    print("output:", result.get_output().get_data().decode(), end="")
    print("spent:", result.get_grants_spent()[0])

    try:
        executor.run(workspace, argv, run_options, None)
        print("the token was spent twice", file=sys.stderr)
        sys.exit(1)
    except GLib.Error as error:
        if not error.matches(Sbx.grant_error_quark(), Sbx.GrantError.REPLAY):
            raise
        print("second use: replay")
except GLib.Error as error:
    print("sbx refused:", error.domain, error.code, error.message, file=sys.stderr)
    sys.exit(1)
finally:
    executor_set.close(None)
