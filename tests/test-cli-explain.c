/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `sbx profile explain` and the other-OS backends in `sbx doctor`, run as a
 * program (SBX_TEST_SBX) against the real plugins of this build
 * (SBX_TEST_PLUGIN_DIRS).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/wait.h>

typedef struct
{
  int   status;
  char *out;
  char *err;
} Run;

static void
run_clear (Run *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

/* Runs sbx with @args in @cwd (NULL: the test's), SBX_PLUGIN_PATH set to the
 * build's plugins, and SBX_BACKEND to @backend (or unset). */
static void
run_sbx (const char *const *args,
         const char        *cwd,
         const char        *backend,
         Run               *run)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_auto(GStrv) envp = g_get_environ ();
  g_autoptr(GError) error = NULL;
  const char *sbx = g_getenv ("SBX_TEST_SBX");
  int wait_status;

  g_assert_nonnull (sbx);
  g_ptr_array_add (argv, (gpointer) sbx);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  envp = g_environ_setenv (envp, "SBX_PLUGIN_PATH", g_getenv ("SBX_TEST_PLUGIN_DIRS"), TRUE);
  envp = backend != NULL ? g_environ_setenv (envp, "SBX_BACKEND", backend, TRUE)
                         : g_environ_unsetenv (envp, "SBX_BACKEND");
  g_assert_true (g_spawn_sync (cwd, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL,
                               &run->out, &run->err, &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  run->status = WEXITSTATUS (wait_status);
}

static gboolean
have_backend (const char *name)
{
  const char *dirs = g_getenv ("SBX_TEST_PLUGIN_DIRS");

  return dirs != NULL && strstr (dirs, name) != NULL;
}

/* The SBPL of the default profile: the fixed preamble, the workspace as a
 * subpath, no broad allow, and the report after it. */
static void
test_explain_darwin_default (void)
{
  g_autofree char *ws = g_dir_make_tmp ("sbx-ws-explain-XXXXXX", NULL);
  g_autofree char *expected = NULL;
  g_auto(Run) run = { 0 };
  const char *args[] = { "profile", "explain", "--backend", "darwin-seatbelt", "--default", NULL };

  if (!have_backend ("darwin"))
    {
      g_test_skip ("the darwin plugin is not built (backend-darwin=disabled)");
      return;
    }
  g_assert_nonnull (ws);
  run_sbx (args, ws, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (g_str_has_prefix (run.out, "; backend: darwin-seatbelt\n(version 1)\n(deny default)\n"));
  /* The workspace is writable, under its own spelling (and its /private
   * alias when it lies in /tmp or /var). */
  expected = g_strdup_printf (" (subpath \"%s\"))\n", ws);
  {
    g_auto(GStrv) lines = g_strsplit (run.out, "\n", -1);
    gboolean found = FALSE;

    for (guint i = 0; lines[i] != NULL && !found; i++)
      {
        g_autofree char *line = g_strconcat (lines[i], "\n", NULL);

        found = g_str_has_prefix (line, "(allow file-write* ") && g_str_has_suffix (line, expected);
      }
    g_assert_true (found);
  }
  g_assert_null (strstr (run.out, "(allow file-read*)"));
  g_assert_null (strstr (run.out, "(allow file-read* (subpath \"/\"))"));
  g_assert_null (strstr (run.out, "(allow process-exec* (subpath \"/\"))"));
  g_assert_null (strstr (run.out, "(allow mach-lookup)"));
  g_assert_nonnull (strstr (run.out, "; --- report ---\n"));
  g_assert_nonnull (strstr (run.out, "runtime-closure"));
  /* Explain leaves none of its stand-in directories behind. */
  g_assert_cmpint (g_rmdir (ws), ==, 0);
}

/* A workspace whose name holds a quote, a backslash and a newline travels
 * as a parameter: no raw byte of it reaches the profile text. */
static void
test_explain_darwin_hostile_workspace (void)
{
  g_autofree char *parent = g_dir_make_tmp ("sbx-ws-explain-XXXXXX", NULL);
  g_autofree char *ws = g_build_filename (parent, "we\"ird\\\nname", NULL);
  g_auto(Run) run = { 0 };
  const char *args[] = { "profile", "explain", "--backend", "darwin-seatbelt", "--default", NULL };
  const char *text;

  if (!have_backend ("darwin"))
    {
      g_test_skip ("the darwin plugin is not built (backend-darwin=disabled)");
      return;
    }
  g_assert_cmpint (g_mkdir (ws, 0700), ==, 0);
  run_sbx (args, ws, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "(subpath (param \"SBX_P"));
  g_assert_nonnull (strstr (run.out, "we\\\"ird\\\\\\nname\"\n"));
  /* Every line of the profile part is balanced: the name never split a form. */
  text = strstr (run.out, "(version 1)");
  g_assert_nonnull (text);
  {
    g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

    for (guint i = 0; lines[i] != NULL; i++)
      {
        int depth = 0;
        gboolean in_string = FALSE;

        if (lines[i][0] == ';' || lines[i][0] == '\0' || g_str_has_prefix (lines[i], "(allow mach-lookup")
            || g_str_has_prefix (lines[i], "  (global-name"))
          continue;
        for (const char *p = lines[i]; *p != '\0'; p++)
          {
            if (in_string && *p == '\\')
              p++;
            else if (*p == '"')
              in_string = !in_string;
            else if (!in_string && *p == '(')
              depth++;
            else if (!in_string && *p == ')')
              depth--;
          }
        if (depth != 0 || in_string)
          g_error ("unbalanced profile line: %s", lines[i]);
      }
  }
  g_assert_cmpint (g_rmdir (ws), ==, 0);
  g_assert_cmpint (g_rmdir (parent), ==, 0);
}

static void
test_explain_win32 (void)
{
  g_auto(Run) run = { 0 };
  const char *args[] = { "profile", "explain", "--backend", "win32-restricted", "--default", NULL };

  if (!have_backend ("win32"))
    {
      g_test_skip ("the win32 plugin is not built (backend-win32=disabled)");
      return;
    }
  run_sbx (args, NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "; backend: win32-restricted\n"));
  g_assert_nonnull (strstr (run.out, "CreateRestrictedToken"));
  g_assert_nonnull (strstr (run.out, "KILL_ON_JOB_CLOSE"));
  g_assert_nonnull (strstr (run.out, "PROC_THREAD_ATTRIBUTE_HANDLE_LIST"));
  /* The default profile is Sandboxed: the backend says it would refuse. */
  g_assert_nonnull (strstr (run.out, "compile: refused"));
  g_assert_nonnull (strstr (run.out, "unenforced filesystem"));
}

static void
test_explain_linux (void)
{
  g_autofree char *ws = g_dir_make_tmp ("sbx-ws-explain-XXXXXX", NULL);
  g_autofree char *expected = NULL;
  g_auto(Run) run = { 0 };
  const char *args[] = { "profile", "explain", "--backend", "linux-landlock", "--default", NULL };

  if (!have_backend ("linux"))
    {
      g_test_skip ("the Linux plugin is not built");
      return;
    }
  run_sbx (args, ws, NULL, &run);
  if (run.status != 0 && strstr (run.err, "Landlock") != NULL)
    {
      /* Say why, and make sure the failure names the missing mechanism. */
      g_test_skip ("this kernel has no Landlock for rung 2");
      g_rmdir (ws);
      return;
    }
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "# landlock: ABI "));
  expected = g_strdup_printf ("landlock-rule %s: ", ws);
  g_assert_nonnull (strstr (run.out, expected));
  g_assert_nonnull (strstr (run.out, "# seccomp: one filter per architecture: "));
  g_assert_nonnull (strstr (run.out, "landlock-rule /dev/null: "));
  g_assert_cmpint (g_rmdir (ws), ==, 0);
}

