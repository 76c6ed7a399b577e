/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The readers of a SbxRunOptions: the options are a write-only builder for
 * applications; the core reads them through these (as GSubprocess reads its
 * launcher), so they are not part of the public API.
 */
#pragma once

#include "sbx-run-options.h"
#include "sbx-ask-settings-private.h"

G_BEGIN_DECLS

GTimeSpan      sbx_run_options_get_timeout    (const SbxRunOptions *self);
guint64        sbx_run_options_get_max_output (const SbxRunOptions *self);
int            sbx_run_options_get_stdin_fd   (const SbxRunOptions *self);
int            sbx_run_options_get_stdout_fd  (const SbxRunOptions *self);
int            sbx_run_options_get_stderr_fd  (const SbxRunOptions *self);
SbxStdioMode   sbx_run_options_get_stdin      (const SbxRunOptions *self);
SbxStdioMode   sbx_run_options_get_stdout     (const SbxRunOptions *self);
SbxStdioMode   sbx_run_options_get_stderr     (const SbxRunOptions *self);
gboolean       sbx_run_options_get_pty        (const SbxRunOptions *self,
                                               guint16             *rows,
                                               guint16             *cols);
int            sbx_run_options_get_pty_resize_fd (const SbxRunOptions *self,
                                                  int                 *size_fd);
GDateTime     *sbx_run_options_get_deadline   (const SbxRunOptions *self);
GTimeSpan      sbx_run_options_get_terminate_grace (const SbxRunOptions *self);
const char *const *sbx_run_options_get_grants (const SbxRunOptions *self);
const char    *sbx_run_options_get_execution_id (const SbxRunOptions *self);
int           *sbx_run_options_get_ignored_signals (const SbxRunOptions *self,
                                                    gsize               *n_signals);
gboolean       sbx_run_options_get_staged     (const SbxRunOptions *self);


/* The options' settings (NULL: the run does not ask); replace takes
 * @ask (sbx-run-options.c). */
SbxAskSettings     *sbx_run_options_peek_ask    (const SbxRunOptions *options);
void                sbx_run_options_replace_ask (SbxRunOptions      *options,
                                                 SbxAskSettings     *ask);

G_END_DECLS
