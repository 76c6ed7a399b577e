/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxExecutor runs on the unconfined backend (and the mock-ok test double
 * for the Sandboxed paths): results, exit vs signal, the command gate, the
 * output limit, timeouts, cancellation, async twins, streaming.  Every
 * fixture test ends with no child process and no extra fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>

#include "sbx-executor-private.h"
#include "executor-test-util.h"
#include "executor-test-util.h"

typedef struct
{
  EtuTree         tree;
  SbxRegistry    *registry;
  SbxExecutorSet *set;
  SbxExecutor    *executor;
  guint           fds_before;
} Fixture;

static SbxExecutor *
make_executor (Fixture    *fx,
               SbxProfile *profile)
{
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 4, fx->registry);
  g_autoptr(GError) error = NULL;

  g_clear_object (&fx->executor);
  if (fx->set != NULL)
    {
      g_assert_true (sbx_executor_set_close (fx->set, NULL, &error));
      g_clear_object (&fx->set);
    }
  fx->set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  fx->executor = sbx_executor_set_for_key (fx->set, "test", &error);
  g_assert_no_error (error);
  return fx->executor;
}

static void
fixture_setup (Fixture       *fx,
               gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = NULL;

  fx->fds_before = etu_count_fds ();
  etu_tree_init (&fx->tree);
  fx->registry = etu_registry ("unconfined", "ok", NULL);
  profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
  make_executor (fx, profile);
}

static void
fixture_teardown (Fixture       *fx,
                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  guint fds_after;

  g_assert_true (sbx_executor_set_close (fx->set, NULL, &error));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  g_clear_object (&fx->registry);
  etu_tree_clear (&fx->tree);

  g_assert_cmpuint (etu_count_children (), ==, 0);
  fds_after = etu_count_fds ();
  if (fds_after != fx->fds_before)
    {
      g_autofree char *list = etu_list_fds ();

      g_error ("fd leak: %u before, %u after:\n%s", fx->fds_before, fds_after, list);
    }
}

