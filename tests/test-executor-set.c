/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxExecutorSet: options, backend selection, scratch ownership, keys,
 * memoization under concurrency, limits, fail-closed guarantees, close.
 * Every fixture test ends with no child process and no extra fd.
 *
 * These are the cases of one module, the executor set, sharing one fixture
 * and one leak check; so it is over a thousand lines.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-executor-private.h"
#include "sbx-scratch-private.h"
#include "sbx-executor-set-options-private.h"
#include "executor-test-util.h"
#include "executor-test-util.h"

typedef struct
{
  EtuTree      tree;
  SbxRegistry *registry;   /* unconfined + jsonl + mock-ok */
  guint        fds_before;
} Fixture;

static void
fixture_setup (Fixture       *fx,
               gconstpointer  data)
{
  etu_tree_init (&fx->tree);
  fx->registry = etu_registry ("unconfined", "jsonl", "ok", NULL);
  fx->fds_before = etu_count_fds ();
}

static void
fixture_teardown (Fixture       *fx,
                  gconstpointer  data)
{
  guint fds_after = etu_count_fds ();

  g_assert_cmpuint (etu_count_children (), ==, 0);
  if (fds_after != fx->fds_before)
    {
      g_autofree char *list = etu_list_fds ();

      g_error ("fd leak: %u before, %u after:\n%s", fx->fds_before, fds_after, list);
    }
  g_clear_object (&fx->registry);
  etu_tree_clear (&fx->tree);
}

static SbxExecutorSet *
new_set (Fixture    *fx,
         SbxProfile *profile,
         int         max_executors)
{
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, max_executors,
                                                          fx->registry);
  g_autoptr(GError) error = NULL;
  SbxExecutorSet *set = sbx_executor_set_new (profile, options, &error);

  g_assert_no_error (error);
  g_assert_nonnull (set);
  return set;
}

static SbxExecutorSet *
new_unconfined_set (Fixture *fx,
                    int      max_executors)
{
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);

  return new_set (fx, profile, max_executors);
}

static guint
count_entries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  if (d == NULL)
    return 0;
  while (g_dir_read_name (d) != NULL)
    n++;
  return n;
}

static unsigned
mock_count (const char *mock,
            const char *symbol,
            const char *what)
{
  g_autofree char *file = g_strdup_printf ("sbx-plugin-mock-%s.so", mock);
  g_autofree char *path = g_build_filename (etu_plugin_dir (mock), file, NULL);
  void *handle = dlopen (path, RTLD_NOW | RTLD_NOLOAD);
  unsigned (*count) (const char *);
  unsigned value;

  if (handle == NULL)
    return 0;   /* never loaded: never called */
  count = (unsigned (*) (const char *)) dlsym (handle, symbol);
  g_assert_nonnull (count);
  value = count (what);
  dlclose (handle);
  return value;
}

/* ------------------------------------------------------------------------- */
/* Options                                                                    */
/* ------------------------------------------------------------------------- */

static void
assert_options_refused (Fixture               *fx,
                        SbxExecutorSetOptions *options,
                        const char            *message_part)
{
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = sbx_executor_set_new (profile, options, &error);

  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS);
  if (strstr (error->message, message_part) == NULL)
    g_error ("“%s” does not mention “%s”", error->message, message_part);
  /* Nothing was created in the scratch root. */
  g_assert_cmpuint (count_entries (fx->tree.scratch), ==, 0);
}

static void
test_options_validation (Fixture       *fx,
                         gconstpointer  data)
{
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autofree char *file = etu_write_file (fx->tree.tmp, "a-file", "x");
  g_autofree char *missing = g_build_filename (fx->tree.tmp, "missing", NULL);

  /* No scratch root ("" counts as none) and no maximum are defaults now
   * (test_options_none); what is given must still be usable. */
  options = etu_options (NULL, 1, fx->registry);
  sbx_executor_set_options_set_scratch_root (options, missing);
  assert_options_refused (fx, options, "missing");
  sbx_executor_set_options_set_scratch_root (options, file);
  assert_options_refused (fx, options, "a-file");
  sbx_executor_set_options_set_scratch_root (options, "relative/dir");
  assert_options_refused (fx, options, "relative/dir");

  sbx_executor_set_options_set_scratch_root (options, fx->tree.scratch);
  sbx_executor_set_options_set_max_executors (options, -3);
  assert_options_refused (fx, options, "must be positive");

  sbx_executor_set_options_set_max_executors (options, 1);
  sbx_executor_set_options_set_grant_ttl (options, 0);
  assert_options_refused (fx, options, "grant TTL");
  sbx_executor_set_options_set_grant_ttl (options, -G_TIME_SPAN_SECOND);
  assert_options_refused (fx, options, "grant TTL");
}

/* A set needs no options: the scratch root is $XDG_RUNTIME_DIR/sbx
 * (created 0700), or the temporary directory without a usable runtime dir;
 * the executor limit is SBX_EXECUTOR_SET_DEFAULT_MAX_EXECUTORS. */
