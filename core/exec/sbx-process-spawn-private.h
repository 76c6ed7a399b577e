/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting a process (sbx-process-spawn.c), for sbx_executor_spawn() and a
 * prepared process's start. */
#pragma once

#include <gio/gio.h>
#include "sbx-process.h"
#include "sbx-executor-impl-private.h"

G_BEGIN_DECLS

/* Spawns an admitted start (sbx_executor_spawn() = admit + this; a
 * prepared process's start is this).  Takes @rr and the contents of
 * @admission (cleared), whatever the outcome; a failure releases the
 * admission and spawns nothing. */
SbxProcess *sbx_process_start_admitted (SbxExecutor     *executor,
                                        SbxStartRequest *rr,
                                        SbxAdmission    *admission,
                                        GCancellable    *cancellable,
                                        GError         **error);

/* The run engine's start (sbx-executor-run.c): spawns an admitted run with
 * the child's descriptors given (-1: the null device for stdin, nothing for
 * stdout and stderr; with rr->pty the master stays in the process), without
 * a cancellable (the run watches its own).  The reap makes the run's result
 * (everything but the output); with @reap_inline the pidfd watch on the
 * thread-default context reaps there rather than on the shared pool.  Takes
 * @rr and the contents of @admission, as sbx_process_start_admitted(). */
SbxProcess *sbx_process_start_for_run  (SbxExecutor     *executor,
                                        SbxStartRequest *rr,
                                        SbxAdmission    *admission,
                                        const int        child[3],
                                        gboolean         reap_inline,
                                        GError         **error);

G_END_DECLS
