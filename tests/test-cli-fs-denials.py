#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Filesystem denials end to end through the built `sbx run` (issue 29), at
rung 1 (linux-userns) and rung 2 (linux-landlock, SBX_BACKEND), as whoever
runs the suite (root, and sbx-ci in the unprivileged phase).  The profile
(a file, --profile) reads and writes its workspace, gates host read, denies
host write and has two roots gated for read and write.  Outside the view, a
tool reads a host file, writes a file of a gated root, writes a new host
file (a denied dimension), executes a host program and lists a directory
of a gated root.  For each rung:

  control     each access works without the sandbox (the positive control,
              on a copy: the writes change nothing the sandboxed runs see),
              and inside it is refused;
  lines       one run of all five: where the run's report (--report=json,
              its "fs-denials" entry) says filesystem denials are observed,
              exactly one "sbx: denied OPERATION TARGET (REASON)" line per
              attempt, ending in "; --approve CLASS:TARGET would open it"
              with the grant that opens it, or with no --approve for the
              denied dimension ("the profile denies host write"); where it
              says they are not observed ("unenforced": rung 2 without the
              kernel's audit, as an unprivileged caller always), no line
              and no denial at all: the report never claims an observation
              it did not make;
  json        the same run's {"denials": [...]} line on stderr lists each
              attempt once with its operation, target, mechanism and grant
              (or reason); none where not observed;
  grant-back  each printed --approve (the grant the profile implies where
              nothing was printed), passed back on the next run, opens
              exactly that access and not its sibling (another file of the
              same directory, a directory of the other gated root), which
              is still refused and reported; the grant is spent; an
              --approve of the denied dimension is refused (exit 125);
  quiet       a Python start-up (locale, ssl, sqlite3, subprocess,
              mimetypes), `gcc --version`, a tiny compile and run in the
              workspace, `env ls` (libselinux probes the absent
              /etc/selinux/config) and `ls` print no denial line, with the
              default profile and the gated one;
  stale-socket  a socket the sandbox bound in its own TMPDIR (rung 1: /tmp)
              and closed: connect gets ECONNREFUSED as outside, no denial;
  unknown-user  `id` and `getent passwd` of a user nobody has: the same
              answer inside as outside, no denial line (the view's /run is
              the sandbox's own: see unknown_user()).

   test-cli-fs-denials.py
Environment: SBX_TEST_SBX (the sbx program), SBX_TEST_LINUX_PLUGIN_DIR
(tests/meson.build).  Output is TAP.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fs_tree import ScratchTree  # noqa: E402

SBX = os.environ.get("SBX_TEST_SBX", "")
PLUGIN_DIR = os.environ.get("SBX_TEST_LINUX_PLUGIN_DIR", "")
PYTHON = "/usr/bin/python3"
RUNGS = ("linux-userns", "linux-landlock")
FS_MECHANISMS = ("view-supervisor", "landlock-audit")
RUN_TIMEOUT = 120

n = 0


def report(ok, name, details=(), skip=None, todo=None):
    global n
    n += 1
    if skip is not None:
        print(f"ok {n} {name} # SKIP {skip}", flush=True)
        return
    print(f"{'ok' if ok else 'not ok'} {n} {name}{' # TODO ' + todo if todo else ''}", flush=True)
    for line in details:
        for part in str(line).splitlines():
            print(f"# {part}")


class Tree(ScratchTree):
    """The workspace, two gated roots and a host directory outside every
    root, side by side as a user's are (fs_tree.ScratchTree); sbx's scratch
    root (TMPDIR) is the tree's scratch directory."""

    def __init__(self):
        super().__init__("sbx-cli-fs-")
        self.ws = os.path.join(self.tmp, "ws")
        self.root = os.path.join(self.tmp, "root")
        self.root2 = os.path.join(self.tmp, "root2")
        self.host = os.path.join(self.tmp, "host")
        for d in (self.ws, self.host, os.path.join(self.root, "sub"), os.path.join(self.root2, "sub")):
            os.makedirs(d)
        self.put(self.root, "file", "R-FILE\n")
        self.put(self.root, "other", "R-OTHER\n")
        self.put(self.root, "sub/deep", "R-DEEP\n")
        self.put(self.root2, "sub/deep2", "R2-DEEP\n")
        self.put(self.host, "config", "H-CONFIG\n")
        self.put(self.host, "other", "H-OTHER\n")
        self.put(self.host, "tool", "#!/bin/sh\necho H-TOOL-RAN\n", 0o755)
        self.put(self.host, "tool2", "#!/bin/sh\necho H-TOOL2-RAN\n", 0o755)
        self.put(self.ws, "hello.c",
                 "#include <math.h>\n#include <stdio.h>\n"
                 "int main (void) { printf (\"HELLO %d\\n\", (int) sqrt (16.0)); return 0; }\n")
        self.profile = os.path.join(self.tmp, "profile.json")
        with open(self.profile, "w") as f:
            json.dump({"version": 1,
                       "workspace": {"root": self.ws, "read": "allow", "write": "allow"},
                       "host": {"read": "gated", "write": "deny"},
                       "network": "deny", "command": "allow",
                       "roots": [{"path": self.root, "read": "gated", "write": "gated"},
                                 {"path": self.root2, "read": "gated", "write": "gated"}]}, f)


class Case:
    """One access outside the view: its script, what it prints once it
    works, the denial it must give (operation, target, grant class and
    target, or None and the reason for a denied dimension) and its
    sibling (a script and its denial target) that its grant must not open."""

    def __init__(self, name, op, target, script, text, grant, reason, sibling=None):
        self.name = name
        self.op = op
        self.target = target
        self.script = script
        self.text = text
        self.grant = grant
        self.reason = reason
        self.sibling = sibling


def cases(t):
    listdir = f"{PYTHON} -c 'import os, sys; print(*os.listdir(sys.argv[1]))'"
    return [
        Case("read", "read", f"{t.host}/config", f"cat {t.host}/config", "H-CONFIG",
             ("filesystem.path.read.v1", f"{t.host}/config"), "host read is gated",
             (f"cat {t.host}/other", "H-OTHER", "read", f"{t.host}/other")),
        Case("write", "write", f"{t.root}/file", f"echo R-WRITTEN > {t.root}/file && echo WROTE", "WROTE",
             ("filesystem.path.write.v1", f"{t.root}/file"), f"write of the root {t.root} is gated",
             (f"echo X > {t.root}/other && echo WROTE-OTHER", "WROTE-OTHER", "write", f"{t.root}/other")),
        Case("exec", "exec", f"{t.host}/tool", f"{t.host}/tool", "H-TOOL-RAN",
             ("filesystem.path.read.v1", f"{t.host}/tool"), "host read is gated",
             (f"{t.host}/tool2", "H-TOOL2-RAN", "exec", f"{t.host}/tool2")),
        # A listing alone: `ls DIR` stats DIR first, and that attempt (a read
        # of its metadata) is the one refused and reported.
        Case("list", "list", f"{t.root}/sub", f"{listdir} {t.root}/sub", "deep",
             ("filesystem.tree.read.v1", t.root), None,
             (f"{listdir} {t.root2}/sub", "deep2", "list", f"{t.root2}/sub")),
        Case("host-write", "write", f"{t.host}/new", f"echo NEW > {t.host}/new && echo WROTE-NEW", "WROTE-NEW",
             None, "the profile denies host write"),
    ]


def env_for(t, backend):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SBX_")}
    env.update(SBX_PLUGIN_PATH=PLUGIN_DIR, SBX_BACKEND=backend, TMPDIR=t.scratch, LANG="C.UTF-8")
    return env


def sbx_run(t, backend, script, approve=(), profile=True):
    argv = [SBX, "run", "--no-pty", "--report=json"]
    if profile:
        argv += ["--profile", t.profile]
    for a in approve:
        argv += ["--approve", a]
    argv += ["--", "/bin/sh", "-c", script]
    return subprocess.run(argv, cwd=t.ws, env=env_for(t, backend), capture_output=True, text=True,
                          timeout=RUN_TIMEOUT, check=False)


def stderr_json(stderr, key):
    """The objects sbx printed on stderr with this first member."""
    found = []
    for line in stderr.splitlines():
        if line.startswith('{"%s"' % key):
            found.append(json.loads(line))
    return found


def fs_entry(stderr):
    """The run report's fs-denials entry, or None."""
    for r in stderr_json(stderr, "schema"):
        for e in r.get("entries", []):
            if e.get("feature") == "fs-denials":
                return e
    return None


def observed(stderr):
    """(True, None) when the run's report says filesystem denials are
    observed, else (False, why not)."""
    e = fs_entry(stderr)
    if e is None:
        return False, "the report has no fs-denials entry"
    if e.get("status") == "unenforced":
        return False, f"fs-denials: unenforced ({e.get('detail')})"
    return True, None


def said(r):
    """What a run printed, without its report (one long line)."""
    return r.stdout + "".join(x + "\n" for x in r.stderr.splitlines() if not x.startswith('{"schema"'))


def denial_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("sbx: denied ")]


def check_line(c, lines, details):
    mine = [x for x in lines if x.startswith(f"sbx: denied {c.op} {c.target} (")]
    if len(mine) != 1:
        details.append(f"{c.name}: {len(mine)} lines for {c.op} {c.target}, expected exactly one")
        return
    line = mine[0]
    if c.grant is not None:
        tail = f"; --approve {c.grant[0]}:{c.grant[1]} would open it"
        if not line.endswith(tail):
            details.append(f"{c.name}: {line!r} does not end in {tail!r}")
    else:
        if line != f"sbx: denied {c.op} {c.target} ({c.reason})":
            details.append(f"{c.name}: {line!r}, expected no --approve and ({c.reason})")
    if c.reason is not None and f"({c.reason}" not in line:
        details.append(f"{c.name}: {line!r} does not say ({c.reason})")


def check_json(c, denials, details):
    mine = [d for d in denials if d.get("operation") == c.op and d.get("target") == c.target]
    if len(mine) != 1:
        details.append(f"{c.name}: {len(mine)} JSON denials for {c.op} {c.target}, expected exactly one")
        return
    d = mine[0]
    if d.get("mechanism") not in FS_MECHANISMS:
        details.append(f"{c.name}: mechanism {d.get('mechanism')}")
    if d.get("count") != 1:
        details.append(f"{c.name}: count {d.get('count')}")
    got = (d.get("grant_class"), d.get("grant_target")) if "grant_class" in d else None
    if got != c.grant:
        details.append(f"{c.name}: JSON grant {got}, expected {c.grant}")
    if c.reason is not None and d.get("reason") != c.reason and not str(d.get("reason")).startswith(c.reason):
        details.append(f"{c.name}: JSON reason {d.get('reason')!r}, expected {c.reason!r}")


def control(t, backend, cs):
    details = []
    copy = os.path.join(t.tmp, "control")
    for d in (t.root, t.root2, t.host):
        shutil.copytree(d, os.path.join(copy, os.path.basename(d)))

    def outside(script):
        for d in (t.root, t.root2, t.host):
            script = script.replace(d, os.path.join(copy, os.path.basename(d)))
        return subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=False)

    for c in cs:
        scripts = [(c.script, c.text)] + ([c.sibling[:2]] if c.sibling else [])
        for script, text in scripts:
            r = outside(script)
            if text not in r.stdout:
                details.append(f"{c.name}: outside the sandbox {script!r} fails: {r.stdout}{r.stderr}")
    return details


