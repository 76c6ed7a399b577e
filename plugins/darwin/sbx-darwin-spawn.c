/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * macOS spawn glue of darwin-seatbelt.  Compiled only when building for
 * macOS (plugins/darwin/meson.build); it has never run on the Linux CI host,
 * which can only build the portable compiler and check its output.
 *
 * How a spawn works:
 *  - the profile is compiled once (compile); a spawn only builds argv
 *    /usr/bin/sandbox-exec -p TEXT [-D SBX_Pn=VALUE]... -- PATH ARG...
 *    where PATH is argv[0] resolved against the PATH of the child's own
 *    environment (never the host's);
 *  - posix_spawn (thread-safe, nothing runs in a forked copy of this
 *    process) with POSIX_SPAWN_CLOEXEC_DEFAULT so only fds 0, 1, 2 cross,
 *    a new session (or at least a new process group), default signal
 *    dispositions and an empty mask, the working directory set by a file
 *    action; sandbox-exec applies the profile to itself and execs the
 *    target, so the target and every descendant run under it;
 *  - signal() and finish() address the whole process group; finish() kills
 *    it and waits until no member is left.  A descendant that calls setsid
 *    or setpgid leaves the group: it stays confined by Seatbelt but may
 *    outlive the run, so every spawn reports containment BEST_EFFORT.
 *
 * Residuals stated in the report: when sandbox-exec itself cannot apply the
 * profile it exits with its own status (the target never ran); an exec the
 * profile denies shows as sandbox-exec's failure status, not as
 * SBX_STATUS_EXEC_DENIED.
 */
#if defined(__APPLE__) && defined(__MACH__)

#include "sbx-darwin-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"
#define DEFAULT_PATH "/usr/bin:/bin:/usr/sbin:/sbin"
#define SWEEP_TIMEOUT_NS (2LL * 1000 * 1000 * 1000)
#define SPEC_MAGIC 0x73627065u   /* "sbpe" */

struct SbxDarwinSpec
{
  uint32_t        magic;
  SbxSbplProfile *profile;
  char          **defines;   /* "-D" arguments: "SBX_Pn=VALUE" */
  size_t          n_defines;
};

struct SbxDarwinChild
{
  pid_t    pid;       /* also the process group id */
  uint64_t ignored;   /* SBX_SPAWN_IGNORED_SIGNALS: bit N-1, signal N started ignored */
};

static void
set_err (char       *err,
         size_t      err_size,
         const char *fmt,
         ...) __attribute__ ((format (printf, 3, 4)));

static void
set_err (char       *err,
         size_t      err_size,
         const char *fmt,
         ...)
{
  va_list args;

  va_start (args, fmt);
  vsnprintf (err, err_size, fmt, args);
  va_end (args);
}

int
sbx_darwin_host_usable (char   *why,
                        size_t  why_size)
{
  struct stat st;

  if (stat (SANDBOX_EXEC, &st) != 0)
    {
      set_err (why, why_size, "%s: %s. Hint: sandbox-exec ships with every macOS release; "
                              "a host without it cannot run this backend", SANDBOX_EXEC, strerror (errno));
      return 0;
    }
  if (!S_ISREG (st.st_mode) || access (SANDBOX_EXEC, X_OK) != 0)
    {
      set_err (why, why_size, "%s is not an executable file", SANDBOX_EXEC);
      return 0;
    }
  return 1;
}

char *
sbx_darwin_resolve_path (const char *path,
                         void       *data)
{
  char resolved[PATH_MAX];
  const char *slash;
  char *parent;
  char *parent_resolved;
  char *out;

  (void) data;
  if (realpath (path, resolved) != NULL)
    return strcmp (resolved, path) != 0 ? strdup (resolved) : NULL;
  /* A path that does not exist yet: resolve its nearest existing ancestor. */
  slash = strrchr (path, '/');
  if (slash == NULL || slash == path)
    return NULL;
  parent = strndup (path, (size_t) (slash - path));
  if (parent == NULL)
    return NULL;
  parent_resolved = sbx_darwin_resolve_path (parent, NULL);
  free (parent);
  if (parent_resolved == NULL)
    return NULL;
  out = malloc (strlen (parent_resolved) + strlen (slash) + 1);
  if (out != NULL)
    {
      strcpy (out, parent_resolved);
      strcat (out, slash);
    }
  free (parent_resolved);
  return out;
}

void
sbx_darwin_spec_free (void *spec_ptr)
{
  SbxDarwinSpec *spec = spec_ptr;

  if (spec == NULL)
    return;
  for (size_t i = 0; i < spec->n_defines; i++)
    free (spec->defines[i]);
  free (spec->defines);
  sbx_sbpl_profile_free (spec->profile);
  free (spec);
}

int32_t
sbx_darwin_spec_new (SbxSbplProfile *profile,
                     void          **spec_out,
                     char           *err,
                     size_t          err_size)
{
  SbxDarwinSpec *spec = calloc (1, sizeof *spec);

  if (spec == NULL)
    {
      sbx_sbpl_profile_free (profile);
      set_err (err, err_size, "darwin-seatbelt: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  spec->magic = SPEC_MAGIC;
  spec->profile = profile;
  spec->defines = calloc (profile->n_params + 1, sizeof (char *));
  if (spec->defines == NULL)
    {
      sbx_darwin_spec_free (spec);
      set_err (err, err_size, "darwin-seatbelt: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  for (size_t i = 0; i < profile->n_params; i++)
    {
      size_t n = strlen (profile->param_keys[i]) + 1 + strlen (profile->param_values[i]) + 1;

      spec->defines[i] = malloc (n);
      if (spec->defines[i] == NULL)
        {
          sbx_darwin_spec_free (spec);
          set_err (err, err_size, "darwin-seatbelt: out of memory");
          return SBX_STATUS_NO_MEMORY;
        }
      snprintf (spec->defines[i], n, "%s=%s", profile->param_keys[i], profile->param_values[i]);
      spec->n_defines++;
    }
  *spec_out = spec;
  return SBX_STATUS_OK;
}

/* argv[0] resolved against the child's own PATH; malloc'd, or NULL with
 * *err_out = ENOENT / EACCES. */
static char *
resolve_program (const char        *file,
                 const char *const *envp,
                 int               *err_out)
{
  const char *path = NULL;
  int saw_eacces = 0;

  if (strchr (file, '/') != NULL)
    {
      if (access (file, X_OK) == 0)
        return strdup (file);
      *err_out = errno == EACCES ? EACCES : ENOENT;
      return NULL;
    }
  for (size_t i = 0; envp[i] != NULL; i++)
    if (strncmp (envp[i], "PATH=", 5) == 0)
      path = envp[i] + 5;
  if (path == NULL)
    path = DEFAULT_PATH;
  for (const char *p = path;;)
    {
      const char *end = strchr (p, ':');
      size_t len = end != NULL ? (size_t) (end - p) : strlen (p);
      char candidate[PATH_MAX];
      struct stat st;

      if (snprintf (candidate, sizeof candidate, "%.*s/%s", len > 0 ? (int) len : 1,
                    len > 0 ? p : ".", file) < (int) sizeof candidate
          && stat (candidate, &st) == 0 && S_ISREG (st.st_mode))
        {
          if (access (candidate, X_OK) == 0)
            return strdup (candidate);
          saw_eacces = 1;
        }
      if (end == NULL)
        break;
      p = end + 1;
    }
  *err_out = saw_eacces ? EACCES : ENOENT;
  return NULL;
}

int32_t
sbx_darwin_spawn (void                    *spec_ptr,
                  const SbxSpawnRequestV1 *request,
                  SbxSpawnResultV1        *result,
                  char                    *err,
                  size_t                   err_size)
{
  SbxDarwinSpec *spec = spec_ptr;
  SbxDarwinChild *child;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  sigset_t all;
  sigset_t none;
  short flags;
  char *program;
  char **argv;
  size_t n_args = 0;
  size_t k = 0;
  int lookup_err = 0;
  int null_fd = -1;
  pid_t pid;
  int rc;

  /* Defense in depth: re-validate what the host hands us. */
  if (spec == NULL || spec->magic != SPEC_MAGIC)
    {
      set_err (err, err_size, "darwin-seatbelt: spawn with a foreign spec");
      return SBX_STATUS_INVALID;
    }
  if (request == NULL || request->struct_size < SBX_SPAWN_REQUEST_V1_MIN_SIZE || request->argv == NULL
      || request->argv[0] == NULL || request->argv[0][0] == '\0' || request->envp == NULL
      || request->cwd == NULL || request->cwd[0] != '/')
    {
      set_err (err, err_size, "darwin-seatbelt: spawn request needs argv[0], an environment and an absolute cwd");
      return SBX_STATUS_INVALID;
    }
  if (request->flags & SBX_SPAWN_PTY)
    {
      set_err (err, err_size, "darwin-seatbelt: PTY spawns are not supported (the profile allows no "
                              "terminal ioctl)");
      return SBX_STATUS_UNSUPPORTED;
    }
  if (request->flags & SBX_SPAWN_IGNORED_SIGNALS)
    {
      if (request->struct_size < SBX_SPAWN_REQUEST_V1_SIGNALS_SIZE || request->ignored_signals == 0
          || result->struct_size < SBX_SPAWN_RESULT_V1_FLAGS_SIZE)
        {
          set_err (err, err_size, "darwin-seatbelt: an ignored-signals request needs a non-empty set in a "
                                  "request and result large enough to carry it");
          return SBX_STATUS_INVALID;
        }
      /* posix_spawn resets a disposition to its default (sigdefault) but
       * cannot set SIG_IGN: a signal starts ignored only where this process
       * ignores it itself and leaves it out of sigdefault (sbx run does: it
       * keeps its caller's ignored signals ignored).  Any other is refused,
       * never started at its default. */
      for (int signo = 1; signo <= 64; signo++)
        {
          struct sigaction current;

          if (!(request->ignored_signals & (UINT64_C (1) << (signo - 1))))
            continue;
          if (signo >= NSIG || signo == SIGKILL || signo == SIGSTOP
              || sigaction (signo, NULL, &current) != 0 || (current.sa_flags & SA_SIGINFO)
              || current.sa_handler != SIG_IGN)
            {
              set_err (err, err_size, "darwin-seatbelt: signal %d cannot start ignored: this process does "
                                      "not ignore it itself, and posix_spawn cannot set SIG_IGN", signo);
              return SBX_STATUS_UNSUPPORTED;
            }
        }
    }

  program = resolve_program (request->argv[0], request->envp, &lookup_err);
  if (program == NULL)
    {
      set_err (err, err_size, "darwin-seatbelt: %s: %s", request->argv[0], strerror (lookup_err));
      return lookup_err == EACCES ? SBX_STATUS_EXEC_DENIED : SBX_STATUS_EXEC_NOT_FOUND;
    }

  while (request->argv[n_args] != NULL)
    n_args++;
  /* sandbox-exec -p TEXT (-D DEF)... -- PROGRAM ARGS... NULL */
  argv = calloc (3 + 2 * spec->n_defines + 2 + n_args + 1, sizeof (char *));
  child = calloc (1, sizeof *child);
  if (argv == NULL || child == NULL)
    {
      free (argv);
      free (child);
      free (program);
      set_err (err, err_size, "darwin-seatbelt: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  argv[k++] = (char *) SANDBOX_EXEC;
  argv[k++] = (char *) "-p";
  argv[k++] = spec->profile->text;
  for (size_t i = 0; i < spec->n_defines; i++)
    {
      argv[k++] = (char *) "-D";
      argv[k++] = spec->defines[i];
    }
  argv[k++] = (char *) "--";
  argv[k++] = program;
  for (size_t i = 1; i < n_args; i++)
    argv[k++] = (char *) request->argv[i];
  argv[k] = NULL;

  if (request->stdin_fd < 0 || request->stdout_fd < 0 || request->stderr_fd < 0)
    {
      null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd < 0)
        {
          int errsv = errno;

          free (argv);
          free (child);
          free (program);
          set_err (err, err_size, "darwin-seatbelt: open(/dev/null): %s", strerror (errsv));
          return SBX_STATUS_FAILED;
        }
    }

  posix_spawnattr_init (&attr);
  posix_spawn_file_actions_init (&actions);
  flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_CLOEXEC_DEFAULT;
#ifdef POSIX_SPAWN_SETSID
  flags |= POSIX_SPAWN_SETSID;
#else
  flags |= POSIX_SPAWN_SETPGROUP;
  posix_spawnattr_setpgroup (&attr, 0);
#endif
  posix_spawnattr_setflags (&attr, flags);
  sigfillset (&all);
  sigdelset (&all, SIGKILL);
  sigdelset (&all, SIGSTOP);
  /* The ignored signals (checked above: this process ignores them) keep
   * SIG_IGN across the exec. */
  for (int signo = 1; signo < NSIG && signo <= 64 && (request->flags & SBX_SPAWN_IGNORED_SIGNALS); signo++)
    if (request->ignored_signals & (UINT64_C (1) << (signo - 1)))
      sigdelset (&all, signo);
  posix_spawnattr_setsigdefault (&attr, &all);
  sigemptyset (&none);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawn_file_actions_adddup2 (&actions, request->stdin_fd >= 0 ? request->stdin_fd : null_fd, 0);
  posix_spawn_file_actions_adddup2 (&actions, request->stdout_fd >= 0 ? request->stdout_fd : null_fd, 1);
  posix_spawn_file_actions_adddup2 (&actions, request->stderr_fd >= 0 ? request->stderr_fd : null_fd, 2);
  posix_spawn_file_actions_addchdir_np (&actions, request->cwd);

  rc = posix_spawn (&pid, SANDBOX_EXEC, &actions, &attr, argv, (char *const *) request->envp);

  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  if (null_fd >= 0)
    close (null_fd);
  free (argv);
  free (program);
  if (rc != 0)
    {
      free (child);
      set_err (err, err_size, "darwin-seatbelt: posix_spawn(%s) in %s: %s", SANDBOX_EXEC, request->cwd,
               strerror (rc));
      return rc == ENOENT ? SBX_STATUS_UNAVAILABLE : SBX_STATUS_FAILED;
    }

  child->pid = pid;
  if (request->flags & SBX_SPAWN_IGNORED_SIGNALS)
    {
      child->ignored = request->ignored_signals;
      result->honoured_flags |= SBX_SPAWN_IGNORED_SIGNALS;
    }
  result->containment = SBX_CONTAINMENT_BEST_EFFORT;
  result->pid = pid;
  result->pidfd = -1;
  result->proxy_listen_fd = -1;
  result->child = child;
  return SBX_STATUS_OK;
}

int32_t
sbx_darwin_signal (void    *child_ptr,
                   int32_t  signo)
{
  SbxDarwinChild *child = child_ptr;

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

int32_t
sbx_darwin_finish (void      *child_ptr,
                   int32_t    wait_status,
                   SbxExitV1 *out,
                   char      *err,
                   size_t     err_size)
{
  SbxDarwinChild *child = child_ptr;
  struct timespec start;
  pid_t pgid;

  if (child == NULL || child->pid <= 0)
    {
      set_err (err, err_size, "darwin-seatbelt: finish without a child");
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

  /* Kill what is left of the group until the kernel knows no member of it
   * (orphaned zombies are reaped by launchd). */
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (long delay_ns = 100 * 1000;; delay_ns = delay_ns < 10 * 1000 * 1000 ? delay_ns * 2 : delay_ns)
    {
      struct timespec now;
      struct timespec pause = { 0, delay_ns };

      if (kill (-pgid, SIGKILL) < 0 && errno == ESRCH)
        return SBX_STATUS_OK;
      clock_gettime (CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) > SWEEP_TIMEOUT_NS)
        break;
      nanosleep (&pause, NULL);
    }
  set_err (err, err_size, "darwin-seatbelt: process group %d still has members after SIGKILL", (int) pgid);
  return SBX_STATUS_FAILED;
}

#endif /* __APPLE__ && __MACH__ */
