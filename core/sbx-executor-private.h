/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal contract between SbxExecutorSet and SbxExecutor.
 *
 * SbxExecutorShared is the part of a set that its executors need and that
 * may outlive the set object (an application can keep an executor after
 * dropping the set): the lifecycle barrier, the backend, the reporters.
 *
 * Lifecycle barrier: every run and every executor construction is an
 * "admission" (sbx_executor_shared_enter .. _leave).  Close sets `closing`
 * (no admission succeeds afterwards), makes close_fd readable (every
 * supervising run kills its tree and returns), then waits until no
 * admission is left before it releases specs, closes reporters and removes
 * the owned directory.  Reporter sinks are therefore only ever used inside
 * an admission, and never after they are closed.
 *
 */
#pragma once

#include "sbx-scratch-private.h"
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include "sbx-executor.h"
#include "sbx-executor-set.h"
#include "sbx-profile.h"
#include "sbx-backend-private.h"
#include "sbx-registry-private.h"

G_BEGIN_DECLS

/* Event names of the reporter stream ("schema": 1). */
#define SBX_EVENT_EXECUTOR_CREATED  "executor-created"
#define SBX_EVENT_SPAWN             "spawn"
#define SBX_EVENT_EXIT              "exit"
/* Reserved for the grants issue. */
#define SBX_EVENT_GRANT_ISSUED      "grant-issued"
#define SBX_EVENT_GRANT_SPENT       "grant-spent"
#define SBX_EVENT_GRANT_REFUSED     "grant-refused"
/* The first network target the proxy refused during a run. */
#define SBX_EVENT_NETWORK_DENIED    "network-denied"
#define SBX_EVENT_SCHEMA            1

#define SBX_GRANT_KEY_SIZE 32

typedef struct
{
  gatomicrefcount   ref;

  /* Immutable after the set is constructed. */
  char             *set_id;         /* random UUID, names the set in events */
  SbxProfile       *profile;
  SbxBackend       *backend;
  SbxCompileReport *selection_report;
  char             *owned_dir;      /* scratch/sandbox-executors-XXXXXX */
  char             *scratch_root;   /* canonical scratch root holding owned_dir */
  int               live_fd;        /* owned_dir/SBX_SET_LIVE_MARKER, flock()ed for the set's life */
  GTimeSpan         grant_ttl;
  int               close_fd;       /* eventfd: readable once closing */

  GMutex            mutex;
  GCond             cond;           /* signalled when `active` drops */
  gboolean          closing;        /* (mutex) */
  guint             active;         /* (mutex) admissions in flight */
  GPtrArray        *sinks;          /* (mutex for the pointer) SbxReporterSink*; NULL once closed */
  GPtrArray        *prepared;       /* (mutex) SbxPreparedProcess* (strong) neither started nor closed */
  GPtrArray        *processes;      /* (mutex) SbxProcess* (strong) spawned and not yet reaped */
  guint64           next_run_id;    /* (atomic via mutex) */
  struct _SbxEgress *egress;        /* (nullable) the set's egress route (sbx-executor-egress-private.h) */
} SbxExecutorShared;

SbxExecutorShared *sbx_executor_shared_ref   (SbxExecutorShared *shared);
void               sbx_executor_shared_unref (SbxExecutorShared *shared);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxExecutorShared, sbx_executor_shared_unref)

/* Admission: FALSE once the set is closing. */
gboolean           sbx_executor_shared_enter (SbxExecutorShared *shared);
void               sbx_executor_shared_leave (SbxExecutorShared *shared);
/* Emits one event to every reporter.  Call only inside an admission.  Adds
 * "schema", "event", "time", "set" and "executor" (when @key is not NULL)
 * in front of the members @builder_fn adds. */
void               sbx_executor_shared_emit  (SbxExecutorShared *shared,
                                              const char        *event,
                                              const char        *key,
                                              void             (*add_members) (JsonBuilder *builder,
                                                                               gpointer     data),
                                              gpointer           data);

/* Creates the executor for @key: its HOME/TMPDIR/state dirs under the owned
 * dir, the scrubbed environment, the policy, the compiled spec (checked
 * against the profile's required guarantees), the grant key, and the
 * executor-created event.  On failure nothing it created is left. */
SbxExecutor       *sbx_executor_new_internal (SbxExecutorShared *shared,
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

/* Removes @path and everything below it without following symlinks (a child
 * may plant them); makes directories writable first where needed. */
gboolean           sbx_remove_tree           (const char        *path,
                                              GError           **error);
/* The same, for the directory @name in @parent_fd (opened without following
 * a symlink, removed with unlinkat): no path is resolved again, so the tree
 * removed is the one checked.  @path is for messages only. */
gboolean           sbx_remove_tree_at        (int                parent_fd,
                                              const char        *name,
                                              const char        *path,
                                              GError           **error);

G_END_DECLS
