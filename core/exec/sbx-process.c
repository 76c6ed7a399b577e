/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxProcess: one command started with sbx_executor_spawn() and supervised
 * without a thread of its own.
 *
 * LIFE
 *   SPAWNING  admitted (sbx-executor-admit.c: the same checks as a run),
 *             registered in the set's live list, backend spawn() running;
 *   RUNNING   the target exists; watches (a GSource on the pidfd plus the
 *             deadline and the terminate grace as its ready time) sit on the
 *             spawn-time thread-default context and on the context of every
 *             wait_async();
 *   REAPING   the pidfd became readable: the tree is SIGKILLed while the
 *             exited target still pins its ids, the target is reaped
 *             (waitpid) and the backend's finish() proves the tree gone;
 *   DONE      exit status known, pending waits completed, admission left.
 *
 * Reaping runs on a small shared pool (REAP_THREADS threads for every
 * process of the library, not one per process), because finish() may block
 * (a cgroup to empty) and must not stall the main loop.  A sync wait() and
 * the set's close reap on the calling thread instead; whoever comes first
 * reaps, the others wait for DONE.
 *
 * FILES: this one (the object and its methods), sbx-process-watch.c
 * (supervision) and sbx-process-spawn.c (the start), sharing
 * sbx-process-impl-private.h.
 *
 * LOCKING
 *   self->mutex protects the state, the outcome, the exit, the pending
 *   waits, the watches and `signalling`.  No lock is held across a backend
 *   call: signal() runs with `signalling` raised, and the reaper waits for it
 *   to drop before finish() frees the backend's child handle.
 */
#include "sbx-process-impl-private.h"
#include "sbx-process-private.h"
#include "sbx-process-watch-private.h"
#include "sbx-executor-error-private.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */
/* The object                                                                 */
/* ------------------------------------------------------------------------- */

/**
 * SbxProcess:
 *
 * A command started with [method@Sbx.Executor.spawn]: it runs under the
 * executor's confinement while the caller goes on, and is shaped like
 * #GSubprocess (the same method names where the meaning is the same).
 *
 * Its streams are GIO streams ([method@Sbx.Process.get_stdout_pipe] ...),
 * readable while it runs; with a PTY, the terminal's master side is the
 * stdin and stdout pipe.  Waiting is main-loop native: a pidfd source on
 * the thread-default main context, never a thread per process; the
 * backend's teardown (which may block) runs on a small shared pool.
 *
 * When the target exits, the rest of its process tree is killed and the
 * backend proves it gone, whether or not anybody waits — as long as the
 * spawn-time main context runs, or somebody waits, or the set closes.
 * Cancelling the spawn's #GCancellable kills the tree, and so does
 * cancelling a wait's; those waits then fail with %G_IO_ERROR_CANCELLED
 * once the tree is dead.  A deadline or timeout in the options kills the
 * tree and the waits fail with %SBX_EXECUTOR_ERROR_TIMED_OUT; closing the
 * set kills every live process and their waits fail with
 * %SBX_EXECUTOR_ERROR_CLOSED.  In each case the exit status stays
 * readable ([method@Sbx.Process.get_if_signaled] ...).
 *
 * Writing to the stdin pipe after the process closed it raises SIGPIPE, as
 * with any pipe: applications that write to it ignore SIGPIPE (Python does
 * by default).
 *
 * Since: 0.1
 */

G_DEFINE_FINAL_TYPE (SbxProcess, sbx_process, G_TYPE_OBJECT)

static void
sbx_process_finalize (GObject *object)
{
  SbxProcess *self = SBX_PROCESS (object);

  /* Only a DONE (or never spawned) process is finalized: the watches, the
   * pool and the set's live list hold references until then. */
  g_clear_object (&self->stdin_pipe);
  g_clear_object (&self->stdout_pipe);
  g_clear_object (&self->stderr_pipe);
  if (self->pty_master >= 0)
    close (self->pty_master);
  if (self->pidfd >= 0)
    close (self->pidfd);
  sbx_admission_clear (&self->admission);
  g_clear_pointer (&self->spawn_report, sbx_compile_report_unref);
  g_clear_pointer (&self->rr, sbx_start_request_free);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->executor);
  g_clear_pointer (&self->watches, g_ptr_array_unref);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_error (&self->teardown_error);
  g_clear_pointer (&self->run_result, sbx_run_result_unref);
  g_free (self->identifier);
  g_mutex_clear (&self->mutex);
  g_cond_clear (&self->cond);

  G_OBJECT_CLASS (sbx_process_parent_class)->finalize (object);
}

