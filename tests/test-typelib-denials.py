#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP: the network and command denials end to end through the Sbx-1.0
# typelib (PyGObject), as an application sees them (the files are
# test-typelib-fs-denials.py's), against servers on this host's
# loopback only:
#
#   connect   rung 1 (the egress route needs the sandbox's own network), a
#             gated network with the direct route, a run approved for one
#             local server whose curl tries another: exactly one
#             Sbx.Process::denied on this main context naming
#             network.proxy-target.v1 tcp:127.0.0.1:PORT; that grant,
#             passed back, opens exactly that server (the first stays
#             refused); the servers answer without the sandbox (the
#             positive control);
#   resolve   rung 1: a name no approved target names is refused by the
#             sandbox's DNS stub with exactly one resolve event; it names
#             no grant (a name opens nothing by itself: the stub answers
#             the names of approved targets, docs/live-approvals.md,
#             "Names"), and a target of that name, approved, makes it
#             resolve inside while a sibling name stays refused.  The names
#             are under .invalid (RFC 2606): they resolve nowhere outside,
#             so the granted run is the control;
#   command   both rungs, a gated command: the run fails with
#             Sbx.GrantError.REQUIRED and the set's reporter gets exactly
#             one "denied" event, command-start, naming command.start.v1
#             and exactly this command; that grant, passed back, runs it;
#             the command runs without the sandbox (the positive control).
#
#   test-typelib-denials.py SANITIZED(true|false)
# Environment: GI_TYPELIB_PATH and LD_LIBRARY_PATH at the build's core/,
# SBX_TEST_PLUGIN_DIRS (tests/meson.build).
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fs_tree import ScratchTree  # noqa: E402
from typelib_tap import Tap, load_sbx  # noqa: E402

report = Tap()
GLib, Sbx = load_sbx(sys.argv[1] if len(sys.argv) > 1 else "false")


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from %d\n" % self.server.server_port
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Tree(ScratchTree):
    def __init__(self):
        super().__init__("sbx-typelib-denials-")
        self.ws = os.path.join(self.tmp, "ws")
        os.makedirs(self.ws)
        self.events = os.path.join(self.tmp, "events.jsonl")


def make_executor(tree, backend, network, command):
    config = Sbx.ProfileConfig.new()
    config.set_workspace(tree.ws, Sbx.Access.ALLOW, Sbx.Access.ALLOW)
    config.set_host(Sbx.Access.DENY, Sbx.Access.DENY)
    config.set_network(network)
    config.set_command(command)
    options = Sbx.ExecutorSetOptions.new()
    options.set_scratch_root(tree.scratch)
    options.set_backend(backend)
    options.add_reporter("jsonl", tree.events)
    if network == Sbx.Access.GATED:
        options.set_egress_route(Sbx.EgressRoute.new_direct())
    executor_set = Sbx.ExecutorSet.new(Sbx.Profile.new(config), options)
    return executor_set, executor_set.for_key("k")


def run_options(executor, tree, execution_id, argv, grants):
    opts = Sbx.RunOptions.new()
    opts.set_execution_id(execution_id)
    command = Sbx.grant_command_for_argv(argv)
    opts.set_grants([executor.issue_grant(execution_id, command, tree.ws, cls, target, None)
                     for cls, target in grants])
    return opts


def spawn_collect(executor, tree, argv, opts):
    """Spawns @argv; returns (exit status, output, the denials signalled on
    this main context while it ran)."""
    seen = []
    loop = GLib.MainLoop()
    opts.set_stdout(Sbx.StdioMode.PIPE)
    opts.set_stderr(Sbx.StdioMode.PIPE)
    result = {}
    process = executor.spawn(tree.ws, argv, opts, None)
    process.connect("denied", lambda p, d: seen.append(d))

    def done(p, res):
        try:
            _ok, out, _err = p.communicate_finish(res)
            result["out"] = out.get_data().decode() if out is not None else ""
        except GLib.Error as e:
            result["out"] = f"(communicate failed: {e.message})"
        loop.quit()

    process.communicate_async(None, None, done)
    loop.run()
    context = GLib.MainContext.default()
    while context.pending():   # denials queued just before the exit
        context.iteration(False)
    return process.get_exit_status(), result["out"], seen


