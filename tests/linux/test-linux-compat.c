/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The compat check: what a plain wrapper (or
 * bubblewrap) runs cleanly must run under `sbx run` with the default
 * profile.  Each case runs the same probe three ways, as the user running
 * the suite (root and unprivileged):
 *
 *  - outside, as a plain child (the positive control: the probe works on
 *    this host, so a failure inside is the sandbox's);
 *  - through `sbx run` at rung 1 (linux-userns) and at rung 2
 *    (SBX_BACKEND=linux-landlock), asserting what each rung gives, and where
 *    a rung cannot give it (rung 2 has no UTS or mount namespace), that it
 *    behaves as documented in docs/linux-backend.md.
 *
 * Cases: the sandbox's hostname resolves (getent, Python); a hang-up the
 * caller ignores (nohup) neither reaches sbx nor kills the command, while
 * one it does not ignore still does; a signal the caller ignores (trap ""
 * INT) starts ignored inside; lscpu, nproc and the sandbox's own cgroup
 * limits under the curated /sys, which nothing can write; a socket with a
 * long name under $TMPDIR, which is the executor's own /tmp at rung 1.
 */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "executor-test-util.h"
#include "sbx-run-options-private.h"

#define RUNG1 "linux-userns"
#define RUNG2 "linux-landlock"

/* A profile like the default with a memory limit the test can recognise
 * whatever the machine's RAM (the default is half of it, at most 4 GiB). */
static const char limited_json[] =
  "{ \"version\": 1,\n"
  "  \"workspace\": { \"root\": \".\", \"read\": \"allow\", \"write\": \"allow\" },\n"
  "  \"host\": { \"read\": \"deny\", \"write\": \"deny\" },\n"
  "  \"network\": \"deny\", \"command\": \"allow\",\n"
  "  \"home\": \"isolated\", \"isolation\": \"sandboxed\",\n"
  "  \"limits\": { \"processes\": 512, \"memory\": \"1G\" } }\n";

typedef struct
{
  int   status;   /* exit status, or 128 + signal */
  char *out;
  char *err;
} Outcome;

static void
outcome_clear (Outcome *o)
{
  g_clear_pointer (&o->out, g_free);
  g_clear_pointer (&o->err, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Outcome, outcome_clear)

/* argv: NULL-terminated.  @backend NULL: run argv as a plain child (the
 * control); otherwise argv follows `sbx run` with that backend forced.
 * @trap: a shell `trap` run first (the caller's dispositions,
 * which exec keeps), or NULL. */
static GSubprocess *
start (EtuTree           *tree,
       const char        *backend,
       const char        *trap,
       const char *const *argv)
{
  g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) full = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  GSubprocess *proc;

  g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", etu_plugin_dir ("linux"), TRUE);
  g_subprocess_launcher_setenv (l, "TMPDIR", tree->scratch, TRUE);
  if (backend != NULL)
    g_subprocess_launcher_setenv (l, "SBX_BACKEND", backend, TRUE);
  else
    g_subprocess_launcher_unsetenv (l, "SBX_BACKEND");
  g_subprocess_launcher_set_cwd (l, tree->ws);
  /* sh sets the caller's dispositions, then execs (which keeps SIG_IGN). */
  g_ptr_array_add (full, g_strdup ("/bin/sh"));
  g_ptr_array_add (full, g_strdup ("-c"));
  g_ptr_array_add (full, g_strdup_printf ("%s exec \"$@\"", trap != NULL ? trap : ""));
  g_ptr_array_add (full, g_strdup ("sh"));
  if (backend != NULL)
    {
      g_ptr_array_add (full, g_strdup (g_getenv ("SBX_TEST_SBX")));
      g_ptr_array_add (full, g_strdup ("run"));
    }
  for (; *argv != NULL; argv++)
    g_ptr_array_add (full, g_strdup (*argv));
  g_ptr_array_add (full, NULL);
  proc = g_subprocess_launcher_spawnv (l, (const char *const *) full->pdata, &error);
  g_assert_no_error (error);
  return proc;
}

static Outcome
finish (GSubprocess *proc)
{
  g_autoptr(GError) error = NULL;
  Outcome o = { 0 };

  g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &o.out, &o.err, &error));
  g_assert_no_error (error);
  o.status = g_subprocess_get_if_exited (proc) ? g_subprocess_get_exit_status (proc)
                                               : 128 + g_subprocess_get_term_sig (proc);
  if (o.err != NULL && o.err[0] != '\0')
    g_test_message ("stderr: %s", o.err);
  return o;
}