static void
test_options_none (Fixture       *fx,
                   gconstpointer  data)
{
  g_autofree char *runtime = g_build_filename (fx->tree.tmp, "runtime", NULL);
  g_autofree char *expected = g_build_filename (runtime, "sbx", NULL);
  g_autofree char *old_runtime = g_strdup (g_getenv ("XDG_RUNTIME_DIR"));
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
  g_autoptr(SbxExecutorSetOptions) options = sbx_executor_set_options_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  const char *argv[] = { "true", NULL };
  struct stat st;

  g_assert_cmpint (mkdir (runtime, 0700), ==, 0);
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  /* Only the registry: everything else is a default. */
  sbx_executor_set_options_set_registry (options, fx->registry);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_executor_set_get_max_executors (set), ==,
                   SBX_EXECUTOR_SET_DEFAULT_MAX_EXECUTORS);
  g_assert_cmpint (lstat (expected, &st), ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpint (st.st_mode & 07777, ==, 0700);
  g_assert_true (g_str_has_prefix (sbx_executor_set_get_owned_dir (set), expected));
  executor = sbx_executor_set_for_key (set, "k", &error);
  g_assert_no_error (error);
  result = sbx_executor_run (executor, fx->tree.ws, argv, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_successful (result));
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_cmpuint (count_entries (expected), ==, 0);
  g_clear_object (&executor);
  g_clear_object (&set);

  /* An existing default root open to others is never used. */
  g_assert_cmpint (chmod (expected, 0755), ==, 0);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS);
  g_clear_error (&error);
  g_assert_cmpint (rmdir (expected), ==, 0);

  /* Without a runtime dir: the temporary directory (GLib's, cached). */
  g_unsetenv ("XDG_RUNTIME_DIR");
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  {
    g_autofree char *tmp = g_canonicalize_filename (g_get_tmp_dir (), NULL);
    g_autofree char *prefix = g_build_filename (tmp, "sandbox-executors-", NULL);

    g_assert_true (g_str_has_prefix (sbx_executor_set_get_owned_dir (set), prefix));
  }
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_clear_object (&set);

  if (old_runtime != NULL)
    g_setenv ("XDG_RUNTIME_DIR", old_runtime, TRUE);
}

static void
test_options_defaults_and_copy (Fixture       *fx,
                                gconstpointer  data)
{
  g_autoptr(SbxExecutorSetOptions) options = sbx_executor_set_options_new ();
  g_autoptr(SbxExecutorSetOptions) copy = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (sbx_executor_set_options_get_grant_ttl (options), ==, 15 * G_TIME_SPAN_MINUTE);
  g_assert_cmpint (sbx_executor_set_options_get_max_executors (options), ==, 0);
  g_assert_null (sbx_executor_set_options_get_scratch_root (options));
  g_assert_null (sbx_executor_set_options_get_registry (options));

  sbx_executor_set_options_set_scratch_root (options, fx->tree.scratch);
  sbx_executor_set_options_set_max_executors (options, 2);
  sbx_executor_set_options_set_registry (options, fx->registry);
  sbx_executor_set_options_set_grant_ttl (options, 2 * G_TIME_SPAN_HOUR);
  sbx_executor_set_options_add_reporter (options, "jsonl", "/x/y");
  sbx_executor_set_options_set_backend (options, "unconfined");
  copy = sbx_executor_set_options_copy (options);
  g_assert_cmpstr (sbx_executor_set_options_get_scratch_root (copy), ==, fx->tree.scratch);
  g_assert_cmpint (sbx_executor_set_options_get_max_executors (copy), ==, 2);
  g_assert_true (sbx_executor_set_options_get_registry (copy) == fx->registry);
  g_assert_cmpint (sbx_executor_set_options_get_grant_ttl (copy), ==, 2 * G_TIME_SPAN_HOUR);
  g_assert_cmpuint (sbx_executor_set_options_get_n_reporters (copy), ==, 1);
  g_assert_cmpstr (sbx_executor_set_options_get_reporter_name (copy, 0), ==, "jsonl");
  g_assert_cmpstr (sbx_executor_set_options_get_reporter_config (copy, 0), ==, "/x/y");
  g_assert_cmpstr (sbx_executor_set_options_get_backend (copy), ==, "unconfined");

  /* Without a TTL call the default (15 min) holds and is valid. */
  g_clear_pointer (&options, sbx_executor_set_options_free);
  options = etu_options (fx->tree.scratch, 1, fx->registry);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_executor_set_get_grant_ttl (set), ==, SBX_EXECUTOR_SET_DEFAULT_GRANT_TTL);
  g_assert_cmpint (sbx_executor_set_get_max_executors (set), ==, 1);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
}

/* Bindings construct through GInitable: the same validation applies. */
static void
test_initable (Fixture       *fx,
               gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, -1, fx->registry);
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) bad = NULL;
  g_autoptr(SbxExecutorSet) good = NULL;
  g_autofree char *backend = NULL;
  int max = 0;

  bad = g_initable_new (SBX_TYPE_EXECUTOR_SET, NULL, &error,
                        "profile", profile, "options", options, NULL);
  g_assert_null (bad);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS);
  g_clear_error (&error);

  bad = g_initable_new (SBX_TYPE_EXECUTOR_SET, NULL, &error, "options", options, NULL);
  g_assert_null (bad);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_PROFILE);
  g_clear_error (&error);

  sbx_executor_set_options_set_max_executors (options, 3);
  good = g_initable_new (SBX_TYPE_EXECUTOR_SET, NULL, &error,
                         "profile", profile, "options", options, NULL);
  g_assert_no_error (error);
  g_object_get (good, "backend-name", &backend, "max-executors", &max, NULL);
  g_assert_cmpstr (backend, ==, "unconfined");
  g_assert_cmpint (max, ==, 3);
  g_assert_true (sbx_executor_set_get_profile (good) == profile);
}

/* A root reached through a symlink lying in a set's scratch directory (here
 * one a killed supervisor left behind) is refused when the set is opened on
 * that scratch root; the same link's target passed directly is accepted. */
