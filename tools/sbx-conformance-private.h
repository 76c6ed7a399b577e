/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the conformance driver (sbx-conformance-run.c: the
 * registry, one subject per backend, the summary) and its cases
 * (sbx-conformance-cases.c: probes, teardown, limits;
 * sbx-conformance-spawn.c: per-spawn reports under grants).
 */
#pragma once

#include "sbx-conformance-cases.h"

#include <sbx/sbx.h>

G_BEGIN_DECLS

#define PROBE_WORKED   0
#define PROBE_REFUSED 10
/* A sandboxed profile's process limit, and the fork counts around it. */
#define PROCESS_LIMIT      64
#define FORKS_INSIDE      256
#define FORKS_OUTSIDE      80
#define OUTPUT_LIMIT     4096
#define MARKER_WAIT_US   (10 * G_USEC_PER_SEC)
#define SURVIVOR_GRACE_US (G_USEC_PER_SEC)
#define GONE_WAIT_US     (5 * G_USEC_PER_SEC)


typedef struct
{
  const SbxConformanceOptions *options;
  GPtrArray      *cases;
  char           *root;        /* private 0700 directory */
  char           *plugin_dir;  /* root/plugins: the copy of the plugin */
  SbxRegistry    *registry;
  guint           n_markers;
} Run;

typedef struct
{
  Run            *run;
  const char     *backend;
  SbxProfile     *profile;
  char           *dir;         /* root/<backend> */
  char           *ws;          /* the workspace */
  char           *outside;     /* a host directory outside every root */
  char           *scratch;
  char           *helper;      /* the probe helper inside the workspace */
  char           *profile_file;
  SbxExecutorSet *set;
  SbxExecutor    *executor;
  SbxLevel        probed_level;
  SbxGuarantees   probed;
  SbxLevel        level;
  SbxGuarantees   compiled;
  gboolean        unconfined;
  SbxLifetimeContainment containment;
} Subject;

void     sbx_conformance_record      (Run                   *run,
                                      const char            *backend,
                                      const char            *area,
                                      const char            *name,
                                      SbxConformanceOutcome  outcome,
                                      const char            *format,
                                      ...) G_GNUC_PRINTF (6, 7);
gboolean sbx_conformance_copy_file   (const char  *from,
                                      const char  *to,
                                      int          mode,
                                      GError     **error);
void     sbx_conformance_remove_tree (const char  *path);

/* The cases: each records one or more results on s->run. */
void sbx_conformance_case_write_boundary   (Subject *s);
void sbx_conformance_case_read_boundary    (Subject *s);
void sbx_conformance_case_network          (Subject *s, const char *area);
void sbx_conformance_case_env_scrub        (Subject *s);
void sbx_conformance_case_process_boundary (Subject *s);
void sbx_conformance_case_fork_limit       (Subject *s, const char *area, const char *name);
void sbx_conformance_case_teardown_exit    (Subject *s);
void sbx_conformance_case_teardown_timeout (Subject *s);
void sbx_conformance_case_teardown_close   (Subject *s);
void sbx_conformance_case_teardown_killed_supervisor (Subject *s);
void sbx_conformance_case_output_limit     (Subject *s);
void sbx_conformance_case_process_limit    (Subject *s);
/* A spawn's report never claims what its grant dropped (sbx-conformance-spawn.c). */
void sbx_conformance_case_spawn_report     (Subject *s);
/* Egress extensions of the plugin (sbx-conformance-egress.c). */
void sbx_conformance_judge_egress          (Run        *run,
                                            const char *plugin_file,
                                            const char *plugin_name,
                                            const char *extension);

G_END_DECLS
