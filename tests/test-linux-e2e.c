/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux backend end to end: through the library (registry, executor
 * set, executors) and through `sbx run`, with the plugin as built.
 *
 *  - the default Sandboxed profile selects linux-userns at LevelFull and
 *    runs real commands; results, signal death and executor isolation are
 *    what the backend says they are;
 *  - SBX_BACKEND=linux-landlock (or the option) forces rung 2 on a host that
 *    has rung 1: the report says LevelDegraded and the guarantees shrink,
 *    confinement still holds, nothing falls back — the switch can only
 *    narrow, never widen;
 *  - `sbx run` exit statuses: the command's, 128+N for signal N, 127 not
 *    found, 126 not executable, 125 when sbx refuses.
 */
#include <gio/gio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "profile-test-util.h"

static const char *
linux_plugin_dir (void)
{
  const char *dir = g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR");

  g_assert_nonnull (dir);
  return dir;
}

static SbxRegistry *
linux_registry (void)
{
  const char *dirs[] = { linux_plugin_dir (), NULL };
  g_autoptr(GError) error = NULL;
  SbxRegistry *registry = sbx_registry_new_for_directories (dirs, &error);

  g_assert_no_error (error);
  return registry;
}

/* NULL (and a skip) when the host has no linux-userns. */
static SbxExecutorSet *
make_set (EtuTree     *tree,
          const char  *backend,
          GError     **error)
{
  g_autoptr(SbxRegistry) registry = linux_registry ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) local_error = NULL;

  profile = sbx_profile_new_default (tree->ws, &local_error);
  g_assert_no_error (local_error);
  options = etu_options (tree->scratch, 8, registry);
  if (backend != NULL)
    sbx_executor_set_options_set_backend (options, backend);
  return sbx_executor_set_new (profile, options, error);
}

static char *
output_of (SbxRunResult *result)
{
  GBytes *bytes = sbx_run_result_get_output (result);
  gsize len = 0;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_strndup (data, len);
}

static gboolean
have_userns (void)
{
  g_autoptr(GError) error = NULL;
  EtuTree tree = { 0 };
  g_autoptr(SbxExecutorSet) set = NULL;
  gboolean ok;

  etu_tree_init (&tree);
  set = make_set (&tree, "linux-userns", &error);
  ok = set != NULL;
  if (set != NULL)
    sbx_executor_set_close (set, NULL, NULL);
  g_clear_object (&set);
  etu_tree_clear (&tree);
  if (!ok)
    g_test_skip_printf ("linux-userns is unavailable here: %s", error->message);
  return ok;
}

static void
test_library_default (void)
{
  EtuTree tree = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *out = NULL;
  const char *argv[] = { "sh", "-c", "echo hi from $(hostname); exit 3", NULL };

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  set = make_set (&tree, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_executor_set_get_backend_name (set), ==, "linux-userns");
  executor = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_executor_get_level (executor), ==, SBX_LEVEL_FULL);
  g_assert_true (sbx_executor_get_guarantees (executor) & SBX_GUARANTEE_PROCESS_BOUNDARY);
  g_assert_true (sbx_executor_get_guarantees (executor) & SBX_GUARANTEE_ADDRESS_NETWORK);
  result = sbx_executor_run_argv (executor, tree.ws, argv, NULL, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_assert_cmpstr (out, ==, "hi from sbx\n");
  g_assert_true (sbx_run_result_get_exited (result));
  g_assert_cmpint (sbx_run_result_get_exit_code (result), ==, 3);
  g_assert_cmpint (sbx_run_result_get_containment (result), ==, SBX_LIFETIME_CONTAINMENT_ENFORCED);
  g_clear_pointer (&result, sbx_run_result_unref);

  /* Signal death is reported as such. */
  {
    const char *kill_argv[] = { "sh", "-c", "kill -TERM $$; sleep 5", NULL };

    result = sbx_executor_run_argv (executor, tree.ws, kill_argv, NULL, &error);
    g_assert_no_error (error);
    g_assert_true (sbx_run_result_get_signaled (result));
    g_assert_cmpint (sbx_run_result_get_term_signal (result), ==, SIGTERM);
  }
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_no_error (error);
  etu_tree_clear (&tree);
}