/* A workspace with a newline and a quote in its name: the Linux
 * explanation stays UTF-8 and line-structured (the name is escaped). */
static void
test_explain_linux_hostile_workspace (void)
{
  g_autofree char *parent = g_dir_make_tmp ("sbx-ws-explain-XXXXXX", NULL);
  g_autofree char *ws = g_build_filename (parent, "new\nline-\"q", NULL);
  g_autofree char *escaped = NULL;
  g_autofree char *expected = NULL;
  g_auto(Run) run = { 0 };
  const char *args[] = { "profile", "explain", "--backend", "linux-landlock", "--default", NULL };

  if (!have_backend ("linux"))
    {
      g_test_skip ("the Linux plugin is not built");
      return;
    }
  g_assert_cmpint (g_mkdir (ws, 0700), ==, 0);
  run_sbx (args, ws, NULL, &run);
  if (run.status != 0 && strstr (run.err, "Landlock") != NULL)
    g_test_skip ("this kernel has no Landlock for rung 2");
  else
    {
      g_assert_cmpint (run.status, ==, 0);
      g_assert_true (g_utf8_validate (run.out, -1, NULL));
      escaped = g_strescape (ws, NULL);
      expected = g_strdup_printf ("landlock-rule \"%s\": ", escaped);
      g_assert_nonnull (strstr (run.out, expected));
      g_assert_null (strstr (run.out, "new\nline"));
    }
  g_assert_cmpint (g_rmdir (ws), ==, 0);
  g_assert_cmpint (g_rmdir (parent), ==, 0);
}