static SbxRunResult *
run_ok (Fixture    *fx,
        const char *command)
{
  g_autoptr(GError) error = NULL;
  SbxRunResult *result = sbx_executor_run (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static char *
output_string (SbxRunResult *result)
{
  GBytes *bytes = sbx_run_result_get_output (result);
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_strndup (data != NULL ? data : "", len);
}

/* ------------------------------------------------------------------------- */
/* Results                                                                    */
/* ------------------------------------------------------------------------- */

static void
test_run_echo (Fixture       *fx,
               gconstpointer  data)
{
  const char *argv[] = { "echo", "hi", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = sbx_executor_run (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
  g_autofree char *out = NULL;

  g_assert_no_error (error);
  out = output_string (result);
  g_assert_cmpstr (out, ==, "hi\n");
  g_assert_true (sbx_run_result_get_if_exited (result));
  g_assert_false (sbx_run_result_get_if_signaled (result));
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
  g_assert_cmpint (sbx_run_result_get_term_sig (result), ==, 0);
  g_assert_true (sbx_run_result_get_successful (result));
  g_assert_false (sbx_run_result_get_truncated (result));
  g_assert_cmpint (sbx_run_result_get_lifetime_containment (result), ==, SBX_LIFETIME_CONTAINMENT_UNSPECIFIED);
  g_assert_cmpint (sbx_run_result_get_duration (result), >, 0);
}

static void
test_run_exit_code (Fixture       *fx,
                    gconstpointer  data)
{
  g_autoptr(SbxRunResult) result = run_ok (fx, "echo partial; exit 3");
  g_autofree char *out = output_string (result);

  g_assert_cmpstr (out, ==, "partial\n");
  g_assert_true (sbx_run_result_get_if_exited (result));
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 3);
  g_assert_false (sbx_run_result_get_successful (result));
}

/* Death by signal is reported as such: never a bare -1. */
static void
test_run_signal (Fixture       *fx,
                 gconstpointer  data)
{
  g_autoptr(SbxRunResult) term = run_ok (fx, "kill -TERM $$; sleep 5");
  g_autoptr(SbxRunResult) segv = run_ok (fx, "kill -SEGV $$; sleep 5");

  g_assert_false (sbx_run_result_get_if_exited (term));
  g_assert_true (sbx_run_result_get_if_signaled (term));
  g_assert_cmpint (sbx_run_result_get_term_sig (term), ==, SIGTERM);
  g_assert_cmpint (sbx_run_result_get_exit_status (term), ==, 0);
  g_assert_false (sbx_run_result_get_successful (term));
  g_assert_cmpint (sbx_run_result_get_term_sig (segv), ==, SIGSEGV);
}

static void
test_run_shell_and_argv (Fixture       *fx,
                         gconstpointer  data)
{
  const char *argv[] = { "echo", "$HOME", "a b", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) direct = sbx_executor_run (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
  g_autoptr(SbxRunResult) shell = run_ok (fx, "echo $((1 + 2)) \"$HOME\"");
  g_autofree char *direct_out = output_string (direct);
  g_autofree char *shell_out = output_string (shell);
  g_autofree char *expected = g_strdup_printf ("3 %s\n", sbx_executor_get_home (fx->executor));

  g_assert_no_error (error);
  /* No shell: nothing is expanded. */
  g_assert_cmpstr (direct_out, ==, "$HOME a b\n");
  g_assert_cmpstr (shell_out, ==, expected);
}

static void
test_run_combined_output_and_stdin (Fixture       *fx,
                                    gconstpointer  data)
{
  g_autoptr(SbxRunResult) both = run_ok (fx, "echo out; echo err >&2; echo out2");
  g_autoptr(SbxRunResult) cat = run_ok (fx, "cat; echo done");
  g_autofree char *both_out = output_string (both);
  g_autofree char *cat_out = output_string (cat);

  /* One pipe: the child's own write order. */
  g_assert_cmpstr (both_out, ==, "out\nerr\nout2\n");
  /* stdin is the null device: cat ends at once. */
  g_assert_cmpstr (cat_out, ==, "done\n");
}

static void
test_run_cwd (Fixture       *fx,
              gconstpointer  data)
{
  g_autoptr(SbxRunResult) result = run_ok (fx, "pwd -P");
  g_autofree char *out = output_string (result);
  g_autofree char *expected = g_strconcat (fx->tree.ws, "\n", NULL);

  g_assert_cmpstr (out, ==, expected);
}

static void
test_run_errors (Fixture       *fx,
                 gconstpointer  data)
{
  g_autofree char *no_exec = etu_write_file (fx->tree.ws, "script.sh", "#!/bin/sh\necho nope\n");
  g_autofree char *missing = g_build_filename (fx->tree.ws, "missing", NULL);
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);
  const char *empty[] = { NULL };
  const char *empty_word[] = { "", NULL };
  const char *not_found[] = { "sbx-no-such-command-xyz", NULL };
  const char *not_found_path[] = { "/nonexistent/bin/tool", NULL };
  const char *not_exec[] = { no_exec, NULL };
  const char *touch[] = { "touch", marker, NULL };
  const struct { const char *const *argv; const char *cwd; int code; } rows[] = {
    { empty, fx->tree.ws, SBX_EXECUTOR_ERROR_EMPTY_ARGV },
    { empty_word, fx->tree.ws, SBX_EXECUTOR_ERROR_EMPTY_ARGV },
    { not_found, fx->tree.ws, SBX_EXECUTOR_ERROR_NOT_FOUND },
    { not_found_path, fx->tree.ws, SBX_EXECUTOR_ERROR_NOT_FOUND },
    { not_exec, fx->tree.ws, SBX_EXECUTOR_ERROR_NOT_EXECUTABLE },
    { touch, "relative/dir", SBX_EXECUTOR_ERROR_INVALID_CWD },
    { touch, missing, SBX_EXECUTOR_ERROR_INVALID_CWD },
    { touch, no_exec, SBX_EXECUTOR_ERROR_INVALID_CWD },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;

  chmod (no_exec, 0644);
  for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      result = sbx_executor_run (fx->executor, rows[r].cwd, rows[r].argv, NULL, NULL, &error);
      g_assert_null (result);
      g_assert_error (error, SBX_EXECUTOR_ERROR, rows[r].code);
      g_clear_error (&error);
    }
  {
    const char *no_word[] = { NULL };
    g_autoptr(SbxRunOptions) options = sbx_run_options_new ();

    result = sbx_executor_run (fx->executor, fx->tree.ws, empty_word, NULL, NULL, &error);
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_EMPTY_ARGV);
    g_clear_error (&error);
    result = sbx_executor_run (fx->executor, fx->tree.ws, no_word, NULL, NULL, &error);
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_EMPTY_ARGV);
    g_clear_error (&error);
    sbx_run_options_set_timeout (options, -1);
    result = sbx_executor_run (fx->executor, fx->tree.ws, touch, options, NULL, &error);
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    /* A PTY on the unconfined backend (which has no sandbox to open it in)
     * and a stdin pipe (nobody could write to it): refused, nothing runs.
     * The PTY of a run on linux-userns: tests/test-process.c. */
    sbx_run_options_set_timeout (options, 0);
    sbx_run_options_set_pty (options, 24, 80);
    result = sbx_executor_run (fx->executor, fx->tree.ws, touch, options, NULL, &error);
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED);
    g_clear_error (&error);
    g_clear_pointer (&options, sbx_run_options_free);
    options = sbx_run_options_new ();
    sbx_run_options_set_stdin (options, SBX_STDIO_PIPE);
    result = sbx_executor_run (fx->executor, fx->tree.ws, touch, options, NULL, &error);
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));

  /* The positive control: the same touch in a valid cwd runs. */
  result = sbx_executor_run (fx->executor, fx->tree.ws, touch, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_clear_pointer (&result, sbx_run_result_unref);
  /* And the not-executable file runs once it is executable. */
  chmod (no_exec, 0755);
  result = sbx_executor_run (fx->executor, fx->tree.ws, not_exec, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_successful (result));
}