static void
test_scratch_planted_link (Fixture       *fx,
                           gconstpointer  data)
{
  g_autofree char *stale = etu_mkdir (fx->tree.scratch, "sandbox-executors-STALE1/tmp-a");
  g_autofree char *target = etu_mkdir (fx->tree.tmp, "elsewhere");
  g_autofree char *link = etu_symlink (fx->tree.scratch, "sandbox-executors-STALE1/tmp-a/out", target);
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfileConfig) direct = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxProfile) direct_profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 1, fx->registry);
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(GError) error = NULL;

  /* the stale set's directory the link lies in */
  g_assert_true (g_file_test (stale, G_FILE_TEST_IS_DIR));

  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_isolation (config, SBX_ISOLATION_UNCONFINED);
  sbx_profile_config_set_ack_unconfined (config, TRUE);
  sbx_profile_config_add_root (config, link, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);   /* the scratch root is not a root of the profile */
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_PROFILE);
  g_assert_nonnull (strstr (error->message, link));
  g_assert_nonnull (strstr (error->message, target));
  g_clear_error (&error);

  sbx_profile_config_set_workspace (direct, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (direct, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (direct, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_isolation (direct, SBX_ISOLATION_UNCONFINED);
  sbx_profile_config_set_ack_unconfined (direct, TRUE);
  sbx_profile_config_add_root (direct, target, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  direct_profile = sbx_profile_new (direct, &error);
  g_assert_no_error (error);
  set = new_set (fx, direct_profile, 1);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_no_error (error);
}

/* ------------------------------------------------------------------------- */
/* Stale scratch                                                              */
/* ------------------------------------------------------------------------- */

/* A dead set's directory as a killed supervisor leaves it: the marker file
 * exists, nobody holds its lock. */
static char *
make_dead_set_dir (const char *scratch,
                   const char *name)
{
  g_autofree char *relative = g_strdup_printf ("%s/home-x", name);
  g_autofree char *home = etu_mkdir (scratch, relative);
  g_autofree char *marker_rel = g_strdup_printf ("%s/" SBX_SET_LIVE_MARKER, name);

  g_free (etu_write_file (home, ".gitconfig", "left behind"));
  g_free (etu_write_file (scratch, marker_rel, ""));
  return g_build_filename (scratch, name, NULL);
}

/* The child: opens a set on $SBX_TEST_REAP_SCRATCH, starts a command and
 * kills itself with SIGKILL while it runs (a supervisor OOM-killed). */
static void
reap_killed_child (void)
{
  const char *scratch = g_getenv ("SBX_TEST_REAP_SCRATCH");
  const char *ws = g_getenv ("SBX_TEST_REAP_WS");
  g_autoptr(SbxRegistry) registry = etu_registry ("unconfined", NULL);
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (ws, SBX_ACCESS_ALLOW);
  g_autoptr(SbxExecutorSetOptions) options = etu_options (scratch, 1, registry);
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = sbx_executor_set_new (profile, options, &error);
  g_autoptr(SbxExecutor) executor = NULL;
  g_autofree char *flag = g_build_filename (ws, "running", NULL);
  g_autofree char *script = g_strdup_printf ("touch '%s'; sleep 3", flag);
  const char *argv[] = { "sh", "-c", script, NULL };

  g_assert_no_error (error);
  executor = sbx_executor_set_for_key (set, "k", &error);
  g_assert_no_error (error);
  sbx_executor_run_async (executor, ws, argv, NULL, NULL, NULL, NULL);
  while (!g_file_test (flag, G_FILE_TEST_EXISTS))
    g_main_context_iteration (NULL, FALSE);
  raise (SIGKILL);
}

/* A supervisor killed with SIGKILL while a command runs leaves its set's
 * directory; the next set opened on the same scratch root reaps it.  A live
 * set's directory, a directory without a marker and (as root) another user's
 * dead directory survive; a symlink planted under the set prefix is removed
 * as a link and what it points to is untouched. */
static void
test_scratch_reap_killed (Fixture       *fx,
                          gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) live = NULL;
  g_autoptr(SbxExecutorSet) next = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autofree char *killed = NULL;
  g_autofree char *unmarked = etu_mkdir (fx->tree.scratch, "sandbox-executors-NOMARK");
  g_autofree char *other_user = NULL;
  g_autofree char *target = etu_mkdir (fx->tree.tmp, "link-target");
  g_autofree char *target_file = etu_write_file (target, "keep", "kept");
  g_autofree char *link = etu_symlink (fx->tree.scratch, "sandbox-executors-LINK", target);
  const char *name;
  gboolean root = geteuid () == 0;

  /* A set opened now reaps the planted link (as a link) and nothing else. */
  {
    g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);

    live = new_set (fx, profile, 1);
  }
  g_assert_false (g_file_test (link, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK));
  g_assert_true (g_file_test (target_file, G_FILE_TEST_IS_REGULAR));

  /* The killed supervisor. */
  g_setenv ("SBX_TEST_REAP_SCRATCH", fx->tree.scratch, TRUE);
  g_setenv ("SBX_TEST_REAP_WS", fx->tree.ws, TRUE);
  g_test_trap_subprocess ("/executor-set/scratch/reap-killed/subprocess/child", 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();   /* killed by SIGKILL */
  dir = g_dir_open (fx->tree.scratch, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "sandbox-executors-")
        && !g_str_equal (name, "sandbox-executors-NOMARK") && !g_str_equal (name, "sandbox-executors-LINK")
        && !g_str_equal (sbx_executor_set_get_owned_dir (live) + strlen (fx->tree.scratch) + 1, name))
      {
        g_assert_null (killed);
        killed = g_build_filename (fx->tree.scratch, name, NULL);
      }
  g_assert_nonnull (killed);   /* the kill left it behind */

  if (root)
    {
      /* Another user's dead set: never crossed into. */
      other_user = make_dead_set_dir (fx->tree.scratch, "sandbox-executors-OTHER");
      g_assert_cmpint (chown (other_user, 65534, 65534), ==, 0);
    }
  else
    g_test_message ("not root: cannot chown a directory to another user; the other-user case runs as root");
  /* Planted after the live set's reaping. */
  g_assert_cmpint (symlink (target, link), ==, 0);

  /* Listing finds exactly the dead one and the link, removes nothing. */
  {
    g_auto(GStrv) stale = sbx_executor_set_find_stale_scratch (fx->tree.scratch, FALSE, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (g_strv_length (stale), ==, 2);
    g_assert_true (g_strv_contains ((const char *const *) stale, killed));
    g_assert_true (g_strv_contains ((const char *const *) stale, link));
    g_assert_true (g_file_test (killed, G_FILE_TEST_IS_DIR));
  }

  {
    g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);

    next = new_set (fx, profile, 1);
  }
  g_assert_false (g_file_test (killed, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (link, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK));
  g_assert_true (g_file_test (target_file, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (sbx_executor_set_get_owned_dir (live), G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (unmarked, G_FILE_TEST_IS_DIR));
  if (other_user != NULL)
    {
      g_autofree char *left = g_build_filename (other_user, "home-x", ".gitconfig", NULL);

      g_assert_true (g_file_test (left, G_FILE_TEST_IS_REGULAR));
      g_assert_cmpint (chown (other_user, 0, 0), ==, 0);   /* so the fixture can remove it */
    }
  g_assert_true (sbx_executor_set_close (next, NULL, &error));
  g_assert_true (sbx_executor_set_close (live, NULL, &error));
  g_assert_no_error (error);
}

static void
test_scratch_reap_killed_child (void)
{
  reap_killed_child ();
}

/* ------------------------------------------------------------------------- */
/* Backend selection                                                          */
/* ------------------------------------------------------------------------- */

static void
test_backend_unconfined_profile (Fixture       *fx,
                                 gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 1);
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(GError) error = NULL;
  SbxCompileReport *report;

  /* An Unconfined profile selects the unconfined backend even though
   * mock-ok (full, every bit) is loaded too. */
  g_assert_cmpstr (sbx_executor_set_get_backend_name (set), ==, "unconfined");
  executor = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_executor_get_level (executor), ==, SBX_LEVEL_NONE);
  g_assert_cmpuint (sbx_executor_get_guarantees (executor), ==, SBX_GUARANTEE_ENV_SCRUB);
  report = sbx_executor_get_report (executor);
  g_assert_cmpstr (sbx_compile_report_get_backend (report), ==, "unconfined");
  g_assert_cmpint (sbx_compile_report_get_level (report), ==, SBX_LEVEL_NONE);
  g_assert_cmpuint (sbx_compile_report_get_guarantees (report), ==, SBX_GUARANTEE_ENV_SCRUB);
  g_assert_cmpuint (sbx_compile_report_get_required (report), ==, SBX_GUARANTEE_ENV_SCRUB);
  g_assert_cmpuint (sbx_compile_report_get_n_entries (report), >, 0);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
}

/* A Sandboxed profile never runs on the unconfined backend: with nothing
 * else loaded the set is not created, and nothing is left in scratch. */
static void
test_backend_sandboxed_unavailable (Fixture       *fx,
                                    gconstpointer  data)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("unconfined", NULL);
  g_autoptr(SbxProfile) profile = etu_profile_sandboxed (fx->tree.ws);
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 1, registry);
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = sbx_executor_set_new (profile, options, &error);

  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "unconfined"));
  g_assert_cmpuint (count_entries (fx->tree.scratch), ==, 0);
}

