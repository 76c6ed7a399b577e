/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sbx/sbx.h>
#include <string.h>
#include <unistd.h>

#include "executor-test-util.h"

/* ------------------------------------------------------------------------- */
/* A temporary tree every test builds from:
 *   tmp/ws  tmp/ws/sub  tmp/ws/sub/deep  tmp/ws2  tmp/other  tmp/root
 *   tmp/file (a regular file)  tmp/link-ws -> ws  tmp/link-other -> other
 *   tmp/other/sub  planted links, as a sandboxed run could leave them:
 *   tmp/ws/planted -> ../other  tmp/ws/chain -> ../link-other
 *   tmp/ws2/planted -> <absolute tmp/other> */

typedef struct
{
  char *tmp;
} Tree;

static void
tree_setup (Tree *tree)
{
  tree->tmp = etu_make_tmpdir ("sbx-test-profile-XXXXXX");
  g_free (etu_mkdir (tree->tmp, "ws/sub/deep"));
  g_free (etu_mkdir (tree->tmp, "ws2"));
  g_free (etu_mkdir (tree->tmp, "other"));
  g_free (etu_mkdir (tree->tmp, "root"));
  g_free (etu_write_file (tree->tmp, "file", "x"));
  g_free (etu_symlink (tree->tmp, "link-ws", "ws"));
  g_free (etu_symlink (tree->tmp, "link-other", "other"));
  g_free (etu_mkdir (tree->tmp, "other/sub"));
  g_free (etu_symlink (tree->tmp, "ws/planted", "../other"));
  g_free (etu_symlink (tree->tmp, "ws/chain", "../link-other"));
  {
    g_autofree char *other = g_build_filename (tree->tmp, "other", NULL);

    g_free (etu_symlink (tree->tmp, "ws2/planted", other));
  }
}

static void
tree_teardown (Tree *tree)
{
  etu_rm_rf (tree->tmp);
  g_free (tree->tmp);
}

/* "@x" is tmp/x, "@" is tmp, anything else is literal. */
static char *
tree_path (const Tree *tree,
           const char *spec)
{
  if (spec == NULL)
    return NULL;
  if (spec[0] != '@')
    return g_strdup (spec);
  if (spec[1] == '\0')
    return g_strdup (tree->tmp);
  return g_strconcat (tree->tmp, "/", spec + 1, NULL);
}

/* ------------------------------------------------------------------------- */
/* Validation: one row per rule, both sides */

typedef struct
{
  const char *path;
  int         read;
  int         write;
} RootSpec;

typedef struct
{
  const char *name;
  gboolean    unset_workspace;
  const char *workspace;
  int         ws_read, ws_write, host_read, host_write, network, command, home, isolation;
  int         denied_paths;
  gboolean    ack;
  RootSpec    roots[3];
  guint64     limits[3];
  gboolean    ok;
  int         n_roots;          /* checked when ok and >= 0 */
  const char *expect[4];        /* substrings of the message */
  const char *reject[2];        /* must not be in the message */
} ValidationRow;

#define ALL_ALLOW .ws_read = 2, .ws_write = 2, .host_read = 2, .host_write = 2, .network = 2

