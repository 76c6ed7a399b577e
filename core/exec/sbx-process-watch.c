/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxProcess supervision (see sbx-process.c for the life of a process and
 * its locking): signals and kills, the deadline and the terminate grace,
 * reaping on a small shared pool, one GSource per main context on the
 * pidfd, the blocking wait, the set's close and the verdict of a wait.
 */
#include "sbx-process-impl-private.h"
#include "sbx-process-watch-private.h"
#include "sbx-executor-error-private.h"
#include "sbx-run-result-private.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define REAP_THREADS 4
/* While waiting for a killed target, re-send SIGKILL this often. */
#define REKILL_INTERVAL_US (G_USEC_PER_SEC)

/* ------------------------------------------------------------------------- */
/* Signals and kills                                                          */
/* ------------------------------------------------------------------------- */

/* Delivers @signo through the backend (to the target through sbx's PID 1;
 * SIGKILL to the whole tree).  TRUE when the process is already terminal:
 * there is nothing left to signal. */
gboolean
sbx_process_signal_target (SbxProcess  *self,
                           int          signo,
                           GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  gboolean ok;

  g_mutex_lock (&self->mutex);
  if (self->state != STATE_RUNNING)
    {
      g_mutex_unlock (&self->mutex);
      return TRUE;
    }
  self->signalling++;
  if (signo == SIGKILL)
    {
      self->killed = TRUE;
      self->last_kill = g_get_monotonic_time ();
    }
  g_mutex_unlock (&self->mutex);

  ok = sbx_backend_signal (self->admission.spec, self->spawn.child, signo, &local_error);
  if (!ok && signo == SIGKILL)
    {
      /* Defense in depth: the target is our unreaped child, its pid cannot
       * have been reused. */
      g_debug ("backend signal failed (%s); killing pid %" G_GINT64_FORMAT " directly",
               local_error->message, self->spawn.pid);
      kill ((pid_t) self->spawn.pid, SIGKILL);
    }

  g_mutex_lock (&self->mutex);
  self->signalling--;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->mutex);

  if (!ok)
    {
      g_set_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                   "Cannot deliver signal %d to “%s”: %s", signo, self->rr->argv[0],
                   local_error->message);
      return FALSE;
    }
  return TRUE;
}

/* Kills the whole tree now, recording why (the first reason wins). */
void
sbx_process_kill (SbxProcess          *self,
                  SbxSuperviseOutcome  why)
{
  g_mutex_lock (&self->mutex);
  if (self->outcome == SBX_SUPERVISE_EXITED && self->state == STATE_RUNNING)
    self->outcome = why;
  g_mutex_unlock (&self->mutex);
  sbx_process_signal_target (self, SIGKILL, NULL);
}

/* (mutex) The next time something must happen without the target's help:
 * the deadline, the grace's SIGKILL, a re-kill; -1 for none. */
static gint64
next_timer_locked (SbxProcess *self)
{
  gint64 next = -1;

  if (self->killed)
    return self->last_kill + REKILL_INTERVAL_US;
  if (self->deadline != 0)
    next = self->deadline;
  if (self->kill_at != 0 && (next < 0 || self->kill_at < next))
    next = self->kill_at;
  return next;
}

/* Acts on timers that passed. */
static void
process_check_timers (SbxProcess *self)
{
  gint64 now = g_get_monotonic_time ();
  gboolean deadline_passed;
  gboolean grace_passed;
  gboolean rekill;

  g_mutex_lock (&self->mutex);
  deadline_passed = !self->killed && self->deadline != 0 && now >= self->deadline;
  grace_passed = !self->killed && self->kill_at != 0 && now >= self->kill_at;
  rekill = self->killed && now - self->last_kill >= REKILL_INTERVAL_US;
  g_mutex_unlock (&self->mutex);

  if (deadline_passed)
    sbx_process_kill (self, SBX_SUPERVISE_TIMED_OUT);
  else if (grace_passed || rekill)
    sbx_process_signal_target (self, SIGKILL, NULL);
}

/* ------------------------------------------------------------------------- */
/* Reaping                                                                    */
/* ------------------------------------------------------------------------- */

