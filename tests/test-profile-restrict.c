/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sbx/sbx.h>
#include <string.h>

#include "executor-test-util.h"

/*
 * sbx_profile_restrict() never widens.
 *
 * The property test builds random profile pairs over one directory tree
 * (roots nest in the workspace, in each other, and around the workspace)
 * and checks, for each pair (a, b) and r = restrict (a, b):
 *   - every exact path P (at, above, below and beside every directory, and
 *     "/"), on both axes: access_for (r, P) == min (access_for (a, P),
 *     access_for (b, P)) — so r grants nothing a or b denies;
 *   - every "tree:X": Deny unless X is a root of r, never more than the
 *     pathwise minimum at X, and exactly min (a, b) when X is a configured
 *     root of both;
 *   - host:*, network, command: the minimum; home and isolation prefer
 *     isolated and sandboxed; the acknowledgement only when both have it
 *     and r is unconfined; limits the smaller (0 = none);
 *   - commutativity (restrict (b, a) equals r), idempotence (restrict (a, a)
 *     equals a, same fingerprint), absorption (restrict (r, a) resolves every
 *     path as r does), and r re-validates from its own config.
 * Seeded from g_test_rand, so a failure reproduces with --seed.
 */

#define N_PAIRS 10000

/* Directories under the temporary root, "" being the root itself. */
static const char *const dirs[] = {
  "", "ws", "ws/a", "ws/a/b", "ws/a/b/c", "ws/a2", "ws/d", "ws/d/e",
  "ws2", "ws2/x", "o", "o/p", "o/p/q", "o2",
};

typedef struct
{
  char       *tmp;
  char      **paths;   /* absolute path of each dirs[] entry */
  GPtrArray  *probes;  /* exact paths checked */
} Tree;

static void
tree_setup (Tree *tree)
{
  tree->tmp = etu_make_tmpdir ("sbx-test-restrict-XXXXXX");
  tree->paths = g_new0 (char *, G_N_ELEMENTS (dirs) + 1);
  tree->probes = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      tree->paths[i] = dirs[i][0] == '\0' ? g_strdup (tree->tmp) : etu_mkdir (tree->tmp, dirs[i]);
      g_ptr_array_add (tree->probes, g_strdup (tree->paths[i]));                       /* at */
      g_ptr_array_add (tree->probes, g_strconcat (tree->paths[i], "/zz", NULL));       /* below */
      g_ptr_array_add (tree->probes, g_strconcat (tree->paths[i], "/zz/deeper", NULL));
      g_ptr_array_add (tree->probes, g_strconcat (tree->paths[i], "x", NULL));         /* beside (prefix trap) */
      g_ptr_array_add (tree->probes, g_strconcat (tree->paths[i], "-y/z", NULL));
    }
  /* above every directory of the tree */
  g_ptr_array_add (tree->probes, g_strdup ("/"));
  g_ptr_array_add (tree->probes, g_path_get_dirname (tree->tmp));
}

static void
tree_teardown (Tree *tree)
{
  etu_rm_rf (tree->tmp);
  g_free (tree->tmp);
  g_strfreev (tree->paths);
  g_ptr_array_unref (tree->probes);
}

static guint
ws_index (void)
{
  return 1;
}

/* ------------------------------------------------------------------------- */
/* Random profiles */

static SbxAccess
random_access (void)
{
  return (SbxAccess) g_test_rand_int_range (0, 3);
}

static guint64
random_limit (void)
{
  return g_test_rand_bit () ? 0 : (guint64) g_test_rand_int_range (1, 100);
}

