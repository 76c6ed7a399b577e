/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_EXECUTOR_H
#define SBX_EXECUTOR_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <gio/gio.h>
#include "sbx-version.h"
#include "sbx-guarantees.h"
#include "sbx-compile-report.h"
#include "sbx-run-options.h"
#include "sbx-run-result.h"
#include "sbx-grant.h"
#include "sbx-process.h"
#include "sbx-prepared-process.h"

G_BEGIN_DECLS

/**
 * SBX_EXECUTOR_ERROR:
 *
 * Error domain of [error@Sbx.ExecutorError].
 *
 * Since: 0.1
 */
#define SBX_EXECUTOR_ERROR (sbx_executor_error_quark ())
SBX_AVAILABLE_IN_0_1
GQuark sbx_executor_error_quark (void);

/**
 * SbxExecutorError:
 * @SBX_EXECUTOR_ERROR_CLOSED: the executor's set is closed or closing; a run
 *   in flight when the set closed was killed.  Since: 0.1
 * @SBX_EXECUTOR_ERROR_GRANT_REQUIRED: alias kept for the value's place: no
 *   run returns it.  A gated command without a grant fails with
 *   %SBX_GRANT_ERROR_REQUIRED in [error@Sbx.GrantError].  Since: 0.1
 * @SBX_EXECUTOR_ERROR_DENIED: alias kept for the value's place: no run
 *   returns it.  A denied command fails with %SBX_GRANT_ERROR_DENIED in
 *   [error@Sbx.GrantError].  Since: 0.1
 * @SBX_EXECUTOR_ERROR_EMPTY_ARGV: the argument vector (or the shell
 *   command) is empty.  Since: 0.1
 * @SBX_EXECUTOR_ERROR_INVALID_ARGUMENT: an argument is invalid (a zero output
 *   limit for a limited run, a negative timeout, a string that is not valid
 *   UTF-8 or contains a newline where one is not allowed).  Since: 0.1
 * @SBX_EXECUTOR_ERROR_INVALID_CWD: the working directory is not an absolute
 *   path of an existing directory.  Since: 0.1
 * @SBX_EXECUTOR_ERROR_NOT_FOUND: the command was not found (in the PATH of
 *   the scrubbed environment when it has no '/').  Since: 0.1
 * @SBX_EXECUTOR_ERROR_NOT_EXECUTABLE: the command was found but cannot be
 *   executed (no execute permission, not an executable format).  Since: 0.1
 * @SBX_EXECUTOR_ERROR_SPAWN_FAILED: the backend could not start the child;
 *   the message names the setup step and the cause.  No process is left.
 *   Since: 0.1
 * @SBX_EXECUTOR_ERROR_TIMED_OUT: the run's timeout passed; its whole process
 *   tree was killed before the call returned.  Since: 0.1
 * @SBX_EXECUTOR_ERROR_CANCELLED: the run's #GCancellable was cancelled; its
 *   whole process tree was killed before the call returned.  Since: 0.1
 * @SBX_EXECUTOR_ERROR_TEARDOWN_FAILED: the child ran, but the backend could
 *   not prove that its process tree ended.  Since: 0.1
 * @SBX_EXECUTOR_ERROR_ALREADY_STARTED: a [class@Sbx.PreparedProcess] was
 *   started before; it starts once.  Since: 0.1
 * @SBX_EXECUTOR_ERROR_PROCESS_CLOSED: the [class@Sbx.PreparedProcess] was
 *   closed (by itself or by its set's close) before it started.  Since: 0.1
 *
 * Errors from running commands with a [class@Sbx.Executor].  A run whose
 * command exits with a non-zero status or dies from a signal is not an
 * error: it returns a [struct@Sbx.RunResult].
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_EXECUTOR_ERROR >*/
{
  SBX_EXECUTOR_ERROR_CLOSED,
  SBX_EXECUTOR_ERROR_GRANT_REQUIRED,
  SBX_EXECUTOR_ERROR_DENIED,
  SBX_EXECUTOR_ERROR_EMPTY_ARGV,
  SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
  SBX_EXECUTOR_ERROR_INVALID_CWD,
  SBX_EXECUTOR_ERROR_NOT_FOUND,
  SBX_EXECUTOR_ERROR_NOT_EXECUTABLE,
  SBX_EXECUTOR_ERROR_SPAWN_FAILED,
  SBX_EXECUTOR_ERROR_TIMED_OUT,
  SBX_EXECUTOR_ERROR_CANCELLED,
  SBX_EXECUTOR_ERROR_TEARDOWN_FAILED,
  SBX_EXECUTOR_ERROR_ALREADY_STARTED,
  SBX_EXECUTOR_ERROR_PROCESS_CLOSED,
} SbxExecutorError;