enum
{
  SIGNAL_DENIED,
  SIGNAL_APPROVAL_REQUESTED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
sbx_process_class_init (SbxProcessClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sbx_process_finalize;

  /**
   * SbxProcess::denied:
   * @self: the [class@Sbx.Process]
   * @denial: the refusal, its first occurrence (count 1)
   *
   * Emitted while the tool runs, on the thread-default main context of
   * the spawn, once for each distinct refusal of the sandbox (the same
   * operation on the same target by the same mechanism is one denial;
   * repeats only raise its count).  At most 256 distinct denials are
   * emitted per process; later ones are only counted.  The denial names
   * the grant that would open the access on a later run, or why none can.
   *
   * Emissions are queued as idle callbacks: a main context that does not
   * run delivers none (and a process that ended may still deliver the
   * last few).
   *
   * Since: 0.2
   */
  signals[SIGNAL_DENIED] = g_signal_new ("denied", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 1,
                                         SBX_TYPE_DENIAL);

  /**
   * SbxProcess::approval-requested:
   * @self: the [class@Sbx.Process]
   * @request: the question: what the tool tried, and the grant an
   *   approval spends
   *
   * Emitted while the tool runs, on the thread-default main context of
   * the spawn, when a process started with
   * [method@Sbx.RunOptions.set_ask] reaches a `Gated` capability it holds
   * no grant for.  The attempt waits: keep a reference to @request and
   * answer it, now or later, with [method@Sbx.DecisionRequest.allow_once],
   * [method@Sbx.DecisionRequest.allow_for_run] or
   * [method@Sbx.DecisionRequest.deny].  Identical attempts that arrive
   * while it waits are answered with it.  With no handler connected the
   * attempt is denied at once; the options' timeout (60 seconds by
   * default) and the end of the process deny it too.
   *
   * Since: 0.2
   */
  signals[SIGNAL_APPROVAL_REQUESTED] = g_signal_new ("approval-requested", G_TYPE_FROM_CLASS (klass),
                                                     G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                     G_TYPE_NONE, 1, SBX_TYPE_DECISION_REQUEST);
}

/* The broker's delivery for a spawned process (on its context): no
 * handler means no one to ask, so the attempt is denied. */
void
sbx_process_deliver_decision (SbxDecisionRequest *request,
                              gpointer            data)
{
  SbxProcess *self = data;

  if (!g_signal_has_handler_pending (self, signals[SIGNAL_APPROVAL_REQUESTED], 0, FALSE))
    {
      sbx_decision_request_deny (request);
      return;
    }
  g_signal_emit (self, signals[SIGNAL_APPROVAL_REQUESTED], 0, request);
}

typedef struct
{
  SbxProcess *self;     /* (owned) */
  SbxDenial  *denial;   /* (owned) */
} PostedDenial;

static void
posted_denial_free (gpointer data)
{
  PostedDenial *posted = data;

  g_object_unref (posted->self);
  sbx_denial_unref (posted->denial);
  g_free (posted);
}

static gboolean
emit_denied (gpointer data)
{
  PostedDenial *posted = data;

  g_signal_emit (posted->self, signals[SIGNAL_DENIED], 0, posted->denial);
  return G_SOURCE_REMOVE;
}

void
sbx_process_post_denial (SbxDenial *denial,
                         gpointer   data)
{
  SbxProcess *self = data;
  PostedDenial *posted = g_new0 (PostedDenial, 1);
  g_autoptr(GSource) idle = g_idle_source_new ();

  posted->self = g_object_ref (self);
  posted->denial = sbx_denial_ref (denial);
  /* Never called directly: this runs on the plugin's thread. */
  g_source_set_callback (idle, emit_denied, posted, posted_denial_free);
  g_source_set_static_name (idle, "[sbx] process denied");
  g_source_attach (idle, self->context);
}

static void
sbx_process_init (SbxProcess *self)
{
  g_mutex_init (&self->mutex);
  g_cond_init (&self->cond);
  self->pty_master = -1;
  self->pidfd = -1;
  self->watches = g_ptr_array_new ();
  self->pending = g_ptr_array_new ();
}

/* ------------------------------------------------------------------------- */
/* Streams and properties                                                     */
/* ------------------------------------------------------------------------- */

/**
 * sbx_process_get_stdin_pipe:
 * @self: a [class@Sbx.Process]
 *
 * Returns the stream that writes to the process's standard input (the PTY
 * master with a PTY), or %NULL when stdin is not a pipe.  Closing it gives
 * the process end of file (with a PTY, write the terminal's EOF character,
 * `\x04`, instead: closing the master hangs the terminal up).
 *
 * Returns: (transfer none) (nullable): the stream
 *
 * Since: 0.1
 */
GOutputStream *
sbx_process_get_stdin_pipe (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), NULL);

  return self->stdin_pipe;
}