/* A forced backend is selected or the set fails: never a fallback. */
static void
test_backend_forced (Fixture       *fx,
                     gconstpointer  data)
{
  g_autoptr(SbxProfile) sandboxed = etu_profile_sandboxed (fx->tree.ws);
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 1, fx->registry);
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;

  /* A missing forced backend fails; no fallback to mock-ok. */
  sbx_executor_set_options_set_backend (options, "no-such-backend");
  set = sbx_executor_set_new (sandboxed, options, &error);
  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE);
  g_clear_error (&error);

  /* Forcing the unconfined backend for a Sandboxed profile fails too. */
  sbx_executor_set_options_set_backend (options, "unconfined");
  set = sbx_executor_set_new (sandboxed, options, &error);
  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE);
  g_clear_error (&error);

  /* The positive control: forcing a backend that can run it works. */
  sbx_executor_set_options_set_backend (options, "mock-ok");
  set = sbx_executor_set_new (sandboxed, options, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_executor_set_get_backend_name (set), ==, "mock-ok");
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_cmpuint (count_entries (fx->tree.scratch), ==, 0);
}

static void
test_backend_env_forced_missing (void)
{
  if (g_test_subprocess ())
    {
      EtuTree tree = { 0 };
      g_autoptr(SbxRegistry) registry = NULL;

      /* A fresh single-threaded process (no warm-up in subprocesses). */
      g_setenv ("SBX_BACKEND", "no-such-backend", TRUE);
      registry = etu_registry ("unconfined", "ok", NULL);
      g_autoptr(SbxProfile) profile = NULL;
      g_autoptr(SbxExecutorSetOptions) options = NULL;
      g_autoptr(SbxExecutorSet) set = NULL;
      g_autoptr(GError) error = NULL;

      etu_tree_init (&tree);
      profile = etu_profile_sandboxed (tree.ws);
      options = etu_options (tree.scratch, 1, registry);
      set = sbx_executor_set_new (profile, options, &error);
      g_assert_null (set);
      g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, "no-such-backend"));
      /* No fallback, nothing compiled, nothing spawned. */
      g_assert_cmpuint (mock_count ("ok", "sbx_mock_ok_count", "compile"), ==, 0);
      g_assert_cmpuint (mock_count ("ok", "sbx_mock_ok_count", "spawn"), ==, 0);
      g_assert_cmpuint (count_entries (tree.scratch), ==, 0);
      etu_tree_clear (&tree);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* ------------------------------------------------------------------------- */
/* Scratch and per-key directories                                            */
/* ------------------------------------------------------------------------- */

