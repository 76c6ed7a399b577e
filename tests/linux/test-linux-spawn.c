/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux backend's spawn path, through the plugin's real vtable, on both
 * rungs: stdio and exit codes come back, signal death is reported as such,
 * a setup failure names its step and leaves no process behind, argv[0] is
 * looked up in the target's PATH, signal() reaches the whole tree, one spec
 * serves concurrent spawns, the supervisor leaks no descriptor, the tree dies
 * with the supervisor, and sbx-init holds nothing of the supervisor's.
 */
#include "backend-test-util.h"
#include "executor-test-util.h"
#include "sbx-linux-egress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

typedef struct
{
  char             *workspace;
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
} Fixture;

static gboolean
fixture_setup (Fixture    *fx,
               const char *rung)
{
  g_autofree char *why = NULL;

  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  fx->workspace = etu_make_tmpdir ("sbx-ws-XXXXXX");
  fx->policy = linux_test_policy_new (fx->workspace, 2, 2, 0, 0);
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
  if (fx->workspace != NULL)
    etu_rm_rf (fx->workspace);
  g_clear_pointer (&fx->workspace, g_free);
}


/* Number of processes whose comm is @name. */
static int
count_processes_named (const char *name)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *entry;
  int n = 0;

  g_assert_nonnull (dir);
  while ((entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *comm = NULL;

      if (entry[0] < '0' || entry[0] > '9')
        continue;
      path = g_strdup_printf ("/proc/%s/comm", entry);
      if (g_file_get_contents (path, &comm, NULL, NULL) && strcmp (g_strstrip (comm), name) == 0)
        n++;
    }
  return n;
}

/* Waits up to @ms for no process named @name to exist. */
static gboolean
wait_no_process_named (const char *name,
                       int         ms)
{
  for (int i = 0; i < ms / 10; i++)
    {
      if (count_processes_named (name) == 0)
        return TRUE;
      g_usleep (10 * 1000);
    }
  return count_processes_named (name) == 0;
}

/* A copy of /bin/sleep under a unique name in @dir (so the test can find
 * exactly its own processes); returns its path. */
static char *
make_marked_sleep (const char *dir,
                   char      **name_out)
{
  g_autofree char *contents = NULL;
  gsize len = 0;
  char *name = g_strdup_printf ("sbxmk%d%d", (int) getpid (), g_random_int_range (1000, 9999));
  char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_get_contents ("/bin/sleep", &contents, &len, NULL));
  g_assert_true (g_file_set_contents (path, contents, (gssize) len, NULL));
  g_assert_cmpint (g_chmod (path, 0755), ==, 0);
  *name_out = name;
  return path;
}

static void
test_echo (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, data))
    return;
  run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, "echo hello; echo oops >&2; exit 3");
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_EXITED);
  g_assert_cmpint (run->exit.code, ==, 3);
  g_assert_cmpstr (run->out, ==, "hello\n");
  g_assert_cmpstr (run->err, ==, "oops\n");
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

static void
test_exit_codes (gconstpointer data)
{
  static const int codes[] = { 0, 1, 42, 126, 127, 255 };
  Fixture fx = { 0 };

  if (!fixture_setup (&fx, data))
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (codes); i++)
    {
      g_autofree char *script = g_strdup_printf ("exit %d", codes[i]);
      g_autoptr(LinuxTestRun) run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, script);

      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
      g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_EXITED);
      g_assert_cmpint (run->exit.code, ==, codes[i]);
    }
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* The target's signal death reaches the host as signal death (PID 1 of a
 * pid namespace cannot die by most signals; the exit record carries it). */
static void
test_signal_death (gconstpointer data)
{
  static const int signals[] = { SIGSEGV, SIGTERM, SIGKILL, SIGABRT };
  Fixture fx = { 0 };

  if (!fixture_setup (&fx, data))
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (signals); i++)
    {
      g_autofree char *script = g_strdup_printf ("kill -%d $$; sleep 5", signals[i]);
      g_autoptr(LinuxTestRun) run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, script);

      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
      g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_SIGNALED);
      g_assert_cmpint (run->exit.signo, ==, signals[i]);
    }
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

