/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The answers to a backend's asks (SbxBackendAskFunc), as its supervisors
 * hear them (sbx-linux-ask-queue.c): the host answers from any thread,
 * possibly inside ask while the supervisor holds its own lock, so an
 * answer only queues its ticket under the queue's lock and writes an
 * eventfd the supervisor polls; the supervisor takes the answered tickets
 * on its own thread.  Once stopped (the supervisor is gone), an answer is
 * refused and its ticket freed by whoever answered.  Never installed.
 */
#pragma once

#include <glib.h>

typedef struct _SbxAskQueue SbxAskQueue;

/* NULL when no eventfd can be had (then nothing can be asked). */
SbxAskQueue *sbx_ask_queue_new   (void);
SbxAskQueue *sbx_ask_queue_ref   (SbxAskQueue *queue);
/* The last reference: the queue must be empty (stopped, or taken). */
void         sbx_ask_queue_unref (SbxAskQueue *queue);
/* The eventfd: readable while answers wait. */
int          sbx_ask_queue_fd    (SbxAskQueue *queue);
/* From any thread: queues the answered @ticket; FALSE (nothing queued)
 * once the queue is stopped: the caller frees it. */
gboolean     sbx_ask_queue_push  (SbxAskQueue *queue,
                                  gpointer     ticket);
/* The supervisor's: the answered tickets, appended to @out. */
void         sbx_ask_queue_take  (SbxAskQueue *queue,
                                  GQueue      *out);
/* The supervisor is gone: later pushes fail; what was queued is freed
 * with @free_ticket. */
void         sbx_ask_queue_stop  (SbxAskQueue    *queue,
                                  GDestroyNotify  free_ticket);