static const ValidationRow validation_rows[] = {
  /* 1. workspace root */
  { "workspace/ok", .workspace = "@ws", .ok = TRUE, .n_roots = 0 },
  { "workspace/symlink-ok", .workspace = "@link-ws", .ok = TRUE, .n_roots = 0 },
  { "workspace/unset", .unset_workspace = TRUE, .expect = { "workspace root: path is empty" } },
  { "workspace/empty", .workspace = "", .expect = { "workspace root: path is empty" } },
  { "workspace/relative", .workspace = "ws", .expect = { "workspace root (ws)", "path is not absolute" } },
  { "workspace/missing", .workspace = "@missing", .expect = { "workspace root (", "/missing)", "resolve symlinks" } },
  { "workspace/not-directory", .workspace = "@file", .expect = { "workspace root (", "/file)", "path is not a directory" } },
  { "workspace/not-utf8", .workspace = "@bad\xff", .expect = { "workspace root (", "path is not valid UTF-8" } },

  /* 2. the six access fields, in a fixed order */
  { "access/all-allow-ok", .workspace = "@ws", ALL_ALLOW, .command = 2, .ok = TRUE, .n_roots = 0 },
  { "access/all-gated-ok", .workspace = "@ws", .ws_read = 1, .ws_write = 1, .host_read = 1, .host_write = 1,
    .network = 1, .command = 1, .ok = TRUE, .n_roots = 0 },
  { "access/workspace-read", .workspace = "@ws", .ws_read = 3, .expect = { "workspace read: access value 3 is out of range" } },
  { "access/workspace-write", .workspace = "@ws", .ws_write = 3, .expect = { "workspace write: access value 3" } },
  { "access/host-read", .workspace = "@ws", .host_read = 3, .expect = { "host read: access value 3" } },
  { "access/host-write", .workspace = "@ws", .host_write = 3, .expect = { "host write: access value 3 is out of range" } },
  { "access/network", .workspace = "@ws", .network = 3, .expect = { "network: access value 3" } },
  { "access/command", .workspace = "@ws", .command = 3, .expect = { "command: access value 3" } },
  { "access/negative", .workspace = "@ws", .command = -1, .expect = { "command: access value -1" } },
  { "access/first-bad-field-wins", .workspace = "@ws", .host_write = 7, .network = 4, .command = 5,
    .expect = { "host write: access value 7" }, .reject = { "network", "command" } },
  { "access/workspace-before-access", .workspace = "@missing", .host_write = 7,
    .expect = { "workspace root (" }, .reject = { "host write" } },

  /* 3. home, isolation */
  { "home/real-ok", .workspace = "@ws", .home = 1, .ok = TRUE, .n_roots = 0 },
  { "home/out-of-range", .workspace = "@ws", .home = 2, .expect = { "home: value 2 is out of range" } },
  { "isolation/out-of-range", .workspace = "@ws", .isolation = 2, .expect = { "isolation: value 2 is out of range" } },
  { "isolation/home-first", .workspace = "@ws", .home = 9, .isolation = 9, .expect = { "home: value 9" } },
  { "denied-paths/not-found-ok", .workspace = "@ws", .denied_paths = 1, .ok = TRUE, .n_roots = 0 },
  { "denied-paths/out-of-range", .workspace = "@ws", .denied_paths = 2,
    .expect = { "denied paths: value 2 is out of range (0 permission-denied, 1 not-found)" } },
  { "denied-paths/negative", .workspace = "@ws", .denied_paths = -1, .expect = { "denied paths: value -1" } },
  { "denied-paths/isolation-first", .workspace = "@ws", .isolation = 9, .denied_paths = 9,
    .expect = { "isolation: value 9" }, .reject = { "denied paths" } },

  /* 4. additional roots */
  { "roots/nested-in-workspace-ok", .workspace = "@ws", .roots = { { "@ws/sub", 1, 0 } }, .ok = TRUE, .n_roots = 1 },
  { "roots/outside-ok", .workspace = "@ws", .roots = { { "@other", 2, 0 } }, .ok = TRUE, .n_roots = 1 },
  { "roots/containing-workspace-ok", .workspace = "@ws", .roots = { { "@", 1, 1 } }, .ok = TRUE, .n_roots = 1 },
  { "roots/nested-in-each-other-ok", .workspace = "@ws", .roots = { { "@ws/sub", 1, 0 }, { "@ws/sub/deep", 0, 0 } },
    .ok = TRUE, .n_roots = 2 },
  { "roots/read-out-of-range", .workspace = "@ws", .roots = { { "@other", 3, 0 } },
    .expect = { "additional root 0 read: access value 3" } },
  { "roots/write-out-of-range", .workspace = "@ws", .roots = { { "@other", 0, 3 } },
    .expect = { "additional root 0 write: access value 3" } },
  { "roots/relative", .workspace = "@ws", .roots = { { "other", 1, 0 } },
    .expect = { "additional root 0 (other): path is not absolute" } },
  { "roots/empty", .workspace = "@ws", .roots = { { "", 1, 0 } }, .expect = { "additional root 0: path is empty" } },
  { "roots/missing", .workspace = "@ws", .roots = { { "@missing", 1, 0 } },
    .expect = { "additional root 0 (", "/missing)", "resolve symlinks" } },
  { "roots/not-directory", .workspace = "@ws", .roots = { { "@file", 1, 0 } },
    .expect = { "additional root 0 (", "/file)", "path is not a directory" } },
  { "roots/second-bad", .workspace = "@ws", .roots = { { "@other", 1, 0 }, { "@file", 1, 0 } },
    .expect = { "additional root 1 (", "not a directory" } },
  { "roots/duplicates-workspace", .workspace = "@ws", .roots = { { "@ws", 1, 0 } },
    .expect = { "additional root 0 (", "duplicates the workspace root" } },
  { "roots/duplicates-workspace-spelling", .workspace = "@ws", .roots = { { "@link-ws/.", 1, 0 } },
    .expect = { "additional root 0 (", "link-ws/.)", "duplicates the workspace root" } },
  { "roots/repeat-same-access-merged", .workspace = "@ws", .roots = { { "@other", 1, 0 }, { "@link-other", 1, 0 } },
    .ok = TRUE, .n_roots = 1 },
  { "roots/contradictory", .workspace = "@ws", .roots = { { "@other", 1, 0 }, { "@other/.", 2, 0 } },
    .expect = { "additional root 1 (", "contradicts additional root 0", "read allow" } },

  /* 4b. planted symlinks: a root reached through a link lying inside a
   * writable root of the same profile is refused, naming the link */
  { "links/planted-in-workspace", .workspace = "@ws", .ws_write = 2, .roots = { { "@ws/planted", 2, 2 } },
    .expect = { "additional root 0 (", "/ws/planted)", "symbolic link", "/ws/planted -> ../other" } },
  { "links/planted-read-only-use", .workspace = "@ws", .ws_write = 2, .roots = { { "@ws/planted", 2, 0 } },
    .expect = { "additional root 0 (", "inside the writable workspace (" } },
  { "links/planted-gated-workspace", .workspace = "@ws", .ws_write = 1, .roots = { { "@ws/planted", 2, 0 } },
    .expect = { "additional root 0 (", "symbolic link" } },
  { "links/planted-through-parent", .workspace = "@ws", .ws_write = 2, .roots = { { "@ws/planted/sub", 2, 2 } },
    .expect = { "additional root 0 (", "/ws/planted/sub)", "-> ../other" } },
  { "links/planted-chain", .workspace = "@ws", .ws_write = 2, .roots = { { "@ws/chain", 2, 2 } },
    .expect = { "additional root 0 (", "/ws/chain -> ../link-other" } },
  { "links/planted-in-writable-root", .workspace = "@ws", .roots = { { "@ws2", 2, 2 }, { "@ws2/planted", 2, 0 } },
    .expect = { "additional root 1 (", "/ws2/planted -> ", "inside the writable additional root 0 (" } },
  { "links/workspace-through-planted", .workspace = "@ws2/planted", .roots = { { "@ws2", 2, 1 } },
    .expect = { "workspace root (", "/ws2/planted -> ", "additional root 0" } },
  { "links/read-only-workspace-ok", .workspace = "@ws", .ws_write = 0, .roots = { { "@ws/planted", 2, 0 } },
    .ok = TRUE, .n_roots = 1 },
  { "links/in-read-only-root-ok", .workspace = "@ws", .roots = { { "@ws2", 2, 0 }, { "@ws2/planted", 2, 2 } },
    .ok = TRUE, .n_roots = 2 },
  { "links/outside-every-root-ok", .workspace = "@ws", .ws_write = 2, .roots = { { "@link-other", 2, 2 } },
    .ok = TRUE, .n_roots = 1 },
  { "links/resolved-path-ok", .workspace = "@ws", .ws_write = 2, .roots = { { "@other", 2, 2 } },
    .ok = TRUE, .n_roots = 1 },
  { "links/system-symlink-ok", .workspace = "@ws", .ws_write = 2, .roots = { { "/lib64", 2, 0 } },
    .ok = TRUE, .n_roots = 1 },
  { "links/host-write-not-a-root-ok", .workspace = "@link-ws", .host_write = 2, .ws_write = 2,
    .roots = { { "@link-other", 2, 0 } }, .ok = TRUE, .n_roots = 1 },

  /* 6. unconfined consistency */
  { "unconfined/ack-on-sandboxed", .workspace = "@ws", .ack = TRUE,
    .expect = { "ack unconfined: set on a sandboxed profile" } },
  { "unconfined/not-acknowledged", .workspace = "@ws", ALL_ALLOW, .isolation = 1,
    .expect = { "isolation: unconfined execution is not acknowledged" } },
  { "unconfined/ok", .workspace = "@ws", ALL_ALLOW, .isolation = 1, .ack = TRUE, .ok = TRUE, .n_roots = 0 },
  { "unconfined/command-gated-ok", .workspace = "@ws", ALL_ALLOW, .command = 1, .isolation = 1, .ack = TRUE,
    .ok = TRUE, .n_roots = 0 },
  { "unconfined/workspace-read", .workspace = "@ws", .ws_read = 1, .ws_write = 2, .host_read = 2, .host_write = 2, .network = 2, .isolation = 1, .ack = TRUE,
    .expect = { "workspace read: an unconfined profile needs allow, not gated" } },
  { "unconfined/workspace-write", .workspace = "@ws", .ws_read = 2, .ws_write = 0, .host_read = 2, .host_write = 2, .network = 2, .isolation = 1, .ack = TRUE,
    .expect = { "workspace write: an unconfined profile needs allow, not deny" } },
  { "unconfined/host-read", .workspace = "@ws", .ws_read = 2, .ws_write = 2, .host_read = 0, .host_write = 2, .network = 2, .isolation = 1, .ack = TRUE,
    .expect = { "host read: an unconfined profile needs allow" } },
  { "unconfined/host-write-gated", .workspace = "@ws", .ws_read = 2, .ws_write = 2, .host_read = 2, .host_write = 1, .network = 2, .isolation = 1, .ack = TRUE,
    .expect = { "host write: an unconfined profile needs allow, not gated" } },
  { "unconfined/network", .workspace = "@ws", .ws_read = 2, .ws_write = 2, .host_read = 2, .host_write = 2, .network = 0, .isolation = 1, .ack = TRUE,
    .expect = { "network: an unconfined profile needs allow, not deny" } },
  { "unconfined/root-allow-ok", .workspace = "@ws", ALL_ALLOW, .isolation = 1, .ack = TRUE,
    .roots = { { "@other", 2, 2 } }, .ok = TRUE, .n_roots = 1 },
  { "unconfined/root-deny", .workspace = "@ws", ALL_ALLOW, .isolation = 1, .ack = TRUE,
    .roots = { { "@other", 2, 0 } }, .expect = { "additional root 0 (", "needs read and write allow", "write deny" } },
  { "unconfined/ack-before-access", .workspace = "@ws", .isolation = 1,
    .expect = { "isolation: unconfined execution is not acknowledged" } },

  /* 7. limits */
  { "limits/max-ok", .workspace = "@ws", .limits = { G_MAXINT64, G_MAXINT64, G_MAXINT64 }, .ok = TRUE, .n_roots = 0 },
  { "limits/processes", .workspace = "@ws", .limits = { (guint64) G_MAXINT64 + 1, 0, 0 },
    .expect = { "max processes: value 9223372036854775808 is out of range" } },
  { "limits/memory", .workspace = "@ws", .limits = { 0, G_MAXUINT64, 0 },
    .expect = { "max memory: value 18446744073709551615 is out of range" } },
  { "limits/open-files", .workspace = "@ws", .limits = { 0, 0, (guint64) G_MAXINT64 + 1 },
    .expect = { "max open files: value" } },
};

