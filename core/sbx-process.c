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
 * LOCKING
 *   self->mutex protects the state, the outcome, the exit, the pending
 *   waits, the watches and `signalling`.  No lock is held across a backend
 *   call: signal() runs with `signalling` raised, and the reaper waits for it
 *   to drop before finish() frees the backend's child handle.
 */
#include "sbx-executor-impl-private.h"
#include "sbx-process-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>

#define REAP_THREADS 4
/* While waiting for a killed target, re-send SIGKILL this often. */
#define REKILL_INTERVAL_US (G_USEC_PER_SEC)

/* ------------------------------------------------------------------------- */
/* A PTY master as an input stream: EIO (every slave closed) is EOF.          */
/* ------------------------------------------------------------------------- */

#define SBX_TYPE_PTY_INPUT_STREAM (sbx_pty_input_stream_get_type ())
G_DECLARE_FINAL_TYPE (SbxPtyInputStream, sbx_pty_input_stream, SBX, PTY_INPUT_STREAM,
                      GUnixInputStream)

struct _SbxPtyInputStream
{
  GUnixInputStream parent_instance;
};

static GPollableInputStreamInterface *pty_parent_pollable_iface;

static void sbx_pty_input_stream_pollable_init (GPollableInputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SbxPtyInputStream, sbx_pty_input_stream, G_TYPE_UNIX_INPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_INPUT_STREAM,
                                                      sbx_pty_input_stream_pollable_init))

static gboolean
eio_is_eof (GError **error)
{
  if (error != NULL && *error != NULL
      && g_error_matches (*error, G_IO_ERROR, g_io_error_from_errno (EIO)))
    {
      g_clear_error (error);
      return TRUE;
    }
  return FALSE;
}

static gssize
pty_read (GInputStream  *stream,
          void          *buffer,
          gsize          count,
          GCancellable  *cancellable,
          GError       **error)
{
  GError *local_error = NULL;
  gssize n;

  n = G_INPUT_STREAM_CLASS (sbx_pty_input_stream_parent_class)->read_fn (stream, buffer, count,
                                                                           cancellable,
                                                                           &local_error);
  if (n < 0 && eio_is_eof (&local_error))
    return 0;
  if (n < 0)
    g_propagate_error (error, local_error);
  return n;
}

static gssize
pty_read_nonblocking (GPollableInputStream  *stream,
                      void                  *buffer,
                      gsize                  count,
                      GError               **error)
{
  GError *local_error = NULL;
  gssize n;

  n = pty_parent_pollable_iface->read_nonblocking (stream, buffer, count, &local_error);
  if (n < 0 && eio_is_eof (&local_error))
    return 0;
  if (n < 0)
    g_propagate_error (error, local_error);
  return n;
}

static void
sbx_pty_input_stream_pollable_init (GPollableInputStreamInterface *iface)
{
  pty_parent_pollable_iface = g_type_interface_peek_parent (iface);
  iface->read_nonblocking = pty_read_nonblocking;
}

static void
sbx_pty_input_stream_class_init (SbxPtyInputStreamClass *klass)
{
  G_INPUT_STREAM_CLASS (klass)->read_fn = pty_read;
}

static void
sbx_pty_input_stream_init (SbxPtyInputStream *self)
{
}

/* ------------------------------------------------------------------------- */
/* The object                                                                 */
/* ------------------------------------------------------------------------- */

typedef enum
{
  STATE_SPAWNING,
  STATE_RUNNING,
  STATE_REAPING,
  STATE_DONE,
} ProcessState;

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
struct _SbxProcess
{
  GObject           parent_instance;

  SbxExecutor      *executor;
  SbxStartRequest  *rr;
  SbxAdmission      admission;
  GMainContext     *context;       /* thread-default at spawn */
  GCancellable     *cancellable;   /* the spawn's, kills the tree */
  gulong            cancel_id;
  char             *identifier;

  GOutputStream    *stdin_pipe;
  GInputStream     *stdout_pipe;
  GInputStream     *stderr_pipe;
  int               pty_master;    /* -1 without a PTY */