/* Two executors of one set: neither reads the other's HOME. */
static void
test_library_executors_isolated (void)
{
  EtuTree tree = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) a = NULL;
  g_autoptr(SbxExecutor) b = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *b_file = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  set = make_set (&tree, NULL, &error);
  g_assert_no_error (error);
  a = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  b = sbx_executor_set_for_key (set, "b", &error);
  g_assert_no_error (error);
  b_file = g_build_filename (sbx_executor_get_home (b), "b-secret", NULL);
  g_assert_true (g_file_set_contents (b_file, "B-ONLY\n", -1, NULL));
  script = g_strdup_printf ("cat '%s'; ls '%s'; echo own > \"$HOME/x\" && cat \"$HOME/x\"",
                            b_file, sbx_executor_get_tmpdir (b));
  {
    const char *argv[] = { "sh", "-c", script, NULL };

    result = sbx_executor_run_argv (a, tree.ws, argv, NULL, &error);
  }
  g_assert_no_error (error);
  out = output_of (result);
  g_assert_null (strstr (out, "B-ONLY"));
  g_assert_nonnull (strstr (out, "own\n"));
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  etu_tree_clear (&tree);
}

/* With host read AND write allowed, the set's private directory is still
 * denied: executor A can neither read nor write executor B's HOME or TMPDIR,
 * on either rung.  The scratch root is under /var/tmp on purpose: rung 1
 * hides /tmp (a socket directory) from a visible host anyway, which would
 * make this test pass without the rule it exists to check. */
static void
check_siblings_denied_under_host_allow (const char *backend)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRegistry) registry = linux_registry ();
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) a = NULL;
  g_autoptr(SbxExecutor) b = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  /* Not g_dir_make_tmp: it honours TMPDIR, and the scratch must not be under
   * /tmp. */
  g_autofree char *base = g_strdup ("/var/tmp/sbx-test-e2e-XXXXXX");
  g_autofree char *ws = NULL;
  g_autofree char *scratch = NULL;
  g_autofree char *b_file = NULL;
  g_autofree char *b_planted = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *content = NULL;

  g_assert_nonnull (g_mkdtemp (base));
  ws = g_build_filename (base, "ws", NULL);
  scratch = g_build_filename (base, "scratch", NULL);
  g_assert_cmpint (g_mkdir (ws, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (scratch, 0700), ==, 0);

  sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, backend);
  set = sbx_executor_set_new (profile, options, &error);
  if (set == NULL)
    {
      g_test_skip_printf ("%s is unavailable here: %s", backend, error->message);
      ptu_rm_rf (base);
      return;
    }
  a = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  b = sbx_executor_set_for_key (set, "b", &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (sbx_executor_get_home (b), scratch));

  /* Positive controls: the file exists and is readable without the
   * sandbox, and B itself reads it inside the sandbox. */
  b_file = g_build_filename (sbx_executor_get_home (b), "b-secret", NULL);
  g_assert_true (g_file_set_contents (b_file, "B-ONLY\n", -1, NULL));
  g_assert_true (g_file_get_contents (b_file, &content, NULL, NULL));
  g_assert_cmpstr (content, ==, "B-ONLY\n");
  {
    const char *argv[] = { "sh", "-c", "cat \"$HOME/b-secret\"", NULL };

    result = sbx_executor_run_argv (b, ws, argv, NULL, &error);
    g_assert_no_error (error);
    out = output_of (result);
    g_assert_cmpstr (out, ==, "B-ONLY\n");
    g_clear_pointer (&result, sbx_run_result_unref);
    g_clear_pointer (&out, g_free);
  }

  /* The probe: A reads B's HOME, lists B's TMPDIR, plants a file in both. */
  b_planted = g_build_filename (sbx_executor_get_tmpdir (b), "planted-by-a", NULL);
  script = g_strdup_printf ("cat '%s'; ls '%s'; echo x > '%s'; echo x > '%s/planted-by-a'; "
                            "echo own > \"$HOME/x\" && cat \"$HOME/x\"",
                            b_file, sbx_executor_get_tmpdir (b), b_planted,
                            sbx_executor_get_home (b));
  {
    const char *argv[] = { "sh", "-c", script, NULL };

    result = sbx_executor_run_argv (a, ws, argv, NULL, &error);
  }
  g_assert_no_error (error);
  out = output_of (result);
  g_assert_null (strstr (out, "B-ONLY"));
  g_assert_nonnull (strstr (out, "own\n"));
  g_assert_false (g_file_test (b_planted, G_FILE_TEST_EXISTS));
  {
    g_autofree char *home_planted = g_build_filename (sbx_executor_get_home (b), "planted-by-a", NULL);

    g_assert_false (g_file_test (home_planted, G_FILE_TEST_EXISTS));
  }
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  ptu_rm_rf (base);
}