void
sbx_process_reap (SbxProcess *self)
{
  g_autoptr(GPtrArray) pending = NULL;
  g_autoptr(GPtrArray) watches = NULL;
  g_autoptr(GError) finish_error = NULL;
  SbxSuperviseResult event_result = { 0 };
  SbxExitV1 exit = { .struct_size = sizeof exit };
  void (*reaped_fn) (gpointer data);
  gpointer reaped_data;
  int status = 0;
  gboolean ok;

  g_mutex_lock (&self->mutex);
  while (self->state == STATE_REAPING || self->state == STATE_SPAWNING)
    g_cond_wait (&self->cond, &self->mutex);
  if (self->state == STATE_DONE)
    {
      g_mutex_unlock (&self->mutex);
      return;
    }
  self->state = STATE_REAPING;
  while (self->signalling > 0)
    g_cond_wait (&self->cond, &self->mutex);
  g_mutex_unlock (&self->mutex);

  /* The target has exited but is not reaped: it still pins its pid (and its
   * process group), so killing the rest of the tree now cannot hit a
   * recycled id.  finish() then proves the tree gone. */
  if (!sbx_backend_signal (self->admission.spec, self->spawn.child, SIGKILL, NULL))
    kill ((pid_t) self->spawn.pid, SIGKILL);
  while (waitpid ((pid_t) self->spawn.pid, &status, 0) < 0)
    {
      int errsv = errno;

      if (errsv == EINTR)
        continue;
      g_warning ("waitpid(%" G_GINT64_FORMAT ") failed: %s; was SIGCHLD ignored?",
                 self->spawn.pid, g_strerror (errsv));
      status = W_EXITCODE (0, SIGKILL);
      break;
    }
  self->duration_us = g_get_monotonic_time () - self->started;
  ok = sbx_backend_finish (self->admission.spec, self->spawn.child, status, &exit, &finish_error);

  g_mutex_lock (&self->mutex);
  if (!ok)
    g_set_error (&self->teardown_error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TEARDOWN_FAILED,
                 "“%s” ran, but its process tree could not be torn down: %s",
                 self->rr->argv[0], finish_error->message);
  event_result.outcome = self->outcome;
  event_result.truncated = self->truncated;
  g_mutex_unlock (&self->mutex);

  /* A run's result: everything but the output, which the run adds. */
  if (self->for_run)
    {
      self->run_result = sbx_run_result_new (NULL, &exit, event_result.truncated,
                                             (SbxLifetimeContainment) self->spawn.containment,
                                             self->duration_us);
      if (self->admission.spent != NULL)
        sbx_run_result_set_grants_spent (self->run_result,
                                         (const char *const *) self->admission.spent->pdata);
      sbx_run_result_set_spawn (self->run_result, self->spawn_report, self->spawn_level,
                                self->spawn_guarantees);
    }

  /* Egress: the execution ends with the process; its first denial is
   * reported to the set's reporters (and a run's result). */
  sbx_egress_run_end (&self->admission.egress);
  if (self->admission.egress.denial_target != NULL)
    sbx_executor_report_network_denial (sbx_shared_guard_get_shared (self->admission.guard),
                                        sbx_executor_get_key (self->executor),
                                        self->admission.run_id, self->run_result,
                                        self->admission.egress.denial_target,
                                        self->admission.egress.denial_reason);
  sbx_executor_report_denials (sbx_shared_guard_get_shared (self->admission.guard),
                               sbx_executor_get_key (self->executor), self->admission.run_id,
                               self->run_result, &self->admission.egress);

  event_result.exit = exit;
  event_result.containment = self->spawn.containment;
  event_result.duration_us = self->duration_us;
  sbx_executor_emit_exit (self->executor, &self->admission, &event_result,
                          self->teardown_error, TRUE);

  /* DONE once the result is whole: a wait that returns sees all of it. */
  g_mutex_lock (&self->mutex);
  self->exit = exit;
  self->state = STATE_DONE;
  pending = g_steal_pointer (&self->pending);
  self->pending = g_ptr_array_new ();
  watches = g_steal_pointer (&self->watches);
  self->watches = g_ptr_array_new ();
  reaped_fn = self->reaped_fn;
  reaped_data = self->reaped_data;
  self->reaped_fn = NULL;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->mutex);

  if (reaped_fn != NULL)
    reaped_fn (reaped_data);
  for (guint i = 0; i < watches->len; i++)
    {
      g_source_destroy (watches->pdata[i]);
      g_source_unref (watches->pdata[i]);
    }
  if (self->cancel_id != 0)
    {
      g_cancellable_disconnect (self->cancellable, self->cancel_id);
      self->cancel_id = 0;
    }

  /* Off the live list, then out of the barrier: the set's close waits for
   * both. */
  sbx_executor_shared_untrack (sbx_shared_guard_get_shared (self->admission.guard),
                               SBX_CLOSE_PHASE_RUNNING, G_OBJECT (self));
  sbx_admission_clear (&self->admission);

  for (guint i = 0; i < pending->len; i++)
    {
      sbx_process_complete_wait (self, pending->pdata[i]);
      g_object_unref (pending->pdata[i]);
    }
}

void
sbx_process_on_reaped (SbxProcess  *self,
                       void       (*fn) (gpointer data),
                       gpointer     data)
{
  gboolean done;

  g_mutex_lock (&self->mutex);
  done = self->state == STATE_DONE;
  if (!done)
    {
      self->reaped_fn = fn;
      self->reaped_data = data;
    }
  g_mutex_unlock (&self->mutex);
  if (done)
    fn (data);
}

