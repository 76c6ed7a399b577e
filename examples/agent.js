#!/usr/bin/env -S gjs -m
// SPDX-License-Identifier: LGPL-2.1-or-later
// The streaming half of agent.py in GJS (the Sbx-1.0 typelib): spawn a tool
// in the sandbox from the GLib main loop, print its output line by line as
// it arrives, then its exit and the report.  Then a live network
// approval: a tool under a profile that gates the network reaches a local
// server it holds no grant for; the run asks (Sbx.RunOptions.set_ask) and
// the approval-requested callback allows it once.
//
//   gjs -m agent.js [WORKSPACE [SCRATCH]]
//
// Without arguments it uses a fresh temporary workspace and the set's
// default scratch root, and exits 0.  The test suite runs it against the
// built typelib.
import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import Sbx from 'gi://Sbx?version=1.0';
import System from 'system';

const args = ARGV;
const ownWorkspace = args.length < 1;
const workspace = ownWorkspace ? GLib.dir_make_tmp('sbx-agent-js-XXXXXX') : args[0];
const scratch = args.length > 1 ? args[1] : null;

let status = 0;
let lines = 0;
const loop = GLib.MainLoop.new(null, false);

const config = Sbx.ProfileConfig.new();
config.set_workspace(workspace, Sbx.Access.ALLOW, Sbx.Access.ALLOW);
config.set_network(Sbx.Access.DENY);
config.set_command(Sbx.Access.ALLOW);
const profile = Sbx.Profile.new(config);
let setOptions = null;
if (scratch !== null) {
    setOptions = Sbx.ExecutorSetOptions.new();
    setOptions.set_scratch_root(scratch);
}
const executorSet = Sbx.ExecutorSet.new(profile, setOptions);
try {
    const executor = executorSet.for_key('agent-js');
    const argv = ['/bin/sh', '-c', 'for i in 1 2 3; do echo "step $i"; sleep 0.2; done'];
    const options = Sbx.RunOptions.new();
    options.set_stdin(Sbx.StdioMode.NULL);
    options.set_stderr(Sbx.StdioMode.MERGE);
    const process = executor.spawn(workspace, argv, options, null);
    const stdout = Gio.DataInputStream.new(process.get_stdout_pipe());
    let pending = 2;
    const done = () => {
        pending -= 1;
        if (pending === 0)
            loop.quit();
    };
    const onLine = (stream, result) => {
        const [line] = stream.read_line_finish_utf8(result);
        if (line === null) {
            done();
            return;
        }
        lines += 1;
        const running = process.get_identifier() !== null;
        print(`tool: ${line}${running ? '  (while it runs)' : ''}`);
        stream.read_line_async(GLib.PRIORITY_DEFAULT, null, onLine);
    };
    stdout.read_line_async(GLib.PRIORITY_DEFAULT, null, onLine);
    process.wait_async(null, (proc, result) => {
        try {
            proc.wait_finish(result);
            print(`exit code: ${proc.get_exit_status()}`);
            if (!proc.get_successful())
                status = 1;
        } catch (e) {
            printerr(`the tool failed: ${e.message}`);
            status = 1;
        }
        done();
    });
    loop.run();
    print(`lines streamed: ${lines}`);
    // What held for this run (after its grants), not the executor's report.
    print(`report: ${Sbx.report_scope_to_string(process.get_spawn_report().get_scope())}`);
    print(`level: ${Sbx.level_to_string(process.get_spawn_level())}`);
    print(`guarantees: ${Sbx.guarantees_to_strv(process.get_spawn_guarantees()).join(', ')}`);
    if (lines !== 3)
        status = 1;
} catch (e) {
    printerr(`sbx refused: ${e.message}`);
    status = 1;
} finally {
    executorSet.close(null);
}

// The live approval callback: answers a Sbx.DecisionRequest (a desktop
// app would show a dialog and answer from its response).
function answerNetwork(request) {
    const target = request.get_denial().get_target();
    print(`Allow the tool to connect to ${target} once? yes (allowed once automatically)`);
    request.allow_once();
}

// A local server that says hello to every connection.
function helloServer() {
    const service = Gio.SocketService.new();
    const address = Gio.InetSocketAddress.new_from_string('127.0.0.1', 0);
    const [, bound] = service.add_address(address, Gio.SocketType.STREAM, Gio.SocketProtocol.TCP, null);
    service.connect('incoming', (_service, connection) => {
        const input = connection.get_input_stream();
        // the request head, then the answer
        input.read_bytes_async(4096, GLib.PRIORITY_DEFAULT, null, () => {
            const body = 'hello from the local server\n';
            const reply = `HTTP/1.0 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
            connection.get_output_stream().write_all(reply, null);
            connection.close(null);
        });
        return true;
    });
    service.start();
    return [service, bound.get_port()];
}

if (status === 0 && GLib.find_program_in_path('curl') === null) {
    print('live approval: skipped (curl is not installed)');
} else if (status === 0) {
    const [service, port] = helloServer();
    const netConfig = Sbx.ProfileConfig.new();
    netConfig.set_workspace(workspace, Sbx.Access.ALLOW, Sbx.Access.ALLOW);
    netConfig.set_network(Sbx.Access.GATED);
    netConfig.set_command(Sbx.Access.ALLOW);
    const netOptions = Sbx.ExecutorSetOptions.new();
    if (scratch !== null)
        netOptions.set_scratch_root(scratch);
    netOptions.set_egress_route(Sbx.EgressRoute.new_direct());
    let netSet = null;
    try {
        netSet = Sbx.ExecutorSet.new(Sbx.Profile.new(netConfig), netOptions);
    } catch (e) {
        // the egress route needs the sandbox's own network (rung 1)
        print(`live approval: skipped (${e.message})`);
    }
    if (netSet !== null) {
        try {
            const options = Sbx.RunOptions.new();
            options.set_ask(true);
            options.set_stderr(Sbx.StdioMode.MERGE);
            const argv = ['curl', '-sf', `http://127.0.0.1:${port}/`];
            const process = netSet.for_key('agent-js-net').spawn(workspace, argv, options, null);
            process.connect('approval-requested', (_process, request) => answerNetwork(request));
            let output = '';
            process.communicate_async(null, null, (proc, result) => {
                const [, out] = proc.communicate_finish(result);
                output = out !== null ? new TextDecoder().decode(out.toArray()).trim() : '';
                loop.quit();
            });
            loop.run();
            print(`live approval: tool said ${output || 'nothing'}, exit code ${process.get_exit_status()}`);
            if (!process.get_successful())
                status = 1;
        } catch (e) {
            printerr(`sbx refused: ${e.message}`);
            status = 1;
        } finally {
            netSet.close(null);
        }
    }
    service.stop();
}
if (ownWorkspace)
    GLib.rmdir(workspace);
System.exit(status);
