#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sbx run` in a real terminal: the interactive mode, driven through a
pseudo-terminal this test opens (the "outer" terminal a user would sit at).

On each Linux rung (SBX_BACKEND=linux-userns, linux-landlock), as whoever
runs the suite (root, and sbx-ci in the unprivileged phase):
  - `tty` names a terminal of the sandbox, `stty size` is the outer size
    and follows a resize;
  - job control: `sleep 100`, Ctrl-Z, `jobs` says Stopped, `fg` resumes,
    Ctrl-C ends the foreground job and not the shell;
  - vi opens (the alternate screen) and quits;
  - the outer terminal's `stty -g` is the same before and after, also when
    the command was killed by a signal and when sbx got SIGTERM;
  - TIOCSTI from inside fails, and nothing the command tries to type shows
    up in the outer terminal's input, while the same injection outside the
    sandbox does (the positive control);
  - exit status as without a terminal (the command's, 128+N for a signal);
  - --max-output counts relayed bytes;
  - SIGKILL of sbx while it relays leaves no process behind;
  - without a terminal (pipes) nothing changes, --pty forces one;
  - the caller's terminal shared (`sbx run -- cmd | cat`, --no-pty: stdin
    and stderr a terminal, stdout a pipe): the command cannot change it
    (stty fails) and its modes and window size are byte for byte the same
    afterwards, while the same command outside the sandbox changes them.
Output is TAP.
"""
import errno
import fcntl
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

SBX = os.environ.get("SBX_TEST_SBX")
PLUGIN_DIR = os.environ.get("SBX_TEST_LINUX_PLUGIN_DIR")
RUNGS = ("linux-userns", "linux-landlock")
SCRATCH = None

n_tests = 0
failed = 0


def tap(ok, name, detail=""):
    global n_tests, failed
    n_tests += 1
    if not ok:
        failed += 1
    print(("ok" if ok else "not ok") + " %d %s" % (n_tests, name))
    if detail and not ok:
        for line in detail.splitlines()[-40:]:
            print("# " + line)
    sys.stdout.flush()


def skip(name, why):
    global n_tests
    n_tests += 1
    print("ok %d %s # SKIP %s" % (n_tests, name, why))
    sys.stdout.flush()


def set_winsize(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class Term:
    """A pseudo-terminal whose slave is the controlling terminal of a new
    session running @argv; the test holds the master (the user's side)."""

    def __init__(self, argv, env, cwd, rows=30, cols=120):
        self.master, slave = os.openpty()
        set_winsize(self.master, rows, cols)
        self.buf = b""

        def ctty():
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     cwd=cwd, start_new_session=True, preexec_fn=ctty,
                                     close_fds=True)
        os.close(slave)

    def read_some(self, timeout):
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError as e:
            if e.errno == errno.EIO:   # every slave closed
                return None
            raise
        if not data:
            return None
        self.buf += data
        return True

    def expect(self, pattern, timeout=20):
        """Waits for @pattern (bytes regex) in the output since the last
        match; returns the match or None."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if self.read_some(left) is None:
                m = rx.search(self.buf)
                if m:
                    self.buf = self.buf[m.end():]
                return m

    def send(self, data):
        os.write(self.master, data)

    def drain(self, timeout=30):
        """Reads until every slave is closed (or timeout); returns all."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.read_some(deadline - time.monotonic()) is None:
                break
        return self.buf

    def wait(self, timeout=30):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def base_env(rung):
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/"),
        "LANG": "C.UTF-8",
        "TERM": "xterm",
        "SBX_PLUGIN_PATH": PLUGIN_DIR,
        "XDG_CONFIG_HOME": "/dev/null",
    }
    for key in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "XDG_RUNTIME_DIR"):
        if key in os.environ:
            env[key] = os.environ[key]
    # sbx's scratch (executor sets) in a directory of this test alone: a
    # shared /tmp where other suites create sets meanwhile makes sbx refuse.
    env["TMPDIR"] = SCRATCH
    if rung is not None:
        env["SBX_BACKEND"] = rung
    return env


