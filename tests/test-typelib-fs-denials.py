#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: filesystem denials end to end through the Sbx-1.0 typelib (PyGObject),
# on both Linux rungs.  A tool reads a host file (cat), writes a file in a
# gated root, executes a host program and lists a directory in the gated
# root, all outside the view.  For each rung:
#
#   control     each access works without the sandbox (the positive
#               control), and inside it is refused without a grant;
#   events      exactly one Sbx.Process::denied per attempt, on this main
#               context, with the operation, the path and the grant that
#               would open it; SKIPPED (with the reason) only when the run's
#               report says filesystem denials are not observed: no
#               "fs-denials" entry, or that entry "unenforced";
#   grant-back  each grant, passed back on the next run, opens exactly
#               that access (the event's grant when events are observed,
#               else the grant the profile implies), and is spent.
#
#   test-typelib-fs-denials.py SANITIZED(true|false)
# Environment: GI_TYPELIB_PATH and LD_LIBRARY_PATH at the build's core/,
# SBX_TEST_PLUGIN_DIRS (tests/meson.build).
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fs_tree import ScratchTree  # noqa: E402
from typelib_tap import Tap, load_sbx  # noqa: E402

report = Tap()
GLib, Sbx = load_sbx(sys.argv[1] if len(sys.argv) > 1 else "false")

RUNGS = ("linux-userns", "linux-landlock")
FS_MECHANISMS = ("view-supervisor", "landlock-audit")


class Tree(ScratchTree):
    """A workspace, a scratch root, a gated root (read and write) and a
    host directory outside every root (host read gated, write denied)."""

    def __init__(self):
        super().__init__("sbx-typelib-fs-")
        self.ws = os.path.join(self.tmp, "ws")
        self.root = os.path.join(self.tmp, "root")
        self.host = os.path.join(self.tmp, "host")
        for d in (self.ws, self.host, os.path.join(self.root, "sub")):
            os.makedirs(d)
        self.put(self.root, "file", "R-FILE\n")
        self.put(self.root, "sub/deep", "R-DEEP\n")
        self.put(self.host, "config", "H-CONFIG\n")
        self.put(self.host, "tool", "#!/bin/sh\necho H-TOOL-RAN\n", 0o755)


def attempts(tree):
    """(name, operation, path, script, text it prints once allowed,
    expected grant class, expected grant target)."""
    return [
        ("read", Sbx.DenialOperation.READ, f"{tree.host}/config",
         f"cat {tree.host}/config", "H-CONFIG",
         Sbx.GRANT_CLASS_FILESYSTEM_PATH_READ, f"{tree.host}/config"),
        ("write", Sbx.DenialOperation.WRITE, f"{tree.root}/file",
         f"echo R-WRITTEN > {tree.root}/file && echo WROTE", "WROTE",
         Sbx.GRANT_CLASS_FILESYSTEM_PATH_WRITE, f"{tree.root}/file"),
        ("exec", Sbx.DenialOperation.EXEC, f"{tree.host}/tool",
         f"{tree.host}/tool", "H-TOOL-RAN",
         Sbx.GRANT_CLASS_FILESYSTEM_PATH_READ, f"{tree.host}/tool"),
        # A listing alone: `ls DIR` stats DIR first, and that attempt (a
        # read of its metadata) is the one refused and reported.
        ("list", Sbx.DenialOperation.LIST, f"{tree.root}/sub",
         f"python3 -c 'import os, sys; print(*os.listdir(sys.argv[1]))' {tree.root}/sub", "deep",
         Sbx.GRANT_CLASS_FILESYSTEM_TREE_READ, tree.root),
    ]


def make_executor(tree, backend):
    config = Sbx.ProfileConfig.new()
    config.set_workspace(tree.ws, Sbx.Access.ALLOW, Sbx.Access.ALLOW)
    config.set_host(Sbx.Access.GATED, Sbx.Access.DENY)
    config.set_network(Sbx.Access.DENY)
    config.set_command(Sbx.Access.ALLOW)
    config.add_root(tree.root, Sbx.Access.GATED, Sbx.Access.GATED)
    profile = Sbx.Profile.new(config)
    options = Sbx.ExecutorSetOptions.new()
    options.set_scratch_root(tree.scratch)
    options.set_backend(backend)
    executor_set = Sbx.ExecutorSet.new(profile, options)
    return executor_set, executor_set.for_key("k")


def run_options(executor, execution_id, argv, cwd, grants):
    opts = Sbx.RunOptions.new()
    opts.set_execution_id(execution_id)
    command = Sbx.grant_command_for_argv(argv)
    opts.set_grants([executor.issue_grant(execution_id, command, cwd, cls, target, None)
                     for cls, target in grants])
    return opts


