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
#include "sbx-linux-private.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-child.h"
#include "sbx-linux-stage.h"

SBX_CHILD_FUNC long
sbx_linux_child_stage_mount (long                      rootfd,
                             const SbxMountOp         *op,
                             const SbxLinuxStageMount *m,
                             int                      *step)
{
  unsigned int attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  const char *options[9];
  long mfd, target, r;

  *step = SBX_LINUX_STEP_OVERLAY;
  if (op->flags & SBX_MOUNT_F_NOEXEC)
    attr |= MOUNT_ATTR_NOEXEC;
  options[0] = "lowerdir";
  options[1] = m->lower;
  options[2] = "upperdir";
  options[3] = m->upper;
  options[4] = "workdir";
  options[5] = m->work;
  options[6] = "userxattr";
  options[7] = 0;
  options[8] = 0;
  mfd = sbx_child_fsmount ("overlay", options, attr);
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
