/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Registry internals the executor needs: backend selection and reporter
 * sinks.
 */
#pragma once

#include <glib.h>
#include "sbx-registry.h"
#include "sbx-backend-private.h"
#include "sbx-reporter-sink-private.h"
#include "sbx-compile-report.h"

G_BEGIN_DECLS

typedef struct
{
  gboolean      unconfined;           /* profile isolation == UNCONFINED */
  SbxGuarantees required_guarantees;  /* sbx_profile_get_required_guarantees() */
  const char   *forced_backend;       /* NULL: read SBX_BACKEND from the environment */
} SbxBackendSelection;

/* Walks backend extensions by priority (higher first), probes each (cached),
 * keeps the first whose probe is OK, whose level meets the isolation
 * requirement (Sandboxed needs >= DEGRADED and never an unconfined-only
 * backend; Unconfined accepts only an unconfined-only backend) and whose
 * guarantees cover required_guarantees.  Every rejected candidate and why is
 * recorded in @report.  SBX_BACKEND=name selects or vetoes: if the named
 * backend is missing or rejected, selection fails with
 * SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE; never a fallback..
 *
 * Implementation notes (registry work):
 *  - @report must be unfrozen (or NULL).  On return it holds required, the
 *    rejected list (plugins refused at load come first, as "plugin refused at
 *    load: ..."), and on success backend/level/guarantees from the probe;
 *    sbx_backend_compile() then overwrites level/guarantees.
 *  - forced_backend NULL reads SBX_BACKEND; "" ignores the environment.
 *    Syntax: comma-separated items; "name" selects (at most one), "-name" or
 *    "!name" vetoes, "help" probes and lists every candidate in the error
 *    message and then FAILS with BACKEND_UNAVAILABLE (it never runs anything
 *    under a backend the user did not pick).
 *  - Ties in priority keep load order (directory order, then file name). */
SbxBackend *sbx_registry_select_backend (SbxRegistry               *self,
                                         const SbxBackendSelection *selection,
                                         SbxCompileReport          *report,
                                         GError                   **error);

/* Opens reporter extension @name with its @config (e.g. a file path). */
SbxReporterSink *sbx_registry_open_reporter (SbxRegistry  *self,
                                             const char   *name,
                                             const char   *config,
                                             GError      **error);

/* --- Added by the registry work (not used by the executor) ---------------- */

/* Like sbx_registry_new_for_directories(), but the host table handed to
 * plugins advertises @features (a subset of SBX_HOST_FEATURES_KNOWN) instead
 * of SBX_HOST_FEATURES_IMPLEMENTED, and the loader accepts required features
 * within it.  For tests of the feature negotiation only: a feature claimed
 * here is not implemented by the rest of the library. */
SbxRegistry *sbx_registry_new_with_host_features (const char *const  *dirs,
                                                  uint64_t            features,
                                                  GError            **error);

/* The loaded backend called @name, or NULL.  (transfer full) */
SbxBackend *sbx_registry_lookup_backend (SbxRegistry *self,
                                         const char  *name);

/* The directory list of the default registry: the entries of @plugin_path
 * (colon-separated SBX_PLUGIN_PATH; empty entries skipped, duplicates
 * dropped) first unless @secure, then @plugindir.  Pure function, so the
 * AT_SECURE decision is testable without a setuid binary. */
char      **sbx_registry_compute_default_directories (const char *plugindir,
                                                      const char *plugin_path,
                                                      gboolean    secure);
/* getauxval (AT_SECURE) != 0 */
gboolean    sbx_registry_is_secure_execution (void);
/* A registry whose directory errors are listed, never fatal (the default
 * registry is one). */
SbxRegistry *sbx_registry_new_tolerant (const char *const *dirs);

G_END_DECLS