/**
 * sbx_process_get_stdout_pipe:
 * @self: a [class@Sbx.Process]
 *
 * Returns the stream that reads the process's standard output as it is
 * written (the PTY master with a PTY; its EIO once every terminal user is
 * gone reads as end of file), or %NULL when stdout is not a pipe.
 *
 * Returns: (transfer none) (nullable): the stream
 *
 * Since: 0.1
 */
GInputStream *
sbx_process_get_stdout_pipe (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), NULL);

  return self->stdout_pipe;
}

/**
 * sbx_process_get_stderr_pipe:
 * @self: a [class@Sbx.Process]
 *
 * Returns the stream that reads the process's standard error, or %NULL when
 * stderr is not a pipe of its own (merged into stdout, redirected, or a
 * PTY).
 *
 * Returns: (transfer none) (nullable): the stream
 *
 * Since: 0.1
 */
GInputStream *
sbx_process_get_stderr_pipe (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), NULL);

  return self->stderr_pipe;
}

/**
 * sbx_process_get_spawn_report:
 * @self: a [class@Sbx.Process]
 *
 * Returns the compile report of this process's spawn: what holds for it,
 * after its grants and egress route (scope %SBX_REPORT_SCOPE_RUN), as
 * [method@Sbx.RunResult.get_spawn_report].  [method@Sbx.Executor.get_report]
 * is the executor's, what a run without grants gets.
 *
 * Returns: (transfer none): the spawn's report
 *
 * Since: 0.2
 */
SbxCompileReport *
sbx_process_get_spawn_report (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), NULL);

  return self->spawn_report;
}

/**
 * sbx_process_get_spawn_level:
 * @self: a [class@Sbx.Process]
 *
 * Returns the confinement level of this process's spawn (that of
 * [method@Sbx.Process.get_spawn_report]).
 *
 * Returns: the level
 *
 * Since: 0.2
 */
SbxLevel
sbx_process_get_spawn_level (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), SBX_LEVEL_NONE);

  return self->spawn_level;
}

/**
 * sbx_process_get_spawn_guarantees:
 * @self: a [class@Sbx.Process]
 *
 * Returns the guarantees that hold for this process's spawn, after its
 * grants and egress route: [method@Sbx.Executor.get_guarantees] less what a
 * grant took away.
 *
 * Returns: the guarantees
 *
 * Since: 0.2
 */
SbxGuarantees
sbx_process_get_spawn_guarantees (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), SBX_GUARANTEE_NONE);

  return self->spawn_guarantees;
}

/**
 * sbx_process_get_identifier:
 * @self: a [class@Sbx.Process]
 *
 * Returns the host pid of the process the backend started (the sandbox's
 * supervisor, sbx's PID 1, where there is one; not the target, whose pid
 * lives in the sandbox's own namespace) as a decimal string while the
 * process runs, like g_subprocess_get_identifier().
 *
 * Returns: (nullable): the identifier, or %NULL once the process has been
 *   reaped
 *
 * Since: 0.1
 */
