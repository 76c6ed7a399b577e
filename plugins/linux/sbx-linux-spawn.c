/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spawn path of the Linux backend.
 *
 *  supervisor thread                 A (rung 1: PID 1 of the new pid ns)      B (the target)
 *  ---------------------------------------------------------------------------------------------
 *  block signals, pipes
 *  clone(CLONE_VM|CLONE_VFORK [+ns]) -> reset handlers
 *     (suspended)                       rung 1: own id maps, mount view,
 *                                       hostname, lo, pivot_root
 *                                       rung 2: PR_SET_CHILD_SUBREAPER
 *                                       clone(CLONE_VM|CLONE_VFORK) ---------> setsid, stdio, close fds,
 *                                          (suspended)                          chdir, rlimits, Landlock,
 *                                                                               caps dropped, no_new_privs,
 *                                                                               PDEATHSIG, seccomp, execve
 *                                       caps dropped, execveat(sbx-init) <----
 *  <- resumed: read the error pipe
 *     EOF: both exec'd -> OK
 *     a record: step/errno/index -> reap A, report
 *
 * Why CLONE_VM|CLONE_VFORK: no copy of the supervisor's page tables (GLib
 * programs can be large), and the supervisor cannot observe a half-built
 * child.  Like posix_spawn: the child runs only SBX_CHILD_FUNC code with raw
 * system calls on its own stack, with every signal blocked and every handler
 * reset before anything else.  No re-exec of the host program: the caller is
 * arbitrary C.
 *
 * Why A execs sbx-init: A is a copy of the supervisor (memory, environment,
 * descriptors); after the target is running A replaces itself with the tiny
 * embedded init, which holds only the exit-record pipe.  The target's signal
 * death reaches the supervisor through that record (PID 1 cannot easily die
 * by a signal), read in finish().
 *
 * The error channel is a CLOEXEC pipe carrying one fixed SbxLinuxSetupError
 * (step, errno, index of the failing mount op or device).  Its write end is
 * held by A and B only and closes on their execs, so EOF means success.
 *
 * The zygote's lifecycle is in sbx-linux-zygote.c, the request check and
 * the setup-error messages in sbx-linux-spawn-error.c, the child side in
 * sbx-linux-child*.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/securebits.h>

#include "sbx-linux-private.h"
#include "sbx-linux-child.h"
#include "sbx-linux-egress.h"
#include "sbx-linux-unotify.h"
#include "init/sbx-init-proto.h"

#include "sbx-linux-child-private.h"

#define STACK_SIZE SBX_LINUX_STACK_SIZE
#define GUARD_SIZE SBX_LINUX_GUARD_SIZE

/* ------------------------------------------------------------------------- */
/* Parent side                                                                */
/* ------------------------------------------------------------------------- */

struct _SbxLinuxChild
{
  int        rung;
  pid_t      pid;
  int        pidfd;      /* our own reference; the host owns the one it was given */
  int        exit_fd;    /* read end of the exit-record pipe */
  SbxCgroup *cgroup;     /* the sandbox's own cgroup, or NULL */
  SbxUnotify *unotify;   /* the connect supervisor, or NULL */
};

/* Ensures @fd >= 3 (a caller may run with stdio closed) and CLOEXEC. */
int
sbx_linux_fd_above_stdio (int fd)
{
  int moved;

  if (fd < 0 || fd > 2)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  close (fd);
  return moved;
}

