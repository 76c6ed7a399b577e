/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxPreparedProcess: an admitted start that has not spawned yet.
 *
 * sbx_executor_prepare() runs admission (sbx-executor-admit.c: every check,
 * the gate, the grant transaction with its consumption, the transient
 * spec) and keeps what it reserved, the set's barrier included, until the
 * process starts or is closed.  It is on the set's `prepared` list so that
 * the set's close closes it when the caller abandoned it.
 *
 * LOCKING: self->mutex protects `state`; the admission moves out exactly
 * once, under it (to the process on start, to nothing on close), so the
 * reservation is released exactly once whatever races.
 */
#include "sbx-executor-impl-private.h"
#include "sbx-process-spawn-private.h"

#include <unistd.h>

#include <string.h>

typedef enum
{
  PREPARED,
  STARTED,
  CLOSED,
} PreparedState;

/**
 * SbxPreparedProcess:
 *
 * A command admitted by [method@Sbx.Executor.prepare] and not started yet:
 * every check and reservation of a start is done (the command gate, the
 * grants verified and spent, the transient spec compiled), nothing runs.
 * A harness shows the user what was admitted
 * ([method@Sbx.PreparedProcess.get_effective_access] ...), then starts it
 * once with [method@Sbx.PreparedProcess.start] (a process) or
 * [method@Sbx.PreparedProcess.run] (to its end, as [method@Sbx.Executor.run]),
 * or drops it with [method@Sbx.PreparedProcess.close].  Its grants stay
 * spent either way.  [method@Sbx.PreparedProcess.get_report] is the report
 * of this run, after its grants: what to show before it starts.
 *
 * Closing the set closes every prepared process that was never started; a
 * start that races the set's close either starts before the close's
 * barrier (and is killed and waited for by it) or fails with
 * %SBX_EXECUTOR_ERROR_CLOSED, never spawning after the close began.
 *
 * Since: 0.1
 */
struct _SbxPreparedProcess
{
  GObject           parent_instance;

  SbxExecutor      *executor;
  SbxStartRequest  *rr;            /* moves to the process on start */
  SbxAdmission      admission;     /* moves to the process on start */
  SbxProcessAccess  access;
  char            **write_paths;
  char            **write_trees;
  char            **spent;
  SbxCompileReport *report;

  GMutex            mutex;
  PreparedState     state;         /* (mutex) */
};

G_DEFINE_FINAL_TYPE (SbxPreparedProcess, sbx_prepared_process, G_TYPE_OBJECT)

static void
sbx_prepared_process_finalize (GObject *object)
{
  SbxPreparedProcess *self = SBX_PREPARED_PROCESS (object);

  /* The set's list holds a reference until close: here the reservation is
   * already released (or moved). */
  sbx_admission_clear (&self->admission);
  g_clear_pointer (&self->rr, sbx_start_request_free);
  g_clear_object (&self->executor);
  g_strfreev (self->write_paths);
  g_strfreev (self->write_trees);
  g_strfreev (self->spent);
  g_clear_pointer (&self->report, sbx_compile_report_unref);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (sbx_prepared_process_parent_class)->finalize (object);
}

static void
sbx_prepared_process_class_init (SbxPreparedProcessClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sbx_prepared_process_finalize;
}

static void
sbx_prepared_process_init (SbxPreparedProcess *self)
{
  g_mutex_init (&self->mutex);
}

static char **
strv_of (GPtrArray *array)
{
  GStrvBuilder *builder;
  char **strv;

  if (array == NULL || array->len == 0)
    return NULL;
  builder = g_strv_builder_new ();
  for (guint i = 0; i < array->len; i++)
    if (array->pdata[i] != NULL)
      g_strv_builder_add (builder, array->pdata[i]);
  strv = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  return strv;
}

/* Upstream's derivation: the base kind from the workspace write access; a
 * host write grant makes it broad with no lists; path and tree grants are
 * listed, turn read-only into scoped, and are moot (cleared) when broad. */