static void
test_report (Fixture       *fx,
             gconstpointer  data)
{
  SbxCompileReport *report = sbx_executor_get_report (fx->executor);
  g_autofree char *json = sbx_compile_report_to_json (report);

  g_assert_cmpstr (sbx_executor_get_key (fx->executor), ==, "test");
  g_assert_cmpstr (sbx_compile_report_get_backend (report), ==, "unconfined");
  g_assert_cmpint (sbx_executor_get_level (fx->executor), ==, SBX_LEVEL_NONE);
  g_assert_cmpuint (sbx_executor_get_guarantees (fx->executor), ==, SBX_GUARANTEE_ENV_SCRUB);
  g_assert_nonnull (strstr (json, "\"level\":\"none\""));
}

/* ------------------------------------------------------------------------- */
/* The command gate                                                           */
/* ------------------------------------------------------------------------- */

static void
test_gate (Fixture       *fx,
           gconstpointer  data)
{
  static const struct { SbxAccess access; int code; } rows[] = {
    { SBX_ACCESS_GATED, SBX_GRANT_ERROR_REQUIRED },
    { SBX_ACCESS_DENY, SBX_GRANT_ERROR_DENIED },
  };
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);
  g_autofree char *command = g_strdup_printf ("touch '%s'", marker);

  for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, rows[r].access);
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxRunResult) result = NULL;
      g_autoptr(GAsyncResult) async_result = NULL;

      make_executor (fx, profile);
      result = sbx_executor_run (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), NULL, NULL, &error);
      g_assert_null (result);
      g_assert_error (error, SBX_GRANT_ERROR, rows[r].code);
      g_clear_error (&error);
      sbx_executor_run_async (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), NULL, NULL, etu_store_result, &async_result);
      result = sbx_executor_run_finish (fx->executor, etu_wait_async (&async_result), &error);
      g_assert_error (error, SBX_GRANT_ERROR, rows[r].code);
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
    }

  /* The positive control: Allow runs the same command. */
  {
    g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
    g_autoptr(SbxRunResult) result = NULL;

    make_executor (fx, profile);
    result = run_ok (fx, command);
    g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
  }
}