char *
sbx_linux_stacks_new (void)
{
  char *mem = mmap (NULL, 2 * (STACK_SIZE + GUARD_SIZE), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

  if (mem == MAP_FAILED)
    return NULL;
  /* A guard page below each stack. */
  mprotect (mem, GUARD_SIZE, PROT_NONE);
  mprotect (mem + STACK_SIZE + GUARD_SIZE, GUARD_SIZE, PROT_NONE);
  return mem;
}

void
sbx_linux_stacks_free (char *mem)
{
  if (mem != NULL)
    munmap (mem, 2 * (STACK_SIZE + GUARD_SIZE));
}

pid_t
sbx_linux_clone_vfork (int   (*fn) (void *),
                       void   *arg,
                       int     flags,
                       int    *pidfd_out)
{
  char *stacks = sbx_linux_stacks_new ();
  sigset_t all, old;
  int saved_errno;
  pid_t pid;

  if (stacks == NULL)
    return -errno;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  saved_errno = errno;
  pid = clone (fn, stacks + GUARD_SIZE + STACK_SIZE, flags | CLONE_VM | CLONE_VFORK | SIGCHLD, arg,
               pidfd_out);
  if (pid < 0)
    pid = -errno;
  errno = saved_errno;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  sbx_linux_stacks_free (stacks);
  return pid;
}

static const char *
find_path_env (const char *const *envp)
{
  for (; *envp != NULL; envp++)
    if (strncmp (*envp, "PATH=", 5) == 0)
      return *envp + 5;
  return NULL;
}

/* The master B sent over @sock (SCM_RIGHTS), checked to be a pseudo-
 * terminal master: exactly one descriptor, close-on-exec.  -1 with errno
 * set when none arrived (B sends before it execs, so it is there by now). */
static int
receive_pty_master (int sock)
{
  union
  {
    struct cmsghdr hdr;
    char           buf[CMSG_SPACE (2 * sizeof (int))];
  } control;
  struct msghdr msg = { 0 };
  struct iovec iov;
  struct cmsghdr *cmsg;
  struct stat st;
  unsigned int ptn;
  char byte;
  int fds[2] = { -1, -1 };
  int n_fds = 0;
  ssize_t n;

  memset (&control, 0, sizeof control);
  iov.iov_base = &byte;
  iov.iov_len = 1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  do
    n = recvmsg (sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  for (cmsg = CMSG_FIRSTHDR (&msg); cmsg != NULL; cmsg = CMSG_NXTHDR (&msg, cmsg))
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS)
      {
        size_t len = (cmsg->cmsg_len - CMSG_LEN (0)) / sizeof (int);

        for (size_t k = 0; k < len && n_fds < 2; k++)
          memcpy (&fds[n_fds++], CMSG_DATA (cmsg) + k * sizeof (int), sizeof (int));
      }
  if (n != 1 || n_fds != 1 || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))
      || fstat (fds[0], &st) != 0 || !S_ISCHR (st.st_mode) || ioctl (fds[0], TIOCGPTN, &ptn) != 0)
    {
      for (int k = 0; k < n_fds; k++)
        close (fds[k]);
      errno = EPROTO;
      return -1;
    }
  return sbx_linux_fd_above_stdio (fds[0]);
}

/* @envp with RES_OPTIONS=use-vc (added to an existing RES_OPTIONS). */
static GPtrArray *
envp_with_dns_over_tcp (const char *const *envp)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  gboolean seen = FALSE;

  for (; *envp != NULL; envp++)
    {
      if (!seen && strncmp (*envp, "RES_OPTIONS=", 12) == 0)
        {
          seen = TRUE;
          g_ptr_array_add (out, g_strconcat (*envp, " use-vc", NULL));
        }
      else
        g_ptr_array_add (out, g_strdup (*envp));
    }
  if (!seen)
    g_ptr_array_add (out, g_strdup ("RES_OPTIONS=use-vc"));
  g_ptr_array_add (out, NULL);
  return out;
}

/* The request's part of @ctx: what the target runs, with which stdio; the
 * same for a fresh A and a warm one. */