static SbxProfileConfig *
config_from_row (const Tree          *tree,
                 const ValidationRow *row)
{
  SbxProfileConfig *config = sbx_profile_config_new ();
  g_autofree char *workspace = tree_path (tree, row->workspace);

  if (!row->unset_workspace)
    sbx_profile_config_set_workspace (config, workspace, (SbxAccess) row->ws_read, (SbxAccess) row->ws_write);
  else
    sbx_profile_config_set_workspace (config, NULL, (SbxAccess) row->ws_read, (SbxAccess) row->ws_write);
  sbx_profile_config_set_host (config, (SbxAccess) row->host_read, (SbxAccess) row->host_write);
  sbx_profile_config_set_network (config, (SbxAccess) row->network);
  sbx_profile_config_set_command (config, (SbxAccess) row->command);
  sbx_profile_config_set_home (config, (SbxHome) row->home);
  sbx_profile_config_set_isolation (config, (SbxIsolation) row->isolation);
  sbx_profile_config_set_ack_unconfined (config, row->ack);
  sbx_profile_config_set_denied_paths (config, (SbxDeniedPaths) row->denied_paths);
  for (guint i = 0; i < G_N_ELEMENTS (row->roots) && row->roots[i].path != NULL; i++)
    {
      g_autofree char *path = tree_path (tree, row->roots[i].path);

      sbx_profile_config_add_root (config, path, (SbxAccess) row->roots[i].read, (SbxAccess) row->roots[i].write);
    }
  sbx_profile_config_set_limits (config, row->limits[0], row->limits[1], row->limits[2]);
  return config;
}