static SbxProfile *
random_profile (const Tree *tree)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  gboolean unconfined = g_test_rand_int_range (0, 10) == 0;
  guint n_roots = (guint) g_test_rand_int_range (0, 6);
  SbxProfile *profile;

  if (unconfined)
    {
      sbx_profile_config_set_workspace (config, tree->paths[ws_index ()], SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
      sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
      sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
      sbx_profile_config_set_isolation (config, SBX_ISOLATION_UNCONFINED);
      sbx_profile_config_set_ack_unconfined (config, TRUE);
    }
  else
    {
      sbx_profile_config_set_workspace (config, tree->paths[ws_index ()], random_access (), random_access ());
      sbx_profile_config_set_host (config, random_access (), random_access ());
      sbx_profile_config_set_network (config, random_access ());
    }
  sbx_profile_config_set_command (config, random_access ());
  sbx_profile_config_set_home (config, (SbxHome) g_test_rand_bit ());
  for (guint i = 0; i < n_roots; i++)
    {
      guint d = (guint) g_test_rand_int_range (0, G_N_ELEMENTS (dirs));

      if (d == ws_index ())
        continue;
      /* A repeated directory is merged with equal access and refused
       * (then retried below) with different access. */
      if (unconfined)
        sbx_profile_config_add_root (config, tree->paths[d], SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
      else
        sbx_profile_config_add_root (config, tree->paths[d], random_access (), random_access ());
    }
  sbx_profile_config_set_limits (config, random_limit (), random_limit (), random_limit ());
  sbx_profile_config_set_denied_paths (config, g_test_rand_bit () ? SBX_DENIED_PATHS_NOT_FOUND
                                       : SBX_DENIED_PATHS_PERMISSION_DENIED);
  {
    static const char *const sockets[] = { "/run/a.sock", "/run/b.sock", "/run/user/1/bus" };
    gboolean all_unix = g_test_rand_bit ();

    /* A gated socket needs unix sockets closed (validation refuses it). */
    sbx_profile_config_set_unix_sockets (config, all_unix);
    for (guint s = 0; s < G_N_ELEMENTS (sockets); s++)
      {
        int pick = g_test_rand_int_range (0, 3);   /* 0: allowed, 1: gated, 2: not named */

        if (pick == 0 || (pick == 1 && all_unix))
          sbx_profile_config_add_host_socket (config, sockets[s]);
        else if (pick == 1)
          sbx_profile_config_add_gated_host_socket (config, sockets[s]);
      }
  }
  profile = sbx_profile_new (config, &error);
  if (profile == NULL)
    {
      /* Only a contradictory repeated root can fail; try again. */
      g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "contradicts"));
      return random_profile (tree);
    }
  return profile;
}

/* ------------------------------------------------------------------------- */
/* Checks */

static SbxAccess
access_of (SbxProfile *profile,
           const char *kind,
           const char *scope)
{
  g_autoptr(GError) error = NULL;
  SbxAccess result = (SbxAccess) 99;

  if (!sbx_profile_access_for (profile, kind, scope, &result, &error))
    g_error ("access_for (%s, %s): %s", kind, scope, error->message);
  return result;
}

static gboolean
is_root_of (SbxProfile *profile,
            const char *path)
{
  if (g_str_equal (sbx_profile_get_workspace_root (profile), path))
    return TRUE;
  for (guint i = 0; i < sbx_profile_get_n_roots (profile); i++)
    if (g_str_equal (sbx_profile_get_root_path (profile, i), path))
      return TRUE;
  return FALSE;
}

static guint64
min_limit (guint64 a,
           guint64 b)
{
  if (a == 0)
    return b;
  if (b == 0)
    return a;
  return MIN (a, b);
}

static void
describe_and_fail (SbxProfile *a,
                   SbxProfile *b,
                   SbxProfile *r,
                   const char *what)
{
  g_autofree char *ja = sbx_profile_to_json (a);
  g_autofree char *jb = sbx_profile_to_json (b);
  g_autofree char *jr = sbx_profile_to_json (r);

  g_error ("%s\n--- a:\n%s--- b:\n%s--- restrict (a, b):\n%s", what, ja, jb, jr);
}

/* Same access for every exact path, tree scope and scalar kind. */
static gboolean
equivalent (const Tree *tree,
            SbxProfile *x,
            SbxProfile *y)
{
  static const char *const kinds[] = { "filesystem.read", "filesystem.write" };

  if (access_of (x, "network", "") != access_of (y, "network", "")
      || access_of (x, "command.execute", "") != access_of (y, "command.execute", ""))
    return FALSE;
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      if (access_of (x, kinds[k], "host:*") != access_of (y, kinds[k], "host:*"))
        return FALSE;
      for (guint i = 0; i < tree->probes->len; i++)
        {
          const char *path = g_ptr_array_index (tree->probes, i);

          if (access_of (x, kinds[k], path) != access_of (y, kinds[k], path))
            return FALSE;
        }
    }
  return TRUE;
}

