/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filesystem grants on the real Linux backend, on both rungs, through the
 * library and the plugin as built.  For each class: the probe fails without
 * the grant (and the same probe succeeds outside the sandbox), succeeds with
 * it, and a second spawn with the same token is refused with REPLAY.  An
 * exact grant never opens the file's siblings; a tree grant opens the tree
 * and nothing above it; a file swapped between issue and spawn is refused
 * with TARGET_CHANGED.
 *
 * Write classes are checked against a read grant of the same target: a
 * mount view cannot show a file write-only, so at rung 1 a write grant on
 * an unreadable target narrows to nothing (never wider); the control run
 * holds the read grant alone and must fail to write.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "sbx-executor-private.h"
#include "executor-test-util.h"
#include "profile-test-util.h"

static const char *const rungs[] = { "linux-userns", "linux-landlock" };

typedef struct
{
  EtuTree         tree;
  const char     *backend;
  char           *root;       /* configured root, read and write Gated */
  char           *wroot;      /* configured root, read Allow, write Gated */
  char           *host_dir;   /* outside every root, not under /tmp */
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

static SbxRegistry *
linux_registry (void)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), NULL };
  g_autoptr(GError) error = NULL;
  SbxRegistry *registry = sbx_registry_new_for_directories (dirs, &error);

  g_assert_no_error (error);
  return registry;
}

static gboolean
fx_init (Fx         *fx,
         const char *backend)
{
  g_autoptr(SbxRegistry) registry = linux_registry ();
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *sub = NULL;

  memset (fx, 0, sizeof *fx);
  etu_tree_init (&fx->tree);
  fx->backend = backend;
  fx->root = g_build_filename (fx->tree.tmp, "root", NULL);
  fx->wroot = g_build_filename (fx->tree.tmp, "wroot", NULL);
  sub = g_build_filename (fx->root, "sub", NULL);
  g_assert_cmpint (g_mkdir_with_parents (sub, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (fx->wroot, 0700), ==, 0);
  fx->host_dir = g_strdup ("/var/tmp/sbx-test-grant-XXXXXX");
  g_assert_nonnull (g_mkdtemp (fx->host_dir));
#define PUT(dir, name, text)                                              \
  G_STMT_START {                                                          \
    g_autofree char *p_ = g_build_filename (dir, name, NULL);             \
    g_assert_true (g_file_set_contents (p_, text, -1, NULL));             \
  } G_STMT_END
  PUT (fx->root, "secret", "S1-SECRET\n");
  PUT (fx->root, "sibling", "S2-SIBLING\n");
  PUT (sub, "deep", "S3-DEEP\n");
  PUT (fx->tree.tmp, "above", "S4-ABOVE\n");
  PUT (fx->wroot, "target", "W0\n");
  PUT (fx->host_dir, "host-file", "H1-HOST\n");
#undef PUT

  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_GATED, SBX_ACCESS_GATED);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_add_root (config, fx->root, SBX_ACCESS_GATED, SBX_ACCESS_GATED);
  sbx_profile_config_add_root (config, fx->wroot, SBX_ACCESS_ALLOW, SBX_ACCESS_GATED);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (fx->tree.scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, backend);
  fx->set = sbx_executor_set_new (profile, options, &error);
  if (fx->set == NULL)
    {
      g_test_skip_printf ("%s is unavailable here: %s", backend, error->message);
      return FALSE;
    }
  fx->executor = sbx_executor_set_for_key (fx->set, "k", &error);
  g_assert_no_error (error);
  return TRUE;
}

static void
fx_clear (Fx *fx)
{
  if (fx->set != NULL)
    g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  if (fx->host_dir != NULL)
    ptu_rm_rf (fx->host_dir);
  g_free (fx->host_dir);
  g_free (fx->root);
  g_free (fx->wroot);
  etu_tree_clear (&fx->tree);
}

typedef struct
{
  const char *grant_class;
  const char *target;
} GrantSpec;

/* Runs `sh -c SCRIPT` with fresh tokens for @grants (NULL-terminated by a
 * NULL class; none: a plain run).  Returns the output; *out_tokens gets the
 * tokens for a replay. */
