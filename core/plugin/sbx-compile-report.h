/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_COMPILE_REPORT_H
#define SBX_COMPILE_REPORT_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib-object.h>
#include "sbx-version.h"
#include "sbx-guarantees.h"

G_BEGIN_DECLS

/**
 * SbxReportStatus:
 * @SBX_REPORT_STATUS_ENFORCED: enforced as requested.
 * @SBX_REPORT_STATUS_NARROWED: enforced more tightly than requested (errs narrow).
 * @SBX_REPORT_STATUS_UNENFORCED: not enforced on this host.
 * @SBX_REPORT_STATUS_WIDENED: a documented platform-plumbing allowance.
 * @SBX_REPORT_STATUS_VACUOUS: holds only incidentally.
 *
 * Status of one [struct@Sbx.CompileReport] entry.  The string forms are the
 * lower-case nicks ("enforced", "narrowed", ...), one consistent vocabulary
 * (upstream mixed "Enforced" and "narrowed").
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_REPORT_STATUS >*/
{
  SBX_REPORT_STATUS_ENFORCED   = 1,
  SBX_REPORT_STATUS_NARROWED   = 2,
  SBX_REPORT_STATUS_UNENFORCED = 3,
  SBX_REPORT_STATUS_WIDENED    = 4,
  SBX_REPORT_STATUS_VACUOUS    = 5,
} SbxReportStatus;

/**
 * SbxReportScope:
 * @SBX_REPORT_SCOPE_NONE: the report belongs to neither an executor nor a
 *   run: a backend's probe, an executor set's selection, a compile made for
 *   inspection (`sbx profile explain`, a conformance check).  Since: 0.2
 * @SBX_REPORT_SCOPE_EXECUTOR: an executor's report
 *   ([method@Sbx.Executor.get_report]): what the profile compiled to, which
 *   is what a run *without grants* gets.  Since: 0.2
 * @SBX_REPORT_SCOPE_RUN: the report of one spawn
 *   ([method@Sbx.RunResult.get_spawn_report],
 *   [method@Sbx.Process.get_spawn_report],
 *   [method@Sbx.PreparedProcess.get_report]): what held for that run, after
 *   its grants and its egress route.  A guarantee a grant took away is
 *   absent from it, and an entry names the grant.  Since: 0.2
 *
 * Which report a [struct@Sbx.CompileReport] is.  The string forms (the JSON
 * member "scope") are "none", "executor" and "run".
 *
 * Since: 0.2
 */
typedef enum /*< prefix=SBX_REPORT_SCOPE >*/
{
  SBX_REPORT_SCOPE_NONE     = 0,
  SBX_REPORT_SCOPE_EXECUTOR = 1,
  SBX_REPORT_SCOPE_RUN      = 2,
} SbxReportScope;

typedef struct _SbxCompileReport SbxCompileReport;

#define SBX_TYPE_COMPILE_REPORT (sbx_compile_report_get_type ())
SBX_AVAILABLE_IN_0_1
GType             sbx_compile_report_get_type            (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_1
SbxCompileReport *sbx_compile_report_ref                 (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_1
void              sbx_compile_report_unref               (SbxCompileReport *self);

SBX_AVAILABLE_IN_0_1
const char       *sbx_compile_report_get_backend         (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_1
SbxLevel          sbx_compile_report_get_level           (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_1
SbxGuarantees     sbx_compile_report_get_guarantees      (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_1
SbxGuarantees     sbx_compile_report_get_required        (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_2
SbxReportScope    sbx_compile_report_get_scope           (SbxCompileReport *self);

SBX_AVAILABLE_IN_0_1
guint             sbx_compile_report_get_n_entries       (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_1
const char       *sbx_compile_report_get_entry_feature   (SbxCompileReport *self,
                                                          guint             index);
SBX_AVAILABLE_IN_0_1
SbxReportStatus   sbx_compile_report_get_entry_status    (SbxCompileReport *self,
                                                          guint             index);
SBX_AVAILABLE_IN_0_1
const char       *sbx_compile_report_get_entry_detail    (SbxCompileReport *self,
                                                          guint             index);

SBX_AVAILABLE_IN_0_1
guint             sbx_compile_report_get_n_roots         (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_1
const char       *sbx_compile_report_get_root_kind       (SbxCompileReport *self,
                                                          guint             index);
SBX_AVAILABLE_IN_0_1
const char       *sbx_compile_report_get_root_path       (SbxCompileReport *self,
                                                          guint             index);

SBX_AVAILABLE_IN_0_1
guint             sbx_compile_report_get_n_rejected      (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_1
const char       *sbx_compile_report_get_rejected_name   (SbxCompileReport *self,
                                                          guint             index);
SBX_AVAILABLE_IN_0_1
const char       *sbx_compile_report_get_rejected_reason (SbxCompileReport *self,
                                                          guint             index);

SBX_AVAILABLE_IN_0_1
char             *sbx_compile_report_to_json             (SbxCompileReport *self);
SBX_AVAILABLE_IN_0_1
char             *sbx_compile_report_to_text             (SbxCompileReport *self);

SBX_AVAILABLE_IN_0_1
const char       *sbx_report_status_to_string            (SbxReportStatus   status);
SBX_AVAILABLE_IN_0_2
const char       *sbx_report_scope_to_string             (SbxReportScope    scope);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxCompileReport, sbx_compile_report_unref)

G_END_DECLS

#endif /* SBX_COMPILE_REPORT_H */
