/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxExecutorShared: the part of an executor set that its executors,
 * admissions and processes need, and that may outlive the set object (an
 * application can keep an executor after dropping the set): the lifecycle
 * barrier, the backend, the reporters, the scratch directory, and the
 * objects the set's close must close (sbx-executor-shared.c).
 *
 * It sits below every other executor module: it calls none of them.  What
 * the set's close does to processes and prepared processes it does through
 * the close hooks those objects register (sbx_executor_shared_track), so
 * the shared state never names them.
 *
 * Lifecycle barrier: every run, spawn, preparation, grant issue and executor
 * construction is an admission, an SbxSharedGuard acquired once with
 * sbx_executor_shared_admit() and released once (g_autoptr, or
 * sbx_shared_guard_release()); there is no enter without its leave.  The
 * close (sbx_executor_shared_close_begin) sets `closing` (no admission
 * succeeds afterwards), runs the close hooks phase by phase (a running
 * process or run is killed and reaped by its hook), and
 * waits until no guard is left.  Reporter sinks are therefore only ever used
 * inside an admission, and never after they are closed.
 *
 * LOCKING: one mutex protects `closing`, the admission count, the sinks
 * pointer, the tracked lists and the run counter.  It is never held across a
 * close hook, a reporter call or a wait for a child.
 */
#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>
#include "sbx-backend-private.h"
#include "sbx-compile-report.h"
#include "sbx-denial.h"
#include "sbx-profile.h"
#include "sbx-reporter-sink-private.h"

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
/* Every distinct refusal of a run (an SbxDenial), and how many did not fit. */
#define SBX_EVENT_DENIED            "denied"
#define SBX_EVENT_DENIALS_DROPPED   "denials-dropped"
#define SBX_EVENT_SCHEMA            1

typedef struct _SbxExecutorShared SbxExecutorShared;

/* A new shared state for a set of @profile: a fresh set ID, the close fd
 * (an eventfd).  NULL with SBX_EXECUTOR_SET_ERROR_SCRATCH when the eventfd
 * cannot be made. */
SbxExecutorShared *sbx_executor_shared_new   (SbxProfile        *profile,
                                              GTimeSpan          grant_ttl,
                                              GError           **error);
SbxExecutorShared *sbx_executor_shared_ref   (SbxExecutorShared *shared);
void               sbx_executor_shared_unref (SbxExecutorShared *shared);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxExecutorShared, sbx_executor_shared_unref)

/* Construction, by the set's init only (before any executor exists); each
 * takes ownership of what it is given. */
void               sbx_executor_shared_set_backend (SbxExecutorShared *shared,
                                                    SbxBackend        *backend,
                                                    SbxCompileReport  *selection_report);
void               sbx_executor_shared_add_sink    (SbxExecutorShared *shared,
                                                    SbxReporterSink   *sink);
/* The set's directory (scratch_root/sandbox-executors-XXXXXX) and its
 * liveness marker's fd, flock()ed for as long as the set lives. */
void               sbx_executor_shared_set_scratch (SbxExecutorShared *shared,
                                                    char              *scratch_root,
                                                    char              *owned_dir,
                                                    int                live_fd);

/* Immutable once the set is constructed. */
const char        *sbx_executor_shared_get_set_id       (SbxExecutorShared *shared);
SbxProfile        *sbx_executor_shared_get_profile      (SbxExecutorShared *shared);
SbxBackend        *sbx_executor_shared_get_backend      (SbxExecutorShared *shared);
SbxCompileReport  *sbx_executor_shared_get_selection_report (SbxExecutorShared *shared);
const char        *sbx_executor_shared_get_owned_dir    (SbxExecutorShared *shared);
const char        *sbx_executor_shared_get_scratch_root (SbxExecutorShared *shared);
GTimeSpan          sbx_executor_shared_get_grant_ttl    (SbxExecutorShared *shared);
/* TRUE once the close began. */
gboolean           sbx_executor_shared_is_closing       (SbxExecutorShared *shared);

/* The admission guard: one admission in flight, holding a reference to the
 * shared state until it is released. */
typedef struct _SbxSharedGuard SbxSharedGuard;

/* (transfer full) (nullable) A guard, or NULL once the close began. */
SbxSharedGuard    *sbx_executor_shared_admit  (SbxExecutorShared *shared);
/* (transfer full) (nullable) A second guard for the admission @guard
 * holds, never refused (the close cannot have passed its wait while @guard
 * is held): for a reference a thread keeps after @guard is released, which
 * the close must outwait too.  NULL for NULL. */
SbxSharedGuard    *sbx_shared_guard_hold      (SbxSharedGuard    *guard);
/* Leaves the barrier (the close may be waiting for it) and drops the
 * guard's reference to the shared state before a waiting close can return.
 * NULL is fine. */
void               sbx_shared_guard_release   (SbxSharedGuard    *guard);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxSharedGuard, sbx_shared_guard_release)
SbxExecutorShared *sbx_shared_guard_get_shared (SbxSharedGuard   *guard);

/* The next run ID of the set; FALSE once the close began (a start admitted
 * earlier must then spawn nothing). */
gboolean           sbx_executor_shared_next_run_id (SbxExecutorShared *shared,
                                                    guint64           *out_run_id);

/* Emits one event to every reporter.  Call only inside an admission.  Adds
 * "schema", "event", "time", "set" and "executor" (when @key is not NULL)
 * in front of the members @add_members adds. */
void               sbx_executor_shared_emit  (SbxExecutorShared *shared,
                                              const char        *event,
                                              const char        *key,
                                              void             (*add_members) (JsonBuilder *builder,
                                                                               gpointer     data),
                                              gpointer           data);

/* Emits a "denied" event for @denial of run @run_id (0: before any run). */
void               sbx_executor_shared_emit_denial (SbxExecutorShared *shared,
                                                    const char        *key,
                                                    guint64            run_id,
                                                    SbxDenial         *denial);

/* The close's phases, in the order they run: reservations that were never
 * started (their close releases the barrier they hold), then running
 * processes (their close kills the tree and reaps it here). */
typedef enum
{
  SBX_CLOSE_PHASE_RESERVED,
  SBX_CLOSE_PHASE_RUNNING,
  SBX_N_CLOSE_PHASES
} SbxClosePhase;

typedef void (*SbxCloseHook) (GObject *object);

/* Lists @object (referenced) so that the close calls @hook on it in @phase.
 * Under the barrier's lock: FALSE, and nothing listed, once the close began
 * (the caller then closes the object itself); a close that begins later
 * finds it.  The hook may call sbx_executor_shared_untrack(). */
gboolean           sbx_executor_shared_track   (SbxExecutorShared *shared,
                                                SbxClosePhase      phase,
                                                GObject           *object,
                                                SbxCloseHook       hook);
/* Takes @object off the list of @phase and drops the list's reference (the
 * caller must hold one of its own); FALSE when it was not listed. */
gboolean           sbx_executor_shared_untrack (SbxExecutorShared *shared,
                                                SbxClosePhase      phase,
                                                GObject           *object);

/* The close, first half: stops admissions, runs the close hooks of each
 * phase in order, waits until no guard is left and takes the reporters out
 * of use.  Call once. */
void               sbx_executor_shared_close_begin (SbxExecutorShared *shared);
/* The close, second half (after the set closed its executors and route):
 * closes the reporters, removes the owned directory (only that) and then
 * releases the liveness lock (a directory that could not be removed is a
 * dead set's from then on). */
gboolean           sbx_executor_shared_close_end   (SbxExecutorShared *shared,
                                                    GError           **error);

G_END_DECLS