def rung_available(rung, ws):
    p = subprocess.run([SBX, "run", "--no-pty", "--", "true"], env=base_env(rung), cwd=ws,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    return p.returncode == 0, p.stderr.decode(errors="replace")


def outer_script(ws, inner):
    """sh in the outer terminal: stty -g before, the sbx run, its status,
    stty -g after, what the outer terminal's input holds afterwards."""
    return ["/bin/bash", "--norc", "--noprofile", "-c",
            'stty -g > "$0/before"; %s; echo "SBX-STATUS=$?"; stty -g > "$0/after"; '
            'if read -t 1 leftover; then echo "LEFTOVER=[$leftover]"; else echo "LEFTOVER=[]"; fi; '
            'echo OUTER-DONE' % inner, ws]


def same_stty(ws):
    with open(os.path.join(ws, "before")) as f:
        before = f.read().strip()
    with open(os.path.join(ws, "after")) as f:
        after = f.read().strip()
    return before == after and before != "", "before %s\nafter  %s" % (before, after)


def sbx_cmd(args):
    return " ".join("'%s'" % a.replace("'", "'\\''") for a in [SBX, "run"] + args)


def test_shell(rung, ws):
    """One interactive bash: tty, size and resize, job control, Ctrl-C, vi."""
    t = Term(outer_script(ws, sbx_cmd(["--", "bash", "--norc", "--noprofile", "-i"])),
             base_env(rung), ws)
    try:
        t.send(b"PS1='P''S> '\r")
        ok = t.expect(rb"PS> ") is not None
        tap(ok, "%s/shell/prompt" % rung, t.buf.decode(errors="replace"))
        if not ok:
            return

        t.send(b"tty; echo tty-status=$?\r")
        m = t.expect(rb"(/dev/pts/\d+|not a tty)\r?\n.*tty-status=(\d)")
        tap(m is not None and m.group(1).startswith(b"/dev/pts/") and m.group(2) == b"0",
            "%s/shell/tty-names-a-pty" % rung, repr(m.group(0) if m else t.buf))
        t.send(b"test -t 0 && test -t 1 && test -t 2 && echo all-\"\"terminals\r")
        tap(t.expect(rb"all-terminals") is not None, "%s/shell/stdio-are-the-terminal" % rung,
            t.buf.decode(errors="replace"))
        # The shell has job control: its own terminal is its controlling one.
        t.send(b"set -o | grep -w monitor\r")
        tap(t.expect(rb"monitor\s+on") is not None, "%s/shell/job-control-on" % rung,
            t.buf.decode(errors="replace"))

        t.send(b"stty size\r")
        m = t.expect(rb"(\d+) (\d+)\r?\n")
        tap(m is not None and m.groups() == (b"30", b"120"), "%s/shell/stty-size-matches" % rung,
            repr(m.groups() if m else t.buf))
        set_winsize(t.master, 40, 100)
        # The outer kernel sends SIGWINCH to sbx's group; allow for the relay.
        followed = False
        for _ in range(20):
            time.sleep(0.2)
            t.send(b"stty size\r")
            m = t.expect(rb"(\d+) (\d+)\r?\n")
            if m is not None and m.groups() == (b"40", b"100"):
                followed = True
                break
        tap(followed, "%s/shell/stty-size-follows-resize" % rung, repr(m.groups() if m else t.buf))
        # A full-screen program sees the resize too (SIGWINCH inside).
        t.send(b"trap 'echo got-\"\"winch' WINCH; sleep 2\r")
        time.sleep(0.5)
        set_winsize(t.master, 41, 101)
        tap(t.expect(rb"got-winch", 10) is not None, "%s/shell/sigwinch-inside" % rung,
            t.buf.decode(errors="replace"))
        t.expect(rb"PS> ")
        t.send(b"trap - WINCH\r")
        t.expect(rb"PS> ")

        # Job control: Ctrl-Z stops the foreground job, jobs lists it
        # stopped, fg resumes it, Ctrl-C ends it and not the shell.
        t.send(b"sleep 100\r")
        time.sleep(0.7)
        t.send(b"\x1a")
        stopped = t.expect(rb"Stopped\s+sleep 100") is not None
        tap(stopped, "%s/shell/ctrl-z-stops" % rung, t.buf.decode(errors="replace"))
        t.expect(rb"PS> ")
        t.send(b"jobs -l\r")
        m = t.expect(rb"\[1\]\+\s+(\d+) Stopped\s+sleep 100")
        tap(m is not None, "%s/shell/jobs-shows-stopped" % rung, t.buf.decode(errors="replace"))
        t.expect(rb"PS> ")
        t.send(b"fg\r")
        tap(t.expect(rb"sleep 100\r?\n") is not None, "%s/shell/fg" % rung, t.buf.decode(errors="replace"))
        time.sleep(0.5)
        t.send(b"\x03")
        t.expect(rb"PS> ")
        t.send(b"echo status=$? alive-$((6*7))\r")
        m = t.expect(rb"status=(\d+) alive-42")
        tap(m is not None and m.group(1) == b"130", "%s/shell/ctrl-c-ends-job-not-shell" % rung,
            repr(m.group(0) if m else t.buf))
        # fg really resumes: a stopped job finishes its work once continued.
        t.send(b"sh -c 'sleep 1; echo resumed-''ok'\r")
        time.sleep(0.4)
        t.send(b"\x1a")
        t.expect(rb"Stopped")
        t.expect(rb"PS> ")
        t.send(b"fg\r")
        tap(t.expect(rb"resumed-ok", 10) is not None, "%s/shell/fg-resumes" % rung,
            t.buf.decode(errors="replace"))
        t.expect(rb"PS> ")
        t.send(b"jobs; echo jobs-\"\"done\r")
        m = t.expect(rb"jobs-done")
        tap(m is not None, "%s/shell/no-jobs-left" % rung, t.buf.decode(errors="replace"))
        t.expect(rb"PS> ")

        # An editor: vi opens the alternate screen and quits.
        if shutil.which("vi") is None:
            skip("%s/shell/vi" % rung, "no vi on this host (Debian: vim-tiny)")
        else:
            t.send(b"vi; echo vi-status=$?\r")
            opened = t.expect(rb"\x1b\[\?1049h|\x1b\[\?47h", 20) is not None
            time.sleep(0.5)
            t.send(b"\x1b:q!\r")
            m = t.expect(rb"vi-status=(\d+)", 20)
            tap(opened and m is not None and m.group(1) == b"0", "%s/shell/vi-opens-and-quits" % rung,
                t.buf.decode(errors="replace"))
            t.expect(rb"PS> ")

        t.send(b"exit 3\r")
        m = t.expect(rb"SBX-STATUS=(\d+)", 30)
        tap(m is not None and m.group(1) == b"3", "%s/shell/exit-status" % rung,
            repr(m.group(0) if m else t.buf))
        m = t.expect(rb"LEFTOVER=\[(.*?)\]")
        t.expect(rb"OUTER-DONE")
        t.wait()
        ok, detail = same_stty(ws)
        tap(ok, "%s/shell/outer-stty-restored" % rung, detail)
    finally:
        t.close()


def run_outer(rung, ws, args, timeout=60, send=None):
    t = Term(outer_script(ws, sbx_cmd(args)), base_env(rung), ws)
    try:
        if send is not None:
            time.sleep(1)
            t.send(send)
        out = t.drain(timeout)
        t.wait()
    finally:
        t.close()
    m = re.search(rb"SBX-STATUS=(\d+)", out)
    left = re.search(rb"LEFTOVER=\[(.*?)\]", out)
    return (int(m.group(1)) if m else None, left.group(1) if left else None, out)


INJECT = ("import fcntl, termios, os\n"
          "for path in (None, '/dev/tty'):\n"
          "    try:\n"
          "        fd = 0 if path is None else os.open(path, os.O_RDWR)\n"
          "        for c in b'echo INJECTED\\n':\n"
          "            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\n"
          "        print('tiocsti-ok', path)\n"
          "    except OSError as e:\n"
          "        print('tiocsti-failed', path, e.errno)\n")


def test_injection(rung, ws):
    # Positive control: the same program run directly in the outer terminal
    # types into its input (legacy TIOCSTI is allowed on this host, or root).
    ctl = Term(["/bin/bash", "--norc", "--noprofile", "-c", "python3 -c \"$1\"; "
                "if read -t 2 leftover; then echo \"LEFTOVER=[$leftover]\"; else echo 'LEFTOVER=[]'; fi",
                "sh", INJECT], base_env(rung), ws)
    try:
        out = ctl.drain(30)
        ctl.wait()
    finally:
        ctl.close()
    control_ok = b"LEFTOVER=[echo INJECTED]" in out
    if not control_ok:
        skip("%s/tiocsti/control" % rung,
             "TIOCSTI does not inject on this host even outside a sandbox "
             "(dev.tty.legacy_tiocsti=0 without CAP_SYS_ADMIN): " + out.decode(errors="replace")[-200:])
    else:
        tap(True, "%s/tiocsti/control-injects-outside" % rung)

    status, left, out = run_outer(rung, ws, ["--", "python3", "-c", INJECT])
    text = out.decode(errors="replace")
    tap(status == 0 and b"tiocsti-failed None 1" in out and b"tiocsti-failed /dev/tty 1" in out
        and b"tiocsti-ok" not in out, "%s/tiocsti/refused-inside" % rung, text)
    tap(left == b"", "%s/tiocsti/nothing-reaches-outer-input" % rung, text)
    ok, detail = same_stty(ws)
    tap(ok, "%s/tiocsti/outer-stty-restored" % rung, detail)


def test_status_and_signals(rung, ws):
    status, _, out = run_outer(rung, ws, ["--", "sh", "-c", "kill -TERM $$"])
    ok, detail = same_stty(ws)
    tap(status == 143 and ok, "%s/status/killed-command-128+N-and-stty" % rung,
        "status %r\n%s\n%s" % (status, detail, out.decode(errors="replace")))

    # SIGTERM to sbx while it relays: the tree is killed, the terminal restored.
    t = Term(outer_script(ws, sbx_cmd(["--", "sh", "-c", "echo read\"\"y; exec sleep 300"])),
             base_env(rung), ws)
    try:
        ready = t.expect(rb"ready") is not None
        sbx_pid = find_pid(lambda argv: len(argv) > 1 and argv[0] == SBX and "sleep 300" in " ".join(argv))
        if sbx_pid:
            os.kill(sbx_pid, signal.SIGTERM)
        m = t.expect(rb"SBX-STATUS=(\d+)", 30)
        t.drain(30)
        t.wait()
    finally:
        t.close()
    ok, detail = same_stty(ws)
    tap(ready and sbx_pid is not None and m is not None and m.group(1) == b"143" and ok,
        "%s/status/sigterm-to-sbx-restores-stty" % rung,
        "ready %r pid %r status %r\n%s" % (ready, sbx_pid, m.group(0) if m else None, detail))

    # --max-output counts the relayed bytes.
    t = Term([SBX, "run", "--max-output", "1000", "--", "sh", "-c", "while :; do echo yyyyyyyy; done"],
             base_env(rung), ws)
    try:
        out = t.drain(30)
        status = t.wait()
    finally:
        t.close()
    cut = out.find(b"sbx: run: output limit")
    tap(cut >= 0 and cut <= 1000 + 8 and out[:cut].count(b"yyyyyyyy") >= 50,
        "%s/max-output/counts-relayed-bytes" % rung,
        "cut at %d of %d, status %r: %r" % (cut, len(out), status, out[-300:]))


def find_pid(pred):
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        if argv and pred(argv):
            return int(entry)
    return None


def proc_identity(pid):
    """(pid, start time) of a live process, or None: a pid alone could be
    reused once the process is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (pid, fields[19], int(fields[1]))   # start time, parent
    except (OSError, IndexError):
        return None


def alive(identity):
    now = proc_identity(identity[0])
    return now is not None and now[1] == identity[1]


def test_sigkill(rung, ws):
    # The command ignores SIGHUP, so the hang-up of its terminal (the master
    # closes with sbx) is not what ends it: the sandbox's own lifetime
    # mechanisms must.
    marker = "77%d" % (os.getpid() % 10000)
    t = Term([SBX, "run", "--", "sh", "-c", "trap '' HUP; echo read\"\"y; exec sleep %s" % marker],
             base_env(rung), ws)
    try:
        ready = t.expect(rb"ready") is not None
        inner = None
        for _ in range(100):
            inner = find_pid(lambda argv: argv[:2] == ["sleep", marker])
            if inner is not None:
                break
            time.sleep(0.05)
        # The sandbox's processes as the host sees them: the command and
        # every ancestor up to sbx (the sandbox's init).
        tree = []
        pid = inner
        while pid is not None and pid != t.proc.pid:
            ident = proc_identity(pid)
            if ident is None:
                break
            tree.append(ident)
            pid = ident[2]
        os.kill(t.proc.pid, signal.SIGKILL)
        t.wait()
        left = tree
        for _ in range(50):
            left = [ident for ident in tree if alive(ident)]
            if not left:
                break
            time.sleep(0.1)
    finally:
        t.close()
    tap(ready and inner is not None and len(tree) >= 2 and pid == t.proc.pid and not left,
        "%s/sigkill-leaves-no-process" % rung,
        "ready %r, inner pid %r, tree %r, left %r" % (ready, inner, tree, left))


def test_no_terminal(rung, ws):
    env = base_env(rung)
    p = subprocess.run([SBX, "run", "--", "sh", "-c", "cat; tty"], input=b"piped\n", env=env, cwd=ws,
                       capture_output=True, timeout=60)
    tap(p.returncode == 1 and p.stdout == b"piped\nnot a tty\n", "%s/pipes/unchanged" % rung,
        "rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr))
    p = subprocess.run([SBX, "run", "--pty", "--", "sh", "-c", "cat; tty; echo err >&2"], input=b"piped\n",
                       env=env, cwd=ws, capture_output=True, timeout=60)
    tap(p.returncode == 0 and re.search(rb"piped\r\n", p.stdout) is not None
        and re.search(rb"/dev/pts/\d+\r\nerr\r\n", p.stdout) is not None and p.stderr == b"",
        "%s/pipes/pty-forced" % rung, "rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr))


def tty_state(fd):
    return (termios.tcgetattr(fd), fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))


def test_caller_terminal(rung, ws):
    """stdin and stderr the caller's terminal, stdout a pipe."""
    env = base_env(rung)
    script = "stty -echo intr x rows 1 cols 1 2>/dev/null; echo rc=$?"
    master, slave = os.openpty()
    try:
        set_winsize(master, 30, 120)
        before = tty_state(slave)
        # the positive control: outside the sandbox the same command changes it
        p = subprocess.run(["sh", "-c", script], stdin=slave, stderr=slave, stdout=subprocess.PIPE, env=env,
                           cwd=ws, timeout=60)
        changed = tty_state(slave)
        tap(p.stdout == b"rc=0\n" and changed != before and not (changed[0][3] & termios.ECHO),
            "%s/caller-terminal/control-changes-it" % rung, "out %r" % p.stdout)
        termios.tcsetattr(slave, termios.TCSANOW, before[0])
        fcntl.ioctl(slave, termios.TIOCSWINSZ, before[1])
        for args in (["--"], ["--no-pty", "--"]):
            p = subprocess.run([SBX, "run"] + args + ["sh", "-c", script], stdin=slave, stderr=slave,
                               stdout=subprocess.PIPE, env=env, cwd=ws, timeout=60)
            after = tty_state(slave)
            tap(p.returncode == 0 and p.stdout == b"rc=1\n" and after == before,
                "%s/caller-terminal/unchanged%s" % (rung, " (--no-pty)" if "--no-pty" in args else ""),
                "rc %d out %r\nbefore %r\nafter  %r" % (p.returncode, p.stdout, before, after))
    finally:
        os.close(slave)
        os.close(master)


def test_unconfined(ws):
    """An Unconfined profile has no sandbox to open a terminal in: from a
    terminal it keeps the real one (no interactive mode), and --pty is
    refused before anything runs."""
    profile = os.path.join(SCRATCH, "unconfined.json")
    with open(profile, "w") as f:
        f.write('{"version": 1, "isolation": "unconfined", "ack-unconfined": true, '
                '"network": "allow", "command": "allow", "home": "real", '
                '"workspace": {"root": ".", "read": "allow", "write": "allow"}, '
                '"host": {"read": "allow", "write": "allow"}}')
    env = base_env(None)
    env["SBX_PLUGIN_PATH"] = os.environ.get("SBX_TEST_PLUGIN_DIRS", PLUGIN_DIR)
    marker = os.path.join(ws, "unconfined-ran")
    t = Term(outer_script(ws, sbx_cmd(["--profile", profile, "--", "sh", "-c", "tty; echo mode-done"])),
             env, ws)
    try:
        out = t.drain(60)
        t.wait()
    finally:
        t.close()
    outer_tty = re.search(rb"(/dev/pts/\d+)\r?\nmode-done", out)
    tap(outer_tty is not None and b"SBX-STATUS=0" in out, "unconfined/keeps-the-real-terminal",
        out.decode(errors="replace"))
    p = subprocess.run([SBX, "run", "--pty", "--profile", profile, "--", "touch", marker], env=env, cwd=ws,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    tap(p.returncode == 125 and b"PTY" in p.stderr and not os.path.exists(marker),
        "unconfined/pty-refused-nothing-runs", "rc %d err %r" % (p.returncode, p.stderr))


def main():
    if SBX is None or PLUGIN_DIR is None:
        print("1..0 # SKIP SBX_TEST_SBX or SBX_TEST_LINUX_PLUGIN_DIR not set (run through meson test)")
        return 0
    global SCRATCH
    ws = tempfile.mkdtemp(prefix="sbx-test-pty-")
    os.chmod(ws, 0o755)
    SCRATCH = tempfile.mkdtemp(prefix="sbx-test-pty-tmp-")
    try:
        for rung in RUNGS:
            ok, why = rung_available(rung, ws)
            if not ok:
                skip("%s" % rung, "the rung is not available here: " + why.strip().replace("\n", " ")[:300])
                continue
            test_shell(rung, ws)
            test_injection(rung, ws)
            test_status_and_signals(rung, ws)
            test_sigkill(rung, ws)
            test_no_terminal(rung, ws)
            test_caller_terminal(rung, ws)
        test_unconfined(ws)
    finally:
        shutil.rmtree(ws, ignore_errors=True)
        shutil.rmtree(SCRATCH, ignore_errors=True)
    print("1..%d" % n_tests)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