def rung_runs(backend):
    """None when @backend can run here, else why not."""
    tree = Tree()
    try:
        executor_set, executor = make_executor(tree, backend, Sbx.Access.DENY, Sbx.Access.ALLOW)
        try:
            executor.run(tree.ws, ["true"], None, None)
        finally:
            executor_set.close(None)
        return None
    except GLib.Error as e:
        return e.message
    finally:
        tree.clear()


def describe(d):
    return "%s %s %s:%s" % (d.get_operation().value_nick, d.get_target(), d.get_grant_class(),
                            d.get_grant_target())


def test_connect():
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    ports = [s.server_port for s in servers]
    targets = [f"tcp:127.0.0.1:{p}" for p in ports]
    tree = Tree()
    details = []
    try:
        for port in ports:
            out = subprocess.run(["curl", "-sf", "--noproxy", "*", f"http://127.0.0.1:{port}/"],
                                 capture_output=True, text=True).stdout
            if out != f"hello from {port}\n":
                details.append(f"control: port {port} answered {out!r} outside")
        executor_set, executor = make_executor(tree, "linux-userns", Sbx.Access.GATED, Sbx.Access.ALLOW)
        try:
            # approved for the first server, the tool tries the second
            argv = ["curl", "-sf", f"http://127.0.0.1:{ports[1]}/"]
            first = (Sbx.GRANT_CLASS_NETWORK_PROXY_TARGET, targets[0])
            status, out, seen = spawn_collect(executor, tree, argv,
                                              run_options(executor, tree, "c-1", argv, [first]))
            want = (Sbx.DenialOperation.CONNECT, Sbx.GRANT_CLASS_NETWORK_PROXY_TARGET, targets[1])
            got = [(d.get_operation(), d.get_grant_class(), d.get_grant_target()) for d in seen]
            if status == 0 or got != [want]:
                details.append(f"without its grant: exit {status}, denials {[describe(d) for d in seen]}")
            if got == [want]:
                # the denial's grant, passed back: that server opens ...
                grant = (seen[0].get_grant_class(), seen[0].get_grant_target())
                status, out, seen = spawn_collect(executor, tree, argv,
                                                  run_options(executor, tree, "c-2", argv, [grant]))
                if status != 0 or out != f"hello from {ports[1]}\n" or seen:
                    details.append(f"with its grant: exit {status}, {out!r}, {[describe(d) for d in seen]}")
                # ... and only that one
                other = ["curl", "-sf", f"http://127.0.0.1:{ports[0]}/"]
                status, out, seen = spawn_collect(executor, tree, other,
                                                  run_options(executor, tree, "c-3", other, [grant]))
                if status == 0 or [d.get_grant_target() for d in seen] != [targets[0]]:
                    details.append(f"the other server with that grant: exit {status}, "
                                   f"{[describe(d) for d in seen]}")
        finally:
            executor_set.close(None)
    finally:
        tree.clear()
        for server in servers:
            server.shutdown()
    report(not details, "/typelib-denials/connect", details)