static Outcome
run (EtuTree           *tree,
     const char        *backend,
     const char        *trap,
     const char *const *argv)
{
  g_autoptr(GSubprocess) proc = start (tree, backend, trap, argv);

  return finish (proc);
}

/* `sh -c SCRIPT`, outside (@backend NULL) or inside. */
static Outcome
run_sh (EtuTree    *tree,
        const char *backend,
        const char *script)
{
  const char *argv[] = { "--", "/bin/sh", "-c", script, NULL };

  return run (tree, backend, NULL, backend != NULL ? argv : argv + 1);
}

static gboolean
have_rung (EtuTree    *tree,
           const char *backend)
{
  g_auto(Outcome) o = run_sh (tree, backend, "exit 0");

  if (o.status != 0)
    {
      g_test_skip_printf ("%s is unavailable here: %s", backend, o.err);
      return FALSE;
    }
  return TRUE;
}

static gboolean
have_program (const char *name)
{
  g_autofree char *path = g_find_program_in_path (name);

  if (path == NULL)
    g_test_skip_printf ("%s is not installed (scripts/setup.sh installs it)", name);
  return path != NULL;
}

/* ------------------------------------------------------------------------- */
/* The hostname resolves                                                      */
/* ------------------------------------------------------------------------- */

static const char hostname_script[] =
  "h=$(hostname); echo \"$h\"; getent hosts \"$h\" >/dev/null && echo getent-resolved; "
  "python3 -c 'import socket; socket.gethostbyname(socket.gethostname()); print(\"python-resolved\")' "
  "2>/dev/null; exit 0";

static void
test_hostname (gconstpointer backend)
{
  EtuTree tree = { 0 };

  if (!have_program ("python3") || !have_program ("getent"))
    return;
  etu_tree_init (&tree);
  if (have_rung (&tree, backend))
    {
      g_auto(Outcome) outside = run_sh (&tree, NULL, hostname_script);
      g_auto(Outcome) inside = run_sh (&tree, backend, hostname_script);

      g_assert_cmpint (outside.status, ==, 0);
      g_assert_cmpint (inside.status, ==, 0);
      if (g_str_equal (backend, RUNG1))
        {
          /* The sandbox's own name, resolved through its own /etc/hosts,
           * whether or not the host's name resolves outside. */
          g_assert_cmpstr (inside.out, ==, "sbx\ngetent-resolved\npython-resolved\n");
          g_test_message ("outside: %s", outside.out);
        }
      else
        {
          /* Rung 2 has no UTS or mount namespace: the host's name and the
           * host's /etc/hosts, so inside resolves exactly when outside
           * does (the control). */
          g_assert_cmpstr (inside.out, ==, outside.out);
        }
    }
  etu_tree_clear (&tree);
}

/* ------------------------------------------------------------------------- */
/* nohup: a hang-up the caller ignores                                        */
/* ------------------------------------------------------------------------- */

/* Bit N-1 of a /proc/PID/status signal-mask line NAME ("SigIgn", "SigCgt"). */
static gboolean
proc_sig_bit (GPid        pid,
              const char *name,
              int         signo)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *text = NULL;
  g_autofree char *key = g_strdup_printf ("\n%s:", name);
  const char *line;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  line = strstr (text, key);
  g_assert_nonnull (line);
  return (g_ascii_strtoull (line + strlen (key), NULL, 16) >> (signo - 1)) & 1;
}