static void
assert_private_dir (const char *path,
                    const char *under)
{
  struct stat st;

  g_assert_true (g_path_is_absolute (path));
  g_assert_true (g_str_has_prefix (path, under));
  g_assert_cmpint (path[strlen (under)], ==, '/');
  g_assert_cmpint (lstat (path, &st), ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpuint (st.st_mode & 07777, ==, 0700);
  g_assert_cmpuint (st.st_uid, ==, geteuid ());
}

static void
test_scratch_layout (Fixture       *fx,
                     gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 4);
  g_autoptr(SbxExecutor) a = NULL;
  g_autoptr(SbxExecutor) b = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *owned = NULL;
  g_autofree char *home_env = NULL;
  g_autofree char *tmp_env = NULL;
  mode_t old_umask;

  owned = g_strdup (sbx_executor_set_get_owned_dir (set));
  assert_private_dir (owned, fx->tree.scratch);
  g_assert_true (g_str_has_prefix (owned + strlen (fx->tree.scratch) + 1, "sandbox-executors-"));

  /* A permissive umask changes nothing. */
  old_umask = umask (0);
  a = sbx_executor_set_for_key (set, "agent-a", &error);
  umask (old_umask);
  g_assert_no_error (error);
  b = sbx_executor_set_for_key (set, "agent-b", &error);
  g_assert_no_error (error);

  assert_private_dir (sbx_executor_get_home (a), owned);
  assert_private_dir (sbx_executor_get_tmpdir (a), owned);
  assert_private_dir (sbx_executor_get_state_dir (a), owned);
  assert_private_dir (sbx_executor_get_home (b), owned);
  assert_private_dir (sbx_executor_get_tmpdir (b), owned);
  g_assert_cmpstr (sbx_executor_get_home (a), !=, sbx_executor_get_home (b));
  g_assert_cmpstr (sbx_executor_get_tmpdir (a), !=, sbx_executor_get_tmpdir (b));
  g_assert_cmpstr (sbx_executor_get_home (a), !=, sbx_executor_get_tmpdir (a));

  /* The child environment carries them. */
  home_env = g_strconcat ("HOME=", sbx_executor_get_home (a), NULL);
  tmp_env = g_strconcat ("TMPDIR=", sbx_executor_get_tmpdir (a), NULL);
  g_assert_true (g_strv_contains (sbx_executor_get_environment (a), home_env));
  g_assert_true (g_strv_contains (sbx_executor_get_environment (a), tmp_env));

  /* Close removes the owned child and keeps the caller's scratch root. */
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_false (g_file_test (owned, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (fx->tree.scratch, G_FILE_TEST_IS_DIR));
  g_assert_cmpuint (count_entries (fx->tree.scratch), ==, 0);
}

/* Close removes what children left, without following their symlinks, and
 * also directories they made unwritable. */
static void
test_scratch_cleanup_hostile_tree (Fixture       *fx,
                                   gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 1);
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *victim_dir = etu_mkdir (fx->tree.tmp, "victim");
  g_autofree char *victim = etu_write_file (victim_dir, "keep-me", "precious");
  g_autofree char *script = NULL;

  executor = sbx_executor_set_for_key (set, "hostile", &error);
  g_assert_no_error (error);
  script = g_strdup_printf ("ln -s '%s' \"$HOME/link-dir\" && ln -s '%s' \"$TMPDIR/link-file\" "
                            "&& mkdir -p \"$HOME/ro/deeper\" && touch \"$HOME/ro/deeper/f\" "
                            "&& chmod 0500 \"$HOME/ro/deeper\" && chmod 0 \"$HOME/ro\"",
                            victim_dir, victim);
  result = sbx_executor_run (executor, fx->tree.ws, SBX_SH_ARGV (script), NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_successful (result));

  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_cmpuint (count_entries (fx->tree.scratch), ==, 0);
  g_assert_true (g_file_test (victim, G_FILE_TEST_IS_REGULAR));
}

static void
test_real_home (Fixture       *fx,
                gconstpointer  data)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *real = etu_mkdir (fx->tree.tmp, "real-home");
  g_autofree char *inside = etu_write_file (real, ".profile", "keep");

  /* A real HOME of this test, outside the scratch root. */
  g_setenv ("HOME", real, TRUE);
  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_home (config, SBX_HOME_REAL);
  sbx_profile_config_set_isolation (config, SBX_ISOLATION_UNCONFINED);
  sbx_profile_config_set_ack_unconfined (config, TRUE);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);

  set = new_set (fx, profile, 1);
  executor = sbx_executor_set_for_key (set, "real", &error);
  g_assert_no_error (error);
  expected = g_strdup (real);
  g_assert_cmpstr (sbx_executor_get_home (executor), ==, expected);
  /* Only tmp and state were created under the owned dir, beside the set's
   * liveness marker. */
  g_assert_cmpuint (count_entries (sbx_executor_set_get_owned_dir (set)), ==, 3);
  {
    g_autofree char *marker = g_build_filename (sbx_executor_set_get_owned_dir (set), SBX_SET_LIVE_MARKER, NULL);

    g_assert_true (g_file_test (marker, G_FILE_TEST_IS_REGULAR));
  }
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  /* Close never touches a HOME it does not own. */
  g_assert_true (g_file_test (inside, G_FILE_TEST_IS_REGULAR));
}

/* ------------------------------------------------------------------------- */
/* Keys, memoization, limits                                                  */
/* ------------------------------------------------------------------------- */