static void
check_pair (const Tree *tree,
            SbxProfile *a,
            SbxProfile *b)
{
  static const char *const kinds[] = { "filesystem.read", "filesystem.write" };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) r = sbx_profile_restrict (a, b, &error);
  g_autoptr(SbxProfile) r_swapped = NULL;
  g_autoptr(SbxProfile) absorbed = NULL;
  g_autoptr(SbxProfileConfig) r_config = NULL;
  g_autoptr(SbxProfile) r_rebuilt = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (r);

  /* Scalars */
  if (access_of (r, "network", "") != MIN (access_of (a, "network", ""), access_of (b, "network", ""))
      || access_of (r, "command.execute", "") != MIN (access_of (a, "command.execute", ""), access_of (b, "command.execute", "")))
    describe_and_fail (a, b, r, "network or command is not the minimum");
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    if (access_of (r, kinds[k], "host:*") != MIN (access_of (a, kinds[k], "host:*"), access_of (b, kinds[k], "host:*")))
      describe_and_fail (a, b, r, "host:* is not the minimum");
  g_assert_cmpint (sbx_profile_get_home (r), ==, MIN (sbx_profile_get_home (a), sbx_profile_get_home (b)));
  g_assert_cmpint (sbx_profile_get_isolation (r), ==,
                   MIN (sbx_profile_get_isolation (a), sbx_profile_get_isolation (b)));
  g_assert_cmpint (sbx_profile_get_ack_unconfined (r), ==,
                   sbx_profile_get_isolation (r) == SBX_ISOLATION_UNCONFINED
                   && sbx_profile_get_ack_unconfined (a) && sbx_profile_get_ack_unconfined (b));
  g_assert_cmpuint (sbx_profile_get_max_processes (r), ==,
                    min_limit (sbx_profile_get_max_processes (a), sbx_profile_get_max_processes (b)));
  g_assert_cmpuint (sbx_profile_get_max_memory (r), ==,
                    min_limit (sbx_profile_get_max_memory (a), sbx_profile_get_max_memory (b)));
  g_assert_cmpuint (sbx_profile_get_max_open_files (r), ==,
                    min_limit (sbx_profile_get_max_open_files (a), sbx_profile_get_max_open_files (b)));

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      /* Exact paths: the pathwise minimum, exactly. */
      for (guint i = 0; i < tree->probes->len; i++)
        {
          const char *path = g_ptr_array_index (tree->probes, i);
          SbxAccess in_a = access_of (a, kinds[k], path);
          SbxAccess in_b = access_of (b, kinds[k], path);
          SbxAccess in_r = access_of (r, kinds[k], path);

          if (in_r > in_a || in_r > in_b)
            {
              g_autofree char *what = g_strdup_printf ("WIDENED %s %s: a %d, b %d, r %d", kinds[k], path, in_a, in_b, in_r);

              describe_and_fail (a, b, r, what);
            }
          if (in_r != MIN (in_a, in_b))
            {
              g_autofree char *what = g_strdup_printf ("not the minimum at %s %s: a %d, b %d, r %d",
                                                       kinds[k], path, in_a, in_b, in_r);

              describe_and_fail (a, b, r, what);
            }
        }

      /* tree: scopes */
      for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
        {
          const char *path = tree->paths[i];
          g_autofree char *scope = g_strconcat ("tree:", path, NULL);
          SbxAccess pathwise = MIN (access_of (a, kinds[k], path), access_of (b, kinds[k], path));
          SbxAccess in_r = access_of (r, kinds[k], scope);

          if (in_r > pathwise)
            describe_and_fail (a, b, r, "a tree: scope exceeds the pathwise minimum");
          if (!is_root_of (r, path) && in_r != SBX_ACCESS_DENY)
            describe_and_fail (a, b, r, "a tree: scope of a non-root is not Deny");
          if (is_root_of (r, path) && in_r != pathwise)
            describe_and_fail (a, b, r, "a tree: scope of a root is not the pathwise minimum");
          if (is_root_of (a, path) && is_root_of (b, path)
              && in_r != MIN (access_of (a, kinds[k], scope), access_of (b, kinds[k], scope)))
            describe_and_fail (a, b, r, "a tree: scope of a common root is not the minimum");
        }
    }

  /* denied paths: not-found (reveals less) when either says so, else
   * permission-denied */
  if (sbx_profile_get_denied_paths (r)
      != MAX (sbx_profile_get_denied_paths (a), sbx_profile_get_denied_paths (b)))
    describe_and_fail (a, b, r, "denied paths: not-found did not win");
  /* unix sockets: open in the result only when open in both */
  if (sbx_profile_get_unix_sockets (r)
      && !(sbx_profile_get_unix_sockets (a) && sbx_profile_get_unix_sockets (b)))
    describe_and_fail (a, b, r, "unix sockets widened");
  /* host sockets: a name survives only when both sides reach it (by name,
   * or by opening every socket) */
  for (guint s = 0; sbx_profile_get_host_sockets (r)[s] != NULL; s++)
    {
      const char *name = sbx_profile_get_host_sockets (r)[s];

      if (!(sbx_profile_get_unix_sockets (a) || g_strv_contains (sbx_profile_get_host_sockets (a), name))
          || !(sbx_profile_get_unix_sockets (b) || g_strv_contains (sbx_profile_get_host_sockets (b), name)))
        describe_and_fail (a, b, r, "host socket widened");
    }
  for (guint s = 0; sbx_profile_get_host_sockets (a)[s] != NULL; s++)
    {
      const char *name = sbx_profile_get_host_sockets (a)[s];

      if ((sbx_profile_get_unix_sockets (b) || g_strv_contains (sbx_profile_get_host_sockets (b), name))
          && !sbx_profile_get_unix_sockets (r) && !g_strv_contains (sbx_profile_get_host_sockets (r), name))
        describe_and_fail (a, b, r, "host socket both reach was dropped");
    }

  /* host sockets, allowed or gated: the result's access to each name
   * either side mentions is the lesser of the two */
  {
    static const char *const names[] = { "/run/a.sock", "/run/b.sock", "/run/user/1/bus" };

    for (guint s = 0; s < G_N_ELEMENTS (names); s++)
      {
        SbxAccess in_a, in_b, in_r;

        g_assert_true (sbx_profile_access_for (a, "unix.connect", names[s], &in_a, NULL));
        g_assert_true (sbx_profile_access_for (b, "unix.connect", names[s], &in_b, NULL));
        g_assert_true (sbx_profile_access_for (r, "unix.connect", names[s], &in_r, NULL));
        if (in_r != MIN (in_a, in_b))
          describe_and_fail (a, b, r, "a host socket's access is not the minimum");
      }
  }

  /* Commutativity: the very same profile. */
  r_swapped = sbx_profile_restrict (b, a, &error);
  g_assert_no_error (error);
  if (!sbx_profile_equal (r, r_swapped))
    describe_and_fail (a, b, r, "restrict (b, a) differs from restrict (a, b)");
  g_assert_cmpstr (sbx_profile_get_fingerprint (r), ==, sbx_profile_get_fingerprint (r_swapped));

  /* Absorption: narrowing the result by an input changes nothing. */
  absorbed = sbx_profile_restrict (r, a, &error);
  g_assert_no_error (error);
  if (!equivalent (tree, absorbed, r))
    describe_and_fail (a, b, r, "restrict (restrict (a, b), a) is not equivalent to restrict (a, b)");

  /* The result is a valid profile in its own right. */
  r_config = sbx_profile_dup_config (r);
  r_rebuilt = sbx_profile_new (r_config, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_profile_equal (r, r_rebuilt));
}

