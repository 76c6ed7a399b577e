/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sandbox-wide limits (plugins/linux/sbx-linux-cgroup.c), both rungs, as
 * root and not:
 *
 *  - a fork loop is stopped at the profile's process limit (the count is
 *    printed), and the report says which limit applied; a memory hog made
 *    of processes each under the per-process limit is stopped below the
 *    sandbox's limit and the supervisor survives; each with the positive
 *    control outside the sandbox;
 *  - no cgroup directory is left after a run, or after the supervisor is
 *    killed with SIGKILL (the next compile reaps it);
 *  - without a usable cgroup (an unprivileged user without delegation) the
 *    report says "rlimit fallback" and resource-limits is not claimed;
 *  - the unprivileged delegation path against a mock systemd user manager
 *    (python3-dbusmock) on a fake cgroup tree: the call it records, the
 *    scope it "delegates", the per-sandbox cgroup made inside.
 *
 * These are the cases of one module, sandbox-wide limits (sbx-linux-cgroup.c): one GTest
 * binary per concept, so it is over a thousand lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sys/wait.h>

#include "backend-test-util.h"
#include "executor-test-util.h"
#include "sbx-linux-private.h"

#define MIB (G_GUINT64_CONSTANT (1) << 20)

static const char *self_exe;

static const char fork_loop_py[] =
  "import os\n"
  "r, w = os.pipe()\n"
  "n = 0\n"
  "err = 'none'\n"
  "for i in range(2048):\n"
  "    try:\n"
  "        pid = os.fork()\n"
  "    except OSError as e:\n"
  "        err = 'EAGAIN' if e.errno == 11 else str(e.errno)\n"
  "        break\n"
  "    if pid == 0:\n"
  "        os.close(w)\n"
  "        os.read(r, 1)\n"
  "        os._exit(0)\n"
  "    n += 1\n"
  "print(n, err)\n"
  "os.close(w)\n"
  "for i in range(n):\n"
  "    os.wait()\n";

/* Children each holding 16 MiB (under the 64 MiB per-process RLIMIT_DATA),
 * one after the other, until one is killed: prints how many were held. */
static const char memory_hog_py[] =
  "import os, time\n"
  "MB = 1 << 20\n"
  "kids = []\n"
  "held = 0\n"
  "stopped = 'no'\n"
  "for i in range(8):\n"
  "    r, w = os.pipe()\n"
  "    pid = os.fork()\n"
  "    if pid == 0:\n"
  "        os.close(r)\n"
  "        b = bytearray(16 * MB)\n"
  "        for j in range(0, len(b), 4096):\n"
  "            b[j] = 1\n"
  "        os.write(w, b'k')\n"
  "        time.sleep(60)\n"
  "        os._exit(0)\n"
  "    os.close(w)\n"
  "    ok = os.read(r, 1) == b'k'\n"
  "    os.close(r)\n"
  "    kids.append(pid)\n"
  "    time.sleep(0.2)\n"   /* an OOM kill of an earlier child lands meanwhile */
  "    dead = [k for k in kids if os.waitpid(k, os.WNOHANG)[0] != 0]\n"
  "    if not ok or dead:\n"
  "        stopped = 'killed'\n"
  "        break\n"
  "    held += 1\n"
  "print(held, stopped, flush=True)\n"
  "for k in kids:\n"
  "    try:\n"
  "        os.kill(k, 9)\n"
  "    except OSError:\n"
  "        pass\n"
  "for k in kids:\n"
  "    try:\n"
  "        os.waitpid(k, 0)\n"
  "    except OSError:\n"
  "        pass\n";

typedef struct
{
  char             *ws;
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
} Fixture;

static gboolean
fixture_setup (Fixture    *fx,
               const char *rung,
               guint64     max_pids,
               guint64     max_memory)
{
  g_autofree char *why = NULL;

  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  fx->ws = etu_make_tmpdir ("sbx-cgroup-XXXXXX");
  fx->policy = linux_test_policy_new (fx->ws, 2, 2, 0, 0);
  linux_test_policy_set_limits (fx->policy, max_pids, max_memory, 0);
  fx->backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  return TRUE;
}

static void
fixture_teardown (Fixture *fx)
{
  g_clear_pointer (&fx->backend, linux_test_backend_free);
  g_clear_pointer (&fx->policy, linux_test_policy_free);
  if (fx->ws != NULL)
    etu_rm_rf (fx->ws);
  g_clear_pointer (&fx->ws, g_free);
}

static LinuxTestRun *
sandbox_python (Fixture    *fx,
                const char *code)
{
  const char *argv[] = { "python3", "-c", code, NULL };

  return linux_test_backend_run (fx->backend, fx->policy, fx->ws, argv, NULL, NULL);
}

static char *
host_python (const char *code)
{
  const char *argv[] = { "/usr/bin/python3", "-c", code, NULL };
  char *out = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               NULL, &status, NULL));
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  return out;
}

/* The report must admit the gap: no cgroup, rlimit fallback, no bit. */
static void
assert_rlimit_fallback_reported (Fixture *fx)
{
  const LinuxTestEntry *rl = linux_test_backend_entry (fx->backend, "resource-limits");

  g_assert_nonnull (rl);
  g_assert_cmpuint (rl->status, ==, SBX_ABI_REPORT_UNENFORCED);
  g_assert_nonnull (strstr (rl->detail, "rlimit fallback"));
  g_assert_false (fx->backend->guarantees & SBX_ABI_GUARANTEE_RESOURCE_LIMITS);
}

/* The per-sandbox cgroup directories @pid is in (under the process-wide
 * base the plugin uses), or NULL when it is in none of ours. */
static GPtrArray *
sandbox_cgroup_dirs (pid_t pid)
{
  const SbxCgroupBase *base = sbx_cgroup_base_get ();
  g_autofree char *path = g_strdup_printf ("/proc/%d/cgroup", (int) pid);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *name = NULL;
  GPtrArray *dirs;

  if (base->mode == SBX_CGROUP_NONE || !g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i] != NULL && name == NULL; i++)
    {
      const char *slash = strrchr (lines[i], '/');

      if (slash != NULL && g_str_has_prefix (slash + 1, "sbx-")
          && g_str_has_prefix (slash + 1, base->prefix))
        name = g_strdup (slash + 1);
    }
  if (name == NULL)
    return NULL;
  dirs = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < base->n_dirs; i++)
    g_ptr_array_add (dirs, g_build_filename (base->dirs[i], name, NULL));
  return dirs;
}

/* ------------------------------------------------------------------------- */