static void
test_keys (Fixture       *fx,
           gconstpointer  data)
{
  static const char *const invalid[] = {
    "", " a", "a ", "\ta", "a\n", "\xc2\xa0\x61", "a\xe2\x80\x83", "\xff", "a\xc3", " ",
  };
  static const char *const valid[] = { "agent-a", "a b", "ключ", "x:y/z", "a\tb" };
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, G_N_ELEMENTS (valid));
  g_autoptr(GError) error = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_autoptr(SbxExecutor) executor = sbx_executor_set_for_key (set, invalid[i], &error);

      g_assert_null (executor);
      g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_KEY);
      g_clear_error (&error);
    }
  /* Invalid keys do not count against the limit. */
  for (gsize i = 0; i < G_N_ELEMENTS (valid); i++)
    {
      g_autoptr(SbxExecutor) executor = sbx_executor_set_for_key (set, valid[i], &error);

      g_assert_no_error (error);
      g_assert_cmpstr (sbx_executor_get_key (executor), ==, valid[i]);
    }
  g_assert_cmpuint (sbx_executor_set_get_n_executors (set), ==, G_N_ELEMENTS (valid));
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
}

static void
test_memoizes (Fixture       *fx,
               gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 2);
  g_autoptr(SbxExecutor) first = NULL;
  g_autoptr(SbxExecutor) second = NULL;
  g_autoptr(SbxExecutor) other = NULL;
  g_autoptr(GError) error = NULL;
  guint8 key1[SBX_GRANT_KEY_SIZE];
  guint8 key2[SBX_GRANT_KEY_SIZE];

  first = sbx_executor_set_for_key (set, "agent-a", &error);
  g_assert_no_error (error);
  second = sbx_executor_set_for_key (set, "agent-a", &error);
  g_assert_no_error (error);
  g_assert_true (first == second);
  other = sbx_executor_set_for_key (set, "agent-b", &error);
  g_assert_no_error (error);
  g_assert_true (first != other);

  /* Each executor has its own random grant key. */
  g_assert_true (sbx_executor_peek_grant_key (first, key1));
  g_assert_true (sbx_executor_peek_grant_key (other, key2));
  g_assert_cmpmem (key1, sizeof key1, key1, sizeof key1);
  g_assert_true (memcmp (key1, key2, sizeof key1) != 0);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
}

typedef struct
{
  SbxExecutorSet *set;
  const char     *key;
  GCond           cond;
  GMutex          mutex;
  gboolean        go;
  SbxExecutor    *results[16];
  GError         *errors[16];
} Race;

typedef struct
{
  Race *race;
  guint index;
} RaceArg;

static gpointer
race_thread (gpointer data)
{
  RaceArg *arg = data;
  Race *race = arg->race;
  g_autofree char *own_key = NULL;

  g_mutex_lock (&race->mutex);
  while (!race->go)
    g_cond_wait (&race->cond, &race->mutex);
  g_mutex_unlock (&race->mutex);

  if (race->key == NULL)
    own_key = g_strdup_printf ("key-%u", arg->index);
  race->results[arg->index] = sbx_executor_set_for_key (race->set, race->key != NULL ? race->key : own_key,
                                                        &race->errors[arg->index]);
  return NULL;
}

static void
race_run (Race  *race,
          guint  n_threads)
{
  GThread *threads[16];
  RaceArg args[16];

  g_assert_cmpuint (n_threads, <=, G_N_ELEMENTS (threads));
  g_mutex_init (&race->mutex);
  g_cond_init (&race->cond);
  for (guint i = 0; i < n_threads; i++)
    {
      args[i].race = race;
      args[i].index = i;
      threads[i] = g_thread_new ("race", race_thread, &args[i]);
    }
  g_mutex_lock (&race->mutex);
  race->go = TRUE;
  g_cond_broadcast (&race->cond);
  g_mutex_unlock (&race->mutex);
  for (guint i = 0; i < n_threads; i++)
    g_thread_join (threads[i]);
  g_mutex_clear (&race->mutex);
  g_cond_clear (&race->cond);
}

/* 16 threads asking for one key at once get one executor, compiled once. */
static void
test_memoizes_concurrently (Fixture       *fx,
                            gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = etu_profile_sandboxed (fx->tree.ws);
  g_autoptr(SbxExecutorSet) set = new_set (fx, profile, 1);
  g_autoptr(GError) error = NULL;
  Race race = { .set = set, .key = "shared-key" };
  unsigned compiles_before = mock_count ("ok", "sbx_mock_ok_count", "compile");
  unsigned releases_before = mock_count ("ok", "sbx_mock_ok_count", "release");

  g_assert_cmpstr (sbx_executor_set_get_backend_name (set), ==, "mock-ok");
  race_run (&race, 16);
  for (guint i = 0; i < 16; i++)
    {
      g_assert_no_error (race.errors[i]);
      g_assert_true (race.results[i] == race.results[0]);
    }
  g_assert_cmpuint (sbx_executor_set_get_n_executors (set), ==, 1);
  g_assert_cmpuint (mock_count ("ok", "sbx_mock_ok_count", "compile"), ==, compiles_before + 1);
  for (guint i = 0; i < 16; i++)
    g_object_unref (race.results[i]);

  /* The spec is released once, at close. */
  g_assert_cmpuint (mock_count ("ok", "sbx_mock_ok_count", "release"), ==, releases_before);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_cmpuint (mock_count ("ok", "sbx_mock_ok_count", "release"), ==, releases_before + 1);
}

/* 8 threads asking for 8 distinct keys with a limit of 4: exactly 4 win. */
static void
test_limit_concurrently (Fixture       *fx,
                         gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 4);
  g_autoptr(GError) error = NULL;
  Race race = { .set = set, .key = NULL };
  guint won = 0;

  race_run (&race, 8);
  for (guint i = 0; i < 8; i++)
    {
      if (race.results[i] != NULL)
        {
          won++;
          g_assert_no_error (race.errors[i]);
          g_object_unref (race.results[i]);
        }
      else
        {
          g_assert_error (race.errors[i], SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_LIMIT);
          g_clear_error (&race.errors[i]);
        }
    }
  g_assert_cmpuint (won, ==, 4);
  g_assert_cmpuint (sbx_executor_set_get_n_executors (set), ==, 4);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
}

