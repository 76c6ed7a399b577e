#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Denials as data (PyGObject + the Sbx-1.0 typelib): a tool approved for
# one local server tries another; the refusal arrives while it runs
# (Sbx.Process::denied) and in the result, naming the grant that would open
# it; that grant, passed back, opens exactly that server.  Run by the test
# suite with GI_TYPELIB_PATH pointing at the build tree; needs curl.
#   denials.py WORKSPACE SCRATCH
import http.server
import sys
import threading

import gi
gi.require_version("Sbx", "1.0")
from gi.repository import GLib, Sbx

workspace, scratch = sys.argv[1], sys.argv[2]


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from port %d\n" % self.server.server_port
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello) for _ in range(2)]
for server in servers:
    threading.Thread(target=server.serve_forever, daemon=True).start()
approved, refused = ("tcp:127.0.0.1:%d" % s.server_port for s in servers)
url = "http://127.0.0.1:%d/" % servers[1].server_port

config = Sbx.ProfileConfig.new()
config.set_workspace(workspace, Sbx.Access.ALLOW, Sbx.Access.ALLOW)
config.set_host(Sbx.Access.DENY, Sbx.Access.DENY)
config.set_network(Sbx.Access.GATED)
config.set_command(Sbx.Access.ALLOW)
profile = Sbx.Profile.new(config)
options = Sbx.ExecutorSetOptions.new()
options.set_scratch_root(scratch)
options.set_egress_route(Sbx.EgressRoute.new_direct())
executor_set = Sbx.ExecutorSet.new(profile, options)
executor = executor_set.for_key("demo")
argv = ["curl", "-sf", url]


def run_options(execution_id, targets):
    command = Sbx.grant_command_for_argv(argv)
    grants = [executor.issue_grant(execution_id, command, workspace,
                                   Sbx.GRANT_CLASS_NETWORK_PROXY_TARGET, t, None)
              for t in targets]
    opts = Sbx.RunOptions.new()
    opts.set_execution_id(execution_id)
    opts.set_grants(grants)
    return opts


try:
    # Spawned: the denial arrives on this main context while curl runs.
    seen = []
    loop = GLib.MainLoop()
    process = executor.spawn(workspace, argv, run_options("exec-1", [approved]), None)
    process.connect("denied", lambda p, d: seen.append(d))
    process.wait_async(None, lambda p, res: (p.wait_finish(res), loop.quit()))
    loop.run()
    context = GLib.MainContext.default()
    while context.pending():          # denials queued just before the exit
        context.iteration(False)
    for denial in seen:
        print("signal:", denial.to_string())

    # Run: the same refusal in the result, with the grant that opens it.
    result = executor.run(workspace, argv, run_options("exec-2", [approved]), None)
    denial = result.get_denials()[0]
    print("result:", denial.to_string())
    grant = (denial.get_grant_class(), denial.get_grant_target())
    print("grant:", "%s:%s" % grant)

    # That grant, passed back: exactly that server opens.
    result = executor.run(workspace, argv, run_options("exec-3", [approved, grant[1]]), None)
    print("output:", result.get_output().get_data().decode(), end="")
    print("denials after the grant:", len(result.get_denials()))
except GLib.Error as error:
    print("sbx refused:", error.domain, error.code, error.message, file=sys.stderr)
    sys.exit(1)
finally:
    executor_set.close(None)
    for server in servers:
        server.shutdown()