static void
check_idempotent (const Tree *tree,
                  SbxProfile *a)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) r = sbx_profile_restrict (a, a, &error);

  g_assert_no_error (error);
  if (!sbx_profile_equal (r, a) || !equivalent (tree, r, a))
    describe_and_fail (a, a, r, "restrict (a, a) differs from a");
  g_assert_cmpstr (sbx_profile_get_fingerprint (r), ==, sbx_profile_get_fingerprint (a));
}

static void
test_property (void)
{
  Tree tree;
  guint n_pairs = N_PAIRS;

  tree_setup (&tree);
  for (guint i = 0; i < n_pairs; i++)
    {
      g_autoptr(SbxProfile) a = random_profile (&tree);
      g_autoptr(SbxProfile) b = random_profile (&tree);

      check_pair (&tree, a, b);
      if (i % 4 == 0)
        check_idempotent (&tree, a);
    }
  g_test_message ("%u random pairs checked over %u probe paths", n_pairs, tree.probes->len);
  tree_teardown (&tree);
}

/* ------------------------------------------------------------------------- */
/* Explicit rows: a nested root whose access equals the host access, and its
 * neighbours */

/* "ws=AG host=DD net=A cmd=G root:ws/a=DD root:o=GA" (D/G/A = deny, gated,
 * allow; read then write). */
