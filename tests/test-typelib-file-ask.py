#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: live approval of gated file reads through the Sbx-1.0 typelib
# (PyGObject).  At rung 1 (linux-userns) the view supervisor holds a read
# of a host file outside the view that the profile gates (host read
# "gated"), asks through the run's decision function, and serves that file
# once approved (plugins/linux/sbx-linux-view-files.c).  Against a host
# directory outside every root:
#
#   control       the files read without the sandbox (the positive
#                 control); inside, an asking-free run refuses them (EACCES)
#   once          ONCE reads the right content; the second open of the same
#                 file is asked again (and refused when denied)
#   for-run       FOR_RUN: three reads, one question; a spent grant
#                 "approved while running"
#   deny          EACCES and the denial naming the exact read grant
#   timeout       nobody answers: refused when the ask times out
#   run-ends      the tool exits while a read is held: the run ends at once
#                 (no wait for the timeout), the question is no longer pending
#   two           two reads held at the same time, both served
#   flood         many reads held at once: at most the supervisor's bound is
#                 asked, every read ends refused (timeout), the run ends
#   deny-dim      a profile denying host read: never asked, refused
#   same-path     a stat is never asked (refused before any approval; after a
#                 FOR_RUN approval of a read the path's metadata reads too);
#                 after it, an exec and a write of that path and a listing
#                 of its directory are refused and never asked, and the host
#                 file is unchanged (outside, the tool runs)
#   reopen        a ONCE-approved file reopened through /proc/self/fd is
#                 asked again (and refused when denied)
#   rung-2        linux-landlock: nothing observes the attempt, nothing asked,
#                 and the "fs-denials" report entry says files are not asked
#                 (rung 1's, in for-run, says a gated read is asked)
#
#   test-typelib-file-ask.py SANITIZED(true|false)
# Environment: GI_TYPELIB_PATH and LD_LIBRARY_PATH at the build's core/,
# SBX_TEST_PLUGIN_DIRS (tests/meson.build).
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fs_tree import ScratchTree  # noqa: E402
from typelib_tap import Tap, load_sbx  # noqa: E402

report = Tap()
GLib, Sbx = load_sbx(sys.argv[1] if len(sys.argv) > 1 else "false")

N_FLOOD = 100
MAX_HELD = 64   # sbx-linux-view-files.c


class Tree(ScratchTree):
    """A workspace and host directories outside every root (host read
    gated, host write denied)."""

    def __init__(self):
        super().__init__("sbx-typelib-ask-")
        self.ws = os.path.join(self.tmp, "ws")
        self.host = os.path.join(self.tmp, "host")
        self.other = os.path.join(self.tmp, "other")
        for d in (self.ws, self.host, self.other):
            os.makedirs(d)
        self.put(self.host, "a", "H-ALPHA\n")
        self.put(self.host, "b", "H-BRAVO\n")
        self.put(self.host, "tool", "#!/bin/sh\necho H-TOOL-RAN\n", 0o755)
        self.put(self.other, "c", "O-CHARLIE\n")
        # The kernel looks one name of a directory up at a time: reads held
        # together are of files in distinct directories outside the view.
        for i in range(N_FLOOD):
            os.makedirs(self.flood(i))
            self.put(self.flood(i), "f", f"F{i}\n")

    def flood(self, i):
        return os.path.join(self.tmp, f"fl{i}")

    def path(self, name):
        return os.path.join(self.host, name)


def make_executor(tree, backend, host_read=None):
    config = Sbx.ProfileConfig.new()
    config.set_workspace(tree.ws, Sbx.Access.ALLOW, Sbx.Access.ALLOW)
    config.set_host(host_read if host_read is not None else Sbx.Access.GATED, Sbx.Access.DENY)
    config.set_network(Sbx.Access.DENY)
    config.set_command(Sbx.Access.ALLOW)
    profile = Sbx.Profile.new(config)
    options = Sbx.ExecutorSetOptions.new()
    options.set_scratch_root(tree.scratch)
    options.set_backend(backend)
    executor_set = Sbx.ExecutorSet.new(profile, options)
    return executor_set, executor_set.for_key("k")


