/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The grant a filesystem denial names opens exactly that access, on the
 * real Linux backend at both rungs, through the library and the plugin as
 * built.  No view supervisor is needed: each case hands the core the
 * record a backend would report (sbx_backend_denial_new(), the sink's own
 * mapping), takes the grant class and target it names, and then, through
 * the executor:
 *
 *  - the access works outside the sandbox (the positive control) and is
 *    refused inside it without a grant (what was denied);
 *  - sbx_executor_issue_grant() accepts exactly that class and target;
 *  - with the grant the access succeeds, while a sibling (another file, a
 *    path outside the granted root, the other axis) is still refused;
 *  - the run reports the grant spent, and the same token again is REPLAY.
 *
 * Cases: read and exec of a host file (filesystem.path.read.v1), write of
 * a file in a gated root (filesystem.path.write.v1), creating a file and
 * listing a directory in a gated root (filesystem.tree.write.v1 /
 * tree.read.v1 of the root), listing a host directory (filesystem.host.
 * read.v1: the only grant that lists a directory outside the roots; it
 * still writes nothing).
 */
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "sbx-backend-denials-private.h"
#include "executor-test-util.h"

typedef struct
{
  EtuTree         tree;
  char           *root;       /* configured root, read and write Gated */
  char           *host_dir;   /* outside every root (host read Gated, write Deny) */
  SbxProfile     *profile;
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

static void
put (const char *dir,
     const char *name,
     const char *text,
     int         mode)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  g_assert_no_errno (chmod (path, mode));
}

static gboolean
fx_init (Fx         *fx,
         const char *backend)
{
  g_autoptr(SbxRegistry) registry = linux_registry ();
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *sub = NULL;

  memset (fx, 0, sizeof *fx);
  etu_tree_init (&fx->tree);
  fx->root = g_build_filename (fx->tree.tmp, "root", NULL);
  sub = g_build_filename (fx->root, "sub", NULL);
  g_assert_no_errno (g_mkdir_with_parents (sub, 0700));
  /* not under /tmp: the host dimension, as a user's files are */
  fx->host_dir = g_strdup ("/var/tmp/sbx-test-fs-denial-XXXXXX");
  g_assert_nonnull (g_mkdtemp (fx->host_dir));
  g_assert_no_errno (chmod (fx->host_dir, 0755));
  put (fx->root, "file", "R-FILE\n", 0644);
  put (fx->root, "sibling", "R-SIBLING\n", 0644);
  put (sub, "deep", "R-DEEP\n", 0644);
  put (fx->tree.tmp, "above", "T-ABOVE\n", 0644);
  put (fx->host_dir, "file", "H-FILE\n", 0644);
  put (fx->host_dir, "sibling", "H-SIBLING\n", 0644);
  put (fx->host_dir, "tool", "#!/bin/sh\necho H-TOOL-RAN\n", 0755);
  put (fx->host_dir, "other-tool", "#!/bin/sh\necho H-OTHER-TOOL-RAN\n", 0755);

  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_add_root (config, fx->root, SBX_ACCESS_GATED, SBX_ACCESS_GATED);
  fx->profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (fx->tree.scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, backend);
  fx->set = sbx_executor_set_new (fx->profile, options, &error);
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
  g_clear_pointer (&fx->profile, sbx_profile_unref);
  if (fx->host_dir != NULL)
    etu_rm_rf (fx->host_dir);
  g_free (fx->host_dir);
  g_free (fx->root);
  etu_tree_clear (&fx->tree);
}

/* One case: @op on @path (under @ROOT@ or @HOST@), the grant expected, a
 * script whose output must hold @present with the grant and must never
 * hold @absent (the sibling), and what it prints without the grant. */
typedef struct
{
  const char *name;
  guint32     op;
  const char *path;
  const char *grant_class;
  const char *grant_target;     /* @ROOT@, @HOST@ or host:* */
  const char *script;
  const char *present;          /* with the grant only */
  const char *absent;           /* never */
  const char *check_file;       /* (nullable) after the granted run, this file ... */
  const char *check_contents;   /* ... holds this */
  const char *never_file;       /* (nullable) never created */
} Case;

