# SPDX-License-Identifier: LGPL-2.1-or-later
"""The scratch tree of the filesystem-denial tests (test-typelib-fs-denials.py,
test-cli-fs-denials.py, test-typelib-file-ask.py): a directory for the workspace, the roots and the
host files, and a directory for sbx's scratch root, both removed by clear()."""
import os
import shutil
import tempfile


class ScratchTree:
    """The tree lies under /var/tmp, not under /tmp, which rung 1 replaces
    by the executor's own (a lookup there never reaches the view's root):
    the workspace, the roots and the host files lie side by side, as a
    user's do."""

    def __init__(self, prefix):
        self.tmp = os.path.realpath(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
        os.chmod(self.tmp, 0o755)
        self.scratch = os.path.realpath(tempfile.mkdtemp(prefix=prefix + "scratch-"))

    @staticmethod
    def put(base, name, text, mode=0o644):
        path = os.path.join(base, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)

    def clear(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)
