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

/**
 * SbxStdioMode:
 * @SBX_STDIO_DEFAULT: what the call does without being told: for
 *   [method@Sbx.Executor.run] stdin is the null device and stdout and
 *   stderr are captured together into the result; for
 *   [method@Sbx.Executor.spawn] every stream is a pipe.  Since: 0.1
 * @SBX_STDIO_PIPE: a pipe: for a spawn, the caller's end is the process's
 *   stream ([method@Sbx.Process.get_stdout_pipe] ...); for a run, stdout and
 *   stderr are captured into the result (stdin cannot be a pipe of a run).
 *   Since: 0.1
 * @SBX_STDIO_INHERIT: the calling process's own descriptor (0, 1 or 2).
 *   Since: 0.1
 * @SBX_STDIO_NULL: the null device.  Since: 0.1
 * @SBX_STDIO_MERGE: stderr only: stderr goes wherever stdout goes (the same
 *   pipe or descriptor, in the child's write order).  Since: 0.1
 *
 * Where one standard stream of a command goes.  A file descriptor set with
 * [method@Sbx.RunOptions.set_stdin_fd] (and its stdout/stderr twins) takes
 * precedence over the stream's mode; a PTY
 * ([method@Sbx.RunOptions.set_pty]) takes precedence over both, for all
 * three streams.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_STDIO >*/
{
  SBX_STDIO_DEFAULT = 0,
  SBX_STDIO_PIPE    = 1,
  SBX_STDIO_INHERIT = 2,
  SBX_STDIO_NULL    = 3,
  SBX_STDIO_MERGE   = 4,
} SbxStdioMode;

/**
 * SBX_RUN_OPTIONS_DEFAULT_TERMINATE_GRACE:
 *
 * The terminate grace of options that do not set one: 5 seconds, in
 * microseconds (a #GTimeSpan).
 *
 * Since: 0.1
 */
#define SBX_RUN_OPTIONS_DEFAULT_TERMINATE_GRACE (5 * G_TIME_SPAN_SECOND)

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
void           sbx_run_options_set_max_output (SbxRunOptions       *self,
                                               guint64              max_output);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stdin_fd   (SbxRunOptions       *self,
                                               int                  fd);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stdout_fd  (SbxRunOptions       *self,
                                               int                  fd);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stderr_fd  (SbxRunOptions       *self,
                                               int                  fd);


SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stdin      (SbxRunOptions       *self,
                                               SbxStdioMode         mode);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stdout     (SbxRunOptions       *self,
                                               SbxStdioMode         mode);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_stderr     (SbxRunOptions       *self,
                                               SbxStdioMode         mode);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_pty        (SbxRunOptions       *self,
                                               guint16              rows,
                                               guint16              cols);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_pty_resize_fd (SbxRunOptions       *self,
                                                  int                  resize_fd,
                                                  int                  size_fd);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_deadline   (SbxRunOptions       *self,
                                               GDateTime           *deadline);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_terminate_grace (SbxRunOptions  *self,
                                                    GTimeSpan       grace);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_grants     (SbxRunOptions       *self,
                                               const char *const   *grants);
SBX_AVAILABLE_IN_0_1
void           sbx_run_options_set_execution_id (SbxRunOptions     *self,
                                                 const char        *execution_id);
SBX_AVAILABLE_IN_0_2
void           sbx_run_options_set_ignored_signals (SbxRunOptions *self,
                                                    const int     *signals,
                                                    gsize          n_signals);
SBX_AVAILABLE_IN_0_2
void           sbx_run_options_set_staged          (SbxRunOptions       *self,
                                                    gboolean             staged);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxRunOptions, sbx_run_options_free)

G_END_DECLS

#endif /* SBX_RUN_OPTIONS_H */