static const Case cases[] = {
  { "read-host-file", SBX_ABI_DENIAL_READ, "@HOST@/file", "filesystem.path.read.v1", "@HOST@/file",
    "cat @HOST@/file; cat @HOST@/sibling; echo END", "H-FILE", "H-SIBLING" },
  { "exec-host-file", SBX_ABI_DENIAL_EXEC, "@HOST@/tool", "filesystem.path.read.v1", "@HOST@/tool",
    "@HOST@/tool; @HOST@/other-tool; echo END", "H-TOOL-RAN", "H-OTHER-TOOL-RAN" },
  { "write-root-file", SBX_ABI_DENIAL_WRITE, "@ROOT@/file", "filesystem.path.write.v1", "@ROOT@/file",
    "echo R-WRITTEN > @ROOT@/file && echo WROTE; echo R-SIB-WRITTEN > @ROOT@/sibling && echo SIBWROTE; echo END",
    "WROTE", "SIBWROTE", "@ROOT@/sibling", "R-SIBLING\n" },
  { "create-in-root", SBX_ABI_DENIAL_WRITE, "@ROOT@/sub/new", "filesystem.tree.write.v1", "@ROOT@",
    "echo NEW > @ROOT@/sub/new && echo CREATED; echo X > @TMP@/outside-new && echo OUTCREATED; echo END",
    "CREATED", "OUTCREATED", "@ROOT@/sub/new", "NEW\n", "@TMP@/outside-new" },
  { "list-root-dir", SBX_ABI_DENIAL_LIST, "@ROOT@/sub", "filesystem.tree.read.v1", "@ROOT@",
    "ls @ROOT@/sub; cat @TMP@/above; cat @HOST@/file; echo END", "deep", "H-FILE" },
  { "list-host-dir", SBX_ABI_DENIAL_LIST, "@HOST@", "filesystem.host.read.v1", "host:*",
    "ls @HOST@; echo X > @HOST@/new && echo HOSTWROTE; echo END", "sibling", "HOSTWROTE",
    NULL, NULL, "@HOST@/new" },
};

static char *
expand (const Fx   *fx,
        const char *text)
{
  g_autoptr(GString) s = g_string_new (text);

  g_string_replace (s, "@ROOT@", fx->root, 0);
  g_string_replace (s, "@HOST@", fx->host_dir, 0);
  g_string_replace (s, "@TMP@", fx->tree.tmp, 0);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

typedef struct
{
  const Case *c;
  const char *backend;
} CaseAtRung;

/* The script's run in the sandbox with @token (NULL: none). */
static SbxRunResult *
run (Fx                *fx,
     const char *const *argv,
     const char        *token)
{
  const char *tokens[] = { token, NULL };
  g_autoptr(GError) error = NULL;
  SbxRunResult *result;

  result = etu_run_with_grants (fx->executor, fx->tree.ws, argv, "exec", tokens, NULL, NULL, &error);
  g_assert_no_error (error);
  return result;
}

/* Positive control: outside the sandbox, on copies of the trees (so the
 * writes change nothing the sandboxed runs look at), the script does
 * both what the grant opens and what stays refused. */
static void
assert_works_outside (Fx         *fx,
                      const Case *c)
{
  g_autofree char *copy = g_build_filename (fx->tree.tmp, "control", NULL);
  g_autofree char *copy_root = g_build_filename (copy, "root", NULL);
  g_autofree char *copy_host = g_build_filename (copy, "host", NULL);
  g_autofree char *copy_tmp = g_build_filename (copy, "tmp", NULL);
  g_autofree char *cp = g_strdup_printf ("cp -a %s %s && cp -a %s %s && mkdir %s && cp %s/above %s/",
                                         fx->root, copy_root, fx->host_dir, copy_host, copy_tmp,
                                         fx->tree.tmp, copy_tmp);
  g_autoptr(GString) script = g_string_new (c->script);
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  g_assert_no_errno (g_mkdir (copy, 0700));
  {
    const char *cp_argv[] = { "/bin/sh", "-c", cp, NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) cp_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                                 &error));
  }
  g_assert_no_error (error);
  g_assert_cmpint (status, ==, 0);
  g_string_replace (script, "@ROOT@", copy_root, 0);
  g_string_replace (script, "@HOST@", copy_host, 0);
  g_string_replace (script, "@TMP@", copy_tmp, 0);
  {
    const char *argv[] = { "/bin/sh", "-c", script->str, NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                                 &out, NULL, &status, &error));
  }
  g_assert_no_error (error);
  g_assert_nonnull (strstr (out, c->present));
  g_assert_nonnull (strstr (out, c->absent));
  etu_rm_rf (copy);
}