/* The command says it is up, then waits for a line on a fifo the test
 * writes once the hang-up was sent: no sleep decides anything. */
static const char hup_command[] =
  "echo up > ready.tmp && mv ready.tmp ready; read line < fifo; exit 0";

static void
check_hangup (const char *backend,
              gboolean    ignored)
{
  EtuTree tree = { 0 };
  const char *argv_in[] = { "--", "/bin/sh", "-c", hup_command, NULL };
  const char *argv_out[] = { "/bin/sh", "-c", hup_command, NULL };

  etu_tree_init (&tree);
  if (backend == NULL || have_rung (&tree, backend))
    {
      g_autofree char *fifo = g_build_filename (tree.ws, "fifo", NULL);
      g_autofree char *ready = g_build_filename (tree.ws, "ready", NULL);
      g_autoptr(GSubprocess) proc = NULL;
      g_auto(Outcome) o = { 0 };
      GPid pid;

      g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
      proc = start (&tree, backend, ignored ? "trap '' HUP;" : NULL, backend != NULL ? argv_in : argv_out);
      g_assert_true (etu_wait_for_file (ready, 20000));
      pid = (GPid) atoi (g_subprocess_get_identifier (proc));
      /* The caller's disposition reached sbx (or the plain child) and sbx
       * did not replace it with a handler of its own. */
      g_assert_cmpint (proc_sig_bit (pid, "SigIgn", SIGHUP), ==, ignored);
      if (ignored)
        g_assert_false (proc_sig_bit (pid, "SigCgt", SIGHUP));
      g_assert_cmpint (kill (pid, SIGHUP), ==, 0);
      if (ignored)
        {
          int fd = open (fifo, O_WRONLY | O_CLOEXEC);

          g_assert_cmpint (fd, >=, 0);
          g_assert_cmpint (write (fd, "go\n", 3), ==, 3);
          close (fd);
        }
      o = finish (proc);
      /* Ignored: the command ran on and exited 0 (as under nohup without
       * sbx).  Not ignored: the hang-up ended the run with 128 + SIGHUP
       * (sbx killed the tree, or the plain child died of it). */
      g_assert_cmpint (o.status, ==, ignored ? 0 : 128 + SIGHUP);
    }
  etu_tree_clear (&tree);
}

static void
test_nohup (gconstpointer backend)
{
  check_hangup (NULL, TRUE);        /* control: nohup around a plain child */
  check_hangup (backend, FALSE);    /* control: a hang-up sbx gets still ends the run */
  check_hangup (backend, TRUE);
}

/* ------------------------------------------------------------------------- */
/* trap "" INT: a signal the caller ignores starts ignored inside             */
/* ------------------------------------------------------------------------- */

static void
test_trap_int (gconstpointer backend)
{
  EtuTree tree = { 0 };
  const char *py[] = { "--", "python3", "-c",
                       "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN, "
                       "signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN)", NULL };
  const char *status[] = { "--", "grep", "SigIgn", "/proc/self/status", NULL };

  if (!have_program ("python3"))
    return;
  etu_tree_init (&tree);
  if (have_rung (&tree, backend))
    {
      g_auto(Outcome) outside = run (&tree, NULL, "trap '' INT;", py + 1);
      g_auto(Outcome) inside = run (&tree, backend, "trap '' INT;", py);
      g_auto(Outcome) plain = run (&tree, backend, NULL, py);

      /* The control: a plain child keeps SIGINT ignored, not SIGQUIT. */
      g_assert_cmpint (outside.status, ==, 0);
      g_assert_cmpstr (outside.out, ==, "True False\n");
      g_assert_cmpint (inside.status, ==, 0);
      g_assert_cmpstr (inside.out, ==, "True False\n");
      /* Without the trap nothing is ignored inside (the library default). */
      g_assert_cmpint (plain.status, ==, 0);
      g_assert_cmpstr (plain.out, ==, "False False\n");
      if (g_str_equal (backend, RUNG1))
        {
          /* The bare probe: /proc/self/status (rung 2 shows no /proc by default). */
          g_auto(Outcome) grep = run (&tree, backend, "trap '' INT;", status);

          g_assert_cmpint (grep.status, ==, 0);
          g_assert_cmpstr (grep.out, ==, "SigIgn:\t0000000000000002\n");
        }
    }
  etu_tree_clear (&tree);
}

