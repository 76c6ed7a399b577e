#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A small desktop-style agent (PyGObject + the Sbx-1.0 typelib): it opens an
# executor set, asks to run a tool under a profile that gates commands, gets
# the user's approval through a callback, starts the tool with the grant in
# the GLib main loop, prints its output line by line as it arrives, and
# shows the report.  Then a live network approval: a tool under a profile
# that gates the network reaches a local server it holds no grant for; the
# run asks (Sbx.RunOptions.set_ask), the question arrives while the tool
# waits (Sbx.Process::approval-requested) and the callback allows it once.
#
#   agent.py [WORKSPACE [SCRATCH]]
#
# Without arguments it works in a fresh temporary workspace with the set's
# default scratch root, approves by itself when stdin is not a terminal, and
# exits 0.  The test suite runs it against the built typelib.
import http.server
import os
import shutil
import sys
import tempfile
import threading

import gi
gi.require_version("Sbx", "1.0")
from gi.repository import Gio, GLib, Sbx


def ask_approval(argv, workspace):
    """The approval callback: True when the user allows this one start."""
    question = "Allow running %s in %s? [y/N] " % (" ".join(argv), workspace)
    if not sys.stdin.isatty():
        print(question + "yes (stdin is not a terminal: approved automatically)")
        return True
    return input(question).strip().lower() in ("y", "yes")


def answer_network(request):
    """The live approval callback: answers an Sbx.DecisionRequest."""
    denial = request.get_denial()
    question = "Allow %s to connect to %s once? [y/N] " % (
        denial.get_process_name() or "the tool", denial.get_target())
    if not sys.stdin.isatty():
        print(question + "yes (stdin is not a terminal: allowed once automatically)")
        allowed = True
    else:
        allowed = input(question).strip().lower() in ("y", "yes")
    if allowed:
        request.allow_once()
    else:
        request.deny()


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from the local server\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def live_network(workspace, scratch, answer):
    """A tool reaches a server it holds no grant for; the run asks."""
    if shutil.which("curl") is None:
        print("live approval: skipped (curl is not installed)")
        return 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = Sbx.ProfileConfig.new()
    config.set_workspace(workspace, Sbx.Access.ALLOW, Sbx.Access.ALLOW)
    config.set_network(Sbx.Access.GATED)
    config.set_command(Sbx.Access.ALLOW)
    options = Sbx.ExecutorSetOptions.new()
    if scratch is not None:
        options.set_scratch_root(scratch)
    options.set_egress_route(Sbx.EgressRoute.new_direct())
    try:
        executor_set = Sbx.ExecutorSet.new(Sbx.Profile.new(config), options)
    except GLib.Error as error:
        # the egress route needs the sandbox's own network (rung 1)
        print("live approval: skipped (%s)" % error.message)
        server.shutdown()
        return 0
    status = 0
    try:
        run_options = Sbx.RunOptions.new()
        run_options.set_ask(True)
        run_options.set_stderr(Sbx.StdioMode.MERGE)
        argv = ["curl", "-sf", "http://127.0.0.1:%d/" % server.server_port]
        process = executor_set.for_key("agent-net").spawn(workspace, argv, run_options, None)
        process.connect("approval-requested", lambda _process, request: answer(request))
        loop = GLib.MainLoop()
        outcome = {}

        def on_done(proc, result):
            outcome["output"] = proc.communicate_finish(result)[1]
            loop.quit()
        process.communicate_async(None, None, on_done)
        loop.run()
        output = outcome["output"].get_data().decode() if outcome["output"] is not None else ""
        print("live approval: tool said %s, exit code %d"
              % (output.strip() or "nothing", process.get_exit_status()))
        if not process.get_successful():
            status = 1
    finally:
        executor_set.close(None)
        server.shutdown()
    return status