static void
test_library_siblings_denied_host_allow_rung1 (void)
{
  check_siblings_denied_under_host_allow ("linux-userns");
}

static void
test_library_siblings_denied_host_allow_rung2 (void)
{
  check_siblings_denied_under_host_allow ("linux-landlock");
}

/* Forcing rung 2 by the ordinary selection narrows (LevelDegraded, fewer
 * guarantees), keeps confining, and an unknown name fails without
 * fallback. */
static void
test_library_forced_rung2 (void)
{
  EtuTree tree = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) full_set = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) full = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *outside = NULL;
  g_autofree char *script = NULL;
  SbxGuarantees full_bits, forced_bits;

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  full_set = make_set (&tree, NULL, &error);
  g_assert_no_error (error);
  full = sbx_executor_set_for_key (full_set, "k", &error);
  g_assert_no_error (error);
  set = make_set (&tree, "linux-landlock", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_executor_set_get_backend_name (set), ==, "linux-landlock");
  executor = sbx_executor_set_for_key (set, "k", &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_executor_get_level (executor), ==, SBX_LEVEL_DEGRADED);
  full_bits = sbx_executor_get_guarantees (full);
  forced_bits = sbx_executor_get_guarantees (executor);
  /* Strictly narrower guarantees... */
  g_assert_cmpuint (forced_bits & ~full_bits, ==, 0);
  g_assert_cmpuint (forced_bits, !=, full_bits);
  g_assert_false (forced_bits & SBX_GUARANTEE_PROCESS_BOUNDARY);
  /* ...and the profile's confinement still holds. */
  outside = g_build_filename (tree.tmp, "outside", NULL);
  script = g_strdup_printf ("echo x > '%s'; echo in > inside && cat inside", outside);
  {
    const char *argv[] = { "sh", "-c", script, NULL };

    result = sbx_executor_run_argv (executor, tree.ws, argv, NULL, &error);
  }
  g_assert_no_error (error);
  {
    g_autofree char *out = output_of (result);

    g_assert_cmpstr (out, !=, NULL);
    g_assert_nonnull (strstr (out, "in\n"));
  }
  g_assert_false (g_file_test (outside, G_FILE_TEST_EXISTS));
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_true (sbx_executor_set_close (full_set, NULL, &error));
  g_clear_object (&set);

  /* A name no loaded plugin provides: no fallback. */
  set = make_set (&tree, "linux-no-such-rung", &error);
  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE);
  etu_tree_clear (&tree);
}

/* The profile's unix-sockets member reaches the backend: closed by default
 * on both rungs, open with "unix-sockets": "allow" (through the JSON
 * loader, as a profile file would say it). */