def run_rung(backend):
    t = Tree()
    try:
        probe = sbx_run(t, backend, "true")
        if probe.returncode != 0:
            for part in ("control", "lines", "json", "grant-back"):
                report(True, f"/cli/fs-denials/{backend}/{part}",
                       skip=f"{backend} cannot run here: {probe.stderr.strip().splitlines()[-1:]}")
            return False
        cs = cases(t)

        # control: outside each access (and each sibling) works; inside,
        # each is refused (in the run of all five below)
        details = control(t, backend, cs)
        script = "; ".join(c.script for c in cs) + "; true"
        r = sbx_run(t, backend, script)
        if r.returncode != 0:
            details.append(f"the run of all five exited {r.returncode}: {said(r)}")
        for c in cs:
            if c.text in r.stdout:
                details.append(f"{c.name}: the sandbox allowed it without a grant")
        report(not details, f"/cli/fs-denials/{backend}/control", details + [r.stdout])

        seen, why = observed(r.stderr)
        lines = denial_lines(r.stderr)
        denials = [d for j in stderr_json(r.stderr, "denials") for d in j["denials"]]

        # lines
        details = []
        if seen:
            for c in cs:
                check_line(c, lines, details)
            extra = [x for x in lines if not any(x.startswith(f"sbx: denied {c.op} {c.target} (") for c in cs)]
            details += [f"a line for no attempt: {x}" for x in extra]
        else:
            # Not observed: the report must say so, and sbx prints nothing
            # that would claim an observation.
            details += [f"a denial line where the report says {why}: {x}" for x in lines]
            if fs_entry(r.stderr) is None or "not observed" not in fs_entry(r.stderr).get("detail", ""):
                details.append(f"the fs-denials entry does not say the denials are not observed: {why}")
            if backend == "linux-userns" and os.path.exists("/dev/fuse") and os.access("/dev/fuse", os.R_OK | os.W_OK):
                details.append(f"rung 1 with a usable /dev/fuse does not observe: {why}")
        report(not details, f"/cli/fs-denials/{backend}/lines",
               details + ([] if seen else [f"(not observed) {why}"]) + [f"(stderr) {x}" for x in lines])

        # json
        details = []
        if seen:
            for c in cs:
                check_json(c, denials, details)
            if len(denials) != len(cs):
                details.append(f"{len(denials)} JSON denials for {len(cs)} attempts: {denials}")
        elif denials:
            details.append(f"JSON denials where the report says {why}: {denials}")
        report(not details, f"/cli/fs-denials/{backend}/json", details)

        # grant-back: each grant opens exactly its access, not its sibling
        details = []
        for c in cs:
            if c.grant is None:
                g = sbx_run(t, backend, c.script,
                            approve=[f"filesystem.path.write.v1:{c.target}"])
                if g.returncode != 125 or "cannot be granted" not in g.stderr or c.text in g.stdout:
                    details.append(f"{c.name}: an --approve of the denied dimension was not refused "
                                   f"(exit {g.returncode}): {said(g)}")
                continue
            grant = f"{c.grant[0]}:{c.grant[1]}"
            g = sbx_run(t, backend, f"{c.script}; {c.sibling[0]}; true", approve=[grant])
            glines = denial_lines(g.stderr)
            if c.text not in g.stdout:
                details.append(f"{c.name}: with --approve {grant} the access still fails: {said(g)}")
            if c.sibling[1] in g.stdout:
                details.append(f"{c.name}: --approve {grant} opened the sibling too: {c.sibling[0]}")
            spent = [s for j in stderr_json(g.stderr, "grants_spent") for s in j["grants_spent"]]
            if len(spent) != 1 or not spent[0].startswith(f"{c.grant[0]} {c.grant[1]}"):
                details.append(f"{c.name}: grants spent {spent}")
            if [x for x in glines if x.startswith(f"sbx: denied {c.op} {c.target} (")]:
                details.append(f"{c.name}: still a denial line for {c.target} with its grant: {glines}")
            sib = [x for x in glines if x.startswith(f"sbx: denied {c.sibling[2]} {c.sibling[3]} (")]
            if seen and len(sib) != 1:
                details.append(f"{c.name}: the sibling {c.sibling[3]}: {len(sib)} denial lines, "
                               f"expected one: {glines}")
            if not seen and glines:
                details.append(f"{c.name}: denial lines where the report says {why}: {glines}")
        report(not details, f"/cli/fs-denials/{backend}/grant-back", details)
        return True
    finally:
        t.clear()