static void
test_fork_loop (gconstpointer rung)
{
  Fixture fx = { 0 };
  const LinuxTestEntry *e;
  g_autoptr(LinuxTestRun) run = NULL;
  g_autofree char *host_out = NULL;
  int children = -1;
  char err[32] = "";

  /* The default profile's process limit. */
  if (!fixture_setup (&fx, rung, 1024, 1024 * MIB))
    return;
  e = linux_test_backend_entry (fx.backend, "process-limit");
  g_assert_nonnull (e);
  if (e->status != SBX_ABI_REPORT_ENFORCED)
    {
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
      assert_rlimit_fallback_reported (&fx);
      g_test_skip_printf ("no sandbox-wide process limit for this caller on this rung, and the "
                          "report says so: %s", e->detail);
      fixture_teardown (&fx);
      return;
    }

  /* Positive control: the same loop runs to its bound outside. */
  host_out = host_python (fork_loop_py);
  g_assert_cmpint (atoi (host_out), ==, 2048);

  run = sandbox_python (&fx, fork_loop_py);
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_EXITED);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_cmpint (sscanf (run->out, "%d %31s", &children, err), ==, 2);
  g_assert_cmpstr (err, ==, "EAGAIN");
  g_test_message ("%s: the fork loop stopped at %d children (%s): %s", (const char *) rung,
                  children, strstr (e->detail, "pids.max") != NULL ? "pids.max" : "RLIMIT_NPROC",
                  e->detail);
  if (g_getenv ("SBX_TEST_PRINT_FIGURES") != NULL)
    g_printerr ("FIGURE %s fork-loop %d %s\n", (const char *) rung, children,
                strstr (e->detail, "pids.max") != NULL ? "pids.max" : "RLIMIT_NPROC");
  /* 1024 tasks of the command (python and 1023 children), plus sbx-init. */
  g_assert_cmpint (children, <=, 1023);
  g_assert_cmpint (children, >=, 1000);

  if (strstr (e->detail, "pids.max") != NULL)
    {
      const LinuxTestEntry *rl = linux_test_backend_entry (fx.backend, "resource-limits");

      g_assert_true (fx.backend->guarantees & SBX_ABI_GUARANTEE_RESOURCE_LIMITS);
      g_assert_cmpuint (rl->status, ==, SBX_ABI_REPORT_ENFORCED);
    }
  else
    {
      /* RLIMIT_NPROC in the user namespace: per executor, not per sandbox. */
      g_assert_nonnull (strstr (e->detail, "rlimit fallback"));
      assert_rlimit_fallback_reported (&fx);
    }
  fixture_teardown (&fx);
}

static void
test_memory_hog (gconstpointer rung)
{
  Fixture fx = { 0 };
  const LinuxTestEntry *e;
  g_autoptr(LinuxTestRun) run = NULL;
  g_autoptr(LinuxTestRun) after = NULL;
  g_autofree char *host_out = NULL;
  int held = -1;
  char stopped[16] = "";

  if (!fixture_setup (&fx, rung, 64, 64 * MIB))
    return;
  e = linux_test_backend_entry (fx.backend, "memory-limit");
  g_assert_nonnull (e);
  if (e->status != SBX_ABI_REPORT_ENFORCED)
    {
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
      g_assert_nonnull (strstr (e->detail, "rlimit fallback"));
      assert_rlimit_fallback_reported (&fx);
      g_test_skip_printf ("no sandbox-wide memory limit for this caller, and the report says so: %s",
                          e->detail);
      fixture_teardown (&fx);
      return;
    }
  g_assert_true (fx.backend->guarantees & SBX_ABI_GUARANTEE_RESOURCE_LIMITS);

  /* Positive control: outside, all eight children hold their 16 MiB. */
  host_out = host_python (memory_hog_py);
  g_assert_cmpstr (host_out, ==, "8 no\n");

  run = sandbox_python (&fx, memory_hog_py);
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  if (run->exit.kind == SBX_EXIT_SIGNALED)
    {
      /* The OOM killer chose the hog's parent: stopped all the same. */
      g_assert_cmpint (run->exit.signo, ==, SIGKILL);
      g_test_message ("%s: the memory hog's parent was killed", (const char *) rung);
    }
  else
    {
      g_assert_cmpint (sscanf (run->out, "%d %15s", &held, stopped), ==, 2);
      g_assert_cmpstr (stopped, ==, "killed");
      g_test_message ("%s: the memory hog held %d x 16 MiB under a 64 MiB limit before a child "
                      "was killed", (const char *) rung, held);
      g_assert_cmpint (held * 16, <, 64);
    }

  /* The supervisor survived and the backend still works. */
  after = sandbox_python (&fx, "print('alive')");
  g_assert_cmpint (after->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpstr (after->out, ==, "alive\n");
  fixture_teardown (&fx);
}

static void
test_nothing_left_after_run (gconstpointer rung)
{
  Fixture fx = { 0 };
  const char *argv[] = { "sh", "-c", "echo started; read line", NULL };
  g_autoptr(GPtrArray) dirs = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;
  int in[2];

  if (!fixture_setup (&fx, rung, 64, 256 * MIB))
    return;
  if (!(fx.backend->guarantees & SBX_ABI_GUARANTEE_RESOURCE_LIMITS))
    {
      assert_rlimit_fallback_reported (&fx);
      g_test_skip ("no cgroup for this caller (the report says rlimit fallback): nothing to leave");
      fixture_teardown (&fx);
      return;
    }
  g_assert_cmpint (pipe (in), ==, 0);
  proc = linux_test_backend_start (fx.backend, fx.policy, fx.ws, argv, NULL, in[0], 0, &failed);
  close (in[0]);
  g_assert_nonnull (proc);
  g_assert_true (linux_test_proc_read_until (proc, "started", 10000));
  dirs = sandbox_cgroup_dirs (linux_test_proc_pid (proc));
  g_assert_nonnull (dirs);
  for (guint i = 0; i < dirs->len; i++)
    g_assert_true (g_file_test (g_ptr_array_index (dirs, i), G_FILE_TEST_IS_DIR));
  close (in[1]);
  run = linux_test_proc_wait (proc, NULL);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  for (guint i = 0; i < dirs->len; i++)
    g_assert_false (g_file_test (g_ptr_array_index (dirs, i), G_FILE_TEST_EXISTS));
  fixture_teardown (&fx);
}

/* A child that joins @cg through its join descriptors (as A does), says
 * so on @ready, forks one grandchild that does the same wait, and waits. */
static pid_t
start_member (SbxCgroup *cg,
              int        ready)
{
  int fds[SBX_CGROUP_MAX_DIRS];
  int n = sbx_cgroup_join_fds (cg, fds);
  pid_t pid = fork ();
  pid_t grandchild;

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      for (int i = 0; i < n; i++)
        if (write (fds[i], "0", 1) != 1)
          _exit (1);
      grandchild = fork ();
      if (grandchild < 0)
        _exit (2);
      if (grandchild == 0)
        for (;;)
          pause ();
      if (write (ready, "j", 1) != 1)
        _exit (3);
      for (;;)
        pause ();
    }
  return pid;
}

/* The cgroup's own listing of @dir: how many processes it names. */
static int
count_members (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "cgroup.procs", NULL);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  int n = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    n += lines[i][0] != '\0';
  return n;
}

/* Teardown on the real host, both ways it can find a cgroup:
 *  - with live members (a process that joined as A does, and the child it
 *    forked): destroy kills both and removes every directory;
 *  - emptied (its member exited and was reaped, the usual case after a
 *    run): destroy skips the freeze and removes every directory.
 * Control: before destroy, the cgroup really lists the members. */