static void
unix_sockets_member (const char *backend)
{
  static const char code[] = "import socket\n"
                             "try:\n"
                             "  socket.socket(socket.AF_UNIX).close(); print('unix ok')\n"
                             "except OSError as e:\n"
                             "  print('unix refused', e.errno)\n";
  const char *argv[] = { "python3", "-c", code, NULL };
  EtuTree tree = { 0 };

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  for (int allow = 0; allow <= 1; allow++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxRegistry) registry = linux_registry ();
      g_autoptr(SbxExecutorSetOptions) options = etu_options (tree.scratch, 8, registry);
      g_autofree char *json = g_strdup_printf ("{\"version\":1,\"workspace\":{\"read\":\"allow\",\"write\":\"allow\"},"
                                               "\"command\":\"allow\"%s}",
                                               allow ? ",\"unix-sockets\":\"allow\"" : "");
      g_autoptr(SbxProfile) profile = sbx_profile_new_from_json (json, -1, tree.ws, &error);
      g_autoptr(SbxExecutorSet) set = NULL;
      g_autoptr(SbxExecutor) executor = NULL;
      g_autoptr(SbxRunResult) result = NULL;
      g_autofree char *out = NULL;

      g_assert_no_error (error);
      g_assert_cmpint (sbx_profile_get_unix_sockets (profile), ==, allow);
      sbx_executor_set_options_set_backend (options, backend);
      set = sbx_executor_set_new (profile, options, &error);
      g_assert_no_error (error);
      executor = sbx_executor_set_for_key (set, "k", &error);
      g_assert_no_error (error);
      result = sbx_executor_run_argv (executor, tree.ws, argv, NULL, &error);
      g_assert_no_error (error);
      out = output_of (result);
      g_test_message ("%s allow=%d: %s", backend, allow, out);
      g_assert_cmpstr (out, ==, allow ? "unix ok\n" : "unix refused 13\n");
      g_assert_true (sbx_executor_set_close (set, NULL, &error));
      g_assert_no_error (error);
    }
  etu_tree_clear (&tree);
}

static void
test_unix_sockets_member_rung1 (void)
{
  unix_sockets_member ("linux-userns");
}

static void
test_unix_sockets_member_rung2 (void)
{
  unix_sockets_member ("linux-landlock");
}

/* ------------------------------------------------------------------------- */
/* sbx run                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct
{
  int   status;
  char *out;
  char *err;
} Outcome;

static void
outcome_clear (Outcome *o)
{
  g_free (o->out);
  g_free (o->err);
}

static Outcome
sbx_run (EtuTree           *tree,
         const char        *backend,
         const char *const *args)
{
  g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  Outcome o = { 0 };

  g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", linux_plugin_dir (), TRUE);
  g_subprocess_launcher_setenv (l, "TMPDIR", tree->scratch, TRUE);
  if (backend != NULL)
    g_subprocess_launcher_setenv (l, "SBX_BACKEND", backend, TRUE);
  else
    g_subprocess_launcher_unsetenv (l, "SBX_BACKEND");
  g_subprocess_launcher_set_cwd (l, tree->ws);
  g_ptr_array_add (argv, (gpointer) g_getenv ("SBX_TEST_SBX"));
  g_ptr_array_add (argv, (gpointer) "run");
  for (; *args != NULL; args++)
    g_ptr_array_add (argv, (gpointer) *args);
  g_ptr_array_add (argv, NULL);
  proc = g_subprocess_launcher_spawnv (l, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &o.out, &o.err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (proc));
  o.status = g_subprocess_get_exit_status (proc);
  if (o.err != NULL && o.err[0] != '\0')
    g_test_message ("sbx run stderr: %s", o.err);
  return o;
}

static void
test_cli_run (void)
{
  EtuTree tree = { 0 };
  g_autofree char *script = NULL;

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  script = g_build_filename (tree.ws, "not-executable", NULL);
  g_assert_true (g_file_set_contents (script, "#!/bin/sh\necho no\n", -1, NULL));
  g_assert_cmpint (g_chmod (script, 0644), ==, 0);

  {
    const char *args[] = { "--report=json", "--", "sh", "-c", "echo $((6 * 7)); exit 3", NULL };
    Outcome o = sbx_run (&tree, NULL, args);

    g_assert_cmpint (o.status, ==, 3);
    g_assert_cmpstr (o.out, ==, "42\n");
    g_assert_nonnull (strstr (o.err, "\"linux-userns\""));
    g_assert_nonnull (strstr (o.err, "\"level\""));
    g_assert_nonnull (strstr (o.err, "\"full\""));
    outcome_clear (&o);
  }
  {
    const char *args[] = { "--", "sh", "-c", "kill -TERM $$; sleep 5", NULL };
    Outcome o = sbx_run (&tree, NULL, args);

    g_assert_cmpint (o.status, ==, 128 + SIGTERM);
    outcome_clear (&o);
  }
  {
    const char *args[] = { "--", "sbx-no-such-command", NULL };
    Outcome o = sbx_run (&tree, NULL, args);

    g_assert_cmpint (o.status, ==, 127);
    outcome_clear (&o);
  }
  {
    const char *args[] = { "--", "./not-executable", NULL };
    Outcome o = sbx_run (&tree, NULL, args);

    g_assert_cmpint (o.status, ==, 126);
    outcome_clear (&o);
  }
  {
    /* Forced rung 2 through the environment: narrower, still confining. */
    const char *args[] = { "--report=json", "--", "sh", "-c", "cat /etc/shadow; echo $?", NULL };
    Outcome o = sbx_run (&tree, "linux-landlock", args);

    g_assert_cmpint (o.status, ==, 0);
    g_assert_cmpstr (o.out, ==, "1\n");
    g_assert_nonnull (strstr (o.err, "\"linux-landlock\""));
    g_assert_nonnull (strstr (o.err, "\"degraded\""));
    outcome_clear (&o);
  }
  {
    /* A name no plugin provides: sbx refuses (125), no fallback. */
    const char *args[] = { "--", "true", NULL };
    Outcome o = sbx_run (&tree, "linux-no-such-rung", args);

    g_assert_cmpint (o.status, ==, 125);
    outcome_clear (&o);
  }
  etu_tree_clear (&tree);
}

