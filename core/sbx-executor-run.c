/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs: admission (sbx-executor-admit.c), then the synchronous supervisor
 * (sbx-supervise.c) collects the output and the exit.  The one run engine:
 * sbx_executor_run*() admit and call sbx_executor_run_admitted(); a
 * prepared process's run (sbx-prepared-process.c) hands it the admission
 * it holds.  Timeouts, deadlines, the output limit, the PTY relay and the
 * egress listeners live here and nowhere else.
 *
 * A sync run supervises its child on the calling thread.  An async run does
 * the same on a dedicated thread, so long-running children never starve a
 * shared pool, and returns through its GTask in the caller's main context.
 * Applications that want to stay in their main loop without a thread per
 * command use sbx_executor_spawn() (sbx-process.c).
 */
#include "sbx-executor-impl-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sbx-run-result-private.h"
#include "sbx-backend-denials-private.h"

/* The supervisor's fds for the streams of a run (supervisor convention:
 * stdin -1 = null device, stdout/stderr -1 = captured).  *null_fd is an
 * opened null device when a stream asks for one. */
gboolean
sbx_run_streams_resolve (const SbxStartRequest *rr,
                         int                    fds[3],
                         int                   *null_fd,
                         GError               **error)
{
  static const char *const names[] = { "stdin", "stdout", "stderr" };

  *null_fd = -1;
  for (int i = 0; i < 3; i++)
    {
      if (rr->fds[i] >= 0)
        {
          fds[i] = rr->fds[i];
          continue;
        }
      switch (rr->modes[i])
        {
        case SBX_STDIO_INHERIT:
          fds[i] = i;
          break;
        case SBX_STDIO_NULL:
          if (i == 0)
            {
              fds[i] = -1;
              break;
            }
          if (*null_fd < 0)
            *null_fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
          if (*null_fd < 0)
            {
              int errsv = errno;

              return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                                        "Cannot open /dev/null for %s: %s", names[i],
                                        g_strerror (errsv));
            }
          fds[i] = *null_fd;
          break;
        case SBX_STDIO_MERGE:
          /* Captured stdout already takes stderr with it. */
          fds[i] = fds[1];
          break;
        case SBX_STDIO_PIPE:
          if (i == 0)
            return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                                      "The stdin of a run cannot be a pipe: nothing could "
                                      "write to it; use sbx_executor_spawn()");
          fds[i] = -1;
          break;
        case SBX_STDIO_DEFAULT:
        default:
          fds[i] = -1;
          break;
        }
    }
  return TRUE;
}

static SbxRunResult *
executor_run (SbxExecutor           *self,
              const SbxStartRequest *rr,
              GCancellable          *cancellable,
              GError               **error)
{
  SbxAdmission admission;
  int fds[3];
  int null_fd = -1;

  if (!sbx_run_streams_resolve (rr, fds, &null_fd, error))
    return NULL;
  if (!sbx_executor_admit (self, rr, cancellable, &admission, error))
    {
      if (null_fd >= 0)
        close (null_fd);
      return NULL;
    }
  return sbx_executor_run_admitted (self, rr, &admission, fds, null_fd, cancellable, error);
}

