/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-skeleton: a complete, minimal backend plugin for sbx.
 *
 * It gives NO OS confinement, and says so: probe and compile report level
 * none, only the env-scrub guarantee (the host builds the scrubbed
 * environment; this backend passes it on unchanged) and the flag
 * SBX_PROBE_UNCONFINED_ONLY, so the host uses it only for acknowledged
 * Unconfined profiles and never for a Sandboxed one.  Everything a real
 * backend must get right besides the confinement itself is here: the
 * descriptor, per-registry state, the spawn contract (direct child, standard
 * fds, nothing else inherited, signals reset, PATH search, exec failures
 * reported with the step and errno, "returns after exec"), signalling the
 * whole tree, and a finish() that proves the tree is gone.
 *
 * To make a confining backend out of it: enforce something in child_exec()
 * (before execve), measure in probe() that the mechanism works on this host,
 * report what compile() achieved for the policy, and claim a guarantee only
 * when every path of it is enforced.  Then run sbx-conformance on the .so.
 *
 * Plain C11 + POSIX against <sbx/sbx-plugin-abi.h> only.
 */
#include <sbx/sbx-plugin-abi.h>

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

/* The search list when the child's environment has no PATH (the ABI's
 * spawn contract). */
#define SKELETON_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
/* How long finish() waits for the killed process group to disappear. */
#define SKELETON_SWEEP_NS (2LL * 1000 * 1000 * 1000)

/* Per-registry state: init runs once per registry, so nothing lives in
 * globals. */
typedef struct
{
  const SbxHostV1 *host;
} SkeletonPlugin;

typedef struct
{
  uint32_t magic;
} SkeletonSpec;

#define SKELETON_SPEC_MAGIC 0x736b656cu  /* "skel" */

typedef struct
{
  pid_t pid;  /* the direct child; also its process group (setsid) */
} SkeletonChild;

/* What the child writes on the report pipe when a step before exec fails. */
enum
{
  STEP_DUP = 1,
  STEP_SETSID,
  STEP_CHDIR,
  STEP_EXEC,
};

typedef struct
{
  int32_t step;
  int32_t err;
} ChildReport;

static void
fail (const SkeletonPlugin *plugin,
      SbxHostCall          *call,
      int32_t               status,
      const char           *format,
      ...) __attribute__ ((format (printf, 4, 5)));

static void
fail (const SkeletonPlugin *plugin,
      SbxHostCall          *call,
      int32_t               status,
      const char           *format,
      ...)
{
  char message[1024];
  va_list args;

  va_start (args, format);
  vsnprintf (message, sizeof message, format, args);
  va_end (args);
  plugin->host->set_error (call, status, message);
}

static int32_t
skeleton_init (const SbxHostV1  *host,
               void            **plugin_ctx)
{
  SkeletonPlugin *plugin;

  /* Use a host field only when the host's table is large enough for it. */
  if (host == NULL || host->abi_version != SBX_PLUGIN_ABI_VERSION
      || !SBX_ABI_HAS (host, SbxHostV1, release))
    return SBX_STATUS_INVALID;
  plugin = calloc (1, sizeof *plugin);
  if (plugin == NULL)
    return SBX_STATUS_NO_MEMORY;
  plugin->host = host;
  *plugin_ctx = plugin;
  return SBX_STATUS_OK;
}

static void
skeleton_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static int32_t
skeleton_probe (void             *plugin_ctx,
                SbxHostCall      *call,
                SbxProbeResultV1 *result)
{
  SkeletonPlugin *plugin = plugin_ctx;

  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  result->flags = SBX_PROBE_UNCONFINED_ONLY;
  plugin->host->report (call, "confinement", SBX_ABI_REPORT_UNENFORCED,
                        "skeleton: no OS confinement; runs acknowledged Unconfined profiles only");
  return SBX_STATUS_OK;
}

