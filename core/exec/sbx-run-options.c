/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-run-options.h"
#include "sbx-run-options-private.h"

#include <signal.h>
#include <string.h>

/**
 * SbxRunOptions:
 *
 * Options of one command started with [method@Sbx.Executor.run] or
 * [method@Sbx.Executor.spawn]: a timeout and a deadline, an output limit,
 * where the child's standard streams go (or a PTY), the terminate grace of
 * [method@Sbx.Process.force_exit], and the grants to spend with the
 * execution they were issued for.
 *
 * Streams: each one has a [enum@Sbx.StdioMode] (default
 * %SBX_STDIO_DEFAULT).  For a run, stdin is then the null device and stdout
 * and stderr are captured together into the [struct@Sbx.RunResult]; for a
 * spawn, all three are pipes.  A caller file descriptor set with
 * [method@Sbx.RunOptions.set_stdin_fd] and its twins takes precedence over
 * the stream's mode (the mode is then ignored).  A PTY takes precedence over
 * both.  For stdout or stderr of a run, a caller descriptor streams that
 * output live:
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
  GTimeSpan    timeout;
  guint64      max_output;
  int          stdin_fd;
  int          stdout_fd;
  int          stderr_fd;
  SbxStdioMode modes[3];
  gboolean     pty;
  guint16      pty_rows;
  guint16      pty_cols;
  GDateTime   *deadline;
  GTimeSpan    terminate_grace;
  char       **grants;
  char        *execution_id;
  int          pty_resize_fd;
  int          pty_size_fd;
  guint64      ignored_signals;  /* bit N-1: signal N starts ignored */
  gboolean     staged;           /* docs/staging.md */
  SbxAskSettings *ask;         /* (nullable) live decisions (sbx-decision.c) */
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
  self->pty_resize_fd = -1;
  self->pty_size_fd = -1;
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
  SbxRunOptions *copy;

  g_return_val_if_fail (self != NULL, NULL);

  copy = g_memdup2 (self, sizeof *self);
  copy->deadline = self->deadline != NULL ? g_date_time_ref (self->deadline) : NULL;
  copy->grants = g_strdupv (self->grants);
  copy->execution_id = g_strdup (self->execution_id);
  copy->ask = self->ask != NULL ? sbx_ask_settings_ref (self->ask) : NULL;
  return copy;
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
  if (self == NULL)
    return;
  g_clear_pointer (&self->deadline, g_date_time_unref);
  /* Tokens are credentials: wiped before the memory goes back. */
  for (guint i = 0; self->grants != NULL && self->grants[i] != NULL; i++)
    explicit_bzero (self->grants[i], strlen (self->grants[i]));
  g_strfreev (self->grants);
  g_free (self->execution_id);
  g_clear_pointer (&self->ask, sbx_ask_settings_unref);
  g_free (self);
}

/* Live decisions (sbx-decision.c): the settings are immutable, a setter
 * replaces them. */
SbxAskSettings *
sbx_run_options_peek_ask (const SbxRunOptions *self)
{
  return self->ask;
}

void
sbx_run_options_replace_ask (SbxRunOptions  *self,
                             SbxAskSettings *ask)
{
  g_clear_pointer (&self->ask, sbx_ask_settings_unref);
  self->ask = ask;
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

/*
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

/*
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

/*
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

/*
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

/*
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

static void
set_mode (SbxRunOptions *self,
          int            stream,
          SbxStdioMode   mode)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (mode >= SBX_STDIO_DEFAULT && mode <= SBX_STDIO_MERGE);
  g_return_if_fail (mode != SBX_STDIO_MERGE || stream == 2);

  self->modes[stream] = mode;
}

/**
 * sbx_run_options_set_stdin:
 * @self: options
 * @mode: where stdin comes from; not %SBX_STDIO_MERGE
 *
 * Sets the mode of the child's standard input.  A descriptor set with
 * [method@Sbx.RunOptions.set_stdin_fd] takes precedence.  A run refuses
 * %SBX_STDIO_PIPE for stdin (nobody could write to it).
 *
 * Since: 0.1
 */
void
sbx_run_options_set_stdin (SbxRunOptions *self,
                           SbxStdioMode   mode)
{
  set_mode (self, 0, mode);
}

/*
 * sbx_run_options_get_stdin:
 * @self: options
 *
 * Returns the mode of standard input.
 *
 * Returns: the mode
 *
 * Since: 0.1
 */
SbxStdioMode
sbx_run_options_get_stdin (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, SBX_STDIO_DEFAULT);

  return self->modes[0];
}