#define SBX_TYPE_EXECUTOR (sbx_executor_get_type ())
SBX_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (SbxExecutor, sbx_executor, SBX, EXECUTOR, GObject)

SBX_AVAILABLE_IN_0_1
const char       *sbx_executor_get_key            (SbxExecutor          *self);
SBX_AVAILABLE_IN_0_1
SbxLevel          sbx_executor_get_level          (SbxExecutor          *self);
SBX_AVAILABLE_IN_0_1
SbxGuarantees     sbx_executor_get_guarantees     (SbxExecutor          *self);
SBX_AVAILABLE_IN_0_1
SbxCompileReport *sbx_executor_get_report         (SbxExecutor          *self);
SBX_AVAILABLE_IN_0_1
const char       *sbx_executor_get_home           (SbxExecutor          *self);
SBX_AVAILABLE_IN_0_1
const char       *sbx_executor_get_tmpdir         (SbxExecutor          *self);
SBX_AVAILABLE_IN_0_1
const char *const *sbx_executor_get_environment   (SbxExecutor          *self);
SBX_AVAILABLE_IN_0_1
gboolean          sbx_executor_is_closed          (SbxExecutor          *self);

SBX_AVAILABLE_IN_0_1
SbxRunResult     *sbx_executor_run                (SbxExecutor          *self,
                                                   const char           *cwd,
                                                   const char *const    *argv,
                                                   const SbxRunOptions  *options,
                                                   GCancellable         *cancellable,
                                                   GError              **error);
SBX_AVAILABLE_IN_0_1
void              sbx_executor_run_async          (SbxExecutor          *self,
                                                   const char           *cwd,
                                                   const char *const    *argv,
                                                   const SbxRunOptions  *options,
                                                   GCancellable         *cancellable,
                                                   GAsyncReadyCallback   callback,
                                                   gpointer              user_data);
SBX_AVAILABLE_IN_0_1
SbxRunResult     *sbx_executor_run_finish         (SbxExecutor          *self,
                                                   GAsyncResult         *result,
                                                   GError              **error);

SBX_AVAILABLE_IN_0_1
SbxProcess       *sbx_executor_spawn              (SbxExecutor          *self,
                                                   const char           *cwd,
                                                   const char *const    *argv,
                                                   const SbxRunOptions  *options,
                                                   GCancellable         *cancellable,
                                                   GError              **error);

SBX_AVAILABLE_IN_0_1
SbxPreparedProcess *sbx_executor_prepare          (SbxExecutor          *self,
                                                   const char           *cwd,
                                                   const char *const    *argv,
                                                   const SbxRunOptions  *options,
                                                   GCancellable         *cancellable,
                                                   GError              **error);

SBX_AVAILABLE_IN_0_1
char             *sbx_executor_issue_grant        (SbxExecutor          *self,
                                                   const char           *execution_id,
                                                   const char           *command,
                                                   const char           *cwd,
                                                   const char           *grant_class,
                                                   const char           *target,
                                                   GDateTime            *expiry,
                                                   GError              **error);

G_END_DECLS

#endif /* SBX_EXECUTOR_H */