/* ------------------------------------------------------------------------- */
/* Output limit                                                               */
/* ------------------------------------------------------------------------- */

/* A child writing forever is killed at once; the call returns within a
 * second; exactly the limit is kept and the result says truncated. */
static void
test_limit_writer_forever (Fixture       *fx,
                           gconstpointer  data)
{
  static const char *const commands[] = {
    "yes",
    "yes >&2",
    "(yes &) ; sleep 100",          /* a background writer, the target idle */
    "yes & yes >&2 & wait",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      const char *argv[] = { "/bin/sh", "-c", commands[i], NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxRunResult) result = NULL;
      gint64 start = g_get_monotonic_time ();
      gint64 elapsed;

      result = etu_run_limited (fx->executor, fx->tree.ws, argv, 100000, NULL, &error);
      elapsed = g_get_monotonic_time () - start;
      g_assert_no_error (error);
      g_assert_true (sbx_run_result_get_truncated (result));
      g_assert_cmpuint (g_bytes_get_size (sbx_run_result_get_output (result)), ==, 100000);
      g_assert_true (sbx_run_result_get_if_signaled (result));
      g_assert_cmpint (sbx_run_result_get_term_sig (result), ==, SIGKILL);
      g_assert_false (sbx_run_result_get_successful (result));
      if (elapsed > G_USEC_PER_SEC)
        g_error ("%s: the limited run took %" G_GINT64_FORMAT " µs", commands[i], elapsed);
    }
}

static void
test_limit_exact (Fixture       *fx,
                  gconstpointer  data)
{
  const char *argv[] = { "/bin/sh", "-c", "printf abcd; printf ef >&2", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) fits = NULL;
  g_autoptr(SbxRunResult) over = NULL;
  g_autofree char *fits_out = NULL;

  fits = etu_run_limited (fx->executor, fx->tree.ws, argv, 6, NULL, &error);
  g_assert_no_error (error);
  fits_out = output_string (fits);
  g_assert_cmpstr (fits_out, ==, "abcdef");
  g_assert_false (sbx_run_result_get_truncated (fits));
  g_assert_true (sbx_run_result_get_successful (fits));

  /* stdout and stderr count together. */
  over = etu_run_limited (fx->executor, fx->tree.ws, argv, 5, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_truncated (over));
  g_assert_cmpuint (g_bytes_get_size (sbx_run_result_get_output (over)), ==, 5);
}

/* ------------------------------------------------------------------------- */
/* Timeout and cancellation                                                   */
/* ------------------------------------------------------------------------- */

static void
test_timeout (Fixture       *fx,
              gconstpointer  data)
{
  const char *argv[] = { "/bin/sh", "-c", "sleep 100 & sleep 100", NULL };
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  gint64 start = g_get_monotonic_time ();
  gint64 elapsed;

  sbx_run_options_set_timeout (options, 100 * G_TIME_SPAN_MILLISECOND);
  result = sbx_executor_run (fx->executor, fx->tree.ws, argv, options, NULL, &error);
  elapsed = g_get_monotonic_time () - start;
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TIMED_OUT);
  g_assert_cmpint (elapsed, >=, 100 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (elapsed, <, G_USEC_PER_SEC);
  g_clear_error (&error);

  /* A negative timeout is refused; a fast command finishes within its timeout. */
  sbx_run_options_set_timeout (options, -1);
  result = sbx_executor_run (fx->executor, fx->tree.ws, argv, options, NULL, &error);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  argv[2] = "exit 4";
  sbx_run_options_set_timeout (options, 10 * G_USEC_PER_SEC);
  result = sbx_executor_run (fx->executor, fx->tree.ws, argv, options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 4);
}

