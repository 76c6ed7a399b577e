/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Backend "unconfined": runs acknowledged Unconfined profiles, and nothing
 * else.  It never claims isolation: probe and compile report LEVEL_NONE and
 * only ENV_SCRUB (the host builds the scrubbed environment; this backend
 * passes it on unchanged), every spawn reports LifetimeContainment
 * UNSPECIFIED, and compile refuses every policy without
 * SBX_POLICY_UNCONFINED with SBX_STATUS_UNAVAILABLE.
 *
 * Spawn is fork + execve in a new session (and so a new process group).
 * Between fork and execve the child makes async-signal-safe calls only; an
 * exec failure travels back through a close-on-exec pipe.  signal() and
 * finish() address the whole process group; finish() then sweeps /proc until
 * no live member of the group remains.  A descendant that leaves the group
 * (setsid, setpgid) escapes: that is why containment is UNSPECIFIED.
 *
 * Plain C against sbx-plugin-abi.h only.
 */
#include <sbx/sbx-plugin-abi.h>
#include <sbx/sbx-cleanup.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Every entry point, declared through its ABI typedef (a signature that
 * does not match the slot it fills cannot compile). */
static SbxBackendProbeFunc   unconfined_probe;
static SbxBackendCompileFunc unconfined_compile;
static SbxBackendSpawnFunc   unconfined_spawn;
static SbxBackendSignalFunc  unconfined_signal;
static SbxBackendFinishFunc  unconfined_finish;
static SbxBackendReleaseFunc unconfined_release;
static SbxPluginInitFunc     unconfined_init;
static SbxPluginFiniFunc     unconfined_fini;

#define PLUGIN_DOMAIN "sbx-unconfined"
/* How long finish() waits for the killed group to disappear. */
#define SWEEP_TIMEOUT_NS (2LL * 1000 * 1000 * 1000)
/* PATH used when the child environment has none (as execvp's default,
 * without the current directory). */
#define DEFAULT_PATH SBX_SPAWN_DEFAULT_PATH

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

typedef struct
{
  const SbxHostV1 *host;
} UnconfinedPlugin;

typedef struct
{
  uint32_t magic;
} UnconfinedSpec;

typedef struct
{
  pid_t    pid;      /* also the process group id (setsid) */
  uint64_t ignored;  /* SBX_SPAWN_IGNORED_SIGNALS: bit N-1, signal N started ignored */
} UnconfinedChild;

#define SPEC_MAGIC 0x756e6366u /* "uncf" */

/* What the child reports through the error pipe before _exit. */
enum
{
  CHILD_STEP_DUP = 1,
  CHILD_STEP_SETSID,
  CHILD_STEP_CHDIR,
  CHILD_STEP_EXEC,
};

typedef struct
{
  int32_t step;
  int32_t err;
} ChildReport;

static void
fail (const UnconfinedPlugin *plugin,
      SbxHostCall            *call,
      int32_t                 status,
      const char             *fmt,
      ...) __attribute__ ((format (printf, 4, 5)));

static void
fail (const UnconfinedPlugin *plugin,
      SbxHostCall            *call,
      int32_t                 status,
      const char             *fmt,
      ...)
{
  char    message[1024];
  va_list args;

  va_start (args, fmt);
  vsnprintf (message, sizeof message, fmt, args);
  va_end (args);
  plugin->host->set_error (call, status, message);
}

static int32_t
unconfined_init (const SbxHostV1 *host,
                 void           **plugin_ctx)
{
  UnconfinedPlugin *plugin;

  if (host == NULL || host->struct_size < SBX_HOST_V1_MIN_SIZE)
    return SBX_STATUS_INVALID;
  plugin = calloc (1, sizeof *plugin);
  if (plugin == NULL)
    return SBX_STATUS_NO_MEMORY;
  plugin->host = host;
  *plugin_ctx = plugin;
  return SBX_STATUS_OK;
}

static void
unconfined_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static int32_t
unconfined_probe (void             *plugin_ctx,
                  SbxHostCall      *call,
                  SbxProbeResultV1 *result)
{
  UnconfinedPlugin *plugin = plugin_ctx;

  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  result->flags = SBX_PROBE_UNCONFINED_ONLY;
  plugin->host->report (call, SBX_ABI_FEATURE_CONFINEMENT, SBX_ABI_REPORT_UNENFORCED,
                        "no OS confinement: runs only acknowledged Unconfined profiles");
  return SBX_STATUS_OK;
}

