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
#include "init/sbx-init-proto.h"

#define STACK_SIZE (256 * 1024)
#define GUARD_SIZE (4096)


#include "sbx-linux-child-private.h"


static const char *const step_names[SBX_LINUX_STEP_LAST] = {
  [SBX_LINUX_STEP_NONE] = "none",
  [SBX_LINUX_STEP_SIGNALS] = "signals",
  [SBX_LINUX_STEP_SETGROUPS] = "setgroups",
  [SBX_LINUX_STEP_UID_MAP] = "uid-map",
  [SBX_LINUX_STEP_GID_MAP] = "gid-map",
  [SBX_LINUX_STEP_MOUNT_SLAVE] = "mount-slave",
  [SBX_LINUX_STEP_HOSTNAME] = "hostname",
  [SBX_LINUX_STEP_LOOPBACK] = "loopback",
  [SBX_LINUX_STEP_ROOT] = "root",
  [SBX_LINUX_STEP_MKDIR] = "mkdir",
  [SBX_LINUX_STEP_MKFILE] = "mkfile",
  [SBX_LINUX_STEP_SYMLINK] = "symlink",
  [SBX_LINUX_STEP_BIND_SOURCE] = "bind-source",
  [SBX_LINUX_STEP_BIND_TARGET] = "bind-target",
  [SBX_LINUX_STEP_BIND] = "bind",
  [SBX_LINUX_STEP_TMPFS] = "tmpfs",
  [SBX_LINUX_STEP_MASK] = "mask",
  [SBX_LINUX_STEP_DEV] = "dev",
  [SBX_LINUX_STEP_DEVPTS] = "devpts",
  [SBX_LINUX_STEP_SHM] = "shm",
  [SBX_LINUX_STEP_PROC] = "proc",
  [SBX_LINUX_STEP_READONLY] = "read-only",
  [SBX_LINUX_STEP_PIVOT_ROOT] = "pivot-root",
  [SBX_LINUX_STEP_SUBREAPER] = "subreaper",
  [SBX_LINUX_STEP_CLONE_TARGET] = "clone-target",
  [SBX_LINUX_STEP_SETSID] = "setsid",
  [SBX_LINUX_STEP_STDIO] = "stdio",
  [SBX_LINUX_STEP_CONTROLLING_TTY] = "controlling-tty",
  [SBX_LINUX_STEP_PTY] = "sandbox-terminal",
  [SBX_LINUX_STEP_CLOSE_FDS] = "close-fds",
  [SBX_LINUX_STEP_CHDIR] = "chdir",
  [SBX_LINUX_STEP_RLIMIT] = "rlimit",
  [SBX_LINUX_STEP_PDEATHSIG] = "parent-death-signal",
  [SBX_LINUX_STEP_LANDLOCK] = "landlock",
  [SBX_LINUX_STEP_CAPABILITIES] = "capabilities",
  [SBX_LINUX_STEP_NO_NEW_PRIVS] = "no-new-privs",
  [SBX_LINUX_STEP_SECCOMP] = "seccomp",
  [SBX_LINUX_STEP_EXEC] = "exec",
  [SBX_LINUX_STEP_INIT_PREPARE] = "init-prepare",
  [SBX_LINUX_STEP_EXEC_INIT] = "exec-init",
  [SBX_LINUX_STEP_CGROUP] = "cgroup",
  [SBX_LINUX_STEP_EGRESS_LISTEN] = "egress-listen",
};

const char *
sbx_linux_step_name (int step)
{
  if (step < 0 || step >= SBX_LINUX_STEP_LAST || step_names[step] == NULL)
    return "unknown";
  return step_names[step];
}


/* ------------------------------------------------------------------------- */
/* The zygote (rung 1, from the second spawn of a spec on)                     */
/* ------------------------------------------------------------------------- */

/* The zygote itself (sbx_linux_child_zygote_main) is child code: sbx-linux-child.c. */
struct _SbxLinuxZygote
{
  GMutex    lock;
  int       state;        /* ZYGOTE_* */
  pid_t     pid;
  int       pidfd;
  int       req[2];       /* supervisor -> zygote: one ChildCtx pointer */
  int       sup_pidfd;    /* pidfd of the supervisor process: the zygote's lifeline */
  int       resp[2];      /* zygote -> supervisor: one byte per request, or a setup error */
  char     *stack;
  ChildCtx *ctx;          /* the zygote's own (template) context */
  int      *tmpfs_fds;
  gint      n_spawns;
};

