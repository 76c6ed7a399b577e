/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal contract between SbxExecutorSet and SbxExecutor.
 *
 * The shared state of a set (the lifecycle barrier, the backend, the
 * reporters, the close hooks) is its own module below both:
 * sbx-executor-shared-private.h.
 */
#pragma once

#include <glib.h>
#include "sbx-executor.h"
#include "sbx-executor-shared-private.h"

G_BEGIN_DECLS

#define SBX_GRANT_KEY_SIZE 32

/* The set's egress route (sbx-executor-egress-private.h). */
typedef struct _SbxEgress SbxEgress;

/* Creates the executor for @key: its HOME/TMPDIR/state dirs under the owned
 * dir, the scrubbed environment, the policy, the compiled spec (checked
 * against the profile's required guarantees), the grant key, and the
 * executor-created event.  On failure nothing it created is left. */
SbxExecutor       *sbx_executor_new_internal (SbxExecutorShared *shared,
                                              SbxEgress         *egress,
                                              const char        *key,
                                              GError           **error);
/* Called by the set's close once no admission is left: releases the spec
 * and wipes the grant key.  Idempotent. */
void               sbx_executor_close_internal (SbxExecutor     *self);
/* White-box tests: copies the grant key; FALSE once it is wiped. */
gboolean           sbx_executor_peek_grant_key (SbxExecutor     *self,
                                                guint8           out_key[SBX_GRANT_KEY_SIZE]);
/* Grants, for tests: the clock the executor reads (milliseconds since the
 * Unix epoch); NULL restores the wall clock.  The grant TTL still comes
 * from the set. */
typedef gint64 (*SbxGrantClockFunc) (gpointer data);
void               sbx_executor_set_grant_clock (SbxExecutor       *self,
                                                 SbxGrantClockFunc  clock,
                                                 gpointer           data);
/* Sizes of the replay registry and of the retained-handle registry. */
guint              sbx_executor_get_n_replay    (SbxExecutor     *self);
guint              sbx_executor_get_n_retained  (SbxExecutor     *self);

/* The executor's backend state directory. */
const char        *sbx_executor_get_state_dir  (SbxExecutor     *self);

G_END_DECLS