class Asker:
    """The run's decision function: records every question; @policy(asker,
    request) answers it (or keeps it unanswered)."""

    def __init__(self, policy):
        self.policy = policy
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        self.policy(self, request)

    def targets(self):
        return [r.get_denial().get_target() for r in self.requests]


def run(executor, tree, script, policy, execution_id, timeout_us=None, deadline=120):
    """Runs script (sh -c) asking; returns (result or GLib.Error, asker,
    seconds it took)."""
    asker = Asker(policy)
    opts = Sbx.RunOptions.new()
    opts.set_execution_id(execution_id)
    opts.set_ask(True)
    if timeout_us is not None:
        opts.set_ask_timeout(timeout_us)
    opts.set_decision_func(asker)
    loop = GLib.MainLoop()
    out = []
    started = time.monotonic()
    executor.run_async(tree.ws, ["/bin/sh", "-c", script], opts, None,
                       lambda ex, res: (out.append(finish(ex, res)), loop.quit()))
    guard = GLib.timeout_add_seconds(deadline, loop.quit)
    loop.run()
    if out:
        GLib.source_remove(guard)
    return (out[0] if out else None), asker, time.monotonic() - started


def finish(executor, res):
    try:
        return executor.run_finish(res)
    except GLib.Error as e:
        return e


def output_of(result):
    if result is None or isinstance(result, GLib.Error):
        return f"(no result: {result})"
    data = result.get_output()
    return bytes(data.get_data()).decode(errors="replace") if data is not None else ""


def spent_of(result):
    return list(result.get_grants_spent()) if result is not None and not isinstance(result, GLib.Error) else []


def denials_of(result, path):
    if result is None or isinstance(result, GLib.Error):
        return []
    return [d for d in result.get_denials() if d.get_target() == path]


def fs_denials_detail(result):
    """The run's "fs-denials" report entry: what it says about files."""
    if result is None or isinstance(result, GLib.Error):
        return ""
    spawn_report = result.get_spawn_report()
    for i in range(spawn_report.get_n_entries()):
        if spawn_report.get_entry_feature(i) == "fs-denials":
            return spawn_report.get_entry_detail(i) or ""
    return ""


def answer(*decisions):
    """A policy answering the questions in order, the last one for all
    that follow."""
    def policy(asker, request):
        d = decisions[min(len(asker.requests), len(decisions)) - 1]
        {"once": request.allow_once, "run": request.allow_for_run, "deny": request.deny}[d]()
    return policy


def keep(asker, request):
    pass