static void
test_stdin (gconstpointer data)
{
  const char *argv[] = { "cat", NULL };
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, data))
    return;
  run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv, NULL, "line one\nline two\n");
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_cmpstr (run->out, ==, "line one\nline two\n");
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* argv[0] without '/' is looked up in the target's PATH, never the host's. */
static void
test_path_lookup (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autofree char *bin = NULL;
  g_autofree char *prog = NULL;
  g_autofree char *path_env = NULL;
  g_autofree char *found = NULL;
  const char *argv[] = { "sbx-test-hello", NULL };

  if (!fixture_setup (&fx, data))
    return;
  bin = g_build_filename (fx.workspace, "bin", NULL);
  prog = g_build_filename (bin, "sbx-test-hello", NULL);
  g_assert_cmpint (g_mkdir (bin, 0755), ==, 0);
  g_assert_true (g_file_set_contents (prog, "#!/bin/sh\necho from-target-path\n", -1, NULL));
  g_assert_cmpint (g_chmod (prog, 0755), ==, 0);
  /* The host's PATH does not have it. */
  found = g_find_program_in_path ("sbx-test-hello");
  g_assert_null (found);

  path_env = g_strdup_printf ("PATH=/usr/bin:/bin:%s", bin);
  {
    const char *envp[] = { path_env, NULL };
    g_autoptr(LinuxTestRun) run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv,
                                                          envp, NULL);

    g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
    g_assert_cmpstr (run->out, ==, "from-target-path\n");
  }
  {
    const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
    g_autoptr(LinuxTestRun) run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv,
                                                          envp, NULL);

    g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_EXEC_NOT_FOUND);
    g_assert_nonnull (strstr (run->spawn_error, "exec"));
  }
  {
    /* No PATH at all: the ABI's default list (SBX_SPAWN_DEFAULT_PATH) is
     * searched, as by every backend: sh is found in /bin... */
    const char *sh_argv[] = { "sh", "-c", "echo default-path", NULL };
    const char *envp[] = { "HOME=/", NULL };
    g_autoptr(LinuxTestRun) run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, sh_argv,
                                                          envp, NULL);

    g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
    g_assert_cmpstr (run->out, ==, "default-path\n");
  }
  {
    /* ...and nothing else: neither the host's PATH nor the working directory. */
    const char *envp[] = { "HOME=/", NULL };
    g_autoptr(LinuxTestRun) run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv,
                                                          envp, NULL);

    g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_EXEC_NOT_FOUND);
  }
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

static void
test_exec_errors (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autofree char *script = NULL;

  if (!fixture_setup (&fx, data))
    return;
  {
    const char *argv[] = { "/nonexistent/sbx-no-such-program", NULL };
    g_autoptr(LinuxTestRun) run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv,
                                                          NULL, NULL);

    g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_EXEC_NOT_FOUND);
    g_assert_nonnull (strstr (run->spawn_error, "'exec'"));
    g_assert_nonnull (strstr (run->spawn_error, "/nonexistent/sbx-no-such-program"));
  }
  script = g_build_filename (fx.workspace, "not-executable.sh", NULL);
  g_assert_true (g_file_set_contents (script, "#!/bin/sh\necho should-not-run\n", -1, NULL));
  g_assert_cmpint (g_chmod (script, 0644), ==, 0);
  {
    const char *argv[] = { script, NULL };
    g_autoptr(LinuxTestRun) run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv,
                                                          NULL, NULL);

    g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_EXEC_DENIED);
  }
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* A setup step fails: spawn says which step and which path, and nothing is
 * left behind (no child, no zombie). */
static void
test_setup_failure (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autofree char *missing = NULL;
  const char *argv[] = { "true", NULL };
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, data))
    return;
  missing = g_build_filename (fx.workspace, "no-such-dir", NULL);
  run = linux_test_backend_run (fx.backend, fx.policy, missing, argv, NULL, NULL);
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_FAILED);
  g_assert_nonnull (strstr (run->spawn_error, "'chdir'"));
  g_assert_nonnull (strstr (run->spawn_error, missing));
  g_assert_nonnull (strstr (run->spawn_error, "No such file or directory"));

  /* A relative working directory is refused before anything is cloned. */
  {
    g_autoptr(LinuxTestRun) rel = linux_test_backend_run (fx.backend, fx.policy, "relative/dir", argv,
                                                          NULL, NULL);

    g_assert_cmpint (rel->spawn_status, ==, SBX_STATUS_INVALID);
  }
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* signal(): forwarded signals reach the target; SIGKILL kills the whole
 * tree (background children included); unsupported signals are refused. */