static char *
output_of (SbxRunResult *result)
{
  gsize len;
  const char *data = g_bytes_get_data (sbx_run_result_get_output (result), &len);

  return g_strndup (data, len);
}

static void
test_case (gconstpointer data)
{
  const CaseAtRung *cr = data;
  const Case *c = cr->c;
  Fx fx;
  g_autofree char *path = NULL;
  g_autofree char *script = NULL;
  g_autofree char *expected_target = NULL;
  g_autofree char *command = NULL;
  g_autofree char *token = NULL;
  g_autofree char *out = NULL;
  g_autofree char *plain_out = NULL;
  g_autoptr(SbxDenial) denial = NULL;
  g_autoptr(SbxRunResult) plain = NULL;
  g_autoptr(SbxRunResult) granted = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "/bin/sh", "-c", NULL, NULL };

  if (!fx_init (&fx, cr->backend))
    {
      fx_clear (&fx);
      return;
    }
  path = expand (&fx, c->path);
  script = expand (&fx, c->script);
  argv[2] = script;
  expected_target = expand (&fx, c->grant_target);

  /* the record the view supervisor would send, mapped by the core */
  {
    SbxBackendDenialV1 record = { sizeof record, c->op, 2, path, "view-supervisor", "sh", NULL };

    denial = sbx_backend_denial_new (&record, fx.profile);
  }
  g_assert_nonnull (denial);
  g_assert_cmpstr (sbx_denial_get_grant_class (denial), ==, c->grant_class);
  g_assert_cmpstr (sbx_denial_get_grant_target (denial), ==, expected_target);

  assert_works_outside (&fx, c);

  /* without the grant: refused (what the backend reported) */
  {
    plain = run (&fx, argv, NULL);
    plain_out = output_of (plain);
    g_assert_nonnull (strstr (plain_out, "END"));
    g_assert_null (strstr (plain_out, c->present));
    g_assert_null (strstr (plain_out, c->absent));
  }

  /* the grant the denial names, issued as it says: opens exactly that */
  command = sbx_grant_command_for_argv (argv);
  token = sbx_executor_issue_grant (fx.executor, "exec", command, fx.tree.ws, sbx_denial_get_grant_class (denial),
                                    sbx_denial_get_grant_target (denial), NULL, &error);
  g_assert_no_error (error);
  granted = run (&fx, argv, token);
  out = output_of (granted);
  g_test_message ("%s: %s", c->name, out);
  g_assert_nonnull (strstr (out, "END"));
  g_assert_nonnull (strstr (out, c->present));
  g_assert_null (strstr (out, c->absent));
  if (c->check_file != NULL)
    {
      g_autofree char *file = expand (&fx, c->check_file);
      g_autofree char *contents = NULL;

      g_assert_true (g_file_get_contents (file, &contents, NULL, NULL));
      g_assert_cmpstr (contents, ==, c->check_contents);
    }
  if (c->never_file != NULL)
    {
      g_autofree char *file = expand (&fx, c->never_file);

      g_assert_false (g_file_test (file, G_FILE_TEST_EXISTS));
    }
  /* spent: reported, and the token again is refused */
  g_assert_cmpuint (g_strv_length ((GStrv) sbx_run_result_get_grants_spent (granted)), ==, 1);
  g_assert_true (g_str_has_prefix (sbx_run_result_get_grants_spent (granted)[0], c->grant_class));
  {
    const char *tokens[] = { token, NULL };
    g_autoptr(SbxRunResult) again = etu_run_with_grants (fx.executor, fx.tree.ws, argv, "exec", tokens,
                                                         NULL, NULL, &error);

    g_assert_null (again);
    g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
    g_clear_error (&error);
  }
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  static CaseAtRung at_rung[G_N_ELEMENTS (cases)][2];

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (guint r = 0; r < 2; r++)
      {
        g_autofree char *path = g_strdup_printf ("/fs-denial-grants/%s/rung%u", cases[i].name, r + 1);

        at_rung[i][r].c = &cases[i];
        at_rung[i][r].backend = r == 0 ? "linux-userns" : "linux-landlock";
        g_test_add_data_func (path, &at_rung[i][r], test_case);
      }
  return g_test_run ();
}