def check_rung1(tree, executor):
    a, b, tool = tree.path("a"), tree.path("b"), tree.path("tool")
    read_grant = Sbx.GRANT_CLASS_FILESYSTEM_PATH_READ

    # once: the first open approved once, the second asked again and denied
    result, asker, _ = run(executor, tree, f"cat {a}; cat {a}; echo END", answer("once", "deny"), "once")
    out = output_of(result)
    details = [f"output: {out!r}", f"asked: {asker.targets()}", f"spent: {spent_of(result)}"]
    ok = (out.count("H-ALPHA") == 1 and "Permission denied" in out and asker.targets() == [a, a]
          and any(s.startswith(f"{read_grant} {a}: approved while running, once") for s in spent_of(result))
          and len(denials_of(result, a)) >= 1)
    report(ok, "/typelib/file-ask/once", details)

    # for-run: three reads, one question
    result, asker, _ = run(executor, tree, f"cat {a}; cat {a}; cat {a}", answer("run"), "for-run")
    out = output_of(result)
    detail = fs_denials_detail(result)
    ok = (out.count("H-ALPHA") == 3 and asker.targets() == [a]
          and any(s.startswith(f"{read_grant} {a}: approved while running, for the") for s in spent_of(result))
          and "a read of a gated host file is asked" in detail)
    report(ok, "/typelib/file-ask/for-run", [f"output: {out!r}", f"asked: {asker.targets()}",
                                             f"spent: {spent_of(result)}", f"fs-denials: {detail}"])

    # deny: EACCES and the denial with the exact grant
    result, asker, _ = run(executor, tree, f"cat {a}", answer("deny"), "deny")
    out = output_of(result)
    mine = denials_of(result, a)
    ok = ("Permission denied" in out and "H-ALPHA" not in out and asker.targets() == [a] and len(mine) == 1
          and (mine[0].get_grant_class(), mine[0].get_grant_target()) == (read_grant, a) and not spent_of(result))
    report(ok, "/typelib/file-ask/deny", [f"output: {out!r}", f"asked: {asker.targets()}"]
           + [d.to_string() for d in mine])

    # timeout: nobody answers within 300 ms
    result, asker, took = run(executor, tree, f"cat {a}", keep, "timeout", timeout_us=300 * 1000)
    out = output_of(result)
    ok = ("Permission denied" in out and asker.targets() == [a] and not asker.requests[0].is_pending()
          and len(denials_of(result, a)) == 1 and took < 30)
    report(ok, "/typelib/file-ask/timeout", [f"output: {out!r}", f"asked: {asker.targets()}", f"took {took:.1f}s"])


    # run-ends: the tool exits while a read is held (the question stays
    # unanswered; the default timeout is 60 s): the run ends now
    fifo = os.path.join(tree.ws, "go")
    os.mkfifo(fifo)

    def release(asker, request):
        # the read is held: let the tool's main process exit
        threading.Thread(target=lambda: open(fifo, "w").close(), daemon=True).start()

    result, asker, took = run(executor, tree, f"cat {a} > /dev/null 2>&1 & read x < {fifo}; echo MAIN-EXITS",
                              release, "run-ends")
    out = output_of(result)
    ok = ("MAIN-EXITS" in out and asker.targets() == [a] and not asker.requests[0].is_pending() and took < 30)
    report(ok, "/typelib/file-ask/run-ends", [f"output: {out!r}", f"asked: {asker.targets()}",
                                              f"took {took:.1f}s (the ask timeout is 60 s)"])
    os.unlink(fifo)

    # two: both reads held at the same time (the first is answered only
    # once the second is asked), then both approved once
    c = os.path.join(tree.other, "c")

    def both(asker, request):
        if len(asker.requests) == 2:
            for r in asker.requests:
                r.allow_once()

    result, asker, took = run(executor, tree, f"cat {a} & cat {c} & wait", both, "two")
    out = output_of(result)
    ok = "H-ALPHA" in out and "O-CHARLIE" in out and sorted(asker.targets()) == sorted([a, c]) and took < 30
    report(ok, "/typelib/file-ask/two", [f"output: {out!r}", f"asked: {asker.targets()}", f"took {took:.1f}s"])

    # flood: N_FLOOD reads at once, none answered (2 s timeout): at most
    # MAX_HELD held and asked, the rest refused at once; all end refused
    script = (f"for i in $(seq 0 {N_FLOOD - 1}); do (cat {tree.tmp}/fl$i/f >/dev/null 2>&1 || echo R$i) & done; "
              "wait; echo FLOOD-END")
    result, asker, took = run(executor, tree, script, keep, "flood", timeout_us=2 * 1000 * 1000)
    out = output_of(result)
    refused = sum(1 for i in range(N_FLOOD) if f"R{i}\n" in out)
    ok = ("FLOOD-END" in out and refused == N_FLOOD and 1 <= len(asker.requests) <= MAX_HELD
          and not any(r.is_pending() for r in asker.requests))
    report(ok, "/typelib/file-ask/flood", [f"refused {refused}/{N_FLOOD}, asked {len(asker.requests)}, "
                                           f"took {took:.1f}s", out[-300:]])

    # same-path: a read of the tool approved for the run opens nothing
    # else of that path: not an exec, a write or a listing of its
    # directory, none of them asked (outside, the tool runs: the control)
    ran = subprocess.run([tool], capture_output=True, text=True, check=False).stdout
    script = (f"test -r {tool} || echo STAT-REFUSED; cat {tool} >/dev/null && echo READ-OK; "
              f"test -f {tool} && echo STAT-OK; {tool}; echo X >> {tool} && echo WROTE; "
              f"python3 -c 'import os, sys; print(os.listdir(sys.argv[1]))' {tree.host} || echo LIST-REFUSED; "
              f"cat {tool} >/dev/null && echo READ-AGAIN")
    result, asker, _ = run(executor, tree, script, answer("run"), "same-path")
    out = output_of(result)
    with open(tool) as f:
        unchanged = f.read() == "#!/bin/sh\necho H-TOOL-RAN\n"
    ok = ("H-TOOL-RAN" in ran and "STAT-REFUSED" in out and "READ-OK" in out and "STAT-OK" in out
          and "READ-AGAIN" in out and "H-TOOL-RAN" not in out
          and "WROTE" not in out and "LIST-REFUSED" in out and unchanged and asker.targets() == [tool])
    report(ok, "/typelib/file-ask/same-path", [f"output: {out!r}", f"asked: {asker.targets()}",
                                               f"host file unchanged: {unchanged}", f"outside: {ran!r}"])

    # reopen: a ONCE open reopened through /proc/self/fd asks again
    script = ("python3 -c '\nimport os, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nprint(os.read(fd, 64))\n"
              "try:\n    g = os.open(\"/proc/self/fd/%d\" % fd, os.O_RDONLY)\n    print(\"REOPENED\", os.read(g, 64))\n"
              "except OSError as e:\n    print(\"REOPEN-REFUSED\", e.errno)\n' " + a)
    result, asker, _ = run(executor, tree, script, answer("once", "deny"), "reopen")
    out = output_of(result)
    ok = "H-ALPHA" in out and "REOPEN-REFUSED 13" in out and asker.targets() == [a, a]
    report(ok, "/typelib/file-ask/reopen", [f"output: {out!r}", f"asked: {asker.targets()}"])