static void
test_signal (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autofree char *marked = NULL;
  g_autofree char *name = NULL;
  g_autofree char *script = NULL;
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, data))
    return;
  marked = make_marked_sleep (fx.workspace, &name);

  /* SIGTERM to a shell waiting on a child: the shell dies of SIGTERM. */
  {
    const char *argv[] = { "sh", "-c", "echo ready; sleep 30", NULL };

    proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv, NULL, -1, 0, &failed);
    g_assert_nonnull (proc);
    g_assert_true (linux_test_proc_read_until (proc, "ready", 10000));
    g_assert_cmpint (fx.backend->vtable->signal (fx.backend->plugin_ctx, linux_test_proc_child (proc),
                                                 SIGTERM), ==, SBX_STATUS_OK);
    run = linux_test_proc_wait (proc, NULL);
    g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_SIGNALED);
    g_assert_cmpint (run->exit.signo, ==, SIGTERM);
    g_clear_pointer (&run, linux_test_run_free);
  }

  /* SIGKILL: the target and its background children (in their own
   * sessions too) are all gone after finish. */
  script = g_strdup_printf ("(setsid %s 60 &) ; %s 60 & echo ready; wait", marked, marked);
  {
    const char *argv[] = { "sh", "-c", script, NULL };

    proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv, NULL, -1, 0, &failed);
    g_assert_nonnull (proc);
    g_assert_true (linux_test_proc_read_until (proc, "ready", 10000));
    for (int i = 0; i < 200 && count_processes_named (name) < 2; i++)
      g_usleep (10 * 1000);
    g_assert_cmpint (count_processes_named (name), ==, 2);
    /* A signal init does not forward is refused, not silently dropped. */
    g_assert_cmpint (fx.backend->vtable->signal (fx.backend->plugin_ctx, linux_test_proc_child (proc),
                                                 SIGSTOP), ==, SBX_STATUS_UNSUPPORTED);
    g_assert_cmpint (fx.backend->vtable->signal (fx.backend->plugin_ctx, linux_test_proc_child (proc),
                                                 SIGKILL), ==, SBX_STATUS_OK);
    run = linux_test_proc_wait (proc, NULL);
    g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
    g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_SIGNALED);
    g_assert_cmpint (run->exit.signo, ==, SIGKILL);
    g_assert_cmpint (count_processes_named (name), ==, 0);
  }
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* The target exits while background descendants (double fork, setsid) are
 * still running: they do not outlive the run. */
static void
test_no_descendant_outlives (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autofree char *marked = NULL;
  g_autofree char *name = NULL;
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, data))
    return;
  marked = make_marked_sleep (fx.workspace, &name);
  /* Positive control: without the sandbox the same script leaves both
   * sleepers running after the shell exits. */
  script = g_strdup_printf ("(setsid %s 3 >/dev/null 2>&1 &); (%s 3 >/dev/null 2>&1 &) ; exit 0",
                            marked, marked);
  g_assert_cmpint (linux_test_host_sh (fx.workspace, script, NULL), ==, 0);
  for (int i = 0; i < 200 && count_processes_named (name) < 2; i++)
    g_usleep (10 * 1000);
  g_assert_cmpint (count_processes_named (name), ==, 2);
  g_assert_true (wait_no_process_named (name, 5000));

  run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, script);
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->exit.code, ==, 0);
  /* finish() returned: the tree is proven empty, nothing to wait for. */
  g_assert_cmpint (count_processes_named (name), ==, 0);
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

typedef struct
{
  Fixture *fx;
  int      index;
  int      failures;
} ThreadData;