/* ------------------------------------------------------------------------- */
/* The curated /sys                                                           */
/* ------------------------------------------------------------------------- */

/* A CPU's online file other than cpu0's (often not hot-pluggable), or
 * NULL. */
static char *
cpu_online_file (void)
{
  for (int cpu = 1; cpu < 64; cpu++)
    {
      g_autofree char *path = g_strdup_printf ("/sys/devices/system/cpu/cpu%d/online", cpu);

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return g_steal_pointer (&path);
    }
  return NULL;
}

static void
test_sys (gconstpointer backend)
{
  EtuTree tree = { 0 };
  g_autofree char *online = cpu_online_file ();
  g_autofree char *script = NULL;
  g_autofree char *profile = NULL;

  if (!have_program ("lscpu") || !have_program ("nproc"))
    return;
  etu_tree_init (&tree);
  profile = etu_write_file (tree.tmp, "limited.json", limited_json);
  script = g_strdup_printf ("lscpu | grep -q '^CPU(s):' && echo lscpu; nproc; "
                            "f='%s'; if [ -n \"$f\" ]; then test -w \"$f\" && echo online-writable; "
                            "(echo 1 > \"$f\") 2>/dev/null && echo online-written; fi; "
                            "touch /sys/sbx-probe 2>/dev/null && echo sys-created; "
                            "if [ -r /sys/fs/cgroup/memory.max ]; then cat /sys/fs/cgroup/memory.max; "
                            "elif [ -r /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then "
                            "cat /sys/fs/cgroup/memory/memory.limit_in_bytes; "
                            "else echo no-cgroup; ulimit -d; fi; exit 0",
                            online != NULL ? online : "");
  if (have_rung (&tree, backend))
    {
      g_autofree char *nproc_line = NULL;
      const char *argv[] = { "--profile", profile, "--", "/bin/sh", "-c", script, NULL };
      g_auto(Outcome) outside = run_sh (&tree, NULL, "lscpu | grep -q '^CPU(s):' && echo lscpu; nproc");
      g_auto(Outcome) inside = run (&tree, backend, NULL, argv);

      /* The control: lscpu and nproc work outside. */
      g_assert_cmpint (outside.status, ==, 0);
      g_assert_true (g_str_has_prefix (outside.out, "lscpu\n"));
      nproc_line = g_strdup (outside.out + strlen ("lscpu\n"));
      g_assert_cmpint (inside.status, ==, 0);
      if (g_str_equal (backend, RUNG1))
        {
          g_autofree char *expect_head = g_strconcat ("lscpu\n", nproc_line, NULL);
          const char *rest;

          g_assert_true (g_str_has_prefix (inside.out, expect_head));
          rest = inside.out + strlen (expect_head);
          /* Nothing under /sys can be written or created.  The control for
           * the online file: root may write it outside. */
          if (online != NULL && geteuid () == 0)
            g_assert_cmpint (access (online, W_OK), ==, 0);
          /* The sandbox's own memory limit where it has a cgroup (root on
           * this host: v1; a delegated v2 scope); the rlimit fallback
           * otherwise (RLIMIT_DATA in KiB), and /sys/fs/cgroup then shows
           * nothing of the cgroup it shares with its caller. */
          if (g_str_has_prefix (rest, "no-cgroup\n"))
            g_assert_cmpstr (rest, ==, "no-cgroup\n1048576\n");
          else
            g_assert_cmpstr (rest, ==, "1073741824\n");
        }
      else
        {
          /* Rung 2 shows the host's /sys only where the profile lets the
           * host be read: lscpu fails under the default profile. */
          g_assert_false (g_str_has_prefix (inside.out, "lscpu\n"));
          g_assert_null (strstr (inside.out, "written"));
          g_assert_null (strstr (inside.out, "sys-created"));
        }
    }
  etu_tree_clear (&tree);
}