static void
test_destroy_real (void)
{
  const SbxCgroupBase *base = sbx_cgroup_base_get ();
  g_autoptr(GError) error = NULL;
  char dirs[SBX_CGROUP_MAX_DIRS][PATH_MAX];
  int n_dirs = base->n_dirs;
  int ready[2];
  char byte;
  int status;

  if (base->mode == SBX_CGROUP_NONE)
    {
      g_test_skip_printf ("no cgroup for this caller: %s", base->failure);
      return;
    }
  g_assert_cmpint (pipe (ready), ==, 0);
  for (int round = 0; round < 2; round++)
    {
      g_autoptr(SbxCgroup) cg = sbx_cgroup_new (base, 16, 64 * MIB, &error);
      gboolean live = round == 0;
      pid_t member;

      g_assert_no_error (error);
      for (int i = 0; i < n_dirs; i++)
        g_strlcpy (dirs[i], base->dirs[i] != NULL ? base->dirs[i] : "", sizeof dirs[i]);
      {
        g_autofree char *name = g_path_get_basename (sbx_cgroup_get_path (cg));

        for (int i = 0; i < n_dirs; i++)
          {
            g_autofree char *full = g_build_filename (dirs[i], name, NULL);

            g_strlcpy (dirs[i], full, sizeof dirs[i]);
          }
      }
      member = start_member (cg, ready[1]);
      g_assert_cmpint (read (ready[0], &byte, 1), ==, 1);
      sbx_cgroup_close_procs (cg);
      for (int i = 0; i < n_dirs; i++)
        g_assert_cmpint (count_members (dirs[i]), ==, 2);
      if (!live)
        {
          /* The member's child is reparented away from us: kill the
           * member's whole cgroup listing the way a run ends (init dies,
           * its tree with it), then reap what is ours. */
          g_autofree char *procs = g_build_filename (dirs[0], "cgroup.procs", NULL);
          g_autofree char *text = NULL;
          g_auto(GStrv) pids = NULL;

          g_assert_true (g_file_get_contents (procs, &text, NULL, NULL));
          pids = g_strsplit (text, "\n", -1);
          for (gsize i = 0; pids[i] != NULL; i++)
            if (pids[i][0] != '\0')
              kill ((pid_t) g_ascii_strtoll (pids[i], NULL, 10), SIGKILL);
          g_assert_cmpint (waitpid (member, &status, 0), ==, member);
          for (int tries = 0; tries < 400 && count_members (dirs[0]) != 0; tries++)
            g_usleep (5000);
          for (int i = 0; i < n_dirs; i++)
            g_assert_cmpint (count_members (dirs[i]), ==, 0);
        }
      g_assert_true (sbx_cgroup_destroy (cg, &error));
      g_assert_no_error (error);
      for (int i = 0; i < n_dirs; i++)
        g_assert_false (g_file_test (dirs[i], G_FILE_TEST_EXISTS));
      if (live)
        {
          g_assert_cmpint (waitpid (member, &status, 0), ==, member);
          g_assert_true (WIFSIGNALED (status));
          g_assert_cmpint (WTERMSIG (status), ==, SIGKILL);
        }
    }
  close (ready[0]);
  close (ready[1]);
}

/* The helper process of the next test: a supervisor that starts a
 * sandbox, prints init's pid and waits to be killed. */
static int
supervisor_main (const char *rung)
{
  Fixture fx = { 0 };
  const char *argv[] = { "sleep", "60", NULL };
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;

  if (!fixture_setup (&fx, rung, 64, 256 * MIB))
    return 2;
  proc = linux_test_backend_start (fx.backend, fx.policy, fx.ws, argv, NULL, -1, 0, &failed);
  if (proc == NULL)
    return 3;
  /* Killed, it cannot clean up: the test removes these. */
  printf ("%d %s %s\n", (int) linux_test_proc_pid (proc), fx.ws,
          linux_test_policy_scratch (fx.policy));
  fflush (stdout);
  for (;;)
    pause ();
}

/* g_spawn child setup: into the memory cgroup @data (a cgroup.procs path). */
static void
join_memory_cgroup (gpointer data)
{
  int fd = open (data, O_WRONLY | O_CLOEXEC);

  if (fd < 0 || write (fd, "0", 1) != 1)
    _exit (99);
  close (fd);
}

/* A supervisor killed, its cgroups reaped by the next compile.  With
 * @elsewhere (root on cgroup v1), the supervisor ran in a memory cgroup of
 * its own, a sibling of this process's (another session or service): its
 * sandbox's memory directory lies there, where this process's base does
 * not point, and is reaped all the same. */
