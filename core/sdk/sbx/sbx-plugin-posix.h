/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-posix.h: the spawn contract of a fork-based backend, for plugin
 * authors.  Installed with sbx-plugin-1 (<sbx/sbx-plugin-posix.h>); plain
 * C11 and POSIX, no GLib.  A backend that confines its child between fork
 * and execve (or confines nothing) gets the whole contract of
 * SbxBackendVTableV1 from three calls:
 *
 *   spawn:   sbx_plugin_fork_spawn (host, call, "name", request, confine, data, &group, result)
 *   signal:  sbx_plugin_group_signal (&group, signo)
 *   finish:  sbx_plugin_exit_from_wait_status (wait_status, out);
 *            sbx_plugin_group_sweep (group.pid, timeout_ns, NULL)
 *
 * What sbx_plugin_fork_spawn() does, in the contract's words: the target is
 * a direct child of the calling thread (fork, no double fork) in a new
 * session, so its pid is also its process group; its standard fds are the
 * request's (-1: /dev/null), copied above 2 before the dup2()s so that no
 * copy clobbers another; every other fd is close-on-exec; every signal is
 * at its default disposition (the request's ignored set at SIG_IGN) with an
 * empty mask; it chdir()s to the cwd, runs @confine, then execs argv[0] as
 * is when it holds a '/', else along the PATH of envp (SBX_SPAWN_DEFAULT_PATH
 * without one), EACCES on a candidate winning over a later ENOENT.  It
 * "returns after exec": a failing step writes the step and errno on a
 * close-on-exec pipe whose write end only the child holds, and EOF means the
 * execve succeeded.  On a failure the child is reaped and the status is
 * SBX_STATUS_EXEC_NOT_FOUND (ENOENT, ENOTDIR), SBX_STATUS_EXEC_DENIED (EACCES,
 * EPERM, ENOEXEC) or SBX_STATUS_FAILED, with host->set_error() naming the
 * step, the path and the errno text; no process and no fd is left.
 *
 * The Linux backend cannot use this header: its CLONE_VM child shares the
 * parent's memory and may call no libc at all (plugins/linux/
 * sbx-linux-child*.c), while this child is an ordinary fork that calls libc's
 * async-signal-safe functions.
 *
 * sbx_plugin_fork_spawn() needs pipe2() (not on macOS, where only the
 * group, exit and exec-candidate helpers are declared) and, on Linux,
 * SYS_close_range: with glibc define _GNU_SOURCE before the first #include
 * (the skeleton's meson.build does).
 * Header-only for the reason sbx-plugin-util.h gives.
 */
#ifndef SBX_PLUGIN_POSIX_H
#define SBX_PLUGIN_POSIX_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include <sbx/sbx-cleanup.h>
#include <sbx/sbx-plugin-abi.h>
#include <sbx/sbx-plugin-util.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * SbxPluginGroup:
 *
 * A target spawned in a new session: @pid is the host's direct child and
 * the id of its process group; @ignored the signals it started ignored
 * (bit N-1: signal N), which sbx_plugin_group_signal() delivers to it alone.
 */
typedef struct SbxPluginGroup
{
  pid_t    pid;
  uint64_t ignored;
} SbxPluginGroup;

/* Runs in the forked child after chdir and before execve (async-signal-safe
 * calls only: the host is multi-threaded): the backend's confinement.
 * Returns 0, or the errno of the step that failed (the spawn then fails
 * with a message naming "confine"). */
typedef int SbxPluginConfineFunc (void *data);

/* Frees a NULL-terminated array of malloc'd strings (NULL is fine). */
static inline void
sbx_plugin_strv_free (char **strv)
{
  if (strv == NULL)
    return;
  for (size_t i = 0; strv[i] != NULL; i++)
    free (strv[i]);
  free (strv);
}

/* The exec candidates for @file, malloc'd and NULL-terminated: @file itself
 * when it contains '/', otherwise each entry of the PATH in @envp joined
 * with it (an empty entry is the working directory), or of @default_path
 * when @envp has none (NULL: SBX_SPAWN_DEFAULT_PATH, the contract's).  NULL
 * when out of memory.  Built before fork, so the child only walks it. */
static inline char **
sbx_plugin_exec_candidates (const char        *file,
                            const char *const *envp,
                            const char        *default_path)
{
  const char *path = NULL;
  size_t n_entries = 1;
  size_t n = 0;
  char **out;

  if (strchr (file, '/') != NULL)
    {
      out = (char **) calloc (2, sizeof (char *));
      if (out != NULL && (out[0] = strdup (file)) == NULL)
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
    path = default_path != NULL ? default_path : SBX_SPAWN_DEFAULT_PATH;
  for (const char *p = path; *p != '\0'; p++)
    if (*p == ':')
      n_entries++;
  out = (char **) calloc (n_entries + 1, sizeof (char *));
  if (out == NULL)
    return NULL;
  for (const char *p = path;;)
    {
      const char *end = strchr (p, ':');
      size_t len = end != NULL ? (size_t) (end - p) : strlen (p);
      const char *dir = len > 0 ? p : ".";
      size_t dir_len = len > 0 ? len : 1;
      char *candidate = (char *) malloc (dir_len + 1 + strlen (file) + 1);

      if (candidate == NULL)
        {
          sbx_plugin_strv_free (out);
          return NULL;
        }
      memcpy (candidate, dir, dir_len);
      candidate[dir_len] = '/';
      strcpy (candidate + dir_len + 1, file);
      out[n++] = candidate;
      if (end == NULL)
        break;
      p = end + 1;
    }
  return out;
}

/* The target's own exit from the wait status of the host's child. */
static inline void
sbx_plugin_exit_from_wait_status (int32_t    wait_status,
                                  SbxExitV1 *out)
{
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
}

/* signal(): @signo to the whole group, except a signal the target started
 * ignoring, which reaches the target alone, as it would a plain child of
 * the caller.  A group already gone is not an error. */
static inline int32_t
sbx_plugin_group_signal (const SbxPluginGroup *group,
                         int32_t               signo)
{
  pid_t to;

  if (group == NULL || group->pid <= 0)
    return SBX_STATUS_INVALID;
  to = signo >= 1 && signo <= 64 && (group->ignored & SBX_PLUGIN_SIGNAL_BIT (signo)) != 0
       ? group->pid : -group->pid;
  if (kill (to, signo) < 0 && errno != ESRCH)
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

/* finish()'s sweep: SIGKILL process group @pgid until the kernel knows no
 * member of it (ESRCH: not even a zombie), or, with @has_live_member, until
 * that says none is alive (it returns 1, 0, or -1 when it cannot tell).
 * Waits with a growing pause, at most @timeout_ns.  Returns 0 when the group
 * is gone, 1 when members remain after the timeout, -1 when
 * @has_live_member could not tell. */
static inline int
sbx_plugin_group_sweep (pid_t   pgid,
                        int64_t timeout_ns,
                        int (*has_live_member) (pid_t pgid))
{
  struct timespec start;

  clock_gettime (CLOCK_MONOTONIC, &start);
  for (long delay_ns = 100 * 1000;; delay_ns = delay_ns < 10 * 1000 * 1000 ? delay_ns * 2 : delay_ns)
    {
      struct timespec now;
      struct timespec pause = { 0, delay_ns };

      if (kill (-pgid, SIGKILL) < 0 && errno == ESRCH)
        return 0;
      if (has_live_member != NULL)
        {
          int live = has_live_member (pgid);

          if (live <= 0)
            return live;
        }
      clock_gettime (CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) * INT64_C (1000000000) + (now.tv_nsec - start.tv_nsec) > timeout_ns)
        return 1;
      nanosleep (&pause, NULL);
    }
}

/* The fork spawn needs pipe2(), which macOS lacks: a macOS backend starts
 * its child with posix_spawn (POSIX_SPAWN_CLOEXEC_DEFAULT) instead, as
 * plugins/darwin does, and uses the rest of this header. */
#ifndef __APPLE__

/* The steps the forked child reports on the exec-error pipe. */
enum
{
  SBX_PLUGIN_STEP_DUP = 1,
  SBX_PLUGIN_STEP_SETSID,
  SBX_PLUGIN_STEP_CHDIR,
  SBX_PLUGIN_STEP_CONFINE,
  SBX_PLUGIN_STEP_EXEC,
};

typedef struct SbxPluginChildReport
{
  int32_t step;
  int32_t err;
} SbxPluginChildReport;

/* In the forked child: writes the failing @step and @err on @report_fd and
 * exits.  Async-signal-safe. */
static inline void
sbx_plugin_child_report (int     report_fd,
                         int32_t step,
                         int     err)
{
  SbxPluginChildReport report = { step, err };
  ssize_t written;

  do
    written = write (report_fd, &report, sizeof report);
  while (written < 0 && errno == EINTR);
  _exit (127);
}

/* In the forked child: every fd from 3 up close-on-exec (close_range where
 * the kernel has CLOSE_RANGE_CLOEXEC, else one fcntl per fd below
 * @open_max).  Async-signal-safe. */
static inline void
sbx_plugin_child_cloexec_from_3 (long open_max)
{
#if defined(__linux__) && defined(SYS_close_range)
  if (syscall (SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) == 0)
    return;
#endif
  for (long fd = 3; fd < open_max; fd++)
    {
      int flags = fcntl ((int) fd, F_GETFD);

      if (flags >= 0 && (flags & FD_CLOEXEC) == 0)
        fcntl ((int) fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

/* The forked child, from fork to execve: async-signal-safe calls only (the
 * host is multi-threaded).  Never returns. */
static inline void
sbx_plugin_child_exec (const int                fds[3],
                       int                      report_fd,
                       long                     open_max,
                       const SbxSpawnRequestV1 *request,
                       char *const             *candidates,
                       SbxPluginConfineFunc    *confine,
                       void                    *confine_data)
{
  uint64_t ignored = sbx_plugin_spawn_ignored_signals (request);
  sigset_t empty;
  int high[3];
  int err = ENOENT;
  int saw_eacces = 0;

  /* Default dispositions and an empty mask, whatever the host's threads
   * had; the request's ignored signals start at SIG_IGN (execve keeps it). */
  for (int sig = 1; sig < NSIG; sig++)
    {
      struct sigaction action;

      memset (&action, 0, sizeof action);
      action.sa_handler = sig <= 64 && (ignored & SBX_PLUGIN_SIGNAL_BIT (sig)) != 0 ? SIG_IGN : SIG_DFL;
      if (sig != SIGKILL && sig != SIGSTOP)
        sigaction (sig, &action, NULL);
    }
  sigemptyset (&empty);
  sigprocmask (SIG_SETMASK, &empty, NULL);

  /* A new session: signal() and finish() address the whole group. */
  if (setsid () < 0)
    sbx_plugin_child_report (report_fd, SBX_PLUGIN_STEP_SETSID, errno);

  /* Copy all three above 2 first, so dup2 never sees source == target
   * (which would keep a close-on-exec flag) and no copy clobbers another. */
  for (int i = 0; i < 3; i++)
    if ((high[i] = fcntl (fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
      sbx_plugin_child_report (report_fd, SBX_PLUGIN_STEP_DUP, errno);
  for (int i = 0; i < 3; i++)
    if (dup2 (high[i], i) < 0)
      sbx_plugin_child_report (report_fd, SBX_PLUGIN_STEP_DUP, errno);
  /* Nothing but 0, 1 and 2 crosses execve (the report pipe is close-on-exec
   * too: its EOF tells the parent that execve succeeded). */
  sbx_plugin_child_cloexec_from_3 (open_max);

  if (chdir (request->cwd) < 0)
    sbx_plugin_child_report (report_fd, SBX_PLUGIN_STEP_CHDIR, errno);

  /* The backend's confinement, last before exec. */
  if (confine != NULL && (err = confine (confine_data)) != 0)
    sbx_plugin_child_report (report_fd, SBX_PLUGIN_STEP_CONFINE, err);

  err = ENOENT;
  for (size_t i = 0; candidates[i] != NULL; i++)
    {
      execve (candidates[i], (char *const *) request->argv, (char *const *) request->envp);
      err = errno;
      if (err == EACCES)
        saw_eacces = 1;
      else if (err != ENOENT && err != ENOTDIR && err != ENAMETOOLONG && err != ELOOP)
        break;
    }
  if (saw_eacces && (err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG || err == ELOOP))
    err = EACCES;
  sbx_plugin_child_report (report_fd, SBX_PLUGIN_STEP_EXEC, err);
}

/* In the parent, after the child reported @report (@got bytes of it) and was
 * reaped: the status and message of the failed spawn. */
static inline int32_t
sbx_plugin_fork_failed (const SbxHostV1            *host,
                        SbxHostCall                *call,
                        const char                 *who,
                        const SbxSpawnRequestV1    *request,
                        const SbxPluginChildReport *report,
                        ssize_t                     got)
{
  int32_t status = SBX_STATUS_FAILED;
  const char *what = request->argv[0];
  const char *step;

  if (got != (ssize_t) sizeof *report)
    return sbx_plugin_fail (host, call, SBX_STATUS_FAILED, "%s: the child failed before exec (short report)", who);
  switch (report->step)
    {
    case SBX_PLUGIN_STEP_DUP:
      step = "dup2 of the standard fds";
      break;
    case SBX_PLUGIN_STEP_SETSID:
      step = "setsid";
      break;
    case SBX_PLUGIN_STEP_CHDIR:
      step = "chdir";
      what = request->cwd;
      break;
    case SBX_PLUGIN_STEP_CONFINE:
      step = "confine";
      break;
    case SBX_PLUGIN_STEP_EXEC:
    default:
      step = "execve";
      if (report->err == ENOENT || report->err == ENOTDIR)
        status = SBX_STATUS_EXEC_NOT_FOUND;
      else if (report->err == EACCES || report->err == EPERM || report->err == ENOEXEC)
        status = SBX_STATUS_EXEC_DENIED;
      break;
    }
  return sbx_plugin_fail (host, call, status, "%s: %s(%s): %s", who, step, what, strerror (report->err));
}

/* spawn() of a fork-based backend, per the contract above: @request must
 * have passed sbx_plugin_check_spawn_request().  On OK, @group holds the
 * target and @result its pid (pidfd -1: the host opens one; no proxy
 * listener; SBX_SPAWN_IGNORED_SIGNALS in honoured_flags when asked); the
 * caller sets result->containment and result->child.  @confine (NULL: none)
 * runs in the child as SbxPluginConfineFunc says. */
static inline int32_t
sbx_plugin_fork_spawn (const SbxHostV1         *host,
                       SbxHostCall             *call,
                       const char              *who,
                       const SbxSpawnRequestV1 *request,
                       SbxPluginConfineFunc    *confine,
                       void                    *confine_data,
                       SbxPluginGroup          *group,
                       SbxSpawnResultV1        *result)
{
  char **candidates = sbx_plugin_exec_candidates (request->argv[0], request->envp, NULL);
  long open_max = sysconf (_SC_OPEN_MAX);
  sbx_autofd int null_fd = -1;
  sbx_autofd int report_read = -1;
  sbx_autofd int report_write = -1;
  SbxPluginChildReport report;
  int report_pipe[2];
  int fds[3] = { request->stdin_fd, request->stdout_fd, request->stderr_fd };
  ssize_t got;
  pid_t pid;
  int errsv;

  if (candidates == NULL)
    return sbx_plugin_fail (host, call, SBX_STATUS_NO_MEMORY, "%s: out of memory", who);
  if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0)
    {
      null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd < 0)
        {
          errsv = errno;
          sbx_plugin_strv_free (candidates);
          return sbx_plugin_fail (host, call, SBX_STATUS_FAILED, "%s: open(/dev/null): %s", who, strerror (errsv));
        }
      for (int i = 0; i < 3; i++)
        if (fds[i] < 0)
          fds[i] = null_fd;
    }
  /* O_CLOEXEC at creation: a concurrent fork of another host thread must
   * not inherit the write end, or EOF would wait for that child too. */
  if (pipe2 (report_pipe, O_CLOEXEC) < 0)
    {
      errsv = errno;
      sbx_plugin_strv_free (candidates);
      return sbx_plugin_fail (host, call, SBX_STATUS_FAILED, "%s: pipe2: %s", who, strerror (errsv));
    }
  report_read = report_pipe[0];
  report_write = report_pipe[1];

  /* fork from the calling thread: the target is the host's direct child.
   * The child leaves through execve or _exit: no cleanup runs there. */
  pid = fork ();
  if (pid == 0)
    {
      close (report_read);
      sbx_plugin_child_exec (fds, report_write, open_max > 0 ? open_max : 1024, request, candidates,
                             confine, confine_data);
      _exit (127);  /* not reached: the child execs or reports and exits */
    }
  errsv = errno;
  sbx_plugin_strv_free (candidates);
  /* Only the child may hold the write end, or EOF never comes. */
  sbx_clear_fd (&report_write);
  sbx_clear_fd (&null_fd);
  if (pid < 0)
    return sbx_plugin_fail (host, call, SBX_STATUS_FAILED, "%s: fork: %s", who, strerror (errsv));

  /* EOF: execve succeeded.  A report: a step failed and the child exited. */
  do
    got = read (report_read, &report, sizeof report);
  while (got < 0 && errno == EINTR);
  if (got != 0)
    {
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      return sbx_plugin_fork_failed (host, call, who, request, &report, got);
    }

  group->pid = pid;
  group->ignored = sbx_plugin_spawn_ignored_signals (request);
  if (group->ignored != 0)
    result->honoured_flags |= SBX_SPAWN_IGNORED_SIGNALS;
  result->pid = pid;
  result->pidfd = -1;
  result->proxy_listen_fd = -1;
  return SBX_STATUS_OK;
}

#endif /* !__APPLE__ */

#ifdef __cplusplus
}
#endif

#endif /* SBX_PLUGIN_POSIX_H */
