/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The probe's children (sbx-linux-probe.c runs them): each proves one
 * mechanism by using it, between clone() and execve() or exit.  A child-code
 * unit, under the rule of sbx-linux-child-private.h: raw system calls only,
 * no TLS, no libc, nothing but its stack and the ProbeShared it is handed.
 *
 * Error paths here use goto to the end of the function: child code cannot
 * use the cleanup attributes (<sbx/sbx-cleanup.h> calls libc, and a
 * CLONE_VM child must not), so the code at the label, which closes what
 * the function opened and reports the step, is the one way out.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>

#include "sbx-linux-private.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-child.h"
#include "init/sbx-init-proto.h"

/* ------------------------------------------------------------------------- */
/* Probe children: raw system calls only                                      */
/* ------------------------------------------------------------------------- */

SBX_CHILD_FUNC static int
probe_grandchild (void *data)
{
  (void) data;
  sbx_child_exit (0);
}

static const char *const probe_tmpfs_options[] = { "mode", "0755", NULL };
static const char *const probe_devpts_options[] = { "mode", "0620", "ptmxmode", "0666", NULL };

SBX_CHILD_FUNC static void probe_apply_lsm (ProbeShared *p);

SBX_CHILD_FUNC int
sbx_linux_probe_ns_child (void *data)
{
  ProbeShared *p = data;
  long r, tmp, tree, target;
  int st = 0;

  sbx_child_reset_signals ();

  p->step = SBX_LINUX_PROBE_ID_MAPS;
  r = sbx_child_write_file ("/proc/self/setgroups", "deny", 4);
  if (r >= 0)
    r = sbx_child_write_file ("/proc/self/uid_map", p->uid_map, p->uid_map_len);
  if (r >= 0)
    r = sbx_child_write_file ("/proc/self/gid_map", p->gid_map, p->gid_map_len);
  if (r < 0)
    goto fail;

  p->step = SBX_LINUX_PROBE_MOUNT_SLAVE;
  r = sbx_raw_syscall5 (__NR_mount, 0, "/", 0, MS_REC | MS_SLAVE, 0);
  if (r < 0)
    goto fail;

  p->step = SBX_LINUX_PROBE_TMPFS;
  tmp = sbx_child_fsmount ("tmpfs", probe_tmpfs_options, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if ((r = tmp) < 0)
    goto fail;

  p->step = SBX_LINUX_PROBE_BIND;
  tree = sbx_raw_syscall3 (__NR_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if ((r = tree) < 0)
    goto fail;
  r = sbx_child_setattr (tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, MS_PRIVATE, 1);
  sbx_child_close (tree);
  if (r < 0)
    goto fail;

  p->step = SBX_LINUX_PROBE_PROC;
  r = sbx_child_fsmount ("proc", NULL, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (r < 0)
    goto fail;
  sbx_child_close (r);

  p->step = SBX_LINUX_PROBE_DEVPTS;
  r = sbx_child_fsmount ("devpts", probe_devpts_options, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  if (r < 0)
    goto fail;
  sbx_child_close (r);

  p->step = SBX_LINUX_PROBE_LOOPBACK;
  r = sbx_child_loopback_up ();
  if (r < 0)
    goto fail;

  p->step = SBX_LINUX_PROBE_HOSTNAME;
  r = sbx_raw_syscall2 (__NR_sethostname, "sbx-probe", 9);
  if (r < 0)
    goto fail;

  /* Best effort: whether the view's root can be the view supervisor's FUSE
   * filesystem (sbx-linux-child-mount.c does the same in A).  Nobody serves
   * this connection: closing the superblock and then the device aborts it. */
  r = sbx_linux_child_fuse_mount (p->fuse_uid, p->fuse_gid, 0, &tree);
  p->fuse_err = r < 0 ? (int) -r : 0;
  if (r >= 0)
    {
      sbx_child_close (r);
      sbx_child_close (tree);
    }

  p->step = SBX_LINUX_PROBE_PIDNS;
  r = sbx_raw_syscall0 (__NR_getpid);
  if (r != 1)
    {
      r = r < 0 ? r : -EINVAL;
      goto fail;
    }
  r = sbx_linux_raw_clone (CLONE_VM | CLONE_VFORK | SIGCHLD, p->grandchild_stack_top, NULL,
                           probe_grandchild, p);
  if (r < 0)
    goto fail;
  r = sbx_raw_syscall4 (__NR_wait4, r, &st, __WALL, 0);
  if (r < 0)
    goto fail;
  if (st != 0)
    {
      r = -ECHILD;
      goto fail;
    }

  /* The probe's own private view: cover /proc with the tmpfs and pivot into
   * it, exactly as a spawn pivots into the sandbox root. */
  p->step = SBX_LINUX_PROBE_PIVOT;
  target = sbx_child_openat2 (AT_FDCWD, "/proc", O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
  if ((r = target) < 0)
    goto fail;
  r = sbx_child_attach (tmp, target);
  sbx_child_close (target);
  if (r < 0)
    goto fail;
  r = sbx_raw_syscall1 (__NR_fchdir, tmp);
  if (r >= 0)
    r = sbx_raw_syscall2 (__NR_pivot_root, ".", ".");
  if (r >= 0)
    r = sbx_raw_syscall2 (__NR_umount2, ".", MNT_DETACH);
  if (r < 0)
    goto fail;

  /* One child proves everything on the common path: Landlock and seccomp
   * on top, then sbx-init from its sealed memfd exits with the probe code. */
  p->step = SBX_LINUX_PROBE_LSM;
  probe_apply_lsm (p);
  p->step = SBX_LINUX_PROBE_INIT_EXEC;
  if (p->init_fd < 0)
    {
      r = -ENOEXEC;
      goto fail;
    }
  {
    const char *argv[] = { "sbx-init", "p", NULL };
    const char *envp[] = { NULL };

    r = sbx_raw_syscall5 (__NR_execveat, p->init_fd, "", argv, envp, AT_EMPTY_PATH);
  }

fail:
  p->err = (int) -r;
  sbx_child_exit (1);
}

/* Creates and applies a Landlock ruleset and loads an allow-all seccomp
 * filter in the calling child; records each errno (0: it worked). */
SBX_CHILD_FUNC static void
probe_apply_lsm (ProbeShared *p)
{
  struct landlock_ruleset_attr attr;
  struct sock_filter allow;
  struct sock_fprog prog;
  long fd, r;

  r = sbx_raw_syscall5 (__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (r < 0)
    {
      p->landlock_err = p->seccomp_err = (int) -r;
      return;
    }
  /* A handled right no rule grants (creating char devices): enough to prove
   * the ruleset applies, harmless for the exec that follows. */
  sbx_child_zero (&attr, sizeof attr);
  attr.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_CHAR;
  fd = sbx_raw_syscall3 (__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0)
    p->landlock_err = (int) -fd;
  else
    {
      r = sbx_raw_syscall2 (__NR_landlock_restrict_self, fd, 0);
      p->landlock_err = r < 0 ? (int) -r : 0;
      sbx_child_close (fd);
    }

  allow.code = BPF_RET | BPF_K;
  allow.jt = 0;
  allow.jf = 0;
  allow.k = SECCOMP_RET_ALLOW;
  prog.len = 1;
  prog.filter = &allow;
  r = sbx_raw_syscall3 (__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
  p->seccomp_err = r < 0 ? (int) -r : 0;
}

SBX_CHILD_FUNC int
sbx_linux_probe_lsm_child (void *data)
{
  ProbeShared *p = data;

  sbx_child_reset_signals ();
  probe_apply_lsm (p);
  sbx_child_exit (SBX_INIT_PROBE_EXIT);
}

SBX_CHILD_FUNC int
sbx_linux_probe_init_child (void *data)
{
  ProbeShared *p = data;
  const char *argv[] = { "sbx-init", "p", NULL };
  const char *envp[] = { NULL };
  long r;

  sbx_child_reset_signals ();
  r = sbx_raw_syscall5 (__NR_execveat, p->init_fd, "", argv, envp, AT_EMPTY_PATH);
  p->err = (int) -r;
  sbx_child_exit (1);
}
