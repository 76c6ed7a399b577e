/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_EXECUTOR_SET_H
#define SBX_EXECUTOR_SET_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <gio/gio.h>
#include "sbx-version.h"
#include "sbx-profile.h"
#include "sbx-executor.h"
#include "sbx-executor-set-options.h"

G_BEGIN_DECLS

/**
 * SBX_EXECUTOR_SET_ERROR:
 *
 * Error domain of [error@Sbx.ExecutorSetError].
 *
 * Since: 0.1
 */
#define SBX_EXECUTOR_SET_ERROR (sbx_executor_set_error_quark ())
SBX_AVAILABLE_IN_0_1
GQuark sbx_executor_set_error_quark (void);

/**
 * SbxExecutorSetError:
 * @SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS: the options are invalid: no scratch
 *   root (or one that is not an existing directory), a maximum number of
 *   executors that is not positive, a grant TTL that is not positive.
 *   Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_INVALID_PROFILE: the profile is not valid.
 *   Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE: no loaded backend can run the
 *   profile, or the forced backend (option or `SBX_BACKEND`) is missing or
 *   was rejected; there is never a fallback.  The message lists every
 *   rejected candidate and why.  Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_MISSING_GUARANTEES: the backend compiled the
 *   profile but does not achieve every guarantee the profile requires; the
 *   executor is not created (fail closed).  Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_COMPILE_FAILED: the backend could not compile the
 *   profile's policy.  Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_LIMIT: the set already holds its maximum number of
 *   distinct keys (a hard cap for the set's lifetime; nothing is evicted).
 *   Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_CLOSED: the set is closed or closing.  Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_INVALID_KEY: the key is empty, not valid UTF-8, or
 *   starts or ends with whitespace.  Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_SCRATCH: a directory the set owns could not be
 *   created, secured or removed; the message names it.  Since: 0.1
 * @SBX_EXECUTOR_SET_ERROR_REPORTER: a reporter named in the options could not
 *   be opened.  Since: 0.1
 *
 * Errors from creating, using and closing a [class@Sbx.ExecutorSet].
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_EXECUTOR_SET_ERROR >*/
{
  SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
  SBX_EXECUTOR_SET_ERROR_INVALID_PROFILE,
  SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE,
  SBX_EXECUTOR_SET_ERROR_MISSING_GUARANTEES,
  SBX_EXECUTOR_SET_ERROR_COMPILE_FAILED,
  SBX_EXECUTOR_SET_ERROR_LIMIT,
  SBX_EXECUTOR_SET_ERROR_CLOSED,
  SBX_EXECUTOR_SET_ERROR_INVALID_KEY,
  SBX_EXECUTOR_SET_ERROR_SCRATCH,
  SBX_EXECUTOR_SET_ERROR_REPORTER,
} SbxExecutorSetError;

#define SBX_TYPE_EXECUTOR_SET (sbx_executor_set_get_type ())
SBX_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (SbxExecutorSet, sbx_executor_set, SBX, EXECUTOR_SET, GObject)

SBX_AVAILABLE_IN_0_1
SbxExecutorSet   *sbx_executor_set_new              (SbxProfile                  *profile,
                                                     const SbxExecutorSetOptions *options,
                                                     GError                     **error);
SBX_AVAILABLE_IN_0_1
SbxExecutor      *sbx_executor_set_for_key          (SbxExecutorSet              *self,
                                                     const char                  *key,
                                                     GError                     **error);
SBX_AVAILABLE_IN_0_1
gboolean          sbx_executor_set_close            (SbxExecutorSet              *self,
                                                     GCancellable                *cancellable,
                                                     GError                     **error);
SBX_AVAILABLE_IN_0_1
void              sbx_executor_set_close_async      (SbxExecutorSet              *self,
                                                     GCancellable                *cancellable,
                                                     GAsyncReadyCallback          callback,
                                                     gpointer                     user_data);
SBX_AVAILABLE_IN_0_1
gboolean          sbx_executor_set_close_finish     (SbxExecutorSet              *self,
                                                     GAsyncResult                *result,
                                                     GError                     **error);

SBX_AVAILABLE_IN_0_1
SbxProfile       *sbx_executor_set_get_profile      (SbxExecutorSet              *self);
SBX_AVAILABLE_IN_0_1
const char       *sbx_executor_set_get_backend_name (SbxExecutorSet              *self);
SBX_AVAILABLE_IN_0_1
SbxCompileReport *sbx_executor_set_get_selection_report (SbxExecutorSet          *self);
SBX_AVAILABLE_IN_0_1
const char       *sbx_executor_set_get_owned_dir    (SbxExecutorSet              *self);
SBX_AVAILABLE_IN_0_1
int               sbx_executor_set_get_max_executors (SbxExecutorSet             *self);
SBX_AVAILABLE_IN_0_1
guint             sbx_executor_set_get_n_executors  (SbxExecutorSet              *self);
SBX_AVAILABLE_IN_0_1
GTimeSpan         sbx_executor_set_get_grant_ttl    (SbxExecutorSet              *self);
SBX_AVAILABLE_IN_0_1
gboolean          sbx_executor_set_is_closed        (SbxExecutorSet              *self);
SBX_AVAILABLE_IN_0_1
char            **sbx_executor_set_find_stale_scratch (const char               *scratch_root,
                                                       gboolean                  remove,
                                                       GError                  **error);

G_END_DECLS

#endif /* SBX_EXECUTOR_SET_H */