/* ---- set close removes each sandbox's cgroup ---- */

typedef struct
{
  SbxExecutor  *executor;
  const char   *cwd;
  const char   *command;
  SbxRunResult *result;
  GError       *error;
} CloseRun;

static gpointer
close_run_thread (gpointer data)
{
  CloseRun *arg = data;

  arg->result = sbx_executor_run_command (arg->executor, arg->cwd, arg->command, NULL, &arg->error);
  return NULL;
}

/* The mount point of the cgroup hierarchy with @controller (NULL: the
 * cgroup2 one), from /proc/self/mounts. */
static char *
cgroup_mount_of (const char *controller)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/mounts", &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", -1);
      g_auto(GStrv) opts = NULL;

      if (g_strv_length (f) < 4)
        continue;
      if (controller == NULL && strcmp (f[2], "cgroup2") == 0)
        return g_strdup (f[1]);
      if (controller == NULL || strcmp (f[2], "cgroup") != 0)
        continue;
      opts = g_strsplit (f[3], ",", -1);
      if (g_strv_contains ((const char *const *) opts, controller))
        return g_strdup (f[1]);
    }
  return NULL;
}

/* Host directories of the sbx-* cgroups named in a /proc/PID/cgroup text. */
static GPtrArray *
sandbox_cgroup_dirs_from (const char *text)
{
  GPtrArray *dirs = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (gsize i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], ":", 3);
      g_auto(GStrv) ctrls = NULL;
      const char *slash;

      if (g_strv_length (f) != 3 || (slash = strrchr (f[2], '/')) == NULL
          || !g_str_has_prefix (slash + 1, "sbx-"))
        continue;
      ctrls = g_strsplit (f[1], ",", -1);
      for (gsize k = 0; ctrls[k] != NULL; k++)
        {
          g_autofree char *mount = cgroup_mount_of (ctrls[k][0] != '\0' ? ctrls[k] : NULL);

          if (mount != NULL)
            g_ptr_array_add (dirs, g_build_filename (mount, f[2], NULL));
        }
    }
  return dirs;
}