static SbxProfile *
spec_profile (const Tree *tree,
              const char *spec)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_auto(GStrv) tokens = g_strsplit (spec, " ", -1);
  g_autoptr(GError) error = NULL;
  SbxProfile *profile;

  sbx_profile_config_set_workspace (config, tree->paths[ws_index ()], SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  for (guint i = 0; tokens[i] != NULL; i++)
    {
      const char *eq = strchr (tokens[i], '=');
      const char *v;
      SbxAccess r, w;

      g_assert_nonnull (eq);
      v = eq + 1;
#define WORD(c) ((c) == 'A' ? SBX_ACCESS_ALLOW : (c) == 'G' ? SBX_ACCESS_GATED : SBX_ACCESS_DENY)
      r = WORD (v[0]);
      w = v[1] != '\0' ? WORD (v[1]) : SBX_ACCESS_DENY;
#undef WORD
      if (g_str_has_prefix (tokens[i], "ws="))
        sbx_profile_config_set_workspace (config, tree->paths[ws_index ()], r, w);
      else if (g_str_has_prefix (tokens[i], "host="))
        sbx_profile_config_set_host (config, r, w);
      else if (g_str_has_prefix (tokens[i], "net="))
        sbx_profile_config_set_network (config, r);
      else if (g_str_has_prefix (tokens[i], "cmd="))
        sbx_profile_config_set_command (config, r);
      else if (g_str_has_prefix (tokens[i], "root:"))
        {
          g_autofree char *rel = g_strndup (tokens[i] + 5, (gsize) (eq - tokens[i] - 5));
          g_autofree char *path = g_strcmp0 (rel, ".") == 0 ? g_strdup (tree->tmp)
                                                            : g_build_filename (tree->tmp, rel, NULL);

          sbx_profile_config_add_root (config, path, r, w);
        }
      else
        g_assert_not_reached ();
    }
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  return profile;
}

typedef struct
{
  const char *name;
  const char *a;
  const char *b;
  const char *path;      /* relative to the tree; "." is the tree root */
  SbxAccess   read;      /* expected in restrict (a, b) */
  SbxAccess   write;
} RestrictRow;

static const RestrictRow restrict_rows[] = {
  /* The Go library's widening bug: restrict (p, p) with workspace Allow,
   * host Deny and a Deny root inside the workspace dropped the root (its
   * access equals the host's) and handed ws/a the workspace's Allow. */
  { "q3/self", "ws=AA host=DD root:ws/a=DD", "ws=AA host=DD root:ws/a=DD", "ws/a/b", SBX_ACCESS_DENY, SBX_ACCESS_DENY },
  { "q3/one-side", "ws=AA host=DD root:ws/a=DD", "ws=AA host=DD", "ws/a", SBX_ACCESS_DENY, SBX_ACCESS_DENY },
  { "q3/other-side", "ws=AA host=DD", "ws=AA host=DD root:ws/a=DD", "ws/a/zz", SBX_ACCESS_DENY, SBX_ACCESS_DENY },
  /* Equal to the host but not to the enclosing root. */
  { "q3/gated-equals-host", "ws=AA host=GG root:ws/a=GG", "ws=AA host=GG", "ws/a/b/c", SBX_ACCESS_GATED, SBX_ACCESS_GATED },
  /* Nested in another root, not in the workspace. */
  { "q3/nested-in-root", "ws=DD host=DD root:o=AA root:o/p=DD", "ws=DD host=DD root:o=AA root:o/p=DD",
    "o/p/q", SBX_ACCESS_DENY, SBX_ACCESS_DENY },
  { "q3/nested-in-root-outer", "ws=DD host=DD root:o=AA root:o/p=DD", "ws=DD host=DD root:o=AA root:o/p=DD",
    "o/zz", SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW },
  /* A root around the workspace: the workspace still wins inside it. */
  { "around-workspace/inside", "ws=DD host=DD root:.=AA", "ws=DD host=AA", "ws/zz", SBX_ACCESS_DENY, SBX_ACCESS_DENY },
  { "around-workspace/outside", "ws=DD host=DD root:.=AA", "ws=DD host=AA", "o2", SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW },
  /* Deeper root of b inside a root of a. */
  { "mixed-depth", "ws=AA host=DD root:ws/a=GA", "ws=AG host=DD root:ws/a/b=AA", "ws/a/b/c", SBX_ACCESS_GATED, SBX_ACCESS_ALLOW },
  { "mixed-depth/between", "ws=AA host=DD root:ws/a=GA", "ws=AG host=DD root:ws/a/b=AA", "ws/a/zz", SBX_ACCESS_GATED, SBX_ACCESS_GATED },
  /* Prefix trap: ws2 is not inside ws. */
  { "prefix", "ws=AA host=DD", "ws=AA host=GG", "ws2/x", SBX_ACCESS_DENY, SBX_ACCESS_DENY },
};