static gboolean
cancel_later (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

typedef struct
{
  GCancellable *cancellable;
  const char   *pid_file;
} CancelArg;

/* Cancels once the run's command runs (it wrote its pid). */
static gpointer
cancel_thread (gpointer data)
{
  CancelArg *arg = data;
  g_autofree char *pid_text = etu_wait_for_line (arg->pid_file, 10000);

  g_assert_nonnull (pid_text);
  g_assert_false (etu_pid_is_dead (atoi (pid_text)));
  g_cancellable_cancel (arg->cancellable);
  return NULL;
}

static void
test_cancel_sync (Fixture       *fx,
                  gconstpointer  data)
{
  g_autofree char *pid_file = g_build_filename (fx->tree.ws, "run.pid", NULL);
  g_autofree char *command = g_strdup_printf ("echo $$ > '%s'; exec sleep 100", pid_file);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);
  const char *touch[] = { "touch", marker, NULL };
  CancelArg arg = { cancellable, pid_file };
  GThread *thread;
  gint64 start = g_get_monotonic_time ();

  thread = g_thread_new ("cancel", cancel_thread, &arg);
  result = sbx_executor_run (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), NULL, cancellable, &error);
  g_thread_join (thread);
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED);
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
  g_clear_error (&error);

  /* Already cancelled: nothing is spawned. */
  result = sbx_executor_run (fx->executor, fx->tree.ws, touch, NULL, cancellable, &error);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
}

/* Cancelling an async run kills its background descendants before the task
 * completes. */
static void
test_cancel_async_kills_descendants (Fixture       *fx,
                                     gconstpointer  data)
{
  g_autofree char *pid_file = g_build_filename (fx->tree.ws, "bg.pid", NULL);
  g_autofree char *marker = g_build_filename (fx->tree.ws, "late", NULL);
  g_autofree char *command = g_strdup_printf ("(trap '' HUP; sleep 100; touch '%s') & "
                                              "echo $! > '%s'; (sleep 100 &); sleep 100",
                                              marker, pid_file);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *pid_text = NULL;
  int bg_pid;

  sbx_executor_run_async (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), NULL, cancellable, etu_store_result, &async_result);
  pid_text = etu_wait_for_line (pid_file, 10000);
  g_assert_nonnull (pid_text);
  bg_pid = atoi (pid_text);
  g_assert_cmpint (bg_pid, >, 0);
  g_assert_false (etu_pid_is_dead (bg_pid));

  g_timeout_add (50, cancel_later, cancellable);
  result = sbx_executor_run_finish (fx->executor, etu_wait_async (&async_result), &error);
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED);
  /* Dead when the task completed, not eventually. */
  g_assert_true (etu_pid_is_dead (bg_pid));
  /* bg_pid was the only process that could touch it. */
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
}

/* After the target exits on its own, the rest of its tree is torn down. */
static void
test_descendants_die_with_target (Fixture       *fx,
                                  gconstpointer  data)
{
  g_autofree char *pid_file = g_build_filename (fx->tree.ws, "bg.pid", NULL);
  g_autofree char *command = g_strdup_printf ("sleep 100 & echo $! > '%s'; echo bye", pid_file);
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *pid_text = NULL;
  g_autofree char *out = NULL;
  gint64 start = g_get_monotonic_time ();

  result = run_ok (fx, command);
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
  out = output_string (result);
  g_assert_cmpstr (out, ==, "bye\n");
  g_assert_true (sbx_run_result_get_successful (result));
  g_assert_true (g_file_get_contents (pid_file, &pid_text, NULL, NULL));
  g_assert_true (etu_pid_is_dead (atoi (pid_text)));
}

/* ------------------------------------------------------------------------- */
/* Async and concurrency                                                      */
/* ------------------------------------------------------------------------- */