/* One process queued on the pool: the pool's reference to it, and a guard
 * of the set's barrier held for as long as that reference. */
typedef struct
{
  SbxProcess     *process;
  SbxSharedGuard *guard;
} ReapJob;

static void
reap_worker (gpointer data,
             gpointer user_data)
{
  ReapJob *job = data;

  sbx_process_reap (job->process);
  /* The pool's reference goes before the guard: when it is the last one,
   * the process (its pipes, its pidfd, its executor and through it the
   * backend) is finalized here inside the barrier, so the set's close never
   * returns while this thread still holds any of it. */
  g_object_unref (job->process);
  sbx_shared_guard_release (job->guard);
  g_free (job);
}

static GThreadPool *
reap_pool (void)
{
  static GThreadPool *pool;

  if (g_once_init_enter (&pool))
    {
      /* Shared and bounded: REAP_THREADS threads for every process of the
       * library, started on demand and retired when idle. */
      GThreadPool *p = g_thread_pool_new (reap_worker, NULL, REAP_THREADS, FALSE, NULL);

      g_once_init_leave (&pool, p);
    }
  return pool;
}

static void
queue_reap (SbxProcess *self)
{
  ReapJob *job = NULL;

  g_mutex_lock (&self->mutex);
  if (!self->reap_queued && self->state == STATE_RUNNING)
    {
      /* RUNNING: the admission (and its guard) lasts until DONE. */
      job = g_new (ReapJob, 1);
      job->process = g_object_ref (self);
      job->guard = sbx_shared_guard_hold (self->admission.guard);
    }
  self->reap_queued = TRUE;
  g_mutex_unlock (&self->mutex);
  if (job != NULL)
    g_thread_pool_push (reap_pool (), job, NULL);
}

/* ------------------------------------------------------------------------- */
/* Watches: a GSource per main context on the pidfd, with the timers as its  */
/* ready time.                                                                */
/* ------------------------------------------------------------------------- */

typedef struct
{
  GSource     source;
  SbxProcess *process;   /* strong */
  gpointer    tag;
} WatchSource;

static gboolean
watch_dispatch (GSource     *source,
                GSourceFunc  callback,
                gpointer     user_data)
{
  WatchSource *ws = (WatchSource *) source;
  SbxProcess *self = ws->process;
  GIOCondition revents = g_source_query_unix_fd (source, ws->tag);
  gint64 next;

  if (revents & (G_IO_IN | G_IO_HUP | G_IO_ERR))
    {
      /* A sync run's thread waits for this anyway: it reaps, sparing the
       * hop to the pool. */
      if (self->reap_inline)
        sbx_process_reap (self);
      else
        queue_reap (self);
      return G_SOURCE_REMOVE;
    }
  process_check_timers (self);
  /* Under the mutex, as sbx_process_kick_watches() sets it: a kick between
   * computing @next and setting it would otherwise be overwritten by a
   * time computed before the kick's new timer (force_exit's SIGKILL). */
  g_mutex_lock (&self->mutex);
  next = next_timer_locked (self);
  g_source_set_ready_time (source, next);
  g_mutex_unlock (&self->mutex);
  return G_SOURCE_CONTINUE;
}

static void
watch_finalize (GSource *source)
{
  WatchSource *ws = (WatchSource *) source;

  g_clear_object (&ws->process);
}

static GSourceFuncs watch_funcs = {
  .dispatch = watch_dispatch,
  .finalize = watch_finalize,
};

/* Attaches a watch to @context (NULL: the global default).  A no-op once
 * the process is DONE. */