SbxRunResult *
sbx_executor_run_admitted (SbxExecutor           *self,
                           const SbxStartRequest *rr,
                           SbxAdmission          *admission_in,
                           const int              fds[3],
                           int                    null_fd,
                           GCancellable          *cancellable,
                           GError               **error)
{
  g_autoptr(GError) local_error = NULL;
  SbxAdmission admission = *admission_in;
  SbxSuperviseRequest req = { 0 };
  SbxSuperviseResult result = { 0 };
  SbxRunResult *run_result = NULL;
  gboolean spawned = FALSE;
  gboolean ok;

  memset (admission_in, 0, sizeof *admission_in);

  req.spec = admission.spec;
  req.cwd = admission.cwd;
  req.argv = (const char *const *) rr->argv;
  req.envp = (const char *const *) (admission.egress.envp != NULL ? admission.egress.envp
                                                                    : self->environment);
  req.stdin_fd = fds[0];
  req.stdout_fd = fds[1];
  req.stderr_fd = fds[2];
  req.max_output = rr->max_output;
  req.deadline = admission.deadline;
  req.cancellable = cancellable;
  req.close_fd = sbx_executor_shared_get_close_fd (self->shared);
  /* A PTY: the supervisor relays the stdin and stdout descriptors to the
   * sandbox's terminal (stderr is that terminal too). */
  req.pty = rr->pty;
  req.pty_rows = rr->rows;
  req.pty_cols = rr->cols;
  req.ignored_signals = rr->ignored_signals;
  req.denial_sink = sbx_backend_denials_sink (admission.backend_denials);
  req.pty_resize_fd = rr->pty ? rr->pty_fds[0] : -1;
  /* The size followed is the one named, else that of the caller's
   * terminal: stdin's, else stdout's (a terminal with piped input). */
  req.pty_size_fd = !rr->pty || req.pty_resize_fd < 0 ? -1
                    : rr->pty_fds[1] >= 0 ? rr->pty_fds[1]
                    : (fds[0] >= 0 && isatty (fds[0])) ? fds[0] : fds[1];
  req.proxy_listen_fn = sbx_egress_run_serve;   /* egress */
  req.proxy_listen_data = &admission.egress;
  sbx_egress_run_spawn_listens (&admission.egress, &req.listens, &req.listen_fds, &req.n_listens);

  ok = sbx_supervise_run (&req, &result, &spawned, &local_error);
  if (null_fd >= 0)
    close (null_fd);
  if (!ok && !spawned)
    sbx_executor_map_spawn_error (&local_error, g_steal_pointer (&local_error), rr->argv[0]);
  else if (!ok)
    {
      g_autoptr(GError) teardown = g_steal_pointer (&local_error);

      g_set_error (&local_error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TEARDOWN_FAILED,
                   "“%s” ran, but its process tree could not be torn down: %s",
                   rr->argv[0], teardown->message);
    }
  else
    {
      switch (result.outcome)
        {
        case SBX_SUPERVISE_TIMED_OUT:
          sbx_executor_fail (&local_error, SBX_EXECUTOR_ERROR_TIMED_OUT,
                             "“%s” passed its timeout or deadline; its process tree was killed",
                             rr->argv[0]);
          break;
        case SBX_SUPERVISE_CANCELLED:
          sbx_executor_fail (&local_error, SBX_EXECUTOR_ERROR_CANCELLED,
                             "The run of “%s” was cancelled; its process tree was killed",
                             rr->argv[0]);
          break;
        case SBX_SUPERVISE_CLOSED:
          sbx_executor_fail (&local_error, SBX_EXECUTOR_ERROR_CLOSED,
                             "The executor set was closed during the run of “%s”; its process "
                             "tree was killed", rr->argv[0]);
          break;
        case SBX_SUPERVISE_EXITED:
        default:
          run_result = sbx_run_result_new (result.output, &result.exit, result.truncated,
                                           (SbxLifetimeContainment) result.containment,
                                           result.duration_us);
          if (admission.spent != NULL)
            sbx_run_result_set_grants_spent (run_result,
                                             (const char *const *) admission.spent->pdata);
          sbx_run_result_set_spawn (run_result, admission.report, admission.level,
                                    admission.guarantees);
          break;
        }
    }

  /* Egress: the execution ends with the run; its first denial is reported. */
  sbx_egress_run_end (&admission.egress);
  if (admission.egress.denial_target != NULL)
    sbx_executor_report_network_denial (self->shared, self->key, admission.run_id, run_result,
                                        admission.egress.denial_target,
                                        admission.egress.denial_reason);
  sbx_executor_report_denials (self->shared, self->key, admission.run_id, run_result, &admission.egress);

  sbx_executor_emit_exit (self, &admission, &result, local_error, spawned);
  sbx_supervise_result_clear (&result);
  sbx_admission_clear (&admission);

  if (run_result == NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return run_result;
}

/* Runs @body for @task and completes the task with its result. */
static void
run_and_return (GTask      *task,
                SbxRunBody  body)
{
  GError *error = NULL;
  SbxRunResult *result;

  result = body (task, &error);
  if (result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, (GDestroyNotify) sbx_run_result_unref);
}

/* An async run's thread: its reference to the task, and a guard of the
 * set's barrier held for as long as that reference. */
typedef struct
{
  GTask          *task;
  SbxRunBody      body;
  SbxSharedGuard *guard;
} RunThread;

static gpointer
run_thread (gpointer data)
{
  RunThread *rt = data;

  run_and_return (rt->task, rt->body);
  /* The task goes before the guard: the caller's callback may have run
   * already, and then this reference is the last one to the task and to
   * what it holds (the executor, through it the set's shared state and the
   * backend), so the set's close never returns while this thread holds
   * any of it. */
  g_object_unref (rt->task);
  sbx_shared_guard_release (rt->guard);
  g_free (rt);
  return NULL;
}

void
sbx_run_task_start (GTask             *task,
                    SbxExecutorShared *shared,
                    SbxRunBody         body)
{
  g_autoptr(GError) error = NULL;
  SbxSharedGuard *guard = sbx_executor_shared_admit (shared);
  RunThread *rt;
  GThread *thread;

  if (guard == NULL)
    {
      /* The set is closing: the run's admission refuses it without
       * blocking, and the same error comes from here, without a thread. */
      run_and_return (task, body);
      return;
    }
  rt = g_new (RunThread, 1);
  rt->task = g_object_ref (task);
  rt->body = body;
  rt->guard = guard;
  thread = g_thread_try_new ("sbx-run", run_thread, rt, &error);
  if (thread == NULL)
    {
      g_object_unref (rt->task);   /* the reference meant for the thread */
      sbx_shared_guard_release (rt->guard);
      g_free (rt);
      g_task_return_new_error (task, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                               "Cannot start a supervising thread: %s", error->message);
      return;
    }
  g_thread_unref (thread);
}

/* The body of an executor's async run, on its thread. */
static SbxRunResult *
executor_run_body (GTask   *task,
                   GError **error)
{
  SbxStartRequest *rr = g_task_get_task_data (task);
  SbxRunResult *result;

  result = executor_run (g_task_get_source_object (task), rr, g_task_get_cancellable (task), error);
  sbx_start_request_close_fds (rr);
  return result;
}

/**
 * sbx_executor_run:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments; no shell
 *   is involved; `argv[0]` without a '/' is looked up in the PATH of the
 *   scrubbed environment.  A shell command line is the vector
 *   `{"/bin/sh", "-c", command}`.
 * @options: (nullable): a timeout or deadline, an output limit, stream
 *   modes or redirections, grants with their execution ID
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the call returns
 * @error: return location for a [error@Sbx.ExecutorError] or a
 *   [error@Sbx.GrantError]
 *
 * Runs a command under the executor's confinement and waits for it; the
 * one way to run a command to its end (sbx_executor_spawn() starts one and
 * returns at once).  By default stdin is the null device and stdout and
 * stderr are captured together into the result (see [struct@Sbx.RunOptions]
 * for the other modes, and [method@Sbx.RunOptions.set_pty] for a terminal,
 * whose bytes the run relays).
 *
 * Admission comes first, and nothing is spawned unless it passes: the
 * command gate (the profile's command access: allow runs, gated needs a
 * `command.start.v1` grant, deny fails with %SBX_GRANT_ERROR_DENIED).
 *
 * With grants or an execution ID in @options the run is a grant
 * transaction: the working directory is canonicalised (and the command runs
 * there), then every token is verified in order.  Each token is checked for
 * replay (before its MAC), then its MAC, expiry, execution ID, command,
 * working directory, profile, route and guarantees; the first failure
 * refuses the whole batch, spends none of its tokens and spawns nothing.
 * The command a token binds is [func@Sbx.grant_command_for_argv] of @argv
 * (each argument quoted for a POSIX shell, joined by spaces).  Grants that
 * change the policy (filesystem, network) get a spec compiled for this one
 * spawn, on the handles pinned when they were issued; it must achieve
 * exactly the expected guarantees.  Once verified and compiled the tokens
 * are spent, even if the spawn then fails: a second use gives
 * %SBX_GRANT_ERROR_REPLAY, and of two concurrent runs with the same token
 * exactly one spends it.  [method@Sbx.RunResult.get_grants_spent] lists
 * what each token opened, and [method@Sbx.RunResult.get_spawn_report] says
 * what held for this run (a host or broad-network grant takes guarantees
 * away; [method@Sbx.Executor.get_report] is what a run without grants
 * gets).  To show the run's report before the command starts, use
 * [method@Sbx.Executor.prepare] and [method@Sbx.PreparedProcess.run]: this
 * call is exactly that pair.
 *
 * After the command exits, the backend tears down whatever is left of its
 * process tree.  A timeout, a deadline or an output limit kills the tree;
 * the first two fail with %SBX_EXECUTOR_ERROR_TIMED_OUT, the limit returns
 * the truncated output flagged as truncated.  Does not depend on a main
 * loop; safe to call from any thread, also concurrently.
 *
 * Returns: (transfer full): the result, or %NULL with @error set; a non-zero
 *   exit or a death by signal is a result, not an error
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run (SbxExecutor          *self,
                  const char           *cwd,
                  const char *const    *argv,
                  const SbxRunOptions  *options,
                  GCancellable         *cancellable,
                  GError              **error)
{
  g_autoptr(SbxStartRequest) rr = NULL;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  rr = sbx_start_request_new (cwd, argv, options);
  return executor_run (self, rr, cancellable, error);
}

/**
 * sbx_executor_run_async:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments
 * @options: (nullable): as for [method@Sbx.Executor.run]; copied, and its
 *   file descriptors duplicated, before this returns
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the task completes
 * @callback: (scope async): called in the thread-default main context of
 *   the caller when the run is over
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Executor.run].  The child is supervised
 * on a dedicated thread; to stay on the main loop without one, use
 * [method@Sbx.Executor.spawn] and [method@Sbx.Process.communicate_async].
 *
 * Since: 0.1
 */
void
sbx_executor_run_async (SbxExecutor          *self,
                        const char           *cwd,
                        const char *const    *argv,
                        const SbxRunOptions  *options,
                        GCancellable         *cancellable,
                        GAsyncReadyCallback   callback,
                        gpointer              user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  SbxStartRequest *rr;

  g_return_if_fail (SBX_IS_EXECUTOR (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  rr = sbx_start_request_new (cwd, argv, options);
  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sbx_executor_run_async);
  /* The run reports cancellation itself (SBX_EXECUTOR_ERROR_CANCELLED), after
   * the tree is dead. */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, rr, (GDestroyNotify) sbx_start_request_free);

  if (!sbx_start_request_own_fds (rr, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  sbx_run_task_start (task, self->shared, executor_run_body);
}

/**
 * sbx_executor_run_finish:
 * @self: a [class@Sbx.Executor]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.ExecutorError] or a
 *   [error@Sbx.GrantError]
 *
 * Finishes [method@Sbx.Executor.run_async].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_finish (SbxExecutor   *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_async_result_is_tagged (result, sbx_executor_run_async), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