static gpointer
spawn_thread (gpointer data)
{
  ThreadData *td = data;

  for (int i = 0; i < 6; i++)
    {
      g_autofree char *script = g_strdup_printf ("echo t%d-%d", td->index, i);
      g_autofree char *expect = g_strdup_printf ("t%d-%d\n", td->index, i);
      LinuxTestRun *run = NULL;
      LinuxTestProc *proc;
      const char *argv[] = { "sh", "-c", script, NULL };

      /* The vtable's spawn is safe on one spec from several threads; the
       * harness's host call record is not, so only spawn's status is used. */
      proc = linux_test_backend_start (td->fx->backend, td->fx->policy, td->fx->workspace, argv, NULL,
                                       -1, 0, &run);
      if (proc == NULL)
        {
          td->failures++;
          linux_test_run_free (run);
          continue;
        }
      run = linux_test_proc_wait (proc, NULL);
      if (run->exit.kind != SBX_EXIT_EXITED || run->exit.code != 0 || strcmp (run->out, expect) != 0)
        {
          g_test_message ("thread %d run %d: kind %u code %d signo %d finish %d (%s) out '%s' err '%s'",
                          td->index, i, run->exit.kind, run->exit.code, run->exit.signo,
                          run->finish_status, run->finish_error ? run->finish_error : "", run->out,
                          run->err);
          td->failures++;
        }
      linux_test_run_free (run);
    }
  return NULL;
}

/* Compile once, spawn many, concurrently. */
static void
test_concurrent (gconstpointer data)
{
  Fixture fx = { 0 };
  ThreadData td[4];
  GThread *threads[4];

  if (!fixture_setup (&fx, data))
    return;
  for (int i = 0; i < 4; i++)
    {
      td[i].fx = &fx;
      td[i].index = i;
      td[i].failures = 0;
      threads[i] = g_thread_new ("spawner", spawn_thread, &td[i]);
    }
  for (int i = 0; i < 4; i++)
    {
      g_thread_join (threads[i]);
      g_assert_cmpint (td[i].failures, ==, 0);
    }
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}


/* Spawning leaks no descriptor and no child in the supervisor. */
static void
test_no_supervisor_leaks (gconstpointer data)
{
  Fixture fx = { 0 };
  int before;

  if (!fixture_setup (&fx, data))
    return;
  /* Two warm-up runs: from the second on, rung 1 spawns through the spec's
   * zygote, whose pipes and pidfds live as long as the spec. */
  for (int i = 0; i < 2; i++)
    {
      g_autoptr(LinuxTestRun) warm = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, "true");

      g_assert_nonnull (warm);
    }
  before = (int) etu_count_fds ();
  for (int i = 0; i < 10; i++)
    {
      g_autoptr(LinuxTestRun) run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace,
                                                           i % 2 ? "true" : "exit 1");
      g_autoptr(LinuxTestRun) bad = NULL;
      const char *argv[] = { "/nonexistent", NULL };

      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      bad = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv, NULL, NULL);
      g_assert_cmpint (bad->spawn_status, ==, SBX_STATUS_EXEC_NOT_FOUND);
    }
  g_assert_cmpint ((int) etu_count_fds (), ==, before);
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* The PTY mode (SBX_SPAWN_PTY: the host's terminal, handed in as the slave,
 * becomes the target's controlling terminal), one row per script; each row
 * runs at both rungs and says what the target prints at each. */
typedef struct
{
  const char *name;
  const char *script;
  const char *out[2];      /* at linux-userns, at linux-landlock */
  gboolean    prefix[2];   /* out[] is a prefix of the output, not all of it */
} PtyCase;

static const PtyCase pty_cases[] = {
  /* The descriptor is a terminal at both rungs. */
  { "pty", "test -t 0 && echo is-a-tty; exit 0",
    { "is-a-tty\n", "is-a-tty\n" }, { FALSE, FALSE } },
  /* What `tty` says about the host terminal.  At rung 1 the sandbox has its
   * own devpts, so the slave's name does not resolve inside: ttyname()
   * fails ("not a tty") even though the descriptor is a terminal.  That is
   * why SBX_SPAWN_PTY_SANDBOX exists; the legacy mode keeps working as it
   * always did. */
  { "pty/legacy-name", "test -t 0 && echo is-a-tty; tty; exit 0",
    { "is-a-tty\nnot a tty\n", "is-a-tty\n/dev/pts/" }, { FALSE, TRUE } },
};

static const char *const pty_rungs[] = { "linux-userns", "linux-landlock" };

typedef struct
{
  const PtyCase *c;
  guint          rung;     /* index into pty_rungs and PtyCase.out */
} PtyParam;

static PtyParam pty_params[G_N_ELEMENTS (pty_rungs)][G_N_ELEMENTS (pty_cases)];

static void
test_pty (gconstpointer data)
{
  const PtyParam *param = data;
  const char *backend = pty_rungs[param->rung];
  const char *want = param->c->out[param->rung];
  Fixture fx = { 0 };
  int master = -1, slave = -1;
  const char *argv[] = { "sh", "-c", param->c->script, NULL };
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, backend))
    return;
  g_assert_cmpint (openpty (&master, &slave, NULL, NULL, NULL), ==, 0);
  proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv, NULL, slave, SBX_SPAWN_PTY,
                                   &failed);
  g_assert_nonnull (proc);
  close (slave);
  run = linux_test_proc_wait (proc, NULL);
  close (master);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_test_message ("%s at %s: %s", param->c->name, backend, run->out);
  if (param->c->prefix[param->rung])
    g_assert_true (g_str_has_prefix (run->out, want));
  else
    g_assert_cmpstr (run->out, ==, want);
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* SBX_SPAWN_PTY_SANDBOX: the backend opens the terminal inside the sandbox
 * (rung 1: in the sandbox's own devpts instance, not the host's), it is the
 * target's stdin, stdout, stderr and controlling terminal, `tty` names it,
 * the window size is the request's, and the host gets only the master. */