const char *
sbx_process_get_identifier (SbxProcess *self)
{
  const char *id;

  g_return_val_if_fail (SBX_IS_PROCESS (self), NULL);

  g_mutex_lock (&self->mutex);
  id = self->state == STATE_DONE ? NULL : self->identifier;
  g_mutex_unlock (&self->mutex);
  return id;
}

/**
 * sbx_process_get_lifetime_containment:
 * @self: a [class@Sbx.Process]
 *
 * Says what the backend proves about the process tree ending with the
 * process: %SBX_LIFETIME_CONTAINMENT_ENFORCED (a pid namespace or a
 * cgroup), %SBX_LIFETIME_CONTAINMENT_BEST_EFFORT or
 * %SBX_LIFETIME_CONTAINMENT_UNSPECIFIED.  Reported by the backend at spawn,
 * never assumed.
 *
 * Returns: the containment
 *
 * Since: 0.1
 */
SbxLifetimeContainment
sbx_process_get_lifetime_containment (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), SBX_LIFETIME_CONTAINMENT_UNSPECIFIED);

  return (SbxLifetimeContainment) self->spawn.containment;
}

/* ------------------------------------------------------------------------- */
/* Waiting                                                                    */
/* ------------------------------------------------------------------------- */

/**
 * sbx_process_wait:
 * @self: a [class@Sbx.Process]
 * @cancellable: (nullable): cancelling it kills the whole process tree; the
 *   call then fails with %G_IO_ERROR_CANCELLED once the tree is dead
 * @error: return location for an error
 *
 * Blocks until the process has exited and its tree is torn down (the
 * backend's finish() ran).  Does not need a main loop.  A non-zero exit or a
 * death by signal is not an error (see [method@Sbx.Process.wait_check]).
 *
 * Returns: %TRUE once the process ended on its own or by a signal sent to
 *   it; %FALSE with @error set when the tree was killed by a cancellation
 *   (%G_IO_ERROR_CANCELLED), a timeout or deadline
 *   (%SBX_EXECUTOR_ERROR_TIMED_OUT) or the set's close
 *   (%SBX_EXECUTOR_ERROR_CLOSED), or when the teardown could not be proven
 *   (%SBX_EXECUTOR_ERROR_TEARDOWN_FAILED)
 *
 * Since: 0.1
 */
gboolean
sbx_process_wait (SbxProcess    *self,
                  GCancellable  *cancellable,
                  GError       **error)
{
  gboolean cancelled;

  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  sbx_process_wait_blocking (self, cancellable, &cancelled);
  return sbx_process_result (self, cancelled, error);
}

static void
on_wait_cancelled (GCancellable *cancellable,
                   gpointer      data)
{
  GTask *task = data;
  SbxProcess *self = g_task_get_source_object (task);
  WaitData *wd = g_task_get_task_data (task);

  wd->cancelled = TRUE;
  sbx_process_kill (self, SBX_SUPERVISE_CANCELLED);
}

/**
 * sbx_process_wait_async:
 * @self: a [class@Sbx.Process]
 * @cancellable: (nullable): cancelling it kills the whole process tree; the
 *   wait then fails with %G_IO_ERROR_CANCELLED once the tree is dead
 * @callback: (scope async): called in the caller's thread-default main
 *   context once the process has exited and its tree is torn down
 * @user_data: data for @callback
 *
 * Waits for the process without blocking: a pidfd source on the caller's
 * thread-default main context, no thread of its own.  Any number of waits
 * may be pending; they all complete with the same result.
 *
 * Since: 0.1
 */