enum { ZYGOTE_NONE = 0, ZYGOTE_RUNNING, ZYGOTE_FAILED };

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
};

SbxLinuxZygote *
sbx_linux_zygote_new (void)
{
  SbxLinuxZygote *z = g_new0 (SbxLinuxZygote, 1);

  g_mutex_init (&z->lock);
  z->pid = -1;
  z->pidfd = -1;
  z->sup_pidfd = -1;
  z->req[0] = z->req[1] = z->resp[0] = z->resp[1] = -1;
  return z;
}

static void
zygote_reset (SbxLinuxZygote *z)
{
  int status;

  /* The zygote shares our descriptor table: closing the write end of its
   * request pipe ends its read() with EOF and it exits. */
  if (z->req[1] >= 0)
    close (z->req[1]);
  if (z->pid > 0)
    {
      if (z->pidfd >= 0)
        syscall (__NR_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
      while (waitpid (z->pid, &status, __WALL) < 0 && errno == EINTR)
        ;
    }
  if (z->pidfd >= 0)
    close (z->pidfd);
  if (z->req[0] >= 0)
    close (z->req[0]);
  if (z->resp[0] >= 0)
    close (z->resp[0]);
  if (z->resp[1] >= 0)
    close (z->resp[1]);
  if (z->sup_pidfd >= 0)
    close (z->sup_pidfd);
  z->sup_pidfd = -1;
  z->req[0] = z->req[1] = z->resp[0] = z->resp[1] = -1;
  z->pid = -1;
  z->pidfd = -1;
  if (z->stack != NULL)
    munmap (z->stack, STACK_SIZE + GUARD_SIZE);
  z->stack = NULL;
  g_clear_pointer (&z->ctx, g_free);
  g_clear_pointer (&z->tmpfs_fds, g_free);
  z->state = ZYGOTE_NONE;
}

void
sbx_linux_zygote_free (SbxLinuxZygote *z)
{
  if (z == NULL)
    return;
  zygote_reset (z);
  g_mutex_clear (&z->lock);
  g_free (z);
}

static int fd_above_stdio (int fd);

/* Starts the zygote of @spec (z->lock held).  FALSE: spawn directly. */
static gboolean
zygote_start (SbxLinuxSpec *spec)
{
  SbxLinuxZygote *z = spec->zygote;
  int flags = CLONE_VM | CLONE_FILES | CLONE_PIDFD | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | SIGCHLD;
  char buf[sizeof (SbxLinuxSetupError)];
  sigset_t all, old;
  int i, n_slots;
  ssize_t n;

  if (pipe2 (z->req, O_CLOEXEC) != 0 || pipe2 (z->resp, O_CLOEXEC) != 0)
    goto fail;
  for (i = 0; i < 2; i++)
    {
      z->req[i] = fd_above_stdio (z->req[i]);
      z->resp[i] = fd_above_stdio (z->resp[i]);
      if (z->req[i] < 0 || z->resp[i] < 0)
        goto fail;
    }
  z->sup_pidfd = fd_above_stdio ((int) syscall (__NR_pidfd_open, getpid (), 0));
  if (z->sup_pidfd < 0)
    goto fail;
  fcntl (z->sup_pidfd, F_SETFD, FD_CLOEXEC);
  z->stack = mmap (NULL, STACK_SIZE + GUARD_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (z->stack == MAP_FAILED)
    {
      z->stack = NULL;
      goto fail;
    }
  mprotect (z->stack, GUARD_SIZE, PROT_NONE);
  n_slots = spec->mounts->n_tmpfs_slots + 2;
  z->tmpfs_fds = g_new (int, n_slots);
  for (i = 0; i < n_slots; i++)
    z->tmpfs_fds[i] = -1;
  z->ctx = g_new0 (ChildCtx, 1);
  z->ctx->spec = spec;
  z->ctx->template = 1;
  z->ctx->tmpfs_fds = z->tmpfs_fds;
  z->ctx->err_fd = -1;
  z->ctx->egress_fd = -1;
  z->ctx->z_req_fd = z->req[0];
  z->ctx->z_resp_fd = z->resp[1];
  z->ctx->z_sup_pidfd = z->sup_pidfd;
  for (gsize k = 0; k < spec->mounts->n_ops; k++)
    if (spec->mounts->ops[k].kind == SBX_MOUNT_OP_MASK_FILE)
      z->ctx->needs_empty = 1;
  if (spec->mask_proc)
    z->ctx->needs_empty = 1;   /* the /proc masks use the empty file too */
  if (spec->netns)
    flags |= CLONE_NEWNET;

  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  z->pid = (pid_t) sbx_linux_raw_clone ((unsigned long) flags, z->stack + GUARD_SIZE + STACK_SIZE,
                                        &z->pidfd, sbx_linux_child_zygote_main, z->ctx);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (z->pid < 0)
    {
      z->pid = -1;
      goto fail;
    }
  do
    n = read (z->resp[0], buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n == 1 && buf[0] == 'R')
    {
      z->state = ZYGOTE_RUNNING;
      return TRUE;
    }

fail:
  /* Whatever went wrong, spawns of this spec go the direct way (which
   * reports the failing step itself). */
  zygote_reset (z);
  z->state = ZYGOTE_FAILED;
  return FALSE;
}

/* Has the zygote clone A for @ctx.  ZYGOTE_SPAWN_DIRECT: no zygote (spawn
 * directly); ZYGOTE_SPAWN_LOST: it died during the request (A may exist:
 * never retried, so a target cannot run twice). */
enum { ZYGOTE_SPAWN_DONE, ZYGOTE_SPAWN_DIRECT, ZYGOTE_SPAWN_LOST };

static int
zygote_spawn (SbxLinuxSpec *spec,
              ChildCtx     *ctx)
{
  SbxLinuxZygote *z = spec->zygote;
  int result = ZYGOTE_SPAWN_DIRECT;
  char byte;
  ssize_t n;

#ifdef SBX_LINUX_NO_ZYGOTE
  return ZYGOTE_SPAWN_DIRECT;
#endif
  /* The first spawn of a spec goes directly: a single-shot caller (sbx run)
   * would only pay for the zygote.  A transient spec (one spawn with
   * grants: its view and Landlock rules are wider than the executor's) is
   * always spawned directly, outside any zygote: it has none of its own,
   * and the executor's shared zygote, built for the base spec, is never
   * asked to make a wider view. */
  if (spec->transient || z == NULL || g_atomic_int_add (&z->n_spawns, 1) == 0)
    return ZYGOTE_SPAWN_DIRECT;
  g_mutex_lock (&z->lock);
  if (z->state == ZYGOTE_RUNNING)
    {
      /* Killed from outside since the last spawn: make a new one. */
      struct pollfd pfd = { z->pidfd, POLLIN, 0 };

      if (poll (&pfd, 1, 0) != 0)
        zygote_reset (z);
    }
  if (z->state == ZYGOTE_NONE)
    zygote_start (spec);
  if (z->state == ZYGOTE_RUNNING)
    {
      struct pollfd pfd[2] = { { z->resp[0], POLLIN, 0 }, { z->pidfd, POLLIN, 0 } };

      ctx->zpid = -EIO;
      result = ZYGOTE_SPAWN_LOST;
      if (write (z->req[1], &ctx, sizeof ctx) == (ssize_t) sizeof ctx)
        {
          while (poll (pfd, 2, -1) < 0 && errno == EINTR)
            ;
          if (pfd[0].revents & POLLIN)
            {
              do
                n = read (z->resp[0], &byte, 1);
              while (n < 0 && errno == EINTR);
              if (n == 1)
                result = ZYGOTE_SPAWN_DONE;
            }
        }
      if (result != ZYGOTE_SPAWN_DONE)
        zygote_reset (z);
    }
  g_mutex_unlock (&z->lock);
  return result;
}

/* Ensures @fd >= 3 (a caller may run with stdio closed) and CLOEXEC. */
static int
fd_above_stdio (int fd)
{
  int moved;

  if (fd < 0 || fd > 2)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  close (fd);
  return moved;
}

static char *
stacks_new (void)
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

static void
stacks_free (char *mem)
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
  char *stacks = stacks_new ();
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
  stacks_free (stacks);
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
  return fd_above_stdio (fds[0]);
}

/* Defense in depth: the backend re-checks what the core
 * built; it must not trust the compiler's or the executor's output. */
static gboolean
request_is_valid (const SbxSpawnRequestV1 *request,
                  char                   **error_message)
{
  if (request == NULL || request->struct_size < SBX_SPAWN_REQUEST_V1_MIN_SIZE)
    {
      *error_message = g_strdup ("spawn request is missing or too small");
      return FALSE;
    }
  if (request->argv == NULL || request->argv[0] == NULL || request->argv[0][0] == '\0')
    {
      *error_message = g_strdup ("spawn request: argv is empty");
      return FALSE;
    }
  if (request->envp == NULL)
    {
      *error_message = g_strdup ("spawn request: envp is NULL (an empty environment is an empty array)");
      return FALSE;
    }
  if (request->cwd == NULL || request->cwd[0] != '/' || strlen (request->cwd) >= PATH_MAX)
    {
      *error_message = g_strdup_printf ("spawn request: working directory '%s' is not an absolute path",
                                        request->cwd != NULL ? request->cwd : "(null)");
      return FALSE;
    }
  if (request->stdin_fd < -1 || request->stdout_fd < -1 || request->stderr_fd < -1)
    {
      *error_message = g_strdup ("spawn request: invalid stdio descriptor");
      return FALSE;
    }
  if ((request->flags & SBX_SPAWN_PTY) && request->stdin_fd < 0)
    {
      *error_message = g_strdup ("spawn request: PTY mode needs the terminal as stdin_fd");
      return FALSE;
    }
  if (request->flags & ~(uint32_t) (SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX))
    {
      *error_message = g_strdup_printf ("spawn request: unknown flags 0x%x",
                                        (unsigned) (request->flags & ~(uint32_t) (SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX)));
      return FALSE;
    }
  if (request->flags & SBX_SPAWN_PTY_SANDBOX)
    {
      if (request->struct_size < SBX_SPAWN_REQUEST_V1_PTY_SIZE)
        {
          *error_message = g_strdup ("spawn request: a sandbox terminal request is too small "
                                     "to carry the window size");
          return FALSE;
        }
      if ((request->flags & SBX_SPAWN_PTY) || request->stdin_fd != -1 || request->stdout_fd != -1
          || request->stderr_fd != -1)
        {
          *error_message = g_strdup ("spawn request: a sandbox terminal replaces stdin, stdout and "
                                     "stderr (they must be -1, SBX_SPAWN_PTY clear)");
          return FALSE;
        }
      if (request->pty_rows > G_MAXUINT16 || request->pty_cols > G_MAXUINT16)
        {
          *error_message = g_strdup_printf ("spawn request: window size %u x %u is out of range",
                                            (unsigned) request->pty_rows, (unsigned) request->pty_cols);
          return FALSE;
        }
    }
  return TRUE;
}

static char *
describe_failure (const SbxLinuxSpec       *spec,
                  const SbxSpawnRequestV1  *request,
                  const SbxLinuxSetupError *rec)
{
  const char *backend = spec->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS
                                                           : SBX_LINUX_BACKEND_LANDLOCK;
  const char *path = NULL;
  const char *hint = "";
  g_autofree char *what = NULL;

  switch (rec->step)
    {
    case SBX_LINUX_STEP_MKDIR:
    case SBX_LINUX_STEP_MKFILE:
    case SBX_LINUX_STEP_SYMLINK:
    case SBX_LINUX_STEP_BIND_SOURCE:
    case SBX_LINUX_STEP_BIND_TARGET:
    case SBX_LINUX_STEP_BIND:
    case SBX_LINUX_STEP_TMPFS:
    case SBX_LINUX_STEP_MASK:
      if (spec->mounts != NULL && rec->index >= 0 && (gsize) rec->index < spec->mounts->n_ops)
        path = spec->mounts->ops[rec->index].path;
      if (rec->step == SBX_LINUX_STEP_BIND_SOURCE && rec->err == ELOOP)
        hint = " (a path component became a symbolic link since the executor was created)";
      break;
    case SBX_LINUX_STEP_DEV:
      if (rec->index >= 0 && rec->index < SBX_LINUX_N_DEVICES)
        path = sbx_linux_dev_host_paths[rec->index];
      else
        path = "/dev";
      break;
    case SBX_LINUX_STEP_DEVPTS:
      path = "/dev/pts";
      break;
    case SBX_LINUX_STEP_SHM:
      path = "/dev/shm";
      break;
    case SBX_LINUX_STEP_PROC:
      path = "/proc";
      if (rec->err == EPERM)
        hint = " Hint: the host's /proc is partly covered (a container's masked paths); "
               "a fresh procfs needs a fully visible one.";
      break;
    case SBX_LINUX_STEP_ROOT:
    case SBX_LINUX_STEP_PIVOT_ROOT:
      path = spec->root_dir;
      break;
    case SBX_LINUX_STEP_CHDIR:
      path = request->cwd;
      if (rec->err == ENOENT)
        hint = " (the working directory is not visible in the sandbox)";
      break;
    case SBX_LINUX_STEP_EXEC:
      path = request->argv[0];
      break;
    case SBX_LINUX_STEP_UID_MAP:
    case SBX_LINUX_STEP_GID_MAP:
    case SBX_LINUX_STEP_SETGROUPS:
      hint = " Hint: unprivileged user namespaces may be restricted "
             "(sysctl kernel.apparmor_restrict_unprivileged_userns=0).";
      break;
    default:
      break;
    }
  if (path != NULL)
    what = g_strdup_printf (" for %s", path);
  return g_strdup_printf ("%s: sandbox setup step '%s'%s failed: %s (errno %d).%s",
                          backend, sbx_linux_step_name (rec->step), what != NULL ? what : "",
                          g_strerror (rec->err), rec->err, hint);
}

static int32_t
status_for_failure (const SbxLinuxSetupError *rec)
{
  if (rec->step == SBX_LINUX_STEP_EXEC)
    {
      switch (rec->err)
        {
        case ENOENT:
        case ENOTDIR:
          return SBX_STATUS_EXEC_NOT_FOUND;
        case EACCES:
        case EPERM:
        case ENOEXEC:
        case EISDIR:
          return SBX_STATUS_EXEC_DENIED;
        default:
          break;
        }
    }
  if (rec->err == ENOMEM)
    return SBX_STATUS_NO_MEMORY;
  return SBX_STATUS_FAILED;
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
  int pty_master = -1;
  SbxLinuxSetupError rec;
  char *stacks = NULL;
  sigset_t all, old;
  int flags, pidfd = -1, own_pidfd, n_slots, saved_errno, i, proxy_listen_fd = -1;
  pid_t pid;
  ssize_t n;
  SbxLinuxChild *child;

  if (!request_is_valid (request, error_message))
    return SBX_STATUS_INVALID;
  if ((request->flags & SBX_SPAWN_PTY_SANDBOX) && result->struct_size < SBX_SPAWN_RESULT_V1_PTY_SIZE)
    {
      *error_message = g_strdup ("spawn result: too small to carry the sandbox terminal's master");
      return SBX_STATUS_INVALID;
    }
  if (probe->init_fd < 0)
    {
      *error_message = g_strdup ("linux: the sandbox init program cannot be executed on this host");
      return SBX_STATUS_UNAVAILABLE;
    }

  ctx = g_new0 (ChildCtx, 1);
  ctx->spec = spec;
  ctx->cwd = request->cwd;
  ctx->argv = (char *const *) request->argv;
  ctx->envp = (char *const *) request->envp;
  if (spec->dns_over_tcp)
    {
      /* A ports network has no UDP: glibc's resolver must use TCP.  The
       * copy lives until the child has exec'd (this function's end). */
      dns_envp = envp_with_dns_over_tcp (request->envp);
      ctx->envp = (char *const *) dns_envp->pdata;
    }
  ctx->path_env = find_path_env (request->envp);
  if (ctx->path_env == NULL)
    ctx->path_env = SBX_SPAWN_DEFAULT_PATH;   /* the ABI's search list without PATH */
  ctx->stdio[0] = request->stdin_fd;
  ctx->stdio[1] = request->stdout_fd;
  ctx->stdio[2] = request->stderr_fd;
  ctx->pty = (request->flags & SBX_SPAWN_PTY) != 0;
  ctx->egress_fd = -1;
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
          return SBX_STATUS_FAILED;
        }
      ctx->n_cgroup_fds = sbx_cgroup_procs_fds (cgroup, ctx->cgroup_fds);
    }

  stacks = stacks_new ();
  if (stacks == NULL)
    {
      saved_errno = errno;
      *error_message = g_strdup_printf ("linux: mmap of the child stacks: %s", g_strerror (saved_errno));
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
      err_pipe[i] = fd_above_stdio (err_pipe[i]);
      exit_pipe[i] = fd_above_stdio (exit_pipe[i]);
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
  ctx->pty_sock = -1;
  if (request->flags & SBX_SPAWN_PTY_SANDBOX)
    {
      /* B sends the master of the terminal it opens inside over this pair;
       * our end is read once spawn has succeeded. */
      if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pty_pair) != 0)
        {
          saved_errno = errno;
          *error_message = g_strdup_printf ("linux: socketpair for the sandbox terminal: %s",
                                            g_strerror (saved_errno));
          goto fail_fds;
        }
      for (i = 0; i < 2; i++)
        pty_pair[i] = fd_above_stdio (pty_pair[i]);
      if (pty_pair[0] < 0 || pty_pair[1] < 0)
        {
          saved_errno = errno;
          *error_message = g_strdup_printf ("linux: fcntl(F_DUPFD_CLOEXEC): %s", g_strerror (saved_errno));
          goto fail_fds;
        }
      ctx->pty_sandbox = 1;
      ctx->pty_sock = pty_pair[1];
      ctx->pty_rows = (unsigned short) request->pty_rows;
      ctx->pty_cols = (unsigned short) request->pty_cols;
    }
  ctx->init_argv[0] = "sbx-init";
  ctx->init_argv[1] = spec->rung == SBX_LINUX_RUNG_USERNS ? "1" : "2";
  ctx->init_argv[2] = NULL;   /* B's pid, filled in by A */
  sbx_child_format_long (ctx->init_fd_buf, ctx->exit_fd);
  ctx->init_argv[3] = ctx->init_fd_buf;
  ctx->init_argv[4] = NULL;
  ctx->init_envp[0] = NULL;

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
  switch (spec->rung == SBX_LINUX_RUNG_USERNS ? zygote_spawn (spec, ctx) : ZYGOTE_SPAWN_DIRECT)
    {
    case ZYGOTE_SPAWN_DONE:
      pid = (pid_t) ctx->zpid;
      pidfd = ctx->z_pidfd;
      if (pid < 0)
        errno = (int) -ctx->zpid;
      break;
    case ZYGOTE_SPAWN_LOST:
      pid = -1;
      errno = ECHILD;
      break;
    case ZYGOTE_SPAWN_DIRECT:
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
  stacks_free (g_steal_pointer (&stacks));

  /* A has exec'd sbx-init or exited: read the verdict. */
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
  do
    n = read (err_pipe[0], &rec, sizeof rec);
  while (n < 0 && errno == EINTR);
  saved_errno = errno;
  close (err_pipe[0]);
  err_pipe[0] = -1;

  if (n != 0)
    {
      int32_t status = SBX_STATUS_FAILED;
      int wstatus;

      if (n == (ssize_t) sizeof rec && rec.magic == SBX_LINUX_SETUP_ERROR_MAGIC)
        {
          *error_message = describe_failure (spec, request, &rec);
          status = status_for_failure (&rec);
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
    }
  stacks_free (stacks);
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
  if (child->pidfd >= 0)
    close (child->pidfd);
  close (child->exit_fd);
  g_free (child);
  return status;
}