static void
test_explain_failures (void)
{
  g_auto(Run) missing = { 0 };
  g_auto(Run) unconfined = { 0 };
  const char *args_missing[] = { "profile", "explain", "--backend", "no-such-backend", "--default", NULL };
  const char *args_unconfined[] = { "profile", "explain", "--backend", "unconfined", "--default", NULL };
  const char *args_usage[] = { "profile", "explain", NULL };
  g_auto(Run) usage = { 0 };

  run_sbx (args_missing, NULL, NULL, &missing);
  g_assert_cmpint (missing.status, ==, 1);
  g_assert_nonnull (strstr (missing.err, "no-such-backend"));
  g_assert_cmpstr (missing.out, ==, "");

  /* A backend without an explain entry says so (the optional entry). */
  run_sbx (args_unconfined, NULL, NULL, &unconfined);
  g_assert_cmpint (unconfined.status, ==, 1);
  g_assert_nonnull (strstr (unconfined.err, "cannot explain"));

  run_sbx (args_usage, NULL, NULL, &usage);
  g_assert_cmpint (usage.status, ==, 2);
}

/* sbx doctor lists darwin-seatbelt and win32-restricted as unavailable on
 * this host with the reason; the Linux backends beside them probe fine
 * (positive control), and forcing an unavailable one fails with no
 * fallback. */
static void
test_doctor_other_os_backends (void)
{
  g_auto(Run) text = { 0 };
  g_auto(Run) json = { 0 };
  g_auto(Run) forced = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  const char *args_text[] = { "doctor", NULL };
  const char *args_json[] = { "doctor", "--json", NULL };
  const char *names[] = { "darwin-seatbelt", "win32-restricted" };

  if (!have_backend ("darwin") || !have_backend ("win32"))
    {
      g_test_skip ("the darwin or win32 plugin is not built");
      return;
    }
  run_sbx (args_text, NULL, NULL, &text);
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *line = g_strdup_printf ("  %s (plugin ", names[i]);
      const char *at = strstr (text.out, line);

      g_assert_nonnull (at);
      at = strchr (at, '\n');
      g_assert_nonnull (at);
      /* The probe refuses with the reason (SBX_STATUS_UNAVAILABLE). */
      g_assert_true (g_str_has_prefix (at + 1, "    probe FAILED: "));
      g_assert_nonnull (strstr (at, "not applicable on this host"));
    }
  if (have_backend ("linux"))
    g_assert_nonnull (strstr (text.out, "  linux-landlock (plugin linux, priority 90)\n    level:"));


  run_sbx (args_json, NULL, NULL, &json);
  g_assert_true (json_parser_load_from_data (parser, json.out, -1, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (json.out, "darwin-seatbelt: not applicable on this host"));
  g_assert_nonnull (strstr (json.out, "win32-restricted: not applicable on this host"));

  /* Forcing one of them fails: no fallback to the backends that work. */
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *rejected = g_strdup_printf ("    %s: plugin '", names[i]);

      run_clear (&forced);
      run_sbx (args_text, NULL, names[i], &forced);
      g_assert_cmpint (forced.status, ==, 1);
      g_assert_nonnull (strstr (forced.out, "NO BACKEND can run it on this host"));
      /* ... and the rejection names the reason. */
      g_assert_nonnull (strstr (forced.out, rejected));
      g_assert_nonnull (strstr (strstr (forced.out, rejected), "not applicable on this host"));
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/cli/explain/darwin-seatbelt/default", test_explain_darwin_default);
  g_test_add_func ("/cli/explain/darwin-seatbelt/hostile-workspace", test_explain_darwin_hostile_workspace);
  g_test_add_func ("/cli/explain/win32-restricted/default", test_explain_win32);
  g_test_add_func ("/cli/explain/linux-landlock/default", test_explain_linux);
  g_test_add_func ("/cli/explain/linux-landlock/hostile-workspace", test_explain_linux_hostile_workspace);
  g_test_add_func ("/cli/explain/failures", test_explain_failures);
  g_test_add_func ("/cli/doctor/other-os-backends-unavailable", test_doctor_other_os_backends);
  return g_test_run ();
}