static void
test_limit (Fixture       *fx,
            gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 2);
  g_autoptr(SbxExecutor) a = NULL;
  g_autoptr(SbxExecutor) b = NULL;
  g_autoptr(SbxExecutor) c = NULL;
  g_autoptr(SbxExecutor) again = NULL;
  g_autoptr(GError) error = NULL;

  a = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  b = sbx_executor_set_for_key (set, "b", &error);
  g_assert_no_error (error);
  c = sbx_executor_set_for_key (set, "c", &error);
  g_assert_null (c);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_LIMIT);
  g_clear_error (&error);
  /* A hard cap on identities, not a pool: known keys still work, nothing is
   * evicted when references are dropped. */
  again = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  g_assert_true (again == a);
  g_clear_object (&b);
  c = sbx_executor_set_for_key (set, "c", &error);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_LIMIT);
  g_clear_error (&error);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
}

/* A backend that compiles to fewer guarantees than the profile requires:
 * the executor is refused, its spec released exactly once, nothing is left
 * in the owned dir and the failure does not count against the limit. */
static void
test_missing_guarantees_fail_closed (Fixture       *fx,
                                     gconstpointer  data)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("compile-short", NULL);
  g_autoptr(SbxProfile) profile = etu_profile_sandboxed (fx->tree.ws);
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 1, registry);
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(GError) error = NULL;
  const char *sym = "sbx_mock_compile_short_count";

  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_executor_set_get_backend_name (set), ==, "mock-compile-short");

  for (guint attempt = 0; attempt < 3; attempt++)
    {
      g_autoptr(SbxExecutor) executor = sbx_executor_set_for_key (set, "k", &error);

      g_assert_null (executor);
      g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_MISSING_GUARANTEES);
      g_assert_nonnull (strstr (error->message, "read-boundary"));
      g_clear_error (&error);
      g_assert_cmpuint (mock_count ("compile-short", sym, "compile"), ==, attempt + 1);
      g_assert_cmpuint (mock_count ("compile-short", sym, "live"), ==, 0);
      /* Nothing but the set's liveness marker. */
      g_assert_cmpuint (count_entries (sbx_executor_set_get_owned_dir (set)), ==, 1);
      g_assert_cmpuint (sbx_executor_set_get_n_executors (set), ==, 0);
    }
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_cmpuint (mock_count ("compile-short", sym, "release"), ==, 3);
}

/* ------------------------------------------------------------------------- */
/* Close                                                                      */
/* ------------------------------------------------------------------------- */

static void
test_close_idempotent (Fixture       *fx,
                       gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 2);
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxExecutor) after = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "true", NULL };
  guint8 key[SBX_GRANT_KEY_SIZE];
  guint8 zero[SBX_GRANT_KEY_SIZE] = { 0 };

  executor = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  g_assert_true (sbx_executor_peek_grant_key (executor, key));
  g_assert_true (memcmp (key, zero, sizeof key) != 0);
  g_assert_false (sbx_executor_set_is_closed (set));
  g_assert_false (sbx_executor_is_closed (executor));

  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sbx_executor_set_is_closed (set));
  g_assert_true (sbx_executor_is_closed (executor));

  /* The grant key is wiped. */
  g_assert_false (sbx_executor_peek_grant_key (executor, key));
  g_assert_cmpmem (key, sizeof key, zero, sizeof zero);

  /* Use after close. */
  after = sbx_executor_set_for_key (set, "a", &error);
  g_assert_null (after);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_CLOSED);
  g_clear_error (&error);
  after = sbx_executor_set_for_key (set, "new", &error);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_CLOSED);
  g_clear_error (&error);
  result = sbx_executor_run (executor, fx->tree.ws, argv, NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
  g_assert_cmpuint (sbx_executor_set_get_n_executors (set), ==, 0);
}

static gpointer
close_thread (gpointer data)
{
  GError *error = NULL;
  gboolean ok = sbx_executor_set_close (data, NULL, &error);

  g_assert_no_error (error);
  return GINT_TO_POINTER (ok);
}

typedef struct
{
  SbxExecutor *executor;
  const char  *cwd;
  const char  *command;
  SbxRunResult *result;
  GError      *error;
} RunArg;

static gpointer
run_thread (gpointer data)
{
  RunArg *arg = data;

  arg->result = sbx_executor_run (arg->executor, arg->cwd, SBX_SH_ARGV (arg->command), NULL, NULL, &arg->error);
  return NULL;
}

/* Close while commands run in other threads: once close returns, every
 * run's command process is gone (each wrote its $$ before close began) and
 * so is a background descendant; every run returns CLOSED, and 8
 * concurrent closers all succeed. */