/* ------------------------------------------------------------------------- */
/* The library: sbx_run_options_set_ignored_signals()                         */
/* ------------------------------------------------------------------------- */

/* An executor set of the default profile on @backend (a skip: NULL). */
static SbxExecutorSet *
make_set (EtuTree    *tree,
          const char *backend)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("linux", NULL);
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;
  SbxExecutorSet *set;

  profile = sbx_profile_new_default (tree->ws, &error);
  g_assert_no_error (error);
  options = etu_options (tree->scratch, 8, registry);
  sbx_executor_set_options_set_backend (options, backend);
  set = sbx_executor_set_new (profile, options, &error);
  if (set == NULL)
    g_test_skip_printf ("%s is unavailable here: %s", backend, error->message);
  return set;
}

static const char getsignal_script[] =
  "import signal\n"
  "print(*(signal.getsignal(s) is signal.SIG_IGN for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM)))\n";

/* The option round-trips; the command starts with exactly those signals
 * ignored, on every spawn path of the rung (rung 1: direct, then through
 * the zygote and a warm sandbox); without the option nothing is ignored.
 * Rung 1's hostname and /sys hold on those paths too. */
static void
test_library_ignored_signals (gconstpointer backend)
{
  EtuTree tree = { 0 };
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GError) error = NULL;
  const int ignored[] = { SIGINT, SIGHUP };
  const char *argv[] = { "python3", "-c", getsignal_script, NULL };
  g_autofree int *back = NULL;
  gsize n_back = 0;

  g_assert_null (sbx_run_options_get_ignored_signals (options, &n_back));
  g_assert_cmpuint (n_back, ==, 0);
  sbx_run_options_set_ignored_signals (options, ignored, G_N_ELEMENTS (ignored));
  back = sbx_run_options_get_ignored_signals (options, &n_back);
  g_assert_cmpuint (n_back, ==, 2);
  g_assert_cmpint (back[0], ==, SIGHUP);
  g_assert_cmpint (back[1], ==, SIGINT);
  if (!have_program ("python3"))
    return;
  etu_tree_init (&tree);
  set = make_set (&tree, backend);
  if (set != NULL)
    {
      executor = sbx_executor_set_for_key (set, "a", &error);
      g_assert_no_error (error);
      for (int i = 0; i < 4; i++)
        {
          g_autoptr(SbxRunResult) result = NULL;
          const char *expect;
          GBytes *out;

          /* The third run goes without the option: the library default. */
          result = sbx_executor_run (executor, tree.ws, argv, i == 2 ? NULL : options, NULL, &error);
          g_assert_no_error (error);
          out = sbx_run_result_get_output (result);
          g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
          expect = i == 2 ? "False False False\n" : "True True False\n";
          g_assert_cmpmem (g_bytes_get_data (out, NULL), g_bytes_get_size (out), expect, strlen (expect));
        }
      /* Rung 1's view on those paths too: the sandbox's /etc/hosts and
       * /sys come from the zygote's template and each sandbox's mounts. */
      for (int i = 0; g_str_equal (backend, RUNG1) && i < 3; i++)
        {
          const char *view[] = { "/bin/sh", "-c", "getent hosts \"$(hostname)\" | awk '{ print $1 }'; "
                                                  "cat /sys/devices/system/cpu/online > /dev/null && echo cpu", NULL };
          g_autoptr(SbxRunResult) result = sbx_executor_run (executor, tree.ws, view, NULL, NULL, &error);
          GBytes *out;

          g_assert_no_error (error);
          out = sbx_run_result_get_output (result);
          g_assert_cmpmem (g_bytes_get_data (out, NULL), g_bytes_get_size (out), "127.0.1.1\ncpu\n", 14);
        }
      g_assert_true (sbx_executor_set_close (set, NULL, &error));
      g_assert_no_error (error);
    }
  etu_tree_clear (&tree);
}

