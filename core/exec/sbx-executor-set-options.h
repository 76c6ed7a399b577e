/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_EXECUTOR_SET_OPTIONS_H
#define SBX_EXECUTOR_SET_OPTIONS_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib-object.h>
#include "sbx-version.h"
#include "sbx-registry.h"
#include "sbx-egress-route.h"

G_BEGIN_DECLS

/**
 * SBX_EXECUTOR_SET_DEFAULT_GRANT_TTL:
 *
 * The grant TTL of an executor set whose options do not set one: 15 minutes,
 * in microseconds (a #GTimeSpan).
 *
 * Since: 0.1
 */
#define SBX_EXECUTOR_SET_DEFAULT_GRANT_TTL (15 * G_TIME_SPAN_MINUTE)

/**
 * SBX_EXECUTOR_SET_DEFAULT_MAX_EXECUTORS:
 *
 * The most executors (distinct keys) of a set whose options do not set a
 * maximum: 64.
 *
 * Since: 0.1
 */
#define SBX_EXECUTOR_SET_DEFAULT_MAX_EXECUTORS 64

typedef struct _SbxExecutorSetOptions SbxExecutorSetOptions;

#define SBX_TYPE_EXECUTOR_SET_OPTIONS (sbx_executor_set_options_get_type ())
SBX_AVAILABLE_IN_0_1
GType                  sbx_executor_set_options_get_type        (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_1
SbxExecutorSetOptions *sbx_executor_set_options_new             (void);
SBX_AVAILABLE_IN_0_1
SbxExecutorSetOptions *sbx_executor_set_options_copy            (const SbxExecutorSetOptions *self);
SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_free            (SbxExecutorSetOptions       *self);

SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_set_scratch_root (SbxExecutorSetOptions      *self,
                                                                  const char                 *path);
SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_set_max_executors (SbxExecutorSetOptions     *self,
                                                                   int                        max_executors);
SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_set_grant_ttl   (SbxExecutorSetOptions       *self,
                                                                 GTimeSpan                    ttl);
SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_set_registry    (SbxExecutorSetOptions       *self,
                                                                 SbxRegistry                 *registry);
SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_add_reporter    (SbxExecutorSetOptions       *self,
                                                                 const char                  *name,
                                                                 const char                  *config);
SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_set_backend     (SbxExecutorSetOptions       *self,
                                                                 const char                  *name);
SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_set_egress_route (SbxExecutorSetOptions      *self,
                                                                  SbxEgressRoute             *route);
SBX_AVAILABLE_IN_0_1
void                   sbx_executor_set_options_set_egress_extension (SbxExecutorSetOptions  *self,
                                                                      const char             *name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxExecutorSetOptions, sbx_executor_set_options_free)

G_END_DECLS

#endif /* SBX_EXECUTOR_SET_OPTIONS_H */
