/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_RUN_RESULT_H
#define SBX_RUN_RESULT_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib-object.h>
#include "sbx-version.h"
#include "sbx-compile-report.h"
#include "sbx-denial.h"

G_BEGIN_DECLS

/**
 * SbxLifetimeContainment:
 * @SBX_LIFETIME_CONTAINMENT_UNSPECIFIED: the backend gives no proof that the whole
 *   process tree ended (the unconfined backend: a descendant that leaves the
 *   process group escapes).
 * @SBX_LIFETIME_CONTAINMENT_ENFORCED: the kernel guarantees the whole tree ended
 *   (a PID namespace, or a cgroup that was killed and found empty).
 * @SBX_LIFETIME_CONTAINMENT_BEST_EFFORT: the backend tracked and killed the tree, but
 *   cannot prove nothing escaped.
 *
 * How a backend contained the lifetime of a spawned process tree.  The
 * numeric values equal the plugin ABI's `SBX_CONTAINMENT_*`.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_LIFETIME_CONTAINMENT >*/
{
  SBX_LIFETIME_CONTAINMENT_UNSPECIFIED = 0,
  SBX_LIFETIME_CONTAINMENT_ENFORCED    = 1,
  SBX_LIFETIME_CONTAINMENT_BEST_EFFORT = 2,
} SbxLifetimeContainment;

typedef struct _SbxRunResult SbxRunResult;

#define SBX_TYPE_RUN_RESULT (sbx_run_result_get_type ())
SBX_AVAILABLE_IN_0_1
GType           sbx_run_result_get_type        (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_1
SbxRunResult   *sbx_run_result_ref             (SbxRunResult *self);
SBX_AVAILABLE_IN_0_1
void            sbx_run_result_unref           (SbxRunResult *self);

SBX_AVAILABLE_IN_0_1
GBytes         *sbx_run_result_get_output      (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
gboolean        sbx_run_result_get_if_exited   (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
int             sbx_run_result_get_exit_status (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
gboolean        sbx_run_result_get_if_signaled (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
int             sbx_run_result_get_term_sig    (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
gboolean        sbx_run_result_get_successful  (SbxRunResult *self);
SBX_AVAILABLE_IN_0_1
gboolean        sbx_run_result_get_truncated   (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
SbxLifetimeContainment  sbx_run_result_get_lifetime_containment (SbxRunResult *self);
SBX_AVAILABLE_IN_0_1
GTimeSpan       sbx_run_result_get_duration    (SbxRunResult *self);
SBX_AVAILABLE_IN_0_1
const char *const *sbx_run_result_get_grants_spent (SbxRunResult *self);
SBX_AVAILABLE_IN_0_1
const char        *sbx_run_result_get_denied_target (SbxRunResult *self);
SBX_AVAILABLE_IN_0_1
const char        *sbx_run_result_get_denial_reason (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
SbxCompileReport  *sbx_run_result_get_spawn_report     (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
SbxLevel           sbx_run_result_get_spawn_level      (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
SbxGuarantees      sbx_run_result_get_spawn_guarantees (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
GPtrArray         *sbx_run_result_get_denials          (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
guint64            sbx_run_result_get_denials_dropped  (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
const char        *sbx_run_result_get_stage_id         (SbxRunResult *self);
SBX_AVAILABLE_IN_0_2
const char        *sbx_run_result_get_stage_dir        (SbxRunResult *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxRunResult, sbx_run_result_unref)

G_END_DECLS

#endif /* SBX_RUN_RESULT_H */