/* A signal the command ignores, sent with sbx_process_send_signal(), is not
 * passed on to the rest of its tree by sbx-init: a child that set SIGHUP
 * back to its default survives it, as it would under a plain parent.  The
 * control: without the option the same hang-up ends that child (the
 * command ignores SIGHUP itself, but sbx-init does not know and forwards
 * it).  SIGUSR1, which init forwards and the command's parent
 * records, orders the test after the hang-up (init reads its signals in
 * order of number: HUP before USR1).  The parent's USR1 handler is in place
 * before the fork, so before "ready": installed after it, a USR1 sent in
 * between was lost (the test failed about once in twenty runs under load). */
static const char family_script[] =
  "import os, signal, sys\n"
  "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
  "signal.signal(signal.SIGUSR1, lambda s, f: open('usr1', 'w').close())\n"
  "pid = os.fork()\n"
  "if pid == 0:\n"
  "    signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
  "    signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"
  "    open('ready.tmp', 'w').close(); os.rename('ready.tmp', 'ready')\n"
  "    open('fifo').read()\n"
  "    print('child-alive', flush=True)\n"
  "    sys.exit(0)\n"
  "while True:\n"
  "    try:\n"
  "        _, status = os.waitpid(pid, 0)\n"
  "        break\n"
  "    except InterruptedError:\n"
  "        pass\n"
  "print('child-status', status, flush=True)\n";