def quiet(backend):
    """Python and gcc probe many missing paths: no denial line, with the
    default profile and with the gated one."""
    t = Tree()
    try:
        script = (f"{PYTHON} -c 'import sys, os, json, locale, ssl, sqlite3, subprocess, tempfile, "
                  "mimetypes; mimetypes.init(); locale.setlocale(locale.LC_ALL, \"\"); print(\"PY-OK\")' && "
                  "gcc --version >/dev/null && gcc -O2 -o hello hello.c -lm && ./hello && rm -f hello && "
                  # libselinux's access("/etc/selinux/config") (absent): env's ls, not the shell's
                  "env ls >/dev/null && ls >/dev/null && echo LS-OK")
        outside = subprocess.run(["/bin/sh", "-c", script], cwd=t.ws, capture_output=True, text=True, check=False)
        details = []
        if "PY-OK" not in outside.stdout or "HELLO 4" not in outside.stdout or "LS-OK" not in outside.stdout:
            details.append(f"outside the sandbox it fails: {outside.stdout}{outside.stderr}")
        for profile in (False, True):
            r = sbx_run(t, backend, script, profile=profile)
            which = "the gated profile" if profile else "the default profile"
            if "PY-OK" not in r.stdout or "HELLO 4" not in r.stdout or "LS-OK" not in r.stdout:
                details.append(f"{which}: it fails inside (exit {r.returncode}): {said(r)}")
            details += [f"{which}: {x}" for x in denial_lines(r.stderr)]
            details += [f"{which}: JSON {d}" for d in stderr_json(r.stderr, "denials")]
        # env ls as the sandbox's first process (where docs/compat.md saw
        # a read of /etc/selinux reported)
        r = subprocess.run([SBX, "run", "--no-pty", "--", "env", "ls"], cwd=t.ws, env=env_for(t, backend),
                           capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
        if r.returncode != 0 or "hello.c" not in r.stdout:
            details.append(f"env ls: exit {r.returncode}: {said(r)}")
        details += [f"env ls: {x}" for x in denial_lines(r.stderr)]
        report(not details, f"/cli/fs-denials/{backend}/quiet", details)
    finally:
        t.clear()


def unknown_user(backend):
    """`id nosuchuser` and `getent passwd nosuchuser` answer "no such user"
    inside as outside, and print no denial line: the records asked for
    exist nowhere.  glibc's systemd NSS module (where nsswitch.conf names
    systemd) walks /run/userdb and /run/host/userdb one component at a time
    from "/"; the view's /run is the sandbox's own empty tmpfs, so the walk
    ends there with ENOENT, as in bubblewrap (before it, the view
    supervisor saw an open of the host's /run and printed two "denied read
    /run" lines per lookup)."""
    t = Tree()
    try:
        details = []
        script = "id nosuchuser; echo rc=$?; getent passwd nosuchuser; echo rc=$?"
        want = "rc=1\nrc=2\n"
        outside = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=False)
        if outside.stdout != want or "no such user" not in outside.stderr:
            details.append(f"outside the sandbox: {outside.stdout}{outside.stderr}")
        r = sbx_run(t, backend, script, profile=False)
        if r.stdout != want or "no such user" not in r.stderr:
            details.append(f"inside (exit {r.returncode}): {said(r)}")
        details += denial_lines(r.stderr)
        report(not details, f"/cli/fs-denials/{backend}/unknown-user", details)
    finally:
        t.clear()