static void
test_validation_row (gconstpointer data)
{
  const ValidationRow *row = data;
  Tree tree;
  g_autoptr(SbxProfileConfig) config = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;

  tree_setup (&tree);
  config = config_from_row (&tree, row);
  profile = sbx_profile_new (config, &error);
  if (row->ok)
    {
      g_assert_no_error (error);
      g_assert_nonnull (profile);
      g_assert_cmpuint (strlen (sbx_profile_get_fingerprint (profile)), ==, 64);
      g_assert_cmpuint (sbx_profile_get_access_version (profile), ==, 1);
      g_assert_cmpint (sbx_profile_get_workspace_read (profile), ==, row->ws_read);
      g_assert_cmpint (sbx_profile_get_host_write (profile), ==, row->host_write);
      g_assert_cmpint (sbx_profile_get_command (profile), ==, row->command);
      g_assert_cmpint (sbx_profile_get_home (profile), ==, row->home);
      g_assert_cmpint (sbx_profile_get_isolation (profile), ==, row->isolation);
      g_assert_cmpint (sbx_profile_get_denied_paths (profile), ==, row->denied_paths);
      if (row->n_roots >= 0)
        g_assert_cmpuint (sbx_profile_get_n_roots (profile), ==, (guint) row->n_roots);
    }
  else
    {
      g_assert_null (profile);
      g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
      for (guint i = 0; i < G_N_ELEMENTS (row->expect) && row->expect[i] != NULL; i++)
        if (strstr (error->message, row->expect[i]) == NULL)
          g_error ("message \"%s\" lacks \"%s\"", error->message, row->expect[i]);
      for (guint i = 0; i < G_N_ELEMENTS (row->reject) && row->reject[i] != NULL; i++)
        if (strstr (error->message, row->reject[i]) != NULL)
          g_error ("message \"%s\" names \"%s\"", error->message, row->reject[i]);
      g_assert_true (g_utf8_validate (error->message, -1, NULL));
    }
  tree_teardown (&tree);
}

/* The same bad config gives the same message every time (upstream's map
 * walk made it random). */
static void
test_validation_deterministic (void)
{
  Tree tree;
  g_autofree char *first = NULL;

  tree_setup (&tree);
  for (guint i = 0; i < 50; i++)
    {
      g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
      g_autofree char *ws = tree_path (&tree, "@ws");
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxProfile) profile = NULL;

      sbx_profile_config_set_workspace (config, ws, 5, 6);
      sbx_profile_config_set_host (config, 7, 8);
      sbx_profile_config_set_network (config, 9);
      sbx_profile_config_set_command (config, 10);
      profile = sbx_profile_new (config, &error);
      g_assert_null (profile);
      g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
      if (first == NULL)
        first = g_strdup (error->message);
      g_assert_cmpstr (error->message, ==, first);
    }
  g_assert_nonnull (strstr (first, "workspace read: access value 5"));
  tree_teardown (&tree);
}

/* ------------------------------------------------------------------------- */
/* Enums and strings */

static void
test_enum_values (void)
{
  SbxAccess access;

  g_assert_cmpint (SBX_ACCESS_DENY, ==, 0);
  g_assert_cmpint (SBX_ACCESS_GATED, ==, 1);
  g_assert_cmpint (SBX_ACCESS_ALLOW, ==, 2);
  g_assert_cmpint (SBX_HOME_ISOLATED, ==, 0);
  g_assert_cmpint (SBX_HOME_REAL, ==, 1);
  g_assert_cmpint (SBX_ISOLATION_SANDBOXED, ==, 0);
  g_assert_cmpint (SBX_ISOLATION_UNCONFINED, ==, 1);
  g_assert_cmpint (SBX_ACCESS_VERSION, ==, 1);
  g_assert_cmpint (SBX_DENIED_PATHS_PERMISSION_DENIED, ==, 0);
  g_assert_cmpint (SBX_DENIED_PATHS_NOT_FOUND, ==, 1);
  /* GI-registered like the other profile enums */
  g_assert_true (G_TYPE_IS_ENUM (SBX_TYPE_DENIED_PATHS));
  {
    g_autoptr(GEnumClass) klass = g_type_class_ref (SBX_TYPE_DENIED_PATHS);

    g_assert_cmpstr (g_enum_get_value (klass, SBX_DENIED_PATHS_NOT_FOUND)->value_nick, ==, "not-found");
    g_assert_cmpstr (g_enum_get_value (klass, SBX_DENIED_PATHS_PERMISSION_DENIED)->value_nick, ==,
                     "permission-denied");
  }

  g_assert_cmpstr (sbx_access_to_string (SBX_ACCESS_DENY), ==, "deny");
  g_assert_cmpstr (sbx_access_to_string (SBX_ACCESS_GATED), ==, "gated");
  g_assert_cmpstr (sbx_access_to_string (SBX_ACCESS_ALLOW), ==, "allow");
  g_assert_null (sbx_access_to_string ((SbxAccess) 3));
  g_assert_true (sbx_access_from_string ("gated", &access));
  g_assert_cmpint (access, ==, SBX_ACCESS_GATED);
  g_assert_false (sbx_access_from_string ("Allow", &access));
  g_assert_false (sbx_access_from_string ("", &access));
}

/* ------------------------------------------------------------------------- */
/* Canonicalisation */