def spawn_collect(executor, cwd, argv, execution_id):
    """Spawns argv; returns the denials the signal delivered on this main
    context and the process's spawn report."""
    seen = []
    loop = GLib.MainLoop()
    opts = run_options(executor, execution_id, argv, cwd, [])
    opts.set_stdout(Sbx.StdioMode.NULL)
    opts.set_stderr(Sbx.StdioMode.NULL)
    process = executor.spawn(cwd, argv, opts, None)
    process.connect("denied", lambda p, d: seen.append(d))
    process.wait_async(None, lambda p, res: (p.wait_finish(res), loop.quit()))
    loop.run()
    context = GLib.MainContext.default()
    while context.pending():          # denials queued just before the exit
        context.iteration(False)
    return seen, process.get_spawn_report()


def fs_denials_observed(spawn_report):
    """None when the report says filesystem denials are observed, else why not."""
    for i in range(spawn_report.get_n_entries()):
        if spawn_report.get_entry_feature(i) == "fs-denials":
            if spawn_report.get_entry_status(i) == Sbx.ReportStatus.UNENFORCED:
                return "fs-denials: unenforced (%s)" % spawn_report.get_entry_detail(i)
            return None
    return "the %s report has no fs-denials entry (filesystem denials are not observed)" % \
        spawn_report.get_backend()


def output_of(result):
    data = result.get_output()
    return bytes(data.get_data()).decode(errors="replace") if data is not None else ""


def run_rung(backend):
    tree = Tree()
    executor_set = None
    try:
        try:
            executor_set, executor = make_executor(tree, backend)
        except GLib.Error as e:
            for part in ("control", "events", "grant-back"):
                report(True, f"/typelib/fs-denials/{backend}/{part}", skip=f"{backend} is unavailable: {e.message}")
            return
        cases = attempts(tree)

        # control: outside, each access works (on a copy: the write
        # changes nothing the sandboxed runs see); inside, refused
        details = []
        copy = os.path.join(tree.tmp, "control")
        shutil.copytree(tree.root, os.path.join(copy, "root"))
        for name, _, _, script, text, _, _ in cases:
            outside = subprocess.run(["/bin/sh", "-c", script.replace(tree.root, os.path.join(copy, "root"))],
                                     capture_output=True, text=True, check=False)
            if text not in outside.stdout:
                details.append(f"{name}: outside the sandbox it fails: {outside.stdout}{outside.stderr}")
            argv = ["/bin/sh", "-c", script]
            inside = executor.run(tree.ws, argv, run_options(executor, f"plain-{name}", argv, tree.ws, []), None)
            if text in output_of(inside):
                details.append(f"{name}: the sandbox allowed it without a grant: {output_of(inside)}")
        report(not details, f"/typelib/fs-denials/{backend}/control", details)

        # events: the four attempts in one spawn
        script = "; ".join(c[3] for c in cases) + "; true"
        argv = ["/bin/sh", "-c", script]
        seen, spawn_report = spawn_collect(executor, tree.ws, argv, "events")
        not_observed = fs_denials_observed(spawn_report)
        grants = {}
        if not_observed is not None:
            report(True, f"/typelib/fs-denials/{backend}/events", skip=not_observed)
        else:
            details = []
            for name, op, path, _, _, cls, target in cases:
                mine = [d for d in seen if d.get_operation() == op and d.get_target() == path]
                if len(mine) != 1:
                    details.append(f"{name}: {len(mine)} denied signals for {path}, expected exactly one")
                    continue
                d = mine[0]
                if d.get_mechanism() not in FS_MECHANISMS:
                    details.append(f"{name}: mechanism {d.get_mechanism()}")
                if (d.get_grant_class(), d.get_grant_target()) != (cls, target):
                    details.append(f"{name}: grant {d.get_grant_class()}:{d.get_grant_target()}, expected "
                                   f"{cls}:{target} ({d.to_string()})")
                grants[name] = (d.get_grant_class(), d.get_grant_target())
            for d in seen:
                details.append(f"(seen) {d.to_string()}")
            report(not [x for x in details if not x.startswith("(seen)")],
                   f"/typelib/fs-denials/{backend}/events", details)

        # grant-back: each grant opens exactly its access, and is spent
        details = []
        for name, op, path, script_one, text, cls, target in cases:
            grant = grants.get(name, (cls, target))
            argv = ["/bin/sh", "-c", script_one]
            try:
                result = executor.run(tree.ws, argv,
                                      run_options(executor, f"granted-{name}", argv, tree.ws, [grant]), None)
            except GLib.Error as e:
                details.append(f"{name}: {grant[0]}:{grant[1]} refused: {e.message}")
                continue
            out = output_of(result)
            if text not in out:
                details.append(f"{name}: with {grant[0]}:{grant[1]} the access still fails: {out}")
            spent = result.get_grants_spent()
            if len(spent) != 1 or not spent[0].startswith(grant[0]):
                details.append(f"{name}: grants spent {spent}")
            if not_observed is None and [d for d in result.get_denials() if d.get_target() == path]:
                details.append(f"{name}: still a denial for {path} with its grant")
        report(not details, f"/typelib/fs-denials/{backend}/grant-back", details)
    finally:
        if executor_set is not None:
            executor_set.close(None)
        tree.clear()


for rung in RUNGS:
    run_rung(rung)
report.plan()