static void
test_restrict_row (gconstpointer data)
{
  const RestrictRow *row = data;
  Tree tree;
  g_autoptr(SbxProfile) a = NULL;
  g_autoptr(SbxProfile) b = NULL;
  g_autoptr(SbxProfile) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;

  tree_setup (&tree);
  a = spec_profile (&tree, row->a);
  b = spec_profile (&tree, row->b);
  r = sbx_profile_restrict (a, b, &error);
  g_assert_no_error (error);
  path = g_str_equal (row->path, ".") ? g_strdup (tree.tmp) : g_build_filename (tree.tmp, row->path, NULL);
  g_assert_cmpint (access_of (r, "filesystem.read", path), ==, row->read);
  g_assert_cmpint (access_of (r, "filesystem.write", path), ==, row->write);
  check_pair (&tree, a, b);
  check_idempotent (&tree, a);
  tree_teardown (&tree);
}

/* What restrict keeps and drops, and the scalar rules. */
static void
test_roots_kept_and_dropped (void)
{
  Tree tree;
  g_autoptr(SbxProfile) a = NULL;
  g_autoptr(SbxProfile) b = NULL;
  g_autoptr(SbxProfile) r = NULL;
  g_autoptr(GError) error = NULL;

  tree_setup (&tree);
  /* b's root o/p only repeats what b's enclosing root o gives, and a has no
   * root there: the result needs o (narrowed) but not o/p. */
  a = spec_profile (&tree, "ws=AA host=GG net=A cmd=A");
  b = spec_profile (&tree, "ws=AA host=AA root:o=GD root:o/p=GD net=G cmd=D");
  r = sbx_profile_restrict (a, b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sbx_profile_get_n_roots (r), ==, 1);
  g_assert_true (g_str_has_suffix (sbx_profile_get_root_path (r, 0), "/o"));
  g_assert_cmpint (sbx_profile_get_root_read (r, 0), ==, SBX_ACCESS_GATED);
  g_assert_cmpint (sbx_profile_get_root_write (r, 0), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_network (r), ==, SBX_ACCESS_GATED);
  g_assert_cmpint (sbx_profile_get_command (r), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_host_read (r), ==, SBX_ACCESS_GATED);
  /* Upstream §9 item 8: restricted roots keep Gated/Deny, so ReadBoundary
   * is required. */
  g_assert_true (sbx_profile_get_required_guarantees (r) & SBX_GUARANTEE_READ_BOUNDARY);
  g_clear_pointer (&r, sbx_profile_unref);

  /* A root of both inputs is kept even when it adds nothing. */
  g_clear_pointer (&a, sbx_profile_unref);
  g_clear_pointer (&b, sbx_profile_unref);
  a = spec_profile (&tree, "ws=AA host=DD root:ws/a=AA");
  b = spec_profile (&tree, "ws=AA host=DD root:ws/a=AA");
  r = sbx_profile_restrict (a, b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sbx_profile_get_n_roots (r), ==, 1);
  tree_teardown (&tree);
}

