/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child side of the mount view (rung 1): the sandbox's root built under
 * spec->root_dir from the compiled plan (sbx-linux-mount.c), the minimal
 * /dev, a fresh procfs, and the pivot into it; for an A cloned by a zygote
 * only what is per sandbox (procfs, devpts, /dev/shm) on the zygote's
 * template.  Split from sbx-linux-child.c along its seam: this file builds
 * the filesystem view, that one the processes (A, B, the zygote).
 *
 * A child-code unit like every sbx-linux-child*.c file (the rule is in
 * sbx-linux-child-private.h): built without stack protector, sanitizers,
 * fortify or builtins, raw system calls only, nothing touched but the
 * stack and the immutable spec and context; tests/linux/check-child-
 * objects.py checks the object.
 *
 * Error paths here use goto to the end of the function: child code cannot
 * use the cleanup attributes (<sbx/sbx-cleanup.h> calls libc, and a
 * CLONE_VM child must not), so the code at the label, which closes what
 * the function opened and reports the step, is the one way out.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include "sbx-linux-cgroup.h"
#include "sbx-linux-private.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-child.h"
#include "sbx-linux-proc-mask.h"
#include "sbx-linux-stage.h"


/* The devices of the minimal /dev, bound from the host.  Only null is
 * mandatory; the others are skipped when the host lacks them. */
const char *const sbx_linux_dev_names[SBX_LINUX_N_DEVICES] = { "null", "zero", "full", "random", "urandom", "tty" };
const char *const sbx_linux_dev_host_paths[SBX_LINUX_N_DEVICES] = { "/dev/null", "/dev/zero", "/dev/full",
                                                                    "/dev/random", "/dev/urandom", "/dev/tty" };
#define N_DEVICES SBX_LINUX_N_DEVICES
#define dev_names sbx_linux_dev_names
#define dev_host_paths sbx_linux_dev_host_paths
#define DEV_INDEX_PTS   N_DEVICES
#define DEV_INDEX_SHM   (N_DEVICES + 1)
#define DEV_INDEX_LINKS (N_DEVICES + 2)

static const char *const dev_links[][2] = {
  { "ptmx", "pts/ptmx" },
  { "fd", "/proc/self/fd" },
  { "stdin", "/proc/self/fd/0" },
  { "stdout", "/proc/self/fd/1" },
  { "stderr", "/proc/self/fd/2" },
};

static const char *const tmpfs_options[] = { "mode", "0755", NULL };
static const char *const shm_options[] = { "mode", "1777", NULL };
static const char *const devpts_options[] = { "mode", "0620", "ptmxmode", "0666", NULL };

#define EMPTY_FILE ".sbx-empty"

/* statx type of @fd: S_IFDIR, S_IFREG, ... or -errno. */
SBX_CHILD_FUNC static long
child_fd_type (long fd)
{
  struct statx stx;
  long r;

  r = sbx_raw_syscall5 (__NR_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx);
  if (r < 0)
    return r;
  return stx.stx_mode & S_IFMT;
}

/* The directory @rel (relative to @rootfd) as an O_PATH fd, never through a
 * symlink or "..".  "" gives a dup-free reference: the caller must not close
 * @rootfd. */
