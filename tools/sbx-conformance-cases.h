/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance cases shared by the sbx-conformance program and the test
 * suite's conformance module: load one plugin file and prove each of its
 * backends against what it claims.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  SBX_CONFORMANCE_PASS,
  SBX_CONFORMANCE_FAIL,
  SBX_CONFORMANCE_SKIP,
} SbxConformanceOutcome;

typedef struct
{
  char                  *backend;    /* (nullable) NULL for plugin-level cases */
  char                  *area;       /* the guarantee or contract area: "read-boundary", "teardown", ... */
  char                  *name;       /* the case within the area: "read-host-file" */
  SbxConformanceOutcome  outcome;
  char                  *detail;     /* what was seen (why it failed, why it was skipped) */
} SbxConformanceCase;

void sbx_conformance_case_free (SbxConformanceCase *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxConformanceCase, sbx_conformance_case_free)

/* Called once per finished case, in order. */
typedef void (*SbxConformanceEmitFunc) (const SbxConformanceCase *c,
                                        gpointer                  user_data);

typedef struct
{
  const char             *plugin_path;   /* the .so to judge */
  const char             *backend;       /* (nullable) only this backend of it */
  const char             *probe_helper;  /* sbx-conformance-probe */
  const char             *self_path;     /* (nullable) sbx-conformance itself, for the
                                          * killed-supervisor case (skipped without) */
  SbxConformanceEmitFunc  emit;          /* (nullable) */
  gpointer                user_data;
} SbxConformanceOptions;

/* The environment variable sbx_conformance_run() sets in the calling process
 * (before any executor exists) to prove env-scrub.  Call
 * sbx_conformance_prepare_environment() before any thread is started. */
#define SBX_CONFORMANCE_SECRET_VAR "SBX_CONFORMANCE_SECRET"
void      sbx_conformance_prepare_environment (void);

/* Runs every case.  Returns FALSE with @error only when the run could not be
 * set up at all; case failures are in @out_cases (element type
 * SbxConformanceCase, owned). */
gboolean  sbx_conformance_run     (const SbxConformanceOptions  *options,
                                   GPtrArray                   **out_cases,
                                   GError                      **error);

/* The JSON summary: counts, and per backend its cases and the areas
 * (guarantees) that failed. */
char     *sbx_conformance_summary_json (const char *plugin_path,
                                        GPtrArray  *cases);

/* The hidden child mode of sbx-conformance used by the killed-supervisor
 * case: argv is { plugin_dir, backend, profile_json_file, scratch, cwd,
 * helper, "marker=MARKER" }.  Runs "helper tree marker" and never returns normally
 * (it is killed).  Returns an exit status on a setup failure. */
int       sbx_conformance_supervise_child (int          argc,
                                           char *const *argv);

G_END_DECLS