void
sbx_process_wait_async (SbxProcess          *self,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GMainContext) context = NULL;
  WaitData *wd;
  gboolean done;

  g_return_if_fail (SBX_IS_PROCESS (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sbx_process_wait_async);
  /* Cancellation is reported once the tree is dead, not when it fires. */
  g_task_set_check_cancellable (task, FALSE);
  wd = g_new0 (WaitData, 1);
  g_task_set_task_data (task, wd, g_free);

  /* Connected first (an already cancelled one kills at once); the handler
   * holds the task until sbx_process_complete_wait() disconnects it. */
  if (cancellable != NULL)
    wd->handler = g_cancellable_connect (cancellable, G_CALLBACK (on_wait_cancelled),
                                         g_object_ref (task), g_object_unref);

  g_mutex_lock (&self->mutex);
  done = self->state == STATE_DONE;
  if (!done)
    g_ptr_array_add (self->pending, g_object_ref (task));
  g_mutex_unlock (&self->mutex);
  if (done)
    {
      sbx_process_complete_wait (self, task);
      return;
    }

  context = g_main_context_ref_thread_default ();
  if (context != self->context)
    sbx_process_attach_watch (self, context);
}

/**
 * sbx_process_wait_finish:
 * @self: a [class@Sbx.Process]
 * @result: the result passed to the callback
 * @error: return location for an error
 *
 * Finishes [method@Sbx.Process.wait_async].
 *
 * Returns: as [method@Sbx.Process.wait]
 *
 * Since: 0.1
 */
gboolean
sbx_process_wait_finish (SbxProcess    *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_async_result_is_tagged (result, sbx_process_wait_async), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static gboolean
check_exit (SbxProcess  *self,
            GError     **error)
{
  if (self->exit.kind == SBX_EXIT_SIGNALED)
    {
      g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
                   "“%s” was killed by signal %d", self->rr->argv[0], self->exit.signo);
      return FALSE;
    }
  if (self->exit.code != 0)
    {
      g_set_error (error, G_SPAWN_EXIT_ERROR, self->exit.code, "“%s” exited with code %d",
                   self->rr->argv[0], self->exit.code);
      return FALSE;
    }
  return TRUE;
}

/**
 * sbx_process_wait_check:
 * @self: a [class@Sbx.Process]
 * @cancellable: (nullable): as for [method@Sbx.Process.wait]
 * @error: return location for an error
 *
 * Like [method@Sbx.Process.wait], and also fails unless the process exited
 * with code 0: a non-zero code gives %G_SPAWN_EXIT_ERROR with the code, a
 * signal %G_SPAWN_ERROR_FAILED (as g_subprocess_wait_check()).
 *
 * Returns: %TRUE when the process exited successfully
 *
 * Since: 0.1
 */
gboolean
sbx_process_wait_check (SbxProcess    *self,
                        GCancellable  *cancellable,
                        GError       **error)
{
  return sbx_process_wait (self, cancellable, error) && check_exit (self, error);
}

gboolean
sbx_process_has_pty (SbxProcess *self)
{
  return self->pty_master >= 0;
}

/* ------------------------------------------------------------------------- */
/* Signals, force_exit, resize                                                */
/* ------------------------------------------------------------------------- */

/**
 * sbx_process_send_signal:
 * @self: a [class@Sbx.Process]
 * @signum: the signal
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Sends @signum to the target through the backend: inside a sandbox with
 * its own PID 1 the signal goes through sbx's init to the target; SIGKILL
 * kills the whole tree.  Signals the backend does not forward fail with
 * %SBX_EXECUTOR_ERROR_INVALID_ARGUMENT.  Once the process has exited this
 * does nothing and succeeds.
 *
 * Returns: %TRUE when the signal was delivered or the process is gone
 *
 * Since: 0.1
 */
gboolean
sbx_process_send_signal (SbxProcess  *self,
                         int          signum,
                         GError     **error)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return sbx_process_signal_target (self, signum, error);
}

/**
 * sbx_process_force_exit:
 * @self: a [class@Sbx.Process]
 *
 * Ends the whole process tree: SIGTERM to the target now, then SIGKILL to
 * every process of the tree once the terminate grace
 * ([method@Sbx.RunOptions.set_terminate_grace], 5 s by default) has passed,
 * unless the process has exited before.  The SIGKILL is timed by the
 * process's main-loop sources (or by a blocking wait); calling this again
 * does not restart the grace.
 *
 * Since: 0.1
 */
