/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxProcess: the start (sbx_executor_spawn(), and a prepared process's
 * start): the stdio of each mode or the PTY master as GIO streams, the
 * backend's spawn, the egress listener, registration for the set's close,
 * then supervision (sbx-process-watch.c) takes over.
 */
#include "sbx-process-impl-private.h"
#include "sbx-process-private.h"
#include "sbx-process-spawn-private.h"
#include "sbx-process-watch-private.h"
#include "sbx-executor-error-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>

#include "sbx-backend-denials-private.h"
#include "sbx-cleanup.h"

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
/* Spawn                                                                      */
/* ------------------------------------------------------------------------- */

static void
on_spawn_cancelled (GCancellable *cancellable,
                    gpointer      data)
{
  sbx_process_kill (data, SBX_SUPERVISE_CANCELLED);
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

      sbx_clear_fd (&ours[0]);
      sbx_clear_fd (&ours[1]);
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
              sbx_clear_fd (&ours[k]);
            for (int k = 0; k < n_owned; k++)
              sbx_clear_fd (&owned[k]);
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

/* What the set's close does to a running process. */
static void
close_hook (GObject *object)
{
  sbx_process_close_internal (SBX_PROCESS (object));
}

/* Fails process_start() before or at the backend's spawn: closes the
 * descriptors the process would have owned (@owned may be NULL), leaves the
 * close barrier when the process was tracked, emits the run's exit event
 * with @spawn_error (taken), clears the admission and marks the process
 * done, waking any waiter.  Returns NULL for process_start() to return. */
static SbxProcess *
start_failed (SbxProcess *self,
              int        *owned,
              gboolean    tracked,
              GError     *spawn_error,
              GError    **error)
{
  SbxSuperviseResult none = { 0 };

  if (owned != NULL)
    for (int i = 0; i < 4; i++)
      sbx_clear_fd (&owned[i]);
  if (tracked)
    sbx_executor_shared_untrack (sbx_shared_guard_get_shared (self->admission.guard),
                                 SBX_CLOSE_PHASE_RUNNING, G_OBJECT (self));
  sbx_executor_emit_exit (self->executor, &self->admission, &none, spawn_error, FALSE);
  sbx_admission_clear (&self->admission);
  g_mutex_lock (&self->mutex);
  self->state = STATE_DONE;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->mutex);
  g_propagate_error (error, spawn_error);
  g_object_unref (self);
  return NULL;
}

/* The start of sbx_process_start_admitted() (@run_child NULL: the streams
 * of rr's modes) and of sbx_process_start_for_run() (@run_child: the
 * child's descriptors). */