/**
 * sbx_run_options_set_stdout:
 * @self: options
 * @mode: where stdout goes; not %SBX_STDIO_MERGE
 *
 * Sets the mode of the child's standard output.  A descriptor set with
 * [method@Sbx.RunOptions.set_stdout_fd] takes precedence.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_stdout (SbxRunOptions *self,
                            SbxStdioMode   mode)
{
  set_mode (self, 1, mode);
}

/*
 * sbx_run_options_get_stdout:
 * @self: options
 *
 * Returns the mode of standard output.
 *
 * Returns: the mode
 *
 * Since: 0.1
 */
SbxStdioMode
sbx_run_options_get_stdout (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, SBX_STDIO_DEFAULT);

  return self->modes[1];
}

/**
 * sbx_run_options_set_stderr:
 * @self: options
 * @mode: where stderr goes; %SBX_STDIO_MERGE sends it wherever stdout goes
 *
 * Sets the mode of the child's standard error.  A descriptor set with
 * [method@Sbx.RunOptions.set_stderr_fd] takes precedence.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_stderr (SbxRunOptions *self,
                            SbxStdioMode   mode)
{
  set_mode (self, 2, mode);
}

/*
 * sbx_run_options_get_stderr:
 * @self: options
 *
 * Returns the mode of standard error.
 *
 * Returns: the mode
 *
 * Since: 0.1
 */
SbxStdioMode
sbx_run_options_get_stderr (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, SBX_STDIO_DEFAULT);

  return self->modes[2];
}

/**
 * sbx_run_options_set_pty:
 * @self: options
 * @rows: the terminal's height in rows, positive
 * @cols: the terminal's width in columns, positive
 *
 * Gives the child a new pseudo-terminal instead of its three streams: the
 * terminal's slave side is its stdin, stdout and stderr and its controlling
 * terminal inside the sandbox (job control works, `stty size` reports
 * @rows and @cols).  The master side never leaves sbx's process; only bytes
 * cross it, and TIOCSTI stays refused inside.
 *
 * - With [method@Sbx.Executor.spawn], the master is the process's stdin and
 *   stdout pipe ([method@Sbx.Process.get_stdin_pipe],
 *   [method@Sbx.Process.get_stdout_pipe]; there is no separate stderr), and
 *   [method@Sbx.Process.resize] changes the size.
 * - With [method@Sbx.Executor.run], the run relays: what arrives on the
 *   stdin descriptor ([method@Sbx.RunOptions.set_stdin_fd], or sbx's own
 *   stdin with %SBX_STDIO_INHERIT; none by default) is written to the
 *   terminal, and what the terminal gives (stdout and stderr are one stream
 *   there) goes to the stdout descriptor, or into the result when there is
 *   none, counted against the output limit like any output.  The size
 *   follows a terminal of the caller's through
 *   [method@Sbx.RunOptions.set_pty_resize_fd].
 *
 * Takes precedence over the stream modes, and over the stderr descriptor.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_pty (SbxRunOptions *self,
                         guint16        rows,
                         guint16        cols)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (rows > 0 && cols > 0);

  self->pty = TRUE;
  self->pty_rows = rows;
  self->pty_cols = cols;
}

/*
 * sbx_run_options_get_pty:
 * @self: options
 * @rows: (out) (optional): the initial rows, when a PTY is set
 * @cols: (out) (optional): the initial columns, when a PTY is set
 *
 * Says whether the options ask for a PTY, and its initial size.
 *
 * Returns: %TRUE when [method@Sbx.RunOptions.set_pty] was called
 *
 * Since: 0.1
 */
