#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sbx run --ask` while the command runs, driven through tmux (a real
terminal a user would sit at), against an HTTP server on this host's
loopback only, at rung 1 (the egress route needs the sandbox's own
network), as whoever runs the suite (root, and sbx-ci in the unprivileged
phase):
  - the command owns the terminal through its PTY: a connection its Gated
    network holds no grant for is asked on the terminal; "o" opens that
    one, and the next connection to the same server is asked again, "n"
    refuses it (with its denial line); the command never sees the keys;
  - "r" opens the server for the rest of the run: three connections, one
    question;
  - a full-screen command (its PTY raw, every row drawn): once answered it
    gets SIGWINCH and redraws, and the pane shows its screen, nothing of
    the question;
  - --no-pty (the command shares the terminal, which stays cooked): the
    question takes a line;
  - a host file the profile gates (host read gated), rung 1: "o" serves
    that read, the next is asked again and "n" refuses it (its denial);
  - a host unix socket the profile gates, both rungs: "o" performs that
    connect, the next one is asked again and "n" refuses it (its denial);
  - without a terminal (no controlling terminal, pipes) --ask is refused
    with exit 125 and nothing runs;
  - the server answers without the sandbox (the positive control).
Skipped when tmux or curl is missing.  Output is TAP.
"""
import http.server
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tmux_tap import Session, Tap  # noqa: E402

tap = Tap()

SBX = os.environ.get("SBX_TEST_SBX")
PLUGIN_PATH = ":".join(p for p in (os.environ.get("SBX_TEST_LINUX_PLUGIN_DIR"),
                                   os.environ.get("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR")) if p)


class Hello(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):
        Hello.hits += 1
        body = b"hello\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


PROFILE = """{ "version": 1,
  "workspace": { "root": ".", "read": "allow", "write": "allow" },
  "host": { "read": "deny", "write": "deny" },
  "network": "gated", "command": "allow", "home": "isolated" }
"""




PROFILE_READ = """{ "version": 1,
  "workspace": { "root": ".", "read": "allow", "write": "allow" },
  "host": { "read": "gated", "write": "deny" },
  "network": "deny", "command": "allow", "home": "isolated" }
"""


PROFILE_SOCKET = """{ "version": 1,
  "workspace": { "root": ".", "read": "allow", "write": "allow" },
  "host": { "read": "deny", "write": "deny" },
  "network": "deny", "command": "allow", "home": "isolated",
  "host-sockets": [ { "path": %s, "access": "gated" } ] }
"""


# A full-screen command: fills every row, connects twice (each asked),
# and after each connection waits for SIGWINCH and redraws; then waits for
# "q".  (Two: the first resize of the PTY may change its pixel size, which
# the kernel signals anyway; the second question is the one a run without
# the run's own SIGWINCH would leave STALE.)
FULLSCREEN = """import os, signal, subprocess, sys, termios, time, tty
winch = []
signal.signal(signal.SIGWINCH, lambda *a: winch.append(1))
tty.setraw(0)


def draw(tag):
    rows = os.get_terminal_size(1).lines
    os.write(1, ("\\033[H\\033[2J" + "\\r\\n".join("%%s ROW %%d" %% (tag, i + 1) for i in range(rows))).encode())
    return rows


rows = [draw("FIRST")]
curl = []
for k in (1, 2):
    curl.append(subprocess.run(["curl", "-sf", "-o", "/dev/null", %s]).returncode == 0)
    deadline = time.monotonic() + 20
    while len(winch) < k and time.monotonic() < deadline:
        time.sleep(0.05)
    rows.append(draw(("REDRAWN%%d" %% k) if len(winch) >= k else "STALE"))
with open("result", "w") as f:
    f.write("curl %%s, rows %%s" %% (curl, rows))
while os.read(0, 1) != b"q":
    pass
