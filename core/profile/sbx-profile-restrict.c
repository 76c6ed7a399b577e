/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-profile-struct-private.h"

#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

#include "sbx-fingerprint-private.h"
#include "sbx-path-private.h"

/* ------------------------------------------------------------------------- */
/* Restrict */

typedef struct
{
  char     *path;      /* borrowed from an input */
  SbxAccess read;
  SbxAccess write;
  gboolean  in_both;
} Candidate;

static int
compare_candidates (gconstpointer a,
                    gconstpointer b)
{
  const Candidate *ca = a;
  const Candidate *cb = b;
  size_t la = strlen (ca->path);
  size_t lb = strlen (cb->path);

  if (la != lb)
    return la < lb ? -1 : 1;
  return strcmp (ca->path, cb->path);
}

static int
compare_roots (gconstpointer a,
               gconstpointer b)
{
  const SbxProfileRoot *ra = a;
  const SbxProfileRoot *rb = b;

  return strcmp (ra->path, rb->path);
}

static SbxAccess
min_access (SbxAccess a,
            SbxAccess b)
{
  return MIN (a, b);
}

/* Limits: 0 means "no limit", so it is the largest value. */
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

/**
 * sbx_profile_restrict:
 * @base: (nullable): a [struct@Sbx.Profile]
 * @ceiling: (nullable): a [struct@Sbx.Profile] with the same workspace root
 * @error: return location for a [error@Sbx.ProfileError]
 *
 * Narrows @base by @ceiling: the result allows nothing either input does
 * not allow.  Neither input changes.
 *
 * - Workspace, host, network and command access, home and isolation are
 *   each the minimum (Deny < Gated < Allow; isolated HOME and sandboxed
 *   win).  Resource limits are the smaller (a limit beats "no limit").
 *   Denied paths are %SBX_DENIED_PATHS_NOT_FOUND when either input says so
 *   (it reveals less: whether a denied host path exists).
 * - The acknowledgement is kept only when the result is unconfined and both
 *   inputs acknowledged it.
 * - Filesystem access is the exact pathwise minimum: for every path P,
 *   `access_for (result, P)` equals the smaller of `access_for (base, P)` and
 *   `access_for (ceiling, P)`, on each axis.  The result's candidate roots
 *   are every root of either input, each with the minimum of what the two
 *   inputs resolve there; a candidate is dropped only when it is a root of
 *   one input alone and the roots kept so far (visited shortest path
 *   first) already resolve its path to the same access, so dropping it
 *   changes no path.  Upstream dropped nested roots whose access equalled
 *   the host's, which could widen; this cannot.
 * - A "tree:" scope is Deny unless its path is a root of the result, and
 *   never more than the pathwise minimum at its path.  A root of both inputs
 *   stays a root, so `restrict (p, p)` equals p (same fingerprint), and the
 *   result does not depend on the argument order.
 *
 * The result is re-validated (every rule that does not touch the
 * filesystem: the inputs' paths are canonical already, and resolving them
 * again could move a root) and re-fingerprinted.
 *
 * Errors: %SBX_PROFILE_ERROR_INVALID for a %NULL input,
 * %SBX_PROFILE_ERROR_WORKSPACE_MISMATCH when the workspace roots differ.
 *
 * Returns: (transfer full) (nullable): the narrowed profile, or %NULL with
 *   @error set
 *
 * Since: 0.1
 */
static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The host sockets of the restriction with @access: each name of either
 * profile (allowed or gated) whose lesser access in the two is @access
 * ("unix-sockets": "allow" reaches every socket), sorted.  Symmetric, like
 * every other member. */
static char **
restrict_host_sockets (SbxProfile *base,
                       SbxProfile *ceiling,
                       SbxAccess   access)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  SbxProfile *sides[] = { base, ceiling };

  for (guint s = 0; s < 2; s++)
    for (guint list = 0; list < 2; list++)
      {
        char **names = list == 0 ? sides[s]->host_sockets : sides[s]->gated_host_sockets;

        for (guint i = 0; names[i] != NULL; i++)
          if (min_access (sbx_profile_host_socket_access (base, names[i]),
                          sbx_profile_host_socket_access (ceiling, names[i])) == access
              && !g_ptr_array_find_with_equal_func (out, names[i], g_str_equal, NULL))
            g_ptr_array_add (out, g_strdup (names[i]));
      }
  g_ptr_array_sort (out, compare_names);
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