static void
check_no_forward (const char *backend,
                  gboolean    ignored)
{
  EtuTree tree = { 0 };
  g_autoptr(SbxExecutorSet) set = NULL;

  etu_tree_init (&tree);
  set = make_set (&tree, backend);
  if (set != NULL)
    {
      g_autoptr(SbxExecutor) executor = sbx_executor_set_for_key (set, "a", NULL);
      g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
      g_autoptr(SbxProcess) process = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *fifo = g_build_filename (tree.ws, "fifo", NULL);
      g_autofree char *ready = g_build_filename (tree.ws, "ready", NULL);
      g_autofree char *usr1 = g_build_filename (tree.ws, "usr1", NULL);
      g_autofree char *out = NULL;
      const int hup[] = { SIGHUP };
      const char *argv[] = { "python3", "-c", family_script, NULL };

      g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
      if (ignored)
        sbx_run_options_set_ignored_signals (options, hup, 1);
      sbx_run_options_set_stdout (options, SBX_STDIO_PIPE);
      process = sbx_executor_spawn (executor, tree.ws, argv, options, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (etu_wait_for_file (ready, 20000));
      g_assert_true (sbx_process_send_signal (process, SIGHUP, &error));
      g_assert_no_error (error);
      g_assert_true (sbx_process_send_signal (process, SIGUSR1, &error));
      g_assert_no_error (error);
      g_assert_true (etu_wait_for_file (usr1, 20000));
      if (ignored)
        {
          int fd = open (fifo, O_WRONLY | O_CLOEXEC);

          g_assert_cmpint (fd, >=, 0);
          g_assert_cmpint (write (fd, "go", 2), ==, 2);
          close (fd);
        }
      g_assert_true (sbx_process_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpstr (out, ==, ignored ? "child-alive\nchild-status 0\n"
                                        : "child-status 1\n");   /* killed by SIGHUP */
      g_assert_true (sbx_executor_set_close (set, NULL, &error));
      g_assert_no_error (error);
    }
  etu_tree_clear (&tree);
}

static void
test_library_no_forward (gconstpointer backend)
{
  if (!have_program ("python3"))
    return;
  check_no_forward (backend, FALSE);
  check_no_forward (backend, TRUE);
}

/* ------------------------------------------------------------------------- */
/* A short private /tmp: a socket under $TMPDIR with a long name              */
/* ------------------------------------------------------------------------- */

/* Binds and connects a unix socket of a 95-byte path under $TMPDIR (the
 * address holds 107), then prints TMPDIR and HOME and whether HOME is
 * writable. */
static const char tmp_script[] =
  "python3 -c 'import os, socket\n"
  "d = os.environ[\"TMPDIR\"]\n"
  "p = os.path.join(d, (\"sock-%d-\" % os.getpid()).ljust(90, \"x\"))\n"
  "s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(1)\n"
  "c = socket.socket(socket.AF_UNIX); c.connect(p); os.unlink(p)\n"
  "print(\"long-socket-ok\", len(p))' 2>&1; "
  "echo \"TMPDIR=$TMPDIR\"; echo \"HOME=$HOME\"; "
  "echo h > \"$HOME/h\" && cat \"$HOME/h\"; (echo t > /tmp/sbx-tmpw-$$ && rm -f /tmp/sbx-tmpw-$$) 2>/dev/null && echo tmp-writable; "
  "test -e \"$SENTINEL\" && echo host-tmp-visible; exit 0";

/* A workspace outside /tmp (the view shows nothing else under /tmp): in
 * /var/tmp, else the test is skipped. */
static char *
workspace_outside_tmp (void)
{
  g_autofree char *ws = g_strdup ("/var/tmp/sbx-compat-ws-XXXXXX");

  if (g_mkdtemp (ws) == NULL)
    {
      g_test_skip_printf ("cannot make a workspace outside /tmp (/var/tmp: %s)", g_strerror (errno));
      return NULL;
    }
  return g_steal_pointer (&ws);
}

static void
test_private_tmp (gconstpointer backend)
{
  EtuTree tree = { 0 };
  g_autofree char *ws = NULL;
  g_autofree char *sentinel = NULL;
  g_autofree char *script = NULL;
  g_autofree char *control = NULL;
  g_autofree char *saved_ws = NULL;
  int fd;

  etu_tree_init (&tree);
  ws = workspace_outside_tmp ();
  if (ws == NULL || !have_program ("python3") || !have_rung (&tree, backend))
    {
      if (ws != NULL)
        g_rmdir (ws);
      etu_tree_clear (&tree);
      return;
    }
  /* A file in the host's /tmp that no sandbox /tmp may show. */
  sentinel = g_strdup ("/tmp/sbx-compat-sentinel-XXXXXX");
  fd = g_mkstemp (sentinel);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  script = g_strdup_printf ("SENTINEL='%s'; %s", sentinel, tmp_script);
  saved_ws = g_steal_pointer (&tree.ws);
  tree.ws = g_strdup (ws);

  /* Positive control: outside, with the usual TMPDIR=/tmp, the long name
   * binds and connects, and the host's /tmp shows the sentinel. */
  control = g_strdup_printf ("TMPDIR=/tmp; export TMPDIR; %s", script);
  {
    g_auto(Outcome) o = run_sh (&tree, NULL, control);

    g_assert_cmpint (o.status, ==, 0);
    g_assert_nonnull (strstr (o.out, "long-socket-ok 95"));
    g_assert_nonnull (strstr (o.out, "host-tmp-visible"));
  }
  {
    g_auto(Outcome) o = run_sh (&tree, backend, script);

    g_assert_cmpint (o.status, ==, 0);
    g_assert_nonnull (strstr (o.out, "HOME=")); /* and then "h": HOME is writable */
    g_assert_nonnull (strstr (o.out, "\nh\n"));
    if (strcmp (backend, RUNG1) == 0)
      {
        /* The executor's TMPDIR is /tmp, private: the long name fits, the
         * host's /tmp is not shown, HOME (beside TMPDIR in the scratch
         * root under /tmp) is shown at /home/sbx. */
        g_assert_nonnull (strstr (o.out, "long-socket-ok 95"));
        g_assert_nonnull (strstr (o.out, "TMPDIR=/tmp\n"));
        g_assert_null (strstr (o.out, "host-tmp-visible"));
        g_assert_nonnull (strstr (o.out, "tmp-writable"));
        if (g_str_has_prefix (tree.scratch, "/tmp/"))
          g_assert_nonnull (strstr (o.out, "HOME=/home/sbx\n"));
      }
    else
      {
        /* No mount namespace: TMPDIR stays the executor's directory. */
        g_autofree char *expect = g_strdup_printf ("TMPDIR=%s/", tree.scratch);

        g_assert_nonnull (strstr (o.out, expect));
      }
  }
  /* A workspace under /tmp keeps its path: TMPDIR is not moved then. */
  if (strcmp (backend, RUNG1) == 0 && g_str_has_prefix (saved_ws, "/tmp/"))
    {
      g_autofree char *expect = g_strdup_printf ("TMPDIR=%s/", tree.scratch);
      g_auto(Outcome) o = { 0 };

      g_free (tree.ws);
      tree.ws = g_strdup (saved_ws);
      o = run_sh (&tree, backend, script);
      g_assert_cmpint (o.status, ==, 0);
      g_assert_nonnull (strstr (o.out, expect));
    }
  g_unlink (sentinel);
  g_free (tree.ws);
  tree.ws = g_steal_pointer (&saved_ws);
  etu_rm_rf (ws);
  etu_tree_clear (&tree);
}

int
main (int    argc,
      char **argv)
{
  static const char *const rungs[][2] = { { "rung1", RUNG1 }, { "rung2", RUNG2 } };

  /* The cases set the dispositions they test (trap '' INT, nohup) and
   * compare with a plain child: they start from the defaults, whoever
   * launched the suite (a shell's background job starts with SIGINT and
   * SIGQUIT ignored, and the controls would inherit that). */
  signal (SIGINT, SIG_DFL);
  signal (SIGQUIT, SIG_DFL);
  signal (SIGHUP, SIG_DFL);
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (rungs); i++)
    {
      g_autofree char *hostname = g_strdup_printf ("/linux/compat/hostname/%s", rungs[i][0]);
      g_autofree char *nohup = g_strdup_printf ("/linux/compat/nohup/%s", rungs[i][0]);
      g_autofree char *trap = g_strdup_printf ("/linux/compat/trap-int/%s", rungs[i][0]);
      g_autofree char *sys = g_strdup_printf ("/linux/compat/sys/%s", rungs[i][0]);
      g_autofree char *lib = g_strdup_printf ("/linux/compat/library/ignored-signals/%s", rungs[i][0]);
      g_autofree char *fwd = g_strdup_printf ("/linux/compat/library/ignored-not-forwarded/%s", rungs[i][0]);
      g_autofree char *tmp = g_strdup_printf ("/linux/compat/private-tmp/%s", rungs[i][0]);

      g_test_add_data_func (hostname, rungs[i][1], test_hostname);
      g_test_add_data_func (nohup, rungs[i][1], test_nohup);
      g_test_add_data_func (trap, rungs[i][1], test_trap_int);
      g_test_add_data_func (sys, rungs[i][1], test_sys);
      g_test_add_data_func (lib, rungs[i][1], test_library_ignored_signals);
      g_test_add_data_func (fwd, rungs[i][1], test_library_no_forward);
      g_test_add_data_func (tmp, rungs[i][1], test_private_tmp);
    }
  return g_test_run ();
}
