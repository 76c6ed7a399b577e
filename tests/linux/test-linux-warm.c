/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The warm sandbox of the Linux backend (plugins/linux/sbx-linux-zygote.c):
 * at rung 1, from the second spawn of a spec on, the next sandbox (its
 * namespaces, the view, procfs, devpts, the pivot, the cgroup) is built
 * ahead of need and takes the next request.  What must hold:
 *  - it really is prepared ahead: the sandbox's PID 1 of a later spawn
 *    started before the call (the first spawn's started after it: the
 *    positive control that the test can tell the two apart);
 *  - one sandbox serves one execution: every spawn has its own pid and
 *    mount namespace (none the host's) and runs its own request;
 *  - it confines like a fresh one: no capability, no_new_privs, a seccomp
 *    filter, the host's files outside the policy invisible (the same
 *    probe succeeds on the host);
 *  - one killed while it waits is discarded, the next spawn still works;
 *  - it exits by itself when the supervisor process dies unreleased;
 *  - nothing is left behind: after release no child and no descriptor,
 *    also when the spec is released while the next sandbox is built.
 * At rung 2 there is no zygote and so no warm sandbox (and no pid or mount
 * namespace to tell sandboxes apart by): the confinement and release cases
 * run there too (every spawn is fresh), the three that observe the warm
 * sandbox itself are rung 1 only.  Every rung-1 case runs twice: with a
 * host-read view (the host's root) and with the view supervisor's FUSE
 * root, where each warm sandbox is built with a server of its own
 * (tests/linux/test-linux-view.c checks its denials).
 */
#include "backend-test-util.h"
#include "executor-test-util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

typedef struct
{
  char             *workspace;
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
} Fixture;

static void fixture_teardown (Fixture *fx);

/* @data: the rung, or "linux-userns/fuse".  The plain cases allow host
 * read, so the view's root is the host's (read-only); the /fuse cases do
 * not, so it is the view supervisor's FUSE filesystem, and every sandbox,
 * warm ones too, has a server of its own (skipped where FUSE is not
 * available: the report says so). */
static gboolean
fixture_setup (Fixture    *fx,
               const char *data)
{
  g_auto(GStrv) parts = g_strsplit (data, "/", 2);
  gboolean fuse = parts[1] != NULL;
  g_autofree char *why = NULL;
  const LinuxTestEntry *e;

  if (!linux_test_have_rung (parts[0], &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  fx->workspace = etu_make_tmpdir ("sbx-warm-XXXXXX");
  fx->policy = linux_test_policy_new (fx->workspace, 2, 2, fuse ? 0 : 2, 0);
  fx->backend = linux_test_backend_new (parts[0]);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  if (fuse)
    {
      e = linux_test_backend_entry (fx->backend, "fs-denials");
      g_assert_nonnull (e);
      if (e->status != SBX_ABI_REPORT_ENFORCED)
        {
          g_test_skip ("the view supervisor's FUSE root is unavailable here (fs-denials: not enforced)");
          fixture_teardown (fx);
          return FALSE;
        }
    }
  return TRUE;
}

static void
fixture_teardown (Fixture *fx)
{
  g_clear_pointer (&fx->backend, linux_test_backend_free);
  g_clear_pointer (&fx->policy, linux_test_policy_free);
  if (fx->workspace != NULL)
    etu_rm_rf (fx->workspace);
  g_clear_pointer (&fx->workspace, g_free);
}


/* Runs @script in the sandbox; asserts the spawn and the exit, returns
 * its stdout. */
static char *
run_ok (Fixture    *fx,
        const char *script)
{
  g_autoptr(LinuxTestRun) run = linux_test_backend_sh (fx->backend, fx->policy, fx->workspace, script);

  g_assert_nonnull (run);
  if (run->spawn_status != SBX_STATUS_OK)
    g_error ("spawn of '%s' failed: %s", script, run->spawn_error);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_EXITED);
  if (run->exit.code != 0)
    g_error ("'%s' exited %d: %s", script, run->exit.code, run->err);
  return g_steal_pointer (&run->out);
}

/* Clock ticks since boot now (the unit of /proc/PID/stat's starttime). */
static long long
boot_ticks_now (void)
{
  struct timespec ts;

  g_assert_cmpint (clock_gettime (CLOCK_BOOTTIME, &ts), ==, 0);
  return (long long) ts.tv_sec * sysconf (_SC_CLK_TCK) + ts.tv_nsec / (1000000000LL / sysconf (_SC_CLK_TCK));
}

/* The start time (ticks since boot) of the sandbox's PID 1, read inside. */
#define PID1_START "cut -d' ' -f22 /proc/1/stat"

static long long
pid1_start (Fixture *fx)
{
  g_autofree char *out = run_ok (fx, PID1_START);

  return g_ascii_strtoll (out, NULL, 10);
}

static void
test_ahead_of_need (gconstpointer data)
{
  Fixture fx = { 0 };
  long long before, start;

  if (!fixture_setup (&fx, data))
    return;
  /* Control: the first spawn is built after the call (PID 1 started no
   * earlier than one tick before it). */
  g_usleep (300 * 1000);
  before = boot_ticks_now ();
  start = pid1_start (&fx);
  g_assert_cmpint (start, >=, before - 1);
  /* The second goes through the zygote, which then prepares the third. */
  (void) pid1_start (&fx);
  for (int i = 0; i < 3; i++)
    {
      g_usleep (300 * 1000);
      before = boot_ticks_now ();
      start = pid1_start (&fx);
      /* Built at the end of the previous spawn, 300 ms ago: well before
       * the call (10 ticks of 100 Hz is half the sleep's margin). */
      g_assert_cmpint (start, <, before - 10);
    }
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

static void
test_one_execution (gconstpointer data)
{
  enum { N = 6 };
  Fixture fx = { 0 };
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *host_pid = g_file_read_link ("/proc/self/ns/pid", NULL);
  g_autofree char *host_mnt = g_file_read_link ("/proc/self/ns/mnt", NULL);
  LinuxTestProc *procs[N];

  if (!fixture_setup (&fx, data))
    return;
  g_assert_nonnull (host_pid);
  g_assert_nonnull (host_mnt);
  /* Two spawns first: from the third on, each takes the warm sandbox the
   * one before it left. */
  g_free (run_ok (&fx, "true"));
  g_free (run_ok (&fx, "true"));
  /* All alive at once (each blocks on its stdin), so no namespace number
   * can have been freed and reused by the next one. */
  for (int i = 0; i < N; i++)
    {
      g_autofree char *script = g_strdup_printf ("echo run-%d; readlink /proc/self/ns/pid; "
                                                 "readlink /proc/self/ns/mnt; echo ready; read x", i);
      const char *argv[] = { "/bin/sh", "-c", script, NULL };
      LinuxTestRun *failed = NULL;

      procs[i] = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv, NULL, -1, 0, &failed);
      if (procs[i] == NULL)
        g_error ("spawn %d failed: %s", i, failed != NULL ? failed->spawn_error : "?");
      g_assert_true (linux_test_proc_read_until (procs[i], "ready\n", 30000));
    }
  for (int i = 0; i < N; i++)
    {
      g_autoptr(LinuxTestRun) run = linux_test_proc_wait (procs[i], "\n");
      g_auto(GStrv) lines = g_strsplit (run->out, "\n", -1);
      g_autofree char *expected = g_strdup_printf ("run-%d", i);

      g_assert_cmpint (run->exit.code, ==, 0);
      g_assert_cmpuint (g_strv_length (lines), >=, 3);
      /* Its own request, in namespaces of its own. */
      g_assert_cmpstr (lines[0], ==, expected);
      g_assert_cmpstr (lines[1], !=, host_pid);
      g_assert_cmpstr (lines[2], !=, host_mnt);
      g_assert_false (g_hash_table_contains (seen, lines[1]));
      g_assert_false (g_hash_table_contains (seen, lines[2]));
      g_hash_table_add (seen, g_strdup (lines[1]));
      g_hash_table_add (seen, g_strdup (lines[2]));
    }
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

static void
test_confined (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autofree char *outside = etu_make_tmpdir ("sbx-warm-outside-XXXXXX");
  g_autofree char *probe = g_strdup_printf ("echo x > %s/probe", outside);
  g_autofree char *host_out = NULL;
  g_autofree char *host_file = g_build_filename (outside, "probe", NULL);

  /* Positive control: the same write works without the sandbox. */
  g_assert_cmpint (linux_test_host_sh (outside, probe, &host_out), ==, 0);
  g_assert_true (g_file_test (host_file, G_FILE_TEST_EXISTS));
  if (!fixture_setup (&fx, data))
    {
      etu_rm_rf (outside);
      return;
    }
  for (int i = 0; i < 5; i++)
    {
      g_autoptr(LinuxTestRun) denied = NULL;
      g_autofree char *marker = g_strdup_printf ("%s/probe-%d", outside, i);
      g_autofree char *script = g_strdup_printf ("echo x > %s", marker);

      /* From the third spawn on at rung 1 this is a warm sandbox.  (At
       * rung 2 the fixture's Landlock rules do not grant /proc, so the
       * status is read at rung 1 only; the write below is checked on both.) */
      if (g_str_has_prefix (data, "linux-userns"))
        {
          g_autofree char *status = run_ok (&fx, "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status");

          g_assert_nonnull (strstr (status, "CapEff:\t0000000000000000"));
          g_assert_nonnull (strstr (status, "NoNewPrivs:\t1"));
          g_assert_nonnull (strstr (status, "Seccomp:\t2"));
        }
      denied = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, script);
      g_assert_cmpint (denied->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (denied->exit.code, !=, 0);
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
    }
  fixture_teardown (&fx);
  etu_rm_rf (outside);
  etu_assert_no_children ();
}

/* The children of this process in a pid namespace other than ours (the
 * sandboxes' PID 1s; the zygote shares ours). */
static GArray *
sandbox_children (void)
{
  g_autofree char *own_ns = g_file_read_link ("/proc/self/ns/pid", NULL);
  g_autoptr(GDir) tasks = g_dir_open ("/proc/self/task", 0, NULL);
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (pid_t));
  const char *tid;

  g_assert_nonnull (tasks);
  while ((tid = g_dir_read_name (tasks)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("/proc/self/task/%s/children", tid);
      g_autofree char *list = NULL;
      g_auto(GStrv) items = NULL;

      if (!g_file_get_contents (path, &list, NULL, NULL))
        continue;
      items = g_strsplit (g_strstrip (list), " ", -1);
      for (int i = 0; items[i] != NULL; i++)
        {
          pid_t pid = (pid_t) atoi (items[i]);
          g_autofree char *ns_path = g_strdup_printf ("/proc/%d/ns/pid", (int) pid);
          g_autofree char *ns = pid > 0 ? g_file_read_link (ns_path, NULL) : NULL;

          if (ns != NULL && g_strcmp0 (ns, own_ns) != 0)
            g_array_append_val (pids, pid);
        }
    }
  return pids;
}

static void
test_killed_while_waiting (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autoptr(GArray) waiting = NULL;
  g_autoptr(GArray) after = NULL;
  int fds_before = (int) etu_count_fds ();

  if (!fixture_setup (&fx, data))
    return;
  g_free (run_ok (&fx, "true"));
  g_free (run_ok (&fx, "true"));
  /* Every run has been reaped: the one sandbox left is the waiting one. */
  waiting = sandbox_children ();
  g_assert_cmpuint (waiting->len, ==, 1);
  g_assert_cmpint (kill (g_array_index (waiting, pid_t, 0), SIGKILL), ==, 0);
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *out = run_ok (&fx, "echo alive");

      g_assert_cmpstr (out, ==, "alive\n");
    }
  /* The killed one is gone (reaped when it was discarded); a new one
   * waits in its place. */
  after = sandbox_children ();
  g_assert_cmpuint (after->len, ==, 1);
  g_assert_cmpint (g_array_index (after, pid_t, 0), !=, g_array_index (waiting, pid_t, 0));
  fixture_teardown (&fx);
  etu_assert_no_children ();
  g_assert_cmpint ((int) etu_count_fds (), ==, fds_before);
}

/* The supervisor process dies without releasing anything: the waiting A
 * (which shares that process's descriptor table, so no pipe of its own
 * ever reaches EOF) and the zygote exit by themselves.  This process is
 * made a subreaper so the orphans come back to it and can be waited for. */
static void
test_supervisor_death (gconstpointer data)
{
  Fixture fx = { 0 };
  gboolean warm_gone = FALSE;
  int sync_pipe[2];
  pid_t supervisor, warm_pid = 0;
  gint64 deadline;
  int status;

  if (!fixture_setup (&fx, data))
    return;
  g_assert_cmpint (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), ==, 0);
  g_assert_cmpint (pipe (sync_pipe), ==, 0);
  supervisor = fork ();
  g_assert_cmpint (supervisor, >=, 0);
  if (supervisor == 0)
    {
      g_autoptr(GArray) waiting = NULL;
      pid_t pid = 0;

      close (sync_pipe[0]);
      for (int i = 0; i < 2; i++)
        {
          LinuxTestRun *run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, "true");

          if (run->spawn_status != SBX_STATUS_OK)
            _exit (1);
          linux_test_run_free (run);
        }
      waiting = sandbox_children ();
      if (waiting->len == 1)
        pid = g_array_index (waiting, pid_t, 0);
      if (write (sync_pipe[1], &pid, sizeof pid) != (ssize_t) sizeof pid)
        _exit (2);
      _exit (0);   /* no release: the supervisor just goes away */
    }
  close (sync_pipe[1]);
  g_assert_cmpint (read (sync_pipe[0], &warm_pid, sizeof warm_pid), ==, (ssize_t) sizeof warm_pid);
  close (sync_pipe[0]);
  g_assert_cmpint (warm_pid, >, 0);
  g_assert_cmpint (waitpid (supervisor, &status, 0), ==, supervisor);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  /* Every orphan (the waiting A, the zygote) exits and is reaped here. */
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  for (;;)
    {
      pid_t pid = waitpid (-1, &status, WNOHANG | __WALL);

      if (pid == warm_pid)
        warm_gone = TRUE;
      if (pid < 0 && errno == ECHILD)
        break;
      if (pid == 0)
        {
          g_assert_cmpint (g_get_monotonic_time (), <, deadline);
          g_usleep (10 * 1000);
        }
    }
  g_assert_true (warm_gone);
  g_assert_cmpint (prctl (PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), ==, 0);
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

static void
test_release_leaves_nothing (gconstpointer data)
{
  int fds_before = (int) etu_count_fds ();

  for (int round = 0; round < 10; round++)
    {
      Fixture fx = { 0 };

      if (!fixture_setup (&fx, data))
        return;
      /* Released right after the spawn that starts building the next
       * sandbox (round 0 and 1 spawns fewer: no zygote, no warm one). */
      for (int i = 0; i < 1 + round % 4; i++)
        g_free (run_ok (&fx, "true"));
      fixture_teardown (&fx);
      etu_assert_no_children ();
      g_assert_cmpint ((int) etu_count_fds (), ==, fds_before);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_data_func ("/linux/linux-userns/warm/ahead-of-need", "linux-userns", test_ahead_of_need);
  g_test_add_data_func ("/linux/linux-userns/warm/killed-while-waiting", "linux-userns",
                        test_killed_while_waiting);
  g_test_add_data_func ("/linux/linux-userns/warm/one-execution", "linux-userns", test_one_execution);
  g_test_add_data_func ("/linux/linux-userns/warm/supervisor-death", "linux-userns", test_supervisor_death);
  linux_test_add_both ("warm/confined", test_confined);
  linux_test_add_both ("warm/release-leaves-nothing", test_release_leaves_nothing);
  /* The same with the FUSE root: a view supervisor per warm sandbox. */
  g_test_add_data_func ("/linux/linux-userns/warm/fuse/ahead-of-need", "linux-userns/fuse", test_ahead_of_need);
  g_test_add_data_func ("/linux/linux-userns/warm/fuse/killed-while-waiting", "linux-userns/fuse",
                        test_killed_while_waiting);
  g_test_add_data_func ("/linux/linux-userns/warm/fuse/one-execution", "linux-userns/fuse", test_one_execution);
  g_test_add_data_func ("/linux/linux-userns/warm/fuse/supervisor-death", "linux-userns/fuse",
                        test_supervisor_death);
  g_test_add_data_func ("/linux/linux-userns/warm/fuse/confined", "linux-userns/fuse", test_confined);
  g_test_add_data_func ("/linux/linux-userns/warm/fuse/release-leaves-nothing", "linux-userns/fuse",
                        test_release_leaves_nothing);
  return g_test_run ();
}