class Agent:
    def __init__(self, workspace, scratch):
        self.workspace = workspace
        config = Sbx.ProfileConfig.new()
        config.set_workspace(workspace, Sbx.Access.ALLOW, Sbx.Access.ALLOW)
        config.set_network(Sbx.Access.DENY)
        config.set_command(Sbx.Access.GATED)
        profile = Sbx.Profile.new(config)
        options = None
        if scratch is not None:
            options = Sbx.ExecutorSetOptions.new()
            options.set_scratch_root(scratch)
        # No options at all is fine: scratch under $XDG_RUNTIME_DIR/sbx.
        self.executor_set = Sbx.ExecutorSet.new(profile, options)
        self.executor = self.executor_set.for_key("agent")
        self.loop = GLib.MainLoop()
        self.status = 0
        self.lines = 0

    def run_tool(self, argv, approve):
        # A gated command without a grant is refused before anything runs:
        # that refusal is the signal to ask the user.
        try:
            self.executor.spawn(self.workspace, argv, None, None)
            print("started without approval", file=sys.stderr)
            self.status = 1
            return
        except GLib.Error as error:
            if not error.matches(Sbx.grant_error_quark(), Sbx.GrantError.REQUIRED):
                raise
            print("approval required:", error.message)

        if not approve(argv, self.workspace):
            print("not approved; nothing ran")
            return

        # One grant for exactly this vector, directory and execution.
        execution_id = "agent-run-1"
        token = self.executor.issue_grant(execution_id, Sbx.grant_command_for_argv(argv),
                                          self.workspace, Sbx.GRANT_CLASS_COMMAND_START,
                                          None, None)
        options = Sbx.RunOptions.new()
        options.set_execution_id(execution_id)
        options.set_grants([token])
        options.set_stderr(Sbx.StdioMode.MERGE)
        self.process = self.executor.spawn(self.workspace, argv, options, None)
        self.process.get_stdin_pipe().close(None)
        self.stdout = Gio.DataInputStream.new(self.process.get_stdout_pipe())
        self.stdout.read_line_async(GLib.PRIORITY_DEFAULT, None, self.on_line)
        self.pending = 2   # the output's end and the wait
        self.process.wait_async(None, self.on_exit)
        self.loop.run()

    def on_line(self, stream, result):
        line, _length = stream.read_line_finish_utf8(result)
        if line is None:
            self.done()
            return
        self.lines += 1
        running = self.process.get_identifier() is not None
        print("tool: %s%s" % (line, "  (while it runs)" if running else ""), flush=True)
        stream.read_line_async(GLib.PRIORITY_DEFAULT, None, self.on_line)

    def on_exit(self, process, result):
        try:
            process.wait_finish(result)
            if process.get_if_exited():
                print("exit code:", process.get_exit_status())
                if process.get_exit_status() != 0:
                    self.status = 1
            else:
                print("killed by signal", process.get_term_sig())
                self.status = 1
        except GLib.Error as error:
            print("the tool failed:", error.message, file=sys.stderr)
            self.status = 1
        self.done()

    def done(self):
        self.pending -= 1
        if self.pending == 0:
            self.loop.quit()

    def report(self):
        print("lines streamed:", self.lines)
        # What held for this tool's run (after its grants), not the
        # executor's report (what a run without grants would get).
        report = self.process.get_spawn_report()
        print("report:", Sbx.report_scope_to_string(report.get_scope()))
        print("level:", Sbx.level_to_string(self.process.get_spawn_level()))
        print("guarantees:", ", ".join(Sbx.guarantees_to_strv(self.process.get_spawn_guarantees())))
        containment = self.process.get_lifetime_containment()
        print("containment:", containment.value_nick)

    def close(self):
        self.executor_set.close(None)


def main():
    own_workspace = len(sys.argv) < 2
    workspace = sys.argv[1] if not own_workspace else tempfile.mkdtemp(prefix="sbx-agent-")
    scratch = sys.argv[2] if len(sys.argv) > 2 else None
    agent = None
    try:
        agent = Agent(workspace, scratch)
        tool = ["/bin/sh", "-c", "for i in 1 2 3; do echo \"step $i\"; sleep 0.2; done"]
        agent.run_tool(tool, ask_approval)
        if agent.status == 0 and agent.lines > 0:
            agent.report()
        if agent.status == 0:
            agent.status = live_network(workspace, scratch, answer_network)
        return agent.status
    except GLib.Error as error:
        print("sbx refused:", error.domain, error.code, error.message, file=sys.stderr)
        return 1
    finally:
        if agent is not None:
            agent.close()
        if own_workspace:
            shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
