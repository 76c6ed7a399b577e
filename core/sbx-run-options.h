/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_RUN_OPTIONS_H
#define SBX_RUN_OPTIONS_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib-object.h>
#include "sbx-version.h"

G_BEGIN_DECLS

typedef struct _SbxRunOptions SbxRunOptions;

#define SBX_TYPE_RUN_OPTIONS (sbx_run_options_get_type ())
SBX_AVAILABLE_IN_0_1
GType          sbx_run_options_get_type       (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_1
SbxRunOptions *sbx_run_options_new            (void);
SBX_AVAILABLE_IN_0_1
SbxRunOptions *sbx_run_options_copy           (const SbxRunOptions *self);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_free           (SbxRunOptions       *self);

SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_timeout    (SbxRunOptions       *self,
                                               GTimeSpan            timeout);
SBX_AVAILABLE_IN_0_1
GTimeSpan      sbx_run_options_get_timeout    (const SbxRunOptions *self);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_max_output (SbxRunOptions       *self,
                                               guint64              max_output);
SBX_AVAILABLE_IN_0_1
guint64        sbx_run_options_get_max_output (const SbxRunOptions *self);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stdin_fd   (SbxRunOptions       *self,
                                               int                  fd);
SBX_AVAILABLE_IN_0_1
int            sbx_run_options_get_stdin_fd   (const SbxRunOptions *self);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stdout_fd  (SbxRunOptions       *self,
                                               int                  fd);
SBX_AVAILABLE_IN_0_1
int            sbx_run_options_get_stdout_fd  (const SbxRunOptions *self);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stderr_fd  (SbxRunOptions       *self,
                                               int                  fd);
SBX_AVAILABLE_IN_0_1
int            sbx_run_options_get_stderr_fd  (const SbxRunOptions *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxRunOptions, sbx_run_options_free)

G_END_DECLS

#endif /* SBX_RUN_OPTIONS_H */