static int32_t
unconfined_compile (void               *plugin_ctx,
                    SbxHostCall        *call,
                    const SbxPolicyV1  *policy,
                    void              **spec_out,
                    SbxCompileResultV1 *result)
{
  UnconfinedPlugin *plugin = plugin_ctx;
  UnconfinedSpec   *spec;

  if (policy == NULL || policy->struct_size < SBX_POLICY_V1_MIN_SIZE)
    {
      fail (plugin, call, SBX_STATUS_INVALID, "unconfined: policy table too small");
      return SBX_STATUS_INVALID;
    }
  if ((policy->flags & SBX_POLICY_UNCONFINED) == 0)
    {
      fail (plugin, call, SBX_STATUS_UNAVAILABLE,
            "unconfined: refusing a Sandboxed policy; this backend gives no OS confinement "
            "and runs only acknowledged Unconfined profiles");
      return SBX_STATUS_UNAVAILABLE;
    }

  spec = calloc (1, sizeof *spec);
  if (spec == NULL)
    {
      fail (plugin, call, SBX_STATUS_NO_MEMORY, "unconfined: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  spec->magic = SPEC_MAGIC;
  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  plugin->host->report (call, SBX_ABI_FEATURE_CONFINEMENT, SBX_ABI_REPORT_UNENFORCED,
                        "no OS confinement: the child has the caller's authority");
  plugin->host->report (call, SBX_ABI_FEATURE_ENV_SCRUB, SBX_ABI_REPORT_ENFORCED,
                        "the child environment is the host's scrubbed one");
  plugin->host->report (call, SBX_ABI_FEATURE_PROCESS_LIFETIME, SBX_ABI_REPORT_NARROWED,
                        "best effort: the process group is killed after the target exits; "
                        "a descendant that leaves the group escapes");
  *spec_out = spec;
  return SBX_STATUS_OK;
}

static void
free_strv (char **v)
{
  if (v == NULL)
    return;
  for (size_t i = 0; v[i] != NULL; i++)
    free (v[i]);
  free (v);
}

SBX_DEFINE_CLEANUP (strv, char **, NULL, free_strv)
SBX_DEFINE_CLEANUP (dir, DIR *, NULL, closedir)

/* The exec candidates for @file: itself when it contains '/', otherwise
 * each PATH entry of @envp joined with it (an empty entry is "."). */
static char **
exec_candidates (const char        *file,
                 const char *const *envp)
{
  const char *path = NULL;
  size_t      n_entries = 1;
  char      **out;
  size_t      n = 0;
  const char *p;

  if (strchr (file, '/') != NULL)
    {
      out = calloc (2, sizeof (char *));
      if (out == NULL || (out[0] = strdup (file)) == NULL)
        {
          free (out);
          return NULL;
        }
      return out;
    }

  for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
    if (strncmp (envp[i], "PATH=", 5) == 0)
      path = envp[i] + 5;
  if (path == NULL)
    path = DEFAULT_PATH;

  for (p = path; *p != '\0'; p++)
    if (*p == ':')
      n_entries++;
  out = calloc (n_entries + 1, sizeof (char *));
  if (out == NULL)
    return NULL;

  p = path;
  for (;;)
    {
      const char *end = strchr (p, ':');
      size_t      len = end != NULL ? (size_t) (end - p) : strlen (p);
      const char *dir = len > 0 ? p : ".";
      size_t      dir_len = len > 0 ? len : 1;
      char       *cand = malloc (dir_len + 1 + strlen (file) + 1);

      if (cand == NULL)
        {
          free_strv (out);
          return NULL;
        }
      memcpy (cand, dir, dir_len);
      cand[dir_len] = '/';
      strcpy (cand + dir_len + 1, file);
      out[n++] = cand;
      if (end == NULL)
        break;
      p = end + 1;
    }
  return out;
}

static void
child_report (int     report_fd,
              int32_t step,
              int     err)
{
  ChildReport report = { step, err };
  ssize_t     r;

  do
    r = write (report_fd, &report, sizeof report);
  while (r < 0 && errno == EINTR);
  _exit (127);
}

/* Runs in the forked child: async-signal-safe calls only. */
static void
child_exec (const int          fds[3],
            int                report_fd,
            const char        *cwd,
            char *const       *candidates,
            const char *const *argv,
            const char *const *envp,
            uint64_t           ignored)
{
  sigset_t empty;
  int      high[3];
  int      err = ENOENT;
  int      saw_eacces = 0;

  /* Default signal dispositions and an empty mask, whatever the host set;
   * the signals the request names start ignored (execve keeps SIG_IGN). */
  for (int sig = 1; sig < NSIG; sig++)
    {
      struct sigaction sa;

      memset (&sa, 0, sizeof sa);
      sa.sa_handler = sig <= 64 && (ignored & (UINT64_C (1) << (sig - 1))) ? SIG_IGN : SIG_DFL;
      if (sig != SIGKILL && sig != SIGSTOP)
        sigaction (sig, &sa, NULL);
    }
  sigemptyset (&empty);
  sigprocmask (SIG_SETMASK, &empty, NULL);

  if (setsid () < 0)
    child_report (report_fd, CHILD_STEP_SETSID, errno);

  /* Copy the three fds above 2 first, so dup2 never sees source == target
   * (which would keep a close-on-exec flag) and no copy clobbers another. */
  for (int i = 0; i < 3; i++)
    {
      high[i] = fcntl (fds[i], F_DUPFD_CLOEXEC, 3);
      if (high[i] < 0)
        child_report (report_fd, CHILD_STEP_DUP, errno);
    }
  for (int i = 0; i < 3; i++)
    if (dup2 (high[i], i) < 0)
      child_report (report_fd, CHILD_STEP_DUP, errno);
  /* Nothing but 0, 1, 2 crosses execve. */
  syscall (SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);

  if (chdir (cwd) < 0)
    child_report (report_fd, CHILD_STEP_CHDIR, errno);

  for (size_t i = 0; candidates[i] != NULL; i++)
    {
      execve (candidates[i], (char *const *) argv, (char *const *) envp);
      err = errno;
      if (err == EACCES)
        saw_eacces = 1;
      else if (err != ENOENT && err != ENOTDIR && err != ENAMETOOLONG && err != ELOOP)
        break;
    }
  if (saw_eacces && (err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG || err == ELOOP))
    err = EACCES;
  child_report (report_fd, CHILD_STEP_EXEC, err);
}

static int32_t
unconfined_spawn (void                    *plugin_ctx,
                  SbxHostCall             *call,
                  void                    *spec_ptr,
                  const SbxSpawnRequestV1 *request,
                  SbxSpawnResultV1        *result)
{
  UnconfinedPlugin             *plugin = plugin_ctx;
  UnconfinedSpec               *spec = spec_ptr;
  sbx_autofree UnconfinedChild *child = NULL;
  sbx_auto (strv) char        **candidates = NULL;
  sbx_autofd int                null_fd = -1;
  sbx_autofd int                report_read = -1;
  sbx_autofd int                report_write = -1;
  int                           fds[3];
  int                           report_pipe[2];
  ChildReport                   report;
  ssize_t                       got;
  pid_t                         pid;

  /* Defense in depth: re-validate what the host hands us. */
  if (spec == NULL || spec->magic != SPEC_MAGIC)
    {
      fail (plugin, call, SBX_STATUS_INVALID, "unconfined: spawn with a foreign spec");
      return SBX_STATUS_INVALID;
    }
  if (request == NULL || request->struct_size < SBX_SPAWN_REQUEST_V1_MIN_SIZE
      || request->argv == NULL || request->argv[0] == NULL || request->argv[0][0] == '\0'
      || request->envp == NULL || request->cwd == NULL || request->cwd[0] != '/')
    {
      fail (plugin, call, SBX_STATUS_INVALID,
            "unconfined: spawn request needs argv[0], an environment and an absolute cwd");
      return SBX_STATUS_INVALID;
    }
  if ((request->flags & (SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX)) != 0)
    {
      fail (plugin, call, SBX_STATUS_UNSUPPORTED, "unconfined: PTY spawns are not supported yet");
      return SBX_STATUS_UNSUPPORTED;
    }
  if ((request->flags & ~(uint32_t) (SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX | SBX_SPAWN_IGNORED_SIGNALS)) != 0)
    {
      fail (plugin, call, SBX_STATUS_UNSUPPORTED, "unconfined: unknown spawn flags 0x%x",
            (unsigned) (request->flags & ~(uint32_t) (SBX_SPAWN_PTY | SBX_SPAWN_PTY_SANDBOX
                                                      | SBX_SPAWN_IGNORED_SIGNALS)));
      return SBX_STATUS_UNSUPPORTED;
    }
  if ((request->flags & SBX_SPAWN_IGNORED_SIGNALS) != 0
      && (request->struct_size < SBX_SPAWN_REQUEST_V1_SIGNALS_SIZE || request->ignored_signals == 0
          || (request->ignored_signals & ((UINT64_C (1) << (SIGKILL - 1)) | (UINT64_C (1) << (SIGSTOP - 1)))) != 0
          || result->struct_size < SBX_SPAWN_RESULT_V1_FLAGS_SIZE))
    {
      fail (plugin, call, SBX_STATUS_INVALID,
            "unconfined: an ignored-signals request needs a non-empty set without SIGKILL and SIGSTOP "
            "in a request and result large enough to carry it");
      return SBX_STATUS_INVALID;
    }

  candidates = exec_candidates (request->argv[0], request->envp);
  if (candidates == NULL)
    {
      fail (plugin, call, SBX_STATUS_NO_MEMORY, "unconfined: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  child = calloc (1, sizeof *child);
  if (child == NULL)
    {
      fail (plugin, call, SBX_STATUS_NO_MEMORY, "unconfined: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }

  fds[0] = request->stdin_fd;
  fds[1] = request->stdout_fd;
  fds[2] = request->stderr_fd;
  if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0)
    {
      null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd < 0)
        {
          int errsv = errno;

          fail (plugin, call, SBX_STATUS_FAILED, "unconfined: open(/dev/null): %s", strerror (errsv));
          return SBX_STATUS_FAILED;
        }
      for (int i = 0; i < 3; i++)
        if (fds[i] < 0)
          fds[i] = null_fd;
    }

  if (pipe2 (report_pipe, O_CLOEXEC) < 0)
    {
      int errsv = errno;

      fail (plugin, call, SBX_STATUS_FAILED, "unconfined: pipe2: %s", strerror (errsv));
      return SBX_STATUS_FAILED;
    }
  report_read = report_pipe[0];
  report_write = report_pipe[1];

  pid = fork ();
  if (pid == 0)
    {
      /* The child leaves through execve or _exit: no cleanup runs here. */
      close (report_read);
      child_exec (fds, report_write, request->cwd, candidates, request->argv, request->envp,
                  (request->flags & SBX_SPAWN_IGNORED_SIGNALS) != 0 ? request->ignored_signals : 0);
      _exit (127);
    }

  {
    int errsv = errno;

    /* Only the child may hold the write end, or EOF never comes. */
    sbx_clear_fd (&report_write);
    sbx_clear_fd (&null_fd);
    if (pid < 0)
      {
        fail (plugin, call, SBX_STATUS_FAILED, "unconfined: fork: %s", strerror (errsv));
        return SBX_STATUS_FAILED;
      }
  }

  do
    got = read (report_read, &report, sizeof report);
  while (got < 0 && errno == EINTR);
  sbx_clear_fd (&report_read);

  if (got != 0)
    {
      int         status;
      int32_t     code = SBX_STATUS_FAILED;
      const char *step = "exec";

      /* The child failed before (or in) execve: reap it, nothing is left. */
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
      if (got != (ssize_t) sizeof report)
        {
          fail (plugin, call, SBX_STATUS_FAILED, "unconfined: child setup failed (short report)");
          return SBX_STATUS_FAILED;
        }
      switch (report.step)
        {
        case CHILD_STEP_DUP:
          step = "dup2 of the standard fds";
          break;
        case CHILD_STEP_SETSID:
          step = "setsid";
          break;
        case CHILD_STEP_CHDIR:
          step = "chdir";
          break;
        case CHILD_STEP_EXEC:
        default:
          step = "execve";
          break;
        }
      if (report.step == CHILD_STEP_EXEC)
        {
          if (report.err == ENOENT || report.err == ENOTDIR)
            code = SBX_STATUS_EXEC_NOT_FOUND;
          else if (report.err == EACCES || report.err == ENOEXEC || report.err == EPERM)
            code = SBX_STATUS_EXEC_DENIED;
        }
      if (report.step == CHILD_STEP_CHDIR)
        fail (plugin, call, code, "unconfined: %s(%s): %s", step, request->cwd, strerror (report.err));
      else
        fail (plugin, call, code, "unconfined: %s(%s): %s", step, request->argv[0], strerror (report.err));
      return code;
    }

  child->pid = pid;
  if ((request->flags & SBX_SPAWN_IGNORED_SIGNALS) != 0)
    {
      child->ignored = request->ignored_signals;
      result->honoured_flags |= SBX_SPAWN_IGNORED_SIGNALS;
    }
  result->containment = SBX_CONTAINMENT_UNSPECIFIED;
  result->pid = pid;
  result->pidfd = -1;
  result->proxy_listen_fd = -1;
  result->child = sbx_steal_pointer (&child);
  return SBX_STATUS_OK;
}

static int32_t
unconfined_signal (void   *plugin_ctx,
                   void   *child_ptr,
                   int32_t signo)
{
  UnconfinedChild *child = child_ptr;

  if (child == NULL || child->pid <= 0)
    return SBX_STATUS_INVALID;
  /* A signal the command started ignoring reaches the command alone, as it
   * would a plain child: the rest of its group never gets it from us. */
  if (signo >= 1 && signo <= 64 && (child->ignored & (UINT64_C (1) << (signo - 1))) != 0)
    {
      if (kill (child->pid, signo) < 0 && errno != ESRCH)
        return SBX_STATUS_FAILED;
      return SBX_STATUS_OK;
    }
  if (kill (-child->pid, signo) < 0 && errno != ESRCH)
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

/* Does a live (non-zombie) process in group @pgid remain? */
static int
group_has_live_member (pid_t pgid)
{
  sbx_auto (dir) DIR *proc = opendir ("/proc");
  struct dirent      *entry;
  int                 found = 0;

  if (proc == NULL)
    return -1;
  while (!found && (entry = readdir (proc)) != NULL)
    {
      char           path[288];
      char           buf[512];
      const char    *close_paren;
      char           state;
      int            ppid;
      int            pgrp;
      ssize_t        n;
      sbx_autofd int fd = -1;

      if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
        continue;
      snprintf (path, sizeof path, "/proc/%s/stat", entry->d_name);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        continue;
      n = read (fd, buf, sizeof buf - 1);
      sbx_clear_fd (&fd);
      if (n <= 0)
        continue;
      buf[n] = '\0';
      /* "pid (comm) state ppid pgrp ...": comm may hold ')' and spaces. */
      close_paren = strrchr (buf, ')');
      if (close_paren == NULL
          || sscanf (close_paren + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
        continue;
      if (pgrp == pgid && state != 'Z' && state != 'X')
        found = 1;
    }
  return found;
}

static int32_t
unconfined_finish (void        *plugin_ctx,
                   SbxHostCall *call,
                   void        *child_ptr,
                   int32_t      wait_status,
                   SbxExitV1   *out)
{
  UnconfinedPlugin *plugin = plugin_ctx;
  UnconfinedChild  *child = child_ptr;
  struct timespec   start;
  int               live = 1;
  pid_t             pgid;

  if (child == NULL || child->pid <= 0)
    {
      fail (plugin, call, SBX_STATUS_INVALID, "unconfined: finish without a child");
      return SBX_STATUS_INVALID;
    }
  pgid = child->pid;
  free (child);

  if (WIFSIGNALED (wait_status))
    {
      out->kind = SBX_EXIT_SIGNALED;
      out->code = 0;
      out->signo = WTERMSIG (wait_status);
    }
  else
    {
      out->kind = SBX_EXIT_EXITED;
      out->code = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 0;
      out->signo = 0;
    }

  /* Kill what is left of the group and wait until nothing of it runs. */
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (long delay_ns = 100 * 1000;; delay_ns = delay_ns < 10 * 1000 * 1000 ? delay_ns * 2 : delay_ns)
    {
      struct timespec now;
      struct timespec pause = { 0, delay_ns };

      /* ESRCH: not even a zombie is left in the group. */
      if (kill (-pgid, SIGKILL) < 0 && errno == ESRCH)
        {
          live = 0;
          break;
        }
      live = group_has_live_member (pgid);
      if (live <= 0)
        break;
      clock_gettime (CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) > SWEEP_TIMEOUT_NS)
        break;
      nanosleep (&pause, NULL);
    }
  if (live < 0)
    {
      fail (plugin, call, SBX_STATUS_FAILED,
            "unconfined: cannot read /proc to sweep process group %d. "
            "Hint: is /proc mounted?",
            (int) pgid);
      return SBX_STATUS_FAILED;
    }
  if (live > 0)
    {
      fail (plugin, call, SBX_STATUS_FAILED,
            "unconfined: process group %d still has live members after SIGKILL", (int) pgid);
      return SBX_STATUS_FAILED;
    }
  return SBX_STATUS_OK;
}

static void
unconfined_release (void *plugin_ctx,
                    void *spec)
{
  free (spec);
}

static const SbxBackendVTableV1 unconfined_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = unconfined_probe,
  .compile = unconfined_compile,
  .spawn = unconfined_spawn,
  .signal = unconfined_signal,
  .finish = unconfined_finish,
  .release = unconfined_release,
  .supports_grant_class = NULL,
};

static const SbxPluginExtension unconfined_extensions[] = {
  {
    .struct_size = sizeof (SbxPluginExtension),
    .kind = SBX_EXT_BACKEND,
    .name = "unconfined",
    .priority = -100,
    .vtable = &unconfined_vtable,
  },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

SBX_PLUGIN_DEFINE (unconfined, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE, unconfined_init, unconfined_fini, unconfined_extensions)
