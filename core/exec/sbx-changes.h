/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_CHANGES_H
#define SBX_CHANGES_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <gio/gio.h>
#include "sbx-version.h"

G_BEGIN_DECLS

/**
 * SbxChangeKind:
 * @SBX_CHANGE_ADDED: the path is new.
 * @SBX_CHANGE_MODIFIED: a regular file's content changed (its mode may too).
 * @SBX_CHANGE_DELETED: the path was removed (a directory with its tree).
 * @SBX_CHANGE_TYPE_CHANGED: the path became another kind of file (a file
 *   became a directory, a directory a symbolic link, ...).
 * @SBX_CHANGE_MODE_CHANGED: only the permission bits changed.
 * @SBX_CHANGE_LINK_CHANGED: a symbolic link points elsewhere.
 * @SBX_CHANGE_REFUSED: the run made something apply never creates (a
 *   device node, a FIFO, a socket); listed, never applied.
 *
 * What a staged run did to one path.
 *
 * Since: 0.2
 */
typedef enum
{
  SBX_CHANGE_ADDED,
  SBX_CHANGE_MODIFIED,
  SBX_CHANGE_DELETED,
  SBX_CHANGE_TYPE_CHANGED,
  SBX_CHANGE_MODE_CHANGED,
  SBX_CHANGE_LINK_CHANGED,
  SBX_CHANGE_REFUSED,
} SbxChangeKind;

/**
 * SbxChangesError:
 * @SBX_CHANGES_ERROR_NOT_FOUND: no stage has this ID.
 * @SBX_CHANGES_ERROR_INVALID: the stage is malformed, or a path given is
 *   not one of its changes.
 * @SBX_CHANGES_ERROR_CONFLICT: apply kept the host's version of paths the
 *   host changed after the run began (or refused ones); the rest was applied.
 * @SBX_CHANGES_ERROR_FAILED: reading the stage or writing the host failed.
 *
 * Errors of [class@Sbx.Changes].
 *
 * Since: 0.2
 */
typedef enum
{
  SBX_CHANGES_ERROR_NOT_FOUND,
  SBX_CHANGES_ERROR_INVALID,
  SBX_CHANGES_ERROR_CONFLICT,
  SBX_CHANGES_ERROR_FAILED,
} SbxChangesError;

#define SBX_CHANGES_ERROR (sbx_changes_error_quark ())
SBX_AVAILABLE_IN_0_2
GQuark sbx_changes_error_quark (void);

#define SBX_TYPE_CHANGES (sbx_changes_get_type ())
SBX_AVAILABLE_IN_0_2
  G_DECLARE_FINAL_TYPE (SbxChanges, sbx_changes, SBX, CHANGES, GObject)

SBX_AVAILABLE_IN_0_2
char         **sbx_changes_list_stages  (GError             **error);
SBX_AVAILABLE_IN_0_2
SbxChanges    *sbx_changes_open         (const char          *stage_id,
                                         GError             **error);
SBX_AVAILABLE_IN_0_2
const char    *sbx_changes_get_id       (SbxChanges          *self);
SBX_AVAILABLE_IN_0_2
const char    *sbx_changes_get_dir      (SbxChanges          *self);
SBX_AVAILABLE_IN_0_2
const char    *sbx_changes_get_command  (SbxChanges          *self);
SBX_AVAILABLE_IN_0_2
GDateTime     *sbx_changes_get_created  (SbxChanges          *self);
SBX_AVAILABLE_IN_0_2
guint          sbx_changes_get_n_changes (SbxChanges         *self);
SBX_AVAILABLE_IN_0_2
const char    *sbx_changes_get_path     (SbxChanges          *self,
                                         guint                index);
SBX_AVAILABLE_IN_0_2
SbxChangeKind  sbx_changes_get_kind     (SbxChanges          *self,
                                         guint                index);
SBX_AVAILABLE_IN_0_2
gboolean       sbx_changes_get_conflict (SbxChanges          *self,
                                         guint                index);
SBX_AVAILABLE_IN_0_2
char          *sbx_changes_get_summary  (SbxChanges          *self);
SBX_AVAILABLE_IN_0_2
char          *sbx_changes_get_diff     (SbxChanges          *self,
                                         const char          *path,
                                         GError             **error);
SBX_AVAILABLE_IN_0_2
gboolean       sbx_changes_apply        (SbxChanges             *self,
                                         const char *const      *paths,
                                         GFileProgressCallback   progress,
                                         gpointer                progress_data,
                                         GCancellable           *cancellable,
                                         GError                **error);
SBX_AVAILABLE_IN_0_2
void           sbx_changes_apply_async  (SbxChanges             *self,
                                         const char *const      *paths,
                                         GFileProgressCallback   progress,
                                         gpointer                progress_data,
                                         GCancellable           *cancellable,
                                         GAsyncReadyCallback     callback,
                                         gpointer                user_data);
SBX_AVAILABLE_IN_0_2
gboolean       sbx_changes_apply_finish (SbxChanges             *self,
                                         GAsyncResult           *result,
                                         GError                **error);
SBX_AVAILABLE_IN_0_2
gboolean       sbx_changes_discard      (SbxChanges          *self,
                                         GError             **error);
SBX_AVAILABLE_IN_0_2
void           sbx_changes_discard_async  (SbxChanges          *self,
                                           GCancellable        *cancellable,
                                           GAsyncReadyCallback  callback,
                                           gpointer             user_data);
SBX_AVAILABLE_IN_0_2
gboolean       sbx_changes_discard_finish (SbxChanges          *self,
                                           GAsyncResult        *result,
                                           GError             **error);

G_END_DECLS

#endif /* SBX_CHANGES_H */
