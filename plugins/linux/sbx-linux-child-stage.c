/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Staged spawns, the child's side (rung 1, in A before pivot_root): an
 * overlay instead of a writable root's bind.  Lower: the host path (read
 * only: overlayfs never writes a lower layer); upper and work: the stage's
 * directories.  "userxattr": inside a user namespace overlayfs may not use
 * trusted.* xattrs, so opaque directories carry user.overlay.opaque (and
 * without it removing a merged directory fails with EIO).  redirect_dir
 * stays off (the kernel's default in a user namespace): renaming a merged
 * directory fails with EXDEV and tools fall back to copying, which the
 * stage then records as an added tree and a whiteout.  Raw system calls
 * only (sbx-linux-child-private.h says why).
 */
#include "sbx-linux-child-private.h"
#include "sbx-linux-child.h"

SBX_CHILD_FUNC long
sbx_linux_child_stage_mount (long                      rootfd,
                             const SbxMountOp         *op,
                             const SbxLinuxStageMount *m,
                             int                      *step)
{
  unsigned int attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  long fsfd, mfd, target, r;

  *step = SBX_LINUX_STEP_OVERLAY;
  if (op->flags & SBX_MOUNT_F_NOEXEC)
    attr |= MOUNT_ATTR_NOEXEC;
  fsfd = sbx_raw_syscall2 (__NR_fsopen, "overlay", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return fsfd;
  r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, FSCONFIG_SET_STRING, "lowerdir", m->lower, 0);
  if (r >= 0)
    r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, FSCONFIG_SET_STRING, "upperdir", m->upper, 0);
  if (r >= 0)
    r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, FSCONFIG_SET_STRING, "workdir", m->work, 0);
  if (r >= 0)
    r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, FSCONFIG_SET_FLAG, "userxattr", 0, 0);
  if (r >= 0)
    r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, FSCONFIG_CMD_CREATE, 0, 0, 0);
  if (r < 0)
    {
      sbx_child_close (fsfd);
      return r;
    }
  mfd = sbx_raw_syscall3 (__NR_fsmount, fsfd, FSMOUNT_CLOEXEC, attr);
  sbx_child_close (fsfd);
  if (mfd < 0)
    return mfd;
  /* The mountpoint in the view, never through a symlink or "..". */
  target = sbx_child_openat2 (rootfd, op->rel, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                              RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (target < 0)
    {
      sbx_child_close (mfd);
      return target;
    }
  r = sbx_child_attach (mfd, target);
  sbx_child_close (target);
  sbx_child_close (mfd);
  return r;
}
