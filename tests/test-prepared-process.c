/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxPreparedProcess: admit and reserve now, start later, close what was
 * abandoned.  Runs on the unconfined backend (and the "ok" mock backend for
 * the filesystem grants of the effective-access matrix, which the
 * unconfined backend cannot enforce).
 */
#include <sbx/sbx.h>

#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "executor-test-util.h"

typedef struct
{
  EtuTree         tree;
  SbxRegistry    *registry;
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fixture;

static void
make_executor (Fixture    *fx,
               SbxProfile *profile)
{
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 4, fx->registry);
  g_autoptr(GError) error = NULL;

  if (fx->set != NULL)
    {
      g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
      g_clear_object (&fx->executor);
      g_clear_object (&fx->set);
    }
  fx->set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  fx->executor = sbx_executor_set_for_key (fx->set, "k", &error);
  g_assert_no_error (error);
}

static void
fixture_setup (Fixture       *fx,
               gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = NULL;

  etu_tree_init (&fx->tree);
  fx->registry = etu_registry ("unconfined", NULL);
  profile = etu_profile_unconfined (fx->tree.ws, GPOINTER_TO_INT (data) != 0
                                                 ? (SbxAccess) GPOINTER_TO_INT (data)
                                                 : SBX_ACCESS_ALLOW);
  make_executor (fx, profile);
}

static void
fixture_teardown (Fixture       *fx,
                  gconstpointer  data)
{
  g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  g_clear_object (&fx->registry);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (etu_count_children (), ==, 0);
  {
    g_autoptr(GDir) dir = g_dir_open (fx->tree.scratch, 0, NULL);

    g_assert_null (g_dir_read_name (dir));
  }
  etu_tree_clear (&fx->tree);
}

/* ------------------------------------------------------------------------- */

/* The order of the checks: arguments, then the cancellable, then the set's
 * close, then command authority (deny before any token is looked at). */
static void
test_order (Fixture       *fx,
            gconstpointer  data)
{
  const char *empty[] = { "", NULL };
  const char *argv[] = { "true", NULL };
  const char *grants[] = { "not-a-token", NULL };
  g_autoptr(GCancellable) cancelled = g_cancellable_new ();
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) denied = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_DENY);
  g_autoptr(SbxProfile) gated = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_GATED);

  g_cancellable_cancel (cancelled);

  /* Deny: refused before the token (which is garbage) is looked at... */
  make_executor (fx, denied);
  g_assert_null (sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED);
  g_clear_error (&error);
  /* ...but after the execution ID's text check. */
  sbx_run_options_set_grants (options, grants);
  g_assert_null (sbx_executor_prepare (fx->executor, fx->tree.ws, argv, options, NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED);
  g_clear_error (&error);
  /* The cancellable comes before command authority. */
  g_assert_null (sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, cancelled, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED);
  g_clear_error (&error);

  /* Gated without a grant: REQUIRED. */
  make_executor (fx, gated);
  g_assert_null (sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REQUIRED);
  g_clear_error (&error);

  /* Closed: arguments are still checked first, then the cancellable, then
   * CLOSED. */
  g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_assert_null (sbx_executor_prepare (fx->executor, fx->tree.ws, empty, NULL, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_EMPTY_ARGV);
  g_clear_error (&error);
  g_assert_null (sbx_executor_prepare (fx->executor, "relative", argv, NULL, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_INVALID_CWD);
  g_clear_error (&error);
  g_assert_null (sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, cancelled, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_null (sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
}

/* Grants are consumed at prepare: an abandoned preparation still spent
 * them. */
static void
test_grants_consumed (Fixture       *fx,
                      gconstpointer  data)
{
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);
  g_autofree char *command = g_strdup_printf ("touch '%s'", marker);
  g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (command));
  g_autofree char *token = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(SbxPreparedProcess) prepared = NULL;
  g_autoptr(GError) error = NULL;
  const char *grants[2] = { NULL, NULL };
  const char *const *spent;

  token = sbx_executor_issue_grant (fx->executor, "exec", bound, fx->tree.ws,
                                    SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error);
  g_assert_no_error (error);
  grants[0] = token;
  sbx_run_options_set_execution_id (options, "exec");
  sbx_run_options_set_grants (options, grants);
  prepared = sbx_executor_prepare (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), options,
                                   NULL, &error);
  g_assert_no_error (error);
  spent = sbx_prepared_process_get_grants_spent (prepared);
  g_assert_nonnull (spent);
  g_assert_true (g_str_has_prefix (spent[0], "command.start.v1 "));
  g_assert_nonnull (sbx_prepared_process_get_report (prepared));
  /* Nothing runs until start. */
  g_usleep (100 * 1000);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (etu_count_children (), ==, 0);
  /* Abandoned. */
  sbx_prepared_process_close (prepared);
  sbx_prepared_process_close (prepared);   /* idempotent */
  g_clear_object (&prepared);

  /* The replay is refused at prepare, and by spawn and run alike. */
  g_assert_null (sbx_executor_prepare (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), options,
                                       NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
  g_clear_error (&error);
  g_assert_null (sbx_executor_spawn (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), options,
                                     NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
  g_clear_error (&error);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));

  /* The positive control: a fresh token prepares and starts. */
  g_free (token);
  token = sbx_executor_issue_grant (fx->executor, "exec", bound, fx->tree.ws,
                                    SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error);
  g_assert_no_error (error);
  grants[0] = token;
  sbx_run_options_set_grants (options, grants);
  prepared = sbx_executor_prepare (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), options,
                                   NULL, &error);
  g_assert_no_error (error);
  {
    g_autoptr(SbxProcess) process = sbx_prepared_process_start (prepared, NULL, &error);

    g_assert_no_error (error);
    g_assert_true (sbx_process_wait_check (process, NULL, &error));
    g_assert_no_error (error);
  }
  g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
}