gboolean
sbx_run_options_get_pty (const SbxRunOptions *self,
                         guint16             *rows,
                         guint16             *cols)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (rows != NULL)
    *rows = self->pty ? self->pty_rows : 0;
  if (cols != NULL)
    *cols = self->pty ? self->pty_cols : 0;
  return self->pty;
}

/**
 * sbx_run_options_set_pty_resize_fd:
 * @self: options
 * @resize_fd: -1 for none, or a descriptor that becomes readable each time
 *   the caller's terminal was resized (the read end of a pipe written from a
 *   SIGWINCH handler, an eventfd ...)
 * @size_fd: the terminal whose window size the sandbox's terminal then
 *   takes, or -1 for the run's stdin descriptor when it is a terminal, else
 *   its stdout descriptor
 *
 * The resize hook of a run with a PTY ([method@Sbx.RunOptions.set_pty]):
 * each time @resize_fd is readable, the run reads it and copies the window
 * size of @size_fd to the sandbox's terminal, whose foreground process group
 * then gets SIGWINCH, also when the size did not change (a caller that
 * wrote over the command's screen has a full-screen command redraw it this
 * way).  The descriptors stay owned by the caller; the
 * executor duplicates them for the duration of the run.  Without a PTY, and
 * for [method@Sbx.Executor.spawn] (which has [method@Sbx.Process.resize]),
 * the hook is not used.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_pty_resize_fd (SbxRunOptions *self,
                                   int            resize_fd,
                                   int            size_fd)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (resize_fd >= -1 && size_fd >= -1);

  self->pty_resize_fd = resize_fd;
  self->pty_size_fd = resize_fd >= 0 ? size_fd : -1;
}

/*
 * sbx_run_options_get_pty_resize_fd:
 * @self: options
 * @size_fd: (out) (optional): the terminal whose size is followed, or -1
 *
 * Returns the resize hook set with [method@Sbx.RunOptions.set_pty_resize_fd].
 *
 * Returns: the descriptor that signals a resize, or -1 for none
 *
 * Since: 0.1
 */
int
sbx_run_options_get_pty_resize_fd (const SbxRunOptions *self,
                                   int                 *size_fd)
{
  g_return_val_if_fail (self != NULL, -1);

  if (size_fd != NULL)
    *size_fd = self->pty_size_fd;
  return self->pty_resize_fd;
}

/**
 * sbx_run_options_set_deadline:
 * @self: options
 * @deadline: (nullable): the wall-clock time by which the command must have
 *   ended, or %NULL for none
 *
 * Sets an absolute deadline.  It is honoured (unlike upstream's, which is
 * documented but never used): a run still going at @deadline has its tree
 * killed and fails with %SBX_EXECUTOR_ERROR_TIMED_OUT; a spawned process is
 * killed the same way and its wait fails with that error.  A deadline
 * already past when the command would start refuses it with
 * %SBX_EXECUTOR_ERROR_TIMED_OUT, nothing spawned.  With both a timeout and
 * a deadline, the earlier one applies.  The deadline is converted to the
 * monotonic clock when the command starts, so later changes of the wall
 * clock do not move it.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_deadline (SbxRunOptions *self,
                              GDateTime     *deadline)
{
  g_return_if_fail (self != NULL);

  if (deadline != NULL)
    g_date_time_ref (deadline);
  g_clear_pointer (&self->deadline, g_date_time_unref);
  self->deadline = deadline;
}

/*
 * sbx_run_options_get_deadline:
 * @self: options
 *
 * Returns the deadline.
 *
 * Returns: (transfer none) (nullable): the deadline, or %NULL for none
 *
 * Since: 0.1
 */
GDateTime *
sbx_run_options_get_deadline (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->deadline;
}

