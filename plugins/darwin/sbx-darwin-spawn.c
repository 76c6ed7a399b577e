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

#include <sbx/sbx-plugin-posix.h>
#include <sbx/sbx-plugin-util.h>

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
/* The search list when the child's environment has no PATH (macOS's own
 * default, kept from before the SDK helpers). */
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
  SbxPluginGroup group;  /* sandbox-exec, then the target; its pid is also the process group id */
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

/* argv[0] resolved against the child's own PATH (sandbox-exec takes a
 * path); malloc'd, or NULL with *err_out = ENOENT / EACCES / ENOMEM. */
static char *
resolve_program (const char        *file,
                 const char *const *envp,
                 int               *err_out)
{
  char **candidates = sbx_plugin_exec_candidates (file, envp, DEFAULT_PATH);
  char *found = NULL;
  int saw_eacces = 0;

  if (candidates == NULL)
    {
      *err_out = ENOMEM;
      return NULL;
    }
  if (strchr (file, '/') != NULL)
    {
      if (access (file, X_OK) == 0)
        found = strdup (file);
      else
        saw_eacces = errno == EACCES;
    }
  else
    for (size_t i = 0; found == NULL && candidates[i] != NULL; i++)
      {
        struct stat st;

        if (strlen (candidates[i]) >= PATH_MAX || stat (candidates[i], &st) != 0 || !S_ISREG (st.st_mode))
          continue;
        if (access (candidates[i], X_OK) == 0)
          found = strdup (candidates[i]);
        else
          saw_eacces = 1;
      }
  sbx_plugin_strv_free (candidates);
  if (found == NULL)
    *err_out = saw_eacces ? EACCES : ENOENT;
  return found;
}

/* posix_spawn resets a disposition to its default (sigdefault) but cannot
 * set SIG_IGN: a signal starts ignored only where this process ignores it
 * itself and leaves it out of sigdefault (sbx run does: it keeps its
 * caller's ignored signals ignored).  Any other is refused, never started
 * at its default. */
static int32_t
check_ignored_signals (const SbxHostV1 *host,
                       SbxHostCall     *call,
                       uint64_t         ignored)
{
  for (int signo = 1; signo <= 64; signo++)
    {
      struct sigaction current;

      if (!(ignored & SBX_PLUGIN_SIGNAL_BIT (signo)))
        continue;
      if (signo >= NSIG || sigaction (signo, NULL, &current) != 0 || (current.sa_flags & SA_SIGINFO)
          || current.sa_handler != SIG_IGN)
        return sbx_plugin_fail (host, call, SBX_STATUS_UNSUPPORTED,
                                "darwin-seatbelt: signal %d cannot start ignored: this process does "
                                "not ignore it itself, and posix_spawn cannot set SIG_IGN", signo);
    }
  return SBX_STATUS_OK;
}

int32_t
sbx_darwin_spawn (const SbxHostV1         *host,
                  SbxHostCall             *call,
                  void                    *spec_ptr,
                  const SbxSpawnRequestV1 *request,
                  SbxSpawnResultV1        *result)
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
  uint64_t ignored;
  pid_t pid;
  int32_t status;
  int rc;

  /* Defense in depth: re-validate what the host hands us.  Terminals are
   * refused: the profile allows no terminal ioctl. */
  if (spec == NULL || spec->magic != SPEC_MAGIC)
    return sbx_plugin_fail (host, call, SBX_STATUS_INVALID, "darwin-seatbelt: spawn with a foreign spec");
  status = sbx_plugin_check_spawn_request (host, call, "darwin-seatbelt", request, result,
                                           SBX_SPAWN_IGNORED_SIGNALS);
  if (status != SBX_STATUS_OK)
    return status;
  ignored = sbx_plugin_spawn_ignored_signals (request);
  status = check_ignored_signals (host, call, ignored);
  if (status != SBX_STATUS_OK)
    return status;

  program = resolve_program (request->argv[0], request->envp, &lookup_err);
  if (program == NULL)
    return sbx_plugin_fail (host, call,
                            lookup_err == EACCES ? SBX_STATUS_EXEC_DENIED
                            : lookup_err == ENOMEM ? SBX_STATUS_NO_MEMORY : SBX_STATUS_EXEC_NOT_FOUND,
                            "darwin-seatbelt: %s: %s", request->argv[0], strerror (lookup_err));

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
      return sbx_plugin_fail (host, call, SBX_STATUS_NO_MEMORY, "darwin-seatbelt: out of memory");
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
          return sbx_plugin_fail (host, call, SBX_STATUS_FAILED, "darwin-seatbelt: open(/dev/null): %s",
                                  strerror (errsv));
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
  for (int signo = 1; signo < NSIG && signo <= 64; signo++)
    if (ignored & SBX_PLUGIN_SIGNAL_BIT (signo))
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
      return sbx_plugin_fail (host, call, rc == ENOENT ? SBX_STATUS_UNAVAILABLE : SBX_STATUS_FAILED,
                              "darwin-seatbelt: posix_spawn(%s) in %s: %s", SANDBOX_EXEC, request->cwd,
                              strerror (rc));
    }

  child->group.pid = pid;
  child->group.ignored = ignored;
  if (ignored != 0)
    result->honoured_flags |= SBX_SPAWN_IGNORED_SIGNALS;
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

  /* A signal the command started ignoring reaches the command alone, as it
   * would a plain child: the rest of its group never gets it from us. */
  return child != NULL ? sbx_plugin_group_signal (&child->group, signo) : SBX_STATUS_INVALID;
}

int32_t
sbx_darwin_finish (const SbxHostV1 *host,
                   SbxHostCall     *call,
                   void            *child_ptr,
                   int32_t          wait_status,
                   SbxExitV1       *out)
{
  SbxDarwinChild *child = child_ptr;
  pid_t pgid;

  if (child == NULL || child->group.pid <= 0)
    return sbx_plugin_fail (host, call, SBX_STATUS_INVALID, "darwin-seatbelt: finish without a child");
  pgid = child->group.pid;
  free (child);
  sbx_plugin_exit_from_wait_status (wait_status, out);
  /* Kill what is left of the group until the kernel knows no member of it
   * (orphaned zombies are reaped by launchd). */
  if (sbx_plugin_group_sweep (pgid, SWEEP_TIMEOUT_NS, NULL) != 0)
    return sbx_plugin_fail (host, call, SBX_STATUS_FAILED,
                            "darwin-seatbelt: process group %d still has members after SIGKILL", (int) pgid);
  return SBX_STATUS_OK;
}

#endif /* __APPLE__ && __MACH__ */