static char *
run_script (Fx              *fx,
            const char      *script,
            const GrantSpec *grants,
            GStrv           *out_tokens,
            int             *out_status)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autofree char *command = sbx_grant_command_for_argv (argv);
  g_autoptr(GPtrArray) tokens = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GBytes *bytes;
  gsize len;
  const char *data;

  for (guint i = 0; grants != NULL && grants[i].grant_class != NULL; i++)
    {
      char *token = sbx_executor_issue_grant (fx->executor, "exec", command, fx->tree.ws,
                                              grants[i].grant_class, grants[i].target, NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (tokens, token);
    }
  g_ptr_array_add (tokens, NULL);
  if (grants == NULL)
    result = sbx_executor_run (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
  else
    result = etu_run_with_grants (fx->executor, fx->tree.ws, argv, "exec", (const char *const *) tokens->pdata, NULL, NULL, &error);
  g_assert_no_error (error);
  *out_status = sbx_run_result_get_exit_code (result);
  if (out_tokens != NULL)
    *out_tokens = (GStrv) g_ptr_array_steal (tokens, NULL);
  bytes = sbx_run_result_get_output (result);
  data = g_bytes_get_data (bytes, &len);
  return g_strndup (data, len);
}

static void
assert_replay (Fx         *fx,
               const char *script,
               GStrv       tokens)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;

  result = etu_run_with_grants (fx->executor, fx->tree.ws, argv, "exec", (const char *const *) tokens, NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
}

/* Positive control outside the sandbox. */
static void
assert_readable_here (const char *path,
                      const char *text)
{
  g_autofree char *contents = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, text);
}

static void
test_path_read (gconstpointer data)
{
  Fx fx;
  g_autofree char *secret = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) tokens = NULL;
  int status = 0;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  secret = g_build_filename (fx.root, "secret", NULL);
  assert_readable_here (secret, "S1-SECRET\n");
  script = g_strdup_printf ("cat '%s'; cat '%s/sibling'; ls '%s'; echo END", secret, fx.root,
                            fx.root);
  out = run_script (&fx, script, NULL, NULL, &status);
  g_assert_null (strstr (out, "S1-SECRET"));
  g_assert_nonnull (strstr (out, "END"));
  g_clear_pointer (&out, g_free);
  {
    const GrantSpec grants[] = { { SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, secret }, { NULL, NULL } };

    out = run_script (&fx, script, grants, &tokens, &status);
  }
  g_test_message ("%s: %s", fx.backend, out);
  g_assert_nonnull (strstr (out, "S1-SECRET"));
  /* Exact: never the siblings, never the directory listing. */
  g_assert_null (strstr (out, "S2-SIBLING"));
  g_assert_null (strstr (out, "sibling\n"));
  assert_replay (&fx, script, tokens);
  fx_clear (&fx);
}

static void
test_path_write (gconstpointer data)
{
  Fx fx;
  g_autofree char *target = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *contents = NULL;
  g_auto(GStrv) tokens = NULL;
  int status = 0;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  target = g_build_filename (fx.wroot, "target", NULL);
  script = g_strdup_printf ("echo W1 >> '%s' && echo WROTE; echo X > '%s/new' && echo CREATED; "
                            "echo END", target, fx.wroot);
  out = run_script (&fx, script, NULL, NULL, &status);
  g_assert_null (strstr (out, "WROTE"));
  g_assert_nonnull (strstr (out, "END"));
  g_clear_pointer (&out, g_free);
  {
    const GrantSpec grants[] = { { SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE, target }, { NULL, NULL } };

    out = run_script (&fx, script, grants, &tokens, &status);
  }
  g_test_message ("%s: %s", fx.backend, out);
  g_assert_nonnull (strstr (out, "WROTE"));
  /* Exact: the directory stays read-only. */
  g_assert_null (strstr (out, "CREATED"));
  g_assert_true (g_file_get_contents (target, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "W0\nW1\n");
  assert_replay (&fx, script, tokens);
  fx_clear (&fx);
}

static void
test_tree_read (gconstpointer data)
{
  Fx fx;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) tokens = NULL;
  int status = 0;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  {
    g_autofree char *above = g_build_filename (fx.tree.tmp, "above", NULL);

    assert_readable_here (above, "S4-ABOVE\n");
  }
  script = g_strdup_printf ("cat '%s/sub/deep'; cat '%s/secret'; cat '%s/above'; echo END", fx.root,
                            fx.root, fx.tree.tmp);
  out = run_script (&fx, script, NULL, NULL, &status);
  g_assert_null (strstr (out, "S3-DEEP"));
  g_assert_nonnull (strstr (out, "END"));
  g_clear_pointer (&out, g_free);
  {
    const GrantSpec grants[] = { { SBX_GRANT_CLASS_FILESYSTEM_TREE_READ, fx.root }, { NULL, NULL } };

    out = run_script (&fx, script, grants, &tokens, &status);
  }
  g_test_message ("%s: %s", fx.backend, out);
  g_assert_nonnull (strstr (out, "S3-DEEP"));
  g_assert_nonnull (strstr (out, "S1-SECRET"));
  /* Nothing above the tree. */
  g_assert_null (strstr (out, "S4-ABOVE"));
  assert_replay (&fx, script, tokens);
  fx_clear (&fx);
}