static void
test_sandbox_pty (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autofree char *script = NULL;
  const char *argv[] = { "sh", "-c", NULL, NULL };
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;
  g_autoptr(LinuxTestRun) run = NULL;
  struct stat master_st, host_ptmx;
  unsigned int ptn = 0;
  int master, host_master = -1, host_slave = -1;
  char host_name[64];
  char buf[256];
  ssize_t n;

  if (!fixture_setup (&fx, data))
    return;
  /* A terminal of the host the target must not reach by its name. */
  g_assert_cmpint (openpty (&host_master, &host_slave, host_name, NULL, NULL), ==, 0);
  fcntl (host_master, F_SETFL, O_NONBLOCK);
  script = g_strdup_printf ("tty; stty size; test -t 0 && test -t 1 && test -t 2 && echo all-tty; "
                            "exec 3</dev/tty && echo has-ctty; "
                            "exec 5<>\"$(tty)\" && echo reopened-by-name; "
                            "(echo leaked > %s) 2>/dev/null; exit 0", host_name);
  argv[2] = script;
  proc = linux_test_backend_start_sandbox_pty (fx.backend, fx.policy, fx.workspace, argv, 33, 111,
                                               &failed);
  g_assert_nonnull (proc);
  master = linux_test_proc_pty_master (proc);
  g_assert_cmpint (ioctl (master, TIOCGPTN, &ptn), ==, 0);
  g_assert_cmpint (fstat (master, &master_st), ==, 0);
  g_assert_cmpint (stat ("/dev/pts/ptmx", &host_ptmx), ==, 0);
  if (g_str_equal (data, "linux-userns"))
    g_assert_cmpuint (master_st.st_dev, !=, host_ptmx.st_dev);   /* the sandbox's own devpts */
  run = linux_test_proc_wait (proc, NULL);
  g_test_message ("sandbox terminal at %s (pts %u): %s", (const char *) data, ptn, run->out);
  g_assert_cmpint (run->exit.kind, ==, SBX_EXIT_EXITED);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_true (g_str_has_prefix (run->out, "/dev/pts/"));
  g_assert_nonnull (strstr (run->out, "\r\n33 111\r\nall-tty\r\nhas-ctty\r\nreopened-by-name\r\n"));
  /* Nothing crossed into the host's terminal. */
  n = read (host_master, buf, sizeof buf);
  g_assert_cmpint (n, ==, -1);
  g_assert_cmpint (errno, ==, EAGAIN);
  close (host_slave);
  close (host_master);
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

/* The sandbox terminal mode re-validates its request: it replaces the
 * standard descriptors, excludes the legacy flag, needs the grown structs,
 * and unknown flags are refused.  Nothing is left running. */
static void
test_sandbox_pty_invalid (gconstpointer data)
{
  Fixture fx = { 0 };
  LinuxTestRun *failed = NULL;
  const char *argv[] = { "true", NULL };
  struct
  {
    uint32_t flags;
    int      stdin_fd;
  } cases[] = {
    { SBX_SPAWN_PTY_SANDBOX, 0 },
    { SBX_SPAWN_PTY_SANDBOX | SBX_SPAWN_PTY, 0 },
    { 4, -1 },
  };

  if (!fixture_setup (&fx, data))
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      LinuxTestProc *proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv, NULL,
                                                      cases[i].stdin_fd, cases[i].flags, &failed);

      g_assert_null (proc);
      g_assert_cmpint (failed->spawn_status, ==, SBX_STATUS_INVALID);
      g_clear_pointer (&failed, linux_test_run_free);
    }
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