static void
set_request (ChildCtx                *ctx,
             const SbxLinuxSpec      *spec,
             const SbxSpawnRequestV1 *request,
             GPtrArray               *dns_envp,
             int                      pty_sock,
             int                      unotify_sock)
{
  ctx->unotify_sock = unotify_sock;
  /* Not ctx->spec: a warm A reads it while it builds (it was set when the
   * warm context was made, to the same spec). */
  ctx->cwd = request->cwd;
  ctx->argv = (char *const *) request->argv;
  ctx->envp = dns_envp != NULL ? (char *const *) dns_envp->pdata : (char *const *) request->envp;
  ctx->path_env = find_path_env (request->envp);
  if (ctx->path_env == NULL)
    ctx->path_env = SBX_SPAWN_DEFAULT_PATH;   /* the ABI's search list without PATH */
  ctx->stdio[0] = request->stdin_fd;
  ctx->stdio[1] = request->stdout_fd;
  ctx->stdio[2] = request->stderr_fd;
  /* The filter of this spawn: the caller's terminal shared, the
   * terminal-setting requests refused (sbx_linux_spawn_shares_terminal()) */
  ctx->seccomp = spec->seccomp_terminal != NULL && sbx_linux_spawn_shares_terminal (request)
                 ? spec->seccomp_terminal : spec->seccomp;
  ctx->pty = (request->flags & SBX_SPAWN_PTY) != 0;
  ctx->pty_sock = -1;
  /* The signals the target starts with ignored; sbx-init gets them as its
   * fourth argument and ignores them too (it never forwards one the
   * command ignores).  init_argv[0..3] are set before this call. */
  ctx->ignored_signals = (request->flags & SBX_SPAWN_IGNORED_SIGNALS) != 0 ? request->ignored_signals : 0;
  if (ctx->ignored_signals != 0)
    {
      g_snprintf (ctx->init_ignored_buf, sizeof ctx->init_ignored_buf, "%" G_GUINT64_FORMAT,
                  (guint64) ctx->ignored_signals);
      ctx->init_argv[4] = ctx->init_ignored_buf;
    }
  else
    ctx->init_argv[4] = NULL;
  ctx->init_argv[5] = NULL;
  if (request->flags & SBX_SPAWN_PTY_SANDBOX)
    {
      ctx->pty_sandbox = 1;
      ctx->pty_sock = pty_sock;
      ctx->pty_rows = (unsigned short) request->pty_rows;
      ctx->pty_cols = (unsigned short) request->pty_cols;
    }
}