static SbxProfile *
access_profile (const char *workspace,
                const char *root,
                SbxAccess   workspace_write,
                SbxAccess   root_write,
                SbxAccess   host_write)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  SbxProfile *profile;

  sbx_profile_config_set_workspace (config, workspace, SBX_ACCESS_ALLOW, workspace_write);
  sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, host_write);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_home (config, SBX_HOME_ISOLATED);
  sbx_profile_config_set_isolation (config, SBX_ISOLATION_SANDBOXED);
  /* A gated root is gated for reading too, so read grants exist. */
  sbx_profile_config_add_root (config, root,
                               root_write == SBX_ACCESS_GATED ? SBX_ACCESS_GATED
                                                              : SBX_ACCESS_ALLOW,
                               root_write);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  return profile;
}

static void
test_effective_access (Fixture       *fx,
                       gconstpointer  data)
{
  g_autofree char *root = g_build_filename (fx->tree.tmp, "root", NULL);
  g_autofree char *file = g_build_filename (root, "file", NULL);
  g_autofree char *canonical_root = NULL;
  g_autofree char *canonical_file = NULL;
  const struct
  {
    SbxAccess        workspace_write;
    SbxAccess        root_write;
    SbxAccess        host_write;
    const char      *grant_class;   /* NULL: none */
    gboolean         tree;          /* the grant's target is the root, else the file */
    SbxProcessAccess expected;
    gboolean         listed;
  } rows[] = {
    { SBX_ACCESS_ALLOW, SBX_ACCESS_DENY, SBX_ACCESS_DENY, NULL, FALSE,
      SBX_PROCESS_ACCESS_BROAD_WRITE, FALSE },
    { SBX_ACCESS_GATED, SBX_ACCESS_DENY, SBX_ACCESS_DENY, NULL, FALSE,
      SBX_PROCESS_ACCESS_SCOPED_WRITE, FALSE },
    { SBX_ACCESS_DENY, SBX_ACCESS_DENY, SBX_ACCESS_DENY, NULL, FALSE,
      SBX_PROCESS_ACCESS_READ_ONLY, FALSE },
    /* A path or tree write grant on a read-only base: scoped, listed. */
    { SBX_ACCESS_DENY, SBX_ACCESS_GATED, SBX_ACCESS_DENY, SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE,
      FALSE, SBX_PROCESS_ACCESS_SCOPED_WRITE, TRUE },
    { SBX_ACCESS_DENY, SBX_ACCESS_GATED, SBX_ACCESS_DENY, SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE,
      TRUE, SBX_PROCESS_ACCESS_SCOPED_WRITE, TRUE },
    /* On a gated base: still scoped, listed. */
    { SBX_ACCESS_GATED, SBX_ACCESS_GATED, SBX_ACCESS_DENY, SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE,
      TRUE, SBX_PROCESS_ACCESS_SCOPED_WRITE, TRUE },
    /* On a broad base: broad, the lists cleared. */
    { SBX_ACCESS_ALLOW, SBX_ACCESS_GATED, SBX_ACCESS_DENY, SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE,
      FALSE, SBX_PROCESS_ACCESS_BROAD_WRITE, FALSE },
    /* A read grant opens nothing for writing. */
    { SBX_ACCESS_DENY, SBX_ACCESS_GATED, SBX_ACCESS_DENY, SBX_GRANT_CLASS_FILESYSTEM_PATH_READ,
      FALSE, SBX_PROCESS_ACCESS_READ_ONLY, FALSE },
    /* A host write grant: broad, no lists. */
    { SBX_ACCESS_DENY, SBX_ACCESS_DENY, SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE,
      FALSE, SBX_PROCESS_ACCESS_BROAD_WRITE, FALSE },
  };
  const char *argv[] = { "true", NULL };

  g_assert_cmpint (g_mkdir (root, 0700), ==, 0);
  g_assert_true (g_file_set_contents (file, "x", -1, NULL));
  canonical_root = g_canonicalize_filename (root, NULL);
  canonical_file = g_canonicalize_filename (file, NULL);
  g_clear_object (&fx->registry);
  fx->registry = etu_registry ("ok", NULL);

  for (guint r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      g_autoptr(SbxProfile) profile = access_profile (fx->tree.ws, root, rows[r].workspace_write,
                                                      rows[r].root_write, rows[r].host_write);
      g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
      g_autoptr(SbxPreparedProcess) prepared = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *token = NULL;
      const char *grants[2] = { NULL, NULL };
      const char *const *paths;
      const char *const *trees;

      g_test_message ("row %u: %s", r, rows[r].grant_class);
      make_executor (fx, profile);
      sbx_run_options_set_execution_id (options, "e");
      if (rows[r].grant_class != NULL)
        {
          const char *target = g_str_has_prefix (rows[r].grant_class, "filesystem.host")
                               ? "host:*" : rows[r].tree ? root : file;

          token = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                            rows[r].grant_class, target, NULL, &error);
          g_assert_no_error (error);
          grants[0] = token;
          sbx_run_options_set_grants (options, grants);
        }
      prepared = sbx_executor_prepare (fx->executor, fx->tree.ws, argv, options, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (sbx_prepared_process_get_effective_access (prepared), ==, rows[r].expected);
      paths = sbx_prepared_process_get_write_paths (prepared);
      trees = sbx_prepared_process_get_write_trees (prepared);
      if (!rows[r].listed)
        {
          g_assert_null (paths);
          g_assert_null (trees);
        }
      else if (rows[r].tree)
        {
          g_assert_null (paths);
          g_assert_nonnull (trees);
          g_assert_cmpstr (trees[0], ==, canonical_root);
          g_assert_null (trees[1]);
        }
      else
        {
          g_assert_null (trees);
          g_assert_nonnull (paths);
          g_assert_cmpstr (paths[0], ==, canonical_file);
          g_assert_null (paths[1]);
        }
      /* Frozen: a later preparation on the same executor changes nothing. */
      {
        g_autoptr(SbxPreparedProcess) other = NULL;

        other = sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
        g_assert_no_error (error);
        g_assert_cmpint (sbx_prepared_process_get_effective_access (prepared), ==,
                         rows[r].expected);
        sbx_prepared_process_close (other);
      }
      sbx_prepared_process_close (prepared);
    }
}

