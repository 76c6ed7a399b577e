/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Staged spawns, the parent's side: which bind of the compiled view each
 * stage root replaces.  The view is compiled once per executor; a staged
 * spawn keeps it and swaps, for this one sandbox, each listed writable
 * bind for an overlay (sbx-linux-child-stage.c), so a staged spawn never
 * goes through the zygote or a warm sandbox (their views are built ahead).
 */
#include "sbx-linux-private.h"
#include "sbx-linux-stage.h"

#include <string.h>

static gboolean
path_is_below (const char *path,
               const char *ancestor)
{
  gsize len = strlen (ancestor);

  if (strcmp (ancestor, "/") == 0)
    return path[0] == '/' && path[1] != '\0';
  return strncmp (path, ancestor, len) == 0 && path[len] == '/';
}

/* overlayfs splits lowerdir on ':' and a legacy option string on ',', and
 * both unescape '\': such a path cannot be passed through unchanged. */
static gboolean
path_is_overlay_safe (const char *path)
{
  return path != NULL && path[0] == '/' && strpbrk (path, ",:\\") == NULL;
}

const SbxLinuxStageMount **
sbx_linux_stage_plan (const SbxLinuxSpec      *spec,
                      const SbxSpawnRequestV1 *request,
                      int32_t                 *out_status,
                      char                   **error_message)
{
  const SbxLinuxMountPlan *plan = spec->mounts;
  g_autofree const SbxLinuxStageMount **per_op = NULL;
  SbxLinuxStageMount *mounts;
  gsize n_ops;

  *out_status = SBX_STATUS_UNSUPPORTED;
  if (spec->rung != SBX_LINUX_RUNG_USERNS || plan == NULL)
    {
      *error_message = g_strdup (SBX_LINUX_BACKEND_LANDLOCK ": a staged run needs a mount namespace "
                                                            "for its overlay, and this rung has none; the run is refused "
                                                            "rather than run unstaged");
      return NULL;
    }
  if (request->struct_size < SBX_SPAWN_REQUEST_V1_STAGE_SIZE || request->stage_roots == NULL
      || request->n_stage_roots == 0 || request->n_stage_roots > SBX_LINUX_MAX_STAGE_ROOTS)
    {
      *out_status = SBX_STATUS_INVALID;
      *error_message = g_strdup_printf ("spawn request: SBX_SPAWN_STAGED needs 1 to %d stage roots",
                                        SBX_LINUX_MAX_STAGE_ROOTS);
      return NULL;
    }
  if (plan->root_is_host && !(plan->root_flags & SBX_MOUNT_F_RDONLY))
    {
      *error_message = g_strdup (SBX_LINUX_BACKEND_USERNS ": the host root / is writable in this "
                                                          "view and cannot be staged");
      return NULL;
    }

  n_ops = plan->n_ops;
  /* One block: the per-op table, then the overlays it points to. */
  per_op = g_malloc0 ((n_ops + 1) * sizeof (gpointer) + request->n_stage_roots * sizeof (SbxLinuxStageMount));
  mounts = (SbxLinuxStageMount *) (gpointer) (per_op + n_ops + 1);
  for (uint32_t k = 0; k < request->n_stage_roots; k++)
    {
      const SbxStageRootV1 *root = &request->stage_roots[k];
      gsize i;

      if (root->struct_size < SBX_STAGE_ROOT_V1_MIN_SIZE || !path_is_overlay_safe (root->path)
          || !path_is_overlay_safe (root->upper) || !path_is_overlay_safe (root->work))
        {
          *out_status = SBX_STATUS_INVALID;
          *error_message = g_strdup_printf ("spawn request: stage root %u (%s) is malformed or has a "
                                            "path with ',', ':' or '\\'", k,
                                            root->path != NULL ? root->path : "(null)");
          return NULL;
        }
      for (i = 0; i < n_ops; i++)
        {
          const SbxMountOp *op = &plan->ops[i];

          if (op->kind == SBX_MOUNT_OP_BIND && op->source == NULL && strcmp (op->path, root->path) == 0
              && (op->flags & SBX_MOUNT_F_DIR) && !(op->flags & SBX_MOUNT_F_RDONLY))
            break;
        }
      if (i == n_ops)
        {
          *error_message = g_strdup_printf (SBX_LINUX_BACKEND_USERNS ": the writable root %s is not "
                                                                     "a writable directory of its own in this view and cannot "
                                                                     "be staged", root->path);
          return NULL;
        }
      mounts[k].lower = root->path;
      mounts[k].upper = root->upper;
      mounts[k].work = root->work;
      per_op[i] = &mounts[k];
    }
  /* A writable bind below a staged root that is not staged itself would
   * let the target write the host through the staged tree. */
  for (gsize i = 0; i < n_ops; i++)
    {
      const SbxMountOp *op = &plan->ops[i];

      if (op->kind != SBX_MOUNT_OP_BIND || (op->flags & SBX_MOUNT_F_RDONLY) || per_op[i] != NULL)
        continue;
      for (uint32_t k = 0; k < request->n_stage_roots; k++)
        if (path_is_below (op->path, request->stage_roots[k].path))
          {
            *error_message = g_strdup_printf (SBX_LINUX_BACKEND_USERNS ": %s is writable inside the "
                                                                       "staged root %s but not staged itself; the run is "
                                                                       "refused", op->path, request->stage_roots[k].path);
            return NULL;
          }
    }
  *out_status = SBX_STATUS_OK;
  return g_steal_pointer (&per_op);
}