static SbxProcess *
process_start (SbxExecutor      *executor,
               SbxStartRequest  *rr,
               SbxAdmission     *admission,
               const int        *run_child,
               gboolean          reap_inline,
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
  self->spawn_report = sbx_compile_report_ref (self->admission.report);
  self->spawn_level = self->admission.level;
  self->spawn_guarantees = self->admission.guarantees;
  shared = sbx_shared_guard_get_shared (self->admission.guard);
  if (g_cancellable_is_cancelled (cancellable) || rr->staged)
    {
      /* Only a run has an end after which its stage is handed over. */
      if (rr->staged)
        sbx_executor_fail (&spawn_error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                           "A started process cannot be staged (“%s”); stage a run instead",
                           self->rr->argv[0]);
      else
        sbx_executor_fail (&spawn_error, SBX_EXECUTOR_ERROR_CANCELLED,
                           "The start of “%s” was cancelled; nothing was spawned",
                           self->rr->argv[0]);
      return start_failed (g_steal_pointer (&self), NULL, FALSE, g_steal_pointer (&spawn_error), error);
    }
  self->deadline = self->admission.deadline;
  self->context = g_main_context_ref_thread_default ();
  self->for_run = run_child != NULL;
  self->reap_inline = reap_inline;
  /* Denials reach the application on this context while the tool runs
   * (the log is fed from the egress plugin's threads); a run lists them in
   * its result instead. */
  if (self->admission.egress.denials != NULL && !self->for_run)
    sbx_denial_log_set_notify (self->admission.egress.denials, sbx_process_post_denial, self);
  /* An asking process's questions are its signal (the broker lets go of
   * it when the run ends); a run's go to the options' decision function,
   * as admission set them up. */
  if (self->admission.egress.broker != NULL && !self->for_run)
    sbx_decision_broker_set_deliver (self->admission.egress.broker, self->context,
                                     sbx_process_deliver_decision, g_object_ref (self),
                                     g_object_unref);

  if (self->for_run)
    {
      for (int i = 0; i < 4; i++)
        owned[i] = -1;
      for (int i = 0; i < 3; i++)
        child[i] = run_child[i];
    }
  else if (!setup_streams (self, child, owned, &spawn_error))
    return start_failed (g_steal_pointer (&self), NULL, FALSE, g_steal_pointer (&spawn_error), error);

  /* On the live list before the fork, under the barrier's lock: a close
   * that began earlier refuses the spawn; a later one finds the process
   * (and waits for the spawn to finish before it kills it). */
  closing = !sbx_executor_shared_track (shared, SBX_CLOSE_PHASE_RUNNING, G_OBJECT (self),
                                        close_hook);
  if (closing)
    {
      sbx_executor_fail (&spawn_error, SBX_EXECUTOR_ERROR_CLOSED,
                         "The executor set was closed before “%s” started; nothing was spawned",
                         self->rr->argv[0]);
      return start_failed (g_steal_pointer (&self), owned, FALSE, g_steal_pointer (&spawn_error), error);
    }

  req.struct_size = sizeof req;
  req.flags = self->rr->pty ? SBX_SPAWN_PTY_SANDBOX : 0;
  if (self->rr->ignored_signals != 0)
    req.flags |= SBX_SPAWN_IGNORED_SIGNALS;
  req.ignored_signals = self->rr->ignored_signals;
  if (self->rr->n_stage_roots > 0)
    {
      req.flags |= SBX_SPAWN_STAGED;
      req.stage_roots = self->rr->stage_roots;
      req.n_stage_roots = self->rr->n_stage_roots;
    }
  req.denial_sink = sbx_backend_denials_sink (self->admission.backend_denials);
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
      GError *mapped = NULL;

      sbx_executor_map_spawn_error (&mapped, g_steal_pointer (&spawn_error), self->rr->argv[0]);
      return start_failed (g_steal_pointer (&self), owned, TRUE, mapped, error);
    }
  for (int i = 0; i < 4; i++)
    sbx_clear_fd (&owned[i]);
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

      sbx_process_kill (self, SBX_SUPERVISE_CANCELLED);
      while (waitid (P_PID, (id_t) self->spawn.pid, &(siginfo_t) { 0 },
                     WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
      sbx_process_reap (self);
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
      if (self->for_run)
        self->pty_master = master;   /* the run relays it */
      else if (!attach_pty_master (self, master, &pty_error))
        {
          sbx_process_kill (self, SBX_SUPERVISE_CANCELLED);
          while (waitid (P_PID, (id_t) self->spawn.pid, &(siginfo_t) { 0 },
                         WEXITED | WNOWAIT) < 0 && errno == EINTR)
            ;
          sbx_process_reap (self);
          g_propagate_error (error, g_steal_pointer (&pty_error));
          return NULL;
        }
    }

  if (close_requested)
    sbx_process_kill (self, SBX_SUPERVISE_CLOSED);
  sbx_process_attach_watch (self, self->context);
  if (cancellable != NULL)
    {
      self->cancellable = g_object_ref (cancellable);
      self->cancel_id = g_cancellable_connect (cancellable, G_CALLBACK (on_spawn_cancelled),
                                               self, NULL);
    }
  return g_steal_pointer (&self);
}

SbxProcess *
sbx_process_start_admitted (SbxExecutor      *executor,
                            SbxStartRequest  *rr,
                            SbxAdmission     *admission,
                            GCancellable     *cancellable,
                            GError          **error)
{
  return process_start (executor, rr, admission, NULL, FALSE, cancellable, error);
}

SbxProcess *
sbx_process_start_for_run (SbxExecutor      *executor,
                           SbxStartRequest  *rr,
                           SbxAdmission     *admission,
                           const int         child[3],
                           gboolean          reap_inline,
                           GError          **error)
{
  return process_start (executor, rr, admission, child, reap_inline, NULL, error);
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
