/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once (see sbx-denial.h). */
#ifndef SBX_DECISION_H
#define SBX_DECISION_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib-object.h>
#include "sbx-version.h"
#include "sbx-denial.h"
#include "sbx-run-options.h"

G_BEGIN_DECLS

#define SBX_TYPE_DECISION_REQUEST (sbx_decision_request_get_type ())
SBX_AVAILABLE_IN_0_2
  G_DECLARE_FINAL_TYPE (SbxDecisionRequest, sbx_decision_request, SBX, DECISION_REQUEST, GObject)

/**
 * SbxDecisionFunc:
 * @request: the question: what the tool tried and the grant it would spend
 * @user_data: the data given with the function
 *
 * Asked, on the thread-default main context of the caller that started the
 * run, when a running tool reaches a `Gated` capability it holds no grant
 * for (see [method@Sbx.RunOptions.set_ask]).  Keep a reference to
 * @request and answer it now or later with
 * [method@Sbx.DecisionRequest.allow_once],
 * [method@Sbx.DecisionRequest.allow_for_run] or
 * [method@Sbx.DecisionRequest.deny].
 *
 * Since: 0.2
 */
typedef void (*SbxDecisionFunc) (SbxDecisionRequest *request,
                                 gpointer            user_data);

SBX_AVAILABLE_IN_0_2
SbxDenial          *sbx_decision_request_get_denial   (SbxDecisionRequest *self);
SBX_AVAILABLE_IN_0_2
gboolean            sbx_decision_request_is_pending   (SbxDecisionRequest *self);
SBX_AVAILABLE_IN_0_2
void                sbx_decision_request_allow_once   (SbxDecisionRequest *self);
SBX_AVAILABLE_IN_0_2
void                sbx_decision_request_allow_for_run (SbxDecisionRequest *self);
SBX_AVAILABLE_IN_0_2
void                sbx_decision_request_deny         (SbxDecisionRequest *self);

SBX_AVAILABLE_IN_0_2
void                sbx_run_options_set_ask           (SbxRunOptions      *self,
                                                       gboolean            ask);
SBX_AVAILABLE_IN_0_2
void                sbx_run_options_set_ask_timeout   (SbxRunOptions      *self,
                                                       GTimeSpan           timeout);
SBX_AVAILABLE_IN_0_2
void                sbx_run_options_set_decision_func (SbxRunOptions      *self,
                                                       SbxDecisionFunc     func,
                                                       gpointer            user_data,
                                                       GDestroyNotify      destroy);

G_END_DECLS

#endif /* SBX_DECISION_H */