SBX_CHILD_FUNC static long
child_open_dir (long        rootfd,
                const char *rel)
{
  if (rel[0] == '\0')
    return rootfd;
  return sbx_child_openat2 (rootfd, rel, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

SBX_CHILD_FUNC static long
child_open_target (long        rootfd,
                   const char *rel)
{
  return sbx_child_openat2 (rootfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC,
                            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* The last parent directory opened by child_create(): placeholders of one
 * directory (the runtime closure's /etc files) come one after another. */
typedef struct
{
  const char *rel;   /* interned in the plan: compared by pointer */
  long        fd;
} ParentCache;

/* Creates (kind MKDIR/MKFILE/SYMLINK) @op->name in its parent. */
SBX_CHILD_FUNC static long
child_create (long              rootfd,
              const SbxMountOp *op,
              ParentCache      *cache)
{
  long dirfd, r;

  if (op->parent_rel[0] == '\0')
    dirfd = rootfd;
  else if (cache->rel == op->parent_rel && cache->fd >= 0)
    dirfd = cache->fd;
  else
    {
      dirfd = child_open_dir (rootfd, op->parent_rel);
      if (dirfd < 0)
        return dirfd;
      sbx_child_close (cache->fd);
      cache->rel = op->parent_rel;
      cache->fd = dirfd;
    }
  if (op->kind == SBX_MOUNT_OP_MKDIR)
    r = sbx_raw_syscall3 (__NR_mkdirat, dirfd, op->name, 0755);
  else if (op->kind == SBX_MOUNT_OP_MKFILE)
    r = sbx_raw_syscall4 (__NR_mknodat, dirfd, op->name, S_IFREG | 0644, 0);
  else
    r = sbx_raw_syscall3 (__NR_symlinkat, op->link, dirfd, op->name);
  if (r == -EEXIST)
    r = 0;
  return r;
}

/* Attaches the detached mount @tree on @rel beneath @rootfd (a directory
 * when @dir: the kernel checks it; move_mount refuses a directory over a
 * non-directory and the reverse).  Closes @tree.  When @step is non-NULL, a
 * target that cannot be opened sets it to SBX_LINUX_STEP_BIND_TARGET;
 * callers with a step of their own (devpts, shm, proc) pass NULL. */
SBX_CHILD_FUNC static long
child_attach_at (long        rootfd,
                 const char *rel,
                 long        tree,
                 int         dir,
                 int        *step)
{
  long target, r;

  target = sbx_child_openat2 (rootfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : 0),
                              RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (target < 0)
    {
      sbx_child_close (tree);
      if (step != NULL)
        *step = SBX_LINUX_STEP_BIND_TARGET;
      return target;
    }
  r = sbx_child_attach (tree, target);
  sbx_child_close (target);
  sbx_child_close (tree);
  return r;
}

SBX_CHILD_FUNC static long
child_bind (long              rootfd,
            const SbxMountOp *op,
            uint64_t          extra_attr,
            int              *step)
{
  uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | extra_attr;
  int dir = (op->flags & SBX_MOUNT_F_DIR) != 0;
  long src, tree, r;

  /* The host path, never through a symlink: a link planted after compile
   * fails the spawn instead of redirecting the bind. */
  *step = SBX_LINUX_STEP_BIND_SOURCE;
  src = sbx_child_openat2 (AT_FDCWD, op->source != 0 ? op->source : op->path, O_PATH | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : 0),
                           RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (src < 0)
    return src;
  /* A grant's bind must bring the inode pinned when the grant was issued:
   * a rename or exchange since then fails the spawn (ESTALE). */
  if (op->pinned)
    {
      struct statx stx;

      r = sbx_raw_syscall5 (__NR_statx, src, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO, &stx);
      if (r < 0 || stx.stx_ino != op->pin_ino || stx.stx_dev_major != op->pin_dev_major
          || stx.stx_dev_minor != op->pin_dev_minor)
        {
          sbx_child_close (src);
          return r < 0 ? r : -ESTALE;
        }
    }

  *step = SBX_LINUX_STEP_BIND;
  tree = sbx_raw_syscall3 (__NR_open_tree, src, "",
                           OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
  sbx_child_close (src);
  if (tree < 0)
    return tree;
  if (op->flags & SBX_MOUNT_F_RDONLY)
    attr |= MOUNT_ATTR_RDONLY;
  if (op->flags & SBX_MOUNT_F_NOEXEC)
    attr |= MOUNT_ATTR_NOEXEC;
  /* Recursive: every submount of the bound tree gets the flags too. */
  r = sbx_child_setattr (tree, attr, MS_PRIVATE, 1);
  if (r < 0)
    {
      sbx_child_close (tree);
      return r;
    }
  return child_attach_at (rootfd, op->rel, tree, dir, step);
}

SBX_CHILD_FUNC static long
child_tmpfs (ChildCtx         *ctx,
             long              rootfd,
             const SbxMountOp *op,
             int              *step)
{
  long mfd, r;

  *step = SBX_LINUX_STEP_TMPFS;
  mfd = sbx_child_fsmount ("tmpfs", tmpfs_options,
                           MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (mfd < 0)
    return mfd;
  /* Kept open: remounted read-only once everything nested is mounted. */
  ctx->tmpfs_fds[op->tmpfs_slot] = (int) mfd;
  r = sbx_raw_syscall1 (__NR_dup, mfd);
  if (r < 0)
    return r;
  return child_attach_at (rootfd, op->rel, r, 1, step);
}

SBX_CHILD_FUNC static long
child_mask_file (long              rootfd,
                 long              devfd,
                 const char       *rel,
                 int              *step)
{
  long src, tree, r;

  *step = SBX_LINUX_STEP_MASK;
  src = sbx_child_openat2 (devfd, EMPTY_FILE, O_PATH | O_NOFOLLOW | O_CLOEXEC,
                           RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
  if (src < 0)
    return src;
  tree = sbx_raw_syscall3 (__NR_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  sbx_child_close (src);
  if (tree < 0)
    return tree;
  r = sbx_child_setattr (tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                         MS_PRIVATE, 0);
  if (r < 0)
    {
      sbx_child_close (tree);
      return r;
    }
  return child_attach_at (rootfd, rel, tree, 0, step);
}

/* A private devpts instance (ptys of the sandbox only) on @devfd/pts and a
 * fresh tmpfs on @devfd/shm. */
SBX_CHILD_FUNC static long
child_mount_pts_shm (long  devfd,
                     int  *step,
                     int  *index)
{
  long mfd, r;

  *step = SBX_LINUX_STEP_DEVPTS;
  *index = DEV_INDEX_PTS;
  mfd = sbx_child_fsmount ("devpts", devpts_options, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  if (mfd < 0)
    return mfd;
  r = child_attach_at (devfd, "pts", mfd, 1, NULL);
  if (r < 0)
    return r;

  *step = SBX_LINUX_STEP_SHM;
  *index = DEV_INDEX_SHM;
  mfd = sbx_child_fsmount ("tmpfs", shm_options, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (mfd < 0)
    return mfd;
  return child_attach_at (devfd, "shm", mfd, 1, NULL);
}

/* The minimal /dev: a tmpfs with the host's null, zero, full, random,
 * urandom and tty bound in, a private devpts, a /dev/shm tmpfs and the usual
 * symlinks.  Returns the /dev mount fd or -errno with *index set. */
SBX_CHILD_FUNC static long
child_build_dev (ChildCtx *ctx,
                 long      rootfd,
                 int      *step,
                 int      *index)
{
  const SbxLinuxMountPlan *plan = ctx->spec->mounts;
  long devfd, target, src, tree, t, r;
  size_t i;

  *step = SBX_LINUX_STEP_DEV;
  *index = -1;
  if (plan->dev_mkdir && !ctx->view_fuse)
    {
      r = sbx_raw_syscall3 (__NR_mkdirat, rootfd, "dev", 0755);
      if (r < 0 && r != -EEXIST)
        return r;
    }
  devfd = sbx_child_fsmount ("tmpfs", tmpfs_options,
                             MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (devfd < 0)
    return devfd;
  ctx->tmpfs_fds[plan->n_tmpfs_slots + 1] = (int) devfd;
  target = child_open_target (rootfd, "dev");
  if (target < 0)
    return target;
  r = sbx_child_attach (devfd, target);
  sbx_child_close (target);
  if (r < 0)
    return r;

  for (i = 0; i < N_DEVICES; i++)
    {
      *index = (int) i;
      src = sbx_child_openat2 (AT_FDCWD, dev_host_paths[i], O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
      if (src == -ENOENT && i != 0)
        continue;
      if (src < 0)
        return src;
      t = child_fd_type (src);
      if (t >= 0 && t != S_IFCHR)
        t = -ENODEV;
      if (t < 0)
        {
          sbx_child_close (src);
          return t;
        }
      r = sbx_raw_syscall4 (__NR_mknodat, devfd, dev_names[i], S_IFREG | 0644, 0);
      if (r < 0)
        {
          sbx_child_close (src);
          return r;
        }
      tree = sbx_raw_syscall3 (__NR_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      sbx_child_close (src);
      if (tree < 0)
        return tree;
      r = sbx_child_setattr (tree, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, MS_PRIVATE, 0);
      if (r < 0)
        {
          sbx_child_close (tree);
          return r;
        }
      target = sbx_child_openat2 (devfd, dev_names[i], O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
      if (target < 0)
        {
          sbx_child_close (tree);
          return target;
        }
      r = sbx_child_attach (tree, target);
      sbx_child_close (target);
      sbx_child_close (tree);
      if (r < 0)
        return r;
    }

  /* Mountpoints for a private devpts and /dev/shm: mounted here, or per
   * spawn over a zygote's template (each sandbox gets its own instances). */
  *index = DEV_INDEX_PTS;
  r = sbx_raw_syscall3 (__NR_mkdirat, devfd, "pts", 0755);
  if (r < 0)
    return r;
  *index = DEV_INDEX_SHM;
  r = sbx_raw_syscall3 (__NR_mkdirat, devfd, "shm", 0755);
  if (r < 0)
    return r;
  if (!ctx->template)
    {
      r = child_mount_pts_shm (devfd, step, index);
      if (r < 0)
        return r;
    }

  *step = SBX_LINUX_STEP_DEV;
  for (i = 0; i < G_N_ELEMENTS (dev_links); i++)
    {
      *index = (int) (DEV_INDEX_LINKS + i);
      r = sbx_raw_syscall3 (__NR_symlinkat, dev_links[i][1], devfd, dev_links[i][0]);
      if (r < 0)
        return r;
    }
  if (ctx->needs_empty)
    {
      *index = -1;
      r = sbx_raw_syscall4 (__NR_mknodat, devfd, EMPTY_FILE, S_IFREG | 0000, 0);
      if (r < 0)
        return r;
    }
  return devfd;
}

SBX_CHILD_FUNC static long
child_mount_proc (long rootfd)
{
  long mfd;

  /* A fresh procfs of the sandbox's pid namespace, read-only as a whole:
   * kernel tunables (/proc/sys, /proc/sysrq-trigger, ...) cannot be written
   * even by a target running as uid 0 (sysctls check only the file mode). */
  mfd = sbx_child_fsmount ("proc", NULL,
                           MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (mfd < 0)
    return mfd;
  return child_attach_at (rootfd, "proc", mfd, 1, NULL);
}

/* The v1 hierarchies the curated /sys shows (sbx-linux-cgroup.c puts a
 * sandbox in these and the freezer's, which runtimes do not read). */
static const char *const cgroup_v1_shown[] = { "memory", "pids" };

/* A cgroup v1 hierarchy (fsconfig flag @controller) or the v2 one
 * (@controller NULL), read-only, not yet attached.  The mount is of the
 * caller's cgroup namespace: its root is the sandbox's cgroup. */
SBX_CHILD_FUNC static long
child_cgroup_fsmount (const char *controller)
{
  long fsfd, mfd, r;

  fsfd = sbx_raw_syscall2 (__NR_fsopen, controller != 0 ? "cgroup" : "cgroup2", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return fsfd;
  r = 0;
  if (controller != 0)
    r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, FSCONFIG_SET_FLAG, controller, 0, 0);
  if (r >= 0)
    r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, FSCONFIG_CMD_CREATE, 0, 0, 0);
  if (r < 0)
    {
      sbx_child_close (fsfd);
      return r;
    }
  mfd = sbx_raw_syscall3 (__NR_fsmount, fsfd, FSMOUNT_CLOEXEC,
                          MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  sbx_child_close (fsfd);
  return mfd;
}

/* The curated /sys's cgroup (spec->mounts->curated_sys, and the sandbox has
 * a cgroup of its own): A joined it first thing (sbx_cgroup_child_join), so
 * a cgroup namespace made now is rooted there, and the hierarchy mounted in
 * it shows that cgroup as its root, with its limits (memory.max, pids.max;
 * v1: memory.limit_in_bytes, pids.max) and nothing above or beside it: no
 * other process's cgroup.  Runtimes that size heaps and thread pools from
 * /proc/self/cgroup ("0::/" now) and /sys/fs/cgroup see the sandbox's
 * limits.  Read-only.  B and the target inherit the namespace.  Without a
 * cgroup of its own (rlimits only) /sys/fs/cgroup stays empty: the cgroup
 * the sandbox shares with its caller's other processes is not shown.  A
 * hierarchy the kernel refuses to mount here (a v1 controller mounted
 * together with others, which a mount naming it alone does not match) is
 * left out, its directory empty: this view is a convenience for programs,
 * not a boundary, and no spawn fails for it. */
SBX_CHILD_FUNC static long
child_mount_cgroup (const SbxLinuxSpec *spec,
                    long                rootfd,
                    int                *step,
                    int                *index)
{
  long mfd, dirfd, r;
  size_t i;

  if (!spec->mounts->curated_sys || spec->cgroup_base == 0 || spec->cgroup_base->mode == SBX_CGROUP_NONE)
    return 0;
  *step = SBX_LINUX_STEP_SYS_CGROUP;
  *index = -1;
  r = sbx_raw_syscall1 (__NR_unshare, CLONE_NEWCGROUP);
  if (r < 0)
    return r;
  if (spec->cgroup_base->mode == SBX_CGROUP_V2)
    {
      mfd = child_cgroup_fsmount (0);
      if (mfd < 0)
        return 0;   /* left out (see above) */
      return child_attach_at (rootfd, &SBX_LINUX_SYS_CGROUP[1], mfd, 1, NULL);
    }

  /* v1: a tmpfs holding one mountpoint per hierarchy shown, read-only
   * once they are mounted. */
  mfd = sbx_child_fsmount ("tmpfs", tmpfs_options, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (mfd < 0)
    return mfd;
  r = sbx_raw_syscall1 (__NR_dup, mfd);
  if (r < 0)
    {
      sbx_child_close (mfd);
      return r;
    }
  r = child_attach_at (rootfd, &SBX_LINUX_SYS_CGROUP[1], r, 1, NULL);
  if (r < 0)
    {
      sbx_child_close (mfd);
      return r;
    }
  dirfd = child_open_dir (rootfd, &SBX_LINUX_SYS_CGROUP[1]);
  if (dirfd < 0)
    {
      sbx_child_close (mfd);
      return dirfd;
    }
  for (i = 0; i < sizeof cgroup_v1_shown / sizeof cgroup_v1_shown[0]; i++)
    {
      long cg;

      *index = (int) i;
      r = sbx_raw_syscall3 (__NR_mkdirat, dirfd, cgroup_v1_shown[i], 0755);
      if (r < 0)
        break;
      cg = child_cgroup_fsmount (cgroup_v1_shown[i]);
      if (cg < 0)
        continue;   /* left out (see above) */
      r = child_attach_at (dirfd, cgroup_v1_shown[i], cg, 1, NULL);
      if (r < 0)
        break;
    }
  sbx_child_close (dirfd);
  if (r >= 0)
    {
      *index = -1;
      r = sbx_child_setattr (mfd, MOUNT_ATTR_RDONLY, 0, 0);
    }
  sbx_child_close (mfd);
  return r;
}

/* Rung 1, a root caller only (spec->mask_proc): the table of
 * sbx-linux-proc-mask.h over the fresh procfs; files get the empty file,
 * directories an empty read-only tmpfs.  Entries this kernel lacks are
 * skipped.  Self-contained: immutable tables, the child's stack. */
SBX_CHILD_FUNC static long
child_mask_proc (long rootfd,
                 long devfd,
                 int *step)
{
  size_t i;
  long r;

  for (i = 0; i < sizeof sbx_linux_proc_masked_files / sizeof sbx_linux_proc_masked_files[0]; i++)
    {
      r = child_mask_file (rootfd, devfd, sbx_linux_proc_masked_files[i], step);
      if (r < 0 && r != -ENOENT)
        return r;
    }
  for (i = 0; i < sizeof sbx_linux_proc_masked_dirs / sizeof sbx_linux_proc_masked_dirs[0]; i++)
    {
      long mfd;

      *step = SBX_LINUX_STEP_MASK;
      mfd = sbx_child_fsmount ("tmpfs", tmpfs_options,
                               MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
      if (mfd < 0)
        return mfd;
      r = child_attach_at (rootfd, sbx_linux_proc_masked_dirs[i], mfd, 1, NULL);
      if (r < 0 && r != -ENOENT)
        return r;
    }
  *step = SBX_LINUX_STEP_PROC;
  return 0;
}

/* pivot_root(".", "."): the old root lands on top of the new one and is
 * detached; needs no directory for it in the view. */
SBX_CHILD_FUNC static long
child_pivot (long rootfd)
{
  long r;

  r = sbx_raw_syscall1 (__NR_fchdir, rootfd);
  if (r < 0)
    return r;
  r = sbx_raw_syscall2 (__NR_pivot_root, ".", ".");
  if (r < 0)
    return r;
  r = sbx_raw_syscall2 (__NR_umount2, ".", MNT_DETACH);
  if (r < 0)
    return r;
  return sbx_raw_syscall1 (__NR_chdir, "/");
}

/* sbx-linux-child-private.h.  The superblock is read-only too ("ro"), not
 * only the mount: FUSE then never marks a listed directory's atime stale,
 * which would cost a GETATTR round trip at its next stat. */
SBX_CHILD_FUNC long
sbx_linux_child_fuse_mount (long  uid,
                            long  gid,
                            int   mount,
                            long *dev_fd)
{
  char fd_buf[24], uid_buf[24], gid_buf[24];
  const char *options[] = {
    "fd", fd_buf, "rootmode", "40000", "user_id", uid_buf, "group_id", gid_buf, "default_permissions", 0,
    "ro", 0, 0, 0
  };
  long dev, mfd;

  dev = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, "/dev/fuse", O_RDWR | O_CLOEXEC, 0);
  if (dev < 0)
    return dev;
  sbx_child_format_long (fd_buf, dev);
  sbx_child_format_long (uid_buf, uid);
  sbx_child_format_long (gid_buf, gid);
  mfd = mount ? sbx_child_fsmount ("fuse", options,
                                   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)
        : sbx_child_fscreate ("fuse", options);
  if (mfd < 0)
    {
      sbx_child_close (dev);
      return mfd;
    }
  *dev_fd = dev;
  return mfd;
}

/* The view's root as the view supervisor's FUSE filesystem (ctx->view_sock):
 * the device handed to the server by the process that made the mount (the
 * server learns the sandbox's pid namespace from the message's sender),
 * the mount read-only from the start (nothing is created in it: the server
 * shows the skeleton).  The mount fd,
 * or -errno when the device cannot be opened, mounted or handed over
 * (nothing is left: the caller fails the spawn). */
SBX_CHILD_FUNC static long
child_fuse_root (ChildCtx *ctx)
{
  const SbxLinuxSpec *spec = ctx->spec;
  long dev = -1, mfd, r;
  int fds[1];

  mfd = sbx_linux_child_fuse_mount (spec->view_uid, spec->view_gid, 1, &dev);
  if (mfd < 0)
    return mfd;
  fds[0] = (int) dev;
  r = sbx_child_send_fds (ctx->view_sock, fds, 1);
  sbx_child_close (dev);
  if (r < 0)
    {
      sbx_child_close (mfd);
      return r;
    }
  return mfd;
}

/* With the view supervisor's FUSE root: lists the root and each skeleton
 * directory that holds entries (SBX_MOUNT_F_LIST) once, in the plan's
 * order (a directory after its parent), so
 * every mountpoint is in the dentry cache before a bind looks it up.  The
 * server answers READDIRPLUS (each entry with its lookup's answer, kept
 * forever): one round trip per directory instead of one per entry, about
 * 12 instead of 40 for the default profile.  Only the first page of a
 * directory is asked for (about 25 entries; about 100 from Linux 6.14,
 * which asks for as much as the reader takes); the rest are looked up one
 * by one as before.  Nothing here can fail the build: a directory that
 * cannot be listed is looked up as before, and the binds check what they
 * find.  Also the early root's thread (sbx-linux-view-start.c), which
 * stops between directories once *@cancel (NULL: never) is set. */
SBX_CHILD_FUNC void
sbx_linux_child_prime_skeleton (long                     rootfd,
                                const SbxLinuxMountPlan *plan,
                                const int               *cancel)
{
  char entries[16384];   /* the kernel asks for as much as we read, up to 32 pages (6.14 on) */
  size_t i;

  for (i = 0; i <= plan->n_ops; i++)
    {
      const SbxMountOp *op = i > 0 ? &plan->ops[i - 1] : NULL;   /* 0: the root */
      long fd;

      if (cancel != NULL && __atomic_load_n (cancel, __ATOMIC_RELAXED))
        return;
      if (op != NULL && !(op->flags & SBX_MOUNT_F_LIST))
        continue;
      fd = sbx_child_openat2 (rootfd, op == NULL ? "." : op->rel,
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                              RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
      if (fd < 0)
        continue;
      (void) sbx_raw_syscall3 (__NR_getdents64, fd, entries, sizeof entries);
      sbx_child_close (fd);
    }
}

/* Builds the view under spec->root_dir and pivots into it (a zygote's
 * template: builds it and stays outside). */
SBX_CHILD_FUNC long
sbx_linux_child_mount_view (ChildCtx *ctx,
                            int      *step,
                            int      *index)
{
  const SbxLinuxSpec *spec = ctx->spec;
  const SbxLinuxMountPlan *plan = spec->mounts;
  ParentCache cache = { 0, -1 };
  long rootfd, devfd, r;
  int fuse = 0;
  size_t i;

  /* Nothing we mount propagates back to the host. */
  *step = SBX_LINUX_STEP_MOUNT_SLAVE;
  *index = -1;
  r = sbx_raw_syscall5 (__NR_mount, 0, "/", 0, MS_REC | MS_SLAVE, 0);
  if (r < 0)
    return r;

  /* The root: our tmpfs, or the host "/" with the policy's flags. */
  *step = SBX_LINUX_STEP_ROOT;
  if (plan->root_is_host)
    {
      uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

      if (plan->root_flags & SBX_MOUNT_F_RDONLY)
        attr |= MOUNT_ATTR_RDONLY;
      if (plan->root_flags & SBX_MOUNT_F_NOEXEC)
        attr |= MOUNT_ATTR_NOEXEC;
      rootfd = sbx_raw_syscall3 (__NR_open_tree, AT_FDCWD, "/",
                                 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      if (rootfd < 0)
        return rootfd;
      r = sbx_child_setattr (rootfd, attr, MS_PRIVATE, 1);
      if (r < 0)
        return r;
    }
  else
    {
      /* The view supervisor's FUSE root where the spawn has a server for
       * it: the one it made ahead of us (the early root, attached as it
       * is), else one of our own (its device replaces the early one at
       * the server, sbx_view_server_watch_replacement()).  Where it cannot
       * be made, the spawn fails: its report promises that attempts
       * outside the view are observed, and a tmpfs root would leave them
       * unobserved (a spec without that promise has no server, and gets
       * the tmpfs root). */
      int want_fuse = ctx->view_early || ctx->view_sock >= 0;

      rootfd = -1;
      r = 0;
      if (ctx->view_early)
        {
          r = sbx_raw_syscall5 (__NR_move_mount, ctx->view_early_fd, "", AT_FDCWD, spec->root_dir,
                                MOVE_MOUNT_F_EMPTY_PATH);
          if (r >= 0)
            rootfd = ctx->view_early_fd;
          else
            ctx->view_early = 0;
        }
      if (rootfd < 0 && ctx->view_sock >= 0)
        rootfd = r = child_fuse_root (ctx);
      fuse = rootfd >= 0;
      if (want_fuse && !fuse)
        {
          *step = SBX_LINUX_STEP_VIEW_ROOT;
          return r < 0 ? r : -ENODEV;
        }
      if (!fuse)
        rootfd = sbx_child_fsmount ("tmpfs", tmpfs_options,
                                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
      if (rootfd < 0)
        return rootfd;
      ctx->tmpfs_fds[plan->n_tmpfs_slots] = (int) rootfd;
      ctx->view_fuse = fuse;
    }
  /* The early root is attached and listed already. */
  if (!ctx->view_early)
    {
      r = sbx_raw_syscall5 (__NR_move_mount, rootfd, "", AT_FDCWD, spec->root_dir, MOVE_MOUNT_F_EMPTY_PATH);
      if (r < 0)
        return r;
      if (fuse)
        sbx_linux_child_prime_skeleton (rootfd, plan, NULL);
    }

  devfd = child_build_dev (ctx, rootfd, step, index);
  if (devfd < 0)
    return devfd;

  for (i = 0; i < plan->n_ops; i++)
    {
      const SbxMountOp *op = &plan->ops[i];

      *index = (int) i;
      if (fuse && (op->flags & SBX_MOUNT_F_SKELETON))
        continue;   /* the server shows it */
      switch (op->kind)
        {
        case SBX_MOUNT_OP_MKDIR:
          *step = SBX_LINUX_STEP_MKDIR;
          r = child_create (rootfd, op, &cache);
          break;
        case SBX_MOUNT_OP_MKFILE:
          *step = SBX_LINUX_STEP_MKFILE;
          r = child_create (rootfd, op, &cache);
          break;
        case SBX_MOUNT_OP_SYMLINK:
          *step = SBX_LINUX_STEP_SYMLINK;
          r = child_create (rootfd, op, &cache);
          break;
        case SBX_MOUNT_OP_BIND:
          /* A staged root: its bind read-only, the overlay on top (the
           * bind's root stays the overlay's mountpoint, so Landlock's rule
           * for the host directory still covers the path). */
          if (ctx->stage != NULL && ctx->stage[i] != NULL)
            {
              r = child_bind (rootfd, op, MOUNT_ATTR_RDONLY, step);
              if (r >= 0)
                r = sbx_linux_child_stage_mount (rootfd, op, ctx->stage[i], step);
              break;
            }
          r = child_bind (rootfd, op, 0, step);
          /* An optional runtime path gone since compile (before its open,
           * or between the open and the copy of its tree: the kernel will
           * not clone an unlinked object): nothing was mounted, narrower. */
          if (r == -ENOENT && (*step == SBX_LINUX_STEP_BIND_SOURCE || *step == SBX_LINUX_STEP_BIND)
              && (op->flags & SBX_MOUNT_F_OPTIONAL))
            r = 0;
          break;
        case SBX_MOUNT_OP_TMPFS:
          r = child_tmpfs (ctx, rootfd, op, step);
          if (r == -ENOENT && *step == SBX_LINUX_STEP_BIND_TARGET && (op->flags & SBX_MOUNT_F_OPTIONAL))
            r = 0;   /* nothing there to hide */
          break;
        case SBX_MOUNT_OP_MASK_FILE:
          r = child_mask_file (rootfd, devfd, op->rel, step);
          break;
        default:
          r = -EINVAL;
          break;
        }
      if (r < 0)
        return r;
    }
  sbx_child_close (cache.fd);

  *step = SBX_LINUX_STEP_PROC;
  *index = -1;
  if (plan->proc_mkdir && !fuse)
    {
      r = sbx_raw_syscall3 (__NR_mkdirat, rootfd, "proc", 0555);
      if (r < 0 && r != -EEXIST)
        return r;
    }
  if (!ctx->template)
    {
      r = child_mount_proc (rootfd);
      if (r < 0)
        return r;
      if (spec->mask_proc)
        {
          r = child_mask_proc (rootfd, devfd, step);
          if (r < 0)
            return r;
        }
      r = child_mount_cgroup (spec, rootfd, step, index);
      if (r < 0)
        return r;
    }

  /* Our tmpfs mounts become read-only now that everything nested in them is
   * mounted (non-recursive: /dev/pts, /dev/shm and binds keep their flags). */
  *step = SBX_LINUX_STEP_READONLY;
  for (i = 0; i < (size_t) plan->n_tmpfs_slots + 2; i++)
    {
      if (ctx->tmpfs_fds[i] < 0)
        continue;
      *index = (int) i;
      r = sbx_child_setattr (ctx->tmpfs_fds[i], MOUNT_ATTR_RDONLY, 0, 0);
      if (r < 0)
        return r;
    }

  if (ctx->template)
    {
      /* A zygote keeps the built view (each spawn pivots into a copy) but
       * none of these descriptors: it shares the supervisor's table. */
      for (i = 0; i < (size_t) plan->n_tmpfs_slots + 2; i++)
        if (ctx->tmpfs_fds[i] >= 0 && ctx->tmpfs_fds[i] != rootfd)
          {
            sbx_child_close (ctx->tmpfs_fds[i]);
            ctx->tmpfs_fds[i] = -1;
          }
      sbx_child_close (rootfd);
      return 0;
    }
  *step = SBX_LINUX_STEP_PIVOT_ROOT;
  *index = -1;
  return child_pivot (rootfd);
}

/* A spawned from a zygote: its mount namespace is a copy of the zygote's, in
 * which the view is already built at spec->root_dir.  Only what is per
 * sandbox is mounted here: a procfs of the new pid namespace, a private
 * devpts and /dev/shm.  Every descriptor it opens is closed again on every
 * path: a warm A runs this while it shares the supervisor's descriptor
 * table (sbx-linux-zygote.c), where nothing may be left behind. */
SBX_CHILD_FUNC long
sbx_linux_child_enter_template (ChildCtx *ctx,
                                int      *step,
                                int      *index)
{
  long rootfd, devfd = -1, r;

  *step = SBX_LINUX_STEP_ROOT;
  *index = -1;
  rootfd = sbx_child_openat2 (AT_FDCWD, ctx->spec->root_dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  if (rootfd < 0)
    return rootfd;
  *step = SBX_LINUX_STEP_PROC;
  r = child_mount_proc (rootfd);
  if (r < 0)
    goto out;
  *step = SBX_LINUX_STEP_DEV;
  devfd = sbx_child_openat2 (rootfd, "dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                             RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
  if (devfd < 0)
    {
      r = devfd;
      goto out;
    }
  if (ctx->spec->mask_proc)
    {
      *step = SBX_LINUX_STEP_PROC;
      r = child_mask_proc (rootfd, devfd, step);
      if (r < 0)
        goto out;
    }
  r = child_mount_pts_shm (devfd, step, index);
  if (r < 0)
    goto out;
  r = child_mount_cgroup (ctx->spec, rootfd, step, index);
  if (r < 0)
    goto out;
  *step = SBX_LINUX_STEP_PIVOT_ROOT;
  *index = -1;
  r = child_pivot (rootfd);

out:
  if (devfd >= 0)
    sbx_child_close (devfd);
  sbx_child_close (rootfd);
  return r;
}