static void
test_restrict_scalars_and_inputs (void)
{
  Tree tree;
  g_autoptr(SbxProfileConfig) ca = sbx_profile_config_new ();
  g_autoptr(SbxProfileConfig) cb = sbx_profile_config_new ();
  g_autoptr(SbxProfile) a = NULL;
  g_autoptr(SbxProfile) b = NULL;
  g_autoptr(SbxProfile) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *fa = NULL;
  g_autofree char *fb = NULL;

  tree_setup (&tree);
  /* Both unconfined and acknowledged: the result is too. */
  sbx_profile_config_set_workspace (ca, tree.paths[ws_index ()], SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (ca, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (ca, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_command (ca, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_isolation (ca, SBX_ISOLATION_UNCONFINED);
  sbx_profile_config_set_ack_unconfined (ca, TRUE);
  sbx_profile_config_set_home (ca, SBX_HOME_REAL);
  sbx_profile_config_set_limits (ca, 0, 100, 7);
  sbx_profile_config_set_unix_sockets (ca, TRUE);
  a = sbx_profile_new (ca, &error);
  g_assert_no_error (error);
  r = sbx_profile_restrict (a, a, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_profile_get_isolation (r), ==, SBX_ISOLATION_UNCONFINED);
  g_assert_true (sbx_profile_get_ack_unconfined (r));
  g_assert_cmpint (sbx_profile_get_home (r), ==, SBX_HOME_REAL);
  g_assert_true (sbx_profile_get_unix_sockets (r));
  g_clear_pointer (&r, sbx_profile_unref);

  /* With a sandboxed ceiling: sandboxed, not acknowledged, isolated HOME. */
  sbx_profile_config_set_workspace (cb, tree.paths[ws_index ()], SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (cb, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (cb, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_limits (cb, 5, 200, 0);
  b = sbx_profile_new (cb, &error);
  g_assert_no_error (error);
  fa = g_strdup (sbx_profile_get_fingerprint (a));
  fb = g_strdup (sbx_profile_get_fingerprint (b));
  r = sbx_profile_restrict (a, b, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_profile_get_isolation (r), ==, SBX_ISOLATION_SANDBOXED);
  g_assert_false (sbx_profile_get_ack_unconfined (r));
  g_assert_cmpint (sbx_profile_get_home (r), ==, SBX_HOME_ISOLATED);
  g_assert_cmpint (sbx_profile_get_command (r), ==, SBX_ACCESS_DENY);
  /* unix sockets open only when both open them */
  g_assert_false (sbx_profile_get_unix_sockets (r));
  g_clear_pointer (&r, sbx_profile_unref);
  r = sbx_profile_restrict (b, a, &error);
  g_assert_no_error (error);
  g_assert_false (sbx_profile_get_unix_sockets (r));
  g_clear_pointer (&r, sbx_profile_unref);
  r = sbx_profile_restrict (a, b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sbx_profile_get_max_processes (r), ==, 5);
  g_assert_cmpuint (sbx_profile_get_max_memory (r), ==, 100);
  g_assert_cmpuint (sbx_profile_get_max_open_files (r), ==, 7);
  /* Inputs untouched. */
  g_assert_cmpstr (sbx_profile_get_fingerprint (a), ==, fa);
  g_assert_cmpstr (sbx_profile_get_fingerprint (b), ==, fb);
  g_assert_cmpint (sbx_profile_get_isolation (a), ==, SBX_ISOLATION_UNCONFINED);
  tree_teardown (&tree);
}

static void
test_restrict_errors (void)
{
  Tree tree;
  g_autoptr(SbxProfileConfig) ca = sbx_profile_config_new ();
  g_autoptr(SbxProfileConfig) cb = sbx_profile_config_new ();
  g_autoptr(SbxProfile) a = NULL;
  g_autoptr(SbxProfile) b = NULL;
  g_autoptr(GError) error = NULL;

  tree_setup (&tree);
  sbx_profile_config_set_workspace (ca, tree.paths[ws_index ()], SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_workspace (cb, tree.paths[ws_index () + 1], SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  a = sbx_profile_new (ca, &error);
  g_assert_no_error (error);
  b = sbx_profile_new (cb, &error);
  g_assert_no_error (error);

  g_assert_null (sbx_profile_restrict (a, b, &error));
  g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_WORKSPACE_MISMATCH);
  g_assert_nonnull (strstr (error->message, "workspace roots differ"));
  g_assert_nonnull (strstr (error->message, tree.paths[ws_index () + 1]));
  g_clear_error (&error);

  g_assert_null (sbx_profile_restrict (NULL, a, &error));
  g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "base"));
  g_clear_error (&error);
  g_assert_null (sbx_profile_restrict (a, NULL, &error));
  g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "ceiling"));
  g_clear_error (&error);
  tree_teardown (&tree);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (restrict_rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/profile/restrict/row/%s", restrict_rows[i].name);

      g_test_add_data_func (path, &restrict_rows[i], test_restrict_row);
    }
  g_test_add_func ("/profile/restrict/roots-kept-and-dropped", test_roots_kept_and_dropped);
  g_test_add_func ("/profile/restrict/scalars-and-inputs", test_restrict_scalars_and_inputs);
  g_test_add_func ("/profile/restrict/errors", test_restrict_errors);
  g_test_add_func ("/profile/restrict/property/never-widens", test_property);
  return g_test_run ();
}