/**
 * sbx_run_options_set_terminate_grace:
 * @self: options
 * @grace: microseconds between SIGTERM and SIGKILL; 0 or negative for the
 *   default, %SBX_RUN_OPTIONS_DEFAULT_TERMINATE_GRACE
 *
 * Sets how long [method@Sbx.Process.force_exit] waits after SIGTERM before
 * it kills the whole tree with SIGKILL.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_terminate_grace (SbxRunOptions *self,
                                     GTimeSpan      grace)
{
  g_return_if_fail (self != NULL);

  self->terminate_grace = grace;
}

/*
 * sbx_run_options_get_terminate_grace:
 * @self: options
 *
 * Returns the terminate grace in effect (the default when none was set).
 *
 * Returns: the grace in microseconds, always positive
 *
 * Since: 0.1
 */
GTimeSpan
sbx_run_options_get_terminate_grace (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, SBX_RUN_OPTIONS_DEFAULT_TERMINATE_GRACE);

  return self->terminate_grace > 0 ? self->terminate_grace
                                   : SBX_RUN_OPTIONS_DEFAULT_TERMINATE_GRACE;
}

/**
 * sbx_run_options_set_grants:
 * @self: options
 * @grants: (array zero-terminated=1) (nullable): the tokens to spend, from
 *   [method@Sbx.Executor.issue_grant]; copied
 *
 * Sets the grants the command spends.  Options with grants (or with an
 * execution ID) make the start a grant transaction: the working directory
 * is canonicalised, every token is verified in order against the execution
 * ID, the command, the directory, the profile, the route and the
 * guarantees, and the first failure refuses the batch, spends nothing and
 * spawns nothing.  The command a token binds is
 * [func@Sbx.grant_command_for_argv] of the argument vector (a shell command
 * is the vector `{"/bin/sh", "-c", command}`, so it binds
 * `/bin/sh -c 'command'`).  The copies are wiped when the options are
 * freed.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_grants (SbxRunOptions     *self,
                            const char *const *grants)
{
  char **old;

  g_return_if_fail (self != NULL);

  old = self->grants;
  self->grants = g_strdupv ((char **) grants);
  for (guint i = 0; old != NULL && old[i] != NULL; i++)
    explicit_bzero (old[i], strlen (old[i]));
  g_strfreev (old);
}

/*
 * sbx_run_options_get_grants:
 * @self: options
 *
 * Returns the grants.
 *
 * Returns: (array zero-terminated=1) (transfer none) (nullable): the tokens,
 *   or %NULL when none were set
 *
 * Since: 0.1
 */
const char *const *
sbx_run_options_get_grants (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return (const char *const *) self->grants;
}

/**
 * sbx_run_options_set_execution_id:
 * @self: options
 * @execution_id: (nullable): the execution the grants were issued for; any
 *   valid text (':' included)
 *
 * Sets the execution ID the grants are checked against.  Required (valid
 * text) whenever grants are set; the start fails with
 * %SBX_GRANT_ERROR_MALFORMED otherwise.
 *
 * Since: 0.1
 */
void
sbx_run_options_set_execution_id (SbxRunOptions *self,
                                  const char    *execution_id)
{
  g_return_if_fail (self != NULL);

  g_free (self->execution_id);
  self->execution_id = g_strdup (execution_id);
}

/*
 * sbx_run_options_get_execution_id:
 * @self: options
 *
 * Returns the execution ID.
 *
 * Returns: (nullable): the execution ID, or %NULL when none was set
 *
 * Since: 0.1
 */
const char *
sbx_run_options_get_execution_id (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->execution_id;
}

