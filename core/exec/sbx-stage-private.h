/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stages (docs/staging.md): where a staged run's writes wait for review.
 * Never installed.
 *
 * A stage is a 0700 directory STAGES/ID (STAGES: sbx_stage_root_dir()):
 *   stage.ini   what it stages: [stage] created, backend, command, roots;
 *               [root N] path
 *   started     an empty file created just before the spawn: its ctime is
 *               the moment after which a host change is a conflict
 *   N/upper     root N's overlay upper layer (what the run wrote)
 *   N/work      overlayfs's work directory
 *   N/host.list every object under root N just before "started", one
 *               "<type><path relative to the root>\0" record each (type:
 *               'd' a directory, '-' anything else): what existed at the
 *               start, so that a host deletion of a path the run changed
 *               is a conflict too
 * It outlives the run and the process that made it, until applied or
 * discarded (both remove it whole).
 */
#pragma once

#include <gio/gio.h>
#include "sbx-plugin-backend.h"

G_BEGIN_DECLS

typedef struct
{
  char           *id;
  char           *dir;
  guint           n_roots;
  char          **paths;    /* the host roots, canonical */
  char          **uppers;
  char          **works;
  SbxStageRootV1 *roots;    /* the spawn request's view of the above */
} SbxStage;

/* $XDG_STATE_HOME/sbx/stages (not created). */
char     *sbx_stage_root_dir (void);
/* A new stage for @policy's writable roots (workspace, roots).  Refuses
 * (G_IO_ERROR_NOT_SUPPORTED, naming it) a writable host root and a root
 * whose path overlayfs cannot take (',', ':' or '\'); G_IO_ERROR_* for
 * the directories.  Nothing is left behind on failure. */
SbxStage *sbx_stage_new      (const SbxPolicyV1  *policy,
                              const char         *backend,
                              const char *const  *argv,
                              GError            **error);
void      sbx_stage_free     (SbxStage           *stage);
/* Removes the directory @dir and everything in it, never following a
 * symlink, making unreadable directories (overlayfs's work/work) readable
 * first.  A missing @dir is not an error. */
gboolean  sbx_stage_remove_tree (const char      *dir,
                                 GError         **error);
/* The same beneath the directory fd @dirfd (may be AT_FDCWD). */
gboolean  sbx_stage_remove_at   (int              dirfd,
                                 const char      *name,
                                 GError         **error);
/* Whether @id is a well-formed stage ID (no '/', no dot first). */
gboolean  sbx_stage_id_is_valid (const char      *id);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxStage, sbx_stage_free)

G_END_DECLS