static void
test_tree_write (gconstpointer data)
{
  Fx fx;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *created = NULL;
  g_auto(GStrv) tokens = NULL;
  int status = 0;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  created = g_build_filename (fx.wroot, "new", NULL);
  script = g_strdup_printf ("echo N > '%s' && echo CREATED; echo A > '%s/above-new' && echo ABOVE; "
                            "echo END", created, fx.tree.tmp);
  out = run_script (&fx, script, NULL, NULL, &status);
  g_assert_null (strstr (out, "CREATED"));
  g_assert_false (g_file_test (created, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  {
    const GrantSpec grants[] = { { SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, fx.wroot }, { NULL, NULL } };

    out = run_script (&fx, script, grants, &tokens, &status);
  }
  g_test_message ("%s: %s", fx.backend, out);
  g_assert_nonnull (strstr (out, "CREATED"));
  g_assert_true (g_file_test (created, G_FILE_TEST_EXISTS));
  g_assert_null (strstr (out, "ABOVE"));
  assert_replay (&fx, script, tokens);
  fx_clear (&fx);
}

static void
test_host_read (gconstpointer data)
{
  Fx fx;
  g_autofree char *file = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) tokens = NULL;
  int status = 0;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  file = g_build_filename (fx.host_dir, "host-file", NULL);
  assert_readable_here (file, "H1-HOST\n");
  script = g_strdup_printf ("cat '%s'; echo END", file);
  out = run_script (&fx, script, NULL, NULL, &status);
  g_assert_null (strstr (out, "H1-HOST"));
  g_clear_pointer (&out, g_free);
  {
    const GrantSpec grants[] = { { SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*" }, { NULL, NULL } };

    out = run_script (&fx, script, grants, &tokens, &status);
  }
  g_test_message ("%s: %s", fx.backend, out);
  g_assert_nonnull (strstr (out, "H1-HOST"));
  assert_replay (&fx, script, tokens);
  fx_clear (&fx);
}

static void
test_host_write (gconstpointer data)
{
  Fx fx;
  g_autofree char *file = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *contents = NULL;
  g_auto(GStrv) tokens = NULL;
  int status = 0;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  file = g_build_filename (fx.host_dir, "host-file", NULL);
  script = g_strdup_printf ("echo H2 >> '%s' && echo WROTE; echo END", file);
  /* Control: host read alone does not write. */
  {
    const GrantSpec grants[] = { { SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*" }, { NULL, NULL } };

    out = run_script (&fx, script, grants, NULL, &status);
  }
  g_assert_null (strstr (out, "WROTE"));
  g_clear_pointer (&out, g_free);
  {
    const GrantSpec grants[] = {
      { SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*" },
      { SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE, "host:*" },
      { NULL, NULL }
    };

    out = run_script (&fx, script, grants, &tokens, &status);
  }
  g_test_message ("%s: %s", fx.backend, out);
  g_assert_nonnull (strstr (out, "WROTE"));
  g_assert_true (g_file_get_contents (file, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "H1-HOST\nH2\n");
  assert_replay (&fx, script, tokens);
  fx_clear (&fx);
}

/* A file renamed over the granted one between issue and spawn. */
static void
test_swap_refused (gconstpointer data)
{
  Fx fx;
  g_autofree char *secret = NULL;
  g_autofree char *sibling = NULL;
  g_autofree char *script = NULL;
  g_autofree char *command = NULL;
  g_autofree char *token = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *grants[2] = { NULL, NULL };

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  secret = g_build_filename (fx.root, "secret", NULL);
  sibling = g_build_filename (fx.root, "sibling", NULL);
  script = g_strdup_printf ("cat '%s'", secret);
  {
    const char *argv[] = { "/bin/sh", "-c", script, NULL };

    command = sbx_grant_command_for_argv (argv);
    token = sbx_executor_issue_grant (fx.executor, "exec", command, fx.tree.ws,
                                      SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, secret, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (g_rename (sibling, secret), ==, 0);
    grants[0] = token;
    result = etu_run_with_grants (fx.executor, fx.tree.ws, argv, "exec", grants, NULL, NULL, &error);
  }
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_TARGET_CHANGED);
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  static const struct { const char *name; GTestDataFunc fn; } cases[] = {
    { "path-read", test_path_read },
    { "path-write", test_path_write },
    { "tree-read", test_tree_read },
    { "tree-write", test_tree_write },
    { "host-read", test_host_read },
    { "host-write", test_host_write },
    { "swap-refused", test_swap_refused },
  };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  for (guint r = 0; r < G_N_ELEMENTS (rungs); r++)
    for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
      {
        g_autofree char *path = g_strdup_printf ("/linux/grants/%s/%s", rungs[r], cases[c].name);

        g_test_add_data_func (path, rungs[r], cases[c].fn);
      }
  return g_test_run ();
}