static int32_t
skeleton_compile (void                *plugin_ctx,
                  SbxHostCall         *call,
                  const SbxPolicyV1   *policy,
                  void               **spec_out,
                  SbxCompileResultV1  *result)
{
  SkeletonPlugin *plugin = plugin_ctx;
  SkeletonSpec *spec;

  /* Re-validate what the host hands over; refuse what cannot be honoured. */
  if (policy == NULL || !SBX_ABI_HAS (policy, SbxPolicyV1, flags))
    {
      fail (plugin, call, SBX_STATUS_INVALID, "skeleton: the policy table is too small");
      return SBX_STATUS_INVALID;
    }
  if ((policy->flags & SBX_POLICY_UNCONFINED) == 0)
    {
      fail (plugin, call, SBX_STATUS_UNAVAILABLE,
            "skeleton: refusing a Sandboxed policy (this backend confines nothing)");
      return SBX_STATUS_UNAVAILABLE;
    }
  spec = calloc (1, sizeof *spec);
  if (spec == NULL)
    {
      fail (plugin, call, SBX_STATUS_NO_MEMORY, "skeleton: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  spec->magic = SKELETON_SPEC_MAGIC;
  /* Never more than probe claimed: the host refuses a spec that does. */
  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  plugin->host->report (call, "env-scrub", SBX_ABI_REPORT_ENFORCED,
                        "the child gets the host's scrubbed environment, unchanged");
  plugin->host->report (call, "process-lifetime", SBX_ABI_REPORT_NARROWED,
                        "best effort: the process group is killed; a descendant that leaves it escapes");
  *spec_out = spec;
  return SBX_STATUS_OK;
}

/* Runs in the forked child until execve: async-signal-safe calls only.
 * Writes the failing step and errno to @report_fd and exits. */
static void
child_fail (int     report_fd,
            int32_t step,
            int     err)
{
  ChildReport report = { step, err };
  ssize_t r;

  do
    r = write (report_fd, &report, sizeof report);
  while (r < 0 && errno == EINTR);
  _exit (127);
}

/* execve @file as the spawn contract says: with a '/', as is; otherwise
 * along PATH from @envp (or the default list).  Returns the errno to
 * report. */
static int
child_execvpe (const char        *file,
               const char *const *argv,
               const char *const *envp)
{
  const char *path = NULL;
  char candidate[4096];
  size_t file_len = strlen (file);
  int saw_eacces = 0;
  int err = ENOENT;

  if (strchr (file, '/') != NULL)
    {
      execve (file, (char *const *) argv, (char *const *) envp);
      return errno;
    }
  for (size_t i = 0; envp[i] != NULL; i++)
    if (strncmp (envp[i], "PATH=", 5) == 0)
      path = envp[i] + 5;
  if (path == NULL)
    path = SKELETON_DEFAULT_PATH;

  for (const char *p = path;;)
    {
      const char *end = strchr (p, ':');
      size_t len = end != NULL ? (size_t) (end - p) : strlen (p);
      const char *dir = len > 0 ? p : ".";   /* an empty entry is the cwd */
      size_t dir_len = len > 0 ? len : 1;

      if (dir_len + 1 + file_len + 1 > sizeof candidate)
        err = ENAMETOOLONG;
      else
        {
          memcpy (candidate, dir, dir_len);
          candidate[dir_len] = '/';
          memcpy (candidate + dir_len + 1, file, file_len + 1);
          execve (candidate, (char *const *) argv, (char *const *) envp);
          err = errno;
          if (err == EACCES)
            saw_eacces = 1;
          else if (err != ENOENT && err != ENOTDIR && err != ENAMETOOLONG && err != ELOOP)
            return err;
        }
      if (end == NULL)
        break;
      p = end + 1;
    }
  return saw_eacces ? EACCES : err;
}

static void
child_exec (const int                fds[3],
            int                      report_fd,
            const SbxSpawnRequestV1 *request)
{
  sigset_t empty;
  int high[3];

  /* Default dispositions and an empty mask, whatever the host's threads had. */
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal (sig, SIG_DFL);
  sigemptyset (&empty);
  sigprocmask (SIG_SETMASK, &empty, NULL);

  /* A new session: signal() and finish() address the whole group. */
  if (setsid () < 0)
    child_fail (report_fd, STEP_SETSID, errno);

  /* The host's fds may be equal to each other or to 0..2: copy all three
   * above 2 first, then put them in place. */
  for (int i = 0; i < 3; i++)
    if ((high[i] = fcntl (fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
      child_fail (report_fd, STEP_DUP, errno);
  for (int i = 0; i < 3; i++)
    if (dup2 (high[i], i) < 0)
      child_fail (report_fd, STEP_DUP, errno);
  /* Nothing but 0, 1 and 2 crosses execve (the report pipe is CLOEXEC too,
   * so its EOF tells the parent that execve succeeded). */
  syscall (SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);

  if (chdir (request->cwd) < 0)
    child_fail (report_fd, STEP_CHDIR, errno);

  /* A confining backend applies its confinement here, last before exec. */

  child_fail (report_fd, STEP_EXEC, child_execvpe (request->argv[0], request->argv, request->envp));
}

static int32_t
skeleton_spawn (void                    *plugin_ctx,
                SbxHostCall             *call,
                void                    *spec_ptr,
                const SbxSpawnRequestV1 *request,
                SbxSpawnResultV1        *result)
{
  SkeletonPlugin *plugin = plugin_ctx;
  SkeletonSpec *spec = spec_ptr;
  SkeletonChild *child;
  ChildReport report;
  int report_pipe[2];
  int null_fd = -1;
  int fds[3];
  ssize_t got;
  pid_t pid;

  if (spec == NULL || spec->magic != SKELETON_SPEC_MAGIC)
    {
      fail (plugin, call, SBX_STATUS_INVALID, "skeleton: spawn with a foreign spec");
      return SBX_STATUS_INVALID;
    }
  if (request == NULL || !SBX_ABI_HAS (request, SbxSpawnRequestV1, stderr_fd)
      || request->argv == NULL || request->argv[0] == NULL || request->argv[0][0] == '\0'
      || request->envp == NULL || request->cwd == NULL || request->cwd[0] != '/')
    {
      fail (plugin, call, SBX_STATUS_INVALID,
            "skeleton: a spawn request needs argv[0], an environment and an absolute cwd");
      return SBX_STATUS_INVALID;
    }
  if ((request->flags & SBX_SPAWN_PTY) != 0)
    {
      fail (plugin, call, SBX_STATUS_UNSUPPORTED, "skeleton: terminal spawns are not supported");
      return SBX_STATUS_UNSUPPORTED;
    }

  fds[0] = request->stdin_fd;
  fds[1] = request->stdout_fd;
  fds[2] = request->stderr_fd;
  if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0)
    {
      null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd < 0)
        {
          int err = errno;

          fail (plugin, call, SBX_STATUS_FAILED, "skeleton: open(/dev/null): %s", strerror (err));
          return SBX_STATUS_FAILED;
        }
      for (int i = 0; i < 3; i++)
        if (fds[i] < 0)
          fds[i] = null_fd;
    }
  child = calloc (1, sizeof *child);
  if (child == NULL || pipe2 (report_pipe, O_CLOEXEC) < 0)
    {
      int err = child == NULL ? ENOMEM : errno;

      free (child);
      if (null_fd >= 0)
        close (null_fd);
      fail (plugin, call, err == ENOMEM ? SBX_STATUS_NO_MEMORY : SBX_STATUS_FAILED,
            "skeleton: preparing the spawn: %s", strerror (err));
      return err == ENOMEM ? SBX_STATUS_NO_MEMORY : SBX_STATUS_FAILED;
    }

  /* fork from the calling thread: the child is the host's direct child. */
  pid = fork ();
  if (pid == 0)
    {
      close (report_pipe[0]);
      child_exec (fds, report_pipe[1], request);
    }
  {
    int err = errno;

    close (report_pipe[1]);
    if (null_fd >= 0)
      close (null_fd);
    if (pid < 0)
      {
        close (report_pipe[0]);
        free (child);
        fail (plugin, call, SBX_STATUS_FAILED, "skeleton: fork: %s", strerror (err));
        return SBX_STATUS_FAILED;
      }
  }

  /* EOF: execve succeeded (the close-on-exec write end went away with it).
   * A report: a step failed; the child has exited. */
  do
    got = read (report_pipe[0], &report, sizeof report);
  while (got < 0 && errno == EINTR);
  close (report_pipe[0]);
  if (got != 0)
    {
      int32_t status = SBX_STATUS_FAILED;
      const char *what = request->argv[0];
      const char *step = "execve";

      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      free (child);
      if (got != (ssize_t) sizeof report)
        {
          fail (plugin, call, SBX_STATUS_FAILED, "skeleton: the child failed before exec (short report)");
          return SBX_STATUS_FAILED;
        }
      switch (report.step)
        {
        case STEP_DUP: step = "dup2 of the standard fds"; break;
        case STEP_SETSID: step = "setsid"; break;
        case STEP_CHDIR: step = "chdir"; what = request->cwd; break;
        default: break;
        }
      if (report.step == STEP_EXEC && (report.err == ENOENT || report.err == ENOTDIR))
        status = SBX_STATUS_EXEC_NOT_FOUND;
      else if (report.step == STEP_EXEC
               && (report.err == EACCES || report.err == EPERM || report.err == ENOEXEC))
        status = SBX_STATUS_EXEC_DENIED;
      fail (plugin, call, status, "skeleton: %s(%s): %s", step, what, strerror (report.err));
      return status;
    }

  child->pid = pid;
  result->pid = pid;
  result->pidfd = -1;              /* the host opens one itself */
  result->proxy_listen_fd = -1;
  result->containment = SBX_CONTAINMENT_BEST_EFFORT;
  result->child = child;
  return SBX_STATUS_OK;
}

static int32_t
skeleton_signal (void    *plugin_ctx,
                 void    *child_ptr,
                 int32_t  signo)
{
  SkeletonChild *child = child_ptr;

  (void) plugin_ctx;
  if (child == NULL || child->pid <= 0)
    return SBX_STATUS_INVALID;
  if (kill (-child->pid, signo) < 0 && errno != ESRCH)
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

static int32_t
skeleton_finish (void        *plugin_ctx,
                 SbxHostCall *call,
                 void        *child_ptr,
                 int32_t      wait_status,
                 SbxExitV1   *out)
{
  SkeletonPlugin *plugin = plugin_ctx;
  SkeletonChild *child = child_ptr;
  struct timespec start, now;
  pid_t group;

  if (child == NULL || child->pid <= 0)
    {
      fail (plugin, call, SBX_STATUS_INVALID, "skeleton: finish without a child");
      return SBX_STATUS_INVALID;
    }
  group = child->pid;
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

  /* Kill what is left of the group until kill() says no member (not even a
   * zombie) remains, bounded in time. */
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (;;)
    {
      struct timespec pause = { 0, 1000 * 1000 };

      if (kill (-group, SIGKILL) < 0 && errno == ESRCH)
        return SBX_STATUS_OK;
      clock_gettime (CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) > SKELETON_SWEEP_NS)
        break;
      nanosleep (&pause, NULL);
    }
  fail (plugin, call, SBX_STATUS_FAILED,
        "skeleton: process group %d still has members after SIGKILL", (int) group);
  return SBX_STATUS_FAILED;
}

static void
skeleton_release (void *plugin_ctx,
                  void *spec)
{
  (void) plugin_ctx;
  free (spec);
}

static const SbxBackendVTableV1 skeleton_backend = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = skeleton_probe,
  .compile = skeleton_compile,
  .spawn = skeleton_spawn,
  .signal = skeleton_signal,
  .finish = skeleton_finish,
  .release = skeleton_release,
  .supports_grant_class = NULL,  /* optional */
};

static const SbxPluginExtension skeleton_extensions[] = {
  {
    .struct_size = sizeof (SbxPluginExtension),
    .kind = SBX_EXT_BACKEND,
    .name = "skeleton",
    .priority = -50,   /* below every confining backend */
    .vtable = &skeleton_backend,
  },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

/* Exports sbx_plugin_skeleton_entry; the file must be sbx-plugin-skeleton.so. */
SBX_PLUGIN_DEFINE (skeleton, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   skeleton_init, skeleton_fini, skeleton_extensions)
