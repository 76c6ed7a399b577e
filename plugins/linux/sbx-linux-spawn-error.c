/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spawn path's checks and verdicts, parent side: the backend's own
 * check of a spawn request (it does not trust what the core built), the
 * names of the setup steps, and the message and status of a setup error
 * record read from the child.  Split from sbx-linux-spawn.c along its seam:
 * nothing here creates a process.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sbx-linux-private.h"
#include "sbx-linux-child-private.h"


/* Whether a standard stream of @request is a terminal the host did not
 * hand over as the target's own: any terminal among stdin, stdout and
 * stderr, except with SBX_SPAWN_PTY the stdin terminal (and the same
 * terminal on stdout or stderr), which the host asks to become the target's
 * controlling terminal.  That succeeds only for a terminal no session holds
 * (TIOCSCTTY without stealing), so never for the caller's own; with
 * SBX_SPAWN_PTY_SANDBOX the descriptors are -1 and the terminal is the one
 * the backend opens inside.  Such a spawn loads spec->seccomp_terminal: the
 * descriptors share the caller's open file description, opened before any
 * Landlock rule, and a mode, window size or line discipline the target set
 * would outlive the run (a shell left without echo). */
gboolean
sbx_linux_spawn_shares_terminal (const SbxSpawnRequestV1 *request)
{
  const int fds[3] = { request->stdin_fd, request->stdout_fd, request->stderr_fd };
  struct stat own;
  gboolean has_own = FALSE;

  if ((request->flags & SBX_SPAWN_PTY) && fstat (request->stdin_fd, &own) == 0 && S_ISCHR (own.st_mode))
    has_own = TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    {
      struct stat st;

      if (fds[i] < 0 || !isatty (fds[i]))
        continue;
      if (has_own && fstat (fds[i], &st) == 0 && S_ISCHR (st.st_mode) && st.st_rdev == own.st_rdev)
        continue;
      return TRUE;
    }
  return FALSE;
}

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
  [SBX_LINUX_STEP_WARM] = "warm-request",
  [SBX_LINUX_STEP_SYS_CGROUP] = "sys-fs-cgroup",
  [SBX_LINUX_STEP_OVERLAY] = "stage-overlay",
  [SBX_LINUX_STEP_VIEW_ROOT] = "view-supervisor-root",
};

const char *
sbx_linux_step_name (int step)
{
  if (step < 0 || step >= SBX_LINUX_STEP_LAST || step_names[step] == NULL)
    return "unknown";
  return step_names[step];
}

/* Defense in depth: the backend re-checks what the core
 * built; it must not trust the compiler's or the executor's output. */
gboolean
sbx_linux_spawn_request_is_valid (const SbxSpawnRequestV1 *request,
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
  if (request->flags & ~(uint32_t) (SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX | SBX_SPAWN_IGNORED_SIGNALS
                                    | SBX_SPAWN_STAGED))
    {
      *error_message = g_strdup_printf ("spawn request: unknown flags 0x%x",
                                        (unsigned) (request->flags & ~(uint32_t) (SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX
                                                                                  | SBX_SPAWN_IGNORED_SIGNALS)));
      return FALSE;
    }
  if (request->flags & SBX_SPAWN_IGNORED_SIGNALS)
    {
      const uint64_t unignorable = (UINT64_C (1) << (SIGKILL - 1)) | (UINT64_C (1) << (SIGSTOP - 1));

      if (request->struct_size < SBX_SPAWN_REQUEST_V1_SIGNALS_SIZE)
        {
          *error_message = g_strdup ("spawn request: an ignored-signals request is too small to carry the set");
          return FALSE;
        }
      if (request->ignored_signals == 0 || (request->ignored_signals & unignorable) != 0)
        {
          *error_message = g_strdup_printf ("spawn request: ignored signal set 0x%" G_GINT64_MODIFIER "x is empty or "
                                            "names SIGKILL or SIGSTOP, which cannot be ignored",
                                            (guint64) request->ignored_signals);
          return FALSE;
        }
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

char *
sbx_linux_spawn_describe_failure (const SbxLinuxSpec       *spec,
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
    case SBX_LINUX_STEP_OVERLAY:
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
    case SBX_LINUX_STEP_VIEW_ROOT:
      path = "/dev/fuse";
      hint = " The compile report promises that attempts outside the view are observed "
             "(fs-denials), and this spawn could not make the FUSE root that observes them: "
             "it does not run unobserved.";
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

int32_t
sbx_linux_spawn_failure_status (const SbxLinuxSetupError *rec)
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
