/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox's /tmp at rung 1: the executor's TMPDIR, bound at /tmp, with
 * TMPDIR=/tmp in the target's environment.
 *
 * Why: the executor's TMPDIR lies in the set's scratch directory
 * (/tmp/sandbox-executors-XXXXXX/tmp-XXXXXX, 40 bytes and more), which
 * leaves little of the 108 bytes of a unix socket address, and programs
 * that write to /tmp by name find nothing writable there.
 *
 * The layout, and why it is this one: a bind of TMPDIR over /tmp hides
 * every other path of the view under /tmp, and a mountpoint for one of
 * them would have to be created inside the bound TMPDIR, that is in the
 * host's directory (the view never creates anything on the host).  So:
 *  - the isolated HOME, which lies beside TMPDIR in the set's scratch
 *    directory, is shown at SBX_LINUX_VIEW_HOME instead when its path lies
 *    under /tmp (HOME= follows), a directory made in the view's own root;
 *  - anything else the view shows under /tmp (a workspace or root there, a
 *    grant's path) keeps its own path, and then TMPDIR is not moved: it
 *    stays the long path, and the report says why;
 *  - likewise when the view's root is the host's (host read allowed):
 *    nothing can be made in it for HOME, and the host's /tmp stays hidden
 *    as before.
 * The policy's rules stay on the host paths: Landlock's rules hold on the
 * inodes, wherever they are mounted; the connect supervisor and the chmod
 * supervisor resolve names in the target's own view.  Rung 2 has no mount
 * namespace: TMPDIR stays the long path there.
 *
 * PATH, where the view's root is ours, keeps only the entries the view
 * shows (sbx_linux_mount_plan_shows, here with the other rewrites of the
 * target's environment).
 */
#include <string.h>

#include "sbx-linux-private.h"

static gboolean
under (const char *path,
       const char *ancestor)
{
  gsize len = strlen (ancestor);

  return strncmp (path, ancestor, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

static const char *
origin_name (uint32_t origin)
{
  switch (origin)
    {
    case SBX_FS_ORIGIN_WORKSPACE:
      return "the workspace";
    case SBX_FS_ORIGIN_ROOT:
      return "the root";
    case SBX_FS_ORIGIN_GRANT:
      return "the granted path";
    case SBX_FS_ORIGIN_HOME:
      return "HOME";
    case SBX_FS_ORIGIN_RUNTIME:
      return "the runtime path";
    default:
      return "the shown path";
    }
}

gboolean
sbx_linux_view_tmp_decide (const SbxPolicyV1 *policy,
                           const SbxFsRuleV1 *rules,
                           gsize              n_rules,
                           gboolean           root_is_host,
                           gboolean          *move_home,
                           char             **why_not)
{
  gboolean has_tmpdir = FALSE, home_under_tmp = FALSE;

  *move_home = FALSE;
  *why_not = NULL;
  if (policy->tmpdir == NULL)
    {
      *why_not = g_strdup ("the policy names no TMPDIR");
      return FALSE;
    }
  if (root_is_host)
    {
      *why_not = g_strdup ("the view's root is the host's (host read allowed): nothing can be made in it, "
                           "and the host's /tmp stays hidden");
      return FALSE;
    }
  for (gsize i = 0; i < n_rules; i++)
    {
      const SbxFsRuleV1 *r = &rules[i];
      gboolean shown = (r->allow & SBX_FS_ALL) != 0;

      if (r->origin == SBX_FS_ORIGIN_TMPDIR && strcmp (r->path, policy->tmpdir) == 0)
        {
          has_tmpdir = TRUE;
          continue;
        }
      if (!shown || r->origin == SBX_FS_ORIGIN_DEVICE)
        continue;   /* hidden: nothing of it is mounted under /tmp */
      if (r->origin == SBX_FS_ORIGIN_HOME && policy->home != NULL && strcmp (r->path, policy->home) == 0
          && under (r->path, "/tmp"))
        {
          home_under_tmp = TRUE;
          continue;
        }
      if (under (r->path, "/tmp"))
        {
          *why_not = g_strdup_printf ("%s %s lies under /tmp, which the executor's TMPDIR would cover",
                                      origin_name (r->origin), r->path);
          return FALSE;
        }
    }
  if (!has_tmpdir)
    {
      *why_not = g_strdup ("the policy gives TMPDIR no rule of its own");
      return FALSE;
    }
  if (home_under_tmp)
    for (gsize i = 0; i < n_rules; i++)
      {
        const SbxFsRuleV1 *r = &rules[i];

        if ((r->allow & SBX_FS_ALL) == 0 || strcmp (r->path, "/") == 0)
          continue;
        if (under (r->path, SBX_LINUX_VIEW_HOME) || under (SBX_LINUX_VIEW_HOME, r->path))
          {
            *why_not = g_strdup_printf ("HOME lies under /tmp and %s %s takes the place it would be "
                                        "shown at (" SBX_LINUX_VIEW_HOME ")", origin_name (r->origin),
                                        r->path);
            return FALSE;
          }
      }
  *move_home = home_under_tmp;
  return TRUE;
}

gboolean
sbx_linux_mount_plan_shows (const SbxLinuxMountPlan *plan,
                            const char              *path)
{
  if (plan->root_is_host || path[0] != '/')
    return TRUE;
  for (gsize i = 0; i < plan->n_ops; i++)
    if ((plan->ops[i].kind == SBX_MOUNT_OP_BIND || plan->ops[i].kind == SBX_MOUNT_OP_TMPFS)
        && under (path, plan->ops[i].path))
      return TRUE;
  for (gsize i = 0; i < plan->n_skeleton; i++)
    if (strcmp (path, plan->skeleton[i].path) == 0)
      return TRUE;
  return strcmp (path, "/") == 0 || under (path, "/dev") || under (path, "/proc");
}

/* "PATH=" with the entries the view shows (sbx_linux_mount_plan_shows()):
 * an entry outside it can never hold a command there, and with the view
 * supervisor's root each search through it (every command a shell or make
 * runs, for a caller's ~/.cargo/bin first in PATH) would be a round trip,
 * an EACCES and a denial the command never asked for.  @entry is
 * "PATH=..." (allocated result). */
static char *
view_search_path (const SbxLinuxMountPlan *plan,
                  const char              *entry)
{
  g_auto(GStrv) dirs = g_strsplit (entry + 5, ":", -1);
  g_autoptr(GString) kept = g_string_new ("PATH=");
  guint n = 0;

  for (guint i = 0; dirs[i] != NULL; i++)
    {
      if (!sbx_linux_mount_plan_shows (plan, dirs[i]))
        continue;
      if (n++ > 0)
        g_string_append_c (kept, ':');
      g_string_append (kept, dirs[i]);
    }
  return g_string_free (g_steal_pointer (&kept), FALSE);
}

GPtrArray *
sbx_linux_view_envp (const SbxLinuxSpec *spec,
                     GPtrArray          *given,
                     const char *const  *envp)
{
  const SbxLinuxMountPlan *plan = spec->mounts;
  g_autoptr(GPtrArray) in = given;
  GPtrArray *out;

  if (plan == NULL || (plan->tmp_source == NULL && plan->root_is_host))
    return g_steal_pointer (&in);
  if (in != NULL)
    envp = (const char *const *) in->pdata;
  out = g_ptr_array_new_with_free_func (g_free);
  for (; *envp != NULL; envp++)
    {
      /* Exactly the values the core forced (sbx-executor.c): anything
       * else the caller set is the caller's. */
      if (plan->tmp_source != NULL && strncmp (*envp, "TMPDIR=", 7) == 0
          && strcmp (*envp + 7, plan->tmp_source) == 0)
        g_ptr_array_add (out, g_strdup ("TMPDIR=" SBX_LINUX_VIEW_TMP));
      else if (plan->home_source != NULL && strncmp (*envp, "HOME=", 5) == 0
               && strcmp (*envp + 5, plan->home_source) == 0)
        g_ptr_array_add (out, g_strdup ("HOME=" SBX_LINUX_VIEW_HOME));
      else if (!plan->root_is_host && strncmp (*envp, "PATH=", 5) == 0)
        g_ptr_array_add (out, view_search_path (plan, *envp));
      else
        g_ptr_array_add (out, g_strdup (*envp));
    }
  g_ptr_array_add (out, NULL);
  return out;
}

char *
sbx_linux_view_path (const SbxLinuxSpec *spec,
                     const char         *path)
{
  const SbxLinuxMountPlan *plan = spec->mounts;

  if (plan == NULL || plan->tmp_source == NULL || path == NULL)
    return NULL;
  if (under (path, plan->tmp_source))
    return g_strconcat (SBX_LINUX_VIEW_TMP, path + strlen (plan->tmp_source), NULL);
  if (plan->home_source != NULL && under (path, plan->home_source))
    return g_strconcat (SBX_LINUX_VIEW_HOME, path + strlen (plan->home_source), NULL);
  return NULL;
}

void
sbx_linux_view_tmp_report (const SbxLinuxReporter *reporter,
                           const SbxLinuxSpec     *spec,
                           const SbxPolicyV1      *policy)
{
  g_autofree char *detail = NULL;
  const SbxLinuxMountPlan *plan = spec->mounts;

  if (policy->tmpdir == NULL)
    return;
  if (spec->rung != SBX_LINUX_RUNG_USERNS)
    detail = g_strdup_printf ("TMPDIR is %s, the executor's own directory (no mount namespace at this rung, "
                              "so it cannot be shown at /tmp); /tmp is the host's, as the policy rules it",
                              policy->tmpdir);
  else if (plan != NULL && plan->tmp_source != NULL)
    detail = g_strdup_printf ("/tmp is the executor's own TMPDIR (%s on the host, private to it) and "
                              "TMPDIR=/tmp%s", plan->tmp_source,
                              plan->home_source != NULL
                              ? "; the isolated HOME, which lies under the host's /tmp beside it, is "
                                "shown at " SBX_LINUX_VIEW_HOME " (HOME=" SBX_LINUX_VIEW_HOME ")" : "");
  else
    detail = g_strdup_printf ("TMPDIR is %s, the executor's own directory, and /tmp %s: %s", policy->tmpdir,
                              plan != NULL && plan->root_is_host ? "is hidden" : "is not the executor's",
                              plan != NULL && plan->tmp_why_not != NULL ? plan->tmp_why_not : "no view");
  sbx_linux_report (reporter, "tmp", SBX_ABI_REPORT_ENFORCED, detail);
}
