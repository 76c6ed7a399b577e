/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The readers of a SbxExecutorSetOptions: the options are a write-only
 * builder for applications; the set reads them through these, so they are
 * not part of the public API.
 */
#pragma once

#include "sbx-executor-set-options.h"

G_BEGIN_DECLS

const char            *sbx_executor_set_options_get_scratch_root (const SbxExecutorSetOptions *self);
int                    sbx_executor_set_options_get_max_executors (const SbxExecutorSetOptions *self);
GTimeSpan              sbx_executor_set_options_get_grant_ttl   (const SbxExecutorSetOptions *self);
SbxRegistry           *sbx_executor_set_options_get_registry    (const SbxExecutorSetOptions *self);
guint                  sbx_executor_set_options_get_n_reporters (const SbxExecutorSetOptions *self);
const char            *sbx_executor_set_options_get_reporter_name   (const SbxExecutorSetOptions *self,
                                                                     guint                        index);
const char            *sbx_executor_set_options_get_reporter_config (const SbxExecutorSetOptions *self,
                                                                     guint                        index);
const char            *sbx_executor_set_options_get_backend     (const SbxExecutorSetOptions *self);
SbxEgressRoute        *sbx_executor_set_options_get_egress_route (const SbxExecutorSetOptions *self);
const char            *sbx_executor_set_options_get_egress_extension (const SbxExecutorSetOptions *self);

G_END_DECLS
