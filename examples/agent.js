#!/usr/bin/env -S gjs -m
// SPDX-License-Identifier: LGPL-2.1-or-later
// The streaming half of agent.py in GJS (the Sbx-1.0 typelib): spawn a tool
// in the sandbox from the GLib main loop, print its output line by line as
// it arrives, then its exit and the report.
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
    if (ownWorkspace)
        GLib.rmdir(workspace);
}
System.exit(status);