static void
test_library_close_removes_cgroup (gconstpointer backend)
{
  EtuTree tree = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(GPtrArray) dirs = NULL;
  g_autofree char *cg_file = NULL;
  g_autofree char *command = NULL;
  g_autofree char *text = NULL;
  CloseRun run = { 0 };
  GThread *thread;

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  set = make_set (&tree, backend, &error);
  g_assert_no_error (error);
  executor = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  if (!(sbx_executor_get_guarantees (executor) & SBX_GUARANTEE_RESOURCE_LIMITS))
    {
      SbxCompileReport *report = sbx_executor_get_report (executor);
      const char *detail = NULL;

      for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
        if (strcmp (sbx_compile_report_get_entry_feature (report, i), "resource-limits") == 0)
          detail = sbx_compile_report_get_entry_detail (report, i);
      g_assert_nonnull (detail);
      g_assert_nonnull (strstr (detail, "rlimit fallback"));
      g_test_skip_printf ("no cgroup for this caller, and the report says so: %s", detail);
      g_assert_true (sbx_executor_set_close (set, NULL, NULL));
      etu_tree_clear (&tree);
      return;
    }
  cg_file = g_build_filename (tree.ws, "cgroup.txt", NULL);
  /* Rung 2 has no /proc: the target's pid is the host's there. */
  command = g_strdup_printf ("{ cat /proc/self/cgroup 2>/dev/null || echo \"pid $$\"; } > '%s.tmp' "
                             "&& mv '%s.tmp' '%s'; sleep 100", cg_file, cg_file, cg_file);
  run = (CloseRun) { .executor = executor, .cwd = tree.ws, .command = command };
  thread = g_thread_new ("run", close_run_thread, &run);
  g_assert_true (etu_wait_for_file (cg_file, 10000));
  g_assert_true (g_file_get_contents (cg_file, &text, NULL, NULL));
  if (g_str_has_prefix (text, "pid "))
    {
      g_autofree char *proc = g_strdup_printf ("/proc/%d/cgroup", atoi (text + 4));

      g_clear_pointer (&text, g_free);
      g_assert_true (g_file_get_contents (proc, &text, NULL, NULL));
    }
  dirs = sandbox_cgroup_dirs_from (text);
  g_assert_cmpuint (dirs->len, >=, 1);
  for (guint i = 0; i < dirs->len; i++)
    g_assert_true (g_file_test (g_ptr_array_index (dirs, i), G_FILE_TEST_IS_DIR));

  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  g_assert_no_error (error);
  g_thread_join (thread);
  g_assert_null (run.result);
  g_assert_error (run.error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
  g_clear_error (&run.error);
  for (guint i = 0; i < dirs->len; i++)
    g_assert_false (g_file_test (g_ptr_array_index (dirs, i), G_FILE_TEST_EXISTS));
  etu_tree_clear (&tree);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/linux/e2e/library/default-profile", test_library_default);
  g_test_add_func ("/linux/e2e/library/executors-isolated", test_library_executors_isolated);
  g_test_add_func ("/linux/e2e/library/siblings-denied-host-allow/rung1",
                   test_library_siblings_denied_host_allow_rung1);
  g_test_add_func ("/linux/e2e/library/siblings-denied-host-allow/rung2",
                   test_library_siblings_denied_host_allow_rung2);
  g_test_add_func ("/linux/e2e/library/forced-rung2", test_library_forced_rung2);
  g_test_add_func ("/linux/e2e/library/unix-sockets-member/rung1", test_unix_sockets_member_rung1);
  g_test_add_func ("/linux/e2e/library/unix-sockets-member/rung2", test_unix_sockets_member_rung2);
  g_test_add_func ("/linux/e2e/cli/run", test_cli_run);
  g_test_add_data_func ("/linux/e2e/library/close-removes-cgroup/rung1", "linux-userns",
                        test_library_close_removes_cgroup);
  g_test_add_data_func ("/linux/e2e/library/close-removes-cgroup/rung2", "linux-landlock",
                        test_library_close_removes_cgroup);
  return g_test_run ();
}