static void
test_async_twins (Fixture       *fx,
                  gconstpointer  data)
{
  const char *argv[] = { "echo", "async", NULL };
  const char *yes[] = { "yes", NULL };
  g_autoptr(GAsyncResult) r1 = NULL;
  g_autoptr(GAsyncResult) r2 = NULL;
  g_autoptr(GAsyncResult) r3 = NULL;
  g_autoptr(GAsyncResult) r4 = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) a = NULL;
  g_autoptr(SbxRunResult) b = NULL;
  g_autoptr(SbxRunResult) c = NULL;
  g_autoptr(SbxRunResult) d = NULL;
  g_autofree char *a_out = NULL;
  g_autofree char *c_out = NULL;

  sbx_executor_run_async (fx->executor, fx->tree.ws, argv, NULL, NULL, etu_store_result, &r1);
  etu_run_limited_async (fx->executor, fx->tree.ws, yes, 10, NULL, etu_store_result, &r2);
  sbx_executor_run_async (fx->executor, fx->tree.ws, SBX_SH_ARGV ("echo shell"), NULL, NULL, etu_store_result, &r3);
  sbx_executor_run_async (fx->executor, fx->tree.ws, argv, NULL, NULL, etu_store_result, &r4);

  a = sbx_executor_run_finish (fx->executor, etu_wait_async (&r1), &error);
  g_assert_no_error (error);
  b = sbx_executor_run_finish (fx->executor, etu_wait_async (&r2), &error);
  g_assert_no_error (error);
  c = sbx_executor_run_finish (fx->executor, etu_wait_async (&r3), &error);
  g_assert_no_error (error);
  d = sbx_executor_run_finish (fx->executor, etu_wait_async (&r4), &error);
  g_assert_no_error (error);
  a_out = output_string (a);
  c_out = output_string (c);
  g_assert_cmpstr (a_out, ==, "async\n");
  g_assert_true (sbx_run_result_get_truncated (b));
  g_assert_cmpuint (g_bytes_get_size (sbx_run_result_get_output (b)), ==, 10);
  g_assert_cmpstr (c_out, ==, "shell\n");
  g_assert_true (sbx_run_result_get_successful (d));

  /* One async run, one source tag. */
  g_assert_true (g_async_result_is_tagged (r1, sbx_executor_run_async));
  g_assert_true (g_async_result_is_tagged (r2, sbx_executor_run_async));
  g_assert_true (g_async_result_is_tagged (r3, sbx_executor_run_async));
  g_assert_true (g_async_result_is_tagged (r4, sbx_executor_run_async));
  g_assert_false (g_async_result_is_tagged (r4, sbx_executor_run));
}

static void
test_async_wrong_finish (void)
{
  /* The child dies on purpose (a critical is fatal in tests), so it cannot
   * clean up: the parent owns the tree and removes it afterwards. */
  if (g_test_subprocess ())
    {
      const char *tmp = g_getenv ("SBX_TEST_WRONG_FINISH_TREE");
      g_autofree char *ws = g_build_filename (tmp, "ws", NULL);
      g_autofree char *scratch = g_build_filename (tmp, "scratch", NULL);
      g_autoptr(SbxRegistry) registry = etu_registry ("unconfined", NULL);
      g_autoptr(SbxProfile) profile = NULL;
      g_autoptr(SbxExecutorSetOptions) options = NULL;
      g_autoptr(SbxExecutorSet) set = NULL;
      g_autoptr(SbxExecutor) executor = NULL;
      g_autoptr(GTask) task = NULL;

      profile = etu_profile_unconfined (ws, SBX_ACCESS_ALLOW);
      options = etu_options (scratch, 1, registry);
      set = sbx_executor_set_new (profile, options, NULL);
      executor = sbx_executor_set_for_key (set, "k", NULL);
      task = g_task_new (executor, NULL, NULL, NULL);
      g_task_set_source_tag (task, test_async_wrong_finish);
      g_task_return_boolean (task, TRUE);
      /* A critical (fatal in tests): a task that is not a run's. */
      sbx_executor_run_finish (executor, G_ASYNC_RESULT (task), NULL);
      return;
    }
  {
    EtuTree tree = { 0 };

    etu_tree_init (&tree);
    g_setenv ("SBX_TEST_WRONG_FINISH_TREE", tree.tmp, TRUE);
    g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_unsetenv ("SBX_TEST_WRONG_FINISH_TREE");
    etu_tree_clear (&tree);
  }
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*is_tagged*");
}

typedef struct
{
  SbxExecutor  *executor;
  const char   *cwd;
  guint         index;
  gboolean      ok;
} ThreadRun;

