/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-run-options.h"
#include "sbx-run-options-private.h"

/**
 * SbxRunOptions:
 *
 * Options of one run with [method@Sbx.Executor.run]: a timeout, an output
 * limit, and where the child's standard streams go.
 *
 * By default stdin is the null device and stdout and stderr are captured
 * together into the [struct@Sbx.RunResult].  A caller file descriptor set for
 * stdout or stderr streams that output live instead:
 *
 * - without an output limit, the child gets the descriptor itself (a
 *   terminal stays a terminal for it);
 * - with an output limit, the child writes into a pipe that the executor
 *   copies to the descriptor as data arrives, counting every byte against
 *   the limit; nothing past the limit is passed on and the tree is killed.
 *
 * The descriptors stay owned by the caller; the executor duplicates them
 * for the duration of the run.
 *
 * Since: 0.1
 */
struct _SbxRunOptions
{
  GTimeSpan timeout;
  guint64   max_output;
  int       stdin_fd;
  int       stdout_fd;
  int       stderr_fd;
  /* The sandbox terminal (sbx-run-options-private.h). */
  gboolean  sandbox_terminal;
  guint16   terminal_rows;
  guint16   terminal_cols;
  int       terminal_resize_fd;
};

G_DEFINE_BOXED_TYPE (SbxRunOptions, sbx_run_options, sbx_run_options_copy, sbx_run_options_free)

/**
 * sbx_run_options_new:
 *
 * Creates options with no timeout, no output limit, stdin from the null
 * device and stdout/stderr captured.
 *
 * Returns: (transfer full): new options
 *
 * Since: 0.1
 */
SbxRunOptions *
sbx_run_options_new (void)
{
  SbxRunOptions *self = g_new0 (SbxRunOptions, 1);

  self->stdin_fd = -1;
  self->stdout_fd = -1;
  self->stderr_fd = -1;
  self->terminal_resize_fd = -1;
  return self;
}

/**
 * sbx_run_options_copy:
 * @self: options
 *
 * Copies @self.
 *
 * Returns: (transfer full): a copy
 *
 * Since: 0.1
 */
SbxRunOptions *
sbx_run_options_copy (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return g_memdup2 (self, sizeof *self);
}

/**
 * sbx_run_options_free:
 * @self: (transfer full): options
 *
 * Frees @self.
 *
 * Since: 0.1
 */
void
sbx_run_options_free (SbxRunOptions *self)
{
  g_free (self);
}

/**
 * sbx_run_options_set_timeout:
 * @self: options
 * @timeout: the timeout in microseconds, or 0 for none
 *
 * Sets how long the run may take from spawn.  When it passes, the whole
 * process tree is killed and the run fails with
 * %SBX_EXECUTOR_ERROR_TIMED_OUT.  A negative value is rejected by the run.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_timeout (SbxRunOptions *self,
                             GTimeSpan      timeout)
{
  g_return_if_fail (self != NULL);

  self->timeout = timeout;
}

/**
 * sbx_run_options_get_timeout:
 * @self: options
 *
 * Returns the timeout in microseconds, 0 for none.
 *
 * Returns: the timeout in microseconds, 0 for none
 *
 * Since: 0.1
 */
GTimeSpan
sbx_run_options_get_timeout (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->timeout;
}

/**
 * sbx_run_options_set_max_output:
 * @self: options
 * @max_output: the most bytes of output to keep, or 0 for no limit
 *
 * Caps the combined output (stdout plus stderr, captured or forwarded).  The
 * first byte past the limit kills the whole process tree at once; the result
 * keeps exactly @max_output bytes and says it is truncated.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_max_output (SbxRunOptions *self,
                                guint64        max_output)
{
  g_return_if_fail (self != NULL);

  self->max_output = max_output;
}

/**
 * sbx_run_options_get_max_output:
 * @self: options
 *
 * Returns the output limit in bytes, 0 for none.
 *
 * Returns: the output limit in bytes, 0 for none
 *
 * Since: 0.1
 */
guint64
sbx_run_options_get_max_output (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->max_output;
}

/**
 * sbx_run_options_set_stdin_fd:
 * @self: options
 * @fd: a readable file descriptor, or -1 for the null device
 *
 * Gives the child @fd as its standard input.  The caller keeps @fd.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_stdin_fd (SbxRunOptions *self,
                              int            fd)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (fd >= -1);

  self->stdin_fd = fd;
}

/**
 * sbx_run_options_get_stdin_fd:
 * @self: options
 *
 * Returns the standard input descriptor, or -1 for the null device.
 *
 * Returns: the standard input descriptor, or -1 for the null device
 *
 * Since: 0.1
 */
int
sbx_run_options_get_stdin_fd (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, -1);

  return self->stdin_fd;
}

/**
 * sbx_run_options_set_stdout_fd:
 * @self: options
 * @fd: a writable file descriptor, or -1 to capture into the result
 *
 * Streams the child's standard output to @fd (see [struct@Sbx.RunOptions]
 * for how the output limit applies).  The caller keeps @fd.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_stdout_fd (SbxRunOptions *self,
                               int            fd)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (fd >= -1);

  self->stdout_fd = fd;
}

/**
 * sbx_run_options_get_stdout_fd:
 * @self: options
 *
 * Returns the standard output descriptor, or -1 when captured.
 *
 * Returns: the standard output descriptor, or -1 when captured
 *
 * Since: 0.1
 */
int
sbx_run_options_get_stdout_fd (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, -1);

  return self->stdout_fd;
}

/**
 * sbx_run_options_set_stderr_fd:
 * @self: options
 * @fd: a writable file descriptor, or -1 to capture into the result
 *
 * Streams the child's standard error to @fd (see [struct@Sbx.RunOptions]).
 * The caller keeps @fd.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_stderr_fd (SbxRunOptions *self,
                               int            fd)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (fd >= -1);

  self->stderr_fd = fd;
}

/**
 * sbx_run_options_get_stderr_fd:
 * @self: options
 *
 * Returns the standard error descriptor, or -1 when captured.
 *
 * Returns: the standard error descriptor, or -1 when captured
 *
 * Since: 0.1
 */
int
sbx_run_options_get_stderr_fd (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, -1);

  return self->stderr_fd;
}

/* The sandbox terminal: for the sbx program (sbx-run-options-private.h). */
void
sbx_run_options_set_sandbox_terminal (SbxRunOptions *self,
                                      gboolean       enabled,
                                      guint16        rows,
                                      guint16        cols,
                                      int            resize_fd)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (resize_fd >= -1);

  self->sandbox_terminal = enabled;
  self->terminal_rows = rows;
  self->terminal_cols = cols;
  self->terminal_resize_fd = enabled ? resize_fd : -1;
}

gboolean
sbx_run_options_get_sandbox_terminal (const SbxRunOptions *self,
                                      guint16             *rows,
                                      guint16             *cols,
                                      int                 *resize_fd)
{
  g_return_val_if_fail (self != NULL, FALSE);

  *rows = self->terminal_rows;
  *cols = self->terminal_cols;
  *resize_fd = self->terminal_resize_fd;
  return self->sandbox_terminal;
}