/**
 * sbx_run_options_set_ignored_signals:
 * @self: options
 * @signals: (array length=n_signals) (nullable): signal numbers, 1 to 64,
 *   neither SIGKILL nor SIGSTOP (which cannot be ignored)
 * @n_signals: the length of @signals; 0 clears the set
 *
 * Starts the command with each of @signals ignored (`SIG_IGN`, which the
 * command keeps across its own execs), as a plain wrapper's child inherits
 * the signals its caller ignores: `nohup` ignores SIGHUP, a shell starts a
 * background job with SIGINT and SIGQUIT ignored, `trap "" INT` ignores
 * SIGINT.  A program that runs commands on behalf of such a caller records
 * which signals were ignored when it started (before it changes any
 * disposition itself) and passes them here.  Every other signal starts with
 * its default disposition, as without this option.
 *
 * A signal sent with [method@Sbx.Process.send_signal] that the command
 * ignores is not passed on to the rest of its tree: the command ignores it,
 * as a plain child would.  A backend that cannot start a command this way
 * refuses the run ([error@Sbx.ExecutorError]), never starting it with the
 * signals at their defaults.
 *
 * Since: 0.2
 */
void
sbx_run_options_set_ignored_signals (SbxRunOptions *self,
                                     const int     *signals,
                                     gsize          n_signals)
{
  guint64 mask = 0;

  g_return_if_fail (self != NULL);
  g_return_if_fail (signals != NULL || n_signals == 0);

  for (gsize i = 0; i < n_signals; i++)
    {
      g_return_if_fail (signals[i] >= 1 && signals[i] <= 64);
      g_return_if_fail (signals[i] != SIGKILL && signals[i] != SIGSTOP);
      mask |= G_GUINT64_CONSTANT (1) << (signals[i] - 1);
    }
  self->ignored_signals = mask;
}

/*
 * sbx_run_options_get_ignored_signals:
 * @self: options
 * @n_signals: (out): the number of signals returned
 *
 * The signals the command starts with ignored
 * ([method@Sbx.RunOptions.set_ignored_signals]), in increasing order.
 *
 * Returns: (array length=n_signals) (transfer full) (nullable): the signal
 *   numbers, or %NULL when there are none
 *
 * Since: 0.2
 */
int *
sbx_run_options_get_ignored_signals (const SbxRunOptions *self,
                                     gsize               *n_signals)
{
  g_autoptr(GArray) out = g_array_new (FALSE, FALSE, sizeof (int));

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (n_signals != NULL, NULL);

  for (int signo = 1; signo <= 64; signo++)
    if (self->ignored_signals & (G_GUINT64_CONSTANT (1) << (signo - 1)))
      g_array_append_val (out, signo);
  *n_signals = out->len;
  if (out->len == 0)
    return NULL;
  return (int *) g_array_free (g_steal_pointer (&out), FALSE);
}

/**
 * sbx_run_options_set_staged:
 * @self: options
 * @staged: whether the run's writes are staged
 *
 * Stages the run: the workspace and every other writable root look
 * writable to the command, but what it writes lands in a stage (a
 * directory of the caller's under `$XDG_STATE_HOME/sbx/stages`) and the
 * host paths stay as they were.  After the run,
 * [method@Sbx.RunResult.get_stage_id] names the stage, and
 * [func@Sbx.Changes.open] lists, applies or discards its changes.
 *
 * Only a backend with a mount namespace can stage (rung 1 on Linux:
 * `linux-userns`).  Any other backend, a writable host root, a root the
 * backend cannot overlay, grants and [method@Sbx.Executor.spawn] refuse a
 * staged run ([error@Sbx.ExecutorError]); it is never run unstaged.
 * `docs/staging.md` lists what an overlay cannot show (hard links,
 * directory renames, nested mounts).
 *
 * Since: 0.2
 */
void
sbx_run_options_set_staged (SbxRunOptions *self,
                            gboolean       staged)
{
  g_return_if_fail (self != NULL);

  self->staged = staged != FALSE;
}

/**
 * sbx_run_options_get_staged:
 * @self: options
 *
 * Whether the run is staged ([method@Sbx.RunOptions.set_staged]).
 *
 * Returns: %TRUE when staged
 *
 * Since: 0.2
 */
gboolean
sbx_run_options_get_staged (const SbxRunOptions *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->staged;
}