void
sbx_process_attach_watch (SbxProcess   *self,
                          GMainContext *context)
{
  GSource *source;
  WatchSource *ws;

  source = g_source_new (&watch_funcs, sizeof (WatchSource));
  ws = (WatchSource *) source;
  ws->process = g_object_ref (self);
  ws->tag = g_source_add_unix_fd (source, self->pidfd, G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_static_name (source, "SbxProcess watch");
  g_source_set_priority (source, G_PRIORITY_DEFAULT);

  g_mutex_lock (&self->mutex);
  if (self->state == STATE_DONE)
    {
      g_mutex_unlock (&self->mutex);
      g_source_unref (source);
      return;
    }
  g_source_set_ready_time (source, next_timer_locked (self));
  g_ptr_array_add (self->watches, source);   /* the list owns the reference */
  g_source_attach (source, context);
  g_mutex_unlock (&self->mutex);
}

/* Makes every watch look at the timers again (after force_exit). */
void
sbx_process_kick_watches (SbxProcess *self)
{
  g_mutex_lock (&self->mutex);
  for (guint i = 0; i < self->watches->len; i++)
    g_source_set_ready_time (self->watches->pdata[i], 0);
  g_mutex_unlock (&self->mutex);
}

/* Blocks until the target exited (honouring the timers and @cancellable,
 * which kills the tree), then reaps.  *cancelled says whether @cancellable
 * fired. */
void
sbx_process_wait_blocking (SbxProcess   *self,
                           GCancellable *cancellable,
                           gboolean     *cancelled)
{
  int cancel_fd = cancellable != NULL ? g_cancellable_get_fd (cancellable) : -1;

  *cancelled = FALSE;
  for (;;)
    {
      struct pollfd pfds[2] = { { .fd = self->pidfd, .events = POLLIN } };
      nfds_t n = 1;
      gint64 next;
      int timeout = -1;
      int rc;

      g_mutex_lock (&self->mutex);
      if (self->state == STATE_DONE || self->state == STATE_REAPING)
        {
          g_mutex_unlock (&self->mutex);
          break;
        }
      next = next_timer_locked (self);
      g_mutex_unlock (&self->mutex);
      if (next >= 0)
        timeout = (int) CLAMP ((next - g_get_monotonic_time () + 999) / 1000, 0, G_MAXINT);
      if (cancel_fd >= 0 && !*cancelled)
        {
          pfds[n++] = (struct pollfd) { .fd = cancel_fd, .events = POLLIN };
        }
      rc = poll (pfds, n, timeout);
      if (rc < 0 && errno != EINTR)
        {
          g_warning ("poll failed while waiting for pid %" G_GINT64_FORMAT ": %s",
                     self->spawn.pid, g_strerror (errno));
          sbx_process_signal_target (self, SIGKILL, NULL);
          g_usleep (G_USEC_PER_SEC / 100);
        }
      if (rc > 0 && (pfds[0].revents & (POLLIN | POLLHUP | POLLERR)))
        break;
      if (n > 1 && (pfds[1].revents & POLLIN))
        {
          *cancelled = TRUE;
          sbx_process_kill (self, SBX_SUPERVISE_CANCELLED);
        }
      process_check_timers (self);
    }
  if (cancel_fd >= 0)
    g_cancellable_release_fd (cancellable);
  sbx_process_reap (self);
}

void
sbx_process_close_internal (SbxProcess *self)
{
  gboolean cancelled;

  g_mutex_lock (&self->mutex);
  self->close_requested = TRUE;
  while (self->state == STATE_SPAWNING)
    g_cond_wait (&self->cond, &self->mutex);
  if (self->state == STATE_DONE)
    {
      g_mutex_unlock (&self->mutex);
      return;
    }
  g_mutex_unlock (&self->mutex);
  sbx_process_kill (self, SBX_SUPERVISE_CLOSED);
  sbx_process_wait_blocking (self, NULL, &cancelled);
}

/* ------------------------------------------------------------------------- */
/* Results                                                                    */
/* ------------------------------------------------------------------------- */

/* The wait's verdict once DONE: TRUE, or the reason the tree was killed. */
gboolean
sbx_process_result (SbxProcess  *self,
                    gboolean     wait_cancelled,
                    GError     **error)
{
  SbxSuperviseOutcome outcome;
  gboolean ok = TRUE;

  g_mutex_lock (&self->mutex);
  outcome = self->outcome;
  if (self->teardown_error != NULL)
    {
      g_propagate_error (error, g_error_copy (self->teardown_error));
      ok = FALSE;
    }
  g_mutex_unlock (&self->mutex);
  if (!ok)
    return FALSE;
  if (wait_cancelled || outcome == SBX_SUPERVISE_CANCELLED)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                   "The wait for “%s” was cancelled; its process tree was killed",
                   self->rr->argv[0]);
      return FALSE;
    }
  switch (outcome)
    {
    case SBX_SUPERVISE_TIMED_OUT:
      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_TIMED_OUT,
                                "“%s” passed its timeout or deadline; its process tree was killed",
                                self->rr->argv[0]);
    case SBX_SUPERVISE_CLOSED:
      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_CLOSED,
                                "The executor set was closed while “%s” ran; its process tree was "
                                "killed", self->rr->argv[0]);
    case SBX_SUPERVISE_CANCELLED:
    case SBX_SUPERVISE_EXITED:
    default:
      return TRUE;
    }
}

/* Completes one wait_async() task from the process's result. */
void
sbx_process_complete_wait (SbxProcess *self,
                           GTask      *task)
{
  WaitData *wd = g_task_get_task_data (task);
  GError *error = NULL;

  if (wd->handler != 0)
    {
      g_cancellable_disconnect (g_task_get_cancellable (task), wd->handler);
      wd->handler = 0;
    }
  if (sbx_process_result (self, wd->cancelled, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}
