/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <sbx/sbx-plugin-util.h> and <sbx/sbx-plugin-posix.h> on their own: no
 * GLib, no library, as a plugin built against the installed SDK uses them,
 * with a host table of this test's own.  Each case checks one promise of
 * the headers: the failure shape, the host and request checks (one row per
 * refusal, next to the request they accept), the exec candidates, and the
 * fork spawn's contract (returns after exec, exec failures as statuses with
 * the step, standard fds, nothing else inherited, PATH from envp only,
 * ignored signals, the group signal and sweep), each with the case that
 * succeeds beside the one that is refused.  TAP on stdout.
 */
#include <sbx/sbx-plugin-posix.h>
#include <sbx/sbx-plugin-util.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>

static int n_failed, n_run;

static void
check (int         ok,
       const char *name)
{
  n_run++;
  printf ("%s %d - %s\n", ok ? "ok" : "not ok", n_run, name);
  if (!ok)
    n_failed++;
}

/* The host: set_error records the last status and message. */
static int32_t last_status;
static char last_message[2048];

static void
host_set_error (SbxHostCall *call,
                int32_t      status,
                const char  *message)
{
  (void) call;
  last_status = status;
  snprintf (last_message, sizeof last_message, "%s", message);
}

static void
host_report (SbxHostCall *call,
             const char  *feature,
             uint32_t     status,
             const char  *detail)
{
  (void) call; (void) feature; (void) status; (void) detail;
}

static void
host_log (uint32_t    level,
          const char *domain,
          const char *message)
{
  (void) domain; (void) level; (void) message;
}

static void *
host_alloc (size_t size)
{
  return malloc (size);
}

static void
host_release (void *p)
{
  free (p);
}

static SbxHostV1 host = {
  .struct_size = sizeof (SbxHostV1),
  .abi_version = SBX_PLUGIN_ABI_VERSION,
  .set_error = host_set_error,
  .report = host_report,
  .log = host_log,
  .alloc = host_alloc,
  .release = host_release,
};

static void
reset_error (void)
{
  last_status = 0;
  last_message[0] = '\0';
}

static int
count_fds (void)
{
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *entry;
  int n = 0;

  if (dir == NULL)
    return -1;
  while ((entry = readdir (dir)) != NULL)
    if (entry->d_name[0] != '.')
      n++;
  closedir (dir);
  return n;
}

