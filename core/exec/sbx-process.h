/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_PROCESS_H
#define SBX_PROCESS_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <gio/gio.h>
#include "sbx-version.h"
#include "sbx-run-result.h"

G_BEGIN_DECLS

#define SBX_TYPE_PROCESS (sbx_process_get_type ())
SBX_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (SbxProcess, sbx_process, SBX, PROCESS, GObject)

SBX_AVAILABLE_IN_0_1
GOutputStream *sbx_process_get_stdin_pipe   (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
GInputStream  *sbx_process_get_stdout_pipe  (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
GInputStream  *sbx_process_get_stderr_pipe  (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
const char    *sbx_process_get_identifier   (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
SbxLifetimeContainment sbx_process_get_lifetime_containment (SbxProcess *self);
SBX_AVAILABLE_IN_0_2
SbxCompileReport *sbx_process_get_spawn_report     (SbxProcess *self);
SBX_AVAILABLE_IN_0_2
SbxLevel          sbx_process_get_spawn_level      (SbxProcess *self);
SBX_AVAILABLE_IN_0_2
SbxGuarantees     sbx_process_get_spawn_guarantees (SbxProcess *self);

SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_wait             (SbxProcess          *self,
                                             GCancellable        *cancellable,
                                             GError             **error);
SBX_AVAILABLE_IN_0_1
void           sbx_process_wait_async       (SbxProcess          *self,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_wait_finish      (SbxProcess          *self,
                                             GAsyncResult        *result,
                                             GError             **error);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_wait_check       (SbxProcess          *self,
                                             GCancellable        *cancellable,
                                             GError             **error);

SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_communicate      (SbxProcess          *self,
                                             GBytes              *stdin_buf,
                                             GCancellable        *cancellable,
                                             GBytes             **stdout_buf,
                                             GBytes             **stderr_buf,
                                             GError             **error);
SBX_AVAILABLE_IN_0_1
void           sbx_process_communicate_async  (SbxProcess          *self,
                                               GBytes              *stdin_buf,
                                               GCancellable        *cancellable,
                                               GAsyncReadyCallback  callback,
                                               gpointer             user_data);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_communicate_finish (SbxProcess          *self,
                                               GAsyncResult        *result,
                                               GBytes             **stdout_buf,
                                               GBytes             **stderr_buf,
                                               GError             **error);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_communicate_utf8 (SbxProcess          *self,
                                             const char          *stdin_buf,
                                             GCancellable        *cancellable,
                                             char               **stdout_buf,
                                             char               **stderr_buf,
                                             GError             **error);
SBX_AVAILABLE_IN_0_1
void           sbx_process_communicate_utf8_async  (SbxProcess          *self,
                                                    const char          *stdin_buf,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_communicate_utf8_finish (SbxProcess          *self,
                                                    GAsyncResult        *result,
                                                    char               **stdout_buf,
                                                    char               **stderr_buf,
                                                    GError             **error);

SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_send_signal      (SbxProcess          *self,
                                             int                  signum,
                                             GError             **error);
SBX_AVAILABLE_IN_0_1
void           sbx_process_force_exit       (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_resize           (SbxProcess          *self,
                                             guint16              rows,
                                             guint16              cols,
                                             GError             **error);

SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_get_if_exited    (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
int            sbx_process_get_exit_status  (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_get_if_signaled  (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
int            sbx_process_get_term_sig     (SbxProcess          *self);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_process_get_successful   (SbxProcess          *self);

G_END_DECLS

#endif /* SBX_PROCESS_H */