  GMutex            mutex;
  GCond             cond;
  ProcessState      state;         /* (mutex) */
  gboolean          close_requested;  /* (mutex) set close came while SPAWNING */
  guint             signalling;    /* (mutex) backend signal() calls in flight */
  gboolean          reap_queued;   /* (mutex) */
  SbxSuperviseOutcome outcome;     /* (mutex) why the tree was killed, if it was */
  gint64            kill_at;       /* (mutex) monotonic µs of the grace's SIGKILL, 0 none */
  gint64            deadline;      /* monotonic µs, 0 none; immutable after spawn */
  gint64            last_kill;     /* (mutex) */
  gboolean          killed;        /* (mutex) SIGKILL sent */
  GPtrArray        *watches;       /* (mutex) GSource* */
  GPtrArray        *pending;       /* (mutex) GTask* of wait_async */
  SbxSpawnResultV1  spawn;         /* pid, child, containment */
  int               pidfd;
  gint64            started;
  SbxExitV1         exit;          /* (mutex) valid in DONE */
  GError           *teardown_error; /* (mutex) */
  gint64            duration_us;
};

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
  g_clear_pointer (&self->rr, sbx_start_request_free);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->executor);
  g_clear_pointer (&self->watches, g_ptr_array_unref);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_error (&self->teardown_error);
  g_free (self->identifier);
  g_mutex_clear (&self->mutex);
  g_cond_clear (&self->cond);

  G_OBJECT_CLASS (sbx_process_parent_class)->finalize (object);
}