static void
supervisor_kill_case (const char *rung,
                      gboolean    elsewhere)
{
  Fixture fx = { 0 };
  g_auto(GStrv) envp = g_environ_setenv (g_get_environ (), "SBX_TEST_CGROUP_SUPERVISOR", rung, TRUE);
  const char *argv[] = { self_exe, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) dirs = NULL;
  g_autoptr(GIOChannel) channel = NULL;
  g_autofree char *line = NULL;
  g_autofree char *procs = NULL;
  const LinuxTestEntry *reaped;
  g_autofree char *helper_ws = NULL;
  g_autofree char *helper_scratch = NULL;
  g_autofree char *other_memory = NULL;
  g_autofree char *other_procs = NULL;
  GPid helper;
  int out_fd, init_pid, status;

  if (!fixture_setup (&fx, rung, 64, 256 * MIB))
    return;
  if (!(fx.backend->guarantees & SBX_ABI_GUARANTEE_RESOURCE_LIMITS))
    {
      assert_rlimit_fallback_reported (&fx);
      g_test_skip ("no cgroup for this caller (the report says rlimit fallback): nothing to leave");
      fixture_teardown (&fx);
      return;
    }
  if (elsewhere)
    {
      const SbxCgroupBase *base = sbx_cgroup_base_get ();

      if (base->mode != SBX_CGROUP_V1 || base->v1_memory_mount == NULL)
        {
          g_test_skip ("memory cgroups of other sessions: a cgroup v1 matter");
          fixture_teardown (&fx);
          return;
        }
      other_memory = g_strdup_printf ("%s/sbx-test-other-%d", base->v1_memory_mount, (int) getpid ());
      g_assert_cmpint (g_mkdir (other_memory, 0755), ==, 0);
      other_procs = g_build_filename (other_memory, "cgroup.procs", NULL);
    }
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, envp, G_SPAWN_DO_NOT_REAP_CHILD,
                                           elsewhere ? join_memory_cgroup : NULL, other_procs,
                                           &helper, NULL, &out_fd, NULL, &error));
  g_assert_no_error (error);
  channel = g_io_channel_unix_new (out_fd);
  g_io_channel_set_close_on_unref (channel, TRUE);
  g_assert_cmpint (g_io_channel_read_line (channel, &line, NULL, NULL, &error), ==, G_IO_STATUS_NORMAL);
  {
    g_auto(GStrv) words = g_strsplit (g_strstrip (line), " ", 3);

    g_assert_cmpuint (g_strv_length (words), ==, 3);
    init_pid = atoi (words[0]);
    helper_ws = g_strdup (words[1]);
    helper_scratch = g_strdup (words[2]);
  }
  g_assert_cmpint (init_pid, >, 1);

  /* The helper's sandbox has a cgroup of the helper's own name. */
  {
    g_autofree char *path = g_strdup_printf ("/proc/%d/cgroup", init_pid);
    g_autofree char *text = NULL;
    const SbxCgroupBase *base = sbx_cgroup_base_get ();
    g_auto(GStrv) lines = NULL;
    g_autofree char *name = NULL;

    g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
    lines = g_strsplit (text, "\n", -1);
    for (gsize i = 0; lines[i] != NULL && name == NULL; i++)
      {
        const char *slash = strrchr (lines[i], '/');
        g_autofree char *helper_part = g_strdup_printf ("-%d-", (int) helper);

        if (slash != NULL && g_str_has_prefix (slash + 1, "sbx-") && strstr (slash + 1, helper_part) != NULL)
          name = g_strdup (slash + 1);
      }
    g_assert_nonnull (name);
    dirs = g_ptr_array_new_with_free_func (g_free);
    for (int i = 0; i < base->n_dirs; i++)
      g_ptr_array_add (dirs, g_build_filename (elsewhere && i == 1 ? other_memory : base->dirs[i], name, NULL));
  }

  g_assert_cmpint (kill (helper, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (helper, &status, 0), ==, helper);
  g_spawn_close_pid (helper);
  g_assert_true (g_str_has_prefix (helper_ws, g_get_tmp_dir ()));
  g_assert_true (g_str_has_prefix (helper_scratch, g_get_tmp_dir ()));
  /* sbx-init sees the supervisor's pipe close and kills the tree: the
   * cgroup empties, its directories stay until someone reaps them. */
  procs = g_build_filename (g_ptr_array_index (dirs, 0), "cgroup.procs", NULL);
  for (int i = 0; i < 500; i++)
    {
      g_autofree char *text = NULL;

      g_assert_true (g_file_get_contents (procs, &text, NULL, NULL));
      if (text[0] == '\0')
        break;
      g_usleep (10 * 1000);
    }
  for (guint i = 0; i < dirs->len; i++)
    g_assert_true (g_file_test (g_ptr_array_index (dirs, i), G_FILE_TEST_IS_DIR));

  /* The next compile reaps them and says so. */
  g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                   SBX_STATUS_OK);
  for (guint i = 0; i < dirs->len; i++)
    g_assert_false (g_file_test (g_ptr_array_index (dirs, i), G_FILE_TEST_EXISTS));
  reaped = linux_test_backend_entry (fx.backend, "cgroup-leftovers");
  g_assert_nonnull (reaped);
  g_assert_nonnull (strstr (reaped->detail, "removed"));
  if (other_memory != NULL)
    g_assert_cmpint (g_rmdir (other_memory), ==, 0);
  etu_rm_rf (helper_ws);
  etu_rm_rf (helper_scratch);
  fixture_teardown (&fx);
}

static void
test_nothing_left_after_supervisor_kill (gconstpointer rung)
{
  supervisor_kill_case (rung, FALSE);
}

static void
test_nothing_left_after_supervisor_kill_elsewhere (void)
{
  supervisor_kill_case ("linux-userns", TRUE);
}

/* A uid 0 that is not the host's (this process in a user namespace of its
 * own that maps it to the caller, as `unshare -r`, a Flatpak app or a
 * program sbx runs see it) is not root for cgroups: the host's cgroup files
 * belong to an owner its namespace does not map.  Before, it took the root
 * path, chose the host's v1 hierarchies and failed every spawn with EACCES.
 * In a subprocess: unshare(CLONE_NEWUSER) needs a single thread. */
static void
test_userns_root_is_not_root (void)
{
  if (g_test_subprocess ())
    {
      uid_t outer = geteuid ();
      char map[64];
      g_autoptr(SbxCgroupHost) host = NULL;
      int fd;

      /* First thing, while this process has one thread. */
      g_assert_cmpint (unshare (CLONE_NEWUSER), ==, 0);
      g_snprintf (map, sizeof map, "0 %u 1\n", (unsigned) outer);
      fd = open ("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
      g_assert_cmpint (fd, >=, 0);
      g_assert_cmpint (write (fd, map, strlen (map)), ==, (gssize) strlen (map));
      close (fd);
      g_assert_cmpint (geteuid (), ==, 0);
      host = sbx_cgroup_host_new (NULL);
      g_assert_false (host->root);
      g_assert_false (sbx_cgroup_host_v1_usable (host));
      g_assert_false (sbx_cgroup_host_v2_usable_by_root (host));
      return;
    }
  {
    /* Control: outside, the host's root is root. */
    g_autoptr(SbxCgroupHost) outside = sbx_cgroup_host_new (NULL);
    pid_t pid = fork ();
    int status = 0;

    g_assert_cmpint (outside->root, ==, geteuid () == 0);
    /* Whether this host lets us make a user namespace at all (the child
     * calls nothing but unshare and _exit). */
    g_assert_cmpint (pid, >=, 0);
    if (pid == 0)
      _exit (unshare (CLONE_NEWUSER) == 0 ? 0 : 1);
    g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
      {
        g_test_skip ("this host refuses unprivileged user namespaces");
        return;
      }
  }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* ------------------------------------------------------------------------- */
/* The host as read from /proc                                                */
/* ------------------------------------------------------------------------- */

static gboolean
mounts_have (const char *fstype,
             const char *option)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/mounts", &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", -1);

      if (g_strv_length (f) >= 4 && strcmp (f[2], fstype) == 0
          && (option == NULL || strstr (f[3], option) != NULL))
        return TRUE;
    }
  return FALSE;
}

static void
test_host_matches_proc (void)
{
  g_autoptr(SbxCgroupHost) host = sbx_cgroup_host_new (NULL);
  g_autofree char *for_root = sbx_cgroup_host_describe (host, TRUE);
  g_autofree char *for_user = sbx_cgroup_host_describe (host, FALSE);

  g_test_message ("root: %s", for_root);
  g_test_message ("user: %s", for_user);
  g_assert_cmpint (host->root, ==, geteuid () == 0);
  g_assert_cmpint (host->v1_pids != NULL, ==, mounts_have ("cgroup", "pids"));
  g_assert_cmpint (host->v1_memory != NULL, ==, mounts_have ("cgroup", "memory"));
  g_assert_cmpint (host->v2_mount != NULL, ==, mounts_have ("cgroup2", NULL));
  if (host->v2_dir != NULL && host->v2_pids && host->v2_memory)
    g_assert_true (g_str_has_prefix (for_root, "cgroup v2"));
  else if (host->v1_pids != NULL && host->v1_memory != NULL)
    g_assert_true (g_str_has_prefix (for_root, "cgroup v1"));
  else
    g_assert_true (g_str_has_prefix (for_root, "none"));
  if (!(host->v2_dir != NULL && host->v2_pids && host->v2_memory) && host->bus_address == NULL)
    g_assert_nonnull (strstr (for_user, "rlimit fallback"));
}