static void
derive_access (SbxPreparedProcess *self,
               SbxProfile         *profile)
{
  gboolean listed = self->admission.write_paths != NULL
                    && (self->admission.write_paths->len > 0
                        || self->admission.write_trees->len > 0);

  switch (sbx_profile_get_workspace_write (profile))
    {
    case SBX_ACCESS_ALLOW:
      self->access = SBX_PROCESS_ACCESS_BROAD_WRITE;
      break;
    case SBX_ACCESS_GATED:
      self->access = SBX_PROCESS_ACCESS_SCOPED_WRITE;
      break;
    case SBX_ACCESS_DENY:
    default:
      self->access = SBX_PROCESS_ACCESS_READ_ONLY;
      break;
    }
  if (self->admission.host_write)
    {
      self->access = SBX_PROCESS_ACCESS_BROAD_WRITE;
      return;
    }
  if (!listed)
    return;
  if (self->access == SBX_PROCESS_ACCESS_BROAD_WRITE)
    return;
  self->access = SBX_PROCESS_ACCESS_SCOPED_WRITE;
  self->write_paths = strv_of (self->admission.write_paths);
  self->write_trees = strv_of (self->admission.write_trees);
}

/**
 * sbx_executor_prepare:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments
 * @options: (nullable): as for [method@Sbx.Executor.spawn]; copied, and its
 *   file descriptors duplicated, before this returns
 * @cancellable: (nullable): checked before anything is reserved
 * @error: return location for a [error@Sbx.ExecutorError] or a
 *   [error@Sbx.GrantError]
 *
 * Admits a command without starting it: every check and reservation of
 * [method@Sbx.Executor.spawn], in the same order, with the grants verified
 * and spent here (a later replay of a token gets %SBX_GRANT_ERROR_REPLAY
 * even if the prepared process is never started).  What was admitted is
 * frozen in the result.  [method@Sbx.Executor.spawn] is this followed by
 * [method@Sbx.PreparedProcess.start].
 *
 * Returns: (transfer full): the prepared process, or %NULL with @error set
 *   and nothing reserved
 *
 * Since: 0.1
 */
/* What the set's close does to a preparation never started. */
static void
close_hook (GObject *object)
{
  sbx_prepared_process_close (SBX_PREPARED_PROCESS (object));
}

SbxPreparedProcess *
sbx_executor_prepare (SbxExecutor          *self,
                      const char           *cwd,
                      const char *const    *argv,
                      const SbxRunOptions  *options,
                      GCancellable         *cancellable,
                      GError              **error)
{
  g_autoptr(SbxPreparedProcess) prepared = NULL;
  SbxExecutorShared *shared;
  gboolean closing;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  prepared = g_object_new (SBX_TYPE_PREPARED_PROCESS, NULL);
  prepared->executor = g_object_ref (self);
  prepared->rr = sbx_start_request_new (cwd, argv, options);
  if (!sbx_start_request_own_fds (prepared->rr, error))
    return NULL;
  if (!sbx_executor_admit (self, prepared->rr, cancellable, &prepared->admission, error))
    return NULL;
  derive_access (prepared, sbx_executor_shared_get_profile (self->shared));
  prepared->spent = prepared->admission.spent != NULL
                    ? g_strdupv ((char **) prepared->admission.spent->pdata) : NULL;
  prepared->report = sbx_compile_report_ref (prepared->admission.report);

  /* Registered for the set's close; a close that began meanwhile closes
   * the preparation here. */
  shared = sbx_shared_guard_get_shared (prepared->admission.guard);
  closing = !sbx_executor_shared_track (shared, SBX_CLOSE_PHASE_RESERVED, G_OBJECT (prepared),
                                        close_hook);
  if (closing)
    {
      sbx_prepared_process_close (prepared);
      g_set_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED,
                   "The executor set was closed while “%s” was being prepared", argv[0]);
      return NULL;
    }
  return g_steal_pointer (&prepared);
}

/* Takes the admission out, once: TRUE for the caller that got it. */
static gboolean
take_admission (SbxPreparedProcess *self,
                PreparedState       to,
                SbxAdmission       *out,
                SbxStartRequest   **out_rr)
{
  gboolean taken = FALSE;

  g_mutex_lock (&self->mutex);
  if (self->state == PREPARED)
    {
      self->state = to;
      *out = self->admission;
      memset (&self->admission, 0, sizeof self->admission);
      *out_rr = g_steal_pointer (&self->rr);
      taken = TRUE;
    }
  g_mutex_unlock (&self->mutex);
  return taken;
}