static void
test_start_twice_and_after_close (Fixture       *fx,
                                  gconstpointer  data)
{
  const char *argv[] = { "true", NULL };
  g_autoptr(SbxPreparedProcess) prepared = NULL;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  prepared = sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
  g_assert_no_error (error);
  process = sbx_prepared_process_start (prepared, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (sbx_prepared_process_start (prepared, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_ALREADY_STARTED);
  g_clear_error (&error);
  /* Close after start does nothing to the process. */
  sbx_prepared_process_close (prepared);
  g_assert_true (sbx_process_wait_check (process, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&process);
  g_clear_object (&prepared);

  prepared = sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
  g_assert_no_error (error);
  sbx_prepared_process_close (prepared);
  g_assert_null (sbx_prepared_process_start (prepared, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_PROCESS_CLOSED);
  g_clear_error (&error);
  g_clear_object (&prepared);

  /* A cancelled start spawns nothing and releases the reservation. */
  {
    g_autoptr(GCancellable) cancellable = g_cancellable_new ();

    prepared = sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
    g_assert_no_error (error);
    g_cancellable_cancel (cancellable);
    g_assert_null (sbx_prepared_process_start (prepared, cancellable, &error));
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED);
    g_clear_error (&error);
  }
}

typedef struct
{
  guint done;
  guint closed;
} Waits;

static void
on_wait (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  Waits *w = data;
  g_autoptr(GError) error = NULL;

  if (!sbx_process_wait_finish (SBX_PROCESS (source), result, &error))
    {
      g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
      w->closed++;
    }
  w->done++;
}

static void
test_set_close_mix (Fixture       *fx,
                    gconstpointer  data)
{
  const char *sleep_argv[] = { "sleep", "30", NULL };
  g_autoptr(GPtrArray) prepared = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) running = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  Waits w = { 0 };

  for (guint i = 0; i < 20; i++)
    {
      SbxPreparedProcess *p = sbx_executor_prepare (fx->executor, fx->tree.ws, sleep_argv, NULL,
                                                    NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (prepared, p);
    }
  for (guint i = 10; i < 20; i++)
    {
      SbxProcess *process = sbx_prepared_process_start (prepared->pdata[i], NULL, &error);

      g_assert_no_error (error);
      sbx_process_wait_async (process, NULL, on_wait, &w);
      g_ptr_array_add (running, process);
    }
  g_assert_cmpuint (etu_count_children (), ==, 10);   /* positive control */
  g_assert_true (sbx_executor_set_close (fx->set, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (etu_count_children (), ==, 0);
  while (w.done < 10)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (w.closed, ==, 10);
  /* The abandoned ones were closed by the set. */
  for (guint i = 0; i < 10; i++)
    {
      g_assert_null (sbx_prepared_process_start (prepared->pdata[i], NULL, &error));
      g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_PROCESS_CLOSED);
      g_clear_error (&error);
    }
}

typedef struct
{
  SbxPreparedProcess *prepared;
  SbxProcess         *process;
  GError             *error;
} StartArg;

static gpointer
start_thread (gpointer data)
{
  StartArg *arg = data;

  arg->process = sbx_prepared_process_start (arg->prepared, NULL, &arg->error);
  return NULL;
}

/* A start racing the set's close never leaves a process that started after
 * the close began: either it started before the barrier (and the close
 * killed and reaped it: no identifier left once close returned) or it
 * failed with CLOSED or PROCESS_CLOSED and spawned nothing. */
static void
test_start_close_race (Fixture       *fx,
                       gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
  const char *argv[] = { "sleep", "30", NULL };
  guint started = 0;
  guint refused = 0;

  for (guint i = 0; i < 1000; i++)
    {
      StartArg arg = { 0 };
      g_autoptr(GError) error = NULL;
      GThread *thread;

      make_executor (fx, profile);
      arg.prepared = sbx_executor_prepare (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
      g_assert_no_error (error);
      thread = g_thread_new ("start", start_thread, &arg);
      if (i % 2 == 0)
        g_thread_yield ();
      g_assert_true (sbx_executor_set_close (fx->set, NULL, &error));
      g_thread_join (thread);
      if (arg.process != NULL)
        {
          /* Reaped by the close before it returned. */
          g_assert_null (sbx_process_get_identifier (arg.process));
          g_assert_false (sbx_process_wait (arg.process, NULL, &error));
          g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
          started++;
        }
      else
        {
          g_assert_true (g_error_matches (arg.error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED)
                         || g_error_matches (arg.error, SBX_EXECUTOR_ERROR,
                                             SBX_EXECUTOR_ERROR_PROCESS_CLOSED));
          g_clear_error (&arg.error);
          refused++;
        }
      g_assert_cmpuint (etu_count_children (), ==, 0);
      g_clear_object (&arg.process);
      g_clear_object (&arg.prepared);
    }
  g_test_message ("1000 races: %u started before the close (and were killed by it), %u refused",
                  started, refused);
}

/* A prepared process runs to its end on the executor's run engine: the
 * output limit truncates and kills, the timeout kills and fails with
 * TIMED_OUT, the result carries the run's report (the prepared one, scope
 * run, the executor's facts here), async as sync; a run after a start, a
 * start after a run and a run after close are refused. */
static void
test_run (Fixture       *fx,
          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  {
    g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
    g_autoptr(SbxPreparedProcess) prepared = NULL;
    g_autoptr(SbxRunResult) result = NULL;

    sbx_run_options_set_max_output (options, 16);
    prepared = sbx_executor_prepare (fx->executor, fx->tree.ws,
                                     SBX_SH_ARGV ("head -c 100000 /dev/zero; sleep 30"), options, NULL,
                                     &error);
    g_assert_no_error (error);
    g_assert_cmpint (sbx_compile_report_get_scope (sbx_prepared_process_get_report (prepared)), ==,
                     SBX_REPORT_SCOPE_RUN);
    g_assert_cmpuint (sbx_compile_report_get_guarantees (sbx_prepared_process_get_report (prepared)), ==,
                      sbx_executor_get_guarantees (fx->executor));
    result = sbx_prepared_process_run (prepared, NULL, &error);
    g_assert_no_error (error);
    g_assert_true (sbx_run_result_get_truncated (result));
    g_assert_cmpuint (g_bytes_get_size (sbx_run_result_get_output (result)), ==, 16);
    g_assert_true (sbx_run_result_get_spawn_report (result) == sbx_prepared_process_get_report (prepared));
    g_assert_cmpuint (sbx_run_result_get_spawn_guarantees (result), ==,
                      sbx_executor_get_guarantees (fx->executor));
    g_assert_cmpint (sbx_run_result_get_spawn_level (result), ==, sbx_executor_get_level (fx->executor));
    g_assert_null (sbx_prepared_process_start (prepared, NULL, &error));
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_ALREADY_STARTED);
    g_clear_error (&error);
  }
  {
    g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
    g_autoptr(SbxPreparedProcess) prepared = NULL;
    g_autoptr(GAsyncResult) async_result = NULL;
    g_autoptr(SbxRunResult) result = NULL;

    sbx_run_options_set_timeout (options, G_USEC_PER_SEC / 5);
    prepared = sbx_executor_prepare (fx->executor, fx->tree.ws, SBX_SH_ARGV ("sleep 30"), options, NULL,
                                     &error);
    g_assert_no_error (error);
    sbx_prepared_process_run_async (prepared, NULL, etu_store_result, &async_result);
    result = sbx_prepared_process_run_finish (prepared, etu_wait_async (&async_result), &error);
    g_assert_null (result);
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TIMED_OUT);
    g_clear_error (&error);
  }
  {
    g_autoptr(SbxPreparedProcess) started = NULL;
    g_autoptr(SbxPreparedProcess) closed = NULL;
    g_autoptr(SbxProcess) process = NULL;

    started = sbx_executor_prepare (fx->executor, fx->tree.ws, SBX_SH_ARGV ("true"), NULL, NULL, &error);
    g_assert_no_error (error);
    process = sbx_prepared_process_start (started, NULL, &error);
    g_assert_no_error (error);
    g_assert_null (sbx_prepared_process_run (started, NULL, &error));
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_ALREADY_STARTED);
    g_clear_error (&error);
    g_assert_true (sbx_process_wait (process, NULL, &error));
    g_assert_no_error (error);
    g_assert_true (sbx_process_get_spawn_report (process) == sbx_prepared_process_get_report (started));

    closed = sbx_executor_prepare (fx->executor, fx->tree.ws, SBX_SH_ARGV ("true"), NULL, NULL, &error);
    g_assert_no_error (error);
    sbx_prepared_process_close (closed);
    g_assert_null (sbx_prepared_process_run (closed, NULL, &error));
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_PROCESS_CLOSED);
  }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  etu_warm_up ();
#define ADD(path, data, fn) \
  g_test_add (path, Fixture, GINT_TO_POINTER (data), fixture_setup, fn, fixture_teardown)
  ADD ("/prepared/order", SBX_ACCESS_ALLOW, test_order);
  ADD ("/prepared/grants-consumed", SBX_ACCESS_GATED, test_grants_consumed);
  ADD ("/prepared/effective-access", SBX_ACCESS_ALLOW, test_effective_access);
  ADD ("/prepared/start-twice-and-after-close", SBX_ACCESS_ALLOW, test_start_twice_and_after_close);
  ADD ("/prepared/set-close", SBX_ACCESS_ALLOW, test_set_close_mix);
  ADD ("/prepared/start-close-race", SBX_ACCESS_ALLOW, test_start_close_race);
  ADD ("/prepared/run", SBX_ACCESS_ALLOW, test_run);
  return g_test_run ();
}