/* The supervisor process dies without calling finish(): the whole tree dies
 * with it (sbx-init watches its end of the exit-record pipe). */
static void
test_supervisor_death (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autofree char *marked = NULL;
  g_autofree char *name = NULL;
  g_autofree char *script = NULL;
  int sync_pipe[2];
  pid_t supervisor;
  int status;
  char c;

  if (!fixture_setup (&fx, data))
    return;
  marked = make_marked_sleep (fx.workspace, &name);
  script = g_strdup_printf ("(setsid %s 30 &) ; %s 30 & echo ready; wait", marked, marked);
  g_assert_cmpint (pipe (sync_pipe), ==, 0);
  supervisor = fork ();
  g_assert_cmpint (supervisor, >=, 0);
  if (supervisor == 0)
    {
      const char *argv[] = { "sh", "-c", script, NULL };
      LinuxTestRun *failed = NULL;
      LinuxTestProc *proc;

      close (sync_pipe[0]);
      /* A first run, so the second goes through the spec's zygote (rung 1):
       * the zygote must go away with this process too. */
      linux_test_run_free (linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, "true"));
      proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv, NULL, -1, 0, &failed);
      if (proc == NULL || !linux_test_proc_read_until (proc, "ready", 10000))
        _exit (1);
      for (int i = 0; i < 500 && count_processes_named (name) < 2; i++)
        g_usleep (10 * 1000);
      c = count_processes_named (name) == 2 ? 'y' : 'n';
      if (write (sync_pipe[1], &c, 1) != 1)
        _exit (2);
      _exit (0);   /* no finish(), no signal(): the supervisor just goes away */
    }
  close (sync_pipe[1]);
  g_assert_cmpint (read (sync_pipe[0], &c, 1), ==, 1);
  close (sync_pipe[0]);
  g_assert_cmpint (c, ==, 'y');
  g_assert_cmpint (waitpid (supervisor, &status, 0), ==, supervisor);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_true (wait_no_process_named (name, 5000));
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* sbx-init holds no copy of the supervisor's environment, memory or
 * descriptors (inspectable from outside by root only: init is not dumpable). */
static void
test_init_holds_nothing (gconstpointer data)
{
  Fixture fx = { 0 };
  const char *argv[] = { "sh", "-c", "echo ready; sleep 30", NULL };
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;
  g_autofree char *environ_path = NULL;
  g_autofree char *cmdline_path = NULL;
  g_autofree char *fd_path = NULL;
  g_autofree char *status_path = NULL;
  g_autofree char *environ_data = NULL;
  g_autofree char *cmdline = NULL;
  g_autofree char *status_text = NULL;
  g_autoptr(GDir) dir = NULL;
  gsize len = 0;
  int n_fds = 0;
  g_autoptr(LinuxTestRun) run = NULL;

  if (geteuid () != 0)
    {
      g_test_skip ("sbx-init is not dumpable: only root can inspect its environment and descriptors");
      return;
    }
  if (!fixture_setup (&fx, data))
    return;
  g_setenv ("SBX_TEST_SUPERVISOR_SECRET", "hunter2", TRUE);
  proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv, NULL, -1, 0, &failed);
  g_assert_nonnull (proc);
  g_assert_true (linux_test_proc_read_until (proc, "ready", 10000));
  environ_path = g_strdup_printf ("/proc/%d/environ", linux_test_proc_pid (proc));
  cmdline_path = g_strdup_printf ("/proc/%d/cmdline", linux_test_proc_pid (proc));
  fd_path = g_strdup_printf ("/proc/%d/fd", linux_test_proc_pid (proc));
  status_path = g_strdup_printf ("/proc/%d/status", linux_test_proc_pid (proc));
  g_assert_true (g_file_get_contents (environ_path, &environ_data, &len, NULL));
  g_assert_cmpuint (len, ==, 0);
  g_assert_true (g_file_get_contents (cmdline_path, &cmdline, &len, NULL));
  g_assert_cmpstr (cmdline, ==, "sbx-init");
  /* The exit-record pipe and its signalfd.  The target may print before
   * init, exec'd beside it, has made the signalfd: poll until it has. */
  for (gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;;)
    {
      dir = g_dir_open (fd_path, 0, NULL);
      g_assert_nonnull (dir);
      n_fds = 0;
      while (g_dir_read_name (dir) != NULL)
        n_fds++;
      g_clear_pointer (&dir, g_dir_close);
      if (n_fds >= 2 || g_get_monotonic_time () > deadline)
        break;
      g_usleep (1000);
    }
  g_assert_cmpint (n_fds, ==, 2);
  g_assert_true (g_file_get_contents (status_path, &status_text, NULL, NULL));
  g_assert_nonnull (strstr (status_text, "CapEff:\t0000000000000000"));
  g_assert_cmpint (fx.backend->vtable->signal (fx.backend->plugin_ctx, linux_test_proc_child (proc),
                                               SIGKILL), ==, SBX_STATUS_OK);
  run = linux_test_proc_wait (proc, NULL);
  g_unsetenv ("SBX_TEST_SUPERVISOR_SECRET");
  fixture_teardown (&fx);
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* Resource limits bind the target, not the setup: a small value of each
 * limit still spawns (before, open-files 3 failed every spawn at the
 * Landlock step, which needs descriptors of its own), and the target sees
 * exactly the limit asked for. */
