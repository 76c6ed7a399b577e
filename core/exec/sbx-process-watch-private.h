/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A process's watches, waits and teardown (sbx-process-watch.c), for the
 * object (sbx-process.c), its start (sbx-process-spawn.c) and the executor
 * set, whose close kills every live process and reaps it (the backend's
 * finish() included) before it goes on.
 */
#pragma once

#include <gio/gio.h>
#include "sbx-process.h"
#include "sbx-supervise-private.h"

G_BEGIN_DECLS

/* Set close: marks the process CLOSED, kills its whole tree, waits for the
 * target (blocking this thread, re-killing), reaps it and runs finish().
 * Returns once the process is DONE; its waits complete with
 * SBX_EXECUTOR_ERROR_CLOSED.  Safe against a concurrent reap. */
void sbx_process_close_internal (SbxProcess *self);

/* Sends @signo to the target through the backend (SIGKILL: the whole
 * tree).  TRUE when the process is already terminal. */
gboolean sbx_process_signal_target (SbxProcess          *self,
                                    int                  signo,
                                    GError             **error);
/* Kills the whole tree now, recording why (the first reason wins). */
void     sbx_process_kill          (SbxProcess          *self,
                                    SbxSuperviseOutcome  why);
/* Reaps on this thread: kill the rest of the tree, waitpid, finish(),
 * complete the pending waits.  Whoever comes first reaps. */
void     sbx_process_reap          (SbxProcess          *self);
/* Attaches a watch to @context (NULL: the global default).  A no-op once
 * the process is DONE. */
void     sbx_process_attach_watch  (SbxProcess          *self,
                                    GMainContext        *context);
/* Makes every watch look at the timers again (after force_exit). */
void     sbx_process_kick_watches  (SbxProcess          *self);
/* Blocks until DONE (acting on the timers and on @cancellable), reaping on
 * this thread; *cancelled says whether @cancellable fired. */
void     sbx_process_wait_blocking (SbxProcess          *self,
                                    GCancellable        *cancellable,
                                    gboolean            *cancelled);
/* The wait's verdict once DONE: TRUE, or the reason the tree was killed. */
gboolean sbx_process_result        (SbxProcess          *self,
                                    gboolean             wait_cancelled,
                                    GError             **error);
/* Completes one wait_async() task from the process's result. */
void     sbx_process_complete_wait (SbxProcess          *self,
                                    GTask               *task);

/* Calls @fn (@data) once the process is DONE: at once (on this thread)
 * when it already is, else on the reaping thread. */
void     sbx_process_on_reaped     (SbxProcess          *self,
                                    void               (*fn) (gpointer data),
                                    gpointer             data);

G_END_DECLS