STALE = ("import errno, os, socket\n"
         "p = os.path.join(os.environ['TMPDIR'], 'stale.sock')\n"
         "s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(); s.close()\n"
         "c = socket.socket(socket.AF_UNIX)\n"
         "try:\n"
         "    c.connect(p); print('connected')\n"
         "except OSError as e:\n"
         "    print(errno.errorcode[e.errno])\n"
         "os.unlink(p)\n")


def stale_socket(backend):
    """A socket the sandbox bound in its own TMPDIR (rung 1: /tmp, the
    executor's own) whose server closed: the connect gets ECONNREFUSED, as
    outside, and no denial is printed (nothing is reached, no grant opens
    anything)."""
    t = Tree()
    try:
        details = []
        with open(os.path.join(t.ws, "stale.py"), "w") as f:
            f.write(STALE)
        script = f"{PYTHON} stale.py"
        outside = subprocess.run(["/bin/sh", "-c", script], cwd=t.ws, capture_output=True, text=True,
                                 env=dict(os.environ, TMPDIR=t.scratch), check=False)
        if outside.stdout != "ECONNREFUSED\n":
            details.append(f"outside the sandbox: {outside.stdout}{outside.stderr}")
        r = sbx_run(t, backend, script, profile=False)
        if r.stdout != "ECONNREFUSED\n":
            details.append(f"inside (exit {r.returncode}): {said(r)}")
        details += denial_lines(r.stderr)
        report(not details, f"/cli/fs-denials/{backend}/stale-socket", details)
    finally:
        t.clear()


def main():
    if not SBX or not PLUGIN_DIR:
        print("1..0 # SKIP SBX_TEST_SBX or SBX_TEST_LINUX_PLUGIN_DIR is not set")
        return 0
    missing = [p for p in (PYTHON, shutil.which("gcc")) if p is None or not os.path.exists(p)]
    for rung in RUNGS:
        if not run_rung(rung):
            report(True, f"/cli/fs-denials/{rung}/quiet", skip=f"{rung} cannot run here")
            report(True, f"/cli/fs-denials/{rung}/stale-socket", skip=f"{rung} cannot run here")
            report(True, f"/cli/fs-denials/{rung}/unknown-user", skip=f"{rung} cannot run here")
            continue
        if missing:
            report(True, f"/cli/fs-denials/{rung}/quiet", skip="python3 or gcc is not installed")
        else:
            quiet(rung)
        stale_socket(rung)
        unknown_user(rung)
    print(f"1..{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