static SbxProfile *
build (const char *workspace,
       const char *root_a,
       const char *root_b)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  SbxProfile *profile;

  sbx_profile_config_set_workspace (config, workspace, SBX_ACCESS_ALLOW, SBX_ACCESS_GATED);
  sbx_profile_config_set_host (config, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  if (root_a != NULL)
    sbx_profile_config_add_root (config, root_a, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
  if (root_b != NULL)
    sbx_profile_config_add_root (config, root_b, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  return profile;
}

static void
test_canonical_spellings (void)
{
  Tree tree;
  const char *spellings[] = { "@ws", "@ws/.", "@ws/", "@ws//", "@ws/sub/..", "@link-ws", "@link-ws/.", "@./ws" };
  g_autofree char *expected = NULL;
  g_autoptr(SbxProfile) reference = NULL;

  tree_setup (&tree);
  expected = tree_path (&tree, "@ws");
  {
    g_autofree char *other = tree_path (&tree, "@other");
    g_autofree char *root = tree_path (&tree, "@root");

    reference = build (expected, other, root);
  }
  for (guint i = 0; i < G_N_ELEMENTS (spellings); i++)
    {
      g_autofree char *ws = tree_path (&tree, spellings[i]);
      g_autofree char *other = tree_path (&tree, i % 2 ? "@link-other" : "@other/.");
      g_autofree char *root = tree_path (&tree, "@root//");
      g_autoptr(SbxProfile) profile = NULL;

      /* roots in either order */
      if (i % 2)
        profile = build (ws, other, root);
      else
        {
          g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
          g_autoptr(GError) error = NULL;

          sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_GATED);
          sbx_profile_config_add_root (config, root, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
          sbx_profile_config_add_root (config, other, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
          profile = sbx_profile_new (config, &error);
          g_assert_no_error (error);
        }
      g_assert_cmpstr (sbx_profile_get_workspace_root (profile), ==, expected);
      g_assert_cmpuint (sbx_profile_get_n_roots (profile), ==, 2);
      g_assert_true (g_str_has_suffix (sbx_profile_get_root_path (profile, 0), "/other"));
      g_assert_true (g_str_has_suffix (sbx_profile_get_root_path (profile, 1), "/root"));
      g_assert_cmpint (sbx_profile_get_root_read (profile, 0), ==, SBX_ACCESS_GATED);
      g_assert_cmpint (sbx_profile_get_root_write (profile, 1), ==, SBX_ACCESS_ALLOW);
      g_assert_true (sbx_profile_equal (profile, reference));
      g_assert_cmpstr (sbx_profile_get_fingerprint (profile), ==, sbx_profile_get_fingerprint (reference));
    }
  tree_teardown (&tree);
}

static void
test_roots_sorted_bytewise (void)
{
  Tree tree;
  const char *names[] = { "b", "a", "B", "a-", "a/z", "aa" };
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ws = NULL;

  tree_setup (&tree);
  ws = tree_path (&tree, "@ws");
  sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *dir = g_strconcat ("s/", names[i], NULL);
      g_autofree char *path = etu_mkdir (tree.tmp, dir);

      sbx_profile_config_add_root (config, path, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
    }
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sbx_profile_get_n_roots (profile), ==, G_N_ELEMENTS (names));
  for (guint i = 1; i < G_N_ELEMENTS (names); i++)
    g_assert_cmpint (strcmp (sbx_profile_get_root_path (profile, i - 1), sbx_profile_get_root_path (profile, i)), <, 0);
  /* byte order: "B" (0x42) < "a" < "a-" < "a/z" < "aa" < "b" */
  g_assert_true (g_str_has_suffix (sbx_profile_get_root_path (profile, 0), "/s/B"));
  g_assert_true (g_str_has_suffix (sbx_profile_get_root_path (profile, 3), "/s/a/z"));
  tree_teardown (&tree);
}

/* ------------------------------------------------------------------------- */
/* Immutability and the boxed type */

static void
test_immutable (void)
{
  Tree tree;
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ws = NULL;
  g_autofree char *other = NULL;
  g_autofree char *root = NULL;
  g_autofree char *fingerprint = NULL;
  g_autofree char *json = NULL;
  g_autofree char *json_after = NULL;

  tree_setup (&tree);
  ws = tree_path (&tree, "@ws");
  other = tree_path (&tree, "@other");
  root = tree_path (&tree, "@root");
  sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_GATED);
  sbx_profile_config_add_root (config, other, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
  sbx_profile_config_set_limits (config, 10, 20, 30);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  fingerprint = g_strdup (sbx_profile_get_fingerprint (profile));
  json = sbx_profile_to_json (profile);

  /* Change everything in the config afterwards. */
  sbx_profile_config_set_workspace (config, root, SBX_ACCESS_DENY, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_command (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_home (config, SBX_HOME_REAL);
  sbx_profile_config_add_root (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_limits (config, 1, 2, 3);
  g_clear_pointer (&config, sbx_profile_config_free);

  g_assert_cmpstr (sbx_profile_get_fingerprint (profile), ==, fingerprint);
  g_assert_cmpstr (sbx_profile_get_workspace_root (profile), ==, ws);
  g_assert_cmpint (sbx_profile_get_workspace_read (profile), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (sbx_profile_get_network (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_home (profile), ==, SBX_HOME_ISOLATED);
  g_assert_cmpuint (sbx_profile_get_n_roots (profile), ==, 1);
  g_assert_cmpuint (sbx_profile_get_max_processes (profile), ==, 10);
  g_assert_cmpuint (sbx_profile_get_max_memory (profile), ==, 20);
  g_assert_cmpuint (sbx_profile_get_max_open_files (profile), ==, 30);
  json_after = sbx_profile_to_json (profile);
  g_assert_cmpstr (json_after, ==, json);
  tree_teardown (&tree);
}

static void
test_dup_config_and_copy (void)
{
  Tree tree;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxProfile) again = NULL;
  g_autoptr(SbxProfile) from_copy = NULL;
  g_autoptr(SbxProfileConfig) dup = NULL;
  g_autoptr(SbxProfileConfig) copy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ws = NULL;
  g_autofree char *other = NULL;
  g_autofree char *root = NULL;
  SbxProfile *boxed;

  tree_setup (&tree);
  ws = tree_path (&tree, "@link-ws");
  other = tree_path (&tree, "@other");
  root = tree_path (&tree, "@root");
  profile = build (ws, other, root);
  dup = sbx_profile_dup_config (profile);
  again = sbx_profile_new (dup, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_profile_equal (profile, again));
  copy = sbx_profile_config_copy (dup);
  sbx_profile_config_set_network (dup, SBX_ACCESS_ALLOW);   /* the copy is deep */
  from_copy = sbx_profile_new (copy, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_profile_get_fingerprint (from_copy), ==, sbx_profile_get_fingerprint (profile));

  /* denied paths survive dup_config and copy */
  {
    g_autoptr(SbxProfileConfig) hiding = sbx_profile_dup_config (profile);
    g_autoptr(SbxProfileConfig) hiding_copy = NULL;
    g_autoptr(SbxProfile) hidden = NULL;
    g_autoptr(SbxProfile) hidden_again = NULL;
    g_autoptr(SbxProfileConfig) hidden_dup = NULL;

    sbx_profile_config_set_denied_paths (hiding, SBX_DENIED_PATHS_NOT_FOUND);
    hiding_copy = sbx_profile_config_copy (hiding);
    hidden = sbx_profile_new (hiding_copy, &error);
    g_assert_no_error (error);
    g_assert_cmpint (sbx_profile_get_denied_paths (hidden), ==, SBX_DENIED_PATHS_NOT_FOUND);
    g_assert_false (sbx_profile_equal (hidden, profile));
    hidden_dup = sbx_profile_dup_config (hidden);
    hidden_again = sbx_profile_new (hidden_dup, &error);
    g_assert_no_error (error);
    g_assert_true (sbx_profile_equal (hidden, hidden_again));
  }

  /* The boxed type copies by reference. */
  g_assert_true (G_TYPE_IS_BOXED (SBX_TYPE_PROFILE));
  g_assert_true (G_TYPE_IS_BOXED (SBX_TYPE_PROFILE_CONFIG));
  boxed = g_boxed_copy (SBX_TYPE_PROFILE, profile);
  g_assert_true (boxed == profile);
  g_boxed_free (SBX_TYPE_PROFILE, boxed);
  g_assert_cmpuint (strlen (sbx_profile_get_fingerprint (profile)), ==, 64);
  tree_teardown (&tree);
}

static gpointer
ref_unref_thread (gpointer data)
{
  SbxProfile *profile = data;

  for (guint i = 0; i < 100000; i++)
    sbx_profile_unref (sbx_profile_ref (profile));
  return NULL;
}

static void
test_refcount_threads (void)
{
  Tree tree;
  g_autoptr(SbxProfile) profile = NULL;
  g_autofree char *ws = NULL;
  GThread *threads[4];

  tree_setup (&tree);
  ws = tree_path (&tree, "@ws");
  profile = build (ws, NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("ref", ref_unref_thread, profile);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  g_assert_cmpuint (strlen (sbx_profile_get_fingerprint (profile)), ==, 64);
  tree_teardown (&tree);
}

/* ------------------------------------------------------------------------- */
/* access_for */

typedef struct
{
  const char *kind;
  const char *scope;    /* "@" paths as in tree_path */
  SbxAccess   expected;
} AccessRow;

static void
test_access_for_table (void)
{
  /* The Go library's worked example: workspace R Allow / W Gated, host R Deny /
   * W Gated, network Allow, command Gated, root R Gated / W Allow; plus a
   * Deny root nested in the workspace and the "ws2" prefix trap. */
  static const AccessRow rows[] = {
    { "command.execute", "", SBX_ACCESS_GATED },
    { "command.execute", NULL, SBX_ACCESS_GATED },
    { "network", "", SBX_ACCESS_ALLOW },
    { "filesystem.read", "@ws/file", SBX_ACCESS_ALLOW },
    { "filesystem.read", "@ws", SBX_ACCESS_ALLOW },
    { "filesystem.write", "@ws/file", SBX_ACCESS_GATED },
    { "filesystem.write", "tree:@ws", SBX_ACCESS_GATED },
    { "filesystem.read", "tree:@ws", SBX_ACCESS_ALLOW },
    { "filesystem.read", "@root/file", SBX_ACCESS_GATED },
    { "filesystem.write", "tree:@root", SBX_ACCESS_ALLOW },
    { "filesystem.read", "@other", SBX_ACCESS_DENY },           /* a sibling of ws */
    { "filesystem.read", "@ws2", SBX_ACCESS_DENY },             /* prefix, not within */
    { "filesystem.read", "@ws2/x", SBX_ACCESS_DENY },
    { "filesystem.read", "@", SBX_ACCESS_DENY },                /* above ws */
    { "filesystem.write", "@", SBX_ACCESS_GATED },
    { "filesystem.read", "tree:@ws/missing", SBX_ACCESS_DENY }, /* not a root: Deny, no error */
    { "filesystem.read", "tree:@ws/sub/deep", SBX_ACCESS_DENY },
    { "filesystem.read", "tree:@other", SBX_ACCESS_DENY },
    { "filesystem.write", "host:*", SBX_ACCESS_GATED },
    { "filesystem.read", "host:*", SBX_ACCESS_DENY },
    { "filesystem.read", "/", SBX_ACCESS_DENY },
    { "filesystem.write", "/", SBX_ACCESS_GATED },
    /* nested root ws/sub: Deny read, Deny write; longest match wins */
    { "filesystem.read", "@ws/sub", SBX_ACCESS_DENY },
    { "filesystem.read", "@ws/sub/deep/x", SBX_ACCESS_DENY },
    { "filesystem.read", "tree:@ws/sub", SBX_ACCESS_DENY },
    { "filesystem.write", "@ws/sub/x", SBX_ACCESS_DENY },
    { "filesystem.read", "@ws/subx", SBX_ACCESS_ALLOW },        /* prefix trap inside ws */
    { "filesystem.read", "@ws/sub2/deep", SBX_ACCESS_ALLOW },
  };
  Tree tree;
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ws = NULL;
  g_autofree char *root = NULL;
  g_autofree char *sub = NULL;

  tree_setup (&tree);
  ws = tree_path (&tree, "@ws");
  root = tree_path (&tree, "@root");
  sub = tree_path (&tree, "@ws/sub");
  sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_GATED);
  sbx_profile_config_set_host (config, SBX_ACCESS_DENY, SBX_ACCESS_GATED);
  sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_command (config, SBX_ACCESS_GATED);
  sbx_profile_config_add_root (config, root, SBX_ACCESS_GATED, SBX_ACCESS_ALLOW);
  sbx_profile_config_add_root (config, sub, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *scope = NULL;
      SbxAccess access = (SbxAccess) 99;

      if (rows[i].scope != NULL && g_str_has_prefix (rows[i].scope, "tree:@"))
        {
          g_autofree char *path = tree_path (&tree, rows[i].scope + strlen ("tree:"));

          scope = g_strconcat ("tree:", path, NULL);
        }
      else
        scope = tree_path (&tree, rows[i].scope);
      if (!sbx_profile_access_for (profile, rows[i].kind, scope, &access, &error))
        g_error ("access_for (%s, %s): %s", rows[i].kind, scope, error->message);
      if (access != rows[i].expected)
        g_error ("access_for (%s, %s) = %d, expected %d", rows[i].kind, scope, access, rows[i].expected);
    }
  tree_teardown (&tree);
}

static void
test_access_for_errors (void)
{
  static const struct { const char *kind; const char *scope; const char *expect; } rows[] = {
    { "filesystem.exec", "/x", "unknown access kind \"filesystem.exec\"" },
    { "", "", "unknown access kind \"\"" },
    { "Network", "", "unknown access kind \"Network\"" },
    { "command.execute", "x", "command.execute: scope must be empty, not \"x\"" },
    { "command.execute", "/", "command.execute: scope must be empty" },
    { "network", "tcp:*:443", "network: scope must be empty, not \"tcp:*:443\"" },
    { "filesystem.read", "", "malformed filesystem scope \"\"" },
    { "filesystem.read", "a/b", "malformed filesystem scope \"a/b\"" },
    { "filesystem.read", "/a/../b", "malformed filesystem scope \"/a/../b\"" },
    { "filesystem.read", "/a/./b", "malformed filesystem scope \"/a/./b\"" },
    { "filesystem.read", "/a/", "malformed filesystem scope \"/a/\"" },
    { "filesystem.read", "//a", "malformed filesystem scope \"//a\"" },
    { "filesystem.read", "/a/..", "malformed filesystem scope" },
    { "filesystem.write", "tree:relative", "filesystem.write: malformed filesystem scope \"tree:relative\"" },
    { "filesystem.write", "tree:", "malformed filesystem scope \"tree:\"" },
    { "filesystem.write", "tree:tree:/a", "malformed filesystem scope \"tree:tree:/a\"" },
    { "filesystem.read", "host:", "malformed filesystem scope \"host:\"" },
    { "filesystem.read", "host:/a", "malformed filesystem scope \"host:/a\"" },
    { "filesystem.read", "Host:*", "malformed filesystem scope" },
  };
  Tree tree;
  g_autoptr(SbxProfile) profile = NULL;
  g_autofree char *ws = NULL;

  tree_setup (&tree);
  ws = tree_path (&tree, "@ws");
  profile = build (ws, NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(GError) error = NULL;
      SbxAccess access = SBX_ACCESS_ALLOW;

      g_assert_false (sbx_profile_access_for (profile, rows[i].kind, rows[i].scope, &access, &error));
      g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
      if (strstr (error->message, rows[i].expect) == NULL)
        g_error ("message \"%s\" lacks \"%s\"", error->message, rows[i].expect);
      g_assert_cmpint (access, ==, SBX_ACCESS_DENY);
    }

  /* The accepted sides of the same grammar. */
  {
    g_autoptr(GError) error = NULL;
    SbxAccess access;

    g_assert_true (sbx_profile_access_for (profile, "filesystem.read", "/a/b", &access, &error));
    g_assert_true (sbx_profile_access_for (profile, "filesystem.read", "/", &access, &error));
    g_assert_true (sbx_profile_access_for (profile, "filesystem.read", "tree:/", &access, &error));
    g_assert_cmpint (access, ==, SBX_ACCESS_DENY);
    g_assert_true (sbx_profile_access_for (profile, "filesystem.read", "/a/..b/...", NULL, &error));
    g_assert_no_error (error);
  }
  tree_teardown (&tree);
}

static void
test_null_profile (void)
{
  g_autoptr(GError) error = NULL;
  SbxAccess access = SBX_ACCESS_ALLOW;

  g_assert_cmpuint (sbx_profile_get_access_version (NULL), ==, 0);
  g_assert_cmpstr (sbx_profile_get_fingerprint (NULL), ==, "");
  g_assert_false (sbx_profile_access_for (NULL, "network", "", &access, &error));
  g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
  g_assert_cmpint (access, ==, SBX_ACCESS_DENY);
}

/* ------------------------------------------------------------------------- */
/* Required guarantees (§2.3) */

typedef struct
{
  const char   *name;
  int           ws_read, ws_write, host_read, host_write, network;
  int           isolation;
  int           root_read, root_write;   /* -1: no root */
  SbxGuarantees expected;
} GuaranteeRow;

#define REQ_R SBX_GUARANTEE_READ_BOUNDARY
#define REQ_W SBX_GUARANTEE_WRITE_BOUNDARY
#define REQ_N SBX_GUARANTEE_NETWORK_BOUNDARY
#define REQ_E SBX_GUARANTEE_ENV_SCRUB

static void
test_required_guarantees (void)
{
  static const GuaranteeRow rows[] = {
    { "all-gated", 1, 1, 1, 1, 1, 0, -1, -1, REQ_R | REQ_W | REQ_N | REQ_E },
    { "all-deny", 0, 0, 0, 0, 0, 0, -1, -1, REQ_R | REQ_W | REQ_N | REQ_E },
    { "all-allow", 2, 2, 2, 2, 2, 0, -1, -1, REQ_E },
    { "workspace-read", 1, 2, 2, 2, 2, 0, -1, -1, REQ_R | REQ_E },
    { "host-read", 2, 2, 0, 2, 2, 0, -1, -1, REQ_R | REQ_E },
    { "workspace-write", 2, 0, 2, 2, 2, 0, -1, -1, REQ_W | REQ_E },
    { "host-write", 2, 2, 2, 1, 2, 0, -1, -1, REQ_W | REQ_E },
    { "network", 2, 2, 2, 2, 1, 0, -1, -1, REQ_N | REQ_E },
    { "root-read", 2, 2, 2, 2, 2, 0, 1, 2, REQ_R | REQ_E },
    { "root-write", 2, 2, 2, 2, 2, 0, 2, 0, REQ_W | REQ_E },
    { "root-allow", 2, 2, 2, 2, 2, 0, 2, 2, REQ_E },
    { "unconfined", 2, 2, 2, 2, 2, 1, -1, -1, REQ_E },
    { "unconfined-root", 2, 2, 2, 2, 2, 1, 2, 2, REQ_E },
  };
  Tree tree;

  tree_setup (&tree);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
      g_autoptr(SbxProfile) profile = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *ws = tree_path (&tree, "@ws");
      g_autofree char *other = tree_path (&tree, "@other");

      sbx_profile_config_set_workspace (config, ws, rows[i].ws_read, rows[i].ws_write);
      sbx_profile_config_set_host (config, rows[i].host_read, rows[i].host_write);
      sbx_profile_config_set_network (config, rows[i].network);
      sbx_profile_config_set_isolation (config, rows[i].isolation);
      sbx_profile_config_set_ack_unconfined (config, rows[i].isolation == 1);
      sbx_profile_config_set_limits (config, 5, 5, 5);   /* never makes ResourceLimits required */
      if (rows[i].root_read >= 0)
        sbx_profile_config_add_root (config, other, rows[i].root_read, rows[i].root_write);
      profile = sbx_profile_new (config, &error);
      g_assert_no_error (error);
      if (sbx_profile_get_required_guarantees (profile) != rows[i].expected)
        g_error ("%s: required %#x, expected %#x", rows[i].name,
                 sbx_profile_get_required_guarantees (profile), rows[i].expected);
    }
  tree_teardown (&tree);
}

/* The filesystem root is never a root: no backend can scope "/" as one
 * root among others, so a profile saying so would report access it never
 * gets.  Every spelling that resolves to it is refused, naming the field;
 * a directory below it is accepted (the control). */
static void
test_filesystem_root_refused (void)
{
  static const char *const spellings[] = { "/", "//", "/.", "/usr/..", "/tmp/../" };

  for (gsize i = 0; i < G_N_ELEMENTS (spellings); i++)
    {
      g_autoptr(SbxProfileConfig) ws = sbx_profile_config_new ();
      g_autoptr(SbxProfileConfig) root = sbx_profile_config_new ();
      g_autoptr(SbxProfile) profile = NULL;
      g_autoptr(GError) error = NULL;

      sbx_profile_config_set_workspace (ws, spellings[i], SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
      profile = sbx_profile_new (ws, &error);
      g_assert_null (profile);
      g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
      g_assert_true (g_str_has_prefix (error->message, "workspace root ("));
      g_assert_nonnull (strstr (error->message, "filesystem root"));
      g_clear_error (&error);

      sbx_profile_config_set_workspace (root, "/usr", SBX_ACCESS_ALLOW, SBX_ACCESS_DENY);
      sbx_profile_config_add_root (root, spellings[i], SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
      profile = sbx_profile_new (root, &error);
      g_assert_null (profile);
      g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "filesystem root"));
    }
  {
    g_autoptr(SbxProfileConfig) below = sbx_profile_config_new ();
    g_autoptr(SbxProfile) profile = NULL;
    g_autoptr(GError) error = NULL;

    sbx_profile_config_set_workspace (below, "/usr", SBX_ACCESS_ALLOW, SBX_ACCESS_DENY);
    sbx_profile_config_add_root (below, "/tmp", SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
    profile = sbx_profile_new (below, &error);
    g_assert_no_error (error);
    g_assert_nonnull (profile);
  }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (validation_rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/profile/validate/%s", validation_rows[i].name);

      g_test_add_data_func (path, &validation_rows[i], test_validation_row);
    }
  g_test_add_func ("/profile/validate/deterministic", test_validation_deterministic);
  g_test_add_func ("/profile/validate/filesystem-root-refused", test_filesystem_root_refused);
  g_test_add_func ("/profile/enums/values-and-words", test_enum_values);
  g_test_add_func ("/profile/canonical/spellings-collapse", test_canonical_spellings);
  g_test_add_func ("/profile/canonical/roots-sorted-bytewise", test_roots_sorted_bytewise);
  g_test_add_func ("/profile/immutable/config-changes-ignored", test_immutable);
  g_test_add_func ("/profile/immutable/dup-config-and-copy", test_dup_config_and_copy);
  g_test_add_func ("/profile/immutable/refcount-threads", test_refcount_threads);
  g_test_add_func ("/profile/access-for/table", test_access_for_table);
  g_test_add_func ("/profile/access-for/errors", test_access_for_errors);
  g_test_add_func ("/profile/access-for/null-profile", test_null_profile);
  g_test_add_func ("/profile/required-guarantees/table", test_required_guarantees);
  return g_test_run ();
}