static void
test_low_limits (gconstpointer data)
{
  static const struct
  {
    guint64     processes, memory, open_files;
    const char *script;
    const char *expect;   /* NULL: only the spawn must succeed */
  } rows[] = {
    { 0, 0, 5, "ulimit -n", "5\n" },
    { 0, 0, 3, "exit 0", NULL },                     /* ld.so itself needs fd 3: the target's problem */
    { 0, G_GUINT64_CONSTANT (64) << 20, 0, "ulimit -d", "65536\n" },
    { 0, G_GUINT64_CONSTANT (1) << 20, 0, "exit 0", NULL },   /* 1 MiB: too small to map sh */
    /* RLIMIT_NPROC is the limit + sbx-init, where it applies (dash has no
     * ulimit option for it: read the kernel's own table, with builtins
     * only, since a command limited to one process cannot fork) */
    { 1, 0, 0, "while read -r a b c d; do [ \"$a $b\" = 'Max processes' ] && echo $c; done"
               " < /proc/self/limits; exit 0", "2\n" },
    { 1, G_GUINT64_CONSTANT (1) << 20, 3, "exit 0", NULL },   /* all of them at once */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      Fixture fx = { 0 };
      g_autoptr(LinuxTestRun) run = NULL;

      if (!fixture_setup (&fx, data))
        return;
      linux_test_policy_set_limits (fx.policy, rows[i].processes, rows[i].memory, rows[i].open_files);
      g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                       SBX_STATUS_OK);
      run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, rows[i].script);
      g_test_message ("row %" G_GSIZE_FORMAT ": spawn %d (%s), exit kind %u code %d, out \"%s\", err \"%s\"", i,
                      run->spawn_status, run->spawn_error ? run->spawn_error : "", run->exit.kind,
                      run->exit.code, run->out ? run->out : "", run->err ? run->err : "");
      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
      if (rows[i].expect != NULL && rows[i].processes != 0)
        {
          const LinuxTestEntry *e = linux_test_backend_entry (fx.backend, "process-limit");

          g_assert_nonnull (e);
          if (e->status != SBX_ABI_REPORT_ENFORCED || strstr (e->detail, "RLIMIT_NPROC") == NULL)
            {
              g_test_message ("row %" G_GSIZE_FORMAT ": the process limit is not an rlimit here (%s)", i,
                              e->detail);
              fixture_teardown (&fx);
              continue;
            }
        }
      if (rows[i].expect != NULL)
        {
          g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_EXITED);
          g_assert_cmpint (run->exit.code, ==, 0);
          g_assert_cmpstr (run->out, ==, rows[i].expect);
        }
      fixture_teardown (&fx);
    }
  /* Released: no sandbox process and no zygote is left. */
  etu_assert_no_children ();
}