/* ------------------------------------------------------------------------- */
/* Delegation from a (mock) systemd user manager on a fake cgroup tree        */
/* ------------------------------------------------------------------------- */

#define SLICE "/user.slice/user-1000.slice/user@1000.service/app.slice"

typedef struct
{
  char          *dir;
  char          *mounts;
  char          *self_cgroup;
  char          *log;
  char          *cg2;
  GTestDBus     *bus;
  GSubprocess   *mock;
} Fake;

static void
fake_setup (Fake       *f,
            const char *result,
            gboolean    with_bus)
{
  g_autofree char *session = NULL;

  f->dir = etu_make_tmpdir ("sbx-fakecg-XXXXXX");
  f->cg2 = g_build_filename (f->dir, "cg2", NULL);
  f->mounts = g_build_filename (f->dir, "mounts", NULL);
  f->self_cgroup = g_build_filename (f->dir, "self-cgroup", NULL);
  f->log = g_build_filename (f->dir, "calls.jsonl", NULL);
  session = g_build_filename (f->cg2, SLICE, NULL);
  g_assert_cmpint (g_mkdir_with_parents (session, 0755), ==, 0);
  {
    g_autofree char *root_controllers = g_build_filename (f->cg2, "cgroup.controllers", NULL);

    g_assert_true (g_file_set_contents (root_controllers, "cpu io memory pids\n", -1, NULL));
  }
  {
    g_autofree char *mounts = g_strdup_printf ("proc /proc proc rw 0 0\ncgroup2 %s cgroup2 rw 0 0\n", f->cg2);

    g_assert_true (g_file_set_contents (f->mounts, mounts, -1, NULL));
  }
  /* The caller's own cgroup is a session scope nobody delegated (it does
   * not even exist in the fake tree: no controllers, not writable). */
  g_assert_true (g_file_set_contents (f->self_cgroup,
                                      "0::/user.slice/user-1000.slice/session-1.scope\n", -1, NULL));
  if (!with_bus)
    return;

  f->bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (f->bus);
  {
    g_autofree char *template = g_test_build_filename (G_TEST_DIST, "dbusmock", "sbx_systemd_user.py", NULL);
    g_autoptr(JsonBuilder) b = json_builder_new ();
    g_autoptr(JsonGenerator) gen = json_generator_new ();
    g_autoptr(JsonNode) root = NULL;
    g_autofree char *params = NULL;
    g_autoptr(GSubprocessLauncher) launcher = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) conn = NULL;

    json_builder_begin_object (b);
    json_builder_set_member_name (b, "cgroup_root");
    json_builder_add_string_value (b, f->cg2);
    json_builder_set_member_name (b, "slice");
    json_builder_add_string_value (b, SLICE);
    json_builder_set_member_name (b, "self_cgroup");
    json_builder_add_string_value (b, f->self_cgroup);
    json_builder_set_member_name (b, "log");
    json_builder_add_string_value (b, f->log);
    json_builder_set_member_name (b, "result");
    json_builder_add_string_value (b, result);
    json_builder_end_object (b);
    root = json_builder_get_root (b);
    json_generator_set_root (gen, root);
    params = json_generator_to_data (gen, NULL);
    /* Its log lines would corrupt the TAP stream. */
    launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE);
    g_subprocess_launcher_setenv (launcher, "DBUS_SESSION_BUS_ADDRESS", g_test_dbus_get_bus_address (f->bus), TRUE);
    f->mock = g_subprocess_launcher_spawn (launcher, &error, "/usr/bin/python3", "-m", "dbusmock",
                                           "--session", "-t", template, "-p", params, NULL);
    g_assert_no_error (error);
    /* Wait until the mock owns its name. */
    conn = g_dbus_connection_new_for_address_sync (g_test_dbus_get_bus_address (f->bus),
                                                   G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT
                                                   | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                   NULL, NULL, &error);
    g_assert_no_error (error);
    for (int i = 0; i < 1000; i++)
      {
        g_autoptr(GVariant) owned = g_dbus_connection_call_sync (conn, "org.freedesktop.DBus",
                                                                 "/org/freedesktop/DBus",
                                                                 "org.freedesktop.DBus", "NameHasOwner",
                                                                 g_variant_new ("(s)", "org.freedesktop.systemd1"),
                                                                 G_VARIANT_TYPE ("(b)"),
                                                                 G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);
        gboolean has = FALSE;

        if (owned != NULL)
          g_variant_get (owned, "(b)", &has);
        if (has)
          break;
        g_assert_cmpint (i, <, 999);
        g_usleep (10 * 1000);
      }
    g_dbus_connection_close_sync (conn, NULL, NULL);
  }
}

static void
fake_teardown (Fake *f)
{
  if (f->mock != NULL)
    {
      g_subprocess_force_exit (f->mock);
      g_subprocess_wait (f->mock, NULL, NULL);
      g_clear_object (&f->mock);
    }
  if (f->bus != NULL)
    {
      g_test_dbus_down (f->bus);
      g_clear_object (&f->bus);
    }
  etu_rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->cg2);
  g_free (f->mounts);
  g_free (f->self_cgroup);
  g_free (f->log);
}

static SbxCgroupHost *
fake_host (Fake *f)
{
  SbxCgroupPaths paths = { 0 };

  paths.mounts = f->mounts;
  paths.self_cgroup = f->self_cgroup;
  paths.bus_address = f->bus != NULL ? g_test_dbus_get_bus_address (f->bus) : NULL;
  paths.fake_fs = TRUE;
  paths.as_root = FALSE;
  return sbx_cgroup_host_new (&paths);
}

/* Asserts that the open descriptor @fd is @dir/@file. */
static void
assert_fd_is (int         fd,
              const char *dir,
              const char *file)
{
  g_autofree char *link = g_strdup_printf ("/proc/self/fd/%d", fd);
  g_autofree char *target = g_file_read_link (link, NULL);
  g_autofree char *want = g_build_filename (dir, file, NULL);

  g_assert_cmpstr (target, ==, want);
}

static char *
fake_read (const char *dir,
           const char *file)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strstrip (text);
}

static gboolean
have_dbusmock (void)
{
  g_autofree char *daemon = g_find_program_in_path ("dbus-daemon");

  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE)
      || !g_file_test ("/usr/lib/python3/dist-packages/dbusmock", G_FILE_TEST_IS_DIR)
      || daemon == NULL)
    {
      g_test_skip ("python3-dbusmock or dbus-daemon is not installed (scripts/setup.sh installs them)");
      return FALSE;
    }
  return TRUE;
}