SbxProfile *
sbx_profile_restrict (SbxProfile  *base,
                      SbxProfile  *ceiling,
                      GError     **error)
{
  g_autoptr(SbxProfileOwned) result = NULL;
  g_autoptr(GArray) candidates = NULL;
  g_autoptr(GArray) kept = NULL;
  guint i, j;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (base == NULL || base->fingerprint == NULL || ceiling == NULL || ceiling->fingerprint == NULL)
    {
      sbx_profile_set_invalid (error, "restrict: %s is not a valid profile",
                               base == NULL || base->fingerprint == NULL ? "base" : "ceiling");
      return NULL;
    }
  if (!g_str_equal (base->workspace_root, ceiling->workspace_root))
    {
      g_autofree char *a = sbx_profile_display (base->workspace_root);
      g_autofree char *b = sbx_profile_display (ceiling->workspace_root);

      g_set_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_WORKSPACE_MISMATCH,
                   "restrict: workspace roots differ (%s vs %s)", a, b);
      return NULL;
    }

  result = g_new0 (SbxProfile, 1);
  g_atomic_ref_count_init (&result->ref_count);
  result->workspace_root = g_strdup (base->workspace_root);
  result->workspace_read = min_access (base->workspace_read, ceiling->workspace_read);
  result->workspace_write = min_access (base->workspace_write, ceiling->workspace_write);
  result->host_read = min_access (base->host_read, ceiling->host_read);
  result->host_write = min_access (base->host_write, ceiling->host_write);
  result->network = min_access (base->network, ceiling->network);
  result->command = min_access (base->command, ceiling->command);
  result->home = MIN (base->home, ceiling->home);
  result->isolation = MIN (base->isolation, ceiling->isolation);
  result->ack_unconfined = result->isolation == SBX_ISOLATION_UNCONFINED
                           && base->ack_unconfined && ceiling->ack_unconfined;
  result->unix_sockets = base->unix_sockets && ceiling->unix_sockets;
  /* not-found reveals less (whether a denied host path exists), so it wins */
  result->denied_paths = MAX (base->denied_paths, ceiling->denied_paths);
  result->host_sockets = restrict_host_sockets (base, ceiling, SBX_ACCESS_ALLOW);
  result->gated_host_sockets = restrict_host_sockets (base, ceiling, SBX_ACCESS_GATED);
  result->max_processes = min_limit (base->max_processes, ceiling->max_processes);
  result->max_memory = min_limit (base->max_memory, ceiling->max_memory);
  result->max_open_files = min_limit (base->max_open_files, ceiling->max_open_files);

  /* Candidates: the union of both (sorted) root lists. */
  candidates = g_array_new (FALSE, FALSE, sizeof (Candidate));
  for (i = 0, j = 0; i < base->n_roots || j < ceiling->n_roots;)
    {
      Candidate c = { NULL, SBX_ACCESS_DENY, SBX_ACCESS_DENY, FALSE };
      int cmp;

      if (i == base->n_roots)
        cmp = 1;
      else if (j == ceiling->n_roots)
        cmp = -1;
      else
        cmp = strcmp (base->roots[i].path, ceiling->roots[j].path);
      if (cmp <= 0)
        c.path = base->roots[i].path;
      else
        c.path = ceiling->roots[j].path;
      c.in_both = cmp == 0;
      if (cmp <= 0)
        i++;
      if (cmp >= 0)
        j++;
      c.read = min_access (sbx_profile_access_at_path (base, FALSE, c.path),
                           sbx_profile_access_at_path (ceiling, FALSE, c.path));
      c.write = min_access (sbx_profile_access_at_path (base, TRUE, c.path),
                            sbx_profile_access_at_path (ceiling, TRUE, c.path));
      g_array_append_val (candidates, c);
    }

  /*
   * With every candidate kept, the deepest candidate (or the workspace)
   * containing any path P is at least as deep as each input's own deepest
   * root containing P, and each input resolves that candidate exactly as it
   * resolves P; so the result resolves P to the exact minimum.  Visiting
   * candidates shortest first, dropping one whose access equals what the
   * kept roots already give at its path moves the paths it decided to its
   * nearest enclosing kept root, which has that same access: no path
   * changes.  Roots of both inputs are always kept (see the doc comment).
   */
  g_array_sort (candidates, compare_candidates);
  kept = g_array_new (FALSE, FALSE, sizeof (SbxProfileRoot));
  for (i = 0; i < candidates->len; i++)
    {
      const Candidate *c = &g_array_index (candidates, Candidate, i);
      SbxProfileRoot root = { NULL, c->read, c->write };

      /* Resolve c->path against the result as built so far. */
      if (!c->in_both
          && sbx_profile_access_at_path_with_roots (result, (SbxProfileRoot *) (void *) kept->data, kept->len,
                                                    FALSE, c->path) == c->read
          && sbx_profile_access_at_path_with_roots (result, (SbxProfileRoot *) (void *) kept->data, kept->len,
                                                    TRUE, c->path) == c->write)
        continue;
      root.path = g_strdup (c->path);
      g_array_append_val (kept, root);
    }
  g_array_sort (kept, compare_roots);
  result->n_roots = kept->len;
  result->roots = (SbxProfileRoot *) (void *) g_array_free (g_steal_pointer (&kept), FALSE);

  if (!sbx_profile_finish (result, SBX_PROFILE_NAMES_API, NULL, error))
    {
      g_prefix_error (error, "restrict: ");
      return NULL;
    }
  return g_steal_pointer (&result);
}