void
sbx_process_force_exit (SbxProcess *self)
{
  gboolean first;

  g_return_if_fail (SBX_IS_PROCESS (self));

  g_mutex_lock (&self->mutex);
  first = self->state == STATE_RUNNING && self->kill_at == 0;
  if (first)
    self->kill_at = g_get_monotonic_time () + self->rr->grace;
  g_mutex_unlock (&self->mutex);
  if (!first)
    return;
  if (!sbx_process_signal_target (self, SIGTERM, NULL))
    sbx_process_signal_target (self, SIGKILL, NULL);
  sbx_process_kick_watches (self);
}

/**
 * sbx_process_resize:
 * @self: a [class@Sbx.Process]
 * @rows: the new height in rows, positive
 * @cols: the new width in columns, positive
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Resizes the process's PTY (TIOCSWINSZ on the master: the terminal's
 * foreground process group gets SIGWINCH).  Fails with
 * %SBX_EXECUTOR_ERROR_INVALID_ARGUMENT when the process has no PTY.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
sbx_process_resize (SbxProcess  *self,
                    guint16      rows,
                    guint16      cols,
                    GError     **error)
{
  struct winsize ws = { .ws_row = rows, .ws_col = cols };

  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->pty_master < 0)
    return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                              "“%s” has no PTY to resize", self->rr->argv[0]);
  if (rows == 0 || cols == 0)
    return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                              "A PTY cannot be %u×%u", rows, cols);
  if (ioctl (self->pty_master, TIOCSWINSZ, &ws) < 0)
    {
      int errsv = errno;

      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                                "Cannot resize the PTY of “%s”: %s", self->rr->argv[0],
                                g_strerror (errsv));
    }
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Exit status                                                                */
/* ------------------------------------------------------------------------- */

static gboolean
is_done (SbxProcess *self)
{
  gboolean done;

  g_mutex_lock (&self->mutex);
  done = self->state == STATE_DONE;
  g_mutex_unlock (&self->mutex);
  return done;
}

/**
 * sbx_process_get_if_exited:
 * @self: a [class@Sbx.Process]
 *
 * Says whether the target exited normally (rather than by a signal).  Only
 * valid once a wait has returned.
 *
 * Returns: %TRUE when it exited
 *
 * Since: 0.1
 */
gboolean
sbx_process_get_if_exited (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (is_done (self), FALSE);

  return self->exit.kind == SBX_EXIT_EXITED;
}

/**
 * sbx_process_get_exit_status:
 * @self: a [class@Sbx.Process]
 *
 * Returns the target's exit code.  Only valid once a wait has returned and
 * [method@Sbx.Process.get_if_exited] is %TRUE.
 *
 * Returns: the exit code
 *
 * Since: 0.1
 */
int
sbx_process_get_exit_status (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), 1);
  g_return_val_if_fail (is_done (self), 1);
  g_return_val_if_fail (self->exit.kind == SBX_EXIT_EXITED, 1);

  return self->exit.code;
}

/**
 * sbx_process_get_if_signaled:
 * @self: a [class@Sbx.Process]
 *
 * Says whether the target died from a signal.  Only valid once a wait has
 * returned.
 *
 * Returns: %TRUE when it was killed by a signal
 *
 * Since: 0.1
 */
gboolean
sbx_process_get_if_signaled (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (is_done (self), FALSE);

  return self->exit.kind == SBX_EXIT_SIGNALED;
}

/**
 * sbx_process_get_term_sig:
 * @self: a [class@Sbx.Process]
 *
 * Returns the signal that killed the target.  Only valid once a wait has
 * returned and [method@Sbx.Process.get_if_signaled] is %TRUE.
 *
 * Returns: the signal number
 *
 * Since: 0.1
 */
int
sbx_process_get_term_sig (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), 0);
  g_return_val_if_fail (is_done (self), 0);
  g_return_val_if_fail (self->exit.kind == SBX_EXIT_SIGNALED, 0);

  return self->exit.signo;
}

/**
 * sbx_process_get_successful:
 * @self: a [class@Sbx.Process]
 *
 * Says whether the target exited with code 0.  Only valid once a wait has
 * returned.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
sbx_process_get_successful (SbxProcess *self)
{
  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (is_done (self), FALSE);

  return self->exit.kind == SBX_EXIT_EXITED && self->exit.code == 0;
}