static void
test_user_scope_delegated (void)
{
  Fake f = { 0 };
  g_autoptr(SbxCgroupHost) host = NULL;
  g_autoptr(SbxCgroupBase) base = NULL;
  g_autoptr(SbxCgroup) cg = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *calls = NULL;
  g_autofree char *scope = NULL;
  g_autofree char *text = NULL;
  g_autofree char *sandbox = NULL;
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  JsonObject *call, *props;
  JsonArray *pids;
  int fds[SBX_CGROUP_MAX_DIRS];

  if (!have_dbusmock ())
    return;
  fake_setup (&f, "done", TRUE);
  host = fake_host (&f);
  g_assert_false (host->v2_writable && host->v2_pids);   /* not delegated yet */
  {
    g_autofree char *for_user = sbx_cgroup_host_describe (host, FALSE);

    g_assert_true (g_str_has_prefix (for_user, "a transient systemd user scope"));
  }

  base = sbx_cgroup_base_new (host);
  g_test_message ("base: %s", base->mechanism != NULL ? base->mechanism : base->failure);
  g_assert_cmpint (base->mode, ==, SBX_CGROUP_V2);
  g_assert_nonnull (base->scope_unit);
  g_assert_true (g_str_has_prefix (base->scope_unit, "sbx-"));
  g_assert_true (g_str_has_suffix (base->scope_unit, ".scope"));

  /* The call the user manager recorded: one StartTransientUnit for this
   * scope, holding this process, delegated. */
  g_assert_true (g_file_get_contents (f.log, &calls, NULL, NULL));
  {
    guint lines = 0;

    for (const char *p = calls; *p != '\0'; p++)
      lines += *p == '\n';
    g_assert_cmpuint (lines, ==, 1);
  }
  g_assert_true (json_parser_load_from_data (parser, calls, -1, &error));
  g_assert_no_error (error);
  call = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (call, "method"), ==, "StartTransientUnit");
  g_assert_cmpstr (json_object_get_string_member (call, "name"), ==, base->scope_unit);
  g_assert_cmpstr (json_object_get_string_member (call, "mode"), ==, "fail");
  props = json_object_get_object_member (call, "properties");
  g_assert_true (json_object_get_boolean_member (props, "Delegate"));
  pids = json_object_get_array_member (props, "PIDs");
  g_assert_cmpuint (json_array_get_length (pids), ==, 1);
  g_assert_cmpint (json_array_get_int_element (pids, 0), ==, getpid ());

  /* Inside the delegated scope: the supervisor moved into its leaf, the
   * controllers enabled for the sandboxes. */
  scope = g_build_filename (f.cg2, SLICE, base->scope_unit, NULL);
  g_assert_cmpstr (base->dirs[0], ==, scope);
  {
    g_autofree char *leaf = g_build_filename (scope, "sbx-supervisor", NULL);

    text = fake_read (leaf, "cgroup.procs");
    g_assert_cmpstr (text, ==, pid);
    g_clear_pointer (&text, g_free);
  }
  text = fake_read (scope, "cgroup.subtree_control");
  g_assert_cmpstr (text, ==, "+pids +memory");
  g_clear_pointer (&text, g_free);

  /* A sandbox's cgroup: limits written and read back, one cgroup.procs. */
  cg = sbx_cgroup_new (base, 1024, 512 * MIB, &error);
  g_assert_no_error (error);
  g_assert_nonnull (cg);
  sandbox = g_strdup (sbx_cgroup_get_path (cg));
  g_assert_true (g_str_has_prefix (sandbox, scope));
  text = fake_read (sandbox, "pids.max");
  g_assert_cmpstr (text, ==, "1024");
  g_clear_pointer (&text, g_free);
  text = fake_read (sandbox, "memory.max");
  g_assert_cmpstr (text, ==, "536870912");
  g_clear_pointer (&text, g_free);
  text = fake_read (sandbox, "memory.swap.max");
  g_assert_cmpstr (text, ==, "0");
  g_assert_cmpint (sbx_cgroup_join_fds (cg, fds), ==, 1);
  assert_fd_is (fds[0], sandbox, "cgroup.procs");   /* v2: whole processes */
  g_assert_true (sbx_cgroup_destroy (cg, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (sandbox, G_FILE_TEST_EXISTS));
  fake_teardown (&f);
}