static gpointer
thread_run (gpointer data)
{
  ThreadRun *run = data;
  g_autofree char *command = g_strdup_printf ("echo %u; sleep 0.1", run->index);
  g_autofree char *expected = g_strdup_printf ("%u\n", run->index);
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = sbx_executor_run (run->executor, run->cwd, SBX_SH_ARGV (command), NULL, NULL, &error);
  gsize len = 0;
  const char *out;

  if (result == NULL)
    return NULL;
  out = g_bytes_get_data (sbx_run_result_get_output (result), &len);
  run->ok = len == strlen (expected) && memcmp (out, expected, len) == 0;
  return NULL;
}

static void
test_concurrent_sync_runs (Fixture       *fx,
                           gconstpointer  data)
{
  ThreadRun runs[8];
  GThread *threads[8];
  gint64 start = g_get_monotonic_time ();

  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      runs[i] = (ThreadRun) { fx->executor, fx->tree.ws, i, FALSE };
      threads[i] = g_thread_new ("run", thread_run, &runs[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      g_thread_join (threads[i]);
      g_assert_true (runs[i].ok);
    }
  /* They ran concurrently, not one after another. */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 8 * 100 * G_TIME_SPAN_MILLISECOND);
}

/* ------------------------------------------------------------------------- */
/* Streaming                                                                  */
/* ------------------------------------------------------------------------- */

static gboolean
on_readable (int           fd,
             GIOCondition  condition,
             gpointer      data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Output forwarded to a caller fd arrives while the command still runs. */
static void
test_stream_forward_live (Fixture       *fx,
                          gconstpointer  data)
{
  const char *argv[] = { "/bin/sh", "-c", "echo first; sleep 1; echo second >&2", NULL };
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  int fds[2];
  char buf[64] = { 0 };
  gboolean readable;
  gint64 start;
  ssize_t n;

  for (guint limited = 0; limited < 2; limited++)
    {
      g_assert_cmpint (pipe2 (fds, O_CLOEXEC), ==, 0);
      sbx_run_options_set_stdout_fd (options, fds[1]);
      sbx_run_options_set_stderr_fd (options, fds[1]);
      /* Without a limit the child gets the fd itself; with one, a pipe the
       * executor copies on. */
      sbx_run_options_set_max_output (options, limited ? 1000 : 0);
      start = g_get_monotonic_time ();
      sbx_executor_run_async (fx->executor, fx->tree.ws, argv, options, NULL,
                              etu_store_result, &async_result);
      close (fds[1]);   /* the run holds its own duplicate */

      /* An async run is collected on the caller's main context (no thread
       * of its own): the forwarding with a limit happens as it iterates. */
      readable = FALSE;
      g_unix_fd_add (fds[0], G_IO_IN, on_readable, &readable);
      while (!readable)
        {
          g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_TIME_SPAN_SECOND);
          g_main_context_iteration (NULL, TRUE);
        }
      n = read (fds[0], buf, sizeof buf - 1);
      g_assert_cmpint (n, ==, 6);
      buf[n] = '\0';
      g_assert_cmpstr (buf, ==, "first\n");
      g_assert_cmpint (g_get_monotonic_time () - start, <, 900 * G_TIME_SPAN_MILLISECOND);

      result = sbx_executor_run_finish (fx->executor, etu_wait_async (&async_result), &error);
      g_assert_no_error (error);
      g_assert_true (sbx_run_result_get_successful (result));
      /* Nothing was captured: it all went to the fd. */
      g_assert_cmpuint (g_bytes_get_size (sbx_run_result_get_output (result)), ==, 0);
      n = read (fds[0], buf, sizeof buf - 1);
      buf[MAX (n, 0)] = '\0';
      g_assert_cmpstr (buf, ==, "second\n");
      /* EOF: no copy of the write end is left anywhere. */
      g_assert_cmpint (read (fds[0], buf, sizeof buf), ==, 0);
      close (fds[0]);
      g_clear_object (&async_result);
      g_clear_pointer (&result, sbx_run_result_unref);
    }
}

