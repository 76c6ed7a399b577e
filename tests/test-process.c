/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxProcess: spawned commands supervised from the main loop.
 *
 * Every case runs on the unconfined backend and, where the host has it, on
 * linux-userns (the default profile, sbx's init as PID 1); the PTY cases
 * only on linux (the unconfined backend refuses a PTY, which is asserted);
 * "run-pty" is sbx_executor_run with a PTY: the relay, the size, a resize
 * through the resize hook and the output limit.
 * Every case ends by closing the set and checking that no child process, no
 * file descriptor and no scratch entry is left; "close-releases-all"
 * repeats that check with the scratch root on a tmpfs, where the close is
 * fast enough to race the library's own threads.
 *
 * These are the cases of one module, SbxProcess, on two backends, with one
 * fixture and one leak check shared by all; so it is over a thousand lines.
 */
#include <sbx/sbx.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gio/gunixinputstream.h>

#include "executor-test-util.h"
#include "executor-test-util.h"

typedef struct
{
  EtuTree         tree;
  SbxExecutorSet *set;
  SbxExecutor    *executor;
  guint           fds_before;
  gboolean        linux_backend;
} Fixture;

/* A set over a fresh tree, its scratch root on a tmpfs when @tmpfs; FALSE
 * when the case is skipped (said why). */
static gboolean
fixture_setup_full (Fixture    *fx,
                    const char *backend,
                    SbxAccess   command,
                    gboolean    tmpfs)
{
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;

  memset (fx, 0, sizeof *fx);
  fx->fds_before = etu_count_fds ();
  if (!tmpfs)
    etu_tree_init (&fx->tree);
  else
    {
      g_autofree char *reason = NULL;

      if (!etu_tree_init_tmpfs (&fx->tree, &reason))
        {
          g_test_skip (reason);
          return FALSE;
        }
    }
  fx->linux_backend = g_str_equal (backend, "linux");
  if (fx->linux_backend)
    {
      const char *dir = g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR");
      const char *dirs[] = { dir, NULL };
      g_autoptr(SbxProfileConfig) config = NULL;

      if (dir == NULL)
        {
          etu_tree_clear (&fx->tree);
          g_test_skip ("the linux plugin is not built");
          return FALSE;
        }
      registry = sbx_registry_new_for_directories (dirs, &error);
      g_assert_no_error (error);
      profile = sbx_profile_new_default (fx->tree.ws, &error);
      g_assert_no_error (error);
      if (command != SBX_ACCESS_ALLOW)
        {
          config = sbx_profile_config_new ();
          sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW,
                                            SBX_ACCESS_ALLOW);
          sbx_profile_config_set_command (config, command);
          g_clear_pointer (&profile, sbx_profile_unref);
          profile = sbx_profile_new (config, &error);
          g_assert_no_error (error);
        }
    }
  else
    {
      registry = etu_registry ("unconfined", NULL);
      profile = etu_profile_unconfined (fx->tree.ws, command);
    }
  options = etu_options (fx->tree.scratch, 4, registry);
  if (fx->linux_backend)
    sbx_executor_set_options_set_backend (options, "linux-userns");
  fx->set = sbx_executor_set_new (profile, options, &error);
  if (fx->set == NULL && fx->linux_backend)
    {
      /* A host without user namespaces: said, not hidden. */
      g_test_skip_printf ("linux-userns is unavailable here: %s", error->message);
      etu_tree_clear (&fx->tree);
      return FALSE;
    }
  g_assert_no_error (error);
  fx->executor = sbx_executor_set_for_key (fx->set, "k", &error);
  g_assert_no_error (error);
  return TRUE;
}

static gboolean
fixture_setup (Fixture    *fx,
               const char *backend,
               SbxAccess   command)
{
  return fixture_setup_full (fx, backend, command, FALSE);
}

/* Closes the set and checks that nothing survives. */
static void
fixture_teardown (Fixture *fx)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sbx_executor_set_close (fx->set, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  /* Pending idle completions of finished waits hold no fd or process. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (etu_count_children (), ==, 0);
  if (etu_count_fds () != fx->fds_before)
    {
      g_autofree char *fds = etu_list_fds ();

      g_error ("fds leaked: %u before, %u after:\n%s", fx->fds_before, etu_count_fds (), fds);
    }
  {
    g_autoptr(GDir) dir = g_dir_open (fx->tree.scratch, 0, NULL);

    g_assert_nonnull (dir);
    g_assert_null (g_dir_read_name (dir));
  }
  etu_tree_clear (&fx->tree);
}

static SbxProcess *
spawn (Fixture             *fx,
       const char          *script,
       const SbxRunOptions *options,
       GCancellable        *cancellable)
{
  g_autoptr(GError) error = NULL;
  SbxProcess *process = sbx_executor_spawn (fx->executor, fx->tree.ws, SBX_SH_ARGV (script),
                                            options, cancellable, &error);

  g_assert_no_error (error);
  g_assert_nonnull (process);
  return process;
}

static char *
read_line (GDataInputStream *in)
{
  g_autoptr(GError) error = NULL;
  char *line = g_data_input_stream_read_line_utf8 (in, NULL, NULL, &error);

  g_assert_no_error (error);
  return line;
}

/* Marked processes: a copy of sleep whose name carries @marker, so a scan
 * of /proc finds every one wherever it was reparented. */
static char *
make_marked_sleep (Fixture    *fx,
                   const char *marker)
{
  g_autofree char *contents = NULL;
  gsize len;
  char *path = g_build_filename (fx->tree.ws, marker, NULL);

  g_assert_true (g_file_get_contents ("/bin/sleep", &contents, &len, NULL));
  g_assert_true (g_file_set_contents (path, contents, len, NULL));
  g_assert_cmpint (chmod (path, 0755), ==, 0);
  return path;
}

static guint
count_marked (const char *marker)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("/proc/%s/cmdline", name);
      g_autofree char *cmdline = NULL;
      gsize len = 0;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &cmdline, &len, NULL))
        continue;
      if (len > 0 && g_strstr_len (cmdline, len, marker) != NULL)
        n++;
    }
  return n;
}