/* The error of a start or run of a preparation already taken. */
static void
set_not_prepared_error (SbxPreparedProcess  *self,
                        GError             **error)
{
  PreparedState state;

  g_mutex_lock (&self->mutex);
  state = self->state;
  g_mutex_unlock (&self->mutex);
  if (state == STARTED)
    g_set_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_ALREADY_STARTED,
                 "The prepared process was already started");
  else
    g_set_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_PROCESS_CLOSED,
                 "The prepared process was closed");
}

static void
unlist (SbxPreparedProcess *self,
        SbxExecutorShared  *shared)
{
  sbx_executor_shared_untrack (shared, SBX_CLOSE_PHASE_RESERVED, G_OBJECT (self));
}

/**
 * sbx_prepared_process_start:
 * @self: a [class@Sbx.PreparedProcess]
 * @cancellable: (nullable): checked just before the spawn, then the
 *   process's for its whole life (cancelling it kills the tree)
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Starts the prepared command, once.  A second start fails with
 * %SBX_EXECUTOR_ERROR_ALREADY_STARTED, a start after
 * [method@Sbx.PreparedProcess.close] with
 * %SBX_EXECUTOR_ERROR_PROCESS_CLOSED, a start once the set began closing
 * with %SBX_EXECUTOR_ERROR_CLOSED.  When the spawn fails the whole
 * reservation is released (the grants stay spent).
 *
 * Returns: (transfer full): the running process, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxProcess *
sbx_prepared_process_start (SbxPreparedProcess  *self,
                            GCancellable        *cancellable,
                            GError             **error)
{
  SbxAdmission admission;
  SbxStartRequest *rr = NULL;
  SbxExecutorShared *shared;

  g_return_val_if_fail (SBX_IS_PREPARED_PROCESS (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!take_admission (self, STARTED, &admission, &rr))
    {
      set_not_prepared_error (self, error);
      return NULL;
    }
  shared = sbx_shared_guard_get_shared (admission.guard);
  unlist (self, shared);
  /* sbx_process_start_admitted() re-checks the cancellable and the set's
   * close (under the barrier's lock, before the fork) and releases the
   * admission on any failure. */
  return sbx_process_start_admitted (self->executor, rr, &admission, cancellable, error);
}

/* A run of the preparation: takes its admission (once, as a start does)
 * and the run's streams, for the executor's run engine
 * (sbx-executor-run.c).  A refusal here (the streams, a cancel, the set's
 * close) releases the reservation with an exit event, as a failed start
 * does. */
static gboolean
prepared_run_begin (SbxPreparedProcess  *self,
                    GCancellable        *cancellable,
                    SbxAdmission        *admission,
                    SbxStartRequest    **out_rr,
                    int                  fds[3],
                    int                 *null_fd,
                    GError             **error)
{
  SbxStartRequest *taken = NULL;
  g_autoptr(SbxStartRequest) rr = NULL;
  g_autoptr(GError) refused = NULL;
  SbxExecutorShared *shared;

  *null_fd = -1;
  if (!take_admission (self, STARTED, admission, &taken))
    {
      set_not_prepared_error (self, error);
      return FALSE;
    }
  rr = taken;
  shared = sbx_shared_guard_get_shared (admission->guard);
  unlist (self, shared);
  if (g_cancellable_is_cancelled (cancellable))
    g_set_error (&refused, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED,
                 "The run of “%s” was cancelled before it started; nothing was spawned",
                 rr->argv[0]);
  else if (sbx_executor_shared_is_closing (shared))
    g_set_error (&refused, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED,
                 "The executor set was closed before “%s” started; nothing was spawned",
                 rr->argv[0]);
  else
    sbx_run_streams_resolve (rr, fds, null_fd, &refused);
  if (refused != NULL)
    {
      SbxSuperviseResult none = { 0 };

      if (*null_fd >= 0)
        close (*null_fd);
      sbx_executor_emit_exit (self->executor, admission, &none, refused, FALSE);
      sbx_admission_clear (admission);
      g_propagate_error (error, g_steal_pointer (&refused));
      return FALSE;
    }
  *out_rr = g_steal_pointer (&rr);
  return TRUE;
}

