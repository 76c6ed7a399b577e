/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxProcess internals the executor set needs: its close kills every live
 * process and reaps it (the backend's finish() included) before it goes on.
 */
#pragma once

#include "sbx-process.h"

G_BEGIN_DECLS

/* Set close: marks the process CLOSED, kills its whole tree, waits for the
 * target (blocking this thread, re-killing), reaps it and runs finish().
 * Returns once the process is DONE; its waits complete with
 * SBX_EXECUTOR_ERROR_CLOSED.  Safe against a concurrent reap. */
void sbx_process_close_internal (SbxProcess *self);

G_END_DECLS
