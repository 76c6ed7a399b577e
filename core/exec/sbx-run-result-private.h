/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "sbx-run-result.h"
#include "sbx-plugin-backend.h"     /* SbxExitV1 */
#include "sbx-denial-private.h"

G_BEGIN_DECLS

/* @output may be NULL (nothing captured). */
SbxRunResult *sbx_run_result_new (GBytes          *output,
                                  const SbxExitV1 *exit,
                                  gboolean         truncated,
                                  SbxLifetimeContainment   containment,
                                  GTimeSpan        duration);

/* The run's output, collected after the reap made the result (@output
 * referenced; @truncated: it passed the limit, now or at the reap). */
void          sbx_run_result_set_output (SbxRunResult *self,
                                         GBytes       *output,
                                         gboolean      truncated);
/* What the run's grants opened (copied), for get_grants_spent(). */
void          sbx_run_result_set_grants_spent (SbxRunResult      *self,
                                               const char *const *spent);
/* Egress: the run's first denied target and why (copied). */
void          sbx_run_result_set_network_denial (SbxRunResult *self,
                                                 const char   *target,
                                                 const char   *reason);

/* The run's denials: a snapshot of @log (merged, bounded). */
void          sbx_run_result_set_denials (SbxRunResult *self,
                                          SbxDenialLog *log);

/* A staged run's stage (copied). */
void          sbx_run_result_set_stage (SbxRunResult *self,
                                        const char   *id,
                                        const char   *dir);

/* What held for the run's spawn (its report, scope run, is referenced). */
void          sbx_run_result_set_spawn (SbxRunResult     *self,
                                        SbxCompileReport *report,
                                        SbxLevel          level,
                                        SbxGuarantees     guarantees);

G_END_DECLS
