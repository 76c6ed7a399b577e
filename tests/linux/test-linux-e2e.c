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
 *
 * These are the cases of one module, the Linux backend, end to end: one GTest
 * binary per concept, so it is over a thousand lines.
 */
#include <gio/gio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"

/* NULL (and a skip) when the host has no linux-userns. */
static SbxExecutorSet *
make_set (EtuTree     *tree,
          const char  *backend,
          GError     **error)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("linux", NULL);
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
  result = sbx_executor_run (executor, tree.ws, argv, NULL, NULL, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_assert_cmpstr (out, ==, "hi from sbx\n");
  g_assert_true (sbx_run_result_get_if_exited (result));
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 3);
  g_assert_cmpint (sbx_run_result_get_lifetime_containment (result), ==, SBX_LIFETIME_CONTAINMENT_ENFORCED);
  g_clear_pointer (&result, sbx_run_result_unref);

  /* Signal death is reported as such. */
  {
    const char *kill_argv[] = { "sh", "-c", "kill -TERM $$; sleep 5", NULL };

    result = sbx_executor_run (executor, tree.ws, kill_argv, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_true (sbx_run_result_get_if_signaled (result));
    g_assert_cmpint (sbx_run_result_get_term_sig (result), ==, SIGTERM);
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

    result = sbx_executor_run (a, tree.ws, argv, NULL, NULL, &error);
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
  g_autoptr(SbxRegistry) registry = etu_registry ("linux", NULL);
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
      etu_rm_rf (base);
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

    result = sbx_executor_run (b, ws, argv, NULL, NULL, &error);
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

    result = sbx_executor_run (a, ws, argv, NULL, NULL, &error);
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
  etu_rm_rf (base);
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

    result = sbx_executor_run (executor, tree.ws, argv, NULL, NULL, &error);
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

/* The profile's unix-sockets member reaches the backend: supervised by
 * default on both rungs (stream sockets, no datagram ones), open with
 * "unix-sockets": "allow" (through the JSON loader, as a profile file would
 * say it).  At rung 2 opening them reaches every host daemon's socket, so
 * the backend claims no write, read or network boundary: a profile that
 * requires them is refused (naming them), one that requires none runs with
 * unix sockets open. */
static void
unix_sockets_member (const char *backend)
{
  static const char code[] = "import socket\n"
                             "try:\n"
                             "  socket.socket(socket.AF_UNIX).close(); print('unix stream ok')\n"
                             "  socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close(); print('unix ok')\n"
                             "except OSError as e:\n"
                             "  print('unix refused', e.errno)\n";
  static const char restricted[] = "\"workspace\":{\"read\":\"allow\",\"write\":\"allow\"}";
  static const char open_host[] = "\"workspace\":{\"read\":\"allow\",\"write\":\"allow\"},"
                                  "\"host\":{\"read\":\"allow\",\"write\":\"allow\"},\"network\":\"allow\"";
  static const struct
  {
    const char *access;
    gboolean    allow;
  } variants[] = { { restricted, FALSE }, { restricted, TRUE }, { open_host, TRUE } };
  const char *argv[] = { "python3", "-c", code, NULL };
  gboolean rung2 = g_str_equal (backend, "linux-landlock");
  EtuTree tree = { 0 };

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    {
      gboolean allow = variants[v].allow;
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxRegistry) registry = etu_registry ("linux", NULL);
      g_autoptr(SbxExecutorSetOptions) options = etu_options (tree.scratch, 8, registry);
      g_autofree char *json = g_strdup_printf ("{\"version\":1,%s,\"command\":\"allow\"%s}", variants[v].access,
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
      if (rung2 && allow && variants[v].access == restricted)
        {
          g_test_message ("%s allow, restricted profile: %s", backend, error != NULL ? error->message : "(none)");
          g_assert_null (executor);
          g_assert_nonnull (error);
          g_assert_nonnull (strstr (error->message, "network-boundary"));
          g_assert_nonnull (strstr (error->message, "write-boundary"));
          g_assert_true (sbx_executor_set_close (set, NULL, NULL));
          continue;
        }
      g_assert_no_error (error);
      result = sbx_executor_run (executor, tree.ws, argv, NULL, NULL, &error);
      g_assert_no_error (error);
      out = output_of (result);
      g_test_message ("%s allow=%d: %s", backend, allow, out);
      /* stream sockets always (their connects are supervised), datagram
       * ones only with the member */
      g_assert_cmpstr (out, ==, allow ? "unix stream ok\nunix ok\n" : "unix stream ok\nunix refused 13\n");
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

  g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", etu_plugin_dir ("linux"), TRUE);
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

  arg->result = sbx_executor_run (arg->executor, arg->cwd, SBX_SH_ARGV (arg->command), NULL, NULL, &arg->error);
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

/* The host pid of the sandbox's "sleep 100.<tag>" (it exec'd once the
 * marker file was written), or 0. */
static pid_t
host_pid_of_sleep (int tag)
{
  g_autofree char *arg = g_strdup_printf ("100.%d", tag);
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;

  /* The exec follows the marker: poll until the sleep shows. */
  for (int attempt = 0; proc != NULL && attempt < 1000; attempt++)
    {
      g_dir_rewind (proc);
      while ((name = g_dir_read_name (proc)) != NULL)
        {
          g_autofree char *path = g_strdup_printf ("/proc/%s/cmdline", name);
          g_autofree char *cmdline = NULL;
          gsize len = 0;

          if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &cmdline, &len, NULL))
            continue;
          /* "sleep\0100.<tag>\0" */
          if (len == sizeof "sleep" + strlen (arg) + 1 && strcmp (cmdline, "sleep") == 0
              && strcmp (cmdline + sizeof "sleep", arg) == 0)
            return (pid_t) atoi (name);
        }
      g_usleep (10 * 1000);
    }
  return 0;
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
  /* The target's host pid: rung 2 has no /proc and its pid is the host's;
   * at rung 1 the sandbox's /proc/self/cgroup is of its own cgroup
   * namespace ("/"), so the test finds the sleep on the host by its unique
   * argument and reads the host's view of its cgroups. */
  command = g_strdup_printf ("echo \"pid $$\" > '%s.tmp' && mv '%s.tmp' '%s'; exec sleep 100.%d",
                             cg_file, cg_file, cg_file, (int) getpid ());
  run = (CloseRun) { .executor = executor, .cwd = tree.ws, .command = command };
  thread = g_thread_new ("run", close_run_thread, &run);
  g_assert_true (etu_wait_for_file (cg_file, 10000));
  g_assert_true (g_file_get_contents (cg_file, &text, NULL, NULL));
  {
    g_autofree char *proc = NULL;
    pid_t host_pid = g_strcmp0 (backend, "linux-landlock") == 0 ? atoi (text + 4)
                                                                          : host_pid_of_sleep (getpid ());

    g_assert_cmpint (host_pid, >, 0);
    proc = g_strdup_printf ("/proc/%d/cgroup", (int) host_pid);
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

/* Planted symlinks: run 1 plants `ln -s <host dir> out` in its workspace; run 2
 * with --write ./out (or --read ./out) is refused, naming the link and its
 * target, and the host directory is untouched; passing the resolved path on
 * purpose works (positive control) and the report (text and JSON) names the
 * root as the resolved path it became.  On the rung given by @backend. */
static void
check_planted_symlink (const char *backend)
{
  EtuTree tree = { 0 };
  g_autofree char *host = NULL;
  g_autofree char *victim = NULL;
  g_autofree char *created = NULL;
  g_autofree char *link = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *plant = NULL;
  const char *attack;

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  host = g_build_filename (tree.tmp, "host-home", NULL);
  g_assert_cmpint (g_mkdir (host, 0700), ==, 0);
  victim = g_build_filename (host, ".bashrc", NULL);
  created = g_build_filename (host, "dropped", NULL);
  g_assert_true (g_file_set_contents (victim, "original\n", -1, NULL));
  link = g_build_filename (tree.ws, "out", NULL);
  plant = g_strdup_printf ("ln -s '%s' out", host);
  attack = "echo pwned > out/.bashrc; echo pwned > out/dropped";

  {
    /* Run 1: the untrusted run plants the link (its workspace is writable). */
    const char *args[] = { "--", "sh", "-c", plant, NULL };
    Outcome o = sbx_run (&tree, backend, args);

    g_assert_cmpint (o.status, ==, 0);
    g_assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
    outcome_clear (&o);
  }
  for (guint i = 0; i < 2; i++)
    {
      /* Run 2: --write ./out (then --read ./out) is refused before anything runs. */
      const char *args[] = { i == 0 ? "--write" : "--read", "./out", "--", "sh", "-c", attack, NULL };
      Outcome o = sbx_run (&tree, backend, args);
      g_autofree char *named = g_strdup_printf ("%s -> %s", link, host);

      g_assert_cmpint (o.status, ==, 125);
      g_assert_nonnull (strstr (o.err, "symbolic link"));
      g_assert_nonnull (strstr (o.err, named));
      g_assert_true (g_file_get_contents (victim, &contents, NULL, NULL));
      g_assert_cmpstr (contents, ==, "original\n");
      g_clear_pointer (&contents, g_free);
      g_assert_false (g_file_test (created, G_FILE_TEST_EXISTS));
      outcome_clear (&o);
    }
  {
    /* Positive control: the resolved path, passed on purpose, works, and the
     * report names it (text). */
    g_autofree char *write = g_strdup_printf ("echo chosen > '%s'", created);
    const char *args[] = { "--report", "--write", host, "--", "sh", "-c", write, NULL };
    Outcome o = sbx_run (&tree, backend, args);
    g_autofree char *line = g_strdup_printf ("root       %s (read allow, write allow)", host);
    g_autofree char *ws_line = g_strdup_printf ("workspace  %s (read allow, write allow)", tree.ws);

    g_assert_cmpint (o.status, ==, 0);
    g_assert_true (g_file_get_contents (created, &contents, NULL, NULL));
    g_assert_cmpstr (contents, ==, "chosen\n");
    g_clear_pointer (&contents, g_free);
    g_assert_nonnull (strstr (o.err, "roots:\n"));
    g_assert_nonnull (strstr (o.err, line));
    g_assert_nonnull (strstr (o.err, ws_line));
    outcome_clear (&o);
  }
  {
    /* A root reached through a system symlink (/lib64 -> usr/lib64 on merged
     * /usr) keeps working; the JSON report shows the path it became. */
    g_autofree char *lib64 = g_file_read_link ("/lib64", NULL);
    const char *args[] = { "--report=json", "--read", "/lib64", "--", "true", NULL };
    Outcome o = { 0 };

    if (lib64 != NULL)
      {
        g_autofree char *resolved = NULL;
        g_autofree char *expect = NULL;

        o = sbx_run (&tree, backend, args);
        resolved = g_canonicalize_filename (lib64, "/");
        expect = g_strdup_printf ("{\"kind\":\"root\",\"path\":\"%s\",\"read\":\"allow\",\"write\":\"deny\"}",
                                  resolved);
        g_assert_cmpint (o.status, ==, 0);
        g_assert_nonnull (strstr (o.err, expect));
        outcome_clear (&o);
      }
    else
      g_test_message ("/lib64 is not a symlink here: the system-symlink control runs in test-profile");
  }
  etu_tree_clear (&tree);
}

/* `sbx run` started in @cwd with TMPDIR (the CLI's default scratch root)
 * set to @tmpdir; output goes to pipes. */
static GSubprocess *
sbx_run_start (const char        *cwd,
               const char        *tmpdir,
               const char        *backend,
               const char *const *args)
{
  g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  GSubprocess *proc;

  g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", etu_plugin_dir ("linux"), TRUE);
  g_subprocess_launcher_setenv (l, "TMPDIR", tmpdir, TRUE);
  g_subprocess_launcher_setenv (l, "SBX_BACKEND", backend, TRUE);
  g_subprocess_launcher_set_cwd (l, cwd);
  g_ptr_array_add (argv, (gpointer) g_getenv ("SBX_TEST_SBX"));
  g_ptr_array_add (argv, (gpointer) "run");
  for (; *args != NULL; args++)
    g_ptr_array_add (argv, (gpointer) *args);
  g_ptr_array_add (argv, NULL);
  proc = g_subprocess_launcher_spawnv (l, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  return proc;
}

static Outcome
sbx_run_finish (GSubprocess *proc)
{
  g_autoptr(GError) error = NULL;
  Outcome o = { 0 };

  g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &o.out, &o.err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (proc));
  o.status = g_subprocess_get_exit_status (proc);
  if (o.err != NULL && o.err[0] != '\0')
    g_test_message ("sbx run stderr: %s", o.err);
  return o;
}

static gboolean
wait_nonempty (const char *path)
{
  for (guint i = 0; i < 2000; i++)
    {
      GStatBuf st;

      if (g_stat (path, &st) == 0 && st.st_size > 0)
        return TRUE;
      g_usleep (10000);
    }
  return FALSE;
}

/* The attack run A makes on run B's HOME, and the own-HOME/TMPDIR checks
 * that must keep working. */
#define SIBLING_ATTACK \
  "h=$(cat b-home); echo '[user] name = evil' > \"$h/.gitconfig\" 2>/dev/null && echo WROTE-B; " \
  "ls \"$h\" 2>/dev/null | grep -q b-secret && echo LISTED-B; " \
  "echo own > \"$HOME/own\" && cat \"$HOME/own\"; echo tmp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\""

/* Other runs' scratch: two concurrent `sbx run` in a workspace that contains the
 * scratch root (TMPDIR = the workspace, as with a workspace of /tmp).  B
 * runs until the test releases it, after the checks.  Run A
 * cannot write into (or list) run B's HOME, whichever started first; its own
 * HOME and TMPDIR work.  Positive control: outside sbx, the same write into
 * B's HOME succeeds. */
static void
check_concurrent_runs (const char *backend,
                       gboolean    b_first)
{
  EtuTree tree = { 0 };
  g_autofree char *ws = NULL;
  g_autofree char *b_home_file = NULL;
  g_autofree char *b_home = NULL;
  g_autofree char *gitconfig = NULL;
  g_autofree char *secret = NULL;
  g_autofree char *a_started = NULL;
  g_autoptr(GSubprocess) b = NULL;
  g_autoptr(GSubprocess) a = NULL;
  const char *b_script =
    "echo secret > \"$HOME/b-secret\"; echo \"$HOME\" > b-home; "
    "i=0; while [ ! -s release ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done";
  const char *a_wait_script =
    "echo 1 > a-started; i=0; while [ ! -s b-home ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; "
    SIBLING_ATTACK "; echo 1 > a-done";
  const char *a_script = SIBLING_ATTACK "; echo 1 > a-done";
  const char *b_args[] = { "--", "sh", "-c", b_script, NULL };
  const char *a_args[] = { "--", "sh", "-c", b_first ? a_script : a_wait_script, NULL };
  Outcome oa, ob;
  g_autofree char *contents = NULL;

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  ws = etu_mkdir (tree.tmp, "tmp-like");
  b_home_file = g_build_filename (ws, "b-home", NULL);
  a_started = g_build_filename (ws, "a-started", NULL);
  /* The signalling files exist beforehand: with the scratch root inside the
   * workspace, the workspace directory itself is carved (its entries that
   * existed at executor creation stay writable, new ones cannot be made:
   * the report's "carveout" entry). */
  g_free (etu_write_file (ws, "b-home", ""));
  g_free (etu_write_file (ws, "a-started", ""));
  g_free (etu_write_file (ws, "a-done", ""));
  g_free (etu_write_file (ws, "release", ""));

  if (b_first)
    {
      b = sbx_run_start (ws, ws, backend, b_args);
      g_assert_true (wait_nonempty (b_home_file));
      a = sbx_run_start (ws, ws, backend, a_args);
    }
  else
    {
      /* A's executor exists (its command runs) before B's set is created. */
      a = sbx_run_start (ws, ws, backend, a_args);
      g_assert_true (wait_nonempty (a_started));
      b = sbx_run_start (ws, ws, backend, b_args);
    }
  oa = sbx_run_finish (a);
  g_assert_true (g_file_get_contents (b_home_file, &contents, NULL, NULL));
  b_home = g_strchomp (g_steal_pointer (&contents));
  gitconfig = g_build_filename (b_home, ".gitconfig", NULL);
  secret = g_build_filename (b_home, "b-secret", NULL);
  /* B is still running (it waits for a-done): its HOME exists. */
  if (!g_file_test (secret, G_FILE_TEST_IS_REGULAR))
    {
      ob = sbx_run_finish (b);
      g_error ("run B has no %s (B: status %d, out %s, err %s; A: status %d, out %s, err %s)", secret,
               ob.status, ob.out, ob.err, oa.status, oa.out, oa.err);
    }
  g_assert_false (g_file_test (gitconfig, G_FILE_TEST_EXISTS));
  g_assert_cmpint (oa.status, ==, 0);
  g_assert_null (strstr (oa.out, "WROTE-B"));
  g_assert_null (strstr (oa.out, "LISTED-B"));
  g_assert_nonnull (strstr (oa.out, "own\ntmp\n"));
  /* Positive control: without the sandbox the same write lands. */
  {
    g_autofree char *control = g_build_filename (b_home, "control", NULL);

    g_assert_true (g_file_set_contents (control, "x", -1, NULL));
  }
  {
    /* Written in place: a new inode in the scratch root (what
     * g_file_set_contents' rename makes) is outside B's snapshot. */
    g_autofree char *release = g_build_filename (ws, "release", NULL);
    FILE *f = fopen (release, "w");

    g_assert_nonnull (f);
    g_assert_cmpint (fputs ("1\n", f), >=, 0);
    g_assert_cmpint (fclose (f), ==, 0);
  }
  ob = sbx_run_finish (b);
  g_assert_cmpint (ob.status, ==, 0);
  outcome_clear (&oa);
  outcome_clear (&ob);
  etu_tree_clear (&tree);
}

static void
test_cli_concurrent_b_first_rung1 (void)
{
  check_concurrent_runs ("linux-userns", TRUE);
}

static void
test_cli_concurrent_a_first_rung1 (void)
{
  check_concurrent_runs ("linux-userns", FALSE);
}

static void
test_cli_concurrent_b_first_rung2 (void)
{
  check_concurrent_runs ("linux-landlock", TRUE);
}

static void
test_cli_concurrent_a_first_rung2 (void)
{
  check_concurrent_runs ("linux-landlock", FALSE);
}

/* Root-only kernel files of /proc.  Each prints "name:open"
 * when it can be opened and has content, "name:closed" otherwise (kmsg is
 * left out: reading it blocks). */
#define PROC_PROBE \
  "for f in keys timer_list slabinfo vmallocinfo iomem pagetypeinfo kallsyms; do " \
  "if [ -n \"$(head -c 1 /proc/$f 2>/dev/null)\" ]; then echo $f:open; else echo $f:closed; fi; done; " \
  "ls /proc/acpi 2>/dev/null | head -1; head -c 5 /proc/self/status 2>/dev/null; echo"

static guint
count_open (const char *out)
{
  guint n = 0;

  for (const char *p = out; (p = strstr (p, ":open")) != NULL; p++)
    n++;
  return n;
}

static void
check_proc_masked (const char *backend,
                   gboolean    host_read)
{
  EtuTree tree = { 0 };
  g_autofree char *outside = NULL;
  g_autofree char *profile = NULL;
  g_autoptr(GError) error = NULL;
  const char *probe_argv[] = { "sh", "-c", PROC_PROBE, NULL };
  gboolean root = geteuid () == 0;
  int wait_status = 0;

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  /* The control: the same probe outside the sandbox. */
  g_assert_true (g_spawn_sync (NULL, (char **) probe_argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &outside, NULL, &wait_status, &error));
  g_assert_no_error (error);
  if (root)
    g_assert_cmpuint (count_open (outside), >=, 4);   /* root reads them on the host */
  profile = etu_write_file (tree.tmp, "host-read.json",
                            "{\"version\": 1, \"workspace\": {\"root\": \".\", \"read\": \"allow\", \"write\": \"allow\"},"
                            " \"host\": {\"read\": \"allow\", \"write\": \"deny\"}, \"network\": \"deny\", \"command\": \"allow\","
                            " \"home\": \"isolated\", \"isolation\": \"sandboxed\"}");
  {
    const char *args_default[] = { "--report", "--", "sh", "-c", PROC_PROBE, NULL };
    const char *args_host[] = { "--report", "--profile", profile, "--", "sh", "-c", PROC_PROBE, NULL };
    Outcome o = sbx_run (&tree, backend, host_read ? args_host : args_default);
    gboolean rung1 = g_str_equal (backend, "linux-userns");

    g_assert_cmpint (o.status, ==, 0);
    if (rung1 && root)
      {
        /* Masked, and /proc itself still works. */
        g_assert_cmpuint (count_open (o.out), ==, 0);
        g_assert_nonnull (strstr (o.out, "Name:"));
        g_assert_nonnull (strstr (o.err, "enforced   proc-masked"));
      }
    else if (rung1)
      {
        /* Not root: the kernel keeps them from the caller on the host and
         * inside alike; nothing to mask and nothing claimed. */
        g_assert_cmpuint (count_open (o.out), <=, count_open (outside));
        g_assert_null (strstr (o.err, "proc-masked"));
        g_assert_nonnull (strstr (o.out, "Name:"));
      }
    else if (root && host_read)
      {
        /* Rung 2 shows the host /proc because the profile grants host
         * read: the report says these files are readable. */
        g_assert_nonnull (strstr (o.err, "unenforced proc-masked"));
      }
    else if (root)
      {
        g_assert_cmpuint (count_open (o.out), ==, 0);
        g_assert_nonnull (strstr (o.err, "vacuous    proc-masked"));
      }
    else
      {
        g_assert_cmpuint (count_open (o.out), <=, count_open (outside));
        g_assert_null (strstr (o.err, "proc-masked"));
      }
    outcome_clear (&o);
  }
  etu_tree_clear (&tree);
}

static void
test_cli_proc_masked_rung1 (void)
{
  check_proc_masked ("linux-userns", FALSE);
}

static void
test_cli_proc_masked_rung1_host_read (void)
{
  check_proc_masked ("linux-userns", TRUE);
}

static void
test_cli_proc_masked_rung2 (void)
{
  check_proc_masked ("linux-landlock", FALSE);
}

static void
test_cli_proc_masked_rung2_host_read (void)
{
  check_proc_masked ("linux-landlock", TRUE);
}

static void
test_cli_planted_symlink_rung1 (void)
{
  check_planted_symlink ("linux-userns");
}

static void
test_cli_planted_symlink_rung2 (void)
{
  check_planted_symlink ("linux-landlock");
}

/* The scratch root inside the workspace: the sandbox sees each entry of it
 * that existed at compile (the other executor sets' directories hidden),
 * bound one by one.  Entries come and go meanwhile, as in any busy
 * temporary directory: one deleted while its bind is made (after the
 * child opened it, before the tree is copied) must leave that entry out,
 * never fail the run, and neither may one deleted while its Landlock rule
 * is added.  A thread keeps 64 files alive in the scratch root, each
 * deleted soon after it was made, during 40 runs. */
typedef struct
{
  const char *dir;
  gint        stop;      /* atomic */
  guint       made;
} Churn;

static gpointer
churn_thread (gpointer data)
{
  Churn *c = data;

  for (guint i = 0; !g_atomic_int_get (&c->stop); i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/churn-%u", c->dir, i % 4096);
      g_autofree char *old = g_strdup_printf ("%s/churn-%u", c->dir, (i + 4096 - 64) % 4096);

      g_assert_true (g_file_set_contents (path, "x", 1, NULL));
      c->made++;
      (void) g_unlink (old);
    }
  for (guint i = 0; i < 4096; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/churn-%u", c->dir, i);

      (void) g_unlink (path);
    }
  return NULL;
}

static void
check_scratch_churn (const char *backend)
{
  EtuTree tree = { 0 };
  EtuTree in_ws;
  Churn churn = { 0 };
  GThread *thread;
  /* The workspace's own file, read through its rule (rung 2 grants the
   * entries of the scratch root, not a listing of it). */
  const char *args[] = { "--", "cat", "keep", NULL };
  guint failed = 0;

  if (!have_userns ())
    return;
  etu_tree_init (&tree);
  g_free (etu_write_file (tree.ws, "keep", "ran\n"));
  /* TMPDIR (the scratch root) is the workspace itself. */
  in_ws = tree;
  in_ws.scratch = tree.ws;
  churn.dir = tree.ws;
  thread = g_thread_new ("churn", churn_thread, &churn);
  for (guint i = 0; i < 40; i++)
    {
      Outcome o = sbx_run (&in_ws, backend, args);

      if (o.status != 0 || g_strcmp0 (o.out, "ran\n") != 0)
        {
          g_test_message ("run %u: status %d, stderr %s", i, o.status, o.err);
          failed++;
        }
      outcome_clear (&o);
    }
  g_atomic_int_set (&churn.stop, 1);
  g_thread_join (thread);
  g_test_message ("%u files made and deleted during the runs", churn.made);
  g_assert_cmpuint (churn.made, >, 40);
  g_assert_cmpuint (failed, ==, 0);
  etu_tree_clear (&tree);
}

static void
test_cli_scratch_churn_rung1 (void)
{
  check_scratch_churn ("linux-userns");
}

static void
test_cli_scratch_churn_rung2 (void)
{
  check_scratch_churn ("linux-landlock");
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
  g_test_add_func ("/linux/e2e/cli/scratch-churn/rung1", test_cli_scratch_churn_rung1);
  g_test_add_func ("/linux/e2e/cli/scratch-churn/rung2", test_cli_scratch_churn_rung2);
  g_test_add_func ("/linux/e2e/cli/planted-symlink/rung1", test_cli_planted_symlink_rung1);
  g_test_add_func ("/linux/e2e/cli/planted-symlink/rung2", test_cli_planted_symlink_rung2);
  g_test_add_func ("/linux/e2e/cli/proc-masked/rung1", test_cli_proc_masked_rung1);
  g_test_add_func ("/linux/e2e/cli/proc-masked/rung1-host-read", test_cli_proc_masked_rung1_host_read);
  g_test_add_func ("/linux/e2e/cli/proc-masked/rung2", test_cli_proc_masked_rung2);
  g_test_add_func ("/linux/e2e/cli/proc-masked/rung2-host-read", test_cli_proc_masked_rung2_host_read);
  g_test_add_func ("/linux/e2e/cli/concurrent-runs/b-first/rung1", test_cli_concurrent_b_first_rung1);
  g_test_add_func ("/linux/e2e/cli/concurrent-runs/a-first/rung1", test_cli_concurrent_a_first_rung1);
  g_test_add_func ("/linux/e2e/cli/concurrent-runs/b-first/rung2", test_cli_concurrent_b_first_rung2);
  g_test_add_func ("/linux/e2e/cli/concurrent-runs/a-first/rung2", test_cli_concurrent_a_first_rung2);
  return g_test_run ();
}