static void
test_fail (void)
{
  char longer[3000];
  int32_t status;

  reset_error ();
  status = sbx_plugin_fail (&host, NULL, SBX_STATUS_UNAVAILABLE, "who: %s %d", "thing", 7);
  check (status == SBX_STATUS_UNAVAILABLE && last_status == SBX_STATUS_UNAVAILABLE
         && strcmp (last_message, "who: thing 7") == 0, "fail: returns the status and hands the message to set_error");
  memset (longer, 'x', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  sbx_plugin_fail (&host, NULL, SBX_STATUS_FAILED, "%s", longer);
  check (strlen (last_message) == SBX_PLUGIN_MESSAGE_MAX - 1, "fail: a long message is cut, NUL-terminated");
}

static void
test_check_host (void)
{
  SbxHostV1 bad;

  check (sbx_plugin_check_host (&host) == SBX_STATUS_OK, "check-host: a complete table is accepted");
  check (sbx_plugin_check_host (NULL) == SBX_STATUS_INVALID, "check-host: NULL is refused");
  bad = host;
  bad.struct_size = SBX_HOST_V1_MIN_SIZE - 1;
  check (sbx_plugin_check_host (&bad) == SBX_STATUS_INVALID, "check-host: a table below the first layout is refused");
  bad = host;
  bad.abi_version = SBX_PLUGIN_ABI_VERSION + 1;
  check (sbx_plugin_check_host (&bad) == SBX_STATUS_INVALID, "check-host: another ABI version is refused");
  bad = host;
  bad.set_error = NULL;
  check (sbx_plugin_check_host (&bad) == SBX_STATUS_INVALID, "check-host: a table without set_error is refused");
}

static const char *const sh_argv[] = { "sh", "-c", "exit 0", NULL };
static const char *const bin_envp[] = { "PATH=/nonexistent-sbx-dir:/usr/bin:/bin", NULL };

static SbxSpawnRequestV1
request_for (const char *const *argv,
             const char *const *envp)
{
  SbxSpawnRequestV1 request;

  memset (&request, 0, sizeof request);
  request.struct_size = sizeof request;
  request.cwd = "/";
  request.argv = argv;
  request.envp = envp;
  request.stdin_fd = request.stdout_fd = request.stderr_fd = -1;
  return request;
}

static SbxSpawnResultV1
result_new (void)
{
  SbxSpawnResultV1 result;

  memset (&result, 0, sizeof result);
  result.struct_size = sizeof result;
  result.pidfd = result.proxy_listen_fd = result.pty_master_fd = -1;
  return result;
}

static void
test_check_spawn_request (void)
{
  static const char *const empty_argv[] = { "", NULL };
  const struct
  {
    const char *name;
    int32_t     want;
    uint32_t    supported;
    uint32_t    flags;
    uint64_t    ignored;
    const char *cwd;
    int         empty_argv0;
    uint32_t    struct_size;
  } rows[] = {
    { "a plain request is accepted", SBX_STATUS_OK, 0, 0, 0, "/", 0, 0 },
    { "ignored signals are accepted where supported", SBX_STATUS_OK, SBX_SPAWN_IGNORED_SIGNALS,
      SBX_SPAWN_IGNORED_SIGNALS, SBX_PLUGIN_SIGNAL_BIT (SIGHUP), "/", 0, 0 },
    { "a relative cwd is refused", SBX_STATUS_INVALID, 0, 0, 0, "tmp", 0, 0 },
    { "an empty argv[0] is refused", SBX_STATUS_INVALID, 0, 0, 0, "/", 1, 0 },
    { "a request below the first layout is refused", SBX_STATUS_INVALID, 0, 0, 0, "/", 0,
      (uint32_t) SBX_SPAWN_REQUEST_V1_MIN_SIZE - 1 },
    { "a terminal spawn is unsupported", SBX_STATUS_UNSUPPORTED, SBX_SPAWN_IGNORED_SIGNALS, SBX_SPAWN_PTY, 0, "/", 0, 0 },
    { "a sandbox terminal is unsupported", SBX_STATUS_UNSUPPORTED, 0, SBX_SPAWN_PTY_SANDBOX, 0, "/", 0, 0 },
    { "an unknown flag is unsupported", SBX_STATUS_UNSUPPORTED, 0xffffffffu, 0x100, 0, "/", 0, 0 },
    { "ignored signals are unsupported where not supported", SBX_STATUS_UNSUPPORTED, 0,
      SBX_SPAWN_IGNORED_SIGNALS, SBX_PLUGIN_SIGNAL_BIT (SIGHUP), "/", 0, 0 },
    { "an empty ignored set is refused", SBX_STATUS_INVALID, SBX_SPAWN_IGNORED_SIGNALS,
      SBX_SPAWN_IGNORED_SIGNALS, 0, "/", 0, 0 },
    { "SIGKILL cannot start ignored", SBX_STATUS_INVALID, SBX_SPAWN_IGNORED_SIGNALS,
      SBX_SPAWN_IGNORED_SIGNALS, SBX_PLUGIN_SIGNAL_BIT (SIGKILL), "/", 0, 0 },
    { "SIGSTOP cannot start ignored", SBX_STATUS_INVALID, SBX_SPAWN_IGNORED_SIGNALS,
      SBX_SPAWN_IGNORED_SIGNALS, SBX_PLUGIN_SIGNAL_BIT (SIGSTOP), "/", 0, 0 },
    { "ignored signals in a request too small to carry them are refused", SBX_STATUS_INVALID,
      SBX_SPAWN_IGNORED_SIGNALS, SBX_SPAWN_IGNORED_SIGNALS, SBX_PLUGIN_SIGNAL_BIT (SIGHUP), "/", 0,
      (uint32_t) SBX_SPAWN_REQUEST_V1_LISTEN_SIZE },
  };

  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    {
      SbxSpawnRequestV1 request = request_for (rows[i].empty_argv0 ? empty_argv : sh_argv, bin_envp);
      SbxSpawnResultV1 result = result_new ();
      char name[256];
      int32_t status;

      request.flags = rows[i].flags;
      request.ignored_signals = rows[i].ignored;
      request.cwd = rows[i].cwd;
      if (rows[i].struct_size != 0)
        request.struct_size = rows[i].struct_size;
      reset_error ();
      status = sbx_plugin_check_spawn_request (&host, NULL, "test", &request, &result, rows[i].supported);
      snprintf (name, sizeof name, "check-spawn-request: %s", rows[i].name);
      check (status == rows[i].want
             && (status == SBX_STATUS_OK ? last_message[0] == '\0'
                 : last_status == status && strncmp (last_message, "test: ", 6) == 0), name);
    }
}

static void
test_exec_candidates (void)
{
  static const char *const envp[] = { "HOME=/h", "PATH=/a::/b", NULL };
  static const char *const no_path[] = { "HOME=/h", NULL };
  char **c = sbx_plugin_exec_candidates ("/bin/true", envp, NULL);

  check (c != NULL && strcmp (c[0], "/bin/true") == 0 && c[1] == NULL, "exec-candidates: a name with '/' is itself");
  sbx_plugin_strv_free (c);
  c = sbx_plugin_exec_candidates ("prog", envp, NULL);
  check (c != NULL && strcmp (c[0], "/a/prog") == 0 && strcmp (c[1], "./prog") == 0
         && strcmp (c[2], "/b/prog") == 0 && c[3] == NULL,
         "exec-candidates: each PATH entry of envp, an empty one is the working directory");
  sbx_plugin_strv_free (c);
  c = sbx_plugin_exec_candidates ("prog", no_path, NULL);
  check (c != NULL && strcmp (c[0], "/usr/local/bin/prog") == 0 && strcmp (c[1], "/usr/bin/prog") == 0
         && strcmp (c[2], "/bin/prog") == 0 && c[3] == NULL,
         "exec-candidates: without PATH, SBX_SPAWN_DEFAULT_PATH");
  sbx_plugin_strv_free (c);
  c = sbx_plugin_exec_candidates ("prog", no_path, "/x");
  check (c != NULL && strcmp (c[0], "/x/prog") == 0 && c[1] == NULL, "exec-candidates: the caller's default list");
  sbx_plugin_strv_free (c);
}

/* Spawns @argv with @envp (stdout to a pipe when @out is non-NULL, which
 * gets what the child wrote), waits for it; returns the spawn status and
 * the exit in @exit_out. */
static int32_t
spawn_and_wait (const char *const    *argv,
                const char *const    *envp,
                const char           *cwd,
                uint64_t              ignored,
                SbxPluginConfineFunc *confine,
                char                 *out,
                size_t                out_size,
                SbxExitV1            *exit_out)
{
  SbxSpawnRequestV1 request = request_for (argv, envp);
  SbxSpawnResultV1 result = result_new ();
  SbxPluginGroup group = { 0, 0 };
  int out_pipe[2] = { -1, -1 };
  int32_t status;
  int wait_status;

  request.cwd = cwd;
  if (ignored != 0)
    {
      request.flags |= SBX_SPAWN_IGNORED_SIGNALS;
      request.ignored_signals = ignored;
    }
  if (out != NULL)
    {
      if (pipe2 (out_pipe, O_CLOEXEC) < 0)
        return -1;
      request.stdout_fd = out_pipe[1];
    }
  reset_error ();
  status = sbx_plugin_check_spawn_request (&host, NULL, "test", &request, &result, SBX_SPAWN_IGNORED_SIGNALS);
  if (status == SBX_STATUS_OK)
    status = sbx_plugin_fork_spawn (&host, NULL, "test", &request, confine, NULL, &group, &result);
  if (out_pipe[1] >= 0)
    close (out_pipe[1]);
  if (out != NULL)
    {
      ssize_t n = status == SBX_STATUS_OK ? read (out_pipe[0], out, out_size - 1) : 0;

      out[n > 0 ? n : 0] = '\0';
      close (out_pipe[0]);
    }
  if (status != SBX_STATUS_OK)
    return status;
  if (result.pid != group.pid || (ignored != 0) != ((result.honoured_flags & SBX_SPAWN_IGNORED_SIGNALS) != 0))
    return -2;
  while (waitpid (group.pid, &wait_status, 0) < 0 && errno == EINTR)
    ;
  sbx_plugin_exit_from_wait_status (wait_status, exit_out);
  return sbx_plugin_group_sweep (group.pid, INT64_C (2000000000), NULL) == 0 ? SBX_STATUS_OK : -3;
}

static int
confine_refuses (void *data)
{
  (void) data;
  return EPERM;
}

static void
test_fork_spawn (void)
{
  static const char *const exit3[] = { "sh", "-c", "echo ran; exit 3", NULL };
  static const char *const missing[] = { "no-such-program-for-sbx-util", NULL };
  static const char *const stdin_argv[] = { "sh", "-c", "read x; echo \"[$x]\"", NULL };
  static const char *const usr1[] = { "sh", "-c", "kill -USR1 $$; exit 7", NULL };
  static const char *const only_missing_path[] = { "PATH=/nonexistent-sbx-dir", NULL };
  char script[] = "/tmp/sbx-util-noexec.XXXXXX";
  char fd_argv2[128];
  const char *fd_argv[] = { "sh", "-c", fd_argv2, NULL };
  const char *noexec_argv[] = { script, NULL };
  char out[256];
  SbxExitV1 ex;
  int32_t status;
  int before;
  int leak_fd;
  int tmp;

  status = spawn_and_wait (exit3, bin_envp, "/", 0, NULL, out, sizeof out, &ex);
  check (status == SBX_STATUS_OK && strcmp (out, "ran\n") == 0 && ex.kind == SBX_EXIT_EXITED && ex.code == 3,
         "fork-spawn: runs argv[0] from envp's PATH, stdout is the request's, the exit is the target's");

  before = count_fds ();
  status = spawn_and_wait (missing, bin_envp, "/", 0, NULL, NULL, 0, &ex);
  check (status == SBX_STATUS_EXEC_NOT_FOUND && last_status == status
         && strstr (last_message, "test: execve(no-such-program-for-sbx-util): ") == last_message
         && count_fds () == before,
         "fork-spawn: a missing program is EXEC_NOT_FOUND naming execve and the program; no fd left");
  status = spawn_and_wait (sh_argv, only_missing_path, "/", 0, NULL, NULL, 0, &ex);
  check (status == SBX_STATUS_EXEC_NOT_FOUND, "fork-spawn: the host's PATH is never searched (sh not found)");

  tmp = mkstemp (script);
  if (tmp >= 0)
    {
      (void) write (tmp, "#!/bin/sh\n", 10);
      close (tmp);
      chmod (script, 0644);
    }
  status = spawn_and_wait (noexec_argv, bin_envp, "/", 0, NULL, NULL, 0, &ex);
  check (tmp >= 0 && status == SBX_STATUS_EXEC_DENIED && strstr (last_message, "execve(") != NULL,
         "fork-spawn: a file without x permission is EXEC_DENIED");
  chmod (script, 0755);
  status = spawn_and_wait (noexec_argv, bin_envp, "/", 0, NULL, NULL, 0, &ex);
  check (status == SBX_STATUS_OK && ex.kind == SBX_EXIT_EXITED && ex.code == 0,
         "fork-spawn: the same file with x permission runs (control)");
  unlink (script);

  status = spawn_and_wait (sh_argv, bin_envp, "/nonexistent-sbx-cwd", 0, NULL, NULL, 0, &ex);
  check (status == SBX_STATUS_FAILED && strstr (last_message, "test: chdir(/nonexistent-sbx-cwd): ") == last_message,
         "fork-spawn: a missing cwd fails naming chdir and the directory");
  status = spawn_and_wait (sh_argv, bin_envp, "/", 0, confine_refuses, NULL, 0, &ex);
  check (status == SBX_STATUS_FAILED && strstr (last_message, "test: confine(") == last_message,
         "fork-spawn: a failing confinement fails the spawn naming confine");

  status = spawn_and_wait (stdin_argv, bin_envp, "/", 0, NULL, out, sizeof out, &ex);
  check (status == SBX_STATUS_OK && strcmp (out, "[]\n") == 0, "fork-spawn: stdin -1 is /dev/null");

  /* An fd of the host without close-on-exec: visible to a plain child of
   * this process (control), not to the target. */
  leak_fd = open ("/dev/null", O_RDONLY);
  snprintf (fd_argv2, sizeof fd_argv2, "if [ -e /proc/self/fd/%d ]; then echo open; else echo closed; fi", leak_fd);
  {
    char control[64] = "";
    char cmd[200];
    FILE *p;

    snprintf (cmd, sizeof cmd, "%s", fd_argv2);
    p = popen (cmd, "r");
    if (p != NULL)
      {
        if (fgets (control, sizeof control, p) == NULL)
          control[0] = '\0';
        pclose (p);
      }
    status = spawn_and_wait (fd_argv, bin_envp, "/", 0, NULL, out, sizeof out, &ex);
    check (leak_fd >= 3 && strcmp (control, "open\n") == 0 && status == SBX_STATUS_OK && strcmp (out, "closed\n") == 0,
           "fork-spawn: only 0, 1 and 2 cross execve (an inheritable fd of the host does not)");
  }
  close (leak_fd);

  status = spawn_and_wait (usr1, bin_envp, "/", 0, NULL, NULL, 0, &ex);
  check (status == SBX_STATUS_OK && ex.kind == SBX_EXIT_SIGNALED && ex.signo == SIGUSR1,
         "fork-spawn: SIGUSR1 at its default kills the target (control)");
  status = spawn_and_wait (usr1, bin_envp, "/", SBX_PLUGIN_SIGNAL_BIT (SIGUSR1), NULL, NULL, 0, &ex);
  check (status == SBX_STATUS_OK && ex.kind == SBX_EXIT_EXITED && ex.code == 7,
         "fork-spawn: SIGUSR1 in the ignored set starts ignored (honoured_flags says so)");
}

static void
test_group (void)
{
  static const char *const sleeper[] = { "sleep", "1000", NULL };
  SbxSpawnRequestV1 request = request_for (sleeper, bin_envp);
  SbxSpawnResultV1 result = result_new ();
  SbxPluginGroup group = { 0, 0 };
  SbxExitV1 ex;
  int wait_status = 0;
  int32_t status;

  status = sbx_plugin_fork_spawn (&host, NULL, "test", &request, NULL, NULL, &group, &result);
  check (status == SBX_STATUS_OK && getpgid (group.pid) == group.pid && getsid (group.pid) == group.pid,
         "group: the target leads its own session and process group");
  if (status != SBX_STATUS_OK)
    return;
  check (sbx_plugin_group_signal (&group, SIGTERM) == SBX_STATUS_OK
         && waitpid (group.pid, &wait_status, 0) == group.pid,
         "group: signal reaches the group");
  sbx_plugin_exit_from_wait_status (wait_status, &ex);
  check (ex.kind == SBX_EXIT_SIGNALED && ex.signo == SIGTERM, "group: the exit says SIGTERM");
  check (sbx_plugin_group_sweep (group.pid, INT64_C (2000000000), NULL) == 0, "group: the sweep finds the group gone");
  check (sbx_plugin_group_signal (&group, SIGTERM) == SBX_STATUS_OK, "group: signalling a group that is gone is not an error");
}

int
main (void)
{
  test_fail ();
  test_check_host ();
  test_check_spawn_request ();
  test_exec_candidates ();
  test_fork_spawn ();
  test_group ();
  printf ("1..%d\n", n_run);
  return n_failed == 0 ? 0 : 1;
}
