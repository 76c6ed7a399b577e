/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child side of the Linux spawn path: A (the sandbox's PID 1 to be),
 * B (the target) and the zygote, from clone() to execve().  The timeline
 * and the reasons for CLONE_VM|CLONE_VFORK are in sbx-linux-spawn.c; the
 * rule for this file is in sbx-linux-child-private.h: a child-code unit,
 * built without stack protector, sanitizers, fortify or builtins, touching
 * nothing but its stack and the immutable spec and context it is handed.
 * Raw system calls only (sbx-raw-syscall.h, sbx-linux-child.h); no libc,
 * no errno, no GLib.  tests/linux/check-child-objects.py checks the object.
 * The mount view (rung 1) is built by sbx-linux-child-mount.c.
 *
 * Error paths here use goto to the end of the function: child code cannot
 * use the cleanup attributes (<sbx/sbx-cleanup.h> calls libc, and a
 * CLONE_VM child must not), so the code at the label, which closes what
 * the function opened and reports the step, is the one way out.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <linux/securebits.h>

#include "sbx-linux-private.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-stage.h"
#include "sbx-linux-child.h"
#include "sbx-linux-cgroup-child.h"
#include "sbx-landlock-private.h"
#include "sbx-linux-view-slots.h"
#include "init/sbx-init-proto.h"

/* ------------------------------------------------------------------------- */
/* clone without TLS                                                          */
/* ------------------------------------------------------------------------- */

#if defined(__x86_64__)
/* rdi = flags, rsi = stack_top, rdx = ptid, rcx = fn, r8 = arg.  The child
 * pops fn and arg from its new stack, calls fn and exits with its result. */
__asm__ (".text\n"
         ".globl sbx_linux_raw_clone\n"
         ".hidden sbx_linux_raw_clone\n"
         ".type sbx_linux_raw_clone,@function\n"
         "sbx_linux_raw_clone:\n"
         "  and $-16, %rsi\n"
         "  sub $16, %rsi\n"
         "  mov %rcx, (%rsi)\n"
         "  mov %r8, 8(%rsi)\n"
         "  xor %r10d, %r10d\n"
         "  xor %r8d, %r8d\n"
         "  mov $56, %eax\n"
         "  syscall\n"
         "  test %rax, %rax\n"
         "  jnz 1f\n"
         "  xor %ebp, %ebp\n"
         "  pop %rax\n"
         "  pop %rdi\n"
         "  call *%rax\n"
         "  mov %eax, %edi\n"
         "  mov $231, %eax\n"
         "  syscall\n"
         "  hlt\n"
         "1:\n"
         "  ret\n"
         ".size sbx_linux_raw_clone, .-sbx_linux_raw_clone\n");
#elif defined(__aarch64__)
/* x0 = flags, x1 = stack_top, x2 = ptid, x3 = fn, x4 = arg. */
__asm__ (".text\n"
         ".globl sbx_linux_raw_clone\n"
         ".hidden sbx_linux_raw_clone\n"
         ".type sbx_linux_raw_clone,%function\n"
         "sbx_linux_raw_clone:\n"
         "  and x1, x1, #-16\n"
         "  stp x3, x4, [x1, #-16]!\n"
         "  mov x3, xzr\n"
         "  mov x4, xzr\n"
         "  mov x8, #220\n"
         "  svc #0\n"
         "  cbnz x0, 1f\n"
         "  ldp x1, x0, [sp], #16\n"
         "  blr x1\n"
         "  mov x8, #94\n"
         "  svc #0\n"
         "  brk #0\n"
         "1:\n"
         "  ret\n"
         ".size sbx_linux_raw_clone, .-sbx_linux_raw_clone\n");
#else
/* Elsewhere glibc's clone(): it stores errno on failure.  Acceptable for a
 * vfork-style child (the parent thread is suspended and restores errno);
 * the zygote, which runs concurrently, is not used on these architectures. */
long
sbx_linux_raw_clone (unsigned long flags,
                     void         *stack_top,
                     int          *ptid,
                     int         (*fn) (void *),
                     void         *arg)
{
  long r = clone (fn, stack_top, (int) flags, arg, ptid);

  return r < 0 ? -errno : r;
}
#endif

/* ------------------------------------------------------------------------- */
/* Child side: raw system calls only                                          */
/* ------------------------------------------------------------------------- */

SBX_CHILD_FUNC static void
child_report (ChildCtx *ctx,
              int       step,
              long      err,
              int       index)
{
  SbxLinuxSetupError rec;

  rec.magic = SBX_LINUX_SETUP_ERROR_MAGIC;
  rec.step = step;
  rec.err = (int32_t) (err < 0 ? -err : err);
  rec.index = index;
  while (sbx_raw_syscall3 (__NR_write, ctx->err_fd, &rec, sizeof rec) == -EINTR)
    ;
}

/* Drops every capability for good: securebits locked (no root semantics,
 * no setuid fixups, no ambient raise), bounding set emptied, ambient
 * cleared, then effective/permitted/inheritable zeroed.  Without any
 * capability (an unprivileged caller at rung 2) the privileged steps are
 * impossible and unnecessary: no_new_privs keeps file capabilities and
 * set-id bits from granting anything. */
SBX_CHILD_FUNC static long
child_drop_capabilities (int last_cap)
{
  struct __user_cap_header_struct hdr;
  struct __user_cap_data_struct data[2];
  int have_caps;
  long r;
  int cap;

  sbx_child_zero (&hdr, sizeof hdr);
  sbx_child_zero (data, sizeof data);
  hdr.version = _LINUX_CAPABILITY_VERSION_3;
  r = sbx_raw_syscall2 (__NR_capget, &hdr, data);
  if (r < 0)
    return r;
  have_caps = (data[0].effective | data[1].effective | data[0].permitted | data[1].permitted) != 0;

  if (have_caps)
    {
      r = sbx_raw_syscall5 (__NR_prctl, PR_SET_SECUREBITS,
                            SECBIT_NOROOT | SECBIT_NOROOT_LOCKED
                            | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED
                            | SECBIT_KEEP_CAPS_LOCKED
                            | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
                            0, 0, 0);
      if (r < 0)
        return r;
      for (cap = 0; cap <= last_cap; cap++)
        {
          r = sbx_raw_syscall5 (__NR_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0);
          if (r < 0 && r != -EINVAL)
            return r;
        }
    }
  r = sbx_raw_syscall5 (__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (r < 0 && r != -EINVAL)
    return r;
  sbx_child_zero (&hdr, sizeof hdr);
  sbx_child_zero (data, sizeof data);
  hdr.version = _LINUX_CAPABILITY_VERSION_3;
  return sbx_raw_syscall2 (__NR_capset, &hdr, data);
}

/* execve of argv[0]; without '/' looked up in the target's PATH (never the
 * host's): EACCES is remembered and the search goes on, as execvp does. */
SBX_CHILD_FUNC static long
child_exec (ChildCtx *ctx)
{
  const char *name = ctx->argv[0];
  const char *p;
  size_t name_len;
  int seen_eacces = 0;
  long r;

  if (sbx_child_has_slash (name))
    return sbx_raw_syscall3 (__NR_execve, name, ctx->argv, ctx->envp);
  if (ctx->path_env == NULL)
    return -ENOENT;

  name_len = sbx_child_strlen (name);
  p = ctx->path_env;
  for (;;)
    {
      const char *end = p;
      size_t len = 0;

      while (*end != '\0' && *end != ':')
        end++;
      if (end == p)
        r = sbx_child_append (ctx->exec_path, sizeof ctx->exec_path, &len, ".", 1);
      else
        r = sbx_child_append (ctx->exec_path, sizeof ctx->exec_path, &len, p, (size_t) (end - p));
      if (r == 0)
        r = sbx_child_append (ctx->exec_path, sizeof ctx->exec_path, &len, "/", 1);
      if (r == 0)
        r = sbx_child_append (ctx->exec_path, sizeof ctx->exec_path, &len, name, name_len);
      if (r == 0)
        {
          r = sbx_raw_syscall3 (__NR_execve, ctx->exec_path, ctx->argv, ctx->envp);
          if (r == -EACCES)
            seen_eacces = 1;
          else if (r != -ENOENT && r != -ENOTDIR && r != -ESTALE && r != -ENODEV
                   && r != -ETIMEDOUT && r != -ENAMETOOLONG && r != -ELOOP)
            return r;
        }
      if (*end == '\0')
        break;
      p = end + 1;
    }
  return seen_eacces ? -EACCES : -ENOENT;
}

/* SBX_SPAWN_PTY_SANDBOX: opens a terminal of the sandbox (rung 1: the
 * private devpts mounted for this sandbox; rung 2, which has no mount
 * namespace: the host's /dev/ptmx), unlocks it, sets the window size, sends
 * the master to the supervisor over ctx->pty_sock (SCM_RIGHTS) and keeps only
 * the slave.  Returns the slave (close-on-exec) or -errno.  B is in its new
 * session already, and the slave is opened O_NOCTTY: it becomes the
 * controlling terminal only through the TIOCSCTTY that follows. */
SBX_CHILD_FUNC static long
child_open_sandbox_pty (ChildCtx *ctx)
{
  const char *ptmx = ctx->spec->rung == SBX_LINUX_RUNG_USERNS ? "/dev/pts/ptmx" : "/dev/ptmx";
  struct winsize ws;
  struct msghdr msg;
  struct iovec iov;
  union
  {
    struct cmsghdr hdr;
    char           buf[CMSG_SPACE (sizeof (int))];
  } control;
  struct cmsghdr *cmsg;
  char byte = 'M';
  int unlock = 0;
  long master, slave, r;

  master = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, ptmx, O_RDWR | O_NOCTTY | O_CLOEXEC, 0);
  if (master < 0)
    return master;
  r = sbx_raw_syscall3 (__NR_ioctl, master, TIOCSPTLCK, &unlock);
  if (r >= 0)
    {
      sbx_child_zero (&ws, sizeof ws);
      ws.ws_row = ctx->pty_rows;
      ws.ws_col = ctx->pty_cols;
      r = sbx_raw_syscall3 (__NR_ioctl, master, TIOCSWINSZ, &ws);
    }
  if (r < 0)
    {
      sbx_child_close (master);
      return r;
    }
  /* The peer of this very master: no path lookup that could name another
   * terminal. */
  slave = sbx_raw_syscall3 (__NR_ioctl, master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    {
      sbx_child_close (master);
      return slave;
    }

  sbx_child_zero (&msg, sizeof msg);
  sbx_child_zero (&control, sizeof control);
  iov.iov_base = &byte;
  iov.iov_len = 1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  cmsg = &control.hdr;
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (sizeof (int));
  *(int *) CMSG_DATA (cmsg) = (int) master;
  do
    r = sbx_raw_syscall3 (__NR_sendmsg, ctx->pty_sock, &msg, MSG_NOSIGNAL);
  while (r == -EINTR);
  /* The supervisor holds the master now; the sandbox keeps none. */
  sbx_child_close (master);
  if (r < 0)
    {
      sbx_child_close (slave);
      return r;
    }
  return slave;
}

/* B: becomes the target. */
SBX_CHILD_FUNC static int
child_b_main (void *data)
{
  ChildCtx *ctx = data;
  const SbxLinuxSpec *spec = ctx->spec;
  int step = SBX_LINUX_STEP_SETSID;
  int tmp[3] = { -1, -1, -1 };
  int unotify[2] = { -1, -1 };   /* the seccomp listener and the sock_diag socket */
  long r = 0;
  int i;

  r = sbx_raw_syscall0 (__NR_setsid);
  if (r < 0)
    goto fail;

  if (ctx->pty_sandbox)
    {
      step = SBX_LINUX_STEP_PTY;
      r = child_open_sandbox_pty (ctx);
      if (r < 0)
        goto fail;
      /* The slave is stdin, stdout and stderr, and the controlling
       * terminal below.  The context is this spawn's alone, and nobody
       * reads its stdio after B (A and the supervisor wait in vfork). */
      ctx->stdio[0] = ctx->stdio[1] = ctx->stdio[2] = (int) r;
      ctx->pty = 1;
    }

  /* stdio: first above 2, then into place, so no source is clobbered. */
  step = SBX_LINUX_STEP_STDIO;
  for (i = 0; i < 3; i++)
    {
      if (ctx->stdio[i] >= 0)
        r = sbx_raw_syscall3 (__NR_fcntl, ctx->stdio[i], F_DUPFD_CLOEXEC, 3);
      else
        r = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC, 0);
      if (r < 0)
        goto fail;
      if (r < 3)
        {
          long moved = sbx_raw_syscall3 (__NR_fcntl, r, F_DUPFD_CLOEXEC, 3);

          sbx_child_close (r);
          r = moved;
          if (r < 0)
            goto fail;
        }
      tmp[i] = (int) r;
    }
  for (i = 0; i < 3; i++)
    {
      r = sbx_raw_syscall3 (__NR_dup3, tmp[i], i, 0);
      if (r < 0)
        goto fail;
    }
  if (ctx->pty)
    {
      step = SBX_LINUX_STEP_CONTROLLING_TTY;
      r = sbx_raw_syscall3 (__NR_ioctl, 0, TIOCSCTTY, 0);
      if (r < 0)
        goto fail;
    }

  /* Nothing of the supervisor's survives the exec but stdio. */
  step = SBX_LINUX_STEP_CLOSE_FDS;
  r = sbx_raw_syscall3 (__NR_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
  if (r < 0)
    goto fail;

  step = SBX_LINUX_STEP_CHDIR;
  r = sbx_raw_syscall1 (__NR_chdir, ctx->cwd);
  if (r < 0)
    goto fail;

  if (spec->landlock != NULL)
    {
      SbxLandlockExtraRule extra[12 + SBX_LINUX_MAX_STAGE_ROOTS + SBX_VIEW_N_SLOTS];
      size_t n_extra = 0;
      const char *failed_step = NULL;

      step = SBX_LINUX_STEP_LANDLOCK;
      if (spec->rung == SBX_LINUX_RUNG_USERNS)
        {
          /* Inodes that exist only in the view: the fresh /proc (read),
           * the minimal /dev and its devpts (read/write devices), /dev/shm
           * (a writable tree), and listing the view's directories from "/"
           * down (READ_DIR only: the view shows nothing the policy does not
           * let the target read, so listing adds no authority). */
          static const char *const dirs[] = { "/proc", "/dev", "/dev/pts", "/dev/shm", "/", "/sys" };

          for (i = 0; i < 6; i++)
            {
              /* The curated /sys (sbx-linux-mount.c): read, like /proc. */
              if (i == 5 && !spec->mounts->curated_sys)
                continue;
              /* A write-only directory in the view must not be listable:
               * then "/" gets no listing right (only policy-readable
               * directories list). */
              if (i == 4 && spec->mounts->unlisted_view)
                continue;
              r = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
              if (r < 0)
                goto fail;
              extra[n_extra].fd = (int) r;
              extra[n_extra].access = i == 0 || i == 5 ? sbx_landlock_plan_child_read_dir (spec->landlock)
                                      : i == 3 ? sbx_landlock_plan_child_rw_dir (spec->landlock)
                                      : i == 4 ? LANDLOCK_ACCESS_FS_READ_DIR
                                      : sbx_landlock_plan_child_rw_file (spec->landlock);
              n_extra++;
            }
          /* Egress: the sandbox's own resolver files, which A mounted over
           * the view's (sbx-linux-child-egress.c), and the view's own
           * /etc/hosts (sbx-linux-hosts.c): readable, nothing else. */
          for (i = 0; i < 2; i++)
            {
              if (spec->egress_resolv == NULL && (i == 0 || !spec->mounts->own_hosts))
                continue;
              r = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, i == 0 ? "/etc/resolv.conf" : "/etc/hosts",
                                    O_PATH | O_CLOEXEC, 0);
              if (r == -ENOENT || r == -ENOTDIR)
                continue;
              if (r < 0)
                goto fail;
              extra[n_extra].fd = (int) r;
              extra[n_extra].access = LANDLOCK_ACCESS_FS_READ_FILE;
              n_extra++;
            }
          /* The view supervisor's file slots (sbx-linux-view-slots.h):
           * READ_FILE on each hidden file inode of its FUSE root, so a
           * read approved while the tool runs can be served through one.
           * A slot the supervisor does not show (it shows each once) is
           * skipped: then nothing is served through it.  A spawn that
           * cannot ask has none (ctx->view_slots). */
          for (i = 0; ctx->view_fuse && ctx->view_slots && i < SBX_VIEW_N_SLOTS; i++)
            {
              static const char *const slots[SBX_VIEW_N_SLOTS] = SBX_VIEW_SLOT_NAMES;

              r = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, slots[i], O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
              if (r < 0)
                continue;
              extra[n_extra].fd = (int) r;
              extra[n_extra].access = LANDLOCK_ACCESS_FS_READ_FILE;
              n_extra++;
            }
        }
      /* A staged root's overlay (sbx-linux-child-stage.c) is a mount of
       * its own whose inodes no rule of the plan names, and Landlock skips
       * the covered mountpoint when it walks up: the overlay's root gets
       * the writable tree's rights here. */
      for (i = 0; ctx->stage != NULL && (size_t) i < spec->mounts->n_ops; i++)
        {
          if (ctx->stage[i] == NULL)
            continue;
          r = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, spec->mounts->ops[i].path,
                                O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
          if (r < 0)
            goto fail;
          extra[n_extra].fd = (int) r;
          extra[n_extra].access = sbx_landlock_plan_child_rw_dir (spec->landlock)
                                  | ((spec->mounts->ops[i].flags & SBX_MOUNT_F_NOEXEC) ? 0
                                     : LANDLOCK_ACCESS_FS_EXECUTE);
          n_extra++;
        }
      if (ctx->pty_sandbox && spec->rung != SBX_LINUX_RUNG_USERNS)
        {
          /* Rung 2 has no devpts of its own and the host's is not in the
           * policy: the sandbox's terminal alone (fd 0 now), so that a
           * program reopening it by name (ttyname, then open) can. */
          extra[n_extra].fd = 0;
          extra[n_extra].access = sbx_landlock_plan_child_rw_file (spec->landlock);
          n_extra++;
        }
      r = sbx_landlock_plan_apply (spec->landlock, extra, n_extra, &failed_step);
      if (r < 0)
        goto fail;
    }

  step = SBX_LINUX_STEP_CAPABILITIES;
  r = child_drop_capabilities (spec->probe->cap_last_cap);
  if (r < 0)
    goto fail;

  step = SBX_LINUX_STEP_NO_NEW_PRIVS;
  r = sbx_raw_syscall5 (__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (r < 0)
    goto fail;

  /* After the last credential change (which would clear it); init is our
   * parent and is alive (it is suspended in vfork until we exec). */
  step = SBX_LINUX_STEP_PDEATHSIG;
  r = sbx_raw_syscall5 (__NR_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (r < 0)
    goto fail;
  if (sbx_raw_syscall0 (__NR_getppid) != ctx->a_pid)
    {
      r = -ESRCH;
      goto fail;
    }

  if (ctx->unotify_sock >= 0)
    {
      /* The supervisor's view of the sandbox's own unix sockets: a
       * sock_diag socket of this network namespace (the filter refuses the
       * target one). */
      step = SBX_LINUX_STEP_SECCOMP;
      r = sbx_raw_syscall3 (__NR_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
      /* Refused by an outer sandbox's filter (sbx inside sbx refuses
       * every netlink protocol but route): the supervisor then gets the
       * listener alone, has no view of the sandbox's own sockets and
       * refuses every connect that needs one (fail closed), instead of
       * no spawn at all. */
      if (r == -EPROTONOSUPPORT || r == -EACCES || r == -EPERM || r == -EAFNOSUPPORT)
        r = -1;
      else if (r < 0)
        goto fail;
      unotify[1] = (int) r;
    }

  if (ctx->seccomp != NULL)
    {
      step = SBX_LINUX_STEP_SECCOMP;
      if (ctx->unotify_sock < 0)
        r = sbx_seccomp_program_apply (ctx->seccomp);
      else
        {
          /* The filter hands connect() to the supervisor: its listener
           * leaves with the diag socket (sendmsg is not supervised, and
           * both are close-on-exec, so the target holds neither). */
          r = sbx_seccomp_program_apply_listener (ctx->seccomp);
          if (r == -EBUSY)
            {
              /* A filter of an outer sandbox holds the one listener a
               * task's filters may have between them (sbx inside sbx).
               * The program goes on without one: the kernel answers
               * every call it would have handed over with ENOSYS (no
               * connect, no set-gid chmod: closed, not open), and the
               * supervisor is told there is nothing to supervise. */
              sbx_child_close (unotify[1]);
              unotify[1] = -1;
              r = sbx_seccomp_program_apply (ctx->seccomp);
              if (r == 0)
                r = sbx_child_send_fds (ctx->unotify_sock, unotify, 0);
            }
          else if (r > 0)
            {
              unotify[0] = (int) r;
              r = sbx_child_send_fds (ctx->unotify_sock, unotify, unotify[1] >= 0 ? 2 : 1);
              sbx_child_close (unotify[0]);
              if (unotify[1] >= 0)
                sbx_child_close (unotify[1]);
            }
          else if (r == 0)
            r = -EPROTO;   /* the program has no supervised rule: the parent expects one */
        }
      if (r < 0)
        goto fail;
    }

  /* Resource limits last, after the filter and just before the exec: a
   * small limit (open files, address space, processes) must bind the
   * target, not the setup above it, which needs descriptors (Landlock rule
   * fds, the seccomp listener) and memory of its own.  Nothing after this
   * point opens a descriptor or allocates: execve is next. */
  step = SBX_LINUX_STEP_RLIMIT;
  for (i = 0; i < spec->n_rlimits; i++)
    {
      r = sbx_raw_syscall4 (__NR_prlimit64, 0, spec->rlimits[i].resource, &spec->rlimits[i].limit, 0);
      if (r < 0)
        goto fail;
    }

  /* The signals the caller ignored stay ignored for the target (and
   * across its execs), as for a plain wrapper's child. */
  step = SBX_LINUX_STEP_SIGNALS;
  r = sbx_child_ignore_signals (ctx->ignored_signals);
  if (r < 0)
    goto fail;
  sbx_child_set_sigmask (0);
  step = SBX_LINUX_STEP_EXEC;
  r = child_exec (ctx);

fail:
  ctx->b_failed = 1;
  child_report (ctx, step, r, -1);
  sbx_child_exit (127);
}

/* Rung 1: the caller's own uid and gid mapped (also for root), the
 * hostname, loopback up in a private network namespace. */
SBX_CHILD_FUNC static long
child_setup_ids (const SbxLinuxSpec *spec,
                 int                *step)
{
  long r;

  *step = SBX_LINUX_STEP_SETGROUPS;
  r = sbx_child_write_file ("/proc/self/setgroups", "deny", 4);
  if (r < 0)
    return r;
  *step = SBX_LINUX_STEP_UID_MAP;
  r = sbx_child_write_file ("/proc/self/uid_map", spec->uid_map, spec->uid_map_len);
  if (r < 0)
    return r;
  *step = SBX_LINUX_STEP_GID_MAP;
  r = sbx_child_write_file ("/proc/self/gid_map", spec->gid_map, spec->gid_map_len);
  if (r < 0)
    return r;
  *step = SBX_LINUX_STEP_HOSTNAME;
  r = sbx_raw_syscall2 (__NR_sethostname, spec->hostname, sbx_child_strlen (spec->hostname));
  if (r < 0)
    return r;
  if (spec->netns)
    {
      *step = SBX_LINUX_STEP_LOOPBACK;
      r = sbx_child_loopback_up ();
      if (r < 0)
        return r;
    }
  return 0;
}

/* The common end of A: start B, then become sbx-init.  Never returns. */
SBX_CHILD_FUNC static __attribute__ ((noreturn)) void
child_a_tail (ChildCtx *ctx)
{
  const SbxLinuxSpec *spec = ctx->spec;
  int step;
  long r = 0;
  long b;

  ctx->a_pid = sbx_raw_syscall0 (__NR_getpid);
  step = SBX_LINUX_STEP_CLONE_TARGET;
  b = sbx_linux_raw_clone (CLONE_VM | CLONE_VFORK | SIGCHLD, ctx->stack_b_top, NULL, child_b_main, ctx);
  if (b < 0)
    {
      child_report (ctx, step, b, -1);
      sbx_child_exit (127);
    }
  if (ctx->b_failed)
    {
      /* B reported its step.  Reap it so no zombie outlives us. */
      sbx_raw_syscall4 (__NR_wait4, b, 0, __WALL, 0);
      sbx_child_exit (127);
    }
  ctx->b_pid = b;

  /* B runs the target.  Become sbx-init, holding only the exit pipe. */
  step = SBX_LINUX_STEP_INIT_PREPARE;
  r = sbx_raw_syscall3 (__NR_fcntl, ctx->exit_fd, F_SETFD, 0);
  if (r < 0)
    goto fail;
  r = sbx_raw_syscall3 (__NR_close_range, 0, 2, 0);
  if (r < 0)
    goto fail;
  if (ctx->exit_fd > 3)
    {
      r = sbx_raw_syscall3 (__NR_close_range, 3, ctx->exit_fd - 1, CLOSE_RANGE_CLOEXEC);
      if (r < 0)
        goto fail;
    }
  r = sbx_raw_syscall3 (__NR_close_range, ctx->exit_fd + 1, ~0U, CLOSE_RANGE_CLOEXEC);
  if (r < 0)
    goto fail;
  r = child_drop_capabilities (spec->probe->cap_last_cap);
  if (r < 0)
    goto fail;
  r = sbx_raw_syscall5 (__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (r < 0)
    goto fail;
  sbx_child_format_long (ctx->init_pid_buf, b);
  ctx->init_argv[2] = ctx->init_pid_buf;

  step = SBX_LINUX_STEP_EXEC_INIT;
  r = sbx_raw_syscall5 (__NR_execveat, spec->probe->init_fd, "", ctx->init_argv, ctx->init_envp,
                        AT_EMPTY_PATH);

fail:
  sbx_raw_syscall2 (__NR_kill, b, SIGKILL);
  sbx_raw_syscall4 (__NR_wait4, b, 0, __WALL, 0);
  child_report (ctx, step, r, -1);
  sbx_child_exit (127);
}

/* A, cloned by the supervisor: builds the sandbox, starts B, becomes
 * sbx-init. */
SBX_CHILD_FUNC int
sbx_linux_child_a_main (void *data)
{
  ChildCtx *ctx = data;
  const SbxLinuxSpec *spec = ctx->spec;
  int step = SBX_LINUX_STEP_SIGNALS;
  int index = -1;
  long egress_trees[2] = { -1, -1 };
  long r;

  sbx_child_reset_signals ();
  /* Into the sandbox's cgroup before anything else (sbx-linux-cgroup.c). */
  r = sbx_cgroup_child_join (ctx->cgroup_fds, ctx->n_cgroup_fds);
  if (r < 0)
    {
      child_report (ctx, SBX_LINUX_STEP_CGROUP, r, -1);
      sbx_child_exit (127);
    }
  if (spec->rung == SBX_LINUX_RUNG_USERNS)
    {
      r = child_setup_ids (spec, &step);
      if (r >= 0 && ctx->egress_fd >= 0)
        {
          step = SBX_LINUX_STEP_EGRESS_LISTEN;   /* egress: the proxy listener */
          r = sbx_linux_child_egress_listen (ctx->egress_fd, spec->proxy_port);
          if (r >= 0)
            r = sbx_linux_child_egress_listeners (ctx->egress_fd, ctx->egress_listens, ctx->n_egress_listens);
          if (r >= 0 && spec->egress_resolv != NULL)
            r = sbx_linux_child_egress_files_open (spec->egress_resolv, spec->egress_hosts, egress_trees);
        }
      if (r >= 0)
        r = sbx_linux_child_mount_view (ctx, &step, &index);
      if (r >= 0 && egress_trees[0] >= 0)
        {
          step = SBX_LINUX_STEP_EGRESS_LISTEN;   /* egress: the stub as the only resolver */
          index = -1;
          r = sbx_linux_child_egress_files_attach (egress_trees);
        }
    }
  else
    {
      /* Orphans of the tree are reparented to us, then to sbx-init. */
      step = SBX_LINUX_STEP_SUBREAPER;
      r = sbx_raw_syscall5 (__NR_prctl, PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
  if (r < 0)
    {
      child_report (ctx, step, r, index);
      sbx_child_exit (127);
    }
  child_a_tail (ctx);
}

/* A warm sandbox (ctx->warm): A has built everything a spawn through the
 * zygote builds (its namespaces, the view, procfs, devpts, /dev/shm, the
 * pivot, the cgroup) and now waits for the one request it will ever serve.
 * It shares the supervisor's descriptor table (CLONE_FILES) while it waits,
 * so it holds nothing another spawn could wait on; the supervisor fills the
 * request into ctx (shared memory) and writes one byte to w_go_fd.  A says
 * 'r' on w_ack_fd once built (nothing it opened is left open: from then on
 * killing it leaves nothing in the shared table), then, given its request,
 * takes a private copy of the table (which now holds the request's stdio,
 * the error and exit pipes) and says 'u': from then on the supervisor may
 * close its own ends.  No request (the go pipe closed) or
 * the supervisor process gone: exit; the supervisor kills and reaps a warm
 * A it discards.  0, or -errno. */
SBX_CHILD_FUNC static long
child_warm_wait (ChildCtx *ctx)
{
  char byte = 0;
  long n;

  /* Ready: every descriptor the build opened is closed again, so from now
   * on the supervisor may kill this A without leaving anything in the
   * table it shares. */
  do
    n = sbx_raw_syscall3 (__NR_write, ctx->w_ack_fd, "r", 1);
  while (n == -EINTR);
  if (n != 1)
    return n < 0 ? n : -EIO;
  for (;;)
    {
      struct pollfd pfd[2];

      pfd[0].fd = ctx->w_go_fd;
      pfd[0].events = POLLIN;
      pfd[0].revents = 0;
      pfd[1].fd = ctx->z_sup_pidfd;
      pfd[1].events = POLLIN;
      pfd[1].revents = 0;
      n = sbx_raw_syscall5 (__NR_ppoll, pfd, 2, 0, 0, 8);
      if (n == -EINTR)
        continue;
      if (n < 0 || (pfd[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
          || (pfd[0].revents & POLLNVAL))
        sbx_child_exit (0);
      if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))
        break;
    }
  do
    n = sbx_raw_syscall3 (__NR_read, ctx->w_go_fd, &byte, 1);
  while (n == -EINTR);
  if (n != 1 || byte != 'g')
    sbx_child_exit (0);
  n = sbx_raw_syscall1 (__NR_unshare, CLONE_FILES);
  if (n < 0)
    return n;
  do
    n = sbx_raw_syscall3 (__NR_write, ctx->w_ack_fd, "u", 1);
  while (n == -EINTR);
  return n == 1 ? 0 : n < 0 ? n : -EIO;
}

/* The view of a warm A with its own FUSE root, built by a helper A clones
 * (CLONE_VM | CLONE_VFORK | CLONE_FS, on B's stack, which is unused until
 * B): the helper shares A's mount namespace, root and working directory,
 * so the pivot is A's too, but has a private copy of the descriptor table.
 * A shares the supervisor's table while it waits (child_warm_wait()), and
 * the full build (sbx_linux_child_mount_view) leaves its mounts' and the
 * device's descriptors open on its error paths: in the helper's table they
 * all close when it exits, on every path.  The helper is in the sandbox's
 * pid namespace, so the FUSE mount it makes numbers requests there; the
 * supervisor names A (its PID 1) to the server (sbx-linux-zygote.c), since
 * the helper that sent the device is gone by then.  The helper reports its
 * failing step itself and exits 127; A then exits 127 too. */
SBX_CHILD_FUNC static int
child_az_view_main (void *data)
{
  ChildCtx *ctx = data;
  int step = SBX_LINUX_STEP_ROOT;
  int index = -1;
  long r;

  r = sbx_linux_child_mount_view (ctx, &step, &index);
  if (r < 0)
    {
      child_report (ctx, step, r, index);
      sbx_child_exit (127);
    }
  sbx_child_exit (0);
}

/* A made by the zygote with its own FUSE root (ctx->view_sock): the whole
 * view, as a direct A builds it, on top of the zygote's template (which
 * the pivot detaches).  A warm A builds it through child_az_view_main(),
 * and exits here when the helper failed (it reported its step).  0 or
 * -errno. */
SBX_CHILD_FUNC static long
child_az_fuse_view (ChildCtx *ctx,
                    int      *step,
                    int      *index)
{
  long helper, r;
  int status = 0;

  if (!ctx->warm)
    return sbx_linux_child_mount_view (ctx, step, index);
  *step = SBX_LINUX_STEP_ROOT;
  *index = -1;
  helper = sbx_linux_raw_clone (CLONE_VM | CLONE_VFORK | CLONE_FS, ctx->stack_b_top, NULL,
                                child_az_view_main, ctx);
  if (helper < 0)
    return helper;
  do
    r = sbx_raw_syscall4 (__NR_wait4, helper, &status, __WALL, 0);
  while (r == -EINTR);
  if (r < 0)
    return r;
  if (status != 0)
    sbx_child_exit (127);
  return 0;
}

/* A, cloned by a zygote into fresh mount, pid and ipc namespaces (the user,
 * network and uts namespaces are the zygote's). */
SBX_CHILD_FUNC static int
child_az_main (void *data)
{
  ChildCtx *ctx = data;
  int step = SBX_LINUX_STEP_SIGNALS;
  int index = -1;
  long r;

  /* Into the sandbox's cgroup before anything else (sbx-linux-cgroup.c). */
  r = sbx_cgroup_child_join (ctx->cgroup_fds, ctx->n_cgroup_fds);
  if (r < 0)
    {
      child_report (ctx, SBX_LINUX_STEP_CGROUP, r, -1);
      sbx_child_exit (127);
    }
  r = ctx->view_sock >= 0 ? child_az_fuse_view (ctx, &step, &index)
      : sbx_linux_child_enter_template (ctx, &step, &index);
  if (r < 0)
    {
      child_report (ctx, step, r, index);
      sbx_child_exit (127);
    }
  if (ctx->warm)
    {
      r = child_warm_wait (ctx);
      if (r < 0)
        {
          child_report (ctx, SBX_LINUX_STEP_WARM, r, -1);
          sbx_child_exit (127);
        }
    }
  child_a_tail (ctx);
}

/* ------------------------------------------------------------------------- */
/* The zygote (rung 1, from the second spawn of a spec on)                     */
/* ------------------------------------------------------------------------- */

/* The zygote is a long-lived child made with CLONE_VM|CLONE_FILES in a new
 * user, network, mount and uts namespace.  It builds the mount view once
 * and then, per request, clones A with CLONE_PARENT into a copy of its mount
 * namespace and new pid and ipc namespaces: the user namespace, the network
 * namespace (the most expensive step) and the view are made once per spec.
 * It runs concurrently with the supervisor's threads, so like every child it
 * touches nothing but its stack, the immutable spec and the request it was
 * handed (raw system calls, no TLS: sbx_linux_raw_clone).  CLONE_FILES puts
 * the pidfd of each A in the supervisor's table.  It exits when its request
 * pipe closes (release) and when the supervisor process exits (it watches a
 * pidfd of the process: PR_SET_PDEATHSIG would fire when the *thread* that
 * made it exits, and a shared descriptor table never reports EOF).  Its A
 * children stay children of the supervisor process whichever thread made
 * the zygote (the kernel reparents them to a sibling thread). */
SBX_CHILD_FUNC int
sbx_linux_child_zygote_main (void *data)
{
  ChildCtx *zctx = data;
  const SbxLinuxSpec *spec = zctx->spec;
  int step = SBX_LINUX_STEP_SIGNALS;
  int index = -1;
  long r;

  sbx_child_reset_signals ();
  r = child_setup_ids (spec, &step);
  if (r >= 0)
    r = sbx_linux_child_mount_view (zctx, &step, &index);
  if (r < 0)
    {
      zctx->err_fd = zctx->z_resp_fd;
      child_report (zctx, step, r, index);
      sbx_child_exit (127);
    }
  while (sbx_raw_syscall3 (__NR_write, zctx->z_resp_fd, "R", 1) == -EINTR)
    ;

  for (;;)
    {
      ChildCtx *ctx = NULL;
      struct pollfd pfd[2];
      long n;

      pfd[0].fd = zctx->z_req_fd;
      pfd[0].events = POLLIN;
      pfd[0].revents = 0;
      pfd[1].fd = zctx->z_sup_pidfd;
      pfd[1].events = POLLIN;
      pfd[1].revents = 0;
      n = sbx_raw_syscall5 (__NR_ppoll, pfd, 2, 0, 0, 8);
      if (n == -EINTR)
        continue;
      if (n < 0 || (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
        sbx_child_exit (0);   /* the supervisor process is gone */
      do
        n = sbx_raw_syscall3 (__NR_read, zctx->z_req_fd, &ctx, sizeof ctx);
      while (n == -EINTR);
      if (n != (long) sizeof ctx)
        sbx_child_exit (0);
      ctx->z_pidfd = -1;
      /* A warm A is not waited for: it shares the supervisor's table (the
       * request's descriptors do not exist yet) and waits in
       * child_warm_wait(); every other A runs to its exec first. */
      ctx->zpid = sbx_linux_raw_clone ((ctx->warm ? CLONE_FILES : CLONE_VFORK)
                                       | CLONE_VM | CLONE_PARENT | CLONE_PIDFD
                                       | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | SIGCHLD,
                                       ctx->stack_a_top, &ctx->z_pidfd, child_az_main, ctx);
      while (sbx_raw_syscall3 (__NR_write, zctx->z_resp_fd, "x", 1) == -EINTR)
        ;
    }
}