static void
test_user_scope_job_failed (void)
{
  Fake f = { 0 };
  g_autoptr(SbxCgroupHost) host = NULL;
  g_autoptr(SbxCgroupBase) base = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *calls = NULL;

  if (!have_dbusmock ())
    return;
  fake_setup (&f, "failed", TRUE);
  host = fake_host (&f);
  base = sbx_cgroup_base_new (host);
  g_assert_true (g_file_get_contents (f.log, &calls, NULL, NULL));
  g_assert_nonnull (strstr (calls, "\"Delegate\": true"));
  g_assert_cmpint (base->mode, ==, SBX_CGROUP_NONE);
  g_assert_nonnull (strstr (base->failure, "rlimit fallback"));
  g_assert_nonnull (strstr (base->failure, "failed"));
  g_assert_null (sbx_cgroup_new (base, 16, 0, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  fake_teardown (&f);
}

static void
test_user_no_delegation (void)
{
  Fake f = { 0 };
  g_autoptr(SbxCgroupHost) host = NULL;
  g_autoptr(SbxCgroupBase) base = NULL;
  g_autofree char *for_user = NULL;

  fake_setup (&f, "done", FALSE);
  host = fake_host (&f);
  for_user = sbx_cgroup_host_describe (host, FALSE);
  g_assert_true (g_str_has_prefix (for_user, "none: rlimit fallback"));
  base = sbx_cgroup_base_new (host);
  g_assert_cmpint (base->mode, ==, SBX_CGROUP_NONE);
  g_assert_nonnull (strstr (base->failure, "rlimit fallback"));
  g_assert_nonnull (strstr (base->failure, "Hint:"));
  fake_teardown (&f);
}

static void
fake_file (const char *dir,
           const char *file,
           const char *contents)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
}

/* Root on a cgroup v2 host (fake tree): the supervisor moves into the leaf
 * of its own cgroup, the controllers are enabled there, each sandbox gets a
 * child with its limits written and read back, and destroy removes it. */
static void
test_root_v2_fake (void)
{
  g_autofree char *dir = etu_make_tmpdir ("sbx-fakecg-XXXXXX");
  g_autofree char *cg2 = g_build_filename (dir, "cg2", NULL);
  g_autofree char *own = g_build_filename (cg2, "system.slice", "app.service", NULL);
  g_autofree char *mounts = g_build_filename (dir, "mounts", NULL);
  g_autofree char *self = g_build_filename (dir, "self-cgroup", NULL);
  g_autofree char *mounts_text = g_strdup_printf ("cgroup2 %s cgroup2 rw 0 0\n", cg2);
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  g_autofree char *leaf = g_build_filename (own, "sbx-supervisor", NULL);
  g_autofree char *text = NULL;
  g_autofree char *sandbox = NULL;
  g_autoptr(SbxCgroupHost) host = NULL;
  g_autoptr(SbxCgroupBase) base = NULL;
  g_autoptr(SbxCgroup) cg = NULL;
  g_autoptr(GError) error = NULL;
  SbxCgroupPaths paths = { 0 };

  g_assert_cmpint (g_mkdir_with_parents (own, 0755), ==, 0);
  fake_file (cg2, "cgroup.controllers", "cpu memory pids\n");
  fake_file (own, "cgroup.controllers", "memory pids\n");
  fake_file (own, "cgroup.subtree_control", "");
  fake_file (own, "cgroup.procs", "");
  g_assert_true (g_file_set_contents (mounts, mounts_text, -1, NULL));
  g_assert_true (g_file_set_contents (self, "0::/system.slice/app.service\n", -1, NULL));
  paths.mounts = mounts;
  paths.self_cgroup = self;
  paths.fake_fs = TRUE;
  paths.as_root = TRUE;
  host = sbx_cgroup_host_new (&paths);
  {
    g_autofree char *for_root = sbx_cgroup_host_describe (host, TRUE);

    g_assert_true (g_str_has_prefix (for_root, "cgroup v2"));
  }
  base = sbx_cgroup_base_new (host);
  g_assert_cmpint (base->mode, ==, SBX_CGROUP_V2);
  g_assert_cmpstr (base->dirs[0], ==, own);
  text = fake_read (leaf, "cgroup.procs");
  g_assert_cmpstr (text, ==, pid);
  g_clear_pointer (&text, g_free);
  text = fake_read (own, "cgroup.subtree_control");
  g_assert_cmpstr (text, ==, "+pids +memory");
  g_clear_pointer (&text, g_free);

  cg = sbx_cgroup_new (base, 7, 3 * MIB, &error);
  g_assert_no_error (error);
  sandbox = g_strdup (sbx_cgroup_get_path (cg));
  g_assert_true (g_str_has_prefix (sandbox, own));
  text = fake_read (sandbox, "pids.max");
  g_assert_cmpstr (text, ==, "7");
  g_clear_pointer (&text, g_free);
  text = fake_read (sandbox, "memory.max");
  g_assert_cmpstr (text, ==, "3145728");
  g_assert_true (sbx_cgroup_destroy (cg, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (sandbox, G_FILE_TEST_EXISTS));
  etu_rm_rf (dir);
}

/* Root on a v1 host (fake tree): one directory per hierarchy, the memory
 * limit before memsw, each read back. */
static void
test_root_v1_fake (void)
{
  g_autofree char *dir = etu_make_tmpdir ("sbx-fakecg-XXXXXX");
  g_autofree char *pids = g_build_filename (dir, "pids", NULL);
  g_autofree char *memory = g_build_filename (dir, "memory", NULL);
  g_autofree char *mem_own = g_build_filename (memory, "job", NULL);
  g_autofree char *mounts = g_build_filename (dir, "mounts", NULL);
  g_autofree char *self = g_build_filename (dir, "self-cgroup", NULL);
  g_autofree char *mounts_text = g_strdup_printf ("cgroup %s cgroup rw,relatime,pids 0 0\n"
                                                  "cgroup %s cgroup rw,relatime,memory 0 0\n"
                                                  "cgroup2 %s/unified cgroup2 rw 0 0\n",
                                                  pids, memory, dir);
  g_autofree char *text = NULL;
  g_autoptr(SbxCgroupHost) host = NULL;
  g_autoptr(SbxCgroupBase) base = NULL;
  g_autoptr(SbxCgroup) cg = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *name = NULL;
  g_autofree char *mem_sandbox = NULL;
  SbxCgroupPaths paths = { 0 };

  g_assert_cmpint (g_mkdir_with_parents (pids, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (mem_own, 0755), ==, 0);
  fake_file (mem_own, "memory.memsw.limit_in_bytes", "");
  g_assert_true (g_file_set_contents (mounts, mounts_text, -1, NULL));
  g_assert_true (g_file_set_contents (self, "8:pids:/\n4:memory:/job\n0::/\n", -1, NULL));
  paths.mounts = mounts;
  paths.self_cgroup = self;
  paths.fake_fs = TRUE;
  paths.as_root = TRUE;
  host = sbx_cgroup_host_new (&paths);
  g_assert_cmpstr (host->v1_pids, ==, pids);
  g_assert_cmpstr (host->v1_memory, ==, mem_own);
  g_assert_null (host->v1_freezer);
  base = sbx_cgroup_base_new (host);
  g_assert_cmpint (base->mode, ==, SBX_CGROUP_V1);
  g_assert_true (base->memsw);
  cg = sbx_cgroup_new (base, 1024, 64 * MIB, &error);
  g_assert_no_error (error);
  name = g_path_get_basename (sbx_cgroup_get_path (cg));
  g_assert_true (g_str_has_prefix (name, base->prefix));
  text = fake_read (sbx_cgroup_get_path (cg), "pids.max");
  g_assert_cmpstr (text, ==, "1024");
  g_clear_pointer (&text, g_free);
  mem_sandbox = g_build_filename (mem_own, name, NULL);
  text = fake_read (mem_sandbox, "memory.limit_in_bytes");
  g_assert_cmpstr (text, ==, "67108864");
  g_clear_pointer (&text, g_free);
  text = fake_read (mem_sandbox, "memory.memsw.limit_in_bytes");
  g_assert_cmpstr (text, ==, "67108864");
  {
    int fds[SBX_CGROUP_MAX_DIRS];

    g_assert_cmpint (sbx_cgroup_join_fds (cg, fds), ==, 2);
    /* v1: A (one thread) joins through "tasks", which skips the kernel's
     * global threadgroup lock (sbx-linux-cgroup.c, join_file). */
    assert_fd_is (fds[0], sbx_cgroup_get_path (cg), "tasks");
    assert_fd_is (fds[1], mem_sandbox, "tasks");
  }
  g_assert_true (sbx_cgroup_destroy (cg, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (mem_sandbox, G_FILE_TEST_EXISTS));
  etu_rm_rf (dir);
}

/* A stale cgroup (its owner dead: our pid with another start time) left by
 * a supervisor that sat in another v1 memory cgroup: it exists under the
 * pids hierarchy, and its memory directory is not under this process's
 * memory cgroup.  The reaper searches the memory hierarchy for it and
 * removes both (before, it removed the pids directory and left the memory
 * one for good; earlier still, it waited for it on every run).  A memory
 * directory whose pids directory is already gone (left so by an earlier
 * reaper) is found and removed in the same search.  Controls: a live
 * owner's directories and a directory that is not ours stay. */
static void
test_reap_stale_v1_other_memory_parent (void)
{
  g_autofree char *dir = etu_make_tmpdir ("sbx-fakecg-XXXXXX");
  g_autofree char *pids = g_build_filename (dir, "pids", NULL);
  g_autofree char *memory = g_build_filename (dir, "memory", NULL);
  g_autofree char *mem_own = g_build_filename (memory, "job", NULL);
  g_autofree char *mem_other = g_build_filename (memory, "other-job", NULL);
  g_autofree char *mounts = g_build_filename (dir, "mounts", NULL);
  g_autofree char *self = g_build_filename (dir, "self-cgroup", NULL);
  g_autofree char *mounts_text = g_strdup_printf ("cgroup %s cgroup rw,relatime,pids 0 0\n"
                                                  "cgroup %s cgroup rw,relatime,memory 0 0\n",
                                                  pids, memory);
  g_autoptr(SbxCgroupHost) host = NULL;
  g_autoptr(SbxCgroupBase) base = NULL;
  g_autofree char *stale_name = NULL;
  g_autofree char *stale_pids = NULL;
  g_autofree char *stale_mem = NULL;
  g_autofree char *live_pids = NULL;
  g_autofree char *live_mem = NULL;
  g_autofree char *orphan_name = NULL;
  g_autofree char *orphan_mem = NULL;
  g_autofree char *foreign_mem = NULL;
  g_autofree char *ns_text = NULL;
  SbxCgroupPaths paths = { 0 };
  guint64 ns = 0;

  g_assert_cmpint (g_mkdir_with_parents (pids, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (mem_own, 0755), ==, 0);
  g_assert_true (g_file_set_contents (mounts, mounts_text, -1, NULL));
  g_assert_true (g_file_set_contents (self, "8:pids:/\n4:memory:/job\n", -1, NULL));
  paths.mounts = mounts;
  paths.self_cgroup = self;
  paths.fake_fs = TRUE;
  paths.as_root = TRUE;
  host = sbx_cgroup_host_new (&paths);
  base = sbx_cgroup_base_new (host);
  g_assert_cmpint (base->mode, ==, SBX_CGROUP_V1);
  g_assert_cmpstr (base->dirs[0], ==, pids);

  /* base->prefix is "sbx-<pid namespace>-<pid>-<start>-" */
  g_assert_cmpint (sscanf (base->prefix, "sbx-%" G_GUINT64_FORMAT "-", &ns), ==, 1);
  stale_name = g_strdup_printf ("sbx-%" G_GUINT64_FORMAT "-%d-1-0", ns, (int) getpid ());
  stale_pids = g_build_filename (pids, stale_name, NULL);
  stale_mem = g_build_filename (mem_other, stale_name, NULL);
  g_assert_cmpint (g_mkdir_with_parents (stale_pids, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (stale_mem, 0755), ==, 0);
  fake_file (stale_pids, "cgroup.procs", "");
  fake_file (stale_mem, "cgroup.procs", "");
  /* Positive control: a cgroup of a live owner (our own prefix) stays. */
  ns_text = g_strdup_printf ("%s7", base->prefix);
  live_pids = g_build_filename (pids, ns_text, NULL);
  g_assert_cmpint (g_mkdir_with_parents (live_pids, 0755), ==, 0);
  fake_file (live_pids, "cgroup.procs", "");

  live_mem = g_build_filename (mem_other, ns_text, NULL);
  g_assert_cmpint (g_mkdir_with_parents (live_mem, 0755), ==, 0);
  fake_file (live_mem, "cgroup.procs", "");
  /* A memory directory alone, deeper in another branch. */
  orphan_name = g_strdup_printf ("sbx-%" G_GUINT64_FORMAT "-%d-1-1", ns, (int) getpid ());
  orphan_mem = g_build_filename (memory, "system.slice", "some.service", orphan_name, NULL);
  g_assert_cmpint (g_mkdir_with_parents (orphan_mem, 0755), ==, 0);
  fake_file (orphan_mem, "cgroup.procs", "");
  /* Not ours: a name that only looks alike. */
  foreign_mem = g_build_filename (mem_other, "sbx-not-a-sandbox", NULL);
  g_assert_cmpint (g_mkdir_with_parents (foreign_mem, 0755), ==, 0);

  g_assert_cmpuint (sbx_cgroup_base_reap_stale (base), ==, 2);
  g_assert_false (g_file_test (stale_pids, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (stale_mem, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (orphan_mem, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (live_pids, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (live_mem, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (foreign_mem, G_FILE_TEST_IS_DIR));
  /* Nothing stale in the pids hierarchy: no search, nothing removed. */
  g_assert_cmpuint (sbx_cgroup_base_reap_stale (base), ==, 0);
  etu_rm_rf (dir);
}

/* A user bus but a v2 hierarchy without the controllers (this host's
 * hybrid layout): the user manager is never asked, so this process is not
 * moved into a scope for nothing. */
static void
test_user_scope_not_asked_without_controllers (void)
{
  Fake f = { 0 };
  g_autoptr(SbxCgroupHost) host = NULL;
  g_autoptr(SbxCgroupBase) base = NULL;
  g_autofree char *root_controllers = NULL;

  if (!have_dbusmock ())
    return;
  fake_setup (&f, "done", TRUE);
  root_controllers = g_build_filename (f.cg2, "cgroup.controllers", NULL);
  g_assert_true (g_file_set_contents (root_controllers, "hugetlb\n", -1, NULL));
  host = fake_host (&f);
  {
    g_autofree char *for_user = sbx_cgroup_host_describe (host, FALSE);

    g_assert_true (g_str_has_prefix (for_user, "none: rlimit fallback"));
  }
  base = sbx_cgroup_base_new (host);
  g_assert_cmpint (base->mode, ==, SBX_CGROUP_NONE);
  g_assert_nonnull (strstr (base->failure, "offers no pids and memory controllers"));
  g_assert_false (g_file_test (f.log, G_FILE_TEST_EXISTS));   /* no call recorded */
  fake_teardown (&f);
}

int
main (int    argc,
      char **argv)
{
  const char *supervisor = g_getenv ("SBX_TEST_CGROUP_SUPERVISOR");

  if (supervisor != NULL)
    return supervisor_main (supervisor);
  self_exe = argv[0];
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/linux/cgroup/host/matches-proc", test_host_matches_proc);
  g_test_add_func ("/linux/cgroup/root/v2-fake", test_root_v2_fake);
  g_test_add_func ("/linux/cgroup/root/v1-fake", test_root_v1_fake);
  g_test_add_func ("/linux/cgroup/root/v1-reap-stale-other-memory-parent", test_reap_stale_v1_other_memory_parent);
  g_test_add_func ("/linux/cgroup/user-scope/delegated", test_user_scope_delegated);
  g_test_add_func ("/linux/cgroup/user-scope/job-failed", test_user_scope_job_failed);
  g_test_add_func ("/linux/cgroup/user-scope/no-delegation", test_user_no_delegation);
  g_test_add_func ("/linux/cgroup/user-scope/not-asked-without-controllers",
                   test_user_scope_not_asked_without_controllers);
  g_test_add_func ("/linux/cgroup/destroy/real", test_destroy_real);
  g_test_add_func ("/linux/cgroup/host/userns-root-is-not-root", test_userns_root_is_not_root);
  linux_test_add_both ("cgroup/fork-loop", test_fork_loop);
  linux_test_add_both ("cgroup/memory-hog", test_memory_hog);
  linux_test_add_both ("cgroup/nothing-left-after-run", test_nothing_left_after_run);
  linux_test_add_both ("cgroup/nothing-left-after-supervisor-kill", test_nothing_left_after_supervisor_kill);
  g_test_add_func ("/linux/cgroup/nothing-left-after-supervisor-kill/other-memory-cgroup",
                   test_nothing_left_after_supervisor_kill_elsewhere);
  return g_test_run ();
}