def test_resolve():
    name, sibling = "sbx-granted.invalid", "sbx-other.invalid"
    unrelated = (Sbx.GRANT_CLASS_NETWORK_PROXY_TARGET, "tcp:127.0.0.1:9")
    tree = Tree()
    details = []
    try:
        executor_set, executor = make_executor(tree, "linux-userns", Sbx.Access.GATED, Sbx.Access.ALLOW)
        try:
            argv = ["getent", "hosts", name]
            status, out, seen = spawn_collect(executor, tree, argv,
                                              run_options(executor, tree, "r-1", argv, [unrelated]))
            got = [(d.get_operation(), d.get_target(), d.get_grant_class(), d.get_reason()) for d in seen]
            want = [(Sbx.DenialOperation.RESOLVE, name, None, "the sandbox resolves only the names of approved targets")]
            if status == 0 or got != want:
                details.append(f"without a grant: exit {status} {out!r}, denials {got}")
            # a target of that name, approved: the stub answers the name
            grant = (Sbx.GRANT_CLASS_NETWORK_PROXY_TARGET, f"tcp:{name}:80")
            status, out, seen = spawn_collect(executor, tree, argv, run_options(executor, tree, "r-2", argv, [grant]))
            if status != 0 or name not in out or seen:
                details.append(f"with tcp:{name}:80: exit {status} {out!r}, denials {[describe(d) for d in seen]}")
            other = ["getent", "hosts", sibling]
            status, out, seen = spawn_collect(executor, tree, other,
                                              run_options(executor, tree, "r-3", other, [grant]))
            if status == 0 or [(d.get_operation(), d.get_target()) for d in seen] != [(Sbx.DenialOperation.RESOLVE,
                                                                                      sibling)]:
                details.append(f"a sibling name with that grant: exit {status} {out!r}, "
                               f"denials {[describe(d) for d in seen]}")
        finally:
            executor_set.close(None)
    finally:
        tree.clear()
    report(not details, "/typelib-denials/resolve", details)


def denied_events(tree):
    try:
        with open(tree.events) as f:
            events = [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []
    return [e for e in events if e.get("event") == "denied"]


def test_command(backend):
    tree = Tree()
    details = []
    argv = ["sh", "-c", "echo GATE-OK"]
    try:
        outside = subprocess.run(argv, capture_output=True, text=True).stdout
        if outside != "GATE-OK\n":
            details.append(f"control: {outside!r} outside")
        executor_set, executor = make_executor(tree, backend, Sbx.Access.DENY, Sbx.Access.GATED)
        try:
            try:
                executor.run(tree.ws, argv, None, None)
                details.append("without a grant: it ran")
            except GLib.Error as e:
                if not e.matches(Sbx.grant_error_quark(), Sbx.GrantError.REQUIRED):
                    details.append(f"without a grant: {e.domain} {e.code} {e.message}")
            command = Sbx.grant_command_for_argv(argv)
            events = denied_events(tree)
            got = [(e.get("operation"), e.get("grant_class"), e.get("grant_target")) for e in events]
            if got != [("command-start", Sbx.GRANT_CLASS_COMMAND_START, command)]:
                details.append(f"events: {events}")
            opts = run_options(executor, tree, "g-1", argv, [(Sbx.GRANT_CLASS_COMMAND_START, command)])
            result = executor.run(tree.ws, argv, opts, None)
            out = result.get_output().get_data().decode()
            if result.get_exit_status() != 0 or out != "GATE-OK\n":
                details.append(f"with its grant: exit {result.get_exit_status()} {out!r}")
            if len(denied_events(tree)) != 1:
                details.append(f"events after the granted run: {denied_events(tree)}")
        finally:
            executor_set.close(None)
    finally:
        tree.clear()
    report(not details, f"/typelib-denials/command/{backend}", details)


def main():
    rung1 = rung_runs("linux-userns")
    if rung1 is not None or shutil.which("curl") is None or shutil.which("getent") is None:
        why = rung1 or "curl or getent is not installed"
        report(True, "/typelib-denials/connect", skip=why)
        report(True, "/typelib-denials/resolve", skip=why)
    else:
        test_connect()
        test_resolve()
    for backend in ("linux-userns", "linux-landlock"):
        why = rung_runs(backend)
        if why is not None:
            report(True, f"/typelib-denials/command/{backend}", skip=why)
        else:
            test_command(backend)
    report.plan()


if __name__ == "__main__":
    main()
