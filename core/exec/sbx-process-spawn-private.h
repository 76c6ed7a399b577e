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

G_END_DECLS
