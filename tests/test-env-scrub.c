/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Environment scrubbing: the unit (sbx_env_scrub)
 * and, in a subprocess with planted secrets, what a child really sees.
 */
#include <sbx/sbx.h>
#include <string.h>

#include "sbx-env-private.h"
#include "executor-test-util.h"

static gboolean
strv_has (char       **env,
          const char  *entry)
{
  return g_strv_contains ((const char *const *) env, entry);
}

static gboolean
strv_has_name (char       **env,
               const char  *name)
{
  gsize len = strlen (name);

  for (guint i = 0; env[i] != NULL; i++)
    if (strncmp (env[i], name, len) == 0 && env[i][len] == '=')
      return TRUE;
  return FALSE;
}

static const char *const planted[] = {
  "PATH=/usr/bin:/bin",
  "GITHUB_TOKEN=ghp_must_not_leak",
  "HOME=/home/parent",
  "ANTHROPIC_API_KEY=sk-ant-must-not-leak",
  "AWS_ACCESS_KEY_ID=AKIA_MUST_NOT_LEAK",
  "AWS_SECRET_ACCESS_KEY=must-not-leak",
  "AWS_SESSION_TOKEN=must-not-leak",
  "SSH_AUTH_SOCK=/run/user/1000/ssh-agent.sock",
  "TERM=xterm-256color",
  "LANG=C.UTF-8",
  "LC_ALL=C",
  "LC_CTYPE=C.UTF-8",
  "LCX=not-a-locale",
  "USER=me",
  "LOGNAME=me",
  "SHELL=/bin/bash",
  "TZ=UTC",
  "NOEQUALS",
  "TMPDIR=/tmp",
  "LD_PRELOAD=/evil.so",
  "PATHX=no",
  NULL,
};

static void
test_scrub_baseline (void)
{
  const char *forced[] = { "HOME=/scratch/home-1", "TMPDIR=/scratch/tmp-1", NULL };
  g_auto(GStrv) env = sbx_env_scrub (planted, sbx_env_baseline_allowlist (), forced);
  static const char *const expected[] = {
    "PATH=/usr/bin:/bin",
    "HOME=/scratch/home-1",     /* replaced in place */
    "TERM=xterm-256color",
    "LANG=C.UTF-8",
    "LC_ALL=C",
    "LC_CTYPE=C.UTF-8",
    "USER=me",
    "LOGNAME=me",
    "SHELL=/bin/bash",
    "TZ=UTC",
    "TMPDIR=/scratch/tmp-1",    /* appended: TMPDIR is not allowlisted */
    NULL,
  };

  g_assert_cmpstrv (env, expected);
  g_assert_false (strv_has_name (env, "GITHUB_TOKEN"));
  g_assert_false (strv_has_name (env, "ANTHROPIC_API_KEY"));
  g_assert_false (strv_has_name (env, "AWS_SECRET_ACCESS_KEY"));
  g_assert_false (strv_has_name (env, "SSH_AUTH_SOCK"));
  g_assert_false (strv_has_name (env, "LD_PRELOAD"));
  g_assert_false (strv_has_name (env, "LCX"));
}

static void
test_scrub_forced_sorted_no_duplicates (void)
{
  const char *parent[] = { "B=1", "HOME=/old", "A=2", NULL };
  const char *allow[] = { "*", NULL };
  const char *forced[] = { "ZED=z", "TMPDIR=/t", "AB=x", "A1=y", "HOME=/new", "ZED=last", NULL };
  static const char *const expected[] = {
    "B=1", "HOME=/new", "A=2",          /* parent order kept, HOME replaced in place */
    "A1=y", "AB=x", "TMPDIR=/t", "ZED=last",   /* new names sorted by name; last value wins */
    NULL,
  };
  g_auto(GStrv) env = sbx_env_scrub (parent, allow, forced);

  g_assert_cmpstrv (env, expected);
}

static void
test_scrub_empty_is_not_inherit (void)
{
  const char *none[] = { NULL };
  g_auto(GStrv) from_empty = sbx_env_scrub (none, sbx_env_baseline_allowlist (), NULL);
  g_auto(GStrv) nothing_allowed = sbx_env_scrub (planted, none, NULL);
  g_auto(GStrv) from_null = sbx_env_scrub (NULL, NULL, NULL);

  g_assert_nonnull (from_empty);
  g_assert_cmpuint (g_strv_length (from_empty), ==, 0);
  g_assert_nonnull (nothing_allowed);
  g_assert_cmpuint (g_strv_length (nothing_allowed), ==, 0);
  g_assert_nonnull (from_null);
  g_assert_cmpuint (g_strv_length (from_null), ==, 0);
}

static void
test_scrub_bad_glob_admits_nothing (void)
{
  const char *bad[] = { "[", "PATH\\", "[z-a]*", "[]", NULL };
  g_auto(GStrv) env = sbx_env_scrub (planted, bad, NULL);

  g_assert_cmpuint (g_strv_length (env), ==, 0);
}

typedef struct
{
  const char *pattern;
  const char *name;
  gboolean    match;
  gboolean    valid;
} NameRow;