/* Positive controls: waits (up to 5 s) until @n marked processes run. */
static guint
wait_marked (const char *marker,
             guint       n)
{
  for (guint tries = 0; count_marked (marker) < n && tries < 500; tries++)
    g_usleep (10000);
  return count_marked (marker);
}

static guint
count_threads (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  guint n = 0;

  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* ------------------------------------------------------------------------- */
/* Stream modes                                                               */
/* ------------------------------------------------------------------------- */

static void
test_pipes (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  process = spawn (&fx, "read x; echo \"out:$x\"; echo err >&2; exit 3", NULL, NULL);
  g_assert_nonnull (sbx_process_get_stdin_pipe (process));
  g_assert_nonnull (sbx_process_get_stdout_pipe (process));
  g_assert_nonnull (sbx_process_get_stderr_pipe (process));
  g_assert_nonnull (sbx_process_get_identifier (process));
  g_assert_true (sbx_process_communicate_utf8 (process, "hi\n", NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "out:hi\n");
  g_assert_cmpstr (err, ==, "err\n");
  g_assert_true (sbx_process_get_if_exited (process));
  g_assert_false (sbx_process_get_if_signaled (process));
  g_assert_cmpint (sbx_process_get_exit_status (process), ==, 3);
  g_assert_false (sbx_process_get_successful (process));
  g_assert_null (sbx_process_get_identifier (process));
  g_assert_false (sbx_process_wait_check (process, NULL, &error));
  g_assert_error (error, G_SPAWN_EXIT_ERROR, 3);
  if (fx.linux_backend)
    g_assert_cmpint (sbx_process_get_lifetime_containment (process), ==,
                     SBX_LIFETIME_CONTAINMENT_ENFORCED);
  g_clear_object (&process);
  fixture_teardown (&fx);
}

static void
test_merge_and_null (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  /* stderr into stdout, in write order; stdin the null device. */
  sbx_run_options_set_stderr (options, SBX_STDIO_MERGE);
  sbx_run_options_set_stdin (options, SBX_STDIO_NULL);
  process = spawn (&fx, "echo one; echo two >&2; echo three; cat; echo eof", options, NULL);
  g_assert_null (sbx_process_get_stdin_pipe (process));
  g_assert_null (sbx_process_get_stderr_pipe (process));
  g_assert_true (sbx_process_communicate_utf8 (process, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "one\ntwo\nthree\neof\n");
  g_assert_null (err);
  g_assert_true (sbx_process_get_successful (process));
  g_clear_object (&process);

  /* stdout to the null device: no pipe, and nothing arrives anywhere. */
  g_clear_pointer (&options, sbx_run_options_free);
  options = sbx_run_options_new ();
  sbx_run_options_set_stdout (options, SBX_STDIO_NULL);
  process = spawn (&fx, "echo lost; echo kept >&2", options, NULL);
  g_assert_null (sbx_process_get_stdout_pipe (process));
  g_clear_pointer (&err, g_free);
  g_assert_true (sbx_process_communicate_utf8 (process, NULL, NULL, NULL, &err, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (err, ==, "kept\n");
  g_clear_object (&process);
  fixture_teardown (&fx);
}

static void
test_inherit_and_fd (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  int in_pipe[2];
  int out_pipe[2];
  int saved_stdin;
  char buf[64] = { 0 };
  ssize_t n;

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  /* INHERIT: the child reads this process's own fd 0. */
  g_assert_cmpint (pipe2 (in_pipe, O_CLOEXEC), ==, 0);
  g_assert_cmpint (write (in_pipe[1], "inherited\n", 10), ==, 10);
  close (in_pipe[1]);
  saved_stdin = dup (0);
  g_assert_cmpint (dup2 (in_pipe[0], 0), ==, 0);
  close (in_pipe[0]);
  sbx_run_options_set_stdin (options, SBX_STDIO_INHERIT);
  process = spawn (&fx, "cat", options, NULL);
  g_assert_cmpint (dup2 (saved_stdin, 0), ==, 0);
  close (saved_stdin);
  g_assert_null (sbx_process_get_stdin_pipe (process));
  g_assert_true (sbx_process_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "inherited\n");
  g_clear_object (&process);

  /* A caller fd takes precedence over the mode. */
  g_clear_pointer (&options, sbx_run_options_free);
  options = sbx_run_options_new ();
  g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
  sbx_run_options_set_stdout (options, SBX_STDIO_NULL);
  sbx_run_options_set_stdout_fd (options, out_pipe[1]);
  process = spawn (&fx, "echo to-fd", options, NULL);
  close (out_pipe[1]);
  g_assert_null (sbx_process_get_stdout_pipe (process));
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_no_error (error);
  n = read (out_pipe[0], buf, sizeof buf - 1);
  g_assert_cmpint (n, ==, 6);
  g_assert_cmpstr (buf, ==, "to-fd\n");
  close (out_pipe[0]);
  g_clear_object (&process);
  fixture_teardown (&fx);
}

/* ------------------------------------------------------------------------- */
/* Output while it runs                                                       */
/* ------------------------------------------------------------------------- */

typedef struct
{
  GMainLoop        *loop;
  GDataInputStream *in;
  SbxProcess       *process;
  GPtrArray        *lines;
  gboolean          running_at_first_line;
  gboolean          waited;
  GError           *wait_error;
} Streaming;

static void on_line (GObject *source, GAsyncResult *result, gpointer data);

static void
on_waited (GObject      *source,
           GAsyncResult *result,
           gpointer      data)
{
  Streaming *st = data;

  sbx_process_wait_finish (SBX_PROCESS (source), result, &st->wait_error);
  st->waited = TRUE;
  g_main_loop_quit (st->loop);
}

static void
on_line (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  Streaming *st = data;
  g_autoptr(GError) error = NULL;
  char *line = g_data_input_stream_read_line_finish_utf8 (st->in, result, NULL, &error);

  g_assert_no_error (error);
  if (line == NULL)
    {
      g_main_loop_quit (st->loop);
      return;
    }
  if (st->lines->len == 0)
    {
      /* The first line arrived while the command still runs: it waits for
       * its stdin, which is only closed now. */
      st->running_at_first_line = sbx_process_get_identifier (st->process) != NULL
                                  && !st->waited;
      g_assert_true (g_output_stream_write_all (sbx_process_get_stdin_pipe (st->process),
                                                "go\n", 3, NULL, NULL, NULL));
      g_assert_true (g_output_stream_close (sbx_process_get_stdin_pipe (st->process), NULL,
                                            NULL));
    }
  g_ptr_array_add (st->lines, line);
  g_data_input_stream_read_line_async (st->in, G_PRIORITY_DEFAULT, NULL, on_line, st);
}

static void
test_lines_before_exit (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  Streaming st = { 0 };

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  process = spawn (&fx, "echo first; read x; echo \"second $x\"", NULL, NULL);
  st.loop = loop;
  st.process = process;
  st.lines = g_ptr_array_new_with_free_func (g_free);
  st.in = g_data_input_stream_new (sbx_process_get_stdout_pipe (process));
  g_data_input_stream_read_line_async (st.in, G_PRIORITY_DEFAULT, NULL, on_line, &st);
  sbx_process_wait_async (process, NULL, on_waited, &st);
  while (!st.waited || st.lines->len < 2)
    g_main_loop_run (loop);
  g_assert_no_error (st.wait_error);
  g_assert_true (st.running_at_first_line);
  g_assert_cmpuint (st.lines->len, ==, 2);
  g_assert_cmpstr (st.lines->pdata[0], ==, "first");
  g_assert_cmpstr (st.lines->pdata[1], ==, "second go");
  g_assert_true (sbx_process_get_successful (process));
  g_ptr_array_unref (st.lines);
  g_object_unref (st.in);
  g_clear_object (&process);
  fixture_teardown (&fx);
}

/* ------------------------------------------------------------------------- */
/* PTY                                                                        */
/* ------------------------------------------------------------------------- */

static void
test_pty (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GDataInputStream) in = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GOutputStream *to_tty;
  char *line;

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  sbx_run_options_set_pty (options, 24, 80);
  if (!fx.linux_backend)
    {
      /* The unconfined backend has no PTY: refused, nothing runs. */
      g_assert_null (sbx_executor_spawn (fx.executor, fx.tree.ws, SBX_SH_ARGV ("true"), options,
                                         NULL, &error));
      g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED);
      fixture_teardown (&fx);
      return;
    }
  process = spawn (&fx,
                   "stty -echo; "
                   "if test -t 0 && test -t 1 && test -t 2 && tty | grep -q '^/dev/pts/'; "
                   "then echo tty; else echo no-tty; fi; "
                   "stty size; echo ready; read x; stty size; echo done",
                   options, NULL);
  g_assert_null (sbx_process_get_stderr_pipe (process));
  to_tty = sbx_process_get_stdin_pipe (process);
  g_assert_nonnull (to_tty);
  in = g_data_input_stream_new (sbx_process_get_stdout_pipe (process));
  g_data_input_stream_set_newline_type (in, G_DATA_STREAM_NEWLINE_TYPE_ANY);
  while ((line = read_line (in)) != NULL)
    {
      g_strstrip (line);
      if (line[0] == '\0')
        {
          g_free (line);
          continue;
        }
      g_ptr_array_add (lines, line);
      if (g_str_equal (line, "ready"))
        {
          g_assert_true (sbx_process_resize (process, 42, 111, &error));
          g_assert_no_error (error);
          g_assert_true (g_output_stream_write_all (to_tty, "\n", 1, NULL, NULL, &error));
          g_assert_no_error (error);
        }
    }
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lines->len, ==, 5);
  g_assert_cmpstr (lines->pdata[0], ==, "tty");
  g_assert_cmpstr (lines->pdata[1], ==, "24 80");
  g_assert_cmpstr (lines->pdata[3], ==, "42 111");
  g_assert_cmpstr (lines->pdata[4], ==, "done");
  g_assert_true (sbx_process_get_successful (process));
  /* A process without a PTY cannot be resized. */
  g_clear_object (&in);
  g_clear_object (&process);
  process = spawn (&fx, "true", NULL, NULL);
  g_assert_false (sbx_process_resize (process, 10, 10, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT);
  g_assert_true (sbx_process_wait (process, NULL, NULL));
  g_clear_object (&process);
  fixture_teardown (&fx);
}

/* A run with a PTY: the supervisor relays the caller's descriptors to the
 * sandbox's terminal and follows the caller's terminal's size. */
typedef struct
{
  SbxExecutor         *executor;
  const char          *cwd;
  const char          *script;
  const SbxRunOptions *options;
  int                  close_after;   /* closed once the run returned, or -1 */
  SbxRunResult        *result;
  GError              *error;
} RunInThread;

static gpointer
run_in_thread (gpointer data)
{
  RunInThread *r = data;

  r->result = sbx_executor_run (r->executor, r->cwd, SBX_SH_ARGV (r->script), r->options, NULL,
                                &r->error);
  /* The run borrowed it; closing it now ends the reader's loop however the
   * run went. */
  if (r->close_after >= 0)
    close (r->close_after);
  return NULL;
}

/* One line from @fd (a pipe), without its line end; NULL at its end. */
static char *
read_fd_line (int fd)
{
  g_autoptr(GString) line = g_string_new (NULL);
  char c;

  for (;;)
    {
      ssize_t n = read (fd, &c, 1);

      if (n < 0 && errno == EINTR)
        continue;
      g_assert_cmpint (n, >=, 0);
      if (n == 0)
        return line->len > 0 ? g_string_free (g_steal_pointer (&line), FALSE) : NULL;
      if (c == '\n')
        return g_strstrip (g_string_free (g_steal_pointer (&line), FALSE));
      g_string_append_c (line, c);
    }
}

static void
test_run_pty (gconstpointer data)
{
  static const char script[] =
    "stty -echo; "
    "if test -t 0 && test -t 1 && test -t 2 && tty | grep -q '^/dev/pts/'; "
    "then echo tty; else echo no-tty; fi; "
    "stty size; echo ready; read x; stty size; echo \"got $x\"; "
    "trap 'echo winch; exit 0' WINCH; echo armed; "
    "i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; echo no-winch";
  Fixture fx;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *marker = NULL;
  RunInThread r = { 0 };
  GThread *thread;
  struct winsize ws = { .ws_row = 30, .ws_col = 100 };
  int outer;            /* the caller's terminal: its master ... */
  int outer_slave;      /* ... and the slave whose size is followed */
  int in[2], out[2], resize[2];
  char *line;

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  sbx_run_options_set_pty (options, 24, 80);
  if (!fx.linux_backend)
    {
      const char *touch[] = { "/bin/sh", "-c", "touch pty-ran", NULL };

      /* The unconfined backend has no PTY: refused, nothing runs. */
      marker = g_build_filename (fx.tree.ws, "pty-ran", NULL);
      g_assert_null (sbx_executor_run (fx.executor, fx.tree.ws, touch, options, NULL, &error));
      g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED);
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
      fixture_teardown (&fx);
      return;
    }

  outer = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (outer, >=, 0);
  g_assert_cmpint (grantpt (outer), ==, 0);
  g_assert_cmpint (unlockpt (outer), ==, 0);
  outer_slave = open (ptsname (outer), O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (outer_slave, >=, 0);
  g_assert_cmpint (ioctl (outer, TIOCSWINSZ, &ws), ==, 0);
  g_assert_cmpint (pipe2 (in, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (out, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (resize, O_CLOEXEC), ==, 0);

  /* Input from one pipe, output live to another, the size of the outer
   * terminal followed on each byte of the resize pipe. */
  sbx_run_options_set_stdin_fd (options, in[0]);
  sbx_run_options_set_stdout_fd (options, out[1]);
  sbx_run_options_set_pty_resize_fd (options, resize[0], outer_slave);
  r.executor = fx.executor;
  r.cwd = fx.tree.ws;
  r.script = script;
  r.options = options;
  r.close_after = out[1];   /* a sync run borrows it until it returns */
  thread = g_thread_new ("run-pty", run_in_thread, &r);
  while ((line = read_fd_line (out[0])) != NULL)
    {
      if (line[0] == '\0')
        {
          g_free (line);
          continue;
        }
      g_ptr_array_add (lines, line);
      if (g_str_equal (line, "ready"))
        {
          /* The resize first: the relay applies it before the input that
           * follows it, so the second `stty size` sees it. */
          ws.ws_row = 42;
          ws.ws_col = 111;
          g_assert_cmpint (ioctl (outer, TIOCSWINSZ, &ws), ==, 0);
          g_assert_cmpint (write (resize[1], "w", 1), ==, 1);
          g_assert_cmpint (write (in[1], "go\n", 3), ==, 3);
        }
      /* A resize event with the size unchanged: the kernel would send no
       * SIGWINCH; the run sends it (the hook's promise). */
      if (g_str_equal (line, "armed"))
        g_assert_cmpint (write (resize[1], "w", 1), ==, 1);
    }
  g_thread_join (thread);
  g_assert_no_error (r.error);
  g_assert_nonnull (r.result);
  g_assert_true (sbx_run_result_get_successful (r.result));
  g_assert_cmpuint (lines->len, ==, 7);
  g_assert_cmpstr (lines->pdata[0], ==, "tty");
  g_assert_cmpstr (lines->pdata[1], ==, "24 80");
  g_assert_cmpstr (lines->pdata[2], ==, "ready");
  g_assert_cmpstr (lines->pdata[3], ==, "42 111");
  g_assert_cmpstr (lines->pdata[4], ==, "got go");
  g_assert_cmpstr (lines->pdata[5], ==, "armed");
  g_assert_cmpstr (lines->pdata[6], ==, "winch");
  g_clear_pointer (&r.result, sbx_run_result_unref);
  for (int i = 0; i < 2; i++)
    {
      close (in[i]);
      close (resize[i]);
    }
  close (out[0]);

  /* Without a stdout descriptor the terminal's output is captured, and it
   * is counted against the output limit: stdout and stderr (one stream on a
   * terminal) past 1000 bytes kill the tree. */
  g_clear_pointer (&options, sbx_run_options_free);
  options = sbx_run_options_new ();
  sbx_run_options_set_pty (options, 24, 80);
  sbx_run_options_set_max_output (options, 1000);
  result = sbx_executor_run (fx.executor, fx.tree.ws,
                             SBX_SH_ARGV ("if test -t 1 && test -t 2; then echo both-tty; fi; "
                                          "echo to-stderr >&2; "
                                          "head -c 600 /dev/zero | tr '\\0' o; "
                                          "head -c 600 /dev/zero | tr '\\0' e >&2; "
                                          "sleep 30"),
                             options, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_truncated (result));
  {
    gsize len;
    const char *bytes = g_bytes_get_data (sbx_run_result_get_output (result), &len);
    g_autofree char *text = g_strndup (bytes, len);

    g_assert_cmpuint (len, ==, 1000);
    g_assert_nonnull (strstr (text, "both-tty"));
    g_assert_nonnull (strstr (text, "to-stderr"));
    g_assert_nonnull (strstr (text, "ooo"));
    g_assert_nonnull (strstr (text, "eee"));
  }
  g_clear_pointer (&result, sbx_run_result_unref);
  /* The positive control of the limit: the same run without it keeps all
   * of the output and ends by itself. */
  g_clear_pointer (&options, sbx_run_options_free);
  options = sbx_run_options_new ();
  sbx_run_options_set_pty (options, 24, 80);
  result = sbx_executor_run (fx.executor, fx.tree.ws,
                             SBX_SH_ARGV ("head -c 600 /dev/zero | tr '\\0' o; "
                                          "head -c 600 /dev/zero | tr '\\0' e >&2"),
                             options, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sbx_run_result_get_truncated (result));
  g_assert_true (sbx_run_result_get_successful (result));
  g_assert_cmpuint (g_bytes_get_size (sbx_run_result_get_output (result)), ==, 1200);
  g_clear_pointer (&result, sbx_run_result_unref);

  close (outer_slave);
  close (outer);
  fixture_teardown (&fx);
}

/* ------------------------------------------------------------------------- */
/* Signals, force_exit, deadline, cancellation                                */
/* ------------------------------------------------------------------------- */

static void
test_signal (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(GDataInputStream) in = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *got = NULL;

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  process = spawn (&fx, "trap 'echo got-usr1; exit 7' USR1; echo ready; "
                        "while :; do sleep 0.05; done", NULL, NULL);
  in = g_data_input_stream_new (sbx_process_get_stdout_pipe (process));
  ready = read_line (in);
  g_assert_cmpstr (ready, ==, "ready");
  g_assert_true (sbx_process_send_signal (process, SIGUSR1, &error));
  g_assert_no_error (error);
  got = read_line (in);
  g_assert_cmpstr (got, ==, "got-usr1");
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sbx_process_get_if_exited (process));
  g_assert_cmpint (sbx_process_get_exit_status (process), ==, 7);
  /* Once exited, a signal has nowhere to go and is not an error. */
  g_assert_true (sbx_process_send_signal (process, SIGTERM, &error));
  g_clear_object (&in);
  g_clear_object (&process);
  fixture_teardown (&fx);
}

static void
test_force_exit (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GDataInputStream) in = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_strdup_printf ("sbx-force-exit-%d", (int) getpid ());
  g_autofree char *sleeper = NULL;
  g_autofree char *script = NULL;
  g_autofree char *ready = NULL;
  gint64 start;
  gint64 elapsed;

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  sleeper = make_marked_sleep (&fx, marker);
  /* The target ignores SIGTERM and has a descendant of its own. */
  script = g_strdup_printf ("trap '' TERM; '%s' 1000 & echo ready; "
                            "while :; do sleep 0.05; done", sleeper);
  sbx_run_options_set_terminate_grace (options, 300 * G_TIME_SPAN_MILLISECOND);
  process = spawn (&fx, script, options, NULL);
  in = g_data_input_stream_new (sbx_process_get_stdout_pipe (process));
  ready = read_line (in);
  g_assert_cmpstr (ready, ==, "ready");
  g_assert_cmpuint (wait_marked (marker, 1), ==, 1);   /* positive control */
  start = g_get_monotonic_time ();
  sbx_process_force_exit (process);
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_no_error (error);
  elapsed = g_get_monotonic_time () - start;
  /* SIGTERM was ignored: the grace passed, then SIGKILL took the tree. */
  g_assert_cmpint (elapsed, >=, 300 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (elapsed, <, 4 * G_TIME_SPAN_SECOND);
  g_assert_true (sbx_process_get_if_signaled (process));
  g_assert_cmpint (sbx_process_get_term_sig (process), ==, SIGKILL);
  g_assert_cmpuint (count_marked (marker), ==, 0);
  g_clear_object (&in);
  g_clear_object (&process);

  /* A target that obeys SIGTERM ends before the grace. */
  g_clear_pointer (&options, sbx_run_options_free);
  options = sbx_run_options_new ();
  sbx_run_options_set_terminate_grace (options, 10 * G_TIME_SPAN_SECOND);
  process = spawn (&fx, "echo ready; while :; do sleep 0.05; done", options, NULL);
  in = g_data_input_stream_new (sbx_process_get_stdout_pipe (process));
  g_free (read_line (in));
  start = g_get_monotonic_time ();
  sbx_process_force_exit (process);
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_TIME_SPAN_SECOND);
  g_assert_true (sbx_process_get_if_signaled (process));
  g_assert_cmpint (sbx_process_get_term_sig (process), ==, SIGTERM);
  g_clear_object (&in);
  g_clear_object (&process);
  fixture_teardown (&fx);
}

static void
test_deadline (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GDateTime) now = NULL;
  g_autoptr(GDateTime) deadline = NULL;
  g_autoptr(GDateTime) past = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  const char *sleep_argv[] = { "sleep", "30", NULL };
  gint64 start;

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  /* Set after the set exists (slow under sanitizers): the deadline is for
   * the command, not for the setup. */
  now = g_date_time_new_now_utc ();
  deadline = g_date_time_add (now, 500 * G_TIME_SPAN_MILLISECOND);
  past = g_date_time_add (now, -G_TIME_SPAN_SECOND);
  start = g_get_monotonic_time ();
  sbx_run_options_set_deadline (options, deadline);
  process = spawn (&fx, "sleep 30", options, NULL);
  g_assert_false (sbx_process_wait (process, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TIMED_OUT);
  g_clear_error (&error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_TIME_SPAN_SECOND);
  g_assert_true (sbx_process_get_if_signaled (process));
  g_clear_object (&process);

  /* The same deadline is honoured by a run. */
  g_clear_pointer (&deadline, g_date_time_unref);
  now = (g_date_time_unref (now), g_date_time_new_now_utc ());
  deadline = g_date_time_add (now, 300 * G_TIME_SPAN_MILLISECOND);
  sbx_run_options_set_deadline (options, deadline);
  start = g_get_monotonic_time ();
  result = sbx_executor_run (fx.executor, fx.tree.ws, sleep_argv, options, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TIMED_OUT);
  g_clear_error (&error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_TIME_SPAN_SECOND);

  /* A deadline already past: nothing is spawned. */
  sbx_run_options_set_deadline (options, past);
  g_assert_null (sbx_executor_spawn (fx.executor, fx.tree.ws, sleep_argv, options, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TIMED_OUT);
  g_clear_error (&error);

  /* The positive control: without a deadline the command runs to its end. */
  g_clear_pointer (&options, sbx_run_options_free);
  process = spawn (&fx, "sleep 0.5; exit 4", NULL, NULL);
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_cmpint (sbx_process_get_exit_status (process), ==, 4);
  g_clear_object (&process);
  fixture_teardown (&fx);
}

typedef struct
{
  GMainLoop *loop;
  guint      done;
  guint      cancelled;
  guint      closed;
  guint      ok;
} Waits;

static void
on_wait_counted (GObject      *source,
                 GAsyncResult *result,
                 gpointer      data)
{
  Waits *w = data;
  g_autoptr(GError) error = NULL;

  if (sbx_process_wait_finish (SBX_PROCESS (source), result, &error))
    w->ok++;
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    w->cancelled++;
  else if (g_error_matches (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED))
    w->closed++;
  else
    g_error ("unexpected wait error: %s", error->message);
  w->done++;
  if (w->loop != NULL)
    g_main_loop_quit (w->loop);
}

static gboolean
cancel_later (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

static gpointer
cancel_from_thread (gpointer data)
{
  g_usleep (200 * 1000);
  g_cancellable_cancel (data);
  return NULL;
}

static void
test_cancel (gconstpointer data)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GError) error = NULL;
  Waits w = { loop };

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  /* A wait's cancellable, mid-run: the tree dies, the wait says CANCELLED. */
  process = spawn (&fx, "sleep 30", NULL, NULL);
  sbx_process_wait_async (process, cancellable, on_wait_counted, &w);
  g_timeout_add (200, cancel_later, cancellable);
  while (w.done < 1)
    g_main_loop_run (loop);
  g_assert_cmpuint (w.cancelled, ==, 1);
  g_assert_true (sbx_process_get_if_signaled (process));
  g_assert_cmpint (sbx_process_get_term_sig (process), ==, SIGKILL);
  g_assert_cmpuint (etu_count_children (), ==, 0);
  g_clear_object (&process);

  /* The spawn's cancellable kills it for its whole life. */
  g_clear_object (&cancellable);
  cancellable = g_cancellable_new ();
  process = spawn (&fx, "sleep 30", NULL, cancellable);
  {
    /* From another thread: a blocking wait runs no main loop. */
    GThread *thread = g_thread_new ("cancel", cancel_from_thread, cancellable);

    g_assert_false (sbx_process_wait (process, NULL, &error));
    g_thread_join (thread);
  }
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_clear_object (&process);
  /* Already cancelled: refused, nothing spawned. */
  g_assert_null (sbx_executor_spawn (fx.executor, fx.tree.ws, SBX_SH_ARGV ("true"), NULL,
                                     cancellable, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED);
  fixture_teardown (&fx);
}

static void
test_set_close (gconstpointer data)
{
  Fixture fx;
  g_autoptr(GPtrArray) processes = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_strdup_printf ("sbx-set-close-%d", (int) getpid ());
  g_autofree char *sleeper = NULL;
  g_autofree char *script = NULL;
  Waits w = { NULL };

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  sleeper = make_marked_sleep (&fx, marker);
  script = g_strdup_printf ("'%s' 1000 & '%s' 1000", sleeper, sleeper);
  for (guint i = 0; i < 20; i++)
    {
      SbxProcess *process = spawn (&fx, script, NULL, NULL);

      g_ptr_array_add (processes, process);
      sbx_process_wait_async (process, NULL, on_wait_counted, &w);
    }
  /* Positive control: 40 marked processes run. */
  g_assert_cmpuint (wait_marked (marker, 40), ==, 40);
  /* Close from the very thread whose main loop would reap them. */
  g_assert_true (sbx_executor_set_close (fx.set, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_marked (marker), ==, 0);
  g_assert_cmpuint (etu_count_children (), ==, 0);
  while (w.done < 20)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (w.closed, ==, 20);
  /* Nothing starts after close. */
  g_assert_null (sbx_executor_spawn (fx.executor, fx.tree.ws, SBX_SH_ARGV ("true"), NULL, NULL,
                                     &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
  g_clear_pointer (&processes, g_ptr_array_unref);
  fixture_teardown (&fx);
}

/* Admission is the run's: a gated profile refuses the spawn. */
static void
test_gate (gconstpointer data)
{
  Fixture fx;
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = NULL;
  g_autofree char *command = NULL;
  g_autofree char *bound = NULL;
  g_autofree char *token = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(SbxProcess) process = NULL;
  const char *grants[2] = { NULL, NULL };

  if (!fixture_setup (&fx, data, SBX_ACCESS_GATED))
    return;
  marker = g_build_filename (fx.tree.ws, "gate-marker", NULL);
  command = g_strdup_printf ("touch '%s'", marker);
  g_assert_null (sbx_executor_spawn (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), NULL, NULL,
                                     &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REQUIRED);
  g_clear_error (&error);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));

  /* With the grant: starts once, the replay is refused. */
  bound = sbx_grant_command_for_argv (SBX_SH_ARGV (command));
  token = sbx_executor_issue_grant (fx.executor, "exec", bound, fx.tree.ws,
                                    SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error);
  g_assert_no_error (error);
  grants[0] = token;
  sbx_run_options_set_execution_id (options, "exec");
  sbx_run_options_set_grants (options, grants);
  process = sbx_executor_spawn (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), options, NULL,
                                &error);
  g_assert_no_error (error);
  g_assert_true (sbx_process_wait_check (process, NULL, &error));
  g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_assert_null (sbx_executor_spawn (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), options,
                                     NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
  g_clear_object (&process);
  fixture_teardown (&fx);
}

/* ------------------------------------------------------------------------- */
/* Many waits, no thread each                                                 */
/* ------------------------------------------------------------------------- */

static void
test_many_waits (gconstpointer data)
{
  Fixture fx;
  g_autoptr(GPtrArray) processes = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GError) error = NULL;
  struct rlimit rl;
  guint n = 1000;
  guint threads_before;
  guint threads_during;
  guint threads_max = 0;
  gint64 start;
  Waits w = { NULL };

  if (!fixture_setup (&fx, data, SBX_ACCESS_ALLOW))
    return;
  /* Two fds per process here (its stdin pipe and its pidfd), two more for
   * its connect supervisor (the seccomp listener and the sock_diag socket of
   * its network namespace), two for its view supervisor (the FUSE
   * connection and the sandbox's procfs), and room for what a sandbox's
   * setup opens in a child that starts with a copy of this fd table. */
  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &rl), ==, 0);
  if (rl.rlim_cur < 9 * n + 256)
    {
      rl.rlim_cur = MIN (rl.rlim_max, (rlim_t) (9 * n + 256));
      g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &rl), ==, 0);
    }
  if (rl.rlim_cur < 2 * n + 256)
    {
      g_test_skip_printf ("RLIMIT_NOFILE hard limit %lu is too small for %u processes",
                          (unsigned long) rl.rlim_max, n);
      fixture_teardown (&fx);
      return;
    }
  sbx_run_options_set_stdout (options, SBX_STDIO_NULL);
  sbx_run_options_set_stderr (options, SBX_STDIO_NULL);
  /* Wait for a first reap so the pool's threads are counted too. */
  {
    g_autoptr(SbxProcess) first = spawn (&fx, "true", options, NULL);

    g_assert_true (sbx_process_wait (first, NULL, NULL));
  }
  threads_before = count_threads ();
  start = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    {
      const char *argv[] = { "cat", NULL };
      SbxProcess *process = sbx_executor_spawn (fx.executor, fx.tree.ws, argv, options, NULL,
                                                &error);

      g_assert_no_error (error);
      g_ptr_array_add (processes, process);
      sbx_process_wait_async (process, NULL, on_wait_counted, &w);
    }
  g_test_message ("spawned %u processes in %.2f s", n,
                  (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC);
  /* Every wait is pending on this one main loop. */
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  threads_during = count_threads ();
  g_assert_cmpuint (w.done, ==, 0);
  /* Let them all go: EOF on stdin. */
  for (guint i = 0; i < n; i++)
    g_assert_true (g_output_stream_close (sbx_process_get_stdin_pipe (processes->pdata[i]),
                                          NULL, NULL));
  start = g_get_monotonic_time ();
  while (w.done < n)
    {
      g_main_context_iteration (NULL, TRUE);
      threads_max = MAX (threads_max, count_threads ());
    }
  g_test_message ("%u waits completed in %.2f s; threads: %u before, %u with %u waits pending, "
                  "at most %u while they completed", n,
                  (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC,
                  threads_before, threads_during, n, threads_max);
  g_assert_cmpuint (w.ok, ==, n);
  /* No thread per wait: the pending waits added none; completing them uses
   * at most the reap pool's four. */
  g_assert_cmpuint (threads_during, <=, threads_before + 1);
  g_assert_cmpuint (threads_max, <=, threads_before + 4 + 1);
  g_clear_pointer (&processes, g_ptr_array_unref);
  fixture_teardown (&fx);
}

/* The linux plugin keeps a few things for the life of the process once
 * loaded (its sbx-init memfd): load it before any fd is counted. */
static void
warm_up_linux (void)
{
  Fixture fx;
  g_autoptr(SbxProcess) process = NULL;

  if (g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR") == NULL)
    return;
  if (!fixture_setup (&fx, "linux", SBX_ACCESS_ALLOW))
    return;
  process = spawn (&fx, "true", NULL, NULL);
  g_assert_true (sbx_process_wait (process, NULL, NULL));
  g_clear_object (&process);
  g_assert_true (sbx_executor_set_close (fx.set, NULL, NULL));
  g_clear_object (&fx.executor);
  g_clear_object (&fx.set);
  etu_tree_clear (&fx.tree);
}

/* ------------------------------------------------------------------------- */
/* The close lets go of everything                                           */
/* ------------------------------------------------------------------------- */

/* Each way a thread of the library holds on to a process, a run or the set
 * after its caller's part is over: the reap pool (its reference to a
 * process whose wait completed), GLib's pool (a stream operation of a sync
 * communicate, holding its private main context) and an async run's thread
 * (its task, holding the executor).  The set's close must return with all
 * of it gone, whichever thread lets go last.  The scratch root is on a
 * tmpfs: there the close removes the set's directory fast enough to come
 * before those threads, where ext4's slower removal hid them.  Each way on
 * a set of its own, closed right after it and checked by the fixture's
 * teardown; twenty rounds (before those threads were inside the close's
 * barrier, a round failed about one time in two). */
static void
test_close_releases_all (gconstpointer data)
{
  for (guint round = 0; round < 20; round++)
    for (guint way = 0; way < 3; way++)
      {
        Fixture fx;
        g_autoptr(SbxProcess) process = NULL;
        g_autoptr(GAsyncResult) async_result = NULL;
        g_autoptr(SbxRunResult) result = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *out = NULL;

        if (!fixture_setup_full (&fx, data, SBX_ACCESS_ALLOW, TRUE))
          return;
        switch (way)
          {
          case 0:
            process = spawn (&fx, "exit 0", NULL, NULL);
            sbx_process_wait_async (process, NULL, etu_store_result, &async_result);
            g_assert_true (sbx_process_wait_finish (process, etu_wait_async (&async_result),
                                                    &error));
            break;
          case 1:
            process = spawn (&fx, "cat", NULL, NULL);
            g_assert_true (sbx_process_communicate_utf8 (process, "in\n", NULL, &out, NULL, &error));
            g_assert_cmpstr (out, ==, "in\n");
            break;
          default:
            sbx_executor_run_async (fx.executor, fx.tree.ws, SBX_SH_ARGV ("exit 0"), NULL, NULL,
                                    etu_store_result, &async_result);
            result = sbx_executor_run_finish (fx.executor, etu_wait_async (&async_result), &error);
            g_assert_nonnull (result);
            break;
          }
        g_assert_no_error (error);
        g_clear_object (&async_result);
        g_clear_pointer (&result, sbx_run_result_unref);
        g_clear_object (&process);
        fixture_teardown (&fx);
      }
}

int
main (int    argc,
      char **argv)
{
  static const char *const backends[] = { "unconfined", "linux" };
  static const struct
  {
    const char *name;
    GTestDataFunc func;
  } cases[] = {
    { "streams/pipes", test_pipes },
    { "streams/merge-null", test_merge_and_null },
    { "streams/inherit-fd", test_inherit_and_fd },
    { "lines-before-exit", test_lines_before_exit },
    { "pty", test_pty },
    { "run-pty", test_run_pty },
    { "signal", test_signal },
    { "force-exit", test_force_exit },
    { "deadline", test_deadline },
    { "cancel", test_cancel },
    { "set-close", test_set_close },
    { "gate", test_gate },
    { "many-waits", test_many_waits },
    { "close-releases-all", test_close_releases_all },
  };

  g_test_init (&argc, &argv, NULL);
  /* Writing to a stdin pipe the child closed must be an error here, not a
   * death. */
  signal (SIGPIPE, SIG_IGN);
  etu_warm_up ();
  warm_up_linux ();
  for (gsize b = 0; b < G_N_ELEMENTS (backends); b++)
    for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
      {
        g_autofree char *path = g_strdup_printf ("/process/%s/%s", backends[b], cases[c].name);

        g_test_add_data_func (path, backends[b], cases[c].func);
      }
  return g_test_run ();
}
