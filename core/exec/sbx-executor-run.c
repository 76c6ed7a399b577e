/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs: sbx_executor_run() and its async twin admit the command
 * (sbx-executor-admit.c), resolve its streams and hand it to the one run
 * engine (sbx-run-collect.c: an SbxProcess plus a collect of its output);
 * a prepared process's run hands the engine the admission it holds.  The
 * sync forms iterate a private main context pushed for the call; the async
 * ones are a GTask on the caller's thread-default context, with no thread
 * of their own.
 */
#include "sbx-executor-impl-private.h"
#include "sbx-executor-error-private.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* The engine's fds for the streams of a run (stdin -1 = null device,
 * stdout/stderr -1 = captured).  *null_fd is an
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

SbxRunResult *
sbx_executor_run_admitted (SbxExecutor     *self,
                           SbxStartRequest *rr,
                           SbxAdmission    *admission,
                           const int        fds[3],
                           int              null_fd,
                           GCancellable    *cancellable,
                           GError         **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  SbxRunSync sync = { NULL, NULL, FALSE };

  g_main_context_push_thread_default (context);
  sbx_run_collect_start (self, rr, admission, fds, null_fd, cancellable, NULL, &sync);
  while (!sync.done)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  if (sync.error != NULL)
    g_propagate_error (error, sync.error);
  return sync.result;
}

void
sbx_executor_run_admitted_async (SbxExecutor     *self,
                                 SbxStartRequest *rr,
                                 SbxAdmission    *admission,
                                 const int        fds[3],
                                 int              null_fd,
                                 GCancellable    *cancellable,
                                 GTask           *task)
{
  sbx_run_collect_start (self, rr, admission, fds, null_fd, cancellable, task, NULL);
}

/* Admits a run of @rr (taken) and the streams it names: TRUE with
 * @admission, @fds and @null_fd for the engine. */
static gboolean
executor_run_admit (SbxExecutor           *self,
                    const SbxStartRequest *rr,
                    GCancellable          *cancellable,
                    SbxAdmission          *admission,
                    int                    fds[3],
                    int                   *null_fd,
                    GError               **error)
{
  if (!sbx_run_streams_resolve (rr, fds, null_fd, error))
    return FALSE;
  if (!sbx_executor_admit (self, rr, cancellable, admission, error))
    {
      if (*null_fd >= 0)
        close (*null_fd);
      return FALSE;
    }
  return TRUE;
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
  SbxAdmission admission;
  int fds[3];
  int null_fd = -1;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  rr = sbx_start_request_new (cwd, argv, options);
  if (!executor_run_admit (self, rr, cancellable, &admission, fds, &null_fd, error))
    return NULL;
  return sbx_executor_run_admitted (self, g_steal_pointer (&rr), &admission, fds, null_fd,
                                    cancellable, error);
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
 * Asynchronous twin of [method@Sbx.Executor.run], on the same engine: the
 * admission and the spawn happen before this returns, the output is
 * collected on the caller's thread-default main context, and the backend's
 * teardown runs on the small pool that reaps every [class@Sbx.Process];
 * there is no thread per run.
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
  g_autoptr(SbxStartRequest) rr = NULL;
  SbxAdmission admission;
  int fds[3];
  int null_fd = -1;

  g_return_if_fail (SBX_IS_EXECUTOR (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  rr = sbx_start_request_new (cwd, argv, options);
  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sbx_executor_run_async);
  /* The run reports cancellation itself (SBX_EXECUTOR_ERROR_CANCELLED), after
   * the tree is dead. */
  g_task_set_check_cancellable (task, FALSE);

  if (!sbx_start_request_own_fds (rr, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (!executor_run_admit (self, rr, cancellable, &admission, fds, &null_fd, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  sbx_executor_run_admitted_async (self, g_steal_pointer (&rr), &admission, fds, null_fd,
                                   cancellable, task);
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