int32_t
sbx_linux_spawn (SbxLinuxSpec            *spec,
                 const SbxSpawnRequestV1 *request,
                 SbxSpawnResultV1        *result,
                 char                   **error_message)
{
  const SbxLinuxProbe *probe = spec->probe;
  g_autoptr(GPtrArray) dns_envp = NULL;
  g_autofree SbxLinuxEgressListen *egress_listens = NULL;
  g_autofree ChildCtx *ctx = NULL;
  g_autofree int *tmpfs_fds = NULL;
  g_autoptr(SbxCgroup) cgroup = NULL;   /* destroyed on every failure path */
  int err_pipe[2] = { -1, -1 };
  int exit_pipe[2] = { -1, -1 };
  int egress_chan[2] = { -1, -1 };   /* egress: A sends the proxy listener here */
  int pty_pair[2] = { -1, -1 };
  int unotify_pair[2] = { -1, -1 };   /* B sends the seccomp listener here */
  SbxUnotify *unotify = NULL;
  const SbxSeccompProgram *supervised;
  int pty_master = -1;
  SbxLinuxSetupError rec;
  char *stacks = NULL;
  char *warm_stacks = NULL;   /* a warm A's: in use until both execs */
  g_autoptr(SbxLinuxWarm) warm = NULL;
  g_autofree const SbxLinuxStageMount **stage = NULL;
  sigset_t all, old;
  int flags, pidfd = -1, own_pidfd, n_slots, saved_errno, i, proxy_listen_fd = -1;
  pid_t pid;
  ssize_t n;
  SbxLinuxChild *child;

  if (!sbx_linux_spawn_request_is_valid (request, error_message))
    return SBX_STATUS_INVALID;
  if ((request->flags & SBX_SPAWN_PTY_SANDBOX) && result->struct_size < SBX_SPAWN_RESULT_V1_PTY_SIZE)
    {
      *error_message = g_strdup ("spawn result: too small to carry the sandbox terminal's master");
      return SBX_STATUS_INVALID;
    }
  if ((request->flags & SBX_SPAWN_IGNORED_SIGNALS) && result->struct_size < SBX_SPAWN_RESULT_V1_FLAGS_SIZE)
    {
      *error_message = g_strdup ("spawn result: too small to confirm the ignored signals");
      return SBX_STATUS_INVALID;
    }
  if (probe->init_fd < 0)
    {
      *error_message = g_strdup ("linux: the sandbox init program cannot be executed on this host");
      return SBX_STATUS_UNAVAILABLE;
    }
  /* Staged (sbx-linux-stage.c): overlays replace the listed binds in this
   * sandbox only, so it is built fresh (no zygote, no warm sandbox). */
  if (request->flags & SBX_SPAWN_STAGED)
    {
      int32_t stage_status;

      stage = sbx_linux_stage_plan (spec, request, &stage_status, error_message);
      if (stage == NULL)
        return stage_status;
    }

  if (spec->dns_over_tcp)
    {
      /* A ports network has no UDP: glibc's resolver must use TCP.  The
       * copy lives until the child has exec'd (this function's end). */
      dns_envp = envp_with_dns_over_tcp (request->envp);
    }
  if (request->flags & SBX_SPAWN_PTY_SANDBOX)
    {
      /* B sends the master of the terminal it opens inside over this pair;
       * our end is read once spawn has succeeded. */
      if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pty_pair) != 0)
        {
          saved_errno = errno;
          *error_message = g_strdup_printf ("linux: socketpair for the sandbox terminal: %s",
                                            g_strerror (saved_errno));
          return SBX_STATUS_FAILED;
        }
      for (i = 0; i < 2; i++)
        pty_pair[i] = sbx_linux_fd_above_stdio (pty_pair[i]);
      if (pty_pair[0] < 0 || pty_pair[1] < 0)
        {
          saved_errno = errno;
          *error_message = g_strdup_printf ("linux: fcntl(F_DUPFD_CLOEXEC): %s", g_strerror (saved_errno));
          goto fail_fds;
        }
    }

  /* The filter B will load (set_request() picks it the same way) hands
   * connect() to the supervisor: B sends its listener over this pair. */
  supervised = spec->seccomp_terminal != NULL && sbx_linux_spawn_shares_terminal (request)
               ? spec->seccomp_terminal : spec->seccomp;
  if (supervised != NULL && (sbx_seccomp_program_enforces (supervised) & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED))
    {
      if (!sbx_unotify_channel_open (unotify_pair, error_message))
        {
          for (i = 0; i < 2; i++)
            if (pty_pair[i] >= 0)
              close (pty_pair[i]);
          return SBX_STATUS_FAILED;
        }
    }

  /* Rung 1 with a running zygote: the sandbox prepared ahead of need takes
   * this request (sbx-linux-zygote.c).  One that died is discarded and the
   * spawn goes the ordinary way. */
  if (spec->rung == SBX_LINUX_RUNG_USERNS && spec->proxy_port == 0 && stage == NULL)
    warm = sbx_linux_zygote_take_warm (spec);
  if (warm != NULL)
    {
      set_request (warm->ctx, spec, request, dns_envp, pty_pair[1], unotify_pair[1]);
      if (sbx_linux_warm_start (warm))
        {
          ctx = g_steal_pointer (&warm->ctx);
          tmpfs_fds = g_steal_pointer (&warm->tmpfs_fds);
          cgroup = g_steal_pointer (&warm->cgroup);
          warm_stacks = g_steal_pointer (&warm->stacks);
          for (i = 0; i < 2; i++)
            {
              err_pipe[i] = warm->err_pipe[i];
              exit_pipe[i] = warm->exit_pipe[i];
              warm->err_pipe[i] = warm->exit_pipe[i] = -1;
            }
          pid = warm->pid;
          pidfd = warm->pidfd;
          warm->pid = -1;
          warm->pidfd = -1;
          g_clear_pointer (&warm, sbx_linux_warm_free);
          goto started;
        }
      g_clear_pointer (&warm, sbx_linux_warm_free);
    }

  ctx = g_new0 (ChildCtx, 1);
  ctx->spec = spec;
  ctx->egress_fd = -1;
  ctx->stage = stage;
  n_slots = (spec->mounts != NULL ? spec->mounts->n_tmpfs_slots : 0) + 2;
  tmpfs_fds = g_new (int, n_slots);
  for (i = 0; i < n_slots; i++)
    tmpfs_fds[i] = -1;
  ctx->tmpfs_fds = tmpfs_fds;
  if (spec->mounts != NULL)
    for (gsize k = 0; k < spec->mounts->n_ops; k++)
      if (spec->mounts->ops[k].kind == SBX_MOUNT_OP_MASK_FILE)
        ctx->needs_empty = 1;
  if (spec->mask_proc)
    ctx->needs_empty = 1;   /* the /proc masks use the empty file too */
  if (spec->cgroup_base != NULL)
    {
      g_autoptr(GError) cg_error = NULL;

      /* The spec claims these limits: no cgroup, no spawn. */
      cgroup = sbx_cgroup_new (spec->cgroup_base, spec->cgroup_max_pids, spec->cgroup_max_memory,
                               &cg_error);
      if (cgroup == NULL)
        {
          *error_message = g_strdup_printf ("%s: the sandbox's cgroup: %s",
                                            spec->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS
                                                                                : SBX_LINUX_BACKEND_LANDLOCK,
                                            cg_error->message);
          goto fail_fds;
        }
      ctx->n_cgroup_fds = sbx_cgroup_join_fds (cgroup, ctx->cgroup_fds);
    }

  stacks = sbx_linux_stacks_new ();
  if (stacks == NULL)
    {
      saved_errno = errno;
      *error_message = g_strdup_printf ("linux: mmap of the child stacks: %s", g_strerror (saved_errno));
      for (i = 0; i < 2; i++)
        {
          if (pty_pair[i] >= 0)
            close (pty_pair[i]);
          if (unotify_pair[i] >= 0)
            close (unotify_pair[i]);
        }
      return SBX_STATUS_NO_MEMORY;
    }
  ctx->stack_a_top = stacks + GUARD_SIZE + STACK_SIZE;
  ctx->stack_b_top = stacks + 2 * (GUARD_SIZE + STACK_SIZE);

  if (pipe2 (err_pipe, O_CLOEXEC) != 0 || pipe2 (exit_pipe, O_CLOEXEC) != 0)
    {
      saved_errno = errno;
      *error_message = g_strdup_printf ("linux: pipe2: %s", g_strerror (saved_errno));
      goto fail_fds;
    }
  for (i = 0; i < 2; i++)
    {
      err_pipe[i] = sbx_linux_fd_above_stdio (err_pipe[i]);
      exit_pipe[i] = sbx_linux_fd_above_stdio (exit_pipe[i]);
    }
  if (err_pipe[0] < 0 || err_pipe[1] < 0 || exit_pipe[0] < 0 || exit_pipe[1] < 0)
    {
      saved_errno = errno;
      *error_message = g_strdup_printf ("linux: fcntl(F_DUPFD_CLOEXEC): %s", g_strerror (saved_errno));
      goto fail_fds;
    }
  ctx->err_fd = err_pipe[1];
  ctx->exit_fd = exit_pipe[1];
  if (spec->proxy_port != 0)
    {
      /* Egress: a proxy spec never goes through a zygote (sbx-linux-spec.c). */
      if (!sbx_linux_egress_channel_open (egress_chan, error_message))
        goto fail_fds;
      ctx->egress_fd = egress_chan[1];
      egress_listens = sbx_linux_egress_listens_copy (request, &ctx->n_egress_listens, error_message);
      if (ctx->n_egress_listens < 0)
        goto fail_fds;
      ctx->egress_listens = egress_listens;
    }
  ctx->init_argv[0] = "sbx-init";
  ctx->init_argv[1] = spec->rung == SBX_LINUX_RUNG_USERNS ? "1" : "2";
  ctx->init_argv[2] = NULL;   /* B's pid, filled in by A */
  sbx_child_format_long (ctx->init_fd_buf, ctx->exit_fd);
  ctx->init_argv[3] = ctx->init_fd_buf;
  ctx->init_envp[0] = NULL;
  set_request (ctx, spec, request, dns_envp, pty_pair[1], unotify_pair[1]);

  flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD;
  if (spec->rung == SBX_LINUX_RUNG_USERNS)
    {
      flags |= CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
      if (spec->netns)
        flags |= CLONE_NEWNET;
    }

  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  saved_errno = errno;
  switch (spec->rung == SBX_LINUX_RUNG_USERNS && stage == NULL ? sbx_linux_zygote_spawn (spec, ctx)
          : SBX_LINUX_ZYGOTE_SPAWN_DIRECT)
    {
    case SBX_LINUX_ZYGOTE_SPAWN_DONE:
      pid = (pid_t) ctx->zpid;
      pidfd = ctx->z_pidfd;
      if (pid < 0)
        errno = (int) -ctx->zpid;
      break;
    case SBX_LINUX_ZYGOTE_SPAWN_LOST:
      pid = -1;
      errno = ECHILD;
      break;
    case SBX_LINUX_ZYGOTE_SPAWN_DIRECT:
    default:
      pid = clone (sbx_linux_child_a_main, stacks + GUARD_SIZE + STACK_SIZE, flags, ctx, &pidfd);
      break;
    }
  if (pid < 0)
    {
      int clone_errno = errno;

      errno = saved_errno;
      pthread_sigmask (SIG_SETMASK, &old, NULL);
      *error_message = g_strdup_printf ("%s: clone: %s.%s",
                                        spec->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS
                                                                            : SBX_LINUX_BACKEND_LANDLOCK,
                                        g_strerror (clone_errno),
                                        clone_errno == ENOSPC
                                        ? " Hint: the user or pid namespace limit is reached "
                                          "(sysctl user.max_user_namespaces, user.max_pid_namespaces)."
                                        : clone_errno == EPERM || clone_errno == EACCES
                                        ? " Hint: unprivileged user namespaces are disabled "
                                          "(sysctl kernel.unprivileged_userns_clone=1)."
                                        : "");
      goto fail_fds;
    }
  errno = saved_errno;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  sbx_linux_stacks_free (g_steal_pointer (&stacks));