static void
sbx_process_class_init (SbxProcessClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sbx_process_finalize;
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
/* Signals and kills                                                          */
/* ------------------------------------------------------------------------- */

/* Delivers @signo through the backend (to the target through sbx's PID 1;
 * SIGKILL to the whole tree).  TRUE when the process is already terminal:
 * there is nothing left to signal. */
static gboolean
process_signal (SbxProcess  *self,
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
static void
process_kill (SbxProcess          *self,
              SbxSuperviseOutcome  why)
{
  g_mutex_lock (&self->mutex);
  if (self->outcome == SBX_SUPERVISE_EXITED && self->state == STATE_RUNNING)
    self->outcome = why;
  g_mutex_unlock (&self->mutex);
  process_signal (self, SIGKILL, NULL);
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
    process_kill (self, SBX_SUPERVISE_TIMED_OUT);
  else if (grace_passed || rekill)
    process_signal (self, SIGKILL, NULL);
}

/* ------------------------------------------------------------------------- */
/* Reaping                                                                    */
/* ------------------------------------------------------------------------- */

static void complete_wait (SbxProcess *self, GTask *task);

static void
process_reap (SbxProcess *self)
{
  g_autoptr(GPtrArray) pending = NULL;
  g_autoptr(GPtrArray) watches = NULL;
  g_autoptr(GError) finish_error = NULL;
  SbxSuperviseResult event_result = { 0 };
  SbxExitV1 exit = { .struct_size = sizeof exit };
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
  self->exit = exit;
  if (!ok)
    g_set_error (&self->teardown_error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TEARDOWN_FAILED,
                 "“%s” ran, but its process tree could not be torn down: %s",
                 self->rr->argv[0], finish_error->message);
  self->state = STATE_DONE;
  pending = g_steal_pointer (&self->pending);
  self->pending = g_ptr_array_new ();
  watches = g_steal_pointer (&self->watches);
  self->watches = g_ptr_array_new ();
  event_result.outcome = self->outcome;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->mutex);

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

  /* Egress: the execution ends with the process; its first denial is
   * reported to the set's reporters. */
  sbx_egress_run_end (&self->admission.egress);
  if (self->admission.egress.denial_target != NULL)
    sbx_executor_report_network_denial (self->admission.shared, sbx_executor_get_key (self->executor),
                                        self->admission.run_id, NULL,
                                        self->admission.egress.denial_target,
                                        self->admission.egress.denial_reason);

  event_result.exit = exit;
  event_result.containment = self->spawn.containment;
  event_result.duration_us = self->duration_us;
  sbx_executor_emit_exit (self->executor, &self->admission, &event_result,
                          self->teardown_error, TRUE);

  /* Off the live list, then out of the barrier: the set's close waits for
   * both. */
  {
    SbxExecutorShared *shared = self->admission.shared;

    g_mutex_lock (&shared->mutex);
    if (shared->processes != NULL && g_ptr_array_remove_fast (shared->processes, self))
      g_object_unref (self);   /* the list's reference; the caller still holds one */
    g_mutex_unlock (&shared->mutex);
  }
  sbx_admission_clear (&self->admission);

  for (guint i = 0; i < pending->len; i++)
    {
      complete_wait (self, pending->pdata[i]);
      g_object_unref (pending->pdata[i]);
    }
}

static void
reap_worker (gpointer data,
             gpointer user_data)
{
  g_autoptr(SbxProcess) self = data;

  process_reap (self);
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
  gboolean queue;

  g_mutex_lock (&self->mutex);
  queue = !self->reap_queued && self->state == STATE_RUNNING;
  self->reap_queued = TRUE;
  g_mutex_unlock (&self->mutex);
  if (queue)
    g_thread_pool_push (reap_pool (), g_object_ref (self), NULL);
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
      queue_reap (self);
      return G_SOURCE_REMOVE;
    }
  process_check_timers (self);
  g_mutex_lock (&self->mutex);
  next = next_timer_locked (self);
  g_mutex_unlock (&self->mutex);
  g_source_set_ready_time (source, next);
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
static void
process_attach_watch (SbxProcess   *self,
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
static void
process_kick_watches (SbxProcess *self)
{
  g_mutex_lock (&self->mutex);
  for (guint i = 0; i < self->watches->len; i++)
    g_source_set_ready_time (self->watches->pdata[i], 0);
  g_mutex_unlock (&self->mutex);
}

/* Blocks until the target exited (honouring the timers and @cancellable,
 * which kills the tree), then reaps.  *cancelled says whether @cancellable
 * fired. */
static void
process_wait_blocking (SbxProcess   *self,
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
        pfds[n++] = (struct pollfd) { .fd = cancel_fd, .events = POLLIN };
      rc = poll (pfds, n, timeout);
      if (rc < 0 && errno != EINTR)
        {
          g_warning ("poll failed while waiting for pid %" G_GINT64_FORMAT ": %s",
                     self->spawn.pid, g_strerror (errno));
          process_signal (self, SIGKILL, NULL);
          g_usleep (G_USEC_PER_SEC / 100);
        }
      if (rc > 0 && (pfds[0].revents & (POLLIN | POLLHUP | POLLERR)))
        break;
      if (n > 1 && (pfds[1].revents & POLLIN))
        {
          *cancelled = TRUE;
          process_kill (self, SBX_SUPERVISE_CANCELLED);
        }
      process_check_timers (self);
    }
  if (cancel_fd >= 0)
    g_cancellable_release_fd (cancellable);
  process_reap (self);
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
  process_kill (self, SBX_SUPERVISE_CLOSED);
  process_wait_blocking (self, NULL, &cancelled);
}

/* ------------------------------------------------------------------------- */
/* Results                                                                    */
/* ------------------------------------------------------------------------- */

/* The wait's verdict once DONE: TRUE, or the reason the tree was killed. */
static gboolean
process_result (SbxProcess  *self,
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

typedef struct
{
  gulong   handler;
  gboolean cancelled;
} WaitData;

static void
complete_wait (SbxProcess *self,
               GTask      *task)
{
  WaitData *wd = g_task_get_task_data (task);
  GError *error = NULL;

  if (wd->handler != 0)
    {
      g_cancellable_disconnect (g_task_get_cancellable (task), wd->handler);
      wd->handler = 0;
    }
  if (process_result (self, wd->cancelled, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/* ------------------------------------------------------------------------- */
/* Spawn                                                                      */
/* ------------------------------------------------------------------------- */

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    {
      close (*fd);
      *fd = -1;
    }
}

static void
on_spawn_cancelled (GCancellable *cancellable,
                    gpointer      data)
{
  process_kill (data, SBX_SUPERVISE_CANCELLED);
}

/* A PTY process's streams: stdin and stdout are duplicates of the master
 * the backend handed over (which the process keeps for resize()). */
static gboolean
attach_pty_master (SbxProcess *self,
                   int         master,
                   GError    **error)
{
  int ours[2];

  self->pty_master = master;
  ours[0] = fcntl (master, F_DUPFD_CLOEXEC, 3);
  ours[1] = fcntl (master, F_DUPFD_CLOEXEC, 3);
  if (ours[0] < 0 || ours[1] < 0)
    {
      int errsv = errno;

      close_fd (&ours[0]);
      close_fd (&ours[1]);
      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                                "Cannot duplicate the PTY master: %s", g_strerror (errsv));
    }
  self->stdin_pipe = g_unix_output_stream_new (ours[0], TRUE);
  self->stdout_pipe = g_object_new (SBX_TYPE_PTY_INPUT_STREAM, "fd", ours[1],
                                    "close-fd", TRUE, NULL);
  return TRUE;
}

/* The child's three fds and our ends.  child[] entries we own are listed in
 * owned[] (closed after spawn). */
static gboolean
setup_streams (SbxProcess *self,
               int         child[3],
               int         owned[4],
               GError    **error)
{
  const SbxStartRequest *rr = self->rr;
  int ours[3] = { -1, -1, -1 };
  int n_owned = 0;

  for (int i = 0; i < 4; i++)
    owned[i] = -1;
  if (rr->pty)
    {
      /* The backend opens the terminal inside the sandbox (its own devpts
       * where it has one, so `tty` names it there) and hands over only the
       * master: the child's streams are the slave (attach_pty_master). */
      child[0] = child[1] = child[2] = -1;
      return TRUE;
    }

  for (int i = 0; i < 3; i++)
    {
      SbxStdioMode mode = rr->modes[i];

      if (rr->fds[i] >= 0)
        {
          child[i] = rr->fds[i];
          continue;
        }
      if (mode == SBX_STDIO_MERGE)
        {
          child[i] = child[1];
          continue;
        }
      if (mode == SBX_STDIO_INHERIT)
        {
          child[i] = i;
          continue;
        }
      if (mode == SBX_STDIO_NULL)
        {
          child[i] = -1;
          continue;
        }
      /* DEFAULT and PIPE: a pipe. */
      {
        int p[2];

        if (pipe2 (p, O_CLOEXEC) < 0)
          {
            int errsv = errno;

            for (int k = 0; k < 3; k++)
              close_fd (&ours[k]);
            for (int k = 0; k < n_owned; k++)
              close_fd (&owned[k]);
            return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                                      "Cannot create a pipe for the process: %s",
                                      g_strerror (errsv));
          }
        ours[i] = i == 0 ? p[1] : p[0];
        child[i] = i == 0 ? p[0] : p[1];
        owned[n_owned++] = child[i];
      }
    }
  if (ours[0] >= 0)
    self->stdin_pipe = g_unix_output_stream_new (ours[0], TRUE);
  if (ours[1] >= 0)
    self->stdout_pipe = g_unix_input_stream_new (ours[1], TRUE);
  if (ours[2] >= 0)
    self->stderr_pipe = g_unix_input_stream_new (ours[2], TRUE);
  return TRUE;
}

SbxProcess *
sbx_process_start_admitted (SbxExecutor      *executor,
                            SbxStartRequest  *rr,
                            SbxAdmission     *admission,
                            GCancellable     *cancellable,
                            GError          **error)
{
  g_autoptr(SbxProcess) self = NULL;
  g_autoptr(GError) spawn_error = NULL;
  SbxExecutorShared *shared;
  SbxSpawnRequestV1 req = { 0 };
  int child[3] = { -1, -1, -1 };
  int owned[4];
  gboolean closing;
  gboolean close_requested;

  self = g_object_new (SBX_TYPE_PROCESS, NULL);
  self->executor = g_object_ref (executor);
  self->rr = rr;
  self->admission = *admission;
  memset (admission, 0, sizeof *admission);
  shared = self->admission.shared;
  if (g_cancellable_is_cancelled (cancellable))
    {
      SbxSuperviseResult none = { 0 };

      sbx_executor_fail (&spawn_error, SBX_EXECUTOR_ERROR_CANCELLED,
                         "The start of “%s” was cancelled; nothing was spawned",
                         self->rr->argv[0]);
      sbx_executor_emit_exit (executor, &self->admission, &none, spawn_error, FALSE);
      sbx_admission_clear (&self->admission);
      self->state = STATE_DONE;
      g_propagate_error (error, g_steal_pointer (&spawn_error));
      return NULL;
    }
  self->deadline = self->admission.deadline;
  self->context = g_main_context_ref_thread_default ();

  if (!setup_streams (self, child, owned, &spawn_error))
    {
      SbxSuperviseResult none = { 0 };

      sbx_executor_emit_exit (executor, &self->admission, &none, spawn_error, FALSE);
      sbx_admission_clear (&self->admission);
      self->state = STATE_DONE;
      g_propagate_error (error, g_steal_pointer (&spawn_error));
      return NULL;
    }

  /* On the live list before the fork, under the barrier's lock: a close
   * that began earlier refuses the spawn; a later one finds the process
   * (and waits for the spawn to finish before it kills it). */
  g_mutex_lock (&shared->mutex);
  closing = shared->closing;
  if (!closing)
    g_ptr_array_add (shared->processes, g_object_ref (self));
  g_mutex_unlock (&shared->mutex);
  if (closing)
    {
      SbxSuperviseResult none = { 0 };

      for (int i = 0; i < 4; i++)
        close_fd (&owned[i]);
      sbx_executor_fail (&spawn_error, SBX_EXECUTOR_ERROR_CLOSED,
                         "The executor set was closed before “%s” started; nothing was spawned",
                         self->rr->argv[0]);
      sbx_executor_emit_exit (executor, &self->admission, &none, spawn_error, FALSE);
      sbx_admission_clear (&self->admission);
      self->state = STATE_DONE;
      g_propagate_error (error, g_steal_pointer (&spawn_error));
      return NULL;
    }

  req.struct_size = sizeof req;
  req.flags = self->rr->pty ? SBX_SPAWN_PTY_SANDBOX : 0;
  req.pty_rows = self->rr->rows;
  req.pty_cols = self->rr->cols;
  req.cwd = self->admission.cwd;
  req.argv = (const char *const *) self->rr->argv;
  /* Egress: with a route, the environment names this run's proxy. */
  req.envp = self->admission.egress.envp != NULL
             ? (const char *const *) self->admission.egress.envp
             : sbx_executor_get_environment (executor);
  req.stdin_fd = child[0];
  req.stdout_fd = child[1];
  req.stderr_fd = child[2];
  sbx_egress_run_spawn_listens (&self->admission.egress, &req.listens, &req.listen_fds, &req.n_listens);
  self->spawn.struct_size = sizeof self->spawn;
  self->spawn.pidfd = -1;
  self->spawn.proxy_listen_fd = -1;
  self->spawn.pty_master_fd = -1;
  self->started = g_get_monotonic_time ();

  if (!sbx_backend_spawn (self->admission.spec, &req, &self->spawn, &spawn_error))
    {
      SbxSuperviseResult none = { 0 };
      g_autoptr(GError) mapped = NULL;

      for (int i = 0; i < 4; i++)
        close_fd (&owned[i]);
      sbx_executor_map_spawn_error (&mapped, g_steal_pointer (&spawn_error), self->rr->argv[0]);
      g_mutex_lock (&shared->mutex);
      if (g_ptr_array_remove_fast (shared->processes, self))
        g_object_unref (self);
      g_mutex_unlock (&shared->mutex);
      sbx_executor_emit_exit (executor, &self->admission, &none, mapped, FALSE);
      sbx_admission_clear (&self->admission);
      g_mutex_lock (&self->mutex);
      self->state = STATE_DONE;
      g_cond_broadcast (&self->cond);
      g_mutex_unlock (&self->mutex);
      g_propagate_error (error, g_steal_pointer (&mapped));
      return NULL;
    }
  for (int i = 0; i < 4; i++)
    close_fd (&owned[i]);
  /* The child has its own copies of the caller's fds. */
  sbx_start_request_close_fds (self->rr);
  /* Egress: the listener in the sandbox is served for this run's
   * execution alone (closed unserved when the run is not authorized). */
  if (self->spawn.proxy_listen_fd >= 0 || req.n_listens > 0)
    sbx_egress_run_serve (&self->admission.egress, self->spawn.proxy_listen_fd);
  self->spawn.proxy_listen_fd = -1;
  self->pidfd = self->spawn.pidfd;
  if (self->pidfd < 0)
    self->pidfd = (int) syscall (SYS_pidfd_open, (pid_t) self->spawn.pid, 0);
  self->identifier = g_strdup_printf ("%" G_GINT64_FORMAT, self->spawn.pid);

  g_mutex_lock (&self->mutex);
  self->state = STATE_RUNNING;
  close_requested = self->close_requested;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->mutex);

  if (self->pidfd < 0)
    {
      /* Without a pidfd nothing here can wait without a thread: kill the
       * tree, reap it and fail. */
      int errsv = errno;

      process_kill (self, SBX_SUPERVISE_CANCELLED);
      while (waitid (P_PID, (id_t) self->spawn.pid, &(siginfo_t) { 0 },
                     WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
      process_reap (self);
      sbx_executor_fail (error, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                         "Cannot watch “%s”: pidfd_open: %s; it was killed",
                         self->rr->argv[0], g_strerror (errsv));
      return NULL;
    }

  if (self->rr->pty)
    {
      g_autoptr(GError) pty_error = NULL;
      int master = self->spawn.pty_master_fd;

      /* The backend guarantees a master on success (sbx_backend_spawn
       * refuses a spawn that lacks one); without our duplicates of it the
       * process is unusable: kill the tree, reap it and fail. */
      self->spawn.pty_master_fd = -1;
      if (!attach_pty_master (self, master, &pty_error))
        {
          process_kill (self, SBX_SUPERVISE_CANCELLED);
          while (waitid (P_PID, (id_t) self->spawn.pid, &(siginfo_t) { 0 },
                         WEXITED | WNOWAIT) < 0 && errno == EINTR)
            ;
          process_reap (self);
          g_propagate_error (error, g_steal_pointer (&pty_error));
          return NULL;
        }
    }

  if (close_requested)
    process_kill (self, SBX_SUPERVISE_CLOSED);
  process_attach_watch (self, self->context);
  if (cancellable != NULL)
    {
      self->cancellable = g_object_ref (cancellable);
      self->cancel_id = g_cancellable_connect (cancellable, G_CALLBACK (on_spawn_cancelled),
                                               self, NULL);
    }
  return g_steal_pointer (&self);
}

/**
 * sbx_executor_spawn:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments; no shell
 *   is involved (a shell command line is `{"/bin/sh", "-c", command}`)
 * @options: (nullable): stream modes or a PTY, a timeout or deadline, the
 *   terminate grace, grants with their execution ID; copied, and its file
 *   descriptors duplicated, before this returns
 * @cancellable: (nullable): for the whole life of the process: cancelling
 *   it kills the whole process tree
 * @error: return location for a [error@Sbx.ExecutorError] or a
 *   [error@Sbx.GrantError]
 *
 * Starts a command under the executor's confinement and returns at once.
 * Admission is the one of [method@Sbx.Executor.run], in the same order
 * (the command gate, the grant transaction with its consumption, the set's
 * close): nothing is spawned unless it passes.  By default the three
 * streams are pipes; see [struct@Sbx.RunOptions] for the other modes and
 * the PTY.  An output limit does not apply to a spawn (the caller reads the
 * streams).
 *
 * Waiting uses a pidfd source on the caller's thread-default main context
 * (see [class@Sbx.Process]); the backend's teardown runs on a small shared
 * pool of threads, never one per process.
 *
 * Returns: (transfer full): the running process, or %NULL with @error set
 *   and nothing spawned
 *
 * Since: 0.1
 */
SbxProcess *
sbx_executor_spawn (SbxExecutor          *self,
                    const char           *cwd,
                    const char *const    *argv,
                    const SbxRunOptions  *options,
                    GCancellable         *cancellable,
                    GError              **error)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_autoptr(SbxStartRequest) rr = NULL;
  SbxAdmission admission;

  rr = sbx_start_request_new (cwd, argv, options);
  if (!sbx_start_request_own_fds (rr, error))
    return NULL;
  if (!sbx_executor_admit (self, rr, cancellable, &admission, error))
    return NULL;
  return sbx_process_start_admitted (self, g_steal_pointer (&rr), &admission, cancellable, error);
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

  process_wait_blocking (self, cancellable, &cancelled);
  return process_result (self, cancelled, error);
}

static void
on_wait_cancelled (GCancellable *cancellable,
                   gpointer      data)
{
  GTask *task = data;
  SbxProcess *self = g_task_get_source_object (task);
  WaitData *wd = g_task_get_task_data (task);

  wd->cancelled = TRUE;
  process_kill (self, SBX_SUPERVISE_CANCELLED);
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
   * holds the task until complete_wait() disconnects it. */
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
      complete_wait (self, task);
      return;
    }

  context = g_main_context_ref_thread_default ();
  if (context != self->context)
    process_attach_watch (self, context);
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

  return process_signal (self, signum, error);
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
  if (!process_signal (self, SIGTERM, NULL))
    process_signal (self, SIGKILL, NULL);
  process_kick_watches (self);
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