/* The egress listeners a spawn request lists: each known kind is copied
 * for A (the stub's TCP side too); a kind newer than the backend is
 * skipped, so its fd stays -1 and the spawn goes on (kinds are additive);
 * an invalid entry still fails the request. */
static void
test_egress_listens_copy (void)
{
  SbxListenV1 listens[4] = { { 0 } };
  int32_t fds[4] = { 7, 7, 7, 7 };
  SbxSpawnRequestV1 req = { 0 };
  guint32 kinds[4] = { SBX_LISTEN_DNS_UDP, SBX_LISTEN_FORWARD, 99, SBX_LISTEN_DNS_TCP };
  g_autofree SbxLinuxEgressListen *copy = NULL;
  g_autofree char *message = NULL;
  int n = 0;

  for (guint i = 0; i < G_N_ELEMENTS (listens); i++)
    {
      listens[i].struct_size = sizeof listens[i];
      listens[i].kind = kinds[i];
      listens[i].family = SBX_LISTEN_IPV4;
      listens[i].port = 53;
      listens[i].address[0] = 127;
      listens[i].address[3] = (guint8) (i + 1);
    }
  req.struct_size = sizeof req;
  req.listens = listens;
  req.listen_fds = fds;
  req.n_listens = G_N_ELEMENTS (listens);
  copy = sbx_linux_egress_listens_copy (&req, &n, &message);
  g_assert_null (message);
  g_assert_cmpint (n, ==, 4);
  g_assert_cmpuint (copy[0].kind, ==, SBX_LISTEN_DNS_UDP);
  g_assert_cmpuint (copy[1].kind, ==, SBX_LISTEN_FORWARD);
  g_assert_cmpuint (copy[2].kind, ==, SBX_LINUX_EGRESS_LISTEN_SKIP);
  g_assert_cmpuint (copy[3].kind, ==, SBX_LISTEN_DNS_TCP);
  g_assert_cmpuint (copy[3].address[3], ==, 4);
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    g_assert_cmpint (fds[i], ==, -1);
  g_clear_pointer (&copy, g_free);

  listens[2].family = 5;   /* the same list with one invalid entry */
  copy = sbx_linux_egress_listens_copy (&req, &n, &message);
  g_assert_null (copy);
  g_assert_cmpint (n, ==, -1);
  g_assert_nonnull (strstr (message, "listener 2 is invalid"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  linux_test_add_both ("spawn/echo", test_echo);
  linux_test_add_both ("spawn/exit-codes", test_exit_codes);
  linux_test_add_both ("spawn/signal-death", test_signal_death);
  linux_test_add_both ("spawn/stdin", test_stdin);
  linux_test_add_both ("spawn/path-lookup", test_path_lookup);
  linux_test_add_both ("spawn/exec-errors", test_exec_errors);
  linux_test_add_both ("spawn/setup-failure", test_setup_failure);
  linux_test_add_both ("spawn/signal", test_signal);
  linux_test_add_both ("spawn/no-descendant-outlives", test_no_descendant_outlives);
  linux_test_add_both ("spawn/concurrent", test_concurrent);
  linux_test_add_both ("spawn/no-supervisor-leaks", test_no_supervisor_leaks);
  for (guint r = 0; r < G_N_ELEMENTS (pty_rungs); r++)
    for (guint c = 0; c < G_N_ELEMENTS (pty_cases); c++)
      {
        g_autofree char *path = g_strdup_printf ("/linux/%s/spawn/%s", pty_rungs[r], pty_cases[c].name);

        pty_params[r][c] = (PtyParam) { &pty_cases[c], r };
        g_test_add_data_func (path, &pty_params[r][c], test_pty);
      }
  linux_test_add_both ("spawn/pty/sandbox", test_sandbox_pty);
  linux_test_add_both ("spawn/pty/sandbox-invalid", test_sandbox_pty_invalid);
  linux_test_add_both ("spawn/supervisor-death", test_supervisor_death);
  linux_test_add_both ("spawn/init-holds-nothing", test_init_holds_nothing);
  linux_test_add_both ("spawn/low-limits", test_low_limits);
  g_test_add_func ("/linux/spawn/egress-listens-copy", test_egress_listens_copy);
  return g_test_run ();
}