started:
  /* A has exec'd sbx-init or exited (a warm A: holds its own copies of the
   * pipes now): read the verdict. */
  close (err_pipe[1]);
  err_pipe[1] = -1;
  close (exit_pipe[1]);
  exit_pipe[1] = -1;
  if (egress_chan[1] >= 0)
    close (egress_chan[1]);
  egress_chan[1] = -1;
  if (pty_pair[1] >= 0)
    {
      close (pty_pair[1]);
      pty_pair[1] = -1;
    }
  if (unotify_pair[1] >= 0)
    {
      close (unotify_pair[1]);
      unotify_pair[1] = -1;
    }
  do
    n = read (err_pipe[0], &rec, sizeof rec);
  while (n < 0 && errno == EINTR);
  saved_errno = errno;
  close (err_pipe[0]);
  err_pipe[0] = -1;
  /* EOF or a record: A and B are past their last use of the stacks. */
  sbx_linux_stacks_free (g_steal_pointer (&warm_stacks));

  if (n != 0)
    {
      int32_t status = SBX_STATUS_FAILED;
      int wstatus;

      if (n == (ssize_t) sizeof rec && rec.magic == SBX_LINUX_SETUP_ERROR_MAGIC)
        {
          *error_message = sbx_linux_spawn_describe_failure (spec, request, &rec);
          status = sbx_linux_spawn_failure_status (&rec);
        }
      else if (n < 0)
        *error_message = g_strdup_printf ("linux: reading the setup error channel: %s",
                                          g_strerror (saved_errno));
      else
        *error_message = g_strdup ("linux: malformed record on the setup error channel");
      /* Nothing may be left behind: A exits (at rung 1 its namespace dies
       * with it; at rung 2 B has exited or was killed). */
      if (pidfd >= 0)
        syscall (__NR_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
      while (waitpid (pid, &wstatus, __WALL) < 0 && errno == EINTR)
        ;
      if (pidfd >= 0)
        close (pidfd);
      close (exit_pipe[0]);
      if (egress_chan[0] >= 0)
        close (egress_chan[0]);
      if (pty_pair[0] >= 0)
        close (pty_pair[0]);   /* drops a master B may have sent */
      if (unotify_pair[0] >= 0)
        close (unotify_pair[0]);   /* and a listener */
      /* Failed or not, the next sandbox of the spec is prepared: whether
       * one waits does not depend on how the last spawn went. */
      if (spec->rung == SBX_LINUX_RUNG_USERNS && spec->proxy_port == 0)
        sbx_linux_zygote_prepare_warm (spec);
      return status;
    }

  if (egress_chan[0] >= 0)
    {
      int wstatus;

      /* A sent its listener before it exec'd: it is there now or never. */
      proxy_listen_fd = sbx_linux_egress_channel_receive (egress_chan[0], error_message);
      if (proxy_listen_fd >= 0 &&
          !sbx_linux_egress_channel_receive_listens (egress_chan[0], request, ctx->n_egress_listens, error_message))
        {
          close (proxy_listen_fd);
          proxy_listen_fd = -1;
        }
      close (egress_chan[0]);
      egress_chan[0] = -1;
      if (proxy_listen_fd < 0)
        {
          if (pidfd >= 0)
            syscall (__NR_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
          while (waitpid (pid, &wstatus, __WALL) < 0 && errno == EINTR)
            ;
          if (pidfd >= 0)
            close (pidfd);
          close (exit_pipe[0]);
          if (pty_pair[0] >= 0)
            close (pty_pair[0]);
          if (unotify_pair[0] >= 0)
            close (unotify_pair[0]);
          return SBX_STATUS_FAILED;
        }
    }

  if (unotify_pair[0] >= 0)
    {
      /* B sent the listener before it exec'd: it is there now or never.
       * Without its supervisor the target would run with every connect
       * unanswered: the spawn fails. */
      unotify = sbx_linux_unotify_begin (spec, unotify_pair[0], pid, error_message);
      close (unotify_pair[0]);
      unotify_pair[0] = -1;
      /* NULL without a message: B's filter got no listener (sbx inside
       * sbx) and the kernel refuses what it would have handed over. */
      if (unotify == NULL && *error_message != NULL)
        {
          int wstatus;

          if (pidfd >= 0)
            syscall (__NR_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
          while (waitpid (pid, &wstatus, __WALL) < 0 && errno == EINTR)
            ;
          if (pidfd >= 0)
            close (pidfd);
          close (exit_pipe[0]);
          if (pty_pair[0] >= 0)
            close (pty_pair[0]);
          if (proxy_listen_fd >= 0)
            close (proxy_listen_fd);
          return SBX_STATUS_FAILED;
        }
    }

  if (pty_pair[0] >= 0)
    {
      pty_master = receive_pty_master (pty_pair[0]);
      saved_errno = errno;
      close (pty_pair[0]);
      pty_pair[0] = -1;
    }

  own_pidfd = pidfd >= 0 ? fcntl (pidfd, F_DUPFD_CLOEXEC, 3) : -1;
  fcntl (exit_pipe[0], F_SETFL, O_NONBLOCK);
  child = g_new0 (SbxLinuxChild, 1);
  child->rung = spec->rung;
  child->pid = pid;
  child->pidfd = own_pidfd;
  child->exit_fd = exit_pipe[0];
  child->unotify = unotify;
  if (cgroup != NULL)
    sbx_cgroup_close_procs (cgroup);
  child->cgroup = g_steal_pointer (&cgroup);

  if ((request->flags & SBX_SPAWN_PTY_SANDBOX) && pty_master < 0)
    {
      SbxExitV1 ignored = { .struct_size = sizeof ignored };
      g_autofree char *finish_message = NULL;
      int wstatus = W_EXITCODE (0, SIGKILL);

      /* The target runs without the terminal it was promised: tear the
       * tree down as finish() does and fail the spawn. */
      sbx_linux_signal (child, SIGKILL);
      while (waitpid (pid, &wstatus, __WALL) < 0 && errno == EINTR)
        ;
      if (pidfd >= 0)
        close (pidfd);
      if (proxy_listen_fd >= 0)
        close (proxy_listen_fd);
      sbx_linux_egress_close_listens (request);
      sbx_linux_finish (child, wstatus, &ignored, &finish_message);
      *error_message = g_strdup_printf ("%s: the sandbox terminal's master did not arrive (%s)%s%s",
                                        spec->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS
                                                                            : SBX_LINUX_BACKEND_LANDLOCK,
                                        g_strerror (saved_errno),
                                        finish_message != NULL ? "; " : "",
                                        finish_message != NULL ? finish_message : "");
      return SBX_STATUS_FAILED;
    }

  result->containment = spec->containment;
  result->pid = pid;
  result->pidfd = pidfd;
  result->proxy_listen_fd = proxy_listen_fd;
  result->child = child;
  if (request->flags & SBX_SPAWN_PTY_SANDBOX)
    result->pty_master_fd = pty_master;
  if (request->flags & SBX_SPAWN_IGNORED_SIGNALS)
    result->honoured_flags |= SBX_SPAWN_IGNORED_SIGNALS;
  if (stage != NULL && result->struct_size >= SBX_SPAWN_RESULT_V1_FLAGS_SIZE)
    result->honoured_flags |= SBX_SPAWN_STAGED;
  /* The next sandbox of this spec, prepared now that the target runs (off
   * the path from the call to its exec). */
  if (spec->rung == SBX_LINUX_RUNG_USERNS && spec->proxy_port == 0)
    sbx_linux_zygote_prepare_warm (spec);
  return SBX_STATUS_OK;

fail_fds:
  for (i = 0; i < 2; i++)
    {
      if (egress_chan[i] >= 0)
        close (egress_chan[i]);
      if (err_pipe[i] >= 0)
        close (err_pipe[i]);
      if (exit_pipe[i] >= 0)
        close (exit_pipe[i]);
      if (pty_pair[i] >= 0)
        close (pty_pair[i]);
      if (unotify_pair[i] >= 0)
        close (unotify_pair[i]);
    }
  sbx_linux_stacks_free (stacks);
  return SBX_STATUS_FAILED;
}

static int
pidfd_signal (SbxLinuxChild *child,
              int            signo)
{
  if (child->pidfd >= 0)
    return (int) syscall (__NR_pidfd_send_signal, child->pidfd, signo, NULL, 0);
  return kill (child->pid, signo);
}

int32_t
sbx_linux_signal (SbxLinuxChild *child,
                  int            signo)
{
  int sent;

  if (child == NULL || signo <= 0 || signo >= 64)
    return SBX_STATUS_INVALID;
  if (signo == SIGKILL)
    {
      /* Rung 1: init's death kills the namespace.  Rung 2: init kills and
       * reaps the tree itself (killing init would orphan it). */
      sent = pidfd_signal (child, child->rung == SBX_LINUX_RUNG_USERNS ? SIGKILL
                                                                       : SBX_INIT_SIGNAL_KILL_TREE);
    }
  else if (SBX_INIT_FORWARDED_SIGNALS & (UINT64_C (1) << signo))
    sent = pidfd_signal (child, signo);
  else
    return SBX_STATUS_UNSUPPORTED;
  if (sent < 0 && errno != ESRCH)
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

int32_t
sbx_linux_finish (SbxLinuxChild *child,
                  int            wait_status,
                  SbxExitV1     *out,
                  char         **error_message)
{
  SbxInitExitRecord rec;
  int32_t status = SBX_STATUS_OK;
  gboolean have_record;
  ssize_t n;

  do
    n = read (child->exit_fd, &rec, sizeof rec);
  while (n < 0 && errno == EINTR);
  have_record = n == (ssize_t) sizeof rec && rec.magic == SBX_INIT_EXIT_MAGIC;

  out->struct_size = sizeof *out;
  if (have_record && rec.kind == SBX_INIT_KIND_SIGNALED)
    {
      out->kind = SBX_EXIT_SIGNALED;
      out->code = 0;
      out->signo = rec.signo;
    }
  else if (have_record)
    {
      out->kind = SBX_EXIT_EXITED;
      out->code = rec.code;
      out->signo = 0;
    }
  else if (WIFSIGNALED (wait_status))
    {
      /* Init itself was killed (rung 1: SIGKILL from signal(); the kernel
       * killed the whole namespace with it, the target included). */
      out->kind = SBX_EXIT_SIGNALED;
      out->code = 0;
      out->signo = WTERMSIG (wait_status);
    }
  else
    {
      out->kind = SBX_EXIT_EXITED;
      out->code = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 255;
      out->signo = 0;
      status = SBX_STATUS_FAILED;
      *error_message = g_strdup_printf ("linux: sbx-init ended without an exit record (wait status 0x%x)",
                                        (unsigned) wait_status);
    }

  /* The tree proof.  Rung 1: init has been reaped, and a pid namespace's
   * init is reaped only after every other process of the namespace is gone
   * (the kernel kills and waits for them), so the tree is empty.  Rung 2:
   * init writes TREE_EMPTY only once it has no child left after killing
   * every descendant (all orphans were reparented to it). */
  if (child->rung == SBX_LINUX_RUNG_LANDLOCK
      && !(have_record && (rec.flags & SBX_INIT_FLAG_TREE_EMPTY)))
    {
      status = SBX_STATUS_FAILED;
      g_free (*error_message);
      *error_message = g_strdup_printf ("linux-landlock: the process tree could not be proven empty: "
                                        "sbx-init ended without its proof (wait status 0x%x); "
                                        "descendants may have been reparented outside the sandbox",
                                        (unsigned) wait_status);
    }

  /* Whatever the rung, the cgroup holds every process the sandbox ever
   * started: kill what is left, prove it empty, remove it. */
  if (child->cgroup != NULL)
    {
      g_autoptr(GError) cg_error = NULL;

      if (!sbx_cgroup_destroy (child->cgroup, &cg_error))
        {
          status = SBX_STATUS_FAILED;
          g_free (*error_message);
          *error_message = g_strdup_printf ("linux: %s", cg_error->message);
        }
      sbx_cgroup_free (child->cgroup);
    }
  sbx_unotify_stop (child->unotify);
  if (child->pidfd >= 0)
    close (child->pidfd);
  close (child->exit_fd);
  g_free (child);
  return status;
}