def main():
    tree = Tree()
    sets = []
    try:
        # control: readable without the sandbox
        outside = subprocess.run(["/bin/sh", "-c", f"cat {tree.path('a')} {tree.path('b')} {tree.other}/c "
                                  f"{tree.flood(0)}/f"],
                                 capture_output=True, text=True, check=False)
        details = [outside.stdout + outside.stderr]
        try:
            es, executor = make_executor(tree, "linux-userns")
            sets.append(es)
        except GLib.Error as e:
            report("H-ALPHA" in outside.stdout, "/typelib/file-ask/control", details)
            for name in ("once", "for-run", "deny", "timeout", "run-ends", "two", "flood", "same-path", "reopen"):
                report(True, f"/typelib/file-ask/{name}", skip=f"linux-userns is unavailable: {e.message}")
            executor = None
        if executor is not None:
            inside = executor.run(tree.ws, ["/bin/sh", "-c", f"cat {tree.path('a')}"], None, None)
            details.append("inside, not asking: " + output_of(inside))
            report("H-ALPHA" in outside.stdout and "H-BRAVO" in outside.stdout and "O-CHARLIE" in outside.stdout
                   and "F0" in outside.stdout
                   and "Permission denied" in output_of(inside) and "H-ALPHA" not in output_of(inside),
                   "/typelib/file-ask/control", details)
            check_rung1(tree, executor)

            # deny-dim: host read denied: never asked
            es2, denying = make_executor(tree, "linux-userns", Sbx.Access.DENY)
            sets.append(es2)
            result, asker, _ = run(denying, tree, f"cat {tree.path('a')}", answer("run"), "deny-dim")
            out = output_of(result)
            mine = denials_of(result, tree.path("a"))
            report("H-ALPHA" not in out and not asker.requests and len(mine) == 1
                   and mine[0].get_grant_class() is None,
                   "/typelib/file-ask/deny-dim", [f"output: {out!r}"] + [d.to_string() for d in mine])

        # rung 2: nothing observes the attempt, nothing is asked
        try:
            es3, landlock = make_executor(tree, "linux-landlock")
            sets.append(es3)
        except GLib.Error as e:
            report(True, "/typelib/file-ask/rung-2", skip=f"linux-landlock is unavailable: {e.message}")
            landlock = None
        if landlock is not None:
            result, asker, _ = run(landlock, tree, f"cat {tree.path('a')}", answer("run"), "rung-2")
            out = output_of(result)
            detail = fs_denials_detail(result)
            report("Permission denied" in out and "H-ALPHA" not in out and not asker.requests
                   and "files are not asked" in detail,
                   "/typelib/file-ask/rung-2", [f"output: {out!r}", f"fs-denials: {detail}"])
    finally:
        for es in sets:
            es.close(None)
        tree.clear()
    report.plan()


main()