static void
test_stream_forward_limited (Fixture       *fx,
                             gconstpointer  data)
{
  const char *argv[] = { "yes", NULL };
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (fx->tree.tmp, "forwarded", NULL);
  g_autofree char *contents = NULL;
  gsize len;
  int fd;

  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  g_assert_cmpint (fd, >=, 0);
  sbx_run_options_set_stdout_fd (options, fd);
  sbx_run_options_set_max_output (options, 4097);
  result = sbx_executor_run (fx->executor, fx->tree.ws, argv, options, NULL, &error);
  close (fd);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_truncated (result));
  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  g_assert_cmpuint (len, ==, 4097);
}

static void
test_stream_stdin (Fixture       *fx,
                   gconstpointer  data)
{
  const char *argv[] = { "cat", NULL };
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  int fds[2];

  g_assert_cmpint (pipe2 (fds, O_CLOEXEC), ==, 0);
  g_assert_cmpint (write (fds[1], "fed through stdin", 17), ==, 17);
  close (fds[1]);
  sbx_run_options_set_stdin_fd (options, fds[0]);
  result = sbx_executor_run (fx->executor, fx->tree.ws, argv, options, NULL, &error);
  close (fds[0]);
  g_assert_no_error (error);
  out = output_string (result);
  g_assert_cmpstr (out, ==, "fed through stdin");
}

/* ------------------------------------------------------------------------- */
/* Sandboxed profile through the test double                                  */
/* ------------------------------------------------------------------------- */

/* The executor plumbing for a Sandboxed profile: the backend is asked with
 * the compiled policy and the scrubbed environment, finish() gives the
 * exit. (mock-ok confines nothing: this tests the executor, not isolation.) */
static void
test_sandboxed_plumbing (Fixture       *fx,
                         gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = etu_profile_sandboxed (fx->tree.ws);
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(SbxRunResult) limited = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  const char *yes[] = { "yes", NULL };

  make_executor (fx, profile);
  g_assert_cmpstr (sbx_executor_set_get_backend_name (fx->set), ==, "mock-ok");
  g_assert_cmpint (sbx_executor_get_level (fx->executor), ==, SBX_LEVEL_FULL);
  result = run_ok (fx, "echo \"$TMPDIR\"; exit 5");
  out = output_string (result);
  g_assert_true (g_str_has_prefix (out, sbx_executor_get_tmpdir (fx->executor)));
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 5);

  limited = etu_run_limited (fx->executor, fx->tree.ws, yes, 64, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_truncated (limited));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  if (!g_test_subprocess ())
    etu_warm_up ();

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/executor/run/echo", test_run_echo);
  ADD ("/executor/run/exit-code", test_run_exit_code);
  ADD ("/executor/run/signal", test_run_signal);
  ADD ("/executor/run/shell-and-argv", test_run_shell_and_argv);
  ADD ("/executor/run/combined-output-and-stdin", test_run_combined_output_and_stdin);
  ADD ("/executor/run/cwd", test_run_cwd);
  ADD ("/executor/run/errors", test_run_errors);
  ADD ("/executor/run/report", test_report);
  ADD ("/executor/gate/gated-and-denied", test_gate);
  ADD ("/executor/limit/writer-forever", test_limit_writer_forever);
  ADD ("/executor/limit/exact", test_limit_exact);
  ADD ("/executor/timeout", test_timeout);
  ADD ("/executor/cancel/sync", test_cancel_sync);
  ADD ("/executor/cancel/async-kills-descendants", test_cancel_async_kills_descendants);
  ADD ("/executor/tree/descendants-die-with-target", test_descendants_die_with_target);
  ADD ("/executor/async/twins", test_async_twins);
  g_test_add_func ("/executor/async/wrong-finish", test_async_wrong_finish);
  ADD ("/executor/async/concurrent-sync-runs", test_concurrent_sync_runs);
  ADD ("/executor/stream/forward-live", test_stream_forward_live);
  ADD ("/executor/stream/forward-limited", test_stream_forward_limited);
  ADD ("/executor/stream/stdin", test_stream_stdin);
  ADD ("/executor/sandboxed/plumbing", test_sandboxed_plumbing);
#undef ADD

  return g_test_run ();
}
