# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the terminal-driven CLI tests share (test-cli-ask.py,
test-cli-review.py): TAP output and a tmux server of the test's own.

The server's socket is a path in the test's own directory (tmux -S), so a
test leaves nothing in the shared /tmp (tmux -L would create
/tmp/tmux-UID).  Waits poll what the screen shows, never a fixed time.
"""
import os
import subprocess
import time


class Tap:
    """Counts TAP results; plan() prints the plan and gives the exit code."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def __call__(self, ok, name, detail=""):
        self.n += 1
        if not ok:
            self.failed += 1
        print(("ok" if ok else "not ok") + " %d %s" % (self.n, name))
        if detail and not ok:
            for line in detail.splitlines()[-40:]:
                print("# " + line)
        return ok

    def plan(self):
        print("1..%d" % self.n)
        return 1 if self.failed else 0


class Session:
    """One tmux server of its own, one window running @script."""

    def __init__(self, tmp, name, script, height=40, history=100):
        self.socket = os.path.join(tmp, name + ".tmux")
        self.history = history
        path = os.path.join(tmp, name + ".sh")
        with open(path, "w") as f:
            f.write(script)
        os.chmod(path, 0o755)
        subprocess.run(["tmux", "-S", self.socket, "-f", "/dev/null", "new-session", "-d",
                        "-x", "160", "-y", str(height), path], check=True)

    def screen(self):
        r = subprocess.run(["tmux", "-S", self.socket, "capture-pane", "-p", "-S",
                            "-%d" % self.history], capture_output=True, text=True)
        return r.stdout.rstrip("\n") + "\n"

    def visible(self):
        """The pane as it shows now, without its history."""
        r = subprocess.run(["tmux", "-S", self.socket, "capture-pane", "-p"], capture_output=True, text=True)
        return r.stdout

    def wait_visible(self, text, timeout=60):
        """Waits until the pane shows @text now (its history not counted)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.visible():
                return True
            time.sleep(0.05)
        return False

    def wait_for(self, text, count=1, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.screen().count(text) >= count:
                return True
            time.sleep(0.05)
        return False

    def keys(self, *keys):
        subprocess.run(["tmux", "-S", self.socket, "send-keys"] + list(keys), check=True)

    def close(self):
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)
        try:
            os.unlink(self.socket)
        except FileNotFoundError:
            pass
