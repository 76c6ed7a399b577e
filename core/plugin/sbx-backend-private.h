/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Core-side handle on one loaded backend extension, and the thin wrappers that
 * call its vtable: every SBX_STATUS_* + host->set_error() becomes exactly one
 * GError in SBX_PLUGIN_ERROR (see sbx-registry.h), report entries land in a
 * SbxCompileReport.  No lock is held across a plugin call.
 *
 * Used by the executor.
 */
#pragma once

#include <glib.h>
#include "sbx-plugin-backend.h"
#include "sbx-compile-report.h"

G_BEGIN_DECLS

/* A backend extension of a loaded plugin.  Ref-counted; keeps its plugin
 * resident (plugins are never unloaded anyway). */
typedef struct _SbxBackend SbxBackend;

/* A compiled spec (SbxBackendVTableV1.compile output).  Ref-counted: the
 * executor holds one ref, every in-flight spawn another; the vtable release()
 * runs exactly once when the last ref goes. */
typedef struct _SbxBackendSpec SbxBackendSpec;

SbxBackend     *sbx_backend_ref              (SbxBackend *self);
void            sbx_backend_unref            (SbxBackend *self);
const char     *sbx_backend_get_name         (SbxBackend *self);   /* extension name, "linux-userns" */
const char     *sbx_backend_get_plugin_name  (SbxBackend *self);   /* descriptor name, "linux" */
int             sbx_backend_get_priority     (SbxBackend *self);
/* Probe results, cached by the registry after the first successful probe. */
SbxLevel        sbx_backend_get_probe_level  (SbxBackend *self);
SbxGuarantees   sbx_backend_get_probe_guarantees (SbxBackend *self);
gboolean        sbx_backend_is_unconfined_only (SbxBackend *self);
gboolean        sbx_backend_supports_grant_class (SbxBackend *self,
                                                  const char *grant_class);

/* Compiles @policy.  Entries the plugin reports are appended to @report, whose
 * level/guarantees are set from the compile result.  On failure returns NULL
 * with @error set and nothing left allocated. */
SbxBackendSpec *sbx_backend_compile          (SbxBackend          *self,
                                              const SbxPolicyV1   *policy,
                                              SbxCompileReport    *report,
                                              SbxLevel            *out_level,
                                              SbxGuarantees       *out_guarantees,
                                              GError             **error);
/* Runs the backend's optional explain() on @policy: the text it would
 * compile (mount operations, SBPL, token settings), with the entries it
 * reports appended to @report.  Nothing is created, so it works where the
 * backend's probe failed.  SBX_PLUGIN_ERROR_UNSUPPORTED when the backend has
 * no explain entry.  (transfer full) */
char           *sbx_backend_explain          (SbxBackend          *self,
                                              const SbxPolicyV1   *policy,
                                              SbxCompileReport    *report,
                                              GError             **error);
SbxBackendSpec *sbx_backend_spec_ref         (SbxBackendSpec *spec);
void            sbx_backend_spec_unref       (SbxBackendSpec *spec);
SbxBackend     *sbx_backend_spec_get_backend (SbxBackendSpec *spec);
/* Whether a spawn of @spec may carry SBX_SPAWN_STAGED (its compile said so). */
gboolean        sbx_backend_spec_can_stage   (SbxBackendSpec *spec);

/* Spawns one child.  SBX_STATUS_EXEC_NOT_FOUND / _EXEC_DENIED map to
 * SBX_PLUGIN_ERROR_EXEC_NOT_FOUND / _EXEC_DENIED. */
gboolean        sbx_backend_spawn            (SbxBackendSpec          *spec,
                                              const SbxSpawnRequestV1 *request,
                                              SbxSpawnResultV1        *out_result,
                                              GError                 **error);
gboolean        sbx_backend_signal           (SbxBackendSpec *spec,
                                              void           *child,
                                              int             signo,
                                              GError        **error);
/* Exactly once per successful spawn, after the host reaped result.pid. */
gboolean        sbx_backend_finish           (SbxBackendSpec *spec,
                                              void           *child,
                                              int             wait_status,
                                              SbxExitV1      *out_exit,
                                              GError        **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxBackend, sbx_backend_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxBackendSpec, sbx_backend_spec_unref)

/* For the registry, which makes backends from a plugin's extensions (the
 * record stays opaque here: sbx-plugin-private.h). */
typedef struct _SbxPlugin SbxPlugin;
SbxBackend  *sbx_backend_new             (SbxPlugin                *plugin,
                                          const char               *name,
                                          int                       priority,
                                          guint                     load_index,
                                          const SbxBackendVTableV1 *vtable);
guint        sbx_backend_get_load_index  (SbxBackend *self);
SbxPlugin   *sbx_backend_get_plugin      (SbxBackend *self);
/* Probes once (concurrent callers wait for the one in flight; a successful
 * result is cached, a failure is not).  On success returns TRUE and, when
 * @out_report is given, the frozen probe report (transfer full). */
gboolean     sbx_backend_probe           (SbxBackend        *self,
                                          SbxCompileReport **out_report,
                                          GError           **error);
/* Number of times the plugin's probe() was actually called (tests). */
guint        sbx_backend_get_n_probe_calls (SbxBackend *self);

G_END_DECLS
