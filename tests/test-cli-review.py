#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sbx run --review` (docs/staging.md) driven through tmux (a real
terminal a user would sit at), at rung 1 (staging needs it), as whoever
runs the suite (root, and sbx-ci in the unprivileged phase).  The same
command changes README, deletes a file and adds a directory each time:
  - "s" shows the unified diff on the terminal and asks again; "k" then
    keeps the stage: the workspace is unchanged and the stage is listed;
  - "a" applies: the workspace then hashes the same as a copy the command
    ran on directly (without sbx: the positive control that it changes
    the tree), and the stages directory is empty;
  - "d" discards: the workspace hashes as before and the stages directory
    is empty.
The tree hash covers names, types, modes, contents and link targets.
Tests wait on what the screen shows, never on a fixed delay.  Skipped when
tmux is missing or rung 1 cannot run here.  Output is TAP.
"""
import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tmux_tap import Session, Tap  # noqa: E402

tap = Tap()

SBX = os.environ.get("SBX_TEST_SBX")
PLUGIN_PATH = os.environ.get("SBX_TEST_LINUX_PLUGIN_DIR", "")
# (tmux drops the trailing blank of the question)
PROMPT = "[a/d/s/k]"
COMMAND = "echo changed > README && rm gone.txt && mkdir -p d && echo new > d/new"


def tree_hash(root):
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            h.update(("%s\0%o\0" % (os.path.relpath(path, root), st.st_mode)).encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(path).encode())
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    h.update(f.read())
            h.update(b"\0")
    return h.hexdigest()


def fill(ws):
    os.makedirs(os.path.join(ws, "src"))
    for rel, text, mode in (("README", "hello\nworld\n", 0o644), ("gone.txt", "bye\n", 0o600),
                            ("src/main.c", "int main (void) { return 0; }\n", 0o644)):
        with open(os.path.join(ws, rel), "w") as f:
            f.write(text)
        os.chmod(os.path.join(ws, rel), mode)
    os.symlink("README", os.path.join(ws, "link"))




def env_lines(state, scratch):
    return ("export SBX_PLUGIN_PATH=%s SBX_BACKEND=linux-userns XDG_STATE_HOME=%s TMPDIR=%s\n"
            % (shlex.quote(PLUGIN_PATH), shlex.quote(state), shlex.quote(scratch)))


def script_for(ws, state, scratch):
    return ("#!/bin/sh\ncd %s\n%s%s run --review -- sh -c %s\necho \"EXIT $?\"\nexec sleep 600\n"
            % (shlex.quote(ws), env_lines(state, scratch), shlex.quote(SBX), shlex.quote(COMMAND)))


def stages(state):
    d = os.path.join(state, "sbx", "stages")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def one_case(tmp, name, answers, check):
    """A fresh workspace and state directory; runs the command under
    --review, answers with each (key, what to wait for next) and gives
    check(ws, state, before, screen) the result."""
    ws = os.path.join(tmp, name, "ws")
    state = os.path.join(tmp, name, "state")
    scratch = os.path.join(tmp, name, "scratch")
    os.makedirs(state)
    os.makedirs(scratch)
    fill(ws)
    before = tree_hash(ws)
    s = Session(tmp, name, script_for(ws, state, scratch), height=50, history=200)
    try:
        ok = s.wait_for(PROMPT)
        prompts = 1
        for key, expect in answers:
            if not ok:
                break
            s.keys(key, "Enter")
            if expect == PROMPT:
                prompts += 1
                ok = s.wait_for(PROMPT, prompts)
            else:
                ok = s.wait_for(expect)
        screen = s.screen()
        ok = ok and "EXIT 0" in screen
        result, detail = check(ws, state, before, screen)
        tap(ok and result, "/cli-review/" + name, screen + "\n" + detail)
    finally:
        s.close()


def main():
    if shutil.which("tmux") is None:
        print("1..0 # SKIP tmux is not installed")
        return 0
    tmp = tempfile.mkdtemp(prefix="sbx-cli-review-")
    try:
        # The positive control: the command run directly changes the tree;
        # an applied stage must leave this very tree.
        control = os.path.join(tmp, "control")
        fill(control)
        control_before = tree_hash(control)
        subprocess.run(["sh", "-c", COMMAND], cwd=control, check=True)
        expected = tree_hash(control)
        tap(expected != control_before, "/cli-review/control")

        # Skipped only where rung 1 cannot run at all (unstaged); a staged
        # run that then fails is a failure.
        probe_ws = os.path.join(tmp, "probe-ws")
        scratch = os.path.join(tmp, "probe-scratch")
        os.mkdir(probe_ws)
        os.mkdir(scratch)
        probe = subprocess.run([SBX, "run", "--no-pty", "--", "true"], cwd=probe_ws,
                               capture_output=True, text=True,
                               env=dict(os.environ, SBX_PLUGIN_PATH=PLUGIN_PATH,
                                        SBX_BACKEND="linux-userns", TMPDIR=scratch))
        if probe.returncode != 0:
            for name in ("show-diff", "apply", "discard"):
                tap(True, "/cli-review/%s # SKIP linux-userns cannot run here: %s"
                    % (name, probe.stderr.strip().splitlines()[-1:]))
            tap.plan()
            return 0

        def kept(ws, state, before, screen):
            listed = stages(state)
            detail = "stages: %r" % listed
            ok = (tree_hash(ws) == before and len(listed) == 1
                  and "-hello\n-world\n+changed" in screen and "+new" in screen)
            for sid in listed:
                r = subprocess.run([SBX, "stage", "discard", sid], cwd=ws, capture_output=True,
                                   text=True, env=dict(os.environ, XDG_STATE_HOME=state))
                ok = ok and r.returncode == 0
            return ok and stages(state) == [], detail

        def applied(ws, state, before, screen):
            with open(os.path.join(ws, "README")) as f:
                readme = f.read()
            return (tree_hash(ws) == expected and readme == "changed\n"
                    and stages(state) == []), "stages: %r, README %r" % (stages(state), readme)

        def discarded(ws, state, before, screen):
            return (tree_hash(ws) == before and stages(state) == []
                    and os.path.exists(os.path.join(ws, "gone.txt"))), "stages: %r" % stages(state)

        # "s": the diff, asked again; "k": kept as it is
        one_case(tmp, "show-diff", [("s", PROMPT), ("k", "EXIT ")], kept)
        one_case(tmp, "apply", [("a", "EXIT ")], applied)
        one_case(tmp, "discard", [("d", "EXIT ")], discarded)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.plan()


if __name__ == "__main__":
    sys.exit(main())