static const NameRow name_rows[] = {
  { "PATH", "PATH", TRUE, TRUE },
  { "PATH", "PATHX", FALSE, TRUE },
  { "PATH", "path", FALSE, TRUE },
  { "LC_*", "LC_ALL", TRUE, TRUE },
  { "LC_*", "LC_", TRUE, TRUE },
  { "LC_*", "LCX", FALSE, TRUE },
  { "LC_*", "LC_A/B", FALSE, TRUE },
  { "?", "A", TRUE, TRUE },
  { "?", "AB", FALSE, TRUE },
  { "[AB]X", "BX", TRUE, TRUE },
  { "[^AB]X", "BX", FALSE, TRUE },
  { "[^AB]X", "CX", TRUE, TRUE },
  { "[A-C]", "B", TRUE, TRUE },
  { "\\*", "*", TRUE, TRUE },
  { "\\*", "A", FALSE, TRUE },
  { "[\\]]", "]", TRUE, TRUE },
  { "[", "[", FALSE, FALSE },
  { "A\\", "A", FALSE, FALSE },
  { "[C-A]", "B", FALSE, FALSE },
  { "[]", "]", FALSE, FALSE },
  { "[A-]", "A", FALSE, FALSE },
};

static void
test_name_match_table (void)
{
  for (gsize r = 0; r < G_N_ELEMENTS (name_rows); r++)
    {
      gboolean valid = !name_rows[r].valid;
      gboolean match = sbx_env_name_match (name_rows[r].pattern, name_rows[r].name, &valid);

      if (match != name_rows[r].match || valid != name_rows[r].valid)
        g_error ("pattern %s vs %s: match %d valid %d, expected %d %d", name_rows[r].pattern,
                 name_rows[r].name, match, valid, name_rows[r].match, name_rows[r].valid);
    }
}

/* What a child really sees: run `env` under an executor created while
 * secrets were planted in this process's environment. */
static void
test_child_environment (void)
{
  static const char *const secrets[][2] = {
    { "GITHUB_TOKEN", "ghp_planted_secret" },
    { "ANTHROPIC_API_KEY", "sk-ant-planted" },
    { "AWS_ACCESS_KEY_ID", "AKIAPLANTED" },
    { "AWS_SECRET_ACCESS_KEY", "aws-planted-secret" },
    { "SSH_AUTH_SOCK", "/tmp/planted-agent.sock" },
  };

  if (g_test_subprocess ())
    {
      EtuTree tree = { 0 };
      g_autoptr(SbxRegistry) registry = etu_registry ("unconfined", NULL);
      g_autoptr(SbxProfile) profile = NULL;
      g_autoptr(SbxExecutorSetOptions) options = NULL;
      g_autoptr(SbxExecutorSet) set = NULL;
      g_autoptr(SbxExecutor) executor = NULL;
      g_autoptr(SbxRunResult) result = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *out = NULL;
      g_auto(GStrv) lines = NULL;
      g_autofree char *home = NULL;
      g_autofree char *tmpdir = NULL;
      const char *argv[] = { "env", NULL };
      const char *data;
      gsize len;

      etu_tree_init (&tree);
      for (gsize i = 0; i < G_N_ELEMENTS (secrets); i++)
        g_setenv (secrets[i][0], secrets[i][1], TRUE);
      g_setenv ("PATH", "/usr/bin:/bin", TRUE);
      g_setenv ("LC_MESSAGES", "C", TRUE);
      g_setenv ("TMPDIR", "/tmp/parent-tmp", TRUE);
      g_unsetenv ("TERM");

      profile = etu_profile_unconfined (tree.ws, SBX_ACCESS_ALLOW);
      options = etu_options (tree.scratch, 1, registry);
      set = sbx_executor_set_new (profile, options, &error);
      g_assert_no_error (error);
      executor = sbx_executor_set_for_key (set, "env", &error);
      g_assert_no_error (error);

      /* The environment is a snapshot taken at executor creation. */
      g_setenv ("LATE_SECRET", "planted-after-creation", TRUE);
      g_setenv ("LC_MESSAGES", "changed-later", TRUE);

      result = sbx_executor_run (executor, tree.ws, argv, NULL, NULL, &error);
      g_assert_no_error (error);
      data = g_bytes_get_data (sbx_run_result_get_output (result), &len);
      out = g_strndup (data, len);
      g_assert_cmpuint (len, >, 0);
      lines = g_strsplit (out, "\n", -1);

      for (gsize i = 0; i < G_N_ELEMENTS (secrets); i++)
        {
          /* Positive control: the secret is in this process's environment... */
          g_assert_cmpstr (g_getenv (secrets[i][0]), ==, secrets[i][1]);
          /* ...and not in the child's. */
          g_assert_null (strstr (out, secrets[i][1]));
          g_assert_false (strv_has_name (lines, secrets[i][0]));
        }
      g_assert_null (strstr (out, "planted-after-creation"));
      g_assert_true (strv_has (lines, "PATH=/usr/bin:/bin"));
      g_assert_true (strv_has (lines, "LC_MESSAGES=C"));
      g_assert_false (strv_has_name (lines, "TERM"));
      home = g_strconcat ("HOME=", sbx_executor_get_home (executor), NULL);
      tmpdir = g_strconcat ("TMPDIR=", sbx_executor_get_tmpdir (executor), NULL);
      g_assert_true (strv_has (lines, home));
      g_assert_true (strv_has (lines, tmpdir));
      g_assert_false (strv_has (lines, "TMPDIR=/tmp/parent-tmp"));

      g_assert_true (sbx_executor_set_close (set, NULL, &error));
      etu_tree_clear (&tree);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/env-scrub/baseline", test_scrub_baseline);
  g_test_add_func ("/env-scrub/forced-sorted-no-duplicates", test_scrub_forced_sorted_no_duplicates);
  g_test_add_func ("/env-scrub/empty-is-not-inherit", test_scrub_empty_is_not_inherit);
  g_test_add_func ("/env-scrub/bad-glob-admits-nothing", test_scrub_bad_glob_admits_nothing);
  g_test_add_func ("/env-scrub/name-match", test_name_match_table);
  g_test_add_func ("/env-scrub/child-environment", test_child_environment);

  return g_test_run ();
}
