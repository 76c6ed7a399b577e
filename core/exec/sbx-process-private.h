/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxProcess internals the executor set needs: its close kills every live
 * process and reaps it (the backend's finish() included) before it goes on.
 */
#pragma once

#include "sbx-process.h"
#include "sbx-executor-impl-private.h"

G_BEGIN_DECLS

/* Set close: marks the process CLOSED, kills its whole tree, waits for the
 * target (blocking this thread, re-killing), reaps it and runs finish().
 * Returns once the process is DONE; its waits complete with
 * SBX_EXECUTOR_ERROR_CLOSED.  Safe against a concurrent reap. */
void sbx_process_close_internal (SbxProcess *self);

/* Whether the process's stdin and stdout are a PTY master. */
gboolean    sbx_process_has_pty         (SbxProcess *self);

/* Spawns an admitted start (sbx_executor_spawn() = admit + this; a
 * prepared process's start is this).  Takes @rr and the contents of
 * @admission (cleared), whatever the outcome; a failure releases the
 * admission and spawns nothing. */
SbxProcess *sbx_process_start_admitted (SbxExecutor     *executor,
                                        SbxStartRequest *rr,
                                        SbxAdmission    *admission,
                                        GCancellable    *cancellable,
                                        GError         **error);

G_END_DECLS