"""


def script_for(ws, scratch, args, command, backend="linux-userns", profile="../profile.json"):
    return ("#!/bin/sh\ncd %s\nexport SBX_PLUGIN_PATH=%s SBX_BACKEND=%s TMPDIR=%s\n"
            "%s run --profile %s %s -- sh -c %s\necho \"EXIT $?\"\nexec sleep 600\n"
            % (shlex.quote(ws), shlex.quote(PLUGIN_PATH), backend, shlex.quote(scratch), shlex.quote(SBX),
               profile, " ".join(args), shlex.quote(command)))


QUESTION = "Allow [o]nce, for this [r]un, or [N]o?"


def main():
    if shutil.which("tmux") is None or shutil.which("curl") is None:
        print("1..0 # SKIP tmux or curl is not installed")
        return 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/" % server.server_port
    tmp = tempfile.mkdtemp(prefix="sbx-cli-ask-")
    ws = os.path.join(tmp, "ws")
    scratch = os.path.join(tmp, "scratch")
    os.mkdir(ws)
    os.mkdir(scratch)
    with open(os.path.join(tmp, "profile.json"), "w") as f:
        f.write(PROFILE)
    try:
        # the positive control
        with urllib.request.urlopen(url, timeout=10) as r:
            tap(r.status == 200, "/cli-ask/control")

        # skipped where rung 1 cannot run (the route needs its network)
        probe = subprocess.run([SBX, "run", "--profile", "../profile.json", "--no-pty", "--",
                                "true"], cwd=ws, capture_output=True, text=True,
                               env=dict(os.environ, SBX_PLUGIN_PATH=PLUGIN_PATH,
                                        SBX_BACKEND="linux-userns", TMPDIR=scratch))
        if probe.returncode != 0:
            for name in ("once", "for-run", "redraw", "no-pty"):
                tap(True, "/cli-ask/%s # SKIP linux-userns cannot run here: %s"
                    % (name, probe.stderr.strip().splitlines()[-1:]))
        else:
            # allow once, then the same server asked again and refused
            command = ("curl -sf -o /dev/null %s && echo FIRST-OK; "
                       "curl -sf -o /dev/null %s && echo SECOND-OK || echo SECOND-REFUSED; "
                       "stty -icanon min 0 time 10; echo \"TOOL-READ:[$(dd bs=1 count=1 2>/dev/null)]\""
                       % (url, url))
            s = Session(tmp, "once", script_for(ws, scratch, ["--ask"], command))
            try:
                ok = s.wait_for(QUESTION)
                s.keys("o")
                ok = ok and s.wait_for("FIRST-OK") and s.wait_for(QUESTION, 1)
                s.keys("n")
                ok = ok and s.wait_for("EXIT ")
                screen = s.screen()
                tap(ok and "SECOND-REFUSED" in screen and "EXIT 0" in screen
                    and "TOOL-READ:[]" in screen
                    and "sbx: denied connect 127.0.0.1:%d" % server.server_port in screen,
                    "/cli-ask/once", screen)
            finally:
                s.close()

            # allow for the run: one question, three connections
            hits = Hello.hits
            command = ("for i in 1 2 3; do curl -sf -o /dev/null %s || exit $i; done; echo ALL-OK" % url)
            s = Session(tmp, "run", script_for(ws, scratch, ["--ask"], command))
            try:
                ok = s.wait_for(QUESTION)
                s.keys("r")
                ok = ok and s.wait_for("EXIT ")
                screen = s.screen()
                tap(ok and "ALL-OK" in screen and "EXIT 0" in screen and screen.count(QUESTION) <= 1
                    and Hello.hits == hits + 3, "/cli-ask/for-run", screen)
            finally:
                s.close()

            # a full-screen command: the question's line scrolls its screen;
            # once answered, the command gets SIGWINCH (the size unchanged)
            # and redraws, so the pane shows its screen again and nothing
            # of the question (without the SIGWINCH it draws STALE)
            with open(os.path.join(ws, "fullscreen.py"), "w") as f:
                f.write(FULLSCREEN % json.dumps(url))
            s = Session(tmp, "redraw", script_for(ws, scratch, ["--ask"], "/usr/bin/python3 fullscreen.py"))
            try:
                ok = s.wait_for("FIRST ROW 40") and s.wait_visible(QUESTION)
                s.keys("o")
                ok = ok and s.wait_visible("REDRAWN1 ROW 40", timeout=30)
                ok = ok and s.wait_visible(QUESTION)
                s.keys("o")
                ok = ok and s.wait_visible("REDRAWN2 ROW 40", timeout=30)
                visible = s.visible().rstrip("\n").split("\n")
                s.keys("q")
                ok = ok and s.wait_for("EXIT ")
                try:
                    with open(os.path.join(ws, "result")) as f:
                        result = f.read()
                except FileNotFoundError:
                    result = "(no result: the command did not get that far)"
                tap(ok and result == "curl [True, True], rows [40, 40, 40]"
                    and visible == ["REDRAWN2 ROW %d" % (i + 1) for i in range(40)]
                    and "EXIT 0" in s.screen(),
                    "/cli-ask/redraw", "%s\n%s" % ("\n".join(visible), result))
            finally:
                s.close()

            # --no-pty: a cooked terminal, the answer is a line
            command = "curl -sf -o /dev/null %s && echo NOPTY-OK" % url
            s = Session(tmp, "nopty", script_for(ws, scratch, ["--ask", "--no-pty"], command))
            try:
                ok = s.wait_for(QUESTION)
                s.keys("o", "Enter")
                ok = ok and s.wait_for("EXIT ")
                screen = s.screen()
                tap(ok and "NOPTY-OK" in screen and "EXIT 0" in screen, "/cli-ask/no-pty", screen)
            finally:
                s.close()

        # a gated host read at rung 1 (the view supervisor asks; rung 2
        # observes no file attempt): "o" serves that one read, the next
        # read of the same file is asked again and "n" refuses it (EACCES,
        # its denial line, counted once: the kernel's retry of the refused
        # lookup is the same attempt); positive control: the file reads
        # outside
        host_dir = tempfile.mkdtemp(prefix="sbx-cli-ask-host-", dir="/var/tmp")
        os.chmod(host_dir, 0o755)
        secret = os.path.join(host_dir, "secret")
        with open(secret, "w") as f:
            f.write("SECRET-CONTENT\n")
        os.chmod(secret, 0o644)
        with open(os.path.join(tmp, "profile-read.json"), "w") as f:
            f.write(PROFILE_READ)
        try:
            with open(secret) as f:
                control = f.read()
            if probe.returncode != 0:
                tap(True, "/cli-ask/file-read # SKIP linux-userns cannot run here")
            else:
                command = ("cat %s; cat %s 2>&1 || echo SECOND-REFUSED"
                           % (shlex.quote(secret), shlex.quote(secret)))
                s = Session(tmp, "file", script_for(ws, scratch, ["--ask"], command, "linux-userns",
                                                    "../profile-read.json"))
                try:
                    # before the run, --ask offers the whole gated dimension
                    # (filesystem.host.read.v1 host:*): declined, so each
                    # read is asked while the command runs
                    ok = s.wait_for("[y/N]")
                    s.keys("n", "Enter")
                    ok = ok and s.wait_for("wants to read")
                    s.keys("o")
                    ok = ok and s.wait_for("SECRET-CONTENT") and s.wait_for("wants to read", 2)
                    s.keys("n")
                    ok = ok and s.wait_for("EXIT ")
                    screen = s.screen()
                    joined = screen.replace("\n", "")   # the pane wraps long lines
                    tap(ok and control == "SECRET-CONTENT\n" and screen.count("SECRET-CONTENT") == 1
                        and "Permission denied" in screen and "SECOND-REFUSED" in screen
                        and "sbx: denied read %s (host read is gated); " % secret in joined
                        and "--approve filesystem.path.read.v1:%s would open it" % secret in joined
                        and "EXIT 0" in screen,
                        "/cli-ask/file-read", screen)
                finally:
                    s.close()
        finally:
            shutil.rmtree(host_dir, ignore_errors=True)

        # a gated host socket, both rungs: "o" performs that connect, and a
        # second connect to it is asked again ("n"): refused, with its denial
        sock_dir = tempfile.mkdtemp(prefix="sbx-cli-ask-sock-", dir="/var/tmp")
        os.chmod(sock_dir, 0o755)
        gated = os.path.join(sock_dir, "gated.sock")
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(gated)
        listener.listen(16)
        with open(os.path.join(tmp, "profile-sock.json"), "w") as f:
            f.write(PROFILE_SOCKET % json.dumps(gated))
        try:
            control = socket.socket(socket.AF_UNIX)
            control.connect(gated)   # the positive control
            control.close()
            connect = ("/usr/bin/python3 -c 'import socket,sys\nfor i in (1,2):\n s=socket.socket(socket.AF_UNIX)\n"
                       " try:\n  s.connect(sys.argv[1]); print(\"SOCK-OK\", i)\n"
                       " except OSError as e: print(\"SOCK-ERR\", i)' %s" % shlex.quote(gated))
            for backend in ("linux-userns", "linux-landlock"):
                s = Session(tmp, "sock-" + backend,
                            script_for(ws, scratch, ["--ask"], connect, backend, "../profile-sock.json"))
                try:
                    # the question is longer than the pane's line: wrapped
                    # (so QUESTION is not on one line) and its first line
                    # stays on the screen once answered, so count those
                    ok = s.wait_for("wants to unix-connect", 1)
                    s.keys("o")
                    ok = ok and s.wait_for("SOCK-OK 1") and s.wait_for("wants to unix-connect", 2)
                    s.keys("n")
                    ok = ok and s.wait_for("EXIT ")
                    screen = s.screen()
                    tap(ok and "SOCK-ERR 2" in screen and "EXIT 0" in screen
                        and "unix.connect.v1 %s" % gated in screen
                        and "sbx: denied unix-connect %s" % gated in screen,
                        "/cli-ask/unix-socket/%s" % backend, screen)
                finally:
                    s.close()
        finally:
            listener.close()
            shutil.rmtree(sock_dir, ignore_errors=True)

        # no terminal at all: refused, nothing runs
        marker = os.path.join(ws, "ran")
        r = subprocess.run([SBX, "run", "--profile", "../profile.json", "--ask", "--", "touch", marker],
                           cwd=ws, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           start_new_session=True,
                           env=dict(os.environ, SBX_PLUGIN_PATH=PLUGIN_PATH, TMPDIR=scratch))
        tap(r.returncode == 125 and "--ask needs a terminal" in r.stderr and not os.path.exists(marker),
            "/cli-ask/no-terminal", r.stderr)
    finally:
        server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.plan()


if __name__ == "__main__":
    sys.exit(main())