static void
test_close_while_running (Fixture       *fx,
                          gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 1);
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *pid_file = g_build_filename (fx->tree.ws, "bg.pid", NULL);
  g_autofree char *marker = g_build_filename (fx->tree.ws, "finished", NULL);
  g_autofree char *pid_text = NULL;
  char *commands[4];
  int run_pids[4];
  RunArg runs[4];
  GThread *threads[4];
  GThread *closers[8];
  int bg_pid;

  executor = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  /* Each command writes its own pid ($$: the shell, or what it execs in
   * the same process) before it waits; the first also starts a background
   * descendant that ignores SIGHUP. */
  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      g_autofree char *run_pid_file = g_strdup_printf ("%s/run-%u.pid", fx->tree.ws, i);

      if (i == 0)
        commands[i] = g_strdup_printf ("echo $$ > '%s'; (trap '' HUP; sleep 100; touch '%s') & "
                                       "echo $! > '%s'; sleep 100; touch '%s'",
                                       run_pid_file, marker, pid_file, marker);
      else
        commands[i] = g_strdup_printf ("echo $$ > '%s'; sleep 100", run_pid_file);
      runs[i] = (RunArg) { .executor = executor, .cwd = fx->tree.ws, .command = commands[i] };
      threads[i] = g_thread_new ("run", run_thread, &runs[i]);
    }
  pid_text = etu_wait_for_line (pid_file, 10000);
  g_assert_nonnull (pid_text);
  bg_pid = atoi (pid_text);
  g_assert_cmpint (bg_pid, >, 1);
  g_assert_false (etu_pid_is_dead (bg_pid));
  /* Every run has reached its command: its process runs. */
  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      g_autofree char *run_pid_file = g_strdup_printf ("%s/run-%u.pid", fx->tree.ws, i);
      g_autofree char *text = etu_wait_for_line (run_pid_file, 10000);

      g_assert_nonnull (text);
      run_pids[i] = atoi (text);
      g_assert_cmpint (run_pids[i], >, 1);
      g_assert_false (etu_pid_is_dead (run_pids[i]));
    }

  for (guint i = 0; i < G_N_ELEMENTS (closers); i++)
    closers[i] = g_thread_new ("close", close_thread, set);
  for (guint i = 0; i < G_N_ELEMENTS (closers); i++)
    g_assert_true (GPOINTER_TO_INT (g_thread_join (closers[i])));

  /* What close promises, checked before any run thread is joined: every
   * run's command process is gone (killed and reaped, not a zombie), and
   * so is the background descendant. */
  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      g_autofree char *proc = g_strdup_printf ("/proc/%d", run_pids[i]);

      g_assert_false (g_file_test (proc, G_FILE_TEST_EXISTS));
    }
  g_assert_true (etu_pid_is_dead (bg_pid));

  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      g_thread_join (threads[i]);
      g_assert_null (runs[i].result);
      g_assert_error (runs[i].error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
      g_clear_error (&runs[i].error);
      g_free (commands[i]);
    }
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (count_entries (fx->tree.scratch), ==, 0);
}

static void
test_close_async (Fixture       *fx,
                  gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 1);
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *owned = g_strdup (sbx_executor_set_get_owned_dir (set));

  executor = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  sbx_executor_set_close_async (set, NULL, etu_store_result, &result);
  g_assert_true (sbx_executor_set_close_finish (set, etu_wait_async (&result), &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (owned, G_FILE_TEST_EXISTS));
  g_assert_true (sbx_executor_is_closed (executor));

  /* The close ran on a GTask worker, which may still hold the task (and
   * through it the set, with its close eventfd) for a moment after the
   * result was delivered: the fixture's fd count is taken once the set is
   * really gone. */
  {
    SbxExecutorSet *weak = set;
    gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

    g_object_add_weak_pointer (G_OBJECT (weak), (gpointer *) &weak);
    g_clear_object (&result);
    g_clear_object (&executor);
    g_clear_object (&set);
    while (weak != NULL && g_get_monotonic_time () < until)
      {
        g_main_context_iteration (NULL, FALSE);
        g_usleep (1000);
      }
    g_assert_null (weak);
  }
}

/* Dropping the last reference closes; an executor that outlives its set
 * reports CLOSED. */
static void
test_dispose_closes (Fixture       *fx,
                     gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_unconfined_set (fx, 1);
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *owned = g_strdup (sbx_executor_set_get_owned_dir (set));
  const char *argv[] = { "true", NULL };

  executor = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  g_clear_object (&set);
  g_assert_false (g_file_test (owned, G_FILE_TEST_EXISTS));
  result = sbx_executor_run (executor, fx->tree.ws, argv, NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  if (!g_test_subprocess ())
    etu_warm_up ();

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/executor-set/options/validation", test_options_validation);
  ADD ("/executor-set/options/defaults-and-copy", test_options_defaults_and_copy);
  ADD ("/executor-set/options/none", test_options_none);
  ADD ("/executor-set/options/initable", test_initable);
  ADD ("/executor-set/backend/unconfined-profile", test_backend_unconfined_profile);
  ADD ("/executor-set/backend/sandboxed-unavailable", test_backend_sandboxed_unavailable);
  ADD ("/executor-set/backend/forced", test_backend_forced);
  g_test_add_func ("/executor-set/backend/env-forced-missing", test_backend_env_forced_missing);
  ADD ("/executor-set/scratch/layout", test_scratch_layout);
  ADD ("/executor-set/scratch/cleanup-hostile-tree", test_scratch_cleanup_hostile_tree);
  ADD ("/executor-set/scratch/real-home", test_real_home);
  ADD ("/executor-set/scratch/planted-link-refused", test_scratch_planted_link);
  ADD ("/executor-set/scratch/reap-killed", test_scratch_reap_killed);
  g_test_add_func ("/executor-set/scratch/reap-killed/subprocess/child", test_scratch_reap_killed_child);
  ADD ("/executor-set/for-key/keys", test_keys);
  ADD ("/executor-set/for-key/memoizes", test_memoizes);
  ADD ("/executor-set/for-key/memoizes-concurrently", test_memoizes_concurrently);
  ADD ("/executor-set/for-key/limit", test_limit);
  ADD ("/executor-set/for-key/limit-concurrently", test_limit_concurrently);
  ADD ("/executor-set/for-key/missing-guarantees-fail-closed", test_missing_guarantees_fail_closed);
  ADD ("/executor-set/close/idempotent", test_close_idempotent);
  ADD ("/executor-set/close/while-running", test_close_while_running);
  ADD ("/executor-set/close/async", test_close_async);
  ADD ("/executor-set/close/dispose", test_dispose_closes);
#undef ADD

  return g_test_run ();
}
