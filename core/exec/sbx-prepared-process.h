/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_PREPARED_PROCESS_H
#define SBX_PREPARED_PROCESS_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <gio/gio.h>
#include "sbx-version.h"
#include "sbx-compile-report.h"
#include "sbx-process.h"

G_BEGIN_DECLS

/**
 * SbxProcessAccess:
 * @SBX_PROCESS_ACCESS_READ_ONLY: the process may write nowhere (the
 *   profile denies workspace writes and no grant opened one).  Since: 0.1
 * @SBX_PROCESS_ACCESS_SCOPED_WRITE: it may write only where the profile's
 *   gated workspace or its write grants say
 *   ([method@Sbx.PreparedProcess.get_write_paths],
 *   [method@Sbx.PreparedProcess.get_write_trees]).  Since: 0.1
 * @SBX_PROCESS_ACCESS_BROAD_WRITE: it may write the whole workspace (the
 *   profile allows it) or, with a host write grant, the host.  Since: 0.1
 *
 * What a prepared process was admitted to write (upstream's
 * ProcessAccess; 0 is not a value).
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_PROCESS_ACCESS >*/
{
  SBX_PROCESS_ACCESS_READ_ONLY    = 1,
  SBX_PROCESS_ACCESS_SCOPED_WRITE = 2,
  SBX_PROCESS_ACCESS_BROAD_WRITE  = 3,
} SbxProcessAccess;

#define SBX_TYPE_PREPARED_PROCESS (sbx_prepared_process_get_type ())
SBX_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (SbxPreparedProcess, sbx_prepared_process, SBX, PREPARED_PROCESS, GObject)

SBX_AVAILABLE_IN_0_1
SbxProcessAccess   sbx_prepared_process_get_effective_access (SbxPreparedProcess *self);
SBX_AVAILABLE_IN_0_1
const char *const *sbx_prepared_process_get_write_paths      (SbxPreparedProcess *self);
SBX_AVAILABLE_IN_0_1
const char *const *sbx_prepared_process_get_write_trees      (SbxPreparedProcess *self);
SBX_AVAILABLE_IN_0_1
const char *const *sbx_prepared_process_get_grants_spent     (SbxPreparedProcess *self);
SBX_AVAILABLE_IN_0_1
SbxCompileReport  *sbx_prepared_process_get_report           (SbxPreparedProcess *self);
SBX_AVAILABLE_IN_0_1
SbxProcess        *sbx_prepared_process_start                (SbxPreparedProcess *self,
                                                              GCancellable       *cancellable,
                                                              GError            **error);
SBX_AVAILABLE_IN_0_2
SbxRunResult      *sbx_prepared_process_run                  (SbxPreparedProcess *self,
                                                              GCancellable       *cancellable,
                                                              GError            **error);
SBX_AVAILABLE_IN_0_2
void               sbx_prepared_process_run_async            (SbxPreparedProcess *self,
                                                              GCancellable       *cancellable,
                                                              GAsyncReadyCallback callback,
                                                              gpointer            user_data);
SBX_AVAILABLE_IN_0_2
SbxRunResult      *sbx_prepared_process_run_finish           (SbxPreparedProcess *self,
                                                              GAsyncResult       *result,
                                                              GError            **error);
SBX_AVAILABLE_IN_0_1
void               sbx_prepared_process_close                (SbxPreparedProcess *self);

G_END_DECLS

#endif /* SBX_PREPARED_PROCESS_H */