/**
 * sbx_prepared_process_run:
 * @self: a [class@Sbx.PreparedProcess]
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the call returns
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Runs the prepared command to its end and collects it, once, exactly as
 * [method@Sbx.Executor.run] does with the options given to
 * [method@Sbx.Executor.prepare] (output limit, PTY relay, stream modes and
 * redirections; a timeout or deadline counts from the prepare).
 * [method@Sbx.Executor.run] is [method@Sbx.Executor.prepare] followed by
 * this call: one run engine.  Between the two the caller can show the run's
 * own report ([method@Sbx.PreparedProcess.get_report]).
 *
 * A second start or run fails with %SBX_EXECUTOR_ERROR_ALREADY_STARTED, one
 * after [method@Sbx.PreparedProcess.close] with
 * %SBX_EXECUTOR_ERROR_PROCESS_CLOSED, one once the set began closing with
 * %SBX_EXECUTOR_ERROR_CLOSED (nothing is spawned).  Its result's
 * [method@Sbx.RunResult.get_spawn_report] is
 * [method@Sbx.PreparedProcess.get_report].
 *
 * Returns: (transfer full): the result, or %NULL with @error set; a non-zero
 *   exit or a death by signal is a result, not an error
 *
 * Since: 0.2
 */
SbxRunResult *
sbx_prepared_process_run (SbxPreparedProcess  *self,
                          GCancellable        *cancellable,
                          GError             **error)
{
  SbxAdmission admission;
  SbxStartRequest *rr = NULL;
  int fds[3];
  int null_fd;

  g_return_val_if_fail (SBX_IS_PREPARED_PROCESS (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!prepared_run_begin (self, cancellable, &admission, &rr, fds, &null_fd, error))
    return NULL;
  return sbx_executor_run_admitted (self->executor, rr, &admission, fds, null_fd, cancellable,
                                    error);
}

/**
 * sbx_prepared_process_run_async:
 * @self: a [class@Sbx.PreparedProcess]
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the task completes
 * @callback: (scope async): called in the thread-default main context of
 *   the caller when the run is over
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.PreparedProcess.run], on the same
 * engine as [method@Sbx.Executor.run_async]: no thread per run.
 *
 * Since: 0.2
 */
void
sbx_prepared_process_run_async (SbxPreparedProcess  *self,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  SbxAdmission admission;
  SbxStartRequest *rr = NULL;
  int fds[3];
  int null_fd;

  g_return_if_fail (SBX_IS_PREPARED_PROCESS (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sbx_prepared_process_run_async);
  /* The run reports cancellation itself, after the tree is dead. */
  g_task_set_check_cancellable (task, FALSE);
  if (!prepared_run_begin (self, cancellable, &admission, &rr, fds, &null_fd, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  sbx_executor_run_admitted_async (self->executor, rr, &admission, fds, null_fd, cancellable,
                                   task);
}

/**
 * sbx_prepared_process_run_finish:
 * @self: a [class@Sbx.PreparedProcess]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Finishes [method@Sbx.PreparedProcess.run_async].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.2
 */
SbxRunResult *
sbx_prepared_process_run_finish (SbxPreparedProcess  *self,
                                 GAsyncResult        *result,
                                 GError             **error)
{
  g_return_val_if_fail (SBX_IS_PREPARED_PROCESS (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_async_result_is_tagged (result, sbx_prepared_process_run_async), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * sbx_prepared_process_close:
 * @self: a [class@Sbx.PreparedProcess]
 *
 * Drops a prepared process that was not started: releases every
 * reservation (the transient spec, the set's barrier) without un-spending
 * its grants.  Idempotent; after a start it does nothing.
 *
 * Since: 0.1
 */
void
sbx_prepared_process_close (SbxPreparedProcess *self)
{
  SbxAdmission admission;
  SbxStartRequest *rr = NULL;
  SbxExecutorShared *shared;

  g_return_if_fail (SBX_IS_PREPARED_PROCESS (self));

  if (!take_admission (self, CLOSED, &admission, &rr))
    return;
  shared = sbx_shared_guard_get_shared (admission.guard);
  {
    SbxSuperviseResult none = { 0 };
    g_autoptr(GError) why = g_error_new (SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_PROCESS_CLOSED,
                                         "The prepared process was closed before it started");

    sbx_executor_emit_exit (self->executor, &admission, &none, why, FALSE);
  }
  sbx_start_request_free (rr);
  g_object_ref (self);
  unlist (self, shared);
  sbx_admission_clear (&admission);
  g_object_unref (self);
}

/**
 * sbx_prepared_process_get_effective_access:
 * @self: a [class@Sbx.PreparedProcess]
 *
 * Returns what the process was admitted to write, frozen at prepare time:
 * the profile's workspace write access (allow: broad, gated: scoped, deny:
 * read-only) with what the grants opened (a host write grant: broad; path
 * and tree write grants: listed, scoped at least).
 *
 * Returns: the access kind
 *
 * Since: 0.1
 */
SbxProcessAccess
sbx_prepared_process_get_effective_access (SbxPreparedProcess *self)
{
  g_return_val_if_fail (SBX_IS_PREPARED_PROCESS (self), SBX_PROCESS_ACCESS_READ_ONLY);

  return self->access;
}

/**
 * sbx_prepared_process_get_write_paths:
 * @self: a [class@Sbx.PreparedProcess]
 *
 * Returns the exact entries the grants opened for writing (none when the
 * access is broad).
 *
 * Returns: (array zero-terminated=1) (transfer none) (nullable): the
 *   canonical paths, or %NULL for none
 *
 * Since: 0.1
 */
const char *const *
sbx_prepared_process_get_write_paths (SbxPreparedProcess *self)
{
  g_return_val_if_fail (SBX_IS_PREPARED_PROCESS (self), NULL);

  return (const char *const *) self->write_paths;
}

/**
 * sbx_prepared_process_get_write_trees:
 * @self: a [class@Sbx.PreparedProcess]
 *
 * Returns the trees the grants opened for writing (none when the access is
 * broad).
 *
 * Returns: (array zero-terminated=1) (transfer none) (nullable): the
 *   canonical roots, or %NULL for none
 *
 * Since: 0.1
 */
const char *const *
sbx_prepared_process_get_write_trees (SbxPreparedProcess *self)
{
  g_return_val_if_fail (SBX_IS_PREPARED_PROCESS (self), NULL);

  return (const char *const *) self->write_trees;
}

/**
 * sbx_prepared_process_get_grants_spent:
 * @self: a [class@Sbx.PreparedProcess]
 *
 * Returns what each spent token opened, as [method@Sbx.RunResult.get_grants_spent].
 *
 * Returns: (array zero-terminated=1) (transfer none) (nullable): one line
 *   per token, or %NULL without grants
 *
 * Since: 0.1
 */
const char *const *
sbx_prepared_process_get_grants_spent (SbxPreparedProcess *self)
{
  g_return_val_if_fail (SBX_IS_PREPARED_PROCESS (self), NULL);

  return (const char *const *) self->spent;
}

/**
 * sbx_prepared_process_get_report:
 * @self: a [class@Sbx.PreparedProcess]
 *
 * Returns the compile report of the spec the process will run under, with
 * scope %SBX_REPORT_SCOPE_RUN: the report of the transient spec compiled for
 * its grants (a guarantee a grant took away is absent, and an entry names
 * the grant), or, when its grants change nothing, the executor's facts.
 * This, not [method@Sbx.Executor.get_report] (what a run without grants
 * gets), is what to show before the process starts.
 *
 * Returns: (transfer none): the report
 *
 * Since: 0.1
 */
SbxCompileReport *
sbx_prepared_process_get_report (SbxPreparedProcess *self)
{
  g_return_val_if_fail (SBX_IS_PREPARED_PROCESS (self), NULL);

  return self->report;
}
